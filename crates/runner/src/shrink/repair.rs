//! Keeping shrink candidates well-formed: the generator's preconditions are
//! re-checked against the candidate's own history, and task versions are
//! re-pointed so that a request that presented the current version in the
//! reference trace still does (and a stale one stays stale by as much).

use std::collections::HashMap;

use gen::{Op, Step};
use model::api::Request;
use model::machine::Machine;
use model::state::ServerConfig;

/// The (task id, version) pairs a request presents, mutably.
pub(crate) fn versions_mut(req: &mut Request) -> Vec<(&str, &mut u64)> {
    match req {
        Request::TaskAcquire(r) => vec![(r.id.as_str(), &mut r.version)],
        Request::TaskFence(r) => vec![(r.id.as_str(), &mut r.version)],
        Request::TaskSuspend(r) => vec![(r.id.as_str(), &mut r.version)],
        Request::TaskFulfill(r) => vec![(r.id.as_str(), &mut r.version)],
        Request::TaskRelease(r) => vec![(r.id.as_str(), &mut r.version)],
        Request::TaskHeartbeat(r) => r
            .tasks
            .iter_mut()
            .map(|t| (t.id.as_str(), &mut t.version))
            .collect(),
        _ => Vec::new(),
    }
}

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
        gen::apply(&mut m, step);
    }
    out
}

/// Make `candidate` well-formed against its own history, re-pointing
/// versions by their offsets in `reference`; drops steps the generator's
/// preconditions reject.
pub fn repair(candidate: &[Step], retry_timeout: u64, reference: &[Step]) -> Vec<Step> {
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
        if gen::well_formed(&step, &m).is_err() {
            continue;
        }
        last_now = step.now;
        gen::apply(&mut m, &step);
        out.push(step);
    }
    out
}
