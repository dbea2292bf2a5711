//! The forwarding information base: per name prefix, the faces an Interest may be
//! sent to and what each costs. The RIB (in the router) derives it; the engine only
//! reads it, through longest-prefix match.
//!
//! The structure is Caesar's two-stage name LPM (`shared/seeds/caesar-paper.txt` §3):
//! a prefix Bloom filter (`pbf`) finds the length of the longest matching prefix
//! with one cache line per name (a few with block expansion), then a cache-line
//! bucket hash table (`table`) confirms it and yields the next hops, ruling out the
//! filter's false positives, so a lookup never returns a prefix the FIB does not
//! hold. Prefix bytes live once, out of line (`arena`); next-hop sets are interned
//! in a side table (`nexthops`). All per-prefix hashes come from one CRC32C pass
//! ([`crate::name_hash`]). [`FibVariant`] selects the first stage, so the variants
//! Caesar compared can run side by side. For forwarding threads that read while a
//! control thread updates, [`FibWriter`] publishes updates atomically to
//! lock-free [`FibReader`]s.

mod arena;
mod nexthops;
mod pbf;
mod shared;
mod table;

use std::borrow::Borrow;
use std::fmt;
use std::str::FromStr;

use bytes::Bytes;
use smallvec::SmallVec;
use trajan_wire::Name;

use crate::name_hash::{NameHashes, INLINE_PREFIXES};
use crate::prefix_walk::PrefixWalk;
use crate::FaceId;
use arena::{PrefixArena, PrefixRef};
use nexthops::{NexthopSets, SetId};
use pbf::Pbf;
use table::{Entry, PrefixTable};

pub use pbf::{expansion_threshold, TARGET_FPR};
pub use shared::{FibReadGuard, FibReader, FibSource, FibWriter};

/// One way out for Interests under a prefix.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct NextHop {
    /// The face to send on.
    pub face: FaceId,
    /// Routing cost; strategies prefer lower.
    pub cost: u64,
}

/// The next hops of one prefix.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct FibEntry {
    /// Sorted by cost, then face, so best-route strategies take the first usable one
    /// and ties break the same way on every run. Inline for up to four, the common case.
    pub nexthops: SmallVec<[NextHop; 4]>,
}

impl FibEntry {
    fn sort(&mut self) {
        self.nexthops.sort_unstable_by_key(|nh| (nh.cost, nh.face));
    }
}

/// Which first stage the LPM uses — Caesar §6.3's variants, kept selectable so they
/// can be measured against each other on the same FIB and names.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum FibVariant {
    /// No filter: probe the hash table from the longest prefix down (Caesar's NoPBF).
    Hash,
    /// Prefix Bloom filter without block expansion.
    Pbf,
    /// Prefix Bloom filter with block expansion, robust to prefixes piling up under
    /// one first component.
    #[default]
    PbfExp,
}

impl FibVariant {
    /// Every variant, for side-by-side runs.
    pub const ALL: [FibVariant; 3] = [FibVariant::Hash, FibVariant::Pbf, FibVariant::PbfExp];

    /// The name used in configuration and benchmark output.
    pub fn as_str(self) -> &'static str {
        match self {
            FibVariant::Hash => "hash",
            FibVariant::Pbf => "pbf",
            FibVariant::PbfExp => "pbf-exp",
        }
    }
}

impl fmt::Display for FibVariant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for FibVariant {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        FibVariant::ALL.into_iter().find(|v| v.as_str() == s).ok_or_else(|| format!("unknown FIB variant {s:?} (expected hash, pbf or pbf-exp)"))
    }
}

/// Hooks the lookup calls as it goes, so one lookup routine serves forwarding (the
/// no-op `()`, compiled away) and measurement ([`LookupStats`]).
pub trait Tally {
    /// A filter block was read.
    fn block(&mut self) {}
    /// The filter answered "maybe" for one prefix length.
    fn positive(&mut self) {}
    /// The filter answered "no" for one prefix length.
    fn negative(&mut self) {}
    /// The hash table ruled out a filter positive.
    fn false_positive(&mut self) {}
    /// The hash table was probed.
    fn probe(&mut self) {}
}

impl Tally for () {}

/// Counts of what lookups did, to report false-positive rates and memory accesses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LookupStats {
    /// Filter blocks read.
    pub blocks: u64,
    /// Filter "maybe" answers.
    pub positives: u64,
    /// Filter "no" answers.
    pub negatives: u64,
    /// "Maybe" answers the hash table ruled out.
    pub false_positives: u64,
    /// Hash-table probes.
    pub probes: u64,
}

impl LookupStats {
    /// Share of filter tests of absent prefixes that answered "maybe": the PBF's
    /// measured false-positive rate (0 when nothing absent was tested).
    pub fn false_positive_rate(&self) -> f64 {
        let absent = self.negatives + self.false_positives;
        if absent == 0 {
            0.0
        } else {
            self.false_positives as f64 / absent as f64
        }
    }
}

impl Tally for LookupStats {
    fn block(&mut self) {
        self.blocks += 1;
    }
    fn positive(&mut self) {
        self.positives += 1;
    }
    fn negative(&mut self) {
        self.negatives += 1;
    }
    fn false_positive(&mut self) {
        self.false_positives += 1;
    }
    fn probe(&mut self) {
        self.probes += 1;
    }
}

/// The prefix a lookup matched, borrowed from the FIB (prefixes are stored as bytes,
/// not as [`Name`]s, to keep a prefix's overhead small).
#[derive(Clone, Copy)]
pub struct FibPrefix<'a> {
    value: &'a [u8],
    components: usize,
}

impl FibPrefix<'_> {
    /// Number of components.
    pub fn len(&self) -> usize {
        self.components
    }

    /// True for the root prefix `/`.
    pub fn is_empty(&self) -> bool {
        self.components == 0
    }

    /// The encoded components (a Name's TLV-VALUE).
    pub fn value(&self) -> &[u8] {
        self.value
    }

    /// An owned copy, for callers that keep the prefix.
    pub fn to_name(&self) -> Name {
        Name::from_value(Bytes::copy_from_slice(self.value)).expect("FIB prefixes are valid names")
    }
}

impl PartialEq<Name> for FibPrefix<'_> {
    fn eq(&self, other: &Name) -> bool {
        self.value == other.value()
    }
}

impl PartialEq<&Name> for FibPrefix<'_> {
    fn eq(&self, other: &&Name) -> bool {
        *self == **other
    }
}

impl fmt::Display for FibPrefix<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.to_name().fmt(f)
    }
}

impl fmt::Debug for FibPrefix<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "FibPrefix({self})")
    }
}

/// Where a FIB's memory goes, in bytes.
#[derive(Clone, Copy, Debug, Default)]
pub struct FibMemory {
    /// Prefixes stored.
    pub prefixes: usize,
    /// Encoded prefix bytes of live prefixes.
    pub name_bytes: usize,
    /// Hash-table buckets.
    pub table: usize,
    /// Prefix arena: records (name bytes, headers, padding) and dead records.
    pub arena: usize,
    /// The Bloom filter read by forwarding.
    pub filter: usize,
    /// Control-plane state of the filter: loads, and per-block member arrays
    /// (with expansion) or a counting mirror (without).
    pub filter_control: usize,
    /// Next-hop sets.
    pub nexthops: usize,
    /// Of `arena`, bytes of removed prefixes awaiting a rebuild.
    pub dead_prefix_bytes: usize,
    /// Hash-table overflow buckets in use (well-sized tables have few).
    pub overflow_buckets: usize,
    /// Distinct next-hop sets.
    pub nexthop_sets: usize,
}

impl FibMemory {
    /// Everything together.
    pub fn total(&self) -> usize {
        self.table + self.arena + self.filter + self.filter_control + self.nexthops
    }

    /// Bytes per prefix beyond the prefix's own encoded bytes.
    pub fn overhead_per_prefix(&self) -> f64 {
        (self.total() - self.name_bytes) as f64 / self.prefixes.max(1) as f64
    }
}

/// The FIB. Entries never hold an empty next-hop list: the last removal drops the
/// entry, so a shorter prefix's routes apply again.
#[derive(Clone)]
pub struct Fib {
    variant: FibVariant,
    arena: PrefixArena,
    table: PrefixTable,
    sets: NexthopSets,
    pbf: Option<Pbf>,
    /// The root prefix `/` matches every name and has no component to hash.
    root: Option<SetId>,
    /// `by_len[u]` counts prefixes of u ≥ 1 components; trimmed so its length bounds
    /// the lengths a lookup tries.
    by_len: Vec<u32>,
    /// Bit u set when `by_len[u]` is non-zero, for u < 64: the lengths a
    /// lookup without the filter probes (see [`Fib::lpm_direct`]).
    lengths: u64,
    name_bytes: usize,
    /// Times the filter was rebuilt (growth, deferred overflows, [`Fib::rebuild`]).
    filter_builds: u64,
}

impl Default for Fib {
    fn default() -> Self {
        Self::new()
    }
}

impl Fib {
    /// An empty FIB of the default variant.
    pub fn new() -> Self {
        Self::with_capacity(FibVariant::default(), 0)
    }

    /// An empty FIB of `variant`, sized for `capacity` prefixes (it grows past them).
    pub fn with_capacity(variant: FibVariant, capacity: usize) -> Self {
        Fib {
            variant,
            arena: PrefixArena::default(),
            table: PrefixTable::with_capacity(capacity),
            sets: NexthopSets::default(),
            pbf: match variant {
                FibVariant::Hash => None,
                FibVariant::Pbf => Some(Pbf::new(capacity, false)),
                FibVariant::PbfExp => Some(Pbf::new(capacity, true)),
            },
            root: None,
            by_len: Vec::new(),
            lengths: 0,
            name_bytes: 0,
            filter_builds: 0,
        }
    }

    /// The lookup variant.
    pub fn variant(&self) -> FibVariant {
        self.variant
    }

    /// Adds `face` as a next hop of `prefix`, or changes its cost if already there.
    pub fn add_nexthop(&mut self, prefix: &Name, face: FaceId, cost: u64) {
        let upsert = |e: &mut FibEntry| {
            match e.nexthops.iter_mut().find(|nh| nh.face == face) {
                Some(nh) => nh.cost = cost,
                None => e.nexthops.push(NextHop { face, cost }),
            }
            e.sort();
        };
        if prefix.is_empty() {
            let mut e = self.root.map(|id| self.sets.get(id).clone()).unwrap_or_default();
            upsert(&mut e);
            self.root = Some(self.replace_set(self.root, e));
            return;
        }
        let h = NameHashes::new(prefix, usize::MAX);
        let key = prefix.value();
        if let Some(pbf) = &self.pbf {
            pbf.prefetch_insert(&h);
        }
        match self.table.locate(h.prefix(h.len()), key, &self.arena) {
            Some(slot) => {
                let old = self.table.entry(slot).set;
                let mut e = self.sets.get(old).clone();
                upsert(&mut e);
                let new = self.replace_set(Some(old), e);
                self.table.set_set(slot, new);
            }
            None => {
                let mut e = FibEntry::default();
                upsert(&mut e);
                let set = self.sets.intern(e);
                self.insert_prefix(&h, key, set);
            }
        }
    }

    /// Makes `prefix`'s next hops exactly `nexthops` (none: the prefix goes): how a
    /// replica is told the result of a route change, so replaying it is idempotent.
    pub fn set_nexthops(&mut self, prefix: &Name, nexthops: &[NextHop]) {
        let stale: SmallVec<[FaceId; 4]> = self
            .get(prefix)
            .map(|e| e.nexthops.iter().map(|nh| nh.face).filter(|f| !nexthops.iter().any(|n| n.face == *f)).collect())
            .unwrap_or_default();
        for f in stale {
            self.remove_nexthop(prefix, f);
        }
        for nh in nexthops {
            self.add_nexthop(prefix, nh.face, nh.cost);
        }
    }

    /// Interns `e` and drops the reference to `old`.
    fn replace_set(&mut self, old: Option<SetId>, e: FibEntry) -> SetId {
        let new = self.sets.intern(e);
        if let Some(old) = old {
            self.sets.release(old);
        }
        new
    }

    fn insert_prefix(&mut self, h: &NameHashes, key: &[u8], set: SetId) {
        let r = self.arena.push(key);
        self.table.insert(Entry { hash: h.prefix(h.len()), set, prefix: r });
        if self.by_len.len() <= h.len() {
            self.by_len.resize(h.len() + 1, 0);
        }
        self.by_len[h.len()] += 1;
        if h.len() < 64 {
            self.lengths |= 1 << h.len();
        }
        self.name_bytes += key.len();
        if let Some(pbf) = &mut self.pbf {
            pbf.insert(h, r, &self.arena);
            if pbf.is_full() || pbf.needs_rebuild() {
                self.rebuild_filter();
            }
        }
    }

    /// Removes `face` from `prefix`'s next hops; returns whether it was there.
    pub fn remove_nexthop(&mut self, prefix: &Name, face: FaceId) -> bool {
        if prefix.is_empty() {
            return self.remove_root_face(face);
        }
        let h = NameHashes::new(prefix, usize::MAX);
        self.remove_face_of(&h, prefix.value(), face)
    }

    fn remove_root_face(&mut self, face: FaceId) -> bool {
        let Some(id) = self.root else { return false };
        let mut e = self.sets.get(id).clone();
        let before = e.nexthops.len();
        e.nexthops.retain(|nh| nh.face != face);
        if e.nexthops.len() == before {
            return false;
        }
        if e.nexthops.is_empty() {
            self.sets.release(id);
            self.root = None;
        } else {
            self.root = Some(self.replace_set(Some(id), e));
        }
        true
    }

    fn remove_face_of(&mut self, h: &NameHashes, key: &[u8], face: FaceId) -> bool {
        let Some(slot) = self.table.locate(h.prefix(h.len()), key, &self.arena) else { return false };
        let old = self.table.entry(slot).set;
        let mut e = self.sets.get(old).clone();
        let before = e.nexthops.len();
        e.nexthops.retain(|nh| nh.face != face);
        if e.nexthops.len() == before {
            return false;
        }
        if e.nexthops.is_empty() {
            let removed = self.table.remove(slot);
            self.sets.release(old);
            if let Some(pbf) = &mut self.pbf {
                pbf.remove(h, removed.prefix);
            }
            self.arena.free(removed.prefix);
            self.by_len[h.len()] -= 1;
            if self.by_len[h.len()] == 0 && h.len() < 64 {
                self.lengths &= !(1 << h.len());
            }
            while self.by_len.last() == Some(&0) {
                self.by_len.pop();
            }
            self.name_bytes -= key.len();
        } else {
            let new = self.replace_set(Some(old), e);
            self.table.set_set(slot, new);
        }
        true
    }

    /// Removes `face` from every entry (the face went away); returns how many
    /// entries routed through it. A control-plane event, so a full pass over the
    /// prefixes is fine when the face has routes; a face without any (a remote
    /// peer's, which anyone can open and close at will) costs a pass over the
    /// few next-hop sets only.
    pub fn remove_face(&mut self, face: FaceId) -> usize {
        if !self.sets.any_through(face) {
            return 0;
        }
        let uses = |sets: &NexthopSets, id: SetId| sets.get(id).nexthops.iter().any(|nh| nh.face == face);
        let victims: Vec<PrefixRef> = self.table.iter().filter(|e| uses(&self.sets, e.set)).map(|e| e.prefix).collect();
        let mut key = Vec::new();
        for &r in &victims {
            key.clear();
            key.extend_from_slice(self.arena.bytes(r));
            let h = NameHashes::from_encoded(&key);
            self.remove_face_of(&h, &key, face);
        }
        victims.len() + usize::from(self.remove_root_face(face))
    }

    /// The entry of exactly `prefix`.
    pub fn get(&self, prefix: &Name) -> Option<&FibEntry> {
        if prefix.is_empty() {
            return self.root.map(|id| self.sets.get(id));
        }
        let h = NameHashes::new(prefix, usize::MAX);
        self.table.find(h.prefix(h.len()), prefix.value(), &self.arena).map(|e| self.sets.get(e.set))
    }

    /// The entry of the longest prefix of `name`, the one its Interests follow.
    #[inline]
    pub fn lpm(&self, name: &Name) -> Option<(FibPrefix<'_>, &FibEntry)> {
        self.lpm_tallied(name, &mut ())
    }

    /// [`Fib::lpm`], reporting what the lookup did to `tally`.
    #[inline]
    pub fn lpm_tallied<T: Tally>(&self, name: &Name, tally: &mut T) -> Option<(FibPrefix<'_>, &FibEntry)> {
        // The filter block depends on the first component alone: start loading
        // it while the rest of the name is hashed.
        let hashes = NameHashes::new_with(name, self.max_prefix_len(), |h| {
            if let Some(pbf) = &self.pbf {
                pbf.prefetch_first(h);
            }
        });
        if let Some(pbf) = &self.pbf {
            pbf.prefetch_chain(&hashes);
        }
        self.lpm_hashed(name, &hashes, tally)
    }

    /// Whether the tables a lookup reads (filter, hash table, prefix bytes) are
    /// small enough to stay in a core's L2 cache while packets are forwarded, so
    /// that prefetching them ahead of a lookup gains nothing.
    #[inline]
    fn cache_resident(&self) -> bool {
        let filter = self.pbf.as_ref().map_or(0, |p| p.heap_bytes());
        filter + self.table.heap_bytes() + self.arena.heap_bytes() <= CACHE_RESIDENT_BYTES
    }

    /// Longest stored prefix length: hashing a name further is wasted work.
    #[inline]
    pub fn max_prefix_len(&self) -> usize {
        self.by_len.len().saturating_sub(1)
    }

    /// [`Fib::lpm`] with the name's hashes already computed (for a caller that
    /// reuses them), which must cover min(name.len(), [`Fib::max_prefix_len`])
    /// components.
    #[inline]
    pub fn lpm_hashed<T: Tally>(&self, name: &Name, hashes: &NameHashes, tally: &mut T) -> Option<(FibPrefix<'_>, &FibEntry)> {
        let d = name.len().min(self.max_prefix_len());
        debug_assert!(hashes.len() >= d);
        self.lpm_upto(name, hashes, d, tally)
    }

    /// [`Fib::lpm_hashed`] for a caller that knows no prefix longer than `d`
    /// components matches (`d` at most the name's length and the longest prefix's).
    ///
    /// Never inlined, as LLVM left it before the branch to [`Fib::lpm_long`]:
    /// with the branch it was inlined into the burst pipeline (whose fallback
    /// it is) and a worst-case exchange at 50 K prefixes took 16 to 45 more
    /// instructions (callgrind); out of line, as many as before.
    #[inline(never)]
    fn lpm_upto<T: Tally>(&self, name: &Name, hashes: &NameHashes, d: usize, tally: &mut T) -> Option<(FibPrefix<'_>, &FibEntry)> {
        if d > INLINE_PREFIXES {
            return self.lpm_long(name, hashes, d, tally);
        }
        self.lpm_probing(hashes, d, tally, |j| {
            #[cfg(test)]
            crate::prefix_walk::walked(j);
            name.prefix_value(j)
        })
    }

    /// [`Fib::lpm_upto`] of a name whose prefixes of more than
    /// [`INLINE_PREFIXES`] components may be probed: where each prefix ends
    /// comes from one walk of the name, not from one walk per probe, as
    /// [`Name::prefix_value`] finds it past the name's offset table. The
    /// filter answers "maybe" for about one length in fifty ([`TARGET_FPR`]),
    /// the `hash` variant probes every stored length, and once one
    /// registration put a prefix of thousands of components in the FIB, the
    /// lookup of a name that long walked it once per probe, quadratic (0.2 ms
    /// for 4,000 empty components, 8 KB). The walk waits for the first probe
    /// past the inline prefixes, and goes as far as that probe (the longest:
    /// probes come longest first), so a lookup that probes only short
    /// prefixes walks nothing. Out of line, with its allocation: such names
    /// are rare.
    #[cold]
    #[inline(never)]
    fn lpm_long<T: Tally>(&self, name: &Name, hashes: &NameHashes, d: usize, tally: &mut T) -> Option<(FibPrefix<'_>, &FibEntry)> {
        let walk = PrefixWalk::new(name, INLINE_PREFIXES);
        self.lpm_probing(hashes, d, tally, |j| walk.prefix(j))
    }

    /// The search of [`Fib::lpm_upto`], probing the `j`-component prefix whose
    /// bytes `key(j)` gives.
    #[inline(always)]
    fn lpm_probing<'n, T: Tally>(&self, hashes: &NameHashes, d: usize, tally: &mut T, key: impl Fn(usize) -> &'n [u8]) -> Option<(FibPrefix<'_>, &FibEntry)> {
        let probe = |j: usize, tally: &mut T| {
            tally.probe();
            self.table.find(hashes.prefix(j), key(j), &self.arena).map(|e| (j, e))
        };
        let hit = if d == 0 {
            None
        } else {
            match &self.pbf {
                None => (1..=d).rev().filter(|&j| self.by_len[j] != 0).find_map(|j| probe(j, tally)),
                Some(pbf) => pbf.search(hashes, d, tally, probe),
            }
        };
        match hit {
            Some((j, e)) => Some(self.answer(j, e)),
            None => self.root_answer(),
        }
    }

    /// The answer when no prefix longer than the root matches.
    #[inline]
    fn root_answer(&self) -> Option<(FibPrefix<'_>, &FibEntry)> {
        self.root.map(|id| (FibPrefix { value: &[], components: 0 }, self.sets.get(id)))
    }

    /// The stored lengths a lookup of `name` without the filter would probe
    /// (those up to the name's own length), when there are at most
    /// [`DIRECT_PROBES`] of them.
    #[inline]
    fn direct_lengths(&self, name: &Name) -> Option<u64> {
        let d = name.len().min(self.max_prefix_len());
        let candidates = self.lengths & (u64::MAX >> (63 - d.min(63)));
        (d < 64 && candidates.count_ones() as usize <= DIRECT_PROBES).then_some(candidates)
    }

    /// [`Fib::lpm_hashed`] by probing the hash table at each of `lengths` (bits
    /// from [`Fib::direct_lengths`]), longest first, without the filter. For a
    /// FIB whose tables sit in cache and that holds few prefix lengths, the
    /// filter's bit tests cost more than the probes they save: in the
    /// worst-case benchmark at 1K prefixes (7 lengths, 3 probed per name) the
    /// engine forwarded 4 % more this way (docs/PERFORMANCE.md). A name
    /// matching nothing pays up to [`DIRECT_PROBES`] probes of cached lines.
    #[inline]
    fn lpm_direct(&self, name: &Name, hashes: &NameHashes, mut lengths: u64) -> Option<(FibPrefix<'_>, &FibEntry)> {
        while lengths != 0 {
            let j = 63 - lengths.leading_zeros() as usize;
            if let Some(e) = self.table.find(hashes.prefix(j), name.prefix_value(j), &self.arena) {
                return Some(self.answer(j, e));
            }
            lengths &= !(1 << j);
        }
        self.root_answer()
    }

    /// A lookup's answer: the `j`-component prefix stored in table entry `e`.
    #[inline(always)]
    fn answer(&self, j: usize, e: table::Entry) -> (FibPrefix<'_>, &FibEntry) {
        (FibPrefix { value: self.arena.bytes(e.prefix), components: j }, self.sets.get(e.set))
    }

    /// Looks up a burst of names, calling `each(i, answer)` for `names[i]` in order,
    /// with the answers [`Fib::lpm`] gives. Lookups are software-pipelined, the
    /// burst processing of the design guide: a lookup is a chain of dependent
    /// cache misses (filter block → bucket → prefix bytes for the PBF variants,
    /// buckets → prefix bytes for `hash`), so the names go through in groups of
    /// [`BURST_STAGE`], step by step — hash each and prefetch its first line(s),
    /// then read those and prefetch the next — and each is looked up once its
    /// lines have had time to arrive. The misses of several names thus overlap
    /// instead of each name waiting for its own. Prefetches are hints: answers
    /// never depend on them. A FIB whose tables fit in cache is looked up name
    /// by name instead, probing its table without the filter where a name has
    /// few stored lengths to try.
    pub fn lpm_burst<N: Borrow<Name>>(&self, names: &[N], mut each: impl FnMut(usize, Option<(FibPrefix<'_>, &FibEntry)>)) {
        if !self.cache_resident() {
            return self.lpm_pipelined(names, each);
        }
        // Every line a lookup reads is already in cache: the pipeline's prefetch
        // steps would be pure overhead, and so would the filter for a name with
        // few lengths to probe.
        let mut hashes = NameHashes::default();
        for (i, name) in names.iter().enumerate() {
            let name = name.borrow();
            hashes.fill(name, self.max_prefix_len());
            each(i, match self.direct_lengths(name) {
                Some(lengths) => self.lpm_direct(name, &hashes, lengths),
                None => self.lpm_hashed(name, &hashes, &mut ()),
            });
        }
    }

    /// [`Fib::lpm_burst`]'s software pipeline, whatever the FIB's size. The names
    /// go through in groups of [`BURST_STAGE`], each group in five passes: hash
    /// every name and prefetch its first line(s), then for every name read those
    /// and prefetch the next, twice more (the third of these only for names
    /// whose bucket chains on), then look every name up. Each pass is a
    /// tight loop doing one step (a ring of names, each at its own step, spent
    /// ≈ 100 instructions per lookup choosing the steps, docs/PERFORMANCE.md).
    pub(crate) fn lpm_pipelined<N: Borrow<Name>>(&self, names: &[N], mut each: impl FnMut(usize, Option<(FibPrefix<'_>, &FibEntry)>)) {
        let mut group: [InFlight; BURST_STAGE] = Default::default();
        for (g, chunk) in names.chunks(BURST_STAGE).enumerate() {
            for (name, f) in chunk.iter().map(|n| n.borrow()).zip(group.iter_mut()) {
                f.hashes.fill(name, self.max_prefix_len());
                (f.candidate, f.first, f.chained) = (0, None, 0);
                self.prefetch_step(name, f, 0);
            }
            for step in 1..=3 {
                for (name, f) in chunk.iter().map(|n| n.borrow()).zip(group.iter_mut()) {
                    self.prefetch_step(name, f, step);
                }
            }
            for (k, (name, f)) in chunk.iter().map(|n| n.borrow()).zip(group.iter()).enumerate() {
                // With a filter, step 1 already tested the lengths above its
                // longest "maybe" (0: none), and the filter cannot change
                // during the burst: the lookup starts there.
                let answer = match (&self.pbf, f.first) {
                    // The entry steps 2 and 3 found is the one the table would:
                    // the first on the probe path with the candidate's hash, when
                    // its bytes are the candidate prefix's. Anything else (a
                    // filter false positive, a hash collision, an entry two
                    // overflow buckets away) takes the whole lookup from the
                    // candidate down.
                    (Some(_), Some(e)) if self.arena.bytes(e.prefix) == name.prefix_value(f.candidate) => Some(self.answer(f.candidate, e)),
                    (Some(_), _) => self.lpm_upto(name, &f.hashes, f.candidate, &mut ()),
                    (None, _) => self.lpm_hashed(name, &f.hashes, &mut ()),
                };
                each(g * BURST_STAGE + k, answer);
            }
        }
    }

    /// Step `step` (0–3) of a pipelined lookup: prefetch the line the lookup reads
    /// after the ones earlier steps prefetched (which have arrived by now).
    /// Always inlined, so that each pass of [`Fib::lpm_pipelined`] is a loop
    /// specialised for its step: as a call (four per name, each choosing its
    /// step again) it cost 121 more instructions per exchange at 1M prefixes.
    #[inline(always)]
    fn prefetch_step(&self, name: &Name, f: &mut InFlight, step: usize) {
        let d = name.len().min(self.max_prefix_len());
        let h = &f.hashes;
        let mut lengths = (1..=d).rev().filter(|&j| self.by_len[j] != 0);
        match (step, &self.pbf) {
            (0, Some(pbf)) if d > 0 => pbf.prefetch(h),
            (0, None) => lengths.for_each(|j| self.table.prefetch(h.prefix(j))),
            // The filter's longest "maybe": the length the table is probed at first.
            (1, Some(pbf)) if d > 0 => {
                if let Some(j) = pbf.search(h, d, &mut (), |j, _| Some(j)) {
                    f.candidate = j;
                    self.table.prefetch(h.prefix(j));
                }
            }
            // The bytes of the first entry whose stored hash matches, which the
            // lookup compares.
            (1, None) => {
                let first = |j: usize| match self.table.scan(self.table.home(h.prefix(j)), h.prefix(j)) {
                    table::Scan::Found(e) => Some((e, j)),
                    _ => None,
                };
                if let Some((e, j)) = lengths.find_map(first) {
                    self.arena.prefetch(e.prefix, name.prefix_value(j).len());
                }
            }
            // With a filter, the candidate's home bucket, then (step 3) the
            // overflow bucket a full one chains to: about one lookup in twelve
            // at 1 M prefixes, which otherwise took two dependent misses in the
            // final lookup.
            (2, Some(_)) if f.candidate != 0 => self.scan_step(name, f, self.table.home(h.prefix(f.candidate))),
            (3, Some(_)) if f.chained != 0 => {
                let b = std::mem::take(&mut f.chained);
                self.scan_step(name, f, b);
            }
            _ => {}
        }
    }

    /// Scans bucket `b` for the candidate's hash: prefetches the bytes of the
    /// entry found there, or the overflow bucket to scan next.
    #[inline]
    fn scan_step(&self, name: &Name, f: &mut InFlight, b: usize) {
        match self.table.scan(b, f.hashes.prefix(f.candidate)) {
            table::Scan::Found(e) => {
                self.arena.prefetch(e.prefix, name.prefix_value(f.candidate).len());
                f.first = Some(e);
            }
            table::Scan::Chained(next) => {
                self.table.prefetch_bucket(next);
                f.chained = next;
            }
            table::Scan::Absent => {}
        }
    }

    /// Every (prefix, entry) pair, in no particular order. Prefixes are copied out,
    /// so this is for management and tests, not forwarding.
    pub fn iter(&self) -> impl Iterator<Item = (Name, &FibEntry)> {
        let root = self.root.map(|id| (Name::root(), self.sets.get(id)));
        root.into_iter().chain(self.table.iter().map(|e| {
            let name = Name::from_value(Bytes::copy_from_slice(self.arena.bytes(e.prefix))).expect("FIB prefixes are valid names");
            (name, self.sets.get(e.set))
        }))
    }

    /// Number of prefixes with routes.
    pub fn len(&self) -> usize {
        self.table.len() + usize::from(self.root.is_some())
    }

    /// True when no prefix has a route.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Rebuilds the FIB from its own contents (Caesar's long-timescale update):
    /// compacts the prefix arena, resizes the hash table and the filter for the
    /// current size, and re-inserts prefixes shortest first so that expansions are
    /// placed as well as for a fresh build. Lookups give the same answers before and
    /// after.
    pub fn rebuild(&mut self) {
        let mut arena = PrefixArena::default();
        let mut table = PrefixTable::with_capacity(self.table.len());
        for e in self.table.iter() {
            let prefix = arena.push(self.arena.bytes(e.prefix));
            table.insert(Entry { prefix, ..e });
        }
        self.arena = arena;
        self.table = table;
        self.rebuild_filter();
    }

    /// Rebuilds the filter alone, sized for the current prefix count.
    fn rebuild_filter(&mut self) {
        // The old filter goes first, so old and new never coexist (at 100 M
        // prefixes each is over a gigabyte).
        let Some(old) = self.pbf.take() else { return };
        let mut pbf = Pbf::new(self.table.len(), old.expand());
        drop(old);
        pbf.set_live(false);
        // Shortest first, by a counting sort on the per-length counts already
        // kept: linear, and four bytes per prefix.
        let mut next: Vec<usize> = self.by_len.iter().scan(0, |start, &count| Some(std::mem::replace(start, *start + count as usize))).collect();
        let mut order: Vec<PrefixRef> = vec![0; self.table.len()];
        for e in self.table.iter() {
            let slot = &mut next[component_count(self.arena.bytes(e.prefix))];
            order[*slot] = e.prefix;
            *slot += 1;
        }
        for r in order {
            let h = NameHashes::from_encoded(self.arena.bytes(r));
            pbf.insert(&h, r, &self.arena);
        }
        pbf.set_live(true);
        self.pbf = Some(pbf);
        self.filter_builds += 1;
    }

    /// Where the memory goes.
    pub fn memory(&self) -> FibMemory {
        let (filter, filter_control) = self.pbf.as_ref().map_or((0, 0), |p| (p.filter_bytes(), p.heap_bytes() - p.filter_bytes()));
        FibMemory {
            prefixes: self.len(),
            name_bytes: self.name_bytes,
            table: self.table.heap_bytes(),
            arena: self.arena.heap_bytes(),
            filter,
            filter_control,
            nexthops: self.sets.heap_bytes(),
            dead_prefix_bytes: self.arena.garbage_bytes(),
            overflow_buckets: self.table.overflow_buckets(),
            nexthop_sets: self.sets.len(),
        }
    }

    /// How the prefix Bloom filter is doing; `None` for the `hash` variant.
    pub fn filter_stats(&self) -> Option<FilterStats> {
        self.pbf.as_ref().map(|p| FilterStats {
            blocks: p.blocks(),
            threshold: p.threshold(),
            expansions: p.expansions,
            deferred: p.stuck,
            builds: self.filter_builds,
            expected_fpr: p.expected_fpr(),
        })
    }
}

/// The most bytes of lookup tables [`Fib::lpm_burst`] treats as cache-resident
/// (half of a current server core's L2, leaving the rest to the PIT and CS lines
/// of the burst): a 1 K-prefix FIB is about 70 KiB.
const CACHE_RESIDENT_BYTES: usize = 256 << 10;

/// The most lengths a cache-resident burst lookup probes without consulting
/// the filter ([`Fib::lpm_direct`]); a name with more goes through the filter.
const DIRECT_PROBES: usize = 4;

/// Names [`Fib::lpm_burst`]'s pipeline takes through its passes together: the
/// work on this many names lies between a line's prefetch and its use, enough
/// for it to arrive (a DRAM access is worth a few lookups' computation), few
/// enough that it is still in L1 when used.
pub const BURST_STAGE: usize = 16;

/// A name in flight through [`Fib::lpm_burst`].
#[derive(Default)]
struct InFlight {
    hashes: NameHashes,
    /// The filter's longest "maybe" length, 0 for none (PBF variants): no
    /// longer prefix matches, so the final lookup starts there.
    candidate: usize,
    /// The first entry on the candidate's probe path with its hash (PBF
    /// variants): what the final lookup compares, without probing again.
    first: Option<table::Entry>,
    /// The overflow bucket step 3 scans for it (prefetched by step 2), when the
    /// home bucket is full and holds no entry with the hash; 0 for none
    /// (bucket 0 is a home bucket, never an overflow one).
    chained: usize,
}

/// Asks the CPU to start loading the cache line of `r`. A hint: no effect on
/// results, and a no-op on targets without a prefetch instruction here. Public
/// for measurements outside the tables (the bench's memory floor) that must
/// prefetch as the FIB does.
#[inline(always)]
pub fn prefetch<T>(r: &T) {
    prefetch_addr(r as *const T as usize);
}

/// [`prefetch`] of a raw address, for lines inside an object that a reference to
/// the object does not point at.
#[inline(always)]
pub(crate) fn prefetch_addr(addr: usize) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is a hint that never faults, whatever the address (it is
    // never dereferenced). SSE (which has it) is part of the x86_64 baseline. The
    // call is safe from Rust 1.87 on, unsafe under the workspace minimum, 1.85.
    #[allow(unused_unsafe)]
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(addr as *const i8);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = addr;
}

/// Components in an encoded name (valid by construction: it came from a [`Name`]).
fn component_count(mut value: &[u8]) -> usize {
    let mut n = 0;
    while !value.is_empty() {
        let mut pos = 0;
        let Ok((_, _, end)) = trajan_wire::tlv::read_header(value, &mut pos) else { break };
        value = &value[end..];
        n += 1;
    }
    n
}

/// How the prefix Bloom filter is doing.
#[derive(Clone, Copy, Debug)]
pub struct FilterStats {
    /// Blocks (cache lines) in the filter.
    pub blocks: usize,
    /// Prefixes per block above which a block expands.
    pub threshold: usize,
    /// Expansions performed since the filter was last built.
    pub expansions: u64,
    /// Overflows that expansion could not relieve at insert (left to a rebuild).
    pub deferred: u64,
    /// Times the filter was rebuilt since the FIB was created.
    pub builds: u64,
    /// Mean of (1 − e^(−k·nᵢ/m))^k over blocks: the rate the paper's formula predicts.
    pub expected_fpr: f64,
}

#[cfg(test)]
mod tests;
