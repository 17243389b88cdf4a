//! A trace is a function of its seed and config; `now` never decreases.

use gen::{generate, GenConfig, Generator};

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
    let mut g = Generator::new(5, &c);
    let steps: Vec<_> = (0..c.steps).map(|_| g.next_step()).collect();
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
        favour: gen::Kinds::NONE,
    };
    let t = generate(3, &c);
    assert_eq!(t.len(), 10);
    assert!(t[0].now >= 5_000 && t[0].now < 5_000 + 200_000);
}

/// FNV-1a (64-bit) of every step's `now`, kind and wire data: a digest that
/// does not depend on the Rust version or on `Debug` formats.
fn digest(traces: &[Vec<gen::Step>]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |bytes: &[u8]| {
        for b in bytes {
            h ^= u64::from(*b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    };
    for t in traces {
        for s in t {
            eat(&s.now.to_le_bytes());
            match &s.op {
                gen::Op::Tick => eat(b"tick"),
                gen::Op::Request(r) => {
                    eat(r.kind().as_bytes());
                    eat(model::wire::encode_request(r).to_string().as_bytes());
                }
            }
        }
    }
    h
}

/// The traces of these seeds are pinned: the generator's pools moved from
/// sorting the whole state at every step to an index kept step by step,
/// and the same seeds still give byte for byte the same traces (checked
/// then against the old code on 500 cases, with probes, left-out kinds and
/// baselines). A change here changes every seed's case, every golden
/// build and every recorded `--seed`: make it on purpose, then update the
/// digests.
#[test]
fn the_traces_of_a_seed_are_pinned() {
    let spec = GenConfig {
        steps: 120,
        ..GenConfig::default()
    };
    let probing = GenConfig {
        probe_pct: 25,
        ..spec
    };
    let traces = |cfg: &GenConfig, n: u64| -> Vec<_> {
        (0..n)
            .map(|s| generate(gen::case_seed(7, s), cfg))
            .collect()
    };
    assert_eq!(
        digest(&traces(&spec, 40)),
        2_812_119_474_137_765_963,
        "spec"
    );
    assert_eq!(
        digest(&traces(&probing, 20)),
        12_713_517_259_997_169_390,
        "probing"
    );
}

/// The generator is an endless stream of the same steps, however pulled.
#[test]
fn the_generator_streams_the_trace() {
    let c = cfg(50);
    let streamed: Vec<_> = Generator::new(3, &c).take(c.steps).collect();
    assert_eq!(streamed, generate(3, &c));
    let through: Vec<_> = gen::stream(3, &c, &gen::Stepper::spec()).collect();
    assert_eq!(through, streamed);
}
