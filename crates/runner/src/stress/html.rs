//! A history drawn as a self-contained HTML page beside its file, as
//! porcupine and Jepsen's timeline draw theirs: one row per client, one bar
//! per operation from invocation to completion, each epoch a panel of its
//! own with its `now`; the epoch no order explains comes first, its window
//! marked, the operations the search could not place in red, and each bar's
//! request and response on hover. No script, no fetch: it opens anywhere.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::lin::history::{Epoch, History, Operation, Outcome};
use crate::lin::report::{describe_op, render};
use crate::lin::Failure;

/// Epochs drawn at most (the failing one and those before it).
const MAX_EPOCHS: usize = 12;

/// Write the page for the history at `file` beside it (`NAME.html`).
pub fn write_beside(file: &Path, h: &History, f: Option<&Failure>) -> std::io::Result<PathBuf> {
    let path = file.with_extension("html");
    std::fs::write(&path, page(h, f))?;
    Ok(path)
}

/// The page.
pub fn page(h: &History, f: Option<&Failure>) -> String {
    let mut s = String::new();
    let title = match f {
        Some(f) => format!("not linearizable: epoch {}", f.epoch),
        None => "linearizable".to_string(),
    };
    let _ = write!(
        s,
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>conform history: {}</title>\
         <style>{CSS}</style></head><body><h1>conform history <span class=\"verdict\">{}</span></h1>\
         <p>seed {} · {} clients · {} epochs · {} operations · target {} · {}</p>",
        esc(&title),
        esc(&title),
        h.header.seed.map_or("-".into(), |s| s.to_string()),
        h.header.clients,
        h.epochs.len(),
        h.len(),
        esc(&h.header.target),
        esc(&h.header.harness),
    );
    if let Some(f) = f {
        let _ = write!(s, "<pre class=\"report\">{}</pre>", esc(&render(f)));
    }
    let failing = f.map(|f| f.epoch);
    let mut shown: Vec<&Epoch> = Vec::new();
    if let Some(e) = failing.and_then(|i| h.epochs.iter().find(|e| e.index == i)) {
        shown.push(e);
    }
    for e in h.epochs.iter().rev() {
        if shown.len() >= MAX_EPOCHS {
            break;
        }
        if Some(e.index) != failing {
            shown.push(e);
        }
    }
    if h.epochs.len() > shown.len() {
        let _ = write!(
            s,
            "<p class=\"note\">{} of {} epochs drawn (the failing one, then the latest).</p>",
            shown.len(),
            h.epochs.len()
        );
    }
    for e in shown {
        epoch_panel(&mut s, e, h.header.clients, f);
    }
    s.push_str("</body></html>\n");
    s
}

fn epoch_panel(s: &mut String, e: &Epoch, clients: usize, f: Option<&Failure>) {
    let failing = f.is_some_and(|f| f.epoch == e.index);
    let t0 = e.ops.iter().map(|o| o.invoke).min().unwrap_or(0);
    let t1 = e
        .ops
        .iter()
        .map(|o| o.complete.unwrap_or(o.invoke))
        .max()
        .unwrap_or(t0)
        .max(t0 + 1);
    let width = 1000.0;
    let row = 26.0;
    let x = |t: u64| 120.0 + (t.saturating_sub(t0)) as f64 / (t1 - t0) as f64 * (width - 140.0);
    let height = row * clients as f64 + 30.0;
    let _ = write!(
        s,
        "<section class=\"epoch{}\"><h2>epoch {} · now {}{}{}</h2><svg width=\"{width}\" height=\"{height}\">",
        if failing { " failing" } else { "" },
        e.index,
        e.now,
        if e.crashed { " · crashed and restarted" } else { "" },
        if failing { " · no order explains it" } else { "" },
    );
    for c in 0..clients {
        let y = 10.0 + row * c as f64;
        let _ = write!(
            s,
            "<text x=\"4\" y=\"{}\" class=\"client\">client {c}</text><line x1=\"120\" x2=\"{}\" y1=\"{}\" y2=\"{}\" class=\"lane\"/>",
            y + 14.0,
            width - 20.0,
            y + 10.0,
            y + 10.0
        );
    }
    if let Some(until) = f.filter(|_| failing).and_then(|f| f.window.until) {
        let _ = write!(
            s,
            "<line x1=\"{0}\" x2=\"{0}\" y1=\"0\" y2=\"{1}\" class=\"window\"/><text x=\"{2}\" y=\"{1}\" class=\"window\">window ends</text>",
            x(until),
            height - 4.0,
            x(until) + 4.0
        );
    }
    for op in &e.ops {
        let y = 10.0 + row * op.client as f64;
        let (a, b) = (x(op.invoke), x(op.complete.unwrap_or(t1)));
        let class = op_class(op, f.filter(|_| failing));
        let _ = write!(
            s,
            "<g class=\"op {class}\"><title>{}</title><rect x=\"{a}\" y=\"{y}\" width=\"{}\" height=\"20\" rx=\"3\"/>\
             <text x=\"{}\" y=\"{}\">#{} {}</text></g>",
            esc(&describe_op(op, t0)),
            (b - a).max(3.0),
            a + 3.0,
            y + 14.0,
            op.id,
            esc(op.kind()),
        );
    }
    s.push_str("</svg></section>");
}

fn op_class(op: &Operation, f: Option<&Failure>) -> &'static str {
    if let Some(f) = f {
        if f.misfits.iter().any(|m| m.op == op.id) {
            return "misfit";
        }
        if !f.window.ops.contains(&op.id) {
            return "outside";
        }
    }
    match op.outcome {
        Outcome::Ok(_) => "ok",
        Outcome::Info(_) => "info",
    }
}

fn esc(t: &str) -> String {
    t.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

const CSS: &str = "body{font:14px system-ui,sans-serif;margin:20px;color:#222}\
h1 .verdict{font-size:16px;padding:2px 8px;border-radius:4px;background:#eee}\
pre.report{background:#f7f7f7;padding:10px;overflow-x:auto;font-size:12px}\
section.epoch{border:1px solid #ddd;border-radius:6px;margin:10px 0;padding:4px 10px}\
section.failing{border-color:#c33;background:#fff6f6}\
h2{font-size:14px;margin:6px 0}.client{font-size:12px;fill:#555}.lane{stroke:#eee}\
.op rect{fill:#8ab4e8;stroke:#4a74a8}.op text{font-size:11px;fill:#111}\
.op.info rect{fill:#f0d58a;stroke:#b8962a;stroke-dasharray:3 2}\
.op.misfit rect{fill:#e88a8a;stroke:#a33}.op.outside rect{fill:#ddd;stroke:#aaa}\
line.window{stroke:#c33;stroke-dasharray:4 3}text.window{fill:#c33;font-size:11px}\
.note{color:#666}";
