//! A stream face's connection (TCP or Unix): TLV framing on the way in and a
//! bounded queue written with non-blocking vectored sends on the way out, so a slow
//! or dead peer fills only its own queue and never stalls the loop.

use std::io::{self, IoSlice, Read};
use std::os::fd::{AsRawFd, RawFd};
use std::time::{Duration, Instant};

use bytes::Bytes;
use mio::{Interest, Registry, Token};
use nix::errno::Errno;
use nix::sys::socket::{sendmsg, MsgFlags, SockaddrStorage};
use smallvec::SmallVec;

use crate::framing::FrameBuffer;
use crate::send_queue::SendQueue;
use crate::QUEUED_PACKET_OVERHEAD;

/// Queued packets handed to one `sendmsg`; more would rarely fit in a socket buffer
/// that has just reported room.
const MAX_IOV: usize = 32;

/// The connected socket of a stream face.
pub(crate) enum StreamSocket {
    Tcp(mio::net::TcpStream),
    Unix(mio::net::UnixStream),
}

impl StreamSocket {
    fn source(&mut self) -> &mut dyn mio::event::Source {
        match self {
            StreamSocket::Tcp(s) => s,
            StreamSocket::Unix(s) => s,
        }
    }
}

impl AsRawFd for StreamSocket {
    fn as_raw_fd(&self) -> RawFd {
        match self {
            StreamSocket::Tcp(s) => s.as_raw_fd(),
            StreamSocket::Unix(s) => s.as_raw_fd(),
        }
    }
}

impl Read for StreamSocket {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            StreamSocket::Tcp(s) => s.read(buf),
            StreamSocket::Unix(s) => s.read(buf),
        }
    }
}

/// How a read pass ended.
#[derive(Debug)]
pub(crate) enum ReadStatus {
    /// The socket has nothing more for now.
    Drained,
    /// The burst budget ran out with bytes possibly still waiting.
    MoreReady,
    /// The peer closed the connection.
    Eof,
    /// The byte stream is not valid TLV (bad VAR-NUMBER, element too large); it
    /// cannot be resynchronised, so the face must close.
    Corrupt,
    /// The socket failed (reset, ...).
    Failed(io::Error),
}

/// What a write pass achieved.
pub(crate) struct WriteProgress {
    /// Packets written whole, for the face's out-packet counter.
    pub packets: u64,
    /// Bytes written, partial packets included, for the face's out-byte counter.
    pub bytes: u64,
    /// `Ok(true)` when the socket buffer filled before the queue emptied.
    pub result: io::Result<bool>,
}

/// One TCP or Unix stream face's connection: the socket, its receive framing,
/// and the packets queued for a socket that takes bytes as it can.
pub(crate) struct StreamConn {
    sock: StreamSocket,
    rx: FrameBuffer,
    tx: SendQueue<Bytes>,
    /// Bytes of the front packet already written.
    tx_offset: usize,
    /// Bytes queued and not yet written (what the socket still has to take;
    /// [`queued`](Self::queued) adds what the packets cost in memory besides).
    tx_bytes: usize,
    /// A TCP connect is in progress.
    connecting: bool,
    /// The last write hit a full socket buffer; wait for writability.
    blocked: bool,
    /// Since when queued output has waited with the socket taking none of it
    /// (the last write progress, or the write that first found the socket full):
    /// set by a write that leaves packets queued, cleared when the queue
    /// empties. What [`stalled`](Self::stalled) measures.
    waiting_since: Option<Instant>,
    registered: Interest,
}

impl StreamConn {
    /// Registers the socket under `token`; `connecting` for an outgoing TCP
    /// connection that has not completed yet.
    pub(crate) fn new(mut sock: StreamSocket, connecting: bool, registry: &Registry, token: Token) -> io::Result<Self> {
        let registered = if connecting { Interest::READABLE | Interest::WRITABLE } else { Interest::READABLE };
        registry.register(sock.source(), token, registered)?;
        Ok(StreamConn { sock, rx: FrameBuffer::new(), tx: SendQueue::default(), tx_offset: 0, tx_bytes: 0, connecting, blocked: false, waiting_since: None, registered })
    }

    /// Stops the poller watching the socket, before the face closes or redials;
    /// an error (the socket already gone) changes nothing, so it is ignored.
    pub(crate) fn deregister(&mut self, registry: &Registry) {
        let _ = registry.deregister(self.sock.source());
    }

    /// Reads and frames until the socket is drained or `budget` frames were
    /// produced. Frames left in the buffer are returned by the next call first.
    pub(crate) fn read_frames(&mut self, budget: usize, out: &mut Vec<Bytes>) -> ReadStatus {
        if self.connecting {
            return ReadStatus::Drained;
        }
        let mut produced = 0;
        loop {
            while produced < budget {
                match self.rx.next_frame() {
                    Ok(Some(frame)) => {
                        out.push(frame);
                        produced += 1;
                    }
                    Ok(None) => break,
                    Err(_) => return ReadStatus::Corrupt,
                }
            }
            if produced >= budget {
                return ReadStatus::MoreReady;
            }
            match self.rx.read_from(&mut self.sock) {
                Ok(0) => return ReadStatus::Eof,
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return ReadStatus::Drained,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return ReadStatus::Failed(e),
            }
        }
    }

    /// Queues `pkt` unless that would take [`queued`](Self::queued) past
    /// `limit`; returns false if dropped.
    pub(crate) fn enqueue(&mut self, pkt: Bytes, limit: usize) -> bool {
        if self.queued() + pkt.len() + QUEUED_PACKET_OVERHEAD > limit {
            return false;
        }
        self.tx_bytes += pkt.len();
        self.tx.push_back(pkt, self.blocked || self.connecting);
        true
    }

    /// Frees the receive buffer if the face received nothing since the last
    /// call and holds no partial frame ([`FrameBuffer::sweep`]), so that idle
    /// faces cost no buffer; the poll loop's sweep calls it.
    pub(crate) fn sweep_rx(&mut self) {
        self.rx.sweep();
    }

    /// An outgoing TCP connect has not completed yet.
    pub(crate) fn is_connecting(&self) -> bool {
        self.connecting
    }

    /// What the queue is charged against the queue bounds: the bytes not yet
    /// written, plus [`QUEUED_PACKET_OVERHEAD`] for each packet they belong to.
    pub(crate) fn queued(&self) -> usize {
        self.tx_bytes + self.tx.len() * QUEUED_PACKET_OVERHEAD
    }

    /// The socket reported room again after a write had filled it.
    pub(crate) fn mark_writable(&mut self) {
        self.blocked = false;
    }

    /// Packets are queued and a write may make progress now.
    pub(crate) fn can_write(&self) -> bool {
        !self.tx.is_empty() && !self.blocked && !self.connecting
    }

    /// Whether queued output has waited `timeout` or longer at `now` without
    /// the socket taking any of it: the peer reads nothing. An outgoing connect
    /// still in progress is never stalled (its own deadline covers it).
    pub(crate) fn stalled(&self, now: Instant, timeout: Duration) -> bool {
        !self.connecting && self.waiting_since.is_some_and(|since| now.saturating_duration_since(since) >= timeout)
    }

    /// Writes queued packets until the queue is empty or the socket is full.
    /// MSG_NOSIGNAL keeps a vanished peer from raising SIGPIPE. `now` is when
    /// the write happens, which restarts the stall clock if bytes were taken
    /// (or starts it if the socket is full and none were).
    pub(crate) fn write(&mut self, now: Instant) -> WriteProgress {
        let mut progress = WriteProgress { packets: 0, bytes: 0, result: Ok(false) };
        if self.connecting {
            return progress;
        }
        while !self.tx.is_empty() {
            let sent = {
                let mut iov: SmallVec<[IoSlice<'_>; MAX_IOV]> = SmallVec::new();
                iov.push(IoSlice::new(&self.tx[0][self.tx_offset..]));
                iov.extend(self.tx.iter().skip(1).take(MAX_IOV - 1).map(|p| IoSlice::new(p)));
                let flags = MsgFlags::MSG_DONTWAIT | MsgFlags::MSG_NOSIGNAL;
                sendmsg::<SockaddrStorage>(self.sock.as_raw_fd(), &iov, &[], flags, None)
            };
            let mut written = match sent {
                Ok(n) => n,
                Err(Errno::EAGAIN) => {
                    self.blocked = true;
                    self.tx.detach();
                    progress.result = Ok(true);
                    break;
                }
                Err(Errno::EINTR) => continue,
                Err(e) => {
                    progress.result = Err(e.into());
                    break;
                }
            };
            progress.bytes += written as u64;
            self.tx_bytes -= written;
            while let Some(front) = self.tx.front() {
                let left = front.len() - self.tx_offset;
                if written < left {
                    self.tx_offset += written;
                    break;
                }
                written -= left;
                self.tx_offset = 0;
                self.tx.pop_front();
                progress.packets += 1;
            }
        }
        if self.tx.is_empty() {
            self.waiting_since = None;
        } else if progress.bytes > 0 || self.waiting_since.is_none() {
            self.waiting_since = Some(now);
        }
        progress
    }

    /// Completes an outgoing TCP connect once the socket reports writable.
    /// Returns whether the connection is now established.
    pub(crate) fn finish_connect(&mut self) -> io::Result<bool> {
        if !self.connecting {
            return Ok(true);
        }
        // Only outgoing TCP connections are ever in progress.
        let StreamSocket::Tcp(s) = &self.sock else { return Ok(true) };
        if let Some(e) = s.take_error()? {
            return Err(e);
        }
        match s.peer_addr() {
            Ok(_) => {
                self.connecting = false;
                Ok(true)
            }
            Err(e) if e.kind() == io::ErrorKind::NotConnected => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Asks for write readiness exactly while a connect or a blocked write waits for it.
    pub(crate) fn sync_interest(&mut self, registry: &Registry, token: Token) -> io::Result<()> {
        let wanted = if self.connecting || self.blocked { Interest::READABLE | Interest::WRITABLE } else { Interest::READABLE };
        if wanted != self.registered {
            registry.reregister(self.sock.source(), token, wanted)?;
            self.registered = wanted;
        }
        Ok(())
    }
}
