//! Target profiles: what the spec leaves open, set per target.
//!
//! The spec fixes the handlers but leaves configuration (the retry timeout)
//! and some observational detail to the implementation. A profile records a
//! target's choices so they are not reported as divergences; everything the
//! spec defines is still compared. A profile is a JSON file (every field
//! optional); `Profile::default()` is the spec-exact reference.

use std::path::Path;

use serde::{Deserialize, Serialize};

/// One target's choices among what the spec leaves open.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase", deny_unknown_fields)]
pub struct Profile {
    /// A name for reports.
    pub name: String,
    /// `ServerConfig.retryTimeout` of the target (the Rust server uses 30000).
    pub retry_timeout: u64,
    /// Response fields not compared, as dotted paths under `data`
    /// (e.g. `preload`; the fenced action's inner response is compared by
    /// status and `data` only).
    pub ignore_response_fields: Vec<String>,
    /// Snapshot components not compared even when the target has them.
    pub skip_components: Vec<String>,
    /// Snapshot fields not compared, as `component.field` (e.g. `tasks.ttl`).
    pub ignore_state_fields: Vec<String>,
}

impl Default for Profile {
    fn default() -> Self {
        Profile {
            name: "spec".to_string(),
            retry_timeout: 5000,
            ignore_response_fields: Vec::new(),
            skip_components: Vec::new(),
            ignore_state_fields: Vec::new(),
        }
    }
}

impl Profile {
    /// Read a profile file; the error names the file and the JSON position.
    pub fn load(path: &Path) -> Result<Profile, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        serde_json::from_str(&text).map_err(|e| {
            format!(
                "{}: line {} column {}: {e}",
                path.display(),
                e.line(),
                e.column()
            )
        })
    }
}
