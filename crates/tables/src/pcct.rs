//! The PIT and the content store in one table, NDN-DPDK's PIT-CS composite table
//! (PCCT): both tables index their names in one index of cache-line buckets, so
//! an Interest costs one walk of that index whether it aggregates into a
//! pending entry, is answered from the cache or creates an entry, and a
//! Data finds the entries it satisfies and the cache slot its name already has in
//! one walk too. Separate indexes cost two walks each way, the PIT's in a table of
//! its own; one walk reads the line both tables need.
//!
//! The two tables keep their entries apart ([`Pit`] and [`Cs`] own their slabs),
//! and the index values say which table an entry is in (`Slot`): the CS's own
//! operations skip the PIT's values, and the PIT's skip the CS's, so each table
//! keeps its invariants whatever the other does.
//!
//! A Data is looked for under each proper prefix of its name, for the
//! CanBePrefix entries it satisfies. Hashing each prefix on its own costs the
//! square of the name's length: a Data of 4,300 empty components (8.6 KB)
//! took 0.36 s in the test build, and one of 32 components of 250 bytes
//! hashed 125 KB (8.5 µs). The tables' hash cannot be extended a component
//! at a time (ahash mixes a slice's length in first and reads it from both
//! ends), so prefixes of up to `LONG_NAME` (32) components and `LONG_BYTES`
//! (256) bytes are hashed on their own, as every name is, and a CanBePrefix
//! entry with a longer name is indexed under a hash fed its components one at
//! a time, which a Data's walk carries along its name in one pass
//! (`Pcct::long_matches`): matching is linear in the name (NFD's name tree
//! bounds it by stopping at 32 levels).

use std::hash::{BuildHasher, Hasher};

use bytes::Bytes;
use trajan_wire::{Data, Interest, Name};

use crate::cs::{Ahead, Cs, CsKey};
use crate::line_index::LineIndex;
use crate::name_key::NameHasher;
use crate::pit::{Pit, PitFull, PitId};

/// What an index value names: a cached packet, an indirect entry, or a pending
/// Interest. One name has at most one CS slot (a packet with exactly that name
/// replaces an indirect entry, since it is what a CanBePrefix Interest for the
/// name would be answered with first) and up to four PIT entries, one per
/// selector combination. (The parents cached packets answer for are kept
/// apart, in [`crate::parents`].)
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Slot {
    /// A cached packet (its index in the CS's slab).
    Direct(u32),
    /// A name a CanBePrefix Interest asked for (an indirect entry's index).
    Indirect(u32),
    /// A pending Interest (its index in the PIT's slab).
    Pending(u32),
}

/// The kind lives in an index value's top two bits, the slab index below them:
/// CS packets are below `crate::cs::MAX_CAPACITY` (2^28), indirect entries below
/// 2^30 (at most four per packet), PIT entries below [`crate::pit::MAX_CAPACITY`].
const KIND_SHIFT: u32 = 30;
const INDEX_MASK: u32 = (1 << KIND_SHIFT) - 1;

/// The most components of a CanBePrefix entry's name indexed under the name's
/// own hash; a longer one is indexed under [`Pcct::long_tag`]. NFD's name tree
/// depth: longer names are rare, and the prefixes a Data hashes one by one
/// are at most this many.
const LONG_NAME: usize = 32;

/// The most bytes (encoded components) of a CanBePrefix entry's name indexed
/// under the name's own hash; a longer one is indexed under
/// [`Pcct::long_tag`]. Bounds what a Data hashes prefix by prefix at about
/// 32 × 256 bytes (one large component and 31 empty ones), one hash of the
/// longest name a packet holds, where 32 components of 250 bytes hashed
/// 125 KB, sixteen times the name. Names of CanBePrefix Interests
/// (certificate, routing and application names) are nearly all shorter; one
/// with a larger component (a sync protocol's state) takes the long-name
/// path, as correct and linear, at a second walk per Interest.
const LONG_BYTES: usize = 256;

/// The encoded length of an implicit digest component (type, length and 32
/// bytes): what a full name adds to its Data's name.
const DIGEST_COMPONENT: usize = 34;

/// Whether a CanBePrefix entry whose name has `components` components of
/// `bytes` encoded bytes is indexed under [`Pcct::long_tag`]: one rule for
/// the entry that stores it and the Data that looks for it.
#[inline(always)]
fn is_long(components: usize, bytes: usize) -> bool {
    components > LONG_NAME || bytes > LONG_BYTES
}

impl Slot {
    /// The index value.
    #[inline]
    pub(crate) fn encode(self) -> u32 {
        let (kind, i) = match self {
            Slot::Direct(i) => (0, i),
            Slot::Indirect(i) => (1, i),
            Slot::Pending(i) => (2, i),
        };
        debug_assert!(i <= INDEX_MASK);
        kind << KIND_SHIFT | i
    }

    /// The slot an index value names.
    #[inline]
    pub(crate) fn decode(v: u32) -> Slot {
        let i = v & INDEX_MASK;
        match v >> KIND_SHIFT {
            0 => Slot::Direct(i),
            1 => Slot::Indirect(i),
            _ => Slot::Pending(i),
        }
    }
}

/// What [`Pcct::probe_interest`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Probe {
    /// A PIT entry with the Interest's key was pending: the Interest aggregates.
    Found(PitId),
    /// None was and the cache answered: the Data's wire encoding.
    Cached(Bytes),
    /// Neither; this PIT entry was created.
    Inserted(PitId),
    /// Neither, and the PIT is at capacity.
    Full,
}

/// Selector combinations a walk accepts: bit `s` for `crate::pit::selectors` value `s`.
pub(crate) type SelectorSet = u8;

/// Every selector combination.
pub(crate) const ANY_SELECTORS: SelectorSet = 0b1111;

/// The selector combinations with CanBePrefix.
#[inline(always)]
fn can_be_prefix() -> SelectorSet {
    1 << crate::pit::selectors(true, false) | 1 << crate::pit::selectors(true, true)
}

/// The selector combinations without MustBeFresh: all that a Data with no
/// FreshnessPeriod (or 0) may satisfy.
#[inline(always)]
fn not_must_be_fresh() -> SelectorSet {
    1 << crate::pit::selectors(false, false) | 1 << crate::pit::selectors(true, false)
}

/// The selector combinations `data` may satisfy: ndn-cxx's
/// `Interest::matchesData`, which NFD's `Pit::findAllDataMatches` applies to
/// every candidate entry, refuses a MustBeFresh Interest a Data whose
/// FreshnessPeriod is absent or 0 (such a Data is stale on arrival). Decided
/// once per Data and applied as the walks' selector mask, so the entries
/// themselves cost nothing more.
#[inline(always)]
fn satisfiable(data: &Data) -> SelectorSet {
    if matches!(data.freshness_ms, None | Some(0)) { not_must_be_fresh() } else { ANY_SELECTORS }
}

/// The tags of a name's prefixes under [`Pcct::long_tags`]: each item is a
/// prefix's end in the name's value and its tag; [`LongTags::tag`] is the tag
/// of what has been fed so far.
struct LongTags<'a> {
    hasher: ahash::AHasher,
    value: &'a [u8],
    start: usize,
    ends: trajan_wire::name::ComponentEnds<'a>,
}

impl LongTags<'_> {
    /// The tag of the components (and any bytes written after them) fed so far.
    fn tag(&self) -> u32 {
        LineIndex::tag(self.hasher.finish())
    }
}

impl Iterator for LongTags<'_> {
    type Item = (usize, u32);

    fn next(&mut self) -> Option<(usize, u32)> {
        let end = self.ends.next()?;
        self.hasher.write(&self.value[self.start..end]);
        self.start = end;
        Some((end, self.tag()))
    }
}

/// The PIT and the CS of one forwarder, sharing one index. The tables are public
/// for what needs no index (a PIT entry's records, the CS's counters and
/// capacity, its standalone lookups); what finds or removes PIT entries by name
/// is here.
pub struct Pcct {
    /// The pending Interests.
    pub pit: Pit,
    /// The cached Data; it holds the shared index.
    pub cs: Cs,
    /// Seeds the hash of long CanBePrefix names ([`is_long`]): keyed, as
    /// the names come from the network.
    long: ahash::RandomState,
    /// Bytes of name [`Pcct::matches`] has hashed, for the test that the
    /// work of matching a Data grows with its name's length, not its square.
    #[cfg(test)]
    hashed: std::cell::Cell<usize>,
}

impl Pcct {
    /// Empty tables: a PIT of at most `pit_capacity` entries (up to
    /// [`crate::pit::MAX_CAPACITY`]) whose timers start at `now_ms`, and a CS of
    /// at most `cs_capacity` packets (0 disables caching).
    pub fn new(pit_capacity: usize, cs_capacity: usize, now_ms: u64) -> Self {
        Pcct::with_hasher(pit_capacity, cs_capacity, now_ms, NameHasher::new())
    }

    /// [`Pcct::new`] hashing names with `names`, the engine's hasher, whose hash of
    /// a name the engine computes once per packet and passes in.
    pub fn with_hasher(pit_capacity: usize, cs_capacity: usize, now_ms: u64, names: NameHasher) -> Self {
        Pcct { pit: Pit::new(pit_capacity, now_ms), cs: Cs::with_hasher(cs_capacity, names), long: ahash::RandomState::new(), #[cfg(test)] hashed: Default::default() }
    }

    /// The index tag of a CanBePrefix entry named `name`, a long one
    /// ([`is_long`]): the hash of its components fed one at a time, which
    /// [`Pcct::long_matches`] has for every prefix of a Data's name in one
    /// pass.
    #[cold]
    #[inline(never)]
    fn long_tag(&self, name: &Name) -> u32 {
        let mut tags = self.long_tags(name);
        (&mut tags).for_each(drop);
        tags.tag()
    }

    /// The running hash behind [`Pcct::long_tag`], fed one component of
    /// `name` at a time: one definition of a long name's tag for the entry
    /// that stores it and the Data that looks for it.
    fn long_tags<'a>(&self, name: &'a Name) -> LongTags<'a> {
        LongTags { hasher: self.long.build_hasher(), value: name.value(), start: 0, ends: name.component_ends() }
    }

    /// Starts loading the index line where the walk for the name hashed `hash`
    /// begins, so the engine can overlap that miss with the rest of a burst.
    #[inline]
    pub fn prefetch(&self, hash: u64) {
        self.cs.index.prefetch(LineIndex::tag(hash));
    }

    /// Starts loading, before the Interest is probed, the lines a CS hit for
    /// the name hashed `hash` reads one after the other (the cached entry, then
    /// its packet and its recency neighbours: see [`Ahead`]), whose misses would
    /// otherwise follow each other in the probe. For an engine whose Interests
    /// hit the cache: each call reads the name's index line, which
    /// [`Pcct::prefetch`] should have loaded earlier, and a miss gains nothing.
    #[inline]
    pub fn prefetch_answer(&self, hash: u64, ahead: Ahead) {
        self.cs.prefetch_answer(LineIndex::tag(hash), ahead);
    }

    /// One walk of the index for the name whose encoded components are `name`
    /// (tagged `tag`): calls `pending` with each PIT entry of that name whose
    /// selectors are in `selectors` until it returns true, and returns the CS's
    /// slot for the name, if it met it before stopping. Always inlined, as the
    /// profile-guided build does: both packets of an exchange walk once.
    #[inline(always)]
    pub(crate) fn walk(&self, tag: u32, name: &[u8], selectors: SelectorSet, mut pending: impl FnMut(u32) -> bool) -> Option<Slot> {
        let mut cached = None;
        self.cs.index.find(tag, |v| match Slot::decode(v) {
            Slot::Pending(i) => self.pit.holds(i, name, selectors) && pending(i),
            slot => {
                if cached.is_none() && self.cs.slot_name(slot) == Some(name) {
                    cached = Some(slot);
                }
                false
            }
        });
        cached
    }

    /// The one probe of an Interest's pipeline: the pending entry with its key
    /// if there is one (it aggregates, as in NFD, even when the cache could
    /// answer); else the cached Data that satisfies it (marked recently used);
    /// else a new PIT entry, with no records, expiring after the Interest's
    /// lifetime, its Nonce and HopLimit recorded but no encoding yet (see
    /// [`crate::PitEntry::set_upstream_at`]). `hash` is the name's, by this table's
    /// [`NameHasher`].
    ///
    /// A new entry **takes the Interest's name**, leaving the root name in its
    /// place (read it back through the entry): the engine's decoded Interest is
    /// dropped after its burst anyway, and a moved name costs no reference count.
    /// Every other outcome leaves the Interest as it was.
    #[inline(always)]
    pub fn probe_interest(&mut self, interest: &mut Interest, hash: u64, now_ms: u64) -> Probe {
        match self.probe(interest, hash, now_ms, true) {
            Ok(found) => found,
            Err(_) if self.pit.is_full() => Probe::Full,
            Err(tag) => {
                let name = std::mem::take(&mut interest.name);
                self.insert_pending(interest, name, tag, now_ms)
            }
        }
    }

    /// The PIT entry for `interest`'s key, created if absent (as by
    /// [`Pcct::probe_interest`], without asking the cache, and with a copy of
    /// the name). The flag is true for a new entry.
    pub fn find_or_insert(&mut self, interest: &Interest, now_ms: u64) -> Result<(PitId, bool), PitFull> {
        match self.probe(interest, self.cs.names.full(&interest.name), now_ms, false) {
            Ok(Probe::Found(id)) => Ok((id, false)),
            Ok(_) => unreachable!("the cache is not asked"),
            Err(tag) => match self.insert_pending(interest, interest.name.clone(), tag, now_ms) {
                Probe::Inserted(id) => Ok((id, true)),
                Probe::Full => Err(PitFull),
                Probe::Found(_) | Probe::Cached(_) => unreachable!("an insert inserts or is full"),
            },
        }
    }

    /// The walk of [`Pcct::probe_interest`]: what answers `interest`, or the tag
    /// under which a new entry goes (`Err`).
    #[inline(always)]
    fn probe(&mut self, interest: &Interest, hash: u64, now_ms: u64, ask_cache: bool) -> Result<Probe, u32> {
        debug_assert_eq!(hash, self.cs.names.full(&interest.name));
        let tag = LineIndex::tag(hash);
        if interest.can_be_prefix && is_long(interest.name.len(), interest.name.value().len()) {
            return self.probe_long(interest, tag, now_ms, ask_cache);
        }
        let (pending, cached) = self.pending_with_key(tag, interest.name.value(), interest.can_be_prefix, interest.must_be_fresh);
        if let Some(i) = pending {
            return Ok(Probe::Found(self.pit.id_at(i)));
        }
        if ask_cache {
            if let Some(wire) = self.cs.answer(interest, tag, cached, now_ms) {
                return Ok(Probe::Cached(wire.clone()));
            }
        }
        Err(tag)
    }

    /// [`Pcct::probe`] of a CanBePrefix Interest with a long name
    /// ([`is_long`], tagged `tag`): its entries are under
    /// [`Pcct::long_tag`], its cached packet under `tag`, so it walks both.
    #[cold]
    #[inline(never)]
    fn probe_long(&mut self, interest: &Interest, tag: u32, now_ms: u64, ask_cache: bool) -> Result<Probe, u32> {
        let key = self.long_tag(&interest.name);
        let (pending, _) = self.pending_with_key(key, interest.name.value(), true, interest.must_be_fresh);
        if let Some(i) = pending {
            return Ok(Probe::Found(self.pit.id_at(i)));
        }
        if ask_cache {
            let cached = self.walk(tag, interest.name.value(), 0, |_| false);
            if let Some(wire) = self.cs.answer(interest, tag, cached, now_ms) {
                return Ok(Probe::Cached(wire.clone()));
            }
        }
        Err(key)
    }

    /// A new entry named `name` for `interest`, indexed under `tag`.
    #[inline(always)]
    fn insert_pending(&mut self, interest: &Interest, name: Name, tag: u32, now_ms: u64) -> Probe {
        match self.pit.insert(interest, name, tag, now_ms) {
            Some((id, idx)) => {
                self.cs.index.insert(tag, Slot::Pending(idx).encode());
                Probe::Inserted(id)
            }
            None => Probe::Full,
        }
    }

    /// Appends to `out` every PIT entry that `data` satisfies: its exact name under
    /// any selectors, each proper prefix of its name with CanBePrefix, and its full
    /// name (with the implicit digest, computed only when some entry asks for a
    /// digest). A MustBeFresh entry is satisfied only by a Data with a
    /// FreshnessPeriod above 0, as in NFD (ndn-cxx's `Interest::matchesData`);
    /// its entry for the same name without MustBeFresh is a different key and
    /// is satisfied either way. `hash` is the Data name's, by this table's [`NameHasher`].
    pub fn matches_for_data(&self, data: &Data, hash: u64, out: &mut Vec<PitId>) {
        self.matches(data, hash, out);
    }

    /// [`Pcct::matches_for_data`], then, when something matched and `cache` is set,
    /// caches `data` (as [`Cs::insert`] does) with the key [`Cs::prefetch_insert`]
    /// gave for its name during this burst, reusing the walk that found the
    /// entries: a Data's name is looked up once for both tables.
    ///
    /// Always inlined: once per packet (see `trajan_wire::Name::from_value`).
    #[inline(always)]
    pub fn satisfy(&mut self, data: &Data, hash: u64, key: CsKey, cache: bool, now_ms: u64, out: &mut Vec<PitId>) {
        let cached = self.matches(data, hash, out);
        if cache && !out.is_empty() {
            self.cs.insert_found(data, key, cached, now_ms);
        }
    }

    /// [`Pcct::matches_for_data`], returning the CS's slot for the Data's name.
    #[inline(always)]
    fn matches(&self, data: &Data, hash: u64, out: &mut Vec<PitId>) -> Option<Slot> {
        debug_assert_eq!(hash, self.cs.names.full(data.name()));
        let mut push = |i| {
            out.push(self.pit.id_at(i));
            false
        };
        let selectors = satisfiable(data);
        let cached = self.walk(LineIndex::tag(hash), data.name().value(), selectors, &mut push);
        if self.pit.prefix_entries > 0 {
            let name = data.name();
            for len in 0..name.len() {
                let prefix = name.prefix_value(len);
                if is_long(len, prefix.len()) {
                    break;
                }
                #[cfg(test)]
                self.hashed.set(self.hashed.get() + prefix.len());
                self.walk(LineIndex::tag(self.cs.names.encoded(prefix)), prefix, can_be_prefix() & selectors, &mut push);
            }
            let bytes = name.value().len();
            if is_long(name.len(), bytes) || self.pit.digest_entries > 0 && is_long(name.len() + 1, bytes + DIGEST_COMPONENT) {
                self.long_matches(data, hash, can_be_prefix() & selectors, &mut push);
            }
        }
        if self.pit.digest_entries > 0 {
            let full = data.full_name();
            self.walk(LineIndex::tag(self.cs.names.full(&full)), full.value(), selectors, &mut push);
        }
        cached
    }

    /// [`Pcct::matches`] for the CanBePrefix entries with long names
    /// ([`is_long`]) that `data` (whose name hashes to `hash`, and whose full
    /// name is long) satisfies: those named by a long prefix of its name, the
    /// name itself or its full name, each under its [`Pcct::long_tag`],
    /// computed for every prefix in one pass. A tag that is the name's own
    /// (or its full name's) was walked for every selector the Data may
    /// satisfy already. `selectors` are the CanBePrefix combinations the
    /// Data may satisfy (see `satisfiable`).
    #[cold]
    #[inline(never)]
    fn long_matches(&self, data: &Data, hash: u64, selectors: SelectorSet, push: &mut impl FnMut(u32) -> bool) {
        let name = data.name();
        let value = name.value();
        let mut tags = self.long_tags(name);
        for (i, (end, tag)) in (&mut tags).enumerate() {
            if is_long(i + 1, end) && (end < value.len() || tag != LineIndex::tag(hash)) {
                self.walk(tag, &value[..end], selectors, &mut *push);
            }
        }
        // The walk fed every component once: the whole value.
        #[cfg(test)]
        self.hashed.set(self.hashed.get() + value.len());
        if self.pit.digest_entries > 0 {
            let full = data.full_name();
            tags.hasher.write(&full.value()[value.len()..]);
            let tag = tags.tag();
            if tag != LineIndex::tag(self.cs.names.full(&full)) {
                self.walk(tag, full.value(), selectors, push);
            }
        }
    }

    /// The pending entry with exactly this key.
    pub fn find(&self, name: &trajan_wire::Name, can_be_prefix: bool, must_be_fresh: bool) -> Option<PitId> {
        let tag = if can_be_prefix && is_long(name.len(), name.value().len()) { self.long_tag(name) } else { LineIndex::tag(self.cs.names.full(name)) };
        let (pending, _) = self.pending_with_key(tag, name.value(), can_be_prefix, must_be_fresh);
        pending.map(|i| self.pit.id_at(i))
    }

    /// The slab index of the pending entry with exactly this key (name tagged
    /// `tag`, selectors), and the CS's slot for the name if the walk met it first.
    #[inline(always)]
    fn pending_with_key(&self, tag: u32, name: &[u8], can_be_prefix: bool, must_be_fresh: bool) -> (Option<u32>, Option<Slot>) {
        let mut pending = None;
        let cached = self.walk(tag, name, 1 << crate::pit::selectors(can_be_prefix, must_be_fresh), |i| {
            pending = Some(i);
            true
        });
        (pending, cached)
    }

    /// Removes a PIT entry (satisfied, Nacked or given up on) and cancels its timer.
    pub fn remove(&mut self, id: PitId) -> Option<crate::PitEntry> {
        let (entry, tag, idx) = self.pit.remove(id)?;
        self.cs.index.remove(tag, Slot::Pending(idx).encode());
        Some(entry)
    }

    /// Removes a PIT entry the caller has finished reading, dropping it in place
    /// rather than moving it out (an entry is several hundred bytes). Returns
    /// whether it existed.
    ///
    /// Always inlined: once per packet (see `trajan_wire::Name::from_value`).
    #[inline(always)]
    pub fn discard(&mut self, id: PitId) -> bool {
        let Some((tag, idx)) = self.pit.discard(id) else { return false };
        self.cs.index.remove(tag, Slot::Pending(idx).encode());
        true
    }

    /// Removes every PIT entry whose expiry is at or before `now_ms`, appending it
    /// to `expired`.
    pub fn expire(&mut self, now_ms: u64, expired: &mut Vec<crate::PitEntry>) {
        let due = self.pit.due(now_ms);
        for &id in &due {
            expired.extend(self.remove(id));
        }
        self.pit.done_with(due);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::name_key::NameKey;
    use crate::test_util::{data, interest, name};
    use proptest::prelude::*;

    /// Tables with `cs` packets of cache, and their hasher.
    fn tables(cs: usize) -> (Pcct, NameHasher) {
        let names = NameHasher::new();
        (Pcct::with_hasher(64, cs, 0, names.clone()), names)
    }

    /// Probes as the engine does, checking the name's hand-over: a new entry
    /// takes it, any other outcome leaves the Interest whole.
    fn probe(t: &mut Pcct, names: &NameHasher, uri: &str, cbp: bool, mbf: bool, now: u64) -> Probe {
        let mut i = interest(&name(uri), cbp, mbf);
        let p = t.probe_interest(&mut i, names.full(&name(uri)), now);
        match &p {
            Probe::Inserted(id) => {
                assert_eq!(i.name, Name::root(), "a new entry takes the name");
                assert_eq!(*t.pit.get(*id).unwrap().name(), name(uri));
            }
            _ => assert_eq!(i, interest(&name(uri), cbp, mbf), "the Interest stays whole"),
        }
        p
    }

    /// Satisfies with `d` as the engine does (keys made at prefetch), dropping
    /// the matched entries; returns how many matched.
    fn satisfy(t: &mut Pcct, names: &NameHasher, d: &Data, cache: bool, now: u64) -> usize {
        let key = t.cs.prefetch_insert(d.name(), &names.key(d.name()));
        let mut out = Vec::new();
        t.satisfy(d, names.full(d.name()), key, cache, now, &mut out);
        for &id in &out {
            assert!(t.discard(id));
        }
        assert_indexed_once(t);
        out.len()
    }

    /// Every entry of either table has one index value, and nothing else has.
    fn assert_indexed_once(t: &Pcct) {
        assert_eq!(t.cs.index.len(), t.pit.len() + t.cs.len() + t.cs.indirect_len());
    }

    #[test]
    fn a_satisfied_interest_is_cached_and_answers_the_next() {
        let (mut t, names) = tables(10);
        let Probe::Inserted(id) = probe(&mut t, &names, "/a/b/c", false, false, 0) else { panic!("a new entry") };
        assert_eq!(probe(&mut t, &names, "/a/b/c", false, false, 0), Probe::Found(id), "the same key aggregates");
        let d = data("/a/b/c", Some(1000), b"x");
        assert_eq!(satisfy(&mut t, &names, &d, true, 0), 1);
        assert!(t.pit.is_empty());
        assert_eq!(t.find(d.name(), false, false), None);
        assert_eq!(probe(&mut t, &names, "/a/b/c", false, true, 10), Probe::Cached(d.wire().clone()));
        assert_eq!(probe(&mut t, &names, "/a/b", true, false, 10), Probe::Cached(d.wire().clone()), "the parent registered with its prefetched tag");
        assert_eq!((t.cs.hits(), t.cs.misses(), t.pit.len()), (2, 1, 0));
    }

    #[test]
    fn unsolicited_and_no_cache_data_are_not_cached() {
        let (mut t, names) = tables(10);
        assert_eq!(satisfy(&mut t, &names, &data("/u", None, b""), true, 0), 0);
        probe(&mut t, &names, "/n", false, false, 0);
        assert_eq!(satisfy(&mut t, &names, &data("/n", None, b""), false, 0), 1);
        assert!(t.cs.is_empty());
        assert!(matches!(probe(&mut t, &names, "/n", false, false, 0), Probe::Inserted(_)));
    }

    /// A Data with no FreshnessPeriod, or 0, satisfies no MustBeFresh entry
    /// (ndn-cxx's `Interest::matchesData`, as NFD's PIT applies it), under its
    /// name, a prefix or its full name; the entries of the same names without
    /// MustBeFresh are satisfied, and a fresh Data satisfies all of them.
    #[test]
    fn a_must_be_fresh_entry_is_satisfied_only_by_fresh_data() {
        for fresh in [None, Some(0), Some(1)] {
            let (mut t, names) = tables(0);
            let d = data("/f/x", fresh, b"v");
            let ids = [false, true].map(|mbf| {
                [("/f/x", false), ("/f", true), (&*d.full_name().to_string(), false)].map(|(uri, cbp)| {
                    let Probe::Inserted(id) = probe(&mut t, &names, uri, cbp, mbf, 0) else { panic!("new") };
                    id
                })
            });
            let [plain, mbf] = &ids;
            let expect = if fresh.is_some_and(|f| f > 0) { [&plain[..], &mbf[..]].concat() } else { plain.to_vec() };
            assert_eq!(matched(&t, &names, &d), sorted(expect.clone()), "FreshnessPeriod {fresh:?}");
            assert_eq!(satisfy(&mut t, &names, &d, false, 0), expect.len());
        }
    }

    #[test]
    fn a_pending_entry_and_a_cached_packet_share_a_name() {
        let (mut t, names) = tables(10);
        probe(&mut t, &names, "/a", false, false, 0);
        let stale = data("/a", None, b"old");
        satisfy(&mut t, &names, &stale, true, 0);
        // Stale Data cannot answer MustBeFresh: an entry is pending beside it.
        let Probe::Inserted(fresh) = probe(&mut t, &names, "/a", false, true, 0) else { panic!("stale Data does not answer") };
        assert_eq!(probe(&mut t, &names, "/a", false, false, 0), Probe::Cached(stale.wire().clone()), "another key is answered");
        assert_eq!(probe(&mut t, &names, "/a", false, true, 0), Probe::Found(fresh));
        let new = data("/a", Some(1000), b"new");
        assert_eq!(satisfy(&mut t, &names, &new, true, 5), 1);
        assert_eq!(t.cs.len(), 1, "the cached packet was replaced in place");
        assert_eq!(probe(&mut t, &names, "/a", false, true, 5), Probe::Cached(new.wire().clone()));
        // A pending entry found before the cache: it aggregates.
        let Probe::Inserted(pending) = probe(&mut t, &names, "/a", true, true, 5000) else { panic!("new key") };
        assert_eq!(probe(&mut t, &names, "/a", true, true, 5000), Probe::Found(pending));
    }

    #[test]
    fn evictions_and_removals_leave_the_other_table_alone() {
        let (mut t, names) = tables(1);
        let Probe::Inserted(x) = probe(&mut t, &names, "/x/1", false, false, 0) else { panic!("new") };
        for uri in ["/x", "/x/2", "/x/3"] {
            probe(&mut t, &names, uri, false, false, 0);
            satisfy(&mut t, &names, &data(uri, Some(1000), b""), true, 0);
        }
        assert_eq!(t.cs.len(), 1, "each packet evicted the one before");
        assert_eq!(t.find(&name("/x/1"), false, false), Some(x));
        assert_eq!(probe(&mut t, &names, "/x/3", false, false, 0), Probe::Cached(data("/x/3", Some(1000), b"").wire().clone()));
        assert!(t.remove(x).is_some());
        assert_eq!(t.cs.len(), 1, "a PIT removal leaves the cache");
        assert!(matches!(probe(&mut t, &names, "/x/3", false, false, 0), Probe::Cached(_)));
    }

    #[test]
    fn names_sharing_one_tag_are_told_apart() {
        // Every entry under one tag, as if all the names' hashes collided: the
        // walk must tell them apart by name and selectors alone.
        const TAG: u32 = 7;
        let (mut t, _) = tables(10);
        let all = NameKey { full: u64::from(TAG) << 32, parent: u64::from(TAG) << 32 };
        let mut pending = Vec::new();
        for n in 0..12 {
            let i = interest(&name(&format!("/c/{n}")), n % 2 == 1, false);
            let (id, idx) = t.pit.insert(&i, i.name.clone(), TAG, 0).expect("room");
            t.cs.index.insert(TAG, Slot::Pending(idx).encode());
            pending.push(id);
        }
        let d = data("/c/3", None, b"");
        t.cs.insert_found(&d, Cs::key(&all), None, 0);
        assert_eq!(t.cs.len(), 1);
        for (n, &id) in pending.iter().enumerate() {
            let uri = format!("/c/{n}");
            let mut seen = Vec::new();
            let cached = t.walk(TAG, name(&uri).value(), ANY_SELECTORS, |i| {
                seen.push(t.pit.id_at(i));
                false
            });
            assert_eq!(seen, [id], "{uri}");
            assert_eq!(cached, (n == 3).then_some(Slot::Direct(0)), "{uri}");
            let other = 1 << crate::pit::selectors(n % 2 == 0, false);
            assert_eq!(t.walk(TAG, name(&uri).value(), other, |_| true), cached, "{uri}: other selectors");
        }
        assert_eq!(t.walk(TAG, name("/c").value(), ANY_SELECTORS, |_| true), None, "the packet's parent is not in the index");
        assert_eq!(t.walk(TAG, name("/c/99").value(), ANY_SELECTORS, |_| true), None);
    }

    /// A name of `n` components (`/c0/c1/…`), for names longer than
    /// [`LONG_NAME`] and around it.
    fn long_uri(n: usize) -> String {
        (0..n).map(|i| format!("/c{i}")).collect()
    }

    fn sorted(mut ids: Vec<PitId>) -> Vec<PitId> {
        ids.sort_by_key(|id| format!("{id:?}"));
        ids
    }

    /// The entries `d` satisfies, sorted (so that one matched twice shows).
    fn matched(t: &Pcct, names: &NameHasher, d: &Data) -> Vec<PitId> {
        let mut out = Vec::new();
        t.matches_for_data(d, names.full(d.name()), &mut out);
        sorted(out)
    }

    /// A Data of about the most (empty) components a packet holds, with a
    /// CanBePrefix entry pending, is matched with work linear in its size,
    /// as every other Data: hashing each of its 4,300 prefixes on its own
    /// hashed 18 MB of name and took 0.36 s per packet in the test build
    /// (NFD bounds its name tree at 32 levels). Counted in bytes hashed, a
    /// few times the name's own.
    #[test]
    fn a_data_of_thousands_of_components_is_matched_in_linear_time() {
        assert_matched_in_linear_time(Name::from_components((0..4300).map(|_| (8u32, &b""[..]))));
    }

    /// So is one of 32 components of 250 bytes (8 KB), whose prefixes,
    /// each hashed on its own, were 125 KB, and one whose first component
    /// takes most of a packet and is followed by 31 empty ones (249 KB):
    /// prefixes of more than [`LONG_BYTES`] are matched as long names are.
    #[test]
    fn a_data_of_large_components_is_matched_in_linear_time() {
        let wide = [b'w'; 250];
        assert_matched_in_linear_time(Name::from_components((0..LONG_NAME).map(|_| (8u32, &wide[..]))));
        let large = [b'l'; 8000];
        assert_matched_in_linear_time(Name::from_components(std::iter::once((8u32, &large[..])).chain((1..LONG_NAME).map(|_| (8u32, &b""[..])))));
    }

    /// Satisfies a Data named `long` with a CanBePrefix entry pending that it
    /// does not match, and checks the bytes of name hashed for it: a few times
    /// the name's own.
    fn assert_matched_in_linear_time(long: Name) {
        let (mut t, names) = tables(10);
        probe(&mut t, &names, "/x", true, false, 0);
        let d = data(&long.to_string(), None, b"");
        let (hash, key) = (names.full(d.name()), t.cs.prefetch_insert(d.name(), &names.key(d.name())));
        let mut out = Vec::new();
        t.satisfy(&d, hash, key, true, 0, &mut out);
        assert!(out.is_empty() && t.pit.len() == 1, "nothing under /x matched");
        let bytes = d.name().value().len();
        assert!(t.hashed.get() <= 2 * bytes, "{} bytes hashed matching a name of {bytes}", t.hashed.get());
    }

    /// A name of `n` components of 100 bytes: longer than [`LONG_BYTES`]
    /// from 3 components on.
    fn wide_uri(n: usize) -> String {
        (0..n).map(|i| format!("/c{i}-{}", "w".repeat(96))).collect()
    }

    /// CanBePrefix entries of more than [`LONG_NAME`] components or
    /// [`LONG_BYTES`], which are indexed apart, aggregate, answer from the
    /// cache, are found and removed, and are satisfied by the Data their
    /// Interests match (ndn-cxx's rule: under the name, the name itself, or
    /// its full name), as shorter ones are.
    #[test]
    fn long_can_be_prefix_entries_are_kept_and_matched_like_short_ones() {
        check_long_entries(long_uri, LONG_NAME + 3);
        check_long_entries(wide_uri, 3);
    }

    /// [`long_can_be_prefix_entries_are_kept_and_matched_like_short_ones`]
    /// with names `uri(n)`, long from `n` components on.
    fn check_long_entries(uri: fn(usize) -> String, n: usize) {
        assert!(is_long(n, name(&uri(n)).value().len()));
        let (mut t, names) = tables(10);
        let exact = data(&uri(n), Some(1000), b"");
        let Probe::Inserted(mbf) = probe(&mut t, &names, &uri(n), true, true, 0) else { panic!("new") };
        let Probe::Inserted(any) = probe(&mut t, &names, &uri(n), true, false, 0) else { panic!("new") };
        let Probe::Inserted(plain) = probe(&mut t, &names, &uri(n), false, false, 0) else { panic!("new") };
        let Probe::Inserted(full) = probe(&mut t, &names, &exact.full_name().to_string(), true, false, 0) else { panic!("new") };
        assert_eq!(probe(&mut t, &names, &uri(n), true, true, 0), Probe::Found(mbf), "aggregates");
        assert_eq!(probe(&mut t, &names, &exact.full_name().to_string(), true, false, 0), Probe::Found(full));
        assert_eq!(t.find(&name(&uri(n)), true, false), Some(any));
        assert_eq!(t.find(&name(&uri(n + 1)), true, false), None);
        assert_indexed_once(&t);

        assert_eq!(matched(&t, &names, &exact), sorted(vec![mbf, any, plain, full]), "the name and its full name");
        for longer in [n + 1, n + 40] {
            assert_eq!(matched(&t, &names, &data(&uri(longer), Some(1), b"")), sorted(vec![mbf, any]), "{longer} components");
            assert_eq!(matched(&t, &names, &data(&uri(longer), None, b"")), [any], "{longer} components, no FreshnessPeriod");
        }
        assert_eq!(matched(&t, &names, &data(&uri(n), Some(1), b"other")), sorted(vec![mbf, any, plain]), "another packet of the name");
        assert_eq!(matched(&t, &names, &data(&uri(n), Some(0), b"other")), sorted(vec![any, plain]), "another packet of the name, stale");
        for other in [uri(n - 1), format!("{}/z", uri(n - 1))] {
            assert_eq!(matched(&t, &names, &data(&other, None, b"")), [], "{other}");
        }

        assert_eq!(satisfy(&mut t, &names, &exact, true, 0), 4);
        assert!(t.pit.is_empty());
        assert_eq!(probe(&mut t, &names, &uri(n), true, true, 10), Probe::Cached(exact.wire().clone()), "the cache answers a long CanBePrefix Interest");
        assert_eq!(probe(&mut t, &names, &uri(n - 1), true, false, 10), Probe::Cached(exact.wire().clone()), "and its parent");
        let Probe::Inserted(id) = probe(&mut t, &names, &uri(n + 5), true, false, 10) else { panic!("new") };
        assert!(t.remove(id).is_some());
        assert_indexed_once(&t);
        assert_eq!(t.find(&name(&uri(n + 5)), true, false), None);
    }

    proptest! {
        /// Around [`LONG_NAME`] components, where CanBePrefix entries are
        /// indexed apart, `matches_for_data` returns exactly the entries whose
        /// Interest matches the Data by ndn-cxx's rule, each once.
        #[test]
        fn matches_around_the_long_name_bound_agree_with_reference(
            data_len in LONG_NAME - 2..LONG_NAME + 3,
            tail in crate::test_util::arb_name(2),
            entries in proptest::collection::vec((LONG_NAME - 3..LONG_NAME + 4, any::<bool>(), any::<bool>(), 0u8..5), 0..30),
            fresh in proptest::option::of(0u64..2),
        ) {
            let data_uri = format!("{}{}", long_uri(data_len), if tail.is_empty() { String::new() } else { tail.to_string() });
            let d = data(&data_uri, fresh, b"");
            check_matches(&d, entries.into_iter().map(|(len, cbp, mbf, kind)| {
                let n = match kind {
                    0 => d.full_name(),
                    1 => d.name().clone(),
                    2 => name(&format!("{}/z", long_uri(len))),
                    _ => name(&long_uri(len)),
                };
                (n, cbp, mbf)
            }))?;
        }

        /// The same around [`LONG_BYTES`]: a few components of up to 120
        /// bytes put the Data's prefixes, its name and its full name on
        /// either side of the bound.
        #[test]
        fn matches_around_the_long_bytes_bound_agree_with_reference(
            sizes in proptest::collection::vec(0usize..120, 1..6),
            entries in proptest::collection::vec((0usize..7, any::<bool>(), any::<bool>(), 0u8..5), 0..30),
            fresh in proptest::option::of(0u64..2),
        ) {
            let fill = [b'w'; 120];
            let d = data(&Name::from_components(sizes.iter().map(|&n| (8u32, &fill[..n]))).to_string(), fresh, b"");
            check_matches(&d, entries.into_iter().map(|(len, cbp, mbf, kind)| {
                let prefix = d.name().prefix(len.min(d.name().len()));
                let n = match kind {
                    0 => d.full_name(),
                    1 => d.name().clone(),
                    2 => prefix.append(8, b"z"),
                    _ => prefix,
                };
                (n, cbp, mbf)
            }))?;
        }
    }

    /// Enters an Interest for each of `entries` (name, CanBePrefix,
    /// MustBeFresh) and checks that `d` matches exactly the entries whose
    /// Interest matches it by ndn-cxx's rule (MustBeFresh included: a Data
    /// without a FreshnessPeriod above 0 matches no MustBeFresh Interest),
    /// each once, and that each entry is found by its key.
    fn check_matches(d: &Data, entries: impl Iterator<Item = (Name, bool, bool)>) -> Result<(), TestCaseError> {
        let (mut t, names) = tables(0);
        let mut live: Vec<(PitId, Interest)> = Vec::new();
        for (n, cbp, mbf) in entries {
            let i = interest(&n, cbp, mbf);
            let (id, new) = t.find_or_insert(&i, 0).unwrap();
            if new {
                live.push((id, i));
            }
        }
        assert_indexed_once(&t);
        let fresh = d.freshness_ms.is_some_and(|f| f > 0);
        let expect = live.iter().filter(|(_, i)| crate::test_util::matches_data(i, d) && (fresh || !i.must_be_fresh)).map(|(id, _)| *id).collect();
        prop_assert_eq!(matched(&t, &names, d), sorted(expect));
        for (id, i) in &live {
            prop_assert_eq!(t.find(&i.name, i.can_be_prefix, i.must_be_fresh), Some(*id));
        }
        Ok(())
    }

    #[derive(Debug, Clone)]
    enum Op {
        Interest(u8, bool),
        Data(u8),
        Expire,
        Capacity(usize),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            (0u8..6, any::<bool>()).prop_map(|(n, mbf)| Op::Interest(n, mbf)),
            (0u8..6).prop_map(Op::Data),
            Just(Op::Expire),
            (1usize..4).prop_map(Op::Capacity),
        ]
    }

    proptest! {
        /// Interests and Data through the shared index give the answers of a
        /// separate PIT and CS (modelled as sets): an existing entry aggregates,
        /// else cached Data answers, else an entry is made; Data satisfies every
        /// entry of its name and is cached when it did. A lower capacity
        /// evicts the least recently used packets, and what is kept, in the
        /// slots the store moved it to, answers as before.
        #[test]
        fn shared_index_agrees_with_separate_tables(ops in proptest::collection::vec(op(), 0..80), mut cs in 1usize..4) {
            let (mut t, names) = tables(cs);
            let mut pending: Vec<(u8, bool)> = Vec::new();
            // Most recently used last.
            let mut cached: Vec<u8> = Vec::new();
            let mut now = 0;
            for op in ops {
                match op {
                    Op::Interest(n, mbf) => {
                        let got = probe(&mut t, &names, &format!("/p/{n}"), false, mbf, now);
                        if pending.contains(&(n, mbf)) {
                            prop_assert!(matches!(got, Probe::Found(_)), "{:?}", got);
                        } else if let Some(at) = cached.iter().position(|&c| c == n) {
                            prop_assert!(matches!(got, Probe::Cached(_)), "{:?}", got);
                            cached.remove(at);
                            cached.push(n);
                        } else {
                            prop_assert!(matches!(got, Probe::Inserted(_)), "{:?}", got);
                            pending.push((n, mbf));
                        }
                    }
                    Op::Data(n) => {
                        let matched = satisfy(&mut t, &names, &data(&format!("/p/{n}"), Some(1 << 40), b""), true, now);
                        let expect = pending.iter().filter(|p| p.0 == n).count();
                        prop_assert_eq!(matched, expect);
                        pending.retain(|p| p.0 != n);
                        if expect > 0 {
                            cached.retain(|&c| c != n);
                            if cached.len() == cs {
                                cached.remove(0);
                            }
                            cached.push(n);
                        }
                    }
                    Op::Capacity(c) => {
                        t.cs.set_capacity(c);
                        cs = c;
                        let over = cached.len().saturating_sub(c);
                        cached.drain(..over);
                    }
                    Op::Expire => {
                        now += 5000;
                        let mut gone = Vec::new();
                        t.expire(now, &mut gone);
                        prop_assert_eq!(gone.len(), pending.len());
                        pending.clear();
                    }
                }
                prop_assert_eq!(t.pit.len(), pending.len());
                prop_assert_eq!(t.cs.len(), cached.len());
                assert_indexed_once(&t);
            }
        }
    }
}
