//! T-05 `task.heartbeat`: `spec/02-actions/T-05-task.heartbeat.lean`.
//! Refreshes the lease of each listed task still held by `pid` at the listed
//! version with a live promise, re-arming it at `now + ttl`; every other
//! entry is skipped silently. Always 200.

use crate::actions::guard::NotLive;
use crate::api::TaskHeartbeatReq;
use crate::branch::*;
use crate::machine::Machine;
use crate::marker;
use crate::state::LEASE;
use crate::types::{PromiseState, TaskState, Time};

const NOT_LIVE: NotLive = NotLive {
    settled: TASK_HEARTBEAT_REF_PROMISE_NOT_LIVE_SKIPPED_SETTLED,
    expired: TASK_HEARTBEAT_REF_PROMISE_NOT_LIVE_SKIPPED_EXPIRED,
};

/// `taskHeartbeat`.
pub fn task_heartbeat(m: &mut Machine, req: &TaskHeartbeatReq, now: Time) -> u16 {
    let mut refreshed = 0;
    for r in &req.tasks {
        let Some(t) = m.state.get_task(&r.id) else {
            m.hits.push(TASK_HEARTBEAT_REF_TASK_NOT_FOUND_SKIPPED);
            continue;
        };
        // `t.state == .acquired ∧ t.version == ref.version ∧ t.pid == some req.pid`,
        // the first false conjunct named.
        let not_held = if t.state != TaskState::Acquired {
            Some(TASK_HEARTBEAT_REF_NOT_HELD_SKIPPED_NOT_ACQUIRED)
        } else if t.version != r.version {
            Some(TASK_HEARTBEAT_REF_NOT_HELD_SKIPPED_VERSION)
        } else if t.pid.as_deref() != Some(req.pid.as_str()) {
            Some(TASK_HEARTBEAT_REF_NOT_HELD_SKIPPED_PID)
        } else {
            None
        };
        if let Some(why) = not_held {
            m.hits.push(TASK_HEARTBEAT_REF_NOT_HELD_SKIPPED);
            m.hits.push(why);
            continue;
        }
        let ttl = t.ttl.unwrap_or(0);
        let id = t.id.clone();
        let branch = match m.state.get_promise(&id) {
            None => TASK_HEARTBEAT_REF_PROMISE_NOT_FOUND_SKIPPED,
            Some(p) if p.state == PromiseState::Pending && p.timeout_at > now => {
                marker::TASK_HEARTBEAT.record(&mut m.marks, p.timeout_at, now);
                refreshed += 1;
                m.state.del_task_timeout(&id);
                m.state
                    .set_task_timeout(&id, LEASE, now.saturating_add(ttl));
                TASK_HEARTBEAT_REF_REFRESHED
            }
            Some(p) => {
                if p.state == PromiseState::Pending {
                    marker::TASK_HEARTBEAT.record(&mut m.marks, p.timeout_at, now);
                }
                m.hits.push(TASK_HEARTBEAT_REF_PROMISE_NOT_LIVE_SKIPPED);
                NOT_LIVE.of(p)
            }
        };
        m.hits.push(branch);
    }
    marker::HEARTBEAT_REFS.record(&mut m.marks, req.tasks.len(), refreshed);
    m.hits.push(TASK_HEARTBEAT_OK_200);
    200
}
