//! A dense phase (`Generator::dense`, the first steps of half the steered
//! cases from the fifth on): the clock takes small steps or lands on the
//! nearest deadline's instants, the requests that build are favoured, and
//! when the phase ends the sharpened clock jumps again.

use gen::{GenConfig, Generator, Op, Stepper, BUILD};
use model::machine::Machine;
use model::types::Time;

/// The nearest deadline after `now`: armed timers and pending promises'
/// `timeoutAt`, as the generator's clock reads them.
fn nearest(m: &Machine, now: Time) -> Option<Time> {
    let armed = m.state.armed_within(now + 1, Time::MAX).first().copied();
    let pending = (m.state.promises())
        .filter(|p| p.state == model::types::PromiseState::Pending && p.timeout_at > now)
        .map(|p| p.timeout_at)
        .min();
    armed.into_iter().chain(pending).min()
}

/// A generator 40 steps into a case (a state with deadlines to land on).
fn warmed(seed: u64) -> Generator {
    let mut g = Generator::new(seed, &GenConfig::default()).sharpened();
    for _ in 0..40 {
        g.next_step();
    }
    g
}

#[test]
fn a_dense_phase_moves_the_clock_by_small_steps_or_onto_the_nearest_deadline() {
    let (mut small, mut edges) = (0, 0);
    for seed in 0..20 {
        let from = warmed(seed);
        let mut g = Generator::resume(
            from.machine().clone(),
            from.now(),
            &GenConfig::default(),
            &Stepper::spec(),
            seed,
        )
        .sharpened()
        .dense(30);
        for _ in 0..30 {
            let before = g.now();
            let t = nearest(g.machine(), before);
            let step = g.next_step();
            if step.now - before <= 200 {
                small += 1;
            } else {
                let t = t.expect("a jump lands on a deadline");
                assert!(
                    [t - 1, t, t + 1].contains(&step.now),
                    "seed {seed}: {before} -> {} (nearest {t})",
                    step.now
                );
                edges += 1;
            }
        }
        assert!(!g.in_dense_phase(), "the phase ends after its steps");
    }
    // One advance in seven or so lands on an edge (15%, less those within
    // 200 ms anyway): most of the phase is small steps, and some edges.
    assert!(
        small > 4 * edges && edges > 0,
        "{small} small steps, {edges} onto edges"
    );
}

/// Jumps of more than 200 ms in the 200 steps after `warm` steps of a
/// generator with a dense phase of `phase` steps.
fn jumps_after(phase: usize, warm: usize) -> usize {
    let mut g = warmed(3).dense(phase);
    for _ in 0..warm {
        g.next_step();
    }
    let mut last = g.now();
    (0..200)
        .filter(|_| {
            let now = g.next_step().now;
            let jumped = now - last > 200;
            last = now;
            jumped
        })
        .count()
}

#[test]
fn after_a_dense_phase_the_sharpened_clock_jumps_again() {
    let (after, endless) = (jumps_after(5, 5), jumps_after(usize::MAX, 5));
    assert!(
        after > 2 * endless,
        "{after} jumps after the phase, {endless} in an endless one"
    );
}

#[test]
fn an_aimed_dense_phase_counts_the_steps_taken_not_the_candidates_tried() {
    // Every branch and marker wanted: each aimed step tries up to twelve
    // candidates, each drawing its own `now`.
    let mut g = Generator::new(4, &GenConfig::default())
        .sharpened()
        .aimed_at(gen::Aim::unreached(|_| false))
        .dense(10);
    for i in 0..9 {
        g.next_step();
        assert!(g.in_dense_phase(), "the phase ended after {} steps", i + 1);
    }
    g.next_step();
    assert!(!g.in_dense_phase(), "the phase outlived its 10 steps");
}

#[test]
fn a_dense_phase_favours_the_requests_that_build() {
    let share = |dense: bool| {
        let (mut build, mut requests) = (0, 0);
        for seed in 0..20 {
            let g = Generator::new(seed, &GenConfig::default()).sharpened();
            let mut g = if dense { g.dense(50) } else { g };
            for _ in 0..50 {
                if let Op::Request(r) = g.next_step().op {
                    requests += 1;
                    build += usize::from(BUILD.contains(&r.kind()));
                }
            }
        }
        build as f64 / requests as f64
    };
    let (plain, dense) = (share(false), share(true));
    assert!(dense > 1.5 * plain, "plain {plain:.2}, dense {dense:.2}");
}
