//! The daemon's DPDK faces (`--features dpdk`): EAL started from `[dpdk]`, one
//! mempool sized from the configuration, and one face per configured port, polled
//! in bursts by the forwarding loop next to the socket faces.

use std::sync::Arc;

use bytes::Bytes;
use trajan_dpdk::face::Face;
use trajan_dpdk::{Eal, EalConfig, Mempool, Port, DATA_ROOM};
use trajan_io::encap::{Link, LinkAddrs};
use trajan_io::{FaceCounters, FaceId};

use crate::config::{parse_mac, Config};
use crate::daemon::StartError;

/// Face ids of DPDK ports start here, far from the socket faces' ids (256 upward).
pub const FIRST_DPDK_FACE: FaceId = 0x4000_0000;

/// The open DPDK ports, one face each.
pub struct DpdkFaces {
    _eal: Eal,
    faces: Vec<(FaceId, String, Face)>,
    ports: Vec<Port>,
    rx: Vec<Bytes>,
}

/// Buffers for the pool when `dpdk.mbufs` is 0: every CS entry may hold one, and
/// every RX and TX descriptor of every port, plus bursts in flight.
fn pool_size(cfg: &Config) -> u32 {
    if cfg.dpdk.mbufs > 0 {
        return cfg.dpdk.mbufs;
    }
    let queues = cfg.dpdk.ports.len() * 2 * usize::from(cfg.dpdk.queue_size);
    let n = cfg.tables.cs_capacity + queues + 4096;
    // DPDK pools are most efficient at 2^k - 1 buffers.
    (n.next_power_of_two() - 1).min(u32::MAX as usize) as u32
}

impl DpdkFaces {
    /// Starts EAL and every port of `cfg.dpdk`.
    pub fn open(cfg: &Config) -> Result<DpdkFaces, StartError> {
        let err = |e: trajan_dpdk::DpdkError| StartError::Dpdk(e.to_string());
        let mbufs = pool_size(cfg);
        // Without hugepages EAL's memory must hold the pool (a 2,176-byte buffer and
        // its headers: 3 KiB with room to spare) plus EAL's and the drivers' own.
        let no_huge_mb = (mbufs as usize * 3).div_ceil(1024) + 256;
        let eal = Eal::init(&EalConfig { args: cfg.dpdk.eal_args.clone(), no_huge_mb }).map_err(err)?;
        let pool = Arc::new(Mempool::new(&eal, "trajan_pool", mbufs, DATA_ROOM).map_err(err)?);
        let (mut faces, mut ports) = (Vec::new(), Vec::new());
        for (i, p) in cfg.dpdk.ports.iter().enumerate() {
            let id = eal.port_id(&p.name).map_err(err)?;
            let port = Port::start(&eal, id, 1, cfg.dpdk.queue_size, Arc::clone(&pool)).map_err(err)?;
            let addrs = LinkAddrs {
                local_mac: port.mac(),
                remote_mac: parse_mac(&p.remote_mac).map_err(StartError::Dpdk)?,
                local_ip: p.local_ip,
                remote_ip: p.remote_ip,
                local_port: p.local_port,
                remote_port: p.remote_port,
            };
            let encap = p.encap.parse().map_err(StartError::Dpdk)?;
            let queue = port.queue(0).expect("started with one queue");
            let face = FIRST_DPDK_FACE + i as FaceId;
            tracing::info!(face, port = %p.name, encap = %p.encap, mbufs, "DPDK face up");
            faces.push((face, p.name.clone(), Face::new(queue, Link { encap, addrs })));
            ports.push(port);
        }
        Ok(DpdkFaces { _eal: eal, faces, ports, rx: Vec::with_capacity(trajan_dpdk::BURST) })
    }

    /// The face of port `name` (routes name it `dev://<name>`).
    pub fn face_of(&self, name: &str) -> Option<FaceId> {
        self.faces.iter().find(|(_, n, _)| n == name).map(|(id, _, _)| *id)
    }

    /// Every face id, for the engine.
    pub fn ids(&self) -> impl Iterator<Item = FaceId> + '_ {
        self.faces.iter().map(|(id, _, _)| *id)
    }

    /// Reads one burst from every port into `burst`; returns the frames read.
    pub fn poll(&mut self, burst: &mut Vec<(FaceId, Bytes)>) -> usize {
        let mut frames = 0;
        for (id, _, face) in &mut self.faces {
            frames += face.recv(&mut self.rx);
            burst.extend(self.rx.drain(..).map(|p| (*id, p)));
        }
        frames
    }

    /// Queues `pkt` on DPDK face `face`; gives it back when `face` is not one.
    pub fn send(&mut self, face: FaceId, pkt: Bytes) -> Option<Bytes> {
        let Some(i) = face.checked_sub(FIRST_DPDK_FACE).map(|i| i as usize).filter(|&i| i < self.faces.len()) else {
            return Some(pkt);
        };
        self.faces[i].2.send(&pkt);
        None
    }

    /// Sends what every face queued.
    pub fn flush(&mut self) {
        for (_, _, face) in &mut self.faces {
            face.flush();
        }
    }

    /// Logs every face's counters and its port's (at shutdown: what a run moved,
    /// dropped as malformed, or lost for want of buffers).
    pub fn log_counters(&self) {
        for ((id, name, f), port) in self.faces.iter().zip(&self.ports) {
            let FaceCounters { in_packets, out_packets, dropped_in, dropped_out, .. } = f.counters;
            let p = port.stats();
            tracing::info!(face = id, port = %name, in_packets, out_packets, dropped_in, dropped_out, port_missed = p.missed, port_no_mbuf = p.no_mbuf, port_out_errors = p.out_errors, "DPDK face counters");
        }
    }
}
