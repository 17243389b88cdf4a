//! Edits of whole traces shared by the shrinker and the golden corpus
//! builder: time shifts and canonical renaming, over the fields
//! `model::names` says a request carries.

use std::collections::HashMap;

use gen::{Op, Step};
use model::names::{deadlines_mut, ids_mut, pid_mut, schedule_id_mut, tags_mut};
use model::state::DELAY;

/// Rename every id, pid and schedule id in `steps` canonically: promise
/// ids by `ids`, schedules to `s1{suffix}`, … and pids to `p1`, `p2`, ….
pub fn rename_all(steps: &[Step], ids: &mut Renamer) -> Vec<Step> {
    let mut pids: HashMap<String, String> = HashMap::new();
    let mut schedules: HashMap<String, String> = HashMap::new();
    let mut out = steps.to_vec();
    for step in &mut out {
        let Op::Request(r) = &mut step.op else {
            continue;
        };
        for id in ids_mut(r) {
            *id = ids.map(id);
        }
        for tags in tags_mut(r) {
            for key in ["resonate:origin", "resonate:branch", "resonate:parent"] {
                if let Some(v) = tags.make_mut().get_mut(key) {
                    *v = ids.map(v);
                }
            }
        }
        if let Some(pid) = pid_mut(r) {
            let n = pids.len() + 1;
            *pid = pids
                .entry(pid.clone())
                .or_insert_with(|| format!("p{n}"))
                .clone();
        }
        if let Some(sid) = schedule_id_mut(r) {
            let n = schedules.len() + 1;
            let suffix = &ids.suffix;
            *sid = schedules
                .entry(sid.clone())
                .or_insert_with(|| format!("s{n}{suffix}"))
                .clone();
        }
    }
    out
}

/// Shift step `from` and everything after it (times and the absolute
/// deadlines the requests carry) down by `by`.
pub fn shift_from(steps: &[Step], from: usize, by: u64) -> Vec<Step> {
    retime(steps, from, |t| t.saturating_sub(by))
}

/// Shift every step and deadline up by `by`.
pub fn shift_up(steps: &[Step], by: u64) -> Vec<Step> {
    retime(steps, 0, |t| t.saturating_add(by))
}

fn retime(steps: &[Step], from: usize, f: impl Fn(u64) -> u64) -> Vec<Step> {
    let mut out = steps.to_vec();
    for step in &mut out[from..] {
        step.now = f(step.now);
        if let Op::Request(r) = &mut step.op {
            for t in deadlines_mut(r) {
                *t = f(*t);
            }
            for tags in tags_mut(r) {
                if let Some(d) = tags.make_mut().get_mut(DELAY) {
                    if let Ok(n) = d.parse::<u64>() {
                        *d = f(n).to_string();
                    }
                }
            }
        }
    }
    out
}

/// Renames ids to `a`, `a.1`, `b`, …: origins by first appearance,
/// children numbered within their origin.
#[derive(Default)]
pub struct Renamer {
    /// Appended to every origin, to keep several scenarios apart.
    pub suffix: String,
    full: HashMap<String, String>,
    origins: HashMap<String, String>,
    children: HashMap<String, usize>,
}

impl Renamer {
    /// A renamer whose origins all end in `suffix`.
    pub fn with_suffix(suffix: impl Into<String>) -> Self {
        Renamer {
            suffix: suffix.into(),
            ..Renamer::default()
        }
    }

    /// The canonical name of `id`, assigned on first sight.
    pub fn map(&mut self, id: &str) -> String {
        if let Some(n) = self.full.get(id) {
            return n.clone();
        }
        let origin = id.split('.').next().unwrap_or(id);
        let next = self.origins.len();
        let suffix = &self.suffix;
        let o = self
            .origins
            .entry(origin.to_string())
            .or_insert_with(|| format!("{}{suffix}", letters(next)))
            .clone();
        let renamed = if origin == id {
            o
        } else {
            let n = self.children.entry(o.clone()).or_insert(0);
            *n += 1;
            format!("{o}.{n}")
        };
        self.full.insert(id.to_string(), renamed.clone());
        renamed
    }
}

/// `a`, `b`, … `z`, `aa`, `ab`, …
pub fn letters(mut n: usize) -> String {
    let mut s = Vec::new();
    loop {
        s.push(b'a' + (n % 26) as u8);
        if n < 26 {
            break;
        }
        n = n / 26 - 1;
    }
    s.reverse();
    String::from_utf8(s).expect("ascii")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn letters_count_like_spreadsheet_columns() {
        assert_eq!(letters(0), "a");
        assert_eq!(letters(25), "z");
        assert_eq!(letters(26), "aa");
    }

    #[test]
    fn children_are_numbered_within_their_origin() {
        let mut r = Renamer::default();
        assert_eq!(r.map("xyz"), "a");
        assert_eq!(r.map("xyz.7"), "a.1");
        assert_eq!(r.map("q.2"), "b.1");
        assert_eq!(r.map("xyz.7"), "a.1");
        assert_eq!(r.map("xyz.9"), "a.2");
    }
}
