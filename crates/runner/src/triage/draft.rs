//! The draft profile and the dialect rules, proposed from the rollup:
//! what the spec leaves open (the retry timeout, kinds the target does not
//! implement) and how the target spells what the spec defines.

use std::collections::{BTreeMap, BTreeSet};

use super::campaign::Campaign;
use super::findings::{Finding, Place};
use super::rollup::{lean_file, Row};
use crate::profile::Profile;
use crate::target::{Dialect, DialectSpec, Rule as DialectRule};

/// One spelling rule, in the triage's terms (written out in the dialect
/// format by [`super::write`]).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Rule {
    /// Answers of `kind` with status `from` mean `to`.
    Status {
        /// Request kind.
        kind: String,
        /// The target's status.
        from: u64,
        /// The spec's.
        to: u64,
    },
    /// `null` (or absent) is the empty value at `path`.
    NullIsEmpty {
        /// Where.
        at: Place,
        /// Dotted path.
        path: String,
        /// The empty value the spec writes (JSON).
        empty: String,
    },
    /// A field the spec has no name for here: dropped (only from answers
    /// with `status`, when the spec defines it in other answers).
    Drop {
        /// Where.
        at: Place,
        /// Dotted path.
        path: String,
        /// The answers' status it is scoped to.
        status: Option<u64>,
    },
    /// A nested answer (the fence's `action`) without its head: its
    /// status read from the record beside it.
    ActionHead {
        /// Request kind.
        kind: String,
        /// The status when the record is present.
        present: u64,
        /// The status when it is not.
        absent: u64,
    },
    /// A field the target never writes here, always the same in the spec.
    Add {
        /// Where.
        at: Place,
        /// Dotted path.
        path: String,
        /// Its value (JSON).
        value: String,
    },
}

/// What the triage proposes for the profile and the dialect.
#[derive(Clone, Debug, Default)]
pub struct Draft {
    /// The retry timeout, when the campaign showed another one.
    pub retry_timeout: Option<u64>,
    /// Kinds to leave out, each with its reason.
    pub omit: BTreeMap<String, String>,
    /// Spelling rules.
    pub rules: Vec<Rule>,
    /// Rules the dialect refused at its check (a rule may never touch what
    /// the spec defines), with the reason: their findings stay behaviour.
    pub refused: Vec<(Rule, String)>,
}

impl Draft {
    /// Whether it proposes nothing.
    pub fn is_empty(&self) -> bool {
        self.retry_timeout.is_none() && self.omit.is_empty() && self.rules.is_empty()
    }

    /// The dialect: `base`'s, then the rules, in order.
    pub fn dialect(&self, base: &Dialect) -> Dialect {
        let mut spec = base.spec().clone();
        spec.rules.extend(self.rules.iter().map(Rule::to_dialect));
        Dialect::new(spec).expect("every rule was checked when proposed")
    }

    /// `base` with the draft's settings (the rules are the dialect's).
    pub fn profile(&self, base: &Profile, name: &str) -> Profile {
        let mut p = base.clone();
        p.name = name.to_string();
        p.dialect = self.dialect(&base.dialect);
        if !self.rules.is_empty() {
            p.reasons.insert(
                "dialect".into(),
                "triage: each rule absorbs a finding seen in every case it could show in (TRIAGE.md, rollup)".into(),
            );
        }
        if let Some(ms) = self.retry_timeout {
            p.retry_timeout = ms;
            p.reasons.insert(
                "retryTimeout".into(),
                format!("triage: every pending retry the target armed was {ms} ms after its step (spec/01-objects/state.lean:92-94 leaves ServerConfig.retryTimeout to the server)"),
            );
        }
        for (k, why) in &self.omit {
            if !p.omit_kinds.contains(k) {
                p.omit_kinds.push(k.clone());
            }
            p.reasons
                .insert(format!("omitKinds.{k}"), format!("triage: {why}"));
        }
        p
    }

    /// Fold another round's draft into this one.
    pub fn merge(&mut self, other: Draft) {
        if other.retry_timeout.is_some() {
            self.retry_timeout = other.retry_timeout;
        }
        self.omit.extend(other.omit);
        for r in other.rules {
            if !self.rules.contains(&r) {
                self.rules.push(r);
            }
        }
        self.rules.sort();
        for r in other.refused {
            if !self.refused.contains(&r) {
                self.refused.push(r);
            }
        }
    }
}

/// Propose from a campaign's rollup, under `profile` (the one it ran with)
/// and the draft so far (`so_far`).
pub fn propose(rows: &[Row], c: &Campaign, profile: &Profile, so_far: &Draft) -> Draft {
    let mut d = Draft::default();
    // The retry timeout: the offset most cases show, if most do (a
    // schedule's occurrence armed from another base moves its retry too,
    // but that is behaviour of the tick, not the setting).
    let mut offsets: BTreeMap<i64, usize> = BTreeMap::new();
    for r in rows {
        if let Finding::RetryOffset { delta } = r.finding {
            *offsets.entry(delta).or_default() += r.cases.len();
        }
    }
    let total: usize = offsets.values().sum();
    if let Some((&delta, &n)) = offsets.iter().max_by_key(|(_, n)| **n) {
        let ms = profile.retry_timeout as i64 + delta;
        if 2 * n > total && ms > 0 {
            d.retry_timeout = Some(ms as u64);
        }
    }
    // A status remap is spelling only if that status of that kind always
    // stands for the same one of the spec's.
    let mut remaps: BTreeMap<(String, u64), BTreeSet<u64>> = BTreeMap::new();
    for r in rows {
        match &r.finding {
            Finding::Refused {
                kind,
                model,
                target,
            } => {
                if let Some(why) = refused(c, kind, *model, *target) {
                    d.omit.insert(kind.clone(), why);
                }
            }
            Finding::StatusRemap {
                kind,
                model,
                target,
            } => {
                remaps
                    .entry((kind.clone(), *target))
                    .or_default()
                    .insert(*model);
            }
            Finding::NullForEmpty { at, path, empty } => {
                // `null` and absent read the same to the checker: a `null`
                // first, and where that rule did not absorb it, an absent
                // field with the empty value.
                let null = Rule::NullIsEmpty {
                    at: at.clone(),
                    path: path.clone(),
                    empty: empty.clone(),
                };
                if so_far.rules.contains(&null) {
                    d.rules.push(Rule::Add {
                        at: at.clone(),
                        path: path.clone(),
                        value: empty.clone(),
                    });
                } else {
                    d.rules.push(null);
                }
            }
            Finding::FieldExtra { at, path, status } => d.rules.push(Rule::Drop {
                at: at.clone(),
                path: path.clone(),
                status: *status,
            }),
            Finding::FieldMissing {
                at: Place::Response(kind),
                path,
                model,
            } if path == "action.status" => {
                // The nested answer has no head: its status comes from the
                // record beside it (a settle's 404 is the one failure an
                // inner action has, P-03:8).
                let present = model.parse().unwrap_or(200);
                d.rules.push(Rule::ActionHead {
                    kind: kind.clone(),
                    present: if present < 300 { present } else { 200 },
                    absent: 404,
                });
            }
            Finding::FieldMissing { at, path, model } => {
                let same = rows.iter().all(|o| match &o.finding {
                    Finding::FieldMissing {
                        at: a,
                        path: p,
                        model: m,
                    } => a != at || p != path || m == model,
                    _ => true,
                });
                // Spelling only if the target never writes it: its answers
                // are all seen; its snapshots are not, so a snapshot field
                // it lacks stays behaviour (a task's `pid` gone because
                // the task was settled early is no spelling).
                let never = match at {
                    Place::Response(kind) => {
                        !c.paths.get(kind).is_some_and(|seen| seen.contains(path))
                    }
                    Place::State(_) => false,
                };
                if same && never {
                    d.rules.push(Rule::Add {
                        at: at.clone(),
                        path: path.clone(),
                        value: model.clone(),
                    });
                }
            }
            _ => {}
        }
    }
    for ((kind, from), to) in remaps {
        if let [to] = to.into_iter().collect::<Vec<_>>().as_slice() {
            d.rules.push(Rule::Status {
                kind,
                from,
                to: *to,
            });
        }
    }
    d.rules.sort();
    d.rules.dedup();
    // Each rule alone through the dialect's own check: one it refuses
    // would remove or rewrite what the spec defines.
    let rules = std::mem::take(&mut d.rules);
    for r in rules {
        let spec = DialectSpec {
            rules: vec![r.to_dialect()],
            ..DialectSpec::default()
        };
        match Dialect::new(spec) {
            Ok(_) => d.rules.push(r),
            Err(e) => d.refused.push((r, e)),
        }
    }
    d
}

impl Rule {
    /// The rule in the dialect format (`crate::target::Rule`).
    pub fn to_dialect(&self) -> DialectRule {
        let place = |at: &Place| match at {
            Place::Response(k) => (vec![k.clone()], Vec::new()),
            Place::State(c) => (Vec::new(), vec![c.clone()]),
        };
        let json = |s: &str| serde_json::from_str(s).unwrap_or_default();
        let why = "proposed by conform triage".to_string();
        match self {
            Rule::Status { kind, from, to } => DialectRule::Status {
                kinds: vec![kind.clone()],
                from: *from as u16,
                to: *to as u16,
                why,
            },
            Rule::NullIsEmpty { at, path, .. } => {
                let (kinds, components) = place(at);
                DialectRule::NullIsEmpty {
                    kinds,
                    components,
                    fields: vec![path.rsplit('.').next().unwrap_or(path).to_string()],
                    why,
                }
            }
            Rule::ActionHead {
                kind,
                present,
                absent,
            } => DialectRule::ActionHead {
                kinds: vec![kind.clone()],
                field: "action".into(),
                record: "promise".into(),
                present: *present as u16,
                absent: *absent as u16,
                why,
            },
            Rule::Drop { at, path, status } => {
                let (kinds, components) = place(at);
                DialectRule::Drop {
                    kinds,
                    components,
                    field: path.clone(),
                    status: status.and_then(|s| u16::try_from(s).ok()),
                    why,
                }
            }
            Rule::Add { at, path, value } => {
                let (kinds, components) = place(at);
                DialectRule::Add {
                    kinds,
                    components,
                    field: path.clone(),
                    value: json(value),
                    why,
                }
            }
        }
    }
}

/// Why `kind` is to be left out, if it is: the spec leaves it unspecified
/// (501) and the target answers something, or the target answered every
/// request of that kind with the same refusal.
fn refused(c: &Campaign, kind: &str, model: u64, target: u64) -> Option<String> {
    let lean = lean_file(kind);
    if model == 501 {
        return Some(format!(
            "the spec answers every {kind} 501 ({lean}:6) where the target answers {target}: what it does the spec cannot judge"
        ));
    }
    let seen = c.statuses.get(kind)?;
    let only = seen.len() == 1 && seen.contains_key(&(target as u16));
    only.then(|| {
        format!(
            "the target answered all {} {kind} requests {target} ({lean}): not implemented",
            seen.values().sum::<u64>()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A drop scoped to a status passes the dialect's check where the
    /// unscoped one is refused (the spec's 300 suspend defines `preload`),
    /// and is written with its status.
    #[test]
    fn a_status_scoped_drop_is_a_rule_the_dialect_takes() {
        let at = Place::Response("task.suspend".into());
        let scoped = Rule::Drop {
            at: at.clone(),
            path: "preload".into(),
            status: Some(200),
        };
        let unscoped = Rule::Drop {
            at,
            path: "preload".into(),
            status: None,
        };
        let check = |r: &Rule| {
            Dialect::new(DialectSpec {
                rules: vec![r.to_dialect()],
                ..DialectSpec::default()
            })
        };
        let d = check(&scoped).expect("scoped to the 200");
        let text = serde_json::to_string(d.spec()).unwrap();
        assert!(text.contains(r#""status":200"#), "{text}");
        let e = check(&unscoped).expect_err("the 300 defines it");
        assert!(e.contains("defines `preload`"), "{e}");
    }
}
