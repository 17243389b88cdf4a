//! Human-readable divergence reports: the request, then the response and
//! each differing state entry as a unified diff (`-` model, or the golden
//! record a divergence is held to, `+` target).

use std::borrow::Cow;
use std::fmt::Write;
use std::sync::atomic::{AtomicBool, Ordering};

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

fn diff(judge: &str, a: &str, b: &str) -> String {
    TextDiff::from_lines(a, b)
        .unified_diff()
        .context_radius(3)
        .header(judge, "target")
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
    for e in &d.envelope {
        let _ = writeln!(s, "  envelope: {e}");
    }
    let judge = d.judge.name();
    if let Some((m, t)) = &d.response {
        let _ = writeln!(s, "  response (- {judge}, + target):");
        for l in diff(judge, &pretty(m), &pretty(t)).lines() {
            let _ = writeln!(s, "    {l}");
        }
    }
    for sd in &d.state {
        let _ = writeln!(
            s,
            "  state {} [{}] (- {judge}, + target):",
            sd.component, sd.key
        );
        for l in diff(judge, &list(&sd.model), &list(&sd.target)).lines() {
            let _ = writeln!(s, "    {l}");
        }
    }
    s
}

/// Whether printed diffs are coloured; the CLI decides (`--color`,
/// `NO_COLOR`, a terminal or not), the library never does on its own.
static COLOR: AtomicBool = AtomicBool::new(false);

/// Colour printed diffs from now on (or stop).
pub fn set_color(on: bool) {
    COLOR.store(on, Ordering::Relaxed);
}

/// A rendered divergence as printed: `-` lines (the model) red, `+` lines
/// (the target) green, as `pretty_assertions` shows them, when colour is
/// on; unchanged otherwise (and always in reports and traces).
pub fn paint(text: &str) -> Cow<'_, str> {
    if !COLOR.load(Ordering::Relaxed) {
        return Cow::Borrowed(text);
    }
    let red = anstyle::AnsiColor::Red.on_default();
    let green = anstyle::AnsiColor::Green.on_default();
    let mut out = String::with_capacity(text.len() + 64);
    for line in text.split_inclusive('\n') {
        // Diff lines are indented by four spaces; the next character is
        // the diff's own marker.
        let body = line.strip_prefix("    ").unwrap_or("");
        let style = if body.starts_with("---") || body.starts_with("+++") {
            None
        } else if body.starts_with('-') {
            Some(red)
        } else if body.starts_with('+') {
            Some(green)
        } else {
            None
        };
        match style {
            Some(st) => {
                let (content, nl) = match line.strip_suffix('\n') {
                    Some(c) => (c, "\n"),
                    None => (line, ""),
                };
                let _ = write!(out, "{st}{content}{st:#}{nl}");
            }
            None => out.push_str(line),
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colour_marks_model_and_target_lines_only_when_on() {
        let d = "  response (- model, + target):\n    --- model\n    +++ target\n    -  \"a\": 1\n    +  \"a\": 2\n     same\n";
        assert_eq!(paint(d), d);
        set_color(true);
        let p = paint(d).into_owned();
        set_color(false);
        assert!(p.contains("\u{1b}[31m    -  \"a\": 1\u{1b}[0m"), "{p:?}");
        assert!(p.contains("\u{1b}[32m    +  \"a\": 2\u{1b}[0m"), "{p:?}");
        assert!(p.contains("    --- model\n"));
    }
}
