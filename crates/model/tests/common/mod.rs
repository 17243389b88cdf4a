//! Builders shared by the branch tests: requests, records and responses
//! written out in full, a [`setup`] that reaches a state through the API
//! (so the fixtures are states the protocol can build), and [`Want`], the
//! expected state view written as edits of the view before the step: what a
//! test does not edit must come out unchanged.
#![allow(dead_code)]

use model::api::*;
use model::machine::Machine;
use model::state::{Message, OutboxEntry, PromiseObject, TaskObject, DELAY, TARGET, TIMER};
use model::types::{
    PromiseRecord, PromiseState, Schedule, Tags, TaskRecord, TaskState, Time, Value,
};
use model::view::{
    message_json, CallbackView, IdTimeout, ListenerView, MessageView, ResumeView, StateView,
    TaskTimeoutView,
};

/// The target address every dispatched task uses.
pub const W: &str = "http://w";
/// A listener address.
pub const L: &str = "http://l";
/// The default `retryTimeout`.
pub const RETRY_MS: u64 = 5000;
/// Task timeout kinds, as the view spells them.
pub const RETRY: u8 = 0;
/// Lease expiry.
pub const LEASE: u8 = 1;
/// Every minute: occurrences at whole minutes, in ms.
pub const EVERY_MINUTE: &str = "* * * * *";

// ----- tags and values -----

/// Tags from pairs.
pub fn tags(kv: &[(&str, &str)]) -> Tags {
    kv.iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// No tags: a plain (internal) promise.
pub fn plain() -> Tags {
    Tags::new()
}

/// `resonate:target = W`: a promise with a task.
pub fn target() -> Tags {
    tags(&[(TARGET, W)])
}

/// `resonate:timer = "true"`: resolves at its deadline.
pub fn timer() -> Tags {
    tags(&[(TIMER, "true")])
}

/// A target with `resonate:delay`.
pub fn delayed(delay: &str) -> Tags {
    tags(&[(TARGET, W), (DELAY, delay)])
}

/// A value carrying only data.
pub fn value(data: &str) -> Value {
    Value {
        headers: Tags::new(),
        data: Some(data.to_string()),
    }
}

// ----- requests -----

/// A `promise.create` body (empty param).
pub fn create_req(id: &str, timeout_at: Time, tags: Tags) -> PromiseCreateReq {
    PromiseCreateReq {
        id: id.to_string(),
        timeout_at,
        param: Value::default(),
        tags,
    }
}

/// `promise.create`.
pub fn promise_create(id: &str, timeout_at: Time, tags: Tags) -> Request {
    Request::PromiseCreate(create_req(id, timeout_at, tags))
}

/// `promise.get`.
pub fn promise_get(id: &str) -> Request {
    Request::PromiseGet(PromiseGetReq { id: id.to_string() })
}

/// A `promise.settle` body with value data `"v"`.
pub fn settle_req(id: &str, state: PromiseState) -> PromiseSettleReq {
    PromiseSettleReq {
        id: id.to_string(),
        state,
        value: value("v"),
    }
}

/// `promise.settle` with value data `"v"`.
pub fn promise_settle(id: &str, state: PromiseState) -> Request {
    Request::PromiseSettle(settle_req(id, state))
}

/// `promise.register_callback`.
pub fn register_callback(awaited: &str, awaiter: &str) -> Request {
    Request::PromiseRegisterCallback(PromiseRegisterCallbackReq {
        awaited: awaited.to_string(),
        awaiter: awaiter.to_string(),
    })
}

/// `promise.register_listener`.
pub fn register_listener(awaited: &str, address: &str) -> Request {
    Request::PromiseRegisterListener(PromiseRegisterListenerReq {
        awaited: awaited.to_string(),
        address: address.to_string(),
    })
}

/// `task.get`.
pub fn task_get(id: &str) -> Request {
    Request::TaskGet(TaskGetReq { id: id.to_string() })
}

/// `task.create` of promise `id`.
pub fn task_create(pid: &str, ttl: u64, id: &str, timeout_at: Time, tags: Tags) -> Request {
    Request::TaskCreate(TaskCreateReq {
        pid: pid.to_string(),
        ttl,
        action: create_req(id, timeout_at, tags),
    })
}

/// `task.acquire`.
pub fn task_acquire(id: &str, version: u64, pid: &str, ttl: u64) -> Request {
    Request::TaskAcquire(TaskAcquireReq {
        id: id.to_string(),
        version,
        pid: pid.to_string(),
        ttl,
    })
}

/// `task.fence` around a `promise.create`.
pub fn fence_create(id: &str, version: u64, req: PromiseCreateReq) -> Request {
    Request::TaskFence(TaskFenceReq {
        id: id.to_string(),
        version,
        action: TaskFenceAction::Create(req),
    })
}

/// `task.fence` around a `promise.settle`.
pub fn fence_settle(id: &str, version: u64, req: PromiseSettleReq) -> Request {
    Request::TaskFence(TaskFenceReq {
        id: id.to_string(),
        version,
        action: TaskFenceAction::Settle(req),
    })
}

/// `task.heartbeat` of `(id, version)` refs.
pub fn heartbeat(pid: &str, refs: &[(&str, u64)]) -> Request {
    Request::TaskHeartbeat(TaskHeartbeatReq {
        pid: pid.to_string(),
        tasks: refs
            .iter()
            .map(|(id, version)| TaskRef {
                id: id.to_string(),
                version: *version,
            })
            .collect(),
    })
}

/// `task.suspend` of task `id` on `awaited` (the actions' awaiter is `id`).
pub fn suspend(id: &str, version: u64, awaited: &[&str]) -> Request {
    Request::TaskSuspend(TaskSuspendReq {
        id: id.to_string(),
        version,
        actions: awaited
            .iter()
            .map(|a| PromiseRegisterCallbackReq {
                awaited: a.to_string(),
                awaiter: id.to_string(),
            })
            .collect(),
    })
}

/// `task.fulfill` settling to `state` with value data `"v"`.
pub fn fulfill(id: &str, version: u64, state: PromiseState) -> Request {
    Request::TaskFulfill(TaskFulfillReq {
        id: id.to_string(),
        version,
        action: settle_req(id, state),
    })
}

/// `task.release`.
pub fn release(id: &str, version: u64) -> Request {
    Request::TaskRelease(TaskReleaseReq {
        id: id.to_string(),
        version,
    })
}

/// `task.halt`.
pub fn halt(id: &str) -> Request {
    Request::TaskHalt(TaskHaltReq { id: id.to_string() })
}

/// `task.continue`.
pub fn task_continue(id: &str) -> Request {
    Request::TaskContinue(TaskContinueReq { id: id.to_string() })
}

/// `schedule.create` with an empty param.
pub fn schedule_create(
    id: &str,
    cron: &str,
    promise_id: &str,
    promise_timeout: u64,
    tags: Tags,
) -> Request {
    Request::ScheduleCreate(ScheduleCreateReq {
        id: id.to_string(),
        cron: cron.to_string(),
        promise_id: promise_id.to_string(),
        promise_timeout,
        promise_param: Value::default(),
        promise_tags: tags,
    })
}

/// `schedule.get`.
pub fn schedule_get(id: &str) -> Request {
    Request::ScheduleGet(ScheduleGetReq { id: id.to_string() })
}

/// `schedule.delete`.
pub fn schedule_delete(id: &str) -> Request {
    Request::ScheduleDelete(ScheduleDeleteReq { id: id.to_string() })
}

// ----- records -----

/// A pending promise record with an empty param and value.
pub fn pending(id: &str, timeout_at: Time, created_at: Time, tags: Tags) -> PromiseRecord {
    PromiseRecord {
        id: id.to_string(),
        state: PromiseState::Pending,
        param: Value::default(),
        value: Value::default(),
        tags,
        timeout_at,
        created_at,
        settled_at: None,
    }
}

/// `p` settled by a caller at `at` with value data `"v"`.
pub fn settled(p: &PromiseRecord, state: PromiseState, at: Time) -> PromiseRecord {
    PromiseRecord {
        state,
        value: value("v"),
        settled_at: Some(at),
        ..p.clone()
    }
}

/// A task record without a lease.
pub fn task(id: &str, state: TaskState, version: u64, resumes: u64) -> TaskRecord {
    TaskRecord {
        id: id.to_string(),
        state,
        version,
        resumes,
        ttl: None,
        pid: None,
    }
}

/// An acquired task record held by `pid` for `ttl`.
pub fn held(id: &str, version: u64, pid: &str, ttl: u64, resumes: u64) -> TaskRecord {
    TaskRecord {
        id: id.to_string(),
        state: TaskState::Acquired,
        version,
        resumes,
        ttl: Some(ttl),
        pid: Some(pid.to_string()),
    }
}

/// A schedule every minute with template `promise_id` and an empty param.
pub fn every_minute(
    id: &str,
    promise_id: &str,
    promise_timeout: u64,
    tags: Tags,
    created_at: Time,
    next_run_at: Time,
    last_run_at: Option<Time>,
) -> Schedule {
    Schedule {
        id: id.to_string(),
        cron: EVERY_MINUTE.to_string(),
        promise_id: promise_id.to_string(),
        promise_timeout,
        promise_param: Value::default(),
        promise_tags: tags,
        next_run_at,
        last_run_at,
        created_at,
    }
}

// ----- hand-built objects (for branches only hand-built states reach) -----

/// A pending promise object without registrations.
pub fn promise_object(id: &str, timeout_at: Time, created_at: Time, tags: Tags) -> PromiseObject {
    PromiseObject {
        id: id.to_string(),
        state: PromiseState::Pending,
        param: Value::default(),
        value: Value::default(),
        tags,
        timeout_at,
        created_at,
        settled_at: None,
        callbacks: Vec::new(),
        listeners: Vec::new(),
    }
}

/// A task object held by `pid` for `ttl`.
pub fn held_object(id: &str, version: u64, pid: &str, ttl: u64) -> TaskObject {
    TaskObject {
        ttl: Some(ttl),
        pid: Some(pid.to_string()),
        ..TaskObject::new(id, TaskState::Acquired, version)
    }
}

// ----- responses -----

/// A promise response.
pub fn promise_res(status: u16, promise: Option<PromiseRecord>) -> Response {
    Response::Promise(PromiseRes { status, promise })
}

/// A 200 promise response.
pub fn ok(promise: PromiseRecord) -> Response {
    promise_res(200, Some(promise))
}

/// A `task.get` response.
pub fn task_res(status: u16, task: Option<TaskRecord>) -> Response {
    Response::TaskGet(TaskGetRes { status, task })
}

/// A 200 `task.create` / `task.acquire` response.
pub fn claimed(task: TaskRecord, promise: PromiseRecord) -> Response {
    Response::TaskClaim(TaskClaimRes {
        status: 200,
        task: Some(task),
        promise: Some(promise),
        preload: Vec::new(),
    })
}

/// A failed `task.create` / `task.acquire` response.
pub fn claim_failed(status: u16) -> Response {
    Response::TaskClaim(TaskClaimRes {
        status,
        task: None,
        promise: None,
        preload: Vec::new(),
    })
}

/// A 200 `task.fence` response carrying the inner one.
pub fn fenced(action: TaskFenceInnerRes) -> Response {
    Response::TaskFence(TaskFenceRes {
        status: 200,
        action: Some(action),
        preload: Vec::new(),
    })
}

/// A failed `task.fence` response.
pub fn fence_failed(status: u16) -> Response {
    Response::TaskFence(TaskFenceRes {
        status,
        action: None,
        preload: Vec::new(),
    })
}

/// A `task.suspend` response.
pub fn suspend_res(status: u16) -> Response {
    Response::TaskSuspend(TaskSuspendRes {
        status,
        preload: Vec::new(),
    })
}

/// A `task.fulfill` response.
pub fn fulfill_res(status: u16, promise: Option<PromiseRecord>) -> Response {
    Response::TaskFulfill(TaskFulfillRes { status, promise })
}

/// A schedule response.
pub fn schedule_res(status: u16, schedule: Option<Schedule>) -> Response {
    Response::Schedule(ScheduleRes { status, schedule })
}

// ----- setup -----

/// A machine driven through `steps` (each `(now, request)` must answer 200),
/// with the branches taken on the way forgotten.
pub fn setup(steps: &[(Time, Request)]) -> Machine {
    let mut m = Machine::default();
    run(&mut m, steps);
    m
}

/// Apply further `steps` to `m`, each required to answer 200, and forget
/// the branches taken.
pub fn run(m: &mut Machine, steps: &[(Time, Request)]) {
    for (now, req) in steps {
        let res = m.apply(req, *now);
        assert_eq!(
            res.status(),
            200,
            "setup step {req:?} at {now} answered {res:?}"
        );
    }
    m.clear_hits();
}

// ----- expected state -----

/// An expected [`StateView`], built by editing the view of a machine; every
/// edit replaces what it names, and [`Want::check`] sorts as the view does.
#[derive(Clone, Debug)]
pub struct Want(pub StateView);

impl Want {
    /// The current view of `m`, to edit into the expected one.
    pub fn of(m: &Machine) -> Want {
        Want(StateView::of(&m.state))
    }

    /// The empty state.
    pub fn empty() -> Want {
        Want(StateView::default())
    }

    /// Upsert a promise record.
    pub fn promise(mut self, p: PromiseRecord) -> Want {
        self.0.promises.retain(|q| q.id != p.id);
        self.0.promises.push(p);
        self
    }

    /// Arm (or re-arm) a promise timeout.
    pub fn promise_timeout(mut self, id: &str, timeout: Time) -> Want {
        self.0.promise_timeouts.retain(|t| t.id != id);
        self.0.promise_timeouts.push(IdTimeout {
            id: id.to_string(),
            timeout,
        });
        self
    }

    /// Disarm a promise timeout.
    pub fn no_promise_timeout(mut self, id: &str) -> Want {
        self.0.promise_timeouts.retain(|t| t.id != id);
        self
    }

    /// Set the callbacks (awaiter ids) of promise `awaited`.
    pub fn callbacks(mut self, awaited: &str, awaiters: &[&str]) -> Want {
        self.0.callbacks.retain(|c| c.awaited != awaited);
        self.0
            .callbacks
            .extend(awaiters.iter().map(|a| CallbackView {
                awaiter: a.to_string(),
                awaited: awaited.to_string(),
            }));
        self
    }

    /// Set the listeners of promise `id`.
    pub fn listeners(mut self, id: &str, addresses: &[&str]) -> Want {
        self.0.listeners.retain(|l| l.id != id);
        self.0
            .listeners
            .extend(addresses.iter().map(|a| ListenerView {
                id: id.to_string(),
                address: a.to_string(),
            }));
        self
    }

    /// Upsert a task record.
    pub fn task(mut self, t: TaskRecord) -> Want {
        self.0.tasks.retain(|u| u.id != t.id);
        self.0.tasks.push(t);
        self
    }

    /// Set the buffered resumes of task `id`.
    pub fn resumes(mut self, id: &str, awaited: &[&str]) -> Want {
        self.0.resumes.retain(|r| r.id != id);
        self.0.resumes.extend(awaited.iter().map(|a| ResumeView {
            id: id.to_string(),
            awaited: a.to_string(),
        }));
        self
    }

    /// Arm (or re-arm) the task timeout of one kind.
    pub fn task_timeout(mut self, id: &str, kind: u8, timeout: Time) -> Want {
        self.0
            .task_timeouts
            .retain(|t| !(t.id == id && t.kind == kind));
        self.0.task_timeouts.push(TaskTimeoutView {
            id: id.to_string(),
            kind,
            timeout,
        });
        self
    }

    /// Disarm every task timeout of `id`.
    pub fn no_task_timeouts(mut self, id: &str) -> Want {
        self.0.task_timeouts.retain(|t| t.id != id);
        self
    }

    /// Put an `execute` in the outbox (replacing the entry of its key).
    pub fn execute(self, address: &str, task_id: &str, version: u64) -> Want {
        self.message(
            address,
            Message::Execute {
                task_id: task_id.to_string(),
                version,
            },
        )
    }

    /// Put an `unblock` in the outbox (replacing the entry of its key).
    pub fn unblock(self, address: &str, promise: PromiseRecord) -> Want {
        self.message(address, Message::Unblock { promise })
    }

    fn message(mut self, address: &str, message: Message) -> Want {
        let entry = OutboxEntry {
            address: address.to_string(),
            message,
        };
        let key = entry.key();
        self.0.messages.retain(|m| message_key(m) != key);
        self.0.messages.push(MessageView {
            address: address.to_string(),
            message: message_json(&entry),
        });
        self
    }

    /// Upsert a schedule.
    pub fn schedule(mut self, s: Schedule) -> Want {
        self.0.schedules.retain(|t| t.id != s.id);
        self.0.schedules.push(s);
        self
    }

    /// Remove a schedule.
    pub fn no_schedule(mut self, id: &str) -> Want {
        self.0.schedules.retain(|t| t.id != id);
        self
    }

    /// Arm (or re-arm) a schedule timeout.
    pub fn schedule_timeout(mut self, id: &str, timeout: Time) -> Want {
        self.0.schedule_timeouts.retain(|t| t.id != id);
        self.0.schedule_timeouts.push(IdTimeout {
            id: id.to_string(),
            timeout,
        });
        self
    }

    /// Disarm a schedule timeout.
    pub fn no_schedule_timeout(mut self, id: &str) -> Want {
        self.0.schedule_timeouts.retain(|t| t.id != id);
        self
    }

    /// The expected view, sorted as [`StateView::of`] sorts.
    pub fn view(mut self) -> StateView {
        let v = &mut self.0;
        v.promises.sort_by(|a, b| a.id.cmp(&b.id));
        v.promise_timeouts.sort();
        v.callbacks.sort();
        v.listeners.sort();
        v.tasks.sort_by(|a, b| a.id.cmp(&b.id));
        v.task_timeouts.sort();
        v.messages.sort_by_key(message_key);
        v.schedules.sort_by(|a, b| a.id.cmp(&b.id));
        v.schedule_timeouts.sort();
        v.resumes.sort();
        self.0
    }

    /// Assert that `m`'s state has exactly this view.
    #[track_caller]
    pub fn check(self, m: &Machine) {
        assert_eq!(StateView::of(&m.state), self.view());
    }
}

/// The outbox key of a message view (`OutboxEntry.key`).
fn message_key(m: &MessageView) -> String {
    let data = &m.message["data"];
    match m.message["kind"].as_str() {
        Some("execute") => data["task"]["id"].as_str().unwrap_or_default().to_string(),
        _ => format!(
            "{}:notify:{}",
            data["promise"]["id"].as_str().unwrap_or_default(),
            m.address
        ),
    }
}

/// Apply `req` at `now` and check a step that must write nothing: the
/// response, the exact branches taken, and the state unchanged.
#[track_caller]
pub fn assert_writes_nothing(
    m: &mut Machine,
    req: &Request,
    now: Time,
    res: Response,
    hits: &[model::branch::Branch],
) {
    let before = m.state.clone();
    assert_eq!(m.apply(req, now), res);
    assert_eq!(m.take_hits(), hits);
    assert_eq!(m.state, before);
}
