//! Generation steps per second for one case of 1,000, 10,000 and 100,000
//! steps. A generated step must cost the same however long the case is
//! (the state grows with it: every promise and task stays): the rates
//! should stay flat, and so should the rate over the last tenth of each
//! case, where its state is largest.
//!
//! A generated step is a choice (reading the generator's pools), the
//! model's step, and the pools' update. To tell the generator's own cost
//! from the model's, the same steps are then replayed on a bare model and
//! the difference is reported as "choosing".
//!
//! Time is the thread's CPU time (`CLOCK_THREAD_CPUTIME_ID`), so other
//! work on the machine counts less; the best of `ROUNDS` runs is kept. The
//! generator is stepped one step at a time (what `conform run` pulls),
//! from the spec's model.
//!
//! Then a campaign's cases (`gen::Campaign`, what `conform run` draws: most
//! cases grown from the corpus, sharpened and aimed) against the same
//! number of random cases of the run's default length, so the price of
//! steering per step is a figure, not a guess.
//!
//! Run: `cargo bench -p resonate-gen --bench generate [-- STEPS…]` (default
//! `1000 10000 100000`; the seed is 1).

use std::hint::black_box;
use std::time::Duration;

use gen::{apply, case_seed, Campaign, GenConfig, Generator, Step, Stepper};
use model::machine::Machine;
use model::state::ServerConfig;

mod support;
use support::{cpu_now, sizes};

/// Runs per size; the fastest is reported.
const ROUNDS: usize = 3;

/// CPU time of a whole case and of its last tenth.
#[derive(Clone, Copy)]
struct Times {
    all: Duration,
    tail: Duration,
}

impl Times {
    fn best(self, other: Times) -> Times {
        Times {
            all: self.all.min(other.all),
            tail: self.tail.min(other.tail),
        }
    }
}

/// Generate one case of `cfg.steps` steps, timing it.
fn generate(cfg: &GenConfig) -> (Times, Vec<Step>) {
    let n = cfg.steps;
    let mut g = Generator::new(1, cfg);
    let mut steps = Vec::with_capacity(n);
    let start = cpu_now();
    let mut tail = start;
    for i in 0..n {
        if i == n - n / 10 {
            tail = cpu_now();
        }
        steps.push(black_box(g.next_step()));
    }
    let end = cpu_now();
    let times = Times {
        all: end - start,
        tail: end - tail,
    };
    (times, steps)
}

/// Replay `steps` on a bare spec model, timing it.
fn replay(cfg: &GenConfig, steps: &[Step]) -> Times {
    let n = steps.len();
    let mut m = Machine::new(ServerConfig {
        retry_timeout: cfg.retry_timeout,
    });
    let start = cpu_now();
    let mut tail = start;
    for (i, s) in steps.iter().enumerate() {
        if i == n - n / 10 {
            tail = cpu_now();
        }
        black_box(apply(&mut m, s));
        m.clear_hits();
    }
    let end = cpu_now();
    Times {
        all: end - start,
        tail: end - tail,
    }
}

/// CPU time of `cases` cases of a campaign of seed 1 (`steered`) or of
/// as many random cases, and the steps made.
fn cases(cfg: &GenConfig, cases: u64, steered: bool) -> (Duration, usize) {
    let mut c = Campaign::new(1, cfg, &Stepper::spec());
    let start = cpu_now();
    let mut n = 0;
    for i in 0..cases {
        n += if steered {
            black_box(c.case_vec(i)).len()
        } else {
            black_box(gen::generate(case_seed(1, i), cfg)).len()
        };
    }
    (cpu_now() - start, n)
}

fn rate(steps: usize, d: Duration) -> f64 {
    steps as f64 / d.as_secs_f64()
}

fn main() {
    let sizes = sizes();
    println!("generate: one case per size, seed 1, spec model, thread CPU time, best of {ROUNDS}");
    println!(
        "generate: {:>7}  {:>12} {:>12}  {:>12} {:>12}  {:>12}  {:>8}",
        "steps", "steps/s", "last tenth", "model alone", "last tenth", "choosing µs", "promises"
    );
    let mut first = None;
    for &n in &sizes {
        let cfg = GenConfig {
            steps: n,
            ..GenConfig::default()
        };
        let (mut gen_t, steps) = generate(&cfg);
        let mut model_t = replay(&cfg, &steps);
        for _ in 1..ROUNDS {
            gen_t = gen_t.best(generate(&cfg).0);
            model_t = model_t.best(replay(&cfg, &steps));
        }
        let mut m = Machine::default();
        steps.iter().for_each(|s| {
            apply(&mut m, s);
        });
        let tenth = n / 10;
        let r = rate(n, gen_t.all);
        let base = *first.get_or_insert(r);
        let choosing = gen_t.all.saturating_sub(model_t.all).as_secs_f64() * 1e6 / n as f64;
        println!(
            "generate: {n:>7}  {r:>12.0} {:>12.0}  {:>12.0} {:>12.0}  {choosing:>12.2}  {:>8}   (×{:.2} of the first)",
            rate(tenth, gen_t.tail),
            rate(n, model_t.all),
            rate(tenth, model_t.tail),
            m.state.promise_count(),
            r / base,
        );
    }
    let cfg = GenConfig::default();
    let (mut random, n) = cases(&cfg, 500, false);
    let (mut steered, m) = cases(&cfg, 500, true);
    for _ in 1..ROUNDS {
        random = random.min(cases(&cfg, 500, false).0);
        steered = steered.min(cases(&cfg, 500, true).0);
    }
    println!(
        "generate: 500 cases of {}: random {:.0} steps/s ({:.1} µs a step), campaign {:.0} steps/s ({:.1} µs a step)",
        cfg.steps,
        rate(n, random),
        random.as_secs_f64() * 1e6 / n as f64,
        rate(m, steered),
        steered.as_secs_f64() * 1e6 / m as f64,
    );
}
