//! The Resonate abstract machine of `resonate-specification` at commit
//! `83d64c3`, reimplemented in Rust: the oracle every target is checked
//! against.
//!
//! Pure and deterministic: no IO, no clock, no randomness. Time enters only
//! as the `now` argument. One module per Lean file under [`actions`]; the
//! state and its effects in [`state`]; the spec's opaque `nextCron` and
//! `expand` behind [`calendar::Calendar`].
//!
//! ```
//! use model::api::{PromiseCreateReq, PromiseGetReq, Request, Response};
//! use model::machine::Machine;
//! use model::types::PromiseState;
//!
//! let mut m = Machine::default();
//! let create = Request::PromiseCreate(PromiseCreateReq {
//!     id: "p".into(), timeout_at: 100, param: Default::default(), tags: Default::default(),
//! });
//! assert_eq!(m.apply(&create, 0).status(), 200);
//! // Past its deadline the promise reads as timed out, though nothing fired.
//! let Response::Promise(r) = m.apply(&Request::PromiseGet(PromiseGetReq { id: "p".into() }), 100) else { panic!() };
//! assert_eq!(r.promise.unwrap().state, PromiseState::RejectedTimedout);
//! ```
#![warn(missing_docs)]

pub mod actions;
pub mod api;
pub mod branch;
pub mod calendar;
pub mod machine;
pub mod marker;
pub mod names;
pub mod state;
pub mod types;
pub mod view;
pub mod wire;

/// The spec commit this model implements.
pub const SPEC_COMMIT: &str = "83d64c3";
