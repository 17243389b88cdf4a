//! The JSON wire protocol as the Rust `resonate` server speaks it, so the
//! model can be served over HTTP and a real target's answers read back into
//! the model's typed [`Request`]/[`Response`].
//!
//! The spec has no wire format: it is written against the records of
//! `types.lean`. Everything here (envelopes, camelCase fields, the settle
//! states the wire admits, error messages, the 400 rules of [`validate`]) is
//! the Rust server's, kept apart from the model so that the machine stays the
//! spec's alone.
//!
//! - [`decode`]: envelope and request `data` → [`Request`], field by field, so
//!   a request that does not decode names the path of the offending field.
//! - [`encode`]: [`Request`] → `data`/envelope (inverse of decoding).
//! - [`response`]: [`Response`] ↔ response envelope.
//! - [`validate`]: the server's 400 rules the spec does not have.
//! - [`address`]: the server's notion of a deliverable address.

pub mod address;
pub mod decode;
pub mod encode;
mod fields;
pub mod response;
pub mod validate;

use std::fmt;

#[cfg(doc)]
use crate::api::{Request, Response};

pub use decode::{decode_envelope, decode_request, open_envelope, Envelope};
pub use encode::{encode_request, request_data, request_envelope, Data};
pub use response::{
    decode_response, encode_response, status_message, success_data, DataField, DataFields,
};
pub use validate::validate;

/// The protocol version every request head carries and every response head
/// answers with.
pub const PROTOCOL_VERSION: &str = "2026-04-01";

/// The largest integer the wire carries: the Rust server reads every
/// integer (times, versions, ttls, `resonate:debug_time`) as an `i64`, so
/// nothing above this can be sent, and nothing above it decodes.
pub const MAX_INT: u64 = i64::MAX as u64;

/// The request head fields the model needs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Head {
    /// `corrId`: echoed in the response head.
    pub corr_id: String,
    /// `resonate:debug_time`: when present, the request's `now`.
    pub debug_time: Option<u64>,
}

/// Why a request (or a target's response) could not be read: the dotted path
/// of the offending field (`data.actions[0].data.awaited`; empty for the
/// body itself) and what was wrong with it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecodeError {
    /// Dotted field path, rooted at the envelope.
    pub path: String,
    /// What was expected.
    pub message: String,
}

impl DecodeError {
    /// An error at `path`.
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        DecodeError {
            path: path.into(),
            message: message.into(),
        }
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "{}: {}", self.path, self.message)
        }
    }
}

impl std::error::Error for DecodeError {}
