//! The spec's two opaque functions, `nextCron` and `expand`
//! (`spec/01-objects/state.lean`), behind a trait so a target profile can
//! swap them.
//!
//! [`RustServerCalendar`] behaves as the Rust `resonate` server does: cron
//! expressions are read by the `cron` crate, a 5-field expression
//! (`min hour dom month dow`) is promoted by a leading `0` seconds field,
//! times are truncated to whole seconds, and the next occurrence is strictly
//! after that second. Because the `cron` crate stops at year 2099, a later
//! instant is mapped to the latest year ≤ 2099 with the same month, day and
//! weekday, and the answer shifted back. An expression that does not parse
//! yields `after + 60 000` (the server's fallback). Templates replace
//! `{{.id}}` with the schedule id and `{{.timestamp}}` with the fire time.

use rustc_hash::FxHashMap;
use std::cell::RefCell;
use std::fmt::Debug;
use std::str::FromStr;

use chrono::{DateTime, Datelike, NaiveDate, Timelike, Utc};

use crate::types::Time;

/// `nextCron` and `expand`.
pub trait Calendar: Debug + Send + Sync {
    /// Next fire time strictly after `after` (ms).
    fn next_cron(&self, cron: &str, after: Time) -> Time;
    /// A schedule's promise id for one occurrence.
    fn expand(&self, template: &str, id: &str, timestamp: Time) -> String;
    /// Whether `cron` is an expression this calendar reads (servers answer
    /// 400 to one it does not; the model itself never rejects).
    fn is_valid(&self, cron: &str) -> bool;
}

/// The Rust `resonate` server's cron and template behaviour.
#[derive(Clone, Copy, Debug, Default)]
pub struct RustServerCalendar;

const FALLBACK_MS: Time = 60_000;
const LAST_YEAR: i32 = 2099;

fn parse(cron: &str) -> Option<cron::Schedule> {
    let expr = if cron.split_whitespace().count() == 5 {
        format!("0 {}", cron.trim())
    } else {
        cron.trim().to_string()
    };
    cron::Schedule::from_str(&expr).ok()
}

/// How many expressions a thread keeps before it starts afresh.
const CACHED: usize = 64;
/// How many next runs a thread keeps per expression before it starts
/// afresh on that expression.
const CACHED_RUNS: usize = 1024;

/// An expression as a thread remembers it: parsed ([`parse`]), and the
/// next runs asked of it, by the whole second they were asked after.
struct Remembered {
    schedule: Option<cron::Schedule>,
    runs: FxHashMap<Time, Option<Time>>,
}

thread_local! {
    static PARSED: RefCell<FxHashMap<String, Remembered>> = RefCell::new(FxHashMap::default());
}

/// `f` of what this thread remembers of `cron`: parsing (the `cron` crate's
/// nom grammar) cost more than all the rest of a model step that asks a
/// schedule's next run, and the next run itself (the crate's iterator)
/// cost about as much, asked again and again of the same second by the
/// generator's trials. A pure memo: every answer is `parse`'s and
/// [`next_of`]'s, whatever was asked before.
fn with_remembered<R>(cron: &str, f: impl FnOnce(&mut Remembered) -> R) -> R {
    PARSED.with(|parsed| {
        let mut parsed = parsed.borrow_mut();
        if !parsed.contains_key(cron) {
            if parsed.len() >= CACHED {
                parsed.clear();
            }
            let fresh = Remembered {
                schedule: parse(cron),
                runs: FxHashMap::default(),
            };
            parsed.insert(cron.to_string(), fresh);
        }
        f(parsed.get_mut(cron).expect("inserted above"))
    })
}

/// The same wall-clock position (month, day, weekday, time of day) in the
/// latest year the `cron` crate handles; returns it with the shift in seconds.
fn fold_year(at: DateTime<Utc>) -> Option<(DateTime<Utc>, i64)> {
    let n = at.naive_utc();
    (1970..=LAST_YEAR).rev().find_map(|y| {
        let d = NaiveDate::from_ymd_opt(y, n.month(), n.day())?;
        if d.weekday() != n.weekday() {
            return None;
        }
        let folded = d.and_hms_opt(n.hour(), n.minute(), n.second())?.and_utc();
        Some((folded, at.timestamp() - folded.timestamp()))
    })
}

impl Calendar for RustServerCalendar {
    fn next_cron(&self, cron: &str, after: Time) -> Time {
        let second = after / 1000;
        let run = with_remembered(cron, |r| {
            let schedule = r.schedule.as_ref()?;
            if r.runs.len() >= CACHED_RUNS {
                r.runs.clear();
            }
            *r.runs
                .entry(second)
                .or_insert_with(|| run_after(schedule, second))
        });
        run.unwrap_or_else(|| fallback(after))
    }

    fn expand(&self, template: &str, id: &str, timestamp: Time) -> String {
        let once = replace(template, "{{.id}}", id);
        replace(&once, "{{.timestamp}}", &timestamp.to_string())
    }

    fn is_valid(&self, cron: &str) -> bool {
        with_remembered(cron, |r| r.schedule.is_some())
    }
}

/// `s` with every occurrence of `pat` (non-overlapping, leftmost first)
/// replaced by `with`: `str::replace`, without its searcher's set-up, which
/// cost more than the search on a template of a few dozen bytes. `pat`
/// starts with an ASCII byte, so every match is on a char boundary; it is
/// never empty.
fn replace(s: &str, pat: &str, with: &str) -> String {
    debug_assert!(!pat.is_empty(), "an empty pattern");
    let (hay, needle) = (s.as_bytes(), pat.as_bytes());
    let mut out = String::with_capacity(s.len() + with.len());
    let (mut copied, mut i) = (0, 0);
    while i + needle.len() <= hay.len() {
        // The first byte first: a slice comparison is a `memcmp` call at
        // every position.
        if hay[i] == needle[0] && hay[i..].starts_with(needle) {
            out.push_str(&s[copied..i]);
            out.push_str(with);
            i += needle.len();
            copied = i;
        } else {
            i += 1;
        }
    }
    out.push_str(&s[copied..]);
    out
}

/// The next fire time of `schedule` strictly after `after`, or the
/// fallback for an expression that did not parse: what the memo of
/// [`RustServerCalendar::next_cron`] must answer (its tests' reference).
#[cfg(test)]
fn next_of(schedule: Option<&cron::Schedule>, after: Time) -> Time {
    schedule
        .and_then(|s| run_after(s, after / 1000))
        .unwrap_or_else(|| fallback(after))
}

/// The server's answer when there is no next run to read.
fn fallback(after: Time) -> Time {
    after.saturating_add(FALLBACK_MS)
}

/// The next run of `schedule` strictly after the whole second `second`
/// (ms), if the `cron` crate finds one in range.
fn run_after(schedule: &cron::Schedule, second: Time) -> Option<Time> {
    let secs = i64::try_from(second).ok()?;
    let at = DateTime::<Utc>::from_timestamp(secs, 0)?;
    let (from, shift) = if at.year() <= LAST_YEAR {
        (at, 0)
    } else {
        fold_year(at).unwrap_or((at, 0))
    };
    let next = schedule.after(&from).next()?;
    u64::try_from(next.timestamp() + shift)
        .ok()
        .map(|s| s.saturating_mul(1000))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn five_fields_fire_on_the_next_minute_strictly_after() {
        let c = RustServerCalendar;
        assert_eq!(c.next_cron("* * * * *", 0), 60_000);
        assert_eq!(c.next_cron("* * * * *", 60_000), 120_000);
        assert_eq!(c.next_cron("* * * * *", 60_500), 120_000);
        assert_eq!(c.next_cron("*/5 * * * *", 1), 300_000);
    }

    #[test]
    fn six_fields_are_used_as_is() {
        assert_eq!(RustServerCalendar.next_cron("*/10 * * * * *", 0), 10_000);
    }

    #[test]
    fn an_unreadable_expression_falls_back_to_a_minute() {
        assert_eq!(RustServerCalendar.next_cron("not a cron", 5), 60_005);
        assert!(!RustServerCalendar.is_valid("not a cron"));
        assert!(RustServerCalendar.is_valid("0 * * * *"));
    }

    /// The per-thread memo answers what a fresh parse does, for every
    /// expression, asked in any order, past the point where it starts
    /// afresh, and for an expression it cannot read.
    #[test]
    fn remembered_expressions_answer_as_a_fresh_parse() {
        let exprs: Vec<String> = (1..=CACHED + 6)
            .map(|m| format!("*/{} * * * *", m % 59 + 1))
            .chain(["not a cron".to_string(), "0 0 * * * *".to_string()])
            .collect();
        for round in 0..3u64 {
            for (i, e) in exprs.iter().enumerate().rev() {
                let after = round * 7_777_777 + i as u64 * 61_001;
                let fresh = next_of(parse(e).as_ref(), after);
                assert_eq!(
                    RustServerCalendar.next_cron(e, after),
                    fresh,
                    "{e} after {after}"
                );
                assert_eq!(RustServerCalendar.is_valid(e), parse(e).is_some(), "{e}");
            }
        }
    }

    #[test]
    fn years_after_2099_are_folded_back_and_shifted() {
        // 2100-01-01T00:00:30Z: the next whole minute is 30 s later.
        let at = DateTime::parse_from_rfc3339("2100-01-01T00:00:30Z")
            .unwrap()
            .timestamp() as u64;
        assert_eq!(
            RustServerCalendar.next_cron("* * * * *", at * 1000),
            (at + 30) * 1000
        );
    }

    /// The hand-written replace answers as `str::replace` does, on
    /// overlapping, adjacent, leading, trailing and multi-byte cases.
    #[test]
    fn replace_answers_as_str_replace() {
        let cases = [
            ("{{.id}}.{{.timestamp}}", "{{.id}}", "s"),
            ("{{.id}}{{.id}}", "{{.id}}", "x{{.id}}"),
            ("{{{.id}}}", "{{.id}}", "é"),
            ("aaaa", "aa", "b"),
            ("é{{.timestamp}}ü", "{{.timestamp}}", "60000"),
            ("", "{{.id}}", "s"),
            ("{{.i", "{{.id}}", "s"),
        ];
        for (s, pat, with) in cases {
            assert_eq!(replace(s, pat, with), s.replace(pat, with), "{s:?}");
        }
    }

    /// Asked again, within the same second and across the memo's reset,
    /// the next run is the one a fresh parse computes.
    #[test]
    fn remembered_runs_answer_as_a_fresh_parse() {
        let e = "*/7 * * * *";
        for round in 0..2u64 {
            for i in 0..(CACHED_RUNS as u64 + 10) {
                let after = i * 997 + round * 13;
                assert_eq!(
                    RustServerCalendar.next_cron(e, after),
                    next_of(parse(e).as_ref(), after),
                    "after {after}"
                );
            }
        }
    }

    #[test]
    fn templates_expand_id_and_timestamp() {
        assert_eq!(
            RustServerCalendar.expand("{{.id}}-{{.timestamp}}", "s", 60_000),
            "s-60000"
        );
        assert_eq!(RustServerCalendar.expand("fixed", "s", 1), "fixed");
    }
}
