//! The Rust server's debug surface (`server.rs`, `debug.*`), which is how the
//! runner controls a target: reset it, read its state, and fire its timeouts
//! at a chosen time.
//!
//! | kind | data in | answer |
//! |---|---|---|
//! | `debug.start`, `debug.stop` | `{}` | 200 `{}`; sets/clears a flag |
//! | `debug.reset` | `{}` | 200 `{}`; a fresh machine, same config |
//! | `debug.snap` | `{}` | 200 [`StateView`] |
//! | `debug.tick` | `{time}` | 200 `[]` after `Machine::tick(time)` |
//!
//! In persistent mode `debug.reset` truncates the log and `debug.tick` is
//! logged; under `race-tick` the tick is a racy handler.
//!
//! The Rust server refuses debug operations unless started in debug mode
//! and pauses its background loops between `debug.start` and `debug.stop`.
//! The served model has no background loops and no clock of its own, so it
//! is always in debug mode; the flag is kept only to be truthful about what
//! was asked. `debug.tick` answers 400 when `time` is missing or not a
//! non-negative integer, or when the head's `resonate:debug_time` differs
//! from it, as the server does.

use std::sync::atomic::Ordering;

use model::wire::Envelope;
use serde_json::{json, Value as JsonValue};

use super::app::{error, ok, Handled, Shared};
use super::core::not_logged;
use super::races::TICK;

/// A debug operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DebugOp {
    /// `debug.start`.
    Start,
    /// `debug.stop`.
    Stop,
    /// `debug.reset`.
    Reset,
    /// `debug.snap`.
    Snap,
    /// `debug.tick`.
    Tick,
}

/// The debug operation named by `kind`, if it is one.
pub fn op(kind: &str) -> Option<DebugOp> {
    Some(match kind {
        "debug.start" => DebugOp::Start,
        "debug.stop" => DebugOp::Stop,
        "debug.reset" => DebugOp::Reset,
        "debug.snap" => DebugOp::Snap,
        "debug.tick" => DebugOp::Tick,
        _ => return None,
    })
}

pub(crate) fn run(shared: &Shared, op: DebugOp, env: &Envelope) -> Handled {
    let (kind, corr_id) = (env.kind, env.head.corr_id.as_str());
    let logged = |r: std::io::Result<()>, data| match r {
        Ok(()) => ok(kind, corr_id, data),
        Err(e) => not_logged(kind, corr_id, &e),
    };
    Handled::Done(match op {
        DebugOp::Start | DebugOp::Stop => {
            shared
                .debug_mode
                .store(op == DebugOp::Start, Ordering::SeqCst);
            ok(kind, corr_id, json!({}))
        }
        DebugOp::Reset => logged(shared.core().reset(), json!({})),
        DebugOp::Snap => {
            let view = shared.core().view();
            let data = serde_json::to_value(view).expect("a state view always serializes");
            ok(kind, corr_id, data)
        }
        DebugOp::Tick => {
            let Some(time) = env.data.get("time").and_then(JsonValue::as_u64) else {
                return Handled::Done(error(kind, corr_id, 400, "missing or invalid 'time' field"));
            };
            if env.head.debug_time.is_some_and(|t| t != time) {
                return Handled::Done(error(
                    kind,
                    corr_id,
                    400,
                    "resonate:debug_time must equal data.time",
                ));
            }
            if shared.races.covers(TICK) {
                let (writes, rival) = shared.core().tick_deferred(time);
                return Handled::racy(ok(kind, corr_id, json!([])), writes, rival);
            }
            logged(shared.core().tick(time), json!([]))
        }
    })
}
