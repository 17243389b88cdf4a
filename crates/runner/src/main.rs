//! `conform`: the differential conformance harness for the Resonate
//! protocol. Exit codes: 0 no divergence, 1 divergence, 2 bad usage or bad
//! input file, 3 target unreachable or misbehaving, 4 a file asked for
//! (report, JUnit, shrunk trace) could not be written.

mod cli;

/// mimalloc rather than the system allocator: a step allocates and frees
/// hundreds of small JSON values and strings, and glibc's malloc spent
/// about a fifth of the harness's CPU per step on them (measured with
/// `cargo bench -p resonate-runner --bench cpu`; README "Dependencies").
/// It was taken out once because the faster `conform serve` changed the
/// concurrent run's interleavings into ones the checker searched for
/// minutes; the checker's partial-order reduction (lin/reduce.rs) ended
/// that blow-up, and tests/stress.rs is the check.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    cli::main()
}
