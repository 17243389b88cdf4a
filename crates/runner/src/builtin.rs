//! Files shipped in the binary (built-in profiles and baselines) or read
//! from disk, by one rule: a known name is the built-in file, anything else
//! a path. Errors name the file (or the known names) and the JSON position.

use std::path::Path;

use serde::de::DeserializeOwned;

/// Read `name_or_path` as a `what` (`profile`, `baseline`): the built-in
/// one of that name, else the file. Returns where it came from (for later
/// messages) and the value.
pub fn load<T: DeserializeOwned>(
    name_or_path: &str,
    built_in: &[(&str, &str)],
    what: &str,
) -> Result<(String, T), String> {
    let (origin, text) = match built_in.iter().find(|(n, _)| *n == name_or_path) {
        Some((n, text)) => (format!("built-in {what} {n}"), text.to_string()),
        None => {
            let path = Path::new(name_or_path);
            let text = std::fs::read_to_string(path).map_err(|e| {
                let names: Vec<&str> = built_in.iter().map(|(n, _)| *n).collect();
                format!(
                    "{}: {e} (built-in {what}s: {})",
                    path.display(),
                    names.join(", ")
                )
            })?;
            (path.display().to_string(), text)
        }
    };
    let value = serde_json::from_str(&text)
        .map_err(|e| format!("{origin}: line {} column {}: {e}", e.line(), e.column()))?;
    Ok((origin, value))
}
