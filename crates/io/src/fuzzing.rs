//! The I/O shell's own decoding under arbitrary bytes, for the `dispatch_key`
//! and `inbound` fuzz targets (`fuzz/`) and the corpus replay test
//! (`tests/corpus.rs`), as `trajan_wire::fuzzing` does for the codecs.
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

use std::time::{Duration, Instant};

use bytes::Bytes;
use trajan_wire::fuzzing::Check;
use trajan_wire::tlv::frame_len;
use trajan_wire::types::IMPLICIT_SHA256_DIGEST;
use trajan_wire::{Data, Interest, LpPacket, Name};

use trajan_wire::WireError;

use crate::dispatch_key::{name_keys, DISPATCH_COMPONENTS};
use crate::framing::FrameBuffer;
use crate::inbound::{classify, is_fragment, Inbound};
use crate::reassembly::{Budget, Reassembler, MAX_HELD_PER_FACE, REASSEMBLY_TIMEOUT};
use crate::MAX_FRAME_SIZE;

/// Every fuzz target of this crate by name (the name of its
/// `fuzz/fuzz_targets/*.rs` file and its `fuzz/corpus/*` folder), with its check.
pub const TARGETS: &[(&str, Check)] = &[("dispatch_key", dispatch_key), ("inbound", inbound), ("framing", framing)];

/// The `inbound` budget: small, so that an input of a few kilobytes (the
/// fuzzer's) makes the faces compete for it.
const INBOUND_BUDGET: usize = 4096;

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
    let mut budget = Budget::new(INBOUND_BUDGET);
    let (mut now, mut at) = (Instant::now(), 0usize);
    while at < bytes.len() {
        let header = bytes[at];
        at += 1;
        if header & 0x80 != 0 {
            now += Duration::from_millis(u64::from(bytes.get(at).copied().unwrap_or(0)) * 8);
            at += 1;
        }
        let len = bytes.get(at..at + 2).map_or(0, |b| usize::from(u16::from_be_bytes([b[0], b[1]])));
        at += 2;
        let end = (at + len).min(bytes.len());
        let pkt = Bytes::copy_from_slice(bytes.get(at..end).unwrap_or(&[]));
        at = end;
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
        assert!(budget.held() <= INBOUND_BUDGET, "{} bytes held of {INBOUND_BUDGET}", budget.held());
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
