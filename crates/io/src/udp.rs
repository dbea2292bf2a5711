//! A UDP channel: one listening socket shared by every UDP face of its address
//! family, read with `recvmmsg` and written with `sendmmsg` so that a burst of
//! datagrams costs one system call rather than one each. A [`WorkerPort`] is the
//! same channel code on a port of the UDP-port-by-hash face, driven by its worker.
//!
//! Every channel also learns, from its socket's error queue (IP_RECVERR),
//! which peers' ports turned out closed: with one unconnected socket for every
//! face, an ICMP port unreachable reaches the channel only there, and only the
//! queue says which destination it was for. The I/O thread reads the queue of
//! the sockets it reads; a worker reads its port's, and hands what it finds to
//! the I/O thread, which owns the faces ([`crate::Io::hash_errors`]).

use std::io::{self, IoSlice, IoSliceMut};
use std::mem;
use std::net::SocketAddr;
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

use bytes::Bytes;
use nix::errno::Errno;
use nix::libc;
use nix::sys::socket::{recvmmsg, recvmsg, sendmmsg, ControlMessageOwned, MsgFlags, MultiHeaders, SockaddrStorage};

use crate::inbound::{is_fragment, is_one_network_packet};
use crate::send_queue::{SendQueue, Waiting};
use crate::{FaceId, MAX_FRAME_SIZE};

/// Receive slot per datagram: one byte more than the largest accepted, so an
/// oversized datagram is seen as such instead of silently cut to size.
const SLOT: usize = MAX_FRAME_SIZE + 1;

/// Most entries of a socket's error queue read in one go: a flood of ICMP
/// errors (forged ones included) then costs each poll a bounded amount of
/// work, like a burst of datagrams, and the rest waits for the next poll.
const ERROR_BATCH: usize = 64;

/// How often a receive failure that keeps repeating on a channel is logged as
/// a warning again ([`Repeated`]).
const WARN_EVERY: Duration = Duration::from_secs(60);

/// ICMP's destination unreachable and its port unreachable code (RFC 792).
const ICMP_DEST_UNREACH: u8 = 3;
const ICMP_PORT_UNREACH: u8 = 3;
/// ICMPv6's destination unreachable and its port unreachable code (RFC 4443).
const ICMPV6_DEST_UNREACH: u8 = 1;
const ICMPV6_PORT_UNREACH: u8 = 4;

/// What one entry of a UDP socket's error queue reports. Public because a
/// worker reads its port's queue ([`WorkerPort::errors`]) and hands the
/// entries to the I/O thread ([`crate::Io::hash_errors`]), which owns the faces
/// they may close.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SocketError {
    /// An ICMP or ICMPv6 port unreachable for a datagram sent to this address:
    /// nothing listens there any more.
    PortUnreachable(SocketAddr),
    /// Anything else: another ICMP error (a host or network unreachable may
    /// pass), a local error, or an entry that cannot be read.
    Other,
}

impl SocketError {
    /// Reads an entry from its extended error and the destination the kernel
    /// gave with it; only an ICMP or ICMPv6 port unreachable with a destination
    /// of the matching family is one.
    fn from_entry(ee: &libc::sock_extended_err, to: Option<SocketAddr>) -> SocketError {
        let port_unreachable = match (ee.ee_origin, to) {
            (libc::SO_EE_ORIGIN_ICMP, Some(SocketAddr::V4(_))) => (ee.ee_type, ee.ee_code) == (ICMP_DEST_UNREACH, ICMP_PORT_UNREACH),
            (libc::SO_EE_ORIGIN_ICMP6, Some(SocketAddr::V6(_))) => (ee.ee_type, ee.ee_code) == (ICMPV6_DEST_UNREACH, ICMPV6_PORT_UNREACH),
            _ => false,
        };
        match to {
            Some(to) if port_unreachable => SocketError::PortUnreachable(to),
            _ => SocketError::Other,
        }
    }
}

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
    /// The face it is sent for, whose counters (or drops) the send's outcome
    /// goes to: one channel carries every UDP face on its local address.
    pub face: FaceId,
    /// The peer's address, the datagram's destination.
    pub to: SocketAddr,
    /// The encoded packet, shared with whatever else holds it (no copy per face).
    pub pkt: Bytes,
}

impl Waiting for Outgoing {
    fn packet_mut(&mut self) -> &mut Bytes {
        &mut self.pkt
    }
}

/// A failure that others may repeat as often as they like: two receives
/// failing in a row, which a flood of forged ICMP errors aimed at a listener
/// can cause on every poll. As for a listener whose `accept` keeps failing,
/// the first is a warning and the rest debug messages, counted; and, since the
/// cause may change, a warning again at most every [`WARN_EVERY`], with how
/// many there were since the last, so the log neither fills nor goes silent.
#[derive(Debug, Default)]
pub(crate) struct Repeated {
    /// When the last warning was logged.
    warned_at: Option<Instant>,
    /// Failures since the last warning that were not warned of.
    suppressed: u64,
}

impl Repeated {
    /// Notes one failure at `now`: `Some(n)` if it is to be logged as a
    /// warning, `n` the failures since the last warning that were not.
    pub(crate) fn note(&mut self, now: Instant) -> Option<u64> {
        match self.warned_at {
            Some(at) if now.saturating_duration_since(at) < WARN_EVERY => {
                self.suppressed += 1;
                None
            }
            _ => {
                self.warned_at = Some(now);
                Some(mem::take(&mut self.suppressed))
            }
        }
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

/// One bound UDP socket and what waits to be sent on it: every UDP face on the
/// socket's local address shares it (a face is a peer address, not a socket).
pub(crate) struct UdpChannel {
    /// The socket; the I/O thread duplicates a hash port's for its worker.
    pub sock: mio::net::UdpSocket,
    /// The bound address, read once: it names the faces' local URI and picks
    /// the channel of the right address family for a new face.
    pub local: SocketAddr,
    /// Datagrams for the next `sendmmsg`, kept while the socket buffer is full.
    pub tx: SendQueue<Outgoing>,
    /// Writable interest is registered because the kernel buffer was full.
    pub blocked: bool,
    /// A worker reads this socket (a port of the hash face); the I/O thread only
    /// sends on it, so it registers no readable interest.
    pub worker_owned: bool,
    /// Registered with the I/O thread's poller ([`UdpChannel::watch`]).
    registered: bool,
    /// The socket reported an error (EPOLLERR, or a read or send that
    /// failed), so its error queue is to be read ([`UdpChannel::read_errors`]);
    /// steady traffic costs no look at the queue.
    pub errors_pending: bool,
    /// Receives that failed twice in a row, logged sparingly.
    recv_failures: Repeated,
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
            errors_pending: false,
            recv_failures: Repeated::default(),
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

    /// [`recv_batch`](Self::recv_batch), for the I/O thread and the workers
    /// alike: a failed read is most likely the error an ICMP message left on
    /// the socket (IP_RECVERR), which the read took in place of the datagrams
    /// waiting behind it, so the queue is marked for reading and the datagrams
    /// are read at once (no new readiness would be reported for them). Any
    /// other failure reads as nothing, and is logged as a [`Repeated`]
    /// failure: the second read may meet the next ICMP error, and forged ones
    /// can keep coming. Returns whether more may wait.
    pub(crate) fn recv_burst(&mut self, out: &mut Vec<Datagram>) -> bool {
        self.recv_burst_at(out, Instant::now)
    }

    /// [`recv_burst`](Self::recv_burst), with the clock read only when both
    /// reads failed (the tests give it theirs).
    fn recv_burst_at(&mut self, out: &mut Vec<Datagram>, now: impl FnOnce() -> Instant) -> bool {
        if let Ok(more) = self.recv_batch(out) {
            return more;
        }
        self.errors_pending = true;
        self.recv_batch(out).unwrap_or_else(|e| {
            match self.recv_failures.note(now()) {
                Some(suppressed) => tracing::warn!(error = %e, local = %self.local, suppressed, every = ?WARN_EVERY, "UDP receive failed"),
                None => tracing::debug!(error = %e, local = %self.local, "UDP receive failed again"),
            }
            false
        })
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

    /// Reads up to [`ERROR_BATCH`] entries of the error queue into `out` if
    /// the socket reported an error since the queue was last read dry; returns
    /// whether more may wait (and stays marked for the next call). With no
    /// error reported it costs nothing, so every receive may call it.
    pub(crate) fn read_errors(&mut self, out: &mut Vec<SocketError>) -> bool {
        if !self.errors_pending {
            return false;
        }
        self.errors_pending = self.recv_errors(out);
        self.errors_pending
    }

    /// Reads up to [`ERROR_BATCH`] entries of the socket's error queue into
    /// `out`; returns whether more may wait. Each read also clears the error
    /// the entry left on the socket, which would otherwise fail the next
    /// receive or send in place of its datagram.
    fn recv_errors(&self, out: &mut Vec<SocketError>) -> bool {
        let mut cmsg = nix::cmsg_space!(libc::sock_extended_err, libc::sockaddr_in6);
        for _ in 0..ERROR_BATCH {
            let mut iov: [IoSliceMut<'_>; 0] = [];
            // The offending datagram's payload is not wanted: with no room for
            // it the kernel only flags it cut short.
            let msg = match recvmsg::<SockaddrStorage>(self.sock.as_raw_fd(), &mut iov, Some(&mut cmsg), MsgFlags::MSG_ERRQUEUE | MsgFlags::MSG_DONTWAIT) {
                Ok(msg) => msg,
                Err(Errno::EAGAIN) => return false,
                Err(e) => {
                    tracing::warn!(error = %e, local = %self.local, "UDP error queue read failed");
                    return false;
                }
            };
            let to = msg.address.as_ref().and_then(to_std);
            let ee = msg.cmsgs().ok().and_then(|mut cmsgs| {
                cmsgs.find_map(|c| match c {
                    ControlMessageOwned::Ipv4RecvErr(ee, _) | ControlMessageOwned::Ipv6RecvErr(ee, _) => Some(ee),
                    _ => None,
                })
            });
            out.push(ee.map_or(SocketError::Other, |ee| SocketError::from_entry(&ee, to)));
        }
        true
    }

    /// Sends up to `max` queued datagrams with one `sendmmsg`. Does not pop them:
    /// the caller does, so it can account each to its face.
    ///
    /// A refusal may be the error an ICMP message for an earlier datagram left
    /// on the socket (IP_RECVERR), which the kernel reports on this send and
    /// clears, having sent nothing: the error queue is marked for reading, and
    /// the datagrams get one more try before the first is reported refused
    /// itself.
    pub(crate) fn send_batch(&mut self, max: usize) -> SendResult {
        let n = self.tx.len().min(max);
        if n == 0 {
            return SendResult::Sent(0);
        }
        let iovs: Vec<[IoSlice<'_>; 1]> = self.tx.iter().take(n).map(|o| [IoSlice::new(&o.pkt)]).collect();
        let addrs: Vec<Option<SockaddrStorage>> = self.tx.iter().take(n).map(|o| Some(SockaddrStorage::from(o.to))).collect();
        let mut headers = MultiHeaders::<SockaddrStorage>::preallocate(n, None);
        let mut send = || sendmmsg(self.sock.as_raw_fd(), &mut headers, &iovs, &addrs, [], MsgFlags::MSG_DONTWAIT | MsgFlags::MSG_NOSIGNAL).map(|r| r.count());
        let result = match send() {
            Err(e) if e != Errno::EAGAIN => {
                self.errors_pending = true;
                send()
            }
            first => first,
        };
        match result {
            Ok(sent) => SendResult::Sent(sent),
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
    /// Hands `chan`, a duplicate of a hash port's socket, to a worker.
    pub(crate) fn new(chan: UdpChannel) -> WorkerPort {
        WorkerPort { chan }
    }

    /// The address this port is bound to.
    pub fn local_addr(&self) -> SocketAddr {
        self.chan.local
    }

    /// Watches the port for input on the worker's own poller, which also
    /// reports the socket's errors (`mio::event::Event::is_error`): pass that
    /// to [`errors`](Self::errors).
    pub fn register(&mut self, registry: &mio::Registry, token: mio::Token) -> io::Result<()> {
        registry.register(&mut self.chan.sock, token, mio::Interest::READABLE)
    }

    /// Reads up to one burst into `out`; true when the burst was filled (more may
    /// wait). A receive error is logged and reads as nothing, unless it was an
    /// ICMP error's, which marks the error queue for [`errors`](Self::errors).
    pub fn recv(&mut self, out: &mut Vec<Datagram>) -> bool {
        self.chan.recv_burst(out)
    }

    /// Reads up to a batch (64) of the port's error queue into `out`, for the
    /// I/O thread's [`crate::Io::hash_errors`], when the socket reported an
    /// error: `reported` when the worker's poller said so, or on its own when
    /// a receive or send here met one. Returns whether more may wait, in which
    /// case the worker should call again before it sleeps: its poller is
    /// edge-triggered, and would report the entries left only once something
    /// new happened on the socket. Costs a test of a flag while no error is
    /// reported, so a worker may call it after every receive.
    pub fn errors(&mut self, reported: bool, out: &mut Vec<SocketError>) -> bool {
        self.chan.errors_pending |= reported;
        self.chan.read_errors(out)
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

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(origin: u8, ty: u8, code: u8) -> libc::sock_extended_err {
        libc::sock_extended_err { ee_errno: libc::ECONNREFUSED as u32, ee_origin: origin, ee_type: ty, ee_code: code, ee_pad: 0, ee_info: 0, ee_data: 0 }
    }

    /// The overhead each queued packet is charged covers what it costs: its
    /// slot and its copy's allocation header and rounding, and on a stream face
    /// the slot twice (a ring grows by doubling).
    #[test]
    fn the_charge_per_queued_packet_covers_its_slot_and_allocation() {
        let alloc = 24;
        assert!(std::mem::size_of::<Outgoing>() + alloc <= crate::QUEUED_PACKET_OVERHEAD, "{}", std::mem::size_of::<Outgoing>());
        assert!(2 * std::mem::size_of::<Bytes>() + alloc <= crate::QUEUED_PACKET_OVERHEAD, "{}", std::mem::size_of::<Bytes>());
    }

    #[test]
    fn a_repeated_failure_is_a_warning_at_most_every_minute_with_the_count_since() {
        let t0 = Instant::now();
        let mut r = Repeated::default();
        assert_eq!(r.note(t0), Some(0), "the first is a warning");
        for s in 1..60 {
            assert_eq!(r.note(t0 + Duration::from_secs(s)), None);
        }
        assert_eq!(r.note(t0 + WARN_EVERY), Some(59), "a minute on: a warning, with the count");
        assert_eq!(r.note(t0 + WARN_EVERY + Duration::from_secs(1)), None);
        assert_eq!(r.note(t0 + 10 * WARN_EVERY), Some(1));
        assert_eq!(r.note(t0 + 20 * WARN_EVERY), Some(0));
    }

    /// Receives that fail on every poll (as a flood of ICMP errors can make a
    /// listener's) are a warning once, and the rest counted, not logged.
    #[test]
    fn a_receive_failing_on_every_poll_is_warned_of_once_and_counted() {
        // A listening TCP socket fails every receive (ENOTCONN).
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let sock = std::net::UdpSocket::from(std::os::fd::OwnedFd::from(listener));
        let mut chan = UdpChannel::new(mio::net::UdpSocket::from_std(sock), 4).unwrap();
        let t0 = Instant::now();
        let mut out = Vec::new();
        for poll in 0..1000u64 {
            assert!(!chan.recv_burst_at(&mut out, || t0 + Duration::from_millis(poll)));
        }
        assert!(out.is_empty() && chan.errors_pending);
        assert_eq!(chan.recv_failures.suppressed, 999, "only the first was a warning");
        assert!(!chan.recv_burst_at(&mut out, || t0 + WARN_EVERY));
        assert_eq!(chan.recv_failures.suppressed, 0, "a minute on, a warning told the count");
    }

    #[test]
    fn only_a_port_unreachable_with_its_destination_names_a_peer() {
        let v4: SocketAddr = "127.0.0.1:6363".parse().unwrap();
        let v6: SocketAddr = "[::1]:6363".parse().unwrap();
        let port4 = entry(libc::SO_EE_ORIGIN_ICMP, ICMP_DEST_UNREACH, ICMP_PORT_UNREACH);
        let port6 = entry(libc::SO_EE_ORIGIN_ICMP6, ICMPV6_DEST_UNREACH, ICMPV6_PORT_UNREACH);
        assert_eq!(SocketError::from_entry(&port4, Some(v4)), SocketError::PortUnreachable(v4));
        assert_eq!(SocketError::from_entry(&port6, Some(v6)), SocketError::PortUnreachable(v6));
        // No destination, or one of the other family: nothing to close.
        assert_eq!(SocketError::from_entry(&port4, None), SocketError::Other);
        assert_eq!(SocketError::from_entry(&port4, Some(v6)), SocketError::Other);
        assert_eq!(SocketError::from_entry(&port6, Some(v4)), SocketError::Other);
        // A host unreachable may pass; a local error is this side's.
        assert_eq!(SocketError::from_entry(&entry(libc::SO_EE_ORIGIN_ICMP, ICMP_DEST_UNREACH, 1), Some(v4)), SocketError::Other);
        assert_eq!(SocketError::from_entry(&entry(libc::SO_EE_ORIGIN_ICMP6, ICMPV6_DEST_UNREACH, 3), Some(v6)), SocketError::Other);
        assert_eq!(SocketError::from_entry(&entry(libc::SO_EE_ORIGIN_LOCAL, 0, 0), Some(v4)), SocketError::Other);
        assert_eq!(SocketError::from_entry(&entry(0xff, ICMP_DEST_UNREACH, ICMP_PORT_UNREACH), Some(v4)), SocketError::Other);
    }
}
