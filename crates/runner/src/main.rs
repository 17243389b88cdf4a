//! `conform`: the differential conformance harness for the Resonate
//! protocol. Exit codes: 0 no divergence, 1 divergence, 2 bad usage or bad
//! input file, 3 target unreachable or misbehaving, 4 a file asked for
//! (report, JUnit, shrunk trace) could not be written.

mod cli;

fn main() -> std::process::ExitCode {
    cli::main()
}
