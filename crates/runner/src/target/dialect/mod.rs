//! Target dialects: servers speak the same protocol with different surface
//! details. A dialect translates a target's responses and snapshot into the
//! canonical form (the Rust server's wire, which the model's codec speaks)
//! *without losing what the spec defines*: a detail the canonical form
//! spells differently is translated, never dropped, and a component the
//! target lacks is left absent, so the checker reports it as not compared.
//!
//! A dialect lives behind the [`super::Target`] trait: the checker only ever
//! sees canonical answers. One module per dialect, each difference named
//! with an example in its doc.

mod pg;
mod ts;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Which dialect a target speaks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Dialect {
    /// The Rust `resonate` server's wire: canonical, nothing to translate.
    #[default]
    Resonate,
    /// The TypeScript SDK's in-process server (`@resonatehq/sdk` 0.11.5)
    /// behind `scripts/ts-server`.
    Ts,
    /// resonate-pg (`resonate.sql` 0.1.0) behind `scripts/pg-server`.
    Pg,
}

impl Dialect {
    /// Translate a response envelope to a request of `kind` in place.
    pub fn response(self, kind: &str, env: &mut Value) {
        match self {
            Dialect::Resonate => {}
            Dialect::Ts => ts::response(kind, env),
            Dialect::Pg => pg::response(kind, env),
        }
    }

    /// Translate a snapshot's `data` object in place.
    pub fn snapshot(self, data: &mut Value) {
        match self {
            Dialect::Resonate => {}
            Dialect::Ts => ts::snapshot(data),
            Dialect::Pg => {}
        }
    }

    /// Whether the snapshot's translation is the identity (the snapshot
    /// fast path then reads the body straight into types): resonate-pg's
    /// snapshot is built canonical by its shim.
    pub fn is_canonical(self) -> bool {
        matches!(self, Dialect::Resonate | Dialect::Pg)
    }
}
