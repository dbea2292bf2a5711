//! The prefix Bloom filter (Caesar §3.1–3.2) and its control-plane mirror (§4.3).
//!
//! The filter is an array of blocks of one 64-byte cache line. A prefix goes to the
//! block chosen by the hash of its *first component*, so every prefix a name could
//! match sits in one block and the longest match's length is found with one memory
//! access: the name's prefixes are tested in that block from the longest down.
//!
//! **Block expansion.** When many prefixes share a first component (everything
//! under `/com`), their block fills up and its false-positive rate climbs. A block
//! holding more than t = −(m/k)·ln(1 − f^(1/k)) prefixes (m filter bits, k hash
//! functions, f the tolerated false-positive rate) is *expanded* at the length l
//! where its prefix count first exceeds t: prefixes of l or more components move to
//! the block chosen by the hash of their first l components, and bit l of the
//! block's bitmap (its first 32 bits; lengths 2 ..= 33) records it. The target block
//! may itself be expanded at a longer length, and so on; a lookup follows the same
//! chain. Placement is thus a pure function of the bitmaps: from block g(p₁) at
//! level 1, follow the first expansion bit e above the current level while the
//! prefix has at least e components.
//!
//! **Control plane.** A counting mirror (2-bit counters, one per filter bit) makes
//! removal possible: a bit is cleared when its counter returns to zero, and a
//! counter that saturates stays put (its bit can then only be cleared by a rebuild,
//! which costs false positives, never wrong answers). Two bits suffice: a block
//! below the threshold sets at most 2t = 72 of its 480 bits, so a bit is set by
//! three prefixes at once with probability about 5·10⁻⁴ (Poisson, λ ≤ 0.15),
//! and four bits would double the mirror (the largest control-plane cost per
//! prefix) for that. Each block's prefixes are
//! chained through the prefix arena — the role of the per-block prefix tree of the
//! paper — so an expansion finds the prefixes to move without scanning the FIB.
//! An insert that overflows a block expands it at once; if the overflow is below the
//! block's existing expansions (which moving local prefixes cannot fix) the block
//! waits for the next rebuild, which re-inserts everything shortest-first, the
//! order for which expansion was designed. Removals never merge blocks.

use super::arena::{PrefixArena, PrefixRef};
use crate::name_hash::{mix, reduce, NameHashes, K};

const BLOCK_BITS: usize = 512;
/// Width w of the expansion bitmap.
const MAP_BITS: usize = 32;
/// Longest expansion length the bitmap can record (bit l − 2 ↔ length l).
const MAX_EXPANSION: usize = MAP_BITS + 1;
const SALT_BLOCK: u32 = 0x2545_f491;
const SALT_BIT: u32 = 0x9b97_2c1f;
/// Bits per counter of the counting mirror.
const COUNTER_BITS: usize = 2;
/// Counter value that no longer moves.
const SATURATED: u8 = (1 << COUNTER_BITS) - 1;

/// A block's control-plane state.
#[derive(Clone, Copy, Default)]
struct BlockMeta {
    /// Prefixes placed in the block.
    load: u32,
    /// Expansion only: the head of the block's prefix chain.
    head: PrefixRef,
    /// Expansion only: the load at which a block that could not expand tries again
    /// (doubling, so a stuck block costs amortised O(1) per insert).
    retry_at: u32,
}

#[derive(Clone, Copy, Default)]
#[repr(C, align(64))]
struct Block([u64; BLOCK_BITS / 64]);

impl Block {
    #[inline]
    fn get(&self, bit: usize) -> bool {
        self.0[bit / 64] & (1 << (bit % 64)) != 0
    }

    fn set(&mut self, bit: usize, on: bool) {
        if on {
            self.0[bit / 64] |= 1 << (bit % 64);
        } else {
            self.0[bit / 64] &= !(1 << (bit % 64));
        }
    }

    /// The expansion bitmap.
    #[inline]
    fn map(&self) -> u64 {
        self.0[0] & ((1 << MAP_BITS) - 1)
    }
}

/// The expansion threshold t = −(m/k)·ln(1 − f^(1/k)) of a block of `filter_bits`
/// bits for a tolerated false-positive rate `fpr` (Caesar §3.2).
pub fn expansion_threshold(filter_bits: usize, fpr: f64) -> usize {
    (-(filter_bits as f64 / K as f64) * (1.0 - fpr.powf(1.0 / K as f64)).ln()).floor() as usize
}

/// The false-positive rate tolerated per block before it expands. Caesar chose its
/// threshold (75 prefixes in 1024 bits) by throughput; that is f ≈ 2 %, which this
/// keeps for 64-byte blocks (t = 36 prefixes in 480 bits).
pub const TARGET_FPR: f64 = 0.02;

#[derive(Clone)]
pub(crate) struct Pbf {
    blocks: Vec<Block>,
    /// [`COUNTER_BITS`]-bit counters, packed in bytes, `filter_bits` per block.
    counters: Vec<u8>,
    /// Control-plane state per block, one array so an update touches one line.
    meta: Vec<BlockMeta>,
    expand: bool,
    /// False while a rebuild inserts prefixes shortest first (see [`Pbf::relieve`]).
    live: bool,
    threshold: u32,
    filter_bits: usize,
    /// First filter bit: the bitmap occupies bits 0..MAP_BITS when expanding.
    offset: usize,
    total: usize,
    pub expansions: u64,
    pub stuck: u64,
    /// Of `stuck`, those from live inserts: a rebuild can fix these.
    live_stuck: u64,
}

impl Pbf {
    /// A filter sized so that `capacity` prefixes fill its blocks to half the
    /// threshold on average (Caesar's 10 M-prefix configuration averaged 57 %).
    /// Expansion only redistributes load, so it relieves skew, not a filter whose
    /// average block is near the threshold: that needs more blocks.
    pub fn new(capacity: usize, expand: bool) -> Self {
        let filter_bits = if expand { BLOCK_BITS - MAP_BITS } else { BLOCK_BITS };
        let threshold = expansion_threshold(filter_bits, TARGET_FPR);
        let n = (capacity * 2 / threshold).max(1);
        Pbf {
            blocks: vec![Block::default(); n],
            counters: vec![0; n * filter_bits * COUNTER_BITS / 8],
            meta: vec![BlockMeta::default(); n],
            expand,
            live: true,
            threshold: threshold as u32,
            filter_bits,
            offset: BLOCK_BITS - filter_bits,
            total: 0,
            expansions: 0,
            stuck: 0,
            live_stuck: 0,
        }
    }

    /// True once the average block holds 75 % of the threshold: time to rebuild
    /// with more blocks (1.5 times as many).
    pub fn is_full(&self) -> bool {
        self.total * 4 > self.blocks.len() * self.threshold as usize * 3
    }

    #[inline]
    fn block_of(&self, h: u32) -> usize {
        reduce(mix(h, SALT_BLOCK), self.blocks.len())
    }

    #[inline]
    fn bit_of(&self, h: u32) -> usize {
        self.offset + reduce(mix(h, SALT_BIT), self.filter_bits)
    }

    /// The first expansion of block `b` at a length above `level`.
    #[inline]
    fn next_expansion(&self, b: usize, level: usize) -> Option<usize> {
        if !self.expand {
            // Without expansion the whole block is filter: there is no bitmap.
            return None;
        }
        let above = self.blocks[b].map() >> (level - 1);
        (above != 0).then(|| level + 1 + above.trailing_zeros() as usize)
    }

    /// The block a prefix of `u` components with these hashes is stored in, and the
    /// level at which it got there.
    fn place(&self, h: &NameHashes, u: usize) -> (usize, usize) {
        let mut b = self.block_of(h.prefix(1));
        let mut level = 1;
        while let Some(e) = self.next_expansion(b, level) {
            if u < e {
                break;
            }
            b = self.block_of(h.prefix(e));
            level = e;
        }
        (b, level)
    }

    /// Starts loading the block of a name's first component (`h` covers at least
    /// one component), the filter line its lookup reads first.
    #[inline]
    pub fn prefetch(&self, h: &NameHashes) {
        super::prefetch(&self.blocks[self.block_of(h.prefix(1))]);
    }

    #[inline]
    fn contains(&self, b: usize, h: &NameHashes, j: usize) -> bool {
        let block = &self.blocks[b];
        (0..K).all(|i| block.get(self.bit_of(h.get(i, j))))
    }

    /// Tests the prefixes of a name (`h` holds its first d prefixes' hashes) from
    /// the longest (d) down, calling `probe` on each length the filter answers maybe for,
    /// until `probe` confirms one. This is the lookup of §3.2: load the block of the
    /// first component, follow its expansions as far as the name is long, then test
    /// the last block's lengths, then the previous block's, and so on.
    #[inline]
    pub fn search<R, T: super::Tally>(&self, h: &NameHashes, d: usize, tally: &mut T, mut probe: impl FnMut(usize, &mut T) -> Option<R>) -> Option<R> {
        let mut chain = [(0usize, 0usize); MAX_EXPANSION];
        let mut n = 0;
        let mut b = self.block_of(h.prefix(1));
        let mut level = 1;
        loop {
            chain[n] = (b, level);
            n += 1;
            match self.next_expansion(b, level) {
                Some(e) if e <= d => {
                    b = self.block_of(h.prefix(e));
                    level = e;
                }
                _ => break,
            }
        }
        let mut hi = d;
        for &(b, lo) in chain[..n].iter().rev() {
            tally.block();
            for j in (lo..=hi).rev() {
                if self.contains(b, h, j) {
                    tally.positive();
                    if let Some(r) = probe(j, tally) {
                        return Some(r);
                    }
                    tally.false_positive();
                } else {
                    tally.negative();
                }
            }
            hi = lo - 1;
        }
        None
    }

    /// Adds a prefix (`h` holds all its components' hashes), expanding blocks that
    /// overflow.
    pub fn insert(&mut self, h: &NameHashes, r: PrefixRef, arena: &mut PrefixArena) {
        let (b, _) = self.place(h, h.len());
        self.attach(b, h, r, arena);
        self.total += 1;
        if self.expand {
            self.relieve(b, arena);
        }
    }

    /// Removes a prefix that [`Pbf::insert`] added.
    pub fn remove(&mut self, h: &NameHashes, r: PrefixRef, arena: &mut PrefixArena) {
        let (b, _) = self.place(h, h.len());
        self.detach(b, h, r, arena);
        self.total -= 1;
    }

    fn attach(&mut self, b: usize, h: &NameHashes, r: PrefixRef, arena: &mut PrefixArena) {
        let u = h.len();
        for i in 0..K {
            let bit = self.bit_of(h.get(i, u));
            self.blocks[b].set(bit, true);
            self.bump(b, bit, true);
        }
        self.meta[b].load += 1;
        if self.expand {
            arena.set_link(r, self.meta[b].head);
            self.meta[b].head = r;
        }
    }

    fn detach(&mut self, b: usize, h: &NameHashes, r: PrefixRef, arena: &mut PrefixArena) {
        let u = h.len();
        for i in 0..K {
            let bit = self.bit_of(h.get(i, u));
            if self.bump(b, bit, false) == 0 {
                self.blocks[b].set(bit, false);
            }
        }
        self.meta[b].load -= 1;
        if self.expand {
            let next = arena.link(r);
            if self.meta[b].head == r {
                self.meta[b].head = next;
            } else {
                let mut at = self.meta[b].head;
                while arena.link(at) != r {
                    at = arena.link(at);
                }
                arena.set_link(at, next);
            }
        }
    }

    /// Moves the counter of filter bit `bit` of block `b` up or down, saturating
    /// (a saturated counter never moves again); returns the new value.
    fn bump(&mut self, b: usize, bit: usize, up: bool) -> u8 {
        let i = b * self.filter_bits + bit - self.offset;
        const PER_BYTE: usize = 8 / COUNTER_BITS;
        let byte = &mut self.counters[i / PER_BYTE];
        let shift = (i % PER_BYTE) * COUNTER_BITS;
        let c = (*byte >> shift) & SATURATED;
        let c2 = match (c, up) {
            (SATURATED, _) => SATURATED,
            (_, true) => c + 1,
            (_, false) => c - 1,
        };
        *byte = (*byte & !(SATURATED << shift)) | (c2 << shift);
        c2
    }

    /// Expands overflowing blocks, starting at `b`, until none that can be relieved
    /// is left (a move can overflow its target block in turn).
    fn relieve(&mut self, b: usize, arena: &mut PrefixArena) {
        let mut work = vec![b];
        while let Some(b) = work.pop() {
            if self.meta[b].load <= self.threshold || self.meta[b].load < self.meta[b].retry_at {
                continue;
            }
            // The block's prefixes, with their hashes and arrival level.
            let mut members = Vec::with_capacity(self.meta[b].load as usize);
            let mut at = self.meta[b].head;
            while at != 0 {
                let h = NameHashes::from_encoded(arena.bytes(at));
                let (_, level) = self.place(&h, h.len());
                members.push((h, level, at));
                at = arena.link(at);
            }
            // Caesar's rule (a build inserting shortest first): expand at the length
            // l where the count of prefixes of at most l components first exceeds
            // t, i.e. the longest l that leaves at most t behind. A live insert may
            // be followed by shorter prefixes, which only an expansion below this
            // one could move — and that needs a rebuild, because the prefixes this
            // one moved live elsewhere — so it expands at the shortest length that
            // moves anything. Either way l lies above the block's existing expansions.
            let map = self.blocks[b].map();
            let lowest = if map == 0 { 2 } else { 63 - map.leading_zeros() as usize + 3 };
            let longest = members.iter().map(|(h, _, _)| h.len()).max().unwrap_or(0).min(MAX_EXPANSION);
            let moved = |l: usize| members.iter().filter(|(h, level, _)| *level < l && h.len() >= l).count();
            let t = self.threshold as usize;
            let l = if self.live {
                (lowest..=longest).find(|&l| moved(l) > 0)
            } else {
                (lowest..=longest).rev().find(|&l| members.len() - moved(l) <= t).or(Some(lowest))
            }
            .unwrap_or(usize::MAX);
            let movable = |&(ref h, level, _): &(NameHashes, usize, PrefixRef)| level < l && h.len() >= l;
            if l > longest || moved(l) == 0 {
                self.stuck += 1;
                self.live_stuck += u64::from(self.live);
                self.meta[b].retry_at = self.meta[b].load * 2;
                continue;
            }
            self.expansions += 1;
            for m in members.iter().filter(|m| movable(m)) {
                self.detach(b, &m.0, m.2, arena);
            }
            self.blocks[b].set(l - 2, true);
            for m in members.iter().filter(|m| movable(m)) {
                let (to, _) = self.place(&m.0, m.0.len());
                self.attach(to, &m.0, m.2, arena);
                if self.meta[to].load > self.threshold {
                    work.push(to);
                }
            }
        }
    }

    /// Marks whether inserts come live (in any order) or from a shortest-first
    /// rebuild, which may fill blocks up to the threshold.
    pub fn set_live(&mut self, live: bool) {
        self.live = live;
    }

    /// Whether the filter has overflows expansion could not relieve at insert, more
    /// than one per 16 blocks: time for a rebuild.
    pub fn needs_rebuild(&self) -> bool {
        self.live_stuck as usize > self.blocks.len() / 16
    }

    /// Whether blocks expand.
    pub fn expand(&self) -> bool {
        self.expand
    }

    /// Blocks in the filter.
    pub fn blocks(&self) -> usize {
        self.blocks.len()
    }

    pub fn heap_bytes(&self) -> usize {
        self.blocks.capacity() * 64 + self.counters.capacity() + self.meta.capacity() * std::mem::size_of::<BlockMeta>()
    }

    /// The Bloom filter proper, the part forwarding reads.
    pub fn filter_bytes(&self) -> usize {
        self.blocks.len() * 64
    }

    /// The threshold t in prefixes per block.
    pub fn threshold(&self) -> usize {
        self.threshold as usize
    }

    /// Analytical mean false-positive rate over blocks, (1/b)·Σ (1 − e^(−k·nᵢ/m))^k.
    pub fn expected_fpr(&self) -> f64 {
        let m = self.filter_bits as f64;
        let sum: f64 = self.meta.iter().map(|m| m.load).map(|n| (1.0 - (-(K as f64) * n as f64 / m).exp()).powi(K as i32)).sum();
        sum / self.blocks.len() as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threshold_formula_matches_the_paper() {
        // Caesar: 128-byte blocks, t = 75, which is f ≈ 1.86 %.
        assert_eq!(expansion_threshold(1024, 0.0186), 75);
        assert_eq!(expansion_threshold(480, TARGET_FPR), 36);
    }

    #[test]
    fn next_expansion_reads_the_bitmap_above_a_level() {
        let mut plain = Pbf::new(100, false);
        plain.blocks[0].set(0, true);
        assert_eq!(plain.next_expansion(0, 1), None, "no bitmap without expansion");
        let mut p = Pbf::new(100, true);
        assert_eq!(p.next_expansion(0, 1), None);
        p.blocks[0].set(3 - 2, true);
        p.blocks[0].set(7 - 2, true);
        assert_eq!(p.next_expansion(0, 1), Some(3));
        assert_eq!(p.next_expansion(0, 2), Some(3));
        assert_eq!(p.next_expansion(0, 3), Some(7));
        assert_eq!(p.next_expansion(0, 7), None);
        p.blocks[0].set(MAX_EXPANSION - 2, true);
        assert_eq!(p.next_expansion(0, MAX_EXPANSION - 1), Some(MAX_EXPANSION));
        assert_eq!(p.next_expansion(0, MAX_EXPANSION), None);
    }

    #[test]
    fn counters_saturate_and_stick() {
        let mut p = Pbf::new(100, false);
        for _ in 0..20 {
            p.bump(0, 5, true);
        }
        assert_eq!(p.bump(0, 5, false), SATURATED);
        for neighbour in [4, 6, 7, 8] {
            assert_eq!(p.bump(0, neighbour, true), 1, "neighbouring counter {neighbour} untouched");
        }
        assert_eq!(p.bump(0, 6, true), 2);
        assert_eq!(p.bump(0, 6, false), 1);
        assert_eq!(p.bump(0, 6, false), 0);
        assert_eq!(p.bump(0, 5, false), SATURATED, "still stuck");
    }
}
