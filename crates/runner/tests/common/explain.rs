//! Does some sequential order explain what a server answered to operations
//! sent at once? A small brute force for tests of planted races (the
//! concurrent run's linearizability checker is the real one): every
//! permutation of the operations after the prefix, on a fresh model, with
//! every due timer fired (a tick) or not before each operation and at the
//! end (the latitude rule), compared on the normalised responses and the
//! final snapshot.
#![allow(dead_code)]

use deviate::Deviant;
use gen::{Op, Step};
use itertools::Itertools;
use model::state::ServerConfig;
use model::view::StateView;
use runner::compare::{diff_state, normalize_response};
use serde_json::Value;

/// What a server did with operations sent at once: each operation's
/// response envelope (`None` for a tick) and the state after all of them.
#[derive(Clone, Debug)]
pub struct Observed {
    /// By operation, in the witness's order.
    pub responses: Vec<Option<Value>>,
    /// The `debug.snap` data after every operation answered.
    pub snap: Value,
}

/// An order of `concurrent` (indexes) after `prefix` that gives
/// `observed`, with the ticks fired before each operation (and at the
/// end) as a mask; `None` when no order explains it.
pub fn explaining_order(
    prefix: &[Step],
    concurrent: &[Step],
    observed: &Observed,
) -> Option<(Vec<usize>, u32)> {
    let n = concurrent.len();
    for order in (0..n).permutations(n) {
        for mask in 0..(1u32 << (n + 1)) {
            if explains(prefix, concurrent, &order, mask, observed) {
                return Some((order, mask));
            }
        }
    }
    None
}

fn explains(
    prefix: &[Step],
    concurrent: &[Step],
    order: &[usize],
    mask: u32,
    observed: &Observed,
) -> bool {
    let mut m = Deviant::new(ServerConfig::default(), Vec::new());
    for s in prefix {
        m.step(s);
    }
    let now = concurrent[0].now;
    for (at, &i) in order.iter().enumerate() {
        if mask & (1 << at) != 0 {
            m.tick(now);
        }
        let step = &concurrent[i];
        let res = m.step(step);
        if let (Op::Request(req), Some(res)) = (&step.op, res) {
            let ours = normalize_response(&m.encode(req, &res, "explain"));
            let theirs = observed.responses[i].as_ref().map(normalize_response);
            if theirs.as_ref() != Some(&ours) {
                return false;
            }
        }
    }
    if mask & (1 << order.len()) != 0 {
        m.tick(now);
    }
    let view = serde_json::to_value(StateView::of(&m.state)).expect("a view serializes");
    diff_state(&view, &observed.snap, &[], &mut Default::default()).is_empty()
}
