//! Re-pointing a step at a changed history, for the runner's shrinker.
//!
//! When the shrinker drops steps, later steps run on a different model
//! state. What a generated step means depends on that state in one way
//! only: the task versions it carries (the generator wrote "the current
//! version", or one behind or ahead of it). Ids never need repair, since a
//! step that names a missing id is still well formed (404/422).
//!
//! Rules, applied to `task.acquire` (task must be pending), `task.fence`,
//! `task.suspend`, `task.fulfill`, `task.release` (task must be acquired)
//! and each entry of `task.heartbeat` (acquired):
//! - [`repair`] (no original history): when the task exists in the new
//!   state in the required state, its version becomes the task's current
//!   version; otherwise the step is kept as is. Deliberate mismatches on
//!   such a task are lost; the shrinker keeps a candidate only if the
//!   failure still reproduces, so this only costs shrink steps.
//! - [`repair_relative`] (given the model just before the step in the
//!   original history): the version keeps its offset from the task's
//!   version (current stays current, stale stays stale). A step naming a
//!   task that existed originally but not in the new history is dropped
//!   (`None`), as are heartbeat entries and suspend actions whose task or
//!   awaited promise disappeared; a heartbeat or suspend left empty is
//!   dropped.
//!
//! Both return `None` for a step that is not [`crate::well_formed`].

use model::api::Request;
use model::machine::Machine;
use model::types::TaskState;

use crate::{well_formed, Op, Step};

/// Re-point `step`'s versions at `m` (see the module rules).
pub fn repair(step: &Step, m: &Machine) -> Option<Step> {
    fix(step, None, m)
}

/// Re-point `step`'s versions at `m`, keeping their offsets from the task
/// versions in `original`, the model just before `step` in the history the
/// step was generated in (see the module rules).
pub fn repair_relative(step: &Step, original: &Machine, m: &Machine) -> Option<Step> {
    fix(step, Some(original), m)
}

fn fix(step: &Step, original: Option<&Machine>, m: &Machine) -> Option<Step> {
    let mut out = step.clone();
    if let Op::Request(r) = &mut out.op {
        fix_request(r, original, m)?;
    }
    well_formed(&out, m).ok()?;
    Some(out)
}

/// The version `id` should carry in `m`; `None` to drop the step.
fn version(
    id: &str,
    v: u64,
    required: TaskState,
    original: Option<&Machine>,
    m: &Machine,
) -> Option<u64> {
    let now = m.state.get_task(id);
    match original {
        None => Some(match now {
            Some(t) if t.state == required => t.version,
            _ => v,
        }),
        Some(o) => match (o.state.get_task(id), now) {
            (Some(_), None) => None,
            (Some(before), Some(t)) => {
                let shifted = t.version as i128 + (v as i128 - before.version as i128);
                Some(u64::try_from(shifted).unwrap_or(t.version + 1))
            }
            (None, _) => Some(v),
        },
    }
}

fn fix_request(r: &mut Request, original: Option<&Machine>, m: &Machine) -> Option<()> {
    use TaskState::{Acquired, Pending};
    match r {
        Request::TaskAcquire(x) => x.version = version(&x.id, x.version, Pending, original, m)?,
        Request::TaskFence(x) => x.version = version(&x.id, x.version, Acquired, original, m)?,
        Request::TaskFulfill(x) => x.version = version(&x.id, x.version, Acquired, original, m)?,
        Request::TaskRelease(x) => x.version = version(&x.id, x.version, Acquired, original, m)?,
        Request::TaskSuspend(x) => {
            x.version = version(&x.id, x.version, Acquired, original, m)?;
            if let Some(o) = original {
                x.actions.retain(|a| {
                    o.state.get_promise(&a.awaited).is_none()
                        || m.state.get_promise(&a.awaited).is_some()
                });
            }
        }
        Request::TaskHeartbeat(x) => {
            x.tasks = x
                .tasks
                .iter()
                .filter_map(|t| {
                    let v = version(&t.id, t.version, Acquired, original, m)?;
                    Some(model::api::TaskRef {
                        id: t.id.clone(),
                        version: v,
                    })
                })
                .collect();
        }
        _ => {}
    }
    Some(())
}
