//! How a generator's model takes a step.

use std::fmt;
use std::sync::Arc;

use model::machine::Machine;

use crate::{apply, Step};

/// How the generator's model takes a step: [`crate::apply`] (the spec), or
/// a model with deviations (`deviate::Deviant::stepper`).
#[derive(Clone)]
pub struct Stepper(Arc<StepFn>);

/// A step taken on a machine.
type StepFn = dyn Fn(&mut Machine, &Step) + Send + Sync;

impl Stepper {
    /// The spec's own step.
    pub fn spec() -> Stepper {
        Stepper::new(|m, s| {
            apply(m, s);
        })
    }

    /// A step that `f` takes on the machine.
    pub fn new(f: impl Fn(&mut Machine, &Step) + Send + Sync + 'static) -> Stepper {
        Stepper(Arc::new(f))
    }

    /// Take `step` on `m`.
    pub fn step(&self, m: &mut Machine, step: &Step) {
        (self.0)(m, step)
    }
}

impl Default for Stepper {
    fn default() -> Stepper {
        Stepper::spec()
    }
}

impl fmt::Debug for Stepper {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Stepper")
    }
}
