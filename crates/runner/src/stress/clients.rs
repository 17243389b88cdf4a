//! One epoch sent by many clients at once: a thread per client, each
//! sending its queue in order, every invocation and completion stamped on
//! the run's one monotonic clock.
//!
//! A re-run may be *paced* ([`Pace`]): the operations are invoked in a
//! given order (a saved history's invocation order), each a gap after the
//! one before it, so the interleaving that showed a race is sent again,
//! rather than left to the threads' scheduling, which on a loaded machine
//! reorders operations sent at once.

use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use gen::Step;

use crate::lin::history::{Operation, Outcome};
use crate::target::{Client, TargetError};

/// What one client did with one step.
struct Sent {
    client: usize,
    step: Step,
    invoke: u64,
    complete: u64,
    result: Result<Option<serde_json::Value>, TargetError>,
}

/// The monotonic clock of a run: µs since it started.
#[derive(Clone, Copy, Debug)]
pub struct Clock(Instant);

impl Clock {
    /// A clock starting now.
    pub fn start() -> Clock {
        Clock(Instant::now())
    }

    /// µs since the start.
    pub fn micros(&self) -> u64 {
        u64::try_from(self.0.elapsed().as_micros()).unwrap_or(u64::MAX)
    }
}

/// The operations of one epoch, and the first fault a client met (a client
/// stops at its fault; the others finish their queues).
pub struct EpochSent {
    /// The operations, in invocation order, ids from `first_id`.
    pub ops: Vec<Operation>,
    /// A fault other than a timeout (a timed-out operation is
    /// indeterminate and recorded as such).
    pub fault: Option<TargetError>,
}

/// An order to invoke an epoch's operations in: the client of each
/// operation, in invocation order (client `c`'s `k`-th entry is its
/// queue's `k`-th step), each invoked `gap` after the one before it was.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pace {
    /// The client of each operation, in invocation order.
    pub order: Vec<usize>,
    /// Between two invocations.
    pub gap: Duration,
}

/// The ranks (places in [`Pace::order`]) of each client's operations.
fn ranks(order: &[usize], clients: usize) -> Vec<Vec<usize>> {
    let mut out = vec![Vec::new(); clients];
    for (rank, &c) in order.iter().enumerate() {
        if let Some(r) = out.get_mut(c) {
            r.push(rank);
        }
    }
    out
}

/// Which ranks were invoked (or given up: a client stopped at a fault
/// gives up the rest of its queue, so no one waits for it) and when the
/// last one was.
struct Turns {
    done: Mutex<(Vec<bool>, Option<Instant>)>,
    turn: Condvar,
}

impl Turns {
    fn new(n: usize) -> Turns {
        Turns {
            done: Mutex::new((vec![false; n], None)),
            turn: Condvar::new(),
        }
    }

    /// Wait until every rank before `rank` was invoked or given up, and
    /// then `gap` after the last invocation.
    fn wait(&self, rank: usize, gap: Duration) {
        let mut g = self.done.lock().expect("turns lock");
        while !g.0[..rank].iter().all(|d| *d) {
            g = self.turn.wait(g).expect("turns lock");
        }
        let last = g.1;
        drop(g);
        if let Some(due) = last.map(|t| t + gap) {
            let now = Instant::now();
            if due > now {
                std::thread::sleep(due - now);
            }
        }
    }

    /// `ranks` were invoked (at the moment this is called) or given up.
    fn mark(&self, ranks: &[usize], invoked: bool) {
        let mut g = self.done.lock().expect("turns lock");
        for &r in ranks {
            g.0[r] = true;
        }
        if invoked {
            g.1 = Some(Instant::now());
        }
        drop(g);
        self.turn.notify_all();
    }
}

pub use gen::epoch::Slot;

/// How the clients of an epoch time their invocations.
#[derive(Clone, Copy, Debug)]
pub enum Sending<'a> {
    /// Each operation as soon as its client's previous one completed,
    /// except that the two of a pair (a step and its rival,
    /// [`gen::epoch::EpochPlan::pairs`]) wait for each other and are
    /// invoked together: whatever each client sent before, they overlap.
    AtOnce(&'a [[Slot; 2]]),
    /// In a given order ([`Pace`]).
    Paced(&'a Pace),
}

/// How long one operation of a pair waits for the other before it is
/// sent alone: a bound only (a client stopped at a fault gives up its
/// pairs at once), so a partner stuck behind a slow request delays it
/// no more than this.
const MEET_BOUND: Duration = Duration::from_secs(2);

/// The pairs of an epoch: which pair each client's operations belong to,
/// and how many of each pair's two have arrived (or were given up).
struct Meets {
    of: Vec<Vec<Option<usize>>>,
    arrived: Mutex<Vec<u8>>,
    met: Condvar,
}

impl Meets {
    /// The pairs of `queues`, sent by `threads` client threads. A slot no
    /// thread reaches (past a queue's end, or of a queue with no client),
    /// a pair on one client and a slot already in an earlier pair count as
    /// arrived at once, so no one waits for them.
    fn new(pairs: &[[Slot; 2]], queues: &[Vec<Step>], threads: usize) -> Meets {
        let mut of: Vec<Vec<Option<usize>>> = queues.iter().map(|q| vec![None; q.len()]).collect();
        let mut arrived = vec![0; pairs.len()];
        for (i, pair) in pairs.iter().enumerate() {
            if pair[0].0 == pair[1].0 {
                arrived[i] = 2;
                continue;
            }
            for &(c, k) in pair {
                match of
                    .get_mut(c)
                    .filter(|_| c < threads)
                    .and_then(|q| q.get_mut(k))
                {
                    Some(x) if x.is_none() => *x = Some(i),
                    _ => arrived[i] += 1,
                }
            }
        }
        Meets {
            of,
            arrived: Mutex::new(arrived),
            met: Condvar::new(),
        }
    }

    /// Client `c` is about to send its `k`-th operation: if it is one of
    /// a pair, wait (at most [`MEET_BOUND`]) until the other is about to
    /// be sent too.
    fn meet(&self, c: usize, k: usize) {
        let Some(pair) = self.of[c][k] else {
            return;
        };
        let mut g = self.arrived.lock().expect("meets lock");
        g[pair] += 1;
        self.met.notify_all();
        let _ = self
            .met
            .wait_timeout_while(g, MEET_BOUND, |g| g[pair] < 2)
            .expect("meets lock");
    }

    /// Client `c` stopped before its `k`-th operation: its partners need
    /// not wait for the rest of its queue.
    fn give_up(&self, c: usize, k: usize) {
        let mut g = self.arrived.lock().expect("meets lock");
        for pair in self.of[c].iter().skip(k).flatten() {
            g[*pair] += 1;
        }
        drop(g);
        self.met.notify_all();
    }
}

/// Send `queues[c]` from client `c`, all clients at once, as `sending`
/// says (paced: in its order, a queue longer than its client's entries in
/// the order sending the rest unpaced).
pub fn run_epoch(
    clients: &mut [Box<dyn Client>],
    queues: &[Vec<Step>],
    epoch: usize,
    first_id: usize,
    clock: Clock,
    sending: Sending,
) -> EpochSent {
    let (pace, pairs) = match sending {
        Sending::AtOnce(pairs) => (None, pairs),
        Sending::Paced(p) => (Some(p), &[][..]),
    };
    let meets = Meets::new(pairs, queues, clients.len());
    let meets = &meets;
    let ranks = pace.map(|p| ranks(&p.order, queues.len()));
    let turns = pace.map(|p| Turns::new(p.order.len()));
    // Entries of the order no queue step answers to (a client beyond the
    // queues, or past its queue's end) are given up at once: no one waits
    // for an operation that is never sent.
    if let (Some(p), Some(t)) = (pace, turns.as_ref()) {
        let sends = |c: usize| queues.get(c).map_or(0, Vec::len);
        let mut seen = vec![0; queues.len()];
        let orphans: Vec<usize> = p
            .order
            .iter()
            .enumerate()
            .filter(|(_, &c)| match seen.get_mut(c) {
                Some(k) => {
                    *k += 1;
                    *k > sends(c)
                }
                None => true,
            })
            .map(|(r, _)| r)
            .collect();
        t.mark(&orphans, false);
    }
    let turns = turns.as_ref();
    let gap = pace.map_or(Duration::ZERO, |p| p.gap);
    let mut sent: Vec<Sent> = std::thread::scope(|s| {
        let handles: Vec<_> = clients
            .iter_mut()
            .zip(queues)
            .enumerate()
            .map(|(c, (client, queue))| {
                let mine: &[usize] = ranks.as_ref().map_or(&[], |r| &r[c]);
                s.spawn(move || {
                    let mut out = Vec::with_capacity(queue.len());
                    for (k, step) in queue.iter().enumerate() {
                        let rank = mine.get(k).copied().zip(turns);
                        if let Some((r, t)) = rank {
                            t.wait(r, gap);
                        }
                        meets.meet(c, k);
                        let invoke = clock.micros();
                        if let Some((r, t)) = rank {
                            t.mark(&[r], true);
                        }
                        let result = client.send(step);
                        let complete = clock.micros();
                        let stop =
                            matches!(&result, Err(e) if !matches!(e, TargetError::Timeout(_)));
                        out.push(Sent {
                            client: c,
                            step: step.clone(),
                            invoke,
                            complete,
                            result,
                        });
                        if stop {
                            if let Some(t) = turns {
                                t.mark(mine.get(k + 1..).unwrap_or(&[]), false);
                            }
                            meets.give_up(c, k + 1);
                            break;
                        }
                    }
                    out
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("a client thread panicked"))
            .collect()
    });
    sent.sort_by_key(|s| (s.invoke, s.client));
    let mut fault = None;
    let ops = sent
        .into_iter()
        .enumerate()
        .map(|(i, s)| {
            let (complete, outcome) = match s.result {
                Ok(res) => (Some(s.complete), Outcome::Ok(res)),
                Err(TargetError::Timeout(m)) => (None, Outcome::Info(format!("timed out: {m}"))),
                Err(e) => {
                    let why = e.to_string();
                    fault.get_or_insert(e);
                    (None, Outcome::Info(why))
                }
            };
            Operation {
                id: first_id + i,
                client: s.client,
                epoch,
                step: s.step,
                invoke: s.invoke,
                complete,
                outcome,
            }
        })
        .collect();
    EpochSent { ops, fault }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    /// A client that notes which client sent each step, in send order
    /// (and fails after `fail_after` steps, as a crashed target makes it).
    struct Noting {
        me: usize,
        seen: Arc<Mutex<Vec<usize>>>,
        fail_after: Option<usize>,
        sent: usize,
        /// How long its first send takes.
        slow_first: Duration,
    }

    impl Client for Noting {
        fn send(&mut self, _: &Step) -> Result<Option<serde_json::Value>, TargetError> {
            self.seen.lock().unwrap().push(self.me);
            if self.sent == 0 {
                std::thread::sleep(self.slow_first);
            }
            self.sent += 1;
            if self.fail_after.is_some_and(|n| self.sent > n) {
                return Err(TargetError::Unreachable("gone".into()));
            }
            Ok(None)
        }
    }

    fn clients(
        n: usize,
        seen: &Arc<Mutex<Vec<usize>>>,
        fail: Option<usize>,
    ) -> Vec<Box<dyn Client>> {
        (0..n)
            .map(|me| {
                Box::new(Noting {
                    me,
                    seen: seen.clone(),
                    fail_after: fail.filter(|_| me == 0),
                    sent: 0,
                    slow_first: Duration::ZERO,
                }) as Box<dyn Client>
            })
            .collect()
    }

    fn ticks(n: usize) -> Vec<Step> {
        (0..n)
            .map(|_| Step {
                now: 1,
                op: gen::Op::Tick,
            })
            .collect()
    }

    #[test]
    fn a_paced_epoch_is_sent_in_its_order() {
        let order = vec![2, 0, 1, 0, 2, 1];
        for _ in 0..5 {
            let seen = Arc::new(Mutex::new(Vec::new()));
            let mut cs = clients(3, &seen, None);
            let queues = vec![ticks(2), ticks(2), ticks(2)];
            let pace = Pace {
                order: order.clone(),
                gap: Duration::from_micros(200),
            };
            let sent = run_epoch(
                &mut cs,
                &queues,
                0,
                0,
                Clock::start(),
                Sending::Paced(&pace),
            );
            assert_eq!(*seen.lock().unwrap(), order);
            let clients: Vec<usize> = sent.ops.iter().map(|o| o.client).collect();
            assert_eq!(clients, order, "invocation stamps follow the order");
        }
    }

    #[test]
    fn a_client_stopped_at_a_fault_or_an_order_too_long_blocks_no_one() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        // Client 0 fails at its second step and sends no third; the order
        // also names a client 3 there is no queue for.
        let mut cs = clients(2, &seen, Some(1));
        let queues = vec![ticks(3), ticks(2)];
        let pace = Pace {
            order: vec![0, 0, 3, 1, 0, 1],
            gap: Duration::ZERO,
        };
        let sent = run_epoch(
            &mut cs,
            &queues,
            0,
            0,
            Clock::start(),
            Sending::Paced(&pace),
        );
        assert_eq!(*seen.lock().unwrap(), vec![0, 0, 1, 1]);
        assert!(sent.fault.is_some());
        assert_eq!(sent.ops.len(), 4);
    }

    /// Client 1's only operation is paired with client 0's second: it is
    /// invoked once client 0 is done with its first (slow) one, not at
    /// the epoch's start, so the two overlap.
    #[test]
    fn the_two_operations_of_a_pair_are_invoked_together() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let mut cs = clients(2, &seen, None);
        cs[0] = Box::new(Noting {
            me: 0,
            seen: seen.clone(),
            fail_after: None,
            sent: 0,
            slow_first: Duration::from_millis(50),
        });
        let queues = vec![ticks(2), ticks(1)];
        let pairs = [[(0, 1), (1, 0)]];
        let sent = run_epoch(
            &mut cs,
            &queues,
            0,
            0,
            Clock::start(),
            Sending::AtOnce(&pairs),
        );
        let first = sent.ops.iter().find(|o| o.client == 0).unwrap();
        let partner = sent.ops.iter().find(|o| o.client == 1).unwrap();
        assert!(
            partner.invoke >= first.complete.unwrap(),
            "client 1 waited for its partner: {:?}",
            sent.ops
        );
        assert_eq!(seen.lock().unwrap()[0], 0);
    }

    /// Client 0 stops at a fault before its paired operation: its partner
    /// does not wait for it (the bound is not reached) and is sent.
    /// Send `queues` with `pairs`: no one may wait out [`MEET_BOUND`].
    fn sent_within_bound(
        cs: &mut [Box<dyn Client>],
        queues: &[Vec<Step>],
        pairs: &[[Slot; 2]],
    ) -> EpochSent {
        let started = Instant::now();
        let sent = run_epoch(cs, queues, 0, 0, Clock::start(), Sending::AtOnce(pairs));
        assert!(
            started.elapsed() < MEET_BOUND,
            "someone waited out the bound"
        );
        sent
    }

    #[test]
    fn a_client_stopped_at_a_fault_gives_up_its_pairs() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let mut cs = clients(2, &seen, Some(0));
        let queues = vec![ticks(2), ticks(1)];
        let pairs = [[(0, 1), (1, 0)]];
        let sent = sent_within_bound(&mut cs, &queues, &pairs);
        assert!(sent.fault.is_some());
        assert_eq!(sent.ops.len(), 2);
        assert!(sent.ops.iter().any(|o| o.client == 1));
    }

    /// Pairs no thread completes (a slot past a queue's end, a queue with
    /// no client, a pair on one client, a slot in two pairs) keep no one
    /// waiting for the bound.
    #[test]
    fn pairs_no_thread_completes_keep_no_one_waiting() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let mut cs = clients(2, &seen, None);
        let queues = vec![ticks(2), ticks(2), ticks(1)];
        let pairs = [
            [(0, 0), (1, 5)],
            [(1, 0), (2, 0)],
            [(0, 1), (0, 0)],
            [(1, 1), (0, 1)],
            [(0, 1), (1, 0)],
        ];
        let sent = sent_within_bound(&mut cs, &queues, &pairs);
        assert_eq!(sent.ops.len(), 4, "two clients, two steps each");
    }
}
