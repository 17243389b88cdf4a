//! Requests and responses of `spec/01-objects/types.lean`, one struct per Lean
//! structure, gathered into the [`Request`] and [`Response`] enums that the
//! rest of the project passes around.

use crate::types::{
    PromiseRecord, PromiseState, Schedule, Tags, TaskRecord, TaskState, Time, Value,
};

/// `PromiseGetReq`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PromiseGetReq {
    /// Promise id.
    pub id: String,
}

/// `PromiseCreateReq`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PromiseCreateReq {
    /// Promise id.
    pub id: String,
    /// Absolute deadline.
    pub timeout_at: Time,
    /// Parameter.
    pub param: Value,
    /// Tags.
    pub tags: Tags,
}

/// `PromiseSettleReq`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PromiseSettleReq {
    /// Promise id.
    pub id: String,
    /// Target state.
    pub state: PromiseState,
    /// Settlement value.
    pub value: Value,
}

/// `PromiseRegisterCallbackReq`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PromiseRegisterCallbackReq {
    /// The promise waited on.
    pub awaited: String,
    /// The waiting promise (= its task id).
    pub awaiter: String,
}

/// `PromiseRegisterListenerReq`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PromiseRegisterListenerReq {
    /// The promise listened to.
    pub awaited: String,
    /// Delivery address of the `unblock` message.
    pub address: String,
}

/// `PromiseSearchReq` (unspecified: always 501).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PromiseSearchReq {
    /// State filter.
    pub state: Option<PromiseState>,
    /// Tag filter.
    pub tags: Tags,
    /// Page size.
    pub limit: Option<u64>,
    /// Page cursor.
    pub cursor: Option<String>,
}

/// `TaskGetReq`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskGetReq {
    /// Task id.
    pub id: String,
}

/// `TaskCreateReq`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskCreateReq {
    /// Claimant.
    pub pid: String,
    /// Lease length.
    pub ttl: u64,
    /// The promise to create.
    pub action: PromiseCreateReq,
}

/// `TaskAcquireReq`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskAcquireReq {
    /// Task id.
    pub id: String,
    /// Expected current version.
    pub version: u64,
    /// Claimant.
    pub pid: String,
    /// Lease length.
    pub ttl: u64,
}

/// `TaskFenceAction`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TaskFenceAction {
    /// A fenced `promise.create`.
    Create(PromiseCreateReq),
    /// A fenced `promise.settle`.
    Settle(PromiseSettleReq),
}

/// `TaskFenceReq`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskFenceReq {
    /// Task id.
    pub id: String,
    /// Expected current version.
    pub version: u64,
    /// Delegated action.
    pub action: TaskFenceAction,
}

/// `TaskRef`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskRef {
    /// Task id.
    pub id: String,
    /// Expected current version.
    pub version: u64,
}

/// `TaskHeartbeatReq`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskHeartbeatReq {
    /// Claimant.
    pub pid: String,
    /// Leases to refresh.
    pub tasks: Vec<TaskRef>,
}

/// `TaskSuspendReq`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskSuspendReq {
    /// Task id.
    pub id: String,
    /// Expected current version.
    pub version: u64,
    /// Promises to await.
    pub actions: Vec<PromiseRegisterCallbackReq>,
}

/// `TaskFulfillReq`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskFulfillReq {
    /// Task id.
    pub id: String,
    /// Expected current version.
    pub version: u64,
    /// Settlement of the task's promise.
    pub action: PromiseSettleReq,
}

/// `TaskReleaseReq`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskReleaseReq {
    /// Task id.
    pub id: String,
    /// Expected current version.
    pub version: u64,
}

/// `TaskHaltReq`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskHaltReq {
    /// Task id.
    pub id: String,
}

/// `TaskContinueReq`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskContinueReq {
    /// Task id.
    pub id: String,
}

/// `TaskSearchReq` (unspecified: always 501).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TaskSearchReq {
    /// State filter.
    pub state: Option<TaskState>,
    /// Page size.
    pub limit: Option<u64>,
    /// Page cursor.
    pub cursor: Option<String>,
}

/// `ScheduleGetReq`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScheduleGetReq {
    /// Schedule id.
    pub id: String,
}

/// `ScheduleCreateReq`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScheduleCreateReq {
    /// Schedule id.
    pub id: String,
    /// Cron expression.
    pub cron: String,
    /// Promise id template.
    pub promise_id: String,
    /// Relative promise timeout.
    pub promise_timeout: u64,
    /// Promise parameter.
    pub promise_param: Value,
    /// Promise tags.
    pub promise_tags: Tags,
}

/// `ScheduleDeleteReq`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScheduleDeleteReq {
    /// Schedule id.
    pub id: String,
}

/// `ScheduleSearchReq` (unspecified: always 501).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ScheduleSearchReq {
    /// Page size.
    pub limit: Option<u64>,
    /// Page cursor.
    pub cursor: Option<String>,
}

/// One external request: the union of every protocol handler's input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Request {
    /// P-01.
    PromiseGet(PromiseGetReq),
    /// P-02.
    PromiseCreate(PromiseCreateReq),
    /// P-03.
    PromiseSettle(PromiseSettleReq),
    /// P-04.
    PromiseRegisterCallback(PromiseRegisterCallbackReq),
    /// P-05.
    PromiseRegisterListener(PromiseRegisterListenerReq),
    /// P-06.
    PromiseSearch(PromiseSearchReq),
    /// T-01.
    TaskGet(TaskGetReq),
    /// T-02.
    TaskCreate(TaskCreateReq),
    /// T-03.
    TaskAcquire(TaskAcquireReq),
    /// T-04.
    TaskFence(TaskFenceReq),
    /// T-05.
    TaskHeartbeat(TaskHeartbeatReq),
    /// T-06.
    TaskSuspend(TaskSuspendReq),
    /// T-07.
    TaskFulfill(TaskFulfillReq),
    /// T-08.
    TaskRelease(TaskReleaseReq),
    /// T-09.
    TaskHalt(TaskHaltReq),
    /// T-10.
    TaskContinue(TaskContinueReq),
    /// T-11.
    TaskSearch(TaskSearchReq),
    /// S-01.
    ScheduleGet(ScheduleGetReq),
    /// S-02.
    ScheduleCreate(ScheduleCreateReq),
    /// S-03.
    ScheduleDelete(ScheduleDeleteReq),
    /// S-04.
    ScheduleSearch(ScheduleSearchReq),
}

/// Every request kind's wire name, in spec order.
pub const KINDS: [&str; 21] = [
    "promise.get",
    "promise.create",
    "promise.settle",
    "promise.register_callback",
    "promise.register_listener",
    "promise.search",
    "task.get",
    "task.create",
    "task.acquire",
    "task.fence",
    "task.heartbeat",
    "task.suspend",
    "task.fulfill",
    "task.release",
    "task.halt",
    "task.continue",
    "task.search",
    "schedule.get",
    "schedule.create",
    "schedule.delete",
    "schedule.search",
];

impl Request {
    /// The wire `kind` of this request.
    pub fn kind(&self) -> &'static str {
        let i = match self {
            Request::PromiseGet(_) => 0,
            Request::PromiseCreate(_) => 1,
            Request::PromiseSettle(_) => 2,
            Request::PromiseRegisterCallback(_) => 3,
            Request::PromiseRegisterListener(_) => 4,
            Request::PromiseSearch(_) => 5,
            Request::TaskGet(_) => 6,
            Request::TaskCreate(_) => 7,
            Request::TaskAcquire(_) => 8,
            Request::TaskFence(_) => 9,
            Request::TaskHeartbeat(_) => 10,
            Request::TaskSuspend(_) => 11,
            Request::TaskFulfill(_) => 12,
            Request::TaskRelease(_) => 13,
            Request::TaskHalt(_) => 14,
            Request::TaskContinue(_) => 15,
            Request::TaskSearch(_) => 16,
            Request::ScheduleGet(_) => 17,
            Request::ScheduleCreate(_) => 18,
            Request::ScheduleDelete(_) => 19,
            Request::ScheduleSearch(_) => 20,
        };
        KINDS[i]
    }
}

/// Response of `promise.get`, `promise.create`, `promise.settle`,
/// `promise.register_callback`, `promise.register_listener` (the five Lean
/// `Promise…Res` structures share this shape).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PromiseRes {
    /// Status code.
    pub status: u16,
    /// The promise, on 200.
    pub promise: Option<PromiseRecord>,
}

/// `TaskGetRes`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskGetRes {
    /// Status code.
    pub status: u16,
    /// The task, on 200.
    pub task: Option<TaskRecord>,
}

/// `TaskCreateRes` and `TaskAcquireRes` (same shape).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskClaimRes {
    /// Status code.
    pub status: u16,
    /// The task, on 200.
    pub task: Option<TaskRecord>,
    /// Its promise, on 200.
    pub promise: Option<PromiseRecord>,
    /// Always empty in the spec.
    pub preload: Vec<PromiseRecord>,
}

/// `TaskFenceInnerRes`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TaskFenceInnerRes {
    /// Result of the delegated `promise.create`.
    Create(PromiseRes),
    /// Result of the delegated `promise.settle`.
    Settle(PromiseRes),
}

/// `TaskFenceRes`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskFenceRes {
    /// Status code of the fence itself.
    pub status: u16,
    /// The delegated action's own response, on 200.
    pub action: Option<TaskFenceInnerRes>,
    /// Always empty in the spec.
    pub preload: Vec<PromiseRecord>,
}

/// `TaskSuspendRes`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskSuspendRes {
    /// 200 suspended, 300 resume immediately, or an error.
    pub status: u16,
    /// Always empty in the spec.
    pub preload: Vec<PromiseRecord>,
}

/// `TaskFulfillRes`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskFulfillRes {
    /// Status code.
    pub status: u16,
    /// The settled promise, on 200.
    pub promise: Option<PromiseRecord>,
}

/// `ScheduleGetRes` and `ScheduleCreateRes` (same shape).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScheduleRes {
    /// Status code.
    pub status: u16,
    /// The schedule, on 200.
    pub schedule: Option<Schedule>,
}

/// One response: the union of every protocol handler's output. Responses
/// that carry only a status (heartbeat, release, halt, continue, schedule
/// delete, the three searches) use [`Response::Status`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Response {
    /// P-01..P-05.
    Promise(PromiseRes),
    /// T-01.
    TaskGet(TaskGetRes),
    /// T-02, T-03.
    TaskClaim(TaskClaimRes),
    /// T-04.
    TaskFence(TaskFenceRes),
    /// T-06.
    TaskSuspend(TaskSuspendRes),
    /// T-07.
    TaskFulfill(TaskFulfillRes),
    /// S-01, S-02.
    Schedule(ScheduleRes),
    /// Status-only responses (T-05, T-08..T-11, S-03, S-04, P-06).
    Status(u16),
}

impl Response {
    /// The status code.
    pub fn status(&self) -> u16 {
        match self {
            Response::Promise(r) => r.status,
            Response::TaskGet(r) => r.status,
            Response::TaskClaim(r) => r.status,
            Response::TaskFence(r) => r.status,
            Response::TaskSuspend(r) => r.status,
            Response::TaskFulfill(r) => r.status,
            Response::Schedule(r) => r.status,
            Response::Status(s) => *s,
        }
    }
}
