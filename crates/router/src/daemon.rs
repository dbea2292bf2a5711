//! The daemon's event loop: one thread that polls the faces, runs each burst through
//! the engine, hands management Interests to [`crate::mgmt::Management`], sends what
//! the engine emits and fires timers. It is the thin shell around the sans-I/O engine.
//!
//! With one worker the engine runs on this thread. With several, this thread is
//! Augustus' dispatcher: it hands each packet to the worker owning its name
//! ([`crate::workers`]), sends what workers return, and keeps a *control replica*
//! of the tables (faces, FIB, strategies) that management reads and changes; each
//! change is then broadcast to the workers: routes to the FIB replicas they share
//! (one per NUMA node, [`crate::node_fibs`]), the rest to each worker's own tables.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use trajan_engine::{EngineConfig, FaceMeta, Forwarder, Outgoing, StrategyKind, INTERNAL_FACE};
use trajan_tables::{Fib, FibSource, FibVariant};
use trajan_io::{FaceInfo, HashPorts, Io, IoConfig, IoError, IoEvent, Persistency};
use trajan_wire::Name;

use crate::config::{Config, RouteConfig, StrategyConfig};
use crate::mgmt::Management;
use crate::node_fibs::NodeFibs;
use crate::rib::{Rib, Route, ORIGIN_STATIC};
use crate::topology::{Placement, Topology};
use crate::workers::{Change, Clock, FromWorker, Workers};

/// Longest the loop sleeps in poll, so shutdown requests and timers are noticed promptly.
const MAX_POLL: Duration = Duration::from_millis(100);

/// With DPDK faces, the sockets are polled (without waiting) once every this many
/// loop iterations: an epoll call per burst would cost more than the burst.
#[cfg(feature = "dpdk")]
const SOCKET_POLL_EVERY: u64 = 64;

/// Errors that stop the daemon from starting.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// A listener or the Unix socket could not be opened.
    #[error("cannot open faces: {0}")]
    Io(trajan_io::IoError),
    /// A static route of the configuration could not be installed.
    #[error("static route {prefix} via {face}: {message}")]
    Route {
        /// The route's prefix, as configured.
        prefix: String,
        /// The route's face URI, as configured.
        face: String,
        /// Why the route or its face could not be made.
        message: String,
    },
    /// The workers could not be placed (CPU topology, `workers.cores`) or started.
    #[error("workers: {0}")]
    Workers(String),
    /// The DPDK ports could not be opened, or this build has no DPDK.
    #[error("DPDK: {0}")]
    Dpdk(String),
}

/// Written out rather than derived with `#[from]`, which would also make the
/// I/O error this one's `source`: its message is already part of ours, and a
/// report of the whole chain (`trajan: {e:#}`) would print it twice.
impl From<trajan_io::IoError> for StartError {
    fn from(e: trajan_io::IoError) -> Self {
        StartError::Io(e)
    }
}

/// Everything one forwarding loop owns.
pub struct Daemon {
    /// The sockets: listeners and the UDP, TCP and Unix faces the loop polls.
    pub io: Io,
    /// The engine itself with one worker; the control replica with several.
    pub fwd: Forwarder,
    /// Routes as registered (static, by applications), from which `fwd`'s FIB is derived.
    pub rib: Rib,
    /// The NFD management protocol: the state behind its commands and status datasets.
    pub mgmt: Management,
    /// The forwarding workers, when there are several.
    pub workers: Option<Workers>,
    /// The DPDK faces, when `[dpdk]` configures ports: the loop then busy-polls.
    #[cfg(feature = "dpdk")]
    pub dpdk: Option<crate::dpdk::DpdkFaces>,
    /// Loop iterations, to poll the sockets only every [`SOCKET_POLL_EVERY`]th
    /// one while DPDK ports are busy-polled.
    #[cfg(feature = "dpdk")]
    spins: u64,
    /// The millisecond the timers last ran at, while spinning.
    #[cfg(feature = "dpdk")]
    last_tick: u64,
    /// Packets queued on socket faces since their last flush, while spinning.
    #[cfg(feature = "dpdk")]
    io_pending: bool,
    epoch: Instant,
    events: Vec<IoEvent>,
    burst: Vec<(u32, Bytes)>,
    out: Vec<Outgoing>,
    back: Vec<FromWorker>,
    /// The configuration running: a reload ([`Daemon::reload`]) applies what
    /// a new one changes.
    pub(crate) config: Config,
    /// The static routes the configuration made, each with its face, so that
    /// a reload removes those the new configuration no longer lists.
    pub(crate) static_routes: Vec<(RouteConfig, u32)>,
}

impl Daemon {
    /// Opens the faces and tables described by `cfg`.
    pub fn new(cfg: &Config) -> Result<Daemon, StartError> {
        let placement = placement(cfg)?;
        let io_cfg = IoConfig {
            udp_listen: cfg.faces.udp_listen.clone(),
            tcp_listen: cfg.faces.tcp_listen.clone(),
            unix_path: (!cfg.faces.unix_path.as_os_str().is_empty()).then(|| cfg.faces.unix_path.clone()),
            udp_idle_timeout: Duration::from_secs(cfg.faces.udp_idle_timeout_s),
            stall_timeout: Duration::from_secs(cfg.faces.stall_timeout_s),
            stream_queue_bytes: cfg.faces.stream_queue_bytes,
            queue_bytes: cfg.faces.queue_bytes,
            max_faces: cfg.faces.max_faces,
            evict_idle: Duration::from_secs(cfg.faces.evict_idle_s),
            reassembly_bytes: cfg.faces.reassembly_bytes,
            // One port per worker; with a single worker the I/O thread reads it.
            hash_ports: cfg.workers.udp_ports.first().map(|&base| HashPorts { base, count: placement.len().max(1) }),
            ..IoConfig::default()
        };
        // DPDK ports first: the sockets, whose appearance tells clients and scripts
        // that the router is up, open only once every configured face can carry
        // packets (an AF_XDP port's kernel hands frames to the stack until then).
        #[cfg(feature = "dpdk")]
        let dpdk = open_dpdk(cfg, placement.len())?;
        #[cfg(not(feature = "dpdk"))]
        refuse_dpdk(cfg)?;
        let io = Io::new(io_cfg)?;
        let mut fwd = new_forwarder(cfg, 1, 0, |variant| Fib::with_capacity(variant, 0));
        for prefix in ["/localhost/nfd", "/localhop/nfd"] {
            fwd.fib.add_nexthop(&prefix.parse().expect("static name"), INTERNAL_FACE, 0);
        }
        let mut d = Daemon {
            io,
            fwd,
            rib: Rib::new(0),
            mgmt: Management::new(),
            workers: None,
            #[cfg(feature = "dpdk")]
            dpdk: None,
            #[cfg(feature = "dpdk")]
            spins: 0,
            #[cfg(feature = "dpdk")]
            last_tick: 0,
            #[cfg(feature = "dpdk")]
            io_pending: false,
            epoch: Instant::now(),
            events: Vec::with_capacity(256),
            burst: Vec::with_capacity(256),
            out: Vec::with_capacity(256),
            back: Vec::with_capacity(256),
            config: cfg.clone(),
            static_routes: Vec::new(),
        };
        #[cfg(feature = "dpdk")]
        if let Some(faces) = dpdk {
            d.add_dpdk_faces(faces);
        }
        for r in &cfg.routes {
            d.add_static_route(r).map_err(|message| StartError::Route { prefix: r.prefix.clone(), face: r.face.clone(), message })?;
        }
        if placement.len() > 1 {
            // The workers share the configured control replica's FIB, one copy per
            // NUMA node, and each starts with a copy of its faces.
            let fibs = NodeFibs::new(&d.fwd.fib, &placement, placement.len());
            tracing::info!(nodes = ?fibs.nodes().collect::<Vec<_>>(), "FIB: one replica per NUMA node, shared by its workers");
            let fwds = (0..placement.len())
                .map(|w| {
                    let mut f = new_forwarder(cfg, placement.len(), w as u64, |_| fibs.reader(w));
                    for id in d.fwd.faces.iter().map(|(id, _)| id) {
                        Change::face(&d.fwd, id).apply(&mut f);
                    }
                    f
                })
                .collect();
            let waker = d.io.waker();
            let wake = Arc::new(move || {
                let _ = waker.wake();
            });
            let ports = d.io.worker_ports(crate::workers::COUNTER_REPORT_LAG)?;
            let queues = d.worker_queues();
            d.workers = Some(Workers::start(fwds, fibs, &placement, ports, queues, wake, Clock::Since(d.epoch)).map_err(|e| StartError::Workers(e.to_string()))?);
            // Faces made for static routes before the workers existed.
            let peers: Vec<_> = d.io.faces().filter_map(|f| d.io.hash_peer(f.id).map(|r| (f.id, r))).collect();
            for (face, remote) in peers {
                d.workers.as_mut().expect("just started").add_peer(face, remote);
            }
        }
        if let Some(h) = d.io.hash_ports() {
            tracing::info!(base = %h.base, ports = h.count, "UDP port-by-hash face: one port per worker");
        }
        Ok(d)
    }

    /// Registers the static route `r` (origin static), making its face first
    /// (permanent) unless it names a DPDK port; the error says why it could not.
    /// A face that is up already (another route's, one `trajan face create`
    /// made, a peer's) keeps its state — counters, LocalFieldsEnabled — and its
    /// ports: a route that wants another number of them is refused.
    pub(crate) fn add_static_route(&mut self, r: &RouteConfig) -> Result<(), String> {
        let prefix: Name = r.prefix.parse().map_err(|e: trajan_wire::WireError| e.to_string())?;
        let face = match r.face.strip_prefix("dev://") {
            Some(dev) => self.dpdk_face(dev).ok_or_else(|| "no such DPDK port".to_owned())?,
            None => {
                let info = match self.io.create_face_ports(&r.face, Persistency::Permanent, r.udp_ports) {
                    Ok(info) => info,
                    Err(IoError::OtherPorts { face: id, uri, has, wanted }) => {
                        let s = if has == 1 { "" } else { "s" };
                        return Err(format!(
                            "face {id} ({uri}) has {has} port{s}, not udp_ports = {wanted}: a face keeps the ports it was made with until it is destroyed (`trajan face destroy {id}`, then reload) or the router restarts"
                        ));
                    }
                    Err(e) => return Err(e.to_string()),
                };
                if self.fwd.faces.get(info.id).is_none() {
                    self.face_up(&info);
                }
                info.id
            }
        };
        let route = Route { face, origin: ORIGIN_STATIC, cost: r.cost, flags: 1, expires_ms: None };
        self.rib.register(&mut self.fwd.fib, &prefix, route);
        self.rib_to_workers();
        self.static_routes.push((r.clone(), face));
        Ok(())
    }

    /// Makes the opened DPDK ports faces of the forwarder and of management.
    #[cfg(feature = "dpdk")]
    fn add_dpdk_faces(&mut self, faces: crate::dpdk::DpdkFaces) {
        for (id, name) in faces.names() {
            self.fwd.add_face(id, FaceMeta { local: false, local_fields: false, point_to_point: true, ..Default::default() });
            let uri = format!("dev://{name}");
            let kind = trajan_io::FaceKind::Device;
            let info = FaceInfo { id, kind, remote_uri: uri.clone(), local_uri: uri, local_scope: false, persistency: Persistency::Permanent, mtu: None };
            self.mgmt.device_faces.push(info);
        }
        self.dpdk = Some(faces);
    }

    /// The NIC queues each worker polls itself (none without DPDK ports of a
    /// queue pair per worker).
    fn worker_queues(&mut self) -> Vec<Box<dyn crate::workers::WorkerQueues>> {
        #[cfg(feature = "dpdk")]
        if let Some(d) = &mut self.dpdk {
            return d.take_worker_queues();
        }
        Vec::new()
    }

    /// Whether the I/O thread busy-polls DPDK ports itself (single-queue ports
    /// with several workers).
    fn io_polls_dpdk(&self) -> bool {
        #[cfg(feature = "dpdk")]
        if let Some(d) = &self.dpdk {
            return d.polls();
        }
        false
    }

    /// The face of DPDK port `name`.
    fn dpdk_face(&self, name: &str) -> Option<u32> {
        #[cfg(feature = "dpdk")]
        if let Some(d) = &self.dpdk {
            return d.face_of(name);
        }
        let _ = name;
        None
    }

    /// Milliseconds since the daemon started: the engine's clock.
    pub fn now_ms(&self) -> u64 {
        self.epoch.elapsed().as_millis() as u64
    }

    /// Tells the engine (every worker) about a face the I/O layer opened.
    pub fn face_up(&mut self, info: &FaceInfo) {
        let meta = FaceMeta { local: info.local_scope, local_fields: false, point_to_point: true, ..Default::default() };
        self.fwd.add_face(info.id, meta);
        if let Some(w) = &mut self.workers {
            w.broadcast(Change::face(&self.fwd, info.id));
            if let Some(remote) = self.io.hash_peer(info.id) {
                w.add_peer(info.id, remote);
            }
        }
    }

    /// Runs until `stop` is set (by a signal handler or a test).
    pub fn run(&mut self, stop: &AtomicBool) -> std::io::Result<()> {
        self.run_reloading(stop, &AtomicBool::new(false), || Err("no configuration file to reload".to_owned()))
    }

    /// [`Daemon::run`], reloading the configuration ([`Daemon::reload`]) each
    /// time `hangup` is set (SIGHUP, [`reload_on_hangup`]): `load` reads it
    /// again, or says why it cannot, and then the running one stays.
    pub fn run_reloading(&mut self, stop: &AtomicBool, hangup: &AtomicBool, mut load: impl FnMut() -> Result<Config, String>) -> std::io::Result<()> {
        while !stop.load(Ordering::Relaxed) {
            self.run_once()?;
            if hangup.swap(false, Ordering::Relaxed) {
                match load() {
                    Ok(cfg) => {
                        self.reload(cfg);
                    }
                    Err(e) => tracing::error!("configuration not reloaded, the running one stays: {e}"),
                }
            }
        }
        tracing::info!("shutting down");
        self.io.flush();
        #[cfg(feature = "dpdk")]
        if let Some(d) = &self.dpdk {
            d.log_counters();
        }
        Ok(())
    }

    /// One iteration: poll, fire timers, forward, manage, send.
    pub fn run_once(&mut self) -> std::io::Result<()> {
        if self.workers.is_some() {
            return self.dispatch_once();
        }
        #[cfg(feature = "dpdk")]
        if self.dpdk.is_some() {
            return self.spin_once();
        }
        let now = self.now_ms();
        let deadline = [self.fwd.next_deadline(), self.rib.next_deadline()].into_iter().flatten().min();
        let timeout = deadline.map_or(MAX_POLL, |d| Duration::from_millis(d.saturating_sub(now)).min(MAX_POLL));
        let mut events = std::mem::take(&mut self.events);
        self.io.poll(Some(timeout), &mut events)?;
        let now = self.now_ms();
        self.burst.clear();
        for ev in events.drain(..) {
            if let Some(p) = self.face_event(ev) {
                self.burst.push(p);
            }
        }
        self.events = events;
        // Timers first, as the workers run them: what lapsed by now is gone
        // before the burst is processed.
        self.fwd.tick(now);
        self.rib.expire(&mut self.fwd.fib, now);
        self.rib_to_workers();
        let mut burst = std::mem::take(&mut self.burst);
        self.forward(now, &mut burst);
        self.burst = burst;
        self.routes_to_io();
        self.io.flush();
        Ok(())
    }

    /// Tells the I/O layer which faces routes now go through (or no longer
    /// do), after management and route expiry changed the RIB: those faces
    /// never give way to a new peer at the face limit.
    fn routes_to_io(&mut self) {
        let io = &mut self.io;
        self.rib.drain_routed(|face, routed| io.set_routed(face, routed));
    }

    /// One iteration with DPDK ports, which must be polled: a burst from every
    /// port; the sockets without waiting every [`SOCKET_POLL_EVERY`]th iteration;
    /// one clock read, and timers only when the millisecond changed (a spinning
    /// loop that read the clock and walked the timers every time spent a tenth of
    /// its cycles there).
    #[cfg(feature = "dpdk")]
    fn spin_once(&mut self) -> std::io::Result<()> {
        let now = self.now_ms();
        self.burst.clear();
        self.spins = self.spins.wrapping_add(1);
        let sockets = self.spins.is_multiple_of(SOCKET_POLL_EVERY);
        if sockets {
            let mut events = std::mem::take(&mut self.events);
            self.io.poll(Some(Duration::ZERO), &mut events)?;
            for ev in events.drain(..) {
                if let Some(p) = self.face_event(ev) {
                    self.burst.push(p);
                }
            }
            self.events = events;
        }
        self.dpdk.as_mut().expect("spinning on DPDK ports").poll(&mut self.burst);
        if now != self.last_tick {
            self.last_tick = now;
            self.fwd.tick(now);
            self.rib.expire(&mut self.fwd.fib, now);
            self.rib_to_workers();
        }
        if !self.burst.is_empty() {
            let mut burst = std::mem::take(&mut self.burst);
            self.forward(now, &mut burst);
            self.burst = burst;
        }
        if sockets || std::mem::take(&mut self.io_pending) {
            self.routes_to_io();
            self.io.flush();
        }
        self.dpdk.as_mut().expect("spinning on DPDK ports").flush();
        Ok(())
    }

    /// Hands an outgoing packet to its DPDK face, or to the socket faces.
    fn send(&mut self, face: u32, pkt: Bytes) {
        #[cfg(feature = "dpdk")]
        let pkt = match &mut self.dpdk {
            Some(d) => match d.send(face, pkt) {
                Some(p) => {
                    self.io_pending = true;
                    p
                }
                None => return,
            },
            None => pkt,
        };
        self.io.send(face, pkt);
    }

    /// Applies a face coming or going; returns a received packet for the caller to
    /// forward (the single loop batches it, the dispatch loop hands it to a worker):
    /// a packet from a face, or management's answer to a `faces/create` that
    /// waited for the face's connection.
    fn face_event(&mut self, ev: IoEvent) -> Option<(u32, Bytes)> {
        match ev {
            IoEvent::FaceUp(info) => {
                tracing::debug!(face = info.id, remote = %info.remote_uri, "face up");
                self.face_up(&info);
                None
            }
            IoEvent::FaceDown(id) => {
                tracing::debug!(face = id, "face down");
                self.face_down(id);
                None
            }
            IoEvent::Connected(id) => {
                tracing::debug!(face = id, "connected");
                let answer = self.mgmt.connect_settled(id, Ok(()), &mut self.fwd, &mut self.io, self.workers.as_mut());
                answer.map(|a| (INTERNAL_FACE, a))
            }
            IoEvent::ConnectFailed { face, reason } => {
                let answer = self.mgmt.connect_settled(face, Err(&reason), &mut self.fwd, &mut self.io, self.workers.as_mut());
                // A permanent face redials (the I/O layer logs it), keeping its routes.
                if self.io.face(face).is_none() {
                    tracing::info!(face, %reason, "TCP connection failed; face closed");
                    self.face_down(face);
                }
                answer.map(|a| (INTERNAL_FACE, a))
            }
            IoEvent::Packet { face, pkt } => Some((face, pkt)),
            IoEvent::PeerMoved { face, port } => {
                tracing::debug!(face, port, "one-port peer moved to another port of the hash face");
                if let Some(w) = &mut self.workers {
                    w.peer_moved(face, port);
                }
                None
            }
        }
    }

    /// One iteration with workers: poll, hand packets to their owners, send what
    /// the workers returned, handle the datagrams they handed back, answer
    /// management, expire routes.
    fn dispatch_once(&mut self) -> std::io::Result<()> {
        let now = self.now_ms();
        let timeout = self.rib.next_deadline().map_or(MAX_POLL, |d| Duration::from_millis(d.saturating_sub(now)).min(MAX_POLL));
        let workers = self.workers.as_ref().expect("dispatch mode");
        let timeout = if !self.io_polls_dpdk() && workers.may_sleep() { timeout } else { Duration::ZERO };
        let mut events = std::mem::take(&mut self.events);
        let polled = self.io.poll(Some(timeout), &mut events);
        self.workers.as_ref().expect("dispatch mode").awake();
        polled?;
        self.dispatch_events(&mut events, now);
        self.dispatch_dpdk(now);
        let now = self.now_ms();
        let mut workers = self.workers.take().expect("dispatch mode");
        workers.notify();
        let mut back = std::mem::take(&mut self.back);
        workers.drain(&mut back);
        let instant = Instant::now();
        for b in back.drain(..) {
            match b {
                FromWorker::Send(o) if o.face == INTERNAL_FACE => {
                    let reply = self.mgmt.handle(&o.pkt, now, &mut self.fwd, &mut self.rib, &mut self.io, Some(&mut workers));
                    if let Some(reply) = reply {
                        workers.dispatch(INTERNAL_FACE, reply, now);
                    }
                }
                FromWorker::Send(o) => self.send(o.face, o.pkt),
                FromWorker::Handoff(face, pkt) => workers.dispatch(face, pkt, now),
                FromWorker::Punt { port, datagram } => self.io.hash_datagram(port, datagram, &mut events),
                FromWorker::Errors { port, errors } => self.io.hash_errors(port, errors, &mut events),
                FromWorker::Counters(counters) => {
                    for (face, c) in &counters {
                        self.io.add_worker_counters(*face, c, instant);
                    }
                }
            }
        }
        self.back = back;
        self.workers = Some(workers);
        // Faces and packets from the datagrams the workers handed back.
        self.dispatch_events(&mut events, now);
        self.events = events;
        self.rib.expire(&mut self.fwd.fib, now);
        self.rib_to_workers();
        self.workers.as_mut().expect("dispatch mode").notify();
        self.routes_to_io();
        self.io.flush();
        #[cfg(feature = "dpdk")]
        if let Some(d) = &mut self.dpdk {
            d.flush();
        }
        Ok(())
    }

    /// Hands what the DPDK ports the I/O thread polls received to their workers.
    fn dispatch_dpdk(&mut self, now: u64) {
        #[cfg(feature = "dpdk")]
        if let Some(d) = self.dpdk.as_mut().filter(|d| d.polls()) {
            self.burst.clear();
            d.poll(&mut self.burst);
            let workers = self.workers.as_mut().expect("dispatch mode");
            for (face, pkt) in self.burst.drain(..) {
                workers.dispatch(face, pkt, now);
            }
        }
        let _ = now;
    }

    /// Applies face events and hands received packets to their workers.
    fn dispatch_events(&mut self, events: &mut Vec<IoEvent>, now: u64) {
        for ev in events.drain(..) {
            if let Some((face, pkt)) = self.face_event(ev) {
                self.workers.as_mut().expect("dispatch mode").dispatch(face, pkt, now);
            }
        }
    }

    /// Forgets a face everywhere.
    pub fn face_down(&mut self, id: u32) {
        self.rib.remove_face(&mut self.fwd.fib, id);
        self.fwd.remove_face(id);
        if let Some(w) = &mut self.workers {
            w.broadcast(Change::Face(id, None));
        }
        self.rib_to_workers();
    }

    /// Brings the workers' FIB replicas to the entries the RIB rewrote: a
    /// route's change reaches the names under its own that inherit it (one
    /// worker reads the control replica itself, and there is nothing to bring).
    pub(crate) fn rib_to_workers(&mut self) {
        crate::workers::rib_to_workers(&mut self.rib, &self.fwd, self.workers.as_mut());
    }

    /// Where the workers run (empty with one worker, which runs on this thread).
    pub fn placement(&self) -> Vec<Option<&Placement>> {
        self.workers.as_ref().map(|w| w.placement().collect()).unwrap_or_default()
    }

    /// Runs a burst through the engine and delivers the results, looping while the
    /// management face answers (its replies are themselves packets to forward).
    fn forward(&mut self, now: u64, burst: &mut [(u32, Bytes)]) {
        self.out.clear();
        self.fwd.process_burst(now, burst, &mut self.out);
        let mut internal: Vec<(u32, Bytes)> = Vec::new();
        // Management replies go back through the engine; each round is bounded by the
        // Interests of the previous one, and replies (Data) create no new Interests.
        for _round in 0..4 {
            internal.clear();
            let mut out = std::mem::take(&mut self.out);
            for o in out.drain(..) {
                if o.face == INTERNAL_FACE {
                    if let Some(reply) = self.mgmt.handle(&o.pkt, now, &mut self.fwd, &mut self.rib, &mut self.io, None) {
                        internal.push((INTERNAL_FACE, reply));
                    }
                } else {
                    self.send(o.face, o.pkt);
                }
            }
            self.out = out;
            if internal.is_empty() {
                break;
            }
            self.fwd.process_burst(now, &mut internal, &mut self.out);
        }
    }
}

/// A forwarder with the internal face and the configured strategies, reading the
/// FIB that `fib` makes of the configured variant; with `shards` workers, worker
/// `index`'s share of the CS and PIT and its own Nonce seed.
fn new_forwarder<F: FibSource>(cfg: &Config, shards: usize, index: u64, fib: impl FnOnce(FibVariant) -> F) -> Forwarder<F> {
    let engine_cfg = EngineConfig {
        cs_capacity: cfg.tables.cs_capacity.div_ceil(shards),
        pit_capacity: cfg.tables.pit_capacity.div_ceil(shards),
        max_lifetime_ms: cfg.tables.max_interest_lifetime_ms,
        dead_nonce_lifetime_ms: cfg.tables.dead_nonce_lifetime_ms,
        fib_variant: cfg.tables.fib_variant.parse().expect("validated when the configuration was loaded"),
        seed: EngineConfig::default().seed ^ index.wrapping_mul(0x9e37_79b9_7f4a_7c15),
        network_regions: network_regions(cfg),
        ..EngineConfig::default()
    };
    let mut fwd = Forwarder::with_fib(&engine_cfg, 0, fib(engine_cfg.fib_variant));
    fwd.pcct.cs.set_admit(cfg.tables.cs_admit);
    fwd.pcct.cs.set_serve(cfg.tables.cs_serve);
    fwd.add_face(INTERNAL_FACE, FaceMeta { local: true, local_fields: true, point_to_point: true, ..Default::default() });
    for s in &cfg.strategies {
        fwd.strategies.insert(&s.prefix.parse().expect("validated"), strategy_kind(s));
    }
    fwd
}

/// The strategy a (validated) configured choice names.
pub(crate) fn strategy_kind(s: &StrategyConfig) -> StrategyKind {
    s.strategy.parse().expect("validated")
}

/// The network regions a (validated) configuration lists.
pub(crate) fn network_regions(cfg: &Config) -> Vec<Name> {
    cfg.tables.network_regions.iter().map(|r| r.parse().expect("validated when the configuration was loaded")).collect()
}

/// Opens the DPDK ports of `cfg`, with a queue pair per worker where a port has
/// enough (see [`crate::dpdk`]); `None` when none is configured.
#[cfg(feature = "dpdk")]
fn open_dpdk(cfg: &Config, workers: usize) -> Result<Option<crate::dpdk::DpdkFaces>, StartError> {
    match cfg.dpdk.ports.is_empty() {
        true => Ok(None),
        false => crate::dpdk::DpdkFaces::open(cfg, workers).map(Some),
    }
}

/// Without the `dpdk` feature, configured ports are an error, not silently ignored.
#[cfg(not(feature = "dpdk"))]
fn refuse_dpdk(cfg: &Config) -> Result<(), StartError> {
    match cfg.dpdk.ports.is_empty() {
        true => Ok(()),
        false => Err(StartError::Dpdk("this trajan was built without DPDK: rebuild with `--features dpdk`".to_owned())),
    }
}

/// Detects the machine and decides where the workers run, logging both.
fn placement(cfg: &Config) -> Result<Vec<Placement>, StartError> {
    let topo = Topology::detect().map_err(|e| StartError::Workers(format!("cannot read the CPU topology from /sys: {e}")))?;
    tracing::info!(machine = %topo, "detected");
    let placement = if cfg.workers.cores.is_empty() {
        let n = if cfg.workers.count == 0 { topo.default_workers() } else { cfg.workers.count };
        topo.place(n)
    } else {
        topo.place_on(&cfg.workers.cores).map_err(StartError::Workers)?
    };
    if placement.len() > topo.cpus.len() {
        tracing::warn!(workers = placement.len(), cpus = topo.cpus.len(), "more workers than CPUs: some share a CPU");
    }
    if placement.len() <= 1 {
        tracing::info!("1 worker: forwarding on the I/O thread");
        // An explicit single CPU pins the thread that forwards: this one.
        if let (Some(p), false) = (placement.first(), cfg.workers.cores.is_empty()) {
            if !core_affinity::set_for_current(core_affinity::CoreId { id: p.cpu.id }) {
                tracing::warn!(cpu = p.cpu.id, "cannot pin the forwarding thread");
            }
        }
    }
    for p in placement.iter().filter(|_| placement.len() > 1) {
        tracing::info!("{p}");
    }
    Ok(placement)
}

/// Installs a SIGHUP handler that sets the returned flag, which
/// [`Daemon::run_reloading`] answers by reloading the configuration (NFD's
/// convention; SIGHUP's default action would end the router).
pub fn reload_on_hangup() -> std::io::Result<Arc<AtomicBool>> {
    let hangup = Arc::new(AtomicBool::new(false));
    signal_hook::flag::register(signal_hook::consts::SIGHUP, Arc::clone(&hangup))?;
    Ok(hangup)
}

/// Installs SIGINT/SIGTERM handlers that set the returned flag.
pub fn stop_on_signals() -> std::io::Result<Arc<AtomicBool>> {
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(sig, Arc::clone(&stop))?;
    }
    Ok(stop)
}
