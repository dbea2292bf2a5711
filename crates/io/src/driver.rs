//! [`Io`]: the poll loop body that owns the listeners and faces.
//!
//! mio is edge-triggered, so a socket that still has data after its burst was read
//! is remembered in a ready queue and served on a later poll without waiting; that
//! is what bounds the work one peer can cause per poll without losing wake-ups.
//! One poll also serves at most [`POLL_BURSTS`] bursts of packets in all, taking
//! the queue in turn, so many busy peers together cannot make one poll's output
//! (and the buffers that hold it) as large as they like, and none waits for ever.

use std::collections::{HashMap, HashSet, VecDeque};
use std::io;
use std::mem;
use std::net::SocketAddr;
use std::ops::Range;
use std::os::fd::{AsFd, AsRawFd};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use mio::{Events, Interest, Poll, Registry, Token};

use crate::fd_limit;
use crate::inbound::{classify, is_network_packet_frame, is_one_network_packet, Inbound};
use crate::listen::{self, SocketFile};
use crate::reassembly::{Budget, Reassembler};
use crate::stream::{ReadStatus, StreamConn, StreamSocket};
use crate::udp::{Datagram, Outgoing, SendResult, SocketError, UdpChannel, WorkerPort};
use crate::uri::{self, Scheme};
use crate::{FaceCounters, FaceId, FaceInfo, FaceKind, HashPorts, IoConfig, IoError, IoEvent, IoStats, Persistency, FACE_QUEUE_RESERVE, FIRST_FACE_ID, MAX_FRAME_SIZE, QUEUED_PACKET_OVERHEAD, TCP_CONNECT_TIMEOUT};

const WAKER: Token = Token(0);

/// Longest gap between sweeps for idle UDP faces, stalled stream faces and
/// the receive buffers of idle stream faces; `poll` returns at least this often.
const MAX_SWEEP_INTERVAL: Duration = Duration::from_secs(1);

/// Most packets one [`Io::poll`] returns, in bursts ([`IoConfig::burst`]): 4 ×
/// 64 by default. Each ready source still gives at most one burst per poll; this
/// bounds them all together, so a thousand connections each holding a burst do
/// not make one poll return 64,000 packets (and the caller's buffers grow to that
/// and keep it). Sources left over are served first by the next poll, which
/// does not wait while any are left, so the cost is a little latency, not input.
const POLL_BURSTS: usize = 4;

/// A permanent TCP face redials 1 s after its connection is lost or refused,
/// doubling the wait after each failure in a row up to this.
const MAX_REDIAL_WAIT: Duration = Duration::from_secs(60);

/// How soon a listener whose `accept` failed (out of descriptors, typically)
/// is tried again. mio reports a listener only when a new connection arrives,
/// so without a retry the connections already waiting would wait for another;
/// retrying at once would spin while the cause lasts.
const ACCEPT_RETRY: Duration = Duration::from_millis(100);

/// Lets another thread interrupt [`Io::poll`] (for shutdown on a signal).
#[derive(Clone)]
pub struct Waker(Arc<mio::Waker>);

impl Waker {
    /// Makes the current or next `poll` return promptly.
    pub fn wake(&self) -> io::Result<()> {
        self.0.wake()
    }
}

/// What a face is attached to.
enum Link {
    Udp {
        channel: usize,
        /// The channel it sends from: its own, or on the hash face the port the
        /// peer last sent to, so that a peer using a single port (a connected
        /// socket, a sender unaware of port-by-hash) hears back from that port.
        home: usize,
        remote: SocketAddr,
        /// What this face's packets waiting in the channel's send queue are
        /// charged: each its length plus [`QUEUED_PACKET_OVERHEAD`].
        queued: usize,
        /// More than 1: the remote is a Trajan neighbour's port-by-hash face with
        /// this many ports from `remote`; each packet goes to its name's port.
        ports: usize,
    },
    Stream(StreamConn),
    /// A permanent TCP face between connections, waiting to redial (listed in
    /// `Io::redials`): what is sent to it meanwhile is dropped and counted.
    Redial,
}

struct Face {
    info: FaceInfo,
    counters: FaceCounters,
    reassembler: Reassembler,
    link: Link,
    /// The remote of a TCP face this side dialed (`create_face`), which it
    /// redials when permanent.
    dialed: Option<SocketAddr>,
    /// Connection attempts failed in a row, which set the wait before the next.
    failures: u32,
    /// When the face last received an Interest, Data or LpPacket, or else when
    /// it was made: how long it has been idle, for the UDP idle timeout and for
    /// giving way to a new peer ([`IoConfig::evict_idle`]). Other bytes do not
    /// count, or a sender could keep a face with bytes the engine throws away.
    last_rx: Instant,
    /// Opened by a peer on the network (a datagram from a new UDP address, an
    /// accepted TCP connection), not by management or a local application.
    peer_made: bool,
    /// A route goes through the face ([`Io::set_routed`]): a producer that
    /// registered a prefix and waits for Interests hears nothing while nobody
    /// asks, yet losing its face would cut its prefix off the network.
    routed: bool,
}

impl Face {
    /// A face made `now`, by a network peer or not (`peer_made`), with nothing
    /// counted, held or dialed yet.
    fn new(info: FaceInfo, link: Link, now: Instant, peer_made: bool) -> Face {
        Face { info, counters: FaceCounters::default(), reassembler: Reassembler::new(), link, dialed: None, failures: 0, last_rx: now, peer_made, routed: false }
    }

    /// Whether the face may close to make room for a new peer once idle long
    /// enough: one a network peer opened, nobody raised above on-demand, and
    /// no route goes through.
    fn gives_way(&self) -> bool {
        self.peer_made && !self.routed && self.info.persistency == Persistency::OnDemand
    }

    /// What a stream face's queue is charged ([`StreamConn::queued`]; 0 for a
    /// UDP face, whose packets wait in its channel's queue).
    fn stream_queued(&self) -> usize {
        match &self.link {
            Link::Stream(conn) => conn.queued(),
            Link::Udp { .. } | Link::Redial => 0,
        }
    }

    /// Whether a lost or refused connection is redialed rather than closing the
    /// face: a permanent face this side dialed, as NFD's permanent TCP faces.
    fn redials(&self) -> bool {
        self.dialed.is_some() && self.info.persistency == Persistency::Permanent
    }

    /// An outgoing TCP connection still being established.
    fn is_connecting(&self) -> bool {
        matches!(&self.link, Link::Stream(conn) if conn.is_connecting())
    }
}

/// Why a stream face is being driven.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Drive {
    /// The socket reported input (or an error or hang-up).
    Readable,
    /// The socket reported room for output after a write had filled it.
    Writable,
    /// Packets were queued by `send`.
    Flush,
}

/// Why a stream face is closing.
enum Close {
    PeerClosed,
    Corrupt,
    Failed(io::Error),
}

impl std::fmt::Display for Close {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Close::PeerClosed => f.write_str("closed by the peer"),
            Close::Corrupt => f.write_str("not a valid TLV stream"),
            Close::Failed(e) => write!(f, "{e}"),
        }
    }
}

/// Sources that may still have input (readable since they were last read dry),
/// in the order they are to be served: a source served and still holding input
/// goes to the back, so every one gets its turn however many there are. Each is
/// in the queue at most once.
#[derive(Default)]
struct ReadyQueue {
    order: VecDeque<Token>,
    members: HashSet<Token>,
}

impl ReadyQueue {
    fn is_empty(&self) -> bool {
        self.order.is_empty()
    }

    fn len(&self) -> usize {
        self.order.len()
    }

    /// Queues `token` at the back unless it is already waiting (where it keeps
    /// its place).
    fn insert(&mut self, token: Token) {
        if self.members.insert(token) {
            self.order.push_back(token);
        }
    }

    /// Takes `token` out (its source is gone or no longer read here).
    fn remove(&mut self, token: Token) {
        if self.members.remove(&token) {
            self.order.retain(|&t| t != token);
        }
    }

    /// The source whose turn it is.
    fn pop(&mut self) -> Option<Token> {
        let token = self.order.pop_front()?;
        self.members.remove(&token);
        Some(token)
    }
}

/// What a token stands for: the waker, then the listeners in configuration order,
/// then faces, whose tokens are their ids.
enum Source {
    Waker,
    Udp(usize),
    Tcp(usize),
    Unix,
    Face(FaceId),
}

struct UnixListener {
    sock: mio::net::UnixListener,
    local_uri: String,
    _file: SocketFile,
}

/// The faces and sockets of one forwarding loop. `Send`, so a loop can be built
/// on one thread and run on the worker thread it is pinned to.
pub struct Io {
    poll: Poll,
    mio_events: Events,
    waker: Arc<mio::Waker>,
    cfg: IoConfig,
    /// UDP listeners, then the ports of the hash face (in port order).
    udp: Vec<UdpChannel>,
    /// Which of `udp` are the hash face's ports; the first stands for all of them
    /// in the face table, so a peer has one face whichever port it uses.
    hash: Range<usize>,
    hash_ports: Option<HashPorts>,
    tcp: Vec<mio::net::TcpListener>,
    unix: Option<UnixListener>,
    faces: HashMap<FaceId, Face>,
    udp_faces: HashMap<(usize, SocketAddr), FaceId>,
    next_id: FaceId,
    /// Sources that may still have input after their last burst, in turn.
    ready: ReadyQueue,
    /// Stream faces with queued packets that the next `flush` should write.
    dirty: Vec<FaceId>,
    /// FaceDown events found outside `poll` (a write failing in `flush`).
    pending: Vec<IoEvent>,
    /// Outgoing TCP connections not yet established, with when each is given up.
    connecting: Vec<(FaceId, Instant)>,
    /// Permanent TCP faces waiting to redial, with when.
    redials: Vec<(FaceId, Instant)>,
    next_sweep: Instant,
    /// Until `evict_idle` after this, a search of the full table would find
    /// too few faces to give way ([`Face::gives_way`]): set, when a search
    /// found none idle for [`IoConfig::evict_idle`], to when the oldest such
    /// face last received ([`Io::heard_until`]; faces made later, and faces
    /// heard from since, are newer still), and otherwise (none at all, or too
    /// few) to the time of the search. So a flood of new peers against a full table of busy faces
    /// costs no search per attempt.
    idle_floor: Instant,
    /// The same as [`Io::idle_floor`] for a search among the faces that hold
    /// a descriptor, made when a connection finds none left.
    fd_idle_floor: Instant,
    /// Listeners whose `accept` failed, with when to try each again ([`ACCEPT_RETRY`]).
    accept_retries: Vec<(Token, Instant)>,
    /// Listeners whose last `accept` failed, so that a failure repeated on
    /// every retry is logged as a warning once.
    accept_failing: HashSet<Token>,
    /// Once workers read the hash face's ports ([`Io::worker_ports`]), how
    /// long after a UDP face received they may tell it: they report what
    /// they received periodically, so `last_rx` may be that much behind.
    report_lag: Duration,
    stats: IoStats,
    /// What the faces' reassemblers hold, against [`IoConfig::reassembly_bytes`].
    reassembly: Budget,
    /// Bytes queued for sending on every face, each packet counted with
    /// [`QUEUED_PACKET_OVERHEAD`], against [`IoConfig::queue_bytes`] (which
    /// each face may exceed by its reserve, [`shared_bound_admits`]): added as
    /// `send` queues a packet, taken off as it is written, dropped, or its
    /// stream face closes.
    queued: usize,
    // Scratch space kept between calls to avoid allocating per poll.
    readiness: Vec<(Token, bool, bool, bool)>,
    datagrams: Vec<Datagram>,
    frames: Vec<Bytes>,
}

impl Io {
    /// Binds every configured endpoint, failing with the address or path that
    /// could not be used. Raises the process's soft limit on open descriptors to
    /// its hard limit first, and lowers [`IoConfig::max_faces`] to what the
    /// limit allows ([`Io::max_faces`]), since every TCP face costs a descriptor.
    pub fn new(mut cfg: IoConfig) -> Result<Io, IoError> {
        if let Some(limit) = fd_limit::raise() {
            let cap = fd_limit::face_cap(limit);
            if cfg.max_faces > cap {
                tracing::warn!(configured = cfg.max_faces, max_faces = cap, open_file_limit = limit, "max_faces lowered to fit the open-file limit (raise the hard RLIMIT_NOFILE, e.g. systemd's LimitNOFILE, to admit more)");
                cfg.max_faces = cap;
            }
        }
        let os = |action| move |error| IoError::Os { action, error };
        let hash_count = cfg.hash_ports.map_or(0, |h| h.count);
        let listeners = cfg.udp_listen.len() + hash_count + cfg.tcp_listen.len() + 1;
        if listeners >= FIRST_FACE_ID as usize {
            return Err(IoError::Os { action: "listen on so many endpoints", error: io::Error::from(io::ErrorKind::InvalidInput) });
        }
        let poll = Poll::new().map_err(os("create the poller"))?;
        let waker = Arc::new(mio::Waker::new(poll.registry(), WAKER).map_err(os("create the waker"))?);
        let mut next_token = 1;
        let mut token = || {
            next_token += 1;
            Token(next_token - 1)
        };
        let mut udp = Vec::new();
        for addr in &cfg.udp_listen {
            let mut ch = UdpChannel::new(listen::udp_channel(*addr)?, cfg.burst).map_err(os("read a UDP socket's address"))?;
            ch.watch(poll.registry(), token()).map_err(os("register a UDP socket"))?;
            udp.push(ch);
        }
        let hash = udp.len()..udp.len() + hash_count;
        let mut hash_ports = None;
        if let Some(h) = cfg.hash_ports {
            for sock in listen::udp_ports(h.base, h.count)? {
                let mut ch = UdpChannel::new(sock, cfg.burst).map_err(os("read a UDP socket's address"))?;
                ch.watch(poll.registry(), token()).map_err(os("register a UDP socket"))?;
                udp.push(ch);
            }
            hash_ports = Some(HashPorts { base: udp[hash.start].local, count: h.count });
        }
        let mut tcp = Vec::new();
        for addr in &cfg.tcp_listen {
            let mut sock = listen::tcp(*addr)?;
            poll.registry().register(&mut sock, token(), Interest::READABLE).map_err(os("register a TCP listener"))?;
            tcp.push(sock);
        }
        let unix = match &cfg.unix_path {
            Some(path) => {
                let (mut sock, file) = listen::unix(path)?;
                poll.registry().register(&mut sock, token(), Interest::READABLE).map_err(os("register the Unix listener"))?;
                Some(UnixListener { sock, local_uri: format!("unix://{}", path.display()), _file: file })
            }
            None => None,
        };
        Ok(Io {
            poll,
            mio_events: Events::with_capacity(1024),
            waker,
            udp,
            hash,
            hash_ports,
            tcp,
            unix,
            faces: HashMap::new(),
            udp_faces: HashMap::new(),
            next_id: FIRST_FACE_ID,
            ready: ReadyQueue::default(),
            dirty: Vec::new(),
            pending: Vec::new(),
            connecting: Vec::new(),
            redials: Vec::new(),
            next_sweep: Instant::now() + sweep_interval(&cfg),
            idle_floor: Instant::now(),
            fd_idle_floor: Instant::now(),
            accept_retries: Vec::new(),
            accept_failing: HashSet::new(),
            report_lag: Duration::ZERO,
            stats: IoStats::default(),
            reassembly: Budget::new(cfg.reassembly_bytes),
            queued: 0,
            readiness: Vec::new(),
            datagrams: Vec::new(),
            frames: Vec::new(),
            cfg,
        })
    }

    /// The addresses actually bound (UDP listeners, TCP), e.g. to learn a port 0 choice.
    pub fn local_addrs(&self) -> (Vec<SocketAddr>, Vec<SocketAddr>) {
        let udp = self.udp[..self.hash.start].iter().map(|c| c.local).collect();
        let tcp = self.tcp.iter().filter_map(|l| l.local_addr().ok()).collect();
        (udp, tcp)
    }

    /// The face limit in force: [`IoConfig::max_faces`], lowered if need be to
    /// fit the process's limit on open descriptors, which management may report.
    pub fn max_faces(&self) -> usize {
        self.cfg.max_faces
    }

    /// The UDP-port-by-hash face as bound (its real first port), if configured.
    pub fn hash_ports(&self) -> Option<HashPorts> {
        self.hash_ports
    }

    /// Hands the hash face's ports to the workers, one each in port order: from
    /// now on the workers read them, and the I/O thread only sends on its own
    /// duplicates. Empty without a hash face. Call once.
    ///
    /// `report_lag` is the longest a worker may take to tell what a face
    /// received ([`Io::add_worker_counters`]): a UDP face is then taken as
    /// idle only that much later, so a busy peer the workers serve is neither
    /// closed by the idle timeout nor made to give way to a new peer while its
    /// report is on its way.
    pub fn worker_ports(&mut self, report_lag: Duration) -> Result<Vec<WorkerPort>, IoError> {
        if !self.hash.is_empty() {
            self.report_lag = report_lag;
        }
        let os = |action| move |error| IoError::Os { action, error };
        let mut ports = Vec::with_capacity(self.hash.len());
        for i in self.hash.clone() {
            let ch = &mut self.udp[i];
            let dup = socket2::SockRef::from(&ch.sock).try_clone().map_err(os("duplicate a UDP socket"))?;
            let sock = mio::net::UdpSocket::from_std(dup.into());
            ports.push(WorkerPort::new(UdpChannel::new(sock, self.cfg.burst).map_err(os("read a UDP socket's address"))?));
            ch.worker_owned = true;
            ch.watch(self.poll.registry(), Token(1 + i)).map_err(os("register a UDP socket"))?;
            self.ready.remove(Token(1 + i));
        }
        Ok(ports)
    }

    /// Takes a datagram that arrived on port `port` (0-based) of the hash face but
    /// that its worker does not forward itself (a new peer, a fragment, a malformed
    /// or misdirected packet): it gets exactly the treatment it would have had on
    /// the I/O thread's own socket — a face made for a new peer, counters,
    /// reassembly — and what results is appended to `events`.
    pub fn hash_datagram(&mut self, port: usize, d: Datagram, events: &mut Vec<IoEvent>) {
        if port < self.hash.len() {
            self.on_datagram(self.hash.start + port, d, Instant::now(), events);
        }
    }

    /// Where a worker may send to `face` directly from its own port, when this Io
    /// has a hash face: a peer that came in on it (one port), or a neighbour's
    /// port-by-hash face (its ports). `None` for every other face.
    pub fn hash_peer(&self, face: FaceId) -> Option<HashPorts> {
        if self.hash.is_empty() {
            return None;
        }
        match self.faces.get(&face)?.link {
            Link::Udp { channel, remote, ports, .. } if self.hash.contains(&channel) || ports > 1 => Some(HashPorts { base: remote, count: ports }),
            _ => None,
        }
    }

    /// How many ports `face` sends to: more than 1 for a neighbour's
    /// port-by-hash face, 1 for any other (`None` for a face not open). A face
    /// keeps the count it was made with, whatever a later
    /// [`Io::create_face_ports`] for its remote asks.
    pub fn remote_ports(&self, face: FaceId) -> Option<usize> {
        match self.faces.get(&face)?.link {
            Link::Udp { ports, .. } => Some(ports),
            _ => Some(1),
        }
    }

    /// Tells whether a route goes through `face` (the RIB's business, not the
    /// I/O layer's): such a face never gives way to a new peer at the face
    /// limit ([`IoConfig::evict_idle`]), however long it has been idle. An
    /// unknown face is ignored (it may have closed since).
    pub fn set_routed(&mut self, face: FaceId, routed: bool) {
        if let Some(f) = self.faces.get_mut(&face) {
            f.routed = routed;
        }
    }

    /// Adds what a worker received and sent itself on `face` to the face's link
    /// counters; input also counts as activity for the idle timeout.
    pub fn add_worker_counters(&mut self, face: FaceId, c: &FaceCounters, now: Instant) {
        let Some(f) = self.faces.get_mut(&face) else { return };
        f.counters.in_packets += c.in_packets;
        f.counters.in_bytes += c.in_bytes;
        f.counters.out_packets += c.out_packets;
        f.counters.out_bytes += c.out_bytes;
        f.counters.dropped_in += c.dropped_in;
        f.counters.dropped_out += c.dropped_out;
        if c.in_packets > 0 {
            f.last_rx = f.last_rx.max(now);
        }
    }

    /// A handle another thread can use to interrupt [`poll`](Self::poll).
    pub fn waker(&self) -> Waker {
        Waker(self.waker.clone())
    }

    /// Waits at most `timeout` (less if sources still hold input, or an idle sweep
    /// or a listener's retry is due) and appends what happened to `events`. Each
    /// ready socket gives at most `burst` packets per call, and all of them
    /// together at most 4 bursts (`POLL_BURSTS`), so a crowd of busy peers
    /// cannot swell one call's output: the ready sources are served in turn,
    /// those left over first on the next call, so none is starved; it may
    /// return with no events.
    pub fn poll(&mut self, timeout: Option<Duration>, events: &mut Vec<IoEvent>) -> io::Result<()> {
        let busy = !self.ready.is_empty() || !self.pending.is_empty();
        events.append(&mut self.pending);
        let now = Instant::now();
        let wait = if busy {
            Duration::ZERO
        } else {
            let due = self.connecting.iter().chain(&self.redials).map(|&(_, at)| at).chain(self.accept_retries.iter().map(|&(_, at)| at)).fold(self.next_sweep, Instant::min);
            let to_due = due.saturating_duration_since(now);
            timeout.map_or(to_due, |t| t.min(to_due))
        };
        match self.poll.poll(&mut self.mio_events, Some(wait)) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
        let mut readiness = mem::take(&mut self.readiness);
        readiness.extend(self.mio_events.iter().map(|e| {
            (e.token(), e.is_readable() || e.is_read_closed() || e.is_error(), e.is_writable() || e.is_write_closed(), e.is_error())
        }));
        let now = Instant::now();
        for &(token, readable, writable, error) in &readiness {
            if let (true, Source::Udp(i)) = (error, self.source(token)) {
                self.udp[i].errors_pending = true;
            }
            if readable {
                self.ready.insert(token);
            }
            if writable {
                self.on_writable(token, now, events);
            }
        }
        readiness.clear();
        self.readiness = readiness;
        let ready = &mut self.ready;
        self.accept_retries.retain(|&(token, at)| {
            if at <= now {
                ready.insert(token);
            }
            at > now
        });

        // Only the sources queued now: one put back for more input, or added (an
        // accepted connection), waits for the next call, so each source gives at
        // most one burst per call. A source that gave no packet still counts as
        // one, which bounds the sources served per call as well.
        let burst = self.cfg.burst.max(1);
        let cap = POLL_BURSTS * burst;
        let mut packets = 0;
        for _ in 0..self.ready.len() {
            if packets + burst > cap {
                break;
            }
            let Some(token) = self.ready.pop() else { break };
            let before = events.len();
            if self.serve(token, now, events) {
                self.ready.insert(token);
            }
            packets += events[before..].iter().filter(|e| matches!(e, IoEvent::Packet { .. })).count().max(1);
        }

        self.expire_connects(now, events);
        self.redial_due(now);
        if now >= self.next_sweep {
            self.sweep(now, events);
        }
        Ok(())
    }

    /// Closes the faces that timed out by `now` (idle on-demand UDP faces,
    /// stalled stream faces), gives up stale fragments and frees the receive
    /// buffers of stream faces that received nothing since the last sweep, as
    /// [`poll`](Self::poll) does every sweep interval; the fuzz target runs it
    /// at times of its choosing.
    pub(crate) fn sweep(&mut self, now: Instant, events: &mut Vec<IoEvent>) {
        self.expire_idle(now, events);
        self.expire_stalled(now, events);
        for face in self.faces.values_mut() {
            if let Link::Stream(conn) = &mut face.link {
                conn.sweep_rx();
            }
        }
        self.next_sweep = now + sweep_interval(&self.cfg);
    }

    /// Queues `pkt` on `face`. Unknown faces, packets over [`MAX_FRAME_SIZE`] and
    /// packets beyond the face's queue bound or the shared bound are dropped (the
    /// last three counted). The shared bound ([`IoConfig::queue_bytes`]) does not
    /// refuse a face that holds less than its reserve ([`FACE_QUEUE_RESERVE`]),
    /// so faces whose peers stopped reading cannot starve the others. Both
    /// bounds charge the packet its length plus [`QUEUED_PACKET_OVERHEAD`], what
    /// it costs in memory while it waits.
    pub fn send(&mut self, face: FaceId, pkt: Bytes) {
        let Some(f) = self.faces.get_mut(&face) else { return };
        let limit = self.cfg.stream_queue_bytes;
        let held = match &f.link {
            Link::Udp { queued, .. } => *queued,
            Link::Stream(conn) => conn.queued(),
            Link::Redial => 0,
        };
        let cost = pkt.len() + QUEUED_PACKET_OVERHEAD;
        if pkt.len() > MAX_FRAME_SIZE || !shared_bound_admits(&self.cfg, self.queued, held, cost) {
            f.counters.dropped_out += 1;
            return;
        }
        match &mut f.link {
            Link::Udp { home, remote, queued, ports, .. } => {
                if *queued + cost > limit {
                    f.counters.dropped_out += 1;
                    return;
                }
                *queued += cost;
                let to = HashPorts { base: *remote, count: *ports }.addr_for(&pkt);
                let ch = &mut self.udp[*home];
                ch.tx.push_back(Outgoing { face, to, pkt }, ch.blocked);
                self.queued += cost;
            }
            Link::Stream(conn) => {
                let was_writing = conn.can_write();
                if !conn.enqueue(pkt, limit) {
                    f.counters.dropped_out += 1;
                    return;
                }
                self.queued += cost;
                if !was_writing && conn.can_write() {
                    self.dirty.push(face);
                }
            }
            Link::Redial => f.counters.dropped_out += 1,
        }
    }

    /// Hands queued packets to the kernel: one `sendmmsg` per burst per UDP channel
    /// and non-blocking writes on stream faces. Whatever the kernel cannot take now
    /// waits for writability, so a stalled peer never blocks the loop.
    pub fn flush(&mut self) {
        for i in 0..self.udp.len() {
            self.flush_udp(i);
        }
        let mut downs = mem::take(&mut self.pending);
        let mut dirty = mem::take(&mut self.dirty);
        let now = Instant::now();
        for id in dirty.drain(..) {
            self.drive_stream(id, Drive::Flush, now, &mut downs);
        }
        self.dirty = dirty;
        self.pending = downs;
    }

    /// Opens a face to `uri` (`udp4://host:port`, `tcp4://...`, or the 6 forms).
    /// UDP faces send from the listener of the remote's address family, as NFD's
    /// UDP channel does. An existing face to the same remote is returned, its
    /// persistency raised if asked. TCP connects in the background: the outcome
    /// comes as [`IoEvent::Connected`] or [`IoEvent::ConnectFailed`] (refused, or
    /// not established within [`TCP_CONNECT_TIMEOUT`]); a permanent TCP face
    /// redials whenever it has no connection. No `FaceUp` is emitted for faces
    /// made here.
    pub fn create_face(&mut self, uri: &str, persistency: Persistency) -> Result<FaceInfo, IoError> {
        self.open_face(uri, persistency, None)
    }

    /// [`create_face`](Self::create_face) to a Trajan neighbour's UDP-port-by-hash
    /// face: `ports` consecutive ports from the URI's port. Each packet is sent to
    /// the port its name hashes to (the neighbour's worker owning it), and a
    /// datagram from any of the ports belongs to this face. 1 is an ordinary face.
    /// An existing face with another number of ports is refused
    /// ([`IoError::OtherPorts`]) and left as it was, its persistency included:
    /// a face keeps the ports it was made with.
    pub fn create_face_ports(&mut self, uri: &str, persistency: Persistency, ports: usize) -> Result<FaceInfo, IoError> {
        self.open_face(uri, persistency, Some(ports.max(1)))
    }

    /// Opens or finds the face to `uri`: a new one gets `ports` (one when not
    /// given), an existing one must have them when they are given.
    fn open_face(&mut self, uri: &str, persistency: Persistency, want_ports: Option<usize>) -> Result<FaceInfo, IoError> {
        let ports = want_ports.unwrap_or(1);
        let (scheme, addr) = uri::parse_ports(uri, ports)?;
        let remote_uri = uri::format(scheme, addr);
        let existing = match scheme {
            Scheme::Udp => {
                let channel = self
                    .udp
                    .iter()
                    .position(|c| c.local.is_ipv4() == addr.is_ipv4())
                    .ok_or_else(|| IoError::NoUdpChannel { uri: uri.to_owned() })?;
                match self.udp_faces.get(&(channel, addr)) {
                    Some(&id) => id,
                    None => return Ok(self.add_udp_face(channel, addr, ports, persistency, Instant::now(), false)),
                }
            }
            Scheme::Tcp => match self.faces.values().find(|f| f.info.kind == FaceKind::Tcp && f.info.remote_uri == remote_uri) {
                Some(f) => f.info.id,
                None => return self.connect_tcp(uri, addr, persistency),
            },
        };
        let has = self.remote_ports(existing).unwrap_or(1);
        let face = self.faces.get_mut(&existing).expect("face maps agree");
        if let Some(wanted) = want_ports.filter(|&w| w != has) {
            return Err(IoError::OtherPorts { face: existing, uri: face.info.remote_uri.clone(), has, wanted });
        }
        face.info.persistency = face.info.persistency.max(persistency);
        Ok(face.info.clone())
    }

    /// Raises a face's persistency to `want` (`faces/update`), as a
    /// `faces/create` of an existing face does; the error says why it cannot
    /// be: no such face here, a lower persistency (a request only raises one,
    /// see [`Persistency`]), or a stream face accepted from a listener (a Unix
    /// socket's or a TCP peer's), which lives as long as its connection: this
    /// side could not dial it again.
    pub fn raise_persistency(&mut self, face: FaceId, want: Persistency) -> Result<(), &'static str> {
        let f = self.faces.get_mut(&face).ok_or("not a face of the I/O layer (a DPDK port's face is permanent)")?;
        if want < f.info.persistency {
            return Err("a face's persistency can be raised, not lowered (destroy the face and create it again)");
        }
        if want > f.info.persistency && matches!(f.info.kind, FaceKind::Tcp | FaceKind::Unix) && f.dialed.is_none() {
            return Err("a face accepted from a listener lives as long as its connection");
        }
        f.info.persistency = want;
        Ok(())
    }

    /// Closes a face at once (after one last attempt to write what it has queued).
    /// Returns whether it existed. No `FaceDown` is emitted.
    pub fn destroy_face(&mut self, face: FaceId) -> bool {
        if !self.faces.contains_key(&face) {
            return false;
        }
        let mut ignored = Vec::new();
        self.drive_stream(face, Drive::Flush, Instant::now(), &mut ignored);
        self.close_face(face, None);
        true
    }

    /// What is known about one face (for management and the engine).
    pub fn face(&self, face: FaceId) -> Option<&FaceInfo> {
        self.faces.get(&face).map(|f| &f.info)
    }

    /// Every open face, in no particular order (for `faces/list`).
    pub fn faces(&self) -> impl Iterator<Item = &FaceInfo> {
        self.faces.values().map(|f| &f.info)
    }

    /// The face's link counters; gone with the face.
    pub fn counters(&self, face: FaceId) -> Option<&FaceCounters> {
        self.faces.get(&face).map(|f| &f.counters)
    }

    /// Drops that no face could be charged with.
    pub fn stats(&self) -> &IoStats {
        &self.stats
    }

    /// Bytes queued for sending on every face together, each packet counted
    /// with [`QUEUED_PACKET_OVERHEAD`] (so this is about what the queues take
    /// in memory): at most [`IoConfig::queue_bytes`] plus, for each open face,
    /// its reserve ([`FACE_QUEUE_RESERVE`] or [`IoConfig::stream_queue_bytes`],
    /// the smaller).
    pub fn queued_bytes(&self) -> usize {
        self.queued
    }

    /// Bytes every face's fragments of unfinished packets hold together,
    /// at most [`IoConfig::reassembly_bytes`].
    pub fn reassembly_held(&self) -> usize {
        self.reassembly.held()
    }

    /// Packets in progress given up so far for newer ones (a face's oldest past
    /// its bound on packets in progress, or the oldest of all when
    /// [`IoConfig::reassembly_bytes`] was full): fragmented packets that never
    /// arrive whole because their fragments came too slowly, or under a flood.
    pub fn reassembly_evicted(&self) -> usize {
        self.reassembly.evicted()
    }

    fn source(&self, token: Token) -> Source {
        let t = token.0;
        if t == WAKER.0 {
            return Source::Waker;
        }
        if t >= FIRST_FACE_ID as usize {
            return Source::Face(t as FaceId);
        }
        let i = t - 1;
        if i < self.udp.len() {
            Source::Udp(i)
        } else if i - self.udp.len() < self.tcp.len() {
            Source::Tcp(i - self.udp.len())
        } else {
            Source::Unix
        }
    }

    /// Serves one ready source; returns whether it may have more input.
    fn serve(&mut self, token: Token, now: Instant, events: &mut Vec<IoEvent>) -> bool {
        match self.source(token) {
            Source::Waker => false,
            Source::Udp(i) => self.receive_udp(i, now, events),
            Source::Tcp(i) => self.accept(token, Some(i), now, events),
            Source::Unix => self.accept(token, None, now, events),
            Source::Face(id) => self.drive_stream(id, Drive::Readable, now, events),
        }
    }

    fn on_writable(&mut self, token: Token, now: Instant, events: &mut Vec<IoEvent>) {
        match self.source(token) {
            Source::Udp(i) => {
                let ch = &mut self.udp[i];
                if ch.blocked {
                    ch.blocked = false;
                    if let Err(e) = ch.watch(self.poll.registry(), token) {
                        tracing::warn!(error = %e, "cannot reregister UDP socket");
                    }
                    self.flush_udp(i);
                }
            }
            Source::Face(id) => {
                self.drive_stream(id, Drive::Writable, now, events);
            }
            Source::Waker | Source::Tcp(_) | Source::Unix => {}
        }
    }

    fn alloc_id(&mut self) -> FaceId {
        loop {
            let id = self.next_id;
            self.next_id = self.next_id.checked_add(1).unwrap_or(FIRST_FACE_ID);
            if !self.faces.contains_key(&id) {
                return id;
            }
        }
    }

    /// The keys of a UDP face in `udp_faces`: its channel and remote address, and
    /// for a neighbour's port-by-hash face every port of it, on its channel and on
    /// the hash face (the neighbour answers whichever port asked).
    fn udp_keys(&self, channel: usize, remote: SocketAddr, ports: usize) -> Vec<(usize, SocketAddr)> {
        let hash = HashPorts { base: remote, count: ports };
        let mut channels = vec![channel];
        if ports > 1 && !self.hash.is_empty() && channel != self.hash.start {
            channels.push(self.hash.start);
        }
        channels.into_iter().flat_map(|c| hash.addrs().map(move |a| (c, a)).collect::<Vec<_>>()).collect()
    }

    /// Makes the UDP face of `remote` on `channel`; `peer_made` when a datagram
    /// from a new peer made it, not management or the configuration.
    fn add_udp_face(&mut self, channel: usize, remote: SocketAddr, ports: usize, persistency: Persistency, now: Instant, peer_made: bool) -> FaceInfo {
        let id = self.alloc_id();
        let info = FaceInfo {
            id,
            kind: FaceKind::Udp,
            remote_uri: uri::format(Scheme::Udp, remote),
            local_uri: uri::format(Scheme::Udp, self.udp[channel].local),
            local_scope: uri::is_local(remote.ip()),
            persistency,
            mtu: Some(MAX_FRAME_SIZE),
        };
        let link = Link::Udp { channel, home: channel, remote, queued: 0, ports };
        self.faces.insert(id, Face::new(info.clone(), link, now, peer_made));
        for key in self.udp_keys(channel, remote, ports) {
            self.udp_faces.entry(key).or_insert(id);
        }
        tracing::debug!(face = id, remote = %info.remote_uri, "UDP face up");
        info
    }

    /// Registers a connected (or connecting) stream as a new face; `peer_made`
    /// for a TCP connection a network peer opened.
    fn add_stream_face(&mut self, sock: StreamSocket, connecting: bool, mut info: FaceInfo, now: Instant, peer_made: bool) -> io::Result<FaceInfo> {
        let id = self.alloc_id();
        info.id = id;
        let conn = StreamConn::new(sock, connecting, self.poll.registry(), Token(id as usize))?;
        self.faces.insert(id, Face::new(info.clone(), Link::Stream(conn), now, peer_made));
        // Bytes that arrived before registration must not wait for another edge.
        self.ready.insert(Token(id as usize));
        tracing::debug!(face = id, remote = %info.remote_uri, "stream face up");
        Ok(info)
    }

    /// Dials `addr` for management; with no descriptor left, an idle TCP face
    /// of a network peer gives way to the dial ([`Io::make_room`]), its
    /// `FaceDown` reported by the next `poll`.
    fn connect_tcp(&mut self, uri: &str, addr: SocketAddr, persistency: Persistency) -> Result<FaceInfo, IoError> {
        let fail = |error| IoError::Connect { uri: uri.to_owned(), error };
        let now = Instant::now();
        let sock = match mio::net::TcpStream::connect(addr) {
            Err(e) if fd_limit::exhausted(&e) => {
                let mut downs = mem::take(&mut self.pending);
                let made_room = self.make_room(1, true, now, &mut downs);
                self.pending = downs;
                if !made_room {
                    return Err(fail(e));
                }
                mio::net::TcpStream::connect(addr)
            }
            dialed => dialed,
        }
        .map_err(fail)?;
        let _ = sock.set_nodelay(true);
        let local = sock.local_addr().map_err(fail)?;
        let info = tcp_face_info(addr, local, persistency);
        let info = self.add_stream_face(StreamSocket::Tcp(sock), true, info, now, false).map_err(fail)?;
        self.faces.get_mut(&info.id).expect("just added").dialed = Some(addr);
        self.connecting.push((info.id, now + TCP_CONNECT_TIMEOUT));
        Ok(info)
    }

    /// Whether `face` is an outgoing TCP connection not yet established (its
    /// outcome comes as [`IoEvent::Connected`] or [`IoEvent::ConnectFailed`]).
    pub fn is_connecting(&self, face: FaceId) -> bool {
        self.faces.get(&face).is_some_and(Face::is_connecting)
    }

    /// Gives up the outgoing connections past their deadline.
    fn expire_connects(&mut self, now: Instant, events: &mut Vec<IoEvent>) {
        while let Some(&(face, _)) = self.connecting.iter().find(|&&(_, deadline)| deadline <= now) {
            tracing::debug!(face, "TCP connect timed out");
            self.lose_stream(face, format!("not connected within {} s", TCP_CONNECT_TIMEOUT.as_secs()), now, events);
        }
    }

    /// A stream face's connection failed, was refused or timed out, or its peer
    /// closed it. A permanent face this side dialed keeps its id, routes and
    /// counters and redials after a wait; any other face closes. A connection
    /// that never came up is reported as [`IoEvent::ConnectFailed`] (management
    /// may be waiting for it), one that was up as `FaceDown` unless it redials.
    fn lose_stream(&mut self, id: FaceId, reason: String, now: Instant, events: &mut Vec<IoEvent>) {
        let connecting = self.connecting.iter().position(|&(f, _)| f == id).map(|i| self.connecting.swap_remove(i)).is_some();
        let Some(face) = self.faces.get_mut(&id) else { return };
        if face.redials() {
            self.queued -= face.stream_queued();
            if let Link::Stream(conn) = &mut face.link {
                conn.deregister(self.poll.registry());
            }
            face.link = Link::Redial;
            self.reassembly.release(&face.reassembler);
            face.reassembler = Reassembler::new();
            face.failures += 1;
            let wait = redial_wait(face.failures);
            self.redials.push((id, now + wait));
            self.ready.remove(Token(id as usize));
            tracing::info!(face = id, %reason, retry_in = ?wait, "permanent TCP face has no connection; redialing");
        } else {
            self.close_face(id, (!connecting).then_some(&mut *events));
        }
        if connecting {
            events.push(IoEvent::ConnectFailed { face: id, reason });
        }
    }

    /// Redials the permanent TCP faces whose wait is over; each attempt ends like
    /// the first ([`IoEvent::Connected`] or [`IoEvent::ConnectFailed`]).
    fn redial_due(&mut self, now: Instant) {
        while let Some(i) = self.redials.iter().position(|&(_, at)| at <= now) {
            let (id, _) = self.redials.swap_remove(i);
            let Some(face) = self.faces.get_mut(&id) else { continue };
            let Some(remote) = face.dialed else { continue };
            let registry = self.poll.registry();
            let dialed = mio::net::TcpStream::connect(remote).and_then(|sock| {
                let _ = sock.set_nodelay(true);
                let local = sock.local_addr()?;
                Ok((StreamConn::new(StreamSocket::Tcp(sock), true, registry, Token(id as usize))?, local))
            });
            match dialed {
                Ok((conn, local)) => {
                    face.info.local_uri = uri::format(Scheme::Tcp, local);
                    face.link = Link::Stream(conn);
                    self.connecting.push((id, now + TCP_CONNECT_TIMEOUT));
                }
                Err(e) => {
                    face.failures += 1;
                    let wait = redial_wait(face.failures);
                    self.redials.push((id, now + wait));
                    tracing::debug!(face = id, error = %e, retry_in = ?wait, "cannot redial");
                }
            }
        }
    }

    /// Accepts up to a burst of connections on a TCP listener (`Some(index)`) or the
    /// Unix listener (`token` is the listener's); returns whether more may be
    /// waiting. With no descriptor left for a connection that waits, an idle TCP
    /// face of a network peer gives way ([`Io::make_room`]) and the connection is
    /// accepted after all; if none can, or `accept` fails otherwise, the
    /// listener is tried again after [`ACCEPT_RETRY`].
    fn accept(&mut self, token: Token, tcp: Option<usize>, now: Instant, events: &mut Vec<IoEvent>) -> bool {
        // A face closed for a descriptor since the last connection accepted: if
        // `accept` still finds none, something else took it, and closing more
        // faces would not help.
        let mut made_room = false;
        for _ in 0..self.cfg.burst.max(1) {
            let accepted = match tcp {
                Some(i) => self.tcp[i].accept().map(|(s, peer)| {
                    let _ = s.set_nodelay(true);
                    let local = s.local_addr().unwrap_or(peer);
                    (StreamSocket::Tcp(s), tcp_face_info(peer, local, Persistency::OnDemand))
                }),
                None => {
                    let Some(l) = &self.unix else { return false };
                    l.sock.accept().map(|(s, _)| {
                        let info = FaceInfo {
                            id: 0,
                            kind: FaceKind::Unix,
                            remote_uri: format!("fd://{}", s.as_raw_fd()),
                            local_uri: l.local_uri.clone(),
                            local_scope: true,
                            persistency: Persistency::OnDemand,
                            mtu: None,
                        };
                        (StreamSocket::Unix(s), info)
                    })
                }
            };
            match accepted {
                Ok((sock, info)) => {
                    made_room = false;
                    self.accept_failing.remove(&token);
                    let peer = info.kind == FaceKind::Tcp;
                    if peer && !self.room_for_peer(now, events) {
                        // The socket closes as it drops.
                        self.stats.face_limit_drops += 1;
                        tracing::debug!(remote = %info.remote_uri, "TCP connection refused: face limit reached");
                        continue;
                    }
                    match self.add_stream_face(sock, false, info, now, peer) {
                        Ok(info) => events.push(IoEvent::FaceUp(info)),
                        Err(e) => tracing::warn!(error = %e, "cannot register accepted connection"),
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock || (fd_limit::exhausted(&e) && !self.connection_waiting(tcp)) => {
                    self.accept_failing.remove(&token);
                    return false;
                }
                Err(e) if matches!(e.kind(), io::ErrorKind::Interrupted | io::ErrorKind::ConnectionAborted) => {}
                Err(e) if !made_room && fd_limit::exhausted(&e) && self.make_room(1, true, now, events) => made_room = true,
                Err(e) => {
                    // Out of descriptors, typically, with no face to give way yet.
                    if self.accept_failing.insert(token) {
                        tracing::warn!(error = %e, retry_every = ?ACCEPT_RETRY, "accept failed");
                    } else {
                        tracing::debug!(error = %e, "accept failed again");
                    }
                    if !self.accept_retries.iter().any(|&(t, _)| t == token) {
                        self.accept_retries.push((token, now + ACCEPT_RETRY));
                    }
                    return false;
                }
            }
        }
        true
    }

    /// Whether a TCP listener (`Some(index)`) or the Unix listener has a
    /// connection waiting ([`fd_limit::connection_waiting`]).
    fn connection_waiting(&self, tcp: Option<usize>) -> bool {
        match (tcp, &self.unix) {
            (Some(i), _) => fd_limit::connection_waiting(self.tcp[i].as_fd()),
            (None, Some(l)) => fd_limit::connection_waiting(l.sock.as_fd()),
            (None, None) => false,
        }
    }

    /// Reads one burst from a UDP channel, and its error queue when the socket
    /// reported an error; returns whether more may be waiting. A port a worker
    /// reads comes here only for its error queue, when a send of this thread's
    /// met an error there ([`Io::flush`]) or its poller reported one.
    fn receive_udp(&mut self, channel: usize, now: Instant, events: &mut Vec<IoEvent>) -> bool {
        let mut datagrams = mem::take(&mut self.datagrams);
        let ch = &mut self.udp[channel];
        let mut more = !ch.worker_owned && ch.recv_burst(&mut datagrams);
        let mut errors = Vec::new();
        more |= ch.read_errors(&mut errors);
        for d in datagrams.drain(..) {
            self.on_datagram(channel, d, now, events);
        }
        self.datagrams = datagrams;
        // After the datagrams read with them, which came before the errors
        // did: a dead peer's last datagram must not make its face again (and
        // with no routes) once the error has closed it.
        self.on_socket_errors(channel, errors, events);
        more
    }

    /// Takes what the worker reading port `port` (0-based) of the hash face
    /// found in the port's error queue ([`WorkerPort::errors`]): the worker
    /// reads it, having the socket's errors reported on its poller and met by
    /// its receives, but the faces are this thread's, so the entries have here
    /// the treatment a listener's own get, and what results (`FaceDown`) is
    /// appended to `events`.
    pub fn hash_errors(&mut self, port: usize, errors: impl IntoIterator<Item = SocketError>, events: &mut Vec<IoEvent>) {
        if port < self.hash.len() {
            self.on_socket_errors(self.hash.start + port, errors, events);
        }
    }

    /// Applies what UDP channel `channel`'s error queue held. A port
    /// unreachable for a peer closes its on-demand or persistent face as the
    /// idle timeout does, with `FaceDown` (so routes through it go), as NFD's
    /// unicast UDP transport fails on a socket error: a killed producer's face
    /// would otherwise draw Interests, best-route choosing it over a live next
    /// hop, until it idled out. A permanent face stays, as NFD's ignores the
    /// error, and the error is counted. Any other entry is counted and dropped.
    fn on_socket_errors(&mut self, channel: usize, errors: impl IntoIterator<Item = SocketError>, events: &mut Vec<IoEvent>) {
        // The hash face's ports are one channel: its first port stands for all.
        let channel = if self.hash.contains(&channel) { self.hash.start } else { channel };
        for error in errors {
            let SocketError::PortUnreachable(to) = error else {
                self.stats.udp_errors_ignored += 1;
                continue;
            };
            match self.udp_face(channel, to).and_then(|id| self.faces.get(&id)) {
                Some(f) if f.info.persistency == Persistency::Permanent => {
                    self.stats.unreachable_kept += 1;
                    tracing::debug!(face = f.info.id, %to, "permanent UDP face kept: its peer's port is unreachable");
                }
                Some(f) => {
                    let id = f.info.id;
                    self.stats.unreachable_closes += 1;
                    tracing::debug!(face = id, %to, "UDP face closed: its peer's port is unreachable");
                    self.close_face(id, Some(events));
                }
                None => self.stats.udp_errors_ignored += 1,
            }
        }
    }

    /// Takes one datagram that arrived on UDP channel `arrival` (reads, and the
    /// fuzz target, come here): finds or makes its face, counts it and hands on
    /// its packet.
    pub(crate) fn on_datagram(&mut self, arrival: usize, d: Datagram, now: Instant, events: &mut Vec<IoEvent>) {
        // The hash face's ports are one channel: its first port stands for all.
        let hash_port = self.hash.contains(&arrival).then(|| arrival - self.hash.start);
        let channel = if hash_port.is_some() { self.hash.start } else { arrival };
        // One datagram must be exactly one TLV element, and one the engine takes:
        // anything else neither makes a face nor keeps one alive (`last_rx`).
        let valid = d.data.filter(|b| is_one_network_packet(b));
        let (id, known) = match (self.udp_face(channel, d.from), &valid) {
            (Some(id), _) => (id, true),
            (None, Some(_)) => {
                if !self.room_for_peer(now, events) {
                    self.stats.face_limit_drops += 1;
                    return;
                }
                let info = self.add_udp_face(channel, d.from, 1, Persistency::OnDemand, now, true);
                let id = info.id;
                events.push(IoEvent::FaceUp(info));
                (id, false)
            }
            (None, None) => {
                self.stats.unknown_peer_drops += 1;
                return;
            }
        };
        let Some(face) = self.faces.get_mut(&id) else { return };
        face.counters.in_packets += 1;
        face.counters.in_bytes += d.len as u64;
        match valid {
            Some(pkt) => {
                face.last_rx = now;
                if let Link::Udp { home, ports, .. } = &mut face.link {
                    if let Some(port) = hash_port.filter(|_| known && *ports == 1 && *home != arrival) {
                        events.push(IoEvent::PeerMoved { face: id, port });
                    }
                    *home = arrival;
                }
                deliver(id, face, pkt, now, &mut self.reassembly, events);
            }
            None => face.counters.dropped_in += 1,
        }
    }

    fn flush_udp(&mut self, channel: usize) {
        let batch = self.cfg.burst.clamp(1, 1024);
        let ch = &mut self.udp[channel];
        while !ch.blocked && !ch.tx.is_empty() {
            let (sent, dropped) = match ch.send_batch(batch) {
                SendResult::Sent(0) => break,
                SendResult::Sent(n) => (n, 0),
                SendResult::Refused(e) => {
                    tracing::debug!(error = %e, to = %ch.tx[0].to, "UDP send refused");
                    (0, 1)
                }
                SendResult::Blocked => {
                    ch.blocked = true;
                    ch.tx.detach();
                    if let Err(e) = ch.watch(self.poll.registry(), Token(1 + channel)) {
                        tracing::warn!(error = %e, "cannot reregister UDP socket");
                    }
                    break;
                }
            };
            for (i, o) in ch.tx.drain_front(sent + dropped).enumerate() {
                // Taken off the total whether or not the face is still there.
                let cost = o.pkt.len() + QUEUED_PACKET_OVERHEAD;
                self.queued -= cost;
                let Some(Face { counters, link: Link::Udp { queued, .. }, .. }) = self.faces.get_mut(&o.face) else { continue };
                *queued -= cost;
                if i < sent {
                    counters.out_packets += 1;
                    counters.out_bytes += o.pkt.len() as u64;
                } else {
                    counters.dropped_out += 1;
                }
            }
        }
        // A send met an ICMP error's mark on the socket: its queue is read on
        // the next poll, even on a worker's port, which this thread does not
        // watch, and whose worker, busy, may not hear of it soon.
        if ch.errors_pending {
            self.ready.insert(Token(1 + channel));
        }
    }

    /// Moves a stream face along: completes a pending connect, writes what is
    /// queued, and reads up to a burst when readable. Closes the face on EOF, error
    /// or a corrupt stream, reporting `FaceDown` into `events`. Returns whether it
    /// may have more input.
    fn drive_stream(&mut self, id: FaceId, why: Drive, now: Instant, events: &mut Vec<IoEvent>) -> bool {
        let mut frames = mem::take(&mut self.frames);
        let outcome = match self.faces.get_mut(&id) {
            Some(face) => {
                let before = face.stream_queued();
                let outcome = drive(id, face, why, self.cfg.burst.max(1), self.poll.registry(), now, &mut frames, &mut self.reassembly, events);
                self.queued -= before - face.stream_queued();
                outcome
            }
            None => Ok(false),
        };
        self.frames = frames;
        match outcome {
            Ok(more) => {
                let connecting = self.connecting.iter().position(|&(f, _)| f == id);
                if let (Some(i), Some(face)) = (connecting, self.faces.get_mut(&id)) {
                    if !face.is_connecting() {
                        face.failures = 0;
                        self.connecting.swap_remove(i);
                    }
                }
                more
            }
            Err(why) => {
                if matches!(why, Close::Corrupt) {
                    self.stats.corrupt_streams += 1;
                }
                tracing::debug!(face = id, reason = %why, "stream face lost");
                self.lose_stream(id, why.to_string(), now, events);
                false
            }
        }
    }

    fn close_face(&mut self, id: FaceId, events: Option<&mut Vec<IoEvent>>) {
        let Some(mut face) = self.faces.remove(&id) else { return };
        self.connecting.retain(|&(f, _)| f != id);
        self.redials.retain(|&(f, _)| f != id);
        self.reassembly.release(&face.reassembler);
        // A closed UDP face's packets stay in its channel's queue until sent or
        // dropped there; a stream face's go with it.
        self.queued -= face.stream_queued();
        match &mut face.link {
            Link::Udp { channel, remote, ports, .. } => {
                for key in self.udp_keys(*channel, *remote, *ports) {
                    if self.udp_faces.get(&key) == Some(&id) {
                        self.udp_faces.remove(&key);
                    }
                }
            }
            Link::Stream(conn) => conn.deregister(self.poll.registry()),
            Link::Redial => {}
        }
        self.ready.remove(Token(id as usize));
        if let Some(events) = events {
            events.push(IoEvent::FaceDown(id));
        }
    }

    /// The face of UDP peer `from` on `channel` (the hash face's first port for
    /// any of its ports), if it has one.
    pub(crate) fn udp_face(&self, channel: usize, from: SocketAddr) -> Option<FaceId> {
        self.udp_faces.get(&(channel, from)).copied()
    }

    /// Whether peers on the network may open no more faces ([`IoConfig::max_faces`]).
    fn at_face_limit(&self) -> bool {
        self.faces.len() >= self.cfg.max_faces
    }

    /// Whether a new network peer may have a face: below the face limit, or
    /// once the faces that idled longest have given way to it ([`Io::make_room`]):
    /// one, or more while local applications' and management's faces keep the
    /// table above the limit.
    fn room_for_peer(&mut self, now: Instant, events: &mut Vec<IoEvent>) -> bool {
        !self.at_face_limit() || self.make_room(self.faces.len() + 1 - self.cfg.max_faces, false, now, events)
    }

    /// Closes the `needed` faces that idled longest, each one that may give way
    /// ([`Face::gives_way`]) and was idle for [`IoConfig::evict_idle`], with
    /// `FaceDown`, counted in [`IoStats::idle_evictions`]; only stream faces when
    /// `descriptors` is wanted (a UDP face has no socket of its own to free).
    /// Returns whether it did; if too few can go, none does, since closing them
    /// would admit nobody. The search is a pass over every face, never made
    /// while [`Io::idle_floor`] (or [`Io::fd_idle_floor`]) shows that it would
    /// find too few.
    fn make_room(&mut self, needed: usize, descriptors: bool, now: Instant, events: &mut Vec<IoEvent>) -> bool {
        let evict_idle = self.cfg.evict_idle;
        let floor = if descriptors { self.fd_idle_floor } else { self.idle_floor };
        if now.saturating_duration_since(floor) < evict_idle {
            return false;
        }
        let mut candidates: Vec<(Instant, FaceId)> = self
            .faces
            .values()
            .filter(|f| f.gives_way() && (!descriptors || matches!(f.link, Link::Stream(_))))
            .map(|f| (self.heard_until(f), f.info.id))
            .collect();
        candidates.sort_unstable();
        let idle = candidates.iter().take_while(|(heard, _)| now.saturating_duration_since(*heard) >= evict_idle).count();
        if idle < needed {
            // None idle enough: none will be before the oldest is. Some, but too
            // few: wait as long again (faces closing meanwhile need no search).
            let floor = match candidates.first() {
                Some(&(oldest, _)) if idle == 0 => oldest,
                _ => now,
            };
            if descriptors {
                self.fd_idle_floor = floor;
            } else {
                self.idle_floor = floor;
            }
            return false;
        }
        for &(heard, id) in &candidates[..needed] {
            self.stats.idle_evictions += 1;
            tracing::debug!(face = id, idle = ?now.saturating_duration_since(heard), descriptors, "idle face closed to make room for a new peer");
            self.close_face(id, Some(events));
        }
        true
    }

    /// The latest `f` may have received: its `last_rx`, later by
    /// [`Io::report_lag`] for a UDP face, which a worker may serve.
    fn heard_until(&self, f: &Face) -> Instant {
        match f.link {
            Link::Udp { .. } => f.last_rx + self.report_lag,
            _ => f.last_rx,
        }
    }

    /// Closes on-demand UDP faces idle for the configured timeout, and gives up
    /// the fragments of packets that stopped arriving on any face.
    fn expire_idle(&mut self, now: Instant, events: &mut Vec<IoEvent>) {
        for face in self.faces.values_mut().filter(|f| f.reassembler.in_progress() > 0) {
            self.reassembly.with(&mut face.reassembler, |r, _| r.expire(now));
        }
        let timeout = self.cfg.udp_idle_timeout;
        let idle: Vec<FaceId> = self
            .faces
            .values()
            .filter(|f| f.info.persistency == Persistency::OnDemand && matches!(f.link, Link::Udp { .. }))
            .filter(|f| now.saturating_duration_since(self.heard_until(f)) >= timeout)
            .map(|f| f.info.id)
            .collect();
        for id in idle {
            tracing::debug!(face = id, "idle UDP face closed");
            self.close_face(id, Some(events));
        }
    }

    /// Gives up stream faces whose peer took none of their queued output for
    /// [`IoConfig::stall_timeout`] (counted in [`IoStats::stalled_streams`]): an
    /// on-demand or persistent face closes with `FaceDown`, a permanent one this
    /// side dialed redials, as after any other failure ([`Io::lose_stream`]).
    /// Each gets one last write first, as if the socket had reported room: a
    /// peer that read a little since (too little for the kernel to report the
    /// socket writable) then shows progress and keeps its face.
    fn expire_stalled(&mut self, now: Instant, events: &mut Vec<IoEvent>) {
        let timeout = self.cfg.stall_timeout;
        let stalled = |face: Option<&Face>| matches!(face.map(|f| &f.link), Some(Link::Stream(conn)) if conn.stalled(now, timeout));
        let candidates: Vec<FaceId> = self.faces.values().filter(|f| stalled(Some(f))).map(|f| f.info.id).collect();
        for id in candidates {
            self.drive_stream(id, Drive::Writable, now, events);
            if stalled(self.faces.get(&id)) {
                self.stats.stalled_streams += 1;
                tracing::debug!(face = id, "stream face stalled: its peer reads nothing");
                self.lose_stream(id, format!("the peer read nothing for {:?}", timeout), now, events);
            }
        }
    }
}

/// Whether the bound on bytes queued on all faces together lets a face holding
/// `held` bytes queue a packet charged `len` (its length plus
/// [`QUEUED_PACKET_OVERHEAD`]) while all faces hold `total`: within
/// [`IoConfig::queue_bytes`], or within the face's reserve ([`FACE_QUEUE_RESERVE`],
/// at most [`IoConfig::stream_queue_bytes`]) whatever the others hold. Since a
/// face admitted by its reserve holds at most the reserve, every face holds at
/// most the reserve beyond what it held when the total was last within the
/// bound, so the total stays at most `queue_bytes` + open faces × reserve.
fn shared_bound_admits(cfg: &IoConfig, total: usize, held: usize, len: usize) -> bool {
    let reserve = FACE_QUEUE_RESERVE.min(cfg.stream_queue_bytes);
    total.saturating_add(len) <= cfg.queue_bytes || held.saturating_add(len) <= reserve
}

/// The wait before redialing a permanent TCP face after `failures` failed
/// attempts in a row (at least one): 1 s, doubling, at most [`MAX_REDIAL_WAIT`].
fn redial_wait(failures: u32) -> Duration {
    Duration::from_secs(1 << failures.saturating_sub(1).min(6)).min(MAX_REDIAL_WAIT)
}

/// How often idle UDP faces and stalled stream faces are looked for: often
/// enough that a face outlives its timeout by a fraction of it at most.
fn sweep_interval(cfg: &IoConfig) -> Duration {
    (cfg.udp_idle_timeout.min(cfg.stall_timeout) / 4).clamp(Duration::from_millis(10), MAX_SWEEP_INTERVAL)
}

/// Hands one received link packet to the face's inbound path.
fn deliver(id: FaceId, face: &mut Face, pkt: Bytes, now: Instant, reassembly: &mut Budget, events: &mut Vec<IoEvent>) {
    match reassembly.with(&mut face.reassembler, |r, room| classify(pkt, r, now, room)) {
        Inbound::Deliver(pkt) => events.push(IoEvent::Packet { face: id, pkt }),
        Inbound::Pending => {}
        Inbound::Drop => face.counters.dropped_in += 1,
    }
}

/// The body of [`Io::drive_stream`] for a face already looked up.
#[allow(clippy::too_many_arguments)]
fn drive(
    id: FaceId,
    face: &mut Face,
    why: Drive,
    burst: usize,
    registry: &Registry,
    now: Instant,
    frames: &mut Vec<Bytes>,
    reassembly: &mut Budget,
    events: &mut Vec<IoEvent>,
) -> Result<bool, Close> {
    let Link::Stream(conn) = &mut face.link else { return Ok(false) };
    let was_connecting = conn.is_connecting();
    if !conn.finish_connect().map_err(Close::Failed)? {
        return Ok(false);
    }
    if was_connecting {
        events.push(IoEvent::Connected(id));
    }
    if why == Drive::Writable {
        conn.mark_writable();
    }
    if conn.can_write() {
        let progress = conn.write(now);
        face.counters.out_packets += progress.packets;
        face.counters.out_bytes += progress.bytes;
        progress.result.map_err(Close::Failed)?;
    }
    let status = if why == Drive::Readable { conn.read_frames(burst, frames) } else { ReadStatus::Drained };
    conn.sync_interest(registry, Token(id as usize)).map_err(Close::Failed)?;
    for frame in frames.drain(..) {
        face.counters.in_packets += 1;
        face.counters.in_bytes += frame.len() as u64;
        if is_network_packet_frame(&frame) {
            face.last_rx = now;
        }
        deliver(id, face, frame, now, reassembly, events);
    }
    match status {
        ReadStatus::Drained => Ok(false),
        ReadStatus::MoreReady => Ok(true),
        ReadStatus::Eof => Err(Close::PeerClosed),
        ReadStatus::Corrupt => Err(Close::Corrupt),
        ReadStatus::Failed(e) => Err(Close::Failed(e)),
    }
}

/// What a TCP face to `peer` from `local` is, whether we connected or accepted it;
/// the id is assigned when the face is added.
fn tcp_face_info(peer: SocketAddr, local: SocketAddr, persistency: Persistency) -> FaceInfo {
    FaceInfo {
        id: 0,
        kind: FaceKind::Tcp,
        remote_uri: uri::format(Scheme::Tcp, peer),
        local_uri: uri::format(Scheme::Tcp, local),
        local_scope: uri::is_local(peer.ip()),
        persistency,
        mtu: None,
    }
}

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};
    use std::net::{TcpStream, UdpSocket};

    use trajan_wire::lp::LpHeaders;
    use trajan_wire::{Interest, LpPacket, Name};

    use super::*;

    /// How long the face-limit tests' faces must idle before giving way to a new peer.
    const EVICT_IDLE: Duration = Duration::from_secs(10);

    /// A shell admitting `max_faces` faces, whose idle faces give way after [`EVICT_IDLE`].
    fn face_limited(max_faces: usize) -> Io {
        Io::new(IoConfig { max_faces, evict_idle: EVICT_IDLE, ..config() }).unwrap()
    }

    #[test]
    fn io_and_waker_can_move_to_their_threads() {
        fn movable<T: Send>() {}
        fn shareable<T: Send + Sync>() {}
        movable::<super::Io>();
        shareable::<super::Waker>();
    }

    /// Loopback only.
    fn config() -> IoConfig {
        IoConfig {
            udp_listen: vec!["127.0.0.1:0".parse().unwrap()],
            tcp_listen: vec!["127.0.0.1:0".parse().unwrap()],
            unix_path: None,
            ..IoConfig::default()
        }
    }

    fn interest(name: &str) -> Bytes {
        Interest::new(name.parse::<Name>().unwrap()).encode()
    }

    fn face_ups(events: &[IoEvent]) -> Vec<FaceId> {
        events.iter().filter_map(|e| if let IoEvent::FaceUp(info) = e { Some(info.id) } else { None }).collect()
    }

    fn packets(events: &[IoEvent]) -> Vec<(FaceId, Bytes)> {
        events.iter().filter_map(|e| if let IoEvent::Packet { face, pkt } = e { Some((*face, pkt.clone())) } else { None }).collect()
    }

    /// Polls until `done` holds (at most 500 polls of up to 20 ms).
    fn poll_until(io: &mut Io, events: &mut Vec<IoEvent>, mut done: impl FnMut(&Io, &[IoEvent]) -> bool) {
        for _ in 0..500 {
            io.poll(Some(Duration::from_millis(20)), events).unwrap();
            if done(io, events) {
                return;
            }
        }
        panic!("condition not reached; events so far: {events:?}");
    }

    fn udp_peer() -> UdpSocket {
        UdpSocket::bind("127.0.0.1:0").unwrap()
    }

    fn face_downs(events: &[IoEvent]) -> Vec<FaceId> {
        events.iter().filter_map(|e| if let IoEvent::FaceDown(id) = e { Some(*id) } else { None }).collect()
    }

    /// The face whose peer's address is `peer` (UDP or TCP).
    fn face_of(io: &Io, peer: SocketAddr) -> FaceId {
        let port = format!(":{}", peer.port());
        io.faces().find(|f| f.remote_uri.ends_with(&port)).unwrap_or_else(|| panic!("no face for {peer}")).id
    }

    /// Makes `face` look `by` longer idle, keeping `idle_floor` and
    /// `fd_idle_floor` no later than any face's last reception, as they are
    /// while time goes forward.
    fn backdate(io: &mut Io, face: FaceId, by: Duration) {
        let f = io.faces.get_mut(&face).unwrap();
        f.last_rx -= by;
        io.idle_floor = io.idle_floor.min(f.last_rx);
        io.fd_idle_floor = io.fd_idle_floor.min(f.last_rx);
    }

    /// Makes `n` UDP peers each send an Interest, and waits for their faces.
    fn udp_peers(io: &mut Io, events: &mut Vec<IoEvent>, n: usize) -> (Vec<UdpSocket>, Vec<FaceId>) {
        let udp = io.local_addrs().0[0];
        let peers: Vec<UdpSocket> = (0..n).map(|_| udp_peer()).collect();
        for (k, peer) in peers.iter().enumerate() {
            peer.send_to(&interest(&format!("/p{k}")), udp).unwrap();
        }
        let before = packets(events).len();
        poll_until(io, events, |_, ev| packets(ev).len() == before + n);
        let faces = peers.iter().map(|p| face_of(io, p.local_addr().unwrap())).collect();
        (peers, faces)
    }

    /// Connects `n` TCP peers and waits for their faces.
    fn tcp_peers(io: &mut Io, events: &mut Vec<IoEvent>, n: usize) -> Vec<(TcpStream, FaceId)> {
        let tcp = io.local_addrs().1[0];
        let conns: Vec<TcpStream> = (0..n).map(|_| TcpStream::connect(tcp).unwrap()).collect();
        let before = face_ups(events).len();
        poll_until(io, events, |_, ev| face_ups(ev).len() == before + n);
        conns
            .into_iter()
            .map(|c| {
                let face = face_of(io, c.local_addr().unwrap());
                (c, face)
            })
            .collect()
    }

    #[test]
    fn a_face_below_its_reserve_is_admitted_whatever_the_others_hold() {
        let q = 1_000_000;
        let cfg = IoConfig { stream_queue_bytes: 1 << 20, queue_bytes: q, ..config() };
        let r = FACE_QUEUE_RESERVE;
        assert!(shared_bound_admits(&cfg, 0, 0, 9000));
        assert!(shared_bound_admits(&cfg, q - 9000, 500_000, 9000));
        assert!(!shared_bound_admits(&cfg, q - 8999, 500_000, 9000));
        assert!(shared_bound_admits(&cfg, 10 * q, 0, 9000));
        assert!(shared_bound_admits(&cfg, 10 * q, r - 9000, 9000));
        assert!(!shared_bound_admits(&cfg, 10 * q, r - 8999, 9000));
        // The reserve is no more than the face's own bound.
        let small = IoConfig { stream_queue_bytes: 20_000, queue_bytes: 0, ..config() };
        assert!(shared_bound_admits(&small, usize::MAX, 11_000, 9000));
        assert!(!shared_bound_admits(&small, usize::MAX, 11_001, 9000));
    }

    proptest::proptest! {
        /// Whatever faces queue and write in whatever order, the bytes queued on
        /// all of them stay within `queue_bytes` + faces × reserve, as
        /// `IoConfig::queue_bytes` promises.
        #[test]
        fn queued_bytes_stay_within_the_shared_bound_plus_one_reserve_per_face(
            ops in proptest::collection::vec((0usize..8, proptest::bool::ANY, 1usize..MAX_FRAME_SIZE), 0..400),
            queue_bytes in 0usize..400_000,
        ) {
            let cfg = IoConfig { stream_queue_bytes: 200_000, queue_bytes, ..config() };
            let mut held = [0usize; 8];
            for (face, queue, len) in ops {
                let total: usize = held.iter().sum();
                if queue {
                    if held[face] + len <= cfg.stream_queue_bytes && shared_bound_admits(&cfg, total, held[face], len) {
                        held[face] += len;
                    }
                } else {
                    held[face] -= held[face].min(len);
                }
                let total: usize = held.iter().sum();
                proptest::prop_assert!(total <= queue_bytes + held.len() * FACE_QUEUE_RESERVE, "{total} queued: {held:?}");
            }
        }
    }

    #[test]
    fn only_ndn_packets_make_a_udp_face() {
        let mut io = Io::new(IoConfig { max_faces: 8, ..config() }).unwrap();
        let (udp, tcp) = io.local_addrs();
        let (udp, tcp) = (udp[0], tcp[0]);
        // A whole TLV element each, but none an Interest, Data or LpPacket: more
        // of them than the face limit, each from a port of its own.
        let junk: [&[u8]; 4] = [&[0x01, 0x00], &[0x07, 0x00], &[0x15, 0x01, 0x00], &[0xfd, 0x03, 0x20, 0x00]];
        let flood: Vec<UdpSocket> = (0..12).map(|_| udp_peer()).collect();
        for (k, peer) in flood.iter().enumerate() {
            peer.send_to(junk[k % junk.len()], udp).unwrap();
        }
        let mut events = Vec::new();
        poll_until(&mut io, &mut events, |io, _| io.stats.unknown_peer_drops == 12);
        assert!(face_ups(&events).is_empty(), "{events:?}");
        assert!(io.faces.is_empty());
        assert_eq!(io.stats.face_limit_drops, 0);

        // A real Interest, an LpPacket and a TCP connection from new peers are
        // all still admitted.
        let asker = udp_peer();
        let i = interest("/after/the/flood");
        asker.send_to(&i, udp).unwrap();
        let linked = udp_peer();
        let lp = LpPacket::wrap(&interest("/linked"), &LpHeaders { pit_token: Some(Bytes::from_static(b"t")), ..Default::default() });
        linked.send_to(&lp, udp).unwrap();
        let _conn = TcpStream::connect(tcp).unwrap();
        events.clear();
        poll_until(&mut io, &mut events, |_, ev| face_ups(ev).len() == 3 && packets(ev).len() == 2);
        let got: Vec<Bytes> = packets(&events).into_iter().map(|(_, p)| p).collect();
        assert!(got.contains(&i) && got.contains(&lp), "{events:?}");
        assert_eq!(io.stats.face_limit_drops, 0);
        assert_eq!(io.stats.unknown_peer_drops, 12);
    }

    #[test]
    fn non_ndn_datagrams_do_not_keep_a_udp_face_alive() {
        let mut io = Io::new(config()).unwrap();
        let udp = io.local_addrs().0[0];
        let peer = udp_peer();
        peer.send_to(&interest("/alive"), udp).unwrap();
        let mut events = Vec::new();
        poll_until(&mut io, &mut events, |_, ev| !packets(ev).is_empty());
        let face = face_ups(&events)[0];
        let last = |io: &Io| io.faces[&face].last_rx;
        let heard = last(&io);
        std::thread::sleep(Duration::from_millis(5));
        peer.send_to(&[0x01, 0x00], udp).unwrap();
        events.clear();
        poll_until(&mut io, &mut events, |io, _| io.faces[&face].counters.dropped_in == 1);
        assert!(packets(&events).is_empty(), "{events:?}");
        assert_eq!(last(&io), heard, "a non-NDN datagram renewed the face");
        assert_eq!(io.faces[&face].counters.in_packets, 2);

        // A worker on a port-by-hash port forwards only what `plain` passes, and
        // its forwarding renews the face, so `plain` must refuse the same.
        let datagram = |b: &[u8]| Datagram { from: peer.local_addr().unwrap(), data: Some(Bytes::copy_from_slice(b)), len: b.len() };
        assert!(datagram(&[0x01, 0x00]).plain().is_none());
        assert!(datagram(&interest("/x")).plain().is_some());
    }

    /// As with datagrams, only a frame that is an Interest, Data or LpPacket
    /// renews a stream face; other bytes are counted and do not keep it.
    #[test]
    fn only_ndn_frames_keep_a_stream_face_alive() {
        let mut io = Io::new(config()).unwrap();
        let mut events = Vec::new();
        let mut conns = tcp_peers(&mut io, &mut events, 1);
        let face = conns[0].1;
        backdate(&mut io, face, EVICT_IDLE);
        let last = |io: &Io| io.faces[&face].last_rx;
        let old = last(&io);
        conns[0].0.write_all(&[0x01, 0x00]).unwrap();
        poll_until(&mut io, &mut events, |io, _| io.faces[&face].counters.in_packets == 1);
        assert_eq!(last(&io), old, "a non-NDN frame renewed the face");
        conns[0].0.write_all(&interest("/alive")).unwrap();
        poll_until(&mut io, &mut events, |io, _| io.faces[&face].counters.in_packets == 2);
        assert!(last(&io) > old, "an Interest renews the face");
    }

    #[test]
    fn one_poll_returns_a_bounded_number_of_packets_and_every_face_gets_its_turn() {
        const FACES: usize = 12;
        const EACH: usize = 5;
        let burst = 2;
        let cap = POLL_BURSTS * burst;
        let mut io = Io::new(IoConfig { burst, ..config() }).unwrap();
        let tcp = io.local_addrs().1[0];
        let mut conns: Vec<TcpStream> = (0..FACES).map(|_| TcpStream::connect(tcp).unwrap()).collect();
        let mut events = Vec::new();
        poll_until(&mut io, &mut events, |_, ev| face_ups(ev).len() == FACES);
        // Drain the polls that serve the new faces, which have nothing yet.
        for _ in 0..FACES {
            io.poll(Some(Duration::ZERO), &mut events).unwrap();
        }
        assert!(packets(&events).is_empty());

        // Every connection holds more than a burst before the next poll, so far
        // more packets are ready than one poll may return.
        let mut sent = Vec::new();
        for (k, conn) in conns.iter_mut().enumerate() {
            let pkts: Vec<Bytes> = (0..EACH).map(|n| interest(&format!("/c{k}/{n}"))).collect();
            conn.write_all(&pkts.concat()).unwrap();
            sent.push(pkts);
        }
        std::thread::sleep(Duration::from_millis(100));

        let mut got: Vec<(FaceId, Bytes)> = Vec::new();
        let mut first_poll: HashMap<FaceId, usize> = HashMap::new();
        let mut most = 0;
        for round in 0..200 {
            let mut events = Vec::new();
            io.poll(Some(Duration::from_millis(20)), &mut events).unwrap();
            let these = packets(&events);
            assert!(these.len() <= cap, "one poll returned {} packets", these.len());
            most = most.max(these.len());
            for (face, _) in &these {
                first_poll.entry(*face).or_insert(round);
            }
            got.extend(these);
            if got.len() == FACES * EACH {
                break;
            }
        }
        assert_eq!(most, cap, "the limit was never reached, so the test shows nothing");
        // Nothing lost or reordered: each face gives exactly what its peer sent.
        let mut by_face: HashMap<FaceId, Vec<Bytes>> = HashMap::new();
        for (face, pkt) in got {
            by_face.entry(face).or_default().push(pkt);
        }
        let mut received: Vec<Vec<Bytes>> = by_face.into_values().collect();
        received.sort_by(|a, b| a[0].cmp(&b[0]));
        sent.sort_by(|a, b| a[0].cmp(&b[0]));
        assert_eq!(received, sent);
        // In turn: a poll serves at least cap / burst faces giving full bursts,
        // so every face is first heard within ceil(FACES / (cap / burst)) polls.
        let turns = FACES.div_ceil(cap / burst);
        assert!(first_poll.values().all(|&round| round < turns), "first heard at polls {first_poll:?}");
    }

    #[test]
    fn a_full_table_gives_way_to_a_new_tcp_peer_by_closing_the_face_idle_longest() {
        let mut io = face_limited(3);
        let mut events = Vec::new();
        let mut peers = tcp_peers(&mut io, &mut events, 3);
        for (k, (_, face)) in peers.iter().enumerate() {
            backdate(&mut io, *face, EVICT_IDLE * (k as u32 + 2));
        }
        // The longest idle peer sends an Interest and is idle no more; the next
        // sends a TLV element the engine throws away, which renews nothing.
        peers[2].0.write_all(&interest("/busy")).unwrap();
        peers[1].0.write_all(&[0x01, 0x00]).unwrap();
        poll_until(&mut io, &mut events, |_, ev| packets(ev).len() == 2);
        let (busy, junk, idle) = (peers[2].1, peers[1].1, peers[0].1);

        let mut newcomers = tcp_peers(&mut io, &mut events, 1);
        assert_eq!(face_downs(&events), [junk]);
        assert!(!io.faces.contains_key(&junk));
        assert_eq!((io.stats.idle_evictions, io.stats.face_limit_drops), (1, 0));
        let gone = &mut peers[1].0;
        gone.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        assert!(matches!(gone.read(&mut [0; 1]), Ok(0)), "the evicted face's connection is closed");

        newcomers.extend(tcp_peers(&mut io, &mut events, 1));
        assert_eq!(face_downs(&events), [junk, idle]);
        assert_eq!((io.stats.idle_evictions, io.stats.face_limit_drops), (2, 0));

        // Every face has been heard from or made within evict_idle: refused.
        let _refused = TcpStream::connect(io.local_addrs().1[0]).unwrap();
        poll_until(&mut io, &mut events, |io, _| io.stats.face_limit_drops == 1);
        assert_eq!(face_downs(&events).len(), 2);
        assert_eq!(io.stats.idle_evictions, 2);
        let mut open: Vec<FaceId> = io.faces.keys().copied().collect();
        let mut expected = vec![busy, newcomers[0].1, newcomers[1].1];
        open.sort_unstable();
        expected.sort_unstable();
        assert_eq!(open, expected);
    }

    #[test]
    fn a_full_table_gives_way_to_a_new_udp_peer_by_closing_the_face_idle_longest() {
        let mut io = face_limited(3);
        let udp = io.local_addrs().0[0];
        let mut events = Vec::new();
        let (peers, faces) = udp_peers(&mut io, &mut events, 3);
        for (k, face) in faces.iter().enumerate() {
            backdate(&mut io, *face, EVICT_IDLE * (k as u32 + 2));
        }
        peers[2].send_to(&interest("/busy"), udp).unwrap();
        peers[1].send_to(&[0x01, 0x00], udp).unwrap();
        poll_until(&mut io, &mut events, |io, ev| packets(ev).len() == 4 && io.faces[&faces[1]].counters.dropped_in == 1);

        let late = udp_peer();
        late.send_to(&interest("/late"), udp).unwrap();
        poll_until(&mut io, &mut events, |_, ev| face_ups(ev).len() == 4);
        assert_eq!(face_downs(&events), [faces[1]]);
        let late_face = face_of(&io, late.local_addr().unwrap());
        poll_until(&mut io, &mut events, |_, ev| packets(ev).contains(&(late_face, interest("/late"))));
        assert_eq!((io.stats.idle_evictions, io.stats.face_limit_drops), (1, 0));

        let later = udp_peer();
        later.send_to(&interest("/later"), udp).unwrap();
        poll_until(&mut io, &mut events, |_, ev| face_ups(ev).len() == 5);
        assert_eq!(face_downs(&events), [faces[1], faces[0]]);
        assert_eq!((io.stats.idle_evictions, io.stats.face_limit_drops), (2, 0));

        // Every face was heard from within evict_idle: the evicted peer, new
        // now, is refused like any other.
        peers[1].send_to(&interest("/back"), udp).unwrap();
        poll_until(&mut io, &mut events, |io, _| io.stats.face_limit_drops == 1);
        assert_eq!(face_downs(&events).len(), 2);
        assert_eq!(io.stats.idle_evictions, 2);
        assert!(io.faces.contains_key(&faces[2]));
    }

    /// A producer's face waits in silence while nobody asks for its prefix:
    /// it keeps its place as long as a route goes through it.
    #[test]
    fn a_face_a_route_goes_through_never_gives_way() {
        let mut io = face_limited(2);
        let udp = io.local_addrs().0[0];
        let mut events = Vec::new();
        let (_peers, faces) = udp_peers(&mut io, &mut events, 2);
        backdate(&mut io, faces[0], EVICT_IDLE * 3);
        backdate(&mut io, faces[1], EVICT_IDLE * 2);
        io.set_routed(faces[0], true);

        let late = udp_peer();
        late.send_to(&interest("/late"), udp).unwrap();
        poll_until(&mut io, &mut events, |_, ev| face_ups(ev).len() == 3);
        assert_eq!(face_downs(&events), [faces[1]], "the routed face, idle longer, stays");

        // Its last route gone, it is an idle face like any other.
        io.set_routed(faces[0], false);
        let later = udp_peer();
        later.send_to(&interest("/later"), udp).unwrap();
        poll_until(&mut io, &mut events, |_, ev| face_ups(ev).len() == 4);
        assert_eq!(face_downs(&events), [faces[1], faces[0]]);
        assert_eq!((io.stats.idle_evictions, io.stats.face_limit_drops), (2, 0));
    }

    #[test]
    fn faces_that_management_or_local_applications_made_never_give_way() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("nfd.sock");
        let mut io = Io::new(IoConfig { max_faces: 4, evict_idle: EVICT_IDLE, unix_path: Some(path.clone()), ..config() }).unwrap();
        let (udp, tcp) = (io.local_addrs().0[0], io.local_addrs().1[0]);
        let mut events = Vec::new();
        // Management's faces, on-demand though they are.
        let target = udp_peer();
        let made_udp = io.create_face(&format!("udp4://{}", target.local_addr().unwrap()), Persistency::OnDemand).unwrap().id;
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let made_tcp = io.create_face(&format!("tcp4://{}", listener.local_addr().unwrap()), Persistency::OnDemand).unwrap().id;
        poll_until(&mut io, &mut events, |_, ev| ev.iter().any(|e| matches!(e, IoEvent::Connected(f) if *f == made_tcp)));
        // A peer's face that management raised to persistent.
        let raised = udp_peer();
        raised.send_to(&interest("/raised"), udp).unwrap();
        poll_until(&mut io, &mut events, |_, ev| face_ups(ev).len() == 1);
        let raised = face_of(&io, raised.local_addr().unwrap());
        io.raise_persistency(raised, Persistency::Persistent).unwrap();
        // A local application.
        let _app = std::os::unix::net::UnixStream::connect(&path).unwrap();
        poll_until(&mut io, &mut events, |_, ev| face_ups(ev).len() == 2);
        let faces: Vec<FaceId> = io.faces.keys().copied().collect();
        assert_eq!(faces.len(), 4);
        for face in &faces {
            backdate(&mut io, *face, EVICT_IDLE * 3);
        }

        udp_peer().send_to(&interest("/new"), udp).unwrap();
        let _refused = TcpStream::connect(tcp).unwrap();
        poll_until(&mut io, &mut events, |io, _| io.stats.face_limit_drops == 2);
        assert!(face_downs(&events).is_empty(), "{events:?}");
        assert_eq!(io.stats.idle_evictions, 0);
        assert!(faces.iter().all(|f| io.faces.contains_key(f)));
        assert!(io.faces.contains_key(&made_udp));
    }

    /// Management's faces can keep the table above the limit: then a new peer
    /// needs more than one face to go, and when too few can, none goes (they
    /// would close and admit nobody).
    #[test]
    fn an_over_full_table_closes_no_face_unless_that_admits_the_peer() {
        let mut io = face_limited(2);
        let udp = io.local_addrs().0[0];
        let mut events = Vec::new();
        let (_peers, faces) = udp_peers(&mut io, &mut events, 2);
        let target = udp_peer();
        io.create_face(&format!("udp4://{}", target.local_addr().unwrap()), Persistency::Persistent).unwrap();
        backdate(&mut io, faces[0], EVICT_IDLE * 2);

        // Three faces, a limit of two: two must go, and only one may.
        let refused = udp_peer();
        refused.send_to(&interest("/refused"), udp).unwrap();
        poll_until(&mut io, &mut events, |io, _| io.stats.face_limit_drops == 1);
        assert!(face_downs(&events).is_empty(), "{events:?}");
        assert_eq!(io.stats.idle_evictions, 0);

        // Both idle enough: both go for the next peer.
        backdate(&mut io, faces[1], EVICT_IDLE * 2);
        io.idle_floor -= EVICT_IDLE * 2;
        let admitted = udp_peer();
        admitted.send_to(&interest("/admitted"), udp).unwrap();
        poll_until(&mut io, &mut events, |_, ev| face_ups(ev).len() == 3);
        assert_eq!(face_downs(&events), faces);
        assert_eq!((io.stats.idle_evictions, io.stats.face_limit_drops), (2, 1));
    }

    /// Workers tell what a UDP face received only in their periodic reports,
    /// so such a face is idle only once a report could have come too: for the
    /// idle timeout and for giving way to a new peer. A stream face, which
    /// only the I/O thread reads, is judged on its own reception. Before, a
    /// busy peer the workers served could be closed at `evict_idle_s = 1`.
    #[test]
    fn a_udp_face_is_idle_only_once_the_workers_report_could_have_come() {
        const LAG: Duration = Duration::from_secs(4);
        let hash_ports = Some(HashPorts { base: "127.0.0.1:0".parse().unwrap(), count: 1 });
        let mut io = Io::new(IoConfig { udp_idle_timeout: EVICT_IDLE, hash_ports, ..face_limited(2).cfg }).unwrap();
        let _ports = io.worker_ports(LAG).unwrap();
        let mut events = Vec::new();
        let (_udp, udp) = udp_peers(&mut io, &mut events, 1);
        let tcp = tcp_peers(&mut io, &mut events, 1);
        for face in [udp[0], tcp[0].1] {
            backdate(&mut io, face, EVICT_IDLE + LAG / 2);
        }
        let late = tcp_peers(&mut io, &mut events, 1);
        assert_eq!(face_downs(&events), [tcp[0].1], "the stream face gave way, not the UDP face");
        io.expire_idle(Instant::now(), &mut events);
        assert_eq!(face_downs(&events), [tcp[0].1], "the UDP face is not idle yet");

        backdate(&mut io, udp[0], LAG);
        io.expire_idle(Instant::now(), &mut events);
        assert_eq!(face_downs(&events), [tcp[0].1, udp[0]]);
        assert!(io.faces.contains_key(&late[0].1));
    }

    #[test]
    fn below_evict_idle_a_new_peer_is_refused_and_the_table_is_not_searched_again_before_time() {
        let mut io = face_limited(2);
        let (udp, tcp) = (io.local_addrs().0[0], io.local_addrs().1[0]);
        let mut events = Vec::new();
        let peers = [udp_peer(), udp_peer()];
        for peer in &peers {
            peer.send_to(&interest("/here"), udp).unwrap();
        }
        poll_until(&mut io, &mut events, |_, ev| face_ups(ev).len() == 2);
        let older = face_of(&io, peers[0].local_addr().unwrap());
        backdate(&mut io, older, EVICT_IDLE / 2);
        // As long after the start as a search may be made.
        io.idle_floor -= EVICT_IDLE * 2;

        let late = udp_peer();
        late.send_to(&interest("/late"), udp).unwrap();
        let _refused = TcpStream::connect(tcp).unwrap();
        poll_until(&mut io, &mut events, |io, _| io.stats.face_limit_drops == 2);
        assert!(face_downs(&events).is_empty(), "{events:?}");
        assert_eq!(io.stats.idle_evictions, 0);
        assert_eq!(io.faces.len(), 2);
        // The search remembered when the oldest face was last heard from: until
        // it has been idle for EVICT_IDLE, new peers are refused without one.
        assert_eq!(io.idle_floor, io.faces[&older].last_rx);
        let f = io.faces.get_mut(&older).unwrap();
        f.last_rx -= EVICT_IDLE;
        late.send_to(&interest("/late/again"), udp).unwrap();
        poll_until(&mut io, &mut events, |io, _| io.stats.face_limit_drops == 3);
        assert!(face_downs(&events).is_empty(), "the table was searched: {events:?}");
    }

    /// The I/O thread keeps a duplicate of each port it hands to a worker, for
    /// what it sends itself; the worker's own sends on the port must not wake
    /// the I/O thread's poller, or it wakes once per datagram for nothing.
    #[test]
    fn a_workers_sends_do_not_wake_the_io_thread() {
        let hash_ports = Some(HashPorts { base: "127.0.0.1:0".parse().unwrap(), count: 2 });
        let mut io = Io::new(IoConfig { udp_listen: vec![], tcp_listen: vec![], hash_ports, ..config() }).unwrap();
        let mut ports = io.worker_ports(Duration::from_secs(1)).unwrap();
        let sink = udp_peer();
        sink.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let to = sink.local_addr().unwrap();
        io.poll.poll(&mut io.mio_events, Some(Duration::ZERO)).unwrap();
        for k in 0..10 {
            ports[k % 2].queue(300, to, interest(&format!("/w{k}")));
            ports[k % 2].flush(|_, _, sent| assert!(sent));
            io.poll.poll(&mut io.mio_events, Some(Duration::from_millis(20))).unwrap();
            let woken: Vec<Token> = io.mio_events.iter().map(|e| e.token()).collect();
            assert!(woken.is_empty(), "datagram {k} a worker sent woke the I/O thread: {woken:?}");
        }
        let mut buf = [0; 64];
        for _ in 0..10 {
            sink.recv_from(&mut buf).unwrap();
        }
        // What the I/O thread sends itself still leaves from the ports.
        let peer = udp_peer();
        let hash = io.hash_ports().unwrap();
        peer.send_to(&interest("/new"), hash.nth(1)).unwrap();
        let mut events = Vec::new();
        let mut datagrams = Vec::new();
        for _ in 0..50 {
            if ports[1].recv(&mut datagrams) || !datagrams.is_empty() {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let d = datagrams.pop().expect("the worker's port received the datagram");
        io.hash_datagram(1, d, &mut events);
        let face = face_ups(&events)[0];
        io.send(face, interest("/reply"));
        io.flush();
        peer.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let (_, from) = peer.recv_from(&mut buf).unwrap();
        assert_eq!(from, hash.nth(1));
    }
}
