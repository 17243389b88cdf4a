//! What a concurrent run's epochs (`crate::epoch`) ask of a generator
//! beyond [`Generator::step_frozen`]: a step a rival joins is one that
//! writes, and a rival chosen elsewhere is taken on the model too.

use super::kinds::request;
use super::Generator;
use crate::pools::World;
use crate::{Op, Step};

impl Generator {
    /// [`Generator::step_frozen`] for a step a rival will contend with
    /// (`crate::epoch`): a request that, tried on the model, writes
    /// nothing is drawn again, of the same kind, up to `tries` draws in
    /// all (else the last is taken). A rival races only a step that
    /// writes: in the default concurrent runs of seeds 1–10, 0 to 2
    /// callbacks a run that a rival joined found both ends live.
    pub fn step_frozen_writing(&mut self, tries: usize) -> Step {
        let mut op = self.draw(self.since, self.now);
        for _ in 1..tries {
            let Op::Request(r) = &op else { break };
            if self.writes(&op) {
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
