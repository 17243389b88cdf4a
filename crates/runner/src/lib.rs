//! The differential runner behind the `conform` CLI: replays request
//! sequences against the model and a target server, diffs every response
//! and the state after every step, saves, replays and shrinks failing
//! traces, and writes and checks golden trace files.
//!
//! Data flow of one step: [`exec`] sends the step to a [`target::Target`]
//! and fetches its snapshot; [`check`] applies it to the model (with a
//! baseline's deviations), compares with [`compare`], and on a mismatch
//! searches the latitude the spec allows; [`run`] saves what diverged
//! ([`repro`]), [`shrink`]s it and reports ([`render`], [`report`]).
#![warn(missing_docs)]

pub mod baseline;
pub mod builtin;
pub mod check;
pub mod compare;
pub mod edit;
pub mod exec;
pub mod export;
pub mod golden;
pub mod latitude;
pub mod lin;
pub mod merge;
pub mod mutants;
pub mod partition;
pub mod profile;
pub mod recorded;
pub mod render;
pub mod replay;
pub mod report;
pub mod repro;
pub mod run;
pub mod serve;
pub mod shrink;
pub mod snapshot;
pub mod stress;
pub mod target;
pub mod trace;
pub mod triage;
pub mod verify;
