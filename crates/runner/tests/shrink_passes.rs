//! The shrinker's reshaping passes, each on a trace only it can bring to
//! the witness's length: a schedule's promise made directly (`unschedule`),
//! a promise creation and its task's first claim made one `task.create`
//! (`claims`), a tick snapped onto a deadline armed before it
//! (`snap_ticks`), a claimed creation made a plain one (a value
//! simplification), and a suspend pointed at a promise made before it
//! (`objects::hoist` and `objects::point`). Each of the last four fails
//! with its pass taken out (the last two with either taken out).

use std::time::Duration;

use deviate::families::witness::*;
use gen::{Op, Step};
use model::api::Request;
use model::types::PromiseState;
use runner::check::Checker;
use runner::exec::{execute, ExecOptions, Expect};
use runner::profile::Profile;
use runner::shrink::{shrink, ShrinkOptions};
use runner::target::{LocalServer, LocalTarget};

/// Shrink `steps` against the model with `bug`; the shrunk steps.
fn shrunk(bug: &str, steps: &[Step]) -> Vec<Step> {
    shrunk_keeping(bug, steps, false)
}

/// As [`shrunk`]; with `headline`, going on past the class with its
/// headline alone (`ShrinkOptions::headline`).
fn shrunk_keeping(bug: &str, steps: &[Step], headline: bool) -> Vec<Step> {
    let d = deviate::lookup(bug).unwrap();
    let mut target = LocalTarget::new(LocalServer::new(Default::default(), vec![d], false));
    let mut checker = Checker::new(Profile::default());
    let opts = ExecOptions { check_state: true };
    let ex = execute(&mut target, &mut checker, steps, Expect::Model, opts);
    assert!(ex.divergence.is_some(), "{bug} shows on the trace");
    let r = shrink(
        &mut target,
        &mut checker,
        ex,
        &ShrinkOptions {
            check_state: true,
            time: Duration::from_secs(20),
            candidates: None,
            headline,
        },
        &mut std::io::sink(),
    );
    r.best.lines.iter().map(|l| l.step.clone()).collect()
}

/// A task acquired at a stale version after it buffered a resume: the
/// class found names the resume it loses, which only a history that
/// buffers one shows. Keeping the class leaves the resume's steps in;
/// keeping the headline (the 409 answered 200) goes on to the
/// witness's two steps (a pending task, the stale acquire).
#[test]
fn a_planted_bugs_departure_shrinks_past_its_class_to_its_headline() {
    let steps = vec![
        at(T0, task_create("a", "p1", 60_000, LATER)),
        at(T0, create("a.1", LATER, none())),
        at(T0, callback("a.1", "a")),
        at(T0 + 1, settle("a.1", PromiseState::Resolved)),
        at(T0 + 2, release("a", 1)),
        at(T0 + 3, acquire("a", 7, "p2", 60_000)),
    ];
    let bug = "acquire-no-version-check";
    let class = shrunk_keeping(bug, &steps, false);
    let headline = shrunk_keeping(bug, &steps, true);
    assert!(class.len() > 2, "the class keeps the resume: {class:?}");
    assert_eq!(
        kinds(&headline),
        ["promise.create", "task.acquire"],
        "{headline:?}"
    );
}

fn kinds(steps: &[Step]) -> Vec<&'static str> {
    steps
        .iter()
        .map(|s| match &s.op {
            Op::Request(r) => r.kind(),
            Op::Tick => "tick",
        })
        .collect()
}

#[test]
fn a_schedules_promise_is_made_directly() {
    // The schedule's first occurrence makes `s1.M1` with a task; the task
    // is claimed, and heartbeated after the promise's deadline.
    let id = format!("s1.{M1}");
    let steps = vec![
        at(T0, schedule("s1", EVERY_MINUTE)),
        tick(M1),
        at(M1, acquire(&id, 0, "p1", 120_000)),
        at(M1 + 60_001, heartbeat("p1", &[(&id, 1)])),
    ];
    let best = shrunk("heartbeat-ignores-expiry", &steps);
    let k = kinds(&best);
    assert!(!k.contains(&"schedule.create"), "{k:?}");
    assert!(best.len() <= 3, "{k:?}");
    assert_eq!(k.last(), Some(&"task.heartbeat"));
}

#[test]
fn a_creation_and_its_first_claim_become_one_task_create() {
    // `a` suspends on `a.1`; `a.1`'s task settles `a`, whose entry in
    // `a.1`'s callbacks the settlement must scrub.
    let steps = vec![
        at(T0, create("a", LATER, target())),
        at(T0, acquire("a", 0, "p1", 60_000)),
        at(T0, create("a.1", LATER, target())),
        at(T0, suspend("a", 1, &["a.1"])),
        at(T0, acquire("a.1", 0, "p1", 60_000)),
        at(T0, fence_settle("a.1", 1, "a")),
    ];
    let best = shrunk("settle-no-scrub", &steps);
    let k = kinds(&best);
    assert!(k.contains(&"task.create"), "{k:?}");
    assert!(
        best.len() <= 4,
        "{k:?}: at most the witness's length and one"
    );
    assert!(best
        .iter()
        .all(|s| !matches!(&s.op, Op::Request(Request::TaskAcquire(_)))));
}

/// A time budget past what an `Instant` can hold (`run --shrink-time` was
/// `u64::MAX` seconds) is no limit, not an overflow: the shrink ends when
/// a round gains nothing.
#[test]
fn a_time_budget_past_the_clock_is_no_limit() {
    let d = deviate::lookup("settle-timedout-early").unwrap();
    let mut steps = (d.witness)();
    // Something to cut: a read of a missing promise first.
    steps.insert(
        0,
        Step {
            now: steps[0].now,
            op: Op::Request(get("z")),
        },
    );
    let mut target = LocalTarget::new(LocalServer::new(Default::default(), vec![d], false));
    let mut checker = Checker::new(Profile::default());
    let opts = ExecOptions { check_state: true };
    let ex = execute(&mut target, &mut checker, &steps, Expect::Model, opts);
    assert!(ex.divergence.is_some());
    let r = shrink(
        &mut target,
        &mut checker,
        ex,
        &ShrinkOptions {
            check_state: true,
            time: Duration::MAX,
            candidates: None,
            headline: false,
        },
        &mut std::io::sink(),
    );
    assert!(!r.timed_out);
    assert_eq!(r.best.lines.len(), steps.len() - 1, "the read is cut");
}

#[test]
fn a_shrink_stops_at_its_candidate_budget() {
    let d = deviate::lookup("retry-late").unwrap();
    let mut target = LocalTarget::new(LocalServer::new(Default::default(), vec![d], false));
    let mut checker = Checker::new(Profile::default());
    let steps = vec![
        at(T0, task_create("a", "p1", 10, LATER)),
        tick(T0 + 10),
        tick(T0 + 5010),
    ];
    let opts = ExecOptions { check_state: true };
    let ex = execute(&mut target, &mut checker, &steps, Expect::Model, opts);
    let r = shrink(
        &mut target,
        &mut checker,
        ex,
        &ShrinkOptions {
            check_state: true,
            time: Duration::MAX,
            candidates: Some(2),
            headline: false,
        },
        &mut std::io::sink(),
    );
    assert_eq!(r.tried, 2);
    assert!(r.timed_out, "the budget ran out");
}

/// A tick past a deadline is snapped back onto it (`passes::snap_ticks`):
/// halving the gap alone stops wherever a half first misses the deadline
/// (23 → 12 here; 6 would miss it), where the deadline itself is the tick a
/// reader wants to see.
#[test]
fn a_tick_past_a_deadline_is_snapped_onto_it() {
    let lease = 10;
    let steps = vec![at(T0, task_create("a", "p1", lease, LATER)), tick(T0 + 23)];
    let s = shrunk("lease-timeout-keeps-pid", &steps);
    assert_eq!(kinds(&s), ["task.create", "tick"], "{s:?}");
    assert_eq!(
        s[1].now - s[0].now,
        lease,
        "the tick on the lease's deadline: {s:?}"
    );
}

/// A claimed creation whose claim the failure does not need becomes its
/// promise's plain creation (`simplifications`: a `task.create` made a
/// `promise.create`), which opens the release's deletion: the pending task
/// a release left is the one a plain creation leaves.
#[test]
fn a_claim_the_failure_does_not_need_is_undone() {
    let steps = vec![
        at(T0, task_create("a", "p1", 60_000, LATER)),
        at(T0, release("a", 1)),
        tick(T0 + 5000),
    ];
    let s = shrunk("retry-not-rearmed", &steps);
    assert_eq!(kinds(&s), ["promise.create", "tick"], "{s:?}");
}

/// An awaiter registered on a fresh task's promise while it stays
/// suspended on another (what the generator's list walks build): the
/// fresh one's creation moved before the suspend (`objects::hoist`) and
/// the suspend pointed at it (`objects::point`) make the other promise
/// and the callback deletable, down to the witness's length and one.
#[test]
fn a_suspend_is_pointed_at_the_promise_whose_fulfill_resumes_it() {
    let steps = vec![
        at(T0, task_create("a.1", "p1", 60_000, LATER)),
        at(T0, create("a.2", LATER, none())),
        at(T0, suspend("a.1", 1, &["a.2"])),
        at(T0, task_create("a.3", "p2", 60_000, LATER)),
        at(T0, callback("a.3", "a.1")),
        at(T0, fulfill("a.3", 1, PromiseState::Resolved)),
    ];
    let s = shrunk("resume-bumps-version", &steps);
    assert!(s.len() <= 5, "{:?}", kinds(&s));
    assert!(!kinds(&s).contains(&"promise.register_callback"), "{s:?}");
}

/// Two promises of one origin in the role one plays in the witness: `a`
/// awaited by the suspend, `a.2` a timer the same awaiters are moved onto
/// (what the generator's timeout walk builds). The timer made first and
/// the suspend pointed at it make the moved callback a duplicate the
/// deletions remove, down to the witness's length and one.
#[test]
fn a_suspend_is_pointed_at_the_timer_its_awaiters_were_moved_onto() {
    let steps = vec![
        at(T0, create("a", LATER, target())),
        at(T0, create("a.1", LATER, target())),
        at(T0, task_create("a.1", "p1", 60_000, LATER)),
        at(T0, suspend("a.1", 1, &["a"])),
        at(T0, create("a.2", T0 + 1, timer())),
        at(T0, callback("a.2", "a.1")),
        at(T0, callback("a.2", "a")),
        tick(T0 + 1),
    ];
    let s = shrunk("timeout-resumes-none-on-mix", &steps);
    assert!(s.len() <= 7, "{:?}", kinds(&s));
}

/// A task's promise made by another task's fence: the fenced create made
/// a plain one (a value simplification) lets the fencing task go: the
/// witness's two steps and one (the departure as first seen names the
/// `execute` the plain creation sends, which a claimed creation does not,
/// so the claim stays apart).
#[test]
fn a_fenced_create_is_made_a_plain_one() {
    let fenced = Request::TaskFence(model::api::TaskFenceReq {
        id: "a.1".into(),
        version: 1,
        action: model::api::TaskFenceAction::Create(model::api::PromiseCreateReq {
            id: "a.2".into(),
            timeout_at: T0 + 10,
            param: Default::default(),
            tags: target(),
        }),
    });
    let steps = vec![
        at(T0, task_create("a.1", "p1", 60_000, LATER)),
        at(T0, fenced),
        at(T0 + 5, acquire("a.2", 0, "p2", 10_000)),
        at(T0 + 10, release("a.2", 1)),
    ];
    let s = shrunk("release-at-deadline", &steps);
    assert_eq!(
        kinds(&s),
        ["promise.create", "task.acquire", "task.release"],
        "{s:?}"
    );
}
