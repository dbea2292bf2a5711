//! Trajan's I/O shell: the sockets around the sans-I/O engine.
//!
//! An [`Io`] owns the listening sockets and every face, and runs on one thread: the
//! caller polls it for [`IoEvent`]s (faces coming and going, packets arriving),
//! feeds packets to the engine, queues the engine's output with [`Io::send`] and
//! pushes it to the kernel with [`Io::flush`]. Nothing here parses more of a packet
//! than its framing, so the engine stays the only place packets are decoded.
//!
//! With [`IoConfig::hash_ports`] the shell also opens Augustus' UDP-port-by-hash
//! face: one port per forwarding worker, each handed to its worker as a
//! [`WorkerPort`] so that packets sent to the right port skip the I/O thread.
//!
//! UDP datagrams move in batches (`recvmmsg`/`sendmmsg`), stream faces frame TLV
//! elements out of the byte stream, and every buffer and queue is bounded because
//! every peer is assumed hostile.

#![warn(missing_docs)]

pub mod dispatch_key;
mod driver;
pub mod encap;
mod error;
mod fd_limit;
mod framing;
pub mod fuzzing;
mod inbound;
mod listen;
pub mod reassembly;
mod send_queue;
mod stream;
mod udp;
mod uri;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use bytes::Bytes;
use trajan_wire::MAX_PACKET_SIZE;

pub use driver::{Io, Waker};
pub use udp::{Datagram, SocketError, WorkerPort};
pub use error::IoError;
pub use uri::{check_remote, NDN_PORT};

/// Room for NDNLPv2 headers around a maximal network-layer packet (Sequence,
/// fragmentation fields, a 32-byte PitToken, Nack, face ids, congestion mark add
/// up to about 110 bytes), so a full-size Data with link headers still fits.
pub const LP_HEADROOM: usize = 256;

/// Largest link packet (datagram or stream frame) a face accepts or sends. Anything
/// larger is dropped; a stream announcing one is closed.
pub const MAX_FRAME_SIZE: usize = MAX_PACKET_SIZE + LP_HEADROOM;

/// Bytes a face may always queue for sending, however much the other faces hold
/// against [`IoConfig::queue_bytes`] (capped at [`IoConfig::stream_queue_bytes`]):
/// a face that reads its socket seldom holds any, and this keeps it carrying
/// packets while peers that stop reading fill the shared bound. 64 KiB holds seven
/// of the largest link packets, enough to ride out a full socket buffer briefly,
/// and is small beside the kernel buffers each face already costs, so the shared
/// bound grows by little per face (see [`IoConfig::queue_bytes`]).
pub const FACE_QUEUE_RESERVE: usize = 64 << 10;

/// Bytes each packet queued for sending is charged beyond its length, against
/// [`IoConfig::stream_queue_bytes`] and [`IoConfig::queue_bytes`], so that those
/// bounds bound memory rather than packet bytes alone: 33-byte Nacks queued for
/// peers that never read cost more than twice the bytes counted. A waiting packet
/// takes a slot in its queue (32 bytes on a stream face; 72 in a UDP channel's,
/// which also names the face and the destination) and an allocation for its copy
/// (malloc's 8-byte header and rounding up to 16 bytes: at most 24 bytes beyond
/// the packet). 96 is the larger of the two sums, and on a stream face also
/// covers its slot twice (2 × 32 + 24 = 88): a queue's ring grows by doubling, so
/// it may hold up to twice as many slots as packets.
pub const QUEUED_PACKET_OVERHEAD: usize = 96;

/// Identifies a face for the engine and management. Ids below [`FIRST_FACE_ID`] are
/// reserved as in NFD (1 is the engine's internal management face).
pub type FaceId = u32;

/// First id given to a socket face.
pub const FIRST_FACE_ID: FaceId = 256;

/// How long an outgoing TCP connection ([`Io::create_face`]) may take before its
/// face is given up ([`IoEvent::ConnectFailed`]): long enough for a SYN lost once
/// (resent after 1 s), short enough that management can still answer
/// `faces/create` within the 4-second lifetime of the tools' commands.
pub const TCP_CONNECT_TIMEOUT: Duration = Duration::from_secs(3);

/// The transport under a face, as management reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FaceKind {
    /// A peer of a UDP channel (or of the UDP-port-by-hash face), one face per remote address.
    Udp,
    /// A TCP connection, accepted by a listener or dialed for management.
    Tcp,
    /// A local application's connection to the Unix stream socket.
    Unix,
    /// A kernel-bypass port (DPDK) that the daemon opened and polls itself; listed
    /// here for management only.
    Device,
    /// The forwarder's own face, which management answers on (`internal://`,
    /// face 1, as in NFD); listed for management only.
    Internal,
}

/// How long a face lives, with NFD's meaning: on-demand faces close when idle or
/// when the peer goes away, persistent ones only on error, permanent ones never by
/// themselves. Ordered so that a request can only upgrade a face.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Persistency {
    /// Closes when idle or when the peer goes away; what faces that peers open get.
    OnDemand,
    /// Closes only on an error (the link failing), never for being idle.
    Persistent,
    /// Never closes by itself: a dialed TCP face redials when its connection fails.
    Permanent,
}

impl Persistency {
    /// NFD's FacePersistency code (ndn-cxx nfd-constants.hpp: persistent 0,
    /// on-demand 1, permanent 2), for management responses.
    pub fn code(self) -> u64 {
        match self {
            Persistency::Persistent => 0,
            Persistency::OnDemand => 1,
            Persistency::Permanent => 2,
        }
    }

    /// Reads NFD's FacePersistency code from a management command.
    pub fn from_code(code: u64) -> Option<Self> {
        match code {
            0 => Some(Persistency::Persistent),
            1 => Some(Persistency::OnDemand),
            2 => Some(Persistency::Permanent),
            _ => None,
        }
    }
}

/// What management and the engine know about a face.
#[derive(Clone, Debug)]
pub struct FaceInfo {
    /// The id the engine, the FIB's next hops and management refer to the face by.
    pub id: FaceId,
    /// The transport, for management's face listing and URI scheme.
    pub kind: FaceKind,
    /// NFD form: `udp4://127.0.0.1:56363`, `tcp4://127.0.0.1:40000`, `fd://12` for a
    /// Unix stream peer (the accepted socket's descriptor, as NFD prints it).
    pub remote_uri: String,
    /// `udp4://0.0.0.0:6363`, `tcp4://127.0.0.1:6363`, `unix:///run/nfd/nfd.sock`.
    pub local_uri: String,
    /// Unix sockets and loopback peers (127.0.0.0/8, ::1) may send `/localhost`
    /// commands; nobody else may.
    pub local_scope: bool,
    /// When the face may close; management requests can only upgrade it.
    pub persistency: Persistency,
    /// Largest packet the face carries, where the transport limits it (UDP).
    pub mtu: Option<usize>,
}

/// Link-level counters of one face (NFD's transport counters).
#[derive(Clone, Debug, Default)]
pub struct FaceCounters {
    /// Link packets received (datagrams or stream frames, fragments included).
    pub in_packets: u64,
    /// Link packets sent (datagrams or stream frames, fragments included).
    pub out_packets: u64,
    /// Bytes of the link packets received, as they were on the wire.
    pub in_bytes: u64,
    /// Bytes of the link packets sent.
    pub out_bytes: u64,
    /// Received packets dropped: malformed framing, oversize, bad fragments.
    pub dropped_in: u64,
    /// Packets not sent: queue full, oversize, or refused by the kernel.
    pub dropped_out: u64,
}

/// Shell-wide counters for what cannot be charged to a face.
#[derive(Clone, Debug, Default)]
pub struct IoStats {
    /// Datagrams from addresses with no face that are not one whole Interest, Data
    /// or LpPacket (malformed, or another TLV type); no face is created for them.
    pub unknown_peer_drops: u64,
    /// Stream faces closed because their byte stream was not valid TLV.
    pub corrupt_streams: u64,
    /// Datagrams from new UDP peers and TCP connections refused because the
    /// router held [`IoConfig::max_faces`] faces, none of which could give way
    /// ([`IoConfig::evict_idle`]).
    pub face_limit_drops: u64,
    /// Faces closed to make room for a new peer when the router held
    /// [`IoConfig::max_faces`] faces: each the on-demand face a network peer
    /// opened that had received nothing for longest, at least
    /// [`IoConfig::evict_idle`]; or, the same way, the idle TCP face of a
    /// network peer closed when a connection could not be accepted (or dialed)
    /// for want of a descriptor. Counted apart from faces that time out, since
    /// many of them mean the limit is too low or peers are holding faces open.
    pub idle_evictions: u64,
    /// Stream faces closed (or, when permanent, sent to redial) because their
    /// peer took none of their queued output for [`IoConfig::stall_timeout`]:
    /// a peer that stops reading would otherwise hold its queue, and its share
    /// of [`IoConfig::queue_bytes`], for ever.
    pub stalled_streams: u64,
    /// UDP faces closed because a datagram sent to their peer met an ICMP port
    /// unreachable: nothing listens there any more (a killed producer), and
    /// its routes would otherwise keep drawing Interests until the face idled
    /// out. On-demand and persistent faces close, with [`IoEvent::FaceDown`],
    /// as NFD's unicast UDP faces fail on a socket error.
    pub unreachable_closes: u64,
    /// ICMP port unreachables for the peers of permanent UDP faces, which stay
    /// open as NFD's do: a permanent face is meant to outlive its peer's restarts.
    pub unreachable_kept: u64,
    /// Entries of the UDP channels' error queues that close no face: other ICMP
    /// errors (a host or network unreachable may pass), errors of this host's
    /// own, errors for an address with no face, and entries that cannot be read.
    pub udp_errors_ignored: u64,
}

/// What [`Io::poll`] reports.
#[derive(Debug)]
pub enum IoEvent {
    /// A peer appeared (UDP datagram from a new address, accepted connection).
    /// Faces made by [`Io::create_face`] are returned there instead.
    FaceUp(FaceInfo),
    /// A face closed by itself (idle, EOF, error, a UDP peer's port
    /// unreachable, corrupt stream). Faces removed by [`Io::destroy_face`]
    /// report nothing, and a permanent TCP face this side dialed does not
    /// close: it redials.
    FaceDown(FaceId),
    /// A TCP connection [`Io::create_face`] started (or a permanent face's
    /// redial) is established: the face carries packets from now on. Comes
    /// before any of its packets.
    Connected(FaceId),
    /// A TCP connection [`Io::create_face`] started (or a permanent face's
    /// redial) failed (`reason`), or was not established within
    /// [`TCP_CONNECT_TIMEOUT`]. The face is gone, and no `FaceDown` follows,
    /// unless it is permanent: then it redials after a wait, dropping what is
    /// sent to it meanwhile, as NFD's permanent TCP faces do.
    ConnectFailed {
        /// The face that was dialing.
        face: FaceId,
        /// What went wrong (the operating system's error or the timeout), for the log
        /// and management's reply.
        reason: String,
    },
    /// A whole network-layer packet (possibly inside an LpPacket), as received or
    /// as reassembled from fragments.
    Packet {
        /// The face it arrived on, which the engine needs as the incoming face.
        face: FaceId,
        /// The packet's bytes, framing removed, for the engine to decode.
        pkt: Bytes,
    },
    /// A one-port peer of the UDP-port-by-hash face was last heard on another of
    /// the face's ports than before (`port`, counted from the first), so replies
    /// must now leave from there: a peer unaware of port-by-hash hears only the
    /// port it sends to, and a new socket that the kernel gave a departed peer's
    /// address is that peer's face here. Comes before the datagram's packet.
    PeerMoved {
        /// The peer's face.
        face: FaceId,
        /// The index of the port the peer now sends to, counted from the first.
        port: usize,
    },
}

/// Augustus' UDP-port-by-hash face (§3.1.2): `count` consecutive ports from
/// `base`, one per forwarding worker. A cooperating sender sends each packet to
/// `base + owner(name key, count)` ([`HashPorts::addr_for`]), the port of the worker
/// that owns the name, so the packet needs no hand-off between threads. All ports
/// are one UDP channel for face purposes: a peer has one face whichever port it
/// sends to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HashPorts {
    /// The first port (port 0: the kernel picks it, and the others follow it).
    pub base: SocketAddr,
    /// How many ports: the number of workers.
    pub count: usize,
}

impl HashPorts {
    /// Where a sender sends `pkt` (a bare packet or an LpPacket): the port of the
    /// worker owning its name; nameless packets go to the first port.
    pub fn addr_for(&self, pkt: &[u8]) -> SocketAddr {
        if self.count <= 1 {
            return self.base;
        }
        let index = dispatch_key::owner(dispatch_key::name_key(pkt), self.count.max(1));
        self.nth(index)
    }

    /// The address of port `index` (`index < count`).
    pub fn nth(&self, index: usize) -> SocketAddr {
        let mut a = self.base;
        a.set_port(self.base.port().saturating_add(index.min(u16::MAX as usize) as u16));
        a
    }

    /// Every address of the face, in port order.
    pub fn addrs(&self) -> impl Iterator<Item = SocketAddr> + '_ {
        (0..self.count).map(|k| self.nth(k))
    }

    /// Whether `from` is one of these ports (a client accepts replies only from them).
    pub fn contains(&self, from: SocketAddr) -> bool {
        let first = self.base.port() as usize;
        from.ip() == self.base.ip() && (first..first + self.count).contains(&(from.port() as usize))
    }
}

/// Where to listen and how much to buffer.
#[derive(Clone, Debug)]
pub struct IoConfig {
    /// UDP channels; each also sends for the UDP faces of its address family.
    pub udp_listen: Vec<SocketAddr>,
    /// TCP listeners; each accepted connection becomes an on-demand face.
    pub tcp_listen: Vec<SocketAddr>,
    /// Local applications' socket; its directory is created if missing.
    pub unix_path: Option<PathBuf>,
    /// On-demand UDP faces close after receiving nothing for this long.
    pub udp_idle_timeout: Duration,
    /// Per-face bound on bytes queued for sending; packets beyond it are dropped
    /// and counted, so one slow peer cannot take the router's memory. Each
    /// packet counts its length plus [`QUEUED_PACKET_OVERHEAD`], what its slot
    /// and its copy's allocation cost while it waits, so the bound holds for
    /// memory however small the packets; below [`MAX_FRAME_SIZE`] +
    /// [`QUEUED_PACKET_OVERHEAD`] the largest packets would all be dropped.
    pub stream_queue_bytes: usize,
    /// Bound on bytes queued for sending on all faces together, each packet
    /// counted as for [`stream_queue_bytes`](Self::stream_queue_bytes) (its
    /// length plus [`QUEUED_PACKET_OVERHEAD`]): many peers that
    /// stop reading would otherwise each hold `stream_queue_bytes`. Packets
    /// beyond it are dropped and counted on their face like a full queue,
    /// except that a face holding less than [`FACE_QUEUE_RESERVE`] (or
    /// `stream_queue_bytes`, if smaller) may always queue up to that much: so
    /// peers that hold much cannot starve a face that holds little, and the
    /// bytes queued on all faces together stay at most `queue_bytes` + the
    /// number of open faces × that reserve (256 MiB + 16,384 × 64 KiB = 1.25 GiB
    /// with the defaults). Open faces are [`max_faces`](Self::max_faces) network
    /// peers at most, plus local applications' and management's faces; a stream
    /// face also costs kernel socket buffers larger than the reserve, and one
    /// that stops reading is closed after [`stall_timeout`](Self::stall_timeout).
    pub queue_bytes: usize,
    /// A stream face whose queued output the socket has taken none of for this
    /// long (the peer reads nothing, and its receive window stays closed) is
    /// closed and counted ([`IoStats::stalled_streams`]), with
    /// [`IoEvent::FaceDown`]; a permanent face this side dialed redials instead,
    /// as after any other failure. Without it a peer that never reads holds its
    /// queue for ever, and enough of them hold [`queue_bytes`](Self::queue_bytes).
    /// 30 s by default: several times the 4 s an Interest lives by default, so
    /// what waits that long is of no use to anyone, and long enough that a
    /// consumer pausing (a collector, a full disk, a saturated link) keeps its face.
    pub stall_timeout: Duration,
    /// Most packets read from one ready socket per [`Io::poll`], so one busy peer
    /// cannot starve the others.
    pub burst: usize,
    /// Most faces at once for peers on the network to open: beyond it a datagram
    /// from a new UDP peer, or a new TCP connection, is dropped and counted
    /// ([`IoStats::face_limit_drops`]), since every such face costs memory and a
    /// sender can forge any number of source addresses, unless an idle face
    /// gives way to it ([`evict_idle`](Self::evict_idle)). Faces of local
    /// applications (the Unix socket) and faces management creates are always
    /// admitted; they count toward the limit all the same. Each TCP face costs
    /// a descriptor, so [`Io::new`] raises the process's soft limit on open
    /// descriptors to its hard limit and lowers this one, with a warning, to fit
    /// below that less a reserve ([`Io::max_faces`]): idle connections then meet
    /// this limit before the descriptors run out, rather than lock out new peers
    /// and local applications.
    pub max_faces: usize,
    /// When the table holds [`max_faces`](Self::max_faces) faces, a new network
    /// peer takes the place of the on-demand face a network peer opened (UDP or
    /// TCP) that has received no Interest, Data or LpPacket for longest, if
    /// that is at least this long; the face closes with [`IoEvent::FaceDown`]
    /// and is counted ([`IoStats::idle_evictions`]). Without it, TCP faces
    /// (which never time out) or forged UDP sources kept alive would lock every
    /// new peer out for good. An idle face has nothing of its own pending once
    /// this is longer than Interests live, while a busy one does: 60 s by
    /// default, well past the 4 s an Interest lives by default. Faces that
    /// management made or raised above on-demand, local applications' faces,
    /// and faces a route goes through ([`Io::set_routed`]: a producer waits
    /// in silence while nobody asks) never give way. An idle TCP face of a
    /// network peer also gives way, the same way, when the process has no
    /// descriptor left for a connection to the listeners or a dial.
    pub evict_idle: Duration,
    /// Bytes all faces together may hold in packets being reassembled from
    /// NDNLPv2 fragments; a fragment beyond it drops its packet (counted on its face).
    pub reassembly_bytes: usize,
    /// The UDP-port-by-hash face, if any. Until [`Io::worker_ports`] hands its
    /// sockets to the workers, the I/O thread reads them like any UDP listener.
    pub hash_ports: Option<HashPorts>,
}

impl Default for IoConfig {
    /// NFD's endpoints: port 6363 on all IPv4 addresses and `/run/nfd/nfd.sock`.
    /// IPv6 is left to configuration because binding `[::]` fails on hosts without it.
    fn default() -> Self {
        let any = SocketAddr::from(([0, 0, 0, 0], NDN_PORT));
        IoConfig {
            udp_listen: vec![any],
            tcp_listen: vec![any],
            unix_path: Some(PathBuf::from("/run/nfd/nfd.sock")),
            udp_idle_timeout: Duration::from_secs(600),
            stream_queue_bytes: 1 << 20,
            queue_bytes: 256 << 20,
            stall_timeout: Duration::from_secs(30),
            burst: 64,
            max_faces: 16_384,
            evict_idle: Duration::from_secs(60),
            reassembly_bytes: 16 << 20,
            hash_ports: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Persistency;

    #[test]
    fn persistency_codes_match_nfd() {
        assert_eq!(Persistency::Persistent.code(), 0);
        assert_eq!(Persistency::OnDemand.code(), 1);
        assert_eq!(Persistency::Permanent.code(), 2);
        for p in [Persistency::OnDemand, Persistency::Persistent, Persistency::Permanent] {
            assert_eq!(Persistency::from_code(p.code()), Some(p));
        }
        assert_eq!(Persistency::from_code(255), None);
        assert!(Persistency::OnDemand < Persistency::Persistent && Persistency::Persistent < Persistency::Permanent);
    }
}
