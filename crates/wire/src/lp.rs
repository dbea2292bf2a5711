//! NDNLPv2 link protocol (the subset a forwarder needs): the LpPacket envelope with
//! Fragment, Sequence/FragIndex/FragCount, Nack, PitToken, IncomingFaceId,
//! NextHopFaceId, CachePolicy and CongestionMark.
//!
//! Unknown header fields are ignored when NDNLPv2 marks them ignorable and rejected
//! otherwise. A bare Interest or Data (no LpPacket) decodes as an LpPacket with no
//! headers, so faces handle both the same way.

use bytes::Bytes;

use crate::error::WireError;
use crate::nack::NackReason;
use crate::tlv::{first_type, read_header, read_nonneg, tlv_len, write_header, write_nonneg, write_tlv, SliceReader};
use crate::types::*;

/// Longest PitToken Trajan stores (NDN-DPDK uses 8–32 bytes; NDNts 4). Longer ones are
/// rejected so a PIT in-record's token has a fixed bound.
pub const MAX_PIT_TOKEN: usize = 32;

/// The network-layer packet a received frame carries, found without decoding it:
/// its TLV type and the range of its value, for the frame itself or for an
/// LpPacket's Fragment (a piece of a fragmented packet reads as whatever its
/// bytes begin with). `None` when the outer element or the Fragment's first
/// element is not well formed, or an LpPacket has no Fragment. For the I/O layer,
/// which decides per packet (which worker, whether to keep a copy) before the
/// engine decodes it.
pub fn network_packet(frame: &[u8]) -> Option<(u32, std::ops::Range<usize>)> {
    let mut pos = 0;
    let (typ, start, end) = read_header(frame, &mut pos).ok()?;
    if typ != LP_PACKET {
        return Some((typ, start..end));
    }
    let mut p = start;
    while p < end {
        let (t, s, e) = read_header(&frame[..end], &mut p).ok()?;
        if t == LP_FRAGMENT {
            let mut q = s;
            let (typ, start, end) = read_header(&frame[..e], &mut q).ok()?;
            return Some((typ, start..end));
        }
    }
    None
}

/// CachePolicyType asking forwarders not to cache a Data packet.
pub const CACHE_POLICY_NO_CACHE: u64 = 1;

/// The per-packet link fields a forwarder reads or writes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LpHeaders {
    /// PitToken: opaque to this hop, echoed back with the Data or Nack (at most [`MAX_PIT_TOKEN`] bytes).
    pub pit_token: Option<Bytes>,
    /// Nack: present when the fragment is a Nacked Interest, with the reason.
    pub nack: Option<NackReason>,
    /// IncomingFaceId: tells a local application the face a packet arrived on.
    pub incoming_face_id: Option<u64>,
    /// NextHopFaceId: a local application's choice of outgoing face for its Interest.
    pub next_hop_face_id: Option<u64>,
    /// CachePolicyType of CachePolicy; [`CACHE_POLICY_NO_CACHE`] forbids caching the Data.
    pub cache_policy: Option<u64>,
    /// CongestionMark: nonzero when a queue on the path was congested.
    pub congestion_mark: Option<u64>,
}

impl LpHeaders {
    /// The header field, if any, for which NFD's GenericLinkService drops a
    /// packet whose network-layer TLV-TYPE is `network` (a Nack when
    /// [`LpHeaders::nack`] is set): NextHopFaceId on an Interest from a face
    /// without local fields (`local_fields` asks the face only then, as an
    /// Interest rarely has the field), NextHopFaceId on a Data or a Nack, and
    /// CachePolicy on an Interest or a Nack. Such a packet asks for something
    /// its sender may not ask or that means nothing for its kind, and acting
    /// on the rest of it would treat the request as if it had not been made.
    /// (A Nack on a Data fails earlier, in the decoding.)
    pub fn refused_field(&self, network: u32, local_fields: impl FnOnce() -> bool) -> Option<u32> {
        // Most LpPackets carry a PIT token or a Nack and neither of these.
        if self.next_hop_face_id.is_none() && self.cache_policy.is_none() {
            return None;
        }
        let interest = network == INTEREST && self.nack.is_none();
        if self.next_hop_face_id.is_some() && !(interest && local_fields()) {
            return Some(LP_NEXT_HOP_FACE_ID);
        }
        if self.cache_policy.is_some() && network != DATA {
            return Some(LP_CACHE_POLICY);
        }
        None
    }
}

/// A decoded link-layer packet.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LpPacket {
    /// The per-packet link fields.
    pub headers: LpHeaders,
    /// Sequence: the link sequence number, shared by the fragments of one packet.
    pub sequence: Option<u64>,
    /// FragIndex: this fragment's index; absent means 0.
    pub frag_index: Option<u64>,
    /// FragCount: fragments in the whole packet; absent means 1.
    pub frag_count: Option<u64>,
    /// The network-layer packet (or a piece of it); `None` for an IDLE packet.
    pub fragment: Option<Bytes>,
}

impl LpPacket {
    /// Decodes an LpPacket, or wraps a bare Interest/Data; a header field it
    /// reads that appears twice makes the packet malformed.
    pub fn decode(wire: &Bytes) -> Result<Self, WireError> {
        let first = first_type(wire)?.ok_or(WireError::Truncated)?;
        if first == INTEREST || first == DATA {
            return Ok(LpPacket { fragment: Some(wire.clone()), ..Default::default() });
        }
        let (outer, el) = SliceReader::outer(wire, LP_PACKET)?;
        let mut r = outer.inner(&el);
        let mut p = LpPacket::default();
        while !r.is_empty() {
            let e = r.read()?;
            // No field it reads may repeat, as in NFD (two FragCounts, say,
            // would leave the reassembly and the engine reading different
            // ones): one already read is one already set.
            let h = &p.headers;
            let repeated = match e.typ {
                LP_SEQUENCE => p.sequence.is_some(),
                LP_FRAG_INDEX => p.frag_index.is_some(),
                LP_FRAG_COUNT => p.frag_count.is_some(),
                LP_PIT_TOKEN => h.pit_token.is_some(),
                LP_NACK => h.nack.is_some(),
                LP_INCOMING_FACE_ID => h.incoming_face_id.is_some(),
                LP_NEXT_HOP_FACE_ID => h.next_hop_face_id.is_some(),
                LP_CONGESTION_MARK => h.congestion_mark.is_some(),
                LP_CACHE_POLICY => h.cache_policy.is_some(),
                _ => false,
            };
            if repeated {
                return Err(WireError::OutOfOrder(e.typ));
            }
            let value = r.value(&e);
            match e.typ {
                LP_FRAGMENT => {
                    if !r.is_empty() {
                        return Err(WireError::OutOfOrder(LP_FRAGMENT));
                    }
                    p.fragment = Some(wire.slice(e.value()));
                }
                LP_SEQUENCE => {
                    if value.len() != 8 {
                        return Err(WireError::BadValue(LP_SEQUENCE));
                    }
                    p.sequence = Some(read_nonneg(value)?);
                }
                LP_FRAG_INDEX => p.frag_index = Some(read_nonneg(value)?),
                LP_FRAG_COUNT => p.frag_count = Some(read_nonneg(value)?),
                LP_PIT_TOKEN => {
                    if value.is_empty() || value.len() > MAX_PIT_TOKEN {
                        return Err(WireError::BadValue(LP_PIT_TOKEN));
                    }
                    p.headers.pit_token = Some(wire.slice(e.value()));
                }
                LP_NACK => {
                    let mut nr = r.inner(&e);
                    let mut reason = NackReason::None;
                    while !nr.is_empty() {
                        let f = nr.read()?;
                        if f.typ == LP_NACK_REASON {
                            reason = NackReason::from_code(read_nonneg(nr.value(&f))?);
                        } else if is_critical(f.typ) {
                            return Err(WireError::UnknownCritical(f.typ));
                        }
                    }
                    p.headers.nack = Some(reason);
                }
                LP_INCOMING_FACE_ID => p.headers.incoming_face_id = Some(read_nonneg(value)?),
                LP_NEXT_HOP_FACE_ID => p.headers.next_hop_face_id = Some(read_nonneg(value)?),
                LP_CONGESTION_MARK => p.headers.congestion_mark = Some(read_nonneg(value)?),
                LP_CACHE_POLICY => {
                    let mut cr = r.inner(&e);
                    let t = cr.expect(LP_CACHE_POLICY_TYPE)?;
                    p.headers.cache_policy = Some(read_nonneg(cr.value(&t))?);
                }
                t if lp_is_ignorable(t) => {}
                // Reliability and discovery fields Trajan does not implement are
                // ignorable by their numbers; anything else is an unknown critical field.
                t => return Err(WireError::UnknownCritical(t)),
            }
        }
        match (p.frag_index, p.frag_count) {
            (Some(i), Some(c)) if i >= c || c == 0 => return Err(WireError::BadValue(LP_FRAG_INDEX)),
            (Some(_), None) => return Err(WireError::Missing(LP_FRAG_COUNT)),
            _ => {}
        }
        Ok(p)
    }

    /// True if this packet is one piece of a fragmented packet.
    pub fn is_fragmented(&self) -> bool {
        self.frag_count.is_some_and(|c| c > 1)
    }

    /// Appends the encoding to `out`.
    pub fn encode_into(&self, out: &mut Vec<u8>) {
        let mut hdr = Vec::with_capacity(64);
        if let Some(s) = self.sequence {
            write_tlv(&mut hdr, LP_SEQUENCE, &s.to_be_bytes());
        }
        if let Some(i) = self.frag_index {
            write_nonneg(&mut hdr, LP_FRAG_INDEX, i);
        }
        if let Some(c) = self.frag_count {
            write_nonneg(&mut hdr, LP_FRAG_COUNT, c);
        }
        let h = &self.headers;
        if let Some(t) = &h.pit_token {
            write_tlv(&mut hdr, LP_PIT_TOKEN, t);
        }
        if let Some(r) = h.nack {
            write_tlv(&mut hdr, LP_NACK, &r.field_value());
        }
        if let Some(id) = h.incoming_face_id {
            write_nonneg(&mut hdr, LP_INCOMING_FACE_ID, id);
        }
        if let Some(id) = h.next_hop_face_id {
            write_nonneg(&mut hdr, LP_NEXT_HOP_FACE_ID, id);
        }
        if let Some(c) = h.cache_policy {
            let mut v = Vec::new();
            write_nonneg(&mut v, LP_CACHE_POLICY_TYPE, c);
            write_tlv(&mut hdr, LP_CACHE_POLICY, &v);
        }
        if let Some(m) = h.congestion_mark {
            write_nonneg(&mut hdr, LP_CONGESTION_MARK, m);
        }
        let frag_len = self.fragment.as_ref().map_or(0, |f| tlv_len(LP_FRAGMENT, f.len()));
        write_header(out, LP_PACKET, hdr.len() + frag_len);
        out.extend_from_slice(&hdr);
        if let Some(f) = &self.fragment {
            write_tlv(out, LP_FRAGMENT, f);
        }
    }

    /// Encodes `packet` for a link: bare when there are no headers (what every NDN
    /// peer accepts), else wrapped in an LpPacket.
    ///
    /// Always inlined: once per packet sent (see [`crate::Name::from_value`]).
    #[inline(always)]
    pub fn wrap(packet: &Bytes, headers: &LpHeaders) -> Bytes {
        if *headers == LpHeaders::default() {
            return packet.clone();
        }
        let lp = LpPacket { headers: headers.clone(), fragment: Some(packet.clone()), ..Default::default() };
        let mut out = Vec::with_capacity(packet.len() + 64);
        lp.encode_into(&mut out);
        Bytes::from(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn network_packet_finds_the_packet_bare_or_in_a_fragment() {
        let i = crate::Interest::new("/a".parse().unwrap()).encode();
        let bare = network_packet(&i).unwrap();
        assert_eq!((bare.0, &i[bare.1]), (INTEREST, &i[2..]));
        let headers = LpHeaders { pit_token: Some(Bytes::from_static(b"tok")), ..Default::default() };
        let lp = LpPacket::wrap(&i, &headers);
        let (typ, value) = network_packet(&lp).unwrap();
        assert_eq!((typ, &lp[value]), (INTEREST, &i[2..]));
        assert_eq!(network_packet(&lp[..lp.len() - 1]), None, "truncated");
        let no_fragment = [LP_PACKET as u8, 5, LP_PIT_TOKEN as u8, 3, 1, 2, 3];
        assert_eq!(network_packet(&no_fragment), None);
        assert_eq!(network_packet(&[]), None);
    }

    #[test]
    fn bare_packets_pass_through() {
        let i = crate::Interest::new("/a".parse().unwrap()).encode();
        let p = LpPacket::decode(&i).unwrap();
        assert_eq!(p.fragment.as_ref(), Some(&i));
        assert_eq!(LpPacket::wrap(&i, &LpHeaders::default()), i);
    }

    /// A field it reads twice makes the packet malformed: whichever copy a
    /// reader took, another could take the other.
    #[test]
    fn a_header_field_twice_is_malformed() {
        let i = crate::Interest::new("/a".parse().unwrap()).encode();
        let packet = |fields: &[(u32, &[u8])]| {
            let mut inner = Vec::new();
            for (t, v) in fields {
                write_tlv(&mut inner, *t, v);
            }
            write_tlv(&mut inner, LP_FRAGMENT, &i);
            let mut v = Vec::new();
            write_tlv(&mut v, LP_PACKET, &inner);
            LpPacket::decode(&Bytes::from(v))
        };
        assert!(packet(&[(LP_FRAG_COUNT, &[1])]).is_ok());
        assert_eq!(packet(&[(LP_FRAG_COUNT, &[1]), (LP_FRAG_COUNT, &[2])]), Err(WireError::OutOfOrder(LP_FRAG_COUNT)));
        assert_eq!(packet(&[(LP_PIT_TOKEN, b"a"), (LP_PIT_TOKEN, b"b")]), Err(WireError::OutOfOrder(LP_PIT_TOKEN)));
        assert!(packet(&[(852, &[1]), (852, &[2])]).is_ok(), "an ignorable field it does not read may repeat");
    }

    /// NFD's GenericLinkService rules (decodeInterest, decodeData,
    /// decodeNack), each with the field it names.
    #[test]
    fn fields_nfd_refuses_by_packet_kind() {
        let nh = LpHeaders { next_hop_face_id: Some(3), ..Default::default() };
        let cp = LpHeaders { cache_policy: Some(CACHE_POLICY_NO_CACHE), ..Default::default() };
        let nack = |h: &LpHeaders| LpHeaders { nack: Some(NackReason::NoRoute), ..h.clone() };
        assert_eq!(nh.refused_field(INTEREST, || true), None, "a local app pins its next hop");
        assert_eq!(nh.refused_field(INTEREST, || false), Some(LP_NEXT_HOP_FACE_ID));
        assert_eq!(nh.refused_field(DATA, || true), Some(LP_NEXT_HOP_FACE_ID));
        assert_eq!(nack(&nh).refused_field(INTEREST, || true), Some(LP_NEXT_HOP_FACE_ID));
        assert_eq!(cp.refused_field(DATA, || false), None, "CachePolicy is a Data's");
        assert_eq!(cp.refused_field(INTEREST, || true), Some(LP_CACHE_POLICY));
        assert_eq!(nack(&cp).refused_field(INTEREST, || true), Some(LP_CACHE_POLICY));
        let plain = LpHeaders { pit_token: Some(Bytes::from_static(b"t")), congestion_mark: Some(1), incoming_face_id: Some(9), ..Default::default() };
        for typ in [INTEREST, DATA] {
            assert_eq!(plain.refused_field(typ, || unreachable!("no NextHopFaceId to ask about")), None);
            assert_eq!(nack(&plain).refused_field(typ, || unreachable!()), None);
        }
    }

    #[test]
    fn ignorable_and_critical_fields() {
        // IDLE packet with an ignorable unknown field 0x0350+4=852 (low bits 00)
        let mut v = Vec::new();
        let mut inner = Vec::new();
        write_tlv(&mut inner, 852, &[1]);
        write_tlv(&mut v, LP_PACKET, &inner);
        assert!(LpPacket::decode(&Bytes::from(v)).unwrap().fragment.is_none());
        // Critical unknown field 853
        let mut v = Vec::new();
        let mut inner = Vec::new();
        write_tlv(&mut inner, 853, &[1]);
        write_tlv(&mut v, LP_PACKET, &inner);
        assert_eq!(LpPacket::decode(&Bytes::from(v)), Err(WireError::UnknownCritical(853)));
    }

    proptest! {
        #[test]
        fn round_trip(token in proptest::option::of(proptest::collection::vec(any::<u8>(), 1..32)),
                      nack in proptest::option::of(prop_oneof![Just(0u64), Just(50), Just(100), Just(150), 1u64..1000]),
                      inface: Option<u64>, mark: Option<u64>, payload in proptest::collection::vec(any::<u8>(), 0..100)) {
            let headers = LpHeaders {
                pit_token: token.map(Bytes::from),
                nack: nack.map(NackReason::from_code),
                incoming_face_id: inface,
                congestion_mark: mark,
                ..Default::default()
            };
            let lp = LpPacket { headers, fragment: Some(Bytes::from(payload)), ..Default::default() };
            let mut out = Vec::new();
            lp.encode_into(&mut out);
            prop_assert_eq!(LpPacket::decode(&Bytes::from(out)).unwrap(), lp);
        }
    }
}
