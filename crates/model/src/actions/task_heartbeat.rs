//! T-05 `task.heartbeat`: `spec/02-actions/T-05-task.heartbeat.lean`.
//! Refreshes the lease of each listed task still held by `pid` at the listed
//! version with a live promise, re-arming it at `now + ttl`; every other
//! entry is skipped silently. Always 200.

use crate::api::TaskHeartbeatReq;
use crate::branch::*;
use crate::machine::Machine;
use crate::state::LEASE;
use crate::types::{TaskState, Time};

/// `taskHeartbeat`.
pub fn task_heartbeat(m: &mut Machine, req: &TaskHeartbeatReq, now: Time) -> u16 {
    for r in &req.tasks {
        let Some(t) = m.state.get_task(&r.id) else {
            m.hits.push(TASK_HEARTBEAT_REF_TASK_NOT_FOUND_SKIPPED);
            continue;
        };
        let held = t.state == TaskState::Acquired
            && t.version == r.version
            && t.pid.as_deref() == Some(req.pid.as_str());
        if !held {
            m.hits.push(TASK_HEARTBEAT_REF_NOT_HELD_SKIPPED);
            continue;
        }
        let ttl = t.ttl.unwrap_or(0);
        let id = t.id.clone();
        let branch = match m.state.get_promise(&id) {
            None => TASK_HEARTBEAT_REF_PROMISE_NOT_FOUND_SKIPPED,
            Some(p) if !p.is_live(now) => TASK_HEARTBEAT_REF_PROMISE_NOT_LIVE_SKIPPED,
            Some(_) => {
                m.state.del_task_timeout(&id);
                m.state
                    .set_task_timeout(&id, LEASE, now.saturating_add(ttl));
                TASK_HEARTBEAT_REF_REFRESHED
            }
        };
        m.hits.push(branch);
    }
    m.hits.push(TASK_HEARTBEAT_OK_200);
    200
}
