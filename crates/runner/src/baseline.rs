//! Baselines: the known departures of one real server from the spec, as a
//! small reviewed file naming deviations of the catalogue (`deviate`).
//!
//! `--baseline NAME|PATH` runs the model *with those deviations applied*,
//! so a case goes on past a known departure while everything else is still
//! compared exactly. A departure not yet expressible as a deviation may be
//! listed by its divergence signature (`known`): a case ending on it ends
//! as *known*, counted apart in the summary, because after it the case is
//! blind.
//!
//! Built-in baselines (`ts-eager`, `ts-none`, `resonate`) live in
//! `crates/runner/baselines/`.

use serde::{Deserialize, Serialize};

use deviate::Deviation;

/// One target's known departures.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase", deny_unknown_fields)]
pub struct Baseline {
    /// A name for reports and trace headers.
    pub name: String,
    /// The server and version it describes.
    pub target: String,
    /// Catalogue names of the deviations the target has, outermost first.
    pub deviations: Vec<String>,
    /// Departures known by their divergence signature only.
    pub known: Vec<Known>,
}

/// A departure known by its signature (a divergence class as reports
/// print it, `task.get [data:task.resumes]`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Known {
    /// The divergence class, exactly as printed.
    pub signature: String,
    /// Why it is known and not yet a deviation.
    pub reason: String,
}

/// The built-in baselines, by name.
pub const BUILT_IN: &[(&str, &str)] = &[
    ("ts-eager", include_str!("../baselines/ts-eager.json")),
    ("ts-none", include_str!("../baselines/ts-none.json")),
    ("resonate", include_str!("../baselines/resonate.json")),
    ("py", include_str!("../baselines/py.json")),
    ("pg", include_str!("../baselines/pg.json")),
];

impl Baseline {
    /// A built-in baseline by name or a baseline file by path; the error
    /// names the file (or the known names), the JSON position, or the
    /// unknown deviation.
    /// A baseline file without a `name` is named by its path; one listing
    /// a deviation twice is refused (the model would apply it twice).
    pub fn load(name_or_path: &str) -> Result<(Baseline, Vec<&'static Deviation>), String> {
        let (origin, mut b): (String, Baseline) =
            crate::builtin::load(name_or_path, BUILT_IN, "baseline")?;
        if let Some(d) = b
            .deviations
            .iter()
            .enumerate()
            .find_map(|(i, d)| b.deviations[..i].contains(d).then_some(d))
        {
            return Err(format!("{origin}: deviation `{d}` is listed twice"));
        }
        let devs =
            deviate::catalogue::resolve(&b.deviations).map_err(|e| format!("{origin}: {e}"))?;
        if b.name.is_empty() {
            b.name = name_or_path.to_string();
        }
        Ok((b, devs))
    }

    /// Whether a divergence of class `signature` is known by signature.
    pub fn knows(&self, signature: &str) -> bool {
        self.known.iter().any(|k| k.signature == signature)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_built_in_baseline_loads_and_names_real_deviations() {
        for (name, _) in BUILT_IN {
            let (b, devs) = Baseline::load(name).unwrap();
            assert_eq!(&b.name, name);
            assert_eq!(devs.len(), b.deviations.len());
        }
    }

    #[test]
    fn a_bad_baseline_names_the_problem() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let f = dir.join("b.json");
        std::fs::write(&f, r#"{"deviations": ["no-such-deviation"]}"#).unwrap();
        let e = Baseline::load(f.to_str().unwrap()).unwrap_err();
        assert!(
            e.contains("no-such-deviation") && e.contains("b.json"),
            "{e}"
        );
        std::fs::write(&f, "{\"deviations\": [").unwrap();
        let e = Baseline::load(f.to_str().unwrap()).unwrap_err();
        assert!(e.contains("line 1 column"), "{e}");
        let e = Baseline::load("nope").unwrap_err();
        assert!(e.contains("ts-none"), "{e}");
        std::fs::write(
            &f,
            r#"{"deviations": ["delay-ignored", "heartbeat-ignores-expiry", "delay-ignored"]}"#,
        )
        .unwrap();
        let e = Baseline::load(f.to_str().unwrap()).unwrap_err();
        assert!(e.contains("`delay-ignored` is listed twice"), "{e}");
    }

    #[test]
    fn a_baseline_file_without_a_name_is_named_by_its_path() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let f = dir.join("mine.json");
        for text in [r#"{"deviations": []}"#, r#"{"name": "", "deviations": []}"#] {
            std::fs::write(&f, text).unwrap();
            let (b, _) = Baseline::load(f.to_str().unwrap()).unwrap();
            assert_eq!(b.name, f.to_str().unwrap());
        }
    }
}
