//! The one shape of a target fault.

use std::fmt;

/// Why a target could not be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TargetError {
    /// Nothing answered: refused, reset, or DNS.
    Unreachable(String),
    /// No answer within the request timeout.
    Timeout(String),
    /// The body was not JSON.
    Garbage(String),
    /// JSON, but not a response envelope (no `head.status`, wrong `kind`).
    BadEnvelope(String),
    /// A 5xx status.
    ServerError(String),
    /// The target does not act as a debug-mode server.
    NotDebug(String),
}

impl fmt::Display for TargetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TargetError::Unreachable(m) => write!(f, "target unreachable: {m}"),
            TargetError::Timeout(m) => write!(f, "target timed out: {m}"),
            TargetError::Garbage(m) => write!(f, "target sent a body that is not JSON: {m}"),
            TargetError::BadEnvelope(m) => write!(f, "target sent a malformed envelope: {m}"),
            TargetError::ServerError(m) => write!(f, "target answered with a server error: {m}"),
            TargetError::NotDebug(m) => write!(f, "target is not a debug-mode server: {m}"),
        }
    }
}

impl std::error::Error for TargetError {}
