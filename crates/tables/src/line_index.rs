//! A hash index whose buckets are one cache line each: seven 32-bit hash tags and
//! the seven 32-bit values stored under them, side by side, so a probe is one line
//! and a value is reached without a second load (a SwissTable keeps its tags and
//! its slots in separate arrays: two lines per probe). The content store indexes
//! its names here; when a table is far larger than the caches every probe is a
//! miss, so lines per probe is what an insert or eviction costs, and a bucket can
//! be prefetched from its hash before it is needed.
//!
//! A full bucket overflows into the next ones (linear probing by bucket). Each
//! bucket counts the entries that passed it, so a lookup stops at the first
//! bucket nothing passed, and removal needs no tombstones: it undoes the counts
//! along the removed entry's probe path.

use crate::fib::prefetch;
use crate::ways::ways_equal;

/// Entries per bucket: 7 × (4-byte tag + 4-byte value) + the passing count fill 60 bytes.
const WAYS: usize = 7;

/// The value of an empty way. Callers store values below it.
pub(crate) const EMPTY: u32 = u32::MAX;

/// One cache line of the index.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Bucket {
    tags: [u32; WAYS],
    vals: [u32; WAYS],
    /// Entries stored beyond this bucket whose probe started at or before it.
    passing: u32,
}

impl Bucket {
    /// Bit `w` set for each way whose tag is `tag`. Every CS lookup, insert and
    /// eviction probes a bucket or two, and comparing the seven tags one by one
    /// was ≈ 120 instructions a probe (callgrind, 8 % of a worst-case exchange).
    #[inline]
    fn matching(&self, tag: u32) -> u32 {
        ways_equal(&self.tags, tag)
    }

    /// Bit `w` set for each empty way. Which ways are empty is random, so a
    /// search way by way mispredicted about once per insert.
    #[inline]
    fn vacant(&self) -> u32 {
        ways_equal(&self.vals, EMPTY)
    }
}

/// The most entries per way (numerator, denominator) before the table doubles.
/// With passing counts, a miss walks every bucket something passed, and under
/// churn (a full cache: each insert evicts) that walk grows steeply with the
/// load: at 0.70 more than half the buckets were passed and a miss read 3.4
/// lines on average; at 0.52 it reads 1.24, at 0.42 1.06.
/// An index line costs 64 bytes per 3.5–7 entries at this bound.
const MAX_LOAD: (usize, usize) = (1, 2);

const VACANT: Bucket = Bucket { tags: [0; WAYS], vals: [EMPTY; WAYS], passing: 0 };

/// The index: 32-bit tags (the high half of a name's 64-bit hash) to 32-bit values,
/// several values per tag allowed; the caller tells a true match from a tag
/// collision with the closure it passes to [`LineIndex::find`].
pub(crate) struct LineIndex {
    buckets: Vec<Bucket>,
    len: usize,
    /// Entries the buckets hold at [`MAX_LOAD`]: an insert beyond doubles them.
    /// Kept rather than computed from the bucket count at each insert (three
    /// per exchange).
    room: usize,
    /// 32 less log₂ of the bucket count (a power of two): a tag shifted right
    /// by it is its home bucket.
    shift: u32,
}

/// The entries `buckets` buckets hold at [`MAX_LOAD`].
const fn room(buckets: usize) -> usize {
    buckets * WAYS * MAX_LOAD.0 / MAX_LOAD.1
}

impl LineIndex {
    /// An index of one bucket; it doubles as entries are added.
    pub fn new() -> Self {
        LineIndex { buckets: vec![VACANT], len: 0, room: room(1), shift: 32 }
    }

    /// Entries stored, for tests of the tables that share an index.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.len
    }

    /// The tag a 64-bit hash is indexed under.
    #[inline]
    pub fn tag(hash: u64) -> u32 {
        (hash >> 32) as u32
    }

    /// The bucket a tag's probe starts at: the tag's high bits, as many as
    /// number the buckets (the low bits still tell tags apart in a bucket).
    /// One shift: an exchange computes a dozen homes (a multiply by the bucket
    /// count, which gives the same bucket, was a load and a multiply more).
    #[inline]
    fn home(&self, tag: u32) -> usize {
        (u64::from(tag) >> self.shift) as usize
    }

    #[inline]
    fn after(&self, b: usize) -> usize {
        if b + 1 == self.buckets.len() {
            0
        } else {
            b + 1
        }
    }

    /// Starts loading the line where a lookup, insert or removal of `tag` begins.
    #[inline]
    pub fn prefetch(&self, tag: u32) {
        prefetch(&self.buckets[self.home(tag)]);
    }

    /// The first value stored under `tag` that `is` accepts.
    #[inline]
    pub fn find(&self, tag: u32, mut is: impl FnMut(u32) -> bool) -> Option<u32> {
        let mut b = self.home(tag);
        for _ in 0..self.buckets.len() {
            let bucket = &self.buckets[b];
            // The ways whose tag matches, found at once; usually none or one.
            let mut hits = bucket.matching(tag);
            while hits != 0 {
                let v = bucket.vals[hits.trailing_zeros() as usize];
                hits &= hits - 1;
                if v != EMPTY && is(v) {
                    return Some(v);
                }
            }
            if bucket.passing == 0 {
                return None;
            }
            b = self.after(b);
        }
        None
    }

    /// Stores `val` (below [`EMPTY`]) under `tag`; the caller has checked it is not
    /// there yet. Keeps the load at most [`MAX_LOAD`] by doubling the table.
    ///
    /// Always inlined, its growth kept out of line: an exchange inserts twice
    /// (a PIT entry and a cached packet), and as a call the
    /// prologue and epilogue alone cost ≈ 50 instructions per exchange, which a
    /// profile-guided build inlined away (docs/PERFORMANCE.md).
    #[inline(always)]
    pub fn insert(&mut self, tag: u32, val: u32) {
        debug_assert_ne!(val, EMPTY);
        if self.len >= self.room {
            self.grow();
        }
        self.place(tag, val);
        self.len += 1;
    }

    #[inline(always)]
    fn place(&mut self, tag: u32, val: u32) {
        let mut b = self.home(tag);
        loop {
            let bucket = &mut self.buckets[b];
            let free = bucket.vacant();
            if free != 0 {
                let w = free.trailing_zeros() as usize;
                bucket.tags[w] = tag;
                bucket.vals[w] = val;
                return;
            }
            // The load bound leaves free ways, so the walk ends.
            bucket.passing += 1;
            b = self.after(b);
        }
    }

    /// Removes `val` stored under `tag`; returns whether it was there.
    pub fn remove(&mut self, tag: u32, val: u32) -> bool {
        let home = self.home(tag);
        let mut b = home;
        for _ in 0..self.buckets.len() {
            let bucket = &mut self.buckets[b];
            let mut hits = bucket.matching(tag);
            while hits != 0 && bucket.vals[hits.trailing_zeros() as usize] != val {
                hits &= hits - 1;
            }
            if hits != 0 {
                bucket.vals[hits.trailing_zeros() as usize] = EMPTY;
                let mut p = home;
                while p != b {
                    self.buckets[p].passing -= 1;
                    p = self.after(p);
                }
                self.len -= 1;
                return true;
            }
            if bucket.passing == 0 {
                return false;
            }
            b = self.after(b);
        }
        false
    }

    #[cold]
    #[inline(never)]
    fn grow(&mut self) {
        debug_assert!(self.shift > 0, "2³² buckets");
        self.rehash(self.buckets.len() * 2, |v| v);
    }

    /// Rebuilds the index in the fewest buckets that hold its entries, each
    /// value replaced by `map(value)`: for a table that shares it and moved
    /// its entries ([`crate::slab::Slab::compact`]), which also gives back the
    /// buckets the entries that went no longer need.
    pub fn rebuild(&mut self, map: impl FnMut(u32) -> u32) {
        let mut buckets = 1;
        while room(buckets) < self.len {
            buckets *= 2;
        }
        self.rehash(buckets, map);
    }

    /// Moves every entry into `buckets` new buckets (a power of two holding
    /// them all), its value replaced by `map(value)`.
    fn rehash(&mut self, buckets: usize, mut map: impl FnMut(u32) -> u32) {
        let old = std::mem::replace(&mut self.buckets, crate::huge::filled(buckets, VACANT));
        self.room = room(buckets);
        self.shift = 32 - buckets.trailing_zeros();
        for bucket in &old {
            for w in (0..WAYS).filter(|&w| bucket.vals[w] != EMPTY) {
                self.place(bucket.tags[w], map(bucket.vals[w]));
            }
        }
    }

    /// Buckets allocated, for tests of the memory a table gives back.
    #[cfg(test)]
    pub fn buckets(&self) -> usize {
        self.buckets.capacity()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ways::ways_equal_each;
    use proptest::prelude::*;
    use std::collections::HashMap;

    /// A rebuilt index finds every entry under its new value, in as few
    /// buckets as hold them, and grows again as entries come.
    #[test]
    fn a_rebuild_maps_every_value_and_shrinks_to_the_entries() {
        let mut ix = LineIndex::new();
        let tag = |v: u32| v.wrapping_mul(0x9e37_79b9);
        for v in 0..5000u32 {
            ix.insert(tag(v), v);
        }
        for v in (0..5000u32).filter(|v| v % 50 != 0) {
            assert!(ix.remove(tag(v), v));
        }
        let before = ix.buckets();
        ix.rebuild(|v| v + 1);
        assert!(ix.buckets() * 16 <= before, "{} buckets, {before} before", ix.buckets());
        for v in 0..5000u32 {
            assert_eq!(ix.find(tag(v), |x| x == v + 1), (v % 50 == 0).then_some(v + 1), "{v}");
        }
        for v in 5000..6000u32 {
            ix.insert(tag(v), v);
        }
        assert_eq!(ix.len(), 1100);
        assert!((5000..6000u32).all(|v| ix.find(tag(v), |x| x == v) == Some(v)));
        assert!((0..5000u32).step_by(50).all(|v| ix.find(tag(v), |x| x == v + 1) == Some(v + 1)));
    }

    #[test]
    fn a_home_is_the_tag_scaled_to_the_buckets() {
        let mut ix = LineIndex::new();
        for v in 0..5000u32 {
            ix.insert(v.wrapping_mul(0x9e37_79b9), v);
            let n = ix.buckets.len() as u64;
            assert!(n.is_power_of_two());
            for tag in [0, 1, v.wrapping_mul(0x85eb_ca6b), u32::MAX] {
                assert_eq!(ix.home(tag) as u64, (u64::from(tag) * n) >> 32, "tag {tag:#x} of {n} buckets");
            }
        }
    }

    #[test]
    fn bucket_is_one_line() {
        assert_eq!(std::mem::size_of::<Bucket>(), 64);
        assert_eq!(std::mem::align_of::<Bucket>(), 64);
    }

    #[test]
    fn colliding_tags_overflow_and_come_back() {
        let mut ix = LineIndex::new();
        // Every entry has the same tag: they fill the home bucket and pass it.
        for v in 0..40 {
            ix.insert(7, v);
        }
        for v in 0..40 {
            assert_eq!(ix.find(7, |x| x == v), Some(v));
        }
        assert_eq!(ix.find(8, |_| true), None);
        for v in (0..40).step_by(2) {
            assert!(ix.remove(7, v));
            assert!(!ix.remove(7, v), "gone");
        }
        for v in 0..40 {
            assert_eq!(ix.find(7, |x| x == v).is_some(), v % 2 == 1);
        }
        for v in (1..40).step_by(2) {
            assert!(ix.remove(7, v));
        }
        assert!(ix.buckets.iter().all(|b| b.passing == 0), "removals undo every passing count");
        assert_eq!(ix.len, 0);
    }

    /// Lines a miss for `tag` reads: its home bucket and every passed one after it.
    fn miss_lines(ix: &LineIndex, tag: u32) -> usize {
        let mut b = ix.home(tag);
        let mut lines = 1;
        while ix.buckets[b].passing != 0 {
            b = ix.after(b);
            lines += 1;
        }
        lines
    }

    #[test]
    fn a_full_churning_index_keeps_misses_short() {
        // A full cache: every insert evicts the oldest entry. Just below the
        // doubling point, a miss must still read about one line, not the 3.4
        // that a 3/4 bound gave here.
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        let mut tag = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 32) as u32
        };
        let mut ix = LineIndex::new();
        let live = 4096 * WAYS * MAX_LOAD.0 / MAX_LOAD.1 - 16;
        let mut order = std::collections::VecDeque::new();
        for v in 0..200_000u32 {
            if order.len() == live {
                let (t, old) = order.pop_front().expect("full");
                assert!(ix.remove(t, old));
            }
            let t = tag();
            ix.insert(t, v);
            order.push_back((t, v));
        }
        assert_eq!(ix.buckets.len(), 4096, "the live set stays just below the doubling point");
        let lines: usize = (0..10_000).map(|_| miss_lines(&ix, tag())).sum();
        assert!(lines < 10_000 * 3 / 2, "a miss reads {} lines on average", lines as f64 / 10_000.0);
    }

    proptest! {
        /// A bucket's matching and vacant ways are those a one-by-one
        /// comparison finds, with words drawn from a small set (EMPTY among
        /// them) so several match.
        #[test]
        fn bucket_ways_agree_with_each_way(picks in proptest::array::uniform7(0usize..4), key in 0usize..4) {
            let set = [0, 1, 0x8000_0000, EMPTY];
            let words = picks.map(|p| set[p]);
            let bucket = Bucket { tags: words, vals: words, passing: 0 };
            prop_assert_eq!(bucket.matching(set[key]), ways_equal_each(&words, set[key]));
            prop_assert_eq!(bucket.vacant(), ways_equal_each(&words, EMPTY));
        }

        /// The index agrees with a map from (tag, value) through inserts and
        /// removals, with tags drawn from a small set so buckets overflow.
        #[test]
        fn agrees_with_a_map(ops in proptest::collection::vec((any::<bool>(), 0u32..6, 0u32..300), 1..600)) {
            let mut ix = LineIndex::new();
            let mut model: HashMap<u32, u32> = HashMap::new(); // value -> tag
            for (add, t, v) in ops {
                let tag = t.wrapping_mul(0x9e37_79b9);
                if add && !model.contains_key(&v) {
                    ix.insert(tag, v);
                    model.insert(v, tag);
                } else if !add {
                    prop_assert_eq!(ix.remove(tag, v), model.get(&v) == Some(&tag));
                    if model.get(&v) == Some(&tag) {
                        model.remove(&v);
                    }
                }
            }
            for (&v, &tag) in &model {
                prop_assert_eq!(ix.find(tag, |x| x == v), Some(v));
            }
            prop_assert_eq!(ix.len, model.len());
        }
    }
}
