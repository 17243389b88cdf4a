//! The one entry point the rest of the project uses: a [`Machine`] holds the
//! state, applies external requests at a given `now`, and fires internal
//! transitions. Time is always passed in, never read.

use std::sync::Arc;

use crate::actions;
use crate::api::{Request, Response};
use crate::branch::Branch;
use crate::calendar::{Calendar, RustServerCalendar};
use crate::marker;
use crate::state::{ServerConfig, State, LEASE, RETRY};
use crate::types::Time;

/// The number of timer groups, in firing order: promise timeouts, task
/// retries, task leases, schedules.
pub const GROUPS: usize = 4;

/// One armed timeout, named by what firing it does.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Timer {
    /// `onPromiseTimeout id`.
    Promise(String),
    /// `onTaskRetryTimeout id` (task timeout kind 0).
    TaskRetry(String),
    /// `onTaskLeaseTimeout id` (task timeout kind 1).
    TaskLease(String),
    /// `onScheduleTimeout id`.
    Schedule(String),
}

impl Timer {
    /// Its group (0 promise, 1 retry, 2 lease, 3 schedule), the firing order
    /// of [`Machine::tick`].
    pub fn group(&self) -> usize {
        match self {
            Timer::Promise(_) => 0,
            Timer::TaskRetry(_) => 1,
            Timer::TaskLease(_) => 2,
            Timer::Schedule(_) => 3,
        }
    }

    /// Whether it is armed in `m` with a deadline ≤ `now`.
    pub fn is_due(&self, m: &Machine, now: Time) -> bool {
        m.deadline(self).is_some_and(|at| at <= now)
    }

    /// The id of the object the timer belongs to.
    pub fn id(&self) -> &str {
        match self {
            Timer::Promise(id)
            | Timer::TaskRetry(id)
            | Timer::TaskLease(id)
            | Timer::Schedule(id) => id,
        }
    }
}

/// The abstract machine: `ServerState` plus the calendar behind the opaque
/// functions, and the branches taken since they were last drained.
#[derive(Clone, Debug)]
pub struct Machine {
    /// The state.
    pub state: State,
    calendar: Arc<dyn Calendar>,
    /// Branches taken since last drained; a field (not a method) so that
    /// handlers can record while they hold a borrow of `state`.
    pub(crate) hits: Vec<Branch>,
    /// Markers (`crate::marker`) reached since last drained, apart from the
    /// branches so a handler's branch sequence stays the Lean's.
    pub(crate) marks: Vec<Branch>,
}

impl Default for Machine {
    fn default() -> Self {
        Machine::new(ServerConfig::default())
    }
}

impl Machine {
    /// An empty machine with the Rust server's calendar.
    pub fn new(config: ServerConfig) -> Self {
        Machine::with_calendar(config, Arc::new(RustServerCalendar))
    }

    /// An empty machine with a given calendar.
    pub fn with_calendar(config: ServerConfig, calendar: Arc<dyn Calendar>) -> Self {
        Machine {
            state: State::new(config),
            calendar,
            hits: Vec::new(),
            marks: Vec::new(),
        }
    }

    /// The calendar in use.
    pub fn calendar(&self) -> &dyn Calendar {
        &*self.calendar
    }

    /// Apply one external request at `now`.
    pub fn apply(&mut self, req: &Request, now: Time) -> Response {
        use crate::api::Response as R;
        match req {
            Request::PromiseGet(r) => R::Promise(actions::promise_get::promise_get(self, r, now)),
            Request::PromiseCreate(r) => {
                R::Promise(actions::promise_create::promise_create(self, r, now))
            }
            Request::PromiseSettle(r) => {
                R::Promise(actions::promise_settle::promise_settle(self, r, now))
            }
            Request::PromiseRegisterCallback(r) => R::Promise(
                actions::promise_register_callback::promise_register_callback(self, r, now),
            ),
            Request::PromiseRegisterListener(r) => R::Promise(
                actions::promise_register_listener::promise_register_listener(self, r, now),
            ),
            Request::PromiseSearch(r) => {
                R::Status(actions::promise_search::promise_search(self, r, now))
            }
            Request::TaskGet(r) => R::TaskGet(actions::task_get::task_get(self, r, now)),
            Request::TaskCreate(r) => R::TaskClaim(actions::task_create::task_create(self, r, now)),
            Request::TaskAcquire(r) => {
                R::TaskClaim(actions::task_acquire::task_acquire(self, r, now))
            }
            Request::TaskFence(r) => R::TaskFence(actions::task_fence::task_fence(self, r, now)),
            Request::TaskHeartbeat(r) => {
                R::Status(actions::task_heartbeat::task_heartbeat(self, r, now))
            }
            Request::TaskSuspend(r) => {
                R::TaskSuspend(actions::task_suspend::task_suspend(self, r, now))
            }
            Request::TaskFulfill(r) => {
                R::TaskFulfill(actions::task_fulfill::task_fulfill(self, r, now))
            }
            Request::TaskRelease(r) => R::Status(actions::task_release::task_release(self, r, now)),
            Request::TaskHalt(r) => R::Status(actions::task_halt::task_halt(self, r, now)),
            Request::TaskContinue(r) => {
                R::Status(actions::task_continue::task_continue(self, r, now))
            }
            Request::TaskSearch(r) => R::Status(actions::task_search::task_search(self, r, now)),
            Request::ScheduleGet(r) => {
                R::Schedule(actions::schedule_get::schedule_get(self, r, now))
            }
            Request::ScheduleCreate(r) => {
                R::Schedule(actions::schedule_create::schedule_create(self, r, now))
            }
            Request::ScheduleDelete(r) => {
                R::Status(actions::schedule_delete::schedule_delete(self, r, now))
            }
            Request::ScheduleSearch(r) => {
                R::Status(actions::schedule_search::schedule_search(self, r, now))
            }
        }
    }

    /// Fire one internal transition at `now`. Firing does not check that the
    /// timer is armed or due: the transitions guard themselves, as in the Lean.
    pub fn fire(&mut self, timer: &Timer, now: Time) {
        use actions::timeouts;
        // The environment's `deadline ≤ now`: at_now or one_past where the
        // timer fires (one_ahead is the tick's to see, as what it leaves).
        if let Some(at) = self.deadline(timer).filter(|at| *at <= now) {
            marker::TIMER_GROUPS[timer.group()].record(&mut self.marks, at, now);
        }
        match timer {
            Timer::Promise(id) => timeouts::on_promise_timeout(self, id, now),
            Timer::TaskRetry(id) => timeouts::on_task_retry_timeout(self, id, now),
            Timer::TaskLease(id) => timeouts::on_task_lease_timeout(self, id, now),
            Timer::Schedule(id) => timeouts::on_schedule_timeout(self, id, now),
        }
    }

    /// The armed timers of one group (0 promise, 1 retry, 2 lease,
    /// 3 schedule) with deadline ≤ `now`, by deadline then id.
    pub fn due_in_group(&self, group: usize, now: Time) -> Vec<Timer> {
        let s = &self.state;
        let (table, make): (_, fn(String) -> Timer) = match group {
            0 => (s.promise_timeouts(), Timer::Promise),
            1 => (s.task_timeouts(RETRY), Timer::TaskRetry),
            2 => (s.task_timeouts(LEASE), Timer::TaskLease),
            _ => (s.schedule_timeouts(), Timer::Schedule),
        };
        table.due(now).map(|(_, id)| make(id.to_string())).collect()
    }

    /// The armed timers with deadline ≤ `now`, in firing order: promise
    /// timeouts, then task retries, then leases, then schedules (the order of
    /// the Rust server's groups; the spec leaves it open); within a group by
    /// deadline, then id (the Rust server settles a group as one batch,
    /// which the runner's latitude search covers).
    pub fn due(&self, now: Time) -> Vec<Timer> {
        (0..GROUPS)
            .flat_map(|g| self.due_in_group(g, now))
            .collect()
    }

    /// Fire every armed timeout whose deadline is ≤ `now`, group by group in
    /// the order of [`Machine::due`]. Each group is read when its turn comes,
    /// so a later group fires what an earlier one armed at or before `now`
    /// (with a zero retry timeout, a lease expiry's retry), while what a
    /// group arms for an earlier group (a schedule's catch-up creating
    /// already-due promises) waits for the next tick. Returns what fired.
    pub fn tick(&mut self, now: Time) -> Vec<Timer> {
        self.tick_with(now, |m, t| m.fire(t, now))
    }

    /// [`Machine::tick`] with another way to fire each timer (a machine
    /// with deviations fires its own way): the group order and the reading
    /// of each group when its turn comes stay here, in one place.
    pub fn tick_with(
        &mut self,
        now: Time,
        mut fire: impl FnMut(&mut Machine, &Timer),
    ) -> Vec<Timer> {
        let mut fired = Vec::new();
        for group in 0..GROUPS {
            let due = self.due_in_group(group, now);
            self.mark_tick_group(group, &due, now);
            for timer in due {
                fire(self, &timer);
                fired.push(timer);
            }
        }
        fired
    }

    /// The armed deadline of `timer`, if it is armed.
    pub fn deadline(&self, timer: &Timer) -> Option<Time> {
        let s = &self.state;
        match timer {
            Timer::Promise(id) => s.promise_timeouts().get(id),
            Timer::TaskRetry(id) => s.task_timeouts(RETRY).get(id),
            Timer::TaskLease(id) => s.task_timeouts(LEASE).get(id),
            Timer::Schedule(id) => s.schedule_timeouts().get(id),
        }
    }

    /// A tick's markers of one group, read when its turn comes: a timer
    /// the tick leaves because it comes due one millisecond later
    /// (`…/deadline/one_ahead`, one lookup of the ordered index), and for
    /// the promise timeouts the shape of those whose promise has a task.
    fn mark_tick_group(&mut self, group: usize, due: &[Timer], now: Time) {
        let s = &self.state;
        let table = match group {
            0 => s.promise_timeouts(),
            1 => s.task_timeouts(RETRY),
            2 => s.task_timeouts(LEASE),
            _ => s.schedule_timeouts(),
        };
        if let Some(next) = now.checked_add(1) {
            if table.within(next, next).next().is_some() {
                self.marks.push(marker::TIMER_GROUPS[group].one_ahead);
            }
        }
        if group == 0 {
            let with_task = due.iter().filter(|t| s.get_task(t.id()).is_some()).count();
            marker::TICK_PROMISE_TIMEOUTS.record(&mut self.marks, due.len(), with_task);
        }
    }

    /// Run `f` on this machine, then undo all it did (its effects, through
    /// the undo journal, and the branches it recorded) and return what it
    /// returned: a look at what a transition would do that costs the
    /// transition, not a copy of the state. The change feed is paused
    /// meanwhile (the generator's index would re-read objects that are as
    /// they were, several times a candidate). Nests inside a journal already
    /// open (a checker's attempt), which it leaves open.
    pub fn trial<R>(&mut self, f: impl FnOnce(&mut Machine) -> R) -> R {
        let (hits, marks) = (self.hits.len(), self.marks.len());
        let open = self.state.journaling();
        let mark = self.state.checkpoint();
        let feed = self.state.pause_feed();
        let r = f(self);
        // A trial that committed would leave writes the feed never saw.
        debug_assert!(self.state.journaling(), "a trial committed");
        self.state.rollback(mark);
        self.state.unpause_feed(feed);
        if !open {
            self.state.commit();
        }
        self.hits.truncate(hits);
        self.marks.truncate(marks);
        r
    }

    /// Run `f` as a [`Machine::trial`] and return the branches, then the
    /// markers, it recorded: what a step would reach, undone (the
    /// generator's aimed steps compare candidates by it).
    pub fn trial_hits(&mut self, f: impl FnOnce(&mut Machine)) -> Vec<Branch> {
        let at = self.recorded();
        self.trial(|m| {
            f(m);
            m.recorded_since(at).copied().collect()
        })
    }

    /// How many branches and markers are recorded and not yet taken: a
    /// place to read [`Machine::recorded_since`] from.
    pub fn recorded(&self) -> (usize, usize) {
        (self.hits.len(), self.marks.len())
    }

    /// The branches, then the markers, recorded since `at` (from
    /// [`Machine::recorded`]). By position: only meaningful while nothing
    /// takes or clears them in between, as inside a [`Machine::trial`].
    pub fn recorded_since(&self, at: (usize, usize)) -> impl Iterator<Item = &Branch> {
        let hits = self.hits.get(at.0..).unwrap_or_default();
        hits.iter()
            .chain(self.marks.get(at.1..).unwrap_or_default())
    }

    /// The branches, then the markers, recorded and not yet taken.
    pub fn hits_and_marks(&self) -> impl Iterator<Item = &Branch> {
        self.hits.iter().chain(&self.marks)
    }

    /// The branches taken since the last call, in order.
    pub fn take_hits(&mut self) -> Vec<Branch> {
        std::mem::take(&mut self.hits)
    }

    /// The markers (`crate::marker`) reached since the last call, in order.
    pub fn take_marks(&mut self) -> Vec<Branch> {
        std::mem::take(&mut self.marks)
    }

    /// Move the branches taken since the last call, then the markers
    /// reached, onto the end of `out`, keeping this machine's buffers (a
    /// caller that counts every step's hits allocates nothing per step).
    pub fn drain_hits_into(&mut self, out: &mut Vec<Branch>) {
        out.append(&mut self.hits);
        out.append(&mut self.marks);
    }

    /// Forget recorded branches and markers without allocating.
    pub fn clear_hits(&mut self) {
        self.hits.clear();
        self.marks.clear();
    }

    /// The retry timeout of the config.
    pub(crate) fn retry_timeout(&self) -> u64 {
        self.state.config.retry_timeout
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::{PromiseCreateReq, PromiseGetReq};

    fn create(id: &str) -> Request {
        Request::PromiseCreate(PromiseCreateReq {
            id: id.to_string(),
            timeout_at: 100,
            param: Default::default(),
            tags: Default::default(),
        })
    }

    /// A trial is undone whole, state and branches, with or without a
    /// journal already open (which it leaves open and intact).
    #[test]
    fn a_trial_leaves_nothing_behind() {
        let mut m = Machine::default();
        m.apply(&create("a"), 1);
        let (state, hits, marks) = (m.state.clone(), m.hits.clone(), m.marks.clone());
        let seen = m.trial(|m| {
            m.apply(&create("b"), 2);
            m.tick(200);
            m.state.get_promise("b").is_some()
        });
        assert!(seen, "the trial saw its own effects");
        assert_eq!((&m.state, &m.hits, &m.marks), (&state, &hits, &marks));
        assert!(!m.state.journaling(), "no journal left open");

        let mark = m.state.checkpoint();
        m.apply(&create("c"), 3);
        m.trial(|m| m.apply(&Request::PromiseGet(PromiseGetReq { id: "c".into() }), 150));
        assert!(m.state.journaling(), "the outer journal is still open");
        m.state.rollback(mark);
        m.state.commit();
        assert_eq!(
            m.state, state,
            "and still undoes what came before the trial"
        );
    }

    /// What a trial wrote and undid leaves the change feed as it was; what
    /// was written before the trial stays in it.
    #[test]
    fn a_trial_leaves_the_change_feed_as_it_was() {
        use crate::state::Touched;
        let mut m = Machine::new(ServerConfig::default());
        m.state.watch();
        m.apply(&create("a"), 1);
        m.trial(|m| {
            m.apply(&create("b"), 1);
            m.trial(|m| m.apply(&create("c"), 1));
        });
        assert_eq!(m.state.take_touched(), [Touched::Promise("a".into())]);
        m.trial(|m| m.apply(&create("b"), 1));
        assert!(m.state.take_touched().is_empty());
    }
}
