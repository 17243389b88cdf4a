//! Choosing `schedule.*` requests.
//!
//! At most [`MAX_SCHEDULES`] schedules exist at once, with every-minute or
//! every-two-minute crons, so catch-up stays a handful of promises per tick.
//! Their promises (`{{.id}}.{{.timestamp}}`) carry a target: each fire
//! creates a pending task the generator may then claim.

use model::api::{
    Request, ScheduleCreateReq, ScheduleDeleteReq, ScheduleGetReq, ScheduleSearchReq,
};
use model::machine::Machine;
use proptest::test_runner::TestRng;

use crate::dice::Dice;
use crate::pools::{self, TARGET};

/// The most schedules alive at once.
pub(crate) const MAX_SCHEDULES: usize = 2;

/// Existing schedule ids, sorted.
fn existing(m: &Machine) -> Vec<String> {
    let mut v: Vec<String> = m.state.schedules().map(|s| s.id.clone()).collect();
    v.sort();
    v
}

/// A schedule id: existing (`pct` percent), else from the pool.
fn schedule_id(m: &Machine, rng: &mut TestRng, pct: u64) -> String {
    let ids = existing(m);
    match rng.pick(&ids) {
        Some(id) if rng.chance(pct) => id.clone(),
        _ => rng.pick(&pools::SCHEDULES).expect("non-empty").to_string(),
    }
}

/// `schedule.create`: new while fewer than [`MAX_SCHEDULES`] exist, else an
/// existing id (idempotent: the stored schedule is returned).
pub(crate) fn create(m: &Machine, rng: &mut TestRng) -> Request {
    let ids = existing(m);
    let id = if ids.len() >= MAX_SCHEDULES {
        rng.pick(&ids).expect("non-empty").clone()
    } else {
        schedule_id(m, rng, 20)
    };
    Request::ScheduleCreate(ScheduleCreateReq {
        promise_tags: pools::tag(TARGET, &format!("http://worker.local/{id}")),
        id,
        cron: rng.pick(&pools::CRONS).expect("non-empty").to_string(),
        promise_id: pools::TEMPLATE.to_string(),
        promise_timeout: rng.range(10_000, 120_000),
        promise_param: pools::value(rng),
    })
}

/// `schedule.get`.
pub(crate) fn get(m: &Machine, rng: &mut TestRng) -> Request {
    Request::ScheduleGet(ScheduleGetReq {
        id: schedule_id(m, rng, 70),
    })
}

/// `schedule.delete`.
pub(crate) fn delete(m: &Machine, rng: &mut TestRng) -> Request {
    Request::ScheduleDelete(ScheduleDeleteReq {
        id: schedule_id(m, rng, 70),
    })
}

/// `schedule.search` (501 in the spec).
pub(crate) fn search(rng: &mut TestRng) -> Request {
    let mut r = ScheduleSearchReq::default();
    if rng.chance(50) {
        r.limit = Some(rng.range(1, 20));
    }
    Request::ScheduleSearch(r)
}
