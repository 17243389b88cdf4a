//! How `now` advances between steps.
//!
//! Mostly by small steps (0–200 ms), so requests race each other inside one
//! lease; sometimes exactly onto the nearest deadline or one millisecond
//! before it (the off-by-one boundary); sometimes straight past the nearest armed deadline (a promise
//! timeout, a retry, a lease, a schedule fire) so that the next tick fires
//! it; sometimes past a pending promise's `timeoutAt` so that reads, guards
//! and heartbeats see an expired promise no tick has settled yet. Jumps are
//! capped at [`MAX_JUMP`], and now and then at `LONG_JUMP` (a wait past a
//! deadline minutes away, where a suspended task's promise lies): with
//! every-minute crons that bounds the catch-up work one tick asks of a
//! server to a few occurrences, at most 15.

use model::types::Time;
use proptest::test_runner::TestRng;

use crate::dice::Dice;
use crate::pools::World;

/// The longest single advance of `now` (ms).
pub(crate) const MAX_JUMP: u64 = 180_000;
/// The longest wait, now and then: a task's deadline is minutes away.
const LONG_JUMP: u64 = 900_000;

/// Every armed deadline and every pending promise's `timeoutAt`, strictly
/// after `now` and within [`MAX_JUMP`], ascending: what [`advance`] and
/// [`advance_sharp`] choose from. A function of the model (its state and
/// the index kept in step with it) and `now` only, so the generator
/// computes it once for every candidate an aimed step draws from the same
/// `now`.
pub(crate) fn horizon(w: World, now: Time) -> Vec<Time> {
    horizon_within(w, now, MAX_JUMP)
}

/// [`horizon`] within `cap` of `now`: windows of the ordered deadline
/// indexes, never a scan of the state.
fn horizon_within(w: World, now: Time, cap: Time) -> Vec<Time> {
    let s = &w.m.state;
    let Some(from) = now.checked_add(1) else {
        return Vec::new();
    };
    let until = now.saturating_add(cap);
    let mut v = s.armed_within(from, until);
    v.extend(w.ix.pending_within(from, until).map(|(at, _)| at));
    v.sort_unstable();
    v.dedup();
    v
}

/// The `now` of the next step of a sharpened generator (a case the
/// steering grows, [`crate::Campaign`]): now and then exactly at, one
/// before or one past any deadline ahead, not only the nearest, so the
/// request or tick after it meets that deadline on an off-by-one's instant;
/// otherwise [`advance`].
/// `ahead` is [`horizon`]`(w, now)`.
pub(crate) fn advance_sharp(w: World, now: Time, ahead: &[Time], rng: &mut TestRng) -> Time {
    if rng.chance(SHARP_PCT) {
        if let Some(&t) = rng.pick(ahead) {
            return match rng.below(3) {
                0 => t,
                1 => (t - 1).max(now),
                _ => t + 1,
            };
        }
    }
    advance(w, now, ahead, rng)
}

/// The `now` of the next step in a dense phase
/// ([`crate::Generator::dense`]): small steps (0–200 ms), and now and then
/// onto an instant of the nearest deadline (at, one before, one past), so
/// what the phase builds outlives it while the nearest boundaries are
/// still met. `ahead` is [`horizon`]`(w, now)`.
pub(crate) fn advance_dense(now: Time, ahead: &[Time], rng: &mut TestRng) -> Time {
    match ahead.first() {
        Some(&t) if rng.chance(DENSE_EDGE_PCT) => match rng.below(3) {
            0 => t,
            1 => (t - 1).max(now),
            _ => t + 1,
        },
        _ => now + rng.below(201),
    }
}

/// Percent of a dense phase's advances onto its nearest deadline.
const DENSE_EDGE_PCT: u64 = 15;

/// Percent of a sharpened generator's advances onto a deadline's instants.
const SHARP_PCT: u64 = 35;

/// The `now` of the next step; `ahead` is [`horizon`]`(w, now)`.
pub(crate) fn advance(w: World, now: Time, ahead: &[Time], rng: &mut TestRng) -> Time {
    let small = now + rng.below(201);
    match rng.below(100) {
        0..=69 => small,
        // Exactly on the nearest deadline: where `<` and `≤` part ways (a
        // read, a settle, an acquire at `now = timeoutAt`).
        70..=72 => ahead.first().map_or(small, |&t| t),
        73..=74 => rng.pick(ahead).map_or(small, |&t| t),
        // Just past the nearest deadline: the next tick fires exactly it.
        75..=79 => ahead.first().map_or(small, |&t| t + 1 + rng.below(50)),
        // Just before the nearest deadline: the other side of the boundary,
        // and where a server that fires early shows it.
        80..=82 => ahead.first().map_or(small, |&t| t - 1),
        83..=85 => ahead
            .first()
            .map_or(small, |&t| t.saturating_sub(1 + rng.below(20)).max(now)),
        // Past a random deadline, firing (or projecting) several at once.
        86..=94 => rng.pick(ahead).map_or(small, |&t| t + rng.below(1_000)),
        // The long wait: past a deadline minutes away (a task's own
        // promise, while it is suspended), several coming due at once.
        95 if rng.chance(50) => {
            let far = horizon_within(w, now, LONG_JUMP);
            rng.pick(&far).map_or(small, |&t| t + 1 + rng.below(1_000))
        }
        // Onto the next whole minute: where a cron occurrence falls, so a
        // schedule created exactly on one shows whether its first run is
        // strictly after now.
        95 => (now / 60_000 + 1) * 60_000,
        // Seconds to a minute: crons and short leases come due.
        _ => now + rng.range(1_000, 60_000),
    }
}
