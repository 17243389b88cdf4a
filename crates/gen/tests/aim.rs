//! An aimed generator (`Generator::aimed_at`, what a steered case of a
//! campaign is) takes, among the steps it could draw, one that reaches
//! what is still wanted: it reaches more of the markers than the same
//! generator unaimed, and stays a function of its seed.

use std::collections::BTreeSet;

use gen::{Aim, GenConfig, Generator, Step};
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
