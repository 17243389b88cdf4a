//! Every generated request passes the servers' validation; repair keeps
//! shrink candidates well formed and their versions pointed where the
//! generator meant them.

use gen::{apply, generate, repair, well_formed, GenConfig, Op, Step};
use model::api::Request;
use model::machine::Machine;
use model::state::ServerConfig;

fn cfg() -> GenConfig {
    GenConfig {
        steps: 60,
        ..GenConfig::default()
    }
}

fn machine() -> Machine {
    Machine::new(ServerConfig {
        retry_timeout: cfg().retry_timeout,
    })
}

/// The task id and version a versioned request (or a heartbeat's first
/// entry) carries.
fn versioned(step: &Step) -> Option<(&str, u64)> {
    match &step.op {
        Op::Request(Request::TaskAcquire(r)) => Some((&r.id, r.version)),
        Op::Request(Request::TaskFence(r)) => Some((&r.id, r.version)),
        Op::Request(Request::TaskSuspend(r)) => Some((&r.id, r.version)),
        Op::Request(Request::TaskFulfill(r)) => Some((&r.id, r.version)),
        Op::Request(Request::TaskRelease(r)) => Some((&r.id, r.version)),
        _ => None,
    }
}

#[test]
fn every_generated_request_passes_wire_validation() {
    for seed in 0..200 {
        let mut m = machine();
        for (i, s) in generate(seed, &cfg()).iter().enumerate() {
            if let Op::Request(r) = &s.op {
                if let Err(e) = model::wire::validate(r, m.calendar()) {
                    panic!("seed {seed} step {i}: {e}: {r:?}");
                }
            }
            if let Err(e) = well_formed(s, &m) {
                panic!("seed {seed} step {i}: {e}: {s:?}");
            }
            apply(&mut m, s);
        }
    }
}

#[test]
fn well_formed_refuses_what_servers_refuse() {
    use model::api::{PromiseSettleReq, TaskFulfillReq};
    use model::types::PromiseState;
    let m = machine();
    let fulfill = |id: &str, state| Step {
        now: 0,
        op: Op::Request(Request::TaskFulfill(TaskFulfillReq {
            id: "a".into(),
            version: 1,
            action: PromiseSettleReq {
                id: id.into(),
                state,
                value: Default::default(),
            },
        })),
    };
    assert!(well_formed(&fulfill("a", PromiseState::Resolved), &m).is_ok());
    assert!(well_formed(&fulfill("b", PromiseState::Resolved), &m).is_err());
    assert!(well_formed(&fulfill("a", PromiseState::Pending), &m).is_err());
    assert!(well_formed(&fulfill("a", PromiseState::RejectedTimedout), &m).is_err());
    assert!(well_formed(
        &Step {
            now: 0,
            op: Op::Tick
        },
        &m
    )
    .is_ok());
}

#[test]
fn repair_on_the_original_history_changes_nothing() {
    for seed in 0..100 {
        let t = generate(seed, &cfg());
        assert_eq!(repair(&t, &t, cfg().retry_timeout), t, "seed {seed}");
    }
}

/// Drop every step whose index is in `drop`, repair the rest against the
/// original, and check what the module doc promises: every kept step is
/// well formed on its new history, and a version that was current in the
/// original is current in the new history wherever the task exists. Returns how many versions had
/// to be re-pointed.
fn shrink_and_check(trace: &[Step], drop: impl Fn(usize) -> bool) -> usize {
    let kept: Vec<Step> = trace
        .iter()
        .enumerate()
        .filter(|(i, _)| !drop(*i))
        .map(|(_, s)| s.clone())
        .collect();
    let fixed = repair(&kept, trace, cfg().retry_timeout);
    // Where each original step stood: its version relative to the current one.
    let mut original = machine();
    let mut was_current = std::collections::HashMap::new();
    for s in trace {
        if let Some((id, v)) = versioned(s) {
            let cur = original.state.get_task(id).map(|t| t.version);
            was_current.insert(format!("{}:{:?}", s.now, blank(s)), cur == Some(v));
        }
        apply(&mut original, s);
    }
    let mut shrunk = machine();
    let mut repointed = 0;
    for (i, s) in fixed.iter().enumerate() {
        assert!(well_formed(s, &shrunk).is_ok(), "step {i}: {s:?}");
        if let Some((id, w)) = versioned(s) {
            if was_current.get(&format!("{}:{:?}", s.now, blank(s))) == Some(&true) {
                // A task the new history lacks has no current version.
                let Some(now) = shrunk.state.get_task(id).map(|t| t.version) else {
                    apply(&mut shrunk, s);
                    continue;
                };
                assert_eq!(now, w, "step {i}: {s:?}");
                let old = kept
                    .iter()
                    .find(|k| k.now == s.now && blank(k) == blank(s))
                    .and_then(versioned)
                    .map(|(_, v)| v);
                repointed += usize::from(old != Some(w));
            }
        }
        apply(&mut shrunk, s);
    }
    repointed
}

/// A step with its versions blanked.
fn blank(s: &Step) -> Step {
    let mut s = s.clone();
    if let Op::Request(r) = &mut s.op {
        for (_, v) in model::names::versions_mut(r) {
            *v = 0;
        }
    }
    s
}

#[test]
fn repair_after_dropping_steps_keeps_versions_current() {
    let mut repointed = 0;
    for seed in 0..100 {
        let t = generate(seed, &cfg());
        repointed += shrink_and_check(&t, |i| i % 3 == 1);
        repointed += shrink_and_check(&t, |i| i < 10);
    }
    assert!(repointed > 0, "no version ever needed re-pointing");
}

#[test]
fn kinds_left_out_are_never_generated_and_the_rest_unchanged() {
    let kinds = gen::Kinds::ALL
        .without("task.halt")
        .and_then(|k| k.without("promise.search"))
        .unwrap();
    assert_eq!(kinds.omitted(), ["promise.search", "task.halt"]);
    assert!(gen::Kinds::ALL.without("no.such.kind").is_none());
    let mut halts = 0;
    for seed in 0..50 {
        let all = generate(seed, &cfg());
        halts += all
            .iter()
            .filter(|s| matches!(&s.op, Op::Request(Request::TaskHalt(_))))
            .count();
        let some = generate(seed, &GenConfig { kinds, ..cfg() });
        assert!(some.iter().all(|s| match &s.op {
            Op::Request(r) => kinds.contains(r.kind()),
            Op::Tick => true,
        }));
    }
    assert!(halts > 0, "the full set does generate task.halt");
}

#[test]
fn probes_break_exactly_the_servers_rules_and_nothing_else_does() {
    let probing = GenConfig {
        probe_pct: 20,
        ..cfg()
    };
    let mut probes = std::collections::BTreeSet::new();
    for seed in 0..100 {
        let mut m = machine();
        for s in generate(seed, &probing) {
            if let Op::Request(r) = &s.op {
                if let Err(rule) = model::wire::validate(r, m.calendar()) {
                    probes.insert(rule);
                }
            }
            apply(&mut m, &s);
        }
    }
    // Every rule the probe table names is probed.
    assert!(probes.len() >= 10, "{probes:?}");
    // And without probes nothing breaks a rule (the test above).
}

/// `model::names::named` (borrowed, what hooks read on every request)
/// names what `ids_mut` names, deduplicated in order, for every kind the
/// generator makes.
#[test]
fn named_ids_agree_with_the_mutable_ones_on_every_kind() {
    let mut kinds = std::collections::BTreeSet::new();
    for seed in 0..60 {
        for s in generate(seed, &cfg()) {
            let Op::Request(r) = &s.op else { continue };
            kinds.insert(r.kind());
            let mut copy = r.clone();
            let mut want: Vec<String> = Vec::new();
            for id in model::names::ids_mut(&mut copy) {
                if !want.contains(id) {
                    want.push(id.clone());
                }
            }
            assert_eq!(model::names::named(r), want, "{r:?}");
            assert_eq!(model::names::ids(r), want);
        }
    }
    assert!(kinds.len() >= 20, "only {kinds:?}");
}
