//! The catalogue: every deviation, family by family. A family is one file
//! under [`crate::families`], grouping the departures of one handler area.

use crate::families;
use crate::Deviation;

/// Every family's entries, in catalogue order.
static FAMILIES: &[&[Deviation]] = &[
    families::promise::ALL,
    families::task_claim::ALL,
    families::task_version::ALL,
    families::task_lease::ALL,
    families::task_suspend::ALL,
    families::suspend_redirect::ALL,
    families::task_halt::ALL,
    families::timeouts::ALL,
    families::schedule::ALL,
    families::schedule_stub::ALL,
];

/// Every deviation, in catalogue order.
pub fn all() -> impl Iterator<Item = &'static Deviation> {
    FAMILIES.iter().flat_map(|f| f.iter())
}

/// The deviation called `name`.
pub fn lookup(name: &str) -> Option<&'static Deviation> {
    all().find(|d| d.name == name)
}

/// Every name, in catalogue order.
pub fn names() -> Vec<&'static str> {
    all().map(|d| d.name).collect()
}

/// Look up several names; the error names the first unknown one and lists
/// the known ones.
pub fn resolve<S: AsRef<str>>(names: &[S]) -> Result<Vec<&'static Deviation>, String> {
    names
        .iter()
        .map(|n| {
            lookup(n.as_ref()).ok_or_else(|| {
                format!(
                    "unknown deviation `{}`; known: {}",
                    n.as_ref(),
                    self::names().join(", ")
                )
            })
        })
        .collect()
}
