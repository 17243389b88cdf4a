//! The window of a racy handler, held open until a rival arrives.
//!
//! A racy handler checks, releases the lock and writes later; the race
//! shows only when a *rival* — a request writing an object the racy one
//! wrote — is handled in between. A window of a fixed length made that a
//! matter of thread timing: on a loaded machine the rival's client was
//! often scheduled after the window had closed, and the race went unseen.
//! So the window is a rendezvous instead: it stays open until a rival has
//! been handled (its writes name an object the racy handler's writes name),
//! and only then do the racy writes land; when no rival comes, it closes
//! after the bound (`--race-window-ms`), so a racy handler alone still
//! answers as the spec does, a little late. Every request handled while a
//! racy handler waits is handled as the non-atomic ones are (check, then
//! write, in one critical section: the same state as handling it
//! directly), so its writes are known and can be matched.
//!
//! A racy handler that wrote nothing has no window at all
//! (`Core::rendezvous`): nothing it did can be overwritten.
//!
//! A window also closes once [`MOVED_ON`] other requests were handled
//! since its check without a rival among them: the other clients have
//! moved on past that moment (a rival is sent beside the operation it
//! contends with), so the racy handler need not wait out the bound, and a
//! run with many racy operations and few rivals stays fast.

use std::collections::BTreeSet;

use model::state::Writes;
use tokio::sync::oneshot;

/// The objects a set of writes names: a promise with its timeout, a task
/// with its timeouts, a schedule with its timeout, an outbox entry.
fn objects(w: &Writes) -> BTreeSet<String> {
    let tagged = |tag: &str, keys: Vec<&String>| {
        keys.into_iter()
            .map(|k| format!("{tag}{k}"))
            .collect::<Vec<_>>()
    };
    let mut out = BTreeSet::new();
    out.extend(tagged("p:", w.promises.keys().collect()));
    out.extend(tagged("p:", w.promise_timeouts.keys().collect()));
    out.extend(tagged("t:", w.tasks.keys().collect()));
    out.extend(tagged("t:", w.task_timeouts.keys().collect()));
    out.extend(tagged("s:", w.schedules.keys().collect()));
    out.extend(tagged("s:", w.schedule_timeouts.keys().collect()));
    out.extend(tagged("m:", w.outbox.keys().collect()));
    out
}

/// Requests handled after a racy handler's check, none of them its rival,
/// after which its window closes.
pub const MOVED_ON: usize = 8;

/// One racy handler waiting: the objects it wrote, the other requests
/// handled since, and how to wake it.
#[derive(Debug)]
struct Waiter {
    objects: BTreeSet<String>,
    others: usize,
    wake: oneshot::Sender<()>,
}

/// The racy handlers waiting for a rival.
#[derive(Debug, Default)]
pub(crate) struct Waiters(Vec<Waiter>);

impl Waiters {
    /// No racy handler is waiting.
    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// A request was handled and wrote `w`: every waiting handler whose
    /// objects it wrote has met its rival and may land its writes; one
    /// that has seen [`MOVED_ON`] others without a rival closes too.
    pub(crate) fn arrived(&mut self, w: &Writes) {
        if self.0.is_empty() {
            return;
        }
        let wrote = objects(w);
        for mut x in std::mem::take(&mut self.0) {
            x.others += 1;
            if !x.objects.is_disjoint(&wrote) || x.others >= MOVED_ON {
                let _ = x.wake.send(());
            } else if !x.wake.is_closed() {
                self.0.push(x);
            }
        }
    }

    /// A racy handler wrote `w` and waits for a rival: the receiver hears
    /// when one was handled.
    pub(crate) fn wait(&mut self, w: &Writes) -> oneshot::Receiver<()> {
        let (wake, rx) = oneshot::channel();
        self.0.retain(|x| !x.wake.is_closed());
        self.0.push(Waiter {
            objects: objects(w),
            others: 0,
            wake,
        });
        rx
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wrote_task(id: &str) -> Writes {
        let mut w = Writes::default();
        w.tasks.insert(id.to_string(), None);
        w
    }

    #[test]
    fn a_waiter_hears_a_rival_and_nothing_else() {
        let mut ws = Waiters::default();
        let mut a = ws.wait(&wrote_task("a"));
        ws.arrived(&wrote_task("b"));
        assert!(a.try_recv().is_err(), "b is no rival of a");
        assert!(!ws.is_empty());
        ws.arrived(&wrote_task("a"));
        assert!(a.try_recv().is_ok());
        assert!(ws.is_empty());
    }

    #[test]
    fn a_window_closes_once_the_others_moved_on() {
        let mut ws = Waiters::default();
        let mut a = ws.wait(&wrote_task("a"));
        for _ in 1..MOVED_ON {
            ws.arrived(&Writes::default());
        }
        assert!(a.try_recv().is_err());
        ws.arrived(&Writes::default());
        assert!(a.try_recv().is_ok());
    }
}
