//! The daemon's DPDK faces (`--features dpdk`): EAL started from `[dpdk]`, one
//! mempool sized from the configuration, and one face per configured port.
//!
//! With one worker, the forwarding loop polls every port in bursts next to the
//! socket faces. With several, a port that has a queue pair per worker gives each
//! worker its own ([`QueueFaces`], polled and sent on by that worker alone); a port
//! with a single queue (a memif or another device without multi-queue support)
//! stays with the I/O thread, which polls it, dispatches by name like a socket
//! face, and sends on it what the workers return.

use std::sync::Arc;

use bytes::Bytes;
use trajan_dpdk::face::Face;
use trajan_dpdk::{Eal, EalConfig, Mempool, Port, DATA_ROOM};
use trajan_io::encap::{Link, LinkAddrs};
use trajan_io::{FaceCounters, FaceId};

use crate::config::{parse_mac, Config};
use crate::daemon::StartError;
use crate::workers::{WorkerQueues, IN_RING, OUT_RING};

/// Face ids of DPDK ports start here, far from the socket faces' ids (256 upward).
pub const FIRST_DPDK_FACE: FaceId = 0x4000_0000;

/// The open DPDK ports: the faces the thread that owns this polls, and the queue
/// faces waiting to be handed to the workers.
pub struct DpdkFaces {
    /// DPDK's environment, kept for as long as the ports are open.
    eal: Eal,
    /// Every port, with its face id and name.
    ports: Vec<(FaceId, String, Port)>,
    /// The faces polled by the forwarding loop (one worker) or the I/O thread.
    faces: QueueFaces,
    /// One set per worker, of the ports with a queue pair per worker, until
    /// [`DpdkFaces::take_worker_queues`].
    per_worker: Vec<QueueFaces>,
}

/// One queue pair of each of some ports, as faces, used by one thread.
#[derive(Default)]
pub struct QueueFaces {
    faces: Vec<(FaceId, Face)>,
    rx: Vec<Bytes>,
}

impl QueueFaces {
    /// Reads one burst from every queue into `burst`; returns the frames read.
    pub fn poll(&mut self, burst: &mut Vec<(FaceId, Bytes)>) -> usize {
        let mut frames = 0;
        for (id, face) in &mut self.faces {
            frames += face.recv(&mut self.rx);
            burst.extend(self.rx.drain(..).map(|p| (*id, p)));
        }
        frames
    }

    /// Queues `pkt` on face `face`; gives it back when `face` is not one of these.
    pub fn send(&mut self, face: FaceId, pkt: Bytes) -> Option<Bytes> {
        match self.faces.iter_mut().find(|(id, _)| *id == face) {
            Some((_, f)) => {
                f.send(&pkt);
                None
            }
            None => Some(pkt),
        }
    }

    /// Sends what every face queued.
    pub fn flush(&mut self) {
        for (_, face) in &mut self.faces {
            face.flush();
        }
    }

    /// Whether there is no face here.
    pub fn is_empty(&self) -> bool {
        self.faces.is_empty()
    }
}

impl WorkerQueues for QueueFaces {
    fn recv(&mut self, out: &mut Vec<(FaceId, Bytes)>) -> usize {
        self.poll(out)
    }

    fn send(&mut self, face: FaceId, pkt: Bytes) -> Option<Bytes> {
        QueueFaces::send(self, face, pkt)
    }

    fn flush(&mut self) {
        QueueFaces::flush(self)
    }

    fn on_thread(&mut self) {
        if let Some((_, face)) = self.faces.first() {
            face.register_thread();
        }
    }
}

/// Buffers for the pool: `dpdk.mbufs`, or when that is 0 what the router needs
/// ([`needed_mbufs`]). An explicit size below the need is taken, with a warning:
/// once the CS holds most of the pool, ports stop receiving.
fn pool_size(cfg: &Config, workers: usize) -> u32 {
    let needed = needed_mbufs(cfg, workers);
    match cfg.dpdk.mbufs {
        0 => needed,
        n if n < needed => {
            tracing::warn!(
                mbufs = n,
                needed,
                cs_capacity = cfg.tables.cs_capacity,
                "dpdk.mbufs is below the CS capacity plus the queues' descriptors: every cached packet keeps its mbuf, so a full CS can leave the ports no buffer to receive into (port_no_mbuf); raise mbufs or lower tables.cs_capacity"
            );
            n
        }
        n => n,
    }
}

/// Every CS entry may hold an mbuf, and so may every RX and TX descriptor of every
/// queue of every port, every slot of the rings between the I/O thread and the
/// workers (a Data received on a port the I/O thread polls stays a view of its
/// mbuf on the way), plus bursts in flight.
fn needed_mbufs(cfg: &Config, workers: usize) -> u32 {
    let queues = cfg.dpdk.ports.len() * workers.max(1) * 2 * usize::from(cfg.dpdk.queue_size);
    let rings = if workers > 1 { workers * (IN_RING + OUT_RING) } else { 0 };
    let n = cfg.tables.cs_capacity + queues + rings + 4096;
    // DPDK pools are most efficient at 2^k - 1 buffers.
    (n.next_power_of_two() - 1).min(u32::MAX as usize) as u32
}

impl DpdkFaces {
    /// Starts EAL and every port of `cfg.dpdk`, with a queue pair per worker on
    /// the ports that have enough queues when there are several `workers`.
    pub fn open(cfg: &Config, workers: usize) -> Result<DpdkFaces, StartError> {
        let mbufs = pool_size(cfg, workers);
        // Without hugepages EAL's memory must hold the pool (a 2,176-byte buffer and
        // its headers: 3 KiB with room to spare) plus EAL's and the drivers' own.
        let no_huge_mb = (mbufs as usize * 3).div_ceil(1024) + 256;
        let eal = Eal::init(&EalConfig { args: cfg.dpdk.eal_args.clone(), no_huge_mb }).map_err(dpdk_err)?;
        let pool = Arc::new(Mempool::new(&eal, "trajan_pool", mbufs, DATA_ROOM).map_err(dpdk_err)?);
        DpdkFaces::open_ports(eal, cfg, workers, &pool)
    }

    /// Starts every port of `cfg.dpdk` on a running EAL, receiving into `pool`.
    pub fn open_ports(eal: Eal, cfg: &Config, workers: usize, pool: &Arc<Mempool>) -> Result<DpdkFaces, StartError> {
        let mut d = DpdkFaces { eal, ports: Vec::new(), faces: QueueFaces::default(), per_worker: Vec::new() };
        d.per_worker.resize_with(if workers > 1 { workers } else { 0 }, QueueFaces::default);
        for (i, p) in cfg.dpdk.ports.iter().enumerate() {
            let id = d.eal.port_id(&p.name).map_err(dpdk_err)?;
            let max = d.eal.max_queues(id).map_err(dpdk_err)?;
            let queues = if workers > 1 && usize::from(max) >= workers { workers as u16 } else { 1 };
            let port = Port::start(&d.eal, id, queues, cfg.dpdk.queue_size, Arc::clone(pool)).map_err(dpdk_err)?;
            let link = Link {
                encap: p.encap.parse().map_err(StartError::Dpdk)?,
                addrs: LinkAddrs {
                    local_mac: port.mac(),
                    remote_mac: parse_mac(&p.remote_mac).map_err(StartError::Dpdk)?,
                    local_ip: p.local_ip,
                    remote_ip: p.remote_ip,
                    local_port: p.local_port,
                    remote_port: p.remote_port,
                },
            };
            let face = FIRST_DPDK_FACE + i as FaceId;
            let by = if queues > 1 { "one queue pair per worker" } else { "one queue, polled by the forwarding loop or the I/O thread" };
            tracing::info!(face, port = %p.name, encap = %p.encap, queues, max_queues = max, "DPDK face up: {by}");
            for q in 0..queues {
                let owner = if queues > 1 { &mut d.per_worker[usize::from(q)] } else { &mut d.faces };
                owner.faces.push((face, Face::new(port.queue(q).expect("started with these queues"), link)));
            }
            d.ports.push((face, p.name.clone(), port));
        }
        Ok(d)
    }

    /// The queue faces of worker 0, 1, ...: each to be moved to its worker's thread.
    /// Empty when no port has a queue pair per worker.
    pub fn take_worker_queues(&mut self) -> Vec<Box<dyn WorkerQueues>> {
        let sets = std::mem::take(&mut self.per_worker);
        if sets.iter().all(QueueFaces::is_empty) {
            return Vec::new();
        }
        sets.into_iter().map(|q| Box::new(q) as Box<dyn WorkerQueues>).collect()
    }

    /// Whether this thread has faces to poll (else the workers poll them all).
    pub fn polls(&self) -> bool {
        !self.faces.is_empty()
    }

    /// The face of port `name` (routes name it `dev://<name>`).
    pub fn face_of(&self, name: &str) -> Option<FaceId> {
        self.ports.iter().find(|(_, n, _)| n == name).map(|(id, _, _)| *id)
    }

    /// Every face id and its port's name, for the engine and management.
    pub fn names(&self) -> impl Iterator<Item = (FaceId, &str)> + '_ {
        self.ports.iter().map(|(id, name, _)| (*id, name.as_str()))
    }

    /// Reads one burst from every port this thread polls into `burst`; returns
    /// the frames read.
    pub fn poll(&mut self, burst: &mut Vec<(FaceId, Bytes)>) -> usize {
        self.faces.poll(burst)
    }

    /// Queues `pkt` on DPDK face `face`, when this thread sends on it; gives it
    /// back otherwise.
    pub fn send(&mut self, face: FaceId, pkt: Bytes) -> Option<Bytes> {
        self.faces.send(face, pkt)
    }

    /// Sends what every face of this thread queued.
    pub fn flush(&mut self) {
        self.faces.flush();
    }

    /// Logs this thread's faces' counters and every port's (at shutdown: what a
    /// run moved, dropped as malformed, or lost for want of buffers).
    pub fn log_counters(&self) {
        for (id, f) in &self.faces.faces {
            let FaceCounters { in_packets, out_packets, dropped_in, dropped_out, .. } = f.counters;
            tracing::info!(face = id, in_packets, out_packets, dropped_in, dropped_out, "DPDK face counters");
        }
        for (id, name, port) in &self.ports {
            let p = port.stats();
            tracing::info!(face = id, port = %name, in_packets = p.in_packets, out_packets = p.out_packets, port_missed = p.missed, port_no_mbuf = p.no_mbuf, port_out_errors = p.out_errors, "DPDK port counters");
        }
    }
}

fn dpdk_err(e: trajan_dpdk::DpdkError) -> StartError {
    StartError::Dpdk(e.to_string())
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use trajan_engine::Outgoing;
    use trajan_io::encap::Encap;
    use trajan_wire::data::DataBuilder;

    use super::*;
    use crate::workers::tests::{forwarders_with, names, run_io_with, seg_name, spread_interests};
    use crate::workers::{ShardStats, Workers};

    /// The far end of a ring cable: one face per queue of port `id`.
    #[test]
    fn the_pool_is_sized_from_the_cs_unless_given() {
        let mut cfg = Config::default_config();
        cfg.tables.cs_capacity = 65_536;
        let needed = needed_mbufs(&cfg, 1);
        assert!(needed as usize > 65_536, "every cached packet may keep an mbuf");
        cfg.dpdk.mbufs = 0;
        assert_eq!(pool_size(&cfg, 1), needed);
        cfg.dpdk.mbufs = 16_383;
        assert_eq!(pool_size(&cfg, 1), 16_383, "a smaller pool is taken (with a warning)");
        cfg.dpdk.mbufs = needed + 1;
        assert_eq!(pool_size(&cfg, 1), needed + 1);
        cfg.tables.cs_capacity = 110_000;
        let rings = 2 * (IN_RING + OUT_RING);
        assert!(needed_mbufs(&cfg, 2) as usize >= 110_000 + rings, "with workers, their rings' slots too");
    }

    fn peer(eal: &Eal, id: u16, queues: u16, pool: &Arc<Mempool>) -> (Port, Vec<Face>) {
        let port = Port::start(eal, id, queues, 512, Arc::clone(pool)).unwrap();
        let addrs = LinkAddrs { local_mac: port.mac(), remote_mac: [0xff; 6], local_ip: [192, 0, 2, 2].into(), remote_ip: [192, 0, 2, 1].into(), local_port: 6363, remote_port: 6363 };
        let faces = (0..queues).map(|q| Face::new(port.queue(q).unwrap(), Link { encap: Encap::Ether, addrs })).collect();
        (port, faces)
    }

    /// Everything the peer's queues received, as sent by face `face`.
    fn gather(faces: &mut [Face], face: FaceId, sent: &mut Vec<Outgoing>) {
        let mut rx = Vec::new();
        for f in faces {
            f.recv(&mut rx);
        }
        sent.extend(rx.into_iter().map(|pkt| Outgoing { face, pkt }));
    }

    #[test]
    fn two_workers_poll_their_own_queue_of_each_port_and_hand_off_by_name() {
        let eal = Eal::init(&EalConfig { args: vec!["--no-pci".into(), "--no-huge".into(), "-m".into(), "256".into()], no_huge_mb: 256 }).unwrap();
        let pool = Arc::new(Mempool::new(&eal, "rss_pool", 16383, DATA_ROOM).unwrap());
        // Consumer and producer cables of two queues, and a one-queue port.
        let (_, cb) = eal.ring_pair("rssc", 2048, 2).unwrap();
        let (_, pb) = eal.ring_pair("rssp", 2048, 2).unwrap();
        let (_, sb) = eal.ring_pair("one", 256, 1).unwrap();
        let text = "[dpdk]\n[[dpdk.ports]]\nname = \"net_ring_rssc_a\"\n[[dpdk.ports]]\nname = \"net_ring_rssp_a\"\n[[dpdk.ports]]\nname = \"net_ring_one_a\"\n";
        let cfg = Config::parse(text, "test").unwrap();
        let (_c_peer, mut c_faces) = peer(&eal, cb, 2, &pool);
        let (_p_peer, mut p_faces) = peer(&eal, pb, 2, &pool);
        let _one_peer = peer(&eal, sb, 1, &pool);
        let mut d = DpdkFaces::open_ports(eal, &cfg, 2, &pool).unwrap();
        let (down, up) = (FIRST_DPDK_FACE, FIRST_DPDK_FACE + 1);
        assert_eq!((d.face_of("net_ring_rssc_a"), d.face_of("net_ring_rssp_a"), d.face_of("net_ring_one_a")), (Some(down), Some(up), Some(up + 1)));
        assert!(d.polls(), "the one-queue port stays with the I/O thread");
        assert_eq!(d.send(up + 1, Bytes::new()), None, "the I/O thread sends on the one-queue port");
        assert!(d.send(down, Bytes::new()).is_some(), "the workers send on the multi-queue ports");
        let queues = d.take_worker_queues();
        assert_eq!(queues.len(), 2);
        let (fwds, fibs) = forwarders_with(2, &[down, up, up + 1], up);
        let mut w = Workers::start(fwds, fibs, &[], Vec::new(), queues, Arc::new(|| {}), crate::workers::Clock::Since(Instant::now())).unwrap();
        let n = 300u32;
        let misqueued = spread_interests(&w, n, |q, pkt| c_faces[q].send(&pkt));
        c_faces.iter_mut().for_each(Face::flush);
        let out = run_io_with(&mut w, n as usize, |sent| gather(&mut p_faces, up, sent));
        let mut got = names(&out, up);
        got.dedup();
        assert_eq!(got.len(), n as usize, "every Interest reached the producer once");
        for i in 0..n {
            p_faces[((i + 1) % 2) as usize].send(&DataBuilder::new(seg_name(i).parse().unwrap()).build(b"x"));
        }
        p_faces.iter_mut().for_each(Face::flush);
        let out = run_io_with(&mut w, n as usize, |sent| gather(&mut c_faces, down, sent));
        let mut got = names(&out, down);
        got.dedup();
        assert_eq!(got.len(), n as usize, "every Data reached the consumer once");
        let stats = w.stats();
        for (i, s) in stats.iter().enumerate() {
            assert_eq!((s.counters.unsolicited_data, s.pit_entries), (0, 0), "worker {i}: Data met its PIT entry");
            assert!(s.direct > 0 && s.punted > 0, "worker {i} read its own queue and handed some off");
        }
        let total = ShardStats::sum(&stats);
        assert_eq!(total.counters.satisfied_interests, n as u64);
        assert!(misqueued > 0);
        assert_eq!(total.direct + total.punted, 2 * n as u64);
    }
}
