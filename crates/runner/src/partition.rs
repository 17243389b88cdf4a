//! `conform run --partition K/N`: the cases of a run split across N jobs,
//! cargo-nextest's `count:K/N` (job K of N, from 1, runs the cases whose
//! index is K-1 modulo N). A case is named by the run seed and its index
//! alone (`gen::case_seed`); a steered case also depends on the cases
//! before it, which each job generates on its model (`gen::Campaign`), so
//! what a case holds never depends on K or N: the N jobs together run
//! exactly the cases of the unpartitioned run,
//! each once, and their reports merge into its report
//! ([`crate::merge`]).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Job `index` (1-based) of `count`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Partition {
    /// Which job, `1..=count`.
    pub index: u64,
    /// How many jobs share the run.
    pub count: u64,
}

impl Partition {
    /// Whether case `case` of the run is this job's.
    pub fn holds(self, case: u64) -> bool {
        case % self.count == self.index - 1
    }
}

impl FromStr for Partition {
    type Err = String;

    /// `K/N` or `count:K/N`, with `1 <= K <= N`.
    fn from_str(s: &str) -> Result<Partition, String> {
        let bad = || format!("expected K/N (or count:K/N) with 1 <= K <= N, e.g. 2/4, not {s:?}");
        let spec = s.strip_prefix("count:").unwrap_or(s);
        let (k, n) = spec.split_once('/').ok_or_else(bad)?;
        let (index, count) = (
            k.parse::<u64>().map_err(|_| bad())?,
            n.parse::<u64>().map_err(|_| bad())?,
        );
        if index == 0 || index > count {
            return Err(bad());
        }
        Ok(Partition { index, count })
    }
}

impl fmt::Display for Partition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl Serialize for Partition {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Partition {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Partition, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_jobs_of_a_partition_hold_every_case_once() {
        for count in 1..=5 {
            for case in 0..23 {
                let holders = (1..=count)
                    .filter(|&index| Partition { index, count }.holds(case))
                    .count();
                assert_eq!(holders, 1, "case {case} of {count} jobs");
            }
        }
    }

    #[test]
    fn k_of_n_parses_as_nextest_spells_it_and_nothing_else_does() {
        assert_eq!("2/4".parse(), Ok(Partition { index: 2, count: 4 }));
        assert_eq!("count:1/1".parse(), Ok(Partition { index: 1, count: 1 }));
        for bad in [
            "0/4", "5/4", "1/0", "4", "a/b", "-1/2", "1/2/3", "hash:1/2", "",
        ] {
            assert!(bad.parse::<Partition>().is_err(), "{bad}");
        }
        assert_eq!(Partition { index: 3, count: 8 }.to_string(), "3/8");
    }
}
