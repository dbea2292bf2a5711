//! The content store: a cache of Data packets, bounded in packets, replacing the
//! least recently used (CCN-par's choice; cheap and close to the best simple policy
//! for Interest traffic).
//!
//! Every lookup is an exact-name hash probe; nothing ordered is kept, because an
//! ordered index of 10^5 names cost more than the rest of an exchange together
//! (each insert and eviction walked a B-tree of long, shared-prefix names). A
//! CanBePrefix Interest is served through **indirect entries**, as NDN-DPDK's CS
//! serves it: a cached packet is recorded as the answer for its [`PREFIX_LEVELS`]
//! longest proper prefixes (the newest packet under a prefix answers it), and the
//! engine adds the name of any CanBePrefix Interest the packet satisfied
//! ([`Cs::insert_indirect`], up to [`MAX_INDIRECT`] entries per packet), so
//! discovery one component above a cached packet, or repeated exactly, is one
//! probe. A CanBePrefix Interest for a prefix further up (or the root) that no
//! earlier Interest asked for misses and goes upstream, which is always a correct
//! answer for a cache; exact names and implicit digests never miss while their
//! Data is cached. The parent every packet registers goes into a lossy table of
//! its own (`parents.rs`: one write per cached packet, nothing per
//! eviction, checked against the packet when asked), the entries Interests add
//! into the index (up to [`MAX_INDIRECT`] per packet, inserted and removed with
//! it, each keeping its own name).
//!
//! Entries keep only the Data's wire encoding, where its name lies in it, the
//! freshness deadline and links; recency is an index-linked list through the
//! entries.

use bytes::Bytes;
use trajan_wire::data::implicit_digest_of;
use trajan_wire::{Data, Interest, Name};

use crate::ilist::{Linked, Links, List, NIL};
use crate::line_index::LineIndex;
use crate::name_key::{NameHasher, NameKey};
use crate::parents::ParentTable;
use crate::pcct::Slot;
use crate::slab::Slab;

/// The most packets a store holds, whatever it is configured with: its index
/// stores 30-bit slab indices for packets and for their (up to [`MAX_INDIRECT`])
/// indirect entries, beside two bits of kind (see [`crate::pcct`]). 268 M packets is far
/// beyond any memory this runs in. Only a bound: a store's memory grows with
/// the packets it holds, never with the capacity it is allowed, so setting
/// this capacity costs nothing until packets come. Callers that take a
/// capacity from a user (the configuration, `cs/config`) refuse one above it
/// rather than let [`Cs::set_capacity`] lower it quietly.
pub const MAX_CAPACITY: usize = 1 << 28;

/// Indirect entries from Interests ([`Cs::insert_indirect`]) one cached packet
/// keeps at most (NDN-DPDK keeps 4 as well). Bounds the index at (1 +
/// [`PREFIX_LEVELS`] + this) × capacity names whatever the traffic.
pub const MAX_INDIRECT: usize = 4;

/// Slots below which an erase never compacts the store: a small store's
/// memory is not worth moving every packet for, and a store erased a few
/// packets at a time would otherwise compact again and again.
const COMPACT_SLOTS: usize = 4096;

/// How many of a packet's longest proper prefixes it answers as soon as it is
/// cached: its parent, so a CanBePrefix Interest one component above an exactly
/// fetched packet is a hit, as in NFD (unless the lossy parent table forgot the
/// registration, see `parents.rs`). Each level costs work per cached
/// packet (as index entries, one level, then an indirect entry of its own, took
/// the CS insert from ≈ 270 to ≈ 430–900 ns, two levels to ≈ 850–930), so
/// deeper discovery relies on [`Cs::insert_indirect`]: a repeated discovery hits.
pub const PREFIX_LEVELS: usize = 1;

// The parent a [`NameKey`] carries is the one level registered.
const _: () = assert!(PREFIX_LEVELS == 1);

/// A cached packet.
struct Direct {
    /// The whole Data element, as received: what is sent to a consumer.
    wire: Bytes,
    /// Where TLV-VALUE of its Name lies in `wire` (offsets, not a second
    /// reference-counted view of the buffer).
    name: std::ops::Range<u32>,
    /// Index tag of `name`, so an eviction does not read the cold packet again.
    tag: u32,
    /// The Data is fresh strictly before this time.
    fresh_until: u64,
    /// Indirect entries that point here, removed with it.
    indirect: [u32; MAX_INDIRECT],
    /// Their index tags, so the eviction ahead can prefetch their index lines.
    indirect_tags: [u32; MAX_INDIRECT],
    links: Links,
}

/// A name a CanBePrefix Interest asked for, answered by a cached packet with a longer name.
struct Indirect {
    /// TLV-VALUE of the Interest name, copied out of the Interest's packet.
    name: Bytes,
    /// The cached packet (slab index in `direct`).
    target: u32,
}

impl Direct {
    /// TLV-VALUE of the packet's Name.
    fn name(&self) -> &[u8] {
        &self.wire[self.name.start as usize..self.name.end as usize]
    }

    /// Whether it answers a CanBePrefix Interest for the non-empty `prefix`
    /// (TLV-VALUE of a Name): the bytes of a whole number of components of
    /// its name, fewer than all of them. A valid name's components end
    /// wherever a shorter valid name's bytes do.
    fn is_under(&self, prefix: &[u8]) -> bool {
        let name = self.name();
        name.len() > prefix.len() && name.starts_with(prefix)
    }

    /// Its indirect entries and their tags. Nearly every packet has none, and one
    /// comparison says so: a loop testing the four ways one by one cost a
    /// mispredicted branch per eviction (callgrind's branch simulation).
    #[inline]
    fn indirect_entries(&self) -> impl Iterator<Item = (&u32, &u32)> {
        let none = self.indirect == [NIL; MAX_INDIRECT];
        let ways = if none { 0 } else { MAX_INDIRECT };
        self.indirect[..ways].iter().zip(&self.indirect_tags).filter(|(&i, _)| i != NIL)
    }
}

impl Linked for Direct {
    fn links(&self) -> &Links {
        &self.links
    }
    fn links_mut(&mut self) -> &mut Links {
        &mut self.links
    }
}

/// The index tags of one Data's name and of the parents it registers in one
/// store: the engine gets them from [`Cs::prefetch_insert`] as it decodes a burst
/// and hands them back to [`crate::Pcct::satisfy`], so each name is hashed once,
/// by the engine's [`NameHasher`] (the store's, see [`Cs::with_hasher`]). A key is
/// valid for the store that made it, within the burst (a capacity change between
/// bursts may clear the store).
#[derive(Clone, Copy, Debug, Default)]
pub struct CsKey {
    name: u32,
    parents: [u32; PREFIX_LEVELS],
}

/// Which of a CS answer's lines a prefetch starts loading, in the order a hit
/// reads them (see [`crate::Pcct::prefetch_answer`]): an engine prefetches a
/// burst's entries first, then, once those have arrived, what they point to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ahead {
    /// The cached packet's entry, found through the index line.
    Entry,
    /// What the entry points to (the packet's name, its recency neighbours).
    Packet,
}

/// The lengths of the proper prefixes a packet with an `n`-component name answers
/// for ([`PREFIX_LEVELS`] of them, longest first, never the root).
fn parent_lengths(n: usize) -> std::iter::Rev<std::ops::Range<usize>> {
    (n.saturating_sub(PREFIX_LEVELS).max(1)..n).rev()
}

/// The content store. One Data per name: a newer packet with the same name replaces
/// the cached one.
pub struct Cs {
    direct: Slab<Direct>,
    indirect: Slab<Indirect>,
    /// Names (by tag) to what holds them; in a [`crate::Pcct`], the PIT's entries too.
    pub(crate) index: LineIndex,
    /// Parent prefixes (by tag) to the packet registered last under each.
    parents: ParentTable,
    /// Most recently used first.
    lru: List,
    /// The engine's name hasher; a [`crate::Pcct`] hashes its PIT's names with it
    /// too, so that one hash of a name serves both tables' shared index.
    pub(crate) names: NameHasher,
    capacity: usize,
    /// NFD's CS_ENABLE_ADMIT: whether new Data may enter ([`Cs::set_admit`]).
    admit: bool,
    /// NFD's CS_ENABLE_SERVE: whether Interests may be answered ([`Cs::set_serve`]).
    serve: bool,
    hits: u64,
    misses: u64,
    /// The packet [`Cs::insert_indirect`] found last (its slab index), taken
    /// again for the next entry of the same Data ([`Cs::cached_as`]).
    indirect_target: u32,
    /// Bytes of name [`Cs::insert_indirect`] has hashed, for the test that a
    /// Data's name is hashed once however many entries it answers.
    #[cfg(test)]
    hashed: usize,
}

impl Cs {
    /// A store holding at most `capacity` packets (up to [`MAX_CAPACITY`]; a
    /// larger one is taken as that); 0 disables caching. Nothing is allocated
    /// for the capacity: the tables grow with the packets cached.
    pub fn new(capacity: usize) -> Self {
        Cs::with_hasher(capacity, NameHasher::new())
    }

    /// [`Cs::new`] hashing names with `names`, the engine's hasher, so that the
    /// keys it computes once per packet ([`NameKey`]) are this store's.
    pub fn with_hasher(capacity: usize, names: NameHasher) -> Self {
        let capacity = capacity.min(MAX_CAPACITY);
        Cs {
            direct: Slab::new(),
            indirect: Slab::new(),
            index: LineIndex::new(),
            parents: ParentTable::new(),
            lru: List::default(),
            names,
            capacity,
            admit: true,
            serve: true,
            hits: 0,
            misses: 0,
            indirect_target: NIL,
            #[cfg(test)]
            hashed: 0,
        }
    }

    /// Lets new Data in (the default) or keeps them out, NFD's `cs/config`
    /// admit flag: an experiment can stop caching without losing what is
    /// cached, which lowering the capacity would evict.
    pub fn set_admit(&mut self, on: bool) {
        self.admit = on;
    }

    /// Whether new Data are cached ([`Cs::set_admit`]).
    pub fn admits(&self) -> bool {
        self.admit
    }

    /// Lets the store answer Interests (the default), or makes every lookup
    /// miss, NFD's `cs/config` serve flag: Interests then go upstream, as
    /// without a cache, while the store keeps (and, admitting, keeps filling)
    /// its packets for when serving resumes.
    pub fn set_serve(&mut self, on: bool) {
        self.serve = on;
    }

    /// Whether the store answers Interests ([`Cs::set_serve`]).
    pub fn serves(&self) -> bool {
        self.serve
    }

    /// Number of cached packets.
    pub fn len(&self) -> usize {
        self.direct.len()
    }

    /// True when nothing is cached.
    pub fn is_empty(&self) -> bool {
        self.direct.len() == 0
    }

    /// Number of indirect entries (names of CanBePrefix Interests a cached
    /// packet answered): at most [`MAX_INDIRECT`] per packet. The parents
    /// packets register are not counted (their table does not know which of
    /// its ways name packets still cached). For the tests of this store and of
    /// [`crate::Pcct`], which check that indirect entries come and go with their packets.
    #[cfg(test)]
    pub fn indirect_len(&self) -> usize {
        self.indirect.len()
    }

    /// The most packets the store holds.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Lookups answered from the store.
    pub fn hits(&self) -> u64 {
        self.hits
    }

    /// Lookups the store could not answer.
    pub fn misses(&self) -> u64 {
        self.misses
    }

    /// The name a CS slot holds; `None` for a PIT entry's (see [`crate::Pcct`]).
    #[inline]
    pub(crate) fn slot_name(&self, slot: Slot) -> Option<&[u8]> {
        match slot {
            Slot::Direct(i) => Some(self.direct.at(i).name()),
            Slot::Indirect(i) => Some(&self.indirect.at(i).name),
            Slot::Pending(_) => None,
        }
    }

    /// Starts loading what answering a name tagged `tag` from the store reads
    /// after its index line (which must have arrived: this reads it), for an
    /// engine that knows which Interests come next. `Ahead::Entry`: the cached
    /// packet's entry. `Ahead::Packet`, once that entry has arrived too: the
    /// packet's name (the hit compares it) and the entries before and after it
    /// in recency order (the hit moves it to the front, writing both). The
    /// first packet with the tag is taken for the name's: a hint, which a tag
    /// shared by two names only wastes.
    #[inline]
    pub(crate) fn prefetch_answer(&self, tag: u32, ahead: Ahead) {
        let direct = self.index.find(tag, |v| matches!(Slot::decode(v), Slot::Direct(_)));
        let Some(Slot::Direct(idx)) = direct.map(Slot::decode) else { return };
        match ahead {
            Ahead::Entry => self.direct.prefetch(idx),
            Ahead::Packet => {
                let d = self.direct.at(idx);
                crate::fib::prefetch_addr(d.wire.as_ptr() as usize + d.name.start as usize);
                for near in [self.lru.prev(&self.direct, idx), self.lru.next(&self.direct, idx)].into_iter().flatten() {
                    self.direct.prefetch(near);
                }
            }
        }
    }

    /// The index tag of `name`'s first `len` components.
    fn tag_of(&self, name: &Name, len: usize) -> u32 {
        LineIndex::tag(self.names.prefix(name, len))
    }

    /// The slot of the name `name` (tagged `tag`). Always inlined, as the
    /// profile-guided build does: every cached packet looks up its name and parent.
    #[inline(always)]
    fn find(&self, tag: u32, name: &[u8]) -> Option<Slot> {
        self.index.find(tag, |v| self.slot_name(Slot::decode(v)) == Some(name)).map(Slot::decode)
    }

    /// The store's key for a Data whose name's [`NameKey`] (from this store's
    /// hasher) is `key`: the name and the parent it registers.
    pub(crate) fn key(key: &NameKey) -> CsKey {
        CsKey { name: LineIndex::tag(key.full), parents: [LineIndex::tag(key.parent)] }
    }

    /// The key of a Data named `name` whose [`NameKey`] (by this store's hasher)
    /// is `key`, for [`crate::Pcct::satisfy`], and starts loading the index lines
    /// that will probe: its name's (where the PIT's entries are found too) and
    /// the parent table's for the [`PREFIX_LEVELS`] parents it registers, so
    /// the engine can overlap those misses with the rest of a burst.
    pub fn prefetch_insert(&self, name: &Name, key: &NameKey) -> CsKey {
        let key = Cs::key(key);
        self.index.prefetch(key.name);
        for &tag in key.parents.iter().take(parent_lengths(name.len()).len()) {
            self.parents.prefetch(tag);
        }
        key
    }

    /// Whether an insertion may add a packet: the store admits and has room
    /// for one.
    #[inline(always)]
    fn admitting(&self) -> bool {
        self.admit && self.capacity > 0
    }

    /// Caches `data`, fresh until `now_ms` plus its FreshnessPeriod (an absent or zero
    /// period makes it stale at once), evicting the least recently used when full.
    /// A store that does not admit ([`Cs::set_admit`]) leaves it out.
    pub fn insert(&mut self, data: &Data, now_ms: u64) {
        if self.admitting() {
            let key = Cs::key(&self.names.key(data.name()));
            let found = self.find(key.name, data.name().value());
            self.insert_found(data, key, found, now_ms);
        }
    }

    /// [`Cs::insert`] with the key [`Cs::prefetch_insert`] gave for `data`'s name
    /// during this burst (so the name is hashed once per packet) and the slot the
    /// index holds for the name (`found`, from a walk since which the index has not
    /// changed), so the name is looked up once too.
    pub(crate) fn insert_found(&mut self, data: &Data, key: CsKey, found: Option<Slot>, now_ms: u64) {
        if !self.admitting() {
            return;
        }
        let fresh_until = now_ms.saturating_add(data.freshness_ms.unwrap_or(0));
        let at = data.name_range();
        let at = at.start as u32..at.end as u32;
        let tag = key.name;
        match found {
            Some(Slot::Direct(idx)) => {
                let d = self.direct.at_mut(idx);
                d.wire = data.wire().clone();
                d.name = at;
                d.fresh_until = fresh_until;
                self.touch(idx);
                self.register_prefixes(idx, data.name(), &key.parents);
                return;
            }
            Some(Slot::Indirect(i)) => self.remove_indirect(i, tag),
            Some(Slot::Pending(_)) | None => {}
        }
        debug_assert!(self.direct.len() <= self.capacity, "set_capacity evicts down to the capacity");
        let entry = |links| Direct {
            wire: data.wire().clone(),
            name: at,
            tag,
            fresh_until,
            indirect: [NIL; MAX_INDIRECT],
            indirect_tags: [0; MAX_INDIRECT],
            links,
        };
        let idx = match self.lru.tail().filter(|_| self.direct.len() == self.capacity) {
            // A full store: the least recently used packet's slot takes the new
            // one in place (out of the index, then overwritten and moved to the
            // front), rather than being freed and taken again from the slab.
            Some(victim) => {
                self.unindex(victim);
                let d = self.direct.at_mut(victim);
                *d = entry(d.links);
                self.lru.rotate_tail(&mut self.direct);
                self.prefetch_victims();
                victim
            }
            None => {
                let idx = self.direct.insert(entry(Links::default())).idx;
                self.lru.push_front(&mut self.direct, idx);
                // The parent table grows with the packets held (see
                // `parents.rs`): a comparison per packet added, none once the
                // store is full (the arm above), a doubling now and then.
                if self.direct.len() > self.parents.room() {
                    self.parents.grow(self.direct.len());
                }
                idx
            }
        };
        self.index.insert(tag, Slot::Direct(idx).encode());
        self.register_prefixes(idx, data.name(), &key.parents);
    }

    /// Makes the packet just cached at `idx` the answer to CanBePrefix Interests for
    /// its [`PREFIX_LEVELS`] longest proper prefixes (not the root): a consumer that
    /// fetched `/obj/v=1/seg=0` lets the next one ask `/obj/v=1` with CanBePrefix
    /// and be answered from here, as NFD's ordered CS would. The newest packet under
    /// a prefix answers it, which also keeps the freshest answer in place for
    /// MustBeFresh. A packet named exactly like the prefix, or an indirect entry
    /// of it, is found first ([`Cs::find_match_slow`]). `parents` holds their
    /// tags, in [`parent_lengths`] order.
    fn register_prefixes(&mut self, idx: u32, name: &Name, parents: &[u32; PREFIX_LEVELS]) {
        // One level (asserted at PREFIX_LEVELS): the parent, when not the root.
        if name.len() > 1 {
            self.parents.register(parents[0], idx);
        }
    }

    /// The cached packet registered as the answer for `prefix` (tagged
    /// `tag`), if the parent table still names one under it.
    fn registered_under(&self, tag: u32, prefix: &[u8]) -> Option<u32> {
        let idx = self.parents.get(tag)?;
        self.direct.get_at(idx).filter(|d| d.is_under(prefix)).map(|_| idx)
    }

    /// A new indirect entry for the name `name` (tagged `tag`, not yet in the
    /// index) answered by `target`, when `target` has room for it.
    fn add_indirect(&mut self, target: u32, name: Bytes, tag: u32) {
        let Some(free) = self.direct.at(target).indirect.iter().position(|&r| r == NIL) else { return };
        let i = self.indirect.insert(Indirect { name, target }).idx;
        let t = self.direct.at_mut(target);
        t.indirect[free] = i;
        t.indirect_tags[free] = tag;
        self.index.insert(tag, Slot::Indirect(i).encode());
    }

    /// Records that a CanBePrefix Interest for `prefix` was answered by the cached
    /// packet named `data_name`, so the next such Interest is answered from here even
    /// when the prefix is more than [`PREFIX_LEVELS`] components above the packet.
    /// Does nothing when the packet is not cached, the prefix already has an entry
    /// or is the parent the packet registered, `prefix` is not a proper prefix of
    /// `data_name`, or the packet already has [`MAX_INDIRECT`] indirect entries.
    pub fn insert_indirect(&mut self, prefix: &Name, data_name: &Name) {
        if !self.admitting() || prefix.len() >= data_name.len() || !prefix.is_prefix_of(data_name) {
            return;
        }
        let Some(target) = self.cached_as(data_name) else { return };
        let tag = self.tag_of(prefix, prefix.len());
        #[cfg(test)]
        {
            self.hashed += prefix.value().len();
        }
        if self.find(tag, prefix.value()).is_none() && self.registered_under(tag, prefix.value()) != Some(target) {
            // A copy: the name of a received Interest is a view of its whole packet.
            self.add_indirect(target, Bytes::copy_from_slice(prefix.value()), tag);
        }
    }

    /// The slab index of the cached packet named `data_name`, for
    /// [`Cs::insert_indirect`]. The engine calls that once per CanBePrefix
    /// entry a Data answered, each time with the Data's name: hashing it
    /// every time made the work the product of the name's length and the
    /// entries' count. So the packet found is remembered, and taken again
    /// while its name is `data_name`'s very bytes: the same memory (a packet
    /// is cached in the buffer its name was decoded from), hence the same
    /// name, whatever was cached or evicted since. A name elsewhere in
    /// memory is looked up.
    fn cached_as(&mut self, data_name: &Name) -> Option<u32> {
        let value = data_name.value();
        if self.direct.get_at(self.indirect_target).is_some_and(|d| std::ptr::eq(d.name(), value)) {
            return Some(self.indirect_target);
        }
        #[cfg(test)]
        {
            self.hashed += value.len();
        }
        let Some(Slot::Direct(target)) = self.find(self.tag_of(data_name, data_name.len()), value) else { return None };
        self.indirect_target = target;
        Some(target)
    }

    /// The cached Data (its wire encoding) that satisfies `interest`, marking it
    /// recently used. Exact name first; then, for a name ending in an implicit
    /// digest, the Data whose full name it is; then, with CanBePrefix, the Data an
    /// indirect entry points at. With MustBeFresh only fresh Data qualify.
    /// A store that does not serve ([`Cs::set_serve`]) answers none.
    pub fn lookup(&mut self, interest: &Interest, now_ms: u64) -> Option<&Bytes> {
        let tag = self.tag_of(&interest.name, interest.name.len());
        let found = self.find(tag, interest.name.value());
        self.answer(interest, tag, found, now_ms)
    }

    /// [`Cs::lookup`] given the index tag of `interest`'s name and the slot the
    /// index holds for it (`found`, from a walk since which the index has not
    /// changed): the Interest's name is hashed and looked up once for the PIT
    /// and the CS ([`crate::Pcct`]), its parent table lookup included.
    ///
    /// Always inlined: once per packet (see `trajan_wire::Name::from_value`).
    #[inline(always)]
    pub(crate) fn answer(&mut self, interest: &Interest, tag: u32, found: Option<Slot>, now_ms: u64) -> Option<&Bytes> {
        match self.find_match(interest, tag, found, now_ms) {
            Some(idx) => {
                self.hits += 1;
                self.touch(idx);
                Some(&self.direct.at(idx).wire)
            }
            None => {
                self.misses += 1;
                None
            }
        }
    }

    /// The packet that satisfies `interest`, given its name's tag and slot (`found`).
    /// A name the index does not hold and that ends in no implicit digest has
    /// none, which is decided inline: it is every Interest the cache misses
    /// (as a call, 41 instructions per exchange, docs/PERFORMANCE.md).
    #[inline(always)]
    fn find_match(&self, interest: &Interest, tag: u32, found: Option<Slot>, now_ms: u64) -> Option<u32> {
        if found.is_none() && !interest.can_be_prefix && interest.name.implicit_digest().is_none() {
            return None;
        }
        self.find_match_slow(interest, tag, found, now_ms)
    }

    /// [`Cs::find_match`] of a name the index holds or one ending in a digest.
    /// A store that does not serve answers nothing: checked here, where only
    /// Interests the store could answer come, so a miss pays nothing for it.
    #[inline(never)]
    fn find_match_slow(&self, interest: &Interest, tag: u32, found: Option<Slot>, now_ms: u64) -> Option<u32> {
        if !self.serve {
            return None;
        }
        let usable = |idx: &u32| !interest.must_be_fresh || now_ms < self.direct.at(*idx).fresh_until;
        let name = &interest.name;
        match found {
            Some(Slot::Direct(idx)) if usable(&idx) => return Some(idx),
            Some(Slot::Indirect(i)) if interest.can_be_prefix => {
                let idx = self.indirect.at(i).target;
                if usable(&idx) {
                    return Some(idx);
                }
            }
            _ => {}
        }
        if interest.can_be_prefix && !name.is_empty() {
            if let Some(idx) = self.registered_under(tag, name.value()).filter(usable) {
                return Some(idx);
            }
        }
        let digest = name.implicit_digest()?;
        let prefix = name.prefix_value(name.len() - 1);
        match self.find(self.tag_of(name, name.len() - 1), prefix) {
            Some(Slot::Direct(idx)) => Some(idx).filter(usable).filter(|&idx| implicit_digest_of(&self.direct.at(idx).wire)[..] == *digest),
            _ => None,
        }
    }

    /// Removes up to `limit` packets under `prefix` (NFD's `cs erase`); returns how
    /// many. A prefix ending in an implicit digest also names, as NFD takes
    /// it, the packet whose full name it is. A management operation: it walks
    /// the recency list, O(capacity). When the packets kept fill less than a
    /// quarter of the slots the store has grown to, it also gives their memory
    /// back, as lowering the capacity does: an operator who erases a full 10M
    /// store expects the router's memory to fall, not to wait for the store to
    /// refill.
    pub fn erase_prefix(&mut self, prefix: &Name, limit: usize) -> usize {
        let start = prefix.value();
        let full = prefix.implicit_digest().map(|digest| (prefix.prefix_value(prefix.len() - 1), digest));
        let mut doomed = Vec::new();
        let mut at = self.lru.head();
        while let Some(idx) = at.filter(|_| doomed.len() < limit) {
            let d = self.direct.at(idx);
            let named = full.is_some_and(|(name, digest)| d.name() == name && implicit_digest_of(&d.wire)[..] == *digest);
            if d.name().starts_with(start) || named {
                doomed.push(idx);
            }
            at = self.lru.next(&self.direct, idx);
        }
        for &idx in &doomed {
            self.evict(idx);
        }
        if self.direct.slots() > COMPACT_SLOTS.max(4 * self.direct.len()) {
            self.compact();
        }
        doomed.len()
    }

    /// Changes the capacity (up to [`MAX_CAPACITY`]; a larger one is taken as
    /// that), evicting least recently used packets down to it. Raising it
    /// allocates nothing (the tables grow as packets come); lowering it below
    /// the packets held also compacts the slabs and the index and rebuilds the
    /// parent table for the packets kept, so that the store's memory follows
    /// them down.
    pub fn set_capacity(&mut self, capacity: usize) {
        self.capacity = capacity.min(MAX_CAPACITY);
        if self.direct.len() > self.capacity {
            while self.direct.len() > self.capacity {
                self.evict_lru();
            }
            self.compact();
        }
    }

    /// Gives back the memory of the packets evicted: the slabs' entries move
    /// down to the lowest indices, and every index held (recency links,
    /// indirect entries' targets and their packets' lists of them, the shared
    /// index's values) follows them. Without it a store lowered from 10M
    /// packets to 1K kept its slots, ≈ 100 bytes a packet, and its index.
    /// The parent table is rebuilt last, sized for the packets kept.
    fn compact(&mut self) {
        let direct = self.direct.compact();
        let indirect = self.indirect.compact();
        for i in 0..self.direct.len() as u32 {
            let d = self.direct.at_mut(i);
            d.links.remap(&direct);
            for r in d.indirect.iter_mut().filter(|r| **r != NIL) {
                *r = indirect[*r as usize];
            }
        }
        for i in 0..self.indirect.len() as u32 {
            let ind = self.indirect.at_mut(i);
            ind.target = direct[ind.target as usize];
        }
        self.lru.remap(&direct);
        self.index.rebuild(|v| match Slot::decode(v) {
            Slot::Direct(i) => Slot::Direct(direct[i as usize]).encode(),
            Slot::Indirect(i) => Slot::Indirect(indirect[i as usize]).encode(),
            Slot::Pending(_) => v,
        });
        self.resize_parents();
    }

    /// A parent table sized for the packets held, holding the parents of the
    /// packets kept, registered oldest first so the newest under a prefix answers it.
    fn resize_parents(&mut self) {
        self.parents = ParentTable::new();
        self.parents.grow(self.direct.len());
        let mut at = self.lru.tail();
        while let Some(idx) = at {
            let d = self.direct.at(idx);
            if let Ok(name) = Name::from_value(d.wire.slice(d.name.start as usize..d.name.end as usize)) {
                let key = Cs::key(&self.names.key(&name));
                self.register_prefixes(idx, &name, &key.parents);
            }
            at = self.lru.prev(&self.direct, idx);
        }
    }

    fn touch(&mut self, idx: u32) {
        self.lru.unlink(&mut self.direct, idx);
        self.lru.push_front(&mut self.direct, idx);
    }

    /// Evicts the least recently used packet, then prefetches what the
    /// evictions after the next one will touch, so that in a full store (every
    /// insert evicts) a victim's entry, its index lines and its indirect entries
    /// arrive during the two exchanges before, instead of stalling its insert one
    /// after another.
    fn evict_lru(&mut self) {
        let Some(idx) = self.lru.tail() else { return };
        self.evict(idx);
        self.prefetch_victims();
    }

    /// After the tail's eviction (or its slot's reuse), prefetches what the
    /// eviction after the next one touches: see [`Cs::evict_lru`].
    fn prefetch_victims(&self) {
        let Some(next) = self.lru.tail() else { return };
        // The unlink just wrote `next` (the new tail), whose lines the eviction
        // before prefetched; the entry before it was prefetched then too.
        let Some(after) = self.lru.prev(&self.direct, next) else { return };
        let d = self.direct.at(after);
        self.index.prefetch(d.tag);
        for (&i, &tag) in d.indirect_entries() {
            self.indirect.prefetch(i);
            self.index.prefetch(tag);
        }
        // Its own unlink will write the entry before it.
        if let Some(prev) = self.lru.prev(&self.direct, after) {
            self.direct.prefetch(prev);
        }
    }

    fn evict(&mut self, idx: u32) {
        self.unindex(idx);
        self.lru.unlink(&mut self.direct, idx);
        self.direct.remove(self.direct.key_at(idx));
    }

    /// Takes packet `idx` out of the index (its name and its indirect entries,
    /// which go), leaving its slot and its place in the LRU order. Its parent's
    /// registration stays, to be found stale when asked for.
    #[inline]
    fn unindex(&mut self, idx: u32) {
        let d = self.direct.at(idx);
        self.index.remove(d.tag, Slot::Direct(idx).encode());
        for (&i, &tag) in d.indirect_entries() {
            self.indirect.remove(self.indirect.key_at(i));
            self.index.remove(tag, Slot::Indirect(i).encode());
        }
    }

    /// Drops an indirect entry (tagged `tag`) whose name a packet of exactly that name now takes.
    fn remove_indirect(&mut self, i: u32, tag: u32) {
        let Some(ind) = self.indirect.remove(self.indirect.key_at(i)) else { return };
        self.index.remove(tag, Slot::Indirect(i).encode());
        if let Some(r) = self.direct.at_mut(ind.target).indirect.iter_mut().find(|r| **r == i) {
            *r = NIL;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_util::{arb_name, data, interest, matches_data, name};
    use proptest::prelude::*;

    fn answer(cs: &mut Cs, n: &Name, cbp: bool, mbf: bool, now: u64) -> Option<Data> {
        cs.lookup(&interest(n, cbp, mbf), now).map(|w| Data::decode(w).expect("cached Data decodes"))
    }

    fn get(cs: &mut Cs, uri: &str, cbp: bool, mbf: bool, now: u64) -> Option<String> {
        answer(cs, &name(uri), cbp, mbf, now).map(|d| d.name().to_string())
    }

    fn content(cs: &mut Cs, uri: &str, now: u64) -> Option<Vec<u8>> {
        answer(cs, &name(uri), false, false, now).map(|d| d.content().to_vec())
    }

    /// Caches `uri` and records it as the answer to CanBePrefix Interests for `prefixes`.
    fn insert(cs: &mut Cs, uri: &str, freshness: Option<u64>, prefixes: &[&str], now: u64) {
        let d = data(uri, freshness, b"");
        cs.insert(&d, now);
        for p in prefixes {
            cs.insert_indirect(&name(p), d.name());
        }
    }

    /// Prefetching an answer reads the index and the entries but changes
    /// nothing, whatever the tag names: a cached packet (first, middle or last
    /// in recency order), an indirect entry, nothing.
    #[test]
    fn prefetching_answers_changes_nothing() {
        let mut cs = Cs::new(3);
        insert(&mut cs, "/p/1", None, &[], 0);
        insert(&mut cs, "/p/2", None, &[], 0);
        insert(&mut cs, "/p/3/x", None, &["/p"], 0);
        for uri in ["/p/1", "/p/2", "/p/3/x", "/p", "/q"] {
            let n = name(uri);
            for ahead in [Ahead::Entry, Ahead::Packet] {
                cs.prefetch_answer(cs.tag_of(&n, n.len()), ahead);
            }
        }
        assert_eq!((cs.len(), cs.indirect_len(), cs.hits(), cs.misses()), (3, 1, 0, 0));
        assert_eq!(get(&mut cs, "/p", true, false, 0).as_deref(), Some("/p/3/x"));
        insert(&mut cs, "/p/4", None, &[], 0);
        assert_eq!(content(&mut cs, "/p/1", 0), None, "the least recently used went first, as before");
    }

    /// Admit off keeps new Data out and what is cached in; serve off makes
    /// every lookup miss, exact and CanBePrefix alike, until it is on again.
    #[test]
    fn admit_and_serve_switch_independently() {
        let mut cs = Cs::new(10);
        assert!(cs.admits() && cs.serves());
        insert(&mut cs, "/kept/a", None, &["/"], 0);
        cs.set_admit(false);
        insert(&mut cs, "/new/b/c", None, &["/new"], 0);
        assert_eq!((cs.len(), cs.indirect_len()), (1, 1), "nothing admitted, not even an indirect entry");
        assert_eq!(get(&mut cs, "/new/b/c", false, false, 0), None);
        assert_eq!(get(&mut cs, "/kept/a", false, false, 0).as_deref(), Some("/kept/a"), "what was cached still answers");
        cs.set_admit(true);
        cs.set_serve(false);
        insert(&mut cs, "/new/b", None, &[], 0);
        assert_eq!(cs.len(), 2, "a store that does not serve still admits");
        for (uri, cbp) in [("/kept/a", false), ("/new/b", false), ("/kept", true), ("/", true)] {
            assert_eq!(get(&mut cs, uri, cbp, false, 0), None, "{uri} is not served");
        }
        assert_eq!((cs.hits(), cs.misses()), (1, 5), "lookups that were not served count as misses");
        cs.set_serve(true);
        assert_eq!(get(&mut cs, "/new/b", false, false, 0).as_deref(), Some("/new/b"));
        assert_eq!(get(&mut cs, "/kept", true, false, 0).as_deref(), Some("/kept/a"));
        assert_eq!(get(&mut cs, "/", true, false, 0).as_deref(), Some("/kept/a"), "the indirect entry kept too");
    }

    #[test]
    fn exact_versus_can_be_prefix() {
        let mut cs = Cs::new(10);
        insert(&mut cs, "/a/b/c", None, &["/"], 0);
        assert_eq!(get(&mut cs, "/a/b/c", false, false, 0).as_deref(), Some("/a/b/c"));
        assert_eq!(get(&mut cs, "/a/b", false, false, 0), None, "a prefix needs CanBePrefix");
        assert_eq!(get(&mut cs, "/a/b", true, false, 0).as_deref(), Some("/a/b/c"), "the parent, at once");
        assert_eq!(get(&mut cs, "/a", true, false, 0), None, "two components up, and no Interest asked for it");
        assert_eq!(get(&mut cs, "/", true, false, 0).as_deref(), Some("/a/b/c"), "the root once an Interest asked for it");
        assert_eq!(get(&mut cs, "/a/b/c", true, false, 0).as_deref(), Some("/a/b/c"), "a name is its own prefix");
        assert_eq!(get(&mut cs, "/a/b/c/d", true, false, 0), None);
        assert_eq!(get(&mut cs, "/a/bb", true, false, 0), None);
        assert_eq!(get(&mut cs, "/a/9=b", true, false, 0), None, "component type matters");
        assert_eq!((cs.hits(), cs.misses()), (4, 5));
        assert_eq!(cs.indirect_len(), 1, "the root's; the parent is in its own table");
        insert(&mut cs, "/a/b/x", None, &[], 0);
        assert_eq!(get(&mut cs, "/a/b", true, false, 0).as_deref(), Some("/a/b/x"), "the newest packet under a prefix answers it");
    }

    #[test]
    fn indirect_entries_are_bounded_and_checked() {
        let mut cs = Cs::new(10);
        let d = data("/a/b/c/d/e/f", None, b"");
        cs.insert(&d, 0);
        assert_eq!(cs.indirect_len(), 0, "the parent is in its own table");
        assert_eq!(get(&mut cs, "/a/b/c/d/e", true, false, 0).as_deref(), Some("/a/b/c/d/e/f"));
        assert_eq!(get(&mut cs, "/a/b/c/d", true, false, 0), None, "two components up");
        for p in ["/a/bb", "/a/b/c/d/e/f", "/a/b/c/d/e/f/g", "/a/b/c/d/e"] {
            cs.insert_indirect(&name(p), d.name());
        }
        cs.insert_indirect(&name("/a"), &name("/x/y"));
        assert_eq!(cs.indirect_len(), 0, "only proper prefixes of cached Data the packet does not answer already");
        for p in ["/", "/a", "/a/b", "/a/b/c", "/a/b/c/d"] {
            cs.insert_indirect(&name(p), d.name());
        }
        assert_eq!(cs.indirect_len(), MAX_INDIRECT, "no more than the packet's bound");
        assert_eq!(get(&mut cs, "/a", true, false, 0).as_deref(), Some("/a/b/c/d/e/f"));
        assert_eq!(get(&mut cs, "/a/b/c/d", true, false, 0), None, "past the bound");
    }

    /// A Data answering several CanBePrefix entries has its name hashed once
    /// for them, not once per entry (which made the work the product of the
    /// name's length and the entries' count); a name that is not the cached
    /// packet's own bytes is looked up, and one no longer cached is not found.
    #[test]
    fn a_data_answering_several_prefixes_is_hashed_once() {
        let mut cs = Cs::new(1);
        let uri = format!("/a/b/c/d/{}", "x".repeat(1000));
        let d = data(&uri, None, b"");
        cs.insert(&d, 0);
        // Not /a/b/c/d: the parent the packet registered.
        let prefixes = ["/", "/a", "/a/b", "/a/b/c"];
        for p in prefixes {
            cs.insert_indirect(&name(p), d.name());
        }
        assert_eq!(cs.indirect_len(), MAX_INDIRECT);
        let prefix_bytes: usize = prefixes.iter().map(|p| name(p).value().len()).sum();
        assert_eq!(cs.hashed, d.name().value().len() + prefix_bytes, "the Data's name once, each prefix once");

        cs.insert(&data("/q/r", None, b""), 0);
        assert_eq!((cs.len(), cs.indirect_len()), (1, 0), "/q/r took the packet's slot");
        cs.insert_indirect(&name("/a"), d.name());
        assert_eq!(cs.indirect_len(), 0, "{uri} is no longer cached");
        cs.insert_indirect(&name("/"), &name("/q/r"));
        assert_eq!(cs.indirect_len(), 1, "/q/r found by a name of its own bytes");
        assert_eq!(get(&mut cs, "/", true, false, 0).as_deref(), Some("/q/r"));
    }

    /// An indirect entry keeps a copy of its name, not a view of the
    /// Interest it came in: the engine's PIT entries name their Interests
    /// within the whole packet (up to 8,800 bytes), which up to
    /// [`MAX_INDIRECT`] entries per cached packet would otherwise keep.
    #[test]
    fn an_indirect_entry_keeps_its_name_not_the_interest_packet() {
        let mut cs = Cs::new(10);
        let d = data("/p/v1/s0", None, b"");
        cs.insert(&d, 0);
        let mut packet = vec![0; 8000];
        packet.extend_from_slice(name("/p").value());
        let packet = Bytes::from(packet);
        let view = Name::from_within(packet.clone(), 8000..packet.len()).expect("a name");
        cs.insert_indirect(&view, d.name());
        drop(view);
        assert_eq!(cs.indirect_len(), 1);
        assert!(packet.is_unique(), "the store keeps no view of the packet");
        assert_eq!(get(&mut cs, "/p", true, false, 0).as_deref(), Some("/p/v1/s0"));
    }

    #[test]
    fn a_packet_of_the_exact_name_replaces_an_indirect_entry() {
        let mut cs = Cs::new(10);
        insert(&mut cs, "/p/v1/s0", None, &["/p"], 0);
        assert_eq!(cs.indirect_len(), 1);
        insert(&mut cs, "/p", None, &[], 0);
        assert_eq!(cs.indirect_len(), 0);
        assert_eq!(get(&mut cs, "/p", true, false, 0).as_deref(), Some("/p"), "the shorter name comes first in canonical order");
        insert(&mut cs, "/p/v2", None, &["/p"], 0);
        assert_eq!(cs.indirect_len(), 0, "the exact packet keeps the name");
        assert_eq!(get(&mut cs, "/p", true, false, 0).as_deref(), Some("/p"), "before the parent /p/v2 registered");
        cs.erase_prefix(&name("/p/v1"), 1);
        assert_eq!(get(&mut cs, "/p", true, false, 0).as_deref(), Some("/p"));
    }

    #[test]
    fn a_parent_is_answered_by_a_packet_under_it_only() {
        let mut cs = Cs::new(2);
        insert(&mut cs, "/a/1", None, &[], 0);
        insert(&mut cs, "/b/1", None, &[], 0);
        insert(&mut cs, "/a/2", None, &[], 0); // evicts /a/1, its slot taken by /a/2
        assert_eq!(get(&mut cs, "/a", true, false, 0).as_deref(), Some("/a/2"));
        insert(&mut cs, "/c/1", None, &[], 0); // evicts /b/1, its slot taken by /c/1
        assert_eq!(get(&mut cs, "/b", true, false, 0), None, "the slot /b's registration names holds /c/1");
        assert_eq!(get(&mut cs, "/a/2", true, false, 0).as_deref(), Some("/a/2"), "an exact name first");
        cs.erase_prefix(&name("/a"), usize::MAX);
        assert_eq!(get(&mut cs, "/a", true, false, 0), None, "a vacant slot answers nothing");
        assert_eq!(get(&mut cs, "/c", true, false, 0).as_deref(), Some("/c/1"));
    }

    #[test]
    fn a_full_store_under_churn_answers_nearly_every_parent() {
        const CAPACITY: usize = 2000;
        let mut cs = Cs::new(CAPACITY);
        for i in 0..5 * CAPACITY {
            cs.insert(&data(&format!("/p{i}/x"), None, b""), 0);
        }
        let answered = (4 * CAPACITY..5 * CAPACITY).filter(|i| get(&mut cs, &format!("/p{i}"), true, false, 0).is_some()).count();
        // About 0.1 % are expected lost (crate::parents); 1 % would be a defect.
        assert!(answered >= CAPACITY * 99 / 100, "{answered} of {CAPACITY} parents answered");
    }

    #[test]
    fn a_capacity_change_keeps_the_parents_of_the_packets_kept() {
        let mut cs = Cs::new(4);
        for uri in ["/p/1", "/q/1", "/p/2", "/r/1"] {
            insert(&mut cs, uri, None, &[], 0);
        }
        cs.set_capacity(3); // evicts /p/1
        assert_eq!(get(&mut cs, "/p", true, false, 0).as_deref(), Some("/p/2"), "the newest under /p");
        cs.set_capacity(1000);
        for (prefix, under) in [("/p", "/p/2"), ("/q", "/q/1"), ("/r", "/r/1")] {
            assert_eq!(get(&mut cs, prefix, true, false, 0).as_deref(), Some(under), "{prefix} after growing");
        }
    }

    #[test]
    fn a_stale_indirect_answer_gives_way_to_a_fresh_parent() {
        let mut cs = Cs::new(10);
        insert(&mut cs, "/p/1", Some(10), &[], 0);
        insert(&mut cs, "/p/1/x", Some(10), &["/p"], 0); // an indirect entry for /p
        insert(&mut cs, "/p/2", Some(1000), &[], 0); // the parent /p registers it
        assert_eq!(cs.indirect_len(), 1);
        assert_eq!(get(&mut cs, "/p", true, false, 20).as_deref(), Some("/p/1/x"), "the indirect entry first");
        assert_eq!(get(&mut cs, "/p", true, true, 20).as_deref(), Some("/p/2"), "then, with MustBeFresh, the fresh parent");
    }

    #[test]
    fn must_be_fresh_honours_freshness_period() {
        let mut cs = Cs::new(10);
        insert(&mut cs, "/absent", None, &[], 100);
        insert(&mut cs, "/zero", Some(0), &[], 100);
        insert(&mut cs, "/ten", Some(10), &[], 100);
        for uri in ["/absent", "/zero"] {
            assert_eq!(get(&mut cs, uri, false, true, 100), None, "{uri} is stale at once");
            assert!(get(&mut cs, uri, false, false, 100).is_some(), "{uri} still serves Interests without MustBeFresh");
        }
        assert!(get(&mut cs, "/ten", false, true, 109).is_some());
        assert_eq!(get(&mut cs, "/ten", false, true, 110), None, "expired");
        assert!(get(&mut cs, "/ten", false, false, 110).is_some());
        insert(&mut cs, "/ten", Some(10), &[], 200);
        assert!(get(&mut cs, "/ten", false, true, 205).is_some(), "a newer copy refreshes it");
    }

    #[test]
    fn can_be_prefix_with_must_be_fresh_skips_stale_data() {
        let mut cs = Cs::new(10);
        insert(&mut cs, "/p/1", None, &["/p"], 0);
        insert(&mut cs, "/q/1", Some(1000), &["/q"], 0);
        assert_eq!(get(&mut cs, "/p", true, true, 10), None, "stale");
        assert_eq!(get(&mut cs, "/p", true, false, 10).as_deref(), Some("/p/1"));
        assert_eq!(get(&mut cs, "/q", true, true, 10).as_deref(), Some("/q/1"));
        assert_eq!(get(&mut cs, "/q", true, true, 1000), None);
    }

    #[test]
    fn implicit_digest_matches_the_full_name_only() {
        let mut cs = Cs::new(10);
        let d = data("/a/b", Some(1000), b"one");
        let full = d.full_name();
        let wrong = data("/a/b", Some(1000), b"two").full_name();
        cs.insert(&d, 0);
        let hit = |cs: &mut Cs, n: &Name, cbp, mbf, now| answer(cs, n, cbp, mbf, now).map(|d| d.content().to_vec());
        assert_eq!(hit(&mut cs, &full, false, false, 0), Some(b"one".to_vec()));
        assert_eq!(hit(&mut cs, &full, true, false, 0), Some(b"one".to_vec()));
        assert_eq!(hit(&mut cs, &wrong, false, false, 0), None);
        assert_eq!(hit(&mut cs, &wrong, true, false, 0), None);
        assert_eq!(hit(&mut cs, &full, false, true, 1000), None, "MustBeFresh applies to digest matches too");
        // Data whose own name ends in a digest component is found by that name.
        cs.insert(&data(&wrong.to_string(), None, b"lit"), 0);
        assert_eq!(hit(&mut cs, &wrong, false, false, 0), Some(b"lit".to_vec()));
    }

    #[test]
    fn same_name_replaces() {
        let mut cs = Cs::new(10);
        insert(&mut cs, "/a", None, &[], 0);
        cs.insert(&data("/a", None, b"new"), 0);
        assert_eq!(cs.len(), 1);
        assert_eq!(content(&mut cs, "/a", 0), Some(b"new".to_vec()));
    }

    #[test]
    fn evicts_least_recently_used() {
        let mut cs = Cs::new(3);
        for uri in ["/a", "/b", "/c/1/x"] {
            insert(&mut cs, uri, None, &["/c"], 0);
        }
        assert_eq!(cs.indirect_len(), 1);
        assert!(content(&mut cs, "/a", 0).is_some()); // order now a, c, b
        cs.insert(&data("/b", None, b"again"), 0); // b, a, c
        insert(&mut cs, "/d", None, &[], 0); // evicts c
        assert_eq!(cs.len(), 3);
        assert_eq!(content(&mut cs, "/c/1/x", 0), None);
        assert!(["/a", "/b", "/d"].iter().all(|u| content(&mut cs, u, 0).is_some()));
        assert_eq!(get(&mut cs, "/c", true, false, 0), None, "its indirect entry went with it");
        assert_eq!(get(&mut cs, "/c/1", true, false, 0), None, "its parent names a slot /d took");
        assert_eq!(cs.indirect_len(), 0);
        cs.set_capacity(1); // order d, b, a: keeps d
        assert_eq!(cs.len(), 1);
        assert!(content(&mut cs, "/d", 0).is_some());
        assert_eq!(content(&mut cs, "/b", 0), None);
        assert_eq!(cs.capacity(), 1);
    }

    #[test]
    fn capacity_is_bounded_by_the_index() {
        assert_eq!(Cs::new(usize::MAX).capacity(), MAX_CAPACITY);
        let mut cs = Cs::new(1);
        cs.set_capacity(usize::MAX);
        assert_eq!(cs.capacity(), MAX_CAPACITY);
    }

    /// The capacity is a bound, not an allocation: a store allowed the most
    /// packets, from the start or raised to it, holds no parent table until
    /// packets come, then one line for its first (a table built for the
    /// capacity took 8 GiB, and aborted the router where that failed).
    #[test]
    fn the_largest_capacity_allocates_nothing_until_packets_come() {
        let raised = || {
            let mut cs = Cs::new(10);
            cs.set_capacity(MAX_CAPACITY);
            cs
        };
        let makers: [fn() -> Cs; 3] = [|| Cs::new(MAX_CAPACITY), || Cs::new(usize::MAX), raised];
        for make in makers {
            let mut cs = make();
            assert_eq!((cs.capacity(), cs.parents.heap_bytes()), (MAX_CAPACITY, 0));
            insert(&mut cs, "/a/1", None, &[], 0);
            assert_eq!(cs.parents.heap_bytes(), 64, "one bucket for one packet");
            cs.set_capacity(MAX_CAPACITY);
            cs.set_capacity(MAX_CAPACITY / 2);
            assert_eq!(cs.parents.heap_bytes(), 64, "a capacity above the packets held changes nothing");
            assert_eq!(get(&mut cs, "/a", true, false, 0).as_deref(), Some("/a/1"));
        }
    }

    /// The parent table doubles as packets come; each doubling re-homes every
    /// registration, so a parent answered before a growth is answered by the
    /// same packet after it, and every cached packet is found by its name and
    /// (its registration being the newest under its parent) through its parent.
    #[test]
    fn filling_past_each_growth_keeps_every_packet_and_parent() {
        // Eight parents: no bucket of the table (eight ways) can overflow, so
        // nothing may be forgotten.
        const PARENTS: usize = 8;
        const PACKETS: usize = 3000;
        let mut cs = Cs::new(MAX_CAPACITY);
        let parents = |cs: &mut Cs| (0..PARENTS).map(|p| get(cs, &format!("/p{p}"), true, false, 0)).collect::<Vec<_>>();
        let mut growths = 0;
        for i in 0..PACKETS {
            let (room, before) = (cs.parents.room(), parents(&mut cs));
            insert(&mut cs, &format!("/p{}/x{i}", i % PARENTS), None, &[], 0);
            let newest = |p: usize| (p <= i).then(|| format!("/p{p}/x{}", i - (i - p) % PARENTS));
            let now = parents(&mut cs);
            assert_eq!(now, (0..PARENTS).map(newest).collect::<Vec<_>>(), "after /x{i}");
            if cs.parents.room() != room {
                growths += 1;
                assert_eq!(cs.parents.room(), 2 * room.max(1), "a doubling, at packet {}", i + 1);
                let moved = (0..PARENTS).filter(|&p| p != i % PARENTS && before[p].is_some());
                assert!(moved.clone().all(|p| now[p] == before[p]), "growth at packet {} kept every parent", i + 1);
                assert!((0..=i).all(|j| get(&mut cs, &format!("/p{}/x{j}", j % PARENTS), false, false, 0).is_some()), "every packet, growth at {}", i + 1);
            }
        }
        assert_eq!(growths, 12, "1, 2, 4, … 2048 buckets for 3000 packets");
        assert_eq!(cs.parents.heap_bytes(), 2048 * 64, "four ways per packet, rounded up to a power of two");
        assert_eq!(cs.len(), PACKETS);

        // One parent per packet: the table's own losses (about 0.1 % at most,
        // see `parents.rs`), none from growing.
        let mut cs = Cs::new(MAX_CAPACITY);
        for i in 0..PACKETS {
            insert(&mut cs, &format!("/q{i}/x"), None, &[], 0);
        }
        let answered = (0..PACKETS).filter(|i| get(&mut cs, &format!("/q{i}"), true, false, 0).is_some()).count();
        assert!(answered >= PACKETS * 99 / 100, "{answered} of {PACKETS} parents answered");
        assert!((0..PACKETS).all(|i| get(&mut cs, &format!("/q{i}/x"), false, false, 0).is_some()));
    }

    /// Lowering the capacity below the packets held evicts the least recently
    /// used down to it and rebuilds the parent table for the packets kept,
    /// which still answer for their parents; raising it again evicts nothing
    /// and allocates nothing.
    /// Lowering the capacity gives back the evicted packets' slots and index
    /// buckets; the packets kept answer as before, CanBePrefix Interests
    /// through their indirect entries included, and keep their recency order.
    #[test]
    fn shrinking_gives_back_the_slots_and_the_index() {
        let mut cs = Cs::new(MAX_CAPACITY);
        for i in 0..1000 {
            let prefixes: &[&str] = if i == 100 { &["/p100"] } else { &[] };
            insert(&mut cs, &format!("/p{i}/x/y"), None, prefixes, 0);
        }
        for i in [5, 995, 997] {
            cs.insert_indirect(&name(&format!("/p{i}")), &name(&format!("/p{i}/x/y")));
            assert_eq!(get(&mut cs, &format!("/p{i}"), true, false, 0), Some(format!("/p{i}/x/y")));
        }
        assert_eq!(cs.indirect_len(), 4);
        let (slots, buckets) = (cs.direct.allocated(), cs.index.buckets());
        assert!(slots >= 1000 && buckets >= 64, "{slots} slots, {buckets} buckets");

        cs.set_capacity(10);
        // Most recent first: the three asked for, then the newest inserts.
        let kept = [997, 995, 5, 999, 998, 996, 994, 993, 992, 991];
        assert_eq!((cs.len(), cs.indirect_len()), (10, 3), "/p100's indirect entry went with its packet");
        assert!(cs.direct.allocated() <= 16 && cs.index.buckets() <= 8, "{} slots, {} buckets", cs.direct.allocated(), cs.index.buckets());
        cs.set_capacity(4);
        for i in 0..1000 {
            let held = kept[..4].contains(&i);
            assert_eq!(get(&mut cs, &format!("/p{i}/x/y"), false, false, 0).is_some(), held, "/p{i}/x/y");
            let by_prefix = held && i != 999;
            assert_eq!(get(&mut cs, &format!("/p{i}"), true, false, 0).is_some(), by_prefix, "/p{i}");
        }
        assert_eq!((cs.len(), cs.indirect_len(), cs.index.len()), (4, 3, 7));
        insert(&mut cs, "/q/x/y", None, &["/q"], 0);
        assert_eq!(get(&mut cs, "/q", true, false, 0).as_deref(), Some("/q/x/y"), "the store still works");
        assert_eq!(cs.len(), 4);
    }

    #[test]
    fn shrinking_evicts_and_gives_back_the_parent_table() {
        let mut cs = Cs::new(MAX_CAPACITY);
        for i in 0..1000 {
            insert(&mut cs, &format!("/p{i}/x"), None, &[], 0);
        }
        assert_eq!(cs.parents.heap_bytes(), 512 * 64);
        cs.set_capacity(10);
        assert_eq!((cs.len(), cs.capacity()), (10, 10));
        assert_eq!(cs.parents.heap_bytes(), 8 * 64, "rebuilt for 10 packets");
        for i in 0..1000 {
            let kept = i >= 990;
            assert_eq!(get(&mut cs, &format!("/p{i}/x"), false, false, 0).is_some(), kept, "/p{i}/x");
            assert_eq!(get(&mut cs, &format!("/p{i}"), true, false, 0).is_some(), kept, "/p{i}");
        }
        cs.set_capacity(MAX_CAPACITY);
        assert_eq!((cs.len(), cs.parents.heap_bytes()), (10, 8 * 64));
        insert(&mut cs, "/new/x", None, &[], 0);
        assert_eq!((cs.len(), get(&mut cs, "/new", true, false, 0).as_deref()), (11, Some("/new/x")));
    }

    #[test]
    fn capacity_zero_caches_nothing() {
        let mut cs = Cs::new(0);
        insert(&mut cs, "/a/b", Some(1000), &["/a"], 0);
        assert!(cs.is_empty());
        assert_eq!(cs.indirect_len(), 0);
        assert_eq!(get(&mut cs, "/a/b", false, false, 0), None);
        assert_eq!(cs.misses(), 1);
        let mut cs = Cs::new(2);
        insert(&mut cs, "/a", None, &[], 0);
        cs.set_capacity(0);
        assert!(cs.is_empty());
        insert(&mut cs, "/a", None, &[], 0);
        assert!(cs.is_empty(), "set_capacity(0) disables caching");
    }

    #[test]
    fn erase_prefix_up_to_limit() {
        let mut cs = Cs::new(10);
        for uri in ["/a/1", "/a/2", "/a/3", "/ab", "/b"] {
            insert(&mut cs, uri, None, &["/a"], 0);
        }
        assert_eq!(cs.erase_prefix(&name("/a"), 2), 2);
        assert_eq!(cs.len(), 3);
        assert_eq!(cs.erase_prefix(&name("/a"), 10), 1);
        assert_eq!(get(&mut cs, "/a", true, false, 0), None);
        assert!(content(&mut cs, "/ab", 0).is_some(), "/ab is not under /a");
        assert_eq!(cs.erase_prefix(&Name::root(), usize::MAX), 2);
        assert!(cs.is_empty());
        assert_eq!(cs.indirect_len(), 0);
        insert(&mut cs, "/c", None, &[], 0);
        assert!(content(&mut cs, "/c", 0).is_some(), "the store still works after erasing");
    }

    /// Erasing most of a large store gives back its slots and index buckets,
    /// and the packets kept still answer, by name and by their parent; a
    /// small erase leaves the slots where they are.
    #[test]
    fn erasing_most_of_the_store_gives_back_its_memory() {
        let mut cs = Cs::new(MAX_CAPACITY);
        for i in 0..10_000 {
            let group = if i < 100 { "keep" } else { "drop" };
            insert(&mut cs, &format!("/{group}/{i}/x"), None, &[], 0);
        }
        let (slots, buckets) = (cs.direct.allocated(), cs.index.buckets());
        assert_eq!(cs.erase_prefix(&name("/drop/150"), usize::MAX), 1);
        assert_eq!(cs.direct.allocated(), slots, "one packet erased: nothing moves");

        assert_eq!(cs.erase_prefix(&name("/drop"), usize::MAX), 9_899);
        assert_eq!(cs.len(), 100);
        assert!(cs.direct.allocated() <= 128 && cs.index.buckets() < buckets, "{} slots, {} buckets", cs.direct.allocated(), cs.index.buckets());
        for i in 0..100 {
            assert!(content(&mut cs, &format!("/keep/{i}/x"), 0).is_some(), "/keep/{i}/x kept");
            assert_eq!(get(&mut cs, &format!("/keep/{i}"), true, false, 0), Some(format!("/keep/{i}/x")), "its parent answers");
        }
        assert_eq!(get(&mut cs, "/drop/200/x", false, false, 0), None);
        insert(&mut cs, "/new/x", None, &[], 0);
        assert!(content(&mut cs, "/new/x", 0).is_some(), "the store still works after compacting");
    }

    /// A prefix ending in an implicit digest is a full name: NFD's `cs erase`
    /// takes it as the start of a range of full names, which holds the
    /// packet it names, so it erases that packet (and anything named under
    /// the full name), not another with the same name.
    #[test]
    fn erasing_a_full_name_erases_its_packet() {
        let mut cs = Cs::new(10);
        let d = data("/a/b", None, b"one");
        cs.insert(&d, 0);
        insert(&mut cs, "/a/b/c", None, &[], 0);
        insert(&mut cs, &format!("{}/x", d.full_name()), None, &[], 0);
        assert_eq!(cs.erase_prefix(&data("/a/b", None, b"two").full_name(), 10), 0, "another packet's full name");
        assert_eq!(cs.erase_prefix(&d.full_name(), 10), 2);
        assert_eq!(content(&mut cs, "/a/b", 0), None);
        assert!(content(&mut cs, "/a/b/c", 0).is_some(), "what lies under the name alone stays");
        assert_eq!(cs.len(), 1);
    }

    proptest! {
        /// A full store keeps the most recently inserted packets, each slot
        /// taken over in place by the next insert: every kept name answers with
        /// its newest content, every other name misses, and a CanBePrefix
        /// Interest one level above is answered, if at all, by a kept packet
        /// under it (an evicted packet's index entries went with it). (A miss
        /// is allowed: a parent cached itself when its child came registers
        /// nothing for the child, and leaves nothing when it is evicted.)
        #[test]
        fn a_full_store_keeps_the_newest_packets(inserts in proptest::collection::vec((arb_name(4), any::<u8>()), 1..60)) {
            const CAPACITY: usize = 4;
            let mut cs = Cs::new(CAPACITY);
            // Kept names, least recently inserted first, with their content.
            let mut model: Vec<(Name, u8)> = Vec::new();
            for (n, c) in &inserts {
                cs.insert(&data(&n.to_string(), None, &[*c]), 0);
                model.retain(|(m, _)| m != n);
                model.push((n.clone(), *c));
                if model.len() > CAPACITY {
                    model.remove(0);
                }
                prop_assert_eq!(cs.len(), model.len());
                prop_assert_eq!(cs.index.len(), cs.len() + cs.indirect_len(), "index entries: packets and their parents");
            }
            for (n, _) in &inserts {
                let kept = model.iter().find(|(m, _)| m == n).map(|(_, c)| vec![*c]);
                prop_assert_eq!(answer(&mut cs, n, false, false, 0).map(|d| d.content().to_vec()), kept);
                if n.is_empty() {
                    continue;
                }
                let parent = n.prefix(n.len() - 1);
                let kept_under = |got: &Name| parent.is_prefix_of(got) && model.iter().any(|(m, _)| m == got);
                if let Some(got) = answer(&mut cs, &parent, true, false, 0) {
                    prop_assert!(kept_under(got.name()), "{:?} answered with {:?}", parent, got.name());
                }
            }
        }
    }

    proptest! {
        /// Every answer satisfies the Interest (ndn-cxx's rule plus freshness); an
        /// exact name or full name never misses while a usable packet is cached; a
        /// CanBePrefix Interest for a non-root prefix at most [`PREFIX_LEVELS`]
        /// components above some cached packet, and not itself a cached packet's
        /// name, hits when the newest packet cached under it is usable.
        #[test]
        fn lookup_agrees_with_reference(
            cached in proptest::collection::vec((arb_name(6), proptest::option::of(0u64..20), any::<u8>()), 0..20),
            queries in proptest::collection::vec((arb_name(5), any::<bool>(), any::<bool>(), any::<prop::sample::Index>(), any::<bool>()), 1..20),
            now in 0u64..25,
        ) {
            let mut cs = Cs::new(64);
            // Cached packets in insertion order (a replaced name moves to the end).
            let mut model: Vec<(Data, u64)> = Vec::new();
            for (n, fresh, c) in cached {
                let d = data(&n.to_string(), fresh, &[c]);
                model.retain(|(m, _)| m.name() != d.name());
                model.push((d.clone(), fresh.unwrap_or(0)));
                cs.insert(&d, 0);
            }
            for (n, cbp, mbf, pick, by_digest) in queries {
                // Some queries ask for a cached packet's full name.
                let n = match (by_digest, model.is_empty()) {
                    (true, false) => model[pick.index(model.len())].0.full_name(),
                    _ => n,
                };
                let i = interest(&n, cbp, mbf);
                let usable = |d: &Data, fresh_ms: u64| matches_data(&i, d) && (!mbf || now < fresh_ms);
                let exact = model.iter().any(|(d, f)| (*d.name() == n || d.full_name() == n) && usable(d, *f));
                let newest_under = model
                    .iter()
                    .rev()
                    .find(|(d, _)| !n.is_empty() && n.len() < d.name().len() && d.name().len() - n.len() <= PREFIX_LEVELS && n.is_prefix_of(d.name()));
                let named_so = model.iter().any(|(d, _)| *d.name() == n);
                let by_prefix = cbp && !named_so && newest_under.is_some_and(|(d, f)| usable(d, *f));
                match answer(&mut cs, &n, cbp, mbf, now) {
                    Some(got) => {
                        let f = model.iter().find(|(d, _)| d.name() == got.name()).map(|(_, f)| *f);
                        prop_assert!(f.is_some_and(|f| usable(&got, f)), "{:?} answered {:?} wrongly", i.name, got.name());
                    }
                    None => prop_assert!(!exact && !by_prefix, "{:?} (cbp {}, mbf {}) missed", i.name, cbp, mbf),
                }
            }
        }
    }
}
