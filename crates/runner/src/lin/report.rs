//! What a history no order explains leaves for a person to read: the
//! smallest window of the failing epoch that already cannot be ordered,
//! the deepest partial orders the search reached and the operation each
//! could not place, and, for a small window, what the model answers in
//! every real-time order of it.

use std::fmt::Write as _;

use serde_json::Value;

use deviate::Deviant;
use gen::{Op, Step};
use model::view::StateView;

use super::history::{Epoch, Operation, Outcome};
use super::search::{search_epoch, EpochInput, Found, Move};
use super::Failure;
use crate::compare::normalize_response;

/// The smallest window that cannot be ordered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Window {
    /// The window ends at this completion time (µs); `None`: only the whole
    /// epoch with its closing snapshot fails (the responses can be ordered,
    /// the state cannot).
    pub until: Option<u64>,
    /// The history ids of the operations invoked in it.
    pub ops: Vec<usize>,
}

/// One real-time order of the window's operations and the model's answers.
#[derive(Clone, Debug, PartialEq)]
pub struct OrderTried {
    /// History ids, in order.
    pub order: Vec<usize>,
    /// The model's normalised response per operation (`None` for a tick).
    pub answers: Vec<Option<Value>>,
    /// The first position whose answer is not the target's.
    pub first_misfit: Option<usize>,
}

/// Orders are listed for windows of at most this many operations.
const MAX_ORDERED: usize = 6;
/// At most this many orders are listed.
const MAX_ORDERS: usize = 24;
/// The window search's budget per attempt.
const WINDOW_BUDGET: u64 = 200_000;

/// Build the failure of `epoch` from its search (`model` is at the epoch's
/// start).
pub(super) fn failure(
    epoch: &Epoch,
    model: Deviant,
    prefix: Vec<Step>,
    found: Found,
    ops: Vec<Operation>,
) -> Failure {
    let window = smallest_window(&model, &ops, epoch.now);
    let in_window: Vec<&Operation> = ops.iter().filter(|o| window.ops.contains(&o.id)).collect();
    let orders = if in_window.len() <= MAX_ORDERED {
        orders_tried(&model, &in_window)
    } else {
        Vec::new()
    };
    Failure {
        epoch: epoch.index,
        now: epoch.now,
        window,
        misfits: found.misfits,
        state_refused: found.state_refused,
        orders,
        start: serde_json::to_value(StateView::of(&model.state)).expect("view serialises"),
        prefix,
        ops,
    }
}

/// The shortest prefix of the epoch (by completion time) that cannot be
/// ordered: operations invoked by then, those not yet complete treated as
/// indeterminate, no snapshot. Monotone in the prefix, so a binary search.
fn smallest_window(model: &Deviant, ops: &[Operation], now: u64) -> Window {
    let mut ends: Vec<u64> = ops.iter().filter_map(|o| o.complete).collect();
    ends.sort_unstable();
    ends.dedup();
    let fails = |t: u64| {
        let cut = cut_at(ops, t);
        let refs: Vec<&Operation> = cut.iter().collect();
        let input = EpochInput {
            ops: refs,
            now,
            snap: None,
            skip: &[],
            collect_all: false,
            budget: WINDOW_BUDGET,
            max_ends: 1,
            reduce: false,
        };
        let mut m = model.clone();
        let f = search_epoch(&mut m, &input);
        f.ends.is_empty() && !f.truncated
    };
    let Some(&last) = ends.last() else {
        return whole(ops);
    };
    if !fails(last) {
        return whole(ops);
    }
    let (mut lo, mut hi) = (0, ends.len() - 1);
    while lo < hi {
        let mid = (lo + hi) / 2;
        if fails(ends[mid]) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    let until = ends[lo];
    Window {
        until: Some(until),
        ops: ops
            .iter()
            .filter(|o| o.invoke <= until)
            .map(|o| o.id)
            .collect(),
    }
}

fn whole(ops: &[Operation]) -> Window {
    Window {
        until: None,
        ops: ops.iter().map(|o| o.id).collect(),
    }
}

/// The operations invoked by `t`; those not complete by then indeterminate.
fn cut_at(ops: &[Operation], t: u64) -> Vec<Operation> {
    ops.iter()
        .filter(|o| o.invoke <= t)
        .map(|o| {
            let mut o = o.clone();
            if o.complete.is_none_or(|c| c > t) {
                o.complete = None;
                o.outcome = Outcome::Info("after the window".into());
            }
            o
        })
        .collect()
}

/// Every real-time order of `ops` (plain: no timer fired between them) and
/// what the model answers in it.
fn orders_tried(model: &Deviant, ops: &[&Operation]) -> Vec<OrderTried> {
    let mut out = Vec::new();
    let mut order = Vec::new();
    permute(ops, &mut order, &mut 0u32, &mut |ord: &[usize]| {
        if out.len() >= MAX_ORDERS {
            return;
        }
        let mut m = model.clone();
        let mut answers = Vec::new();
        let mut first_misfit = None;
        for (pos, &i) in ord.iter().enumerate() {
            let op = ops[i];
            let answer = match &op.step.op {
                Op::Tick => {
                    m.tick(op.step.now);
                    None
                }
                Op::Request(req) => {
                    let res = m.apply(req, op.step.now);
                    Some(normalize_response(&m.encode(req, &res, "model")))
                }
            };
            let misfit = match (&answer, op.response()) {
                (Some(a), Some(r)) => *a != normalize_response(r),
                _ => false,
            };
            if misfit && first_misfit.is_none() {
                first_misfit = Some(pos);
            }
            answers.push(answer);
        }
        out.push(OrderTried {
            order: ord.iter().map(|&i| ops[i].id).collect(),
            answers,
            first_misfit,
        });
    });
    out
}

/// Call `f` with every permutation of `ops` consistent with real time.
fn permute(
    ops: &[&Operation],
    order: &mut Vec<usize>,
    used: &mut u32,
    f: &mut dyn FnMut(&[usize]),
) {
    if order.len() == ops.len() {
        f(order);
        return;
    }
    for i in 0..ops.len() {
        if *used & (1 << i) != 0 {
            continue;
        }
        // i may come next only if no other unused op completed before it began.
        let blocked = (0..ops.len()).any(|j| {
            j != i && *used & (1 << j) == 0 && ops[j].complete.is_some_and(|c| c < ops[i].invoke)
        });
        if blocked {
            continue;
        }
        *used |= 1 << i;
        order.push(i);
        permute(ops, order, used, f);
        order.pop();
        *used &= !(1 << i);
    }
}

/// A short text of one operation: `#id c2 task.acquire [t0+12µs, t0+340µs] → 200`.
pub fn describe_op(op: &Operation, t0: u64) -> String {
    let span = match op.complete {
        Some(c) => format!("[{}µs, {}µs]", op.invoke - t0.min(op.invoke), c - t0.min(c)),
        None => format!("[{}µs, ?]", op.invoke - t0.min(op.invoke)),
    };
    let what = match &op.step.op {
        Op::Request(r) => format!("{} {}", r.kind(), model::wire::encode_request(r)),
        Op::Tick => "debug.tick".to_string(),
    };
    let out = match &op.outcome {
        Outcome::Ok(Some(r)) => format!("→ {}", normalize_response(r)),
        Outcome::Ok(None) => "→ ok".to_string(),
        Outcome::Info(why) => format!("→ ? ({why})"),
    };
    format!("#{} c{} {span} {what} {out}", op.id, op.client)
}

/// The failure as text, for the terminal and the saved report.
pub fn render(f: &Failure) -> String {
    let mut s = String::new();
    let t0 = f.ops.iter().map(|o| o.invoke).min().unwrap_or(0);
    let _ = writeln!(
        s,
        "epoch {} (now {}): no order of its {} operations explains the target",
        f.epoch,
        f.now,
        f.ops.len()
    );
    match f.window.until {
        Some(t) => {
            let _ = writeln!(
                s,
                "smallest window that cannot be ordered: the {} operations invoked by {}µs",
                f.window.ops.len(),
                t - t0.min(t)
            );
        }
        None => {
            let _ = writeln!(
                s,
                "the responses can be ordered; no order gives the state of the closing snapshot"
            );
        }
    }
    for op in f.ops.iter().filter(|o| f.window.ops.contains(&o.id)) {
        let _ = writeln!(s, "  {}", describe_op(op, t0));
    }
    for m in f.misfits.iter().take(4) {
        let _ = writeln!(
            s,
            "  after {}: #{} model {} target {}",
            moves_text(&m.after),
            m.op,
            m.model,
            m.target
        );
    }
    if let Some((order, diff)) = &f.state_refused {
        let _ = writeln!(s, "  order {} ends in another state:", moves_text(order));
        for d in diff.iter().take(8) {
            let _ = writeln!(
                s,
                "    {} {}: model {} target {}",
                d.component,
                d.key,
                Value::Array(d.model.clone()),
                Value::Array(d.target.clone())
            );
        }
    }
    for o in &f.orders {
        let ids: Vec<String> = o.order.iter().map(|i| format!("#{i}")).collect();
        let verdict = match o.first_misfit {
            Some(p) => format!("#{} differs", o.order[p]),
            None => "responses fit".to_string(),
        };
        let _ = writeln!(s, "  order {}: {verdict}", ids.join(" "));
    }
    s
}

/// `#3 #1 fire(promise p) #2(start) #4 #2`, or `(nothing)`.
pub fn moves_text(moves: &[Move]) -> String {
    if moves.is_empty() {
        return "(nothing)".to_string();
    }
    moves
        .iter()
        .map(|m| match m {
            Move::Op(id) => format!("#{id}"),
            Move::Fire(t) => format!("fire({t:?})"),
            Move::TickStart(id) => format!("#{id}(start)"),
        })
        .collect::<Vec<_>>()
        .join(" ")
}
