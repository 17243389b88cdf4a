//! Schedules kept as stubs: created and read (`schedule.create`, S-02) but
//! never run. The Python SDK's server (`ScheduleStub`,
//! `resonate/connections/local.py:108-128`, "stubs for local mode")
//! answers `nextRunAt: 0`, arms no schedule timer and so never creates an
//! occurrence (`scripts/py-server/DIALECT.md` B18).
//!
//! | name | Lean line | what |
//! |---|---|---|
//! | `schedule-never-fires` | S-02:18 | a created schedule has `nextRunAt` 0 and no schedule timeout: no occurrence is ever created (Python server, B18) |

use model::api::{Request, Response};
use model::machine::Machine;
use model::types::Time;

use super::witness::*;
use crate::{Class, Deviation, Hooks, Next};

/// Every deviation of this family.
pub const ALL: &[Deviation] = &[Deviation {
    name: "schedule-never-fires",
    spec: "spec/02-actions/S-02-schedule.create.lean:18",
    class: Class::Bug,
    summary: "a created schedule has nextRunAt 0 and no schedule timeout, so it never fires",
    hooks: &ScheduleNeverFires,
    witness: || vec![at(T0, schedule("s", "* * * * *"))],
}];

/// The new schedule is stored with `nextRunAt` 0 and its timer disarmed;
/// an existing one is answered as stored (already so).
struct ScheduleNeverFires;

impl Hooks for ScheduleNeverFires {
    fn apply(&self, m: &mut Machine, req: &Request, now: Time, next: Next) -> Response {
        let Request::ScheduleCreate(r) = req else {
            return next(m, req, now);
        };
        let new = m.state.get_schedule(&r.id).is_none();
        let mut res = next(m, req, now);
        if let (true, Response::Schedule(s)) = (new, &mut res) {
            if s.status == 200 {
                if let Some(mut stored) = m.state.get_schedule(&r.id).cloned() {
                    stored.next_run_at = 0;
                    m.state.set_schedule(stored);
                    m.state.del_schedule_timeout(&r.id);
                }
                if let Some(sched) = s.schedule.as_mut() {
                    sched.next_run_at = 0;
                }
            }
        }
        res
    }
}
