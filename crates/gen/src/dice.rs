//! The few random choices the generator makes, over proptest's `TestRng`,
//! and the derivation of a ChaCha seed from a `u64` (so a trace is named by
//! one number and reproduces on every platform and proptest version).

use proptest::prelude::Rng;
use proptest::test_runner::{RngAlgorithm, TestRng};

use crate::index::Id;
use crate::ranked::Seq;

/// The ChaCha `TestRng` that [`crate::generate`] uses for `seed`: its 32
/// seed bytes are four splitmix64 outputs from `seed`.
pub fn seeded_rng(seed: u64) -> TestRng {
    let mut state = seed;
    let mut bytes = [0u8; 32];
    for chunk in bytes.chunks_mut(8) {
        state = state.wrapping_add(GOLDEN_GAMMA);
        chunk.copy_from_slice(&mix64(state).to_le_bytes());
    }
    TestRng::from_seed(RngAlgorithm::ChaCha, &bytes)
}

/// SplitMix64's increment.
const GOLDEN_GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

/// SplitMix64's output function.
fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The seed of case `case` of a run seeded `seed` (SplitMix64 of both), so
/// `--seed S --case I` reproduces one case of a run alone.
pub fn case_seed(seed: u64, case: u64) -> u64 {
    mix64(seed ^ case.wrapping_add(1).wrapping_mul(GOLDEN_GAMMA))
}

/// Choice helpers on a `TestRng`.
pub(crate) trait Dice {
    /// Uniform in `0..n` (`n > 0`).
    fn below(&mut self, n: u64) -> u64;
    /// Uniform in `lo..=hi`.
    fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.below(hi - lo + 1)
    }
    /// True with probability `pct` percent.
    fn chance(&mut self, pct: u64) -> bool {
        self.below(100) < pct
    }
    /// A uniformly chosen element, `None` when empty.
    fn pick<'a, T>(&mut self, xs: &'a [T]) -> Option<&'a T> {
        if xs.is_empty() {
            None
        } else {
            Some(&xs[self.below(xs.len() as u64) as usize])
        }
    }
    /// A uniformly chosen element of a sorted sequence read by position,
    /// `None` when empty: the same draw as [`Dice::pick`] over it as a slice.
    fn pick_from<S: Seq>(&mut self, xs: &S) -> Option<S::Item> {
        match xs.len() {
            0 => None,
            n => Some(xs.nth(self.below(n as u64) as usize)),
        }
    }
    /// [`Dice::pick_from`] over ids, as an owned id.
    fn pick_id<'a, S: Seq<Item = &'a Id>>(&mut self, xs: &S) -> Option<String> {
        self.pick_from(xs).map(|id| id.to_string())
    }
    /// An element chosen with probability proportional to its weight.
    fn weighted<T: Copy>(&mut self, xs: &[(u64, T)]) -> T {
        let total: u64 = xs.iter().map(|(w, _)| w).sum();
        let mut r = self.below(total.max(1));
        for (w, x) in xs {
            if r < *w {
                return *x;
            }
            r -= w;
        }
        xs[xs.len() - 1].1
    }
}

impl Dice for TestRng {
    fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }
}

/// True with probability `pct` percent: the generator's own dice, for
/// callers outside the crate that draw from the same seeded stream (a
/// concurrent run's crash schedule).
pub fn chance(rng: &mut TestRng, pct: u64) -> bool {
    Dice::chance(rng, pct)
}

/// Uniform in `0..n` (`n > 0`), as [`chance`].
pub fn below(rng: &mut TestRng, n: u64) -> u64 {
    Dice::below(rng, n)
}
