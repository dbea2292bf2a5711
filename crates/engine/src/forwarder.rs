//! The forwarding pipeline. [`Forwarder::process_burst`] decodes a whole burst first,
//! then runs each packet through its pipeline, appending the packets to send to an
//! output vector the caller reuses; nothing here blocks, and the only clock read
//! is the optional timing of its own phases ([`Forwarder::time_phases`]).

use std::time::Instant;

use bytes::Bytes;
use smallvec::SmallVec;
use trajan_tables::{Ahead, CsKey, DeadNonceList, Fib, FibEntry, FibPrefix, FibSource, FibVariant, InRecordRefused, LpmTable, NameHasher, NextHop, Pcct, PitId, Probe, MAX_IN_RECORDS};
use trajan_wire::lp::{LpHeaders, LpPacket, CACHE_POLICY_NO_CACHE};
use trajan_wire::tlv::first_type;
use trajan_wire::types::{DATA, INTEREST};
use trajan_wire::{Data, Interest, NackReason, Name, WireError};

use crate::counters::ForwarderCounters;
use crate::faces::{FaceMeta, FaceTable, CONTENT_STORE_FACE};
use crate::measurements::{MeasureId, Measurements, NOT_MEASURED};
use crate::phases::{lap, PhaseNs};
use crate::strategy::{self, InterestDecision, NackDecision, StrategyKind};
use crate::FaceId;

/// Sizes and lifetimes of the engine's tables.
#[derive(Debug, Clone)]
pub struct EngineConfig {
    /// Content store capacity in packets (0 disables caching).
    pub cs_capacity: usize,
    /// Most pending Interests; beyond it new Interests are dropped and counted.
    pub pit_capacity: usize,
    /// Longest an Interest stays pending, whatever its InterestLifetime asks
    /// (a 64-bit number of milliseconds): without a bound, a sender could fill
    /// the PIT with entries that never expire, and no new Interest would pass
    /// again. The Interest goes upstream with its lifetime unchanged.
    pub max_lifetime_ms: u64,
    /// How long a satisfied or expired Interest's Nonce is remembered for loop detection.
    pub dead_nonce_lifetime_ms: u64,
    /// Most remembered dead Nonces.
    pub dead_nonce_capacity: usize,
    /// Seed for the Nonces the engine adds to Interests that lack one.
    pub seed: u64,
    /// The FIB's first LPM stage; pbf-exp unless comparing variants (Caesar §6.3).
    pub fib_variant: FibVariant,
    /// The producer regions this router is in (NFD's `tables.network_region`).
    /// A ForwardingHint leads an Interest to its producer's region; once there,
    /// the router must forward it by its name, which only routers inside the
    /// region can route, or a default route toward the hint's delegation would
    /// send it back out. An Interest is inside when one of its hint's first
    /// [`MAX_FORWARDING_HINTS`] delegations is a prefix of one of these names,
    /// NFD's test; it then loses its hint, as NFD strips it, so that the
    /// routers further in forward it by name too.
    pub network_regions: Vec<Name>,
}

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig {
            cs_capacity: 65536,
            pit_capacity: 1 << 20,
            max_lifetime_ms: 3_600_000,
            dead_nonce_lifetime_ms: 6000,
            dead_nonce_capacity: 1 << 16,
            seed: 0x7a1a_u64,
            fib_variant: FibVariant::default(),
            network_regions: Vec::new(),
        }
    }
}

/// One packet to send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outgoing {
    /// The face to send on.
    pub face: FaceId,
    /// The encoded packet, shared with the tables that keep it (no copy).
    pub pkt: Bytes,
}

/// A decoded packet of a burst. An Interest or Data lies in its [`Slots`] list,
/// at `slot` (a Nack's Interest in the Interest list too, so that no variant
/// holds a whole packet and the burst's list stays a few cache lines), having
/// taken its packet (an Interest's name holds it). `lp` indexes the burst's
/// list of link headers when the packet came in an LpPacket; a bare packet, the
/// common case, has none. Keeping the decoded packets and
/// the rare link fields out of line keeps `Parsed` small, so filling the burst's
/// list moves few bytes. `keys` are the name's, made once as the burst is decoded.
enum Parsed {
    Interest { slot: usize, lp: Option<usize>, keys: Keys },
    Data { slot: usize, lp: Option<usize>, keys: Keys },
    Nack { slot: usize, reason: NackReason },
}

/// The Interests and Data of a burst, each decoded in place into a slot kept
/// from burst to burst: the burst's `k`th Interest overwrites the `k`th Interest
/// slot. Nothing is built first and then copied in: a copy of a decoded packet,
/// read right after its fields were written one by one, stalls on store
/// forwarding, and so did pushing a placeholder to decode into (measured in
/// docs/PERFORMANCE.md). Slots grow to the largest burst and stay.
#[derive(Default)]
struct Slots {
    interests: Vec<Interest>,
    data: Vec<Data>,
    /// How many of each list the burst has filled.
    used: (usize, usize),
}

impl Slots {
    /// Decodes an Interest into the burst's next Interest slot and returns the
    /// slot; a packet that fails to decode takes none. Its name takes the
    /// packet (which a new PIT entry forwards from there).
    #[inline(always)]
    fn decode_interest(&mut self, wire: Bytes) -> Result<usize, WireError> {
        let k = self.used.0;
        if k == self.interests.len() {
            self.interests.push(Interest::new(Name::root()));
        }
        self.interests[k].decode_into(wire)?;
        self.used.0 += 1;
        Ok(k)
    }

    /// [`Slots::decode_interest`] for a Data, which takes its buffer.
    #[inline(always)]
    fn decode_data(&mut self, wire: Bytes) -> Result<usize, WireError> {
        let k = self.used.1;
        if k == self.data.len() {
            self.data.push(Data::default());
        }
        self.data[k].decode_into(wire)?;
        self.used.1 += 1;
        Ok(k)
    }

    /// Ends the burst: the filled slots let go of the buffers their packets
    /// viewed (an idle forwarder pins none) and are free again.
    ///
    /// An empty name buffer here holds no packet (a packet the tables or a
    /// downstream took left the static empty one behind), so it is left as it
    /// is: the common Interest's name went to its PIT entry, the common Data's
    /// packet to its downstream, and dropping their static replacements was a
    /// call each.
    fn release(&mut self) {
        for i in &mut self.interests[..self.used.0] {
            if !i.name.buffer().is_empty() {
                i.name = Name::root();
            }
            i.forwarding_hint = None;
            i.params_tail = None;
        }
        for d in &mut self.data[..self.used.1] {
            if !d.wire().is_empty() {
                d.take_wire();
            }
            d.final_block_id = None;
        }
        self.used = (0, 0);
    }
}

/// A received name's hash by the forwarder's [`NameHasher`] (the PCCT's and the
/// dead nonce list's key) and, for a Data, its content-store key (with the
/// parent it registers): the name is hashed once.
#[derive(Clone, Copy, Default)]
struct Keys {
    name: u64,
    cs: CsKey,
}

/// The link headers of a bare packet.
static NO_HEADERS: LpHeaders = LpHeaders {
    pit_token: None,
    nack: None,
    incoming_face_id: None,
    next_hop_face_id: None,
    cache_policy: None,
    congestion_mark: None,
};

/// A burst prefetches CS answers when at least one Interest in this many of
/// the previous burst's was answered from the CS.
const HIT_SHARE: u64 = 8;

/// Starts loading the lines the burst's CS hits will read
/// ([`Pcct::prefetch_answer`]), in two passes over its Interests: their
/// cached entries, then (those having arrived meanwhile) what the entries
/// point to. A hit reads them one after the other (entry, then the packet's
/// name and the entry's recency neighbours), so without this each of those
/// misses stalls the probe in turn: a hit took ≈ 450 ns, more than a whole
/// exchange that misses (docs/PERFORMANCE.md). Always inlined: a burst that
/// does not run it then pays one branch, where the mere presence of a call
/// (never made in the worst case) cost 15 instructions per exchange in how
/// the packet loop's registers were allocated.
#[inline(always)]
fn prefetch_answers(pcct: &Pcct, parsed: &[(usize, Parsed)]) {
    for ahead in [Ahead::Entry, Ahead::Packet] {
        for (_, p) in parsed {
            if let Parsed::Interest { keys, .. } = p {
                pcct.prefetch_answer(keys.name, ahead);
            }
        }
    }
}

/// Delegations of a ForwardingHint looked up in the FIB, in order, and
/// compared with the network regions; the rest are ignored, as NDN-DPDK does:
/// a hint of a few thousand empty names fits in one packet and would cost as
/// many lookups.
pub const MAX_FORWARDING_HINTS: usize = 4;

/// Downstreams (face and PIT token) one Data is sent to at most. Each is sent
/// a copy (wrapped with its PIT token), all made before any is sent, and one
/// Data may satisfy many entries (its name's, and those of its prefixes with
/// CanBePrefix), each with up to [`MAX_IN_RECORDS`] downstreams. Past this many
/// the copies would be dropped anyway after costing their memory (up to 8,800
/// bytes each): a router worker's outbound ring holds 8,192 packets, and the
/// I/O thread's send queues are bounded in bytes. The rest are counted
/// ([`ForwarderCounters::downstreams_cut`]) and their entries satisfied all the
/// same. The Nacks of an Interest given up (one per in-record of one entry)
/// stay within it too, as [`MAX_IN_RECORDS`] is smaller.
pub const MAX_DOWNSTREAMS: usize = 8192;

const _: () = assert!(MAX_IN_RECORDS <= MAX_DOWNSTREAMS, "a given-up Interest's Nacks, one per in-record, are bounded");

/// Most Interests whose FIB lookups are pipelined together (the burst size the
/// design guide asks for; a longer input is looked up in chunks of this many).
const BURST: usize = 64;

/// The answers of a burst's FIB lookups, in buffers kept from burst to burst
/// (a small vector per answer, in a small vector per burst, spent ≈ 60
/// instructions per exchange checking where each one's items were).
#[derive(Default)]
struct Lookups {
    /// The next hops of every answer, one answer's after the other's.
    hops: Vec<NextHop>,
    /// Where each answer's next hops end in `hops` (its start is the
    /// previous one's end), and the components of the FIB prefix that
    /// matched (for the dynamic strategy's measurements).
    ends: Vec<(usize, usize)>,
}

/// An Interest that passed the PIT and waits for its FIB lookup (of its PIT
/// entry's name, which the received Interest gave up to the entry), with the
/// Nonce and HopLimit it goes upstream with: a later Interest of the burst
/// may aggregate into the entry first, and what is sent on this one's behalf
/// must still be this one (an upstream sent its own Interest back sees a loop).
struct Waiting {
    id: PitId,
    ingress: FaceId,
    ingress_local: bool,
    nonce: u32,
    hop_limit: Option<u8>,
}

/// The forwarder: tables, strategies and faces of one worker. `F` is how it reaches
/// the FIB: its own [`Fib`] by default, or a [`trajan_tables::FibReader`] on a
/// replica shared by several workers (updated by the control thread, read here
/// without locks).
pub struct Forwarder<F: FibSource = Fib> {
    /// Where Interests find their next hops.
    pub fib: F,
    /// The PIT and the content store, sharing one index.
    pub pcct: Pcct,
    /// Nonces of Interests recently satisfied or expired, to catch looping
    /// Interests whose PIT entry is already gone.
    pub dead_nonces: DeadNonceList,
    /// The strategy choice per namespace (`strategy-choice`), by longest prefix.
    pub strategies: LpmTable<StrategyKind>,
    /// What the dynamic strategy learned of its upstreams (empty while no
    /// Interest went out under it).
    pub measurements: Measurements,
    /// The faces packets arrive on and leave by, with their counters and flags.
    pub faces: FaceTable,
    /// The forwarder's totals, for `status/general`.
    pub counters: ForwarderCounters,
    /// [`EngineConfig::max_lifetime_ms`].
    max_lifetime_ms: u64,
    /// [`EngineConfig::network_regions`].
    regions: Box<[Name]>,
    /// The hash of every exact-match table (PCCT, dead nonce list).
    names: NameHasher,
    rng: fastrand::Rng,
    /// The burst's decoded packets, each with its index in the input.
    parsed: Vec<(usize, Parsed)>,
    slots: Slots,
    /// The headers of the LpPackets the burst's Interests and Data came in
    /// (their fragments went to the decoded packets).
    linked: Vec<LpHeaders>,
    /// The burst's Interests waiting for their FIB lookups.
    waiting: Vec<Waiting>,
    /// Where those lookups put their answers.
    lookups: Lookups,
    /// The PIT entries a Data satisfied.
    matches: Vec<PitId>,
    /// The downstreams a Data goes to (face and PIT token), each once.
    downstreams: Vec<(FaceId, Option<Bytes>)>,
    expired: Vec<trajan_tables::PitEntry>,
    localhost: Name,
    localhop: Name,
    /// Time spent per phase while [`Forwarder::time_phases`] is on.
    phases: Option<PhaseNs>,
    /// Whether the last burst with Interests had at least one in [`HIT_SHARE`]
    /// answered from the CS: then the next burst prefetches their answers
    /// ([`prefetch_answers`]). A burst that misses skips that work.
    cache_answering: bool,
}

impl Forwarder {
    /// A forwarder with empty tables, its own FIB, and best-route as the default strategy.
    pub fn new(cfg: &EngineConfig, now_ms: u64) -> Self {
        Forwarder::with_fib(cfg, now_ms, Fib::with_capacity(cfg.fib_variant, 0))
    }
}

impl<F: FibSource> Forwarder<F> {
    /// A forwarder with empty tables but `fib`, and best-route as the default strategy.
    /// (`cfg.fib_variant` is the variant of a FIB the forwarder makes itself.)
    pub fn with_fib(cfg: &EngineConfig, now_ms: u64, fib: F) -> Self {
        let mut strategies = LpmTable::new();
        strategies.insert(&Name::root(), StrategyKind::BestRoute);
        let names = NameHasher::new();
        Forwarder {
            fib,
            pcct: Pcct::with_hasher(cfg.pit_capacity, cfg.cs_capacity, now_ms, names.clone()),
            dead_nonces: DeadNonceList::new(cfg.dead_nonce_lifetime_ms, cfg.dead_nonce_capacity),
            strategies,
            measurements: Measurements::default(),
            faces: FaceTable::default(),
            counters: ForwarderCounters::default(),
            max_lifetime_ms: cfg.max_lifetime_ms,
            regions: cfg.network_regions.clone().into_boxed_slice(),
            names,
            rng: fastrand::Rng::with_seed(cfg.seed),
            parsed: Vec::with_capacity(64),
            slots: Slots::default(),
            linked: Vec::new(),
            waiting: Vec::with_capacity(BURST),
            lookups: Lookups::default(),
            matches: Vec::new(),
            downstreams: Vec::new(),
            expired: Vec::new(),
            localhost: "/localhost".parse().expect("static name"),
            localhop: "/localhop".parse().expect("static name"),
            phases: None,
            cache_answering: false,
        }
    }

    /// Turns the timing of the pipeline's phases on (from zero) or off. Off by
    /// default: when on, each burst reads the monotonic clock a few times (at
    /// phase boundaries, never per packet), which a benchmark's headline figure
    /// should not include.
    pub fn time_phases(&mut self, on: bool) {
        self.phases = on.then(PhaseNs::default);
    }

    /// Replaces the network regions ([`EngineConfig::network_regions`]), so
    /// that a reload of the configuration moves the router into or out of a
    /// region without the restart that would empty its PIT and CS. Only
    /// Interests that arrive from now on are compared with the new regions: a
    /// pending one keeps the hint it was entered with, or its lack.
    pub fn set_network_regions(&mut self, regions: Vec<Name>) {
        self.regions = regions.into_boxed_slice();
    }

    /// The network regions this router is in, for a control thread to hand
    /// on to the workers it keeps in step with it.
    pub fn network_regions(&self) -> &[Name] {
        &self.regions
    }

    /// The time spent in each phase since [`Forwarder::time_phases`] turned
    /// timing on; `None` while it is off.
    pub fn phase_ns(&self) -> Option<PhaseNs> {
        self.phases
    }

    /// Makes a face usable for forwarding.
    pub fn add_face(&mut self, id: FaceId, meta: FaceMeta) {
        self.faces.insert(id, meta);
    }

    /// Forgets a face and every route through it. Pending Interests from it
    /// simply expire; the strategies take its out-records as never to be
    /// answered (NFD deletes them), without a walk over the PIT here.
    pub fn remove_face(&mut self, id: FaceId) {
        self.faces.remove(id);
        self.fib.face_removed(id);
    }

    /// When [`Forwarder::tick`] next has work, for the I/O loop's poll timeout.
    pub fn next_deadline(&self) -> Option<u64> {
        self.pcct.pit.next_deadline()
    }

    /// Expires pending Interests whose lifetime ended.
    pub fn tick(&mut self, now_ms: u64) {
        let mut clock = self.phases.is_some().then(Instant::now);
        let mut expired = std::mem::take(&mut self.expired);
        self.pcct.expire(now_ms, &mut expired);
        for entry in expired.drain(..) {
            if !entry.satisfied {
                self.counters.unsatisfied_interests += 1;
            }
            settle(&mut self.measurements, &entry);
            remember_nonces(&mut self.dead_nonces, &self.names, &entry, now_ms);
        }
        self.expired = expired;
        self.measurements.sweep(now_ms);
        if let (Some(t), Some(p)) = (clock.as_mut(), &mut self.phases) {
            p.timers += lap(t);
        }
    }

    /// Processes a burst of received packets, appending what to send to `out`.
    ///
    /// The engine takes the bare packets out of `input`, leaving them empty: a
    /// Data (cached, sent on) and an Interest (its name and encoding recorded
    /// in its PIT entry, sent upstream) pass into the tables without a
    /// reference count of their own, one atomic increment and decrement less
    /// per packet. (Of an LpPacket it takes the fragment, a view; the caller
    /// keeps the rest.)
    pub fn process_burst(&mut self, now_ms: u64, input: &mut [(FaceId, Bytes)], out: &mut Vec<Outgoing>) {
        let mut clock = self.phases.is_some().then(Instant::now);
        let mut parsed = std::mem::take(&mut self.parsed);
        let mut slots = std::mem::take(&mut self.slots);
        let mut linked = std::mem::take(&mut self.linked);
        parsed.clear();
        linked.clear();
        // Hash the name once for every table, as the packet is decoded. The
        // PCCT's index is the table most likely to miss in cache (it holds the
        // most names): start its loads now, to arrive while the packets before
        // this one are processed.
        let (names, pcct) = (&self.names, &self.pcct);
        let keyed = |p: &mut Parsed, slots: &Slots| match p {
            Parsed::Interest { slot, keys, .. } => {
                keys.name = names.full(&slots.interests[*slot].name);
                pcct.prefetch(keys.name);
            }
            Parsed::Data { slot, keys, .. } => {
                let data = &slots.data[*slot];
                let key = names.key(data.name());
                *keys = Keys { name: key.full, cs: pcct.cs.prefetch_insert(data.name(), &key) };
            }
            Parsed::Nack { .. } => {}
        };
        for (at, (face, pkt)) in input.iter_mut().enumerate() {
            // Asked only of an LpPacket's Interest with a NextHopFaceId.
            let faces = &self.faces;
            let local_fields = || faces.get(*face).is_some_and(|m| m.local_fields);
            // A packet from a face the forwarder does not know is counted
            // nowhere, malformed or not (its face's other packets are ignored).
            if decode(at, pkt, &mut parsed, &mut slots, &mut linked, &keyed, local_fields).is_err() {
                if let Some(f) = self.faces.get_mut(*face) {
                    f.counters.malformed += 1;
                    self.counters.malformed += 1;
                }
            }
        }
        // The FIB bursts run from the packet loop below time themselves; what
        // they had timed so far is kept to take their share out of the loop's.
        let decoded = clock.as_mut().map(|t| (lap(t), self.phases.map_or(0, |p| p.fib + p.forward)));
        // Interests that passed the PIT wait here for their FIB lookups, which run
        // as one pipelined burst before any later Data or Nack is processed, so
        // packets still take effect in arrival order.
        let mut waiting = std::mem::take(&mut self.waiting);
        let (hits_before, interests_before) = (self.counters.cs_hits, self.counters.packets.in_interests);
        if self.cache_answering {
            prefetch_answers(&self.pcct, &parsed);
        }
        for (at, p) in parsed.iter_mut() {
            let face = input[*at].0;
            match p {
                Parsed::Interest { slot, lp, keys } => {
                    let interest = &mut slots.interests[*slot];
                    let lp = lp.map_or(&NO_HEADERS, |k| &linked[k]);
                    if let Some(w) = self.on_interest(now_ms, face, interest, lp, *keys, out) {
                        waiting.push(w);
                        if waiting.len() == BURST {
                            self.forward_waiting(now_ms, &mut waiting, out);
                        }
                    }
                }
                Parsed::Data { slot, lp, keys } => {
                    self.forward_waiting(now_ms, &mut waiting, out);
                    let lp = lp.map_or(&NO_HEADERS, |k| &linked[k]);
                    self.on_data(now_ms, face, &mut slots.data[*slot], lp, *keys, out)
                }
                Parsed::Nack { slot, reason } => {
                    self.forward_waiting(now_ms, &mut waiting, out);
                    self.on_nack(now_ms, face, &slots.interests[*slot], *reason, out)
                }
            }
        }
        self.forward_waiting(now_ms, &mut waiting, out);
        self.waiting = waiting;
        let interests = self.counters.packets.in_interests - interests_before;
        if interests > 0 {
            self.cache_answering = (self.counters.cs_hits - hits_before) * HIT_SHARE >= interests;
        }
        parsed.clear();
        slots.release();
        linked.clear();
        self.parsed = parsed;
        self.slots = slots;
        self.linked = linked;
        if let (Some(t), Some((decode, fib_before)), Some(p)) = (clock.as_mut(), decoded, &mut self.phases) {
            // The packets' own pipelines: the loop's time less the FIB bursts
            // run from inside it (timed by `forward_waiting`).
            let inner = (p.fib + p.forward) - fib_before;
            p.decode += decode;
            p.packets += lap(t).saturating_sub(inner);
        }
    }

    /// Looks up the FIB for every waiting Interest in one pipelined burst
    /// ([`Fib::lpm_burst`]: the cache misses of several lookups overlap), then lets
    /// the strategy forward each, in arrival order.
    fn forward_waiting(&mut self, now: u64, waiting: &mut Vec<Waiting>, out: &mut Vec<Outgoing>) {
        if waiting.is_empty() {
            return;
        }
        let mut clock = self.phases.is_some().then(Instant::now);
        let Lookups { mut hops, mut ends } = std::mem::take(&mut self.lookups);
        hops.clear();
        ends.clear();
        // An entry gone since (see `forward_new`) is looked up as the root: its
        // answer is not used.
        let root = Name::root();
        let pit = &self.pcct.pit;
        let names: SmallVec<[&Name; BURST]> = waiting.iter().map(|w| pit.get(w.id).map_or(&root, |e| e.name())).collect();
        // Answers come in order, one per name. Without a FIB (a shared one whose
        // writer stopped) nothing has a route.
        match self.fib.view() {
            Some(fib) => fib.lpm_burst(&names, |i, hit| {
                debug_assert_eq!(i, ends.len());
                // One next hop, the common route, is pushed: copying a slice
                // of unknown length was a call to memcpy per Interest.
                match hit.as_ref().map(|(_, e)| e.nexthops.as_slice()) {
                    Some(&[one]) => hops.push(one),
                    Some(many) => hops.extend_from_slice(many),
                    None => {}
                }
                ends.push((hops.len(), hit.map_or(0, |(p, _)| p.len())));
            }),
            None => ends.resize(names.len(), (0, 0)),
        }
        drop(names);
        let looked_up = clock.as_mut().map(lap);
        let mut start = 0;
        for (w, &(end, matched)) in waiting.drain(..).zip(&ends) {
            self.forward_new(now, &w, &hops[start..end], MeasureAt::NamePrefix(matched), out);
            start = end;
        }
        self.lookups = Lookups { hops, ends };
        if let (Some(t), Some(fib), Some(p)) = (clock.as_mut(), looked_up, &mut self.phases) {
            p.fib += fib;
            p.forward += lap(t);
        }
    }

    /// The Interest pipeline up to the FIB: scope, HopLimit, loop checks, then one
    /// PIT probe that aggregates, answers from the CS or creates the entry. An
    /// Interest still to be forwarded by name is returned to wait for its FIB lookup.
    fn on_interest(
        &mut self,
        now: u64,
        ingress: FaceId,
        received: &mut Interest,
        lp: &LpHeaders,
        keys: Keys,
        out: &mut Vec<Outgoing>,
    ) -> Option<Waiting> {
        // A packet from a face no longer in the table is ignored, uncounted.
        let meta = self.faces.get_mut(ingress)?;
        meta.counters.packets.in_interests += 1;
        self.counters.packets.in_interests += 1;
        let (local, local_fields, p2p) = (meta.local, meta.local_fields, meta.point_to_point);

        if !local && self.localhost.is_prefix_of(&received.name) {
            self.counters.scope_violations += 1;
            return None;
        }
        // The Interest as it goes upstream: the received one unless the HopLimit is
        // decremented, a Nonce added or the ForwardingHint stripped, which needs a
        // copy and a new encoding.
        // As in NFD, whatever the face: a local application's HopLimit counts
        // too, and one that reaches 0 may still go to local faces only.
        let decrement = received.hop_limit;
        if decrement == Some(0) {
            self.counters.hop_limit_drops += 1;
            return None;
        }
        // Inside its producer's region the Interest loses its ForwardingHint
        // before it reaches the PIT, where NFD strips it, and so goes by name.
        // Interests without a hint pay this one test: the region test in the
        // hint's own branch below, after the PIT, cost them more (12 to 25
        // instructions per exchange in the worst case, against 7.7 here), from
        // how the packet loop's registers were allocated around its call.
        let stripped = received.forwarding_hint.is_some() && self.reached_region(received);
        let mut modified;
        let reencode = decrement.is_some() || received.nonce.is_none() || stripped;
        let interest = if reencode {
            let mut i = received.clone();
            i.hop_limit = decrement.map(|h| h - 1).or(i.hop_limit);
            i.nonce = Some(i.nonce.unwrap_or_else(|| self.rng.u32(..)));
            modified = i;
            &mut modified
        } else {
            received
        };
        let nonce = interest.nonce.expect("set above");
        if self.dead_nonces.contains(keys.name, nonce, now) {
            self.on_loop(ingress, interest, lp.pit_token.clone(), out);
            return None;
        }

        // One PCCT probe: an existing entry aggregates; otherwise the CS may
        // answer, and only a miss there creates the entry, which takes the
        // Interest's name (read through the entry from here on).
        let (id, inserted) = match self.pcct.probe_interest(interest, keys.name, now) {
            Probe::Found(id) => (id, false),
            Probe::Inserted(id) => (id, true),
            Probe::Cached(pkt) => {
                self.counters.cs_hits += 1;
                let from = Origin { face: CONTENT_STORE_FACE, congestion_mark: None };
                send_data(&mut self.faces, &mut self.counters, ingress, pkt, lp.pit_token.clone(), from, out);
                return None;
            }
            Probe::Full => {
                self.counters.pit_full += 1;
                return None;
            }
        };
        let expiry = now.saturating_add(interest.lifetime().min(self.max_lifetime_ms));
        // A new entry has no records: no Nonce of it can have looped.
        let entry = if inserted {
            let entry = self.pcct.pit.get_mut(id).expect("just inserted");
            entry.add_first_in_record(ingress, nonce, expiry, lp.pit_token.clone());
            entry
        } else {
            if self.pcct.pit.get(id).expect("just found").nonce_loops(nonce, ingress, p2p) {
                self.on_loop(ingress, interest, lp.pit_token.clone(), out);
                return None;
            }
            if let Err(refused) = self.pcct.pit.upsert_in_record(id, ingress, nonce, expiry, lp.pit_token.clone()) {
                *match refused {
                    InRecordRefused::PitFull => &mut self.counters.pit_full,
                    InRecordRefused::EntryFull => &mut self.counters.in_records_full,
                } += 1;
                return None;
            }
            self.pcct.pit.get_mut(id).expect("just found")
        };
        // The entry keeps the encoding that goes upstream (the received one
        // unless modified above) and every send reads it from there. The
        // received packet is held by the Interest's name: a new entry took
        // both, and an existing one takes the packet from the name. A modified
        // Interest whose name the new entry took gets a reference to it back
        // for its encoding (a rare path: a CS hit encodes nothing). Either
        // way the entry's name moves into the packet it keeps, so that it
        // holds that one alone, not also the packet its name came in.
        if reencode {
            if inserted {
                interest.name = entry.name().clone();
            }
            let (wire, name_at) = interest.encode_locating_name();
            entry.set_upstream_at(wire, name_at, nonce, interest.hop_limit);
        } else if inserted {
            entry.set_upstream_received(nonce, interest.hop_limit);
        } else {
            let name_at = interest.name.range_in_buffer().start;
            entry.set_upstream_at(interest.name.take_buffer(), name_at, nonce, interest.hop_limit);
        }
        // A new entry's in-record expires when the entry was made to (the
        // Interest's lifetime from now): its timer needs nothing more.
        debug_assert!(!inserted || entry.expiry_ms == expiry);
        if !inserted {
            self.pcct.pit.reschedule(id);
        }

        // A local application may pin the next hop (NFD's NextHopFaceId). An
        // id no face has (one past 32 bits included, not cut down to another
        // face's) sends it nowhere.
        if let (true, Some(nh)) = (local_fields, lp.next_hop_face_id) {
            if let Some(face) = FaceId::try_from(nh).ok().filter(|f| self.faces.get(*f).is_some() && *f != ingress) {
                self.send_interest(now, id, ingress, face, NOT_MEASURED, out);
            }
            return None;
        }
        let waiting = Waiting { id, ingress, ingress_local: local, nonce, hop_limit: interest.hop_limit };
        if let Some(hint) = &interest.forwarding_hint {
            let name = self.pcct.pit.get(id).expect("present").name();
            let kind = self.strategy_for(name);
            let view = self.fib.view();
            let found = view.as_deref().and_then(|fib| route(fib, Some(hint), name));
            let nexthops: SmallVec<[NextHop; 4]> = found.map(|(_, e)| e.nexthops.clone()).unwrap_or_default();
            // The dynamic strategy counts it under the prefix that gave its
            // next hops: the hint's (a producer region), not its name's.
            let measure = match found {
                Some((prefix, _)) if kind == StrategyKind::Dynamic => self.measurements.entry(prefix.value(), now),
                _ => NOT_MEASURED,
            };
            drop(view);
            self.forward_new(now, &waiting, &nexthops, MeasureAt::Hint(kind, measure), out);
            return None;
        }
        Some(waiting)
    }

    /// Asks the strategy where a PIT entry's Interest goes and sends it there,
    /// counted by the dynamic strategy where `at` says.
    ///
    /// Always inlined, with the strategy's decision and the send, as the
    /// profile-guided build does: three calls per Interest cost ≈ 90
    /// instructions per exchange, and the worst case ran 3.9 % faster
    /// without them (docs/PERFORMANCE.md).
    #[inline(always)]
    fn forward_new(&mut self, now: u64, w: &Waiting, nexthops: &[NextHop], at: MeasureAt, out: &mut Vec<Outgoing>) {
        let Waiting { id, ingress, ingress_local, nonce, hop_limit } = *w;
        // Gone when an earlier Interest of the same burst, from the same face, was
        // Nacked NoRoute and took the entry with it; that Nack answered this one too.
        let Some(entry) = self.pcct.pit.get(id) else { return };
        let kind = match at {
            MeasureAt::NamePrefix(_) => self.strategy_for(entry.name()),
            MeasureAt::Hint(kind, _) => kind,
        };
        let local_only = self.local_only(entry.name(), ingress_local);
        let measure = match kind {
            StrategyKind::Dynamic => match at {
                MeasureAt::NamePrefix(j) => self.measurements.entry(entry.name().prefix_value(j), now),
                MeasureAt::Hint(_, id) => id,
            },
            _ => NOT_MEASURED,
        };
        let faces = &self.faces;
        let usable = |f: FaceId| f != ingress && faces.get(f).is_some_and(|m| m.local || !local_only);
        let (measurements, rng) = (&mut self.measurements, &mut self.rng);
        let pick = |candidates: &[FaceId]| measurements.choose(measure, candidates, rng.f32());
        let answers = |f: FaceId| f != ingress && faces.get(f).is_some();
        let decision = strategy::on_interest(kind, entry, nexthops, now, usable, answers, pick);
        // The entry's encoding is the latest Interest aggregated into it; here
        // another than this one (a later Interest of the burst, or one since
        // this was forwarded). Sent on, it must not go back to the face it came
        // from (that face's own Nonce: a loop) nor stand for a face no longer
        // waiting, and a Nack must carry this Interest's Nonce: then this one
        // is rebuilt (a rare path; aggregation as such never takes it). The
        // encoding is this Interest only if its face's in-record still holds
        // its Nonce: another face may have sent the same Nonce since.
        let own = entry.nonce == nonce && entry.in_records.iter().any(|r| r.face == ingress && r.nonce == nonce);
        if !own && !matches!(decision, InterestDecision::Suppress) {
            let from = |f: FaceId| entry.in_records.iter().any(|r| r.face == f && r.nonce == entry.nonce);
            let back = match &decision {
                InterestDecision::ForwardTo(f) => from(*f),
                InterestDecision::Forward(targets) | InterestDecision::Retransmit(targets) => targets.iter().any(|f| from(*f)),
                InterestDecision::NoRoute => true,
                InterestDecision::Suppress => false,
            };
            if back || orphaned(entry) {
                rebuild_upstream(self.pcct.pit.get_mut(id).expect("present"), nonce, hop_limit);
            }
        }
        match decision {
            InterestDecision::ForwardTo(face) => self.send_interest(now, id, ingress, face, measure, out),
            InterestDecision::Forward(targets) => {
                for face in targets {
                    self.send_interest(now, id, ingress, face, measure, out);
                }
            }
            InterestDecision::Retransmit(targets) => self.retransmit(now, id, ingress, kind, &targets, measure, out),
            InterestDecision::Suppress => {}
            InterestDecision::NoRoute => {
                self.counters.no_route += 1;
                let token = self.pcct.pit.remove_in_record(id, ingress).and_then(|r| r.pit_token);
                let entry = self.pcct.pit.get(id).expect("present");
                let wire = entry.wire().clone();
                if entry.in_records.is_empty() {
                    settle(&mut self.measurements, entry);
                    self.pcct.discard(id);
                } else {
                    self.pcct.pit.reschedule(id);
                }
                self.send_nack_wire(ingress, &wire, NackReason::NoRoute, token, out);
            }
        }
    }

    /// Sends a retransmission the strategy let through, backing the entry off
    /// for the next one ([`strategy::retransmitted`]). Out of line: the new
    /// Interest's path, which [`Forwarder::forward_new`] inlines into the
    /// packet loop, never takes it.
    #[cold]
    #[inline(never)]
    #[allow(clippy::too_many_arguments)] // forward_new's, passed on as they are
    fn retransmit(&mut self, now: u64, id: PitId, ingress: FaceId, kind: StrategyKind, targets: &[FaceId], measure: MeasureId, out: &mut Vec<Outgoing>) {
        strategy::retransmitted(kind, self.pcct.pit.get_mut(id).expect("present"), targets);
        for &face in targets {
            self.send_interest(now, id, ingress, face, measure, out);
        }
    }

    /// Whether an Interest named `name`, from a local face or not, may leave
    /// by local faces only (NFD's wouldViolateScope): a `/localhost` Interest
    /// (only a local face's is accepted) always, a `/localhop` one from a
    /// non-local face too. Neither a default route nor a strategy's retry
    /// after a Nack may carry a local app's `/localhost` Interest onto the
    /// network. (A local app's NextHopFaceId is obeyed without it, as in NFD.)
    fn local_only(&self, name: &Name, from_local: bool) -> bool {
        if from_local { self.localhost.is_prefix_of(name) } else { self.localhop.is_prefix_of(name) }
    }

    /// The next hops for an Interest named `name`: those of its [`route`].
    fn fib_nexthops(&self, hint: Option<&Bytes>, name: &Name) -> SmallVec<[NextHop; 4]> {
        let Some(fib) = self.fib.view() else { return SmallVec::new() };
        route(&fib, hint, name).map(|(_, e)| e.nexthops.clone()).unwrap_or_default()
    }

    /// Whether `interest`'s ForwardingHint says it has reached its
    /// producer's region ([`EngineConfig::network_regions`]), in which case
    /// the hint is taken off: the Interest is then re-encoded without it, so
    /// that its PIT entry sends it by name, a pinned next hop and retries
    /// after a Nack included. Out of line: only a hinted Interest comes here.
    #[cold]
    #[inline(never)]
    fn reached_region(&self, interest: &mut Interest) -> bool {
        // A router in no region (the default) reads no delegation here.
        let Some(hint) = interest.forwarding_hint.as_ref().filter(|_| !self.regions.is_empty()) else { return false };
        let inside = delegations(hint).any(|d| self.regions.iter().any(|r| d.is_prefix_of(r)));
        if inside {
            interest.forwarding_hint = None;
        }
        inside
    }

    fn strategy_for(&self, name: &Name) -> StrategyKind {
        self.strategies.lpm(name).map_or(StrategyKind::BestRoute, |(_, k)| *k)
    }

    /// Sends a PIT entry's Interest (its upstream encoding) on `face`, recording
    /// the out-record, counted as pending in `measure` (see [`Measurements`]).
    /// `ingress` is reported as IncomingFaceId to faces with local fields.
    /// Always inlined (see [`Forwarder::forward_new`]).
    #[inline(always)]
    fn send_interest(&mut self, now: u64, id: PitId, ingress: FaceId, face: FaceId, measure: MeasureId, out: &mut Vec<Outgoing>) {
        let Some(entry) = self.pcct.pit.get_mut(id) else { return };
        let nonce = entry.nonce;
        if entry.hop_limit == Some(0) && !self.faces.get(face).is_some_and(|m| m.local) {
            self.counters.hop_limit_drops += 1;
            return;
        }
        if !self.measurements.is_empty() {
            count_sent(&mut self.measurements, entry, face, measure);
        }
        entry.upsert_out_record(face, nonce, now, measure);
        let Some(meta) = self.faces.get_mut(face) else { return };
        meta.counters.packets.out_interests += 1;
        self.counters.packets.out_interests += 1;
        let pkt = if meta.local_fields {
            wrapped(entry.wire(), &LpHeaders { incoming_face_id: Some(ingress as u64), ..Default::default() })
        } else {
            entry.wire().clone()
        };
        out.push(Outgoing { face, pkt });
    }

    /// Encodes the Interest only for a face that takes Nacks (see
    /// [`Forwarder::send_nack_wire`]): duplicates are common on a shared
    /// medium, and each would otherwise be encoded to be dropped.
    fn send_nack(&mut self, face: FaceId, interest: &Interest, reason: NackReason, pit_token: Option<Bytes>, out: &mut Vec<Outgoing>) {
        if self.faces.get(face).is_some_and(|m| m.point_to_point) {
            self.send_nack_wire(face, &interest.encode(), reason, pit_token, out);
        }
    }

    /// [`Forwarder::send_nack`] of an Interest already encoded.
    /// A multi-access face gets none (as in NFD): a Nack answers one
    /// downstream, and on a shared medium every node hears it.
    fn send_nack_wire(&mut self, face: FaceId, interest: &Bytes, reason: NackReason, pit_token: Option<Bytes>, out: &mut Vec<Outgoing>) {
        let Some(meta) = self.faces.get_mut(face).filter(|m| m.point_to_point) else { return };
        meta.counters.packets.out_nacks += 1;
        self.counters.packets.out_nacks += 1;
        let headers = LpHeaders { pit_token, nack: Some(reason), ..Default::default() };
        out.push(Outgoing { face, pkt: LpPacket::wrap(interest, &headers) });
    }

    fn on_loop(&mut self, ingress: FaceId, interest: &Interest, pit_token: Option<Bytes>, out: &mut Vec<Outgoing>) {
        self.counters.loops += 1;
        self.send_nack(ingress, interest, NackReason::Duplicate, pit_token, out);
    }

    fn on_data(&mut self, now: u64, ingress: FaceId, data: &mut Data, lp: &LpHeaders, keys: Keys, out: &mut Vec<Outgoing>) {
        let Some(meta) = self.faces.get_mut(ingress) else { return };
        meta.counters.packets.in_data += 1;
        self.counters.packets.in_data += 1;
        if !meta.local && self.localhost.is_prefix_of(data.name()) {
            self.counters.scope_violations += 1;
            return;
        }
        let cache = lp.cache_policy != Some(CACHE_POLICY_NO_CACHE);
        // The burst buffers are borrowed field by field, not taken out and put
        // back (two vectors moved twice per Data cost 17 instructions).
        let Forwarder { pcct, matches, downstreams: sent, counters, faces, dead_nonces, names, measurements, .. } = self;
        matches.clear();
        pcct.satisfy(data, keys.name, keys.cs, cache, now, matches);
        if matches.is_empty() {
            counters.unsolicited_data += 1;
            return;
        }
        // NFD's rule: a satisfied Interest's Nonces need the dead-nonce list only when
        // a looping copy could not be answered from the CS instead, i.e. with
        // MustBeFresh and Data that goes stale before the list forgets the Nonce.
        let stale_soon = data.freshness_ms.unwrap_or(0) < dead_nonces.lifetime_ms();
        sent.clear();
        for &id in matches.iter() {
            let Some(entry) = pcct.pit.get(id) else { continue };
            counters.satisfied_interests += 1;
            if cache && entry.can_be_prefix() {
                pcct.cs.insert_indirect(entry.name(), data.name());
            }
            for r in &entry.in_records {
                if r.face == ingress || r.expiry_ms < now {
                    continue;
                }
                sent.push((r.face, r.pit_token.clone()));
            }
            if entry.must_be_fresh() && stale_soon {
                remember_nonces(dead_nonces, names, entry, now);
            }
            settle(measurements, entry);
            pcct.discard(id);
        }
        // One entry has one in-record per face, and no more than
        // MAX_DOWNSTREAMS; the entries of a Data's name and of its prefixes may
        // share downstreams and together hold more.
        if matches.len() > 1 {
            distinct_downstreams(sent, counters);
        }
        // The last downstream gets the received buffer itself (nothing reads the
        // decoded Data after this), the others a reference each.
        if let Some((face, token)) = sent.pop() {
            let from = Origin { face: ingress, congestion_mark: lp.congestion_mark };
            for (face, token) in sent.drain(..) {
                send_data(faces, counters, face, data.wire().clone(), token, from, out);
            }
            send_data(faces, counters, face, data.take_wire(), token, from, out);
        }
    }

    fn on_nack(&mut self, now: u64, ingress: FaceId, interest: &Interest, reason: NackReason, out: &mut Vec<Outgoing>) {
        let Some(meta) = self.faces.get_mut(ingress) else { return };
        meta.counters.packets.in_nacks += 1;
        self.counters.packets.in_nacks += 1;
        // As in NFD: a Nack is not defined on a multi-access face (any node on
        // the medium could send one for an Interest another node answers).
        if !meta.point_to_point {
            self.counters.dropped_nacks += 1;
            return;
        }
        let Some(id) = self.pcct.find(&interest.name, interest.can_be_prefix, interest.must_be_fresh) else {
            self.counters.dropped_nacks += 1;
            return;
        };
        let entry = self.pcct.pit.get_mut(id).expect("found");
        let measure = match entry.out_record_mut(ingress) {
            Some(o) if Some(o.nonce) == interest.nonce => {
                // The upstream answered: no longer pending there.
                if o.nack.replace(reason).is_none() {
                    self.measurements.answered(o.measure, ingress);
                }
                o.measure
            }
            _ => {
                self.counters.dropped_nacks += 1;
                return;
            }
        };
        let entry = self.pcct.pit.get(id).expect("found");
        let kind = self.strategy_for(entry.name());
        // The entry keeps its Interest encoded: decode it for the ForwardingHint
        // and the Nacks (a rare path). It was decoded once on arrival or encoded
        // here, so this cannot fail; if it did, the Nack is simply dropped.
        let Ok(latest) = Interest::decode(entry.wire()) else {
            self.counters.dropped_nacks += 1;
            return;
        };
        let nexthops = self.fib_nexthops(latest.forwarding_hint.as_ref(), &latest.name);
        let faces = &self.faces;
        let downstream = entry.in_records.first().map_or(ingress, |r| r.face);
        // Only a local face's `/localhost` Interest makes an entry, even if
        // that face has gone since.
        let from_local = self.localhost.is_prefix_of(entry.name()) || faces.get(downstream).is_some_and(|m| m.local);
        // A retry goes where the entry's Interest may go: to no non-local face
        // at HopLimit 0 (`send_interest` would drop it, and the Nack with it).
        let remote_ok = !self.local_only(entry.name(), from_local) && entry.hop_limit != Some(0);
        let usable = |f: FaceId| faces.get(f).is_some_and(|m| m.local || remote_ok) && !entry.in_records.iter().any(|r| r.face == f);
        let live = |f: FaceId| faces.get(f).is_some();
        let (measurements, rng) = (&mut self.measurements, &mut self.rng);
        let pick = |candidates: &[FaceId]| measurements.choose(measure, candidates, rng.f32());
        match strategy::on_nack(kind, entry, &nexthops, usable, live, pick) {
            NackDecision::Retry(face) => {
                // The encoding's own face may have left the entry (Nacked
                // NoRoute); then it goes on as the first remaining one's.
                let entry = self.pcct.pit.get_mut(id).expect("found");
                if let Some(first) = entry.in_records.first().filter(|_| orphaned(entry)) {
                    let (nonce, hop_limit) = (first.nonce, entry.hop_limit);
                    rebuild_upstream(entry, nonce, hop_limit);
                }
                self.send_interest(now, id, downstream, face, measure, out);
            }
            NackDecision::Wait => {}
            NackDecision::GiveUp(reason) => {
                let entry = self.pcct.remove(id).expect("found");
                settle(&mut self.measurements, &entry);
                for r in &entry.in_records {
                    let mut i = latest.clone();
                    i.nonce = Some(r.nonce);
                    self.send_nack(r.face, &i, reason, r.pit_token.clone(), out);
                }
                remember_nonces(&mut self.dead_nonces, &self.names, &entry, now);
            }
        }
    }
}

/// The FIB entry an Interest named `name` is forwarded by, with the prefix
/// it is stored under: the first of its ForwardingHint delegations (`hint`,
/// at most [`MAX_FORWARDING_HINTS`] looked up) whose entry has next hops (the
/// way out of a region that has no route for the name). When none has, the
/// root's entry (none without a default route, and the Interest is Nacked
/// NoRoute), as NFD's `lookupFib` returns it, not the name's: the hint says
/// the name is routed only inside its producer's region, which this router
/// is not in, so a route that matches the name here anyway leads elsewhere
/// than the hint asked. A hint that reached this router's region is gone by
/// then ([`Forwarder::reached_region`]); only a hint with no delegation to
/// read goes by the name, as NFD takes an empty hint for none.
fn route<'f>(fib: &'f Fib, hint: Option<&Bytes>, name: &Name) -> Option<(FibPrefix<'f>, &'f FibEntry)> {
    let mut hinted = false;
    for n in hint.into_iter().flat_map(delegations) {
        if let Some(found) = fib.lpm(&n).filter(|(_, fe)| !fe.nexthops.is_empty()) {
            return Some(found);
        }
        hinted = true;
    }
    if hinted {
        return fib.lpm(&Name::root());
    }
    fib.lpm(name)
}

/// The delegations of a ForwardingHint (its TLV-VALUE) that the router reads:
/// the names among its first [`MAX_FORWARDING_HINTS`] Name elements (other
/// elements are skipped; a Name that does not decode counts but is ignored).
fn delegations(hint: &Bytes) -> impl Iterator<Item = Name> {
    let mut r = trajan_wire::tlv::TlvReader::new(hint.clone());
    std::iter::from_fn(move || r.read().ok())
        .filter(|e| e.typ == trajan_wire::types::NAME)
        .take(MAX_FORWARDING_HINTS)
        .filter_map(|e| Name::from_value(e.value).ok())
}

/// Where the dynamic strategy counts a new Interest: under the FIB prefix
/// whose next hops it is forwarded to, so each prefix's measurements compare
/// the upstreams of that prefix.
#[derive(Clone, Copy)]
enum MeasureAt {
    /// The first `n` components of the entry's name: the burst's lookup by
    /// name matched them (a prefix's entry is found only under the strategy).
    NamePrefix(usize),
    /// An entry already found (a ForwardingHint's prefix), or [`NOT_MEASURED`],
    /// with the strategy the hint's path looked up to know whether to find it
    /// (passed on, so the strategy table is not walked twice).
    Hint(StrategyKind, MeasureId),
}

/// Ends the count of an Interest that leaves the PIT in the measurements of
/// each upstream that has not answered it (see [`Measurements`]).
/// (Nothing to do while the table is empty, as it is without the strategy.)
fn settle(measurements: &mut Measurements, entry: &trajan_tables::PitEntry) {
    if measurements.is_empty() {
        return;
    }
    for o in entry.out_records.iter().filter(|o| o.nack.is_none()) {
        measurements.answered(o.measure, o.face);
    }
}

/// Counts the Interest of `entry` about to be sent to `face` in `measure`: a
/// resend to the same face is still one Interest pending there, and one
/// counted elsewhere before (the strategy changed since) moves.
fn count_sent(measurements: &mut Measurements, entry: &trajan_tables::PitEntry, face: FaceId, measure: MeasureId) {
    let counted = entry.out_records.iter().find(|o| o.face == face && o.nack.is_none()).map_or(NOT_MEASURED, |o| o.measure);
    if counted != measure {
        measurements.answered(counted, face);
        measurements.sent(measure, face);
    }
}

/// The downstreams of a Data that satisfied several entries, each once per
/// face and PIT token (as NDN-DPDK sends it; NFD, without tokens, once per
/// face), and at most [`MAX_DOWNSTREAMS`] of them, the rest counted. Sorted,
/// so the work grows as R log R for R in-records, where a search of those
/// kept for each grew as R². Out of line: the common Data satisfies one entry
/// and never comes here, while inline this grew the packet loop by a
/// kilobyte, and the worst case measured 12 more instructions per exchange
/// (3,252 → 3,265).
#[cold]
#[inline(never)]
fn distinct_downstreams(sent: &mut Vec<(FaceId, Option<Bytes>)>, counters: &mut ForwarderCounters) {
    sent.sort_unstable();
    sent.dedup();
    if sent.len() > MAX_DOWNSTREAMS {
        counters.downstreams_cut += (sent.len() - MAX_DOWNSTREAMS) as u64;
        sent.truncate(MAX_DOWNSTREAMS);
    }
}

/// Where a Data sent downstream came from, for the link fields NFD's
/// GenericLinkService adds to it (encodeLpFields): the face it arrived on
/// ([`CONTENT_STORE_FACE`] for an answer from the CS), reported as
/// IncomingFaceId to a face with local fields, and the CongestionMark it
/// arrived with, passed on to every downstream, so that a consumer learns of
/// congestion upstream of this router. (NFD tags the received Data with both
/// and sends that very Data on.)
#[derive(Clone, Copy)]
struct Origin {
    face: FaceId,
    congestion_mark: Option<u64>,
}

/// Sends a Data (its encoding, given up by the caller: sent as is unless a
/// link field has to be attached, so passing it costs no reference count). A
/// function of the forwarder's faces and counters alone, so the Data pipeline
/// can send while it holds the forwarder's other parts (its downstreams).
/// Always inlined, once per Data (see [`Forwarder::forward_new`]).
#[inline(always)]
fn send_data(faces: &mut FaceTable, counters: &mut ForwarderCounters, face: FaceId, wire: Bytes, pit_token: Option<Bytes>, from: Origin, out: &mut Vec<Outgoing>) {
    let Some(meta) = faces.get_mut(face) else { return };
    meta.counters.packets.out_data += 1;
    counters.packets.out_data += 1;
    // One test for the three reasons to wrap (`|`, not `||`: one branch, not
    // three), none of which the common Data has.
    let pkt = if pit_token.is_some() | from.congestion_mark.is_some() | meta.local_fields {
        data_with_fields(&wire, pit_token, from, meta.local_fields)
    } else {
        wire
    };
    out.push(Outgoing { face, pkt });
}

/// [`send_data`]'s LpPacket, out of line as [`wrapped`] is: the PIT token of
/// the downstream's in-record, the Data's [`Origin`] as IncomingFaceId when
/// the downstream has local fields, and its CongestionMark.
#[inline(never)]
fn data_with_fields(wire: &Bytes, pit_token: Option<Bytes>, from: Origin, local_fields: bool) -> Bytes {
    let headers = LpHeaders { pit_token, incoming_face_id: local_fields.then_some(u64::from(from.face)), congestion_mark: from.congestion_mark, ..Default::default() };
    LpPacket::wrap(wire, &headers)
}

/// `wire` in an LpPacket with `headers`, for a send that carries link fields
/// (a PIT token, an IncomingFaceId). Out of line: the per-packet sends are
/// inlined into the pipeline, and the LpPacket's encoder is larger than they are.
#[inline(never)]
fn wrapped(wire: &Bytes, headers: &LpHeaders) -> Bytes {
    LpPacket::wrap(wire, headers)
}

/// Whether the Interest a PIT entry sends upstream is no longer that of any
/// face waiting on it (its face was Nacked NoRoute and left the entry).
fn orphaned(entry: &trajan_tables::PitEntry) -> bool {
    !entry.in_records.iter().any(|r| r.nonce == entry.nonce)
}

/// Re-encodes the Interest a PIT entry sends upstream with another Nonce and
/// HopLimit, those of the Interest it now goes on for (see
/// `Forwarder::forward_new`). Out of line: a rare path, which allocates.
#[cold]
fn rebuild_upstream(entry: &mut trajan_tables::PitEntry, nonce: u32, hop_limit: Option<u8>) {
    // The encoding was decoded on arrival or encoded here: it decodes.
    let Ok(mut interest) = Interest::decode(entry.wire()) else { return };
    interest.nonce = Some(nonce);
    interest.hop_limit = hop_limit;
    let (wire, name_at) = interest.encode_locating_name();
    entry.set_upstream_at(wire, name_at, nonce, hop_limit);
}

/// Adds the Nonces a PIT entry sent upstream to the dead nonce list, as its entry
/// goes (expired, satisfied or given up on), so a looping copy is still caught.
fn remember_nonces(dead: &mut DeadNonceList, names: &NameHasher, entry: &trajan_tables::PitEntry, now: u64) {
    let hash = names.full(entry.name());
    for o in &entry.out_records {
        dead.add(hash, o.nonce, now);
    }
}

/// Decodes one received packet, input number `at`: an LpPacket (or bare packet)
/// holding an Interest, Data or Nack, appended to `parsed`, an Interest or Data
/// into its slot, with an LpPacket's headers in `linked`. An IDLE LpPacket or a
/// fragment the face should have reassembled appends nothing (dropped silently,
/// not malformed). A Data takes its buffer (`pkt`, or the LpPacket's fragment)
/// with it. `keyed` fills an Interest's or Data's keys before it is appended,
/// where its kind is known (filling them after, from the list's last entry,
/// took a second dispatch on the kind: 19 instructions per exchange).
///
/// Always inlined, the LpPacket's decoding kept out of line: a bare packet
/// pays no call (a call per packet, saving and restoring registers around its
/// own large frame, was ≈ 40 instructions per exchange).
#[inline(always)]
fn decode(at: usize, pkt: &mut Bytes, parsed: &mut Vec<(usize, Parsed)>, slots: &mut Slots, linked: &mut Vec<LpHeaders>, keyed: &impl Fn(&mut Parsed, &Slots), local_fields: impl FnOnce() -> bool) -> Result<(), WireError> {
    // A bare Interest or Data is decoded straight from the packet into its slot:
    // no LpPacket to build, no second look at its type, no copy.
    match first_type(pkt)? {
        Some(INTEREST) => {
            let mut p = Parsed::Interest { slot: slots.decode_interest(std::mem::take(pkt))?, lp: None, keys: Keys::default() };
            keyed(&mut p, slots);
            parsed.push((at, p));
            Ok(())
        }
        Some(DATA) => {
            let mut p = Parsed::Data { slot: slots.decode_data(std::mem::take(pkt))?, lp: None, keys: Keys::default() };
            keyed(&mut p, slots);
            parsed.push((at, p));
            Ok(())
        }
        _ => decode_linked(at, pkt, parsed, slots, linked, keyed, local_fields),
    }
}

/// [`decode`] of an LpPacket. A header field NFD's GenericLinkService
/// refuses with the packet it carries ([`LpHeaders::refused_field`]; for a
/// NextHopFaceId on an Interest, `local_fields` says whether its face has
/// local fields) makes the packet malformed: NFD counts it as nInNetInvalid
/// (but for that NextHopFaceId, which it only logs), as the forwarder counts
/// the malformed.
#[inline(never)]
fn decode_linked(at: usize, pkt: &mut Bytes, parsed: &mut Vec<(usize, Parsed)>, slots: &mut Slots, linked: &mut Vec<LpHeaders>, keyed: &impl Fn(&mut Parsed, &Slots), local_fields: impl FnOnce() -> bool) -> Result<(), WireError> {
    let lp = LpPacket::decode(pkt)?;
    if lp.is_fragmented() {
        return Ok(());
    }
    let Some(fragment) = lp.fragment else { return Ok(()) };
    let typ = first_type(&fragment)?;
    if let Some(field) = typ.and_then(|t| lp.headers.refused_field(t, local_fields)) {
        return Err(WireError::BadValue(field));
    }
    let mut p = match typ {
        Some(INTEREST) => {
            if let Some(reason) = lp.headers.nack {
                parsed.push((at, Parsed::Nack { slot: slots.decode_interest(fragment)?, reason }));
                return Ok(());
            }
            Parsed::Interest { slot: slots.decode_interest(fragment)?, lp: Some(linked.len()), keys: Keys::default() }
        }
        Some(DATA) if lp.headers.nack.is_none() => {
            Parsed::Data { slot: slots.decode_data(fragment)?, lp: Some(linked.len()), keys: Keys::default() }
        }
        Some(t) => return Err(WireError::UnexpectedType { expected: INTEREST, got: t }),
        None => return Err(WireError::Truncated),
    };
    keyed(&mut p, slots);
    linked.push(lp.headers);
    parsed.push((at, p));
    Ok(())
}
