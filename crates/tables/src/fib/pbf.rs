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
//! **Control plane.** With expansion, each block keeps an array of its members —
//! the role of the per-block prefix tree of the paper — recording per prefix its
//! arena reference, its k filter-bit positions, its length and the level at which it
//! reached the block ([`Member`]). Removal clears a bit no remaining member sets, so
//! the filter stays exact without counters; an expansion decides where to expand
//! from the array alone, and reads prefix bytes (to hash them for their new block)
//! only of the members that move. Members replace both the counting mirror and a
//! chain through the arena, for fewer bytes per prefix, and an insert or expansion
//! reads one contiguous array instead of following a chain of cache misses.
//! An insert that overflows a block expands it at once; if the overflow is below the
//! block's existing expansions (which moving local prefixes cannot fix) the block
//! waits for the next rebuild, which re-inserts everything shortest-first, the
//! order for which expansion was designed. Removals never merge blocks.
//!
//! Without expansion a block can hold a third of the FIB (everything under `/com`),
//! where a member array would make removal linear in the block's load; that filter
//! keeps a counting mirror (2-bit counters, one per filter bit) instead: a bit is
//! cleared when its counter returns to zero, and a counter that saturates stays put
//! (its bit can then only be cleared by a rebuild, which costs false positives,
//! never wrong answers). Two bits suffice for blocks at the threshold's load: a bit
//! is set by three prefixes at once with probability about 5·10⁻⁴.

use super::arena::{PrefixArena, PrefixRef};
use crate::name_hash::{mix, reduce, NameHashes, K};

/// Bits per filter-bit position in a [`Member`] (positions are below 512).
const POS_BITS: u32 = 9;
/// Bits per length or level in a [`Member`]; lengths saturate at [`CLAMP`].
const LEVEL_BITS: u32 = 6;
/// Stored lengths saturate here, well above [`MAX_EXPANSION`], the longest length an
/// expansion decision compares with.
const CLAMP: usize = (1 << LEVEL_BITS) - 1;
const _: () = assert!(K as u32 * POS_BITS + 2 * LEVEL_BITS <= 32 && MAX_EXPANSION < CLAMP);

/// A prefix placed in an expanding filter's block: its arena reference and, packed
/// in 32 bits, its k filter-bit positions, its length (saturated at [`CLAMP`]) and
/// the level at which it reached the block — all an expansion needs to decide, and
/// all a removal needs to know which bits other members still set.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Member {
    prefix: PrefixRef,
    info: u32,
}

impl Member {
    fn new(prefix: PrefixRef, bits: [usize; K], len: usize, level: usize) -> Self {
        let mut info = 0;
        for (i, bit) in bits.into_iter().enumerate() {
            info |= (bit as u32) << (i as u32 * POS_BITS);
        }
        let at = K as u32 * POS_BITS;
        info |= (len.min(CLAMP) as u32) << at | (level.min(CLAMP) as u32) << (at + LEVEL_BITS);
        Member { prefix, info }
    }

    fn bit(self, i: usize) -> usize {
        (self.info >> (i as u32 * POS_BITS)) as usize & ((1 << POS_BITS) - 1)
    }

    fn len(self) -> usize {
        (self.info >> (K as u32 * POS_BITS)) as usize & CLAMP
    }

    fn level(self) -> usize {
        (self.info >> (K as u32 * POS_BITS + LEVEL_BITS)) as usize & CLAMP
    }

    /// The same member, arrived at `level`.
    fn with_level(self, level: usize) -> Self {
        let at = K as u32 * POS_BITS + LEVEL_BITS;
        Member { prefix: self.prefix, info: (self.info & !((CLAMP as u32) << at)) | (level.min(CLAMP) as u32) << at }
    }

    /// Whether an expansion at length `l` moves this member out of its block.
    fn moves_at(self, l: usize) -> bool {
        self.level() < l && self.len() >= l
    }
}

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

/// A block's control-plane state, in one place so an update touches one line.
#[derive(Clone, Copy, Default)]
struct BlockMeta {
    /// Prefixes placed in the block.
    load: u32,
    /// Expansion only: the load at which a block that could not expand tries again
    /// (doubling, so a stuck block costs amortised O(1) per insert).
    retry_at: u32,
    /// Expansion only: the block's members are `pool[start..start + load]`, in a
    /// region of `cap` entries.
    start: u32,
    cap: u32,
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

    /// Clears every filter bit, keeping the expansion bitmap.
    fn clear_filter(&mut self) {
        self.0[0] &= (1 << MAP_BITS) - 1;
        self.0[1..].fill(0);
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

/// The filter and its control-plane mirror (member arrays with expansion,
/// counters without), kept together so that every insert or removal updates
/// both, and a removal can clear the bits no remaining prefix sets.
#[derive(Clone)]
pub(crate) struct Pbf {
    blocks: Vec<Block>,
    /// Without expansion only: [`COUNTER_BITS`]-bit counters, packed in bytes,
    /// `filter_bits` per block.
    counters: Vec<u8>,
    /// Control-plane state per block, one array so an update touches one line.
    meta: Vec<BlockMeta>,
    /// Expansion only: every block's members, a region per block. One array rather
    /// than one allocation per block: tens of thousands of small arrays, reallocated
    /// as blocks grow and freed at every filter rebuild, cost more in the allocator
    /// than the rest of an insert and fragment the heap for everything allocated
    /// after them. A region that must grow moves to the end, leaving garbage that
    /// [`Pbf::compact`] reclaims.
    pool: Vec<Member>,
    /// Pool entries no region uses.
    garbage: usize,
    expand: bool,
    /// False while a rebuild inserts prefixes shortest first (see [`Pbf::relieve`]).
    live: bool,
    threshold: u32,
    filter_bits: usize,
    /// First filter bit: the bitmap occupies bits 0..MAP_BITS when expanding.
    offset: usize,
    total: usize,
    /// Expansions performed since the filter was built, reported in
    /// [`FilterStats`](crate::fib::FilterStats) to show how skewed the prefixes are.
    pub expansions: u64,
    /// Overflows that expansion could not relieve at insert, left to a rebuild;
    /// reported as [`FilterStats::deferred`](crate::fib::FilterStats::deferred).
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
            blocks: crate::huge::filled(n, Block::default()),
            counters: if expand { Vec::new() } else { vec![0; n * filter_bits * COUNTER_BITS / 8] },
            meta: vec![BlockMeta::default(); n],
            pool: Vec::new(),
            garbage: 0,
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
        self.place_from(h, u, self.block_of(h.prefix(1)), 1)
    }

    /// [`Pbf::place`] for a prefix known to reach block `b` at `level`.
    fn place_from(&self, h: &NameHashes, u: usize, mut b: usize, mut level: usize) -> (usize, usize) {
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
    /// one component), the filter line its lookup reads first, and with
    /// expansion the block of its first two components, where the lookup goes
    /// next when the first block expanded at level 2 (nearly every lookup at 10 M
    /// prefixes). Only that one link: loading the whole chain
    /// ([`Pbf::prefetch_chain`]) in a burst costs more misses in flight than it
    /// saves.
    #[inline]
    pub fn prefetch(&self, h: &NameHashes) {
        self.prefetch_first(h.prefix(1));
        self.prefetch_links(h, 2);
    }

    /// Starts loading, with expansion, the block of each prefix of two or more
    /// components that `h` covers. An expanded block sends longer prefixes to the
    /// block of their first l components, so a lookup walks a chain of blocks,
    /// each known only once the one before it is read: at a million prefixes and
    /// more the first block of a common component is nearly always expanded, and
    /// walking the chain one load at a time puts a dependent miss per link into
    /// the lookup. Loading every candidate at once costs bandwidth for the
    /// lengths the chain skips, not time on the lookup's path.
    #[inline]
    pub fn prefetch_chain(&self, h: &NameHashes) {
        self.prefetch_links(h, h.len());
    }

    /// With expansion, starts loading the blocks of the prefixes of 2 to `upto`
    /// components that `h` covers: the links an expansion chain may follow.
    #[inline]
    fn prefetch_links(&self, h: &NameHashes, upto: usize) {
        if self.expand {
            for l in 2..=upto.min(h.len()) {
                super::prefetch(&self.blocks[self.block_of(h.prefix(l))]);
            }
        }
    }

    /// [`Pbf::prefetch`] given h₁ of the first component alone.
    #[inline]
    pub fn prefetch_first(&self, h1: u32) {
        super::prefetch(&self.blocks[self.block_of(h1)]);
    }

    /// Starts loading what an insert of a prefix (`h` covers it) most likely
    /// touches — its first component's block and that block's control state — so
    /// that these misses overlap the caller's hash-table probe instead of following
    /// it. A hint: a block that expanded sends the prefix elsewhere.
    #[inline]
    pub fn prefetch_insert(&self, h: &NameHashes) {
        let b = self.block_of(h.prefix(1));
        super::prefetch(&self.blocks[b]);
        super::prefetch(&self.meta[b]);
    }

    /// Whether block `b` may hold the `j`-component prefix. Always inlined: a
    /// lookup tests several lengths, and as a call this was ≈ 30 instructions a test.
    #[inline(always)]
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
        // The chain is walked forward, then tested backward. The block entered at
        // level l is the block of the name's first l components, so the chain is
        // recorded as a bit per level (no array to fill per lookup) and a block is
        // recomputed on the way back, which only chains of expansions pay.
        let mut b = self.block_of(h.prefix(1));
        let mut level = 1;
        let mut levels = 1u64 << level;
        while let Some(e) = self.next_expansion(b, level).filter(|&e| e <= d) {
            b = self.block_of(h.prefix(e));
            level = e;
            levels |= 1 << e;
        }
        let mut hi = d;
        loop {
            tally.block();
            for j in (level..=hi).rev() {
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
            levels &= !(1 << level);
            if levels == 0 {
                return None;
            }
            hi = level - 1;
            level = 63 - levels.leading_zeros() as usize;
            b = self.block_of(h.prefix(level));
        }
    }

    /// Adds a prefix (`h` holds all its components' hashes), expanding blocks that
    /// overflow.
    pub fn insert(&mut self, h: &NameHashes, r: PrefixRef, arena: &PrefixArena) {
        let (b, level) = self.place(h, h.len());
        self.attach(b, h, r, level);
        self.total += 1;
        if self.expand && self.overflows(b) {
            self.relieve(b, arena);
        }
    }

    /// Removes a prefix that [`Pbf::insert`] added.
    pub fn remove(&mut self, h: &NameHashes, r: PrefixRef) {
        let (b, _) = self.place(h, h.len());
        self.detach(b, h, r);
        self.total -= 1;
    }

    /// The filter bits of a prefix of `u` components.
    fn bits(&self, h: &NameHashes, u: usize) -> [usize; K] {
        std::array::from_fn(|i| self.bit_of(h.get(i, u)))
    }

    /// Places a prefix in block `b`, which it reached at `level`.
    fn attach(&mut self, b: usize, h: &NameHashes, r: PrefixRef, level: usize) {
        let u = h.len();
        let bits = self.bits(h, u);
        for bit in bits {
            self.blocks[b].set(bit, true);
        }
        if self.expand {
            self.add_member(b, Member::new(r, bits, u, level));
        } else {
            self.meta[b].load += 1;
            for bit in bits {
                self.bump(b, bit, true);
            }
        }
    }

    /// The members of block `b` (none without expansion).
    fn members(&self, b: usize) -> &[Member] {
        let meta = self.meta[b];
        &self.pool[meta.start as usize..][..meta.load.min(meta.cap) as usize]
    }

    /// Appends a member whose bits are set. A full region moves to the end of the
    /// pool, a quarter (at least four entries) larger: a move is a short copy, so
    /// small steps cost little and keep the slack per block small.
    fn add_member(&mut self, b: usize, m: Member) {
        let meta = self.meta[b];
        if meta.load == meta.cap {
            let cap = meta.cap + (meta.cap / 4).max(4);
            let start = self.pool.len();
            if self.pool.capacity() - start < cap as usize {
                // By a quarter rather than doubling: the pool is the largest
                // control-plane cost per prefix, and copying it costs amortised
                // four entries per entry added.
                crate::huge::reserve(&mut self.pool, (start / 4).max(cap as usize));
            }
            self.pool.extend_from_within(meta.start as usize..(meta.start + meta.load) as usize);
            self.pool.resize(start + cap as usize, Member::default());
            self.garbage += meta.cap as usize;
            // Compaction keeps the pool below 1.25 times the members plus one
            // region, far below 2³² entries for any FIB the 32-bit arena can hold.
            self.meta[b].start = start as u32;
            self.meta[b].cap = cap;
        }
        let meta = &mut self.meta[b];
        self.pool[(meta.start + meta.load) as usize] = m;
        meta.load += 1;
        if self.garbage > self.total / 4 + 64 {
            self.compact();
        }
    }

    /// Drops the garbage: packs the regions in block order, with a sixteenth more
    /// room for regions that grow. Regions keep their capacity — trimmed to their
    /// loads, every block would move again at its next insert and refill the
    /// garbage. Linear in the pool; runs when the garbage passes a quarter of the
    /// members (so amortised O(1) per entry of garbage) and after a build.
    fn compact(&mut self) {
        let used: usize = self.meta.iter().map(|m| m.cap as usize).sum();
        let mut pool = Vec::with_capacity(used + used / 16);
        crate::huge::advise(&pool);
        for meta in &mut self.meta {
            let start = pool.len();
            pool.extend_from_slice(&self.pool[meta.start as usize..][..meta.cap as usize]);
            meta.start = start as u32;
        }
        self.pool = pool;
        self.garbage = 0;
    }

    fn detach(&mut self, b: usize, h: &NameHashes, r: PrefixRef) {
        let u = h.len();
        let bits = self.bits(h, u);
        if self.expand {
            let meta = self.meta[b];
            let members = &mut self.pool[meta.start as usize..][..meta.load as usize];
            if let Some(at) = members.iter().position(|m| m.prefix == r) {
                members.swap(at, members.len() - 1);
            }
            self.meta[b].load -= 1;
            let members = self.members(b);
            let unused: Vec<usize> = bits.into_iter().filter(|&bit| !members.iter().any(|m| (0..K).any(|i| m.bit(i) == bit))).collect();
            for bit in unused {
                self.blocks[b].set(bit, false);
            }
        } else {
            self.meta[b].load -= 1;
            for bit in bits {
                if self.bump(b, bit, false) == 0 {
                    self.blocks[b].set(bit, false);
                }
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

    /// Whether block `b` is over the threshold and due for an expansion attempt.
    #[inline]
    fn overflows(&self, b: usize) -> bool {
        let meta = &self.meta[b];
        meta.load > self.threshold && meta.load >= meta.retry_at
    }

    /// Expands overflowing blocks, starting at `b`, until none that can be relieved
    /// is left (a move can overflow its target block in turn).
    fn relieve(&mut self, b: usize, arena: &PrefixArena) {
        let mut work = vec![b];
        while let Some(b) = work.pop() {
            if !self.overflows(b) {
                continue;
            }
            let Some(l) = self.expansion_length(b) else {
                self.stuck += 1;
                self.live_stuck += u64::from(self.live);
                self.meta[b].retry_at = self.meta[b].load * 2;
                continue;
            };
            self.expansions += 1;
            let meta = self.meta[b];
            let members = &mut self.pool[meta.start as usize..][..meta.load as usize];
            let movers: Vec<Member> = members.iter().copied().filter(|m| m.moves_at(l)).collect();
            // Keep the staying members at the front of the region, in order.
            let mut kept = 0;
            for i in 0..members.len() {
                if !members[i].moves_at(l) {
                    members[kept] = members[i];
                    kept += 1;
                }
            }
            // The bits the staying members set are exactly the block's bits now.
            let block = &mut self.blocks[b];
            block.clear_filter();
            for m in &members[..kept] {
                for i in 0..K {
                    block.set(m.bit(i), true);
                }
            }
            block.set(l - 2, true);
            self.meta[b].load = kept as u32;
            for m in &movers {
                arena.prefetch(m.prefix, 0);
            }
            for m in movers {
                // The member reached `b` below `l` and no other expansion of `b`
                // lies between, so it now continues from l's block.
                let h = NameHashes::from_encoded(arena.bytes(m.prefix));
                let (to, level) = self.place_from(&h, h.len(), self.block_of(h.prefix(l)), l);
                for i in 0..K {
                    self.blocks[to].set(m.bit(i), true);
                }
                self.add_member(to, m.with_level(level));
                if self.overflows(to) {
                    work.push(to);
                }
            }
        }
    }

    /// Where to expand overflowing block `b`, from its members alone; `None` when
    /// no expansion above the block's existing ones would move any of them.
    fn expansion_length(&self, b: usize) -> Option<usize> {
        let members = self.members(b);
        // Caesar's rule (a build inserting shortest first): expand at the length
        // l where the count of prefixes of at most l components first exceeds
        // t, i.e. the longest l that leaves at most t behind. A live insert may
        // be followed by shorter prefixes, which only an expansion below this
        // one could move — and that needs a rebuild, because the prefixes this
        // one moved live elsewhere — so it expands at the shortest length that
        // moves anything. Either way l lies above the block's existing expansions.
        let map = self.blocks[b].map();
        let lowest = if map == 0 { 2 } else { 63 - map.leading_zeros() as usize + 3 };
        let longest = members.iter().map(|m| m.len()).max().unwrap_or(0).min(MAX_EXPANSION);
        let moved = |l: usize| members.iter().filter(|m| m.moves_at(l)).count();
        let t = self.threshold as usize;
        let l = if self.live {
            (lowest..=longest).find(|&l| moved(l) > 0)
        } else {
            (lowest..=longest).rev().find(|&l| members.len() - moved(l) <= t).or(Some(lowest))
        }?;
        (l <= longest && moved(l) > 0).then_some(l)
    }

    /// Marks whether inserts come live (in any order) or from a shortest-first
    /// rebuild, which may fill blocks up to the threshold. The end of a rebuild
    /// packs the member pool.
    pub fn set_live(&mut self, live: bool) {
        if live && !self.live && self.expand {
            self.compact();
        }
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

    /// Bytes held, member-pool garbage included.
    pub fn heap_bytes(&self) -> usize {
        let pool = self.pool.capacity() * std::mem::size_of::<Member>();
        self.blocks.capacity() * 64 + self.counters.capacity() + self.meta.capacity() * std::mem::size_of::<BlockMeta>() + pool
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

    #[test]
    fn member_packs_bits_length_and_level() {
        let m = Member::new(7, [32, 511], 12, 3);
        assert_eq!((m.prefix, m.bit(0), m.bit(1), m.len(), m.level()), (7, 32, 511, 12, 3));
        let long = Member::new(9, [40, 41], 300, MAX_EXPANSION);
        assert_eq!((long.len(), long.level()), (CLAMP, MAX_EXPANSION), "lengths saturate");
        let moved = long.with_level(5);
        assert_eq!((moved.prefix, moved.bit(0), moved.bit(1), moved.len(), moved.level()), (9, 40, 41, CLAMP, 5));
        assert!(moved.moves_at(6) && !moved.moves_at(5), "moves only above its level");
        assert!(!m.moves_at(13), "nor past its length");
    }

    fn name(components: &[&str]) -> NameHashes {
        let mut value = Vec::new();
        for c in components {
            value.extend_from_slice(&[8, c.len() as u8]);
            value.extend_from_slice(c.as_bytes());
        }
        NameHashes::from_encoded(&value)
    }

    /// The members of every block are exactly the prefixes placed there, and each
    /// block's filter bits are exactly its members' bits.
    fn check_members(p: &Pbf, placed: &[(NameHashes, PrefixRef)]) {
        let mut expect = vec![Vec::new(); p.blocks.len()];
        for (h, r) in placed {
            let (b, level) = p.place(h, h.len());
            expect[b].push(Member::new(*r, p.bits(h, h.len()), h.len(), level));
        }
        for (b, want) in expect.iter_mut().enumerate() {
            let mut got = p.members(b).to_vec();
            got.sort_by_key(|m| m.prefix);
            want.sort_by_key(|m| m.prefix);
            assert_eq!(&got, want, "block {b}");
            assert_eq!(p.meta[b].load as usize, want.len());
            let mut block = p.blocks[b];
            let bits: Vec<usize> = want.iter().flat_map(|m| (0..K).map(move |i| m.bit(i))).collect();
            assert!(bits.iter().all(|&bit| block.get(bit)), "block {b} lacks a member's bit");
            for bit in bits {
                block.set(bit, false);
            }
            assert_eq!(block.0[0], block.map(), "block {b} sets bits no member sets");
            assert_eq!(block.0[1..], [0; 7], "block {b} sets bits no member sets");
        }
    }

    #[test]
    fn expansion_moves_members_and_removal_clears_only_unshared_bits() {
        let mut arena = PrefixArena::default();
        let mut p = Pbf::new(1000, true);
        let mut placed = Vec::new();
        // Everything under one first component: its block must expand, live.
        for i in 0..200 {
            let comps = ["com".to_string(), format!("site{}", i % 40), format!("page{i}")];
            let comps: Vec<&str> = comps.iter().map(String::as_str).collect();
            let h = name(&comps[..2 + i % 2]);
            let mut value = Vec::new();
            for c in &comps[..2 + i % 2] {
                value.extend_from_slice(&[8, c.len() as u8]);
                value.extend_from_slice(c.as_bytes());
            }
            if placed.iter().any(|(q, _): &(NameHashes, PrefixRef)| q.prefix(q.len()) == h.prefix(h.len()) && q.len() == h.len()) {
                continue;
            }
            let r = arena.push(&value);
            p.insert(&h, r, &arena);
            placed.push((h, r));
        }
        assert!(p.expansions > 0);
        check_members(&p, &placed);
        assert!(p.pool.len() > placed.len(), "regions moved as they grew");
        p.compact();
        let caps: usize = p.meta.iter().map(|m| m.cap as usize).sum();
        assert_eq!((p.pool.len(), p.garbage), (caps, 0));
        check_members(&p, &placed);
        for (h, _) in &placed {
            let (b, _) = p.place(h, h.len());
            assert!(p.contains(b, h, h.len()), "no false negative");
        }
        while placed.len() > 50 {
            let (h, r) = placed.swap_remove(placed.len() / 3);
            p.remove(&h, r);
            check_members(&p, &placed);
        }
    }
}
