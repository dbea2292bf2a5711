//! A blocking client face to an NDN forwarder (Trajan, NFD, ndnd), shared by every
//! tool: expressing Interests one at a time or pipelined, serving Interests as a
//! producer, and the NFD management protocol (signed commands, segmented datasets).
//!
//! Blocking I/O with read timeouts keeps the tools simple; they never need more than
//! one socket, and their throughput is bounded by the forwarder, not by this loop.

use std::collections::VecDeque;
use std::io::{self, Read, Write};
use std::net::{TcpStream, ToSocketAddrs, UdpSocket};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{bail, Context};
use bytes::{Bytes, BytesMut};
use trajan_wire::lp::LpHeaders;
use trajan_wire::mgmt::{command_name, dataset_name, ControlParameters, ControlResponse, MgmtScope};
use trajan_wire::signed::{sign_digest_sha256, SignatureFields};
use trajan_wire::tlv::frame_len;
use trajan_wire::types::{DATA, INTEREST};
use trajan_wire::{Data, Interest, LpPacket, Name, NackReason, MAX_PACKET_SIZE};

use trajan_io::reassembly::{Reassembler, MAX_HELD_PER_FACE};
use trajan_io::HashPorts;
use crate::transport::{resolve_transport, Transport, TRANSPORT_ENV};

/// The largest stream frame accepted: a maximum-size packet plus room for the
/// NDNLPv2 headers (PitToken, IncomingFaceId, ...) a forwarder wraps around it.
pub const MAX_FRAME: usize = MAX_PACKET_SIZE + 256;
/// How long a management command may take; NFD answers in well under a second.
pub const COMMAND_TIMEOUT: Duration = Duration::from_secs(4);
/// How long connecting may take. A forwarder that has stopped accepting
/// (stalled, stopped in a debugger) fills its listen backlog, and a blocking
/// connect to it would then wait forever.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(4);
/// Interests that arrive while the client waits for something else are kept for
/// [`Client::recv`], up to this many (the oldest are dropped).
pub const MAX_BACKLOG: usize = 1024;
/// A dataset larger than this is refused, bounding what a forwarder can make a tool buffer.
pub const MAX_DATASET_BYTES: usize = 64 << 20;
/// A dataset with more segments than this is refused, for the same reason.
pub const MAX_DATASET_SEGMENTS: u64 = 65536;
/// Receive buffer requested for UDP transports.
const UDP_RECV_BUFFER: usize = 4 << 20;
/// How long a producer whose work is done keeps its face open after the last
/// Interest (see [`Client::serve`]).
pub const QUIET_BEFORE_EXIT: Duration = Duration::from_millis(300);
/// How long a tool's loop (serving, fetching) blocks before rechecking its stop flag.
pub(crate) const STOP_POLL: Duration = Duration::from_millis(100);

/// The command-line option every tool shares.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct ClientArgs {
    /// Forwarder to connect to: unix://PATH, tcp://HOST:PORT or udp://HOST:PORT
    /// [default: $NDN_CLIENT_TRANSPORT, then transport= in ~/.ndn/client.conf, then unix:///run/nfd/nfd.sock]
    #[arg(long, global = true)]
    pub transport: Option<String>,
    /// With a udp:// transport to a Trajan UDP-port-by-hash face (`trajan run
    /// --udp-ports`): the number of its ports (the router's workers), counted from the
    /// transport's port. Each packet is sent to the port its name hashes to, so it
    /// reaches the worker owning the name without a hand-off between threads.
    #[arg(long, global = true, value_name = "N", value_parser = clap::builder::TypedValueParser::map(clap::value_parser!(u16).range(1..), usize::from))]
    pub udp_ports: Option<usize>,
}

/// A network-layer packet received from the forwarder.
#[derive(Debug, Clone)]
pub enum Packet {
    /// An Interest for a prefix this client registered, with the PitToken to echo.
    Interest {
        /// The Interest as received.
        interest: Interest,
        /// The PitToken the forwarder attached (NDNLPv2), which the answering Data must carry back.
        pit_token: Option<Bytes>,
    },
    /// A Data packet, answering one of this client's Interests (or arriving late).
    Data(Data),
    /// The forwarder refused one of this client's Interests.
    Nack {
        /// Why the forwarder refused it.
        reason: NackReason,
        /// The refused Interest, as the Nack carried it back.
        interest: Interest,
    },
}

/// The outcome of one expressed Interest.
#[derive(Debug, Clone)]
pub enum Reply {
    /// The Data that satisfied it.
    Data(Data),
    /// The forwarder or an upstream refused it.
    Nack(NackReason),
    /// Its lifetime passed with no answer.
    Timeout,
}

enum Link {
    Unix(UnixStream),
    Tcp(TcpStream),
    /// With the ports of a hash face the socket is not connected: it sends to the
    /// port of each packet's name and accepts replies from any of the ports.
    Udp(UdpSocket, Option<HashPorts>),
}

/// A connection to a forwarder.
pub struct Client {
    link: Link,
    transport: Transport,
    local: bool,
    rx: BytesMut,
    reassembler: Reassembler,
    backlog: VecDeque<Packet>,
    /// Packets that did not decode, counted and dropped.
    pub malformed: u64,
}

/// Milliseconds since the Unix epoch, for versions and signature times.
pub fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}

/// The segment number a Data packet's FinalBlockId names, if it names one.
pub fn final_segment(data: &Data) -> Option<u64> {
    Name::from_value(data.final_block_id.clone()?).ok()?.segment()
}

/// A name given on the command line. An empty argument (an unset shell
/// variable, most likely) is refused rather than read as the root, which would
/// route, publish or erase everything; the root is written `/`.
pub fn parse_name(s: &str) -> anyhow::Result<Name> {
    if s.is_empty() {
        bail!("the name is empty (the root is written /)");
    }
    s.parse().with_context(|| {
        format!("bad name {s:?} (an NDN name URI such as /example/data/v=1: a byte other than a letter, digit or -._~ is written %XX, a typed component TYPE=VALUE)")
    })
}

/// [`parse_name`] as clap's parser of a name argument, so that a bad name is
/// refused with the command's usage before anything connects to a router.
pub fn name_arg(s: &str) -> Result<Name, String> {
    parse_name(s).map_err(|e| format!("{e:#}"))
}

/// Whether `data` satisfies `interest` (v0.3 §5.2: exact name, a longer name when
/// CanBePrefix, or the full name with implicit digest).
pub fn data_matches(interest: &Interest, data: &Data) -> bool {
    let n = &interest.name;
    if n == data.name() || (interest.can_be_prefix && n.is_prefix_of(data.name())) {
        return true;
    }
    n.len() == data.name().len() + 1 && n.implicit_digest().is_some() && *n == data.full_name()
}

/// Connects to a Unix stream socket, giving up after `timeout`. A connect
/// that does not block fails at once when the listener's backlog is full, so
/// it is retried until the listener accepts or the time is up.
fn connect_unix(path: &Path, timeout: Duration) -> io::Result<UnixStream> {
    let addr = socket2::SockAddr::unix(path)?;
    let deadline = Instant::now() + timeout;
    loop {
        let s = socket2::Socket::new(socket2::Domain::UNIX, socket2::Type::STREAM, None)?;
        s.set_nonblocking(true)?;
        match s.connect(&addr) {
            Ok(()) => {
                s.set_nonblocking(false)?;
                return Ok(UnixStream::from(std::os::fd::OwnedFd::from(s)));
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                if Instant::now() >= deadline {
                    return Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        format!("no connection accepted within {timeout:?}: the forwarder's backlog is full (is it stalled?)"),
                    ));
                }
                std::thread::sleep(Duration::from_millis(10));
            }
            Err(e) => return Err(e),
        }
    }
}

/// Connects to the first of `addr`'s addresses that accepts, each given at
/// most `timeout` (a SYN to a full backlog is otherwise retried for minutes).
fn connect_tcp(addr: &str, timeout: Duration) -> io::Result<TcpStream> {
    let mut last = io::Error::new(io::ErrorKind::NotFound, format!("{addr} resolves to no address"));
    for a in addr.to_socket_addrs()? {
        match TcpStream::connect_timeout(&a, timeout) {
            Ok(s) => return Ok(s),
            Err(e) => last = e,
        }
    }
    Err(last)
}

impl Client {
    /// Connects to `transport`.
    pub fn connect(transport: &Transport) -> anyhow::Result<Client> {
        Client::connect_ports(transport, 1)
    }

    /// Connects to `transport`; with `udp_ports` > 1 it is the first of a Trajan
    /// UDP-port-by-hash face's ports (see [`ClientArgs::udp_ports`]).
    pub fn connect_ports(transport: &Transport, udp_ports: usize) -> anyhow::Result<Client> {
        let ctx = || {
            format!(
                "cannot connect to the forwarder at {transport} (is the router running? `trajan run` starts one; \
                 --transport or ${TRANSPORT_ENV} names another)"
            )
        };
        if udp_ports > 1 && !matches!(transport, Transport::Udp(_)) {
            bail!("--udp-ports needs a udp:// transport, not {transport}");
        }
        let (link, local) = match transport {
            Transport::Unix(path) => (Link::Unix(connect_unix(path, CONNECT_TIMEOUT).with_context(ctx)?), true),
            Transport::Tcp(addr) => {
                let s = connect_tcp(addr, CONNECT_TIMEOUT).with_context(ctx)?;
                s.set_nodelay(true).with_context(ctx)?;
                let local = s.peer_addr().with_context(ctx)?.ip().is_loopback();
                (Link::Tcp(s), local)
            }
            Transport::Udp(addr) => {
                let peer = addr.to_socket_addrs().with_context(ctx)?.next().with_context(ctx)?;
                let bind = match (peer.is_ipv4(), peer.ip().is_loopback()) {
                    (true, true) => "127.0.0.1:0",
                    (true, false) => "0.0.0.0:0",
                    (false, true) => "[::1]:0",
                    (false, false) => "[::]:0",
                };
                if usize::from(peer.port()) + udp_ports.max(1) - 1 > usize::from(u16::MAX) {
                    bail!("--udp-ports {udp_ports}: the ports from {peer} end past port 65535");
                }
                let s = UdpSocket::bind(bind).with_context(ctx)?;
                let hash = (udp_ports > 1).then_some(HashPorts { base: peer, count: udp_ports });
                if hash.is_none() {
                    s.connect(peer).with_context(ctx)?;
                }
                // A window of large Data arrives as bursts of fragments; the default
                // buffer (about 200 KiB) overflows and costs a retransmission timeout.
                // The kernel caps the request at net.core.rmem_max, which is fine.
                let _ = socket2::SockRef::from(&s).set_recv_buffer_size(UDP_RECV_BUFFER);
                (Link::Udp(s, hash), peer.ip().is_loopback())
            }
        };
        Ok(Client {
            link,
            transport: transport.clone(),
            local,
            rx: BytesMut::with_capacity(2 * MAX_PACKET_SIZE),
            reassembler: Reassembler::new(),
            backlog: VecDeque::new(),
            malformed: 0,
        })
    }

    /// Connects to the transport the arguments, environment or client.conf name.
    pub fn from_args(args: &ClientArgs) -> anyhow::Result<Client> {
        Client::connect_ports(&resolve_transport(args.transport.as_deref())?, args.udp_ports.unwrap_or(1))
    }

    /// The transport this client is connected to.
    pub fn transport(&self) -> &Transport {
        &self.transport
    }

    /// `/localhost/nfd` on a local face (Unix socket, loopback), else `/localhop/nfd`:
    /// forwarders accept `/localhost` commands only from local faces.
    pub fn scope(&self) -> MgmtScope {
        if self.local {
            MgmtScope::Localhost
        } else {
            MgmtScope::Localhop
        }
    }

    fn send_raw(&mut self, wire: &[u8]) -> anyhow::Result<()> {
        let r = match &mut self.link {
            Link::Unix(s) => s.write_all(wire),
            Link::Tcp(s) => s.write_all(wire),
            Link::Udp(s, None) => s.send(wire).map(|_| ()),
            Link::Udp(s, Some(h)) => s.send_to(wire, h.addr_for(wire)).map(|_| ()),
        };
        r.with_context(|| format!("sending to the forwarder at {}", self.transport))
    }

    /// The socket of a one-port UDP client, for tools that drive it in bursts
    /// themselves between management commands (`trajan gen`'s producer registers
    /// its prefix through the client, answers on the same socket, the same face,
    /// and unregisters through the client again).
    pub fn udp_socket(&self) -> Option<&UdpSocket> {
        match &self.link {
            Link::Udp(s, None) => Some(s),
            _ => None,
        }
    }

    /// Sends an Interest as given (callers set the Nonce; [`Pipeline`] does).
    pub fn send_interest(&mut self, interest: &Interest) -> anyhow::Result<()> {
        self.send_raw(&interest.encode())
    }

    /// Sends an encoded Data packet, echoing the PitToken of the Interest it answers.
    pub fn send_data(&mut self, data: &Bytes, pit_token: Option<&Bytes>) -> anyhow::Result<()> {
        let headers = LpHeaders { pit_token: pit_token.cloned(), ..Default::default() };
        self.send_raw(&LpPacket::wrap(data, &headers))
    }

    /// One link-layer frame, or `None` at the deadline.
    fn recv_frame(&mut self, deadline: Instant) -> anyhow::Result<Option<Bytes>> {
        loop {
            if !matches!(self.link, Link::Udp(..)) {
                match frame_len(&self.rx, MAX_FRAME) {
                    Ok(Some(n)) => return Ok(Some(self.rx.split_to(n).freeze())),
                    Ok(None) => {}
                    Err(e) => bail!("corrupt stream from the forwarder at {}: {e}", self.transport),
                }
            }
            let now = Instant::now();
            if now >= deadline {
                return Ok(None);
            }
            let wait = Some((deadline - now).max(Duration::from_millis(1)));
            let udp = matches!(self.link, Link::Udp(..));
            let old = self.rx.len();
            // A UDP read takes the whole datagram, whatever its size, so the buffer
            // fits any; a stream read takes what is there.
            self.rx.resize(old + if udp { 65536 } else { 16384 }, 0);
            let r = match &mut self.link {
                Link::Unix(s) => s.set_read_timeout(wait).and_then(|_| s.read(&mut self.rx[old..])),
                Link::Tcp(s) => s.set_read_timeout(wait).and_then(|_| s.read(&mut self.rx[old..])),
                Link::Udp(s, None) => s.set_read_timeout(wait).and_then(|_| s.recv(&mut self.rx[old..])),
                Link::Udp(s, Some(h)) => s.set_read_timeout(wait).and_then(|_| match s.recv_from(&mut self.rx[old..])? {
                    (n, from) if h.contains(from) => Ok(n),
                    // Not from the forwarder: ignored, as a connected socket would.
                    _ => Err(io::ErrorKind::Interrupted.into()),
                }),
            };
            match r {
                Ok(0) if !udp => bail!("the forwarder at {} closed the connection", self.transport),
                Ok(n) => {
                    self.rx.truncate(old + n);
                    if udp {
                        // Datagrams never straddle reads, so the buffer held only this one.
                        return Ok(Some(self.rx.split().freeze()));
                    }
                }
                Err(e) => {
                    self.rx.truncate(old);
                    match e.kind() {
                        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut | io::ErrorKind::Interrupted => {}
                        // A UDP peer that is not (yet) listening answers with ICMP.
                        io::ErrorKind::ConnectionRefused if udp => {}
                        io::ErrorKind::ConnectionReset if !udp => {
                            bail!("the forwarder at {} closed the connection (reset)", self.transport)
                        }
                        _ => return Err(e).with_context(|| format!("receiving from the forwarder at {}", self.transport)),
                    }
                }
            }
        }
    }

    /// Decodes one frame; malformed ones are counted and yield `None`.
    fn decode(&mut self, frame: Bytes) -> Option<Packet> {
        let Ok(mut lp) = LpPacket::decode(&frame) else {
            self.malformed += 1;
            return None;
        };
        if lp.is_fragmented() {
            // The forwarder fragmented a packet larger than its UDP MTU (ndnd: 1420 bytes).
            let whole = match self.reassembler.accept(lp, Instant::now(), MAX_HELD_PER_FACE) {
                Ok(Some(whole)) => whole,
                Ok(None) => return None,
                Err(_) => {
                    self.malformed += 1;
                    return None;
                }
            };
            lp = match LpPacket::decode(&whole) {
                Ok(lp) => lp,
                Err(_) => {
                    self.malformed += 1;
                    return None;
                }
            };
        }
        let (nack, pit_token) = (lp.headers.nack, lp.headers.pit_token);
        let wire = lp.fragment?;
        let packet = match (wire.first().map(|b| u32::from(*b)), nack) {
            (Some(INTEREST), Some(reason)) => Interest::decode(&wire).ok().map(|interest| Packet::Nack { reason, interest }),
            (Some(INTEREST), None) => Interest::decode(&wire).ok().map(|interest| Packet::Interest { interest, pit_token }),
            (Some(DATA), None) => Data::decode(&wire).ok().map(Packet::Data),
            _ => None,
        };
        if packet.is_none() {
            self.malformed += 1;
        }
        packet
    }

    fn recv_packet(&mut self, deadline: Instant) -> anyhow::Result<Option<Packet>> {
        while let Some(frame) = self.recv_frame(deadline)? {
            if let Some(p) = self.decode(frame) {
                return Ok(Some(p));
            }
        }
        Ok(None)
    }

    /// The next packet (Interests held back while waiting for replies come first),
    /// or `None` at the deadline.
    pub fn recv(&mut self, deadline: Instant) -> anyhow::Result<Option<Packet>> {
        if let Some(p) = self.backlog.pop_front() {
            return Ok(Some(p));
        }
        self.recv_packet(deadline)
    }

    /// The next Data or Nack; Interests are kept in the backlog for a later
    /// [`Client::recv`] so that a producer loses none while it registers.
    fn recv_reply(&mut self, deadline: Instant) -> anyhow::Result<Option<Packet>> {
        loop {
            match self.recv_packet(deadline)? {
                Some(p @ Packet::Interest { .. }) => {
                    if self.backlog.len() >= MAX_BACKLOG {
                        self.backlog.pop_front();
                    }
                    self.backlog.push_back(p);
                }
                other => return Ok(other),
            }
        }
    }

    /// Expresses one Interest and waits for its Data, Nack or lifetime.
    pub fn express(&mut self, interest: &Interest) -> anyhow::Result<Reply> {
        self.express_checking(interest, || Ok(()))
    }

    /// [`Client::express`] that calls `check` at least every 100 ms while it
    /// waits and gives up with its error, so that a tool told to stop does not
    /// first wait out a long InterestLifetime.
    pub fn express_checking(&mut self, interest: &Interest, mut check: impl FnMut() -> anyhow::Result<()>) -> anyhow::Result<Reply> {
        let mut p = Pipeline::new();
        p.express(self, (), interest.clone())?;
        loop {
            check()?;
            if let Some(ev) = p.poll(self, Instant::now() + STOP_POLL)?.into_iter().next() {
                return Ok(match ev {
                    Event::Data((), d) => Reply::Data(d),
                    Event::Nack((), r) => Reply::Nack(r),
                    Event::Timeout(()) => Reply::Timeout,
                });
            }
        }
    }

    /// Sends a management command as a DigestSha256-signed Interest and returns the
    /// forwarder's response, whatever its status code.
    pub fn command(&mut self, module: &str, verb: &str, params: &ControlParameters) -> anyhow::Result<ControlResponse> {
        let mut i = Interest::new(command_name(self.scope(), module, verb, params));
        i.lifetime_ms = Some(COMMAND_TIMEOUT.as_millis() as u64);
        let fields = SignatureFields { nonce: Some(rand::random::<[u8; 8]>().to_vec()), time_ms: Some(now_ms()), seq_num: None };
        sign_digest_sha256(&mut i, &[], &fields);
        match self.express(&i)? {
            Reply::Data(d) => ControlResponse::decode(&d.content_bytes())
                .with_context(|| format!("{module}/{verb}: the forwarder's reply is not a ControlResponse")),
            Reply::Nack(r) => bail!("{module}/{verb}: the forwarder returned a Nack ({r:?})"),
            Reply::Timeout => bail!("{module}/{verb}: no response from the forwarder at {}", self.transport),
        }
    }

    /// [`Client::command`] that fails unless the status is 200, returning the
    /// parameters the forwarder applied.
    pub fn command_ok(&mut self, module: &str, verb: &str, params: &ControlParameters) -> anyhow::Result<ControlParameters> {
        let r = self.command(module, verb, params)?;
        if !r.is_ok() {
            bail!("{module}/{verb} failed: {} {}", r.status_code, r.status_text);
        }
        Ok(r.body.unwrap_or_default())
    }

    /// Registers `prefix` towards this client's face (rib/register with the
    /// forwarder's defaults: origin app, cost 0, child-inherit).
    pub fn register(&mut self, prefix: &Name) -> anyhow::Result<ControlParameters> {
        self.command_ok("rib", "register", &ControlParameters { name: Some(prefix.clone()), ..Default::default() })
    }

    /// Takes back a prefix [`Client::register`] registered. A producer does so
    /// as it exits: over UDP its face outlives it, and the router would go on
    /// sending the prefix's Interests there, none to a later producer of the
    /// prefix on a face of its own (closing a Unix or TCP face removes its
    /// routes anyway). Tools call it as a best effort: a router that is gone
    /// took the route with it.
    pub fn unregister(&mut self, prefix: &Name) -> anyhow::Result<ControlParameters> {
        self.command_ok("rib", "unregister", &ControlParameters { name: Some(prefix.clone()), ..Default::default() })
    }

    /// Fetches a status dataset (e.g. `faces`/`list`): discovers the latest version
    /// with CanBePrefix+MustBeFresh, then every segment until the one the
    /// FinalBlockId names, and returns the concatenated content.
    pub fn dataset(&mut self, module: &str, verb: &str) -> anyhow::Result<Bytes> {
        let prefix = dataset_name(self.scope(), module, verb);
        let mut first = Interest::new(prefix.clone());
        first.can_be_prefix = true;
        first.must_be_fresh = true;
        first.lifetime_ms = Some(COMMAND_TIMEOUT.as_millis() as u64);
        let what = format!("dataset {module}/{verb}");
        let mut data = self.expect_data(&first, &what)?;
        // A refusal (a non-local face) or an unknown dataset is a ControlResponse
        // named as the Interest.
        if data.name() == &prefix {
            if let Ok(r) = ControlResponse::decode(&data.content_bytes()) {
                bail!("{what}: refused by the forwarder: {} {}", r.status_code, r.status_text);
            }
        }
        let n = data.name().len();
        let versioned = (n == prefix.len() + 2 && data.name().segment().is_some())
            .then(|| data.name().prefix(n - 1))
            .with_context(|| format!("{what}: unexpected name {}", data.name()))?;
        let mut content = BytesMut::new();
        let mut seg = 0u64;
        loop {
            if data.name().segment() != Some(seg) {
                let mut i = Interest::new(versioned.append_number(trajan_wire::types::SEGMENT_COMPONENT, seg));
                i.lifetime_ms = first.lifetime_ms;
                data = self.expect_data(&i, &what)?;
            }
            if content.len() + data.content().len() > MAX_DATASET_BYTES {
                bail!("{what}: larger than {MAX_DATASET_BYTES} bytes");
            }
            content.extend_from_slice(data.content());
            match final_segment(&data) {
                Some(f) if f == seg => return Ok(content.freeze()),
                Some(f) if f < seg => bail!("{what}: FinalBlockId {f} precedes segment {seg}"),
                _ => {}
            }
            seg += 1;
            if seg >= MAX_DATASET_SEGMENTS {
                bail!("{what}: more than {MAX_DATASET_SEGMENTS} segments");
            }
        }
    }

    fn expect_data(&mut self, interest: &Interest, what: &str) -> anyhow::Result<Data> {
        match self.express(interest)? {
            Reply::Data(d) => Ok(d),
            Reply::Nack(r) => bail!("{what}: Nack ({r:?}) for {}", interest.name),
            Reply::Timeout => bail!("{what}: no response from the forwarder at {} within {} ms for {}", self.transport, interest.lifetime(), interest.name),
        }
    }

    /// Producer loop: hands every incoming Interest to `on_interest` and sends the
    /// Data it returns, until `stop` is set (checked at least every 100 ms).
    pub fn serve(&mut self, stop: &AtomicBool, on_interest: impl FnMut(&Interest) -> Option<Bytes>) -> anyhow::Result<()> {
        self.serve_until_done(stop, &AtomicBool::new(false), on_interest)
    }

    /// [`Client::serve`] that also returns once `done` is set and no Interest has
    /// come for [`QUIET_BEFORE_EXIT`].
    ///
    /// The quiet period matters: a forwarder may drop the Data a face sent just
    /// before closing (ndnd does), and it lets retransmissions be answered.
    pub fn serve_until_done(
        &mut self,
        stop: &AtomicBool,
        done: &AtomicBool,
        mut on_interest: impl FnMut(&Interest) -> Option<Bytes>,
    ) -> anyhow::Result<()> {
        let mut last_interest = Instant::now();
        while !stop.load(Ordering::Relaxed) {
            if done.load(Ordering::Relaxed) && last_interest.elapsed() >= QUIET_BEFORE_EXIT {
                break;
            }
            if let Some(Packet::Interest { interest, pit_token }) = self.recv(Instant::now() + STOP_POLL)? {
                last_interest = Instant::now();
                if let Some(data) = on_interest(&interest) {
                    self.send_data(&data, pit_token.as_ref())?;
                }
            }
        }
        Ok(())
    }
}

/// What happened to one of a [`Pipeline`]'s Interests.
#[derive(Debug, Clone)]
pub enum Event<K> {
    /// The Interest tagged K was satisfied.
    Data(K, Data),
    /// The Interest tagged K was refused.
    Nack(K, NackReason),
    /// The Interest tagged K outlived its lifetime.
    Timeout(K),
}

struct Outstanding<K> {
    key: K,
    interest: Interest,
    deadline: Instant,
}

/// Many Interests in flight at once, each tagged with a caller's key; Data are
/// matched to every pending Interest they satisfy, Nacks by name and Nonce.
/// Lookups are linear: windows are tens of Interests.
pub struct Pipeline<K> {
    pending: Vec<Outstanding<K>>,
}

impl<K: Clone> Default for Pipeline<K> {
    fn default() -> Self {
        Pipeline { pending: Vec::new() }
    }
}

impl<K: Clone> Pipeline<K> {
    /// An empty pipeline.
    pub fn new() -> Self {
        Self::default()
    }

    /// Interests awaiting an answer.
    pub fn len(&self) -> usize {
        self.pending.len()
    }

    /// True when nothing is in flight.
    pub fn is_empty(&self) -> bool {
        self.pending.is_empty()
    }

    /// Sends `interest` (with a fresh random Nonce if it has none) and tracks it
    /// until its lifetime ends.
    pub fn express(&mut self, client: &mut Client, key: K, mut interest: Interest) -> anyhow::Result<()> {
        interest.nonce.get_or_insert_with(rand::random);
        client.send_interest(&interest)?;
        let deadline = Instant::now() + Duration::from_millis(interest.lifetime());
        self.pending.push(Outstanding { key, interest, deadline });
        Ok(())
    }

    /// Waits until something happens to a pending Interest or `until` passes, and
    /// returns what happened (empty at `until`).
    pub fn poll(&mut self, client: &mut Client, until: Instant) -> anyhow::Result<Vec<Event<K>>> {
        loop {
            let now = Instant::now();
            let mut events: Vec<Event<K>> = Vec::new();
            self.pending.retain(|o| {
                let alive = o.deadline > now;
                if !alive {
                    events.push(Event::Timeout(o.key.clone()));
                }
                alive
            });
            if !events.is_empty() || now >= until {
                return Ok(events);
            }
            let wake = self.pending.iter().map(|o| o.deadline).min().map_or(until, |d| d.min(until));
            match client.recv_reply(wake)? {
                Some(Packet::Data(d)) => self.pending.retain(|o| {
                    let hit = data_matches(&o.interest, &d);
                    if hit {
                        events.push(Event::Data(o.key.clone(), d.clone()));
                    }
                    !hit
                }),
                Some(Packet::Nack { reason, interest }) => {
                    if let Some(at) = self
                        .pending
                        .iter()
                        .position(|o| o.interest.name == interest.name && (interest.nonce.is_none() || o.interest.nonce == interest.nonce))
                    {
                        events.push(Event::Nack(self.pending.remove(at).key, reason));
                    }
                }
                _ => {}
            }
            if !events.is_empty() {
                return Ok(events);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_forwarder::next_interest;
    use std::os::unix::net::UnixListener;
    use trajan_wire::data::DataBuilder;

    #[test]
    fn matching_rules() {
        let data = Data::decode(&DataBuilder::new("/a/b/seg=0".parse().unwrap()).build(b"x")).unwrap();
        let mut i = Interest::new("/a/b".parse().unwrap());
        assert!(!data_matches(&i, &data));
        i.can_be_prefix = true;
        assert!(data_matches(&i, &data));
        assert!(data_matches(&Interest::new(data.name().clone()), &data));
        assert!(data_matches(&Interest::new(data.full_name()), &data));
        let wrong = data.name().append(trajan_wire::types::IMPLICIT_SHA256_DIGEST, &[0; 32]);
        assert!(!data_matches(&Interest::new(wrong), &data));
    }

    /// A scripted forwarder on a Unix socket: answers a command, a two-segment
    /// dataset (FinalBlockId only on the last, as NFD does), a Nack, split
    /// across writes a Data wrapped in an LpPacket, and a dataset with a refusal.
    #[test]
    fn talks_to_a_scripted_forwarder() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("fw.sock");
        let listener = UnixListener::bind(&path).unwrap();
        let server = std::thread::spawn(move || {
            let (mut s, _) = listener.accept().unwrap();
            s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
            let mut rx = BytesMut::new();
            // 1. rib/register
            let i = next_interest(&mut s, &mut rx);
            assert_eq!(trajan_wire::signed::verify_interest(&i), Ok(trajan_wire::signed::SignatureCheck::Valid));
            let req = trajan_wire::mgmt::parse_request(&i.name).unwrap();
            assert_eq!((req.module.as_str(), req.verb.as_str(), req.scope), ("rib", "register", MgmtScope::Localhost));
            let resp = ControlResponse::ok(req.params.unwrap()).encode();
            s.write_all(&DataBuilder::new(i.name.clone()).build(&resp)).unwrap();
            // 2. dataset: two segments
            let i1 = next_interest(&mut s, &mut rx);
            assert!(i1.can_be_prefix && i1.must_be_fresh);
            let v = i1.name.append_number(trajan_wire::types::VERSION_COMPONENT, 7);
            let seg = |n: u64| v.append_number(trajan_wire::types::SEGMENT_COMPONENT, n);
            s.write_all(&DataBuilder::new(seg(0)).build(b"hello ")).unwrap();
            let i2 = next_interest(&mut s, &mut rx);
            assert_eq!(i2.name, seg(1));
            s.write_all(&DataBuilder::new(seg(1)).final_segment(1).build(b"world")).unwrap();
            // 3. a Nack
            let i3 = next_interest(&mut s, &mut rx);
            let mut nack = Vec::new();
            let headers = LpHeaders { nack: Some(NackReason::NoRoute), ..Default::default() };
            LpPacket { headers, fragment: Some(i3.encode()), ..Default::default() }.encode_into(&mut nack);
            s.write_all(&nack).unwrap();
            // 4. Data in an LpPacket with a PitToken, written in two pieces.
            let i4 = next_interest(&mut s, &mut rx);
            let headers = LpHeaders { pit_token: Some(Bytes::from_static(b"tok")), ..Default::default() };
            let out = LpPacket::wrap(&DataBuilder::new(i4.name.clone()).build(b"lp"), &headers).to_vec();
            s.write_all(&out[..5]).unwrap();
            s.flush().unwrap();
            std::thread::sleep(Duration::from_millis(20));
            s.write_all(&out[5..]).unwrap();
            // 5. a dataset refused, as a forwarder answers a non-local face
            let i5 = next_interest(&mut s, &mut rx);
            let refusal = ControlResponse::error(403, "Management is open only to local faces").encode();
            s.write_all(&DataBuilder::new(i5.name.clone()).build(&refusal)).unwrap();
        });
        let mut c = Client::connect(&Transport::Unix(path)).unwrap();
        let body = c.register(&"/p".parse().unwrap()).unwrap();
        assert_eq!(body.name.unwrap().to_string(), "/p");
        assert_eq!(&c.dataset("faces", "list").unwrap()[..], b"hello world");
        let mut i = Interest::new("/nack/me".parse().unwrap());
        i.nonce = Some(5);
        assert!(matches!(c.express(&i).unwrap(), Reply::Nack(NackReason::NoRoute)));
        match c.express(&Interest::new("/lp".parse().unwrap())).unwrap() {
            Reply::Data(d) => assert_eq!(d.content(), b"lp"),
            other => panic!("{other:?}"),
        }
        let refused = c.dataset("fib", "list").unwrap_err().to_string();
        assert!(refused.contains("refused by the forwarder: 403 Management is open only to local faces"), "{refused}");
        server.join().unwrap();
        assert_eq!(c.malformed, 0);
    }

    /// A producer answers, echoing the PitToken, and leaves once done and quiet.
    #[test]
    fn serves_until_done_and_quiet() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("fw.sock");
        let listener = UnixListener::bind(&path).unwrap();
        let mut c = Client::connect(&Transport::Unix(path)).unwrap();
        let (mut peer, _) = listener.accept().unwrap();
        let headers = LpHeaders { pit_token: Some(Bytes::from_static(b"pt")), ..Default::default() };
        peer.write_all(&LpPacket::wrap(&Interest::new("/p/1".parse().unwrap()).encode(), &headers)).unwrap();
        let (stop, done) = (AtomicBool::new(false), AtomicBool::new(false));
        let mut answered = Vec::new();
        c.serve_until_done(&stop, &done, |i| {
            answered.push(i.name.to_string());
            done.store(true, Ordering::Relaxed);
            Some(DataBuilder::new(i.name.clone()).build(b"d"))
        })
        .unwrap();
        assert_eq!(answered, ["/p/1"]);
        let mut buf = vec![0u8; 512];
        let n = peer.read(&mut buf).unwrap();
        let lp = LpPacket::decode(&Bytes::copy_from_slice(&buf[..n])).unwrap();
        assert_eq!(lp.headers.pit_token.as_deref(), Some(&b"pt"[..]));
        assert_eq!(Data::decode(&lp.fragment.unwrap()).unwrap().name().to_string(), "/p/1");
        // A stop request ends it even when never done.
        stop.store(true, Ordering::Relaxed);
        c.serve(&stop, |_| None).unwrap();
    }

    /// A listener that accepts nothing (a stalled forwarder) with a full
    /// backlog: connecting gives up in time and says why, where a blocking
    /// connect would wait forever.
    #[test]
    fn connecting_to_a_stalled_forwarder_gives_up() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("stalled.sock");
        let listener = socket2::Socket::new(socket2::Domain::UNIX, socket2::Type::STREAM, None).unwrap();
        listener.bind(&socket2::SockAddr::unix(&path).unwrap()).unwrap();
        listener.listen(0).unwrap();
        let mut held = Vec::new();
        while let Ok(s) = connect_unix(&path, Duration::ZERO) {
            held.push(s);
            assert!(held.len() < 64, "the backlog never filled");
        }
        let err = connect_unix(&path, Duration::from_millis(200)).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::TimedOut, "{err}");
        assert!(err.to_string().contains("backlog is full"), "{err}");
        let absent = Client::connect(&Transport::Unix(dir.path().join("absent.sock"))).err().unwrap();
        assert!(format!("{absent:#}").contains("is the router running?"), "{absent:#}");
    }

    #[test]
    fn names_on_the_command_line() {
        assert_eq!(parse_name("/a/b").unwrap().to_string(), "/a/b");
        assert_eq!(parse_name("/").unwrap(), Name::root());
        assert!(format!("{:#}", parse_name("").unwrap_err()).contains("empty (the root is written /)"));
        assert!(format!("{:#}", parse_name("/a%ZZ").unwrap_err()).contains("%XX"));
    }

    #[test]
    fn hash_ports_must_fit_below_port_65536() {
        let err = Client::connect_ports(&"udp://127.0.0.1:65535".parse().unwrap(), 2).err().unwrap();
        assert!(err.to_string().contains("end past port 65535"), "{err:#}");
        Client::connect_ports(&"udp://127.0.0.1:65534".parse().unwrap(), 2).unwrap();
        assert!(crate::test_args::parse::<ClientArgs>(&["t", "--udp-ports", "0"]).is_err());
    }

    #[test]
    fn pipeline_times_out_and_reports_errors() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("fw.sock");
        let listener = UnixListener::bind(&path).unwrap();
        let mut c = Client::connect(&Transport::Unix(path)).unwrap();
        let (peer, _) = listener.accept().unwrap();
        let mut p = Pipeline::new();
        for k in 0..3u8 {
            let mut i = Interest::new(Name::root().append_generic(&[k]));
            i.lifetime_ms = Some(10 * u64::from(k + 1));
            p.express(&mut c, k, i).unwrap();
        }
        assert_eq!(p.len(), 3);
        let mut timed_out = Vec::new();
        while !p.is_empty() {
            for ev in p.poll(&mut c, Instant::now() + Duration::from_secs(5)).unwrap() {
                match ev {
                    Event::Timeout(k) => timed_out.push(k),
                    other => panic!("{other:?}"),
                }
            }
        }
        timed_out.sort();
        assert_eq!(timed_out, vec![0, 1, 2]);
        drop(peer);
        let err = c.recv(Instant::now() + Duration::from_secs(5)).unwrap_err();
        assert!(format!("{err:#}").contains("closed the connection"), "{err:#}");
        assert!(Client::connect(&Transport::Unix(dir.path().join("none"))).is_err());
    }
}
