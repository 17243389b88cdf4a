//! The marker gate: a default run (20 cases of 50 steps) of each of seeds
//! 1–3, generated as `conform run` generates it, reaches every reachable
//! marker of `model::marker`. The steered cases are sharpened
//! (`gen::sharpen`: deadlines and delays on and near `now`, requests aimed
//! at deadlines a millisecond away, suspends given a mix or only settled
//! awaited promises, joins of awaited promises, heartbeats of every held
//! task) and aimed (`gen::Aim`: each step the first of several drawn that
//! reaches what the campaign has not); from the fifth on they aim further
//! (`Generator::aimed_further`: a drawn request retimed onto an instant of
//! a deadline it names, a walk of a long list, a clone of an element of a
//! list then its walk, `gen::walk`, `gen::clone`), half of them are dense
//! for their first 30 steps (`Generator::dense`) and their prefixes now
//! and then have one object's history cloned. Seeds 1–3 reach all 95
//! where random cases reach 35 (82 before aiming further, 60 before
//! aiming, 48 before sharpening). Over the twelve triples of seeds 1–36
//! the mean is 94.3 (92–95; eight of the twelve reach all 95; 85.8 before
//! aiming further). A change of how the dice are cast moves a triple's
//! count within that spread: if this gate fails after such a change, the
//! printed misses say which shape the new streams no longer build.

use std::collections::BTreeSet;

use gen::{Campaign, GenConfig, Stepper};
use model::branch::Branch;
use model::machine::Machine;
use model::marker;
use model::state::ServerConfig;

/// The markers the default cases of `seeds` reach, steered or random.
fn reached(seeds: &[u64], steered: bool) -> BTreeSet<Branch> {
    let cfg = GenConfig::default();
    let mut out = BTreeSet::new();
    for &seed in seeds {
        let mut c = Campaign::new(seed, &cfg, &Stepper::spec());
        for case in 0..20 {
            let steps = if steered {
                c.case_vec(case)
            } else {
                gen::generate(gen::case_seed(seed, case), &cfg)
            };
            let mut m = Machine::new(ServerConfig {
                retry_timeout: cfg.retry_timeout,
            });
            for s in &steps {
                gen::apply(&mut m, s);
                out.extend(m.take_marks());
            }
        }
    }
    out
}

fn missed(hit: &BTreeSet<Branch>) -> Vec<&'static str> {
    marker::ALL
        .iter()
        .filter(|m| !marker::UNREACHABLE.iter().any(|(u, _)| u == *m))
        .filter(|m| !hit.contains(m))
        .map(|m| m.name())
        .collect()
}

#[test]
fn steered_default_runs_of_seeds_1_to_3_reach_every_reachable_marker() {
    let random = reached(&[1, 2, 3], false);
    let steered = reached(&[1, 2, 3], true);
    let total = marker::ALL.len() - marker::UNREACHABLE.len();
    eprintln!(
        "markers reached by seeds 1-3: random {} of {total}, steered {} of {total}",
        total - missed(&random).len(),
        total - missed(&steered).len()
    );
    assert!(steered.len() >= random.len());
    assert!(
        missed(&steered).is_empty(),
        "missed: {:?}",
        missed(&steered)
    );
}
