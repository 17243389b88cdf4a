//! Shrink passes that change which objects a trace names and in what
//! order it makes them: a step moved earlier, one step pointed at another
//! object. The generator builds the
//! lists a loop walks by cloning an object's history and by moving a list
//! onto a fresh promise (`gen::clone`, `gen::walk`), so a case that met a
//! departure often holds more objects than the departure needs; the
//! deletions alone cannot fold two objects into one: a suspend on one
//! promise and a callback of the same awaiter on another become one
//! suspend on the second once that is made first ([`hoist`]) and the
//! suspend points at it ([`point`]). Both are reshapings at the same
//! number of steps; a pointing is kept only if the deletions it opens (the
//! callback it made a duplicate, the promise no step needs now) make the
//! trace smaller ([`reshaped`]): one that opens nothing would only stand
//! in the way of one that does. (Merging two promises into one everywhere
//! measured the same on the catalogue, and was dropped.)

use gen::{Op, Step};
use model::names::{create_mut, ids_mut};
use model::wire::validate::origin;

use super::{size, Accept, Shrinker};

/// Try `cand` (as many steps as the best, diverging the same way), then
/// the deletions it opens; keep it only if the trace got smaller.
fn reshaped(s: &mut Shrinker, cand: Vec<Step>) -> bool {
    let saved = (s.best.clone(), s.best_steps.clone());
    let before = size(&s.best_steps);
    if !s.try_candidate_as(cand, Accept::SameSteps) {
        return false;
    }
    super::passes::delete_chunks(s);
    if size(&s.best_steps) < before {
        return true;
    }
    (s.best, s.best_steps) = saved;
    false
}

/// Every promise the trace's requests create (a `promise.create`, a
/// `task.create`'s, a fenced create's), in order, once: what a step may be
/// pointed at. Not a promise a schedule's tick made: pointing at one ties
/// the trace to the schedule that the unscheduling pass would take away.
fn created(steps: &[Step]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for step in steps {
        let Op::Request(r) = &step.op else { continue };
        let mut r = r.clone();
        if let Some(c) = create_mut(&mut r) {
            if !out.contains(&c.id) {
                out.push(c.id.clone());
            }
        }
    }
    out
}

/// Move a step earlier: each step to each earlier position among the
/// steps at its own `now` (the clock never goes back), the first kept
/// taken, whether or not it opens a deletion itself: making an object
/// before the steps that wait on it is what lets [`point`] aim them at
/// it.
pub(super) fn hoist(s: &mut Shrinker) {
    let mut j = 1;
    while j < s.best_steps.len() && !s.expired() {
        let now = s.best_steps[j].now;
        let from = (0..j)
            .rev()
            .take_while(|&i| s.best_steps[i].now == now)
            .last();
        for i in from.into_iter().flat_map(|f| f..j) {
            let mut cand = s.best_steps.clone();
            let step = cand.remove(j);
            cand.insert(i, step);
            if s.try_candidate_as(cand, Accept::SameSteps) {
                break;
            }
        }
        j += 1;
    }
}

/// Point one id of one step at another promise of its origin a request
/// of the trace creates (a suspend awaiting the promise whose settlement
/// resumes it, instead of one made only to be awaited), kept if it opens
/// deletions.
pub(super) fn point(s: &mut Shrinker) {
    let ids = created(&s.best_steps);
    let mut j = 0;
    while j < s.best_steps.len() && !s.expired() {
        let Op::Request(r) = &s.best_steps[j].op else {
            j += 1;
            continue;
        };
        let mut r = r.clone();
        let slots = ids_mut(&mut r).len();
        'slot: for k in 0..slots {
            let x = ids_mut(&mut r)[k].clone();
            for y in ids.iter().filter(|y| **y != x && origin(y) == origin(&x)) {
                let mut cand = s.best_steps.clone();
                if let Op::Request(c) = &mut cand[j].op {
                    *ids_mut(c)[k] = y.clone();
                }
                if reshaped(s, cand) {
                    break 'slot;
                }
            }
        }
        j += 1;
    }
}
