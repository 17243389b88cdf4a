//! Every deviation is real and minimal-witnessed: on its witness trace the
//! deviant and the model agree (response and state view) on every step but
//! the last, and differ on the last; the witness is well formed under the
//! wire's rules (or a validation probe); names are unique and spec lines
//! point into the spec.

use std::collections::BTreeSet;

use deviate::{all, Deviant};
use model::machine::Machine;
use model::state::ServerConfig;
use model::view::StateView;

#[test]
fn every_deviation_shows_on_its_witness_at_the_last_step_only() {
    // The families held apart (`catalogue::PENDING`) too: their witnesses
    // must already be sound.
    let pending = deviate::catalogue::PENDING
        .iter()
        .flat_map(|(_, f)| f.iter());
    for d in all().chain(pending) {
        if let Err(why) = shows(d, &(d.witness)()) {
            panic!("{}: {why}", d.name);
        }
    }
}

#[test]
fn names_are_unique_kebab_case_and_spec_lines_point_into_the_spec() {
    let mut seen = BTreeSet::new();
    for d in all() {
        assert!(seen.insert(d.name), "duplicate name {}", d.name);
        assert!(
            d.name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'),
            "{}",
            d.name
        );
        let (file, line) = d.spec.rsplit_once(':').expect("file:line");
        assert!(
            file.starts_with("spec/0") && file.ends_with(".lean"),
            "{}",
            d.spec
        );
        assert!(line.parse::<u32>().is_ok_and(|l| l > 0), "{}", d.spec);
        assert!(!d.summary.is_empty());
    }
}

/// How a witness trace plays out: whether the last step's response differs
/// (`true`) or only the state (`false`), or why it is no witness (empty, not
/// well formed, `now` going back, differing early, or not at all). A
/// validation probe (the spec takes it; the Rust server's rules refuse it)
/// is a witness step only a server without those rules sees.
fn shows(d: &'static deviate::Deviation, steps: &[gen::Step]) -> Result<bool, String> {
    let mut spec = Machine::new(ServerConfig::default());
    let mut dev = Deviant::new(ServerConfig::default(), vec![d]);
    let mut last = 0;
    for (i, s) in steps.iter().enumerate() {
        if s.now < last {
            return Err(format!("step {i}: now goes back"));
        }
        if let Err(e) = gen::well_formed(s, &spec) {
            // A probe may only be the step that shows the departure: an
            // earlier one would be refused (400) by a server with the
            // wire's rules, so the rest of the witness would test nothing.
            if !gen::is_probe(s, &spec) || i + 1 < steps.len() {
                return Err(format!("step {i} is not well formed: {e}"));
            }
        }
        last = s.now;
        let encode = |r: Option<model::api::Response>, dev: Option<&Deviant>| {
            let gen::Op::Request(q) = &s.op else {
                return None;
            };
            r.map(|r| match dev {
                Some(dv) => dv.encode(q, &r, "w"),
                None => model::wire::encode_response(q.kind(), &r, "w"),
            })
        };
        let a = encode(gen::apply(&mut spec, s), None);
        let b = dev.step(s);
        let b = encode(b, Some(&dev));
        let same_response = a == b;
        let same = same_response && StateView::of(&spec.state) == StateView::of(&dev.state);
        match (i + 1 < steps.len(), same) {
            (true, false) => return Err(format!("differs already at step {i}")),
            (false, false) => return Ok(!same_response),
            (false, true) => return Err("does not show it".into()),
            (true, true) => {}
        }
    }
    Err("empty witness".into())
}

// Minimality is judged by the harness, latitude included
// (`crates/runner/tests/witnesses.rs`): a shorter subsequence that differs
// only in a way the spec's latitude allows is no witness.

/// `cargo test -p resonate-deviate -- --nocapture catalogue_table` prints
/// the catalogue: each witness's length, where it shows (the last step's
/// response, or only the state), and whether it needs its exact instant
/// (moving the last step 1 ms later hides it).
#[test]
fn catalogue_table() {
    use deviate::families::*;
    let families = [
        ("promise", promise::ALL),
        ("task_claim", task_claim::ALL),
        ("task_version", task_version::ALL),
        ("task_lease", task_lease::ALL),
        ("task_suspend", task_suspend::ALL),
        ("suspend_redirect", suspend_redirect::ALL),
        ("task_halt", task_halt::ALL),
        ("timeouts", timeouts::ALL),
        ("schedule", schedule::ALL),
        ("schedule_stub", schedule_stub::ALL),
        ("deadline", deadline::ALL),
        ("loop_mix", loop_mix::ALL),
    ];
    assert_eq!(
        families.iter().map(|(_, f)| f.len()).sum::<usize>(),
        all().count()
    );
    println!("| name | family | spec | witness | shows in | exact instant |");
    println!("|---|---|---|---|---|---|");
    for (family, ds) in families {
        for d in ds {
            let steps = (d.witness)();
            let shows_in = match shows(d, &steps) {
                Ok(true) => "response",
                Ok(false) => "state",
                Err(why) => panic!("{}: not a witness: {why}", d.name),
            };
            let mut later = steps.clone();
            later.last_mut().expect("non-empty").now += 1;
            let exact = shows(d, &later).is_err();
            // An off-by-one at the deadline shows at that instant only.
            assert!(
                exact || family != "deadline",
                "{}: not on its instant",
                d.name
            );
            println!(
                "| {} | {} | {} | {} | {} | {} |",
                d.name,
                family,
                d.spec.trim_start_matches("spec/"),
                steps.len(),
                shows_in,
                if exact { "yes" } else { "" }
            );
        }
    }
    println!("{} deviations", all().count());
}

/// Found against the TS server under validation probing: a promise with an
/// empty target, settled, notifies its listener with the promise as stored
/// (the empty target included), though the handler read it as none.
#[test]
fn an_empty_target_is_kept_in_the_unblock_a_settlement_sends() {
    use deviate::families::witness::*;
    use model::state::{Message, TARGET};
    use model::types::PromiseState;
    let d = deviate::lookup("empty-target-is-no-target").unwrap();
    let mut m = deviate::Deviant::new(Default::default(), vec![d]);
    for s in [
        at(T0, create("a", LATER, tags(&[(TARGET, "")]))),
        at(T0, listen("a")),
        at(T0, settle("a", PromiseState::Resolved)),
    ] {
        m.step(&s);
    }
    let unblocks: Vec<_> = m
        .state
        .outbox()
        .filter_map(|(_, e)| match &e.message {
            Message::Unblock { promise } => Some(promise.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(unblocks.len(), 1);
    assert_eq!(unblocks[0].tags.get(TARGET).map(String::as_str), Some(""));
    assert_eq!(
        m.state
            .get_promise("a")
            .unwrap()
            .tags
            .get(TARGET)
            .map(String::as_str),
        Some("")
    );
}

/// A generator given a baseline's stepper reads the state that baseline
/// leaves: with `timer-without-target-unarmed`, no timer promise without a
/// target ever has a promise timeout armed in the generator's model, where
/// the spec's generator arms them.
#[test]
fn a_generator_steps_through_the_baseline() {
    use model::state::{TARGET, TIMER};
    let d = deviate::lookup("timer-without-target-unarmed").unwrap();
    let cfg = gen::GenConfig {
        steps: 60,
        ..gen::GenConfig::default()
    };
    let unarmed_timers = |m: &Machine| {
        m.state.promises().any(|p| {
            p.tags.contains_key(TIMER)
                && !p.tags.contains_key(TARGET)
                && m.state.promise_timeouts().get(&p.id).is_some()
        })
    };
    let (mut spec_arms, mut deviant_arms) = (false, false);
    for seed in 0..50 {
        let mut plain = gen::Generator::new(seed, &cfg);
        let mut through = gen::Generator::with_stepper(seed, &cfg, deviate::stepper(vec![d]));
        for _ in 0..cfg.steps {
            plain.next_step();
            spec_arms |= unarmed_timers(plain.machine());
        }
        for _ in 0..cfg.steps {
            through.next_step();
            deviant_arms |= unarmed_timers(through.machine());
        }
    }
    assert!(spec_arms, "the spec arms timers without a target");
    assert!(!deviant_arms, "the baseline's model never does");
}

/// A server that settles expired promises when a request names them settles
/// them through its own timeout: a planted timeout bug shows on that path.
#[test]
fn a_firing_on_access_goes_through_the_timeout_deviations() {
    use deviate::families::witness::*;
    use model::types::PromiseState;
    let devs = vec![
        deviate::lookup("materialize-named-expired").unwrap(),
        deviate::lookup("timeout-timer-rejected").unwrap(),
    ];
    let mut m = Deviant::new(ServerConfig::default(), devs);
    m.step(&at(T0, create("a", T0 + 10, timer())));
    m.step(&at(T0 + 20, get("a")));
    assert_eq!(
        m.state.get_promise("a").unwrap().state,
        PromiseState::RejectedTimedout
    );
}
