//! Seeing past a divergence: the model is pinned to what the target holds.
//!
//! A campaign case used to end at its first divergence, so a departure
//! every case meets early (a new server's task versions, say) hid all that
//! lies behind it: its kind could only be left out of generation, and then
//! nothing it builds (no task ever acquired) was ever seen. Here, after a
//! divergence, the checker's model is replaced by the state the target's
//! snapshot shows ([`model::view::StateView::to_state`]), the generator
//! goes on from that state, and the case runs to its full length; every
//! later divergence is its own finding, rolled up as its own class.
//!
//! A continued case is exploration, never evidence: a proposal is kept only
//! by a replay of the case's own steps through the checker with the
//! candidate ([`replay_diverges`]), which goes on past a divergence only
//! when its class is already known residue (what no catalogue entry
//! explains), so "green apart from known residue" is the whole rule, and a
//! class is never explained by pinning past it.
//!
//! A pin needs the whole state: a snapshot that lacks a component (or a
//! run without state) cannot pin, and the case ends at its divergence as
//! before ([`state_of`] says why).

use std::collections::BTreeSet;

use deviate::Deviation;
use gen::Step;
use model::machine::Machine;
use model::state::State;
use model::view::{StateView, COMPONENTS};

use crate::check::Checker;
use crate::exec::{continue_stream, execute, ExecOptions, Expect};
use crate::profile::Profile;
use crate::snapshot::Snap;
use crate::target::{Target, TargetError};

/// The most divergences a case goes on past: a target whose every step
/// diverges from a pinned state would otherwise make a class per step.
pub const MAX_PINS: usize = 32;

/// Where a continued finding's part of the case begins.
#[derive(Clone, Debug)]
pub struct Pin {
    /// The index (into the case's steps) of the first step after the pin.
    pub from: usize,
    /// The state the model was pinned to: the target's, after the step
    /// before `from`.
    pub state: State,
    /// How many divergences the case went on past before this finding.
    pub depth: usize,
}

/// The state `snap` shows, with the checker's config, its lists ordered as
/// the checker's model has them where they agree; `Err` says why it
/// cannot pin (a component absent, an entry no state has).
pub fn state_of(snap: &Snap, checker: &Checker) -> Result<State, String> {
    let data = snap.normalized();
    let skip = &checker.profile.skip_components;
    if let Some(c) = COMPONENTS
        .iter()
        .find(|c| data.get(c.name).is_none() || skip.iter().any(|s| s == c.name))
    {
        return Err(format!("the snapshot does not show `{}`", c.name));
    }
    let view: StateView = match serde_json::from_value(data) {
        Ok(v) => v,
        Err(e) => return Err(format!("the snapshot is not a state: {e}")),
    };
    view.to_state(checker.model.state.config, &checker.model.state)
}

/// Pin the checker's model to `state`.
pub fn pin(checker: &mut Checker, state: State) {
    checker.model.state = state;
}

/// The generator of the rest of a case from a pinned state at `now`: the
/// checker's model (with its baseline) and the profile's kinds, seeded by
/// the case's seed and how deep it is; steered toward `favour` (its kinds
/// drawn more often, the clock sharpened onto deadlines) unless it is
/// empty.
pub fn resume(
    checker: &Checker,
    state: &State,
    now: u64,
    seed: u64,
    depth: usize,
    steps: usize,
    favour: gen::Kinds,
) -> std::iter::Take<gen::Generator> {
    let mut machine = Machine::new(state.config);
    machine.state = state.clone();
    let cfg = gen_config(checker, steps, favour);
    let seed = gen::case_seed(seed, depth as u64);
    let g = gen::Generator::resume(machine, now, &cfg, &checker.model.stepper(), seed);
    match favour.is_empty() {
        true => g.take(steps),
        false => g.sharpened().take(steps),
    }
}

/// The generator's configuration of a triage case of `steps` steps: the
/// checker's profile (its retry timeout and kinds), `favour` drawn more
/// often.
pub fn gen_config(checker: &Checker, steps: usize, favour: gen::Kinds) -> gen::GenConfig {
    gen::GenConfig {
        steps,
        retry_timeout: checker.profile.retry_timeout,
        kinds: checker.profile.kinds(),
        favour,
        ..gen::GenConfig::default()
    }
}

/// Replay `steps` on the reset target through a checker with `devs`, going
/// on past a divergence only when its class ([`super::rollup::class_key`])
/// is in `known`
/// (known residue) and the snapshot pins: whether any other divergence is
/// met. A target fault ends it.
pub fn replay_diverges(
    steps: &[Step],
    profile: &Profile,
    devs: &[&'static Deviation],
    target: &mut dyn Target,
    opts: ExecOptions,
    known: &BTreeSet<String>,
) -> Result<bool, TargetError> {
    let mut checker = Checker::with_deviations(profile.clone(), devs.to_vec());
    let mut ex = execute(target, &mut checker, steps, Expect::Model, opts);
    let mut at = 0;
    loop {
        if let Some(e) = ex.fault {
            return Err(e);
        }
        let Some((i, d)) = &ex.divergence else {
            return Ok(false);
        };
        if !known.contains(&super::rollup::class_key(d)) || !opts.check_state {
            return Ok(true);
        }
        let snap = target.snap()?;
        let Ok(s) = state_of(&snap, &checker) else {
            return Ok(true);
        };
        pin(&mut checker, s);
        at += i + 1;
        let rest = &steps[at..];
        ex = continue_stream(target, &mut checker, rest, Expect::Model, opts, Some(snap));
    }
}
