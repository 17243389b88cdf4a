//! What a concurrent run's epochs (`crate::epoch`) ask of a generator
//! beyond [`Generator::step_frozen`]: a step a rival joins is one that
//! writes, and a rival chosen elsewhere is taken on the model too.

use super::kinds::request;
use super::Generator;
use crate::pools::World;
use crate::{Op, Step};

impl Generator {
    /// [`Generator::step_frozen`] for a step a rival will contend with
    /// (`crate::epoch`): a request of a kind in `contended` that, tried on
    /// the model and undone, writes nothing is drawn again, of the same
    /// kind, up to `tries` draws in all (else the last is taken). A rival
    /// races only a step that writes: in the default concurrent runs of
    /// seeds 1–10, 0 to 2 callbacks a run that a rival joined found both
    /// ends live. A redraw is the kind's plain draw (no focus on what came
    /// due, no probe).
    pub fn step_frozen_writing(&mut self, tries: usize, contended: crate::Kinds) -> Step {
        let mut op = self.draw(self.since, self.now);
        for _ in 1..tries {
            let Op::Request(r) = &op else { break };
            if !contended.contains(r.kind()) || self.writes(&op) {
                break;
            }
            let Some(kind) = crate::Kinds::NONE.with(r.kind()) else {
                break;
            };
            let w = World {
                m: &self.machine,
                ix: &self.index,
            };
            op = Op::Request(request(
                w,
                kind,
                crate::Kinds::NONE,
                self.now,
                &mut self.rng,
            ));
        }
        self.commit(op)
    }

    /// Whether `op` at the current `now`, tried on the model and undone,
    /// writes anything.
    fn writes(&mut self, op: &Op) -> bool {
        let step = Step {
            now: self.now,
            op: op.clone(),
        };
        let stepper = self.stepper.clone();
        self.machine.trial(|m| {
            let mark = m.state.checkpoint();
            stepper.step(m, &step);
            !m.state.writes_since(mark).is_empty()
        })
    }

    /// Apply a step chosen elsewhere (a rival of a concurrent epoch,
    /// `crate::epoch`) to the model, so what follows sees it.
    pub fn take(&mut self, step: &Step) {
        self.stepper.step(&mut self.machine, step);
        if !self.recording {
            self.machine.clear_hits();
        }
        let touched = self.machine.state.take_touched();
        self.index.update(&self.machine, touched);
        self.ahead.0 = None;
    }
}

#[cfg(test)]
mod tests {
    use crate::{GenConfig, Generator, Kinds, Op, Step};

    /// `n` frozen steps of seed 3, each as `step` draws it.
    fn steps(n: usize, mut step: impl FnMut(&mut Generator) -> Step) -> Vec<Step> {
        let mut g = Generator::new(3, &GenConfig::default());
        let mut out = Vec::new();
        for i in 0..n {
            if i % 8 == 0 {
                g.advance_clock();
            }
            out.push(step(&mut g));
        }
        out
    }

    /// One draw, or no kind to redraw: the plain frozen step.
    #[test]
    fn one_try_or_no_contended_kind_is_the_plain_frozen_step() {
        let plain = steps(400, Generator::step_frozen);
        let one = steps(400, |g| g.step_frozen_writing(1, Kinds::ALL));
        let none = steps(400, |g| g.step_frozen_writing(8, Kinds::NONE));
        assert_eq!(plain, one);
        assert_eq!(plain, none);
    }

    /// With redraws, a larger share of the requests write something on the
    /// model than the plain frozen steps do.
    #[test]
    fn redrawn_steps_write_more_often() {
        let share = |tries: usize| {
            let mut g = Generator::new(3, &GenConfig::default());
            let (mut writing, mut requests) = (0, 0);
            for i in 0..1_200 {
                if i % 8 == 0 {
                    g.advance_clock();
                }
                let mut before = g.machine().clone();
                let s = g.step_frozen_writing(tries, Kinds::ALL);
                if matches!(s.op, Op::Request(_)) {
                    requests += 1;
                    let mark = before.state.checkpoint();
                    crate::apply(&mut before, &s);
                    writing += usize::from(!before.state.writes_since(mark).is_empty());
                }
            }
            writing as f64 / requests as f64
        };
        let (plain, redrawn) = (share(1), share(8));
        assert!(
            redrawn > plain + 0.1,
            "plain {plain:.2}, redrawn {redrawn:.2}"
        );
    }
}
