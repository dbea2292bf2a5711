//! Forwarding workers (Augustus §3.1.2): N threads, each pinned to a CPU and owning
//! a whole [`Forwarder`] — its PIT and CS shard, and a replica of the FIB, strategy
//! table and face table — so the fast path takes no lock and shares no cache line
//! with another worker.
//!
//! The I/O thread polls the faces, picks each packet's owner with
//! [`crate::dispatch`], and pushes it onto that worker's lock-free SPSC ring
//! (`rtrb`); the worker runs bursts through its engine and pushes what to send onto
//! its own outbound ring, which the I/O thread drains into the faces. Control
//! changes (faces, routes, strategies, CS capacity) travel on the same inbound ring
//! as packets, so a worker sees them in the order the I/O thread made them: a face
//! is known before its first packet, and a route before the packet after its
//! registration. Every worker applies the same changes to its replica, so the
//! replicas stay identical and a route update is visible to all workers as soon as
//! each reaches it in its ring; nothing is lost or duplicated in between because
//! packets are never moved between workers.
//!
//! With the UDP-port-by-hash face ([`trajan_io::HashPorts`], Augustus' third
//! option) each worker also owns one UDP port: a cooperating sender sends each
//! packet to the port of the worker owning its name, and the worker reads it
//! there and sends its replies from it, with no hand-off at all. A datagram the
//! worker cannot forward itself — from a peer it has no face for yet, a fragment,
//! malformed, or for a name another worker owns — goes back to the I/O thread
//! ([`FromWorker::Punt`]), which treats it as if it had read it and dispatches it
//! in software: misdirected packets cost a hand-off, never a loss. Workers learn
//! which remote addresses are faces from the I/O thread in ring order
//! ([`Workers::add_peer`]), after the face itself. The worker also reads its
//! port's error queue when the socket reports an error, and hands what it finds
//! (a peer's port unreachable) to the I/O thread ([`FromWorker::Errors`]),
//! which closes the face as it would for a listener's.
//!
//! With DPDK ports of several queues ([`WorkerQueues`], Augustus' first option,
//! NIC RSS) each worker polls RX queue i of every port and transmits on TX queue
//! i, which no other thread touches. The NIC hashes addresses, not names, so a
//! worker forwards only the packets whose name it owns (the same test as on its
//! UDP port) and hands the rest to the I/O thread ([`FromWorker::Handoff`]), which
//! dispatches them to their owner like any packet: one hand-off, never a loss or
//! a second copy.
//!
//! The FIB is not replicated per worker: the workers of one NUMA node read one
//! shared replica through their own `FibReader` ([`NodeFibs`]), and route changes
//! are published there by [`Workers::broadcast`] instead of travelling on the rings.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{fence, AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use bytes::Bytes;
use smallvec::SmallVec;
use trajan_engine::faces::FaceCounters;
use trajan_engine::{FaceId, FaceMeta, Forwarder, ForwarderCounters, Outgoing, PacketCounters, StrategyKind};
use trajan_io::{Datagram, FaceCounters as LinkCounters, HashPorts, SocketError, WorkerPort};
use trajan_tables::{FibReader, FibSource, NextHop};
use trajan_wire::Name;

use crate::node_fibs::NodeFibs;
use crate::dispatch::{name_key, name_keys, owner, ShortPrefixes, DISPATCH_COMPONENTS, SHORT_PREFIX_TTL_MS};
use crate::topology::Placement;

/// Packets (and control messages) a worker's inbound ring holds; beyond it the I/O
/// thread drops packets for that worker and counts them.
pub(crate) const IN_RING: usize = 4096;
/// Packets a worker's outbound ring holds; beyond it the worker drops and counts.
pub(crate) const OUT_RING: usize = 8192;
/// Most packets a worker runs through its engine at once.
const BURST: usize = 64;
/// Longest a worker sleeps with nothing to do, so PIT expiry runs on time.
const MAX_PARK: Duration = Duration::from_millis(100);
/// How long management waits for a worker's answer before reporting without it.
const QUERY_TIMEOUT: Duration = Duration::from_secs(1);
/// How often (ms) a worker reports the link counters of the faces it served on its
/// own port; the I/O thread also takes them as activity for the idle timeout.
const COUNTER_REPORT_MS: u64 = 1000;
/// The longest a face's input may wait to reach the I/O thread in a worker's
/// report: one report interval, and as long again for a report that found the
/// ring full or waits for the I/O thread's next turn.
pub(crate) const COUNTER_REPORT_LAG: Duration = Duration::from_millis(2 * COUNTER_REPORT_MS);
/// Poll tokens of a worker's own poller.
const WAKE: mio::Token = mio::Token(0);
const PORT: mio::Token = mio::Token(1);

/// A change to the tables every worker replicates, made by management or by faces
/// coming and going. Applying it is idempotent: it states the result, not a delta.
#[derive(Clone, Debug)]
pub enum Change {
    /// The face's flags (counters are each worker's own), or `None`: the face is gone,
    /// and so are its FIB next hops.
    Face(FaceId, Option<FaceMeta>),
    /// The FIB entry of exactly this prefix now has these next hops (none: removed).
    Route(Name, SmallVec<[NextHop; 4]>),
    /// The strategy chosen for exactly this prefix (`None`: unset).
    Strategy(Name, Option<StrategyKind>),
    /// The CS configuration: per-worker capacity, and whether the stores admit
    /// new Data and serve Interests (`cs/config`).
    Cs {
        /// Packets each worker's store may hold: the configured capacity shared among the workers.
        capacity: usize,
        /// Whether the stores admit new Data.
        admit: bool,
        /// Whether the stores answer Interests.
        serve: bool,
    },
    /// The network regions the router is in (`tables.network_regions`, reloaded).
    Regions(Vec<Name>),
}

/// The next hops of `prefix` as `fwd` (the control replica) holds them now.
fn nexthops(fwd: &Forwarder, prefix: &Name) -> SmallVec<[NextHop; 4]> {
    fwd.fib.get(prefix).map(|e| e.nexthops.clone()).unwrap_or_default()
}

impl Change {
    /// The FIB entry of `prefix` as `fwd` (the control replica) holds it now.
    pub fn route(fwd: &Forwarder, prefix: &Name) -> Change {
        Change::Route(prefix.clone(), nexthops(fwd, prefix))
    }

    /// The strategy choice of exactly `prefix` as `fwd` (the control replica) holds it now.
    pub fn strategy(fwd: &Forwarder, prefix: &Name) -> Change {
        Change::Strategy(prefix.clone(), fwd.strategies.get(prefix).copied())
    }

    /// The CS configuration of `fwd` (the control replica), its capacity
    /// shared among `workers` stores.
    pub fn cs(fwd: &Forwarder, workers: usize) -> Change {
        let cs = &fwd.pcct.cs;
        Change::Cs { capacity: cs.capacity().div_ceil(workers.max(1)), admit: cs.admits(), serve: cs.serves() }
    }

    /// The network regions of `fwd` (the control replica).
    pub fn regions(fwd: &Forwarder) -> Change {
        Change::Regions(fwd.network_regions().to_vec())
    }

    /// The face `id` as `fwd` (the control replica) holds it now.
    pub fn face(fwd: &Forwarder, id: FaceId) -> Change {
        Change::Face(id, fwd.faces.get(id).map(|m| FaceMeta { counters: FaceCounters::default(), ..m.clone() }))
    }

    /// Makes worker `fwd`'s tables agree with the change.
    pub fn apply(&self, fwd: &mut Forwarder<FibReader>) {
        match self {
            Change::Face(id, Some(meta)) => match fwd.faces.get_mut(*id) {
                Some(m) => {
                    m.local = meta.local;
                    m.local_fields = meta.local_fields;
                    m.point_to_point = meta.point_to_point;
                }
                None => fwd.add_face(*id, meta.clone()),
            },
            Change::Face(id, None) => fwd.remove_face(*id),
            // Routes live in the shared FIB ([`NodeFibs`]): `Workers::broadcast`
            // publishes them there and never sends them to a worker.
            Change::Route(..) => {}
            Change::Strategy(prefix, Some(kind)) => {
                fwd.strategies.insert(prefix, *kind);
            }
            Change::Strategy(prefix, None) => {
                fwd.strategies.remove(prefix);
            }
            &Change::Cs { capacity, admit, serve } => {
                let cs = &mut fwd.pcct.cs;
                cs.set_capacity(capacity);
                cs.set_admit(admit);
                cs.set_serve(serve);
            }
            Change::Regions(regions) => fwd.set_network_regions(regions.clone()),
        }
    }
}

/// One shard's numbers, for management datasets: per worker and summed.
#[derive(Clone, Debug, Default)]
pub struct ShardStats {
    /// The forwarder's counters (packets, drops, satisfied Interests, ...).
    pub counters: ForwarderCounters,
    /// Per-face packet counters, as this shard counted them.
    pub faces: HashMap<FaceId, FaceCounters>,
    /// Pending Interests in the PIT.
    pub pit_entries: usize,
    /// Prefixes the dynamic strategy measures ([`trajan_engine::measurements`]).
    pub measurements_entries: usize,
    /// Packets the content store holds.
    pub cs_entries: usize,
    /// Packets the content store may hold.
    pub cs_capacity: usize,
    /// Whether the shard's store admits new Data and serves Interests
    /// (`cs/config`; in a sum, whether every shard's does).
    pub cs_admit: bool,
    /// Whether the shard's store serves Interests (in a sum, whether every shard's does).
    pub cs_serve: bool,
    /// Content store lookups that found a Data.
    pub cs_hits: u64,
    /// Content store lookups that found none.
    pub cs_misses: u64,
    /// Packets the I/O thread handed to this worker.
    pub dispatched: u64,
    /// Packets dropped because this worker's inbound ring was full.
    pub in_ring_drops: u64,
    /// Packets this worker dropped because its outbound ring was full.
    pub out_ring_drops: u64,
    /// Packets the worker read itself (its UDP port, its NIC queues) and forwarded
    /// without hand-off.
    pub direct: u64,
    /// Packets it read itself and handed back to the I/O thread (new peer, another
    /// worker's name, fragment, malformed).
    pub punted: u64,
    /// Where the worker runs, when pinned.
    pub placement: Option<Placement>,
}

impl ShardStats {
    /// The numbers of one forwarder.
    pub fn of<F: FibSource>(fwd: &Forwarder<F>) -> ShardStats {
        ShardStats {
            counters: fwd.counters.clone(),
            faces: fwd.faces.iter().map(|(id, m)| (id, m.counters.clone())).collect(),
            pit_entries: fwd.pcct.pit.len(),
            measurements_entries: fwd.measurements.len(),
            cs_entries: fwd.pcct.cs.len(),
            cs_capacity: fwd.pcct.cs.capacity(),
            cs_admit: fwd.pcct.cs.admits(),
            cs_serve: fwd.pcct.cs.serves(),
            cs_hits: fwd.pcct.cs.hits(),
            cs_misses: fwd.pcct.cs.misses(),
            ..ShardStats::default()
        }
    }

    /// The whole router's numbers: every shard's added up.
    pub fn sum(shards: &[ShardStats]) -> ShardStats {
        let mut t = ShardStats { cs_admit: true, cs_serve: true, ..ShardStats::default() };
        for s in shards {
            add_forwarder(&mut t.counters, &s.counters);
            for (id, c) in &s.faces {
                let f = t.faces.entry(*id).or_default();
                add_packets(&mut f.packets, &c.packets);
                f.malformed += c.malformed;
            }
            t.pit_entries += s.pit_entries;
            t.measurements_entries += s.measurements_entries;
            t.cs_entries += s.cs_entries;
            t.cs_capacity += s.cs_capacity;
            t.cs_admit &= s.cs_admit;
            t.cs_serve &= s.cs_serve;
            t.cs_hits += s.cs_hits;
            t.cs_misses += s.cs_misses;
            t.dispatched += s.dispatched;
            t.in_ring_drops += s.in_ring_drops;
            t.out_ring_drops += s.out_ring_drops;
            t.direct += s.direct;
            t.punted += s.punted;
        }
        t
    }
}

fn add_packets(a: &mut PacketCounters, b: &PacketCounters) {
    a.in_interests += b.in_interests;
    a.in_data += b.in_data;
    a.in_nacks += b.in_nacks;
    a.out_interests += b.out_interests;
    a.out_data += b.out_data;
    a.out_nacks += b.out_nacks;
}

fn add_forwarder(a: &mut ForwarderCounters, b: &ForwarderCounters) {
    add_packets(&mut a.packets, &b.packets);
    a.satisfied_interests += b.satisfied_interests;
    a.unsatisfied_interests += b.unsatisfied_interests;
    a.malformed += b.malformed;
    a.unsolicited_data += b.unsolicited_data;
    a.scope_violations += b.scope_violations;
    a.loops += b.loops;
    a.no_route += b.no_route;
    a.hop_limit_drops += b.hop_limit_drops;
    a.pit_full += b.pit_full;
    a.in_records_full += b.in_records_full;
    a.downstreams_cut += b.downstreams_cut;
    a.cs_hits += b.cs_hits;
    a.dropped_nacks += b.dropped_nacks;
}

/// Brings the workers' FIB replicas (if there are workers) to the entries the
/// RIB rewrote since it was last asked, and forgets them: a route's change
/// reaches the names under its own that inherit it. Whoever changes the RIB —
/// the daemon, management — calls this after, once per change.
pub(crate) fn rib_to_workers(rib: &mut crate::rib::Rib, fwd: &Forwarder, workers: Option<&mut Workers>) {
    let refreshed = rib.take_refreshed();
    if let Some(w) = workers {
        w.set_routes(fwd, refreshed);
    }
}

/// What travels on a worker's inbound ring.
enum Msg {
    Packet(FaceId, Bytes),
    /// A copy of a Data its owner gets as a `Packet`, for the worker of a short
    /// CanBePrefix Interest it may answer ([`ShortPrefixes`]): it satisfies what
    /// is pending there, but the packet arrived once, and its owner counts it.
    Copy(FaceId, Bytes),
    /// A Data its owner gets while copies of it went to other workers
    /// ([`Msg::Copy`]): counted as received, but not as unsolicited when no
    /// Interest here wants it, since a copy may be what satisfies one. (A Data
    /// no worker wanted then goes uncounted as unsolicited: the owner cannot
    /// know what the copies found.)
    Shared(FaceId, Bytes),
    Control(Box<Control>),
}

/// What a worker hands back to the I/O thread on its outbound ring.
#[derive(Debug)]
pub enum FromWorker {
    /// A packet for a face the worker does not send on itself.
    Send(Outgoing),
    /// A datagram from port `port` (the worker's index) for the I/O thread to
    /// handle as if it had read it ([`trajan_io::Io::hash_datagram`]) and dispatch.
    Punt {
        /// The worker's index, which is also its port's offset from the base port.
        port: usize,
        /// The datagram as read, with its sender's address.
        datagram: Datagram,
    },
    /// Link counters of the faces the worker served on its port since its last
    /// report, for the I/O layer's face counters and idle timeout.
    Counters(Vec<(FaceId, LinkCounters)>),
    /// Entries of port `port`'s error queue (at most a batch), for the I/O
    /// thread, which owns the faces, to close the one whose peer's port is
    /// unreachable ([`trajan_io::Io::hash_errors`]).
    Errors {
        /// The worker's index, which is also its port's offset from the base port.
        port: usize,
        /// What the queue held, as read.
        errors: Vec<SocketError>,
    },
    /// A packet received on face `.0` through the worker's NIC queue whose name
    /// another worker owns: for the I/O thread to [`Workers::dispatch`].
    Handoff(FaceId, Bytes),
}

/// The NIC queues one worker polls and sends on itself: one RX/TX queue pair of
/// each multi-queue port, used by no other thread, so no lock is taken.
pub trait WorkerQueues: Send {
    /// Reads one burst from every queue, appending (face, NDN packet) to `out`;
    /// returns the frames read (malformed ones are counted and dropped there).
    fn recv(&mut self, out: &mut Vec<(FaceId, Bytes)>) -> usize;
    /// Queues `pkt` on `face`; gives it back when `face` is none of these queues'.
    fn send(&mut self, face: FaceId, pkt: Bytes) -> Option<Bytes>;
    /// Sends what is queued.
    fn flush(&mut self);
    /// Called once on the worker's thread before its first poll (DPDK registers
    /// the thread for a per-thread mempool cache).
    fn on_thread(&mut self) {}
}

enum Control {
    Apply(Change),
    /// The face's remote ports ([`trajan_io::Io::hash_peer`]): the worker forwards
    /// what it reads from them and sends to the face directly.
    Peer(FaceId, HashPorts),
    /// The one-port peer's face was last heard on this port (an index): only
    /// that port's worker may send to it directly now.
    Moved(FaceId, usize),
    Stats(mpsc::SyncSender<ShardStats>),
    CsErase(Name, usize, mpsc::SyncSender<usize>),
    Stop,
}

/// The I/O thread's end of one worker.
struct Link {
    to: rtrb::Producer<Msg>,
    from: rtrb::Consumer<FromWorker>,
    thread: Option<JoinHandle<()>>,
    wake: Arc<Wake>,
    placement: Option<Placement>,
    dispatched: u64,
    in_ring_drops: u64,
    /// Packets pushed since the worker was last woken.
    pending: bool,
}

/// Wakes the I/O thread when a worker has output for it.
pub type WakeIo = Arc<dyn Fn() + Send + Sync>;

/// The workers' clock, in the engine's milliseconds. The daemon's runs on its
/// own; a test moves one by hand, so that what sharded workers do can be
/// compared step by step with a single engine given the same times.
#[derive(Clone, Debug)]
pub enum Clock {
    /// Milliseconds since this instant (the daemon's epoch).
    Since(Instant),
    /// Whatever the counter holds.
    Manual(Arc<AtomicU64>),
}

impl Clock {
    /// The time now, read once per burst.
    pub fn now_ms(&self) -> u64 {
        match self {
            Clock::Since(epoch) => epoch.elapsed().as_millis() as u64,
            Clock::Manual(ms) => ms.load(Ordering::SeqCst),
        }
    }
}

/// Wakes a worker sleeping in its poller (which also watches its UDP port).
struct Wake {
    waker: mio::Waker,
    sleeping: AtomicBool,
}

impl Wake {
    /// Wakes the worker if it is asleep or about to be. The fence pairs with the
    /// worker's between announcing sleep and checking its ring, so either the
    /// worker sees the new message or this sees it sleeping.
    fn wake(&self) {
        fence(Ordering::SeqCst);
        if self.sleeping.swap(false, Ordering::SeqCst) {
            let _ = self.waker.wake();
        }
    }
}

/// The I/O thread's handle on the running workers.
pub struct Workers {
    links: Vec<Link>,
    io_sleeping: Arc<AtomicBool>,
    short: ShortPrefixes,
    /// Scratch for [`ShortPrefixes::extra_owners`], reused per packet.
    extra: Vec<usize>,
    /// Until when (daemon ms) workers hand Data from their ports to the I/O
    /// thread, because a short CanBePrefix Interest may be waiting for it on
    /// another worker (see [`ShortPrefixes`]); 0 while none was seen.
    short_until: Arc<AtomicU64>,
    /// Whether the workers own UDP ports (so they need to know the peers).
    ports: bool,
    /// Whether the workers read packets themselves (UDP ports or NIC queues), so
    /// they must hear of short CanBePrefix Interests.
    direct_rx: bool,
    /// The FIB the workers read, one replica per NUMA node.
    fibs: NodeFibs,
}

impl Workers {
    /// Starts one worker per forwarder, pinned where `placement` says (unpinned when
    /// it is shorter, as in tests), each with its port of the hash face when
    /// `ports` has one per forwarder (else none has a port), and with NIC queues
    /// when `queues` has one set per forwarder (else none polls). Forwarder `i` reads
    /// `fibs.reader(i)`, and route changes go to `fibs`. `wake_io` is called when a
    /// worker queued output while the I/O thread was about to sleep; `clock` is
    /// the engine's clock.
    pub fn start(
        fwds: Vec<Forwarder<FibReader>>,
        fibs: NodeFibs,
        placement: &[Placement],
        ports: Vec<WorkerPort>,
        queues: Vec<Box<dyn WorkerQueues>>,
        wake_io: WakeIo,
        clock: Clock,
    ) -> std::io::Result<Workers> {
        let io_sleeping = Arc::new(AtomicBool::new(false));
        let short_until = Arc::new(AtomicU64::new(0));
        let count = fwds.len();
        let with_ports = ports.len() == count;
        let with_queues = queues.len() == count;
        let mut ports = ports.into_iter();
        let mut queues = queues.into_iter();
        let mut links = Vec::with_capacity(count);
        for (i, fwd) in fwds.into_iter().enumerate() {
            let (to, rx) = rtrb::RingBuffer::new(IN_RING);
            let (tx, from) = rtrb::RingBuffer::new(OUT_RING);
            let place = placement.get(i).cloned();
            let cpu = place.as_ref().map(|p| p.cpu.id);
            let poll = mio::Poll::new()?;
            let wake = Arc::new(Wake { waker: mio::Waker::new(poll.registry(), WAKE)?, sleeping: AtomicBool::new(false) });
            let port = match ports.next().filter(|_| with_ports) {
                Some(mut sock) => {
                    tracing::info!(worker = i, port = %sock.local_addr(), "worker reads its own UDP port");
                    sock.register(poll.registry(), PORT)?;
                    Some(Port::new(sock, i, count, short_until.clone()))
                }
                None => None,
            };
            let worker = Worker {
                fwd,
                rx,
                tx,
                io_sleeping: io_sleeping.clone(),
                wake_io: wake_io.clone(),
                clock: clock.clone(),
                last_tick: u64::MAX,
                out_ring_drops: 0,
                poll,
                wake: wake.clone(),
                port,
                queues: queues.next().filter(|_| with_queues).map(|q| Nic { queues: q, index: i, count, short_until: short_until.clone(), direct: 0, handed: 0 }),
            };
            let thread = std::thread::Builder::new().name(format!("trajan-worker-{i}")).spawn(move || {
                if let Some(cpu) = cpu {
                    if !core_affinity::set_for_current(core_affinity::CoreId { id: cpu }) {
                        tracing::warn!(worker = i, cpu, "cannot pin worker; it runs unpinned");
                    }
                }
                worker.run();
            })?;
            links.push(Link { to, from, thread: Some(thread), wake, placement: place, dispatched: 0, in_ring_drops: 0, pending: false });
        }
        Ok(Workers { links, io_sleeping, short: ShortPrefixes::default(), extra: Vec::new(), short_until, ports: with_ports, direct_rx: with_ports || with_queues, fibs })
    }

    /// Number of workers.
    pub fn len(&self) -> usize {
        self.links.len()
    }

    /// True when there are none (never, once started with a forwarder).
    pub fn is_empty(&self) -> bool {
        self.links.is_empty()
    }

    /// Where each worker runs, when pinned.
    pub fn placement(&self) -> impl Iterator<Item = Option<&Placement>> {
        self.links.iter().map(|l| l.placement.as_ref())
    }

    /// The worker that owns this packet.
    pub fn owner_of(&self, pkt: &[u8]) -> usize {
        owner(name_key(pkt), self.links.len())
    }

    /// Hands a received packet to its owner — and Data also to the workers of short
    /// CanBePrefix Interests it may answer (see [`ShortPrefixes`]); dropped and
    /// counted when a ring is full (the worker is overloaded, as a full NIC queue
    /// would drop). `now_ms` is the daemon's clock, read once per poll, not per packet.
    pub fn dispatch(&mut self, face: FaceId, pkt: Bytes, now_ms: u64) {
        let keys = name_keys(&pkt);
        let w = owner(keys.map(|k| k.key()), self.links.len());
        if let (Some(keys), true) = (keys, self.links.len() > 1) {
            self.short.note_interest(&keys, w, now_ms);
            if keys.can_be_prefix && keys.hashed < DISPATCH_COMPONENTS && self.direct_rx {
                self.short_until.store(now_ms + SHORT_PREFIX_TTL_MS, Ordering::SeqCst);
            }
            let mut extra = std::mem::take(&mut self.extra);
            self.short.extra_owners(&keys, w, now_ms, &mut extra);
            for &x in &extra {
                self.push(x, Msg::Copy(face, pkt.clone()));
            }
            let copied = !extra.is_empty();
            self.extra = extra;
            if copied {
                self.push(w, Msg::Shared(face, pkt));
                return;
            }
        }
        self.push(w, Msg::Packet(face, pkt));
    }

    /// Pushes a packet onto worker `w`'s ring.
    fn push(&mut self, w: usize, msg: Msg) {
        let link = &mut self.links[w];
        match link.to.push(msg) {
            Ok(()) => {
                link.dispatched += 1;
                link.pending = true;
            }
            Err(_) => link.in_ring_drops += 1,
        }
    }

    /// Wakes the workers that were handed packets since the last call.
    pub fn notify(&mut self) {
        for l in &mut self.links {
            if std::mem::take(&mut l.pending) {
                l.wake.wake();
            }
        }
    }

    /// Sends a control message to one worker, waiting for ring space: control is
    /// never dropped, and workers never block, so the wait is short.
    fn control(&mut self, w: usize, c: Control) {
        let link = &mut self.links[w];
        let mut msg = Msg::Control(Box::new(c));
        loop {
            match link.to.push(msg) {
                Ok(()) => break,
                Err(rtrb::PushError::Full(m)) => {
                    msg = m;
                    link.wake.wake();
                    std::thread::yield_now();
                }
            }
        }
        link.pending = true;
    }

    /// The routes of `prefixes` as the control replica `fwd` holds them, on the
    /// shared FIB replicas, visible to every worker when this returns and
    /// published once for them all (see [`NodeFibs::set_routes`]): the names
    /// whose FIB entries a RIB change rewrote ([`crate::rib::Rib::take_refreshed`]),
    /// which for a default route's are all of them.
    pub fn set_routes(&mut self, fwd: &Forwarder, prefixes: Vec<Name>) {
        if prefixes.is_empty() {
            return;
        }
        let hops: Vec<SmallVec<[NextHop; 4]>> = prefixes.iter().map(|p| nexthops(fwd, p)).collect();
        self.fibs.set_routes(prefixes.iter().zip(hops.iter().map(|h| &h[..])));
    }

    /// Applies a change on every worker: a route on the shared FIB replicas, visible
    /// to every worker when this returns; anything else in ring order with their
    /// packets (a face's next hops go from the FIB at once, its metadata in order).
    pub fn broadcast(&mut self, change: Change) {
        match &change {
            Change::Route(prefix, nexthops) => return self.fibs.set_nexthops(prefix, nexthops),
            Change::Face(id, None) => self.fibs.remove_face(*id),
            _ => {}
        }
        self.control_all(|| Control::Apply(change.clone()));
    }

    /// Sends `make()` to every worker, in ring order with their packets, and wakes them.
    fn control_all(&mut self, make: impl Fn() -> Control) {
        for w in 0..self.links.len() {
            self.control(w, make());
        }
        self.notify();
    }

    /// Tells the workers that `face` is the peer at `remote` — one port of a
    /// client, or a neighbour's port-by-hash face — (call after the face's
    /// [`Change::Face`]); nothing without worker ports. A face that goes away is
    /// forgotten with its `Change::Face(id, None)`.
    pub fn add_peer(&mut self, face: FaceId, remote: HashPorts) {
        if self.ports {
            self.control_all(|| Control::Peer(face, remote));
        }
    }

    /// Tells the workers that the one-port peer `face` now sends to the hash
    /// face's port `port` ([`trajan_io::IoEvent::PeerMoved`]): the others stop
    /// sending to it from their own ports (a peer unaware of port-by-hash would
    /// drop what they send) until it sends to theirs. Call before handing its
    /// packet on, so that the worker answering it knows already.
    pub fn peer_moved(&mut self, face: FaceId, port: usize) {
        if self.ports {
            self.control_all(|| Control::Moved(face, port));
        }
    }

    /// Every worker's numbers, asked for now; a worker that does not answer within
    /// a second (stuck, or gone) reports zeros rather than holding management up.
    pub fn stats(&mut self) -> Vec<ShardStats> {
        let rxs: Vec<_> = (0..self.links.len())
            .map(|w| {
                let (tx, rx) = mpsc::sync_channel(1);
                self.control(w, Control::Stats(tx));
                rx
            })
            .collect();
        self.notify();
        rxs.into_iter()
            .zip(&self.links)
            .map(|(rx, l)| {
                let mut s = rx.recv_timeout(QUERY_TIMEOUT).unwrap_or_default();
                s.dispatched = l.dispatched;
                s.in_ring_drops = l.in_ring_drops;
                s.placement = l.placement.clone();
                s
            })
            .collect()
    }

    /// Erases up to `limit` CS entries under `prefix`, from all shards
    /// together, as `cs/erase` asks; the count erased. Without a limit every
    /// shard erases at once; with one, shard after shard, each told what the
    /// shards before it left of the limit.
    pub fn cs_erase(&mut self, prefix: &Name, limit: usize) -> usize {
        let shards = self.links.len();
        if limit == usize::MAX {
            let rxs: Vec<_> = (0..shards).map(|w| self.ask_cs_erase(w, prefix, limit)).collect();
            self.notify();
            return rxs.into_iter().map(|rx| rx.recv_timeout(QUERY_TIMEOUT).unwrap_or(0)).sum();
        }
        let mut erased = 0;
        for w in 0..shards {
            if erased >= limit {
                break;
            }
            let rx = self.ask_cs_erase(w, prefix, limit - erased);
            self.notify();
            erased += rx.recv_timeout(QUERY_TIMEOUT).unwrap_or(0);
        }
        erased
    }

    /// Asks worker `w` to erase up to `limit` CS entries under `prefix`; the
    /// receiver gets the count once the worker is woken and has done it.
    fn ask_cs_erase(&mut self, w: usize, prefix: &Name, limit: usize) -> mpsc::Receiver<usize> {
        let (tx, rx) = mpsc::sync_channel(1);
        self.control(w, Control::CsErase(prefix.clone(), limit, tx));
        rx
    }

    /// Moves everything the workers handed back (packets to send, datagrams to
    /// handle, counters) into `out`.
    pub fn drain(&mut self, out: &mut Vec<FromWorker>) {
        for l in &mut self.links {
            while let Ok(o) = l.from.pop() {
                out.push(o);
            }
        }
    }

    /// Announces that the I/O thread is about to sleep in poll, so that workers wake
    /// it when they queue output. Returns false (do not sleep) when output is
    /// already waiting. Pair with [`Workers::awake`] after the poll.
    pub fn may_sleep(&self) -> bool {
        self.io_sleeping.store(true, Ordering::SeqCst);
        if self.links.iter().any(|l| !l.from.is_empty()) {
            self.io_sleeping.store(false, Ordering::SeqCst);
            return false;
        }
        true
    }

    /// The I/O thread is awake again; workers need not wake it.
    pub fn awake(&self) {
        self.io_sleeping.store(false, Ordering::SeqCst);
    }
}

impl Drop for Workers {
    fn drop(&mut self) {
        self.control_all(|| Control::Stop);
        for l in &mut self.links {
            if let Some(t) = l.thread.take() {
                let _ = t.join();
            }
        }
    }
}

/// A worker thread's state.
struct Worker {
    fwd: Forwarder<FibReader>,
    rx: rtrb::Consumer<Msg>,
    tx: rtrb::Producer<FromWorker>,
    io_sleeping: Arc<AtomicBool>,
    wake_io: WakeIo,
    clock: Clock,
    /// When the engine's timers last ran.
    last_tick: u64,
    out_ring_drops: u64,
    /// Sleeps here: woken by the I/O thread ([`Wake`]) or by input on the port.
    poll: mio::Poll,
    wake: Arc<Wake>,
    port: Option<Port>,
    /// Its NIC queues, busy-polled: the worker then never sleeps.
    queues: Option<Nic>,
}

/// A worker's NIC queues and what it needs to test ownership of what they bring.
struct Nic {
    queues: Box<dyn WorkerQueues>,
    index: usize,
    count: usize,
    short_until: Arc<AtomicU64>,
    /// Packets forwarded where they arrived, and handed to the I/O thread.
    direct: u64,
    handed: u64,
}

/// Whether worker `index` of `count` may forward `pkt`, read by itself, without
/// the I/O thread: it owns the name, an Interest has a full dispatch key or no
/// CanBePrefix (a short CanBePrefix one is for the I/O thread to note), and Data waits for no short CanBePrefix
/// Interest on another worker (`short_until`).
fn owns(pkt: &[u8], index: usize, count: usize, short_until: &AtomicU64, now_ms: u64) -> bool {
    let Some(keys) = name_keys(pkt) else { return false };
    let complete = if keys.interest { !keys.can_be_prefix || keys.hashed == DISPATCH_COMPONENTS } else { now_ms >= short_until.load(Ordering::SeqCst) };
    complete && owner(Some(keys.key()), count) == index
}

/// A worker's port of the hash face, and what it knows to use it.
struct Port {
    sock: WorkerPort,
    /// This worker's index and the number of workers: the port's owner test.
    index: usize,
    count: usize,
    /// Faces on the hash face by remote address, and back with whether the
    /// worker sends to the face itself: a neighbour's port-by-hash face at once,
    /// a one-port peer once it has sent to this port — a peer unaware of
    /// port-by-hash must hear back from the port it uses, which the I/O thread
    /// sends from.
    peers: HashMap<SocketAddr, FaceId>,
    remotes: HashMap<FaceId, (HashPorts, bool)>,
    /// Link counters since the last report, and when the next is due.
    counters: HashMap<FaceId, LinkCounters>,
    next_report_ms: u64,
    short_until: Arc<AtomicU64>,
    datagrams: Vec<Datagram>,
    direct: u64,
    punted: u64,
}

impl Port {
    fn new(sock: WorkerPort, index: usize, count: usize, short_until: Arc<AtomicU64>) -> Port {
        Port {
            sock,
            index,
            count,
            peers: HashMap::new(),
            remotes: HashMap::new(),
            counters: HashMap::new(),
            next_report_ms: 0,
            short_until,
            datagrams: Vec::new(),
            direct: 0,
            punted: 0,
        }
    }

    /// The face and packet, when this worker may forward the datagram itself: a
    /// plain packet from a known peer that it [`owns`].
    fn direct(&mut self, d: &Datagram, now_ms: u64) -> Option<(FaceId, Bytes)> {
        let face = *self.peers.get(&d.from)?;
        if let Some((_, seen)) = self.remotes.get_mut(&face) {
            *seen = true;
        }
        let pkt = d.plain()?;
        owns(pkt, self.index, self.count, &self.short_until, now_ms).then(|| (face, pkt.clone()))
    }

    fn forget(&mut self, face: FaceId) {
        if let Some((remote, _)) = self.remotes.remove(&face) {
            for a in remote.addrs() {
                if self.peers.get(&a) == Some(&face) {
                    self.peers.remove(&a);
                }
            }
        }
        self.counters.remove(&face);
    }
}

impl Worker {
    fn now_ms(&self) -> u64 {
        self.clock.now_ms()
    }

    /// Reads the clock and runs the engine's timers if it moved: once per
    /// millisecond (a worker spinning on NIC queues would otherwise walk them
    /// on every poll), and before a burst, so that what lapsed by its time is
    /// gone when it is processed, whenever the worker last woke.
    fn tick(&mut self) -> u64 {
        let now = self.now_ms();
        if now != self.last_tick {
            self.last_tick = now;
            self.fwd.tick(now);
        }
        now
    }

    fn run(mut self) {
        let mut burst: Vec<(FaceId, Bytes)> = Vec::with_capacity(2 * BURST);
        let mut out: Vec<Outgoing> = Vec::with_capacity(4 * BURST);
        let mut events = mio::Events::with_capacity(4);
        // The poller reported an error on the port: its queue is to be read.
        let mut port_error = false;
        if let Some(nic) = &mut self.queues {
            nic.queues.on_thread();
        }
        loop {
            let mut busy = false;
            while burst.len() < BURST {
                let Ok(msg) = self.rx.pop() else { break };
                busy = true;
                match msg {
                    Msg::Packet(face, pkt) => burst.push((face, pkt)),
                    Msg::Copy(face, pkt) => {
                        // Packets before it are processed before it, in their own burst;
                        // it goes with the copies right behind it.
                        self.forward(&mut burst, &mut out);
                        burst.push((face, pkt));
                        while burst.len() < BURST && matches!(self.rx.peek(), Ok(Msg::Copy(..))) {
                            if let Ok(Msg::Copy(face, pkt)) = self.rx.pop() {
                                burst.push((face, pkt));
                            }
                        }
                        self.forward_copies(&mut burst, &mut out);
                    }
                    Msg::Shared(face, pkt) => {
                        self.forward(&mut burst, &mut out);
                        burst.push((face, pkt));
                        let unsolicited = self.fwd.counters.unsolicited_data;
                        self.forward(&mut burst, &mut out);
                        self.fwd.counters.unsolicited_data = unsolicited;
                    }
                    Msg::Control(c) => {
                        // Packets before the change are processed before it.
                        self.forward(&mut burst, &mut out);
                        if !self.control(*c) {
                            return;
                        }
                    }
                }
            }
            busy |= self.receive(&mut burst, std::mem::take(&mut port_error));
            busy |= self.receive_nic(&mut burst);
            self.forward(&mut burst, &mut out);
            let now = self.tick();
            self.report(now);
            if !busy && self.queues.is_none() {
                let wait = self.fwd.next_deadline().map_or(MAX_PARK, |d| Duration::from_millis(d.saturating_sub(now)).min(MAX_PARK));
                self.wake.sleeping.store(true, Ordering::SeqCst);
                fence(Ordering::SeqCst);
                if self.rx.is_empty() {
                    // EINTR and poll errors only end the wait early.
                    let _ = self.poll.poll(&mut events, Some(wait));
                    port_error = events.iter().any(|e| e.token() == PORT && e.is_error());
                }
                self.wake.sleeping.store(false, Ordering::SeqCst);
            }
        }
    }

    /// Reads a burst from the worker's port: what it owns joins `burst`, the rest
    /// goes back to the I/O thread, and so do up to a batch of the port's error
    /// queue when the socket reported an error (`error`, from the poller, or a
    /// receive or send that met one). True when the burst was full or errors
    /// are left, so more may wait; otherwise the socket was read dry and its
    /// poller reports the next datagram or error (edge-triggered), so the
    /// worker may sleep without another read.
    fn receive(&mut self, burst: &mut Vec<(FaceId, Bytes)>, error: bool) -> bool {
        let now = self.now_ms();
        let Some(port) = &mut self.port else { return false };
        let mut datagrams = std::mem::take(&mut port.datagrams);
        let mut more = port.sock.recv(&mut datagrams);
        let mut queued = false;
        for d in datagrams.drain(..) {
            match port.direct(&d, now) {
                Some((face, pkt)) => {
                    let c = port.counters.entry(face).or_default();
                    c.in_packets += 1;
                    c.in_bytes += d.len as u64;
                    port.direct += 1;
                    burst.push((face, pkt));
                }
                None => {
                    port.punted += 1;
                    match self.tx.push(FromWorker::Punt { port: port.index, datagram: d }) {
                        Ok(()) => queued = true,
                        Err(_) => self.out_ring_drops += 1,
                    }
                }
            }
        }
        port.datagrams = datagrams;
        // After the datagrams read with them, which came before the errors
        // did: a dead peer's last datagram must not make its face again.
        let mut errors = Vec::new();
        more |= port.sock.errors(error, &mut errors);
        if !errors.is_empty() {
            match self.tx.push(FromWorker::Errors { port: port.index, errors }) {
                Ok(()) => queued = true,
                // A datagram sent to the peer again meets the error again.
                Err(_) => self.out_ring_drops += 1,
            }
        }
        if queued {
            self.wake_io();
        }
        more
    }

    /// Reads a burst from every NIC queue: what the worker owns joins `burst`, the
    /// rest goes to the I/O thread to dispatch. True when frames came.
    fn receive_nic(&mut self, burst: &mut Vec<(FaceId, Bytes)>) -> bool {
        let Some(nic) = &mut self.queues else { return false };
        let start = burst.len();
        if nic.queues.recv(burst) == 0 {
            return false;
        }
        let now = self.clock.now_ms();
        let (tx, drops) = (&mut self.tx, &mut self.out_ring_drops);
        let (mut queued, mut seen) = (false, 0);
        // Keeps the arrival order of what stays; each packet either stays or is
        // handed over, never both.
        burst.retain(|(face, pkt)| {
            seen += 1;
            if seen <= start || owns(pkt, nic.index, nic.count, &nic.short_until, now) {
                nic.direct += u64::from(seen > start);
                return true;
            }
            nic.handed += 1;
            match tx.push(FromWorker::Handoff(*face, pkt.clone())) {
                Ok(()) => queued = true,
                Err(_) => *drops += 1,
            }
            false
        });
        if queued {
            self.wake_io();
        }
        true
    }

    /// Hands the port's link counters to the I/O thread, at most once per
    /// [`COUNTER_REPORT_MS`]; kept for the next report while the ring is full.
    fn report(&mut self, now: u64) {
        let Some(port) = &mut self.port else { return };
        if now < port.next_report_ms || port.counters.is_empty() {
            return;
        }
        port.next_report_ms = now + COUNTER_REPORT_MS;
        let counters = port.counters.drain().collect();
        match self.tx.push(FromWorker::Counters(counters)) {
            Ok(()) => self.wake_io(),
            Err(rtrb::PushError::Full(FromWorker::Counters(c))) => port.counters.extend(c),
            Err(_) => {}
        }
    }

    fn wake_io(&self) {
        if self.io_sleeping.swap(false, Ordering::SeqCst) {
            (self.wake_io)();
        }
    }

    /// Runs a burst through the engine, sends what goes to peers on its port, and
    /// queues the rest for the I/O thread.
    fn forward(&mut self, burst: &mut Vec<(FaceId, Bytes)>, out: &mut Vec<Outgoing>) {
        if burst.is_empty() {
            return;
        }
        let now = self.tick();
        self.fwd.process_burst(now, burst, out);
        burst.clear();
        let mut queued = false;
        for mut o in out.drain(..) {
            if let Some(nic) = &mut self.queues {
                match nic.queues.send(o.face, o.pkt) {
                    Some(pkt) => o.pkt = pkt,
                    None => continue,
                }
            }
            if let Some(port) = &mut self.port {
                if let Some(&(to, true)) = port.remotes.get(&o.face) {
                    port.sock.queue(o.face, to.addr_for(&o.pkt), o.pkt);
                    continue;
                }
            }
            match self.tx.push(FromWorker::Send(o)) {
                Ok(()) => queued = true,
                Err(_) => self.out_ring_drops += 1,
            }
        }
        if let Some(nic) = &mut self.queues {
            nic.queues.flush();
        }
        if let Some(port) = &mut self.port {
            let counters = &mut port.counters;
            port.sock.flush(|face, bytes, sent| {
                let c = counters.entry(face).or_default();
                if sent {
                    c.out_packets += 1;
                    c.out_bytes += bytes as u64;
                } else {
                    c.dropped_out += 1;
                }
            });
        }
        if queued {
            self.wake_io();
        }
    }

    /// [`Worker::forward`] for a burst of copies ([`Msg::Copy`]): they satisfy
    /// what is pending here, and count nothing as received — NInData of the face
    /// and the router, malformed, scope violations, unsolicited Data — as their
    /// owner counts each. The engine counts them as any packet, and that is
    /// taken back after, so that ordinary packets pay nothing for it.
    fn forward_copies(&mut self, burst: &mut Vec<(FaceId, Bytes)>, out: &mut Vec<Outgoing>) {
        let c = &self.fwd.counters;
        let (in_data, malformed, scope_violations, unsolicited) = (c.packets.in_data, c.malformed, c.scope_violations, c.unsolicited_data);
        // Each face the copies came from, with its counts before them.
        let mut faces: SmallVec<[(FaceId, FaceCounters); 2]> = SmallVec::new();
        for &(id, _) in burst.iter() {
            if let Some(m) = self.fwd.faces.get(id).filter(|_| faces.iter().all(|(f, _)| *f != id)) {
                faces.push((id, m.counters.clone()));
            }
        }
        self.forward(burst, out);
        let c = &mut self.fwd.counters;
        (c.packets.in_data, c.malformed, c.scope_violations, c.unsolicited_data) = (in_data, malformed, scope_violations, unsolicited);
        for (id, was) in faces {
            if let Some(m) = self.fwd.faces.get_mut(id) {
                m.counters.packets.in_data = was.packets.in_data;
                m.counters.malformed = was.malformed;
            }
        }
    }

    /// Handles one control message; false on Stop.
    fn control(&mut self, c: Control) -> bool {
        match c {
            Control::Apply(change) => {
                if let (Change::Face(id, None), Some(port)) = (&change, &mut self.port) {
                    port.forget(*id);
                }
                change.apply(&mut self.fwd)
            }
            Control::Peer(face, remote) => {
                if let Some(port) = &mut self.port {
                    port.forget(face);
                    for a in remote.addrs() {
                        port.peers.insert(a, face);
                    }
                    port.remotes.insert(face, (remote, remote.count > 1));
                }
            }
            Control::Moved(face, to) => {
                if let Some(port) = &mut self.port {
                    if let Some((remote, seen)) = port.remotes.get_mut(&face) {
                        if remote.count == 1 {
                            *seen = to == port.index;
                        }
                    }
                }
            }
            Control::Stats(reply) => {
                // The numbers as of now: what lapsed by now counted as such.
                self.tick();
                let (mut direct, mut punted) = self.port.as_ref().map_or((0, 0), |p| (p.direct, p.punted));
                if let Some(nic) = &self.queues {
                    direct += nic.direct;
                    punted += nic.handed;
                }
                let s = ShardStats { out_ring_drops: self.out_ring_drops, direct, punted, ..ShardStats::of(&self.fwd) };
                let _ = reply.try_send(s);
            }
            Control::CsErase(prefix, limit, reply) => {
                let _ = reply.try_send(self.fwd.pcct.cs.erase_prefix(&prefix, limit));
            }
            Control::Stop => return false,
        }
        true
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use trajan_engine::EngineConfig;
    use trajan_wire::data::DataBuilder;
    use trajan_wire::{Data, Interest};

    const DOWN: FaceId = 300;
    const UP: FaceId = 301;
    const UP2: FaceId = 302;

    fn route(prefix: &str, face: FaceId) -> Change {
        Change::Route(prefix.parse().unwrap(), [NextHop { face, cost: 0 }].into_iter().collect())
    }

    /// `n` forwarders that know the test faces, sharing a FIB with `/` routed to `UP`.
    fn forwarders(n: usize) -> (Vec<Forwarder<FibReader>>, NodeFibs) {
        forwarders_with(n, &[DOWN, UP, UP2], UP)
    }

    /// `n` forwarders that know `faces`, sharing a FIB with `/` routed to `up`.
    pub(crate) fn forwarders_with(n: usize, faces: &[FaceId], up: FaceId) -> (Vec<Forwarder<FibReader>>, NodeFibs) {
        let mut fib = trajan_tables::Fib::new();
        fib.add_nexthop(&Name::root(), up, 0);
        let fibs = NodeFibs::new(&fib, &[], n);
        let fwds = (0..n)
            .map(|w| {
                let mut f = Forwarder::with_fib(&EngineConfig::default(), 0, fibs.reader(w));
                for &id in faces {
                    Change::Face(id, Some(FaceMeta { point_to_point: true, ..Default::default() })).apply(&mut f);
                }
                f
            })
            .collect();
        (fwds, fibs)
    }

    fn start(n: usize) -> Workers {
        let (fwds, fibs) = forwarders(n);
        Workers::start(fwds, fibs, &[], Vec::new(), Vec::new(), Arc::new(|| {}), Clock::Since(Instant::now())).unwrap()
    }

    pub(crate) fn interest(name: &str, nonce: u32, can_be_prefix: bool) -> Bytes {
        let mut i = Interest::new(name.parse().unwrap());
        i.nonce = Some(nonce);
        i.can_be_prefix = can_be_prefix;
        i.encode()
    }

    /// Everything the workers sent once every one of them has processed its ring:
    /// `stats` is a barrier, since each worker answers it after the packets before it.
    fn settle(w: &mut Workers) -> (Vec<Outgoing>, Vec<ShardStats>) {
        let (out, punted, stats) = settle_ports(w);
        assert!(punted.is_empty(), "workers without ports handed back datagrams");
        (out, stats)
    }

    /// [`settle`] for workers with ports: also the datagrams handed back, as
    /// (port, datagram).
    fn settle_ports(w: &mut Workers) -> (Vec<Outgoing>, Vec<(usize, Datagram)>, Vec<ShardStats>) {
        let stats = w.stats();
        let mut back = Vec::new();
        w.drain(&mut back);
        let (mut out, mut punted) = (Vec::new(), Vec::new());
        for b in back {
            match b {
                FromWorker::Send(o) => out.push(o),
                FromWorker::Punt { port, datagram } => punted.push((port, datagram)),
                FromWorker::Counters(_) | FromWorker::Handoff(..) | FromWorker::Errors { .. } => {}
            }
        }
        (out, punted, stats)
    }

    pub(crate) fn names(out: &[Outgoing], face: FaceId) -> Vec<Name> {
        let mut v: Vec<Name> = out
            .iter()
            .filter(|o| o.face == face)
            .map(|o| {
                let lp = trajan_wire::lp::LpPacket::decode(&o.pkt).unwrap();
                let frag = lp.fragment.unwrap();
                Interest::decode(&frag).map(|i| i.name).or_else(|_| Data::decode(&frag).map(|d| d.name().clone())).unwrap()
            })
            .collect();
        v.sort_by_key(|n| n.to_string());
        v
    }

    #[test]
    fn every_packet_of_an_exchange_meets_its_pit_entry() {
        let mut w = start(2);
        let n = 600;
        // Exact exchanges, and CanBePrefix ones answered by longer Data.
        for i in 0..n {
            w.dispatch(DOWN, interest(&format!("/app/obj{i}/seg=0"), i, false), 0);
            w.dispatch(DOWN, interest(&format!("/disc/obj{i}"), n + i, true), 0);
        }
        w.notify();
        let (out, _) = settle(&mut w);
        assert_eq!(names(&out, UP).len(), 2 * n as usize, "every Interest forwarded once");
        for i in 0..n {
            w.dispatch(UP, DataBuilder::new(format!("/app/obj{i}/seg=0").parse().unwrap()).build(b"x"), 0);
            w.dispatch(UP, DataBuilder::new(format!("/disc/obj{i}/v=1/seg=0").parse().unwrap()).build(b"y"), 0);
        }
        w.notify();
        let (out, stats) = settle(&mut w);
        assert_eq!(names(&out, DOWN).len(), 2 * n as usize, "every Data delivered once");
        for (i, s) in stats.iter().enumerate() {
            assert!(s.counters.packets.in_interests > 0, "worker {i} idle: dispatch does not spread");
            assert_eq!(s.counters.unsolicited_data, 0, "worker {i} got Data whose Interest went elsewhere");
            assert_eq!(s.counters.satisfied_interests, s.counters.packets.in_data, "worker {i}");
            assert_eq!(s.pit_entries, 0, "worker {i}");
        }
        let total = ShardStats::sum(&stats);
        assert_eq!(total.counters.satisfied_interests, 2 * n as u64);
        assert_eq!(total.dispatched, 4 * n as u64);
    }

    /// `cs/erase` with a Count erases that many in all, not that many per shard.
    #[test]
    fn a_limited_cs_erase_counts_across_shards() {
        let mut w = start(3);
        let n = 60u32;
        for i in 0..n {
            w.dispatch(DOWN, interest(&format!("/e/obj{i}"), i, false), 0);
        }
        w.notify();
        settle(&mut w);
        for i in 0..n {
            w.dispatch(UP, DataBuilder::new(format!("/e/obj{i}").parse().unwrap()).build(b"x"), 0);
        }
        w.notify();
        let (_, stats) = settle(&mut w);
        assert_eq!(ShardStats::sum(&stats).cs_entries, n as usize);
        assert!(stats.iter().all(|s| s.cs_entries > 0), "every shard caches some: {:?}", stats.iter().map(|s| s.cs_entries).collect::<Vec<_>>());
        let prefix: Name = "/e".parse().unwrap();
        assert_eq!(w.cs_erase(&prefix, 25), 25);
        assert_eq!(ShardStats::sum(&w.stats()).cs_entries, n as usize - 25);
        assert_eq!(w.cs_erase(&prefix, usize::MAX), n as usize - 25);
        assert_eq!(ShardStats::sum(&w.stats()).cs_entries, 0);
    }

    /// A short CanBePrefix Interest gets its Data from the worker that owns
    /// the Data, which hands it a copy; the Data arrived once, so `faces/list`
    /// and `status/general` count it once.
    #[test]
    fn one_component_can_be_prefix_interests_get_their_data() {
        let mut w = start(2);
        let n = 200u32;
        // `/topN` is keyed by one component, its Data `/topN/obj/v=1` by two: they
        // land on different workers for about half of the names.
        for i in 0..n {
            w.dispatch(DOWN, interest(&format!("/top{i}"), i, true), 0);
        }
        w.notify();
        let (out, _) = settle(&mut w);
        assert_eq!(names(&out, UP).len(), n as usize);
        for i in 0..n {
            w.dispatch(UP, DataBuilder::new(format!("/top{i}/obj/v=1").parse().unwrap()).build(b"z"), 0);
        }
        w.notify();
        let (out, stats) = settle(&mut w);
        assert_eq!(names(&out, DOWN).len(), n as usize, "every short CanBePrefix Interest satisfied once");
        let total = ShardStats::sum(&stats);
        assert_eq!(total.counters.satisfied_interests, n as u64);
        assert!(total.dispatched > 2 * n as u64, "some Data crossed to the short Interest's worker");
        assert_eq!(total.faces[&UP].packets.in_data, n as u64, "faces/list NInData");
        assert_eq!(total.counters.packets.in_data, n as u64, "status/general NInData");
        assert_eq!(total.counters.unsolicited_data, 0, "nor as unsolicited by the Data's owner, which copied it");
    }

    /// A copy that finds no Interest on its worker (the short one was answered
    /// already) is dropped there uncounted; its owner still satisfies and counts it.
    #[test]
    fn a_copy_that_satisfies_nothing_is_counted_nowhere() {
        let mut w = start(2);
        let n = 200u32;
        for i in 0..n {
            w.dispatch(DOWN, interest(&format!("/top{i}"), i, true), 0);
            w.dispatch(UP, DataBuilder::new(format!("/top{i}/a/v=1").parse().unwrap()).build(b"z"), 0);
            w.dispatch(DOWN, interest(&format!("/top{i}/b/v=1"), n + i, false), 0);
        }
        w.notify();
        let before = ShardStats::sum(&settle(&mut w).1);
        for i in 0..n {
            w.dispatch(UP, DataBuilder::new(format!("/top{i}/b/v=1").parse().unwrap()).build(b"z"), 0);
        }
        w.notify();
        let (out, stats) = settle(&mut w);
        let total = ShardStats::sum(&stats);
        assert!(total.dispatched - before.dispatched > n as u64, "some Data was copied");
        assert_eq!(names(&out, DOWN).len(), n as usize, "each owner answered its Interest");
        assert_eq!(total.faces[&UP].packets.in_data - before.faces[&UP].packets.in_data, n as u64, "faces/list NInData");
        assert_eq!(total.counters.packets.in_data - before.counters.packets.in_data, n as u64, "status/general NInData");
        assert_eq!(total.counters.unsolicited_data, before.counters.unsolicited_data, "nor as unsolicited");
        assert_eq!(total.counters.satisfied_interests, 2 * n as u64);
    }

    #[test]
    fn route_updates_while_forwarding_lose_and_duplicate_nothing() {
        let mut w = start(2);
        let n = 1000u32;
        let mut out = Vec::new();
        for i in 0..n {
            if i % 50 == 0 {
                // Move /r between two upstreams; what follows sees the new route.
                w.broadcast(route("/r", if i % 100 == 0 { UP2 } else { UP }));
            }
            w.dispatch(DOWN, interest(&format!("/r/x{i}/seg=0"), i, false), 0);
            w.notify();
            // Churn unrelated routes on the shared FIB while the workers forward.
            w.broadcast(route(&format!("/other{i}"), UP2));
            w.broadcast(Change::Route(format!("/other{i}").parse().unwrap(), SmallVec::new()));
            if i % 50 == 49 {
                out.extend(settle(&mut w).0);
            }
        }
        let (rest, stats) = settle(&mut w);
        out.extend(rest);
        let mut up: Vec<Name> = names(&out, UP).into_iter().chain(names(&out, UP2)).collect();
        up.sort_by_key(|n| n.to_string());
        let before = up.len();
        up.dedup();
        assert_eq!(before, up.len(), "an Interest was forwarded twice");
        assert_eq!(up.len(), n as usize, "an Interest was lost");
        // A route change is published before `broadcast` returns: every Interest
        // dispatched after it followed it.
        let to_up2 = names(&out, UP2);
        for i in 0..n {
            let name: Name = format!("/r/x{i}/seg=0").parse().unwrap();
            assert_eq!(to_up2.contains(&name), (i / 50) % 2 == 0, "Interest {i} did not follow the route in force");
        }
        let total = ShardStats::sum(&stats);
        assert_eq!((total.counters.no_route, total.in_ring_drops, total.out_ring_drops), (0, 0, 0));
    }

    /// Workers with ports of a hash face on loopback, the face `DOWN` being the
    /// test's socket; returns the workers, the socket and the ports.
    fn start_with_ports(n: usize) -> (Workers, std::net::UdpSocket, trajan_io::HashPorts, trajan_io::Io) {
        let hash = trajan_io::HashPorts { base: "127.0.0.1:0".parse().unwrap(), count: n };
        let cfg = trajan_io::IoConfig { udp_listen: vec![], tcp_listen: vec![], unix_path: None, hash_ports: Some(hash), ..Default::default() };
        let mut io = trajan_io::Io::new(cfg).unwrap();
        let ports = io.worker_ports(COUNTER_REPORT_LAG).unwrap();
        let hash = io.hash_ports().unwrap();
        let (fwds, fibs) = forwarders(n);
        let mut w = Workers::start(fwds, fibs, &[], ports, Vec::new(), Arc::new(|| {}), Clock::Since(Instant::now())).unwrap();
        let sock = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        sock.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        w.add_peer(DOWN, trajan_io::HashPorts { base: sock.local_addr().unwrap(), count: 1 });
        (w, sock, hash, io)
    }

    /// What workers with ports handed back so far, and how many datagrams were
    /// sent to their ports.
    #[derive(Default)]
    struct Seen {
        out: Vec<Outgoing>,
        punted: Vec<(usize, Datagram)>,
        stats: Vec<ShardStats>,
        sent: u64,
    }

    impl Seen {
        /// Sends datagrams from `from`, letting the workers read every 32 so that a
        /// small socket buffer drops none, then settles.
        fn send(&mut self, w: &mut Workers, from: &std::net::UdpSocket, datagrams: impl IntoIterator<Item = (Bytes, SocketAddr)>) {
            for (pkt, to) in datagrams {
                from.send_to(&pkt, to).unwrap();
                self.sent += 1;
                if self.sent.is_multiple_of(32) {
                    self.settle(w);
                }
            }
            self.settle(w);
        }

        /// Waits (bounded) until the workers have read every datagram sent, gathering
        /// what they handed back; the callers assert on it.
        fn settle(&mut self, w: &mut Workers) {
            for _ in 0..1000 {
                let (out, punted, stats) = settle_ports(w);
                self.out.extend(out);
                self.punted.extend(punted);
                let total = ShardStats::sum(&stats);
                self.stats = stats;
                if total.direct + total.punted >= self.sent {
                    return;
                }
                std::thread::sleep(Duration::from_millis(10));
            }
            panic!("the workers did not read {} datagrams", self.sent);
        }
    }

    #[test]
    fn port_by_hash_exchanges_need_no_hand_off() {
        let (mut w, sock, hash, _io) = start_with_ports(2);
        let n = 200u32;
        let mut port_of = HashMap::new();
        let mut seen = Seen::default();
        let pkts: Vec<_> = (0..n)
            .map(|i| {
                let name = format!("/app/obj{i}/seg=0");
                let pkt = interest(&name, i, false);
                let to = hash.addr_for(&pkt);
                port_of.insert(name, to);
                (pkt, to)
            })
            .collect();
        seen.send(&mut w, &sock, pkts);
        assert!(seen.punted.is_empty(), "{} datagrams handed back", seen.punted.len());
        assert_eq!(names(&seen.out, UP).len(), n as usize, "every Interest forwarded once");
        for (i, s) in seen.stats.iter().enumerate() {
            assert!(s.direct > 0, "worker {i} read nothing: the port hash does not spread");
            assert_eq!(s.dispatched, 0, "worker {i} was handed packets");
        }
        // The Data goes back to the consumer from its worker's port, the one the
        // Interest was sent to.
        for i in 0..n {
            w.dispatch(UP, DataBuilder::new(format!("/app/obj{i}/seg=0").parse().unwrap()).build(b"x"), 0);
        }
        w.notify();
        let mut buf = vec![0; 9000];
        for _ in 0..n {
            let (len, from) = sock.recv_from(&mut buf).unwrap();
            let lp = trajan_wire::lp::LpPacket::decode(&Bytes::copy_from_slice(&buf[..len])).unwrap();
            let data = Data::decode(&lp.fragment.unwrap()).unwrap();
            assert_eq!(port_of.remove(&data.name().to_string()), Some(from), "{} from the wrong port", data.name());
        }
        assert!(port_of.is_empty());
        let total = ShardStats::sum(&w.stats());
        assert_eq!((total.counters.satisfied_interests, total.counters.unsolicited_data), (n as u64, 0));
    }

    #[test]
    fn wrong_port_short_and_unknown_peer_datagrams_go_back_to_the_io_thread() {
        let (mut w, sock, hash, _io) = start_with_ports(2);
        let mut seen = Seen::default();
        // Every packet to port 0: those owned by worker 1 come back, once each.
        let pkts: Vec<_> = (0..100u32).map(|i| (interest(&format!("/app/obj{i}/seg=0"), i, false), hash.nth(0))).collect();
        let misdirected = pkts.iter().filter(|(p, _)| hash.addr_for(p) != hash.nth(0)).count();
        seen.send(&mut w, &sock, pkts);
        // A short Interest (the I/O thread must note it), garbage, and a stranger.
        seen.send(&mut w, &sock, [(interest("/top", 900, true), hash.nth(1)), (Bytes::from_static(&[0x05, 0x10, 0x07]), hash.nth(1))]);
        let stranger = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        let pkt = interest("/app/x/seg=0", 901, false);
        let to = hash.addr_for(&pkt);
        seen.send(&mut w, &stranger, [(pkt, to)]);
        assert_eq!(seen.punted.len(), misdirected + 3, "misdirected, short, garbage and stranger come back");
        assert!(seen.punted.iter().all(|(port, d)| *port < 2 && d.data.is_some()));
        assert!(seen.punted.iter().any(|(_, d)| d.from == stranger.local_addr().unwrap()));
        assert_eq!(names(&seen.out, UP).len(), 100 - misdirected, "the rest was forwarded where it arrived");
        let total = ShardStats::sum(&seen.stats);
        assert_eq!((total.direct, total.punted), (100 - misdirected as u64, misdirected as u64 + 3));
    }

    #[test]
    fn route_updates_while_workers_read_their_ports_lose_and_duplicate_nothing() {
        let (mut w, sock, hash, _io) = start_with_ports(2);
        let mut seen = Seen::default();
        let n = 1000u32;
        for chunk in (0..n).collect::<Vec<_>>().chunks(50) {
            let first = chunk[0];
            // Move /r between two upstreams, and churn unrelated routes.
            w.broadcast(route("/r", if first % 100 == 0 { UP2 } else { UP }));
            w.broadcast(route(&format!("/other{first}"), UP2));
            w.broadcast(Change::Route(format!("/other{first}").parse().unwrap(), SmallVec::new()));
            let pkts = chunk.iter().map(|&i| {
                let pkt = interest(&format!("/r/x{i}/seg=0"), i, false);
                let to = hash.addr_for(&pkt);
                (pkt, to)
            });
            seen.send(&mut w, &sock, pkts);
        }
        let mut up: Vec<Name> = names(&seen.out, UP).into_iter().chain(names(&seen.out, UP2)).collect();
        up.sort_by_key(|n| n.to_string());
        let before = up.len();
        up.dedup();
        assert_eq!(before, up.len(), "an Interest was forwarded twice");
        assert_eq!(up.len(), n as usize, "an Interest was lost");
        assert!(!names(&seen.out, UP2).is_empty() && !names(&seen.out, UP).is_empty());
        let total = ShardStats::sum(&seen.stats);
        assert_eq!((total.counters.no_route, total.in_ring_drops, total.out_ring_drops, total.punted), (0, 0, 0, 0));
        assert_eq!(total.direct, n as u64);
    }

    /// A worker's NIC queues in memory: frames in as (face, packet), frames out
    /// likewise, for faces `DOWN` and `UP`.
    struct MemQueues {
        rx: rtrb::Consumer<(FaceId, Bytes)>,
        tx: rtrb::Producer<(FaceId, Bytes)>,
    }

    impl WorkerQueues for MemQueues {
        fn recv(&mut self, out: &mut Vec<(FaceId, Bytes)>) -> usize {
            let n = self.rx.slots().min(32);
            out.extend((0..n).filter_map(|_| self.rx.pop().ok()));
            n
        }

        fn send(&mut self, face: FaceId, pkt: Bytes) -> Option<Bytes> {
            if face != DOWN && face != UP {
                return Some(pkt);
            }
            self.tx.push((face, pkt)).expect("test ring has room");
            None
        }

        fn flush(&mut self) {}
    }

    /// The test's ends of one worker's queues: what goes in, what came out.
    type QueueEnds = (rtrb::Producer<(FaceId, Bytes)>, rtrb::Consumer<(FaceId, Bytes)>);

    /// `n` workers polling in-memory NIC queues.
    fn start_with_queues(n: usize) -> (Workers, Vec<QueueEnds>) {
        let (fwds, fibs) = forwarders(n);
        let (mut queues, mut ends) = (Vec::new(), Vec::new());
        for _ in 0..n {
            let (to, rx) = rtrb::RingBuffer::new(8192);
            let (tx, from) = rtrb::RingBuffer::new(8192);
            queues.push(Box::new(MemQueues { rx, tx }) as Box<dyn WorkerQueues>);
            ends.push((to, from));
        }
        (Workers::start(fwds, fibs, &[], Vec::new(), queues, Arc::new(|| {}), Clock::Since(Instant::now())).unwrap(), ends)
    }

    /// Plays the I/O thread (hand-offs go to [`Workers::dispatch`]) until the
    /// workers sent `want` packets on their queues; returns them as Outgoing.
    fn run_io(w: &mut Workers, ends: &mut [QueueEnds], want: usize) -> Vec<Outgoing> {
        run_io_with(w, want, |sent| {
            for (_, from) in ends.iter_mut() {
                while let Ok((face, pkt)) = from.pop() {
                    sent.push(Outgoing { face, pkt });
                }
            }
        })
    }

    /// Plays the I/O thread for workers that only have NIC faces, gathering with
    /// `gather` what they sent on them, until there are `want` (bounded).
    pub(crate) fn run_io_with(w: &mut Workers, want: usize, mut gather: impl FnMut(&mut Vec<Outgoing>)) -> Vec<Outgoing> {
        let mut sent = Vec::new();
        for _ in 0..2000 {
            let mut back = Vec::new();
            w.drain(&mut back);
            for b in back {
                match b {
                    FromWorker::Handoff(face, pkt) => w.dispatch(face, pkt, 0),
                    other => panic!("workers with only NIC faces returned {other:?}"),
                }
            }
            w.notify();
            gather(&mut sent);
            if sent.len() >= want {
                return sent;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        panic!("the workers sent {} of {want} packets", sent.len());
    }

    /// The name of test exchange `i`.
    pub(crate) fn seg_name(i: u32) -> String {
        format!("/app/obj{i}/seg=0")
    }

    /// Puts Interest `i` of `n` on queue `i % 2` with `put(queue, packet)`, without
    /// regard to its name, as RSS does; returns how many landed on the queue of the
    /// worker that does not own them (about half).
    pub(crate) fn spread_interests(w: &Workers, n: u32, mut put: impl FnMut(usize, Bytes)) -> u64 {
        let mut misqueued = 0;
        for i in 0..n {
            let pkt = interest(&seg_name(i), i, false);
            misqueued += u64::from(w.owner_of(&pkt) != (i % 2) as usize);
            put((i % 2) as usize, pkt);
        }
        misqueued
    }

    #[test]
    fn nic_queues_forward_what_the_worker_owns_and_hand_off_the_rest_exactly_once() {
        let (mut w, mut ends) = start_with_queues(2);
        let n = 400u32;
        let misqueued = spread_interests(&w, n, |q, pkt| ends[q].0.push((DOWN, pkt)).unwrap());
        let out = run_io(&mut w, &mut ends, n as usize);
        let mut up = names(&out, UP);
        assert_eq!(up.len(), n as usize, "every Interest forwarded, on the queues");
        up.dedup();
        assert_eq!(up.len(), n as usize, "an Interest was forwarded twice");
        let total = ShardStats::sum(&w.stats());
        assert!(misqueued > 0 && misqueued < n as u64);
        assert_eq!((total.direct, total.punted, total.dispatched), (n as u64 - misqueued, misqueued, misqueued));
        // The Data come back on the other queue: the mis-queued ones meet their PIT
        // entry after a hand-off, and leave on the owner's queue.
        for i in 0..n {
            ends[((i + 1) % 2) as usize].0.push((UP, DataBuilder::new(seg_name(i).parse().unwrap()).build(b"x"))).unwrap();
        }
        let out = run_io(&mut w, &mut ends, n as usize);
        let mut down = names(&out, DOWN);
        assert_eq!(down.len(), n as usize, "every Data delivered");
        down.dedup();
        assert_eq!(down.len(), n as usize, "a Data was delivered twice");
        let stats = w.stats();
        for (i, s) in stats.iter().enumerate() {
            assert_eq!(s.counters.unsolicited_data, 0, "worker {i} got Data whose Interest went elsewhere");
            assert_eq!(s.pit_entries, 0, "worker {i}");
            assert!(s.direct > 0, "worker {i} forwarded nothing from its own queue");
        }
        let total = ShardStats::sum(&stats);
        assert_eq!(total.counters.satisfied_interests, n as u64);
        assert_eq!(total.direct + total.punted, 2 * n as u64, "every frame either forwarded where it came or handed off");
        assert_eq!((total.in_ring_drops, total.out_ring_drops), (0, 0));
    }

    #[test]
    fn management_queries_reach_every_shard() {
        let mut w = start(3);
        for i in 0..30 {
            w.dispatch(UP, DataBuilder::new(format!("/c/{i}").parse().unwrap()).build(b"z"), 0);
        }
        w.notify();
        let stats = w.stats();
        assert_eq!(stats.len(), 3);
        assert_eq!(ShardStats::sum(&stats).counters.unsolicited_data, 30);
        assert_eq!(w.cs_erase(&"/c".parse().unwrap(), 100), 0, "unsolicited Data is not cached");
        w.broadcast(Change::Cs { capacity: 7, admit: false, serve: true });
        w.broadcast(Change::Strategy("/m".parse().unwrap(), Some(StrategyKind::Multicast)));
        w.broadcast(Change::Face(UP2, None));
        let stats = w.stats();
        assert!(stats.iter().all(|s| s.cs_capacity == 7 && !s.cs_admit && s.cs_serve && !s.faces.contains_key(&UP2)));
        let total = ShardStats::sum(&stats);
        assert!(!total.cs_admit && total.cs_serve, "the sum admits only if every shard does");
    }
}
