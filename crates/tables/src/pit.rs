//! The pending Interest table: one entry per (name, CanBePrefix, MustBeFresh), as in
//! NFD, recording who asked (in-records) and where it was sent (out-records) until
//! Data satisfies it or it expires.
//!
//! Entries live in a generational slab and are found by name through the index the
//! PIT shares with the content store ([`crate::pcct`]): an Interest's one walk of
//! that index finds its pending entry or its cached Data, and a Data's finds the
//! entries it satisfies and its own cache slot. Expiry is driven by the entries'
//! own timers in a [`TimerWheel`], never by a scan; when an entry's lifetime is
//! extended its timer is re-armed lazily, when it fires, so refreshing an Interest
//! costs no timer operation. A new entry's timer is armed lazily too, at the next
//! [`Pcct::expire`] (or after [`ARM_BATCH`] inserts): most entries are satisfied
//! within microseconds, before then, and so never touch the wheel.

use bytes::Bytes;
use smallvec::SmallVec;
use trajan_wire::{Interest, NackReason, Name};

use crate::pcct::SelectorSet;
#[cfg(doc)]
use crate::{line_index::LineIndex, pcct::Pcct};
use crate::slab::{Key, Slab};
use crate::timer_wheel::{TimerId, TimerWheel};
use crate::FaceId;

/// New entries whose timers wait to be armed at most: bounds that list (of
/// handles, some stale) when [`Pcct::expire`] is not called for a while.
pub const ARM_BATCH: usize = 1024;

/// Names a PIT entry. Stale ids (the entry was satisfied, expired or removed) miss
/// rather than reach an unrelated newer entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PitId(Key);

/// The PIT is at capacity in entries: a new Interest cannot be recorded and
/// is dropped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("PIT is full")]
pub struct PitFull;

/// Why [`Pit::upsert_in_record`] refused a new face's in-record: the Interest
/// is dropped, and the engine counts each reason apart, as one says the PIT
/// is short of room and the other that one name has a crowd (or an attacker)
/// asking for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum InRecordRefused {
    /// The PIT holds as many in-records beyond the entries' inline ones as it
    /// may hold entries.
    #[error("PIT is full")]
    PitFull,
    /// The entry holds [`MAX_IN_RECORDS`] already.
    #[error("PIT entry has as many downstreams as it may have")]
    EntryFull,
}

/// In-records a [`PitEntry`] holds without a heap allocation.
pub const IN_RECORDS_INLINE: usize = 4;

/// In-records one [`PitEntry`] holds at most; an Interest from a further face
/// is dropped ([`InRecordRefused::EntryFull`]), a refresh from a face already
/// recorded is not. Every Interest aggregated into an entry walks its records
/// (for the face's own, the Nonces of a loop, the latest expiry) about five
/// times, so without a bound one name asked for from every face (16,384 by
/// default, and an on-demand UDP face costs an attacker a source port) made
/// each further Interest cost ~145 µs; the cost grows with the records, so
/// 1,024 cuts it sixteenfold. A legitimate fan-in is the consumers of one
/// router asking for one name within the same round trip upstream (a live
/// segment, a popular object as it first appears), each on its own face:
/// hundreds would already be a large crowd at one router. NFD bounds nothing
/// here. A consumer past the bound retransmits, and once the Data has come it
/// is answered from the CS.
pub const MAX_IN_RECORDS: usize = 1024;

/// A downstream that asked for the entry's Data.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InRecord {
    /// The downstream face, where Data or a Nack goes back.
    pub face: FaceId,
    /// The Nonce of the downstream's latest Interest, for loop detection.
    pub nonce: u32,
    /// When this downstream stops waiting (its Interest's lifetime ends).
    pub expiry_ms: u64,
    /// The downstream's NDNLPv2 PIT token, echoed on the Data or Nack sent back.
    pub pit_token: Option<Bytes>,
}

/// An upstream the Interest was forwarded to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutRecord {
    /// The upstream face.
    pub face: FaceId,
    /// The Nonce sent upstream, to match a returning Nack.
    pub nonce: u32,
    /// When it was last sent, for retransmission suppression and RTT.
    pub sent_ms: u64,
    /// The Nack the upstream answered with, if it did.
    pub nack: Option<NackReason>,
    /// The entry of the dynamic strategy's measurements that counts this
    /// Interest as pending at `face` (0: none), so that the count goes down
    /// once, when the upstream answers or the Interest ends.
    pub measure: u32,
    /// How far the multicast strategy has backed off retransmissions to
    /// `face`, which NFD's multicast suppresses per upstream: kept across
    /// resends, so that each one let through lengthens the next wait. A byte
    /// of what was padding.
    pub suppression: u8,
}

/// One pending Interest. Its key is the name, CanBePrefix and MustBeFresh of its
/// Interest, set at insertion. Of the latest Interest it keeps only what
/// forwarding reads (its encoding, Nonce and HopLimit), not a decoded copy: an
/// entry is created and dropped per Interest, and a rare path that needs more
/// (a Nack's retry) decodes [`PitEntry::wire`] again.
#[derive(Clone, Debug)]
pub struct PitEntry {
    name: Name,
    can_be_prefix: bool,
    must_be_fresh: bool,
    /// The latest Interest as it goes upstream (Nonce and HopLimit already set by
    /// the engine), read through [`PitEntry::wire`]: empty until the engine sets
    /// it, and `None` when it is the packet the entry's name lies in (which
    /// the name holds: [`PitEntry::set_upstream_received`], or any encoding
    /// the name was moved into, [`PitEntry::set_upstream_at`]). An entry
    /// holds one packet, not two: an 8,772-byte Interest re-encoded for its
    /// HopLimit kept 18,442 bytes per entry while the name still held the
    /// received packet.
    upstream: Option<Bytes>,
    /// The Nonce in the upstream Interest.
    pub nonce: u32,
    /// The HopLimit in the upstream Interest, if it has one.
    pub hop_limit: Option<u8>,
    /// Who is waiting. Four fit inline (NDN-DPDK's entry keeps six before an
    /// extension), so aggregating the Interests of up to four consumers
    /// allocates nothing. One per face. Read it here; add and remove records
    /// through [`Pit::upsert_in_record`] and [`Pit::remove_in_record`], which
    /// bound those beyond the four and those of one entry ([`MAX_IN_RECORDS`]).
    pub in_records: SmallVec<[InRecord; IN_RECORDS_INLINE]>,
    /// Where the Interest went; usually one upstream, so two fit inline.
    pub out_records: SmallVec<[OutRecord; 2]>,
    /// When the entry dies: the latest in-record expiry (the first Interest's
    /// lifetime until an in-record exists). Call [`Pit::reschedule`] after changing it.
    pub expiry_ms: u64,
    /// Set by the engine once Data has answered the entry.
    pub satisfied: bool,
    /// How far best-route and dynamic have backed off the retransmissions
    /// of this Interest, which NFD's best-route suppresses per PIT entry
    /// whichever upstream they go to. A byte of what was padding: the new
    /// Interest only sets it.
    pub suppression: u8,
}

impl PitEntry {
    /// The Interest name (key).
    #[inline]
    pub fn name(&self) -> &Name {
        &self.name
    }

    /// CanBePrefix (key): proper-prefix Data also satisfy the entry.
    #[inline]
    pub fn can_be_prefix(&self) -> bool {
        self.can_be_prefix
    }

    /// MustBeFresh (key): Interests that differ in it may be answered differently by
    /// caches upstream, so they are not aggregated.
    #[inline]
    pub fn must_be_fresh(&self) -> bool {
        self.must_be_fresh
    }

    /// The latest Interest as it goes upstream, encoded (empty before the
    /// engine sets it).
    #[inline]
    pub fn wire(&self) -> &Bytes {
        self.upstream.as_ref().unwrap_or(self.name.buffer())
    }

    /// Records the latest Interest as it goes upstream: its encoding, whose
    /// name's components (the Name's TLV-VALUE) begin at `name_at`, its Nonce
    /// and HopLimit (an Interest with the entry's key). The engine knows
    /// `name_at` without reading the headers: that of a received Interest
    /// (`trajan_wire::Name::range_in_buffer`) or of a re-encoded one
    /// (`trajan_wire::Interest::encode_locating_name`). The entry's name
    /// moves into `wire` (the same bytes; its component offsets stay and it
    /// is not parsed again), so the entry holds one buffer, the latest
    /// Interest's: it held the received packet through its name and a
    /// re-encoding beside it, or the first Interest through its name and the
    /// latest to join beside it. Bytes other than the name's at `name_at`
    /// (a caller's mistake) leave the name as it was, `wire` kept beside it.
    pub fn set_upstream_at(&mut self, wire: Bytes, name_at: usize, nonce: u32, hop_limit: Option<u8>) {
        debug_assert_eq!(wire.first(), Some(&(trajan_wire::types::INTEREST as u8)), "an Interest");
        match self.name.move_to(wire, name_at) {
            Ok(()) => {
                self.upstream = None;
                self.nonce = nonce;
                self.hop_limit = hop_limit;
            }
            Err(wire) => self.keep_upstream(wire, nonce, hop_limit),
        }
    }

    /// Records an upstream encoding the entry's name cannot move into.
    #[cold]
    fn keep_upstream(&mut self, wire: Bytes, nonce: u32, hop_limit: Option<u8>) {
        self.upstream = Some(wire);
        self.nonce = nonce;
        self.hop_limit = hop_limit;
    }

    /// [`PitEntry::set_upstream_at`] of the Interest whose name the entry took,
    /// sent on as it was received: its encoding is the packet that name was
    /// decoded from and holds (`trajan_wire::Name::buffer`), so the entry
    /// keeps one reference to it, not two. For an entry whose name was not
    /// decoded from its Interest, [`PitEntry::set_upstream_at`].
    pub fn set_upstream_received(&mut self, nonce: u32, hop_limit: Option<u8>) {
        debug_assert_eq!(self.name.buffer().first(), Some(&(trajan_wire::types::INTEREST as u8)), "the name holds its Interest");
        self.upstream = None;
        self.nonce = nonce;
        self.hop_limit = hop_limit;
    }

    /// The in-record of `face`.
    pub fn in_record_mut(&mut self, face: FaceId) -> Option<&mut InRecord> {
        self.in_records.iter_mut().find(|r| r.face == face)
    }

    /// Records (or refreshes) `face`'s Interest and sets the entry's expiry to the
    /// latest in-record expiry ([`Pit::upsert_in_record`] outside this crate, which
    /// keeps the bound on in-records).
    #[inline(always)]
    pub(crate) fn upsert_in_record(&mut self, face: FaceId, nonce: u32, expiry_ms: u64, pit_token: Option<Bytes>) {
        let record = InRecord { face, nonce, expiry_ms, pit_token };
        match self.in_record_mut(face) {
            Some(r) => *r = record,
            None => self.in_records.push(record),
        }
        self.update_expiry();
    }

    /// [`Pit::upsert_in_record`] for an entry just created, which has no
    /// records yet: the record is appended without a search, and its expiry is
    /// the entry's (the common Interest, whose entry is new, skipped two walks
    /// of empty record lists).
    #[inline(always)]
    pub fn add_first_in_record(&mut self, face: FaceId, nonce: u32, expiry_ms: u64, pit_token: Option<Bytes>) {
        debug_assert!(self.in_records.is_empty() && self.out_records.is_empty(), "a new entry");
        self.in_records.push(InRecord { face, nonce, expiry_ms, pit_token });
        self.expiry_ms = expiry_ms;
    }

    /// Drops `face`'s in-record and recomputes the entry's expiry from the others
    /// (leaving it unchanged when none remain, as the caller then usually removes the entry).
    pub(crate) fn remove_in_record(&mut self, face: FaceId) -> Option<InRecord> {
        let at = self.in_records.iter().position(|r| r.face == face)?;
        let record = self.in_records.remove(at);
        self.update_expiry();
        Some(record)
    }

    fn update_expiry(&mut self) {
        if let Some(latest) = self.in_records.iter().map(|r| r.expiry_ms).max() {
            self.expiry_ms = latest;
        }
    }

    /// The out-record of `face`.
    pub fn out_record_mut(&mut self, face: FaceId) -> Option<&mut OutRecord> {
        self.out_records.iter_mut().find(|r| r.face == face)
    }

    /// Records that the Interest was (re)sent to `face`; a resend clears an
    /// earlier Nack and keeps the upstream's [`OutRecord::suppression`].
    pub fn upsert_out_record(&mut self, face: FaceId, nonce: u32, sent_ms: u64, measure: u32) {
        match self.out_record_mut(face) {
            Some(r) => *r = OutRecord { face, nonce, sent_ms, nack: None, measure, suppression: r.suppression },
            None => self.out_records.push(OutRecord { face, nonce, sent_ms, nack: None, measure, suppression: 0 }),
        }
    }

    /// Whether an Interest carrying `nonce` that arrived on `ingress` looped
    /// (NFD's findDuplicateNonce): any record of the entry, in or out, holds
    /// that Nonce. On a point-to-point face, `ingress`'s own in-record holding
    /// it makes it a retransmission instead, whatever other records hold; an
    /// Interest this router sent upstream coming back on that same face is a
    /// loop.
    pub fn nonce_loops(&self, nonce: u32, ingress: FaceId, point_to_point: bool) -> bool {
        let mut in_records = self.in_records.iter().filter(|r| r.nonce == nonce);
        if point_to_point && in_records.clone().any(|r| r.face == ingress) {
            return false;
        }
        in_records.next().is_some() || self.out_records.iter().any(|r| r.nonce == nonce)
    }
}

/// The most entries a PIT holds, whatever it is configured with: the shared
/// index (see [`crate::pcct`]) stores 30-bit slab indices, and the all-ones one
/// marks an empty way.
pub const MAX_CAPACITY: usize = (1 << 30) - 1;

/// An entry as stored, with what the table needs to find and time it.
struct Stored {
    entry: PitEntry,
    /// The index tag of the name (see [`LineIndex::tag`]).
    tag: u32,
    /// The entry's selector combination ([`selectors`]).
    selectors: usize,
    /// Whether the name ends with an implicit digest (counted for `digest_entries`).
    digest: bool,
    /// The entry's timer, once armed (see [`Pit::arm_new`]).
    timer: Option<TimerId>,
    /// The deadline `timer` is set for; may be earlier than `entry.expiry_ms`.
    armed_ms: u64,
}

/// A selector combination as a number below 4, for [`crate::pcct::SelectorSet`].
#[inline]
pub(crate) fn selectors(can_be_prefix: bool, must_be_fresh: bool) -> usize {
    can_be_prefix as usize | (must_be_fresh as usize) << 1
}

/// An entry's in-records beyond the inline four.
#[inline]
fn extra_records(entry: &PitEntry) -> usize {
    entry.in_records.len().saturating_sub(IN_RECORDS_INLINE)
}

/// The PIT's entries and timers, bounded in entries. It indexes its names in the
/// content store's index, so finding or removing an entry by name is done through
/// the [`Pcct`] that holds both.
pub struct Pit {
    entries: Slab<Stored>,
    timers: TimerWheel<PitId>,
    fired: Vec<PitId>,
    /// Entries inserted since timers were last armed (some may be gone already).
    unarmed: Vec<PitId>,
    /// The earliest expiry among `unarmed` (a lower bound; `u64::MAX` when empty).
    unarmed_min_ms: u64,
    capacity: usize,
    /// Entries with CanBePrefix: while zero, Data needs no probe for its proper prefixes.
    pub(crate) prefix_entries: usize,
    /// Entries whose name ends with an implicit digest: while zero, Data needs no
    /// SHA-256 to find who asked for its full name.
    pub(crate) digest_entries: usize,
    /// In-records beyond each entry's inline four, over all entries: at most
    /// `capacity`. One entry can otherwise hold a record per face, and every
    /// face (up to `faces.max_faces` of them) asking for every pending name
    /// would multiply the PIT's memory by the number of faces.
    extra_in_records: usize,
}

impl Pit {
    /// An empty PIT holding at most `capacity` entries (up to [`MAX_CAPACITY`]),
    /// its timers starting at `now_ms`.
    pub(crate) fn new(capacity: usize, now_ms: u64) -> Self {
        Pit {
            entries: Slab::new(),
            timers: TimerWheel::new(now_ms),
            fired: Vec::new(),
            unarmed: Vec::new(),
            unarmed_min_ms: u64::MAX,
            capacity: capacity.min(MAX_CAPACITY),
            prefix_entries: 0,
            digest_entries: 0,
            extra_in_records: 0,
        }
    }

    /// Number of pending entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when nothing is pending.
    pub fn is_empty(&self) -> bool {
        self.entries.len() == 0
    }

    /// The most entries the PIT holds.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// The current id of the entry at slab index `idx`, for a [`crate::Pcct`]
    /// whose shared index names entries by index alone.
    #[inline]
    pub(crate) fn id_at(&self, idx: u32) -> PitId {
        PitId(self.entries.key_at(idx))
    }

    /// Whether the entry at slab index `idx` (one the index names) is named
    /// `name`, with selectors in `wanted`. The selectors, already in the entry's
    /// line, are compared first.
    #[inline]
    pub(crate) fn holds(&self, idx: u32, name: &[u8], wanted: SelectorSet) -> bool {
        let s = self.entries.at(idx);
        wanted & (1 << s.selectors) != 0 && s.entry.name.value()[..] == *name
    }

    /// Whether a new entry would exceed the capacity.
    #[inline]
    pub(crate) fn is_full(&self) -> bool {
        self.entries.len() >= self.capacity
    }

    /// A new entry named `name` for `interest` (whose own name may already have
    /// been given up as `name`), tagged `tag` and with no entry of its selectors
    /// yet: its id and slab index (to index it under `tag`), or `None` at capacity.
    ///
    /// Always inlined (once per Interest, into the PCCT probe): as a call it
    /// cost 30 more instructions per exchange (docs/PERFORMANCE.md).
    #[inline(always)]
    pub(crate) fn insert(&mut self, interest: &Interest, name: Name, tag: u32, now_ms: u64) -> Option<(PitId, u32)> {
        if self.is_full() {
            return None;
        }
        if self.unarmed.len() >= ARM_BATCH {
            self.arm_new();
        }
        let id = PitId(self.entries.next_key());
        let expiry_ms = now_ms.saturating_add(interest.lifetime());
        let digest = name.implicit_digest().is_some();
        let key = self.entries.insert_with(|| Stored {
            entry: PitEntry {
                name,
                can_be_prefix: interest.can_be_prefix,
                must_be_fresh: interest.must_be_fresh,
                upstream: Some(Bytes::new()),
                nonce: interest.nonce.unwrap_or(0),
                hop_limit: interest.hop_limit,
                in_records: SmallVec::new(),
                out_records: SmallVec::new(),
                expiry_ms,
                satisfied: false,
                suppression: 0,
            },
            tag,
            selectors: selectors(interest.can_be_prefix, interest.must_be_fresh),
            digest,
            timer: None,
            armed_ms: u64::MAX,
        });
        debug_assert_eq!(key, id.0);
        self.unarmed.push(id);
        self.unarmed_min_ms = self.unarmed_min_ms.min(expiry_ms);
        self.prefix_entries += interest.can_be_prefix as usize;
        self.digest_entries += digest as usize;
        Some((id, key.idx))
    }

    /// The entry `id` names, if it is still pending.
    pub fn get(&self, id: PitId) -> Option<&PitEntry> {
        self.entries.get(id.0).map(|s| &s.entry)
    }

    /// Mutable form of [`Pit::get`].
    pub fn get_mut(&mut self, id: PitId) -> Option<&mut PitEntry> {
        self.entries.get_mut(id.0).map(|s| &mut s.entry)
    }

    /// Records (or refreshes) `face`'s Interest in entry `id` and sets the
    /// entry's expiry to the latest in-record expiry. A new face's record is
    /// refused (the Interest is dropped) when the entry holds
    /// [`MAX_IN_RECORDS`] ([`InRecordRefused::EntryFull`]), or when it goes
    /// beyond the entry's inline four while the PIT holds as many such records
    /// as it may hold entries ([`InRecordRefused::PitFull`]). An entry that is
    /// gone takes nothing.
    ///
    /// The PIT token is copied (at most 32 bytes): received, it is a view of
    /// its packet, up to 8,800 bytes the entry would otherwise hold for each
    /// face. (The entry's first record, [`PitEntry::add_first_in_record`],
    /// keeps its view: the entry holds that Interest anyway.)
    pub fn upsert_in_record(&mut self, id: PitId, face: FaceId, nonce: u32, expiry_ms: u64, pit_token: Option<Bytes>) -> Result<(), InRecordRefused> {
        let Some(s) = self.entries.get_mut(id.0) else { return Ok(()) };
        let e = &mut s.entry;
        let records = e.in_records.len();
        if records >= IN_RECORDS_INLINE && e.in_record_mut(face).is_none() {
            if records >= MAX_IN_RECORDS {
                return Err(InRecordRefused::EntryFull);
            }
            if self.extra_in_records >= self.capacity {
                return Err(InRecordRefused::PitFull);
            }
            self.extra_in_records += 1;
        }
        e.upsert_in_record(face, nonce, expiry_ms, pit_token.map(|t| Bytes::copy_from_slice(&t)));
        Ok(())
    }

    /// Drops `face`'s in-record from entry `id` and recomputes the entry's
    /// expiry from the others (leaving it unchanged when none remain, as the
    /// caller then usually removes the entry).
    pub fn remove_in_record(&mut self, id: PitId, face: FaceId) -> Option<InRecord> {
        let e = &mut self.entries.get_mut(id.0)?.entry;
        let extra = e.in_records.len() > IN_RECORDS_INLINE;
        let record = e.remove_in_record(face)?;
        self.extra_in_records -= extra as usize;
        Some(record)
    }

    /// In-records beyond the entries' inline four, against the bound of
    /// [`Pit::upsert_in_record`].
    pub fn extra_in_records(&self) -> usize {
        self.extra_in_records
    }

    /// Takes an entry out, with the tag and slab index it was indexed under.
    pub(crate) fn remove(&mut self, id: PitId) -> Option<(PitEntry, u32, u32)> {
        let stored = self.entries.remove(id.0)?;
        let extra = extra_records(&stored.entry);
        self.forget(stored.timer, stored.selectors, stored.digest, extra);
        Some((stored.entry, stored.tag, id.0.idx))
    }

    /// Drops an entry in place; the tag and slab index it was indexed under.
    #[inline(always)]
    pub(crate) fn discard(&mut self, id: PitId) -> Option<(u32, u32)> {
        let stored = self.entries.get(id.0)?;
        let (timer, tag, sel, digest, extra) = (stored.timer, stored.tag, stored.selectors, stored.digest, extra_records(&stored.entry));
        self.entries.discard(id.0);
        self.forget(timer, sel, digest, extra);
        Some((tag, id.0.idx))
    }

    /// Cancels a removed entry's timer and takes it out of the counts.
    #[inline]
    fn forget(&mut self, timer: Option<TimerId>, sel: usize, digest: bool, extra_in_records: usize) {
        if let Some(timer) = timer {
            self.timers.cancel(timer);
        }
        self.prefix_entries -= (sel & selectors(true, false) != 0) as usize;
        self.digest_entries -= digest as usize;
        self.extra_in_records -= extra_in_records;
    }

    /// Brings an entry's timer forward after its `expiry_ms` moved earlier. A later
    /// expiry needs nothing now: the timer is re-armed when it fires.
    pub fn reschedule(&mut self, id: PitId) {
        let Some(s) = self.entries.get_mut(id.0) else { return };
        match s.timer {
            // Not armed yet: it will be, at its expiry then.
            None => self.unarmed_min_ms = self.unarmed_min_ms.min(s.entry.expiry_ms),
            Some(timer) if s.entry.expiry_ms < s.armed_ms => {
                self.timers.cancel(timer);
                s.timer = Some(self.timers.schedule(s.entry.expiry_ms, id));
                s.armed_ms = s.entry.expiry_ms;
            }
            Some(_) => {}
        }
    }

    /// Arms the timers of the entries inserted since the last call that are
    /// still pending, each at its current expiry.
    fn arm_new(&mut self) {
        for id in self.unarmed.drain(..) {
            if let Some(s) = self.entries.get_mut(id.0) {
                s.timer = Some(self.timers.schedule(s.entry.expiry_ms, id));
                s.armed_ms = s.entry.expiry_ms;
            }
        }
        self.unarmed_min_ms = u64::MAX;
    }

    /// The entries whose expiry is at or before `now_ms`, for the caller to
    /// remove; the timers of entries whose lifetime was extended are re-armed.
    /// Hand the list back with [`Pit::done_with`], so its buffer is reused.
    pub(crate) fn due(&mut self, now_ms: u64) -> Vec<PitId> {
        self.arm_new();
        let mut fired = std::mem::take(&mut self.fired);
        self.timers.advance(now_ms, &mut fired);
        fired.retain(|&id| {
            let Some(s) = self.entries.get_mut(id.0) else { return false };
            if s.entry.expiry_ms <= now_ms {
                return true;
            }
            s.timer = Some(self.timers.schedule(s.entry.expiry_ms, id));
            s.armed_ms = s.entry.expiry_ms;
            false
        });
        fired
    }

    /// Takes back the buffer [`Pit::due`] handed out.
    pub(crate) fn done_with(&mut self, mut due: Vec<PitId>) {
        due.clear();
        self.fired = due;
    }

    /// A lower bound of the next expiry, for the I/O loop's poll timeout.
    pub fn next_deadline(&self) -> Option<u64> {
        let unarmed = (!self.unarmed.is_empty()).then_some(self.unarmed_min_ms);
        match (self.timers.next_deadline(), unarmed) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pcct::{Pcct, Probe};
    use trajan_wire::Data;
    use crate::test_util::{arb_name, data, interest, matches_data, name};
    use proptest::prelude::*;

    fn insert(pit: &mut Pcct, uri: &str, cbp: bool, mbf: bool, now: u64) -> PitId {
        let (id, new) = pit.find_or_insert(&interest(&name(uri), cbp, mbf), now).unwrap();
        assert!(new, "{uri} cbp={cbp} mbf={mbf} is new");
        id
    }

    fn matches(pit: &Pcct, d: &Data) -> Vec<PitId> {
        let mut v = Vec::new();
        pit.matches_for_data(d, pit.cs.names.full(d.name()), &mut v);
        v.sort_by_key(|id| id.0.idx);
        v
    }

    fn sorted(mut ids: Vec<PitId>) -> Vec<PitId> {
        ids.sort_by_key(|id| id.0.idx);
        ids
    }

    #[test]
    fn key_separates_selectors() {
        let mut pit = Pcct::new(10, 0, 0);
        let a = name("/a");
        let ids: Vec<PitId> =
            [(false, false), (true, false), (false, true), (true, true)].iter().map(|&(c, m)| insert(&mut pit, "/a", c, m, 0)).collect();
        assert_eq!(pit.pit.len(), 4);
        for (i, &(c, m)) in [(false, false), (true, false), (false, true), (true, true)].iter().enumerate() {
            assert_eq!(pit.find(&a, c, m), Some(ids[i]));
            let e = pit.pit.get(ids[i]).unwrap();
            assert_eq!((e.can_be_prefix(), e.must_be_fresh()), (c, m));
            assert_eq!(pit.find_or_insert(&interest(&a, c, m), 5), Ok((ids[i], false)), "same key aggregates");
        }
        assert_eq!(pit.find(&name("/a/b"), false, false), None);
        assert_eq!(pit.find(&name("/"), true, false), None);
        pit.remove(ids[1]).unwrap();
        assert_eq!(pit.find(&a, true, false), None);
        assert_eq!(pit.find(&a, false, false), Some(ids[0]), "siblings survive a removal");
        assert_eq!(pit.find(&a, true, true), Some(ids[3]));
    }

    #[test]
    fn the_upstream_interest_is_the_one_set_or_the_packet_the_name_holds() {
        let mut pit = Pcct::new(4, 0, 0);
        let wire = interest(&name("/a/b"), false, false).encode();
        let mut received = Interest::decode(&wire).unwrap();
        let hash = pit.cs.names.full(&received.name);
        let Probe::Inserted(id) = pit.probe_interest(&mut received, hash, 0) else { panic!("a new entry") };
        let entry = pit.pit.get_mut(id).unwrap();
        assert!(entry.wire().is_empty(), "nothing goes upstream before the engine says what");
        entry.set_upstream_received(7, Some(3));
        assert_eq!(*entry.wire(), wire, "the packet the entry's name was decoded from");
        assert_eq!((entry.nonce, entry.hop_limit), (7, Some(3)));
        let mut other = interest(&name("/a/b"), false, false);
        other.hop_limit = Some(9);
        let (other, at) = other.encode_locating_name();
        entry.set_upstream_at(other.clone(), at, 8, None);
        assert_eq!(*entry.wire(), other);
        assert_eq!(*entry.name(), name("/a/b"));
        assert_eq!(entry.name().buffer().as_ptr(), other.as_ptr(), "the name moved into the packet that goes upstream");
        drop(received);
        assert!(wire.is_unique(), "and holds the received one no more");
        // A packet of another name stays beside the entry's name, which keeps its key.
        let (foreign, at) = interest(&name("/a/c"), false, false).encode_locating_name();
        entry.set_upstream_at(foreign.clone(), at, 9, None);
        assert_eq!((entry.wire(), entry.name(), entry.nonce), (&foreign, &name("/a/b"), 9));
        let (longer, at) = interest(&name("/a/b/c"), false, false).encode_locating_name();
        entry.set_upstream_at(longer.clone(), at, 11, None);
        assert_eq!((entry.wire(), entry.name()), (&longer, &name("/a/b")));
        entry.set_upstream_at(other.clone(), 0, 12, None);
        assert_eq!((entry.wire(), entry.name(), entry.nonce), (&other, &name("/a/b"), 12), "no name at that place");
    }

    #[test]
    fn capacity_bounds_entries() {
        let mut pit = Pcct::new(2, 0, 0);
        let a = insert(&mut pit, "/a", false, false, 0);
        insert(&mut pit, "/b", false, false, 0);
        assert_eq!(pit.find_or_insert(&interest(&name("/c"), false, false), 0), Err(PitFull));
        assert!(pit.find_or_insert(&interest(&name("/a"), false, false), 0).is_ok(), "existing entries are still found when full");
        pit.remove(a);
        insert(&mut pit, "/c", false, false, 0);
        assert_eq!(pit.pit.len(), 2);
        let mut none = Pcct::new(0, 0, 0);
        assert_eq!(none.find_or_insert(&interest(&name("/a"), false, false), 0), Err(PitFull));
    }

    #[test]
    fn stale_ids_miss() {
        let mut pit = Pcct::new(4, 0, 0);
        let a = insert(&mut pit, "/a", false, false, 0);
        assert!(pit.remove(a).is_some());
        assert!(pit.remove(a).is_none());
        let b = insert(&mut pit, "/b", false, false, 0);
        assert_ne!(a, b);
        assert!(pit.pit.get(a).is_none());
        assert!(pit.pit.get_mut(a).is_none());
        assert_eq!(*pit.pit.get(b).unwrap().name(), name("/b"));
    }

    #[test]
    fn data_matches_exact_prefix_and_full_name() {
        let mut pit = Pcct::new(32, 0, 0);
        let d = data("/a/b/c", Some(1000), b"x");
        let exact = insert(&mut pit, "/a/b/c", false, false, 0);
        let exact_fresh = insert(&mut pit, "/a/b/c", false, true, 0);
        let exact_cbp = insert(&mut pit, "/a/b/c", true, false, 0);
        let prefix_cbp = insert(&mut pit, "/a/b", true, false, 0);
        let prefix_cbp_fresh = insert(&mut pit, "/a/b", true, true, 0);
        let root_cbp = insert(&mut pit, "/", true, false, 0);
        insert(&mut pit, "/a/b", false, false, 0); // a prefix without CanBePrefix
        insert(&mut pit, "/a/b/c/d", true, false, 0); // longer than the Data
        insert(&mut pit, "/a/bc", true, false, 0); // not a component prefix
        insert(&mut pit, "/a/b/9=c", false, false, 0); // typed component, same bytes
        let full = pit.find_or_insert(&interest(&d.full_name(), false, false), 0).unwrap().0;
        let other_digest = data("/a/b/c", Some(1000), b"y").full_name();
        insert(&mut pit, &other_digest.to_string(), false, false, 0);
        assert_eq!(matches(&pit, &d), sorted(vec![exact, exact_fresh, exact_cbp, prefix_cbp, prefix_cbp_fresh, root_cbp, full]));
    }

    #[test]
    fn digest_and_prefix_probes_follow_the_entries_that_need_them() {
        let mut pit = Pcct::new(8, 0, 0);
        let d = data("/x/y", None, b"");
        let full = pit.find_or_insert(&interest(&d.full_name(), false, false), 0).unwrap().0;
        let prefix = insert(&mut pit, "/x", true, false, 0);
        assert_eq!(matches(&pit, &d), sorted(vec![full, prefix]));
        pit.remove(full);
        pit.remove(prefix);
        assert_eq!((pit.pit.digest_entries, pit.pit.prefix_entries), (0, 0));
        let again = pit.find_or_insert(&interest(&d.full_name(), false, false), 0).unwrap().0;
        assert_eq!(matches(&pit, &d), vec![again]);
    }

    #[test]
    fn records_and_nonces() {
        let mut pit = Pcct::new(4, 0, 0);
        let id = insert(&mut pit, "/a", false, false, 0);
        let e = pit.pit.get_mut(id).unwrap();
        e.add_first_in_record(1, 111, 4000, Some(Bytes::from_static(b"tok")));
        assert_eq!((e.in_records.len(), e.expiry_ms), (1, 4000));
        assert_eq!(e.in_record_mut(1).map(|r| r.nonce), Some(111));
        e.upsert_in_record(2, 222, 3000, None);
        assert_eq!(e.expiry_ms, 4000);
        e.upsert_in_record(1, 112, 2000, None);
        assert_eq!(e.in_records.len(), 2);
        assert_eq!(e.in_record_mut(1).map(|r| (r.nonce, r.pit_token.clone())), Some((112, None)));
        assert_eq!(e.expiry_ms, 3000, "expiry is the latest in-record's, which may move earlier");
        e.upsert_out_record(7, 222, 10, 0);
        let first = e.out_record_mut(7).unwrap();
        assert_eq!(first.suppression, 0);
        (first.nack, first.suppression) = (Some(NackReason::Congestion), 2);
        e.upsert_out_record(7, 333, 20, 0);
        assert_eq!(e.out_records.len(), 1);
        assert_eq!(e.out_records[0], OutRecord { face: 7, nonce: 333, sent_ms: 20, nack: None, measure: 0, suppression: 2 }, "a resend keeps the back-off");
        // in-records: face 1 holds 112, face 2 holds 222; out-record: face 7 holds 333.
        assert!(!e.nonce_loops(112, 1, true), "a retransmission on its own point-to-point face");
        assert!(e.nonce_loops(112, 1, false), "on a multi-access face any repeat is a loop");
        assert!(e.nonce_loops(112, 2, true), "another face's Nonce");
        assert!(e.nonce_loops(333, 7, true), "sent upstream and back on the same face");
        assert!(e.nonce_loops(333, 1, true));
        assert!(!e.nonce_loops(111, 1, true), "an earlier Nonce no record holds now");
        e.upsert_out_record(1, 222, 30, 0);
        assert!(e.nonce_loops(222, 1, true));
        e.upsert_in_record(1, 222, 2000, None);
        assert!(!e.nonce_loops(222, 1, true), "the face's own in-record exempts it, whatever else holds the Nonce");
        e.upsert_in_record(1, 112, 2000, None);
        e.out_records.retain(|o| o.face != 1);
        assert_eq!(e.remove_in_record(2).map(|r| r.nonce), Some(222));
        assert_eq!(e.expiry_ms, 2000);
        assert!(e.remove_in_record(2).is_none());
        assert!(e.in_record_mut(9).is_none());
    }

    /// One entry may hold a record per face; those beyond its inline four are
    /// bounded over the whole PIT by its capacity in entries, and every way an
    /// entry or a record goes gives its share back.
    #[test]
    fn in_records_beyond_the_inline_ones_are_bounded_by_the_capacity() {
        let mut pit = Pcct::new(2, 0, 0);
        let (a, b) = (insert(&mut pit, "/a", false, false, 0), insert(&mut pit, "/b", false, false, 0));
        let faces = IN_RECORDS_INLINE as FaceId;
        for face in 1..=faces + 2 {
            assert_eq!(pit.pit.upsert_in_record(a, face, face, 1000, None), Ok(()));
        }
        assert_eq!(pit.pit.extra_in_records(), 2);
        assert_eq!(pit.pit.upsert_in_record(a, faces + 3, 0, 1000, None), Err(InRecordRefused::PitFull), "a third beyond the inline ones");
        assert_eq!(pit.pit.upsert_in_record(a, faces + 2, 7, 2000, None), Ok(()), "a face with a record refreshes it");
        assert_eq!(pit.pit.get(a).unwrap().expiry_ms, 2000);
        for face in 1..=faces {
            assert_eq!(pit.pit.upsert_in_record(b, face, 0, 1000, None), Ok(()), "inline records are not bounded");
        }
        assert_eq!(pit.pit.upsert_in_record(b, faces + 1, 0, 1000, None), Err(InRecordRefused::PitFull));
        // Removing a record gives back a share only while the entry has extras.
        assert!(pit.pit.remove_in_record(a, 1).is_some());
        assert_eq!(pit.pit.extra_in_records(), 1);
        assert!(pit.pit.remove_in_record(a, 1).is_none());
        assert_eq!(pit.pit.upsert_in_record(b, faces + 1, 0, 1000, None), Ok(()));
        assert_eq!(pit.pit.extra_in_records(), 2);
        // An entry that goes (satisfied, discarded or expired) takes its extras.
        assert!(pit.discard(b));
        assert_eq!(pit.pit.extra_in_records(), 1);
        assert!(pit.remove(a).is_some());
        assert_eq!(pit.pit.extra_in_records(), 0);
        let c = insert(&mut pit, "/c", false, false, 0);
        for face in 1..=faces + 2 {
            pit.pit.upsert_in_record(c, face, 0, 1000, None).unwrap();
        }
        assert_eq!(pit.pit.extra_in_records(), 2);
        assert_eq!(expire(&mut pit, 1000), [name("/c")]);
        assert_eq!(pit.pit.extra_in_records(), 0);
        assert_eq!(pit.pit.upsert_in_record(c, 1, 0, 1000, None), Ok(()), "a gone entry takes nothing");
        assert_eq!(pit.pit.extra_in_records(), 0);
    }

    /// One entry holds at most [`MAX_IN_RECORDS`] records, however much room
    /// the PIT has: a further face is refused, a recorded one still refreshes
    /// its record, and one that leaves makes room for another.
    #[test]
    fn one_entry_holds_at_most_max_in_records() {
        let mut pit = Pcct::new(usize::MAX, 0, 0);
        let id = insert(&mut pit, "/a", false, false, 0);
        let faces = MAX_IN_RECORDS as FaceId;
        for face in 1..=faces {
            assert_eq!(pit.pit.upsert_in_record(id, face, face, 1000, None), Ok(()));
        }
        assert_eq!(pit.pit.upsert_in_record(id, faces + 1, 0, 1000, None), Err(InRecordRefused::EntryFull));
        assert_eq!(pit.pit.upsert_in_record(id, faces, 7, 2000, None), Ok(()), "a face with a record refreshes it");
        let e = pit.pit.get(id).unwrap();
        assert_eq!((e.in_records.len(), e.expiry_ms), (MAX_IN_RECORDS, 2000));
        assert_eq!(pit.pit.extra_in_records(), MAX_IN_RECORDS - IN_RECORDS_INLINE);
        assert!(pit.pit.remove_in_record(id, 1).is_some());
        assert_eq!(pit.pit.upsert_in_record(id, faces + 1, 0, 1000, None), Ok(()));
    }

    #[test]
    fn an_aggregated_interests_pit_token_is_kept_without_its_packet() {
        let mut pit = Pcct::new(4, 0, 0);
        let id = insert(&mut pit, "/a", false, false, 0);
        let packet = Bytes::from(vec![7u8; 8800]);
        pit.pit.upsert_in_record(id, 2, 1, 1000, Some(packet.slice(10..14))).unwrap();
        assert!(packet.is_unique(), "the record holds a copy of the token, not a view of its packet");
        let kept = pit.pit.get_mut(id).unwrap().in_record_mut(2).unwrap().pit_token.clone();
        assert_eq!(kept.as_deref(), Some(&[7u8; 4][..]));
    }

    fn expire(pit: &mut Pcct, now: u64) -> Vec<Name> {
        let mut out = Vec::new();
        pit.expire(now, &mut out);
        let mut names: Vec<Name> = out.into_iter().map(|e| e.name).collect();
        names.sort_by(|a, b| a.value().cmp(b.value()));
        names
    }

    #[test]
    fn entries_expire_by_timer_at_their_lifetime() {
        let mut pit = Pcct::new(8, 0, 1000);
        let mut i = interest(&name("/a"), false, false);
        i.lifetime_ms = Some(100);
        pit.find_or_insert(&i, 1000).unwrap();
        insert(&mut pit, "/b", false, false, 1000); // default lifetime 4000
        assert_eq!(pit.pit.get(pit.find(&name("/a"), false, false).unwrap()).unwrap().expiry_ms, 1100);
        assert!(pit.pit.next_deadline().is_some_and(|t| t <= 1100));
        assert_eq!(expire(&mut pit, 1099), Vec::<Name>::new());
        assert_eq!(expire(&mut pit, 1100), [name("/a")]);
        assert_eq!(pit.find(&name("/a"), false, false), None);
        assert_eq!(expire(&mut pit, 4999), Vec::<Name>::new());
        assert_eq!(expire(&mut pit, 5000), [name("/b")]);
        assert!(pit.pit.is_empty());
        assert_eq!(pit.pit.next_deadline(), None);
    }

    #[test]
    fn extended_lifetime_rearms_lazily_and_shortened_one_reschedules() {
        let mut pit = Pcct::new(8, 0, 0);
        let later = insert(&mut pit, "/later", false, false, 0);
        let sooner = insert(&mut pit, "/sooner", false, false, 0);
        pit.pit.get_mut(later).unwrap().upsert_in_record(1, 1, 9000, None);
        pit.pit.reschedule(later);
        pit.pit.get_mut(sooner).unwrap().upsert_in_record(1, 2, 500, None);
        pit.pit.reschedule(sooner);
        assert_eq!(expire(&mut pit, 500), [name("/sooner")]);
        assert_eq!(expire(&mut pit, 4000), Vec::<Name>::new(), "the old deadline passes without expiring");
        assert!(pit.pit.get(later).is_some());
        assert_eq!(expire(&mut pit, 8999), Vec::<Name>::new());
        assert_eq!(expire(&mut pit, 9000), [name("/later")]);
    }

    #[test]
    fn timers_are_armed_lazily_and_the_backlog_is_bounded() {
        let mut pit = Pcct::new(usize::MAX, 0, 0);
        let mut i = interest(&name("/late"), false, false);
        i.lifetime_ms = Some(100);
        pit.find_or_insert(&i, 0).unwrap();
        assert_eq!(pit.pit.next_deadline(), Some(100), "an unarmed entry still bounds the poll timeout");
        // Entries satisfied before any expire() never reach the wheel, and their
        // stale handles do not pile up.
        for n in 0..3 * ARM_BATCH {
            let id = insert(&mut pit, &format!("/n/{n}"), false, false, 0);
            pit.remove(id);
            assert!(pit.pit.unarmed.len() <= ARM_BATCH);
        }
        assert!(pit.pit.timers.len() <= 1, "only a still-pending entry was armed");
        assert_eq!(expire(&mut pit, 500), [name("/late")], "armed past its expiry, it fires at once");
        assert_eq!(pit.pit.next_deadline(), None);
    }

    #[test]
    fn removed_entries_never_expire() {
        let mut pit = Pcct::new(8, 0, 0);
        let a = insert(&mut pit, "/a", false, false, 0);
        pit.remove(a);
        let b = insert(&mut pit, "/b", false, false, 0);
        assert_eq!(expire(&mut pit, 10_000), [name("/b")]);
        assert!(pit.pit.get(b).is_none());
    }

    proptest! {
        /// `matches_for_data` returns exactly the entries whose Interest matches the
        /// Data by ndn-cxx's rule, through inserts and removals.
        #[test]
        fn matches_agree_with_reference(
            data_name in arb_name(4),
            content in 0u8..2,
            entries in proptest::collection::vec((arb_name(5), any::<bool>(), any::<bool>(), 0u8..6), 0..40),
            removals in proptest::collection::vec(any::<prop::sample::Index>(), 0..10),
        ) {
            let d = data(&data_name.to_string(), None, &[content]);
            let other = data(&data_name.to_string(), None, b"other");
            let mut pit = Pcct::new(usize::MAX, 0, 0);
            let mut live: Vec<(PitId, Interest)> = Vec::new();
            for (n, cbp, mbf, kind) in entries {
                // Some entries ask for a full name: this Data's, or a same-named other packet's.
                let n = match kind {
                    0 => d.full_name(),
                    1 => other.full_name(),
                    _ => n,
                };
                let i = interest(&n, cbp, mbf);
                let (id, new) = pit.find_or_insert(&i, 0).unwrap();
                if new {
                    live.push((id, i));
                }
            }
            for r in removals {
                if !live.is_empty() {
                    let (id, _) = live.remove(r.index(live.len()));
                    prop_assert!(pit.remove(id).is_some());
                }
            }
            let expect = sorted(live.iter().filter(|(_, i)| matches_data(i, &d) && (!i.must_be_fresh || d.freshness_ms.is_some_and(|f| f > 0))).map(|(id, _)| *id).collect());
            prop_assert_eq!(matches(&pit, &d), expect);
        }
    }
}
