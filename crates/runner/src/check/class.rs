//! The class of a divergence: what kind of departure it is, ids aside. The
//! shrinker keeps a candidate only if it diverges in the same class, and
//! reports name it.

use std::collections::BTreeSet;
use std::fmt;

use serde_json::Value;

use crate::compare::{differing_paths, StateChange, StateDiff};
use crate::target::{EnvelopeDeparture, EnvelopeField};

/// One kind of difference at a step.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Difference {
    /// Different statuses (`None` when an envelope had none).
    Status {
        /// The model's.
        model: Option<u64>,
        /// The target's.
        target: Option<u64>,
    },
    /// The same status, different `data` at these dotted paths.
    Data(Vec<String>),
    /// The target refused the request (400) and still changed its state.
    RefusedButChanged,
    /// An answer's envelope departs from the protocol in `field`: the
    /// step's own answer (`answer` `None`), or the debug answer named.
    Envelope {
        /// The debug request answered, when not the step's own.
        answer: Option<String>,
        /// The field.
        field: EnvelopeField,
    },
    /// A snapshot component differs.
    State {
        /// The component (`tasks`, `promiseTimeouts`, …).
        component: String,
        /// How.
        change: StateChange,
    },
}

impl fmt::Display for Difference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let status = |s: &Option<u64>| s.map_or("null".to_string(), |s| s.to_string());
        match self {
            Difference::Status { model, target } => {
                write!(f, "status:{}->{}", status(model), status(target))
            }
            Difference::Data(paths) => write!(f, "data:{}", paths.join(",")),
            Difference::RefusedButChanged => f.write_str("refused-but-changed-state"),
            Difference::Envelope { answer, field } => match answer {
                None => write!(f, "envelope:{field}"),
                Some(a) => write!(f, "envelope:{a}.{field}"),
            },
            Difference::State { component, change } => match change {
                StateChange::Missing => write!(f, "state:{component}:missing"),
                StateChange::Extra => write!(f, "state:{component}:extra"),
                StateChange::Count => write!(f, "state:{component}:count"),
                StateChange::Fields(fields) => {
                    write!(f, "state:{component}.{}", fields.join(","))
                }
            },
        }
    }
}

/// How a step departed from the model, independent of ids.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DiffClass {
    /// The step's kind (`task.acquire`, `debug.tick`).
    pub kind: String,
    /// The differences: the response's first, then the state's, each once.
    pub what: Vec<Difference>,
}

impl DiffClass {
    /// The class of a step of `kind` whose normalised responses differ as
    /// `response` (model, target) and whose state differs as `state`.
    pub fn of(kind: &str, response: Option<&(Value, Value)>, state: &[StateDiff]) -> DiffClass {
        let mut what = Vec::new();
        if let Some((m, t)) = response {
            if m["status"] != t["status"] {
                what.push(Difference::Status {
                    model: m["status"].as_u64(),
                    target: t["status"].as_u64(),
                });
            } else {
                what.push(Difference::Data(
                    differing_paths(&m["data"], &t["data"])
                        .into_iter()
                        .collect(),
                ));
            }
        }
        let states: BTreeSet<Difference> = state
            .iter()
            .map(|d| Difference::State {
                component: d.component.clone(),
                change: d.change(),
            })
            .collect();
        what.extend(states);
        DiffClass {
            kind: kind.to_string(),
            what,
        }
    }
}

impl DiffClass {
    /// The class of a step of `kind` whose answers departed from the
    /// protocol's envelope as `departures`, followed by what the model
    /// found (`model`, when it found anything).
    pub fn of_envelope(
        kind: &str,
        departures: &[EnvelopeDeparture],
        model: Option<&DiffClass>,
    ) -> DiffClass {
        let mut what: Vec<Difference> = Vec::new();
        for d in departures {
            let w = Difference::Envelope {
                answer: (d.answer != kind).then(|| d.answer.clone()),
                field: d.field,
            };
            if !what.contains(&w) {
                what.push(w);
            }
        }
        what.extend(model.into_iter().flat_map(|c| c.what.iter().cloned()));
        DiffClass {
            kind: kind.to_string(),
            what,
        }
    }

    /// Its differences broken into single facts: a status change, one data
    /// path, one field of one component, or an entry missing, extra or
    /// multiplied in one component. Two classes that share a fact point at
    /// the same part of the same handler.
    pub fn facts(&self) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        for w in &self.what {
            match w {
                Difference::Data(paths) => {
                    out.extend(paths.iter().map(|p| format!("data:{p}")));
                }
                Difference::State {
                    component,
                    change: StateChange::Fields(fields),
                } => {
                    out.extend(fields.iter().map(|f| format!("state:{component}.{f}")));
                }
                other => {
                    out.insert(other.to_string());
                }
            }
        }
        out
    }
}

impl DiffClass {
    /// The facts of the response alone (a status change, a data path, an
    /// envelope field, a refusal that changed the state): the class's
    /// headline, what a client sees first.
    pub fn response_facts(&self) -> BTreeSet<String> {
        let response = DiffClass {
            kind: self.kind.clone(),
            what: (self.what.iter())
                .filter(|w| !matches!(w, Difference::State { .. }))
                .cloned()
                .collect(),
        };
        response.facts()
    }
}

impl fmt::Display for DiffClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what: Vec<String> = self.what.iter().map(ToString::to_string).collect();
        write!(f, "{} [{}]", self.kind, what.join("; "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn classes_print_as_reports_show_them() {
        let r = (json!({"status": 200}), json!({"status": 409}));
        let sd = StateDiff {
            component: "tasks".into(),
            key: "a".into(),
            ids: vec!["a".into()],
            model: vec![json!({"id": "a", "version": 1})],
            target: vec![json!({"id": "a", "version": 2})],
        };
        let c = DiffClass::of("task.halt", Some(&r), &[sd.clone(), sd]);
        assert_eq!(
            c.to_string(),
            "task.halt [status:200->409; state:tasks.version]"
        );
    }

    #[test]
    fn envelope_departures_come_first_named_by_answer_and_field() {
        let dep = |answer: &str, field| EnvelopeDeparture {
            answer: answer.into(),
            field,
            want: "\"conform-2\"".into(),
            got: "\"x\"".into(),
        };
        let model = DiffClass::of(
            "promise.get",
            Some(&(json!({"status": 200}), json!({"status": 404}))),
            &[],
        );
        let c = DiffClass::of_envelope(
            "promise.get",
            &[
                dep("debug.reset", EnvelopeField::CorrId),
                dep("promise.get", EnvelopeField::CorrId),
                dep("promise.get", EnvelopeField::CorrId),
                dep("debug.snap", EnvelopeField::Version),
            ],
            Some(&model),
        );
        assert_eq!(
            c.to_string(),
            "promise.get [envelope:debug.reset.corrId; envelope:corrId; envelope:debug.snap.version; status:200->404]"
        );
        assert!(c.facts().contains("envelope:corrId"));
    }
}
