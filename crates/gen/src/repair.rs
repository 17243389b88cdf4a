//! Keeping an edited trace well formed: the one repair the shrinker and
//! the golden-corpus builder use.
//!
//! When steps are dropped or edited, later steps run on a different model
//! state. What a generated step means depends on that state in one way
//! only: the task versions it carries (the generator wrote "the current
//! version", or one behind or ahead of it). Ids never need repair, since a
//! step naming a missing id is still well formed (404/409).
//!
//! [`repair`] replays the candidate on a fresh model and, for every step it
//! recognises from the reference trace (same `now`, same request up to its
//! versions), re-points each version by its offset from the task's current
//! version in the reference (current stays current, stale stays stale by
//! as much); then it drops every step that is not [`crate::well_formed`]
//! on the candidate's own history (unless it is a validation probe the
//! reference holds), and every step whose `now` goes back.

use std::collections::HashMap;

use model::machine::Machine;
use model::names::versions_mut;
use model::state::ServerConfig;

use crate::{apply, is_probe, well_formed, Op, Step};

/// A step's identity with its versions blanked, so a re-pointed step is
/// still recognised.
fn key(step: &Step) -> Option<String> {
    let Op::Request(r) = &step.op else {
        return None;
    };
    let mut r = r.clone();
    for (_, v) in versions_mut(&mut r) {
        *v = 0;
    }
    Some(format!("{}:{}", step.now, model::wire::encode_request(&r)))
}

fn current(m: &Machine, id: &str) -> Option<i64> {
    m.state.get_task(id).map(|t| t.version as i64)
}

/// Each versioned step's offsets from the current version, by [`key`].
fn intents(reference: &[Step], retry_timeout: u64) -> HashMap<String, Vec<Option<i64>>> {
    let mut m = Machine::new(ServerConfig { retry_timeout });
    let mut out = HashMap::new();
    for step in reference {
        if let (Op::Request(r), Some(k)) = (&step.op, key(step)) {
            let mut r = r.clone();
            let deltas = versions_mut(&mut r)
                .into_iter()
                .map(|(id, v)| current(&m, id).map(|c| *v as i64 - c))
                .collect();
            out.entry(k).or_insert(deltas);
        }
        apply(&mut m, step);
    }
    out
}

/// Make `candidate` well formed against its own history, re-pointing
/// versions by their offsets in `reference` (see the module doc).
pub fn repair(candidate: &[Step], reference: &[Step], retry_timeout: u64) -> Vec<Step> {
    let intents = intents(reference, retry_timeout);
    let mut m = Machine::new(ServerConfig { retry_timeout });
    let mut out = Vec::with_capacity(candidate.len());
    let mut last_now = 0;
    for step in candidate {
        let mut step = step.clone();
        if step.now < last_now {
            continue;
        }
        if let (Some(deltas), Op::Request(r)) =
            (key(&step).and_then(|k| intents.get(&k)), &mut step.op)
        {
            for ((id, v), delta) in versions_mut(r).into_iter().zip(deltas) {
                if let (Some(c), Some(d)) = (current(&m, id), delta) {
                    *v = (c + d).max(0) as u64;
                }
            }
        }
        // A probe of the reference stays (it is the point of the trace);
        // anything else must keep to the servers' rules.
        let probe = is_probe(&step, &m) && key(&step).is_some_and(|k| intents.contains_key(&k));
        if well_formed(&step, &m).is_err() && !probe {
            continue;
        }
        last_now = step.now;
        apply(&mut m, &step);
        out.push(step);
    }
    out
}
