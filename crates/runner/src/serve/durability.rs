//! Planted durability bugs of the persistent mode (`conform serve --log`):
//! the catalogue, in the form of the race and deviation catalogues.
//!
//! The persistent server's claim is *acknowledged ⇒ durable*: a step whose
//! answer was sent is in the log ([`super::log`]) and comes back when the
//! server restarts, even after a SIGKILL. Each bug breaks that claim the
//! way real servers do; its witness is the steps to send before a SIGKILL,
//! after which the restarted server's state differs from the state
//! acknowledged (`tests/persist.rs`).
//!
//! | name | what |
//! |---|---|
//! | `ack-before-log` | the answer is sent first; a step's line is written only when the next step is logged, so a crash always loses the last acknowledged one |
//! | `log-loses-tail` | at replay the last entry is lost (cut from the file), as a torn write would lose it |
//! | `tick-not-logged` | ticks are not logged: what they fired is gone after a restart |

use deviate::families::witness::*;
use gen::Step;

/// What a durability bug does to the persistent mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Fault {
    /// Answer first, log in a background flush.
    AckBeforeLog,
    /// Cut the last entry at replay.
    LogLosesTail,
    /// Do not log ticks.
    TickNotLogged,
}

/// One planted durability bug.
pub struct DurabilityBug {
    /// Kebab-case name, unique in the catalogue.
    pub name: &'static str,
    /// What it does to the persistent mode.
    pub fault: Fault,
    /// The guarantee it breaks.
    pub breaks: &'static str,
    /// What it does, in one line.
    pub summary: &'static str,
    /// The steps to send before a SIGKILL: after the restart, the state
    /// is not the one acknowledged.
    pub witness: fn() -> Vec<Step>,
}

impl std::fmt::Debug for DurabilityBug {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DurabilityBug")
            .field("name", &self.name)
            .finish()
    }
}

/// The catalogue.
pub const ALL: &[DurabilityBug] = &[
    DurabilityBug {
        name: "ack-before-log",
        fault: Fault::AckBeforeLog,
        breaks: "acknowledged ⇒ logged",
        summary: "the answer is sent before the step is logged; a step's line is written only when the next one is logged, so a crash loses the last acknowledged step",
        witness: || vec![at(T0, create("a", LATER, none()))],
    },
    DurabilityBug {
        name: "log-loses-tail",
        fault: Fault::LogLosesTail,
        breaks: "logged ⇒ replayed",
        summary: "at restart the log's last entry is cut off and not replayed, as a torn write loses it",
        witness: || {
            vec![
                at(T0, create("a", LATER, none())),
                at(T0, create("b", LATER, none())),
            ]
        },
    },
    DurabilityBug {
        name: "tick-not-logged",
        fault: Fault::TickNotLogged,
        breaks: "every applied step is logged",
        summary: "ticks are not logged: after a restart the timeouts they fired are armed again and what they settled is pending",
        witness: || vec![at(T0, create("a", T0 + 10, timer())), tick(T0 + 10)],
    },
];

/// The bug called `name`.
pub fn lookup(name: &str) -> Option<&'static DurabilityBug> {
    ALL.iter().find(|b| b.name == name)
}

/// The set of bugs a persistent server runs with.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Bugs(Vec<Fault>);

impl Bugs {
    /// The bugs named; the error names the first unknown one and lists the
    /// known ones.
    pub fn resolve<S: AsRef<str>>(names: &[S]) -> Result<Bugs, String> {
        let faults = names
            .iter()
            .map(|n| {
                lookup(n.as_ref()).map(|b| b.fault).ok_or_else(|| {
                    let known: Vec<_> = ALL.iter().map(|b| b.name).collect();
                    format!(
                        "unknown durability bug `{}`; known: {}",
                        n.as_ref(),
                        known.join(", ")
                    )
                })
            })
            .collect::<Result<_, _>>()?;
        Ok(Bugs(faults))
    }

    /// Whether `fault` is planted.
    pub fn has(&self, fault: Fault) -> bool {
        self.0.contains(&fault)
    }

    /// None planted.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_entry_resolves_to_its_own_fault() {
        let mut seen = Vec::new();
        for b in ALL {
            let bugs = Bugs::resolve(&[b.name]).unwrap();
            assert!(bugs.has(b.fault), "{}", b.name);
            assert!(!seen.contains(&b.fault), "{} shares a fault", b.name);
            seen.push(b.fault);
            assert!(!(b.witness)().is_empty());
        }
        let e = Bugs::resolve(&["fsync-lies"]).unwrap_err();
        assert!(e.contains("fsync-lies") && e.contains("ack-before-log"));
    }
}
