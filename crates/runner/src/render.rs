//! Human-readable divergence reports: the request, then the response and
//! each differing state entry as a unified diff (`-` model, `+` target).

use std::fmt::Write;

use serde_json::Value;
use similar::TextDiff;

use crate::check::Divergence;
use crate::trace::{line_json, Line};

/// Pretty JSON with keys sorted at every level, so that two sides that
/// order their fields differently diff only where the values differ.
fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(&sorted(v)).unwrap_or_else(|_| v.to_string()) + "\n"
}

fn sorted(v: &Value) -> Value {
    match v {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            Value::Object(
                keys.into_iter()
                    .map(|k| (k.clone(), sorted(&m[k])))
                    .collect(),
            )
        }
        Value::Array(a) => Value::Array(a.iter().map(sorted).collect()),
        other => other.clone(),
    }
}

fn diff(a: &str, b: &str) -> String {
    TextDiff::from_lines(a, b)
        .unified_diff()
        .context_radius(3)
        .header("model", "target")
        .to_string()
}

fn list(vs: &[Value]) -> String {
    match vs {
        [] => "(absent)\n".to_string(),
        [v] => pretty(v),
        many => pretty(&Value::Array(many.to_vec())),
    }
}

/// The diff of one divergence at `line`.
pub fn divergence(line: &Line, d: &Divergence) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "  step:     {}",
        line_json(&Line {
            res: None,
            expect: None,
            state: None,
            diverged: false,
            ..line.clone()
        })
    );
    let _ = writeln!(s, "  class:    {}", d.class);
    if let Some((m, t)) = &d.response {
        let _ = writeln!(s, "  response (- model, + target):");
        for l in diff(&pretty(m), &pretty(t)).lines() {
            let _ = writeln!(s, "    {l}");
        }
    }
    for sd in &d.state {
        let _ = writeln!(
            s,
            "  state {} [{}] (- model, + target):",
            sd.component, sd.key
        );
        for l in diff(&list(&sd.model), &list(&sd.target)).lines() {
            let _ = writeln!(s, "    {l}");
        }
    }
    s
}
