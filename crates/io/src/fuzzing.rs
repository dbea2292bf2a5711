//! The I/O shell's own decoding under arbitrary bytes, for the `dispatch_key`,
//! `inbound`, `framing` and `datagram` fuzz targets (`fuzz/`) and the corpus
//! replay test (`tests/corpus.rs`), as `trajan_wire::fuzzing` does for the codecs.
//!
//! `dispatch_key`: sharding rests on one promise: every packet of an exchange reaches the
//! worker that owns its name. [`crate::dispatch_key`] reads the name off the
//! wire without decoding the packet, so the check holds it to the decoders:
//! whatever packet the engine would decode as an Interest (or the Interest of a
//! Nack) or a Data, its key is the CRC32C of the decoded name's first
//! components, as many as the key takes and up to an implicit digest. A
//! packet the decoders reject may have any key or none; it is counted as
//! malformed wherever it goes.
//!
//! `inbound`: what faces do with received packets before the engine sees them
//! (pass them through, or reassemble NDNLPv2 fragments), for three faces
//! sharing one reassembly budget, with the clock moving. The input is read as
//! packets, each a header byte (bits 0–1: the face; bit 7: the clock moves
//! first, by the next byte times 8 ms), a two-byte length and that many bytes.
//! Whatever arrives, the faces hold no more than the budget together and their
//! bound each, the budget's count is what they hold, a packet that is not a
//! fragment passes unchanged, a reassembled one is one element no larger than
//! a face may carry, and once every piece has timed out nothing is held.
//!
//! `framing`: how a TCP or Unix stream face cuts the bytes a peer sends into
//! packets. The first input byte seeds the sizes of the reads (1 byte to 4 KiB
//! each, as a peer's writes may arrive); the rest is the stream. Whatever the
//! bytes and however they are split, the frames are those of the whole stream
//! read at once, each one whole element no larger than a face may carry, in the
//! stream's order, and a stream that can never be resynchronised is reported
//! at the same frame.
//!
//! `datagram`: how the UDP side of a shell ([`Io`]) turns datagrams into faces
//! and packets when more sources want a face than it may hold: 8 sources on
//! 127.0.0.1 (ports 40000 to 40007, the last one's face made by management
//! before the first datagram) and a table of 4 faces, which give way to a new
//! peer after 1 s idle and time out after 3 s, with the clock moving and the
//! idle sweep of the poll loop running between datagrams. The input is read as
//! `inbound` reads it, the header byte saying: bits 0–2, the source; bit 3,
//! the datagram was larger than a face takes; bit 6, the sweep runs first; bit
//! 7, the clock moves first, by the next byte times 16 ms. After every
//! datagram the faces are exactly those the events reported, at most 4, each
//! found under its source; a datagram that is not exactly one Interest, Data
//! or LpPacket makes no face and renews none; a new peer at the limit takes
//! the place of the face a peer opened that has been idle longest, if that is
//! 1 s, and is refused and counted otherwise; a face is up once under an id
//! never used before and down only while up; the engine gets exactly each
//! datagram's packet, or a packet reassembled from fragments, on its face; each
//! datagram counts once, on its face or in the shell's drops; the sweep closes
//! exactly the faces idle 3 s, and afterwards holds no fragment older than the
//! reassembly timeout; and the faces hold no more than the reassembly budget.

use std::collections::{HashMap, HashSet};
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use bytes::Bytes;
use trajan_wire::fuzzing::Check;
use trajan_wire::tlv::frame_len;
use trajan_wire::types::IMPLICIT_SHA256_DIGEST;
use trajan_wire::{Data, Interest, LpPacket, Name};

use trajan_wire::WireError;

use crate::dispatch_key::{name_keys, DISPATCH_COMPONENTS};
use crate::framing::FrameBuffer;
use crate::inbound::{classify, is_fragment, is_one_network_packet, Inbound};
use crate::reassembly::{Budget, Reassembler, MAX_HELD_PER_FACE, REASSEMBLY_TIMEOUT};
use crate::{Datagram, FaceId, FaceKind, Io, IoConfig, IoEvent, IoStats, Persistency, MAX_FRAME_SIZE};

/// Every fuzz target of this crate by name (the name of its
/// `fuzz/fuzz_targets/*.rs` file and its `fuzz/corpus/*` folder), with its check.
pub const TARGETS: &[(&str, Check)] = &[("dispatch_key", dispatch_key), ("inbound", inbound), ("framing", framing), ("datagram", datagram)];

/// The reassembly budget of the `inbound` and `datagram` targets: small, so
/// that an input of a few kilobytes (the fuzzer's) makes the faces compete for it.
const REASSEMBLY_BUDGET: usize = 4096;

/// The `datagram` target's sources, the last one management's (see the module
/// documentation): twice the faces the table holds, so that they compete.
const DATAGRAM_SOURCES: u8 = 8;

/// The `datagram` target's face limit.
const DATAGRAM_MAX_FACES: usize = 4;

/// How long a face in the `datagram` target must be idle to give way to a new peer.
const DATAGRAM_EVICT_IDLE: Duration = Duration::from_secs(1);

/// How long a face in the `datagram` target may be idle before the sweep closes it.
const DATAGRAM_UDP_IDLE: Duration = Duration::from_secs(3);

/// The `datagram` target's clock step: the clock only moves by multiples of
/// it, which never add up to exactly one of the times above or the
/// reassembly timeout, so the instant between management making its face and
/// the clock starting cannot tip a comparison.
const DATAGRAM_TICK: Duration = Duration::from_millis(16);

/// The records a fuzz input is read as by the `inbound` and `datagram`
/// targets: a header byte; when its bit 7 is set, a byte saying how far the
/// clock moves (else 0); a two-byte length; and that many bytes, or what is left.
fn records(bytes: &[u8]) -> impl Iterator<Item = (u8, u8, &[u8])> {
    let mut at = 0usize;
    std::iter::from_fn(move || {
        let header = *bytes.get(at)?;
        at += 1;
        let mut ticks = 0;
        if header & 0x80 != 0 {
            ticks = bytes.get(at).copied().unwrap_or(0);
            at += 1;
        }
        let len = bytes.get(at..at + 2).map_or(0, |b| usize::from(u16::from_be_bytes([b[0], b[1]])));
        at += 2;
        let end = (at + len).min(bytes.len());
        let body = bytes.get(at..end).unwrap_or(&[]);
        at = end;
        Some((header, ticks, body))
    })
}

/// The dispatch key agrees with the decoders (see the module documentation).
pub fn dispatch_key(bytes: &[u8]) {
    let keys = name_keys(bytes);
    let Ok(lp) = LpPacket::decode(&Bytes::copy_from_slice(bytes)) else { return };
    // A fragment of a larger packet is dispatched once reassembled.
    let whole = !lp.is_fragmented();
    let Some(fragment) = lp.fragment.filter(|_| whole) else { return };
    let (interest, name) = match Interest::decode(&fragment) {
        Ok(i) => (true, i.name),
        Err(_) => match Data::decode(&fragment) {
            Ok(d) => (false, d.name().clone()),
            Err(_) => return,
        },
    };
    let keys = keys.unwrap_or_else(|| panic!("no dispatch key for a packet that decodes, named {name}"));
    assert_eq!(keys.interest, interest, "{name}: Interest or Data");
    assert_eq!((keys.hashed, keys.key()), expected(&name), "{name}: the key of another name");
}

/// How many components of `name` the key hashes, and the key.
fn expected(name: &Name) -> (usize, u32) {
    let mut key = 0;
    let hashed = (0..name.len()).take(DISPATCH_COMPONENTS).take_while(|&i| name.get(i).typ != IMPLICIT_SHA256_DIGEST).count();
    for i in 0..hashed {
        key = crc32c::crc32c_append(key, name.component_wire(i));
    }
    (hashed, key)
}

/// Faces' inbound handling with a shared budget (see the module documentation).
pub fn inbound(bytes: &[u8]) {
    let mut faces: Vec<Reassembler> = (0..3).map(|_| Reassembler::new()).collect();
    let mut budget = Budget::new(REASSEMBLY_BUDGET);
    let mut now = Instant::now();
    for (header, ticks, body) in records(bytes) {
        now += Duration::from_millis(u64::from(ticks) * 8);
        let pkt = Bytes::copy_from_slice(body);
        // What a face hands on: exactly one element (the driver drops the rest).
        if frame_len(&pkt, MAX_FRAME_SIZE) != Ok(Some(pkt.len())) {
            continue;
        }
        let face = &mut faces[usize::from(header & 0x03) % 3];
        let fragment = is_fragment(&pkt);
        match budget.with(face, |r, room| classify(pkt.clone(), r, now, room)) {
            Inbound::Deliver(out) if !fragment => assert_eq!(out, pkt, "a packet that is not a fragment passes unchanged"),
            // Whatever element the pieces form (an Interest, a Data, or garbage
            // for the engine to count as malformed), with fragment 0's headers.
            Inbound::Deliver(out) => assert_eq!(frame_len(&out, MAX_FRAME_SIZE), Ok(Some(out.len())), "a reassembled packet is one element a face may carry"),
            Inbound::Pending => assert!(fragment, "only a fragment waits"),
            Inbound::Drop => {}
        }
        assert_eq!(budget.held(), faces.iter().map(Reassembler::held).sum::<usize>(), "the budget counts what the faces hold");
        assert!(budget.held() <= REASSEMBLY_BUDGET, "{} bytes held of {REASSEMBLY_BUDGET}", budget.held());
        assert!(faces.iter().all(|r| r.held() <= MAX_HELD_PER_FACE));
    }
    for r in &mut faces {
        budget.with(r, |r, _| r.expire(now + REASSEMBLY_TIMEOUT));
    }
    assert_eq!(budget.held(), 0, "pieces outlived their timeout");
}

/// A stream face's framing under any split of any bytes (see the module documentation).
pub fn framing(bytes: &[u8]) {
    let Some((&seed, stream)) = bytes.split_first() else { return };
    let whole = frames_of(stream, std::iter::repeat(usize::MAX));
    // Read sizes from a xorshift of the seed: 1 byte to 4 KiB each.
    let mut x = u32::from(seed) | 0x100;
    let sizes = std::iter::repeat_with(move || {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        ((x as usize % 4096) >> (x % 12)).max(1)
    });
    let split = frames_of(stream, sizes);
    assert_eq!(split, whole, "the frames depend on how the stream was split");
    for frame in &whole.0 {
        assert_eq!(frame_len(frame, MAX_FRAME_SIZE), Ok(Some(frame.len())), "a frame is one element a face may carry");
    }
    assert!(stream.starts_with(&whole.0.concat()), "the frames are the stream's bytes, in order");
}

/// The frames a stream face cuts `stream` into when each read takes at most the
/// next of `sizes` bytes, and the error that ended it, if one did.
fn frames_of(mut stream: &[u8], mut sizes: impl Iterator<Item = usize>) -> (Vec<Bytes>, Option<WireError>) {
    let mut fb = FrameBuffer::new();
    let mut frames = Vec::new();
    loop {
        // As the face does: every complete frame out before the next read.
        loop {
            match fb.next_frame() {
                Ok(Some(frame)) => frames.push(frame),
                Ok(None) => break,
                Err(e) => return (frames, Some(e)),
            }
        }
        if stream.is_empty() {
            return (frames, None);
        }
        let n = sizes.next().unwrap_or(usize::MAX).clamp(1, stream.len());
        let mut src = &stream[..n];
        let read = fb.read_from(&mut src).expect("reading from a slice");
        assert!(read > 0, "a read after the frames were taken out always makes progress");
        stream = &stream[read..];
    }
}

/// The UDP face table under datagrams from competing sources (see the module
/// documentation).
pub fn datagram(bytes: &[u8]) {
    let mut shell = Shell::new();
    for (header, ticks, body) in records(bytes) {
        shell.now += DATAGRAM_TICK * u32::from(ticks);
        if header & 0x40 != 0 {
            shell.sweep();
        }
        let from = source(header);
        let d = match header & 0x08 {
            0 => Datagram { from, data: Some(Bytes::copy_from_slice(body)), len: body.len() },
            _ => Datagram { from, data: None, len: MAX_FRAME_SIZE + 1 + body.len() },
        };
        shell.receive(d);
        shell.agrees();
    }
}

/// The address of the `datagram` target's source that bits 0–2 of `header` pick.
fn source(header: u8) -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], 40_000 + u16::from(header % DATAGRAM_SOURCES)))
}

/// A face as the `datagram` check expects it.
struct Expected {
    id: FaceId,
    /// When it last received an Interest, Data or LpPacket (or was made).
    last_rx: Instant,
    /// Opened by a peer, not by management: it may give way to a new peer.
    peer_made: bool,
}

/// The shell the `datagram` target feeds, and what the check expects of it
/// from the datagrams fed and the events reported.
struct Shell {
    io: Io,
    now: Instant,
    /// Each source's face.
    faces: HashMap<SocketAddr, Expected>,
    /// Every face id ever reported up (or made by management).
    seen: HashSet<FaceId>,
    /// When a fragment last arrived, on any face.
    last_fragment: Option<Instant>,
    events: Vec<IoEvent>,
}

/// The shell's drop counters, to see which one a datagram moved.
fn drops(s: &IoStats) -> [u64; 5] {
    [s.unknown_peer_drops, s.face_limit_drops, s.idle_evictions, s.corrupt_streams, s.stalled_streams]
}

impl Shell {
    fn new() -> Shell {
        let cfg = IoConfig {
            udp_listen: vec![SocketAddr::from(([127, 0, 0, 1], 0))],
            tcp_listen: Vec::new(),
            unix_path: None,
            udp_idle_timeout: DATAGRAM_UDP_IDLE,
            evict_idle: DATAGRAM_EVICT_IDLE,
            max_faces: DATAGRAM_MAX_FACES,
            reassembly_bytes: REASSEMBLY_BUDGET,
            burst: 1,
            ..IoConfig::default()
        };
        let mut io = Io::new(cfg).expect("a UDP socket on loopback");
        let made = source(DATAGRAM_SOURCES - 1);
        let id = io.create_face(&format!("udp4://{made}"), Persistency::OnDemand).expect("a UDP face to loopback").id;
        let now = Instant::now();
        let faces = HashMap::from([(made, Expected { id, last_rx: now, peer_made: false })]);
        Shell { io, now, faces, seen: HashSet::from([id]), last_fragment: None, events: Vec::new() }
    }

    /// Runs the poll loop's sweep: exactly the faces idle for the UDP idle
    /// timeout close, and no fragment outlives the reassembly timeout.
    fn sweep(&mut self) {
        let now = self.now;
        self.events.clear();
        self.io.sweep(now, &mut self.events);
        let mut down: Vec<FaceId> = self.events.iter().map(|e| if let IoEvent::FaceDown(id) = e { *id } else { panic!("the sweep reported {e:?}") }).collect();
        let mut idle: Vec<FaceId> = self.faces.values().filter(|f| now.saturating_duration_since(f.last_rx) >= DATAGRAM_UDP_IDLE).map(|f| f.id).collect();
        down.sort_unstable();
        idle.sort_unstable();
        assert_eq!(down, idle, "the sweep closes exactly the faces idle for the UDP idle timeout");
        self.faces.retain(|_, f| !idle.contains(&f.id));
        if self.last_fragment.is_some_and(|t| now.saturating_duration_since(t) >= REASSEMBLY_TIMEOUT) {
            assert_eq!(self.io.reassembly_held(), 0, "fragments outlived the reassembly timeout");
        }
    }

    /// Feeds one datagram and checks what became of it.
    fn receive(&mut self, d: Datagram) {
        let (now, from, len) = (self.now, d.from, d.len);
        let valid = d.data.clone().filter(|b| is_one_network_packet(b));
        let fragment = valid.as_ref().is_some_and(|b| is_fragment(b));
        if fragment {
            self.last_fragment = Some(now);
        }
        let mut expected = drops(self.io.stats());
        let known = self.faces.get(&from).map(|f| f.id);
        let before = known.and_then(|id| self.io.counters(id)).cloned().unwrap_or_default();
        self.events.clear();
        self.io.on_datagram(0, d, now, &mut self.events);
        // Events come as closed faces, then the new face, then packets.
        let (mut down, mut up, mut packets) = (Vec::new(), Vec::new(), Vec::new());
        for e in &self.events {
            match e {
                IoEvent::FaceDown(id) if up.is_empty() && packets.is_empty() => down.push(*id),
                IoEvent::FaceUp(info) if packets.is_empty() => up.push(info.clone()),
                IoEvent::Packet { face, pkt } => packets.push((*face, pkt.clone())),
                e => panic!("out of place for one datagram: {e:?} in {:?}", self.events),
            }
        }
        let id = match (known, &valid) {
            (Some(id), _) => id,
            (None, None) => {
                assert!(self.events.is_empty(), "a datagram that is not one Interest, Data or LpPacket made a face: {:?}", self.events);
                expected[0] += 1;
                assert_eq!(drops(self.io.stats()), expected, "counted once, as from an unknown peer");
                return;
            }
            (None, Some(_)) => {
                let full = self.faces.len() >= DATAGRAM_MAX_FACES;
                let oldest = self.faces.values().filter(|f| f.peer_made && now.saturating_duration_since(f.last_rx) >= DATAGRAM_EVICT_IDLE).map(|f| f.last_rx).min();
                if full && oldest.is_none() {
                    assert!(self.events.is_empty(), "a refused peer: {:?}", self.events);
                    expected[1] += 1;
                    assert_eq!(drops(self.io.stats()), expected, "counted once, as refused at the face limit");
                    return;
                }
                if full {
                    let [gone] = down[..] else { panic!("a full table closes one face for a new peer: {:?}", self.events) };
                    let (&addr, f) = self.faces.iter().find(|(_, f)| f.id == gone).expect("FaceDown for a face that is up");
                    assert!(f.peer_made && Some(f.last_rx) == oldest, "face {gone} gave way, not the one idle longest of those a peer opened");
                    self.faces.remove(&addr);
                    expected[2] += 1;
                } else {
                    assert!(down.is_empty(), "a face closed though the table had room: {:?}", self.events);
                }
                let [info] = &up[..] else { panic!("a new peer gets one face: {:?}", self.events) };
                assert!(self.seen.insert(info.id), "face {} came up a second time", info.id);
                assert_eq!(info.remote_uri, format!("udp4://{from}"));
                assert!(info.kind == FaceKind::Udp && info.persistency == Persistency::OnDemand);
                self.faces.insert(from, Expected { id: info.id, last_rx: now, peer_made: true });
                info.id
            }
        };
        if known.is_some() {
            assert!(down.is_empty() && up.is_empty(), "a known peer's datagram opened or closed a face: {:?}", self.events);
        }
        assert_eq!(drops(self.io.stats()), expected, "a datagram with a face is counted on the face");
        let after = self.io.counters(id).expect("the datagram's face is up");
        assert_eq!((after.in_packets, after.in_bytes), (before.in_packets + 1, before.in_bytes + len as u64), "counted once on its face");
        let dropped = after.dropped_in - before.dropped_in;
        match valid {
            None => assert!(packets.is_empty() && dropped == 1, "a datagram that is not a packet is dropped and counted: {:?}", self.events),
            Some(pkt) => {
                self.faces.get_mut(&from).expect("the face is known").last_rx = now;
                match &packets[..] {
                    [(face, out)] if !fragment => assert!(*face == id && *out == pkt && dropped == 0, "a packet passes unchanged on its face"),
                    [(face, out)] => {
                        assert!(*face == id && dropped == 0, "a reassembled packet comes on its face");
                        assert_eq!(frame_len(out, MAX_FRAME_SIZE), Ok(Some(out.len())), "a reassembled packet is one element a face may carry");
                    }
                    [] => assert!(fragment && dropped <= 1, "only a fragment waits or is dropped: {:?}", self.events),
                    _ => panic!("one datagram gave several packets: {:?}", self.events),
                }
            }
        }
    }

    /// The shell's faces are those expected, each under its source.
    fn agrees(&self) {
        assert!(self.faces.len() <= DATAGRAM_MAX_FACES);
        assert_eq!(self.io.faces().count(), self.faces.len(), "faces other than those reported");
        for k in 0..DATAGRAM_SOURCES {
            let from = source(k);
            let id = self.faces.get(&from).map(|f| f.id);
            assert_eq!(self.io.udp_face(0, from), id, "the face of {from}");
            if let Some(id) = id {
                assert_eq!(self.io.face(id).map(|f| f.remote_uri.clone()), Some(format!("udp4://{from}")));
            }
        }
        assert!(self.io.reassembly_held() <= REASSEMBLY_BUDGET, "{} bytes held of {REASSEMBLY_BUDGET}", self.io.reassembly_held());
    }
}
