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

use std::cell::RefCell;
use std::collections::HashMap;
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

/// How many parsed expressions a thread keeps before it starts afresh.
const CACHED: usize = 64;

/// `f` of the parsed form of `cron` ([`parse`]), remembered per thread:
/// parsing (the `cron` crate's nom grammar) cost more than all the rest of
/// a model step that asks a schedule's next run, and a run asks it at every
/// step that touches a schedule, of a handful of expressions. A pure
/// memo: the answer is `parse`'s, whatever was asked before.
fn with_parsed<R>(cron: &str, f: impl FnOnce(Option<&cron::Schedule>) -> R) -> R {
    thread_local! {
        static PARSED: RefCell<HashMap<String, Option<cron::Schedule>>> =
            RefCell::new(HashMap::new());
    }
    PARSED.with(|parsed| {
        let mut parsed = parsed.borrow_mut();
        if !parsed.contains_key(cron) {
            if parsed.len() >= CACHED {
                parsed.clear();
            }
            parsed.insert(cron.to_string(), parse(cron));
        }
        f(parsed[cron].as_ref())
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
        with_parsed(cron, |schedule| next_of(schedule, after))
    }

    fn expand(&self, template: &str, id: &str, timestamp: Time) -> String {
        template
            .replace("{{.id}}", id)
            .replace("{{.timestamp}}", &timestamp.to_string())
    }

    fn is_valid(&self, cron: &str) -> bool {
        with_parsed(cron, |schedule| schedule.is_some())
    }
}

/// The next fire time of `schedule` strictly after `after`, or the
/// fallback for an expression that did not parse.
fn next_of(schedule: Option<&cron::Schedule>, after: Time) -> Time {
    let fallback = after.saturating_add(FALLBACK_MS);
    let Some(schedule) = schedule else {
        return fallback;
    };
    let secs = i64::try_from(after / 1000).unwrap_or(i64::MAX);
    let Some(at) = DateTime::<Utc>::from_timestamp(secs, 0) else {
        return fallback;
    };
    let (from, shift) = if at.year() <= LAST_YEAR {
        (at, 0)
    } else {
        fold_year(at).unwrap_or((at, 0))
    };
    match schedule.after(&from).next() {
        Some(next) => u64::try_from(next.timestamp() + shift)
            .map(|s| s.saturating_mul(1000))
            .unwrap_or(fallback),
        None => fallback,
    }
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

    #[test]
    fn templates_expand_id_and_timestamp() {
        assert_eq!(
            RustServerCalendar.expand("{{.id}}-{{.timestamp}}", "s", 60_000),
            "s-60000"
        );
        assert_eq!(RustServerCalendar.expand("fixed", "s", 1), "fixed");
    }
}
