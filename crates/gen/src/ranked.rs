//! An ordered set with positions: the sorted lists the generator picks from
//! (`rng.pick` over the ids of a pool, in order), kept up to date in
//! O(log n) per insert or remove instead of being sorted again at every step.
//!
//! A treap: a binary search tree kept balanced in expectation by a random
//! priority per node (here a fixed sequence, so it is deterministic; the
//! shape only decides speed, never an answer), each node counting its
//! subtree, so an insert, a remove, the `k`-th element and the rank of a
//! key are each one descent.
//!
//! The [`Seq`] views pick from a set with a few elements left out
//! ([`Skipping`]), a set minus a subset ([`Minus`]) and a union of disjoint
//! sets ([`Union`]) without building the filtered list the old code sorted.

use std::borrow::Borrow;
use std::cmp::Ordering;
use std::fmt;

type Link<K> = Option<Box<Node<K>>>;

#[derive(Clone)]
struct Node<K> {
    key: K,
    prio: u64,
    size: usize,
    left: Link<K>,
    right: Link<K>,
}

fn size<K>(t: &Link<K>) -> usize {
    t.as_ref().map_or(0, |n| n.size)
}

impl<K> Node<K> {
    fn fix(&mut self) {
        self.size = 1 + size(&self.left) + size(&self.right);
    }
}

/// An ordered set of `K` with `nth` and `rank` in O(log n).
#[derive(Clone)]
pub(crate) struct Ranked<K> {
    root: Link<K>,
    seq: u64,
}

impl<K> Default for Ranked<K> {
    fn default() -> Self {
        Ranked { root: None, seq: 0 }
    }
}

impl<K: Ord + fmt::Debug> fmt::Debug for Ranked<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}

/// Join two treaps, every key of `a` before every key of `b`.
fn merge<K>(a: Link<K>, b: Link<K>) -> Link<K> {
    match (a, b) {
        (None, b) => b,
        (a, None) => a,
        (Some(mut a), Some(mut b)) => {
            if a.prio > b.prio {
                a.right = merge(a.right.take(), Some(b));
                a.fix();
                Some(a)
            } else {
                b.left = merge(Some(a), b.left.take());
                b.fix();
                Some(b)
            }
        }
    }
}

/// Make the left child of `t` its root (its priority is higher).
fn rotate_right<K>(t: &mut Box<Node<K>>) {
    let mut l = t.left.take().expect("a left child");
    t.left = l.right.take();
    t.fix();
    std::mem::swap(t, &mut l);
    t.right = Some(l);
    t.fix();
}

/// Make the right child of `t` its root (its priority is higher).
fn rotate_left<K>(t: &mut Box<Node<K>>) {
    let mut r = t.right.take().expect("a right child");
    t.right = r.left.take();
    t.fix();
    std::mem::swap(t, &mut r);
    t.left = Some(r);
    t.fix();
}

/// Insert `node` under `t` in one descent, rotating it up to where its
/// priority belongs; gives it back when its key is there already.
fn insert<K: Ord>(t: &mut Link<K>, node: Box<Node<K>>) -> Option<Box<Node<K>>> {
    let Some(n) = t else {
        *t = Some(node);
        return None;
    };
    let prio = node.prio;
    match node.key.cmp(&n.key) {
        Ordering::Equal => Some(node),
        Ordering::Less => {
            let back = insert(&mut n.left, node);
            if back.is_none() {
                n.size += 1;
                if prio > n.prio {
                    rotate_right(n);
                }
            }
            back
        }
        Ordering::Greater => {
            let back = insert(&mut n.right, node);
            if back.is_none() {
                n.size += 1;
                if prio > n.prio {
                    rotate_left(n);
                }
            }
            back
        }
    }
}

/// Remove `key` from under `t` in one descent; whether it was there.
fn remove<K: Borrow<Q>, Q: Ord + ?Sized>(t: &mut Link<K>, key: &Q) -> bool {
    let Some(n) = t else {
        return false;
    };
    match key.cmp(n.key.borrow()) {
        Ordering::Equal => {
            let (l, r) = (n.left.take(), n.right.take());
            *t = merge(l, r);
            true
        }
        Ordering::Less => {
            let found = remove(&mut n.left, key);
            n.size -= usize::from(found);
            found
        }
        Ordering::Greater => {
            let found = remove(&mut n.right, key);
            n.size -= usize::from(found);
            found
        }
    }
}

impl<K: Ord> Ranked<K> {
    /// The number of elements.
    pub(crate) fn len(&self) -> usize {
        size(&self.root)
    }

    /// Whether the set is empty.
    pub(crate) fn is_empty(&self) -> bool {
        self.root.is_none()
    }

    /// Whether `key` is in the set.
    pub(crate) fn contains<Q: Ord + ?Sized>(&self, key: &Q) -> bool
    where
        K: Borrow<Q>,
    {
        let mut t = &self.root;
        while let Some(n) = t {
            match key.cmp(n.key.borrow()) {
                Ordering::Less => t = &n.left,
                Ordering::Greater => t = &n.right,
                Ordering::Equal => return true,
            }
        }
        false
    }

    /// The number of elements smaller than `key`.
    pub(crate) fn rank<Q: Ord + ?Sized>(&self, key: &Q) -> usize
    where
        K: Borrow<Q>,
    {
        let (mut t, mut below) = (&self.root, 0);
        while let Some(n) = t {
            if n.key.borrow() < key {
                below += size(&n.left) + 1;
                t = &n.right;
            } else {
                t = &n.left;
            }
        }
        below
    }

    /// The `k`-th smallest element (from 0), `None` past the end.
    pub(crate) fn nth(&self, mut k: usize) -> Option<&K> {
        let mut t = &self.root;
        while let Some(n) = t {
            let l = size(&n.left);
            match k.cmp(&l) {
                Ordering::Less => t = &n.left,
                Ordering::Equal => return Some(&n.key),
                Ordering::Greater => {
                    k -= l + 1;
                    t = &n.right;
                }
            }
        }
        None
    }

    /// The smallest element.
    pub(crate) fn first(&self) -> Option<&K> {
        self.nth(0)
    }

    /// Add `key`; `false` when it was there already.
    pub(crate) fn insert(&mut self, key: K) -> bool {
        // SplitMix64 of a counter: a fixed, well-spread priority sequence.
        self.seq = self.seq.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.seq;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        let node = Box::new(Node {
            key,
            prio: z ^ (z >> 31),
            size: 1,
            left: None,
            right: None,
        });
        insert(&mut self.root, node).is_none()
    }

    /// Remove `key`; `false` when it was not there.
    pub(crate) fn remove<Q: Ord + ?Sized>(&mut self, key: &Q) -> bool
    where
        K: Borrow<Q>,
    {
        remove(&mut self.root, key)
    }

    /// Every element, ascending.
    pub(crate) fn iter(&self) -> Iter<'_, K> {
        let mut it = Iter { stack: Vec::new() };
        it.descend(&self.root);
        it
    }
}

/// In-order iteration of a [`Ranked`].
pub(crate) struct Iter<'a, K> {
    stack: Vec<&'a Node<K>>,
}

impl<'a, K> Iter<'a, K> {
    fn descend(&mut self, mut t: &'a Link<K>) {
        while let Some(n) = t {
            self.stack.push(n);
            t = &n.left;
        }
    }
}

impl<'a, K> Iterator for Iter<'a, K> {
    type Item = &'a K;
    fn next(&mut self) -> Option<&'a K> {
        let n = self.stack.pop()?;
        self.descend(&n.right);
        Some(&n.key)
    }
}

/// A sorted sequence read by position: what [`crate::dice::Dice::pick_from`]
/// draws from, the same draw as `pick` over the sequence as a slice.
pub(crate) trait Seq {
    /// The elements' type.
    type Item;
    /// The number of elements.
    fn len(&self) -> usize;
    /// Whether there is no element.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The `k`-th element (`k < len`).
    fn nth(&self, k: usize) -> Self::Item;
}

impl<'a, K: Ord> Seq for &'a Ranked<K> {
    type Item = &'a K;
    fn len(&self) -> usize {
        Ranked::len(self)
    }
    fn nth(&self, k: usize) -> &'a K {
        Ranked::nth(self, k).expect("k < len")
    }
}

/// A set with a few of its elements left out (keys not in it are ignored):
/// `members` without the awaiter, say.
pub(crate) struct Skipping<'a, K> {
    set: &'a Ranked<K>,
    /// The ranks of the elements left out, ascending, distinct.
    ranks: Vec<usize>,
}

impl<'a, K: Ord> Skipping<'a, K> {
    /// `set` without `out`.
    pub(crate) fn new<'k, Q: Ord + ?Sized + 'k>(
        set: &'a Ranked<K>,
        out: impl IntoIterator<Item = &'k Q>,
    ) -> Self
    where
        K: Borrow<Q>,
    {
        let mut ranks: Vec<usize> = out
            .into_iter()
            .filter(|k| set.contains(k))
            .map(|k| set.rank(k))
            .collect();
        ranks.sort_unstable();
        ranks.dedup();
        Skipping { set, ranks }
    }
}

impl<'a, K: Ord> Seq for Skipping<'a, K> {
    type Item = &'a K;
    fn len(&self) -> usize {
        self.set.len() - self.ranks.len()
    }
    fn nth(&self, k: usize) -> &'a K {
        let mut at = k;
        for &r in &self.ranks {
            if r <= at {
                at += 1;
            } else {
                break;
            }
        }
        Ranked::nth(self.set, at).expect("k < len")
    }
}

/// `a` without the elements of `b`, a subset of `a`: every promise but
/// those of one origin, say.
pub(crate) struct Minus<'a, K> {
    a: &'a Ranked<K>,
    b: &'a Ranked<K>,
}

impl<'a, K: Ord> Minus<'a, K> {
    /// `a \ b`; `b` must be a subset of `a`.
    pub(crate) fn new(a: &'a Ranked<K>, b: &'a Ranked<K>) -> Self {
        Minus { a, b }
    }
}

impl<'a, K: Ord> Seq for Minus<'a, K> {
    type Item = &'a K;
    fn len(&self) -> usize {
        self.a.len() - self.b.len()
    }
    /// The smallest position `i` of `a` with `k + 1` elements outside `b`
    /// up to it: that count never decreases with `i`, so a binary search.
    fn nth(&self, k: usize) -> &'a K {
        let outside = |i: usize| {
            let x = Ranked::nth(self.a, i).expect("i < len");
            i + 1 - self.b.rank(x) - usize::from(self.b.contains(x))
        };
        let (mut lo, mut hi) = (0, self.a.len() - 1);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if outside(mid) > k {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        Ranked::nth(self.a, lo).expect("k < len")
    }
}

/// The union of disjoint sets, in order: the tasks in any of a few states.
pub(crate) struct Union<'a, K> {
    sets: Vec<&'a Ranked<K>>,
}

impl<'a, K: Ord> Union<'a, K> {
    /// The union of `sets`, which must be pairwise disjoint.
    pub(crate) fn new(sets: Vec<&'a Ranked<K>>) -> Self {
        Union { sets }
    }
}

impl<'a, K: Ord> Seq for Union<'a, K> {
    type Item = &'a K;
    fn len(&self) -> usize {
        self.sets.iter().map(|s| s.len()).sum()
    }
    /// The element whose position in the union is `k`: for each set, the
    /// position in the union of its `i`-th element (`i` plus what the
    /// other sets hold below it) grows with `i`, so a binary search per set.
    fn nth(&self, k: usize) -> &'a K {
        for (j, s) in self.sets.iter().enumerate() {
            let at = |i: usize| {
                let x = Ranked::nth(s, i).expect("i < len");
                let below: usize = (self.sets.iter().enumerate())
                    .filter(|(l, _)| *l != j)
                    .map(|(_, o)| o.rank(x))
                    .sum();
                (i + below, x)
            };
            let (mut lo, mut hi) = (0, s.len());
            while lo < hi {
                let mid = lo + (hi - lo) / 2;
                let (pos, x) = at(mid);
                match pos.cmp(&k) {
                    Ordering::Equal => return x,
                    Ordering::Less => lo = mid + 1,
                    Ordering::Greater => hi = mid,
                }
            }
        }
        panic!("k < len")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeSet;

    fn of(keys: &[u16]) -> Ranked<u16> {
        let mut r = Ranked::default();
        for &k in keys {
            r.insert(k);
        }
        r
    }

    fn all<S: Seq>(s: &S) -> Vec<S::Item> {
        (0..s.len()).map(|k| s.nth(k)).collect()
    }

    proptest! {
        /// Inserts and removes in any order leave the set a `BTreeSet`
        /// would hold, with the same positions and ranks.
        #[test]
        fn it_is_a_sorted_set_with_positions(ops in prop::collection::vec((any::<bool>(), 0u16..64), 0..300)) {
            let (mut r, mut b) = (Ranked::default(), BTreeSet::new());
            for (add, k) in ops {
                if add {
                    prop_assert_eq!(r.insert(k), b.insert(k));
                } else {
                    prop_assert_eq!(r.remove(&k), b.remove(&k));
                }
                prop_assert_eq!(r.len(), b.len());
            }
            let sorted: Vec<u16> = b.iter().copied().collect();
            prop_assert_eq!(r.iter().copied().collect::<Vec<_>>(), sorted.clone());
            for (i, k) in sorted.iter().enumerate() {
                prop_assert_eq!(r.nth(i), Some(k));
            }
            prop_assert_eq!(r.nth(sorted.len()), None);
            for k in 0u16..66 {
                prop_assert_eq!(r.rank(&k), b.range(..k).count());
                prop_assert_eq!(r.contains(&k), b.contains(&k));
            }
        }

        /// The views read the filtered list the old code built.
        #[test]
        fn views_read_the_filtered_lists(a in prop::collection::btree_set(0u16..80, 0..40), cut in prop::collection::vec(0u16..90, 0..6), part in prop::collection::vec(0u8..3, 80)) {
            let set = of(&a.iter().copied().collect::<Vec<_>>());
            let kept: Vec<u16> = a.iter().copied().filter(|k| !cut.contains(k)).collect();
            let skipping = Skipping::new(&set, cut.iter());
            prop_assert_eq!(all(&skipping).into_iter().copied().collect::<Vec<_>>(), kept);

            let sub: Vec<u16> = a.iter().copied().filter(|k| part[*k as usize] == 0).collect();
            let b = of(&sub);
            let minus = Minus::new(&set, &b);
            let rest: Vec<u16> = a.iter().copied().filter(|k| !sub.contains(k)).collect();
            prop_assert_eq!(all(&minus).into_iter().copied().collect::<Vec<_>>(), rest);

            let parts: Vec<Ranked<u16>> = (0..3)
                .map(|p| of(&a.iter().copied().filter(|k| part[*k as usize] == p).collect::<Vec<_>>()))
                .collect();
            let union = Union::new(vec![&parts[2], &parts[0]]);
            let both: Vec<u16> = a.iter().copied().filter(|k| part[*k as usize] != 1).collect();
            prop_assert_eq!(all(&union).into_iter().copied().collect::<Vec<_>>(), both);
        }
    }
}
