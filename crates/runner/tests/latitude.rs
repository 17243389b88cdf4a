//! The latitude rule on hand-built targets: a second model plays the target
//! (a [`Target`] driven by the runner's one loop) and fires internal
//! transitions the spec allows (another firing order, a
//! materialised read, a lease expired early-but-due); the checker must
//! accept each, and must still reject what the spec forbids.

use gen::{Op, Step};
use model::api::*;
use model::machine::{Machine, Timer};
use model::view::StateView;
use runner::check::Checker;
use runner::exec::{execute, ExecOptions, Expect};
use runner::profile::Profile;
use runner::snapshot::Snap;
use runner::target::{Target, TargetError};

fn target_tags() -> model::types::Tags {
    [("resonate:target".to_string(), "http://w".to_string())].into()
}

fn timer_tags() -> model::types::Tags {
    [("resonate:timer".to_string(), "true".to_string())].into()
}

fn create(id: &str, timeout_at: u64, tags: model::types::Tags) -> Request {
    Request::PromiseCreate(PromiseCreateReq {
        id: id.into(),
        timeout_at,
        param: Default::default(),
        tags,
    })
}

fn task_create(id: &str, ttl: u64, timeout_at: u64) -> Request {
    Request::TaskCreate(TaskCreateReq {
        pid: "p".into(),
        ttl,
        action: PromiseCreateReq {
            id: id.into(),
            timeout_at,
            param: Default::default(),
            tags: target_tags(),
        },
    })
}

/// A second model playing the target: before the step at index `at` it
/// fires `fired` (in that order) and, for a tick, fires only that (the
/// whole tick, in its own order); after that step's request it fires
/// `after` (before answering the snapshot). Driven through the runner's
/// one loop.
struct Scripted {
    m: Machine,
    step: usize,
    at: usize,
    fired: Vec<Timer>,
    after: Vec<Timer>,
}

impl Target for Scripted {
    fn describe(&self) -> String {
        "scripted".into()
    }

    fn start(&mut self) -> Result<(), TargetError> {
        self.m = Machine::default();
        self.step = 0;
        Ok(())
    }

    fn reset(&mut self) -> Result<(), TargetError> {
        self.start()
    }

    fn send(&mut self, s: &Step) -> Result<Option<serde_json::Value>, TargetError> {
        let special = self.step == self.at;
        self.step += 1;
        Ok(match &s.op {
            Op::Tick if special => {
                self.fired.iter().for_each(|t| self.m.fire(t, s.now));
                None
            }
            Op::Tick => {
                self.m.tick(s.now);
                None
            }
            Op::Request(r) => {
                if special {
                    self.fired.iter().for_each(|t| self.m.fire(t, s.now));
                }
                let res = self.m.apply(r, s.now);
                if special {
                    self.after.iter().for_each(|t| self.m.fire(t, s.now));
                }
                Some(model::wire::encode_response(r.kind(), &res, "t"))
            }
        })
    }

    fn snap(&mut self) -> Result<Snap, TargetError> {
        Ok(Snap::from_view(StateView::of(&self.m.state)))
    }
}

/// Run `steps` against a [`Scripted`] target: `Ok(latitude)` or the class
/// of the divergence.
fn run(steps: &[Step], at: usize, fired: &[Timer]) -> Result<u64, String> {
    run_around(steps, at, fired, &[])
}

/// As [`run`], the target also firing `after` once the request at `at`
/// has been answered.
fn run_around(steps: &[Step], at: usize, fired: &[Timer], after: &[Timer]) -> Result<u64, String> {
    let mut target = Scripted {
        m: Machine::default(),
        step: 0,
        at,
        fired: fired.to_vec(),
        after: after.to_vec(),
    };
    let mut checker = Checker::new(Profile::default());
    let ex = execute(
        &mut target,
        &mut checker,
        steps,
        Expect::Model,
        ExecOptions { check_state: true },
    );
    match ex.divergence {
        Some((i, d)) => Err(format!("step {i}: {}", d.class)),
        None => Ok(ex.latitude),
    }
}

fn at(now: u64, r: Request) -> Step {
    Step {
        now,
        op: Op::Request(r),
    }
}

#[test]
fn a_tick_may_fire_an_awaiter_before_what_it_awaits_even_with_many_due() {
    let mut steps = vec![
        at(0, task_create("t", 60_000, 10_000)),
        at(0, create("t.a", 5_000, timer_tags())),
        at(
            0,
            Request::TaskSuspend(TaskSuspendReq {
                id: "t".into(),
                version: 1,
                actions: vec![PromiseRegisterCallbackReq {
                    awaited: "t.a".into(),
                    awaiter: "t".into(),
                }],
            }),
        ),
    ];
    for i in 0..3 {
        steps.push(at(0, create(&format!("x{i}"), 1_000, timer_tags())));
    }
    steps.push(Step {
        now: 20_000,
        op: Op::Tick,
    });
    let batch: Vec<Timer> = ["t", "t.a", "x0", "x1", "x2"]
        .iter()
        .map(|i| Timer::Promise(i.to_string()))
        .collect();
    assert_eq!(run(&steps, 6, &batch), Ok(1));
}

#[test]
fn a_lease_that_expired_before_a_heartbeat_is_latitude_with_many_timers_due() {
    let mut steps = vec![at(0, task_create("t", 1_000, 100_000))];
    for i in 0..5 {
        steps.push(at(0, create(&format!("y{i}"), 1_000, timer_tags())));
    }
    let hb = Request::TaskHeartbeat(TaskHeartbeatReq {
        pid: "p".into(),
        tasks: vec![TaskRef {
            id: "t".into(),
            version: 1,
        }],
    });
    steps.push(at(2_000, hb));
    assert_eq!(run(&steps, 6, &[Timer::TaskLease("t".into())]), Ok(1));
}

#[test]
fn a_suspend_that_materialises_every_awaited_promise_is_latitude() {
    let mut steps = vec![at(0, task_create("t", 60_000, 100_000))];
    for i in 0..3 {
        steps.push(at(0, create(&format!("t.a{i}"), 1_000, timer_tags())));
    }
    for i in 0..5 {
        steps.push(at(0, create(&format!("y{i}"), 1_000, timer_tags())));
    }
    let actions = (0..3)
        .map(|i| PromiseRegisterCallbackReq {
            awaited: format!("t.a{i}"),
            awaiter: "t".into(),
        })
        .collect();
    steps.push(at(
        2_000,
        Request::TaskSuspend(TaskSuspendReq {
            id: "t".into(),
            version: 1,
            actions,
        }),
    ));
    let fired: Vec<Timer> = (0..3).map(|i| Timer::Promise(format!("t.a{i}"))).collect();
    assert_eq!(run(&steps, 9, &fired), Ok(1));
}

/// A task whose lease (1 s) is due at 2 s, beside `others` timer promises
/// due too, then a read of the task at 2 s.
fn lease_due_with(others: usize) -> Vec<Step> {
    let mut steps = vec![at(0, task_create("t", 1_000, 100_000))];
    for i in 0..others {
        steps.push(at(0, create(&format!("y{i}"), 1_000, timer_tags())));
    }
    steps.push(at(2_000, Request::TaskGet(TaskGetReq { id: "t".into() })));
    steps
}

#[test]
fn a_lease_that_expires_after_a_read_is_latitude_with_six_timers_due() {
    // The read answers the task held (the lease not yet fired), and the
    // lease fires before the snapshot: only an after-request schedule
    // explains it, past every before-request candidate of six due timers.
    let steps = lease_due_with(5);
    let lease = [Timer::TaskLease("t".into())];
    assert_eq!(run_around(&steps, 6, &[], &lease), Ok(1));
    // One unrelated timer fired before the read, the lease after it.
    let y0 = [Timer::Promise("y0".into())];
    assert_eq!(run_around(&steps, 6, &y0, &lease), Ok(1));
}

#[test]
fn a_lease_that_expires_after_a_read_is_latitude_with_seven_timers_due() {
    let steps = lease_due_with(6);
    let lease = [Timer::TaskLease("t".into())];
    assert_eq!(run_around(&steps, 7, &[], &lease), Ok(1));
    let y3 = [Timer::Promise("y3".into())];
    assert_eq!(run_around(&steps, 7, &y3, &lease), Ok(1));
}

#[test]
fn a_read_answered_as_if_the_lease_fired_while_the_snapshot_keeps_it_diverges() {
    // Firing the lease after the read explains a snapshot that shows it
    // fired; a target that answers the task released while its snapshot
    // still holds the lease fits no schedule, before or after, though the
    // search tries every one of six due timers.
    let steps = lease_due_with(5);
    let mut lying = LyingRead {
        inner: Scripted {
            m: Machine::default(),
            step: 0,
            at: usize::MAX,
            fired: Vec::new(),
            after: Vec::new(),
        },
    };
    let mut checker = Checker::new(Profile::default());
    let ex = execute(
        &mut lying,
        &mut checker,
        &steps,
        Expect::Model,
        ExecOptions { check_state: true },
    );
    let (i, d) = ex
        .divergence
        .expect("no schedule answers released and keeps the lease");
    assert_eq!(i, 6, "{}", d.class);
}

/// A target that answers a `task.get` as if the lease had fired, without
/// firing it.
struct LyingRead {
    inner: Scripted,
}

impl Target for LyingRead {
    fn describe(&self) -> String {
        "lying".into()
    }
    fn start(&mut self) -> Result<(), TargetError> {
        self.inner.start()
    }
    fn reset(&mut self) -> Result<(), TargetError> {
        self.inner.reset()
    }
    fn send(&mut self, s: &Step) -> Result<Option<serde_json::Value>, TargetError> {
        match &s.op {
            Op::Request(r @ Request::TaskGet(_)) => {
                let mut m = self.inner.m.clone();
                m.fire(&Timer::TaskLease("t".into()), s.now);
                let res = m.apply(r, s.now);
                self.inner.step += 1;
                Ok(Some(model::wire::encode_response(r.kind(), &res, "t")))
            }
            _ => self.inner.send(s),
        }
    }
    fn snap(&mut self) -> Result<Snap, TargetError> {
        self.inner.snap()
    }
}

#[test]
fn firing_a_timeout_before_its_deadline_is_still_a_divergence() {
    let steps = vec![
        at(0, create("p", 1_000, timer_tags())),
        at(999, Request::PromiseGet(PromiseGetReq { id: "p".into() })),
    ];
    assert!(run(&steps, 1, &[Timer::Promise("p".into())]).is_err());
}

#[test]
fn skipping_a_due_timeout_at_a_tick_is_still_a_divergence() {
    let steps = vec![
        at(0, create("p", 1_000, timer_tags())),
        at(0, create("q", 1_000, timer_tags())),
        Step {
            now: 1_000,
            op: Op::Tick,
        },
    ];
    assert!(run(&steps, 2, &[Timer::Promise("p".into())]).is_err());
}
