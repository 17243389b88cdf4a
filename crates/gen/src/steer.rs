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
//! the state the prefix leaves, so the steps after the rare one vary.
//!
//! Case `i` depends on the cases before it, never on which of them a job
//! runs: the campaign generates every earlier case on its model (no target
//! is involved, a few microseconds a step) before case `i`, so `--case I`
//! and `--partition K/N` give case `i` the same steps as the unpartitioned
//! run, and the N jobs learn the same corpus independently.

use std::collections::BTreeMap;

use model::branch::Branch;
use model::machine::Machine;
use model::state::ServerConfig;

use crate::dice::{case_seed, seeded_rng, Dice};
use crate::generator::{Generator, Stepper};
use crate::{GenConfig, Step};

/// Percent of cases grown from the corpus once it holds an entry.
pub const STEER_PCT: u64 = 50;
/// A branch or marker taken at most this many times before in the run is
/// rare: the step that takes it keeps its prefix.
pub const RARE: u32 = 2;
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
        }
    }

    /// The steps of case `case`: the same whichever cases were asked for
    /// before (earlier ones are generated and learned from first; asking
    /// for an earlier case than the last starts the campaign over).
    pub fn case(&mut self, case: u64) -> Vec<Step> {
        if case < self.next {
            *self = Campaign::new(self.seed, &self.cfg, &self.stepper);
        }
        while self.next < case {
            let steps = self.build(self.next);
            self.learn(&steps);
            self.next += 1;
        }
        let steps = self.build(case);
        self.learn(&steps);
        self.next = case + 1;
        steps
    }

    /// How many prefixes the corpus holds.
    pub fn corpus_len(&self) -> usize {
        self.corpus.len()
    }

    /// Case `case`, from the corpus as it stands.
    fn build(&self, case: u64) -> Vec<Step> {
        let seed = case_seed(self.seed, case);
        let mut dice = seeded_rng(seed ^ STEER_SALT);
        let n = self.cfg.steps;
        let parent = match dice.pick(&self.corpus) {
            Some(p) if n > 1 && dice.chance(STEER_PCT) => p,
            _ => return crate::generate_with(seed, &self.cfg, &self.stepper),
        };
        // At or after the middle of the prefix, and a quarter of the case
        // left at least to grow into.
        let hi = parent.len().min(n - n.div_ceil(4)).max(1);
        let lo = hi.div_ceil(2).max(1);
        let cut = dice.range(lo as u64, hi as u64) as usize;
        let prefix = &parent[..cut];
        let mut m = Machine::new(ServerConfig {
            retry_timeout: self.cfg.retry_timeout,
        });
        for s in prefix {
            self.stepper.step(&mut m, s);
        }
        m.clear_hits();
        let now = prefix.last().map_or(self.cfg.start, |s| s.now);
        let grown = Generator::resume(m, now, &self.cfg, &self.stepper, seed).sharpened();
        prefix.iter().cloned().chain(grown.take(n - cut)).collect()
    }

    /// Count what `steps` take and keep the prefixes up to the rare steps.
    fn learn(&mut self, steps: &[Step]) {
        let mut m = Machine::new(ServerConfig {
            retry_timeout: self.cfg.retry_timeout,
        });
        let mut kept = 0;
        for (i, s) in steps.iter().enumerate() {
            self.stepper.step(&mut m, s);
            let mut rare = false;
            for b in m.take_hits().into_iter().chain(m.take_marks()) {
                let n = self.seen.entry(b).or_insert(0);
                rare |= *n < RARE;
                *n += 1;
            }
            if rare && kept < PER_CASE && i + 1 < steps.len() {
                if self.corpus.len() == CORPUS_MAX {
                    self.corpus.remove(0);
                }
                self.corpus.push(steps[..=i].to_vec());
                kept += 1;
            }
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
    fn a_case_is_the_same_whichever_cases_came_before() {
        let mut all = Campaign::new(9, &cfg(), &Stepper::spec());
        let every: Vec<Vec<Step>> = (0..12).map(|i| all.case(i)).collect();
        // A job of a partition asks only for its own cases, in order.
        let mut job = Campaign::new(9, &cfg(), &Stepper::spec());
        for i in (2..12).step_by(3) {
            assert_eq!(job.case(i), every[i as usize], "case {i}");
        }
        // Asking again for an earlier case starts over, to the same steps.
        assert_eq!(job.case(4), every[4]);
        assert!(all.corpus_len() > 0, "rare steps keep their prefixes");
    }

    #[test]
    fn grown_cases_start_with_a_kept_prefix_and_stay_well_formed() {
        let mut c = Campaign::new(3, &cfg(), &Stepper::spec());
        let mut grown = 0;
        for i in 0..20 {
            let random = crate::generate(case_seed(3, i), &cfg());
            let corpus = c.corpus.clone();
            let steps = c.case(i);
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
