//! `conform export --format spec`: a trace in the exact NDJSON of the spec
//! repository's `valid/` checkers: one `{"kind","now","req","res"}` line per
//! request that has a recorded response; no header, no ticks, no extras
//! (the checkers recover internal steps themselves).

use std::io::Write;

use gen::Op;
use serde_json::json;

use crate::trace::Trace;

/// Write `t` in the spec's format; returns the number of lines written.
pub fn spec_format(t: &Trace, out: &mut dyn Write) -> std::io::Result<usize> {
    let mut n = 0;
    for l in &t.lines {
        let (Op::Request(r), Some(res)) = (&l.step.op, &l.res) else {
            continue;
        };
        let line = json!({"kind": r.kind(), "now": l.step.now, "req": model::wire::encode_request(r), "res": res});
        writeln!(out, "{line}")?;
        n += 1;
    }
    Ok(n)
}
