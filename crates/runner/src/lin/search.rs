//! The linearizability search of one epoch, in the manner of Wing & Gong
//! and Lowe as porcupine runs it: a depth-first search over the operations
//! that may come next in real time, each tried against the model, with a
//! memo of (operations linearized, model state) so no configuration is
//! explored twice, and the model's undo journal for backtracking.
//!
//! Besides the operations, a move may fire one armed timeout due at the
//! epoch's `now`: the spec lets the environment fire it at any moment after
//! its deadline, so between any two operations any due subset may have
//! fired, in any order. A tick is not one point but an interval of
//! firings (a server's tick is a batch of firings, not one transaction):
//! where it *starts* it reads what is due, and by where it *ends* each of
//! those has fired, by it or by anyone; what other operations arm while it
//! runs it need not see. Between its start and its end other operations
//! and firings may come (ARCHITECTURE.md, "The concurrent run"). A
//! baseline whose deviations change the tick as a whole (one batch) keeps
//! the tick at one point, as that server's tick is. An indeterminate
//! operation (`info`) may take effect with any response, or never. A full linearization is accepted when the model's
//! state equals the epoch's closing snapshot.

use std::collections::HashSet;
use std::hash::{Hash, Hasher};

use serde_json::Value;

use deviate::Deviant;
use gen::Op;
use model::machine::Timer;
use model::state::Mark;

use super::barrier::Expected;
use super::history::Operation;
use super::partition::{Key, Partition};
use super::reduce::{self, Footprint};
use crate::compare::{normalize_response, StateDiff};

/// One move of a linearization.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Move {
    /// The operation with this history id took effect (a tick: ended).
    Op(usize),
    /// The tick with this history id started: it read what was due.
    TickStart(usize),
    /// This due timer fired.
    Fire(Timer),
}

/// An operation the model could not place where the search tried it: what
/// the model answered there and what the target had answered.
#[derive(Clone, Debug, PartialEq)]
pub struct Misfit {
    /// The moves before it (the deepest partial order reached).
    pub after: Vec<Move>,
    /// The operation's history id.
    pub op: usize,
    /// The model's normalised response at that point.
    pub model: Value,
    /// The target's normalised response.
    pub target: Value,
}

/// What one epoch's search found.
#[derive(Debug, Default)]
pub struct Found {
    /// Accepted end states: the model after a full linearization that the
    /// snapshot agrees with (`None`: the searched model itself, left in
    /// that state, so a pinned epoch copies nothing), and the indeterminate
    /// operations it left out.
    pub ends: Vec<(Option<Deviant>, Vec<usize>)>,
    /// The order of the first accepted end.
    pub order: Vec<Move>,
    /// Where the deepest failed attempts stopped (for the report).
    pub misfits: Vec<Misfit>,
    /// The state difference of the first full linearization the snapshot
    /// refused, if one was reached.
    pub state_refused: Option<(Vec<Move>, Vec<StateDiff>)>,
    /// Configurations explored.
    pub nodes: u64,
    /// Configurations found again in the memo.
    pub memo_hits: u64,
    /// Whether the node budget ran out before the search was done.
    pub truncated: bool,
    /// Whether ends beyond [`EpochInput::max_ends`] may have been dropped.
    pub dropped: bool,
    /// The components the epoch was split into ([`Partition`]; 1: none).
    pub components: usize,
    /// The most candidates one component held (ticks included).
    pub largest: usize,
    /// When a component could not be ordered: the history ids of its
    /// operations (the report's window is searched among those alone).
    pub failing: Option<Vec<usize>>,
    /// Components searched in full because the reduction could not vouch
    /// for them (a move wrote outside its footprint, a timer joined two
    /// groups at the close, a snapshot only a whole comparison judges).
    pub unreduced: usize,
}

/// The inputs of one epoch's search.
pub struct EpochInput<'a> {
    /// The candidates: this epoch's operations and the indeterminate ones
    /// of earlier epochs that may still take effect.
    pub ops: Vec<&'a Operation>,
    /// The epoch's `now` (firings happen at it).
    pub now: u64,
    /// What the closing snapshot expects, if state is compared.
    pub snap: Option<&'a Expected<'a>>,
    /// Components not compared.
    pub skip: &'a [String],
    /// Find every accepted end (the snapshot does not pin the state), not
    /// just the first.
    pub collect_all: bool,
    /// Stop after this many configurations.
    pub budget: u64,
    /// With `collect_all`, stop once this many ends are found (the rest
    /// are dropped, and [`Found::dropped`] says so).
    pub max_ends: usize,
    /// Fire due timers only where their place can matter ([`reduce`]);
    /// honoured only for a model whose deviations all stay in their
    /// footprint (`deviate::Hooks::stays_in_footprint`) and a search
    /// pinned by a snapshot.
    pub reduce: bool,
}

/// What trying one move left the search to do ([`Search::try_move`]).
enum Tried {
    /// An end was accepted below it: stop, the model left in that state.
    Accepted,
    /// Explored and undone: try the next move.
    Next,
    /// Undone, and the search unwinds (budget, enough ends, or the
    /// reduction could not vouch for it).
    Unwind,
}

/// How many misfits a report keeps.
const MAX_MISFITS: usize = 16;

struct Search<'a> {
    input: &'a EpochInput<'a>,
    /// The component searched, when the epoch is split: only its timers
    /// fire, and only its objects are compared at the end.
    scope: Option<(&'a Partition, usize)>,
    /// Bit i: `input.ops[i]` must be linearized (its outcome is known).
    required: u128,
    /// Completion per op; `u64::MAX` for indeterminate ones.
    complete: Vec<u64>,
    base: Mark,
    memo: HashSet<(u128, u64)>,
    path: Vec<Move>,
    found: Found,
    deepest: u32,
    /// Set when enough ends were collected: unwind without accepting.
    stop: bool,
    /// Per op: the timers a started, not yet ended tick read as due.
    started: Vec<Option<Vec<Timer>>>,
    /// Whether ticks are intervals (else one point: a baseline's tick hook).
    split_ticks: bool,
    /// Whether the partial-order reduction is on.
    reduce: bool,
    /// Set when the reduction cannot vouch for the search: unwind, and
    /// search again in full.
    escaped: bool,
}

/// Search one epoch from the model's current state. On success without
/// `collect_all`, the model is left in the accepted end state (journal
/// committed); otherwise it is left as it was.
///
/// Without `collect_all`, and when the barrier compares incrementally, the
/// epoch is split into independent components ([`Partition`]), each
/// searched alone from the end of the ones before (which it cannot touch,
/// so from the epoch's start as far as it can see), and the composed end
/// is checked against the objects no component holds.
pub fn search_epoch(model: &mut Deviant, input: &EpochInput) -> Found {
    assert!(
        input.ops.len() <= 128,
        "an epoch holds at most 128 operations"
    );
    let split = !input.collect_all && input.snap.is_none_or(|e| e.incremental());
    let part = if split {
        Partition::of(model, &input.ops, input.now)
    } else {
        Partition::whole(input.ops.len())
    };
    if !part.is_whole() {
        return search_split(model, input, &part);
    }
    let (done, mut s) = run(model, input, None);
    let base = s.base;
    if done {
        s.found.order = s.path.clone();
        let left_out = s.left_out(s.linearized_on_path());
        model.state.commit();
        s.found.ends.push((None, left_out));
    } else {
        model.state.rollback(base);
        model.state.commit();
    }
    s.found.components = 1;
    s.found.largest = input.ops.len();
    s.found
}

/// Search each component of `part` in turn; the composed end, or the
/// first component no order explains.
fn search_split(model: &mut Deviant, input: &EpochInput, part: &Partition) -> Found {
    let base = model.state.checkpoint();
    let mut found = Found {
        components: part.components.len(),
        largest: part
            .components
            .iter()
            .map(|c| c.ops.len())
            .max()
            .unwrap_or(0),
        ..Found::default()
    };
    let mut order = Vec::new();
    let mut left_out = Vec::new();
    for (c, comp) in part.components.iter().enumerate() {
        let sub = EpochInput {
            ops: comp.ops.iter().map(|&i| input.ops[i]).collect(),
            now: input.now,
            snap: input.snap,
            skip: input.skip,
            collect_all: false,
            budget: input.budget.saturating_sub(found.nodes),
            max_ends: 1,
            reduce: input.reduce,
        };
        let (done, mut s) = run(model, &sub, Some((part, c)));
        found.nodes += s.found.nodes;
        found.memo_hits += s.found.memo_hits;
        found.unreduced += s.found.unreduced;
        if !done {
            found.truncated = s.found.truncated;
            found.misfits = s.found.misfits;
            found.state_refused = s.found.state_refused.map(|(path, diff)| {
                let mut full = order.clone();
                full.extend(path);
                (full, diff)
            });
            found.failing = Some(sub.ops.iter().map(|o| o.id).collect());
            model.state.rollback(base);
            model.state.commit();
            return found;
        }
        left_out.extend(s.left_out(s.linearized_on_path()));
        order.extend(std::mem::take(&mut s.path));
    }
    // The closing check: each component compared its own objects; what is
    // left are objects the target changed that no operation or due timer
    // of the epoch could touch. No order can explain those.
    if let Some(exp) = input.snap {
        if !exp.agrees(&model.state, base, input.skip) {
            found.state_refused = Some((order, exp.diff(&model.state, input.skip)));
            model.state.rollback(base);
            model.state.commit();
            return found;
        }
    }
    left_out.sort_unstable();
    left_out.dedup();
    model.state.commit();
    found.order = order;
    found.ends.push((None, left_out));
    found
}

/// Search `input` (within `scope`) reduced where the reduction applies;
/// when it cannot vouch for the component, again in full from the same
/// state. Whether an end was accepted, and the search.
fn run<'a>(
    model: &mut Deviant,
    input: &'a EpochInput<'a>,
    scope: Option<(&'a Partition, usize)>,
) -> (bool, Search<'a>) {
    let reduce = input.reduce
        && deviate::all_stay_in_footprint(model.deviations())
        && !input.collect_all
        && input.snap.is_some();
    let mut s = Search::new(model, input, scope, reduce);
    let done = s.dfs(model, 0);
    if !s.escaped {
        return (done, s);
    }
    model.state.rollback(s.base);
    let mut full = Search::new(model, input, scope, false);
    full.found.nodes = s.found.nodes;
    full.found.memo_hits = s.found.memo_hits;
    full.found.unreduced = 1;
    let done = full.dfs(model, 0);
    (done, full)
}

impl<'a> Search<'a> {
    /// A search of `input` (within `scope`, when split) from the model's
    /// current state.
    fn new(
        model: &mut Deviant,
        input: &'a EpochInput<'a>,
        scope: Option<(&'a Partition, usize)>,
        reduce: bool,
    ) -> Search<'a> {
        let required = input
            .ops
            .iter()
            .enumerate()
            .filter(|(_, o)| o.is_ok())
            .fold(0u128, |m, (i, _)| m | 1 << i);
        let complete = input
            .ops
            .iter()
            .map(|o| o.complete.unwrap_or(u64::MAX))
            .collect();
        Search {
            input,
            scope,
            required,
            complete,
            base: model.state.checkpoint(),
            memo: HashSet::new(),
            path: Vec::new(),
            found: Found::default(),
            deepest: 0,
            stop: false,
            started: vec![None; input.ops.len()],
            split_ticks: !model.deviations().iter().any(|d| d.hooks.batches_tick()),
            reduce,
            escaped: false,
        }
    }

    /// The reduction cannot vouch for this search: unwind.
    fn escape(&mut self) {
        self.escaped = true;
        self.stop = true;
    }

    /// Whether `t` is this search's to fire.
    fn owns(&self, t: &Timer) -> bool {
        self.scope
            .is_none_or(|(part, c)| part.holds(c, &Key::of_timer(t)))
    }

    /// The due timers this search may fire.
    fn due(&self, model: &Deviant, now: u64) -> Vec<Timer> {
        let mut due = model.due(now);
        if self.scope.is_some() {
            due.retain(|t| self.owns(t));
        }
        due
    }

    /// Returns true when an end was accepted and the search should stop
    /// (the model then stays in that state).
    fn dfs(&mut self, model: &mut Deviant, lin: u128) -> bool {
        let key = (
            lin,
            model.state.fingerprint_since(self.base) ^ self.started_key(),
        );
        if !self.memo.insert(key) {
            self.found.memo_hits += 1;
            return false;
        }
        self.found.nodes += 1;
        if self.found.nodes > self.input.budget {
            self.found.truncated = true;
            return false;
        }
        if lin & self.required == self.required {
            let accepted = if self.reduce {
                self.close(model)
            } else {
                self.accept(model, lin)
            };
            if accepted {
                return true;
            }
        }
        if self.found.truncated || self.stop {
            return false;
        }
        let candidates = self.candidates(lin);
        if self.split_ticks {
            // A tick starts as soon as real time lets it: starting later
            // could only oblige it to fire more (what was armed meanwhile),
            // so the earliest start explains all a later one does.
            let unstarted = candidates
                .iter()
                .find(|&&i| self.is_tick(i) && self.started[i].is_none());
            if let Some(&i) = unstarted {
                return self.start_tick(model, i, lin);
            }
        }
        for &i in &candidates {
            if self.split_ticks && self.is_tick(i) {
                if self.end_tick(model, i, lin) {
                    return true;
                }
                if self.found.truncated || self.stop {
                    return false;
                }
                continue;
            }
            let footprint = self.footprint_of(model, i);
            let tried = self.try_move(
                model,
                footprint.as_ref().as_slice(),
                |s, m| s.apply(m, i, lin).then(|| Move::Op(s.input.ops[i].id)),
                |s, m| s.dfs(m, lin | 1 << i),
            );
            match tried {
                Tried::Accepted => return true,
                Tried::Unwind => return false,
                Tried::Next => {}
            }
        }
        let due = self.due(model, self.input.now);
        let due = if self.reduce {
            self.observed_due(model, &candidates, due)
        } else {
            due.into_iter().map(|t| (t, None)).collect()
        };
        for (t, footprint) in due {
            match self.try_move(
                model,
                footprint.as_ref().as_slice(),
                |s, m| s.fire(m, t),
                |s, m| s.dfs(m, lin),
            ) {
                Tried::Accepted => return true,
                Tried::Unwind => return false,
                Tried::Next => {}
            }
        }
        false
    }

    /// One move of the search: `act` makes it (`None`: the model refused
    /// it, a response that is not the recorded one), its writes must stay
    /// within every footprint of `within` (else the reduction cannot vouch
    /// for the search: unwind), and `then` goes on from there. Undone
    /// unless `then` accepted an end.
    fn try_move(
        &mut self,
        model: &mut Deviant,
        within: &[&Footprint],
        act: impl FnOnce(&mut Self, &mut Deviant) -> Option<Move>,
        then: impl FnOnce(&mut Self, &mut Deviant) -> bool,
    ) -> Tried {
        let mark = model.state.checkpoint();
        if let Some(mv) = act(self, model) {
            if !within
                .iter()
                .all(|f| reduce::writes_within(&model.state, mark, f))
            {
                model.state.rollback(mark);
                self.escape();
                return Tried::Unwind;
            }
            self.path.push(mv);
            if then(self, model) {
                return Tried::Accepted;
            }
            self.path.pop();
        }
        model.state.rollback(mark);
        if self.found.truncated || self.stop {
            Tried::Unwind
        } else {
            Tried::Next
        }
    }

    /// Fire due timer `t` at the epoch's `now`.
    fn fire(&mut self, model: &mut Deviant, t: Timer) -> Option<Move> {
        model.fire(&t, self.input.now);
        Some(Move::Fire(t))
    }

    /// With the reduction on, what candidate `i` (a request) may touch.
    fn footprint_of(&self, model: &Deviant, i: usize) -> Option<Footprint> {
        match &self.input.ops[i].step.op {
            Op::Request(req) if self.reduce => Some(reduce::of_request(&model.state, req)),
            _ => None,
        }
    }

    /// The due timers that may fire here under the reduction, each with
    /// its footprint: those connected to a candidate request, or to what a
    /// started tick still has to fire at its end. Any other due timer
    /// commutes with every move that can come next, so firing it later
    /// (before its first observer, or at the close) explains the same.
    fn observed_due(
        &self,
        model: &Deviant,
        candidates: &[usize],
        due: Vec<Timer>,
    ) -> Vec<(Timer, Option<Footprint>)> {
        let now = self.input.now;
        let due: Vec<(Timer, Footprint)> = due
            .into_iter()
            .map(|t| {
                let f = reduce::of_timer(model, &t, now);
                (t, f)
            })
            .collect();
        let mut seed = Footprint::default();
        for &i in candidates {
            if let Some(f) = self.footprint_of(model, i) {
                seed.extend(&f);
            }
        }
        for read in self.started.iter().flatten() {
            for (t, f) in &due {
                if read.contains(t) {
                    seed.extend(f);
                }
            }
        }
        let inside = reduce::observed(&due, &seed);
        due.into_iter()
            .zip(inside)
            .filter(|(_, yes)| *yes)
            .map(|((t, f), _)| (t, Some(f)))
            .collect()
    }

    /// Whether the object of `k` is this search's to compare.
    fn in_scope(&self, k: &Key) -> bool {
        self.scope.is_none_or(|(part, c)| part.holds(c, k))
    }

    /// The reduction's close, at a full linearization: the due timers left
    /// fall into groups no chain of shared objects joins; the objects of
    /// no group must agree with the snapshot as they are, and each group
    /// is decided on its own objects by the firings within it. Groups are
    /// independent, so their decisions compose.
    fn close(&mut self, model: &mut Deviant) -> bool {
        let exp = self.input.snap.expect("the reduction runs with a snapshot");
        let now = self.input.now;
        let due: Vec<(Timer, Footprint)> = self
            .due(model, now)
            .into_iter()
            .map(|t| {
                let f = reduce::of_timer(model, &t, now);
                (t, f)
            })
            .collect();
        let groups: Vec<Footprint> = reduce::groups(&due).into_iter().map(|(_, f)| f).collect();
        let in_groups = |k: &Key| groups.iter().any(|g| g.holds(k));
        let outside = exp.agrees_on(
            &model.state,
            self.base,
            self.input.skip,
            &|k| !in_groups(k) && self.in_scope(k),
            &|k| !in_groups(k),
        );
        match outside {
            None => {
                self.escape();
                return false;
            }
            Some(false) => {
                self.refused(model);
                return false;
            }
            Some(true) => {}
        }
        let mark = model.state.checkpoint();
        let depth = self.path.len();
        for g in 0..groups.len() {
            let mut memo = HashSet::new();
            if !self.decide(model, &groups, g, &mut memo) {
                if !self.stop && !self.found.truncated {
                    self.refused(model);
                }
                model.state.rollback(mark);
                self.path.truncate(depth);
                return false;
            }
        }
        true
    }

    /// One group of the close: fire its due timers in any order until its
    /// objects agree with the snapshot.
    fn decide(
        &mut self,
        model: &mut Deviant,
        groups: &[Footprint],
        g: usize,
        memo: &mut HashSet<u64>,
    ) -> bool {
        let exp = self.input.snap.expect("the reduction runs with a snapshot");
        let group = &groups[g];
        match exp.agrees_on(
            &model.state,
            self.base,
            self.input.skip,
            &|k| group.holds(k) && self.in_scope(k),
            &|k| group.holds(k),
        ) {
            None => {
                self.escape();
                return false;
            }
            Some(true) => return true,
            Some(false) => {}
        }
        if !memo.insert(model.state.fingerprint_since(self.base)) {
            self.found.memo_hits += 1;
            return false;
        }
        self.found.nodes += 1;
        if self.found.nodes > self.input.budget {
            self.found.truncated = true;
            return false;
        }
        let now = self.input.now;
        for t in self.due(model, now) {
            let f = reduce::of_timer(model, &t, now);
            if !f.meets(group) {
                continue;
            }
            if groups
                .iter()
                .enumerate()
                .any(|(h, other)| h != g && f.meets(other))
            {
                // Armed by this group's firings and reaching another
                // group: the groups are not independent after all.
                self.escape();
                return false;
            }
            let within = [&f, group];
            match self.try_move(
                model,
                &within,
                |s, m| s.fire(m, t),
                |s, m| s.decide(m, groups, g, memo),
            ) {
                Tried::Accepted => return true,
                Tried::Unwind => return false,
                Tried::Next => {}
            }
        }
        false
    }

    /// Record the first full linearization whose state the snapshot refused.
    fn refused(&mut self, model: &Deviant) {
        if self.found.state_refused.is_none() {
            let exp = self.input.snap.expect("a refusal needs a snapshot");
            let diff = exp.diff(&model.state, self.input.skip);
            self.found.state_refused = Some((self.path.clone(), diff));
        }
    }

    fn is_tick(&self, i: usize) -> bool {
        matches!(self.input.ops[i].step.op, Op::Tick)
    }

    /// A tick's start: it reads what is due; nothing fires yet.
    fn start_tick(&mut self, model: &mut Deviant, i: usize, lin: u128) -> bool {
        let now = self.input.ops[i].step.now;
        self.started[i] = Some(self.due(model, now));
        self.path.push(Move::TickStart(self.input.ops[i].id));
        if self.dfs(model, lin) {
            return true;
        }
        self.path.pop();
        self.started[i] = None;
        false
    }

    /// A started tick's end: whatever it read that is still due fires now,
    /// in the tick's order, through the deviations' firing hooks.
    fn end_tick(&mut self, model: &mut Deviant, i: usize, lin: u128) -> bool {
        let now = self.input.ops[i].step.now;
        let id = self.input.ops[i].id;
        let read = self.started[i]
            .take()
            .expect("a tick ends only once started");
        let mark = model.state.checkpoint();
        let mut footprint = Footprint::default();
        for t in &read {
            if model.due_in_group(t.group(), now).contains(t) {
                if self.reduce {
                    footprint.extend(&reduce::of_timer(model, t, now));
                }
                model.fire(t, now);
            }
        }
        if self.reduce && !reduce::writes_within(&model.state, mark, &footprint) {
            model.state.rollback(mark);
            self.started[i] = Some(read);
            self.escape();
            return false;
        }
        self.path.push(Move::Op(id));
        if self.dfs(model, lin | 1 << i) {
            return true;
        }
        self.path.pop();
        model.state.rollback(mark);
        self.started[i] = Some(read);
        false
    }

    /// The started ticks and what each read, for the memo: 0 when none.
    fn started_key(&self) -> u64 {
        if self.started.iter().all(Option::is_none) {
            return 0;
        }
        let mut h = std::collections::hash_map::DefaultHasher::new();
        for (i, read) in self.started.iter().enumerate() {
            if let Some(read) = read {
                (i, read).hash(&mut h);
            }
        }
        h.finish()
    }

    /// The operations that may come next: not yet linearized, and invoked
    /// before every other pending known operation completed.
    fn candidates(&self, lin: u128) -> Vec<usize> {
        let n = self.input.ops.len();
        let open = |j: usize| lin & (1 << j) == 0;
        // The two smallest completions among open required operations.
        let (mut first, mut second) = ((u64::MAX, usize::MAX), u64::MAX);
        for j in (0..n).filter(|&j| open(j) && self.required & (1 << j) != 0) {
            let c = self.complete[j];
            if c < first.0 {
                second = first.0;
                first = (c, j);
            } else if c < second {
                second = c;
            }
        }
        (0..n)
            .filter(|&i| open(i))
            .filter(|&i| {
                let bound = if first.1 == i { second } else { first.0 };
                self.input.ops[i].invoke <= bound
            })
            .collect()
    }

    /// Apply candidate `i`; whether its response is the recorded one.
    fn apply(&mut self, model: &mut Deviant, i: usize, lin: u128) -> bool {
        let op = self.input.ops[i];
        let now = op.step.now;
        match &op.step.op {
            Op::Tick => {
                model.tick(now);
                true
            }
            Op::Request(req) => {
                let res = model.apply(req, now);
                let Some(recorded) = op.response() else {
                    return true; // indeterminate: any answer
                };
                let want = normalize_response(&model.encode(req, &res, "model"));
                let got = normalize_response(recorded);
                if want == got {
                    return true;
                }
                self.misfit(lin, op.id, want, got);
                false
            }
        }
    }

    fn misfit(&mut self, lin: u128, op: usize, model: Value, target: Value) {
        let depth = lin.count_ones();
        if depth > self.deepest {
            self.deepest = depth;
            self.found.misfits.clear();
        }
        if depth == self.deepest && self.found.misfits.len() < MAX_MISFITS {
            self.found.misfits.push(Misfit {
                after: self.path.clone(),
                op,
                model,
                target,
            });
        }
    }

    /// At a full linearization: whether the snapshot agrees. With
    /// `collect_all` the end is recorded and the search goes on.
    fn accept(&mut self, model: &mut Deviant, lin: u128) -> bool {
        if let Some(exp) = self.input.snap {
            let agrees = match self.scope {
                None => exp.agrees(&model.state, self.base, self.input.skip),
                Some((part, c)) => {
                    exp.agrees_within(&model.state, self.base, self.input.skip, &|k| {
                        part.holds(c, k)
                    })
                }
            };
            if !agrees {
                if self.found.state_refused.is_none() {
                    let diff = exp.diff(&model.state, self.input.skip);
                    self.found.state_refused = Some((self.path.clone(), diff));
                }
                return false;
            }
        }
        if !self.input.collect_all {
            return true;
        }
        let mut end = model.clone();
        end.state.commit();
        let left_out = self.left_out(lin);
        if self.found.ends.is_empty() {
            self.found.order = self.path.clone();
        }
        self.found.ends.push((Some(end), left_out));
        if self.found.ends.len() >= self.input.max_ends {
            self.found.dropped = true;
            self.stop = true;
        }
        false
    }

    fn linearized_on_path(&self) -> u128 {
        self.path
            .iter()
            .filter_map(|m| match m {
                Move::Op(id) => self.input.ops.iter().position(|o| o.id == *id),
                Move::Fire(_) | Move::TickStart(_) => None,
            })
            .fold(0u128, |m, i| m | 1 << i)
    }

    /// The history ids of the operations an end leaves out (indeterminate
    /// ones that never took effect).
    fn left_out(&self, lin: u128) -> Vec<usize> {
        (0..self.input.ops.len())
            .filter(|i| lin & (1 << i) == 0)
            .map(|i| self.input.ops[i].id)
            .collect()
    }
}
