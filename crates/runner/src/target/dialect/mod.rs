//! Target dialects: servers speak the same protocol with different surface
//! details. A dialect translates a target's responses and snapshot into the
//! canonical form (the Rust server's wire, which the model's codec speaks)
//! *without losing what the spec defines*: a detail the canonical form
//! spells differently is translated, never dropped, and a component the
//! target lacks is left absent, so the checker reports it as not compared.
//!
//! A dialect lives behind the [`super::Target`] trait: the checker only ever
//! sees canonical answers. It is a [`Base`] written in code (the canonical
//! wire, or the TypeScript server's [`ts`], one module each, every
//! difference named with an example in its doc) and then [`Rule`]s written
//! as data ([`rules`]), each checked when loaded against the canonical
//! shapes the model's codec writes ([`shape`]), so that no rule can remove
//! or rewrite what the spec defines and the checker compares.

mod rules;
pub mod shape;
mod ts;

use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use model::api::{Request, KINDS};

pub use rules::Rule;

/// A dialect written in code: the canonical wire, or the TypeScript
/// server's (whose list of resume ids becomes a count and `resumes`
/// snapshot entries, [`ts`]). Rules apply after it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Base {
    /// The Rust `resonate` server's wire: canonical, nothing to translate.
    #[default]
    Resonate,
    /// The TypeScript SDK's in-process server (`@resonatehq/sdk` 0.11.5)
    /// behind `scripts/ts-server`.
    Ts,
}

/// A dialect as data: a base and rules, in order. What a profile's
/// `"dialect": {…}` (or a dialect file) holds, and what `conform triage`
/// writes.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase", deny_unknown_fields)]
pub struct DialectSpec {
    /// The dialect in code applied first.
    pub base: Base,
    /// The rules, applied in order after the base.
    pub rules: Vec<Rule>,
}

/// A checked dialect, ready to translate a target's answers and snapshot.
/// Cheap to clone (a concurrent run's clients share it). In a profile it
/// is a built-in name (`"resonate"`, `"ts"`) or a [`DialectSpec`] object.
#[derive(Clone, Debug)]
pub struct Dialect {
    spec: DialectSpec,
    compiled: Arc<Compiled>,
}

/// The checked rules, indexed by where they apply.
#[derive(Debug, Default)]
struct Compiled {
    rules: Vec<rules::Checked>,
    /// Per kind (by position in [`KINDS`]), the rules for its answers.
    by_kind: Vec<Vec<usize>>,
    /// Per component name, the rules for its entries.
    by_component: Vec<(&'static str, Vec<usize>)>,
}

impl Dialect {
    /// A dialect in code alone.
    pub fn builtin(base: Base) -> Dialect {
        Dialect::new(DialectSpec {
            base,
            rules: Vec::new(),
        })
        .expect("no rules to refuse")
    }

    /// Check `spec`'s rules against the canonical shapes; the error names
    /// the first rule refused (its position, counted from 1) and why.
    pub fn new(spec: DialectSpec) -> Result<Dialect, String> {
        let mut c = Compiled {
            by_kind: vec![Vec::new(); KINDS.len()],
            ..Compiled::default()
        };
        for (i, r) in spec.rules.iter().enumerate() {
            let checked = r
                .check()
                .map_err(|e| format!("dialect rule {} ({}): {e}", i + 1, r.describe()))?;
            for k in &checked.scope.kinds {
                let at = KINDS.iter().position(|x| x == k).expect("a kind");
                c.by_kind[at].push(i);
            }
            for comp in &checked.scope.components {
                match c.by_component.iter_mut().find(|(n, _)| n == comp) {
                    Some((_, v)) => v.push(i),
                    None => c.by_component.push((comp, vec![i])),
                }
            }
            c.rules.push(checked);
        }
        Ok(Dialect {
            spec,
            compiled: Arc::new(c),
        })
    }

    /// The dialect as written.
    pub fn spec(&self) -> &DialectSpec {
        &self.spec
    }

    /// Translate a response envelope to `req` in place.
    pub fn response(&self, req: &Request, env: &mut Value) {
        let kind = req.kind();
        match self.spec.base {
            Base::Resonate => {}
            Base::Ts => ts::response(kind, env),
        }
        if self.compiled.rules.is_empty() {
            return;
        }
        if let Some(at) = KINDS.iter().position(|k| *k == kind) {
            for &i in &self.compiled.by_kind[at] {
                self.compiled.rules[i].apply(Some(req), env);
            }
        }
    }

    /// Translate a snapshot's `data` object in place.
    pub fn snapshot(&self, data: &mut Value) {
        match self.spec.base {
            Base::Resonate => {}
            Base::Ts => ts::snapshot(data),
        }
        for (comp, rules) in &self.compiled.by_component {
            if let Some(entries) = data.get_mut(*comp).and_then(Value::as_array_mut) {
                for e in entries {
                    for &i in rules {
                        self.compiled.rules[i].apply(None, e);
                    }
                }
            }
        }
    }

    /// Whether translation is the identity (the snapshot fast path then
    /// reads the body straight into types, and answers are not touched).
    pub fn is_canonical(&self) -> bool {
        self.spec.base == Base::Resonate && self.spec.rules.is_empty()
    }

    /// Whether the snapshot's translation is the identity, so the fast
    /// path may read it straight into types: the base's is, and no rule
    /// touches snapshot entries (resonate-pg's, whose rule touches answers
    /// only).
    pub fn snapshot_is_canonical(&self) -> bool {
        self.spec.base == Base::Resonate && self.compiled.by_component.is_empty()
    }
}

impl Default for Dialect {
    fn default() -> Dialect {
        Dialect::builtin(Base::Resonate)
    }
}

/// Two dialects are the same when written the same.
impl PartialEq for Dialect {
    fn eq(&self, other: &Dialect) -> bool {
        self.spec == other.spec
    }
}

impl Eq for Dialect {}

impl From<Base> for Dialect {
    fn from(base: Base) -> Dialect {
        Dialect::builtin(base)
    }
}

/// A built-in name when there are no rules, else the whole spec.
impl Serialize for Dialect {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if self.spec.rules.is_empty() {
            self.spec.base.serialize(s)
        } else {
            self.spec.serialize(s)
        }
    }
}

/// A built-in name or a spec, checked: a refused rule is a
/// deserialization error naming it.
impl<'de> Deserialize<'de> for Dialect {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Dialect, D::Error> {
        use serde::de::Error;
        match Value::deserialize(d)? {
            Value::String(name) => serde_json::from_value::<Base>(Value::String(name.clone()))
                .map(Dialect::builtin)
                .map_err(|_| {
                    D::Error::custom(format!(
                        "unknown dialect `{name}`: the built-in ones are resonate and ts (the built-in profiles `py` and `pg` carry theirs as rules); a dialect of rules is an object {{\"base\", \"rules\"}} or a file of one"
                    ))
                }),
            v @ Value::Object(_) => {
                let spec: DialectSpec = serde_json::from_value(v).map_err(D::Error::custom)?;
                Dialect::new(spec).map_err(D::Error::custom)
            }
            other => Err(D::Error::custom(format!(
                "a dialect is a name or an object, not {other}"
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_or_a_spec_round_trips() {
        let d: Dialect = serde_json::from_str(r#""ts""#).unwrap();
        assert_eq!(d, Dialect::builtin(Base::Ts));
        assert_eq!(serde_json::to_string(&d).unwrap(), r#""ts""#);
        let text = r#"{"base":"resonate","rules":[{"rule":"status","kinds":["promise.create"],"from":201,"to":200}]}"#;
        let d: Dialect = serde_json::from_str(text).unwrap();
        assert!(!d.is_canonical());
        assert_eq!(serde_json::to_string(&d).unwrap(), text);
        let e = serde_json::from_str::<Dialect>(r#""py""#).unwrap_err();
        assert!(e.to_string().contains("unknown dialect `py`"), "{e}");
    }
}
