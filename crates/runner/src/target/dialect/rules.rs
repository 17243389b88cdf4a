//! Dialect rules: a target's spelling as data (`"dialect": {"rules": […]}`
//! in a profile, or a file beside it), one rule per difference, each
//! checked against the canonical shapes ([`super::shape`]) when loaded.
//!
//! | rule | does | refused at load when |
//! |---|---|---|
//! | `status` | in answers to `kinds`, status `from` → `to` | the spec answers `from` to the kind (or `from` is a server error); the spec never answers `to` |
//! | `nullIsEmpty` | a `null` under one of `fields` → that field's empty value | a field is in no canonical shape in scope, or is not an object or list there |
//! | `add` | `field` absent → `value` | `field` is no canonical field, or `value` is not of its type |
//! | `drop` | `field` removed (with `status`: only from answers with that status) | the spec defines `field` (it is one, holds one, or is user data) in an answer in scope; with `status`: it names components, or the spec never answers that status to a kind |
//! | `rename` | `field` → sibling `to`, where `to` is absent | the spec defines `field`, or `to` is no canonical field |
//! | `actionHead` | a nested answer at `field` without a `head` gets one: status `present` when its `data.{record}` is a record, `absent` when not; and the request's nested `kind` | `field` is no nested answer; `present` is not a success or `absent` not a failure |
//!
//! Rules apply in the order listed, after the dialect's `base`. Every rule
//! changes only what is absent, `null`, or outside the canonical shape, so
//! nothing the spec defines and the checker compares is removed or
//! rewritten: a status remap starts only from a status the spec never
//! answers to the kind (so the answer was a divergence whatever followed),
//! and a derived inner status (`actionHead`) is a function of the record
//! beside it, which is compared. `kinds` and `components` name where a rule
//! applies (`*`: all); paths are dotted, relative to the answer's `data` or
//! to one snapshot entry, a list's elements sharing its path.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::shape::{self, Ty};

/// One difference between a target's spelling and the canonical one.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(
    tag = "rule",
    rename_all = "camelCase",
    rename_all_fields = "camelCase",
    deny_unknown_fields
)]
pub enum Rule {
    /// Answers to `kinds` with status `from` read as `to` (a create's 201
    /// as 200).
    Status {
        /// Request kinds whose answers it reads.
        kinds: Vec<String>,
        /// The target's status: one the spec never answers to these kinds.
        from: u16,
        /// The canonical status.
        to: u16,
        /// Why (the target's source line, the spec's).
        #[serde(default, skip_serializing_if = "String::is_empty")]
        why: String,
    },
    /// A `null` under a field named in `fields`, at any depth, read as the
    /// field's empty value (`value: null` as `value: {}`).
    NullIsEmpty {
        /// Request kinds whose answers it reads.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        kinds: Vec<String>,
        /// Snapshot components whose entries it reads.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        components: Vec<String>,
        /// Field names (objects or lists in the canonical shape).
        fields: Vec<String>,
        /// Why.
        #[serde(default, skip_serializing_if = "String::is_empty")]
        why: String,
    },
    /// A canonical field the target leaves out, added with `value` where
    /// it is absent.
    Add {
        /// Request kinds whose answers it reads.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        kinds: Vec<String>,
        /// Snapshot components whose entries it reads.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        components: Vec<String>,
        /// Dotted path of the field.
        field: String,
        /// Its default, of the canonical field's type.
        value: Value,
        /// Why (and why the default is exact).
        #[serde(default, skip_serializing_if = "String::is_empty")]
        why: String,
    },
    /// A field the spec does not define, removed.
    Drop {
        /// Request kinds whose answers it reads.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        kinds: Vec<String>,
        /// Snapshot components whose entries it reads.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        components: Vec<String>,
        /// Dotted path of the field.
        field: String,
        /// Only answers with this status: a field the spec defines in
        /// another answer of the kind but not in this one (a 200
        /// `task.suspend`'s `preload`, which only its 300 carries).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        status: Option<u16>,
        /// Why.
        #[serde(default, skip_serializing_if = "String::is_empty")]
        why: String,
    },
    /// A field the target spells `field` where the canonical name is `to`
    /// (in the same object), moved where `to` is absent.
    Rename {
        /// Request kinds whose answers it reads.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        kinds: Vec<String>,
        /// Snapshot components whose entries it reads.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        components: Vec<String>,
        /// Dotted path of the target's field (one the spec does not define).
        field: String,
        /// The canonical name.
        to: String,
        /// Why.
        #[serde(default, skip_serializing_if = "String::is_empty")]
        why: String,
    },
    /// A nested answer (the fence's `action`) the target writes without
    /// its `head` or `kind`: the head's status derived from its record,
    /// the kind from the request's nested action at the same field.
    ActionHead {
        /// Request kinds whose answers it reads.
        kinds: Vec<String>,
        /// Dotted path of the nested answer.
        field: String,
        /// The key of the nested answer's record in its `data`.
        record: String,
        /// The status when that record is present (a success).
        present: u16,
        /// The status when it is `null` or absent (a failure).
        absent: u16,
        /// Why.
        #[serde(default, skip_serializing_if = "String::is_empty")]
        why: String,
    },
}

/// Where a rule applies, with `*` expanded.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct Scope {
    pub kinds: Vec<&'static str>,
    pub components: Vec<&'static str>,
}

/// A rule that passed its check, ready to apply.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Checked {
    /// The rule as written.
    pub rule: Rule,
    /// Where it applies.
    pub scope: Scope,
    /// `nullIsEmpty`: each field's empty value, from its canonical type.
    empties: Vec<(String, Value)>,
}

impl Rule {
    /// The rule's name in a file (`status`, `drop`, …).
    pub fn name(&self) -> &'static str {
        match self {
            Rule::Status { .. } => "status",
            Rule::NullIsEmpty { .. } => "nullIsEmpty",
            Rule::Add { .. } => "add",
            Rule::Drop { .. } => "drop",
            Rule::Rename { .. } => "rename",
            Rule::ActionHead { .. } => "actionHead",
        }
    }

    /// A short description for messages: the rule and what it names.
    pub fn describe(&self) -> String {
        match self {
            Rule::Status { from, to, .. } => format!("status {from} → {to}"),
            Rule::NullIsEmpty { fields, .. } => format!("nullIsEmpty {}", fields.join(", ")),
            Rule::Drop {
                field,
                status: Some(st),
                ..
            } => format!("drop {field} at {st}"),
            Rule::Add { field, .. } | Rule::Drop { field, .. } => {
                format!("{} {field}", self.name())
            }
            Rule::Rename { field, to, .. } => format!("rename {field} → {to}"),
            Rule::ActionHead { field, .. } => format!("actionHead {field}"),
        }
    }

    fn lists(&self) -> (&[String], &[String]) {
        match self {
            Rule::Status { kinds, .. } | Rule::ActionHead { kinds, .. } => (kinds, &[]),
            Rule::NullIsEmpty {
                kinds, components, ..
            }
            | Rule::Add {
                kinds, components, ..
            }
            | Rule::Drop {
                kinds, components, ..
            }
            | Rule::Rename {
                kinds, components, ..
            } => (kinds, components),
        }
    }

    /// Where the rule applies; refuses names that are no kind or component.
    pub(super) fn scope(&self) -> Result<Scope, String> {
        let (kinds, components) = self.lists();
        let kinds = expand(kinds, &model::api::KINDS, "request kind")?;
        let components = expand(
            components,
            &crate::compare::COMPONENT_NAMES,
            "snapshot component",
        )?;
        if kinds.is_empty() && components.is_empty() {
            return Err("names no kinds and no components: it would apply nowhere".into());
        }
        Ok(Scope { kinds, components })
    }

    /// Refuse a rule that could remove or rewrite what the spec defines,
    /// or that could never apply (see the module doc's table).
    pub(super) fn check(&self) -> Result<Checked, String> {
        let scope = self.scope()?;
        let mut empties = Vec::new();
        let shapes = || {
            scope
                .kinds
                .iter()
                .map(|k| (format!("answers to {k}"), shape::response(k)))
                .chain(
                    scope
                        .components
                        .iter()
                        .map(|c| (format!("{c} entries"), shape::component(c))),
                )
        };
        match self {
            Rule::Status { from, to, .. } => {
                if *from >= 500 {
                    return Err(format!("{from} is a server error, never spelling"));
                }
                for k in &scope.kinds {
                    let answered = shape::statuses(k);
                    if answered.contains(from) {
                        return Err(format!(
                            "the spec answers {from} to {k}: a remap would rewrite it"
                        ));
                    }
                    if !answered.contains(to) {
                        return Err(format!("the spec never answers {to} to {k}"));
                    }
                }
            }
            Rule::NullIsEmpty { fields, .. } => {
                for f in fields {
                    path(f)?;
                    if f.contains('.') {
                        return Err(format!("`{f}`: a field name, not a path"));
                    }
                    let tys: std::collections::BTreeSet<Ty> =
                        shapes().flat_map(|(_, s)| s.named(f)).collect();
                    match tys.iter().collect::<Vec<_>>()[..] {
                        [] => return Err(format!("`{f}` is a field of no canonical shape in scope")),
                        [t] if t.empty().is_some() => {
                            empties.push((f.clone(), t.empty().expect("a container")));
                        }
                        _ => {
                            return Err(format!(
                                "`{f}` is not an object or a list everywhere in scope: its empty value would be a claim"
                            ))
                        }
                    }
                }
            }
            Rule::Add { field, value, .. } => {
                path(field)?;
                for (what, s) in shapes() {
                    match s.field(field) {
                        None => {
                            return Err(format!(
                                "`{field}` is no canonical field of {what}: nothing to add it for"
                            ))
                        }
                        Some(t) if Ty::of(value) != Some(t) => {
                            return Err(format!(
                                "the default is not of the type `{field}` has in {what} ({t:?})"
                            ))
                        }
                        Some(_) => {}
                    }
                }
            }
            Rule::Drop {
                field,
                status: Some(st),
                ..
            } => {
                path(field)?;
                if !scope.components.is_empty() {
                    return Err(format!(
                        "a status ({st}) names answers, not snapshot entries"
                    ));
                }
                for k in &scope.kinds {
                    if !shape::statuses(k).contains(st) {
                        return Err(format!("the spec never answers {st} to {k}"));
                    }
                    if shape::response_at(k, *st).defines(field) {
                        return Err(format!(
                            "the spec defines `{field}` in {st} answers to {k}: dropping it would hide it"
                        ));
                    }
                }
            }
            Rule::Drop { field, .. } => {
                path(field)?;
                if let Some((what, _)) = shapes().find(|(_, s)| s.defines(field)) {
                    return Err(format!(
                        "the spec defines `{field}` in {what}: dropping it would hide it"
                    ));
                }
            }
            Rule::Rename { field, to, .. } => {
                path(field)?;
                path(to)?;
                if to.contains('.') {
                    return Err(format!("`{to}`: a field name, not a path"));
                }
                if let Some((what, _)) = shapes().find(|(_, s)| s.defines(field)) {
                    return Err(format!(
                        "the spec defines `{field}` in {what}: renaming it would hide it"
                    ));
                }
                let target = sibling(field, to);
                if let Some((what, _)) = shapes().find(|(_, s)| s.field(&target).is_none()) {
                    return Err(format!("`{target}` is no canonical field of {what}"));
                }
            }
            Rule::ActionHead {
                field,
                record,
                present,
                absent,
                ..
            } => {
                path(field)?;
                path(record)?;
                for (what, s) in shapes() {
                    let nested = ["kind", "head.status", &format!("data.{record}")];
                    if let Some(n) = nested
                        .iter()
                        .find(|n| s.field(&format!("{field}.{n}")).is_none())
                    {
                        return Err(format!(
                            "`{field}` is no nested answer with `{n}` in {what}"
                        ));
                    }
                }
                if !(200..400).contains(present) {
                    return Err(format!(
                        "present {present} is not a success: the record beside it would not be compared"
                    ));
                }
                if !(400..500).contains(absent) {
                    return Err(format!("absent {absent} is not a failure"));
                }
            }
        }
        Ok(Checked {
            rule: self.clone(),
            scope,
            empties,
        })
    }
}

impl Checked {
    /// Translate one answer (`env`) to `req`, or one snapshot entry (`req`
    /// `None`), in place.
    pub(super) fn apply(&self, req: Option<&model::api::Request>, env: &mut Value) {
        if let Rule::Status { from, to, .. } = &self.rule {
            if let Some(s) = env.pointer_mut("/head/status") {
                if s.as_u64() == Some(u64::from(*from)) {
                    *s = Value::from(*to);
                }
            }
            return;
        }
        let env_status = env.pointer("/head/status").and_then(Value::as_u64);
        let data = if req.is_some() {
            match env.get_mut("data") {
                Some(d) => d,
                None => return,
            }
        } else {
            env
        };
        match &self.rule {
            Rule::Status { .. } => {}
            Rule::NullIsEmpty { .. } => null_is_empty(data, &self.empties),
            Rule::Add { field, value, .. } => each_parent(data, field, &mut |m, last| {
                if !m.contains_key(last) {
                    m.insert(last.to_string(), value.clone());
                }
            }),
            Rule::Drop { field, status, .. } => {
                if status.is_none() || env_status == status.map(u64::from) {
                    each_parent(data, field, &mut |m, last| {
                        m.remove(last);
                    })
                }
            }
            Rule::Rename { field, to, .. } => each_parent(data, field, &mut |m, last| {
                if !m.contains_key(to.as_str()) {
                    if let Some(v) = m.remove(last) {
                        m.insert(to.clone(), v);
                    }
                }
            }),
            Rule::ActionHead {
                field,
                record,
                present,
                absent,
                ..
            } => {
                let Some(req) = req else { return };
                let mut sent: Option<Value> = None;
                each_parent(data, field, &mut |m, last| {
                    let Some(Value::Object(nested)) = m.get_mut(last) else {
                        return;
                    };
                    if !nested.contains_key("head") {
                        let has = nested
                            .get("data")
                            .and_then(|d| d.get(record.as_str()))
                            .is_some_and(Value::is_object);
                        let status = if has { present } else { absent };
                        nested.insert("head".into(), serde_json::json!({ "status": status }));
                    }
                    if !nested.contains_key("kind") {
                        // The request's own nested action names the kind:
                        // encoded only for a target that leaves it out.
                        let sent = sent.get_or_insert_with(|| model::wire::encode_request(req));
                        if let Some(k) = pointer(sent, field).and_then(|a| a.get("kind")) {
                            nested.insert("kind".into(), k.clone());
                        }
                    }
                });
            }
        }
    }
}

/// The value at dotted `path` (no lists on the way).
fn pointer<'a>(v: &'a Value, path: &str) -> Option<&'a Value> {
    path.split('.').try_fold(v, |v, k| v.get(k))
}

/// `a.b.c` with its last name replaced by `to`.
fn sibling(field: &str, to: &str) -> String {
    match field.rsplit_once('.') {
        Some((parent, _)) => format!("{parent}.{to}"),
        None => to.to_string(),
    }
}

/// A dotted path of non-empty names, none `*`.
fn path(p: &str) -> Result<(), String> {
    if p.split('.').any(|s| s.is_empty() || s == "*") {
        return Err(format!("`{p}` is not a dotted path of field names"));
    }
    Ok(())
}

/// Names checked against the known ones, `*` for all of them.
fn expand(
    names: &[String],
    known: &[&'static str],
    what: &str,
) -> Result<Vec<&'static str>, String> {
    if names.iter().any(|n| n == "*") {
        return Ok(known.to_vec());
    }
    names
        .iter()
        .map(|n| {
            known
                .iter()
                .find(|k| **k == n.as_str())
                .copied()
                .ok_or_else(|| format!("`{n}` is not a {what}"))
        })
        .collect()
}

/// Call `f` with every object holding the last name of `path` (lists on
/// the way are walked element by element) and that name.
fn each_parent(v: &mut Value, path: &str, f: &mut dyn FnMut(&mut Map<String, Value>, &str)) {
    let (head, last) = match path.split_once('.') {
        Some((head, rest)) => (head, Some(rest)),
        None => (path, None),
    };
    match v {
        Value::Array(a) => a.iter_mut().for_each(|x| each_parent(x, path, f)),
        Value::Object(m) => match last {
            None => f(m, head),
            Some(rest) => {
                if let Some(x) = m.get_mut(head) {
                    each_parent(x, rest, f);
                }
            }
        },
        _ => {}
    }
}

/// Every `null` under one of the fields, at any depth, → that field's
/// empty value (`{}` or `[]`, as its canonical type says).
fn null_is_empty(v: &mut Value, empties: &[(String, Value)]) {
    match v {
        Value::Object(m) => {
            for (k, x) in m.iter_mut() {
                match empties.iter().find(|(f, _)| f == k) {
                    Some((_, empty)) if x.is_null() => *x = empty.clone(),
                    _ => null_is_empty(x, empties),
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(|x| null_is_empty(x, empties)),
        _ => {}
    }
}

#[cfg(test)]
mod tests;
