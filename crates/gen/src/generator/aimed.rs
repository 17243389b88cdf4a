//! An aimed generator's step ([`Generator::aimed_at`]): candidates tried
//! on the model, the first that reaches something the campaign still
//! wants taken. One that aims further ([`Generator::aimed_further`]), when
//! no candidate led anywhere, also tries a candidate retimed onto an
//! instant of a deadline it names ([`crate::aim::instants`]), a walk of a
//! long list the state holds ([`crate::walk`]), a clone of an element
//! of such a list followed by its walk ([`crate::clone`]), and a mix of
//! awaiters made around an acquired task followed by its settlement
//! ([`crate::walk::mixed_awaiters`]); a walk, a clone or a mix taken
//! leaves its other steps as the plan the next steps take. Else the first
//! drawn.

use model::types::{TaskState, Time};

use super::{Generator, Stepper, AIM_TRIES};
use crate::aim::Aim;
use crate::pools::World;
use crate::walk::Walk;
use crate::{Op, Step};

/// The acquired tasks a mix of awaiters is tried around in one step.
const MIXED_TASKS: usize = 2;

/// The list a clone's element is in, to walk after the clone.
enum List {
    /// The awaiters of this pending promise.
    Awaiters(String),
    /// The tasks this claimant holds (and the clone, once made).
    Held(String, Vec<String>),
}

impl Generator {
    /// Up to [`AIM_TRIES`] steps drawn as [`Generator::next_step`] draws
    /// them (the clock advanced, then the step), each tried on the model
    /// and undone: the first that reaches something `aim` still wants;
    /// then, aiming further, a retimed one, a walk, a clone, a mix (see the
    /// module doc), looked for only when no drawn step led anywhere, so
    /// they cost nothing on the steps that did; else the first drawn.
    pub(super) fn aimed(&mut self, aim: &mut Aim) -> (Time, Op) {
        let stepper = self.stepper.clone();
        let since = self.now;
        let mut drawn = Vec::with_capacity(AIM_TRIES);
        for _ in 0..AIM_TRIES {
            let now = self.clock(since);
            let step = Step {
                now,
                op: self.draw(since, now),
            };
            if self.leads_to(aim, &stepper, &step) {
                aim.led(true);
                return (now, step.op);
            }
            drawn.push(step);
        }
        let further = self.further.then(|| {
            self.retimed(aim, &stepper, &drawn, since)
                .or_else(|| self.walked(aim, &stepper, since))
                .or_else(|| self.cloned(aim, &stepper, since))
                .or_else(|| self.mixed(aim, &stepper, since))
        });
        let further = further.flatten();
        aim.led(further.is_some());
        let step = further.unwrap_or_else(|| drawn.swap_remove(0));
        (step.now, step.op)
    }

    /// The first of `drawn`, a request of a kind with a boundary marker
    /// `aim` still wants, that reaches something wanted at an instant of a
    /// deadline it names (none before `since`, well formed there).
    fn retimed(
        &mut self,
        aim: &Aim,
        stepper: &Stepper,
        drawn: &[Step],
        since: Time,
    ) -> Option<Step> {
        for step in drawn {
            let Op::Request(r) = &step.op else {
                continue;
            };
            if !aim.wants_boundary_of(r.kind())
                || crate::rules::well_formed_request(r, &self.machine).is_err()
            {
                continue;
            }
            for at in crate::aim::instants(&self.machine, r, since) {
                let retimed = Step {
                    now: at,
                    op: step.op.clone(),
                };
                if self.leads_to(aim, stepper, &retimed) {
                    return Some(retimed);
                }
            }
        }
        None
    }

    /// The first step of the first walk of the state's long lists whose
    /// last step reaches something `aim` wants, the rest planned.
    fn walked(&mut self, aim: &Aim, stepper: &Stepper, since: Time) -> Option<Step> {
        let w = World {
            m: &self.machine,
            ix: &self.index,
        };
        let mut walks = crate::walk::walks(w, since);
        walks.retain(|walk| self.allows(walk));
        let found = walks.into_iter().find(|walk| {
            let step = |m: &mut _, s: &Step| stepper.step(m, s);
            crate::walk::reaches(&mut self.machine, walk, step, |h| aim.wants_any(h))
        })?;
        Some(self.planned(found))
    }

    /// The first step of a clone of an element of a list the state holds
    /// (a suspended awaiter of a pending promise, while a settlement's
    /// "all" or "mix" of several is wanted; a task a claimant holds, while
    /// a heartbeat's "all" is), when after the whole clone
    /// ([`crate::clone::replayed`]) a walk of that list reaches something
    /// `aim` wants: the rest of the clone and that walk are planned. An
    /// awaiter is cloned whole (a second suspended one: "all"), and also
    /// one step short and joined to the list by a callback (an awaiter in
    /// another state: "mix").
    fn cloned(&mut self, aim: &Aim, stepper: &Stepper, since: Time) -> Option<Step> {
        for (element, mut list) in self.elements(aim) {
            let w = World {
                m: &self.machine,
                ix: &self.index,
            };
            let mut fresh = crate::pools::fresh_children(w, crate::pools::origin(&element), 2);
            let (to, spare) = (fresh.remove(0), fresh.remove(0));
            let copy = crate::clone::replayed(&self.log, &element, &to, since);
            if let List::Held(_, tasks) = &mut list {
                tasks.push(to.clone());
            }
            let mut copies = vec![copy.clone()];
            if let (List::Awaiters(p), Some((_, short))) = (&list, copy.split_last()) {
                let join = model::api::PromiseRegisterCallbackReq {
                    awaited: p.clone(),
                    awaiter: to.clone(),
                };
                let mut short = short.to_vec();
                short.push(Step {
                    now: since,
                    op: Op::Request(model::api::Request::PromiseRegisterCallback(join)),
                });
                copies.push(short);
            }
            for copy in copies {
                if let Ok(step) = self.then_walked(aim, stepper, since, copy, &list, &spare) {
                    return Some(step);
                }
            }
        }
        None
    }

    /// The first step of `prefix` (its ill-formed steps left out) when,
    /// after it, a walk of `list` (`spare` a fresh id for
    /// [`crate::walk::settlements_of`]) reaches something `aim` wants: the
    /// rest of the prefix and that walk are planned. Else whether the
    /// prefix was whole (every step of it well formed where it fell).
    fn then_walked(
        &mut self,
        aim: &Aim,
        stepper: &Stepper,
        since: Time,
        prefix: Walk,
        list: &List,
        spare: &str,
    ) -> Result<Step, bool> {
        let steps = prefix.len();
        let (planned, whole) = self.machine.trial(|m| {
            let mut kept = Vec::new();
            for s in prefix {
                if crate::well_formed(&s, m).is_ok() {
                    stepper.step(m, &s);
                    kept.push(s);
                }
            }
            let walks = match list {
                List::Awaiters(p) => crate::walk::settlements_of(m, p, since, spare),
                List::Held(pid, tasks) => {
                    let ids: Vec<&str> = tasks.iter().map(String::as_str).collect();
                    vec![vec![crate::walk::heartbeat(m, pid, &ids, since)]]
                }
            };
            let whole = kept.len() == steps;
            let step = |m: &mut _, s: &Step| stepper.step(m, s);
            let walk = walks
                .into_iter()
                .find(|walk| crate::walk::reaches(m, walk, step, |h| aim.wants_any(h)));
            let plan = walk.filter(|_| !kept.is_empty());
            (
                plan.map(|w| kept.into_iter().chain(w).collect::<Walk>()),
                whole,
            )
        });
        match planned.filter(|p| self.allows(p)) {
            Some(plan) => Ok(self.planned(plan)),
            None => Err(whole),
        }
    }

    /// The first step of a mix of awaiters made around an acquired task
    /// ([`crate::walk::mixed_awaiters`]) when a settlement of it then
    /// reaches something `aim` wants, while a settlement site's mix is
    /// wanted. A mix made whole that reached nothing wanted makes the
    /// generator stop trying (`mix_dry`): on the spec's model a mix made
    /// whole walks one at every site (`walk::mixed_awaiters` keeps the
    /// task's promise live past each of them; tested at each), so what
    /// stops it is a deviant model that walks no mix there, or kinds the
    /// profile leaves out; a failed try costs a few dozen model steps.
    fn mixed(&mut self, aim: &Aim, stepper: &Stepper, since: Time) -> Option<Step> {
        if self.mix_dry || !aim.wants_any(&model::marker::AWAITERS_MIXED) {
            return None;
        }
        let w = World {
            m: &self.machine,
            ix: &self.index,
        };
        let tasks: Vec<String> = (w.ix.in_state(TaskState::Acquired).iter())
            .take(MIXED_TASKS)
            .map(|id| id.to_string())
            .collect();
        for a in tasks {
            let w = World {
                m: &self.machine,
                ix: &self.index,
            };
            let mut fresh = crate::pools::fresh_children(w, crate::pools::origin(&a), 3);
            let (q, t, spare) = (fresh.remove(0), fresh.remove(0), fresh.remove(0));
            let prefix = crate::walk::mixed_awaiters(&self.machine, &a, since, &q, &t);
            if prefix.is_empty() {
                continue;
            }
            let list = List::Awaiters(q.clone());
            match self.then_walked(aim, stepper, since, prefix, &list, &spare) {
                Ok(step) => return Some(step),
                Err(true) => {
                    self.mix_dry = true;
                    return None;
                }
                Err(false) => {}
            }
        }
        None
    }

    /// The elements worth cloning for what `aim` wants, with their lists.
    fn elements(&self, aim: &Aim) -> Vec<(String, List)> {
        let w = World {
            m: &self.machine,
            ix: &self.index,
        };
        let mut out = Vec::new();
        if aim.wants_any(&model::marker::AWAITERS_OF_SEVERAL) {
            let awaited = (w.ix.awaited().iter())
                .filter_map(|id| w.m.state.get_promise(id))
                .take(crate::walk::LISTS);
            for p in awaited {
                let suspended = p
                    .callbacks
                    .iter()
                    .find(|a| w.m.state.get_task(a).map(|t| t.state) == Some(TaskState::Suspended));
                if let Some(a) = suspended {
                    out.push((a.clone(), List::Awaiters(p.id.clone())));
                }
            }
        }
        if aim.wants_any([&model::marker::HEARTBEAT_REFS.all]) {
            for (pid, tasks) in crate::walk::held(w) {
                let tasks: Vec<String> = tasks.iter().map(|t| t.to_string()).collect();
                out.push((tasks[0].clone(), List::Held(pid.to_string(), tasks)));
            }
        }
        out
    }

    /// Whether every request of `steps` is of a kind this generator makes.
    fn allows(&self, steps: &[Step]) -> bool {
        steps.iter().all(|s| match &s.op {
            Op::Request(r) => self.kinds.contains(r.kind()),
            Op::Tick => true,
        })
    }

    /// The first step of `steps`, the rest planned for the next steps.
    fn planned(&mut self, steps: Walk) -> Step {
        let mut steps = steps.into_iter();
        let first = steps.next().expect("a walk, a clone or a mix has a step");
        self.plan = steps.collect();
        first
    }

    /// Whether `step`, tried on the model and undone, reaches something
    /// `aim` wants, or one of its [`crate::aim::follow_ups`] would.
    fn leads_to(&mut self, aim: &Aim, stepper: &Stepper, step: &Step) -> bool {
        let before = match &step.op {
            Op::Request(r) => crate::aim::lists(&self.machine, r),
            Op::Tick => Vec::new(),
        };
        self.machine.trial(|m| {
            let at = m.recorded();
            stepper.step(m, step);
            if aim.wants_any(m.recorded_since(at)) {
                return true;
            }
            crate::aim::follow_ups(m, &before, step.now)
                .iter()
                .any(|f| aim.wants_any(&m.trial_hits(|m| stepper.step(m, f))))
        })
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    use model::api::{PromiseCreateReq, Request, TaskCreateReq};
    use model::machine::Machine;
    use model::state::ServerConfig;

    use crate::aim::Aim;
    use crate::{GenConfig, Generator, Op, Step, Stepper};

    const T0: u64 = 1_700_000_000_000;

    /// A model with one task acquired, `a`.
    fn one_acquired() -> Machine {
        let mut m = Machine::new(ServerConfig::default());
        let claimed = Request::TaskCreate(TaskCreateReq {
            pid: "p1".into(),
            ttl: 60_000,
            action: PromiseCreateReq {
                id: "a".into(),
                timeout_at: T0 + 600_000,
                param: Default::default(),
                tags: [(crate::pools::TARGET.to_string(), "poll://any@w".to_string())].into(),
            },
        });
        m.apply(&claimed, T0);
        m
    }

    /// A generator from [`one_acquired`] aimed further at the settlement
    /// sites' mixes, stepping with `stepper`.
    fn aimed(stepper: &Stepper) -> Generator {
        let aim = Aim::new(model::marker::AWAITERS_MIXED);
        Generator::resume(one_acquired(), T0 + 5, &GenConfig::default(), stepper, 1)
            .aimed_at(aim)
            .aimed_further(Vec::new())
    }

    /// A model that never suspends (a deviant model's stand-in): the mix
    /// made around `a` is made whole and walks no mix, so the case stops
    /// trying (a second try takes no model step); on the spec's model it
    /// walks one and is planned.
    #[test]
    fn a_mix_made_whole_that_walks_nothing_wanted_is_not_tried_again() {
        let steps = Arc::new(AtomicUsize::new(0));
        let counted = steps.clone();
        let never_suspends = Stepper::new(move |m, s: &Step| {
            counted.fetch_add(1, Ordering::Relaxed);
            if !matches!(&s.op, Op::Request(Request::TaskSuspend(_))) {
                crate::apply(m, s);
            }
        });
        let aim = Aim::new(model::marker::AWAITERS_MIXED);
        let mut g = aimed(&never_suspends);
        let since = g.now;
        assert!(g.mixed(&aim, &never_suspends, since).is_none());
        let tried = steps.load(Ordering::Relaxed);
        assert!(tried > 0 && g.mix_dry, "a try steps the model, then stops");
        assert!(g.mixed(&aim, &never_suspends, since).is_none());
        assert_eq!(steps.load(Ordering::Relaxed), tried, "tried again");
        let spec = Stepper::spec();
        let mut g = aimed(&spec);
        assert!(g.mixed(&aim, &spec, since).is_some());
        assert!(!g.mix_dry);
    }
}
