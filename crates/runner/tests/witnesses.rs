//! Every deviation's witness, judged by the harness (latitude included):
//! the model with that deviation, playing the target, diverges from the
//! spec's model at the witness's last step and nowhere before, and no
//! shorter subsequence of the witness diverges at all. So the witness
//! length is the hand-minimal length `conform mutants` reports.

use gen::Step;
use runner::check::Checker;
use runner::exec::{execute, ExecOptions, Expect};
use runner::profile::Profile;
use runner::target::{LocalServer, LocalTarget};

/// Where the harness finds `steps` diverging against `d`, if it does.
fn diverges_at(d: &'static deviate::Deviation, steps: &[Step]) -> Option<usize> {
    let mut server = LocalServer::new(Default::default(), vec![d], false);
    if runner::mutants::probe_only(d) {
        server = server.without_validation();
    }
    let mut target = LocalTarget::new(server);
    let mut checker = Checker::new(Profile::default());
    let opts = ExecOptions { check_state: true };
    let ex = execute(&mut target, &mut checker, steps, Expect::Model, opts);
    ex.divergence.map(|(i, _)| i)
}

/// Whether `steps` keep to the generator's rules (a subsequence may not).
fn well_formed(steps: &[Step]) -> bool {
    let mut m = model::machine::Machine::default();
    let mut last = 0;
    steps.iter().all(|s| {
        let ok = s.now >= last && (gen::well_formed(s, &m).is_ok() || gen::is_probe(s, &m));
        last = s.now;
        gen::apply(&mut m, s);
        ok
    })
}

#[test]
fn every_witness_diverges_at_its_last_step_and_no_shorter_one_does() {
    for d in deviate::all() {
        let steps = (d.witness)();
        let n = steps.len();
        assert_eq!(
            diverges_at(d, &steps),
            Some(n - 1),
            "{}: the harness must find its witness at the last step",
            d.name
        );
        for mask in 1u32..(1 << n) - 1 {
            let sub: Vec<Step> = (0..n)
                .filter(|i| mask & (1 << i) != 0)
                .map(|i| steps[i].clone())
                .collect();
            if well_formed(&sub) {
                assert_eq!(
                    diverges_at(d, &sub),
                    None,
                    "{}: a shorter witness of {} steps exists (mask {mask:b})",
                    d.name,
                    sub.len()
                );
            }
        }
    }
}
