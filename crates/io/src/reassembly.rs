//! NDNLPv2 fragment reassembly for one face.
//!
//! Peers such as ndnd split packets larger than a link MTU (about 1420 bytes on UDP)
//! into LpPackets carrying Sequence, FragIndex and FragCount. The engine only sees
//! whole network-layer packets, so the face glues the pieces back together here.
//!
//! Everything a peer can influence is bounded: fragments per packet, packets in
//! progress per face, bytes per packet, how long a piece waits for its siblings,
//! and the bytes a face holds, which its caller caps per call so that all faces
//! together stay within one budget ([`Reassembler::accept`]'s `room`). A piece is
//! kept as a copy of its own bytes, never as a view of the datagram it came in:
//! a 1-byte fragment padded to a full datagram with ignorable link fields would
//! otherwise pin 8 KB for 1. A fragment that contradicts what was already
//! received, or that does not fit, is rejected and reported, so the face can count it.

use std::mem::size_of;
use std::time::{Duration, Instant};

use bytes::Bytes;
use thiserror::Error;
use trajan_wire::lp::LpHeaders;
use trajan_wire::tlv::frame_len;
use trajan_wire::{LpPacket, MAX_PACKET_SIZE};

/// Most fragments one packet may be split into. NFD allows 400; at the 1420-byte
/// MTU ndnd uses, a maximal packet needs 7, and 128 still allows links with an MTU
/// below 100 bytes while keeping a partial packet's slot table small.
pub const MAX_FRAG_COUNT: u64 = 128;

/// Most packets a face may have partly received at once. Fragments of one packet
/// normally arrive back to back; a few in flight covers reordering, and the oldest
/// is given up when a peer starts more.
pub const MAX_PARTIAL_PACKETS: usize = 16;

/// How long the first fragment of a packet waits for the rest (NFD's default).
pub const REASSEMBLY_TIMEOUT: Duration = Duration::from_millis(500);

/// Why a fragment was dropped; each one is counted on the face.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum FragError {
    /// A fragmented LpPacket without Sequence cannot be matched with its siblings.
    #[error("fragment without Sequence")]
    NoSequence,
    /// A fragmented LpPacket with no Fragment field.
    #[error("fragment without payload")]
    NoPayload,
    /// FragIndex is not below FragCount.
    #[error("FragIndex out of range")]
    BadIndex,
    /// FragCount exceeds [`MAX_FRAG_COUNT`].
    #[error("too many fragments")]
    TooManyFragments,
    /// Two fragments of the same packet disagree on FragCount; the packet is dropped.
    #[error("FragCount differs between fragments of one packet")]
    CountMismatch,
    /// The same FragIndex arrived twice; the copy is dropped.
    #[error("duplicate fragment")]
    Duplicate,
    /// The pieces add up to more than [`MAX_PACKET_SIZE`]; the packet is dropped.
    #[error("reassembled packet too large")]
    TooLarge,
    /// Keeping the piece would take the face past the bytes its caller allows
    /// (the router's reassembly budget is spent); the packet is dropped.
    #[error("no room left to reassemble")]
    NoRoom,
    /// The pieces joined do not form exactly one TLV element.
    #[error("reassembled packet is not one TLV element")]
    Malformed,
}

/// One packet being reassembled.
struct Partial {
    /// Sequence number of fragment 0 (every fragment's Sequence minus its FragIndex).
    base: u64,
    pieces: Vec<Option<Bytes>>,
    received: usize,
    bytes: usize,
    /// Link headers of fragment 0, which NDNLPv2 says carries the packet's fields.
    headers: LpHeaders,
    started: Instant,
}

impl Partial {
    /// Heap bytes this packet holds: its slot table and the pieces' bytes.
    fn held(&self) -> usize {
        charge(self.pieces.len(), self.bytes)
    }
}

/// What a partial packet of `count` fragments with `bytes` received holds.
const fn charge(count: usize, bytes: usize) -> usize {
    size_of::<Partial>() + count * size_of::<Option<Bytes>>() + bytes
}

/// The most one face can hold: [`MAX_PARTIAL_PACKETS`] packets of
/// [`MAX_FRAG_COUNT`] slots and [`MAX_PACKET_SIZE`] bytes each (about 200 KB).
pub const MAX_HELD_PER_FACE: usize = MAX_PARTIAL_PACKETS * charge(MAX_FRAG_COUNT as usize, MAX_PACKET_SIZE);

/// Reassembly state of one face. Empty (and allocation-free) until the face
/// receives its first fragment.
#[derive(Default)]
pub struct Reassembler {
    /// In arrival order, so the first is the oldest.
    partials: Vec<Partial>,
}

impl Reassembler {
    /// A reassembler with nothing in progress.
    pub fn new() -> Self {
        Self::default()
    }

    /// Packets currently partly received (the idle sweep skips faces with none).
    pub fn in_progress(&self) -> usize {
        self.partials.len()
    }

    /// Heap bytes the packets in progress hold, at most [`MAX_HELD_PER_FACE`]:
    /// what a caller sharing one budget among faces charges to this one.
    pub fn held(&self) -> usize {
        self.partials.iter().map(Partial::held).sum()
    }

    /// Gives up the packets whose first fragment came [`REASSEMBLY_TIMEOUT`] or
    /// more before `now`. [`accept`](Self::accept) does it too; a caller calls it
    /// for faces that fell silent, whose pieces would otherwise wait for the face's
    /// next fragment.
    pub fn expire(&mut self, now: Instant) {
        self.partials.retain(|p| now.saturating_duration_since(p.started) < REASSEMBLY_TIMEOUT);
    }

    /// Takes one fragment. Returns the whole packet once its last piece arrives,
    /// encoded as an LpPacket carrying fragment 0's link headers (a bare Interest or
    /// Data when there are none), `Ok(None)` while pieces are missing, or why the
    /// fragment was dropped. `room` is the most this face may hold with the new
    /// piece kept ([`held`](Self::held)); a piece that does not fit drops its
    /// packet ([`FragError::NoRoom`]), freeing what it held.
    pub fn accept(&mut self, lp: LpPacket, now: Instant, room: usize) -> Result<Option<Bytes>, FragError> {
        self.expire(now);
        let count = lp.frag_count.unwrap_or(1);
        let index = lp.frag_index.unwrap_or(0);
        if count > MAX_FRAG_COUNT {
            return Err(FragError::TooManyFragments);
        }
        if index >= count {
            return Err(FragError::BadIndex);
        }
        let piece = lp.fragment.ok_or(FragError::NoPayload)?;
        if count == 1 {
            return finish(vec![piece], &lp.headers).map(Some);
        }
        let base = lp.sequence.ok_or(FragError::NoSequence)?.wrapping_sub(index);
        let (count, index) = (count as usize, index as usize);

        let slot = match self.partials.iter().position(|p| p.base == base) {
            Some(i) => i,
            None => {
                if self.partials.len() >= MAX_PARTIAL_PACKETS {
                    self.partials.remove(0);
                }
                self.partials.push(Partial {
                    base,
                    pieces: vec![None; count],
                    received: 0,
                    bytes: 0,
                    headers: LpHeaders::default(),
                    started: now,
                });
                self.partials.len() - 1
            }
        };
        let others = self.held() - self.partials[slot].held();
        let p = &mut self.partials[slot];
        if p.pieces.len() != count {
            self.partials.remove(slot);
            return Err(FragError::CountMismatch);
        }
        if p.pieces[index].is_some() {
            return Err(FragError::Duplicate);
        }
        if p.bytes + piece.len() > MAX_PACKET_SIZE {
            self.partials.remove(slot);
            return Err(FragError::TooLarge);
        }
        if others + charge(count, p.bytes + piece.len()) > room {
            self.partials.remove(slot);
            return Err(FragError::NoRoom);
        }
        p.bytes += piece.len();
        p.received += 1;
        p.pieces[index] = Some(Bytes::copy_from_slice(&piece));
        if index == 0 {
            p.headers = lp.headers;
            // Like the piece, the PitToken is a view of the datagram.
            p.headers.pit_token = p.headers.pit_token.as_deref().map(Bytes::copy_from_slice);
        }
        if p.received < count {
            return Ok(None);
        }
        let done = self.partials.remove(slot);
        finish(done.pieces.into_iter().flatten().collect(), &done.headers).map(Some)
    }
}

/// The bytes all of a shell's reassemblers may hold together, and what they
/// hold now: without it each face is bounded, but a peer spoofing many sources
/// (one on-demand face each) could hold [`MAX_HELD_PER_FACE`] per face.
pub(crate) struct Budget {
    limit: usize,
    held: usize,
}

impl Budget {
    /// A budget of `limit` bytes, none of it used.
    pub(crate) fn new(limit: usize) -> Self {
        Budget { limit, held: 0 }
    }

    /// Runs `f` on a face's reassembler with the room the other faces leave it,
    /// and charges the budget what the face holds afterwards.
    pub(crate) fn with<T>(&mut self, r: &mut Reassembler, f: impl FnOnce(&mut Reassembler, usize) -> T) -> T {
        let others = self.held - r.held();
        let out = f(r, self.limit.saturating_sub(others));
        self.held = others + r.held();
        out
    }

    /// Returns what a closing face's reassembler held.
    pub(crate) fn release(&mut self, r: &Reassembler) {
        self.held -= r.held();
    }

    /// Bytes held now, by every face together.
    pub(crate) fn held(&self) -> usize {
        self.held
    }
}

/// Joins the pieces and checks they form one element before handing it on.
fn finish(pieces: Vec<Bytes>, headers: &LpHeaders) -> Result<Bytes, FragError> {
    let packet = match <[Bytes; 1]>::try_from(pieces) {
        Ok([only]) => only,
        Err(pieces) => Bytes::from(pieces.concat()),
    };
    if frame_len(&packet, MAX_PACKET_SIZE) != Ok(Some(packet.len())) {
        return Err(FragError::Malformed);
    }
    Ok(LpPacket::wrap(&packet, headers))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use trajan_wire::tlv::write_tlv;

    fn packet(len: usize) -> Bytes {
        let mut v = Vec::new();
        write_tlv(&mut v, trajan_wire::types::DATA, &(0..len).map(|i| i as u8).collect::<Vec<_>>());
        Bytes::from(v)
    }

    /// Splits `pkt` into `count` LpPackets with Sequence `base + i`, round-tripped
    /// through the wire codec as a receiver would see them.
    fn fragments(pkt: &Bytes, count: usize, base: u64, headers: LpHeaders) -> Vec<LpPacket> {
        let size = pkt.len().div_ceil(count);
        pkt.chunks(size)
            .enumerate()
            .map(|(i, chunk)| {
                let lp = LpPacket {
                    headers: if i == 0 { headers.clone() } else { LpHeaders::default() },
                    sequence: Some(base.wrapping_add(i as u64)),
                    frag_index: Some(i as u64),
                    frag_count: Some(count as u64),
                    fragment: Some(Bytes::copy_from_slice(chunk)),
                };
                let mut out = Vec::new();
                lp.encode_into(&mut out);
                LpPacket::decode(&Bytes::from(out)).unwrap()
            })
            .collect()
    }

    fn frag(seq: u64, index: u64, count: u64, payload: &[u8]) -> LpPacket {
        LpPacket {
            sequence: Some(seq),
            frag_index: Some(index),
            frag_count: Some(count),
            fragment: Some(Bytes::copy_from_slice(payload)),
            ..Default::default()
        }
    }

    #[test]
    fn in_order_reassembly_keeps_first_fragment_headers() {
        let pkt = packet(4000);
        let headers = LpHeaders { pit_token: Some(Bytes::from_static(b"tok!")), congestion_mark: Some(1), ..Default::default() };
        let mut r = Reassembler::new();
        let now = Instant::now();
        let mut frags = fragments(&pkt, 3, 1000, headers.clone());
        let last = frags.pop().unwrap();
        for f in frags {
            assert_eq!(r.accept(f, now, MAX_HELD_PER_FACE), Ok(None));
        }
        let out = r.accept(last, now, MAX_HELD_PER_FACE).unwrap().unwrap();
        let lp = LpPacket::decode(&out).unwrap();
        assert_eq!(lp.headers, headers);
        assert_eq!(lp.fragment, Some(pkt));
        assert_eq!(lp.frag_count, None);
        assert_eq!(r.in_progress(), 0);
    }

    #[test]
    fn out_of_order_without_headers_yields_bare_packet() {
        let pkt = packet(3000);
        let mut r = Reassembler::new();
        let now = Instant::now();
        let mut frags = fragments(&pkt, 4, u64::MAX - 1, LpHeaders::default());
        frags.reverse();
        let mut out = None;
        for f in frags {
            out = r.accept(f, now, MAX_HELD_PER_FACE).unwrap();
        }
        assert_eq!(out, Some(pkt));
    }

    #[test]
    fn interleaved_packets() {
        let (a, b) = (packet(2500), packet(1800));
        let fa = fragments(&a, 3, 10, LpHeaders::default());
        let fb = fragments(&b, 2, 13, LpHeaders::default());
        let mut r = Reassembler::new();
        let now = Instant::now();
        let mut done = Vec::new();
        for f in [&fa[0], &fb[1], &fa[2], &fb[0], &fa[1]] {
            done.extend(r.accept(f.clone(), now, MAX_HELD_PER_FACE).unwrap());
        }
        assert_eq!(done, vec![b, a]);
    }

    #[test]
    fn duplicate_is_rejected_and_packet_still_completes() {
        let pkt = packet(2000);
        let frags = fragments(&pkt, 2, 7, LpHeaders::default());
        let mut r = Reassembler::new();
        let now = Instant::now();
        assert_eq!(r.accept(frags[0].clone(), now, MAX_HELD_PER_FACE), Ok(None));
        assert_eq!(r.accept(frags[0].clone(), now, MAX_HELD_PER_FACE), Err(FragError::Duplicate));
        assert_eq!(r.accept(frags[1].clone(), now, MAX_HELD_PER_FACE), Ok(Some(pkt)));
    }

    #[test]
    fn hostile_headers_are_rejected_without_state() {
        let mut r = Reassembler::new();
        let now = Instant::now();
        assert_eq!(r.accept(frag(5, 3, 3, b"x"), now, MAX_HELD_PER_FACE), Err(FragError::BadIndex));
        assert_eq!(r.accept(frag(5, 0, u64::MAX, b"x"), now, MAX_HELD_PER_FACE), Err(FragError::TooManyFragments));
        assert_eq!(r.accept(frag(5, 0, MAX_FRAG_COUNT + 1, b"x"), now, MAX_HELD_PER_FACE), Err(FragError::TooManyFragments));
        let mut no_seq = frag(5, 0, 2, b"x");
        no_seq.sequence = None;
        assert_eq!(r.accept(no_seq, now, MAX_HELD_PER_FACE), Err(FragError::NoSequence));
        let mut empty = frag(5, 0, 2, b"x");
        empty.fragment = None;
        assert_eq!(r.accept(empty, now, MAX_HELD_PER_FACE), Err(FragError::NoPayload));
        assert_eq!(r.in_progress(), 0);
    }

    #[test]
    fn mismatched_count_drops_the_packet() {
        let mut r = Reassembler::new();
        let now = Instant::now();
        assert_eq!(r.accept(frag(100, 0, 3, b"ab"), now, MAX_HELD_PER_FACE), Ok(None));
        // Same base (101 - 1), different FragCount.
        assert_eq!(r.accept(frag(101, 1, 4, b"cd"), now, MAX_HELD_PER_FACE), Err(FragError::CountMismatch));
        assert_eq!(r.in_progress(), 0);
    }

    #[test]
    fn total_size_is_bounded() {
        let mut r = Reassembler::new();
        let now = Instant::now();
        let half = vec![0u8; MAX_PACKET_SIZE / 2 + 1];
        assert_eq!(r.accept(frag(0, 0, 3, &half), now, MAX_HELD_PER_FACE), Ok(None));
        assert_eq!(r.accept(frag(1, 1, 3, &half), now, MAX_HELD_PER_FACE), Err(FragError::TooLarge));
        assert_eq!(r.in_progress(), 0);
    }

    #[test]
    fn pieces_that_do_not_form_one_element_are_malformed() {
        let mut r = Reassembler::new();
        let now = Instant::now();
        assert_eq!(r.accept(frag(0, 0, 2, &[6, 5, 1]), now, MAX_HELD_PER_FACE), Ok(None));
        assert_eq!(r.accept(frag(1, 1, 2, &[2, 3, 4, 5, 6]), now, MAX_HELD_PER_FACE), Err(FragError::Malformed));
        assert_eq!(r.accept(frag(5, 0, 1, &[6, 1]), now, MAX_HELD_PER_FACE), Err(FragError::Malformed));
    }

    #[test]
    fn stale_partials_expire() {
        let pkt = packet(2000);
        let frags = fragments(&pkt, 2, 50, LpHeaders::default());
        let mut r = Reassembler::new();
        let t0 = Instant::now();
        assert_eq!(r.accept(frags[0].clone(), t0, MAX_HELD_PER_FACE), Ok(None));
        // The sibling arrives too late: it starts a new packet instead of completing.
        assert_eq!(r.accept(frags[1].clone(), t0 + REASSEMBLY_TIMEOUT, MAX_HELD_PER_FACE), Ok(None));
        assert_eq!(r.in_progress(), 1);
    }

    #[test]
    fn partial_packets_per_face_are_bounded() {
        let mut r = Reassembler::new();
        let now = Instant::now();
        for i in 0..(MAX_PARTIAL_PACKETS as u64 * 4) {
            assert_eq!(r.accept(frag(i * 10, 0, 2, &[6, 2]), now, MAX_HELD_PER_FACE), Ok(None));
        }
        assert_eq!(r.in_progress(), MAX_PARTIAL_PACKETS);
        // The oldest were evicted; the newest still completes.
        let newest = (MAX_PARTIAL_PACKETS as u64 * 4 - 1) * 10;
        assert_eq!(r.accept(frag(newest + 1, 1, 2, &[1, 2]), now, MAX_HELD_PER_FACE), Ok(Some(Bytes::from_static(&[6, 2, 1, 2]))));
        assert_eq!(r.accept(frag(1, 1, 2, &[1, 2]), now, MAX_HELD_PER_FACE), Ok(None));
    }

    /// A fragment whose payload is `payload`, padded to `datagram` bytes on
    /// the wire with an ignorable link field, as decoded from that wire.
    fn padded(seq: u64, index: u64, count: u64, payload: &[u8], datagram: usize) -> LpPacket {
        let mut fields = Vec::new();
        // 852: an ignorable field no decoder knows.
        trajan_wire::tlv::write_tlv(&mut fields, 852, &vec![0; datagram.saturating_sub(payload.len() + 40)]);
        trajan_wire::tlv::write_tlv(&mut fields, trajan_wire::types::LP_SEQUENCE, &seq.to_be_bytes());
        trajan_wire::tlv::write_nonneg(&mut fields, trajan_wire::types::LP_FRAG_INDEX, index);
        trajan_wire::tlv::write_nonneg(&mut fields, trajan_wire::types::LP_FRAG_COUNT, count);
        write_tlv(&mut fields, trajan_wire::types::LP_FRAGMENT, payload);
        let mut wire = Vec::new();
        write_tlv(&mut wire, trajan_wire::types::LP_PACKET, &fields);
        LpPacket::decode(&Bytes::from(wire)).unwrap()
    }

    #[test]
    fn a_piece_holds_its_own_bytes_not_its_datagram() {
        let mut r = Reassembler::new();
        let now = Instant::now();
        let lp = padded(0, 0, 2, b"x", 8000);
        assert!(lp.fragment.as_ref().unwrap().len() == 1);
        assert_eq!(r.accept(lp, now, MAX_HELD_PER_FACE), Ok(None));
        assert_eq!(r.held(), charge(2, 1));
        assert!(r.held() < 1000, "{} bytes held for a 1-byte piece", r.held());
    }

    #[test]
    fn a_face_never_holds_more_than_its_bound() {
        // Every packet in progress at the largest count, each one piece short of
        // the most bytes a packet may have.
        let mut r = Reassembler::new();
        let now = Instant::now();
        let piece = vec![0u8; MAX_PACKET_SIZE / MAX_FRAG_COUNT as usize];
        for k in 0..MAX_PARTIAL_PACKETS as u64 + 3 {
            for i in 0..MAX_FRAG_COUNT - 1 {
                let lp = padded(k * 1000 + i, i, MAX_FRAG_COUNT, &piece, 8000);
                assert_eq!(r.accept(lp, now, MAX_HELD_PER_FACE), Ok(None));
                assert!(r.held() <= MAX_HELD_PER_FACE);
            }
        }
        assert_eq!(r.in_progress(), MAX_PARTIAL_PACKETS);
        assert_eq!(r.held(), MAX_PARTIAL_PACKETS * charge(MAX_FRAG_COUNT as usize, (MAX_FRAG_COUNT as usize - 1) * piece.len()));
    }

    #[test]
    fn a_piece_beyond_the_room_given_drops_its_packet() {
        let mut r = Reassembler::new();
        let now = Instant::now();
        // No room for a new packet: nothing is kept.
        assert_eq!(r.accept(frag(0, 0, 3, b"abc"), now, charge(3, 3) - 1), Err(FragError::NoRoom));
        assert_eq!((r.in_progress(), r.held()), (0, 0));
        // Room for the first piece but not the second: the packet goes.
        assert_eq!(r.accept(frag(10, 0, 3, b"abc"), now, charge(3, 4)), Ok(None));
        assert_eq!(r.held(), charge(3, 3));
        assert_eq!(r.accept(frag(11, 1, 3, b"de"), now, charge(3, 4)), Err(FragError::NoRoom));
        assert_eq!((r.in_progress(), r.held()), (0, 0));
        // With room, the same pieces complete.
        assert_eq!(r.accept(frag(20, 0, 3, &[6, 3]), now, charge(3, 5)), Ok(None));
        assert_eq!(r.accept(frag(21, 1, 3, &[1]), now, charge(3, 5)), Ok(None));
        assert_eq!(r.accept(frag(22, 2, 3, &[2, 3]), now, charge(3, 5)), Ok(Some(Bytes::from_static(&[6, 3, 1, 2, 3]))));
        assert_eq!((r.in_progress(), r.held()), (0, 0));
    }

    #[test]
    fn expiry_frees_what_a_silent_face_holds() {
        let mut r = Reassembler::new();
        let t0 = Instant::now();
        assert_eq!(r.accept(frag(0, 0, 2, b"ab"), t0, MAX_HELD_PER_FACE), Ok(None));
        r.expire(t0 + REASSEMBLY_TIMEOUT / 2);
        assert_eq!(r.held(), charge(2, 2));
        r.expire(t0 + REASSEMBLY_TIMEOUT);
        assert_eq!((r.in_progress(), r.held()), (0, 0));
    }

    /// One fragment a face receives in the property test below.
    #[derive(Debug, Clone)]
    struct Arrival {
        face: usize,
        /// Which of a few packets in flight (so that siblings meet).
        packet: u64,
        index: u64,
        count: u64,
        len: usize,
        /// Milliseconds since the previous arrival.
        later_ms: u64,
    }

    fn arrival() -> impl Strategy<Value = Arrival> {
        (0..3usize, 0..20u64, 0..4u64, prop_oneof![Just(2u64), Just(3), Just(4), 1..=MAX_FRAG_COUNT], 0..3000usize, prop_oneof![Just(0u64), 0..200u64, Just(600)])
            .prop_map(|(face, packet, index, count, len, later_ms)| Arrival { face, packet, index: index % count, count, len, later_ms })
    }

    proptest! {
        /// Faces sharing one budget, fed fragments of many packets, some
        /// completing, some duplicated, some contradicting, some late:
        /// together they never hold more than the budget, each never more than
        /// its own bound, and the budget's count is always what the faces hold.
        #[test]
        fn faces_sharing_a_budget_stay_within_it(limit in 0..400_000usize, arrivals in proptest::collection::vec(arrival(), 1..400)) {
            let mut faces: Vec<Reassembler> = (0..3).map(|_| Reassembler::new()).collect();
            let mut budget = Budget::new(limit);
            let mut now = Instant::now();
            for a in arrivals {
                now += Duration::from_millis(a.later_ms);
                let lp = frag(a.packet * 1000 + a.index, a.index, a.count, &vec![7; a.len]);
                let out = budget.with(&mut faces[a.face], |r, room| r.accept(lp, now, room));
                if let Ok(Some(pkt)) = out {
                    prop_assert!(pkt.len() <= MAX_PACKET_SIZE);
                }
                prop_assert_eq!(budget.held(), faces.iter().map(Reassembler::held).sum::<usize>());
                prop_assert!(budget.held() <= limit, "{} held of {}", budget.held(), limit);
                prop_assert!(faces.iter().all(|r| r.held() <= MAX_HELD_PER_FACE));
            }
            now += REASSEMBLY_TIMEOUT;
            for r in &mut faces {
                budget.with(r, |r, _| r.expire(now));
            }
            prop_assert_eq!(budget.held(), 0);
        }
    }
}
