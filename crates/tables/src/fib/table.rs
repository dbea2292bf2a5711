//! The FIB's exact-match stage (Caesar §3.4): a hash table whose buckets are one
//! 64-byte cache line, so a well-sized table answers with one memory access.
//!
//! A bucket holds five entries — (32-bit hash of the prefix, next-hop set index,
//! prefix reference) — stored contiguously from the first slot, and a link to an
//! overflow bucket; 5 × 12 + 4 = 64 bytes. Overflow buckets come from the same array
//! (after the primary ones) and are chained. The prefix bytes are compared only
//! when the stored 32-bit hash equals the probe's, so a miss normally reads no
//! string at all. Because every entry keeps its full hash, growing the table moves
//! entries without reading or rehashing any prefix.

use super::arena::{PrefixArena, PrefixRef};
use super::nexthops::SetId;
use crate::name_hash::{mix, reduce};
use crate::ways::ways_equal;

const SLOTS: usize = 5;
/// Salt of the bucket choice (see [`crate::name_hash::mix`]).
const SALT: u32 = 0x51ed_270b;
/// Entries per primary bucket a new table is sized for.
const TARGET_LOAD: usize = 3;
/// Average entries per primary bucket that triggers growth (back to the target).
const MAX_LOAD: usize = 4;

#[derive(Clone, Copy, Default)]
#[repr(C, align(64))]
struct Bucket {
    tags: [u32; SLOTS],
    sets: [SetId; SLOTS],
    /// 0 marks a free slot; used slots come first.
    refs: [PrefixRef; SLOTS],
    /// Index of the overflow bucket, 0 for none (bucket 0 is primary, never a target).
    next: u32,
}

impl Bucket {
    /// Bit `i` set for each used slot `i` whose stored hash is `hash`, found at
    /// once: a slot-by-slot scan ended at a place that follows where the match
    /// sits, a branch the core mispredicted about once per probe.
    #[inline(always)]
    fn matching(&self, hash: u32) -> u32 {
        const ALL: u32 = (1 << SLOTS) - 1;
        ways_equal(&self.tags, hash) & !ways_equal(&self.refs, 0) & ALL
    }

    /// The overflow bucket a probe path goes on to after this one: only a full
    /// bucket's chain is followed (its entries are contiguous).
    #[inline(always)]
    fn chained(&self) -> Option<usize> {
        (self.refs[SLOTS - 1] != 0 && self.next != 0).then_some(self.next as usize)
    }
}

/// One bucket's answer to [`PrefixTable::scan`].
pub(crate) enum Scan {
    /// The bucket's first entry with the hash.
    Found(Entry),
    /// None there; the probe path goes on to this overflow bucket.
    Chained(usize),
    /// None there, and the path ends: no entry has the hash.
    Absent,
}

/// Where an entry sits, for updates.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Slot {
    bucket: usize,
    slot: usize,
}

/// One entry as the lookup sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Entry {
    /// The prefix's full 32-bit hash, kept so that growing the table moves
    /// entries without rehashing any prefix.
    pub hash: u32,
    /// The prefix's next hops, shared with every prefix that has the same ones.
    pub set: SetId,
    /// Where the prefix's encoded components lie in the [`PrefixArena`], to
    /// compare when the hashes match.
    pub prefix: PrefixRef,
}

/// The hash table: primary buckets first, overflow buckets after them, with
/// the freed overflow buckets kept for reuse.
#[derive(Clone)]
pub(crate) struct PrefixTable {
    buckets: Vec<Bucket>,
    primary: usize,
    free: Vec<u32>,
    len: usize,
}

impl PrefixTable {
    /// A table sized for `capacity` entries.
    pub fn with_capacity(capacity: usize) -> Self {
        let primary = (capacity / TARGET_LOAD).max(1);
        PrefixTable { buckets: crate::huge::filled(primary, Bucket::default()), primary, free: Vec::new(), len: 0 }
    }

    /// Entries stored, which the FIB counts as its routes and sizes a rebuilt
    /// table and filter by.
    pub fn len(&self) -> usize {
        self.len
    }

    /// The bucket where `hash`'s probe path starts, so that the FIB's prefetch
    /// pipeline can [`PrefixTable::scan`] the path one bucket per step.
    #[inline]
    pub fn home(&self, hash: u32) -> usize {
        reduce(mix(hash, SALT), self.primary)
    }

    /// Starts loading the home bucket of `hash`.
    #[inline]
    pub fn prefetch(&self, hash: u32) {
        self.prefetch_bucket(self.home(hash));
    }

    /// Starts loading bucket `b` (a home bucket or an overflow one).
    #[inline]
    pub fn prefetch_bucket(&self, b: usize) {
        super::prefetch(&self.buckets[b]);
    }

    /// What bucket `b` of `hash`'s probe path says, reading that bucket only:
    /// the first entry storing `hash` (the one whose bytes a lookup compares
    /// first), or where the path goes on, or that it ends here.
    #[inline]
    pub fn scan(&self, b: usize, hash: u32) -> Scan {
        let bucket = &self.buckets[b];
        let hits = bucket.matching(hash);
        if hits != 0 {
            let i = hits.trailing_zeros() as usize;
            return Scan::Found(Entry { hash, set: bucket.sets[i], prefix: bucket.refs[i] });
        }
        bucket.chained().map_or(Scan::Absent, Scan::Chained)
    }

    /// The entry for the prefix with hash `hash` and encoded bytes `key`.
    #[inline]
    pub fn find(&self, hash: u32, key: &[u8], arena: &PrefixArena) -> Option<Entry> {
        self.locate(hash, key, arena).map(|s| self.entry(s))
    }

    /// Where the prefix hashed `hash` with encoded components `key` is stored.
    /// Always inlined, as the profile-guided build does: every lookup's probe.
    #[inline(always)]
    pub fn locate(&self, hash: u32, key: &[u8], arena: &PrefixArena) -> Option<Slot> {
        let mut b = self.home(hash);
        loop {
            let bucket = &self.buckets[b];
            // Usually one way matches (the prefix) or none (a filter false
            // positive); only a 32-bit hash collision makes two.
            let mut hits = bucket.matching(hash);
            while hits != 0 {
                let i = hits.trailing_zeros() as usize;
                hits &= hits - 1;
                if arena.bytes(bucket.refs[i]) == key {
                    return Some(Slot { bucket: b, slot: i });
                }
            }
            b = bucket.chained()?;
        }
    }

    /// The entry at a slot [`PrefixTable::locate`] found, so that a route update
    /// can read the prefix's current next-hop set.
    pub fn entry(&self, s: Slot) -> Entry {
        let b = &self.buckets[s.bucket];
        Entry { hash: b.tags[s.slot], set: b.sets[s.slot], prefix: b.refs[s.slot] }
    }

    /// Gives the entry at `s` another next-hop set: a route change leaves the
    /// prefix where it is and replaces only its set.
    pub fn set_set(&mut self, s: Slot, set: SetId) {
        self.buckets[s.bucket].sets[s.slot] = set;
    }

    /// Adds an entry the caller knows is absent; grows the table when it is too full.
    pub fn insert(&mut self, e: Entry) {
        if self.len >= self.primary * MAX_LOAD {
            self.resize(self.len / TARGET_LOAD + 1);
        }
        self.place(e);
        self.len += 1;
    }

    fn place(&mut self, e: Entry) {
        let mut b = self.home(e.hash);
        loop {
            let bucket = &mut self.buckets[b];
            if let Some(i) = bucket.refs.iter().position(|&r| r == 0) {
                bucket.tags[i] = e.hash;
                bucket.sets[i] = e.set;
                bucket.refs[i] = e.prefix;
                return;
            }
            if bucket.next == 0 {
                let fresh = match self.free.pop() {
                    Some(f) => f,
                    None => {
                        if self.buckets.len() == self.buckets.capacity() {
                            // The overflow area grows by an eighth of the primary
                            // area at a time, not by doubling the whole table.
                            crate::huge::reserve(&mut self.buckets, self.primary / 8 + 1);
                        }
                        self.buckets.push(Bucket::default());
                        (self.buckets.len() - 1) as u32
                    }
                };
                self.buckets[b].next = fresh;
            }
            b = self.buckets[b].next as usize;
        }
    }

    /// Removes the entry at `s`, keeping each chain's entries contiguous: the chain's
    /// last entry fills the hole, and an overflow bucket left empty is unlinked.
    pub fn remove(&mut self, s: Slot) -> Entry {
        let removed = self.entry(s);
        // Overflow buckets are never left empty, so the chain's last entry is in
        // its last bucket.
        let mut prev = usize::MAX;
        let mut last = self.home(removed.hash);
        while self.buckets[last].next != 0 {
            prev = last;
            last = self.buckets[last].next as usize;
        }
        let used = self.buckets[last].refs.iter().take_while(|&&r| r != 0).count();
        let li = used - 1;
        let moved = Entry { hash: self.buckets[last].tags[li], set: self.buckets[last].sets[li], prefix: self.buckets[last].refs[li] };
        let hole = &mut self.buckets[s.bucket];
        hole.tags[s.slot] = moved.hash;
        hole.sets[s.slot] = moved.set;
        hole.refs[s.slot] = moved.prefix;
        self.buckets[last].refs[li] = 0;
        if li == 0 && prev != usize::MAX {
            let empty = self.buckets[prev].next;
            self.buckets[prev].next = self.buckets[empty as usize].next;
            self.buckets[empty as usize].next = 0;
            self.free.push(empty);
        }
        self.len -= 1;
        removed
    }

    /// Rebuilds with `primary` buckets from the stored hashes alone.
    fn resize(&mut self, primary: usize) {
        let old = std::mem::replace(self, PrefixTable::with_capacity(primary * TARGET_LOAD));
        for e in old.iter() {
            self.place(e);
        }
        self.len = old.len;
    }

    /// Every entry, in bucket order.
    pub fn iter(&self) -> impl Iterator<Item = Entry> + '_ {
        self.buckets.iter().flat_map(|b| {
            (0..SLOTS).take_while(move |&i| b.refs[i] != 0).map(move |i| Entry { hash: b.tags[i], set: b.sets[i], prefix: b.refs[i] })
        })
    }

    /// Overflow buckets in use: a measure of how well the table is dimensioned.
    pub fn overflow_buckets(&self) -> usize {
        self.buckets.len() - self.primary - self.free.len()
    }

    /// Heap bytes the table holds: for the FIB's memory report, and to decide
    /// whether the FIB stays in cache (so prefetching ahead of a lookup gains nothing).
    pub fn heap_bytes(&self) -> usize {
        self.buckets.capacity() * std::mem::size_of::<Bucket>() + self.free.capacity() * 4
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bucket_is_one_cache_line() {
        assert_eq!(std::mem::size_of::<Bucket>(), 64);
        assert_eq!(std::mem::align_of::<Bucket>(), 64);
    }

    /// Forces every key into one chain (all share a hash) to exercise overflow
    /// buckets, hole filling, unlinking, and string compare on hash match.
    #[test]
    fn colliding_entries_chain_and_unchain() {
        let mut arena = PrefixArena::default();
        let mut t = PrefixTable::with_capacity(3);
        let keys: Vec<Vec<u8>> = (0..23u8).map(|i| vec![i, i]).collect();
        let refs: Vec<PrefixRef> = keys.iter().map(|k| arena.push(k)).collect();
        for (i, &r) in refs.iter().enumerate() {
            t.insert(Entry { hash: 42, set: i as u32, prefix: r });
        }
        assert_eq!(t.len(), 23);
        assert!(t.overflow_buckets() >= 4);
        for (i, k) in keys.iter().enumerate() {
            assert_eq!(t.find(42, k, &arena).map(|e| e.set), Some(i as u32));
        }
        assert_eq!(t.find(42, b"zz", &arena), None);
        assert_eq!(t.find(43, &keys[0], &arena), None, "hash mismatch never compares bytes");
        for (i, k) in keys.iter().enumerate().filter(|(i, _)| i % 3 != 1) {
            let s = t.locate(42, k, &arena).unwrap();
            assert_eq!(t.remove(s).set, i as u32);
        }
        for (i, k) in keys.iter().enumerate() {
            assert_eq!(t.find(42, k, &arena).is_some(), i % 3 == 1, "key {i}");
        }
        assert_eq!(t.len(), 8);
        assert_eq!(t.iter().count(), 8);
        assert!(t.overflow_buckets() <= 1, "emptied overflow buckets are unlinked");
    }

    /// Free slots keep whatever tag they had (zero, or a removed entry's):
    /// only used slots may match, and a chain goes on past full buckets only.
    #[test]
    fn free_slots_never_match() {
        let mut arena = PrefixArena::default();
        let mut t = PrefixTable::with_capacity(3);
        let (a, b) = (arena.push(b"a"), arena.push(b"b"));
        t.insert(Entry { hash: 0, set: 1, prefix: a });
        assert_eq!(t.find(0, b"a", &arena).map(|e| e.set), Some(1));
        assert_eq!(t.find(0, b"b", &arena), None, "empty slots' zero tags are not entries");
        let first = |t: &PrefixTable, h: u32| match t.scan(t.home(h), h) {
            Scan::Found(e) => Some(e.prefix),
            _ => None,
        };
        assert_eq!(first(&t, 0), Some(a));
        t.insert(Entry { hash: 7, set: 2, prefix: b });
        let s = t.locate(7, b"b", &arena).unwrap();
        t.remove(s);
        assert_eq!(t.find(7, b"b", &arena), None, "a removed entry's stale tag does not match");
        assert_eq!(first(&t, 7), None);
        assert_eq!(t.find(0, b"a", &arena).map(|e| e.set), Some(1));
    }

    /// A scan of a full home bucket without the hash goes on to its overflow
    /// bucket, where the entry is; a hash stored nowhere ends the path.
    #[test]
    fn a_scan_follows_the_chain_of_a_full_bucket() {
        let mut arena = PrefixArena::default();
        let mut t = PrefixTable::with_capacity(100);
        // Other hashes of 99's home bucket fill it.
        let home = t.home(99);
        let fillers: Vec<u32> = (100..).filter(|&h| t.home(h) == home).take(SLOTS).collect();
        for h in fillers {
            t.insert(Entry { hash: h, set: h, prefix: arena.push(&h.to_le_bytes()) });
        }
        let last = arena.push(b"last");
        t.insert(Entry { hash: 99, set: 99, prefix: last });
        assert_eq!(t.home(99), home, "no growth");
        let Scan::Chained(next) = t.scan(home, 99) else { panic!("the full home bucket chains on") };
        assert!(matches!(t.scan(next, 99), Scan::Found(e) if e.prefix == last && e.set == 99));
        let filler = (100..).find(|&h| t.home(h) == home).unwrap();
        assert!(matches!(t.scan(home, filler), Scan::Found(e) if e.set == filler));
        assert!(matches!(t.scan(next, 1234), Scan::Absent));
    }

    #[test]
    fn growth_keeps_every_entry_findable() {
        let mut arena = PrefixArena::default();
        let mut t = PrefixTable::with_capacity(1);
        let keys: Vec<Vec<u8>> = (0..2000u32).map(|i| i.to_le_bytes().to_vec()).collect();
        for (i, k) in keys.iter().enumerate() {
            let r = arena.push(k);
            t.insert(Entry { hash: crc32c::crc32c(k), set: i as u32, prefix: r });
        }
        assert!(t.primary >= 2000 / MAX_LOAD);
        for (i, k) in keys.iter().enumerate() {
            assert_eq!(t.find(crc32c::crc32c(k), k, &arena).unwrap().set, i as u32);
        }
    }
}
