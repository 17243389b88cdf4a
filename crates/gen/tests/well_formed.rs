//! Every generated request passes the servers' validation; repair keeps
//! shrink candidates well formed and their versions pointed where the
//! generator meant them.

use gen::{apply, generate, repair, repair_relative, well_formed, GenConfig, Op, Step};
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
        let mut m = machine();
        for s in generate(seed, &cfg()) {
            assert_eq!(
                repair_relative(&s, &m, &m).as_ref(),
                Some(&s),
                "seed {seed}"
            );
            let fixed = repair(&s, &m).expect("a generated step is repairable");
            assert!(well_formed(&fixed, &m).is_ok());
            apply(&mut m, &s);
        }
    }
}

/// Drop every step whose index is in `drop`, repairing the rest against
/// the new history; check what the module doc promises.
fn shrink_and_check(trace: &[Step], drop: impl Fn(usize) -> bool) -> usize {
    let (mut original, mut shrunk) = (machine(), machine());
    let mut repointed = 0;
    for (i, s) in trace.iter().enumerate() {
        if !drop(i) {
            if let Some(fixed) = repair_relative(s, &original, &shrunk) {
                assert!(well_formed(&fixed, &shrunk).is_ok());
                // A version that was current stays current.
                if let (Some((id, v)), Some((_, w))) = (versioned(s), versioned(&fixed)) {
                    let before = original.state.get_task(id).map(|t| t.version);
                    let now = shrunk.state.get_task(id).map(|t| t.version);
                    if before == Some(v) {
                        assert_eq!(now, Some(w), "step {i}: {s:?} -> {fixed:?}");
                        repointed += usize::from(v != w);
                    }
                }
                apply(&mut shrunk, &fixed);
            }
        }
        apply(&mut original, s);
    }
    repointed
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
