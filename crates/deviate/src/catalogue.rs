//! The catalogue: every deviation, family by family. A family is one file
//! under [`crate::families`], grouping the departures of one handler area.

use crate::families;
use crate::Deviation;

/// Every family's entries, in catalogue order, each with its file's name.
static FAMILIES: &[(&str, &[Deviation])] = &[
    ("promise", families::promise::ALL),
    ("task_claim", families::task_claim::ALL),
    ("task_version", families::task_version::ALL),
    ("task_lease", families::task_lease::ALL),
    ("task_suspend", families::task_suspend::ALL),
    ("suspend_redirect", families::suspend_redirect::ALL),
    ("task_halt", families::task_halt::ALL),
    ("timeouts", families::timeouts::ALL),
    ("schedule", families::schedule::ALL),
    ("schedule_stub", families::schedule_stub::ALL),
    ("deadline", families::deadline::ALL),
    ("loop_mix", families::loop_mix::ALL),
];

/// Families written but not yet in the catalogue (none: `loop_mix` joined
/// [`FAMILIES`] once aimed generation built its shapes on time, issue 17);
/// kept so that a family written ahead of its gate has a place to wait.
pub static PENDING: &[(&str, &[Deviation])] = &[];

/// Every deviation, in catalogue order.
pub fn all() -> impl Iterator<Item = &'static Deviation> {
    FAMILIES.iter().flat_map(|(_, f)| f.iter())
}

/// Every family's name (its file under `families/`), in catalogue order.
pub fn family_names() -> Vec<&'static str> {
    FAMILIES.iter().map(|(n, _)| *n).collect()
}

/// The catalogue without the families named in `without` (triage infers
/// a baseline from a part of the catalogue, to measure it as it was before
/// some families existed); the error names the first unknown family and
/// lists the known ones.
pub fn without<S: AsRef<str>>(without: &[S]) -> Result<Vec<&'static Deviation>, String> {
    if let Some(bad) = without
        .iter()
        .find(|w| !FAMILIES.iter().any(|(n, _)| *n == w.as_ref()))
    {
        return Err(format!(
            "unknown deviation family `{}`; known: {}",
            bad.as_ref(),
            family_names().join(", ")
        ));
    }
    Ok(FAMILIES
        .iter()
        .filter(|(n, _)| !without.iter().any(|w| w.as_ref() == *n))
        .flat_map(|(_, f)| f.iter())
        .collect())
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_catalogue_without_a_family_lacks_its_entries_and_only_those() {
        let rest = without(&["schedule_stub", "task_version"]).unwrap();
        assert!(rest
            .iter()
            .all(|d| !families::schedule_stub::ALL.contains(d)));
        assert!(rest
            .iter()
            .all(|d| !families::task_version::ALL.contains(d)));
        let gone = families::schedule_stub::ALL.len() + families::task_version::ALL.len();
        assert_eq!(rest.len() + gone, all().count());
        let err = without(&["nope"]).unwrap_err();
        assert!(
            err.contains("`nope`") && err.contains("task_version"),
            "{err}"
        );
    }
}
