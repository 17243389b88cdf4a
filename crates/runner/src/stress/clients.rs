//! One epoch sent by many clients at once: a thread per client, each
//! sending its queue in order, every invocation and completion stamped on
//! the run's one monotonic clock.

use std::time::Instant;

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

/// Send `queues[c]` from client `c`, all clients at once.
pub fn run_epoch(
    clients: &mut [Box<dyn Client>],
    queues: &[Vec<Step>],
    epoch: usize,
    first_id: usize,
    clock: Clock,
) -> EpochSent {
    let mut sent: Vec<Sent> = std::thread::scope(|s| {
        let handles: Vec<_> = clients
            .iter_mut()
            .zip(queues)
            .enumerate()
            .map(|(c, (client, queue))| {
                s.spawn(move || {
                    let mut out = Vec::with_capacity(queue.len());
                    for step in queue {
                        let invoke = clock.micros();
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
