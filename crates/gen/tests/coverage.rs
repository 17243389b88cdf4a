//! Over 200 seeds of 60 steps the generator emits every request kind and
//! takes every reachable branch of the model (all but those of
//! `model::branch::UNREACHABLE`), including the deep ones the generator was
//! tuned for and each reason of a compound guard (a heartbeat refused for
//! its pid alone, an awaiter or awaited promise merely expired).

use std::collections::BTreeSet;

use gen::{coverage, generate, Coverage, GenConfig, Op, Step};
use model::branch::{self, Branch};
use model::machine::Machine;
use model::state::ServerConfig;

const SEEDS: u64 = 200;
const STEPS: usize = 60;

fn cfg() -> GenConfig {
    GenConfig {
        steps: STEPS,
        ..GenConfig::default()
    }
}

fn traces() -> Vec<Vec<Step>> {
    let cfg = cfg();
    (0..SEEDS).map(|seed| generate(seed, &cfg)).collect()
}

#[test]
fn every_reachable_branch_is_taken() {
    let mut total = Coverage::new();
    for t in traces() {
        total.merge(&coverage(&t, cfg().retry_timeout));
    }
    println!(
        "coverage: {}/{} reachable branches over {SEEDS} seeds x {STEPS} steps",
        total.reachable_hit(),
        total.reachable_total
    );
    let missed: Vec<&str> = total.missed().iter().map(|b| b.name()).collect();
    assert!(missed.is_empty(), "missed branches: {missed:#?}");
    let unreachable: Vec<&str> = model::branch::UNREACHABLE
        .iter()
        .filter(|b| total.hit.contains(b))
        .map(|b| b.name())
        .collect();
    assert!(
        unreachable.is_empty(),
        "branches marked unreachable were taken: {unreachable:?}"
    );
}

#[test]
fn every_request_kind_is_generated() {
    let mut kinds = BTreeSet::new();
    for t in traces() {
        for s in t {
            if let Op::Request(r) = &s.op {
                kinds.insert(r.kind());
            }
        }
    }
    let missing: Vec<_> = model::api::KINDS
        .iter()
        .filter(|k| !kinds.contains(*k))
        .collect();
    assert!(missing.is_empty(), "kinds never generated: {missing:?}");
}

/// How many times each milestone branch is taken over all traces, and how
/// many ticks caught a schedule up by two or more occurrences at once.
fn milestones() -> (Vec<(Branch, usize)>, usize) {
    use branch::*;
    let wanted = [
        TASK_SUSPEND_ALREADY_SETTLED_300,
        TASK_SUSPEND_ALREADY_SETTLED_300_EXPIRED,
        TASK_SUSPEND_AWAITED_NOT_FOUND_422,
        PROMISE_REGISTER_CALLBACK_AWAITER_NOT_FOUND_422,
        TASK_ACQUIRE_VERSION_MISMATCH_409,
        TASK_FENCE_VERSION_MISMATCH_409,
        TASK_SUSPEND_VERSION_MISMATCH_409,
        TASK_FULFILL_VERSION_MISMATCH_409,
        TASK_RELEASE_VERSION_MISMATCH_409,
        PROMISE_GET_PENDING_EXPIRED_PROJECTED_200,
        TASK_GET_PROJECTED_FULFILLED_200,
        TASK_HEARTBEAT_REF_PROMISE_NOT_LIVE_SKIPPED,
        TASK_HEARTBEAT_REF_NOT_HELD_SKIPPED_VERSION,
        TASK_HEARTBEAT_REF_NOT_HELD_SKIPPED_PID,
        PROMISE_REGISTER_CALLBACK_AWAITER_NOT_LIVE_200_EXPIRED,
        TASK_LEASE_TIMEOUT_EXPIRED,
        TASK_RETRY_TIMEOUT_REQUEUED,
        RESUME_SUSPENDED_EXECUTE_SENT,
        RESUME_BUFFERED,
        CATCH_UP_OCCURRENCE,
    ];
    let mut counts = vec![0; wanted.len()];
    let mut multi_catch_up = 0;
    for t in traces() {
        let mut m = Machine::new(ServerConfig {
            retry_timeout: cfg().retry_timeout,
        });
        for s in &t {
            gen::apply(&mut m, s);
            let hits = m.take_hits();
            for (i, b) in wanted.iter().enumerate() {
                counts[i] += hits.iter().filter(|h| *h == b).count();
            }
            let occurrences = hits.iter().filter(|h| **h == CATCH_UP_OCCURRENCE).count();
            if matches!(s.op, Op::Tick) && occurrences >= 2 {
                multi_catch_up += 1;
            }
        }
    }
    (wanted.into_iter().zip(counts).collect(), multi_catch_up)
}

#[test]
fn deep_states_are_reached_repeatedly() {
    let (counts, multi_catch_up) = milestones();
    for (b, n) in &counts {
        println!("{:55} {n}", b.name());
    }
    println!("ticks catching up >= 2 occurrences: {multi_catch_up}");
    let rare: Vec<_> = counts.iter().filter(|(_, n)| *n < 3).collect();
    assert!(
        rare.is_empty(),
        "milestones reached fewer than 3 times: {rare:?}"
    );
    assert!(
        multi_catch_up >= 3,
        "multi-occurrence catch-up: {multi_catch_up}"
    );
}
