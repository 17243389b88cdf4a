//! The gate: every planted bug of the catalogue is killed by a generated
//! run at CI size (fixed seed; a survivor gets one long second hunt, and is
//! printed), and shrunk to within one step of its
//! hand-minimal witness; also under every built-in profile (a profile never
//! hides spec-defined behaviour) and with a real target's whole baseline
//! active on both sides (a baseline never blinds the harness).

use runner::baseline::Baseline;
use runner::mutants::{hunt, table, unobservable_under, HuntConfig, Hunted};
use runner::profile::Profile;

fn hunt_all(cfg: &HuntConfig) -> Vec<Hunted> {
    deviate::all().map(|d| hunt(d, cfg)).collect()
}

/// The budget of a second hunt for a bug that survived the CI-size one. A
/// few bugs need a rare shape (a cycle of awaits whose promises come due in
/// one tick needs about 10^5 steps): they must still be killed, and each is
/// printed, so a slow kill is seen rather than hidden.
const SLOW_BUDGET: usize = 400_000;

/// Hunt `bug` again with [`SLOW_BUDGET`], without shrinking.
fn killed_slowly(bug: &str, cfg: &HuntConfig, what: &str) -> bool {
    let slow = HuntConfig {
        budget_steps: SLOW_BUDGET,
        shrink: false,
        ..cfg.clone()
    };
    let r = hunt(deviate::lookup(bug).unwrap(), &slow);
    if let Some(k) = &r.kill {
        eprintln!("{what}: {bug} killed slowly, at step {}", k.steps);
    }
    r.kill.is_some()
}

fn assert_all_killed(rows: &[Hunted], what: &str, cfg: &HuntConfig) {
    let survivors: Vec<&str> = rows
        .iter()
        .filter(|r| r.kill.is_none())
        .map(|r| r.name)
        .filter(|n| !killed_slowly(n, cfg, what))
        .collect();
    assert!(
        survivors.is_empty(),
        "{what}: survived {survivors:?} (also with {SLOW_BUDGET} steps)\n{}",
        table(rows)
    );
}

#[test]
fn every_planted_bug_is_killed_and_shrunk_near_its_minimum() {
    let cfg = HuntConfig::default();
    let rows = hunt_all(&cfg);
    assert_all_killed(&rows, "spec profile", &cfg);
    let long: Vec<String> = rows
        .iter()
        .filter_map(|r| {
            let k = r.kill.as_ref()?;
            (k.shrunk > r.minimal + 1)
                .then(|| format!("{}: {} > {} + 1", r.name, k.shrunk, r.minimal))
        })
        .collect();
    eprint!("{}", table(&rows));
    assert!(
        long.is_empty(),
        "shrunk too long: {long:?}\n{}",
        table(&rows)
    );
}

#[test]
fn every_built_in_profile_still_catches_spec_defined_bugs() {
    for (name, _) in runner::profile::BUILT_IN {
        let cfg = HuntConfig {
            profile: Profile::load(name).unwrap(),
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
        assert_all_killed(&rows, name, &cfg);
    }
}

#[test]
fn no_baseline_blinds_the_harness_to_a_planted_bug() {
    for (name, _) in runner::baseline::BUILT_IN {
        let (_, baseline) = Baseline::load(name).unwrap();
        let cfg = HuntConfig {
            baseline: baseline.clone(),
            ..HuntConfig::default()
        };
        // A planted bug that is itself in the baseline is not a bug there.
        let rows: Vec<Hunted> = deviate::all()
            .filter(|d| !baseline.contains(d))
            .map(|d| hunt(d, &cfg))
            .collect();
        let blind: Vec<&str> = rows
            .iter()
            .filter(|r| r.kill.is_none())
            .map(|r| r.name)
            .filter(|n| !unobservable_under(deviate::lookup(n).unwrap(), &baseline))
            .filter(|n| !killed_slowly(n, &cfg, name))
            .collect();
        assert!(
            blind.is_empty(),
            "{name}: observable but not found through the baseline: {blind:?}\n{}",
            table(&rows)
        );
    }
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
