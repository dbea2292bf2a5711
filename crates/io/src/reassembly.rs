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
//!
//! What a packet in progress holds, and is charged, grows with the pieces that
//! arrived, never with the FragCount they claim: a sender pins memory only in
//! proportion to the bytes it sent. When the bytes allowed are spent, the oldest
//! packet in progress on any face sharing the budget is given up for a newer one,
//! so a flood of pieces that will never complete cannot keep fresh packets out.
//! For that, the packets of all faces sharing a `Budget` live in one pool,
//! which the faces' reassemblers and the budget share.

use std::collections::{BTreeMap, HashMap};
use std::mem::size_of;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use bytes::Bytes;
use thiserror::Error;
use trajan_wire::lp::{LpHeaders, MAX_PIT_TOKEN};
use trajan_wire::tlv::{frame_len, read_varnum};
use trajan_wire::{LpPacket, MAX_PACKET_SIZE};

/// Most fragments one packet may be split into. NFD allows 400; at the 1420-byte
/// MTU ndnd uses, a maximal packet needs 7, and 128 still allows links with an MTU
/// below 100 bytes while keeping a partial packet's list of pieces short.
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
    /// A fragmented LpPacket with no Fragment field, or with an empty one where
    /// NDNLPv2 needs bytes: every fragment but the last carries part of the packet.
    #[error("fragment without payload")]
    NoPayload,
    /// FragIndex is not below FragCount.
    #[error("FragIndex out of range")]
    BadIndex,
    /// FragCount exceeds [`MAX_FRAG_COUNT`], or is more than the length fragment 0
    /// declares for the whole packet can fill (every fragment but the last carries
    /// at least one byte of it, fragment 0 its header); the packet is dropped.
    #[error("too many fragments")]
    TooManyFragments,
    /// Two fragments of the same packet disagree on FragCount; the packet is dropped.
    #[error("FragCount differs between fragments of one packet")]
    CountMismatch,
    /// The same FragIndex arrived twice; the copy is dropped.
    #[error("duplicate fragment")]
    Duplicate,
    /// The pieces add up to more than [`MAX_PACKET_SIZE`], or fragment 0 declares
    /// a larger packet; the packet is dropped.
    #[error("reassembled packet too large")]
    TooLarge,
    /// Keeping the piece would take the face past the bytes its caller allows
    /// (the router's reassembly budget is spent) even with every older packet in
    /// progress given up; the packet is dropped.
    #[error("no room left to reassemble")]
    NoRoom,
    /// The pieces joined do not form exactly one TLV element, or already hold
    /// more than the length fragment 0 declares.
    #[error("reassembled packet is not one TLV element")]
    Malformed,
}

/// One piece of a packet: its FragIndex and a copy of its bytes.
type Piece = (usize, Bytes);

/// One packet being reassembled.
struct Partial {
    /// Its place in its pool's age order: smaller is older.
    serial: u64,
    /// Sequence number of fragment 0 (every fragment's Sequence minus its FragIndex).
    base: u64,
    /// FragCount, the same on every fragment.
    count: usize,
    /// The pieces received, ordered by FragIndex. A list that grows with what
    /// arrives rather than a slot per fragment, so that a claimed FragCount costs
    /// nothing the bytes received do not pay for.
    pieces: Vec<Piece>,
    /// Bytes of the pieces together.
    bytes: usize,
    /// Length of the whole packet, once fragment 0 arrived with all of its TLV header.
    declared: Option<usize>,
    /// Link headers of fragment 0, which NDNLPv2 says carries the packet's fields;
    /// boxed, and only when there are any, so pieces before it pay nothing for them.
    headers: Option<Box<LpHeaders>>,
    started: Instant,
}

/// What a packet in progress costs besides its pieces: itself and its entry in
/// its pool's age order (twice the entry, for the slack of the tree's nodes).
const PACKET_OVERHEAD: usize = size_of::<Partial>() + 2 * size_of::<(u64, u64)>();

/// What fragment 0's link headers cost when kept: the box and the largest
/// PitToken copy.
const HEADERS_COST: usize = size_of::<LpHeaders>() + MAX_PIT_TOKEN;

impl Partial {
    fn new(serial: u64, base: u64, count: usize, now: Instant) -> Self {
        Partial { serial, base, count, pieces: Vec::new(), bytes: 0, declared: None, headers: None, started: now }
    }

    /// Heap bytes this packet holds: itself, its list of pieces, the pieces'
    /// bytes, and fragment 0's headers once kept.
    fn held(&self) -> usize {
        charge(self.pieces.capacity(), self.bytes) + if self.headers.is_some() { HEADERS_COST } else { 0 }
    }

    /// Keeps `f`, or says why not. Every error but [`FragError::Duplicate`]
    /// means the packet is to be dropped.
    fn add(&mut self, f: Fragment) -> Result<(), FragError> {
        if f.count != self.count {
            return Err(FragError::CountMismatch);
        }
        let at = match self.pieces.binary_search_by_key(&f.index, |(i, _)| *i) {
            Ok(_) => return Err(FragError::Duplicate),
            Err(at) => at,
        };
        let declared = f.declared?.or(self.declared);
        let bytes = self.bytes + f.piece.len();
        if bytes > MAX_PACKET_SIZE {
            return Err(FragError::TooLarge);
        }
        if declared.is_some_and(|len| bytes > len) {
            return Err(FragError::Malformed);
        }
        if self.pieces.len() == self.pieces.capacity() {
            // Doubling, up to the count: at most twice what arrived, never more than needed.
            let missing = self.count.saturating_sub(self.pieces.len());
            self.pieces.reserve_exact(self.pieces.len().min(missing).max(1));
        }
        self.pieces.insert(at, (f.index, Bytes::copy_from_slice(&f.piece)));
        self.bytes = bytes;
        self.declared = declared;
        if f.index == 0 && f.headers != LpHeaders::default() {
            let mut headers = f.headers;
            // Like the piece, the PitToken is a view of the datagram.
            headers.pit_token = headers.pit_token.as_deref().map(Bytes::copy_from_slice);
            self.headers = Some(Box::new(headers));
        }
        Ok(())
    }

    fn is_complete(&self) -> bool {
        self.pieces.len() == self.count
    }

    /// The whole packet, once complete.
    fn finish(self) -> Result<Bytes, FragError> {
        let headers = self.headers.map(|h| *h).unwrap_or_default();
        finish(self.pieces.into_iter().map(|(_, piece)| piece).collect(), &headers)
    }
}

/// What a packet in progress with room for `slots` pieces and `bytes` received
/// holds, its headers aside.
const fn charge(slots: usize, bytes: usize) -> usize {
    PACKET_OVERHEAD + slots * size_of::<Piece>() + bytes
}

/// The most one face can hold: [`MAX_PARTIAL_PACKETS`] packets of
/// [`MAX_FRAG_COUNT`] pieces, [`MAX_PACKET_SIZE`] bytes and fragment 0's
/// headers each (about 230 KB). Reaching it takes sending about as many bytes.
pub const MAX_HELD_PER_FACE: usize = MAX_PARTIAL_PACKETS * (charge(MAX_FRAG_COUNT as usize, MAX_PACKET_SIZE) + HEADERS_COST);

/// A fragment that passed the checks that need no state.
struct Fragment {
    base: u64,
    index: usize,
    count: usize,
    piece: Bytes,
    /// The packet length fragment 0 declares, or why it cannot be.
    declared: Result<Option<usize>, FragError>,
    headers: LpHeaders,
}

/// A face's key and totals in its pool, which its reassembler reads without
/// taking the pool's lock (once per packet received, so it must be cheap).
struct Tally {
    face: u64,
    held: AtomicUsize,
    partials: AtomicUsize,
}

/// Packets in progress on every face sharing one pool.
#[derive(Default)]
struct Pool {
    shelves: Mutex<Shelves>,
    /// `Shelves::held`, for readers that do not take the lock.
    held: AtomicUsize,
    /// `Shelves::evicted`, likewise.
    evicted: AtomicUsize,
}

impl Pool {
    /// Runs `f` on the packets in progress and publishes what they hold.
    fn update<T>(&self, f: impl FnOnce(&mut Shelves) -> T) -> T {
        // A panic elsewhere while the lock was held leaves the shelves whole
        // (every change is settled before it returns), so poison is ignored.
        let mut s: MutexGuard<'_, Shelves> = self.shelves.lock().unwrap_or_else(PoisonError::into_inner);
        let out = f(&mut s);
        self.held.store(s.held, Relaxed);
        self.evicted.store(s.evicted, Relaxed);
        out
    }
}

/// The packets in progress of one pool, by face and by age.
#[derive(Default)]
struct Shelves {
    /// Each face's packets in progress, oldest first; no entry for a face with none.
    faces: HashMap<u64, Shelf>,
    /// Serial to face of every packet in progress: the first is the oldest of all.
    ages: BTreeMap<u64, u64>,
    /// What all of them hold.
    held: usize,
    /// Packets in progress given up for newer ones: the oldest of a face past
    /// [`MAX_PARTIAL_PACKETS`], or the oldest of all when the budget was full.
    evicted: usize,
    next_serial: u64,
    next_face: u64,
}

/// One face's packets in progress.
struct Shelf {
    partials: Vec<Partial>,
    tally: Arc<Tally>,
}

impl Shelves {
    /// Brings `face`'s totals, and the pool's, up to date with its packets.
    fn settle(&mut self, face: u64) {
        let Some(shelf) = self.faces.get(&face) else { return };
        let held = shelf.partials.iter().map(Partial::held).sum();
        let was = shelf.tally.held.swap(held, Relaxed);
        shelf.tally.partials.store(shelf.partials.len(), Relaxed);
        self.held = self.held.saturating_sub(was) + held;
        if shelf.partials.is_empty() {
            self.faces.remove(&face);
        }
    }

    /// Gives up one packet of `face`'s.
    fn remove(&mut self, face: u64, serial: u64) {
        self.ages.remove(&serial);
        if let Some(shelf) = self.faces.get_mut(&face) {
            shelf.partials.retain(|p| p.serial != serial);
        }
        self.settle(face);
    }

    /// Gives up `face`'s packets that waited [`REASSEMBLY_TIMEOUT`] by `now`.
    fn expire(&mut self, face: u64, now: Instant) {
        let Some(shelf) = self.faces.get_mut(&face) else { return };
        let ages = &mut self.ages;
        shelf.partials.retain(|p| {
            let keep = now.saturating_duration_since(p.started) < REASSEMBLY_TIMEOUT;
            if !keep {
                ages.remove(&p.serial);
            }
            keep
        });
        self.settle(face);
    }

    /// Gives up all of `face`'s packets.
    fn clear(&mut self, face: u64) {
        let Some(shelf) = self.faces.remove(&face) else { return };
        for p in &shelf.partials {
            self.ages.remove(&p.serial);
        }
        self.held = self.held.saturating_sub(shelf.tally.held.swap(0, Relaxed));
        shelf.tally.partials.store(0, Relaxed);
    }

    /// [`Reassembler::accept`] once the fragment passed the checks that need no state.
    fn accept(&mut self, tally: &Arc<Tally>, f: Fragment, now: Instant, room: usize) -> Result<Option<Bytes>, FragError> {
        let face = tally.face;
        self.expire(face, now);
        // The most the pool may hold with the piece kept: what the other faces
        // hold, and the room this one is given.
        let cap = self.held.saturating_sub(tally.held.load(Relaxed)).saturating_add(room);
        let shelf = self.faces.entry(face).or_insert_with(|| Shelf { partials: Vec::new(), tally: Arc::clone(tally) });
        // Taken out while it changes, and put back where it was.
        let (at, mut p) = match shelf.partials.iter().position(|p| p.base == f.base) {
            Some(i) => (Some(i), shelf.partials.remove(i)),
            None => (None, Partial::new(self.next_serial, f.base, f.count, now)),
        };
        let serial = p.serial;
        let added = p.add(f);
        match added {
            Ok(()) if p.is_complete() => {
                self.ages.remove(&serial);
                self.settle(face);
                return p.finish().map(Some);
            }
            Err(e) if e != FragError::Duplicate => {
                self.ages.remove(&serial);
                self.settle(face);
                return Err(e);
            }
            _ => {}
        }
        let shelf = self.faces.entry(face).or_insert_with(|| Shelf { partials: Vec::new(), tally: Arc::clone(tally) });
        match at {
            Some(i) => shelf.partials.insert(i.min(shelf.partials.len()), p),
            None => {
                if shelf.partials.len() >= MAX_PARTIAL_PACKETS {
                    let oldest = shelf.partials.remove(0);
                    self.ages.remove(&oldest.serial);
                    self.evicted += 1;
                }
                shelf.partials.push(p);
                self.ages.insert(serial, face);
                self.next_serial += 1;
            }
        }
        self.settle(face);
        // A duplicate changed nothing.
        added?;
        // Over the cap: give up the oldest packets in progress, on any face,
        // until the piece fits, unless this packet is the oldest left.
        while self.held > cap {
            let Some((&oldest, &owner)) = self.ages.first_key_value() else { break };
            self.remove(owner, oldest);
            if oldest == serial {
                return Err(FragError::NoRoom);
            }
            self.evicted += 1;
        }
        Ok(None)
    }
}

/// Reassembly state of one face. Empty (and allocation-free) until the face
/// receives its first fragment.
#[derive(Default)]
pub struct Reassembler {
    /// Where its packets in progress live: its [`Budget`]'s pool, shared with the
    /// other faces, or its own once it receives a fragment outside any budget.
    pool: Option<Arc<Pool>>,
    /// Its key and totals in that pool, from its first fragment on.
    tally: Option<Arc<Tally>>,
}

impl Reassembler {
    /// A reassembler with nothing in progress.
    pub fn new() -> Self {
        Self::default()
    }

    /// Packets currently partly received (the idle sweep skips faces with none).
    pub fn in_progress(&self) -> usize {
        self.tally.as_ref().map_or(0, |t| t.partials.load(Relaxed))
    }

    /// Heap bytes the packets in progress hold, at most [`MAX_HELD_PER_FACE`]:
    /// what a caller sharing one budget among faces charges to this one.
    pub fn held(&self) -> usize {
        self.tally.as_ref().map_or(0, |t| t.held.load(Relaxed))
    }

    /// Gives up the packets whose first fragment came [`REASSEMBLY_TIMEOUT`] or
    /// more before `now`. [`accept`](Self::accept) does it too; a caller calls it
    /// for faces that fell silent, whose pieces would otherwise wait for the face's
    /// next fragment.
    pub fn expire(&mut self, now: Instant) {
        if let (Some(pool), Some(tally)) = (&self.pool, &self.tally) {
            if tally.partials.load(Relaxed) > 0 {
                pool.update(|s| s.expire(tally.face, now));
            }
        }
    }

    /// Takes one fragment. Returns the whole packet once its last piece arrives,
    /// encoded as an LpPacket carrying fragment 0's link headers (a bare Interest or
    /// Data when there are none), `Ok(None)` while pieces are missing, or why the
    /// fragment was dropped. `room` is the most this face may hold with the new
    /// piece kept ([`held`](Self::held)). A piece that does not fit first gives up
    /// older packets in progress — this face's, or under a `Budget` any face's,
    /// oldest first — and drops its own packet ([`FragError::NoRoom`]), freeing
    /// what it held, only when that is the oldest left.
    pub fn accept(&mut self, lp: LpPacket, now: Instant, room: usize) -> Result<Option<Bytes>, FragError> {
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
            self.expire(now);
            return finish(vec![piece], &lp.headers).map(Some);
        }
        let base = lp.sequence.ok_or(FragError::NoSequence)?.wrapping_sub(index);
        let (count, index) = (count as usize, index as usize);
        if piece.is_empty() && index + 1 < count {
            return Err(FragError::NoPayload);
        }
        let declared = if index == 0 { declared_len(&piece, count) } else { Ok(None) };
        let f = Fragment { base, index, count, piece, declared, headers: lp.headers };
        let pool = Arc::clone(self.pool.get_or_insert_with(Default::default));
        pool.update(|s| {
            let tally = self.tally.get_or_insert_with(|| {
                s.next_face += 1;
                Arc::new(Tally { face: s.next_face, held: AtomicUsize::new(0), partials: AtomicUsize::new(0) })
            });
            s.accept(tally, f, now, room)
        })
    }

    /// Joins `pool`, giving up what it held in another.
    fn join(&mut self, pool: &Arc<Pool>) {
        if self.pool.as_ref().is_some_and(|p| Arc::ptr_eq(p, pool)) {
            return;
        }
        self.clear();
        self.pool = Some(Arc::clone(pool));
        self.tally = None;
    }

    /// Gives up every packet in progress.
    fn clear(&self) {
        if let (Some(pool), Some(tally)) = (&self.pool, &self.tally) {
            if tally.partials.load(Relaxed) > 0 {
                pool.update(|s| s.clear(tally.face));
            }
        }
    }
}

impl Drop for Reassembler {
    /// A face's packets in progress go with it, also out of a shared pool.
    fn drop(&mut self) {
        self.clear();
    }
}

/// The bytes all of a shell's reassemblers may hold together, and what they
/// hold now: without it each face is bounded, but a peer spoofing many sources
/// (one on-demand face each) could hold [`MAX_HELD_PER_FACE`] per face. The
/// faces it lends room to keep their packets in its pool, so that one face's
/// fresh packet can take the place of another's oldest.
pub(crate) struct Budget {
    limit: usize,
    pool: Arc<Pool>,
}

impl Budget {
    /// A budget of `limit` bytes, none of it used.
    pub(crate) fn new(limit: usize) -> Self {
        Budget { limit, pool: Arc::default() }
    }

    /// Runs `f` on a face's reassembler with the room the other faces leave it
    /// (their packets older than the one a piece is for give way to it when it
    /// needs more). Cheap: it runs for every packet a face receives.
    pub(crate) fn with<T>(&mut self, r: &mut Reassembler, f: impl FnOnce(&mut Reassembler, usize) -> T) -> T {
        r.join(&self.pool);
        let others = self.held().saturating_sub(r.held());
        f(r, self.limit.saturating_sub(others))
    }

    /// Returns what a closing face's reassembler held.
    pub(crate) fn release(&mut self, r: &Reassembler) {
        if r.pool.as_ref().is_some_and(|p| Arc::ptr_eq(p, &self.pool)) {
            r.clear();
        }
    }

    /// Bytes held now, by every face together.
    pub(crate) fn held(&self) -> usize {
        self.pool.held.load(Relaxed)
    }

    /// Packets in progress given up so far for newer ones, on every face.
    pub(crate) fn evicted(&self) -> usize {
        self.pool.evicted.load(Relaxed)
    }
}

/// The length fragment 0 (`piece`) declares for the whole packet, when it
/// holds all of the packet's TLV header, checked against the limits: no larger
/// than [`MAX_PACKET_SIZE`], and leaving, past fragment 0, enough bytes for the
/// other `count` fragments, each but the last carrying at least one. A header
/// that does not parse is left for [`finish`] to reject.
fn declared_len(piece: &[u8], count: usize) -> Result<Option<usize>, FragError> {
    let mut pos = 0;
    match read_varnum(piece, &mut pos) {
        Ok(typ) if typ != 0 && typ <= u64::from(u32::MAX) => {}
        _ => return Ok(None),
    }
    let Ok(len) = read_varnum(piece, &mut pos) else { return Ok(None) };
    let total = (pos as u64).saturating_add(len);
    if total > MAX_PACKET_SIZE as u64 {
        return Err(FragError::TooLarge);
    }
    let total = total as usize;
    if count > total.saturating_sub(piece.len()) + 2 {
        return Err(FragError::TooManyFragments);
    }
    Ok(Some(total))
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
        assert_eq!(r.held(), charge(1, 1));
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
        assert_eq!(r.accept(frag(0, 0, 3, b"abc"), now, charge(1, 3) - 1), Err(FragError::NoRoom));
        assert_eq!((r.in_progress(), r.held()), (0, 0));
        // Room for the first piece but not the second: the packet goes.
        assert_eq!(r.accept(frag(10, 0, 3, b"abc"), now, charge(2, 4)), Ok(None));
        assert_eq!(r.held(), charge(1, 3));
        assert_eq!(r.accept(frag(11, 1, 3, b"de"), now, charge(2, 4)), Err(FragError::NoRoom));
        assert_eq!((r.in_progress(), r.held()), (0, 0));
        // With room, the same pieces complete (the last one is not kept, so needs none).
        assert_eq!(r.accept(frag(20, 0, 3, &[6, 3]), now, charge(2, 3)), Ok(None));
        assert_eq!(r.accept(frag(21, 1, 3, &[1]), now, charge(2, 3)), Ok(None));
        assert_eq!(r.accept(frag(22, 2, 3, &[2, 3]), now, charge(2, 3)), Ok(Some(Bytes::from_static(&[6, 3, 1, 2, 3]))));
        assert_eq!((r.in_progress(), r.held()), (0, 0));
    }

    #[test]
    fn expiry_frees_what_a_silent_face_holds() {
        let mut r = Reassembler::new();
        let t0 = Instant::now();
        assert_eq!(r.accept(frag(0, 0, 2, b"ab"), t0, MAX_HELD_PER_FACE), Ok(None));
        r.expire(t0 + REASSEMBLY_TIMEOUT / 2);
        assert_eq!(r.held(), charge(1, 2));
        r.expire(t0 + REASSEMBLY_TIMEOUT);
        assert_eq!((r.in_progress(), r.held()), (0, 0));
    }

    /// The flood a review found, scaled to 1/64 of the router's 16 MiB: 260
    /// sources sending 16 one-byte fragments of FragCount 128 each were charged
    /// about 4.2 KB a byte, filled the budget with 87 KB of traffic, and left no
    /// room for a 4 KB packet in 3 fragments.
    #[test]
    fn a_flood_of_tiny_fragments_leaves_room_for_real_packets() {
        let limit = (16 << 20) / 64;
        let mut budget = Budget::new(limit);
        let now = Instant::now();
        let mut sources: Vec<Reassembler> = (0..260 / 64 + 1).map(|_| Reassembler::new()).collect();
        for (k, r) in sources.iter_mut().enumerate() {
            for i in 0..16 {
                let lp = frag(k as u64 * 100_000 + i * 1000 + 1, 1, MAX_FRAG_COUNT, b"x");
                let _ = budget.with(r, |r, room| r.accept(lp, now, room));
            }
        }
        let mut legit = Reassembler::new();
        let pkt = packet(4000);
        let mut out = Ok(None);
        for f in fragments(&pkt, 3, 7, LpHeaders::default()) {
            out = budget.with(&mut legit, |r, room| r.accept(f, now, room));
        }
        assert_eq!(out, Ok(Some(pkt)));
        // What the flood pins is a piece's byte and a small overhead per packet.
        assert_eq!(budget.held(), sources.len() * 16 * charge(1, 1));
        assert!(charge(1, 1) < 512, "{} bytes held for a 1-byte piece", charge(1, 1));
    }

    /// What a packet in progress costs grows with the pieces that arrived, not
    /// with the FragCount they claim.
    #[test]
    fn a_packet_in_progress_costs_what_arrived_not_its_frag_count() {
        let now = Instant::now();
        let (mut two, mut most) = (Reassembler::new(), Reassembler::new());
        assert_eq!(two.accept(frag(1, 1, 2, b"x"), now, MAX_HELD_PER_FACE), Ok(None));
        assert_eq!(most.accept(frag(1, 1, MAX_FRAG_COUNT, b"x"), now, MAX_HELD_PER_FACE), Ok(None));
        assert_eq!((two.held(), most.held()), (charge(1, 1), charge(1, 1)));
        for i in 2..6 {
            assert_eq!(most.accept(frag(i, i, MAX_FRAG_COUNT, b"x"), now, MAX_HELD_PER_FACE), Ok(None));
        }
        assert_eq!(most.held(), charge(8, 5));
    }

    /// A flood that does fill the budget, with pieces as large as a link carries
    /// and spread over faces, cannot keep a fresh packet out: the oldest packets
    /// in progress, on any face, make way for it, and the budget still holds.
    #[test]
    fn a_full_budget_gives_up_the_oldest_packets_for_fresh_ones() {
        let limit = 64 << 10;
        let mut budget = Budget::new(limit);
        let t0 = Instant::now();
        let mut sources: Vec<Reassembler> = (0..8).map(|_| Reassembler::new()).collect();
        for round in 0..16 {
            for r in &mut sources {
                let lp = frag(round * 1000 + 1, 1, 7, &[7; 1400]);
                assert_eq!(budget.with(r, |r, room| r.accept(lp, t0, room)), Ok(None));
                assert!(budget.held() <= limit, "{} held of {limit}", budget.held());
            }
        }
        assert!(budget.held() + charge(1, 1400) > limit, "the flood fills the budget");
        let kept: usize = sources.iter().map(Reassembler::in_progress).sum();
        assert_eq!(budget.evicted(), 8 * 16 - kept, "every packet given up is counted");
        // The first rounds went first.
        let oldest_left = sources.iter().map(Reassembler::in_progress).min();
        assert!(oldest_left < Some(16));
        let mut legit = Reassembler::new();
        let pkt = packet(4000);
        let later = t0 + Duration::from_millis(1);
        let mut out = Ok(None);
        for f in fragments(&pkt, 3, 7, LpHeaders::default()) {
            out = budget.with(&mut legit, |r, room| r.accept(f, later, room));
            assert!(budget.held() <= limit, "{} held of {limit}", budget.held());
        }
        assert_eq!(out, Ok(Some(pkt)));
        assert_eq!(budget.held(), sources.iter().map(Reassembler::held).sum::<usize>());
    }

    /// Room goes to the newer packet: a piece that does not fit gives up older
    /// packets, whichever face they are on, or its own packet when that is the
    /// oldest, never a newer one.
    #[test]
    fn older_packets_give_way_to_newer_ones() {
        let piece = [7; 1400];
        let limit = 2 * charge(1, 1400) + 100;
        let mut budget = Budget::new(limit);
        let now = Instant::now();
        let (mut a, mut b) = (Reassembler::new(), Reassembler::new());
        let mut accept = |r: &mut Reassembler, seq, index| budget.with(r, |r, room| r.accept(frag(seq, index, 4, &piece), now, room));
        assert_eq!(accept(&mut a, 101, 1), Ok(None));
        assert_eq!(accept(&mut b, 201, 1), Ok(None));
        // a's packet is the oldest: it goes, b's stays.
        assert_eq!(accept(&mut a, 102, 2), Err(FragError::NoRoom));
        assert_eq!((a.in_progress(), b.in_progress()), (0, 1));
        assert_eq!(accept(&mut b, 301, 1), Ok(None));
        // Now b's first packet is the oldest, and gives way to a's new one.
        assert_eq!(accept(&mut a, 401, 1), Ok(None));
        assert_eq!((a.in_progress(), b.in_progress()), (1, 1));
        assert_eq!(accept(&mut b, 302, 2), Err(FragError::NoRoom));
        assert_eq!(accept(&mut b, 202, 2), Ok(None));
        assert!(budget.held() <= limit);
    }

    /// NDNLPv2 puts bytes in every fragment but the last, and fragment 0 begins
    /// with the packet's TLV header: a FragCount those bytes cannot fill, a
    /// declared length past the limit, or pieces past the declared length are
    /// rejected at once, not after waiting for pieces that cannot come.
    #[test]
    fn fragment_zero_bounds_its_packet() {
        let mut r = Reassembler::new();
        let now = Instant::now();
        let room = MAX_HELD_PER_FACE;
        // 06 02 xx yy: 4 bytes, 3 of them in fragment 0, so at most 3 fragments.
        assert_eq!(r.accept(frag(0, 0, 4, &[6, 2, 1]), now, room), Err(FragError::TooManyFragments));
        assert_eq!(r.in_progress(), 0);
        assert_eq!(r.accept(frag(10, 0, 3, &[6, 2, 1]), now, room), Ok(None));
        assert_eq!(r.accept(frag(11, 1, 3, &[2]), now, room), Ok(None));
        // Only the last fragment may be empty.
        assert_eq!(r.accept(frag(12, 2, 3, &[]), now, room), Ok(Some(Bytes::from_static(&[6, 2, 1, 2]))));
        assert_eq!(r.accept(frag(21, 1, 3, &[]), now, room), Err(FragError::NoPayload));
        assert_eq!(r.in_progress(), 0);
        // A packet past the limit is refused on its header.
        assert_eq!(r.accept(frag(30, 0, 2, &[6, 0xFD, 0x30, 0x00]), now, room), Err(FragError::TooLarge));
        assert_eq!(r.in_progress(), 0);
        // Fragment 0 coming after siblings that already hold more than it declares,
        // or than it leaves room for, drops the packet.
        assert_eq!(r.accept(frag(41, 1, 3, &[1, 2, 3]), now, room), Ok(None));
        assert_eq!(r.accept(frag(40, 0, 3, &[6, 2, 1]), now, room), Err(FragError::Malformed));
        assert_eq!(r.in_progress(), 0);
        assert_eq!(r.accept(frag(51, 1, 9, &[1]), now, room), Ok(None));
        assert_eq!(r.accept(frag(50, 0, 9, &[6, 2, 1]), now, room), Err(FragError::TooManyFragments));
        assert_eq!((r.in_progress(), r.held()), (0, 0));
    }

    /// A face that closes, or whose reassembler is dropped, gives back what it
    /// held in the pool it shared.
    #[test]
    fn a_released_or_dropped_face_gives_back_what_it_held() {
        let mut budget = Budget::new(MAX_HELD_PER_FACE);
        let now = Instant::now();
        let (mut a, mut b) = (Reassembler::new(), Reassembler::new());
        assert_eq!(budget.with(&mut a, |r, room| r.accept(frag(0, 0, 2, &[6, 3, 1]), now, room)), Ok(None));
        assert_eq!(budget.with(&mut b, |r, room| r.accept(frag(0, 0, 2, &[6, 3, 1]), now, room)), Ok(None));
        assert_eq!(budget.held(), 2 * charge(1, 3));
        budget.release(&a);
        assert_eq!((a.in_progress(), a.held(), budget.held()), (0, 0, charge(1, 3)));
        drop(b);
        assert_eq!(budget.held(), 0);
        // The other face's packet is gone too: its sibling starts a new one.
        assert_eq!(budget.with(&mut a, |r, room| r.accept(frag(1, 1, 2, &[2, 3]), now, room)), Ok(None));
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
                // Fragment 0 starts with a header declaring a large packet, so
                // that its siblings are not all malformed from the start.
                let mut payload = vec![7; a.len];
                if a.index == 0 && a.len >= 4 {
                    payload[..4].copy_from_slice(&[6, 0xFD, 0x1F, 0x40]);
                }
                let lp = frag(a.packet * 1000 + a.index, a.index, a.count, &payload);
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
