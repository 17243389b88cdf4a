//! An aimed generator's step ([`Generator::aimed_at`]): candidates tried
//! on the model, the first that reaches something the campaign still
//! wants taken.

use model::types::Time;

use super::{Generator, Stepper, AIM_TRIES};
use crate::{Op, Step};

impl Generator {
    /// Up to [`AIM_TRIES`] steps drawn as [`Generator::next_step`] draws
    /// them (the clock advanced, then the step), each tried on the model
    /// and undone: the first that reaches something `aim` still wants,
    /// else the first drawn.
    pub(super) fn aimed(&mut self, aim: &mut crate::aim::Aim) -> (Time, Op) {
        let stepper = self.stepper.clone();
        let since = self.now;
        let mut first = None;
        for _ in 0..AIM_TRIES {
            let now = self.clock(since);
            let step = Step {
                now,
                op: self.draw(since, now),
            };
            if self.leads_to(aim, &stepper, &step) {
                return (now, step.op);
            }
            first.get_or_insert((now, step.op));
        }
        first.expect("AIM_TRIES > 0")
    }

    /// Whether `step`, tried on the model and undone, reaches something
    /// `aim` wants, or one of its [`crate::aim::follow_ups`] would.
    fn leads_to(&mut self, aim: &crate::aim::Aim, stepper: &Stepper, step: &Step) -> bool {
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
