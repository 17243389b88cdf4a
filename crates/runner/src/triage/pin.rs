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
//! candidate ([`replay`]), which goes on past a divergence only when its
//! class is already known residue (what no catalogue entry explains; for a
//! witness's replay, only where the replay without the candidate went
//! past it: [`Past`]), so "green apart from known residue" is the whole
//! rule, and a class is never explained by pinning past it.
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

use crate::check::{Checker, Divergence};
use crate::exec::{continue_stream, execute, ExecOptions, Execution, Expect};
use crate::profile::Profile;
use crate::snapshot::Snap;
use crate::target::{Target, TargetError};
use crate::trace::Line;

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

/// Which divergences a replay goes on past (the model pinned to the
/// target's snapshot); any other ends it.
#[derive(Clone, Copy, Debug)]
pub enum Past<'a> {
    /// Known residue: these classes ([`super::rollup::class_key`]) at any
    /// step.
    Known(&'a BTreeSet<String>),
    /// These classes at these steps only: those the replay without a
    /// candidate went past ([`Replayed::past`]). A candidate that turns a
    /// departure into one that looks like residue does not pass.
    Exactly(&'a BTreeSet<(usize, String)>),
}

impl Past<'_> {
    fn allows(&self, at: usize, class: &str) -> bool {
        match self {
            Past::Known(k) => k.contains(class),
            Past::Exactly(s) => s.contains(&(at, class.to_string())),
        }
    }
}

/// What a replay met.
#[derive(Clone, Debug)]
pub struct Replayed {
    /// Every line sent, the parts after each pin included; the last is the
    /// step it ended at, if it diverged.
    pub lines: Vec<Line>,
    /// The divergences it went on past: the step (into the steps replayed)
    /// and the class.
    pub past: BTreeSet<(usize, String)>,
    /// Where its last part begins (`None`: it went past nothing).
    pub pin: Option<Pin>,
    /// The last part (the whole replay without a pin); its divergence,
    /// indexed in the part, is where the replay ended.
    pub part: Execution,
    /// It ended at a divergence it may go past but could not pin (state
    /// not compared, or the snapshot cannot pin).
    pub stuck: bool,
}

impl Replayed {
    /// Whether it ended at a divergence (one it could not go past included).
    pub fn diverges(&self) -> bool {
        self.part.divergence.is_some()
    }

    /// The step (into the steps replayed) and the divergence it ended at.
    pub fn divergence(&self) -> Option<(usize, &Divergence)> {
        let from = self.pin.as_ref().map_or(0, |p| p.from);
        self.part.divergence.as_ref().map(|(i, d)| (from + i, d))
    }
}

/// Replay `steps` on the reset target through a checker with `devs`, going
/// on past a divergence only where `past` allows it and the snapshot pins.
/// A target fault ends it.
pub fn replay(
    steps: &[Step],
    profile: &Profile,
    devs: &[&'static Deviation],
    target: &mut dyn Target,
    opts: ExecOptions,
    past: Past,
) -> Result<Replayed, TargetError> {
    let mut checker = Checker::with_deviations(profile.clone(), devs.to_vec());
    let mut part = execute(target, &mut checker, steps, Expect::Model, opts);
    let mut lines = Vec::new();
    let mut gone = BTreeSet::new();
    let mut last: Option<Pin> = None;
    let mut stuck = false;
    loop {
        if let Some(e) = part.fault.take() {
            return Err(e);
        }
        lines.extend(part.lines.iter().cloned());
        let from = last.as_ref().map_or(0, |p| p.from);
        let Some((i, d)) = &part.divergence else {
            break;
        };
        let (at, class) = (from + i, super::rollup::class_key(d));
        if !past.allows(at, &class) {
            break;
        }
        let pinned = match opts.check_state {
            true => {
                let snap = target.snap()?;
                state_of(&snap, &checker).ok().map(|s| (s, snap))
            }
            false => None,
        };
        let Some((state, snap)) = pinned else {
            stuck = true;
            break;
        };
        pin(&mut checker, state.clone());
        gone.insert((at, class));
        last = Some(Pin {
            from: at + 1,
            state,
            depth: last.as_ref().map_or(0, |p| p.depth + 1),
        });
        let rest = &steps[at + 1..];
        part = continue_stream(target, &mut checker, rest, Expect::Model, opts, Some(snap));
    }
    Ok(Replayed {
        lines,
        past: gone,
        pin: last,
        part,
        stuck,
    })
}

/// [`replay`]: whether it ends at a divergence (one it may go past but
/// could not pin included: the run is not green).
pub fn replay_diverges(
    steps: &[Step],
    profile: &Profile,
    devs: &[&'static Deviation],
    target: &mut dyn Target,
    opts: ExecOptions,
    past: Past,
) -> Result<bool, TargetError> {
    Ok(replay(steps, profile, devs, target, opts, past)?.diverges())
}
