//! Steered generation: the cases of a run grown from the traces that
//! reached something rare.
//!
//! A random case seldom builds the exact shape a one-line bug needs (a
//! tick exactly at a deadline, a suspend over settled and pending awaited
//! promises, a heartbeat over held and released tasks). Coverage-guided
//! fuzzers keep the inputs that reached new coverage and mutate them; a
//! [`Campaign`] does the same with case prefixes: after each case it
//! replays the case on its own model, and a step that took a branch or a
//! marker ([`model::marker`]) the run had taken at most [`RARE`] times
//! before keeps the prefix up to it in a small corpus. Some later cases
//! ([`STEER_PCT`] percent, drawn from the case's own seed) are grown from a
//! corpus entry instead of from nothing: its prefix cut at a random point
//! at or after its middle, then extended by a fresh generator resumed from
//! the state the prefix leaves, so the steps after the rare one vary. That
//! generator is sharpened ([`crate::sharpen`]) and aimed ([`crate::Aim`])
//! at every branch and marker the campaign has not reached yet.
//!
//! A case is a stream ([`CaseSteps`]): each step is chosen when it is
//! pulled, so a runner sends the first before the last exists and a case
//! of any length runs in bounded memory. The campaign learns from the
//! first [`LEARN_MAX`] steps of each case only (what a kept prefix can
//! be), read off the generator's own model as the steps are made, so
//! learning costs no second model.
//!
//! Case `i` depends on the cases before it, never on which of them a job
//! runs nor on how far the target let them go: a case handed back with
//! [`Campaign::learn`] is learned from its first [`LEARN_MAX`] steps
//! whether or not they were all run (the rest are generated then), and an
//! earlier case never handed back (another job's) is generated on the
//! model (no target is involved, tens of microseconds a step) before case
//! `i`. So `--case I` and `--partition K/N` give case `i` the same steps
//! as the unpartitioned run, and the N jobs learn the same corpus
//! independently.

use std::collections::BTreeMap;

use model::branch::Branch;
use model::machine::Machine;
use model::state::ServerConfig;

use crate::aim::Aim;
use crate::dice::{case_seed, seeded_rng, Dice};
use crate::generator::{Generator, Stepper};
use crate::{GenConfig, Step};

/// Percent of cases grown from the corpus once it holds an entry.
pub const STEER_PCT: u64 = 90;
/// A branch or marker taken at most this many times before in the run is
/// rare: the step that takes it keeps its prefix.
pub const RARE: u32 = 2;
/// The steps of a case the campaign learns from: a kept prefix is never
/// longer, so the corpus stays small however long the cases are.
pub const LEARN_MAX: usize = 512;
/// The cases the campaign learns from: later ones are grown from the
/// corpus as these left it. `--case I` and `--partition K/N` generate every
/// case before the ones they run, on the model, so without a horizon
/// `--case 18446744073709551615` would never start; with it, reaching any
/// case costs at most this many cases of at most [`LEARN_MAX`] steps.
pub const LEARN_CASES: u64 = 1024;
/// Percent of grown cases that start with a dense phase
/// ([`Generator::dense`]: small clock steps, building requests favoured),
/// from case [`DENSE_FROM`] on: the first cases of a run, where most bugs
/// are found, stay as they were (the median bug's steps to detection did
/// not move), and the later ones build what the sharp clock's jumps keep
/// from being built. Eight seeds of `conform mutants`, clean server: the
/// sum over the 96 bugs of their mean steps fell from 247,216 to 68,757.
const DENSE_PCT: u64 = 50;
/// The first case that may be dense.
const DENSE_FROM: u64 = 4;
/// Steps of a dense phase. A default case has 50 steps and a grown case
/// grows 13 to 31 of them past its prefix, so there the phase lasts to
/// the end of the case all but always (the jumps that meet what it built
/// come from the other cases, and from the ticks it draws); a longer case
/// (`--steps 1000`) sharpens after it. A phase of half the grown part
/// measured the same (114 / 71,931, markers 85.8).
const DENSE_STEPS: usize = 30;
/// Percent of grown cases, from case [`DENSE_FROM`] on, whose prefix has
/// one object's history cloned ([`crate::clone`]): a second element for
/// the lists a loop walks.
const CLONE_PCT: u64 = 30;
/// The most entries the corpus holds; past it the oldest make room.
const CORPUS_MAX: usize = 64;
/// The most entries one case adds.
const PER_CASE: usize = 3;
/// Salt of the steering dice, so a random case's own dice are the ones
/// [`crate::stream`] draws for its seed.
const STEER_SALT: u64 = 0x5EED_5EED_5EED_5EED;

/// The cases of one run, generated in order, each from the corpus the
/// earlier ones left.
#[derive(Clone, Debug)]
pub struct Campaign {
    seed: u64,
    cfg: GenConfig,
    stepper: Stepper,
    /// Kept prefixes, oldest first.
    corpus: Vec<Vec<Step>>,
    /// How often each branch and marker was taken by the cases so far.
    seen: BTreeMap<Branch, u32>,
    /// The index of the next case to learn from.
    next: u64,
    /// The aimed steps in a row that led nowhere, as the last aimed case
    /// learned from left them at its [`LEARN_MAX`]-th step or its end
    /// ([`Aim::pct`]).
    dry: u64,
}

/// The steps of one case, each generated when it is pulled: a kept
/// prefix first (for a grown case), then a generator's. It records what
/// its first [`LEARN_MAX`] steps take, for [`Campaign::learn`].
#[derive(Debug)]
pub struct CaseSteps {
    case: u64,
    prefix: std::vec::IntoIter<Step>,
    /// The branches and markers of each prefix step, in order.
    prefix_hits: std::vec::IntoIter<Vec<Branch>>,
    grown: Generator,
    /// Steps still to give.
    left: usize,
    /// The first [`LEARN_MAX`] steps given, and where each one's hits end
    /// in `hits`.
    seen: Vec<Step>,
    ends: Vec<usize>,
    hits: Vec<Branch>,
    /// The aim's dry run ([`Aim::dry`]) after the first [`LEARN_MAX`]
    /// steps, once they are given: what the campaign learns, not the
    /// count past them, which depends on how far the runner pulled.
    learned_dry: Option<u64>,
}

impl Iterator for CaseSteps {
    type Item = Step;

    fn next(&mut self) -> Option<Step> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let step = match self.prefix.next() {
            Some(s) => {
                self.hits
                    .extend(self.prefix_hits.next().unwrap_or_default());
                s
            }
            None => {
                let s = self.grown.next_step();
                self.grown.drain_hits_into(&mut self.hits);
                s
            }
        };
        if self.seen.len() < LEARN_MAX {
            self.seen.push(step.clone());
            self.ends.push(self.hits.len());
            if self.seen.len() == LEARN_MAX {
                // Nothing past this is learned: stop recording.
                self.grown.set_recording(false);
                self.learned_dry = self.grown.aim().map(Aim::dry);
            }
        }
        Some(step)
    }
}

impl CaseSteps {
    /// Which case these are.
    pub fn case(&self) -> u64 {
        self.case
    }

    /// Pull the steps a runner did not, up to [`LEARN_MAX`]: what the
    /// campaign learns from does not depend on where the case stopped.
    fn finish(&mut self) {
        while self.seen.len() < LEARN_MAX && self.next().is_some() {}
    }
}

impl Campaign {
    /// The campaign of run seed `seed`: case `i` is named by
    /// `case_seed(seed, i)`, generated under `cfg` with `stepper`.
    pub fn new(seed: u64, cfg: &GenConfig, stepper: &Stepper) -> Campaign {
        Campaign {
            seed,
            cfg: *cfg,
            stepper: stepper.clone(),
            corpus: Vec::new(),
            seen: BTreeMap::new(),
            next: 0,
            dry: 0,
        }
    }

    /// The steps of case `case`, as a stream: the same whichever cases
    /// were asked for before. Earlier cases not yet learned from (up to
    /// [`LEARN_CASES`]) are generated and learned from first; asking for an earlier case than
    /// the last learned starts the campaign over. Hand the stream back to
    /// [`Campaign::learn`] once it has run, or the next call generates it
    /// again to learn from it.
    pub fn case(&mut self, case: u64) -> CaseSteps {
        if case < self.next {
            *self = Campaign::new(self.seed, &self.cfg, &self.stepper);
        }
        while self.next < case.min(LEARN_CASES) {
            let steps = self.build(self.next);
            self.learn(steps);
        }
        self.build(case)
    }

    /// The steps of case `case`, all at once (tests, and cases short
    /// enough to hold).
    pub fn case_vec(&mut self, case: u64) -> Vec<Step> {
        let mut steps = self.case(case);
        let all: Vec<Step> = steps.by_ref().collect();
        self.learn(steps);
        all
    }

    /// Count what the first [`LEARN_MAX`] steps of `steps` take and keep
    /// the prefixes up to the rare ones: `steps` is the next case to learn
    /// from (another is ignored: it was learned already, or one before it
    /// was not and will be generated again).
    pub fn learn(&mut self, mut steps: CaseSteps) {
        if steps.case != self.next || self.next >= LEARN_CASES {
            return;
        }
        steps.finish();
        let mut kept = 0;
        let mut from = 0;
        let n = steps.seen.len();
        for (i, &to) in steps.ends.iter().enumerate() {
            let mut rare = false;
            for b in &steps.hits[from..to] {
                let c = self.seen.entry(*b).or_insert(0);
                rare |= *c < RARE;
                *c += 1;
            }
            from = to;
            if rare && kept < PER_CASE && i + 1 < n {
                if self.corpus.len() == CORPUS_MAX {
                    self.corpus.remove(0);
                }
                self.corpus.push(steps.seen[..=i].to_vec());
                kept += 1;
            }
        }
        // A case of at most LEARN_MAX steps ends before the snapshot.
        let dry = (steps.learned_dry).or_else(|| steps.grown.aim().map(Aim::dry));
        if let Some(d) = dry {
            self.dry = d;
        }
        self.next = steps.case + 1;
    }

    /// How many prefixes the corpus holds.
    pub fn corpus_len(&self) -> usize {
        self.corpus.len()
    }

    /// Case `case`, from the corpus as it stands.
    fn build(&self, case: u64) -> CaseSteps {
        let seed = case_seed(self.seed, case);
        let mut dice = seeded_rng(seed ^ STEER_SALT);
        let n = self.cfg.steps;
        let fresh = |grown: Generator| CaseSteps {
            case,
            prefix: Vec::new().into_iter(),
            prefix_hits: Vec::new().into_iter(),
            grown,
            left: n,
            seen: Vec::new(),
            ends: Vec::new(),
            hits: Vec::new(),
            learned_dry: None,
        };
        let parent = match dice.pick(&self.corpus) {
            Some(p) if n > 1 && dice.chance(STEER_PCT) => p,
            _ => {
                let mut g = Generator::with_stepper(seed, &self.cfg, self.stepper.clone());
                g.set_recording(true);
                return fresh(g);
            }
        };
        // At or after the middle of the prefix, and a quarter of the case
        // left at least to grow into.
        let hi = parent.len().min(n - n.div_ceil(4)).max(1);
        let lo = hi.div_ceil(2).max(1);
        let cut = dice.range(lo as u64, hi as u64) as usize;
        let empty = Machine::new(ServerConfig {
            retry_timeout: self.cfg.retry_timeout,
        });
        let mut prefix = parent[..cut].to_vec();
        if case >= DENSE_FROM && dice.chance(CLONE_PCT) {
            let cloned =
                crate::clone::clone_history(&prefix, empty.clone(), &self.stepper, &mut dice);
            if let Some(c) = cloned.filter(|c| c.len() <= hi) {
                prefix = c;
            }
        }
        let mut m = empty;
        let mut prefix_hits = Vec::with_capacity(cut);
        for s in &prefix {
            self.stepper.step(&mut m, s);
            let mut h = Vec::new();
            m.drain_hits_into(&mut h);
            prefix_hits.push(h);
        }
        let now = prefix.last().map_or(self.cfg.start, |s| s.now);
        let history = if case >= DENSE_FROM {
            prefix.clone()
        } else {
            Vec::new()
        };
        let aim = Aim::unreached(|b| self.seen.contains_key(b)).with_dry(self.dry);
        let mut grown = Generator::resume(m, now, &self.cfg, &self.stepper, seed)
            .sharpened()
            .aimed_at(aim);
        if case >= DENSE_FROM {
            grown = grown.aimed_further(history);
            if dice.chance(DENSE_PCT) {
                grown = grown.dense(DENSE_STEPS);
            }
        }
        grown.set_recording(true);
        CaseSteps {
            prefix: prefix.into_iter(),
            prefix_hits: prefix_hits.into_iter(),
            ..fresh(grown)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> GenConfig {
        GenConfig {
            steps: 40,
            ..GenConfig::default()
        }
    }

    #[test]
    fn the_first_cases_are_never_dense_and_about_half_the_later_grown_ones_are() {
        let mut c = Campaign::new(5, &cfg(), &Stepper::spec());
        let (mut dense, mut later) = (0, 0);
        for i in 0..60 {
            let steps = c.case(i);
            let d = steps.grown.in_dense_phase();
            if i < DENSE_FROM {
                assert!(!d, "case {i} is dense");
            } else {
                later += 1;
                dense += usize::from(d);
            }
            c.learn(steps);
        }
        // Half of the grown ones (90% of cases): about 25 of 56.
        assert!((15..=40).contains(&dense), "{dense} dense of {later}");
    }

    /// The dry run of aimed steps a learned case ends with is where the
    /// next steered case's aim starts; a random case, which does not aim,
    /// leaves it as it was.
    #[test]
    fn the_aims_dry_run_is_carried_from_case_to_case() {
        let mut c = Campaign::new(7, &cfg(), &Stepper::spec());
        let (mut aimed, mut random, mut dry_seen) = (0, 0, false);
        for i in 0..40 {
            let before = c.dry;
            let mut steps = c.case(i);
            let start = steps.grown.aim().map(Aim::dry);
            steps.by_ref().for_each(drop);
            let end = steps.grown.aim().map(Aim::dry);
            c.learn(steps);
            match (start, end) {
                (Some(s), Some(e)) => {
                    assert_eq!(s, before, "case {i} starts from the campaign's count");
                    assert_eq!(c.dry, e, "case {i}'s count is learned");
                    aimed += 1;
                    dry_seen |= e > 0;
                }
                _ => {
                    assert_eq!(c.dry, before, "random case {i} leaves the count");
                    random += 1;
                }
            }
        }
        assert!(
            aimed > 10 && random > 0 && dry_seen,
            "{aimed} aimed, {random} random"
        );
    }

    /// Past [`LEARN_MAX`] steps an aimed case keeps counting its dry run,
    /// but the campaign learns the count at [`LEARN_MAX`]: a later case is
    /// the same whether the earlier ones ran whole or were generated only
    /// as far as learning needs (a partition's job, a stopped case).
    #[test]
    fn a_long_case_is_the_same_whichever_cases_came_before() {
        let long = GenConfig {
            steps: LEARN_MAX + 60,
            ..GenConfig::default()
        };
        let mut whole = Campaign::new(11, &long, &Stepper::spec());
        let mut counts = Vec::new();
        for i in 0..4 {
            let mut steps = whole.case(i);
            steps.by_ref().for_each(drop);
            counts.push((steps.learned_dry, steps.grown.aim().map(Aim::dry)));
            whole.learn(steps);
        }
        // A job that runs case 4 alone generates cases 0-3 only as far as
        // learning needs, and must start case 4 from the same count.
        let mut job = Campaign::new(11, &long, &Stepper::spec());
        let first = job.case(4);
        assert_eq!(job.dry, whole.dry);
        drop(first);
        assert_eq!(job.case_vec(4), whole.case_vec(4));
        assert!(
            counts.iter().any(|(at, end)| at.is_some() && at != end),
            "no case counted past LEARN_MAX: {counts:?}"
        );
    }

    #[test]
    fn a_case_is_the_same_whichever_cases_came_before() {
        let mut all = Campaign::new(9, &cfg(), &Stepper::spec());
        let every: Vec<Vec<Step>> = (0..12).map(|i| all.case_vec(i)).collect();
        // A job of a partition asks only for its own cases, in order.
        let mut job = Campaign::new(9, &cfg(), &Stepper::spec());
        for i in (2..12).step_by(3) {
            assert_eq!(job.case_vec(i), every[i as usize], "case {i}");
        }
        // Asking again for an earlier case starts over, to the same steps.
        assert_eq!(job.case_vec(4), every[4]);
        assert!(all.corpus_len() > 0, "rare steps keep their prefixes");
    }

    #[test]
    fn a_case_stopped_early_is_learned_as_if_it_ran_whole() {
        let mut whole = Campaign::new(9, &cfg(), &Stepper::spec());
        let every: Vec<Vec<Step>> = (0..12).map(|i| whole.case_vec(i)).collect();
        // A runner that stops each case at a divergence pulls only a few.
        let mut stopped = Campaign::new(9, &cfg(), &Stepper::spec());
        for (i, want) in every.iter().enumerate() {
            let mut steps = stopped.case(i as u64);
            let pulled: Vec<Step> = steps.by_ref().take(1 + i % 5).collect();
            assert_eq!(pulled[..], want[..pulled.len()], "case {i}");
            stopped.learn(steps);
        }
        assert_eq!(stopped.corpus, whole.corpus);
        assert_eq!(
            stopped.seen, whole.seen,
            "what the aim reads is learned alike"
        );
    }

    #[test]
    fn a_case_past_the_learning_horizon_is_reached_in_bounded_work() {
        let one = GenConfig {
            steps: 3,
            ..GenConfig::default()
        };
        let mut c = Campaign::new(2, &one, &Stepper::spec());
        let last: Vec<Step> = c.case(u64::MAX).collect();
        assert_eq!(last.len(), 3);
        assert_eq!(c.next, LEARN_CASES);
        // Past the horizon nothing more is learned, and a case is the same
        // whichever case was asked for before it.
        let corpus = c.corpus.clone();
        let a = c.case_vec(LEARN_CASES + 7);
        assert_eq!(c.corpus, corpus);
        let mut fresh = Campaign::new(2, &one, &Stepper::spec());
        assert_eq!(fresh.case_vec(LEARN_CASES + 7), a);
    }

    #[test]
    fn an_endless_case_streams_and_is_learned_from_its_start() {
        let endless = GenConfig {
            steps: usize::MAX,
            ..GenConfig::default()
        };
        let mut c = Campaign::new(4, &endless, &Stepper::spec());
        let mut steps = c.case(0);
        assert_eq!(steps.by_ref().take(100).count(), 100);
        c.learn(steps);
        assert!(c.corpus.iter().all(|p| p.len() <= LEARN_MAX));
        let next: Vec<Step> = c.case(1).take(10).collect();
        assert_eq!(next.len(), 10);
    }

    #[test]
    fn grown_cases_start_with_a_kept_prefix_and_stay_well_formed() {
        let mut c = Campaign::new(3, &cfg(), &Stepper::spec());
        let mut grown = 0;
        for i in 0..20 {
            let random = crate::generate(case_seed(3, i), &cfg());
            let corpus = c.corpus.clone();
            let steps = c.case_vec(i);
            assert_eq!(steps.len(), cfg().steps);
            assert!(steps.windows(2).all(|w| w[0].now <= w[1].now));
            let mut m = Machine::new(ServerConfig {
                retry_timeout: cfg().retry_timeout,
            });
            for s in &steps {
                assert!(crate::well_formed(s, &m).is_ok(), "case {i}: {s:?}");
                crate::apply(&mut m, s);
            }
            if steps != random {
                assert!(corpus.iter().any(|p| p.starts_with(&steps[..1])));
                grown += 1;
            }
        }
        assert!(grown > 0, "some cases are grown from the corpus");
    }
}
