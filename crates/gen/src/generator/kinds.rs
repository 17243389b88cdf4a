//! What a generator's request is: a kind drawn from fixed base weights
//! scaled by the state ([`weights`]), among the allowed kinds, some
//! favoured; then its fields, chosen by reading the model (`promise_ops`,
//! `task_claim`, `task_ops`, `schedule_ops`).

use model::api::Request;
use model::types::{TaskState, Time};
use proptest::test_runner::TestRng;

use crate::dice::Dice;
use crate::pools::World;
use crate::{promise_ops, schedule_ops, task_claim, task_ops};

/// Request kinds with their base weights. Kinds that build depth
/// (task.create, acquire, fence, suspend) weigh most; the 501 searches
/// least. [`weights`] scales them by the state.
const KINDS: [(u64, Kind); 21] = [
    (8, Kind::PromiseCreate),
    (4, Kind::PromiseGet),
    (5, Kind::PromiseSettle),
    (5, Kind::PromiseRegisterCallback),
    (3, Kind::PromiseRegisterListener),
    (1, Kind::PromiseSearch),
    (3, Kind::TaskGet),
    (8, Kind::TaskCreate),
    (8, Kind::TaskAcquire),
    (9, Kind::TaskFence),
    (4, Kind::TaskHeartbeat),
    (10, Kind::TaskSuspend),
    (6, Kind::TaskFulfill),
    (4, Kind::TaskRelease),
    (3, Kind::TaskHalt),
    (3, Kind::TaskContinue),
    (1, Kind::TaskSearch),
    (3, Kind::ScheduleGet),
    (3, Kind::ScheduleCreate),
    (2, Kind::ScheduleDelete),
    (1, Kind::ScheduleSearch),
];

/// How many times as often a favoured kind ([`crate::GenConfig::favour`])
/// is drawn: enough that a case holds several of them where their kind
/// weighs little (a suspend is one request in ten), not so many that the
/// requests that build what they act on (creates, acquires) die out.
pub const FAVOUR: u64 = 4;

/// The kinds a dense phase favours ([`crate::Generator::dense`]): those that
/// build live promises and tasks of one origin, callbacks and suspends.
pub const BUILD: [&str; 5] = [
    "promise.create",
    "task.create",
    "task.acquire",
    "promise.register_callback",
    "task.suspend",
];

/// [`BUILD`] as a set, built once.
pub(super) fn build() -> crate::Kinds {
    static SET: std::sync::OnceLock<crate::Kinds> = std::sync::OnceLock::new();
    *SET.get_or_init(|| crate::Kinds::of(&BUILD).expect("every BUILD name is a wire kind"))
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    PromiseCreate,
    PromiseGet,
    PromiseSettle,
    PromiseRegisterCallback,
    PromiseRegisterListener,
    PromiseSearch,
    TaskGet,
    TaskCreate,
    TaskAcquire,
    TaskFence,
    TaskHeartbeat,
    TaskSuspend,
    TaskFulfill,
    TaskRelease,
    TaskHalt,
    TaskContinue,
    TaskSearch,
    ScheduleGet,
    ScheduleCreate,
    ScheduleDelete,
    ScheduleSearch,
}

impl Kind {
    /// The wire name of the requests of this kind.
    fn name(self) -> &'static str {
        use Kind::*;
        match self {
            PromiseCreate => "promise.create",
            PromiseGet => "promise.get",
            PromiseSettle => "promise.settle",
            PromiseRegisterCallback => "promise.register_callback",
            PromiseRegisterListener => "promise.register_listener",
            PromiseSearch => "promise.search",
            TaskGet => "task.get",
            TaskCreate => "task.create",
            TaskAcquire => "task.acquire",
            TaskFence => "task.fence",
            TaskHeartbeat => "task.heartbeat",
            TaskSuspend => "task.suspend",
            TaskFulfill => "task.fulfill",
            TaskRelease => "task.release",
            TaskHalt => "task.halt",
            TaskContinue => "task.continue",
            TaskSearch => "task.search",
            ScheduleGet => "schedule.get",
            ScheduleCreate => "schedule.create",
            ScheduleDelete => "schedule.delete",
            ScheduleSearch => "schedule.search",
        }
    }
}

/// A request of a kind drawn from [`weights`] (among `kinds`, those in
/// `favour` [`FAVOUR`] times as often), its fields chosen by reading the
/// model.
pub(super) fn request(
    w: World,
    kinds: crate::Kinds,
    favour: crate::Kinds,
    now: Time,
    rng: &mut TestRng,
) -> Request {
    let mut wt = weights(w);
    // Every kind's name is a wire kind, so with every kind allowed and none
    // favoured (the usual run) the name lookups are skipped: they were a
    // few percent of an aimed step, which draws several requests.
    if kinds != crate::Kinds::ALL {
        wt.retain(|(_, k)| kinds.contains(k.name()));
    }
    if favour != crate::Kinds::NONE {
        for (n, k) in wt.iter_mut() {
            if favour.contains(k.name()) {
                *n *= FAVOUR;
            }
        }
    }
    let m = w.m;
    match rng.weighted(&wt) {
        Kind::PromiseCreate => promise_ops::create(w, rng, now),
        Kind::PromiseGet => promise_ops::get(w, rng),
        Kind::PromiseSettle => promise_ops::settle(w, rng),
        Kind::PromiseRegisterCallback => promise_ops::register_callback(w, rng),
        Kind::PromiseRegisterListener => promise_ops::register_listener(w, rng),
        Kind::PromiseSearch => promise_ops::search(rng),
        Kind::TaskGet => task_ops::get(w, rng),
        Kind::TaskCreate => task_claim::create(w, rng, now),
        Kind::TaskAcquire => task_claim::acquire(w, rng),
        Kind::TaskFence => task_ops::fence(w, rng, now),
        Kind::TaskHeartbeat => task_ops::heartbeat(w, rng),
        Kind::TaskSuspend => task_ops::suspend(w, rng, now),
        Kind::TaskFulfill => task_ops::fulfill(w, rng),
        Kind::TaskRelease => task_ops::release(w, rng),
        Kind::TaskHalt => task_ops::halt(w, rng),
        Kind::TaskContinue => task_ops::resume(w, rng),
        Kind::TaskSearch => task_ops::search(rng),
        Kind::ScheduleGet => schedule_ops::get(m, rng),
        Kind::ScheduleCreate => schedule_ops::create(m, rng),
        Kind::ScheduleDelete => schedule_ops::delete(m, rng),
        Kind::ScheduleSearch => schedule_ops::search(rng),
    }
}

/// [`KINDS`] scaled by the state: requests that need a held task (fence,
/// suspend, fulfill, release, heartbeat), a pending one (acquire) or a
/// halted one (continue) are drawn a fifth as often while there is none, so
/// most of them land where they can succeed and a few still take the 404 and
/// 409 branches.
fn weights(w: World) -> Vec<(u64, Kind)> {
    let count = |s: TaskState| w.ix.in_state(s).len();
    let (acquired, pending, halted) = (
        count(TaskState::Acquired),
        count(TaskState::Pending),
        count(TaskState::Halted),
    );
    let scale = |present: usize| if present > 0 { 5 } else { 1 };
    KINDS
        .iter()
        .map(|&(w, k)| {
            let s = match k {
                Kind::TaskFence
                | Kind::TaskSuspend
                | Kind::TaskFulfill
                | Kind::TaskRelease
                | Kind::TaskHeartbeat => scale(acquired),
                Kind::TaskAcquire => scale(pending),
                Kind::TaskContinue => scale(halted),
                _ => 5,
            };
            (w * s, k)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`request`] skips its kind lookups when every kind is allowed: that
    /// is the same draw only if every kind's name is a wire kind.
    #[test]
    fn every_kind_drawn_is_a_wire_kind() {
        for (_, k) in KINDS {
            assert!(crate::Kinds::ALL.contains(k.name()), "{}", k.name());
        }
    }

    /// A set of names holds each of them and nothing else; a name that is
    /// no wire kind gives no set.
    #[test]
    fn a_set_of_names_holds_exactly_them() {
        let set = crate::Kinds::of(&BUILD).expect("wire kinds");
        for k in model::api::KINDS {
            assert_eq!(set.contains(k), BUILD.contains(&k), "{k}");
        }
        assert_eq!(crate::Kinds::of(&["promise.create", "promise.nope"]), None);
    }
}
