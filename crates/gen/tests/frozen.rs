//! The epoch API a concurrent run drives: a generator resumed from a state
//! another run reached, its clock moved between epochs, and steps taken at
//! a frozen `now` in between.

use gen::{well_formed, GenConfig, Generator, Op, Stepper};

fn cfg() -> GenConfig {
    GenConfig {
        steps: 0,
        probe_pct: 10,
        ..GenConfig::default()
    }
}

/// A state some run reached: 150 generated steps.
fn reached(seed: u64) -> Generator {
    let mut g = Generator::new(seed, &cfg());
    for _ in 0..150 {
        g.next_step();
    }
    g
}

/// Within an epoch `now` stays where it is, and every request is one the
/// servers' validation accepts (probes excepted, as in any run), on the
/// state its model has at that moment.
#[test]
fn step_frozen_keeps_now_and_is_well_formed() {
    let mut requests = 0;
    for seed in 0..20 {
        let from = reached(seed);
        let mut g = Generator::resume(
            from.machine().clone(),
            from.now(),
            &cfg(),
            &Stepper::spec(),
            seed,
        );
        for epoch in 0..12 {
            let now = g.advance_clock();
            assert_eq!(g.now(), now, "advance_clock applies the `now` it returns");
            for client in 0..6 {
                let before = g.machine().clone();
                let step = g.step_frozen();
                assert_eq!(step.now, now, "seed {seed} epoch {epoch} client {client}");
                assert_eq!(g.now(), now, "seed {seed} epoch {epoch} client {client}");
                if gen::is_probe(&step, &before) {
                    continue;
                }
                requests += usize::from(matches!(step.op, Op::Request(_)));
                if let Err(e) = well_formed(&step, &before) {
                    panic!("seed {seed} epoch {epoch} client {client}: {e}: {step:?}");
                }
            }
        }
    }
    assert!(
        requests > 500,
        "mostly requests, not ticks: {requests} of 1440"
    );
}

/// The clock never goes back, and a frozen step is applied to the
/// generator's own model: the model after it is the one stepping a copy
/// of the state before through the same step gives.
#[test]
fn frozen_steps_are_applied_and_the_clock_moves_forward() {
    let from = reached(4);
    let mut g = Generator::resume(
        from.machine().clone(),
        from.now(),
        &cfg(),
        &Stepper::spec(),
        4,
    );
    let mut last = g.now();
    for _ in 0..30 {
        let now = g.advance_clock();
        assert!(now >= last);
        last = now;
        for _ in 0..3 {
            let mut copy = g.machine().clone();
            let step = g.step_frozen();
            gen::apply(&mut copy, &step);
            assert_eq!(copy.state, g.machine().state);
        }
    }
}

/// Resumed with the same machine, `now` and seed, a generator takes the
/// same steps: the dice live inside it.
#[test]
fn a_resumed_generator_is_deterministic_per_seed() {
    let from = reached(9);
    let run = || {
        let mut g = Generator::resume(
            from.machine().clone(),
            from.now(),
            &cfg(),
            &Stepper::spec(),
            77,
        );
        let mut steps = Vec::new();
        for _ in 0..10 {
            g.advance_clock();
            for _ in 0..4 {
                steps.push(g.step_frozen());
            }
        }
        steps
    };
    assert_eq!(run(), run());
}

/// `new` is `resume` of an empty machine at the start: the same steps.
#[test]
fn resuming_an_empty_machine_is_a_new_generator() {
    let c = GenConfig {
        steps: 60,
        ..GenConfig::default()
    };
    let machine = model::machine::Machine::new(model::state::ServerConfig {
        retry_timeout: c.retry_timeout,
    });
    let resumed: Vec<_> = Generator::resume(machine, c.start, &c, &Stepper::spec(), 5)
        .take(c.steps)
        .collect();
    assert_eq!(resumed, gen::generate(5, &c));
}

/// A concurrent run may hand a generator to another thread.
#[test]
fn a_generator_can_move_across_threads() {
    fn send_and_sync<T: Send + Sync>() {}
    send_and_sync::<Generator>();
}
