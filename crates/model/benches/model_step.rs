//! Model steps per second for a mixed request stream at 1 000 and at
//! 100 000 live objects, and their ratio. A step's cost must not grow with
//! the state's size: the ratio (large / small) should stay near 1.
//!
//! The background objects are created through the API and kept out of the
//! stream's way (deadlines, delays and leases far in the future), so every
//! tick finds only the stream's own timers due. The stream runs workflows
//! on fresh ids: create (dispatched) → get → acquire → heartbeat → create a
//! child → suspend on it → settle it (resume) → re-acquire → fulfill →
//! task.get → tick. Requests are built before the clock starts.
//!
//! Run: `cargo bench -p resonate-model --bench model_step`.

use std::hint::black_box;
use std::time::{Duration, Instant};

use model::api::*;
use model::machine::Machine;
use model::state::{DELAY, TARGET};
use model::types::{PromiseState, Tags, TaskState, Time, Value};

const T0: Time = 1_000_000_000;
const FAR: Time = 1_000_000_000_000;
const WORKFLOWS: usize = 3000;
const ROUNDS: usize = 7;

fn tags(kv: &[(&str, &str)]) -> Tags {
    kv.iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn create(id: &str, timeout_at: Time, tags: Tags) -> PromiseCreateReq {
    PromiseCreateReq {
        id: id.to_string(),
        timeout_at,
        param: Value::default(),
        tags,
    }
}

fn settle(id: &str) -> PromiseSettleReq {
    PromiseSettleReq {
        id: id.to_string(),
        state: PromiseState::Resolved,
        value: Value::default(),
    }
}

/// `n` background objects: plain promises, delayed (pending) tasks,
/// acquired tasks, and suspended tasks each awaiting a plain promise.
fn populate(n: usize) -> Machine {
    let mut m = Machine::default();
    let target = tags(&[(TARGET, "http://w")]);
    let delayed = tags(&[(TARGET, "http://w"), (DELAY, &FAR.to_string())]);
    for i in 0..n {
        let id = format!("bg{i}");
        let req = match i % 4 {
            0 => Request::PromiseCreate(create(&id, FAR, Tags::new())),
            1 => Request::PromiseCreate(create(&id, FAR, delayed.clone())),
            _ => Request::TaskCreate(TaskCreateReq {
                pid: "bg".to_string(),
                ttl: FAR,
                action: create(&id, FAR, target.clone()),
            }),
        };
        assert_eq!(m.apply(&req, T0).status(), 200);
        if i % 4 == 3 {
            let suspend = Request::TaskSuspend(TaskSuspendReq {
                id: id.clone(),
                version: 1,
                actions: vec![PromiseRegisterCallbackReq {
                    awaited: format!("bg{}", i - 3),
                    awaiter: id,
                }],
            });
            assert_eq!(m.apply(&suspend, T0).status(), 200);
        }
    }
    m.clear_hits();
    m
}

/// One step of the stream: a request, or a tick.
enum Step {
    Apply(Request),
    Tick,
}

/// The mixed stream: `WORKFLOWS` workflows of 11 steps each.
fn stream() -> Vec<Step> {
    let target = tags(&[(TARGET, "http://w")]);
    let mut steps = Vec::with_capacity(WORKFLOWS * 11);
    for k in 0..WORKFLOWS {
        let id = format!("w{k}");
        let child = format!("w{k}.c");
        steps.extend([
            Step::Apply(Request::PromiseCreate(create(&id, FAR, target.clone()))),
            Step::Apply(Request::PromiseGet(PromiseGetReq { id: id.clone() })),
            Step::Apply(Request::TaskAcquire(TaskAcquireReq {
                id: id.clone(),
                version: 0,
                pid: "p1".to_string(),
                ttl: 60_000,
            })),
            Step::Apply(Request::TaskHeartbeat(TaskHeartbeatReq {
                pid: "p1".to_string(),
                tasks: vec![TaskRef {
                    id: id.clone(),
                    version: 1,
                }],
            })),
            Step::Apply(Request::PromiseCreate(create(&child, FAR, Tags::new()))),
            Step::Apply(Request::TaskSuspend(TaskSuspendReq {
                id: id.clone(),
                version: 1,
                actions: vec![PromiseRegisterCallbackReq {
                    awaited: child.clone(),
                    awaiter: id.clone(),
                }],
            })),
            Step::Apply(Request::PromiseSettle(settle(&child))),
            Step::Apply(Request::TaskAcquire(TaskAcquireReq {
                id: id.clone(),
                version: 1,
                pid: "p1".to_string(),
                ttl: 60_000,
            })),
            Step::Apply(Request::TaskFulfill(TaskFulfillReq {
                id: id.clone(),
                version: 2,
                action: settle(&id),
            })),
            Step::Apply(Request::TaskGet(TaskGetReq { id })),
            Step::Tick,
        ]);
    }
    steps
}

/// What each of a workflow's 11 steps does, for the breakdown.
const KINDS: [&str; 11] = [
    "promise.create (target)",
    "promise.get",
    "task.acquire",
    "task.heartbeat",
    "promise.create (child)",
    "task.suspend",
    "promise.settle (+resume)",
    "task.acquire (again)",
    "task.fulfill",
    "task.get",
    "tick",
];

/// Apply one step at `now`; every request must answer 200.
fn apply(m: &mut Machine, s: &Step, now: Time) {
    match s {
        Step::Apply(req) => {
            let res = m.apply(req, now);
            assert_eq!(res.status(), 200, "{req:?}");
            black_box(res);
        }
        Step::Tick => {
            black_box(m.tick(now));
        }
    }
    m.clear_hits();
}

/// Run the stream on `m`, one ms per step.
fn run(m: &mut Machine, steps: &[Step]) -> Duration {
    let start = Instant::now();
    for (i, s) in steps.iter().enumerate() {
        apply(m, s, T0 + 1 + i as Time);
    }
    start.elapsed()
}

/// Run the stream on `m`, timing each step and summing by kind (the clock
/// reads add a few tens of ns to each).
fn run_by_kind(m: &mut Machine, steps: &[Step]) -> [Duration; 11] {
    let mut by_kind = [Duration::ZERO; 11];
    for (i, s) in steps.iter().enumerate() {
        let start = Instant::now();
        apply(m, s, T0 + 1 + i as Time);
        by_kind[i % 11] += start.elapsed();
    }
    by_kind
}

/// The last workflow ended fulfilled: the stream did what it says.
fn check_end(m: &Machine) {
    let last = m.state.get_task(&format!("w{}", WORKFLOWS - 1));
    assert_eq!(last.map(|t| t.state), Some(TaskState::Fulfilled));
}

fn main() {
    let steps = stream();
    let sizes = [1_000, 100_000];
    let bases: Vec<Machine> = sizes.iter().map(|&n| populate(n)).collect();
    println!(
        "model_step: {} steps per run ({WORKFLOWS} workflows × 11), best of {ROUNDS} rounds, sizes interleaved",
        steps.len()
    );
    let mut best = [Duration::MAX; 2];
    let mut by_kind = [[Duration::MAX; 11]; 2];
    // Interleaved, so a drift in machine load hits both sizes alike.
    for _ in 0..ROUNDS {
        for (j, base) in bases.iter().enumerate() {
            let mut m = base.clone();
            best[j] = best[j].min(run(&mut m, &steps));
            check_end(&m);
            let mut m = base.clone();
            for (b, d) in by_kind[j].iter_mut().zip(run_by_kind(&mut m, &steps)) {
                *b = (*b).min(d);
            }
        }
    }
    let rate = |d: Duration| steps.len() as f64 / d.as_secs_f64();
    for (j, n) in sizes.iter().enumerate() {
        println!(
            "model_step: {n:>7} live objects: {:>10.0} steps/s  ({} promises before, {} after)",
            rate(best[j]),
            bases[j].state.promise_count(),
            bases[j].state.promise_count() + 2 * WORKFLOWS
        );
    }
    println!(
        "model_step: ratio 100k / 1k = {:.2} (near 1: a step's cost does not grow with the state)",
        rate(best[1]) / rate(best[0])
    );
    println!("model_step: ns per step by kind    1k      100k");
    for (k, kind) in KINDS.iter().enumerate() {
        let ns = |j: usize| by_kind[j][k].as_nanos() as f64 / WORKFLOWS as f64;
        println!(
            "model_step:   {kind:<26}{:>6.0}  {:>8.0}  ×{:.2}",
            ns(0),
            ns(1),
            ns(1) / ns(0)
        );
    }
}
