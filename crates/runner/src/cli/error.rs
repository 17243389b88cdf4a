//! The CLI's one error type and the exit codes it maps to.

use std::fmt;
use std::process::ExitCode;

use runner::report::Verdict;

/// Exit code: no divergence.
pub const OK: u8 = 0;
/// Exit code: a divergence was found.
pub const DIVERGED: u8 = 1;
/// Exit code: bad usage or bad input file.
pub const BAD_INPUT: u8 = 2;
/// Exit code: the target was unreachable or misbehaved.
pub const TARGET_FAULT: u8 = 3;
/// Exit code: a file the command was asked to write (a report, a JUnit
/// file, a shrunk trace) could not be written.
pub const IO_ERROR: u8 = 4;

/// Why a command could not do its job.
#[derive(Debug)]
pub enum Failure {
    /// Bad usage or a bad input file (exit 2).
    BadInput(String),
    /// The target is unreachable or misbehaving (exit 3).
    Target(String),
    /// A file that was asked for could not be written (exit 4); names it.
    Io(String),
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::BadInput(m) | Failure::Target(m) | Failure::Io(m) => f.write_str(m),
        }
    }
}

/// A bad input.
pub fn bad(msg: impl fmt::Display) -> Failure {
    Failure::BadInput(msg.to_string())
}

/// A target fault.
pub fn fault(msg: impl fmt::Display) -> Failure {
    Failure::Target(msg.to_string())
}

/// A file that could not be written.
pub fn io(path: &std::path::Path, e: impl fmt::Display) -> Failure {
    Failure::Io(format!("cannot write {}: {e}", path.display()))
}

/// The exit code of a command's result; a failure is printed to stderr.
pub fn exit_code(result: Result<Verdict, Failure>) -> ExitCode {
    ExitCode::from(match result {
        Ok(Verdict::Clean) => OK,
        Ok(Verdict::Diverged) => DIVERGED,
        Ok(Verdict::BadInput) => BAD_INPUT,
        Ok(Verdict::Fault) => TARGET_FAULT,
        // Nothing to check is an input that checks nothing.
        Ok(Verdict::Empty) => BAD_INPUT,
        Err(e) => {
            eprintln!("error: {e}");
            match e {
                Failure::BadInput(_) => BAD_INPUT,
                Failure::Target(_) => TARGET_FAULT,
                Failure::Io(_) => IO_ERROR,
            }
        }
    })
}
