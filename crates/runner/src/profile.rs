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
    /// A name for reports.
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
            dialect: Dialect::Resonate,
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
];

impl Profile {
    /// A built-in profile by name, or a profile file by path; the error
    /// names the file (or the known names) and the JSON position.
    pub fn load(name_or_path: &str) -> Result<Profile, String> {
        let (origin, p): (String, Profile) =
            crate::builtin::load(name_or_path, BUILT_IN, "profile")?;
        p.check().map_err(|e| format!("{origin}: {e}"))?;
        Ok(p)
    }

    /// Refuse settings that name nothing.
    fn check(&self) -> Result<(), String> {
        for k in &self.omit_kinds {
            if !model::api::KINDS.contains(&k.as_str()) {
                return Err(format!("omitKinds: `{k}` is not a request kind"));
            }
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
        let dir = std::env::temp_dir().join(format!("conform-profile-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("p.json");
        std::fs::write(&f, r#"{"omitKinds": ["task.nope"]}"#).unwrap();
        let e = Profile::load(f.to_str().unwrap()).unwrap_err();
        assert!(e.contains("task.nope"), "{e}");
        std::fs::write(&f, r#"{"ignoreResponseFields": []}"#).unwrap();
        let e = Profile::load(f.to_str().unwrap()).unwrap_err();
        assert!(e.contains("unknown field"), "{e}");
        let e = Profile::load("no-such-profile").unwrap_err();
        assert!(e.contains("ts-eager"), "{e}");
    }
}
