//! Command-line parsing and dispatch. Each subcommand lives in its own
//! module and returns the process exit code.

mod args;
mod commands;

use clap::Parser;

pub use args::Cli;

/// Exit code: no divergence.
pub const OK: i32 = 0;
/// Exit code: a divergence was found.
pub const DIVERGED: i32 = 1;
/// Exit code: bad usage or bad input file.
pub const BAD_INPUT: i32 = 2;
/// Exit code: the target was unreachable or misbehaved.
pub const TARGET_FAULT: i32 = 3;

/// Parse the arguments and run; returns the exit code.
pub fn main() -> i32 {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { BAD_INPUT } else { OK };
        }
    };
    commands::dispatch(cli)
}
