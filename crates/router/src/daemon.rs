//! The daemon's event loop: one thread that polls the faces, runs each burst through
//! the engine, hands management Interests to [`crate::mgmt::Management`], sends what
//! the engine emits and fires timers. It is the thin shell around the sans-I/O engine.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use trajan_engine::{EngineConfig, FaceMeta, Forwarder, Outgoing, StrategyKind, INTERNAL_FACE};
use trajan_io::{FaceInfo, Io, IoConfig, IoEvent, Persistency};
use trajan_wire::Name;

use crate::config::Config;
use crate::mgmt::Management;
use crate::rib::{Rib, Route, ORIGIN_STATIC};

/// Longest the loop sleeps in poll, so shutdown requests and timers are noticed promptly.
const MAX_POLL: Duration = Duration::from_millis(100);

/// Errors that stop the daemon from starting.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("cannot open faces: {0}")]
    Io(#[from] trajan_io::IoError),
    #[error("static route {prefix} via {face}: {message}")]
    Route { prefix: String, face: String, message: String },
}

/// Everything one forwarding loop owns.
pub struct Daemon {
    pub io: Io,
    pub fwd: Forwarder,
    pub rib: Rib,
    pub mgmt: Management,
    epoch: Instant,
    events: Vec<IoEvent>,
    burst: Vec<(u32, Bytes)>,
    out: Vec<Outgoing>,
}

impl Daemon {
    /// Opens the faces and tables described by `cfg`.
    pub fn new(cfg: &Config) -> Result<Daemon, StartError> {
        let io_cfg = IoConfig {
            udp_listen: cfg.faces.udp_listen.clone(),
            tcp_listen: cfg.faces.tcp_listen.clone(),
            unix_path: (!cfg.faces.unix_path.as_os_str().is_empty()).then(|| cfg.faces.unix_path.clone()),
            udp_idle_timeout: Duration::from_secs(cfg.faces.udp_idle_timeout_s),
            stream_queue_bytes: cfg.faces.stream_queue_bytes,
            ..IoConfig::default()
        };
        let io = Io::new(io_cfg)?;
        let engine_cfg = EngineConfig {
            cs_capacity: cfg.tables.cs_capacity,
            pit_capacity: cfg.tables.pit_capacity,
            dead_nonce_lifetime_ms: cfg.tables.dead_nonce_lifetime_ms,
            ..EngineConfig::default()
        };
        let mut fwd = Forwarder::new(&engine_cfg, 0);
        fwd.add_face(INTERNAL_FACE, FaceMeta { local: true, local_fields: true, point_to_point: true, ..Default::default() });
        for prefix in ["/localhost/nfd", "/localhop/nfd"] {
            fwd.fib.add_nexthop(&prefix.parse().expect("static name"), INTERNAL_FACE, 0);
        }
        let mut d = Daemon {
            io,
            fwd,
            rib: Rib::new(0),
            mgmt: Management::new(),
            epoch: Instant::now(),
            events: Vec::with_capacity(256),
            burst: Vec::with_capacity(256),
            out: Vec::with_capacity(256),
        };
        for s in &cfg.strategies {
            let kind = if s.strategy == "multicast" { StrategyKind::Multicast } else { StrategyKind::BestRoute };
            d.fwd.strategies.insert(&s.prefix.parse().expect("validated"), kind);
        }
        for r in &cfg.routes {
            let err = |message: String| StartError::Route { prefix: r.prefix.clone(), face: r.face.clone(), message };
            let info = d.io.create_face(&r.face, Persistency::Permanent).map_err(|e| err(e.to_string()))?;
            d.face_up(&info);
            let prefix: Name = r.prefix.parse().map_err(|e: trajan_wire::WireError| err(e.to_string()))?;
            let route = Route { face: info.id, origin: ORIGIN_STATIC, cost: r.cost, flags: 1, expires_ms: None };
            d.rib.register(&mut d.fwd.fib, &prefix, route);
        }
        Ok(d)
    }

    /// Milliseconds since the daemon started: the engine's clock.
    pub fn now_ms(&self) -> u64 {
        self.epoch.elapsed().as_millis() as u64
    }

    /// Tells the engine about a face the I/O layer opened.
    pub fn face_up(&mut self, info: &FaceInfo) {
        let meta = FaceMeta { local: info.local_scope, local_fields: false, point_to_point: true, ..Default::default() };
        self.fwd.add_face(info.id, meta);
    }

    /// Runs until `stop` is set (by a signal handler or a test).
    pub fn run(&mut self, stop: &AtomicBool) -> std::io::Result<()> {
        while !stop.load(Ordering::Relaxed) {
            self.run_once()?;
        }
        tracing::info!("shutting down");
        self.io.flush();
        Ok(())
    }

    /// One iteration: poll, forward, manage, send, fire timers.
    pub fn run_once(&mut self) -> std::io::Result<()> {
        let now = self.now_ms();
        let deadline = [self.fwd.next_deadline(), self.rib.next_deadline()].into_iter().flatten().min();
        let timeout = deadline.map_or(MAX_POLL, |d| Duration::from_millis(d.saturating_sub(now)).min(MAX_POLL));
        let mut events = std::mem::take(&mut self.events);
        self.io.poll(Some(timeout), &mut events)?;
        let now = self.now_ms();
        self.burst.clear();
        for ev in events.drain(..) {
            match ev {
                IoEvent::FaceUp(info) => {
                    tracing::debug!(face = info.id, remote = %info.remote_uri, "face up");
                    self.face_up(&info);
                }
                IoEvent::FaceDown(id) => {
                    tracing::debug!(face = id, "face down");
                    self.face_down(id);
                }
                IoEvent::Packet { face, pkt } => self.burst.push((face, pkt)),
            }
        }
        self.events = events;
        let burst = std::mem::take(&mut self.burst);
        self.forward(now, &burst);
        self.burst = burst;
        self.fwd.tick(now);
        self.rib.expire(&mut self.fwd.fib, now);
        self.io.flush();
        Ok(())
    }

    /// Forgets a face everywhere.
    pub fn face_down(&mut self, id: u32) {
        self.rib.remove_face(&mut self.fwd.fib, id);
        self.fwd.remove_face(id);
    }

    /// Runs a burst through the engine and delivers the results, looping while the
    /// management face answers (its replies are themselves packets to forward).
    fn forward(&mut self, now: u64, burst: &[(u32, Bytes)]) {
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
                    if let Some(reply) = self.mgmt.handle(&o.pkt, now, &mut self.fwd, &mut self.rib, &mut self.io) {
                        internal.push((INTERNAL_FACE, reply));
                    }
                } else {
                    self.io.send(o.face, o.pkt);
                }
            }
            self.out = out;
            if internal.is_empty() {
                break;
            }
            self.fwd.process_burst(now, &internal, &mut self.out);
        }
    }
}

/// Installs SIGINT/SIGTERM handlers that set the returned flag.
pub fn stop_on_signals() -> std::io::Result<Arc<AtomicBool>> {
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(sig, Arc::clone(&stop))?;
    }
    Ok(stop)
}
