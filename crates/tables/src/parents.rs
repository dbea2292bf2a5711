//! Which cached packet answers a CanBePrefix Interest for a parent prefix: a
//! small, lossy, set-associative table beside the PCCT's index.
//!
//! Every cached packet answers for its parent ([`crate::cs::PREFIX_LEVELS`]).
//! Kept in the shared index, that registration cost each cached packet a walk
//! to find the prefix's holder and an index insert, and each eviction an index
//! removal: 192 of the 3,578 instructions of a worst-case exchange, for an
//! answer a cache may always decline to give (docs/PERFORMANCE.md). Here a
//! registration is one write into the prefix's bucket, and an eviction touches
//! nothing: a way may name a packet since evicted, or a slot since reused, so
//! the store checks the packet it names against the asked-for prefix before
//! answering (any usable packet under the prefix is a correct answer).
//!
//! A bucket keeps the [`WAYS`] prefixes that took a way in it last (a prefix
//! registered again keeps its way, naming the newer packet). An older one is
//! forgotten, and a CanBePrefix Interest for it goes upstream, as it would for
//! a prefix registered by a packet since evicted. The table has four ways or
//! more per packet the store holds: a registration is lost only when eight
//! newer ones land in its bucket while its packet is still cached: for a full
//! store under churn, a Poisson count of mean at most 2 reaching 8, about 0.1 %
//! of registrations at most (0.02 % at 10^5 packets, mean 1.5).
//!
//! The table is sized by the packets the store holds, not by the capacity it
//! is allowed: it starts with no bucket and the store doubles it
//! ([`ParentTable::grow`]) when a packet more would leave fewer than four ways
//! per packet. A table built for the capacity up front made a `cs config` of
//! 10^9 packets allocate 8 GiB at once (and abort the router where that
//! failed). Doubling splits each bucket in two by the next bit of its tags, so
//! every registration is re-homed, none lost, in the same order. A store keeps
//! its table when packets go (as its index and slab keep theirs), and rebuilds
//! a smaller one when its capacity is lowered (`Cs::set_capacity`).

use crate::fib::prefetch;
use crate::ways::ways_equal;

/// Registrations per bucket: eight tags and eight packets fill one cache line.
const WAYS: usize = 8;

/// Ways per packet the store holds, at least.
const WAYS_PER_PACKET: usize = 4;

/// One cache line: prefix tags and the packets (slab index + 1; 0 for an empty
/// way) registered under them, most recently registered first.
#[derive(Clone, Copy, Default)]
#[repr(C, align(64))]
struct Bucket {
    tags: [u32; WAYS],
    packets: [u32; WAYS],
}

impl Bucket {
    /// Bit `w` set for each occupied way registered under `tag` (an empty way
    /// has tag 0 too, and no packet).
    #[inline]
    fn holding(&self, tag: u32) -> u32 {
        ways_equal(&self.tags, tag) & !ways_equal(&self.packets, 0)
    }
}

/// The table: a prefix's 32-bit tag (as the index's, [`crate::line_index::LineIndex::tag`])
/// to the cached packet that last registered it.
pub(crate) struct ParentTable {
    buckets: Vec<Bucket>,
    /// 32 less log₂ of the bucket count: a tag shifted right by it is its bucket.
    shift: u32,
}

/// The buckets that give `packets` packets [`WAYS_PER_PACKET`] ways each: a
/// power of two, none for none. At most 2^27 for `cs::MAX_CAPACITY` (2^28) packets.
fn buckets_for(packets: usize) -> usize {
    if packets == 0 {
        0
    } else {
        (packets * WAYS_PER_PACKET).div_ceil(WAYS).next_power_of_two()
    }
}

impl ParentTable {
    /// An empty table of no bucket, which answers nothing and records nothing
    /// until it grows ([`ParentTable::grow`]): a store's memory follows the
    /// packets it holds, not its capacity.
    pub fn new() -> Self {
        ParentTable { buckets: Vec::new(), shift: 32 }
    }

    /// The packets the table has [`WAYS_PER_PACKET`] ways each for: a store
    /// holding more calls [`ParentTable::grow`]. One shift, for the store's
    /// check on each packet it adds (none once it is full).
    #[inline(always)]
    pub fn room(&self) -> usize {
        self.buckets.len() * WAYS / WAYS_PER_PACKET
    }

    /// Grows to [`WAYS_PER_PACKET`] ways for each of `packets` packets (a
    /// doubling, for one packet beyond [`ParentTable::room`]), keeping every
    /// registration: doubling splits bucket `b` into `2b` and `2b + 1` by the
    /// next bit of each tag, so a new bucket takes at most the [`WAYS`] of one
    /// old one, in their order (most recent first). Does nothing where the
    /// table is that large already. Out of line: rare, and O(buckets).
    #[cold]
    #[inline(never)]
    pub fn grow(&mut self, packets: usize) {
        let n = buckets_for(packets);
        if n <= self.buckets.len() {
            return;
        }
        let old = std::mem::replace(&mut self.buckets, crate::huge::filled(n, Bucket::default()));
        self.shift = 32 - n.trailing_zeros();
        for b in &old {
            for w in (0..WAYS).filter(|&w| b.packets[w] != 0) {
                let home = self.home(b.tags[w]);
                let to = &mut self.buckets[home];
                // The ways of `to` are taken in order, by one old bucket's at most.
                let free = ways_equal(&to.packets, 0).trailing_zeros() as usize;
                (to.tags[free], to.packets[free]) = (b.tags[w], b.packets[w]);
            }
        }
    }

    /// Bytes the table's buckets take on the heap, for tests that check its
    /// memory follows the packets held.
    #[cfg(test)]
    pub fn heap_bytes(&self) -> usize {
        self.buckets.capacity() * std::mem::size_of::<Bucket>()
    }

    /// The bucket of `tag` (0 for a table of none, which has no bucket 0).
    #[inline]
    fn home(&self, tag: u32) -> usize {
        (u64::from(tag) >> self.shift) as usize
    }

    /// Starts loading the line a registration or lookup of `tag` reads.
    #[inline]
    pub fn prefetch(&self, tag: u32) {
        if let Some(b) = self.buckets.get(self.home(tag)) {
            prefetch(b);
        }
    }

    /// Records `packet` (a slab index) as the answer for the prefix tagged `tag`.
    #[inline]
    pub fn register(&mut self, tag: u32, packet: u32) {
        let home = self.home(tag);
        let Some(b) = self.buckets.get_mut(home) else { return };
        let same = b.holding(tag);
        if same != 0 {
            b.packets[same.trailing_zeros() as usize] = packet + 1;
        } else {
            // The oldest registration falls off the end.
            b.tags.copy_within(..WAYS - 1, 1);
            b.packets.copy_within(..WAYS - 1, 1);
            (b.tags[0], b.packets[0]) = (tag, packet + 1);
        }
    }

    /// The packet last registered for the prefix tagged `tag`, if the table
    /// still holds it. The caller checks that it is still that prefix's.
    #[inline]
    pub fn get(&self, tag: u32) -> Option<u32> {
        let b = self.buckets.get(self.home(tag))?;
        let same = b.holding(tag);
        (same != 0).then(|| b.packets[same.trailing_zeros() as usize] - 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tag for bucket `b` of `t` (its high bits), told apart by `low`.
    fn tag_in(t: &ParentTable, b: u32, low: u32) -> u32 {
        (b << t.shift) | low
    }

    /// A table grown for `packets` packets.
    fn sized(packets: usize) -> ParentTable {
        let mut t = ParentTable::new();
        t.grow(packets);
        t
    }

    #[test]
    fn sized_for_four_ways_per_packet() {
        assert!(ParentTable::new().buckets.is_empty());
        assert_eq!((ParentTable::new().room(), ParentTable::new().heap_bytes()), (0, 0), "no bucket before a packet");
        for capacity in [1, 2, 3, 1000, 100_000] {
            let t = sized(capacity);
            assert!(t.buckets.len().is_power_of_two());
            assert!(t.buckets.len() * WAYS >= capacity * WAYS_PER_PACKET, "{capacity}");
            assert!(t.buckets.len() * WAYS < 2 * capacity * WAYS_PER_PACKET.max(WAYS), "{capacity}: at most double what it needs");
            assert!(t.room() >= capacity && t.heap_bytes() == t.buckets.len() * 64, "{capacity}");
            assert_eq!(t.home(u32::MAX), t.buckets.len() - 1, "the top tag's home is the last bucket");
        }
    }

    /// One packet beyond the room doubles the table; as many as it has room
    /// for change nothing; growing by many doublings at once is one step.
    #[test]
    fn grows_by_doubling_when_a_packet_more_needs_it() {
        let mut t = ParentTable::new();
        let mut sizes = Vec::new();
        for packets in 1..=1000 {
            if packets > t.room() {
                t.grow(packets);
                sizes.push(t.buckets.len());
            }
            assert!(t.room() >= packets);
        }
        assert_eq!(sizes, (0..=9).map(|k| 1 << k).collect::<Vec<_>>(), "1, 2, 4, … 512 buckets");
        t.grow(10);
        assert_eq!(t.buckets.len(), 512, "never shrinks");
        t.grow(1 << 16);
        assert_eq!(t.buckets.len(), 1 << 15);
    }

    /// Growth re-homes every registration a bucket held, in its order: each
    /// tag answers after growing exactly what it answered before (the packet
    /// or, forgotten, nothing), and a bucket's older ways still fall off first.
    #[test]
    fn growing_keeps_every_registration() {
        let mut t = ParentTable::new();
        let tags: Vec<u32> = (0..4000u32).map(|i| i.wrapping_mul(0x9e37_79b9) ^ (i >> 3)).collect();
        let answers = |t: &ParentTable| tags.iter().map(|&tag| t.get(tag)).collect::<Vec<_>>();
        let mut grown = 0;
        for (i, &tag) in tags.iter().enumerate() {
            t.register(tag, i as u32);
            // Eight registrations per packet of room, so that buckets overflow
            // and forget some before each growth.
            let packets = i / 8 + 1;
            if packets > t.room() {
                let before = answers(&t);
                t.grow(packets);
                assert_eq!(before, answers(&t), "after {} registrations, {} buckets", i + 1, t.buckets.len());
                grown += 1;
            }
        }
        assert!(grown >= 9 && answers(&t).iter().any(Option::is_none), "grew {grown} times, buckets overflowed");
        let before = answers(&t);
        t.grow(8 * t.room());
        assert_eq!(before, answers(&t), "three doublings at once");

        // A bucket's ways keep their order: `last` splits into `2 last` and
        // `2 last + 1`, and tags whose next bit is 0 all go to the first.
        let mut t = sized(16);
        let last = t.buckets.len() as u32 - 1;
        let full: Vec<u32> = (1..=WAYS as u32).map(|low| tag_in(&t, last, low)).collect();
        for (packet, &tag) in full.iter().enumerate() {
            t.register(tag, packet as u32);
        }
        t.grow(2 * t.room());
        assert!(full.iter().enumerate().all(|(p, &tag)| t.get(tag) == Some(p as u32)));
        t.register(tag_in(&t, 2 * last, 0xff), 99);
        assert_eq!(t.get(full[0]), None, "the oldest falls off first, as before growing");
        assert!(full[1..].iter().all(|&tag| t.get(tag).is_some()));
    }

    #[test]
    fn the_newest_registration_answers() {
        let mut t = sized(100);
        assert_eq!(t.get(7), None);
        t.register(7, 0);
        t.register(0, 5);
        assert_eq!((t.get(7), t.get(0)), (Some(0), Some(5)), "slab index 0 and tag 0 are values like others");
        t.register(7, 3);
        assert_eq!(t.get(7), Some(3));
    }

    #[test]
    fn a_full_bucket_forgets_its_oldest_registration() {
        let mut t = sized(100);
        let tags: Vec<u32> = (1..=WAYS as u32 + 1).map(|low| tag_in(&t, 3, low)).collect();
        for (packet, &tag) in tags.iter().enumerate().take(WAYS) {
            t.register(tag, packet as u32);
        }
        t.register(tags[0], 50);
        assert!(tags[..WAYS].iter().all(|&tag| t.get(tag).is_some()), "a registration again takes no new way");
        t.register(tags[WAYS], 60);
        assert_eq!(t.get(tags[WAYS]), Some(60));
        assert_eq!(t.get(tags[0]), None, "the oldest way went, though registered again since");
        assert!(tags[1..WAYS].iter().all(|&tag| t.get(tag).is_some()));
        assert_eq!(t.get(tag_in(&t, 4, 1)), None, "other buckets are untouched");
    }

    proptest::proptest! {
        /// Whatever the registrations (tags drawn from few buckets, so that
        /// buckets overflow), a tag answers the packet registered under it last
        /// or nothing, never an older packet or another tag's; and a tag among
        /// the last [`WAYS`] to take a way in its bucket is always answered.
        #[test]
        fn answers_the_latest_registration_or_nothing(regs in proptest::collection::vec((0u32..4, 0u32..6, 0u32..1000), 1..200)) {
            let mut t = sized(64);
            let mut latest = std::collections::HashMap::new();
            // Per bucket, the tags in the order they took a way, newest first.
            let mut ways: std::collections::HashMap<u32, Vec<u32>> = std::collections::HashMap::new();
            for (b, low, packet) in regs {
                let tag = tag_in(&t, b, low);
                t.register(tag, packet);
                latest.insert(tag, packet);
                let w = ways.entry(b).or_default();
                if !w.contains(&tag) {
                    w.insert(0, tag);
                    w.truncate(WAYS);
                }
                for (&tag, &packet) in &latest {
                    let got = t.get(tag);
                    proptest::prop_assert!(got.is_none() || got == Some(packet), "tag {tag:#x}: {got:?}, latest {packet}");
                }
                for (&b, w) in &ways {
                    for &tag in w {
                        proptest::prop_assert_eq!(t.get(tag), Some(latest[&tag]), "bucket {} tag {:#x}", b, tag);
                    }
                }
            }
        }
    }

    #[test]
    fn an_empty_table_answers_nothing() {
        let mut t = ParentTable::new();
        t.prefetch(1);
        t.register(1, 1);
        assert_eq!(t.get(1), None);
    }
}
