//! Adding a branch to `model::branch` without a test fails CI: every branch
//! in `branch::ALL` must have a `#[test] fn <test_name>()` in one of the four
//! branch test files, and every such test must name a branch that exists
//! (so a renamed branch does not leave a stale test behind).

use model::branch::ALL;

/// The branch test files, read at compile time.
const FILES: [(&str, &str); 4] = [
    ("branches_promise.rs", include_str!("branches_promise.rs")),
    ("branches_task.rs", include_str!("branches_task.rs")),
    ("branches_schedule.rs", include_str!("branches_schedule.rs")),
    ("branches_internal.rs", include_str!("branches_internal.rs")),
];

/// The names of the `#[test]` functions of `src`: an fn whose previous
/// non-blank line is `#[test]`.
fn tests_in(src: &str) -> Vec<&str> {
    let lines: Vec<&str> = src.lines().map(str::trim).collect();
    let mut names = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some(rest) = line.strip_prefix("fn ") else {
            continue;
        };
        let is_test = lines[..i]
            .iter()
            .rev()
            .find(|l| !l.is_empty())
            .is_some_and(|l| *l == "#[test]");
        if is_test {
            names.push(rest.split('(').next().unwrap_or(rest));
        }
    }
    names
}

#[test]
fn every_branch_has_a_test() {
    let tests: Vec<&str> = FILES.iter().flat_map(|(_, src)| tests_in(src)).collect();
    let missing: Vec<String> = ALL
        .iter()
        .map(|b| b.test_name())
        .filter(|name| !tests.contains(&name.as_str()))
        .collect();
    assert!(
        missing.is_empty(),
        "branches without a `#[test] fn <name>()` in tests/branches_*.rs: {missing:#?}"
    );
}

#[test]
fn every_branch_test_names_a_branch() {
    let names: Vec<String> = ALL.iter().map(|b| b.test_name()).collect();
    for (file, src) in FILES {
        for test in tests_in(src) {
            assert!(
                names.iter().any(|n| n == test),
                "{file}: `{test}` names no branch in model::branch::ALL"
            );
        }
    }
}

#[test]
fn each_branch_is_tested_once() {
    let tests: Vec<&str> = FILES.iter().flat_map(|(_, src)| tests_in(src)).collect();
    assert_eq!(tests.len(), ALL.len(), "one test per branch, no more");
}
