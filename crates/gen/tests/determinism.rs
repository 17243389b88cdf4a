//! A trace is a function of its seed and config; `now` never decreases.

use gen::{generate, seeded_rng, GenConfig, Generator};

fn cfg(steps: usize) -> GenConfig {
    GenConfig {
        steps,
        ..GenConfig::default()
    }
}

#[test]
fn the_same_seed_gives_the_same_trace() {
    for seed in [0, 1, 42, u64::MAX] {
        assert_eq!(generate(seed, &cfg(80)), generate(seed, &cfg(80)));
    }
}

#[test]
fn different_seeds_give_different_traces() {
    let a = generate(1, &cfg(30));
    let b = generate(2, &cfg(30));
    assert_ne!(a, b);
}

#[test]
fn a_shorter_trace_is_a_prefix_of_a_longer_one() {
    let long = generate(9, &cfg(60));
    assert_eq!(generate(9, &cfg(25))[..], long[..25]);
}

#[test]
fn stepping_a_generator_is_generate() {
    let c = cfg(40);
    let mut rng = seeded_rng(5);
    let mut g = Generator::new(&c);
    let steps: Vec<_> = (0..c.steps).map(|_| g.next_step(&mut rng)).collect();
    assert_eq!(steps, generate(5, &c));
    assert_eq!(g.now(), steps.last().unwrap().now);
    assert_eq!(g.machine().state.config.retry_timeout, c.retry_timeout);
}

#[test]
fn now_never_decreases_and_jumps_are_bounded() {
    let c = cfg(60);
    for seed in 0..200 {
        let t = generate(seed, &c);
        assert_eq!(t.len(), c.steps);
        assert!(t[0].now >= c.start, "seed {seed}");
        for w in t.windows(2) {
            assert!(
                w[0].now <= w[1].now,
                "seed {seed}: {} > {}",
                w[0].now,
                w[1].now
            );
            // The long wait (15 minutes, plus up to a second past the
            // deadline) bounds a tick's cron catch-up to 15 occurrences.
            assert!(w[1].now - w[0].now <= 901_000, "seed {seed}: jump too long");
        }
    }
}

#[test]
fn the_config_is_honoured() {
    let c = GenConfig {
        steps: 10,
        retry_timeout: 1234,
        start: 5_000,
        kinds: gen::Kinds::ALL,
        probe_pct: 0,
    };
    let t = generate(3, &c);
    assert_eq!(t.len(), 10);
    assert!(t[0].now >= 5_000 && t[0].now < 5_000 + 200_000);
}
