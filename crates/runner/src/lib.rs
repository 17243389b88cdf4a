//! The differential runner behind the `conform` CLI: replays request
//! sequences against the model and a target server over HTTP, diffs every
//! response and the state after every step, saves, replays and shrinks
//! failing traces, and writes and checks golden trace files.
//!
//! Data flow of one step: [`exec`] sends the step to the [`target`] and
//! fetches its snapshot; [`check`] applies it to the model, compares with
//! [`compare`], and on a mismatch searches the latitude the spec allows;
//! [`run`] saves what diverged ([`trace`]), [`shrink`]s it and reports
//! ([`render`], [`report`]).
#![warn(missing_docs)]

pub mod check;
pub mod compare;
pub mod edit;
pub mod exec;
pub mod export;
pub mod golden;
pub mod latitude;
pub mod profile;
pub mod render;
pub mod report;
pub mod run;
pub mod serve;
pub mod shrink;
pub mod snapshot;
pub mod target;
pub mod trace;
pub mod verify;
