//! A UDP channel: one listening socket shared by every UDP face of its address
//! family, read with `recvmmsg` and written with `sendmmsg` so that a burst of
//! datagrams costs one system call rather than one each.

use std::collections::VecDeque;
use std::io::{self, IoSlice, IoSliceMut};
use std::net::SocketAddr;
use std::os::fd::AsRawFd;

use bytes::Bytes;
use nix::errno::Errno;
use nix::sys::socket::{recvmmsg, sendmmsg, MsgFlags, MultiHeaders, SockaddrStorage};

use crate::{FaceId, MAX_FRAME_SIZE};

/// Receive slot per datagram: one byte more than the largest accepted, so an
/// oversized datagram is seen as such instead of silently cut to size.
const SLOT: usize = MAX_FRAME_SIZE + 1;

/// One received datagram.
pub(crate) struct Datagram {
    pub from: SocketAddr,
    /// The payload, or `None` when it was larger than [`MAX_FRAME_SIZE`].
    pub data: Option<Bytes>,
    /// Bytes the datagram had on the wire (for the face's byte counter).
    pub len: usize,
}

/// A datagram waiting for the next `sendmmsg`.
pub(crate) struct Outgoing {
    pub face: FaceId,
    pub to: SocketAddr,
    pub pkt: Bytes,
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
    pub tx: VecDeque<Outgoing>,
    /// Writable interest is registered because the kernel buffer was full.
    pub blocked: bool,
    rx_buf: Box<[u8]>,
}

impl UdpChannel {
    /// Wraps a bound socket; `burst` datagrams are read per call.
    pub(crate) fn new(sock: mio::net::UdpSocket, burst: usize) -> io::Result<Self> {
        let local = sock.local_addr()?;
        Ok(UdpChannel { sock, local, tx: VecDeque::new(), blocked: false, rx_buf: vec![0; burst.max(1) * SLOT].into_boxed_slice() })
    }

    /// Reads up to one burst with a single `recvmmsg`, copying each datagram out so
    /// a stored packet never pins the receive buffer. Returns whether the socket may
    /// hold more (the burst was filled).
    pub(crate) fn recv_batch(&mut self, out: &mut Vec<Datagram>) -> io::Result<bool> {
        let slots = self.rx_buf.len() / SLOT;
        let mut iovs: Vec<[IoSliceMut<'_>; 1]> = self.rx_buf.chunks_exact_mut(SLOT).map(|c| [IoSliceMut::new(c)]).collect();
        let mut headers = MultiHeaders::<SockaddrStorage>::preallocate(slots, None);
        let results = match recvmmsg(self.sock.as_raw_fd(), &mut headers, iovs.iter_mut(), MsgFlags::MSG_DONTWAIT, None) {
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

fn to_std(addr: &SockaddrStorage) -> Option<SocketAddr> {
    if let Some(v4) = addr.as_sockaddr_in() {
        Some(SocketAddr::V4((*v4).into()))
    } else {
        addr.as_sockaddr_in6().map(|v6| SocketAddr::V6((*v6).into()))
    }
}
