//! Planted concurrency bugs of the reference server: the race catalogue.
//!
//! A **race** makes one handler non-atomic, the way a real server loses
//! its lock (a transaction split in two, a read outside it, an ORM that
//! writes back whole rows): under the lock the handler checks and computes
//! on the state as it is ([`LocalServer::handle_deferred`]); the state is
//! left as it was and the lock released; after a window
//! ([`ServeOptions::race_window`](super::ServeOptions::race_window),
//! default [`DEFAULT_WINDOW`]) the writes it made land blindly
//! ([`LocalServer::write`]): every key it wrote (a promise, a task, a
//! schedule, a timeout, an outbox entry) is overwritten with its value,
//! whatever happened to it meanwhile. The answer is sent after the write,
//! so the operation's interval covers the window, as a real slow handler's
//! does; a handler that wrote nothing answers at once (no rival can
//! overwrite what it did not write). The window closes early once a rival
//! was handled ([`rendezvous`]). The mechanism is the same for every kind
//! (`model::state::State::writes_since` / `apply_writes`); an entry only
//! names the kind it applies to.
//!
//! Alone, a racy handler answers exactly as the spec does: a race shows
//! only when another operation runs inside its window. Each entry's
//! witness is a short sequential prefix and a set of operations sent at
//! once (all at one `now`, as the concurrent run's epochs send them) under
//! which the responses and the final state are explained by no sequential
//! order of the operations (`tests/races.rs` shows it for every entry, and
//! that without the race some order explains them).
//!
//! | name | Lean line | race |
//! |---|---|---|
//! | `race-task.acquire` | T-03:14 | two acquires of one pending task both win |
//! | `race-task.create` | T-02:7 | two creates of one task both claim it |
//! | `race-promise.create` | P-02:7 | two creates of one promise both answer as its creator |
//! | `race-promise.settle` | P-03:10 | a settle racing a suspend strands the task: suspended on a settled promise |
//! | `race-task.suspend` | T-06:23 | a suspend racing a settle writes the promise back to pending |
//! | `race-promise.register_callback` | P-04:18 | two callbacks registered at once on one promise: one is lost |
//! | `race-task.heartbeat` | T-05:11 | a heartbeat renews a lease the tick just expired |
//! | `race-task.fence` | T-04:15 | a fence's inner create races a plain create: both create |
//! | `race-task.release` | T-08:15 | a release racing a fulfill puts the task of a settled promise back to pending |
//! | `race-schedule.delete` | S-03:6 | two deletes of one schedule both succeed |
//! | `race-tick` | 02-timeouts:88 | a schedule firing races its delete and resurrects it |

mod claim;
mod lease;
pub(crate) mod rendezvous;
mod schedule;
mod settle;

use std::time::Duration;

use gen::Step;

#[cfg(doc)]
use crate::target::LocalServer;

/// The default bound of a racy handler's window: it closes as soon as a
/// rival was handled ([`rendezvous`]), and after this long when none comes.
/// Generous, so a rival whose client a loaded machine schedules late still
/// lands inside it.
pub const DEFAULT_WINDOW: Duration = Duration::from_millis(25);

/// The kind a race on the tick names (`debug.tick`).
pub const TICK: &str = "debug.tick";

/// One planted race: a handler made non-atomic.
pub struct Race {
    /// `race-<kind>`, or `race-tick`.
    pub name: &'static str,
    /// The request kind made non-atomic, or [`TICK`].
    pub kind: &'static str,
    /// The Lean file and line of the check the race defeats, at spec
    /// commit 83d64c3.
    pub spec: &'static str,
    /// What the race lets happen, in one line.
    pub summary: &'static str,
    /// The scenario that shows it.
    pub witness: fn() -> Witness,
}

impl std::fmt::Debug for Race {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Race").field("name", &self.name).finish()
    }
}

/// A race's scenario: `prefix` sent one step after another, then
/// `concurrent` sent at once (every step at the same `now`). Under the
/// race, with the operations overlapping in its window, no sequential
/// order of `concurrent` after `prefix` gives the responses and the final
/// state the server gives. The racy operation comes first: the others
/// show the race when they land inside its window, after its check.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Witness {
    /// The sequential steps that build the start state.
    pub prefix: Vec<Step>,
    /// The operations sent at once.
    pub concurrent: Vec<Step>,
}

/// `promise.create` of an internal promise `id` whose param carries
/// `data`: two creates of one id told apart by their answers.
fn create_with(id: &str, data: &str) -> model::api::Request {
    model::api::Request::PromiseCreate(create_req(id, data))
}

fn create_req(id: &str, data: &str) -> model::api::PromiseCreateReq {
    use deviate::families::witness::{none, LATER};
    model::api::PromiseCreateReq {
        id: id.into(),
        timeout_at: LATER,
        param: model::types::Value {
            headers: Default::default(),
            data: Some(data.into()),
        },
        tags: none(),
    }
}

/// Every family's entries, in catalogue order.
static FAMILIES: &[&[Race]] = &[claim::ALL, settle::ALL, lease::ALL, schedule::ALL];

/// Every race, in catalogue order.
pub fn all() -> impl Iterator<Item = &'static Race> {
    FAMILIES.iter().flat_map(|f| f.iter())
}

/// The race called `name`.
pub fn lookup(name: &str) -> Option<&'static Race> {
    all().find(|r| r.name == name)
}

/// Look up several names; the error names the first unknown one and lists
/// the known ones.
pub fn resolve<S: AsRef<str>>(names: &[S]) -> Result<Vec<&'static Race>, String> {
    names
        .iter()
        .map(|n| {
            lookup(n.as_ref()).ok_or_else(|| {
                let known: Vec<_> = all().map(|r| r.name).collect();
                format!("unknown race `{}`; known: {}", n.as_ref(), known.join(", "))
            })
        })
        .collect()
}

/// The races a server runs with: which kinds are non-atomic, and the window.
#[derive(Clone, Debug, Default)]
pub struct Races {
    kinds: Vec<&'static str>,
    /// The bound of a racy handler's wait between its check and its write
    /// (it ends when a rival was handled; a handler that wrote nothing
    /// does not wait).
    pub window: Duration,
}

impl Races {
    /// The set of `races` with `window`.
    pub fn new(races: &[&'static Race], window: Duration) -> Races {
        Races {
            kinds: races.iter().map(|r| r.kind).collect(),
            window,
        }
    }

    /// Whether handlers of `kind` ([`TICK`] for the tick) are non-atomic.
    pub fn covers(&self, kind: &str) -> bool {
        self.kinds.contains(&kind)
    }

    /// No race planted.
    pub fn is_empty(&self) -> bool {
        self.kinds.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_name_their_kind() {
        let mut seen = std::collections::BTreeSet::new();
        for r in all() {
            assert!(seen.insert(r.name), "{} twice", r.name);
            let want = if r.kind == TICK {
                "race-tick".to_string()
            } else {
                format!("race-{}", r.kind)
            };
            assert_eq!(r.name, want);
            assert!(
                r.kind == TICK || model::api::KINDS.contains(&r.kind),
                "{}: {} is no request kind",
                r.name,
                r.kind
            );
            assert!(r.spec.starts_with("spec/02-actions/") && r.spec.contains(".lean:"));
            let w = (r.witness)();
            assert!(w.concurrent.len() >= 2, "{}: a race needs company", r.name);
            let now = w.concurrent[0].now;
            assert!(
                w.concurrent.iter().all(|s| s.now == now),
                "{}: one now",
                r.name
            );
            assert!(
                w.prefix.iter().all(|s| s.now <= now),
                "{}: time goes on",
                r.name
            );
            let racy = |s: &Step| match &s.op {
                gen::Op::Request(req) => req.kind() == r.kind,
                gen::Op::Tick => r.kind == TICK,
            };
            assert!(
                racy(&w.concurrent[0]),
                "{}: the racy operation first",
                r.name
            );
        }
        assert!(seen.len() >= 11);
    }

    #[test]
    fn unknown_names_are_refused_with_the_known_ones() {
        let e = resolve(&["race-nothing"]).unwrap_err();
        assert!(e.contains("race-nothing") && e.contains("race-task.acquire"));
        assert_eq!(resolve(&["race-tick"]).unwrap()[0].kind, TICK);
    }
}
