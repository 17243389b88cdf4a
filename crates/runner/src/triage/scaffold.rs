//! A scaffolded deviation for a residue class: the file to put in the
//! family of its handler area, with the entry filled in but for the
//! name's choice, the Lean line and the hook's body, and the witness
//! written from the class's shrunk trace, so adding the departure to the
//! catalogue is filling in a body.

use std::fmt::Write as _;

use gen::Op;

use super::campaign::Found;
use super::rollup::{kind_of, lean_file};

/// The family file a kind's departures go in.
pub fn family(kind: &str) -> &'static str {
    match kind {
        k if k.starts_with("promise.") => "promise",
        "task.create" | "task.acquire" | "task.get" => "task_claim",
        "task.heartbeat" | "task.release" | "task.fulfill" => "task_lease",
        "task.suspend" | "task.fence" => "task_suspend",
        "task.halt" | "task.continue" => "task_halt",
        k if k.starts_with("schedule.") => "schedule",
        _ => "timeouts",
    }
}

/// The hook a departure at a step of `kind` overrides.
fn hook(kind: &str) -> &'static str {
    if kind == "debug.tick" {
        "    fn tick(&self, m: &mut Machine, now: Time, next: NextTick) -> Vec<Timer> {\n        \
         // TODO: what the target's tick does differently (the spec's: `next(m, now)`).\n        \
         next(m, now)\n    }\n"
    } else {
        "    fn apply(&self, m: &mut Machine, req: &Request, now: Time, next: Next) -> Response {\n        \
         // TODO: what the target does differently for this request; the spec's\n        \
         // handling is `next(m, req, now)` (patch the state with the effects in\n        \
         // `super::effects`, or answer on your own).\n        \
         next(m, req, now)\n    }\n"
    }
}

/// The scaffold for residue class `class`, numbered `n`, from its case `f`
/// (`witness`: met on that catalogue entry's witness, not in a case).
pub fn scaffold(n: usize, class: &str, f: &Found, witness: Option<&str>) -> String {
    let kind = kind_of(f);
    let ty = format!("Residue{n:02}");
    let mut s = String::new();
    let _ = writeln!(
        s,
        "//! Residue class {n:02} of `conform triage`: `{class}`."
    );
    let _ = writeln!(s, "//!");
    match witness {
        Some(name) => {
            let _ = writeln!(
                s,
                "//! Met on the witness of `{name}` (trace `{}`): its entry does not explain it.",
                f.trace.display()
            );
        }
        None => {
            let _ = writeln!(
                s,
                "//! Case {} (trace `{}`, shrunk `{}`).",
                f.case,
                f.trace.display(),
                f.shrunk.display()
            );
        }
    }
    let _ = writeln!(
        s,
        "//! No deviation of the catalogue, alone or with up to two others, explains it."
    );
    let _ = writeln!(
        s,
        "//! To add it: fill in the hook below (the only body left to write), give it a"
    );
    let _ = writeln!(
        s,
        "//! name and the Lean line it departs from, move `ENTRY` into `ALL` of"
    );
    let _ = writeln!(
        s,
        "//! `crates/deviate/src/families/{}.rs` (and `Residue{n:02}` beside it), add a row to",
        family(&kind)
    );
    let _ = writeln!(
        s,
        "//! that file's table and to the catalogue table in `crates/deviate/tests/witnesses.rs`,"
    );
    let _ = writeln!(
        s,
        "//! and name it in the target's baseline (outermost first). The witness is the"
    );
    let _ = writeln!(s, "//! shrunk trace; `cargo test -p resonate-deviate` checks it diverges at its last step only.");
    if let Some(p) = &f.pin {
        let _ = writeln!(
            s,
            "//! This class was met past {} earlier divergences of its case (the model pinned\n\
             //! to the target's state): the witness is the case up to it, so it holds only\n\
             //! once those earlier departures are deviations too; shorten it by hand.",
            p.depth + 1
        );
    }
    if let Some((_, d)) = &f.best.divergence {
        if let Some((m, t)) = &d.response {
            let _ = writeln!(
                s,
                "//!\n//! At the last step the spec answers `{m}`,\n//! the target `{t}`."
            );
        }
        for sd in &d.state {
            let _ = writeln!(
                s,
                "//! State `{}` `{}`: spec {}, target {}.",
                sd.component,
                sd.key,
                serde_json::Value::Array(sd.model.clone()),
                serde_json::Value::Array(sd.target.clone())
            );
        }
    }
    let _ = writeln!(s);
    let tick = kind == "debug.tick";
    let _ = writeln!(s, "use gen::Step;");
    if tick {
        let _ = writeln!(s, "use model::machine::{{Machine, Timer}};");
    } else {
        let _ = writeln!(s, "use model::api::{{Request, Response}};");
        let _ = writeln!(s, "use model::machine::Machine;");
    }
    let _ = writeln!(s, "use model::types::Time;\n");
    let _ = writeln!(s, "use super::witness::*;");
    let hooks = if tick { "NextTick" } else { "Next" };
    let _ = writeln!(s, "use crate::{{Class, Deviation, Hooks, {hooks}}};\n");
    let _ = writeln!(
        s,
        "/// The entry (name, Lean line and summary to be settled)."
    );
    let _ = writeln!(s, "pub const ENTRY: Deviation = Deviation {{");
    let _ = writeln!(
        s,
        "    name: \"residue-{n:02}\", // TODO: a kebab-case name saying what differs"
    );
    let _ = writeln!(
        s,
        "    spec: \"{}:0\", // TODO: the line it departs from",
        lean_file(&kind)
    );
    let _ = writeln!(s, "    class: Class::Bug, // or Class::Validation when the target refuses (400) what the spec accepts");
    let _ = writeln!(s, "    summary: \"{}\",", class.replace('"', "'"));
    let _ = writeln!(s, "    hooks: &{ty},");
    let _ = writeln!(s, "    witness: || {{");
    let _ = writeln!(s, "        vec![");
    let witness = match f.pin {
        None => f.best.steps(),
        Some(_) => f.cut.clone(),
    };
    for step in witness {
        match &step.op {
            Op::Request(r) => {
                let data = model::wire::encode_request(r);
                let _ = writeln!(
                    s,
                    "            wire({}, \"{}\", r#\"{}\"#),",
                    step.now,
                    r.kind(),
                    data
                );
            }
            Op::Tick => {
                let _ = writeln!(s, "            tick({}),", step.now);
            }
        }
    }
    let _ = writeln!(s, "        ]");
    let _ = writeln!(s, "    }},");
    let _ = writeln!(s, "}};\n");
    let _ = writeln!(
        s,
        "/// A witness step from its wire form (as the shrunk trace has it)."
    );
    let _ = writeln!(s, "fn wire(now: Time, kind: &str, data: &str) -> Step {{");
    let _ = writeln!(
        s,
        "    let data = serde_json::from_str(data).expect(\"witness JSON\");"
    );
    let _ = writeln!(
        s,
        "    at(now, model::wire::decode_request(kind, &data).expect(\"witness request\"))"
    );
    let _ = writeln!(s, "}}\n");
    let _ = writeln!(s, "struct {ty};\n");
    let _ = writeln!(s, "impl Hooks for {ty} {{");
    s.push_str(hook(&kind));
    let _ = writeln!(s, "}}");
    s
}
