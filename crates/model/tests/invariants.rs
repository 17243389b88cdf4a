//! Invariants of the machine over random request sequences, with `now`
//! advancing and ticks interleaved. After every step:
//!
//! - a pending task has exactly one task timeout, of kind 0 (retry); an
//!   acquired task exactly one, of kind 1 (lease); any other task none;
//! - every task has its promise, a task that is not fulfilled has a pending
//!   one (so the spine's `promise_not_live_409/settled` markers are
//!   unreachable), and task versions never decrease;
//! - a settled promise holds no callbacks or listeners, and no pending
//!   promise holds a callback to a settled promise;
//! - journaling is exact: applying under `checkpoint` and rolling back
//!   restores a state `==` to a clone taken before, and the machine then
//!   keeps answering as a twin that never journaled (so the derived indexes
//!   survived the rollback too);
//! - a step's writes (`State::writes_since`), rolled back and written
//!   blindly (`State::apply_writes`), give the state the step gave; every
//!   other step the machine carries on from that written state, and still
//!   answers as the twin.
//!
//! The strategy draws from a handful of ids so that steps collide: "a",
//! "a.1", "a.2", "b"; pids "p1", "p2"; versions 0..4; deadlines from
//! already past to minutes ahead; one schedule every minute whose template
//! may land on a pool id.

use std::collections::HashMap;

use model::api::Request;
use model::machine::Machine;
use model::state::{DELAY, TARGET, TIMER};
use model::types::{PromiseState, TaskState, Time};
use model::view::StateView;
use proptest::prelude::*;
use proptest::sample::select;

#[path = "common/mod.rs"]
mod common;

use common::*;

const IDS: [&str; 4] = ["a", "a.1", "a.2", "b"];
const PIDS: [&str; 2] = ["p1", "p2"];
const TEMPLATES: [&str; 2] = ["{{.id}}.{{.timestamp}}", "b"];
const SETTLE_STATES: [PromiseState; 5] = [
    PromiseState::Pending,
    PromiseState::Resolved,
    PromiseState::Rejected,
    PromiseState::RejectedCanceled,
    PromiseState::RejectedTimedout,
];

/// How a created promise is tagged; times are relative to `now`.
#[derive(Clone, Debug)]
enum Tagging {
    Plain,
    Target,
    Timer,
    Delayed(u64),
}

/// One step's operation; deadlines are offsets from `now` (0 = already due).
#[derive(Clone, Debug)]
enum Op {
    Create(&'static str, u64, Tagging),
    Get(&'static str),
    Settle(&'static str, PromiseState),
    Callback(&'static str, &'static str),
    Listener(&'static str, &'static str),
    TaskGet(&'static str),
    TaskCreate(&'static str, u64, Tagging, &'static str, u64),
    Acquire(&'static str, u64, &'static str, u64),
    FenceCreate(&'static str, u64, &'static str, u64, Tagging),
    FenceSettle(&'static str, u64, &'static str, PromiseState),
    Heartbeat(&'static str, Vec<(&'static str, u64)>),
    Suspend(&'static str, u64, Vec<&'static str>),
    Fulfill(&'static str, u64, PromiseState),
    Release(&'static str, u64),
    Halt(&'static str),
    Continue(&'static str),
    ScheduleCreate(&'static str, u64, Tagging),
    ScheduleGet,
    ScheduleDelete,
    Search(u8),
    Tick,
}

fn id() -> impl Strategy<Value = &'static str> {
    select(&IDS[..])
}

fn pid() -> impl Strategy<Value = &'static str> {
    select(&PIDS[..])
}

fn version() -> impl Strategy<Value = u64> {
    0..4u64
}

fn state() -> impl Strategy<Value = PromiseState> {
    select(&SETTLE_STATES[..])
}

fn offset() -> impl Strategy<Value = u64> {
    prop_oneof![0..5u64, 1000..20_000u64, 50_000..200_000u64]
}

fn ttl() -> impl Strategy<Value = u64> {
    1000..40_000u64
}

fn tagging() -> impl Strategy<Value = Tagging> {
    prop_oneof![
        2 => Just(Tagging::Plain),
        4 => Just(Tagging::Target),
        2 => Just(Tagging::Timer),
        1 => (0..20_000u64).prop_map(Tagging::Delayed),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (id(), offset(), tagging()).prop_map(|(i, o, t)| Op::Create(i, o, t)),
        1 => id().prop_map(Op::Get),
        3 => (id(), state()).prop_map(|(i, s)| Op::Settle(i, s)),
        3 => (id(), id()).prop_map(|(a, b)| Op::Callback(a, b)),
        2 => (id(), select(&["http://l", "http://m"][..])).prop_map(|(i, l)| Op::Listener(i, l)),
        1 => id().prop_map(Op::TaskGet),
        4 => (id(), offset(), tagging(), pid(), ttl())
            .prop_map(|(i, o, t, p, l)| Op::TaskCreate(i, o, t, p, l)),
        4 => (id(), version(), pid(), ttl()).prop_map(|(i, v, p, l)| Op::Acquire(i, v, p, l)),
        2 => (id(), version(), id(), offset(), tagging())
            .prop_map(|(i, v, c, o, t)| Op::FenceCreate(i, v, c, o, t)),
        2 => (id(), version(), id(), state()).prop_map(|(i, v, c, s)| Op::FenceSettle(i, v, c, s)),
        2 => (pid(), prop::collection::vec((id(), version()), 0..3))
            .prop_map(|(p, r)| Op::Heartbeat(p, r)),
        4 => (id(), version(), prop::collection::vec(id(), 0..3))
            .prop_map(|(i, v, a)| Op::Suspend(i, v, a)),
        3 => (id(), version(), state()).prop_map(|(i, v, s)| Op::Fulfill(i, v, s)),
        2 => (id(), version()).prop_map(|(i, v)| Op::Release(i, v)),
        1 => id().prop_map(Op::Halt),
        1 => id().prop_map(Op::Continue),
        1 => (select(&TEMPLATES[..]), offset(), tagging())
            .prop_map(|(t, o, g)| Op::ScheduleCreate(t, o, g)),
        1 => Just(Op::ScheduleGet),
        1 => Just(Op::ScheduleDelete),
        1 => (0..3u8).prop_map(Op::Search),
        6 => Just(Op::Tick),
    ]
}

/// How far `now` advances before a step: mostly a little, sometimes past
/// leases, retries and minutes.
fn dt() -> impl Strategy<Value = u64> {
    prop_oneof![6 => 0..10u64, 6 => 0..3000u64, 1 => 30_000..130_000u64]
}

fn tags_of(t: &Tagging, now: Time) -> model::types::Tags {
    match t {
        Tagging::Plain => plain(),
        Tagging::Target => tags(&[(TARGET, W)]),
        Tagging::Timer => tags(&[(TIMER, "true")]),
        Tagging::Delayed(d) => tags(&[(TARGET, W), (DELAY, &(now + d).to_string())]),
    }
}

/// The request of `op` at `now`, or `None` for a tick.
fn request(op: &Op, now: Time) -> Option<Request> {
    Some(match op {
        Op::Create(i, o, t) => promise_create(i, now + o, tags_of(t, now)),
        Op::Get(i) => promise_get(i),
        Op::Settle(i, s) => promise_settle(i, *s),
        Op::Callback(a, b) => register_callback(a, b),
        Op::Listener(i, l) => register_listener(i, l),
        Op::TaskGet(i) => task_get(i),
        Op::TaskCreate(i, o, t, p, l) => task_create(p, *l, i, now + o, tags_of(t, now)),
        Op::Acquire(i, v, p, l) => task_acquire(i, *v, p, *l),
        Op::FenceCreate(i, v, c, o, t) => {
            fence_create(i, *v, create_req(c, now + o, tags_of(t, now)))
        }
        Op::FenceSettle(i, v, c, s) => fence_settle(i, *v, settle_req(c, *s)),
        Op::Heartbeat(p, r) => heartbeat(p, r),
        Op::Suspend(i, v, a) => suspend(i, *v, a),
        Op::Fulfill(i, v, s) => fulfill(i, *v, *s),
        Op::Release(i, v) => release(i, *v),
        Op::Halt(i) => halt(i),
        Op::Continue(i) => task_continue(i),
        Op::ScheduleCreate(t, o, g) => schedule_create("s", EVERY_MINUTE, t, *o, tags_of(g, now)),
        Op::ScheduleGet => schedule_get("s"),
        Op::ScheduleDelete => schedule_delete("s"),
        Op::Search(0) => Request::PromiseSearch(Default::default()),
        Op::Search(1) => Request::TaskSearch(Default::default()),
        Op::Search(_) => Request::ScheduleSearch(Default::default()),
        Op::Tick => return None,
    })
}

/// Every invariant of the module doc on `m`; `versions` carries the
/// highest version seen per task.
fn check(m: &Machine, versions: &mut HashMap<String, u64>) -> Result<(), TestCaseError> {
    let v = StateView::of(&m.state);
    for t in &v.tasks {
        let kinds: Vec<u8> = v
            .task_timeouts
            .iter()
            .filter(|tt| tt.id == t.id)
            .map(|tt| tt.kind)
            .collect();
        let want: &[u8] = match t.state {
            TaskState::Pending => &[RETRY],
            TaskState::Acquired => &[LEASE],
            _ => &[],
        };
        prop_assert_eq!(&kinds[..], want, "task timeouts of {:?}", t);
        let promise = m.state.get_promise(&t.id).map(|p| p.state);
        prop_assert!(promise.is_some(), "task {} without promise", t.id);
        if t.state != TaskState::Fulfilled {
            prop_assert_eq!(
                promise,
                Some(PromiseState::Pending),
                "{:?} task {} with a settled promise",
                t.state,
                &t.id
            );
        }
        let seen = versions.entry(t.id.clone()).or_insert(t.version);
        prop_assert!(
            t.version >= *seen,
            "version of {} went {} → {}",
            t.id,
            seen,
            t.version
        );
        *seen = t.version;
    }
    for tt in &v.task_timeouts {
        prop_assert!(
            m.state.get_task(&tt.id).is_some(),
            "timeout without task: {:?}",
            tt
        );
    }
    for p in m.state.promises() {
        if p.state != PromiseState::Pending {
            prop_assert!(p.callbacks.is_empty(), "settled {} has callbacks", p.id);
            prop_assert!(p.listeners.is_empty(), "settled {} has listeners", p.id);
            continue;
        }
        for c in &p.callbacks {
            let awaiter = m.state.get_promise(c).map(|a| a.state);
            prop_assert_eq!(
                awaiter,
                Some(PromiseState::Pending),
                "pending {} holds a callback to {}",
                &p.id,
                c
            );
        }
    }
    Ok(())
}

/// One step on `m` under a journal that is rolled back (the state must come
/// back `==`), written blindly from its writes (the state must be the
/// step's) and rolled back again, then committed and, unless `written`
/// (then the blind write stays), applied for real; `twin` never journals.
fn step(
    m: &mut Machine,
    twin: &mut Machine,
    op: &Op,
    now: Time,
    written: bool,
) -> Result<(), TestCaseError> {
    let before = m.state.clone();
    let mark = m.state.checkpoint();
    let req = request(op, now);
    let tried = match &req {
        Some(req) => format!("{:?}", m.apply(req, now)),
        None => format!("{:?}", m.tick(now)),
    };
    let after = m.state.clone();
    let writes = m.state.writes_since(mark);
    m.state.rollback(mark);
    prop_assert_eq!(&m.state, &before, "rollback of {:?} at {}", req, now);
    m.state.apply_writes(&writes);
    prop_assert_eq!(&m.state, &after, "blind write of {:?} at {}", req, now);
    m.state.rollback(mark);
    prop_assert_eq!(&m.state, &before, "rollback of the blind write");
    m.state.commit();
    if written {
        m.state.apply_writes(&writes);
    }
    match req {
        Some(req) => {
            if !written {
                let res = m.apply(&req, now);
                prop_assert_eq!(&format!("{res:?}"), &tried);
            }
            prop_assert_eq!(format!("{:?}", twin.apply(&req, now)), tried);
        }
        None => {
            if !written {
                let fired = m.tick(now);
                prop_assert_eq!(&format!("{fired:?}"), &tried);
            }
            prop_assert_eq!(format!("{:?}", twin.tick(now)), tried);
        }
    }
    m.clear_hits();
    twin.clear_hits();
    prop_assert_eq!(StateView::of(&m.state), StateView::of(&twin.state));
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn invariants_hold_after_every_step(steps in prop::collection::vec((dt(), op()), 1..60)) {
        let mut m = Machine::default();
        let mut twin = Machine::default();
        let mut versions = HashMap::new();
        let mut now = 0;
        for (i, (dt, op)) in steps.iter().enumerate() {
            now += dt;
            step(&mut m, &mut twin, op, now, i % 2 == 1)?;
            check(&m, &mut versions)?;
        }
    }
}
