//! What a face does with one received link packet before the engine sees it:
//! pass it through untouched, or feed it to the face's reassembler when it is an
//! NDNLPv2 fragment.
//!
//! Only fragments are decoded here. Every other packet goes to the engine as the
//! bytes that arrived, because the engine decodes it anyway and a second decode (or a
//! re-encode) per packet would cost the fast path for nothing.

use std::time::Instant;

use bytes::Bytes;
use trajan_wire::tlv::{frame_len, read_header, read_nonneg};
use trajan_wire::types::{DATA, INTEREST, LP_FRAGMENT, LP_FRAG_COUNT, LP_PACKET};
use trajan_wire::LpPacket;

use crate::reassembly::Reassembler;
use crate::MAX_FRAME_SIZE;

/// The fate of one received link packet.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Inbound {
    /// Hand this packet to the engine.
    Deliver(Bytes),
    /// A fragment was stored; the packet is not complete yet.
    Pending,
    /// A fragment was malformed or contradicted its siblings; count it.
    Drop,
}

/// Classifies a packet that is already known to be exactly one TLV element;
/// `room` is the most the face's reassembler may hold ([`Reassembler::accept`]).
pub(crate) fn classify(wire: Bytes, reassembler: &mut Reassembler, now: Instant, room: usize) -> Inbound {
    if !is_fragment(&wire) {
        return Inbound::Deliver(wire);
    }
    let Ok(lp) = LpPacket::decode(&wire) else {
        return Inbound::Drop;
    };
    match reassembler.accept(lp, now, room) {
        Ok(Some(packet)) => Inbound::Deliver(packet),
        Ok(None) => Inbound::Pending,
        Err(e) => {
            tracing::trace!(error = %e, "fragment dropped");
            Inbound::Drop
        }
    }
}

/// Is this datagram exactly one element no larger than a face carries, and a
/// packet the engine decodes — an Interest, a Data or an NDNLPv2 LpPacket?
/// Only the outer header is read: a UDP face is made or kept alive only for
/// such a datagram, because any other TLV element (`01 00` is one) would let a
/// sender hold a face, up to the face limit, with bytes the engine throws away.
pub(crate) fn is_one_network_packet(wire: &[u8]) -> bool {
    let mut pos = 0;
    frame_len(wire, MAX_FRAME_SIZE) == Ok(Some(wire.len())) && matches!(read_header(wire, &mut pos), Ok((INTEREST | DATA | LP_PACKET, _, _)))
}

/// [`is_one_network_packet`] of a stream frame, which its framing already
/// found to be exactly one element within [`MAX_FRAME_SIZE`]: only the type
/// is left to read, and the three types are one byte each. Asked of every
/// frame, on the I/O thread.
pub(crate) fn is_network_packet_frame(frame: &[u8]) -> bool {
    matches!(frame.first().map(|&t| u32::from(t)), Some(INTEREST | DATA | LP_PACKET))
}

/// Does this LpPacket carry FragCount > 1? Scans the header fields without decoding
/// them; anything unparsable is left for the engine's full decoder to reject.
pub(crate) fn is_fragment(wire: &[u8]) -> bool {
    let mut pos = 0;
    let Ok((LP_PACKET, start, end)) = read_header(wire, &mut pos) else {
        return false;
    };
    let fields = &wire[start..end];
    let mut pos = 0;
    while pos < fields.len() {
        let Ok((typ, vstart, vend)) = read_header(fields, &mut pos) else {
            return false;
        };
        match typ {
            LP_FRAG_COUNT => return read_nonneg(&fields[vstart..vend]).is_ok_and(|c| c > 1),
            LP_FRAGMENT => return false,
            _ => {}
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reassembly::MAX_HELD_PER_FACE;
    use trajan_wire::lp::LpHeaders;
    use trajan_wire::{Interest, Name};

    fn encode(lp: &LpPacket) -> Bytes {
        let mut out = Vec::new();
        lp.encode_into(&mut out);
        Bytes::from(out)
    }

    proptest::proptest! {
        /// On what stream framing lets through (one whole element within the
        /// limit), the frame's type test answers as the datagram's full check.
        #[test]
        fn a_frames_type_test_agrees_with_the_full_check(typ in proptest::prop_oneof![0u32..300, proptest::sample::select(vec![INTEREST, DATA, LP_PACKET])], value in proptest::collection::vec(proptest::num::u8::ANY, 0..300)) {
            let mut wire = Vec::new();
            trajan_wire::tlv::write_tlv(&mut wire, typ, &value);
            if frame_len(&wire, MAX_FRAME_SIZE) == Ok(Some(wire.len())) {
                proptest::prop_assert_eq!(is_network_packet_frame(&wire), is_one_network_packet(&wire), "type {}", typ);
            }
        }
    }

    #[test]
    fn unfragmented_packets_pass_through_as_received() {
        let interest = Interest::new("/a/b".parse::<Name>().unwrap()).encode();
        let mut r = Reassembler::new();
        let now = Instant::now();
        assert_eq!(classify(interest.clone(), &mut r, now, MAX_HELD_PER_FACE), Inbound::Deliver(interest.clone()));
        let wrapped = LpPacket::wrap(&interest, &LpHeaders { pit_token: Some(Bytes::from_static(b"t")), ..Default::default() });
        assert_eq!(classify(wrapped.clone(), &mut r, now, MAX_HELD_PER_FACE), Inbound::Deliver(wrapped));
        // FragCount 1 is not a fragment either: no re-encoding.
        let single = encode(&LpPacket { sequence: Some(9), frag_index: Some(0), frag_count: Some(1), fragment: Some(interest), ..Default::default() });
        assert_eq!(classify(single.clone(), &mut r, now, MAX_HELD_PER_FACE), Inbound::Deliver(single));
    }

    #[test]
    fn fragments_are_reassembled() {
        let interest = Interest::new("/frag/me".parse::<Name>().unwrap()).encode();
        let (head, tail) = interest.split_at(5);
        let mut r = Reassembler::new();
        let now = Instant::now();
        let piece = |i: u64, b: &[u8]| {
            encode(&LpPacket { sequence: Some(40 + i), frag_index: Some(i), frag_count: Some(2), fragment: Some(Bytes::copy_from_slice(b)), ..Default::default() })
        };
        assert_eq!(classify(piece(1, tail), &mut r, now, MAX_HELD_PER_FACE), Inbound::Pending);
        assert_eq!(classify(piece(0, head), &mut r, now, MAX_HELD_PER_FACE), Inbound::Deliver(interest.clone()));
    }

    #[test]
    fn undecodable_fragment_is_dropped() {
        // FragCount 2 with FragIndex 5: the codec rejects it.
        let mut fields = Vec::new();
        trajan_wire::tlv::write_nonneg(&mut fields, trajan_wire::types::LP_FRAG_INDEX, 5);
        trajan_wire::tlv::write_nonneg(&mut fields, LP_FRAG_COUNT, 2);
        trajan_wire::tlv::write_tlv(&mut fields, LP_FRAGMENT, &[1, 2]);
        let mut wire = Vec::new();
        trajan_wire::tlv::write_tlv(&mut wire, LP_PACKET, &fields);
        assert_eq!(classify(Bytes::from(wire), &mut Reassembler::new(), Instant::now(), MAX_HELD_PER_FACE), Inbound::Drop);
    }
}
