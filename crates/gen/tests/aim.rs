//! An aimed generator (`Generator::aimed_at`, what a steered case of a
//! campaign is) takes, among the steps it could draw, one that reaches
//! what is still wanted: it reaches more of the markers than the same
//! generator unaimed, and stays a function of its seed.

use std::collections::BTreeSet;

use gen::{Aim, GenConfig, Generator, Step, Stepper};
use model::api::*;
use model::branch::Branch;
use model::machine::Machine;
use model::marker;
use model::state::ServerConfig;
use model::view::StateView;

fn markers(steps: &[Step]) -> BTreeSet<Branch> {
    let mut m = Machine::new(ServerConfig::default());
    let mut out = BTreeSet::new();
    for s in steps {
        gen::apply(&mut m, s);
        out.extend(m.take_marks());
    }
    out
}

fn case(seed: u64, aimed: bool) -> Vec<Step> {
    let g = Generator::new(seed, &GenConfig::default()).sharpened();
    let g = if aimed {
        g.aimed_at(Aim::new(marker::ALL.iter().copied()))
    } else {
        g
    };
    g.take(100).collect()
}

#[test]
fn an_aimed_generator_reaches_more_markers_than_the_same_one_unaimed() {
    let (mut plain, mut aimed) = (BTreeSet::new(), BTreeSet::new());
    for seed in 1..=10 {
        plain.extend(markers(&case(seed, false)));
        aimed.extend(markers(&case(seed, true)));
    }
    eprintln!(
        "markers of 10 cases of 100 steps: plain {}, aimed {}",
        plain.len(),
        aimed.len()
    );
    assert!(
        aimed.len() > plain.len() + 5,
        "plain {plain:?}\naimed {aimed:?}"
    );
}

#[test]
fn an_aimed_case_is_a_function_of_its_seed() {
    assert_eq!(case(7, true), case(7, true));
}

/// The candidates an aimed step tries are undone: the generator's model
/// after an aimed case is the state its steps make on a fresh model, and
/// the branches it recorded are the ones they take.
#[test]
fn an_aimed_generators_trials_leave_no_trace() {
    for seed in 1..=5 {
        let mut g = Generator::new(seed, &GenConfig::default())
            .sharpened()
            .aimed_at(Aim::new(marker::ALL.iter().copied()));
        g.set_recording(true);
        let mut m = Machine::new(ServerConfig::default());
        for _ in 0..100 {
            let step = g.next_step();
            gen::apply(&mut m, &step);
            let mut took = Vec::new();
            g.drain_hits_into(&mut took);
            let mut want = m.take_hits();
            want.extend(m.take_marks());
            assert_eq!(took, want, "seed {seed}: {step:?}");
        }
        assert_eq!(
            StateView::of(&g.machine().state),
            StateView::of(&m.state),
            "seed {seed}"
        );
    }
}

/// The same for a generator that aims further: its retimed, walked and
/// cloned trials are undone too, and the plans it takes are steps it
/// returns, so its model is the state its steps make.
#[test]
fn an_aimed_further_generators_trials_leave_no_trace() {
    for seed in 1..=5 {
        let mut g = Generator::new(seed, &GenConfig::default())
            .sharpened()
            .aimed_at(Aim::new(marker::ALL.iter().copied()))
            .aimed_further(Vec::new());
        let mut m = Machine::new(ServerConfig::default());
        for _ in 0..200 {
            gen::apply(&mut m, &g.next_step());
        }
        assert_eq!(
            StateView::of(&g.machine().state),
            StateView::of(&m.state),
            "seed {seed}"
        );
    }
}

const T0: u64 = 1_700_000_000_000;

fn at(now: u64, r: Request) -> Step {
    Step {
        now,
        op: gen::Op::Request(r),
    }
}

/// Promise `id` due ten minutes after `T0`, with a task address if
/// `target`.
fn create(id: &str, target: bool) -> PromiseCreateReq {
    PromiseCreateReq {
        id: id.into(),
        timeout_at: T0 + 600_000,
        param: Default::default(),
        tags: if target {
            [("resonate:target".to_string(), "poll://any@w".to_string())].into()
        } else {
            Default::default()
        },
    }
}

/// The model after `history`.
fn built(history: &[Step]) -> Machine {
    let mut m = Machine::new(ServerConfig::default());
    for s in history {
        gen::apply(&mut m, s);
    }
    m
}

/// Task `a.1` suspended on pending `a.2`, the only awaiter.
fn one_suspended_awaiter() -> Vec<Step> {
    vec![
        at(T0, Request::PromiseCreate(create("a.2", false))),
        at(
            T0,
            Request::TaskCreate(TaskCreateReq {
                pid: "p1".into(),
                ttl: 60_000,
                action: create("a.1", true),
            }),
        ),
        at(
            T0 + 5,
            Request::TaskSuspend(TaskSuspendReq {
                id: "a.1".into(),
                version: 1,
                actions: vec![PromiseRegisterCallbackReq {
                    awaited: "a.2".into(),
                    awaiter: "a.1".into(),
                }],
            }),
        ),
    ]
}

/// The markers `steps` reach after `history`.
fn reached_after(history: &[Step], steps: &[Step]) -> BTreeSet<Branch> {
    let mut m = built(history);
    m.take_marks();
    let mut out = BTreeSet::new();
    for s in steps {
        gen::apply(&mut m, s);
        out.extend(m.take_marks());
    }
    out
}

/// A list of one suspended awaiter and a wanted "all" of several: the
/// generator clones the awaiter's history and settles the promise, in
/// the three steps of its plan (create, suspend, settle).
#[test]
fn an_aimed_further_generator_clones_an_awaiter_for_the_settlements_all() {
    let history = one_suspended_awaiter();
    for seed in 1..=5 {
        let m = built(&history);
        let all = marker::PROMISE_SETTLE_AWAITERS_RESUMED_ALL;
        let g = Generator::resume(m, T0 + 5, &GenConfig::default(), &Stepper::spec(), seed)
            .sharpened()
            .aimed_at(Aim::new([all]))
            .aimed_further(history.clone());
        let steps: Vec<Step> = g.take(3).collect();
        assert!(
            reached_after(&history, &steps).contains(&all),
            "seed {seed}: {steps:?}"
        );
    }
}

/// The "mix" of several is reached by the clone one step short, joined
/// to the list by a callback (the kinds are the plan's: no other drawn
/// request adds an awaiter, the only promise with a target awaits it
/// already).
#[test]
fn an_aimed_further_generator_clones_an_awaiter_short_for_the_settlements_mix() {
    let history = one_suspended_awaiter();
    let mix = marker::PROMISE_SETTLE_AWAITERS_RESUMED_MIX;
    let kinds = ["task.create", "promise.register_callback", "promise.settle"];
    let cfg = GenConfig {
        kinds: gen::Kinds::of(&kinds).expect("kinds"),
        ..GenConfig::default()
    };
    for seed in 1..=5 {
        let m = built(&history);
        let g = Generator::resume(m, T0 + 5, &cfg, &Stepper::spec(), seed)
            .aimed_at(Aim::new([mix]))
            .aimed_further(history.clone());
        let steps: Vec<Step> = g.take(3).collect();
        let named = |id: &str| {
            steps
                .iter()
                .any(|s| matches!(&s.op, gen::Op::Request(r) if model::names::ids(r).contains(&id.to_string())))
        };
        assert!(named("a.3"), "seed {seed}: the clone is a.3: {steps:?}");
        assert!(
            reached_after(&history, &steps).contains(&mix),
            "seed {seed}: {steps:?}"
        );
    }
}

/// No awaiter is suspended anywhere, one task is acquired: for each
/// settlement site's mix, the generator makes a mix of awaiters around
/// the task (two tasks created, a suspend, a callback) and walks it.
#[test]
fn an_aimed_further_generator_makes_a_mix_of_awaiters_around_an_acquired_task() {
    let claimed = Request::TaskCreate(TaskCreateReq {
        pid: "p1".into(),
        ttl: 60_000,
        action: create("a", true),
    });
    let history = vec![at(T0, claimed)];
    let sites = [
        marker::PROMISE_SETTLE_AWAITERS_RESUMED_MIX,
        marker::TASK_FULFILL_AWAITERS_RESUMED_MIX,
        marker::PROMISE_TIMEOUT_AWAITERS_RESUMED_MIX,
    ];
    for mix in sites {
        for seed in 1..=5 {
            let m = built(&history);
            let g = Generator::resume(m, T0 + 5, &GenConfig::default(), &Stepper::spec(), seed)
                .aimed_at(Aim::new([mix]))
                .aimed_further(history.clone());
            let steps: Vec<Step> = g.take(8).collect();
            assert!(
                reached_after(&history, &steps).contains(&mix),
                "{mix:?}, seed {seed}: {steps:?}"
            );
        }
    }
}

/// A drawn read of a pending promise is retimed onto the instant of its
/// deadline a wanted boundary marker needs.
#[test]
fn an_aimed_further_generator_retimes_a_read_onto_a_deadline() {
    let history = one_suspended_awaiter();
    let want = marker::PROMISE_GET_TIMEOUT_AT_ONE_PAST;
    let cfg = GenConfig {
        kinds: gen::Kinds::of(&["promise.get"]).expect("a kind"),
        ..GenConfig::default()
    };
    for seed in 1..=5 {
        let m = built(&history);
        let mut g = Generator::resume(m, T0 + 5, &cfg, &Stepper::spec(), seed)
            .aimed_at(Aim::new([want]))
            .aimed_further(history.clone());
        let step = g.next_step();
        assert_eq!(step.now, T0 + 600_001, "seed {seed}: {step:?}");
        assert!(reached_after(&history, &[step]).contains(&want));
    }
}

/// A want out of reach (what a baseline leaves the aim): once its aimed
/// steps keep leading nowhere, the generator aims ever fewer of its steps
/// (`Aim::pct`). No step leads, so the aim's dry run counts exactly the
/// steps aimed: about √(32 · 1,000) ≈ 180 of 1,000, where aiming every
/// step would count 1,000.
#[test]
fn an_aim_out_of_reach_is_tried_ever_less_often() {
    let out_of_reach = Aim::new([model::branch::UNREACHABLE[0]]);
    let mut g = Generator::new(3, &GenConfig::default())
        .sharpened()
        .aimed_at(out_of_reach);
    for _ in 0..1_000 {
        g.next_step();
    }
    let aimed = g.aim().map(Aim::dry).unwrap_or_default();
    eprintln!("{aimed} of 1,000 steps aimed");
    assert!((17..400).contains(&aimed), "{aimed} of 1,000 steps aimed");
}
