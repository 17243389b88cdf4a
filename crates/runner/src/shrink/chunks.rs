//! Delta debugging, the one implementation the shrinker and the golden
//! corpus builder share: remove chunks of steps, halves first, down to
//! single steps, keeping every removal the caller accepts.

use gen::Step;

/// Remove chunks of `steps`, halves first down to single steps. `accept`
/// gets the current steps and a candidate with one chunk removed, and
/// returns the new current steps when it keeps the candidate (possibly
/// repaired or cut), `None` to reject it.
pub fn delete_chunks(
    steps: Vec<Step>,
    mut accept: impl FnMut(&[Step], Vec<Step>) -> Option<Vec<Step>>,
) -> Vec<Step> {
    let mut best = steps;
    let mut chunk = (best.len() / 2).max(1);
    loop {
        let mut i = 0;
        while i < best.len() {
            let mut cand = best.clone();
            cand.drain(i..(i + chunk).min(best.len()));
            match accept(&best, cand) {
                Some(kept) => best = kept,
                None => i += chunk,
            }
        }
        if chunk == 1 {
            return best;
        }
        chunk /= 2;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gen::Op;

    fn ticks(n: u64) -> Vec<Step> {
        (0..n).map(|now| Step { now, op: Op::Tick }).collect()
    }

    #[test]
    fn keeps_only_what_the_caller_needs() {
        // Keep candidates that still hold the steps at 3 and 7.
        let need = |s: &[Step]| [3, 7].iter().all(|t| s.iter().any(|x| x.now == *t));
        let out = delete_chunks(ticks(10), |_, c| need(&c).then_some(c));
        assert_eq!(out.iter().map(|s| s.now).collect::<Vec<_>>(), [3, 7]);
    }
}
