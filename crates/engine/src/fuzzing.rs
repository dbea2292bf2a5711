//! The forwarder under arbitrary bytes, for the `forwarder` fuzz target
//! (`fuzz/`) and the corpus replay test (`tests/corpus.rs`), as
//! `trajan_wire::fuzzing` does for the codecs. Where that module checks each
//! codec alone, this one sends what the fuzzer makes of packets through the
//! whole engine: its own burst decoder, the tables, the strategies and the
//! timers, with the clock moving and faces known and unknown.
//!
//! The input is read as a sequence of packets, each a header byte, a length
//! and that many bytes (fewer at the end of the input). The header byte picks
//! the face (the low three bits), whether the clock moves first (bit 7, by
//! the next byte times 16 ms, so lifetimes run out), whether the burst ends
//! after this packet (bit 6), a two-byte length instead of one (bit 5), and
//! whether the CS's capacity changes (bit 4, to the next byte modulo one
//! more than its largest, before the burst runs, as management changes it
//! between bursts).
//!
//! Rejecting packets is fine; the checks panic on purpose, so nothing on a
//! forwarding path may call them. They are what holds whatever arrives: every
//! packet sent decodes and goes to a known face, no packet is counted twice,
//! the tables stay within their capacities, and once every lifetime has
//! passed the PIT is empty.

use bytes::Bytes;
use trajan_wire::fuzzing::Check;
use trajan_wire::{Data, Interest, LpPacket, Name};

use crate::{EngineConfig, FaceId, FaceMeta, Forwarder, Outgoing, StrategyKind};

/// Every fuzz target of this crate by name (the name of its
/// `fuzz/fuzz_targets/*.rs` file and its `fuzz/corpus/*` folder), with its check.
pub const TARGETS: &[(&str, Check)] = &[("forwarder", forwarder)];

/// Faces the header byte picks from: consumers, producers, a local app whose
/// NextHopFaceId is obeyed, a multi-access face, and two ids no face has.
const FACES: [FaceId; 8] = [300, 301, 400, 401, 500, 600, 999, 0];
const KNOWN: usize = 6;
const CS_CAPACITY: usize = 8;
const PIT_CAPACITY: usize = 32;
/// Small, so that the list also runs full and drops its oldest Nonces.
const DEAD_NONCE_CAPACITY: usize = 16;
/// A burst ends here even if no header byte said so (the engine's own size).
const MAX_BURST: usize = 64;

fn forwarder_under_test() -> Forwarder {
    // In region /a/r: a hint of /a or /a/r arrives, and loses its hint.
    let region = "/a/r".parse::<Name>().expect("static name");
    let cfg = EngineConfig {
        cs_capacity: CS_CAPACITY,
        pit_capacity: PIT_CAPACITY,
        dead_nonce_capacity: DEAD_NONCE_CAPACITY,
        network_regions: vec![region],
        ..Default::default()
    };
    let mut f = Forwarder::new(&cfg, 0);
    for &id in &FACES[..KNOWN] {
        let local = id == 500;
        f.add_face(id, FaceMeta { local, local_fields: local, point_to_point: id != 600, ..Default::default() });
    }
    let route = |uri: &str| uri.parse::<Name>().expect("static name");
    f.fib.add_nexthop(&route("/"), 400, 10);
    f.fib.add_nexthop(&route("/a"), 401, 10);
    f.fib.add_nexthop(&route("/a/b"), 400, 20);
    f.fib.add_nexthop(&route("/a/b"), 600, 10);
    f.fib.add_nexthop(&route("/localhost/x"), 500, 0);
    f.strategies.insert(&route("/m"), StrategyKind::Multicast);
    // Dynamic under /a/b, whose two next hops it draws between.
    f.strategies.insert(&route("/a/b"), StrategyKind::Dynamic);
    f
}

/// Runs arbitrary bytes through a forwarder (see the module documentation).
pub fn forwarder(bytes: &[u8]) {
    let mut f = forwarder_under_test();
    let (mut now, mut at, mut from_known, mut capacity) = (0u64, 0usize, 0u64, CS_CAPACITY);
    let mut burst: Vec<(FaceId, Bytes)> = Vec::new();
    let mut out = Vec::new();
    while at < bytes.len() {
        let header = bytes[at];
        at += 1;
        if header & 0x80 != 0 {
            now += u64::from(bytes.get(at).copied().unwrap_or(0)) * 16;
            at += 1;
        }
        if header & 0x10 != 0 {
            capacity = usize::from(bytes.get(at).copied().unwrap_or(0)) % (CS_CAPACITY + 1);
            at += 1;
        }
        let len = if header & 0x20 != 0 {
            let len = bytes.get(at..at + 2).map_or(0, |b| usize::from(u16::from_be_bytes([b[0], b[1]])));
            at += 2;
            len
        } else {
            let len = bytes.get(at).map_or(0, |b| usize::from(*b));
            at += 1;
            len
        };
        let end = (at + len).min(bytes.len());
        let face = FACES[usize::from(header & 0x07)];
        from_known += u64::from(f.faces.get(face).is_some());
        burst.push((face, Bytes::copy_from_slice(bytes.get(at..end).unwrap_or(&[]))));
        at = end;
        if header & 0x40 != 0 || burst.len() == MAX_BURST || at >= bytes.len() {
            f.pcct.cs.set_capacity(capacity);
            f.tick(now);
            out.clear();
            f.process_burst(now, &mut burst, &mut out);
            burst.clear();
            check(&f, &out, from_known);
            assert!(f.pcct.cs.len() <= capacity, "{} packets cached at a capacity of {capacity}", f.pcct.cs.len());
        }
    }
    f.tick(u64::MAX);
    assert_eq!(f.pcct.pit.len(), 0, "pending Interests outlived every lifetime");
    assert_eq!(f.measurements.pending_total(), 0, "the dynamic strategy still counts Interests that ended");
    assert_eq!(f.next_deadline(), None);
}

/// What must hold after every burst (`from_known`: packets received so far from
/// faces the forwarder knows).
fn check(f: &Forwarder, out: &[Outgoing], from_known: u64) {
    for o in out {
        assert!(f.faces.get(o.face).is_some(), "sent to face {}, which the forwarder does not know", o.face);
        let lp = LpPacket::decode(&o.pkt).expect("a packet sent decodes");
        let frag = lp.fragment.expect("a packet sent carries a network packet");
        assert!(Interest::decode(&frag).is_ok() || Data::decode(&frag).is_ok(), "a packet sent is an Interest, a Nack or a Data");
    }
    let c = &f.counters;
    let counted = c.packets.in_interests + c.packets.in_data + c.packets.in_nacks + c.malformed;
    assert!(counted <= from_known, "{counted} packets counted of {from_known} received from known faces");
    assert!(f.pcct.cs.len() <= CS_CAPACITY);
    assert!(f.pcct.pit.len() <= PIT_CAPACITY);
    assert!(f.pcct.pit.extra_in_records() <= PIT_CAPACITY);
}
