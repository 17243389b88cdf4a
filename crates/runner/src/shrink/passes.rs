//! The shrink passes, in the order the module doc gives. Each proposes
//! candidates to [`Shrinker::try_candidate`], which keeps the ones that
//! still diverge the same way and are smaller.

use gen::{Op, Step};
use model::api::{Request, TaskFenceAction};
use model::machine::Machine;
use model::state::ServerConfig;
use model::types::Value;

use super::{Accept, Shrinker};
use crate::edit::{rename_all, shift_from, Renamer};
use model::names::{create_mut, deadlines_mut, pid_mut, tags_mut, values_mut};

/// Delta debugging: remove chunks, halves first, down to single steps.
pub(super) fn delete_chunks(s: &mut Shrinker) {
    let start = s.best_steps.clone();
    super::chunks::delete_chunks(start, |_, cand| {
        s.try_candidate(cand).then(|| s.best_steps.clone())
    });
}

/// Remove ticks one at a time (an earlier of two adjacent ticks is merged
/// into the later by removing it).
pub(super) fn ticks(s: &mut Shrinker) {
    let mut i = 0;
    while i < s.best_steps.len() && !s.expired() {
        if matches!(s.best_steps[i].op, Op::Tick) {
            let mut cand = s.best_steps.clone();
            cand.remove(i);
            if s.try_candidate(cand) {
                continue;
            }
        }
        i += 1;
    }
}

/// Pull time down: each gap to zero, else to half; then rebase the whole
/// trace to start within the first hour after one hour (hour-aligned, so
/// cron fires keep their alignment).
pub(super) fn time(s: &mut Shrinker) {
    for i in 1..s.best_steps.len() {
        if s.expired() || i >= s.best_steps.len() {
            return;
        }
        let gap = s.best_steps[i].now.saturating_sub(s.best_steps[i - 1].now);
        for by in [gap, gap / 2] {
            if by > 0 && s.try_candidate(shift_from(&s.best_steps, i, by)) {
                break;
            }
        }
    }
    const HOUR: u64 = 3_600_000;
    if let Some(first) = s.best_steps.first().map(|f| f.now) {
        let by = first.saturating_sub(first % HOUR + HOUR) / HOUR * HOUR;
        if by > 0 {
            let cand = shift_from(&s.best_steps, 0, by);
            s.try_candidate(cand);
        }
    }
}

/// Snap each tick back onto a deadline armed before it (a promise timeout,
/// a retry, a lease, a schedule's next run), shifting the steps after it
/// down with it. [`time`] only zeros or halves gaps, which seldom lands on
/// a deadline exactly, and a departure at `now == deadline` (an
/// off-by-one in a due test) shows only there: a tick past the deadline
/// keeps the extra steps that pushed it there. The deadlines come from
/// the spec's model run over the steps before the tick (a source of
/// candidates only: each is judged as any other), earliest first, so the
/// first kept is the shortest span.
pub(super) fn snap_ticks(s: &mut Shrinker) {
    let config = ServerConfig {
        retry_timeout: s.checker.profile.retry_timeout,
    };
    // The model after `best_steps[..i]`, advanced a step at a time; a kept
    // candidate changes the steps from `i` on only, but is replayed from
    // the start (its repair may have touched any step).
    let mut m = Machine::new(config);
    if let Some(first) = s.best_steps.first() {
        gen::apply(&mut m, first);
    }
    let mut i = 1;
    while i < s.best_steps.len() && !s.expired() {
        let (lo, hi) = (s.best_steps[i - 1].now, s.best_steps[i].now);
        if matches!(s.best_steps[i].op, Op::Tick) && hi > lo {
            for d in m.state.armed_within(lo, hi - 1) {
                if s.try_candidate(shift_from(&s.best_steps, i, hi - d)) {
                    m = Machine::new(config);
                    for step in &s.best_steps[..i] {
                        gen::apply(&mut m, step);
                    }
                    break;
                }
            }
        }
        if let Some(step) = s.best_steps.get(i) {
            gen::apply(&mut m, step);
        }
        i += 1;
    }
}

/// Simplify values one request at a time; returns whether anything was
/// kept. A *reshaping* (a deadline moved to either side of its step, a
/// promise made a timer) is kept even at the same size: it changes no
/// step count by itself, but opens deletions the next pass can make.
pub(super) fn values(s: &mut Shrinker) -> bool {
    let mut kept = false;
    let mut i = 0;
    while i < s.best_steps.len() && !s.expired() {
        let pids = pids(&s.best_steps);
        for (variant, reshape) in simplifications(&s.best_steps[i], &pids) {
            let mut cand = s.best_steps.clone();
            cand[i] = variant;
            if s.try_candidate_sized(cand, reshape) {
                kept = true;
                break;
            }
        }
        i += 1;
    }
    kept
}

/// Every pid the trace names, in order of appearance.
fn pids(steps: &[Step]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for s in steps {
        if let Op::Request(r) = &s.op {
            let mut r = r.clone();
            if let Some(p) = pid_mut(&mut r) {
                if !out.contains(p) {
                    out.push(p.clone());
                }
            }
        }
    }
    out
}

/// A step's simplifications, each marked whether it is a reshaping.
fn simplifications(step: &Step, pids: &[String]) -> Vec<(Step, bool)> {
    let Op::Request(r) = &step.op else {
        return Vec::new();
    };
    let mut out: Vec<(Request, bool)> = Vec::new();
    let mut push = |reshape: bool, f: &dyn Fn(&mut Request)| {
        let mut c = r.clone();
        f(&mut c);
        if &c != r {
            out.push((c, reshape));
        }
    };
    push(false, &|c| {
        for v in values_mut(c) {
            *v = Value::default();
        }
    });
    // A deadline one millisecond after the step (what expires by the next
    // step without the steps that used to make it expire) or before it
    // (created expired: a task fulfilled at once, without the steps that
    // used to fulfil it).
    push(true, &|c| {
        for t in deadlines_mut(c) {
            *t = step.now + 1;
        }
    });
    push(true, &|c| {
        for t in deadlines_mut(c) {
            *t = step.now.saturating_sub(1);
        }
    });
    // A promise made a plain timer: armed without being a task, so the
    // steps that only served its task can go.
    push(true, &|c| {
        if let Some(p) = create_mut(c) {
            p.tags = [("resonate:timer".to_string(), "true".to_string())].into();
        }
    });
    let tag_keys: Vec<String> = {
        let mut c = r.clone();
        tags_mut(&mut c)
            .into_iter()
            .flat_map(|t| t.keys().cloned().collect::<Vec<_>>())
            .collect()
    };
    for k in tag_keys {
        push(false, &|c| {
            for t in tags_mut(c) {
                t.remove(&k);
            }
        });
    }
    // One request's pid alone, to each other pid of the trace or a fresh
    // one: what separates "held by this pid" from "held by another".
    for other in pids.iter().map(String::as_str).chain(["p0"]) {
        push(false, &|c| {
            if let Some(p) = pid_mut(c) {
                *p = other.to_string();
            }
        });
    }
    match r {
        Request::TaskHeartbeat(h) if h.tasks.len() > 1 => {
            for i in 0..h.tasks.len() {
                push(false, &|c| {
                    if let Request::TaskHeartbeat(h) = c {
                        h.tasks.remove(i);
                    }
                });
            }
        }
        Request::TaskSuspend(h) if h.actions.len() > 1 => {
            for i in 0..h.actions.len() {
                push(false, &|c| {
                    if let Request::TaskSuspend(h) = c {
                        h.actions.remove(i);
                    }
                });
            }
        }
        _ => {}
    }
    // A fenced create made a plain one: the promise the same, so the task
    // that fenced it (and the steps that kept it held) can go.
    if let Request::TaskFence(f) = r {
        if let TaskFenceAction::Create(c) = &f.action {
            out.push((Request::PromiseCreate(c.clone()), true));
        }
    }
    // A task created unclaimed: its promise alone, pending with its retry
    // armed, where the claim armed a lease instead (what a departure in the
    // retry needs without the lease's expiry that led to it).
    if let Request::TaskCreate(t) = r {
        out.push((Request::PromiseCreate(t.action.clone()), true));
    }
    out.into_iter()
        .map(|(r, reshape)| {
            let step = Step {
                now: step.now,
                op: Op::Request(r),
            };
            (step, reshape)
        })
        .collect()
}

/// Rename ids to `a`, `a.1`, `b`, … (origins by first appearance,
/// children numbered within their origin), schedules to `s1`, `s2`, … and
/// pids to `p1`, `p2`, …, all consistently, as one candidate.
pub(super) fn rename(s: &mut Shrinker) {
    let cand = rename_all(&s.best_steps, &mut Renamer::default());
    s.try_candidate_sized(cand, true);
}

/// Make each schedule's promises directly: without the `schedule.create`
/// at `j`, and with a `promise.create` of one promise that only the
/// schedule's ticks made (each in turn), or of all of them, at the tick that
/// made it (as the model saw them, deviations included). Returns whether a
/// candidate was kept.
pub(super) fn unschedule(s: &mut Shrinker) -> bool {
    let mut kept = false;
    let mut j = 0;
    'steps: while j < s.best_steps.len() && !s.expired() {
        if !matches!(s.best_steps[j].op, Op::Request(Request::ScheduleCreate(_))) {
            j += 1;
            continue;
        }
        let (all, made) = unscheduled(s, j, None);
        let mut cands: Vec<Vec<Step>> = made
            .iter()
            .map(|id| unscheduled(s, j, Some(id)).0)
            .collect();
        cands.push(all);
        for c in cands {
            if c.len() <= s.best_steps.len() && s.try_candidate_as(c, Accept::SameSteps) {
                kept = true;
                continue 'steps;
            }
        }
        j += 1;
    }
    kept
}

/// The trace without step `j` (a `schedule.create`), the promises its
/// ticks made (or only `only`) created directly just before the tick that
/// made each; and the ids of all those promises.
fn unscheduled(s: &Shrinker, j: usize, only: Option<&str>) -> (Vec<Step>, Vec<String>) {
    unscheduled_from(|| s.checker.fresh_model(), &s.best_steps, j, only)
}

/// [`unscheduled`] of `steps`, on models `fresh` makes (the checker's,
/// deviations included).
fn unscheduled_from(
    fresh: impl Fn() -> deviate::Deviant,
    steps: &[Step],
    j: usize,
    only: Option<&str>,
) -> (Vec<Step>, Vec<String>) {
    let mut with_m = fresh();
    let mut without_m = fresh();
    let mut out = Vec::with_capacity(steps.len());
    let mut ids = Vec::new();
    for (i, step) in steps.iter().enumerate() {
        with_m.step(step);
        if i == j {
            continue;
        }
        without_m.step(step);
        if matches!(step.op, Op::Tick) {
            // By id: the state's table is a hash map, whose order is no
            // order the trace should depend on.
            let mut new: Vec<&model::state::PromiseObject> = with_m
                .state
                .promises()
                .filter(|p| without_m.state.get_promise(&p.id).is_none())
                .collect();
            new.sort_unstable_by(|a, b| a.id.cmp(&b.id));
            let made: Vec<Step> = new
                .into_iter()
                .inspect(|p| ids.push(p.id.clone()))
                .filter(|p| only.is_none_or(|o| o == p.id))
                .map(|p| Step {
                    now: step.now,
                    op: Op::Request(Request::PromiseCreate(model::api::PromiseCreateReq {
                        id: p.id.clone(),
                        timeout_at: p.timeout_at,
                        param: p.param.clone(),
                        tags: p.tags.clone(),
                    })),
                })
                .collect();
            // Made just before the tick, so the tick finds them as it found
            // the schedule's.
            for m in &made {
                without_m.step(m);
            }
            out.extend(made);
        }
        out.push(step.clone());
    }
    ids.sort();
    ids.dedup();
    (out, ids)
}

/// Merge a `promise.create` with a target and the first later
/// `task.acquire` of its task at version 0, or the first later
/// `task.create` of the same id, into one `task.create` (what that request
/// is: the promise made and its task claimed at once), one pair at a time.
pub(super) fn claims(s: &mut Shrinker) {
    let mut i = 0;
    while i < s.best_steps.len() && !s.expired() {
        if let Some(cand) = merged_claim(&s.best_steps, i) {
            if s.try_candidate(cand) {
                continue;
            }
        }
        i += 1;
    }
}

/// The trace with step `i` (a `promise.create` with a target) and the
/// first later `task.acquire` of it at version 0, or `task.create` of it
/// (which found the promise made and claimed its task), made one
/// `task.create` with the promise's own data, at step `i`.
fn merged_claim(steps: &[Step], i: usize) -> Option<Vec<Step>> {
    let Op::Request(Request::PromiseCreate(c)) = &steps[i].op else {
        return None;
    };
    if !c.tags.contains_key(model::state::TARGET) {
        return None;
    }
    let (k, pid, ttl) = (i + 1..steps.len()).find_map(|k| match &steps[k].op {
        Op::Request(Request::TaskAcquire(a)) if a.id == c.id && a.version == 0 => {
            Some((k, a.pid.clone(), a.ttl))
        }
        Op::Request(Request::TaskCreate(t)) if t.action.id == c.id => {
            Some((k, t.pid.clone(), t.ttl))
        }
        _ => None,
    })?;
    let mut cand = steps.to_vec();
    cand[i].op = Op::Request(Request::TaskCreate(model::api::TaskCreateReq {
        pid,
        ttl,
        action: c.clone(),
    }));
    cand.remove(k);
    Some(cand)
}

#[cfg(test)]
mod tests {
    use super::*;
    use deviate::families::witness::{at, schedule, tick, T0};

    /// A schedule whose tick made several promises: each is created
    /// directly just before that tick, in the order of their ids (the
    /// state's table is a hash map; its order must not reach the trace).
    #[test]
    fn unscheduled_promises_come_in_the_order_of_their_ids() {
        let fresh = || {
            deviate::Deviant::new(
                ServerConfig {
                    retry_timeout: 5_000,
                },
                Vec::new(),
            )
        };
        // Every minute from T0; the tick six minutes later catches up.
        let steps = vec![at(T0, schedule("s1", "* * * * *")), tick(T0 + 360_000)];
        let (out, ids) = unscheduled_from(fresh, &steps, 0, None);
        assert!(ids.len() >= 5, "{ids:?}");
        let made: Vec<&str> = out
            .iter()
            .filter_map(|s| match &s.op {
                Op::Request(Request::PromiseCreate(r)) => Some(r.id.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(made, ids, "created in the order of their ids");
        assert_eq!(out.len(), ids.len() + 1, "the schedule gone, the tick kept");
        assert!(matches!(out.last().map(|s| &s.op), Some(Op::Tick)));
        // One of them alone: that one, before the tick.
        let (one, _) = unscheduled_from(fresh, &steps, 0, Some(&ids[2]));
        assert_eq!(one.len(), 2);
        assert!(matches!(&one[0].op, Op::Request(Request::PromiseCreate(r)) if r.id == ids[2]));
    }
}
