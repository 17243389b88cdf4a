//! Pipelining (`--pipeline N`): a window of steps goes out before the
//! first answer is read, with state each with its snapshot after it (for
//! a caller that stops at a divergence; one step and its snapshot at a
//! time for one that may go on past it). The verdicts must be those of
//! one step at a time, step for step; the steps sent past a divergence
//! are counted (`Execution::sent_ahead`), never checked, and their
//! answers (and a faulted step's snapshot's) are read before anything
//! else, so the connection stays in step.

mod common;

use gen::{Op, Step};
use runner::check::Checker;
use runner::exec::{execute, execute_stream_lean, ExecOptions, Execution, Expect};
use runner::profile::Profile;
use runner::serve::{spawn, ServeOptions};
use runner::target::{HttpTarget, Target, TargetError};

const RESPONSES: ExecOptions = ExecOptions { check_state: false };
const STATE: ExecOptions = ExecOptions { check_state: true };

/// What a verdict is made of: each step with its answer and the model's
/// (their `corrId`s aside: the steps sent past a divergence took some),
/// where it diverged and why, and any fault.
fn verdict(ex: &Execution) -> String {
    fn strip(v: &mut serde_json::Value) {
        if let Some(m) = v.as_object_mut() {
            m.remove("corrId");
            m.values_mut().for_each(strip);
        }
    }
    let bare = |v: &Option<serde_json::Value>| {
        let mut v = v.clone();
        v.as_mut().map(strip);
        v
    };
    let lines: Vec<_> = ex
        .lines
        .iter()
        .map(|l| {
            (
                format!("{:?}", l.step),
                bare(&l.res),
                bare(&l.expect),
                l.diverged,
            )
        })
        .collect();
    let at = ex
        .divergence
        .as_ref()
        .map(|(i, d)| (*i, d.class.to_string()));
    format!("{lines:?} {at:?} {:?}", ex.fault)
}

/// How many of `n` steps are sent once step `at`'s answer is read,
/// pipelined `depth` deep: the first `depth` at once, then, each time
/// fewer than half a window is left unread, enough to have `depth` in
/// flight again (the step being read counts).
fn sent_through(at: usize, depth: usize, n: usize) -> usize {
    let (mut sent, mut left) = (0, 0);
    for _ in 0..=at {
        if left == 0 {
            left = depth.min(n - sent);
            sent += left;
        }
        left -= 1;
        if left < depth / 2 {
            let more = (depth - 1 - left).min(n - sent);
            sent += more;
            left += more;
        }
    }
    sent
}

/// Cases 0–39 of seed 1 (60 steps each), each run by `run` against the
/// reference server with `mutant` planted, one request at a time and
/// pipelined 8 deep: the verdicts must be the same case for case, and
/// one at a time sends nothing ahead. The pipelined executions.
fn both_ways(
    mutant: &str,
    run: impl Fn(&mut HttpTarget, &mut Checker, &[Step]) -> Execution,
) -> Vec<Execution> {
    let server = spawn(ServeOptions {
        mutants: vec![mutant.to_string()],
        ..ServeOptions::default()
    })
    .expect("serve");
    let url = server.url();
    let mut one = HttpTarget::new(&url, std::time::Duration::from_secs(5)).unwrap();
    let mut eight = HttpTarget::new(&url, std::time::Duration::from_secs(5))
        .unwrap()
        .with_pipeline(8);
    let case = |target: &mut HttpTarget, c: u64| {
        let mut checker = Checker::new(Profile::default());
        let steps = checker.generate(gen::case_seed(1, c), 60, 0);
        run(target, &mut checker, &steps)
    };
    (0..40)
        .map(|c| {
            let (a, b) = (case(&mut one, c), case(&mut eight, c));
            assert!(verdict(&a) == verdict(&b), "case {c}");
            assert_eq!(a.sent_ahead, 0, "one at a time sends nothing ahead");
            b
        })
        .collect()
}

/// The steps sent past each divergence are those of the window
/// ([`sent_through`]), none where a case finished clean, and at least one
/// case diverged in the middle of a window (whose sent-ahead steps were
/// answered meanwhile, and must not be read as the next case's answers).
fn windows_hold(pipelined: &[Execution]) {
    let mut mid_window = 0;
    for (c, b) in pipelined.iter().enumerate() {
        match &b.divergence {
            Some((at, _)) => {
                let sent = sent_through(*at, 8, 60);
                assert_eq!(b.sent_ahead, sent - at - 1, "case {c}, diverged at {at}");
                assert!(b.sent_ahead < 8, "at most 8 in flight");
                mid_window += usize::from(b.sent_ahead > 0);
            }
            None => assert_eq!(b.sent_ahead, 0, "case {c}"),
        }
    }
    assert!(
        mid_window > 0,
        "the bug must diverge in the middle of a window"
    );
}

/// Against a planted bug seen in responses, every case gets the same
/// verdict pipelined 8 deep as one step at a time.
#[test]
fn a_pipelined_run_gets_the_verdicts_of_one_step_at_a_time() {
    let pipelined = both_ways("settle-at-deadline", |t, checker, steps| {
        execute(t, checker, steps, Expect::Model, RESPONSES)
    });
    windows_hold(&pipelined);
}

/// With state compared, a step goes out with its snapshot and nothing
/// past them: no step is sent past a divergence, and against a bug seen
/// in the state every case gets the verdict of one request at a time.
#[test]
fn state_comparison_sends_a_step_with_its_snapshot_and_nothing_past_them() {
    let pipelined = both_ways("settle-keeps-listeners", |t, checker, steps| {
        execute(t, checker, steps, Expect::Model, STATE)
    });
    assert!(
        pipelined.iter().any(|b| b.divergence.is_some()),
        "the bug must show in the state"
    );
    assert!(pipelined.iter().all(|b| b.sent_ahead == 0));
}

/// A run's cases (`execute_stream_lean`, which stop at a divergence) with
/// state compared send a window of steps, each with its snapshot after
/// it: against a bug seen in the state every case gets the verdict of
/// one request at a time (each snapshot the state after its own step),
/// and the steps sent past a divergence are those of the window.
#[test]
fn a_run_with_state_pipelines_steps_with_their_snapshots() {
    let pipelined = both_ways("settle-keeps-listeners", |t, checker, steps| {
        execute_stream_lean(t, checker, steps, Expect::Model, STATE)
    });
    windows_hold(&pipelined);
}

/// A pipelined run's divergence says how many steps past it the target
/// was sent (and applied), and that the trace ends at the divergence.
#[test]
fn a_divergence_names_the_steps_sent_past_it() {
    let server = spawn(ServeOptions {
        mutants: vec!["settle-at-deadline".to_string()],
        ..ServeOptions::default()
    })
    .expect("serve");
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = common::config(&server.url(), dir.path(), 40, 60);
    cfg.reach.check_state = false;
    cfg.seed = 1;
    let mut out = Vec::new();
    let summary = runner::run::run(&cfg, &mut out).unwrap();
    let out = String::from_utf8_lossy(&out);
    assert_eq!(summary.divergences, 1, "{out}");
    assert!(
        out.contains("pipelined: the target was also sent the ")
            && out.contains(" step(s) after it, which it applied and nothing checked"),
        "{out}"
    );
}

/// A step whose answer is a fault (a 5xx) leaves the answer of the
/// snapshot sent with it owed; whatever comes next on the connection (the
/// next step, a case's start) reads and drops it first, so every later
/// answer is its own.
#[test]
fn a_faulted_step_leaves_no_snapshot_answer_behind() {
    let url = common::fake_target(common::Misbehave::ServerError, 0);
    let mut t = HttpTarget::new(&url, std::time::Duration::from_secs(5))
        .unwrap()
        .with_pipeline(8);
    let mut checker = Checker::new(Profile::default());
    let steps = checker.generate(gen::case_seed(1, 0), 20, 0);
    let request = (steps.iter())
        .find(|s| matches!(s.op, Op::Request(_)))
        .expect("a request")
        .clone();
    let first = [request.clone()];
    let ex = execute(&mut t, &mut checker, &first, Expect::Model, STATE);
    assert!(
        matches!(ex.fault, Some(TargetError::ServerError(_))),
        "{:?}",
        ex.fault
    );
    let again = t.send(&request);
    assert!(
        matches!(again, Err(TargetError::ServerError(_))),
        "{again:?}"
    );
    t.start().expect("the start's own answers");
    let tick = Step {
        now: request.now,
        op: Op::Tick,
    };
    assert_eq!(t.send(&tick).expect("the tick's own answer"), None);
}

/// Two requests of seed 1's first case.
fn two_requests() -> (Step, Step) {
    let checker = Checker::new(Profile::default());
    let steps = checker.generate(gen::case_seed(1, 0), 40, 0);
    let mut requests = (steps.into_iter()).filter(|s| matches!(s.op, Op::Request(_)));
    let first = requests.next().expect("a request");
    (first, requests.next().expect("a second request"))
}

#[test]
fn a_faulted_step_in_a_window_leaves_the_next_steps_answer_its_own() {
    let (url, read) = common::counted_fake_target(common::Misbehave::ServerError, 0);
    let mut t = HttpTarget::new(&url, std::time::Duration::from_secs(5))
        .unwrap()
        .with_pipeline(8);
    t.start().expect("debug.start and debug.reset");
    let (a, b) = two_requests();
    for s in [&a, &b] {
        t.send_ahead(s);
        t.snap_ahead();
    }
    for s in [&a, &b] {
        let answer = t.send(s);
        assert!(
            matches!(answer, Err(TargetError::ServerError(_))),
            "{answer:?}"
        );
    }
    t.start().expect("the start's own answers");
    // Two to start, the window's four, two to start again: the second
    // request was answered once, from the window, never sent again.
    assert_eq!(read.load(std::sync::atomic::Ordering::SeqCst), 8);
}

#[test]
fn a_snapshot_lost_in_a_window_gives_up_the_steps_sent_after_it() {
    let url = common::fake_target(common::Misbehave::DieAtSnap, 0);
    let mut t = HttpTarget::new(&url, std::time::Duration::from_secs(5))
        .unwrap()
        .with_pipeline(8);
    t.start().expect("debug.start and debug.reset");
    let (a, b) = two_requests();
    for s in [&a, &b] {
        t.send_ahead(s);
        t.snap_ahead();
    }
    // The server dies at the first snapshot: its step's answer may or may
    // not be read first, the snapshot is not, and whatever the harness asks
    // next is a fault naming the cause, not a connection out of step.
    let _ = t.send(&a);
    assert!(t.snap().is_err());
    assert!(t.start().is_err());
}
