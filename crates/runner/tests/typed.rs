//! The typed response comparison ([`runner::compare::typed`]) decides
//! exactly what the JSON path decides: over every answer of the golden
//! corpus, the divergence traces of every dialect and baseline, and the
//! planted bugs' witnesses, and over every one-field change of each; and a
//! run gives the same verdicts, lines and messages with it on or off.

use std::path::PathBuf;

use serde_json::{json, Value};

use deviate::Deviant;
use gen::{Op, Step};
use model::api::Response;
use model::wire::encode_response;
use runner::check::Checker;
use runner::compare::normalize_response;
use runner::compare::typed::same_answer;
use runner::exec::{execute, execute_stream_lean, ExecOptions, Execution, Expect};
use runner::profile::Profile;
use runner::snapshot::Snap;
use runner::target::{LocalServer, LocalTarget, Target, TargetError};

fn traces() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../traces")
}

/// Every trace file of the golden corpus and of `traces/divergences/*`.
fn corpus() -> Vec<PathBuf> {
    let mut dirs = vec![traces().join("golden")];
    for e in std::fs::read_dir(traces().join("divergences")).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            dirs.push(p);
        }
    }
    let mut files = Vec::new();
    for d in dirs {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "ndjson") {
                files.push(p);
            }
        }
    }
    files.sort();
    assert!(files.len() > 40, "the corpus is where it should be");
    files
}

/// The JSON path's verdict on the model's answer `res` against `target`.
fn json_same(kind: &str, res: &Response, target: &Value) -> bool {
    normalize_response(&encode_response(kind, res, "model")) == normalize_response(target)
}

/// `target` and every one-field change of it: each key removed, set to
/// `null` or to an empty object, each leaf changed, an extra key added to
/// each object, each array shortened and lengthened.
fn variants(target: &Value) -> Vec<Value> {
    let mut out = vec![target.clone()];
    fn walk(v: &Value, at: &mut Vec<Step2>, root: &Value, out: &mut Vec<Value>) {
        match v {
            Value::Object(m) => {
                edit_at(root, at, &|x| x["extra"] = json!(1), out);
                edit_at(root, at, &|x| *x = json!({}), out);
                for (k, child) in m {
                    edit_at(
                        root,
                        at,
                        &|x| {
                            x.as_object_mut().unwrap().shift_remove(k);
                        },
                        out,
                    );
                    edit_at(root, at, &|x| x[k] = Value::Null, out);
                    edit_at(root, at, &|x| x[k] = json!({}), out);
                    at.push(Step2::Key(k.clone()));
                    walk(child, at, root, out);
                    at.pop();
                }
            }
            Value::Array(a) => {
                edit_at(
                    root,
                    at,
                    &|x| {
                        x.as_array_mut().unwrap().pop();
                    },
                    out,
                );
                edit_at(
                    root,
                    at,
                    &|x| x.as_array_mut().unwrap().push(json!("x")),
                    out,
                );
                for (i, child) in a.iter().enumerate() {
                    at.push(Step2::Index(i));
                    walk(child, at, root, out);
                    at.pop();
                }
            }
            Value::String(s) => {
                let s = s.clone();
                edit_at(root, at, &move |x| *x = json!(format!("{s}x")), out);
                edit_at(root, at, &|x| *x = json!(7), out);
            }
            Value::Number(n) => {
                let n = n.as_u64().unwrap_or(0);
                edit_at(root, at, &move |x| *x = json!(n + 1), out);
                edit_at(root, at, &move |x| *x = json!(n as f64), out);
                edit_at(root, at, &move |x| *x = json!(n.to_string()), out);
            }
            Value::Bool(b) => {
                let b = *b;
                edit_at(root, at, &move |x| *x = json!(!b), out);
            }
            Value::Null => edit_at(root, at, &|x| *x = json!(0), out),
        }
    }
    walk(target, &mut Vec::new(), target, &mut out);
    out
}

/// `root` with `f` applied at `path`, pushed onto `out`.
fn edit_at(root: &Value, path: &[Step2], f: &dyn Fn(&mut Value), out: &mut Vec<Value>) {
    let mut copy = root.clone();
    f(at_path(&mut copy, path));
    out.push(copy);
}

/// A step into a JSON value.
#[derive(Clone)]
enum Step2 {
    Key(String),
    Index(usize),
}

fn at_path<'a>(v: &'a mut Value, path: &[Step2]) -> &'a mut Value {
    path.iter().fold(v, |v, s| match s {
        Step2::Key(k) => &mut v[k.as_str()],
        Step2::Index(i) => &mut v[*i],
    })
}

/// The model's typed answer to each request of `steps`, replayed through
/// `deviations` (a trace's own, when it names them).
fn answers(steps: &[Step], deviations: Vec<&'static deviate::Deviation>) -> Vec<Option<Response>> {
    let mut m = Deviant::new(Default::default(), deviations);
    steps.iter().map(|s| m.step(s)).collect()
}

/// Assert the two paths agree on `res` against `target` and its variants;
/// how many pairs were compared, and how many of them agreed.
fn agree_on(kind: &str, res: &Response, target: &Value, at: &str) -> (usize, usize) {
    let mut same = 0;
    let all = variants(target);
    for t in &all {
        let json = json_same(kind, res, t);
        assert_eq!(
            same_answer(kind, res, t),
            Some(json),
            "{at}: typed and JSON paths disagree on {t}"
        );
        same += usize::from(json);
    }
    (all.len(), same)
}

#[test]
fn the_typed_path_decides_as_the_json_path_over_the_corpus_and_every_one_field_change() {
    let (mut pairs, mut same) = (0, 0);
    for path in corpus() {
        let trace = runner::trace::read(&path).unwrap();
        let deviations = trace
            .header
            .options
            .extra
            .get("deviations")
            .and_then(Value::as_array)
            .map(|names| {
                names
                    .iter()
                    .filter_map(|n| deviate::lookup(n.as_str()?))
                    .collect()
            })
            .unwrap_or_default();
        let steps = trace.steps();
        for (i, (l, a)) in trace
            .lines
            .iter()
            .zip(answers(&steps, deviations))
            .enumerate()
        {
            let (Op::Request(req), Some(a)) = (&l.step.op, a) else {
                continue;
            };
            let kind = req.kind();
            let model = encode_response(kind, &a, "model");
            for target in [l.res.as_ref(), l.expect.as_ref(), Some(&model)]
                .into_iter()
                .flatten()
            {
                let at = format!("{}:{}", path.display(), i + 2);
                let (p, s) = agree_on(kind, &a, target, &at);
                pairs += p;
                same += s;
            }
        }
    }
    // Both verdicts were exercised, many times.
    assert!(
        pairs > 10_000 && same > 1_000,
        "{pairs} pairs, {same} the same"
    );
}

#[test]
fn the_typed_path_decides_as_the_json_path_on_every_witness() {
    for d in deviate::all() {
        let steps = (d.witness)();
        // The spec's answers against the deviant server's, both ways.
        let spec = answers(&steps, Vec::new());
        let bug = answers(&steps, vec![d]);
        for ((s, a), b) in steps.iter().zip(spec).zip(bug) {
            let (Op::Request(req), Some(a), Some(b)) = (&s.op, a, b) else {
                continue;
            };
            let kind = req.kind();
            for (ours, theirs) in [(&a, &b), (&b, &a)] {
                let env = encode_response(kind, theirs, "target");
                agree_on(kind, ours, &env, d.name);
            }
        }
    }
}

/// The in-process server, its answers rewritten by one function.
struct Rewritten<F: FnMut(&Step, &mut Value)>(LocalTarget, F);

impl<F: FnMut(&Step, &mut Value)> Target for Rewritten<F> {
    fn describe(&self) -> String {
        "rewritten".into()
    }
    fn start(&mut self) -> Result<(), TargetError> {
        self.0.start()
    }
    fn reset(&mut self) -> Result<(), TargetError> {
        self.0.reset()
    }
    fn send(&mut self, step: &Step) -> Result<Option<Value>, TargetError> {
        let mut res = self.0.send(step)?;
        if let Some(env) = res.as_mut() {
            (self.1)(step, env);
        }
        Ok(res)
    }
    fn snap(&mut self) -> Result<Snap, TargetError> {
        self.0.snap()
    }
}

/// Run `steps` against `target` with the typed path on and off.
fn both_ways(
    target: &mut dyn FnMut() -> Box<dyn Target>,
    checker: &dyn Fn() -> Checker,
    steps: &[Step],
    check_state: bool,
) -> (Execution, Execution) {
    let opts = ExecOptions { check_state };
    let run = |typed: bool, target: &mut dyn Target| {
        let mut c = checker();
        c.typed = typed;
        execute(target, &mut c, steps, Expect::Model, opts)
    };
    (run(true, &mut *target()), run(false, &mut *target()))
}

/// The parts of an execution a verdict is made of.
fn verdict(ex: &Execution) -> String {
    format!(
        "{:?}\n{:?}\n{:?}\n{}",
        ex.divergence,
        ex.lines,
        ex.fault.as_ref().map(ToString::to_string),
        ex.latitude
    )
}

#[test]
fn a_run_gives_the_same_verdicts_and_messages_with_the_typed_path_on_and_off() {
    let mut diverged = 0;
    for d in deviate::all() {
        let steps = (d.witness)();
        for check_state in [true, false] {
            let (typed, json) = both_ways(
                &mut || {
                    let mut server = LocalServer::new(Default::default(), vec![d], false);
                    if runner::mutants::probe_only(d) {
                        server = server.without_validation();
                    }
                    Box::new(LocalTarget::new(server))
                },
                &|| Checker::new(Profile::default()),
                &steps,
                check_state,
            );
            assert_eq!(verdict(&typed), verdict(&json), "{}", d.name);
            diverged += usize::from(typed.divergence.is_some());
        }
    }
    assert!(diverged > 20, "the witnesses diverge ({diverged})");
}

/// A generated case whose `at`-th answer has one field changed by `edit`:
/// the typed path must not hide it, and the divergence must read the same.
fn one_field_difference_is_caught(name: &str, edit: fn(&mut Value) -> bool) {
    let checker = || Checker::new(Profile::default());
    let steps = checker().generate(7, 400, 0);
    let (typed, json) = both_ways(
        &mut || {
            let mut done = false;
            Box::new(Rewritten(
                LocalTarget::new(LocalServer::new(Default::default(), Vec::new(), false)),
                move |_, env: &mut Value| {
                    if !done {
                        done = edit(env);
                    }
                },
            ))
        },
        &checker,
        &steps,
        false,
    );
    assert!(typed.divergence.is_some(), "{name}: the change is caught");
    assert_eq!(verdict(&typed), verdict(&json), "{name}");
}

fn record<'a>(env: &'a mut Value, key: &str) -> Option<&'a mut Value> {
    env.get_mut("data")?.get_mut(key).filter(|v| v.is_object())
}

#[test]
fn a_one_field_difference_is_caught_in_a_string() {
    one_field_difference_is_caught("id", |env| {
        record(env, "promise").is_some_and(|p| {
            p["id"] = json!("other");
            true
        })
    });
}

#[test]
fn a_one_field_difference_is_caught_in_an_enum() {
    one_field_difference_is_caught("state", |env| {
        record(env, "task").is_some_and(|t| {
            t["state"] = json!(if t["state"] == "pending" {
                "acquired"
            } else {
                "pending"
            });
            true
        })
    });
}

#[test]
fn a_one_field_difference_is_caught_in_an_integer() {
    one_field_difference_is_caught("timeoutAt", |env| {
        record(env, "promise").is_some_and(|p| {
            p["timeoutAt"] = json!(p["timeoutAt"].as_u64().unwrap() + 1);
            true
        })
    });
}

#[test]
fn a_one_field_difference_is_caught_in_an_integer_written_as_a_float() {
    one_field_difference_is_caught("version", |env| {
        record(env, "task").is_some_and(|t| {
            t["version"] = json!(t["version"].as_u64().unwrap() as f64);
            true
        })
    });
}

#[test]
fn a_one_field_difference_is_caught_in_an_absent_option() {
    one_field_difference_is_caught("settledAt", |env| {
        record(env, "promise")
            .filter(|p| p.get("settledAt").is_none())
            .is_some_and(|p| {
                p["settledAt"] = json!(1);
                true
            })
    });
}

#[test]
fn a_one_field_difference_is_caught_in_a_present_option() {
    one_field_difference_is_caught("ttl", |env| {
        record(env, "task")
            .filter(|t| t.get("ttl").is_some())
            .is_some_and(|t| {
                t.as_object_mut().unwrap().shift_remove("ttl");
                true
            })
    });
}

#[test]
fn a_one_field_difference_is_caught_in_a_map() {
    one_field_difference_is_caught("tags", |env| {
        record(env, "promise").is_some_and(|p| {
            p["tags"]["extra"] = json!("1");
            true
        })
    });
}

#[test]
fn a_one_field_difference_is_caught_in_headers() {
    one_field_difference_is_caught("param.headers", |env| {
        record(env, "promise").is_some_and(|p| {
            p["param"]["headers"] = json!({"h": "1"});
            true
        })
    });
}

#[test]
fn a_one_field_difference_is_caught_in_a_list() {
    one_field_difference_is_caught("preload", |env| {
        let Some(d) = env.get_mut("data").filter(|d| d.get("preload").is_some()) else {
            return false;
        };
        d["preload"] = json!([{"id": "x"}]);
        true
    });
}

#[test]
fn a_one_field_difference_is_caught_in_an_extra_field() {
    one_field_difference_is_caught("extra", |env| {
        record(env, "schedule").is_some_and(|s| {
            s["extra"] = json!(0);
            true
        })
    });
}

#[test]
fn a_one_field_difference_is_caught_in_a_status() {
    one_field_difference_is_caught("status", |env| {
        env["head"]["status"] = json!(if env["head"]["status"] == 200 {
            409
        } else {
            200
        });
        true
    });
}

#[test]
fn a_one_field_difference_is_caught_in_a_fenced_action() {
    one_field_difference_is_caught("action", |env| {
        let Some(a) = record(env, "action") else {
            return false;
        };
        a["head"]["status"] = json!(if a["head"]["status"] == 200 { 404 } else { 200 });
        true
    });
}

/// The model answers every search 501 (the spec has none), so no run
/// reaches a search page: the page's shape is checked on its own.
#[test]
fn a_one_field_difference_is_caught_in_a_search_page() {
    let page = |promises: Value| json!({"head": {"status": 200}, "data": {"promises": promises}});
    let res = Response::Status(200);
    assert_eq!(
        same_answer("promise.search", &res, &page(json!([]))),
        Some(true)
    );
    for other in [
        page(json!([{"id": "a"}])),
        page(Value::Null),
        json!({"head": {"status": 200}, "data": {}}),
    ] {
        assert_eq!(
            same_answer("promise.search", &res, &other),
            Some(false),
            "{other}"
        );
        assert!(!json_same("promise.search", &res, &other), "{other}");
    }
}

/// `run`'s replay leaves a passing case's model envelopes unencoded, and
/// gives a case that stops every one of them, as the full replay does
/// (a saved trace records them).
#[test]
fn a_lean_replay_encodes_the_models_answers_exactly_when_the_case_stops() {
    let opts = ExecOptions { check_state: false };
    let checker = || Checker::new(Profile::default());
    for d in deviate::all() {
        let steps = (d.witness)();
        let server = || {
            let mut s = LocalServer::new(Default::default(), vec![d], false);
            if runner::mutants::probe_only(d) {
                s = s.without_validation();
            }
            LocalTarget::new(s)
        };
        let full = execute(&mut server(), &mut checker(), &steps, Expect::Model, opts);
        let lean = execute_stream_lean(&mut server(), &mut checker(), &steps, Expect::Model, opts);
        if full.divergence.is_some() {
            assert_eq!(verdict(&lean), verdict(&full), "{}", d.name);
        }
    }
    let steps = checker().generate(3, 200, 0);
    let spec = || LocalTarget::new(LocalServer::new(Default::default(), Vec::new(), false));
    let full = execute(&mut spec(), &mut checker(), &steps, Expect::Model, opts);
    let lean = execute_stream_lean(&mut spec(), &mut checker(), &steps, Expect::Model, opts);
    assert!(full.divergence.is_none() && lean.divergence.is_none());
    assert!(full.lines.iter().any(|l| l.expect.is_some()));
    assert!(lean.lines.iter().all(|l| l.expect.is_none()));
    assert_eq!(lean.lines.len(), full.lines.len());
}
