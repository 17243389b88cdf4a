//! The gate: every planted bug of the catalogue is killed by a generated
//! run at CI size (fixed seed; a bug that needs a rare shape may be found
//! past the on-time budget, reported as slow), and shrunk to within one step of its
//! hand-minimal witness (two for a slow kill); also under every built-in profile (a profile never
//! hides spec-defined behaviour) and with a real target's whole baseline
//! active on both sides (a baseline never blinds the harness).

use runner::baseline::Baseline;
use runner::mutants::{hunt, hunt_through_baseline, on_witness, table, HuntConfig, Hunted};
use runner::profile::Profile;

fn hunt_all(cfg: &HuntConfig) -> Vec<Hunted> {
    deviate::all().map(|d| hunt(d, cfg)).collect()
}

fn assert_all_killed(rows: &[Hunted], what: &str) {
    let survivors: Vec<&str> = rows
        .iter()
        .filter(|r| r.kill.is_none())
        .map(|r| r.name)
        .collect();
    eprint!("{what}:\n{}", table(rows));
    assert!(
        survivors.is_empty(),
        "{what}: survived {survivors:?}\n{}",
        table(rows)
    );
}

#[test]
fn every_planted_bug_is_killed_and_shrunk_near_its_minimum() {
    // The shrink's budget that binds is its candidates
    // (`HuntConfig::shrink_candidates`), the same under CI's load as idle:
    // a wall-time budget cut `timeout-skips-due-awaiters` at 8 steps under
    // load where it reaches 6 alone. The time is only a far ceiling.
    let cfg = HuntConfig {
        shrink_time: std::time::Duration::from_secs(600),
        ..HuntConfig::default()
    };
    let rows = hunt_all(&cfg);
    assert_all_killed(&rows, "spec profile");
    let long: Vec<String> = rows
        .iter()
        .filter_map(|r| {
            let k = r.kill.as_ref()?;
            // A slow kill comes from a rarer, longer shape (a lease lost and
            // retaken on the way to a cycle of awaits): one more step.
            let slack = if k.slow { 2 } else { 1 };
            (k.shrunk > r.minimal + slack)
                .then(|| format!("{}: {} > {} + {slack}", r.name, k.shrunk, r.minimal))
        })
        .collect();
    assert!(
        long.is_empty(),
        "shrunk too long: {long:?}\n{}",
        table(&rows)
    );
}

#[test]
fn every_built_in_profile_still_catches_spec_defined_bugs() {
    for (name, _) in runner::profile::BUILT_IN {
        // Detection is what this asks; the shrinks are the first test's.
        let cfg = HuntConfig {
            profile: Profile::load(name).unwrap(),
            shrink: false,
            ..HuntConfig::default()
        };
        // A bug in a kind the profile leaves out cannot be asked about.
        let rows: Vec<Hunted> = deviate::all()
            .filter(|d| {
                let kinds = cfg.profile.kinds();
                (d.witness)().iter().all(|s| match &s.op {
                    gen::Op::Request(r) => kinds.contains(r.kind()),
                    gen::Op::Tick => true,
                })
            })
            .map(|d| hunt(d, &cfg))
            .collect();
        assert!(rows.len() > 40, "{name}");
        assert_all_killed(&rows, name);
    }
}

/// Planted bugs a built-in baseline hides from the default search although
/// their witness still shows them through it: open findings, each with why.
const KNOWN_BLIND: &[(&str, &str, &str)] = &[(
    "pg",
    "schedule-expired-occurrence-settled",
    "its witness shows a state difference at its tick through the pg baseline \
     (settle-drops-execute and the two internal refusals), but 400,020 generated \
     steps do not build that shape; under every other baseline it is killed or \
     equivalent. Open: steer generation to it (issue 17).",
)];

#[test]
fn no_baseline_blinds_the_harness_to_a_planted_bug() {
    for (name, _) in runner::baseline::BUILT_IN {
        let (_, baseline) = Baseline::load(name).unwrap();
        // Detection is what this asks; the shrinks are the first test's.
        let cfg = HuntConfig {
            baseline: baseline.clone(),
            shrink: false,
            ..HuntConfig::default()
        };
        // A planted bug that is itself in the baseline is not a bug there.
        let rows: Vec<Hunted> = deviate::all()
            .filter(|d| !baseline.contains(d))
            .map(|d| hunt_through_baseline(d, &cfg))
            .collect();
        eprint!("{name}:\n{}", table(&rows));
        // An equivalence is not taken on the verdict's word: its witness,
        // through the checker against a target with the bug and the
        // baseline, shows nothing.
        for r in rows.iter().filter(|r| r.equivalent.is_some()) {
            let bug = deviate::lookup(r.name).unwrap();
            assert_eq!(on_witness(bug, &cfg), None, "{name}: {} equivalent", r.name);
        }
        let mut blind: Vec<&str> = rows
            .iter()
            .filter(|r| r.kill.is_none() && r.equivalent.is_none())
            .map(|r| r.name)
            .collect();
        // A known blind spot stays listed until the search finds it; once
        // it does, this fails until the entry is removed.
        for (baseline, bug, _why) in KNOWN_BLIND.iter().filter(|k| k.0 == *name) {
            let at = blind.iter().position(|b| b == bug);
            assert!(
                at.is_some(),
                "{baseline}: {bug} is found now: remove it from KNOWN_BLIND"
            );
            blind.remove(at.unwrap());
        }
        assert!(
            blind.is_empty(),
            "{name}: observable but not found through the baseline: {blind:?}\n{}",
            table(&rows)
        );
    }
}

#[test]
fn a_bug_whose_witness_shows_through_a_baseline_is_not_equivalent_there() {
    // `resonate` settles an expired promise a request names; the planted
    // bug moves the deadline past `now` first, so the suspend parks (200)
    // where the baseline alone answers 300: observable, though rare.
    let (_, resonate) = Baseline::load("resonate").unwrap();
    let cfg = HuntConfig {
        baseline: resonate,
        ..HuntConfig::default()
    };
    let bug = deviate::lookup("suspend-at-deadline").unwrap();
    let shown = runner::mutants::equivalence(bug, &cfg).unwrap_err();
    assert_eq!(
        (shown.on.as_str(), shown.step, shown.what.as_str()),
        (
            "witness",
            3,
            "task.suspend [status:300->200; state:callbacks:extra; state:promises.settledAt,state; state:taskTimeouts:missing; state:tasks.pid,state,ttl]"
        ),
        "{shown}"
    );
    // One the baseline does take the path of survives its witness and a
    // sample as long as the on-time hunt, under the profile.
    let bug = deviate::lookup("materialize-unarmed-expired").unwrap();
    let e = runner::mutants::equivalence(bug, &cfg).unwrap();
    assert_eq!(e.witness_steps, 2);
    assert!(e.sampled_steps >= cfg.budget_steps, "{e:?}");
}

#[test]
fn a_known_deviation_does_not_mask_a_bug_that_looks_like_it() {
    // Both touch task.heartbeat and the lease timeout it renews: one renews
    // although the promise expired (known), the other although another pid
    // holds the task (planted).
    let known = deviate::lookup("heartbeat-ignores-expiry").unwrap();
    let bug = deviate::lookup("heartbeat-ignores-pid").unwrap();
    let cfg = HuntConfig {
        baseline: vec![known],
        ..HuntConfig::default()
    };
    let r = hunt(bug, &cfg);
    let k = r
        .kill
        .expect("the planted bug is found through the baseline");
    assert!(k.class.starts_with("task.heartbeat"), "{}", k.class);
}

#[test]
fn a_baselined_deviation_is_not_a_divergence() {
    use runner::check::Checker;
    use runner::exec::{execute, ExecOptions, Expect};
    use runner::target::{LocalServer, LocalTarget};
    let known = deviate::lookup("heartbeat-ignores-expiry").unwrap();
    let server = LocalServer::new(Default::default(), vec![known], false);
    let mut target = LocalTarget::new(server);
    let mut checker = Checker::with_deviations(Profile::default(), vec![known]);
    let mut plain = Checker::new(Profile::default());
    let cfg = gen::GenConfig {
        steps: 80,
        ..gen::GenConfig::default()
    };
    let mut shown = 0;
    for case in 0..60 {
        let steps = gen::generate(gen::case_seed(5, case), &cfg);
        let opts = ExecOptions { check_state: true };
        let ex = execute(&mut target, &mut checker, &steps, Expect::Model, opts);
        assert!(ex.divergence.is_none(), "case {case}: {:?}", ex.divergence);
        shown += usize::from(
            execute(&mut target, &mut plain, &steps, Expect::Model, opts)
                .divergence
                .is_some(),
        );
    }
    assert!(shown > 0, "the deviation did show without the baseline");
}

#[test]
fn detection_compares_steps_with_and_without_a_baseline() {
    use runner::mutants::{detection, detection_table};
    // Observable through the baseline: found on both sides, a ratio.
    let known = deviate::lookup("heartbeat-ignores-expiry").unwrap();
    let bug = deviate::lookup("heartbeat-ignores-pid").unwrap();
    let cfg = HuntConfig {
        baseline: vec![known],
        ..HuntConfig::default()
    };
    let d = detection(bug, &cfg, 2);
    assert_eq!((d.clean.len(), d.with.len()), (2, 2));
    assert!(d.clean.iter().chain(&d.with).all(Option::is_some), "{d:?}");
    assert!(!d.unobservable);
    let ratio = d.ratio(cfg.budget_steps);
    assert!(ratio.is_finite() && ratio > 0.0);
    // A baseline that takes the bug's whole path: never found with it,
    // marked unobservable, and left out of the bound.
    let (_, ts_eager) = Baseline::load("ts-eager").unwrap();
    let cfg = HuntConfig {
        baseline: ts_eager,
        budget_steps: 2_000,
        ..HuntConfig::default()
    };
    let e = detection(
        deviate::lookup("schedule-retry-from-tick").unwrap(),
        &cfg,
        1,
    );
    assert_eq!(e.with, vec![None]);
    assert!(e.unobservable, "{e:?}");
    let t = detection_table(&[d, e], cfg.budget_steps, 1e9);
    assert!(t.contains("(unobservable under the baseline)"), "{t}");
    assert!(t.contains("observable bugs: 1;"), "{t}");
    assert!(t.ends_with("over 1000000000x: none\n"), "{t}");
}
