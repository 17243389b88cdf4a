//! Field-level edits of requests shared by the shrinker and the golden
//! corpus builder: where a request keeps its ids, deadlines, tags, values
//! and pids, time shifts, and canonical renaming.

use std::collections::HashMap;

use gen::{Op, Step};

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
        for id in promise_ids_mut(r) {
            *id = ids.map(id);
        }
        for tags in tags_mut(r) {
            for key in ["resonate:origin", "resonate:branch", "resonate:parent"] {
                if let Some(v) = tags.get_mut(key) {
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
use model::api::{PromiseCreateReq, Request, TaskFenceAction};
use model::state::DELAY;
use model::types::{Tags, Value};

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
                if let Some(d) = tags.get_mut(DELAY) {
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

/// The promise a request creates (directly, by task.create, or fenced).
pub fn create_mut(r: &mut Request) -> Option<&mut PromiseCreateReq> {
    match r {
        Request::PromiseCreate(c) => Some(c),
        Request::TaskCreate(c) => Some(&mut c.action),
        Request::TaskFence(f) => match &mut f.action {
            TaskFenceAction::Create(c) => Some(c),
            TaskFenceAction::Settle(_) => None,
        },
        _ => None,
    }
}

/// Absolute deadlines carried by a request.
pub fn deadlines_mut(r: &mut Request) -> Vec<&mut u64> {
    create_mut(r)
        .map(|c| vec![&mut c.timeout_at])
        .unwrap_or_default()
}

/// The tag sets a request carries.
pub fn tags_mut(r: &mut Request) -> Vec<&mut Tags> {
    match r {
        Request::ScheduleCreate(c) => vec![&mut c.promise_tags],
        other => create_mut(other)
            .map(|c| vec![&mut c.tags])
            .unwrap_or_default(),
    }
}

/// The params and values a request carries.
pub fn values_mut(r: &mut Request) -> Vec<&mut Value> {
    match r {
        Request::PromiseSettle(c) => vec![&mut c.value],
        Request::TaskFulfill(c) => vec![&mut c.action.value],
        Request::TaskFence(f) => match &mut f.action {
            TaskFenceAction::Create(c) => vec![&mut c.param],
            TaskFenceAction::Settle(c) => vec![&mut c.value],
        },
        Request::ScheduleCreate(c) => vec![&mut c.promise_param],
        other => create_mut(other)
            .map(|c| vec![&mut c.param])
            .unwrap_or_default(),
    }
}

/// The process id a request names.
pub fn pid_mut(r: &mut Request) -> Option<&mut String> {
    match r {
        Request::TaskCreate(c) => Some(&mut c.pid),
        Request::TaskAcquire(c) => Some(&mut c.pid),
        Request::TaskHeartbeat(c) => Some(&mut c.pid),
        _ => None,
    }
}

/// The schedule id a request names.
pub fn schedule_id_mut(r: &mut Request) -> Option<&mut String> {
    match r {
        Request::ScheduleCreate(c) => Some(&mut c.id),
        Request::ScheduleGet(c) => Some(&mut c.id),
        Request::ScheduleDelete(c) => Some(&mut c.id),
        _ => None,
    }
}

/// Every promise/task id a request names.
pub fn promise_ids_mut(r: &mut Request) -> Vec<&mut String> {
    match r {
        Request::PromiseGet(c) => vec![&mut c.id],
        Request::PromiseCreate(c) => vec![&mut c.id],
        Request::PromiseSettle(c) => vec![&mut c.id],
        Request::PromiseRegisterCallback(c) => vec![&mut c.awaited, &mut c.awaiter],
        Request::PromiseRegisterListener(c) => vec![&mut c.awaited],
        Request::TaskGet(c) => vec![&mut c.id],
        Request::TaskCreate(c) => vec![&mut c.action.id],
        Request::TaskAcquire(c) => vec![&mut c.id],
        Request::TaskFence(c) => {
            let inner = match &mut c.action {
                TaskFenceAction::Create(a) => &mut a.id,
                TaskFenceAction::Settle(a) => &mut a.id,
            };
            vec![&mut c.id, inner]
        }
        Request::TaskHeartbeat(c) => c.tasks.iter_mut().map(|t| &mut t.id).collect(),
        Request::TaskSuspend(c) => {
            let mut v = vec![&mut c.id];
            for a in &mut c.actions {
                v.push(&mut a.awaited);
                v.push(&mut a.awaiter);
            }
            v
        }
        Request::TaskFulfill(c) => vec![&mut c.id, &mut c.action.id],
        Request::TaskRelease(c) => vec![&mut c.id],
        Request::TaskHalt(c) => vec![&mut c.id],
        Request::TaskContinue(c) => vec![&mut c.id],
        _ => Vec::new(),
    }
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
