//! Self-consistency checks of every codec, used by the fuzz targets (`fuzz/`) and the
//! corpus regression test (`tests/corpus.rs`), so that a plain `cargo test` on stable
//! Rust replays every input the fuzzer found interesting.
//!
//! Each check takes arbitrary bytes. Rejecting them is fine; panicking while decoding
//! them is a bug. When they decode, the check re-encodes, decodes again and asserts
//! that the codec agrees with itself: those assertions are where real bugs show up.
//! They panic on purpose, so nothing on a forwarding path may call them.

use std::fs;
use std::net::Ipv4Addr;
use std::panic::catch_unwind;
use std::path::{Path, PathBuf};

use bytes::Bytes;

use crate::augustus::{self, Ipv4Header, Packet};
use crate::data::DataBuilder;
use crate::mgmt::ControlParameters;
use crate::tlv::{first_type, frame_len, read_header, tlv_len, write_tlv, TlvReader};
use crate::types::{DATA, INTEREST, SIGNATURE_DIGEST_SHA256};
use crate::{Data, Interest, LpPacket, Name, WireError, MAX_PACKET_SIZE};

/// A check: accepts any bytes, panics only when a codec contradicts itself.
pub type Check = fn(&[u8]);

/// Replays the committed corpus of `targets` (`root/<target>/*`, the folders
/// cargo-fuzz keeps) through their checks, for the corpus tests of this
/// crate, trajan-engine, trajan-io and trajan-router, whose targets lie beside
/// these. Returns the inputs whose check panicked. Panics when a target has no
/// seed inputs: the fuzzer would start from nothing, and the test would replay
/// nothing.
pub fn replay(root: &Path, targets: &[(&str, Check)]) -> Vec<PathBuf> {
    let mut failures = Vec::new();
    for (target, check) in targets {
        let dir = root.join(target);
        let files: Vec<PathBuf> = fs::read_dir(&dir).map(|d| d.filter_map(|f| f.ok().map(|f| f.path())).collect()).unwrap_or_default();
        assert!(!files.is_empty(), "fuzz target {target} has no seed inputs in {}", dir.display());
        for path in files {
            let bytes = fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            if catch_unwind(|| check(&bytes)).is_err() {
                failures.push(path);
            }
        }
    }
    failures
}

/// Every fuzz target by name (the name of its `fuzz/fuzz_targets/*.rs` file and of
/// its `fuzz/corpus/*` folder) with the check it runs.
pub const TARGETS: &[(&str, Check)] = &[
    ("interest", interest),
    ("data", data),
    ("lp", lp),
    ("name", name),
    ("augustus", augustus),
    ("tlv_frame", tlv_frame),
    ("mgmt_control_parameters", mgmt_control_parameters),
];

/// Interest: decode, re-encode, decode again; the two decodings must be equal and
/// encoding must be a fixed point from then on.
pub fn interest(bytes: &[u8]) {
    let Ok(i) = Interest::decode(&Bytes::copy_from_slice(bytes)) else { return };
    let wire = i.encode();
    assert_eq!(wire.len(), i.encoded_len(), "encoded_len disagrees with encode");
    let again = Interest::decode(&wire).expect("a re-encoded Interest must decode");
    assert_eq!(again, i);
    assert_eq!(again.encode(), wire);
    check_name(&i.name);
}

/// Data: the decoded fields must survive being rebuilt by [`DataBuilder`] and decoded
/// again, and the derived full name must end in the packet's digest.
pub fn data(bytes: &[u8]) {
    let wire = Bytes::copy_from_slice(bytes);
    let Ok(d) = Data::decode(&wire) else { return };
    assert_eq!(*d.wire(), wire);
    check_name(d.name());
    let full = d.full_name();
    assert_eq!(full.prefix(d.name().len()), *d.name());
    assert_eq!(full.implicit_digest(), Some(&d.implicit_digest()[..]));
    if let Some(f) = &d.final_block_id {
        let n = Name::from_value(f.clone()).expect("FinalBlockId was validated");
        assert_eq!(n.len(), 1);
    }
    let mut builder = DataBuilder::new(d.name().clone()).content_type(d.content_type);
    if let Some(ms) = d.freshness_ms {
        builder = builder.freshness_ms(ms);
    }
    let rebuilt = Data::decode(&builder.build(d.content())).expect("a rebuilt Data must decode");
    assert_eq!(rebuilt.name(), d.name());
    assert_eq!(rebuilt.content(), d.content());
    assert_eq!(rebuilt.content_type, d.content_type);
    assert_eq!(rebuilt.freshness_ms, d.freshness_ms);
    assert_eq!(rebuilt.signature_type, SIGNATURE_DIGEST_SHA256);
}

/// NDNLPv2: decode, re-encode, decode again; and a network packet wrapped with the
/// decoded headers must come back with the same headers.
pub fn lp(bytes: &[u8]) {
    let Ok(p) = LpPacket::decode(&Bytes::copy_from_slice(bytes)) else { return };
    let mut out = Vec::new();
    p.encode_into(&mut out);
    let out = Bytes::from(out);
    let again = LpPacket::decode(&out).expect("a re-encoded LpPacket must decode");
    assert_eq!(again, p);
    let mut twice = Vec::new();
    again.encode_into(&mut twice);
    assert_eq!(twice, out);
    if let Some(f) = &p.fragment {
        let first = first_type(f);
        if matches!(first, Ok(Some(INTEREST | DATA))) {
            let wrapped = LpPacket::decode(&LpPacket::wrap(f, &p.headers)).expect("a wrapped packet must decode");
            assert_eq!(wrapped.headers, p.headers);
            assert_eq!(wrapped.fragment.as_ref(), Some(f));
        }
    }
}

/// Name: the bytes as a Name TLV-VALUE, and as a URI when they are UTF-8.
pub fn name(bytes: &[u8]) {
    if let Ok(n) = Name::from_value(Bytes::copy_from_slice(bytes)) {
        check_name(&n);
    }
    if let Ok(Ok(n)) = std::str::from_utf8(bytes).map(str::parse::<Name>) {
        check_name(&n);
    }
}

/// Everything a valid name must satisfy: wire and URI round trips, and component
/// and prefix views that agree with each other.
fn check_name(n: &Name) {
    assert_eq!(Name::from_value(Bytes::copy_from_slice(n.value())).as_ref(), Ok(n));
    assert_eq!(Name::from_wire(&Bytes::from(n.to_wire())).as_ref(), Ok(n));
    let uri = n.to_string();
    assert_eq!(uri.parse::<Name>().as_ref(), Ok(n), "URI {uri} does not round-trip");
    let mut joined = Vec::with_capacity(n.value().len());
    for i in 0..n.len() {
        joined.extend_from_slice(n.component_wire(i));
        assert_eq!(n.component_end(i), joined.len());
        let p = n.prefix(i + 1);
        assert_eq!(p.len(), i + 1);
        assert!(p.is_prefix_of(n));
        assert_eq!(p.last(), Some(n.get(i)));
    }
    assert_eq!(joined, n.value());
    let rebuilt = Name::from_components(n.components().map(|c| (c.typ, c.value)));
    assert_eq!(&rebuilt, n, "component headers must be in their shortest form");
}

/// Augustus: decoding is strict, so re-encoding must give the very same bytes; the
/// NDN name must map back to the same Augustus name; the IPv4 path is tried on the
/// bytes as given and with the IPv4 checksum repaired, so the fuzzer reaches the
/// ICN payload behind it.
pub fn augustus(bytes: &[u8]) {
    let wire = Bytes::copy_from_slice(bytes);
    if let Ok(p) = Packet::decode(&wire) {
        assert_eq!(p.encode(), wire, "a decoded Augustus packet must re-encode byte for byte");
        check_augustus(&p);
    }
    let ihl = bytes.first().map_or(0, |b| (b & 0x0f) as usize * 4);
    let mut repaired = bytes.to_vec();
    if ihl >= augustus::IPV4_HEADER_LEN && ihl <= repaired.len() {
        repaired[10..12].fill(0);
        let sum = augustus::internet_checksum(&repaired[..ihl]);
        repaired[10..12].copy_from_slice(&sum.to_be_bytes());
    }
    for datagram in [wire, Bytes::from(repaired)] {
        if let Ok((ip, p)) = Packet::decode_ipv4(&datagram) {
            check_augustus(&p);
            assert_eq!(Packet::decode_ipv4(&p.encode_ipv4(&ip)), Ok((ip, p)));
        }
    }
}

fn check_augustus(p: &Packet) {
    assert_eq!(Packet::decode(&p.encode()).as_ref(), Ok(p));
    let n = p.name();
    assert_eq!(n.len(), p.component_count());
    check_name(&n);
    let back = Packet::from_name(p.kind, &n, p.payload().clone()).expect("an Augustus name has an Augustus form");
    assert_eq!(back.raw_name(), p.raw_name());
    let ip = Ipv4Header::new(Ipv4Addr::new(192, 0, 2, 1), Ipv4Addr::new(192, 0, 2, 2), 64);
    assert_eq!(Packet::decode_ipv4(&p.encode_ipv4(&ip)).as_ref(), Ok(&(ip, p.clone())));
}

/// TLV framing: [`frame_len`] must agree with [`TlvReader`] on where elements end,
/// and every element read must re-encode to one that reads back the same.
pub fn tlv_frame(bytes: &[u8]) {
    let mut pos = 0;
    let header = read_header(bytes, &mut pos);
    match frame_len(bytes, MAX_PACKET_SIZE) {
        Ok(Some(n)) => {
            let mut r = TlvReader::new(Bytes::copy_from_slice(&bytes[..n]));
            let e = r.read().expect("frame_len announced a whole element");
            assert!(r.is_empty());
            assert_eq!(e.wire.len(), n);
        }
        Ok(None) => assert_eq!(header, Err(WireError::Truncated), "frame_len waits, the reader must too"),
        Err(WireError::TooLarge) => {}
        Err(e) => assert_eq!(header, Err(e), "frame_len and the reader disagree on a corrupt header"),
    }
    let buf = Bytes::copy_from_slice(bytes);
    let mut r = TlvReader::new(buf.clone());
    let mut consumed = 0;
    while !r.is_empty() {
        let peeked = first_type(&r.rest());
        let Ok(e) = r.read() else {
            assert_eq!(r.rest().len(), buf.len() - consumed, "a failed read must not advance");
            break;
        };
        assert_eq!(peeked, Ok(Some(e.typ)));
        assert_eq!(&buf[consumed..consumed + e.wire.len()], &e.wire[..]);
        assert!(e.wire.ends_with(&e.value));
        consumed += e.wire.len();
        assert_eq!(r.rest().len(), buf.len() - consumed);
        if e.wire.len() <= MAX_PACKET_SIZE {
            assert_eq!(frame_len(&e.wire, MAX_PACKET_SIZE), Ok(Some(e.wire.len())));
        }
        let mut out = Vec::new();
        write_tlv(&mut out, e.typ, &e.value);
        assert_eq!(out.len(), tlv_len(e.typ, e.value.len()));
        let re = TlvReader::new(Bytes::from(out)).read().expect("a re-encoded element must read");
        assert_eq!((re.typ, &re.value), (e.typ, &e.value));
    }
}

/// NFD ControlParameters: decode, re-encode, decode again, equal.
pub fn mgmt_control_parameters(bytes: &[u8]) {
    let Ok(p) = ControlParameters::decode(&Bytes::copy_from_slice(bytes)) else { return };
    let wire = Bytes::from(p.encode());
    let again = ControlParameters::decode(&wire).expect("re-encoded ControlParameters must decode");
    assert_eq!(again, p);
    assert_eq!(again.encode(), wire);
    if let Some(n) = &p.name {
        check_name(n);
    }
}
