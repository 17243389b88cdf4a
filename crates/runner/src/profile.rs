//! Target profiles: what the spec leaves open, set per target.
//!
//! The spec fixes the handlers but leaves configuration and some
//! observational detail to the implementation. A profile records a
//! target's choices so they are not reported as divergences: the retry
//! timeout (`ServerConfig.retryTimeout`), the wire dialect it speaks,
//! which request kinds it implements at all, and which snapshot
//! components it does not offer for comparison. It never hides behaviour
//! the spec defines: a departure from a defined behaviour is a deviation,
//! named in a baseline ([`crate::baseline`]), never a profile setting.
//!
//! Built-in profiles (`--profile NAME`) live in `crates/runner/profiles/`,
//! one JSON file each with a `reasons` object saying why each setting is
//! what it is; `--profile PATH` loads any file of the same shape.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

use crate::target::Dialect;

/// One target's choices among what the spec leaves open.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase", deny_unknown_fields)]
pub struct Profile {
    /// A name for reports; a profile file without one is named by its path.
    #[serde(default)]
    pub name: String,
    /// `ServerConfig.retryTimeout` of the target (ms).
    pub retry_timeout: u64,
    /// How the target spells the wire and the snapshot.
    pub dialect: Dialect,
    /// Request kinds the target does not implement at all (it answers
    /// them 400 "unknown kind", say): never generated, so the rest is
    /// still checked; the summary lists them.
    pub omit_kinds: Vec<String>,
    /// Snapshot components not compared even when the target has them.
    pub skip_components: Vec<String>,
    /// Whether the target claims durability: what it acknowledged survives
    /// a crash (SIGKILL) and restart. Crash faults of `conform stress
    /// --server-cmd` are injected only into a target that claims it.
    pub durable: bool,
    /// Why each setting is what it is (setting name → reason, with the
    /// Lean file and line where it rests on the spec). Documentation only.
    pub reasons: BTreeMap<String, String>,
}

impl Default for Profile {
    fn default() -> Self {
        Profile {
            name: "spec".to_string(),
            retry_timeout: model::state::DEFAULT_RETRY_TIMEOUT,
            dialect: Dialect::default(),
            omit_kinds: Vec::new(),
            skip_components: Vec::new(),
            durable: true,
            reasons: BTreeMap::new(),
        }
    }
}

/// The built-in profiles, by name.
pub const BUILT_IN: &[(&str, &str)] = &[
    ("spec", include_str!("../profiles/spec.json")),
    ("resonate", include_str!("../profiles/resonate.json")),
    ("ts-eager", include_str!("../profiles/ts-eager.json")),
    ("ts-none", include_str!("../profiles/ts-none.json")),
    ("py", include_str!("../profiles/py.json")),
    ("pg", include_str!("../profiles/pg.json")),
];

impl Profile {
    /// A built-in profile by name, or a profile file by path; the error
    /// names the file (or the known names) and the JSON position.
    pub fn load(name_or_path: &str) -> Result<Profile, String> {
        let (origin, mut v): (String, serde_json::Value) =
            crate::builtin::load(name_or_path, BUILT_IN, "profile")?;
        let builtin = BUILT_IN.iter().any(|(n, _)| *n == name_or_path);
        let mut p: Profile =
            if dialect_file(&mut v, name_or_path, builtin).map_err(|e| format!("{origin}: {e}"))? {
                serde_json::from_value(v).map_err(|e| format!("{origin}: {e}"))?
            } else {
                // Read again as text, for errors with their JSON position.
                crate::builtin::load(name_or_path, BUILT_IN, "profile")?.1
            };
        p.check().map_err(|e| format!("{origin}: {e}"))?;
        if p.name.is_empty() {
            // Never the default's `spec`: that would claim the reference.
            p.name = name_or_path.to_string();
        }
        Ok(p)
    }

    /// Refuse settings that name nothing, or leave nothing to check.
    fn check(&self) -> Result<(), String> {
        for k in &self.omit_kinds {
            if !model::api::KINDS.contains(&k.as_str()) {
                return Err(format!("omitKinds: `{k}` is not a request kind"));
            }
        }
        if model::api::KINDS
            .iter()
            .all(|k| self.omit_kinds.iter().any(|o| o == k))
        {
            return Err(
                "omitKinds leaves out every request kind: a run would send ticks only and check nothing"
                    .into(),
            );
        }
        for c in &self.skip_components {
            if !crate::compare::COMPONENT_NAMES.contains(&c.as_str()) {
                return Err(format!("skipComponents: `{c}` is not a snapshot component"));
            }
        }
        Ok(())
    }

    /// The kinds to generate.
    pub fn kinds(&self) -> gen::Kinds {
        self.omit_kinds.iter().fold(gen::Kinds::ALL, |k, o| {
            k.without(o).expect("checked when loaded")
        })
    }
}

/// A profile's `"dialect": "FILE.json"`: the file beside the profile (a
/// relative path is read from the profile's directory) replaces the name,
/// so a dialect of rules can be kept, and written by `conform triage`, on
/// its own. Errors name the file and the JSON position.
/// Whether there was such a file.
fn dialect_file(v: &mut serde_json::Value, profile: &str, builtin: bool) -> Result<bool, String> {
    let Some(name) = v.get("dialect").and_then(|d| d.as_str()) else {
        return Ok(false);
    };
    if !name.ends_with(".json") {
        return Ok(false);
    }
    if builtin {
        return Err(format!(
            "dialect: a built-in profile writes its dialect in place, not in `{name}`"
        ));
    }
    let dir = std::path::Path::new(profile)
        .parent()
        .unwrap_or(std::path::Path::new(""));
    let path = dir.join(name);
    let text =
        std::fs::read_to_string(&path).map_err(|e| format!("dialect: {}: {e}", path.display()))?;
    let spec: crate::target::DialectSpec = serde_json::from_str(&text).map_err(|e| {
        format!(
            "dialect: {}: line {} column {}: {e}",
            path.display(),
            e.line(),
            e.column()
        )
    })?;
    Dialect::new(spec.clone()).map_err(|e| format!("dialect: {}: {e}", path.display()))?;
    v["dialect"] = serde_json::to_value(spec).expect("a spec serializes");
    Ok(true)
}

/// Where the retry timeout in effect came from. One precedence for every
/// command: an explicit `--retry-timeout`, then an explicit `--profile`,
/// then what the trace (or the golden files) were recorded with, then the
/// spec's default. The user's word wins over a file's; a file's over a
/// default, so replaying a witness without flags reproduces it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RetrySource {
    /// `--retry-timeout`.
    Flag,
    /// `--profile NAME`.
    Profile(String),
    /// The header of the trace or golden files.
    Recorded,
    /// Nothing said: the spec's `ServerConfig` default.
    Default,
}

/// The retry timeout in effect, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RetryTimeout {
    /// Milliseconds.
    pub ms: u64,
    /// Where it came from.
    pub source: RetrySource,
}

impl RetryTimeout {
    /// Apply the precedence to what was said: `flag`, the explicit
    /// `profile`, and the retry timeouts the files were recorded with
    /// (file, ms). Files that disagree, with nothing explicit to settle
    /// it, are refused: the target has one retry timeout.
    pub fn resolve(
        flag: Option<u64>,
        profile: Option<&Profile>,
        recorded: &[(String, u64)],
    ) -> Result<RetryTimeout, String> {
        let (ms, source) = match (flag, profile, recorded.first()) {
            (Some(ms), _, _) => (ms, RetrySource::Flag),
            (None, Some(p), _) => (p.retry_timeout, RetrySource::Profile(p.name.clone())),
            (None, None, Some((first, ms))) => {
                if let Some((other, o)) = recorded.iter().find(|(_, o)| o != ms) {
                    return Err(format!(
                        "recorded with different retry timeouts ({ms} ms in {first}, {o} ms in {other}): \
                         name the target's with --retry-timeout or --profile"
                    ));
                }
                (*ms, RetrySource::Recorded)
            }
            (None, None, None) => (Profile::default().retry_timeout, RetrySource::Default),
        };
        Ok(RetryTimeout { ms, source })
    }
}

impl std::fmt::Display for RetryTimeout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} (", self.ms)?;
        match &self.source {
            RetrySource::Flag => write!(f, "--retry-timeout")?,
            RetrySource::Profile(name) => write!(f, "profile {name}")?,
            RetrySource::Recorded => write!(f, "recorded")?,
            RetrySource::Default => write!(f, "spec default")?,
        }
        write!(f, ")")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_built_in_profile_loads_and_says_why() {
        for (name, _) in BUILT_IN {
            let p = Profile::load(name).unwrap();
            assert_eq!(&p.name, name);
            assert!(
                p.reasons.contains_key("retryTimeout"),
                "{name}: every built-in profile gives its reasons"
            );
        }
        assert_eq!(Profile::load("spec").unwrap().retry_timeout, 5000);
    }

    #[test]
    fn a_bad_profile_names_the_problem() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let f = dir.join("p.json");
        std::fs::write(&f, r#"{"omitKinds": ["task.nope"]}"#).unwrap();
        let e = Profile::load(f.to_str().unwrap()).unwrap_err();
        assert!(e.contains("task.nope"), "{e}");
        std::fs::write(&f, r#"{"ignoreResponseFields": []}"#).unwrap();
        let e = Profile::load(f.to_str().unwrap()).unwrap_err();
        assert!(e.contains("unknown field"), "{e}");
        let e = Profile::load("no-such-profile").unwrap_err();
        assert!(e.contains("ts-eager"), "{e}");
        let all: Vec<&str> = model::api::KINDS.to_vec();
        std::fs::write(&f, serde_json::json!({ "omitKinds": all }).to_string()).unwrap();
        let e = Profile::load(f.to_str().unwrap()).unwrap_err();
        assert!(
            e.contains("every request kind") && e.contains("p.json"),
            "{e}"
        );
    }

    #[test]
    fn the_retry_timeout_is_the_flag_then_the_profile_then_the_recording() {
        let resonate = Profile::load("resonate").unwrap();
        let rec = [("a.ndjson".to_string(), 5000)];
        let r = |flag, p: Option<&Profile>, rec: &[(String, u64)]| {
            RetryTimeout::resolve(flag, p, rec).unwrap().to_string()
        };
        assert_eq!(r(Some(7), Some(&resonate), &rec), "7 (--retry-timeout)");
        assert_eq!(r(None, Some(&resonate), &rec), "30000 (profile resonate)");
        assert_eq!(r(None, None, &rec), "5000 (recorded)");
        assert_eq!(r(None, None, &[]), "5000 (spec default)");
        let mixed = [rec[0].clone(), ("b.ndjson".to_string(), 30000)];
        let e = RetryTimeout::resolve(None, None, &mixed).unwrap_err();
        assert!(e.contains("a.ndjson") && e.contains("b.ndjson"), "{e}");
        assert_eq!(r(None, Some(&resonate), &mixed), "30000 (profile resonate)");
    }

    #[test]
    fn a_run_under_omitted_kinds_counts_coverage_without_them() {
        let py = Profile::load("py").unwrap();
        let spec = crate::check::Checker::new(Profile::default()).coverage;
        let c = crate::check::Checker::new(py.clone()).coverage;
        let omitted = c.omitted();
        assert!(!omitted.is_empty());
        assert!(omitted.iter().all(|b| py
            .omit_kinds
            .iter()
            .any(|k| b.name().starts_with(&format!("{k}/")))));
        assert_eq!(c.reachable_total + omitted.len(), spec.reachable_total);
    }

    #[test]
    fn a_dialect_is_a_name_an_object_or_a_file_beside_the_profile() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let rule = serde_json::json!({"rule": "status", "kinds": ["promise.create"], "from": 201, "to": 200});
        let f = dir.join("inline.json");
        std::fs::write(
            &f,
            serde_json::json!({"dialect": {"rules": [rule]}}).to_string(),
        )
        .unwrap();
        let inline = Profile::load(f.to_str().unwrap()).unwrap().dialect;
        assert_eq!(inline.spec().rules.len(), 1);
        std::fs::write(
            dir.join("mine.dialect.json"),
            serde_json::json!({"rules": [rule]}).to_string(),
        )
        .unwrap();
        let f = dir.join("beside.json");
        std::fs::write(&f, r#"{"dialect": "mine.dialect.json"}"#).unwrap();
        assert_eq!(Profile::load(f.to_str().unwrap()).unwrap().dialect, inline);
        let bad = serde_json::json!({"rules": [{"rule": "drop", "kinds": ["promise.get"], "field": "promise.id"}]});
        std::fs::write(dir.join("bad.dialect.json"), bad.to_string()).unwrap();
        std::fs::write(&f, r#"{"dialect": "bad.dialect.json"}"#).unwrap();
        let e = Profile::load(f.to_str().unwrap()).unwrap_err();
        assert!(
            e.contains("bad.dialect.json") && e.contains("dialect rule 1 (drop promise.id)"),
            "{e}"
        );
        std::fs::write(&f, serde_json::json!({"dialect": bad}).to_string()).unwrap();
        let e = Profile::load(f.to_str().unwrap()).unwrap_err();
        assert!(
            e.contains("beside.json") && e.contains("dialect rule 1 (drop promise.id)"),
            "{e}"
        );
        std::fs::write(&f, r#"{"dialect": "missing.json"}"#).unwrap();
        let e = Profile::load(f.to_str().unwrap()).unwrap_err();
        assert!(e.contains("missing.json"), "{e}");
    }

    #[test]
    fn a_profile_file_without_a_name_is_named_by_its_path() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let f = dir.join("mine.json");
        std::fs::write(&f, r#"{"retryTimeout": 1000}"#).unwrap();
        let path = f.to_str().unwrap();
        assert_eq!(Profile::load(path).unwrap().name, path);
        std::fs::write(&f, r#"{"name": "mine"}"#).unwrap();
        assert_eq!(Profile::load(path).unwrap().name, "mine");
    }
}
