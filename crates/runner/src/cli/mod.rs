//! Command-line parsing and dispatch: each command parses, calls one
//! library function and maps the outcome to an exit code ([`error`]).

mod args;
mod commands;
mod error;
mod stress;
mod triage;

use std::process::ExitCode;

use clap::Parser;

pub use args::Cli;

/// Parse the arguments and run; returns the exit code.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() {
                error::BAD_INPUT
            } else {
                error::OK
            });
        }
    };
    error::exit_code(commands::dispatch(cli))
}
