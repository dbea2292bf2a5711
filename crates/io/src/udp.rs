//! A UDP channel: one listening socket shared by every UDP face of its address
//! family, read with `recvmmsg` and written with `sendmmsg` so that a burst of
//! datagrams costs one system call rather than one each. A [`WorkerPort`] is the
//! same channel code on a port of the UDP-port-by-hash face, driven by its worker.

use std::io::{self, IoSlice, IoSliceMut};
use std::net::SocketAddr;
use std::os::fd::AsRawFd;

use bytes::Bytes;
use nix::errno::Errno;
use nix::sys::socket::{recvmmsg, sendmmsg, MsgFlags, MultiHeaders, SockaddrStorage};


use crate::inbound::{is_fragment, is_one_network_packet};
use crate::send_queue::{SendQueue, Waiting};
use crate::{FaceId, MAX_FRAME_SIZE};

/// Receive slot per datagram: one byte more than the largest accepted, so an
/// oversized datagram is seen as such instead of silently cut to size.
const SLOT: usize = MAX_FRAME_SIZE + 1;

/// One received datagram.
#[derive(Debug)]
pub struct Datagram {
    /// The sender's address, which picks (or creates) the datagram's face.
    pub from: SocketAddr,
    /// The payload, or `None` when it was larger than [`MAX_FRAME_SIZE`].
    pub data: Option<Bytes>,
    /// Bytes the datagram had on the wire (for the face's byte counter).
    pub len: usize,
}

impl Datagram {
    /// The packet, when the I/O thread would pass it to the engine unchanged:
    /// exactly one TLV element, an Interest, Data or LpPacket, and not an NDNLPv2
    /// fragment. Anything else — oversized, malformed, another TLV type (which
    /// must not count as the face's activity), a fragment to reassemble — is the
    /// I/O thread's to count or reassemble ([`crate::Io::hash_datagram`]), so a
    /// worker that reads its own port forwards only what this returns.
    pub fn plain(&self) -> Option<&Bytes> {
        self.data.as_ref().filter(|b| is_one_network_packet(b) && !is_fragment(b))
    }
}

/// A datagram waiting for the next `sendmmsg`.
pub(crate) struct Outgoing {
    pub face: FaceId,
    pub to: SocketAddr,
    pub pkt: Bytes,
}

impl Waiting for Outgoing {
    fn packet_mut(&mut self) -> &mut Bytes {
        &mut self.pkt
    }
}

/// Result of one `sendmmsg`.
pub(crate) enum SendResult {
    /// This many datagrams from the front of the queue were handed to the kernel.
    Sent(usize),
    /// The socket buffer is full; wait for writability.
    Blocked,
    /// The kernel refused the first datagram (e.g. no route); it should be dropped.
    Refused(io::Error),
}

pub(crate) struct UdpChannel {
    pub sock: mio::net::UdpSocket,
    pub local: SocketAddr,
    pub tx: SendQueue<Outgoing>,
    /// Writable interest is registered because the kernel buffer was full.
    pub blocked: bool,
    /// A worker reads this socket (a port of the hash face); the I/O thread only
    /// sends on it, so it registers no readable interest.
    pub worker_owned: bool,
    /// Registered with the I/O thread's poller ([`UdpChannel::watch`]).
    registered: bool,
    rx_buf: Box<[u8]>,
}

impl UdpChannel {
    /// Wraps a bound socket; `burst` datagrams are read per call.
    pub(crate) fn new(sock: mio::net::UdpSocket, burst: usize) -> io::Result<Self> {
        let local = sock.local_addr()?;
        Ok(UdpChannel {
            sock,
            local,
            tx: SendQueue::default(),
            blocked: false,
            worker_owned: false,
            registered: false,
            rx_buf: vec![0; burst.max(1) * SLOT].into_boxed_slice(),
        })
    }

    /// Has the I/O thread's poller watch what it must on this socket: input
    /// unless a worker reads it, and room for output while a send is blocked.
    /// A worker's port with no send blocked is not watched at all (mio has no
    /// empty interest, so it is deregistered): the worker sends on the same
    /// socket, and every datagram it sends would otherwise wake the I/O thread
    /// as the kernel frees the room it took.
    pub(crate) fn watch(&mut self, registry: &mio::Registry, token: mio::Token) -> io::Result<()> {
        let wanted = match (self.worker_owned, self.blocked) {
            (false, false) => Some(mio::Interest::READABLE),
            (false, true) => Some(mio::Interest::READABLE | mio::Interest::WRITABLE),
            (true, true) => Some(mio::Interest::WRITABLE),
            (true, false) => None,
        };
        match (wanted, self.registered) {
            (Some(interest), true) => registry.reregister(&mut self.sock, token, interest)?,
            (Some(interest), false) => registry.register(&mut self.sock, token, interest)?,
            (None, true) => registry.deregister(&mut self.sock)?,
            (None, false) => {}
        }
        self.registered = wanted.is_some();
        Ok(())
    }

    /// Reads up to one burst with a single `recvmmsg`, copying each datagram out so
    /// a stored packet never pins the receive buffer. Returns whether the socket may
    /// hold more (the burst was filled).
    pub(crate) fn recv_batch(&mut self, out: &mut Vec<Datagram>) -> io::Result<bool> {
        let slots = self.rx_buf.len() / SLOT;
        let mut iovs: Vec<[IoSliceMut<'_>; 1]> = self.rx_buf.chunks_exact_mut(SLOT).map(|c| [IoSliceMut::new(c)]).collect();
        let mut headers = MultiHeaders::<SockaddrStorage>::preallocate(slots, None);
        // MSG_TRUNC: a datagram longer than its slot reports its real length, so
        // its face counts the bytes the peer sent; it is still flagged and dropped.
        let flags = MsgFlags::MSG_DONTWAIT | MsgFlags::MSG_TRUNC;
        let results = match recvmmsg(self.sock.as_raw_fd(), &mut headers, iovs.iter_mut(), flags, None) {
            Ok(r) => r,
            Err(Errno::EAGAIN) => return Ok(false),
            Err(e) => return Err(e.into()),
        };
        let mut n = 0;
        for msg in results {
            n += 1;
            let Some(from) = msg.address.as_ref().and_then(to_std) else { continue };
            let truncated = msg.flags.contains(MsgFlags::MSG_TRUNC) || msg.bytes > MAX_FRAME_SIZE;
            let data = if truncated { None } else { msg.iovs().next().map(Bytes::copy_from_slice).or(Some(Bytes::new())) };
            out.push(Datagram { from, data, len: msg.bytes });
        }
        Ok(n == slots)
    }

    /// Sends up to `max` queued datagrams with one `sendmmsg`. Does not pop them:
    /// the caller does, so it can account each to its face.
    pub(crate) fn send_batch(&self, max: usize) -> SendResult {
        let n = self.tx.len().min(max);
        if n == 0 {
            return SendResult::Sent(0);
        }
        let iovs: Vec<[IoSlice<'_>; 1]> = self.tx.iter().take(n).map(|o| [IoSlice::new(&o.pkt)]).collect();
        let addrs: Vec<Option<SockaddrStorage>> = self.tx.iter().take(n).map(|o| Some(SockaddrStorage::from(o.to))).collect();
        let mut headers = MultiHeaders::<SockaddrStorage>::preallocate(n, None);
        match sendmmsg(self.sock.as_raw_fd(), &mut headers, &iovs, &addrs, [], MsgFlags::MSG_DONTWAIT | MsgFlags::MSG_NOSIGNAL) {
            Ok(results) => SendResult::Sent(results.count()),
            Err(Errno::EAGAIN) => SendResult::Blocked,
            Err(e) => SendResult::Refused(e.into()),
        }
    }
}

/// One port of the UDP-port-by-hash face ([`crate::HashPorts`]), owned by the
/// worker it is named for: the worker reads it and sends its own replies on it, so
/// an exchange sent to the right port never passes through the I/O thread. The
/// I/O thread keeps a duplicate of the socket for what it sends itself.
pub struct WorkerPort {
    chan: UdpChannel,
}

impl WorkerPort {
    pub(crate) fn new(chan: UdpChannel) -> WorkerPort {
        WorkerPort { chan }
    }

    /// The address this port is bound to.
    pub fn local_addr(&self) -> SocketAddr {
        self.chan.local
    }

    /// Watches the port for input on the worker's own poller.
    pub fn register(&mut self, registry: &mio::Registry, token: mio::Token) -> io::Result<()> {
        registry.register(&mut self.chan.sock, token, mio::Interest::READABLE)
    }

    /// Reads up to one burst into `out`; true when the burst was filled (more may
    /// wait). A receive error is logged and reads as nothing.
    pub fn recv(&mut self, out: &mut Vec<Datagram>) -> bool {
        self.chan.recv_batch(out).unwrap_or_else(|e| {
            tracing::warn!(error = %e, local = %self.chan.local, "UDP receive failed");
            false
        })
    }

    /// Queues `pkt` for `to` (on behalf of `face`) until the next [`flush`](Self::flush).
    pub fn queue(&mut self, face: FaceId, to: SocketAddr, pkt: Bytes) {
        self.chan.tx.push_back(Outgoing { face, to, pkt }, false);
    }

    /// Sends what is queued; `done(face, bytes, sent)` is told the fate of each
    /// packet. A full socket buffer drops the rest (a worker never waits), as a
    /// full NIC queue would.
    pub fn flush(&mut self, mut done: impl FnMut(FaceId, usize, bool)) {
        while !self.chan.tx.is_empty() {
            let (sent, failed) = match self.chan.send_batch(64) {
                SendResult::Sent(0) => (0, self.chan.tx.len()),
                SendResult::Sent(n) => (n, 0),
                SendResult::Blocked => (0, self.chan.tx.len()),
                SendResult::Refused(_) => (0, 1),
            };
            for (i, o) in self.chan.tx.drain_front(sent + failed).enumerate() {
                done(o.face, o.pkt.len(), i < sent);
            }
        }
    }
}

fn to_std(addr: &SockaddrStorage) -> Option<SocketAddr> {
    if let Some(v4) = addr.as_sockaddr_in() {
        Some(SocketAddr::V4((*v4).into()))
    } else {
        addr.as_sockaddr_in6().map(|v6| SocketAddr::V6((*v6).into()))
    }
}
