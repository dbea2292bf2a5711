//! NDNLPv2 reassembly for clients: a forwarder fragments a Data packet larger than a
//! UDP face's MTU (ndnd's default is 1420 bytes), so a consumer on a UDP transport
//! must put the pieces back together.
//!
//! Bounded: at most [`MAX_PARTIAL`] packets in progress (the oldest is dropped when a
//! new one starts), at most [`MAX_FRAGMENTS`] pieces each, and never more than
//! `MAX_PACKET_SIZE` bytes in a reassembled packet.

use std::collections::HashMap;

use bytes::{Bytes, BytesMut};
use trajan_wire::{LpPacket, MAX_PACKET_SIZE};

/// Packets being reassembled at once; a client has few in flight per round trip.
pub const MAX_PARTIAL: usize = 64;
/// Pieces per packet: an 8800-byte packet over a 576-byte MTU needs about 16.
pub const MAX_FRAGMENTS: u64 = 64;

struct Partial {
    pieces: Vec<Option<Bytes>>,
    have: usize,
    size: usize,
    /// Insertion order, to evict the oldest.
    started: u64,
}

/// Reassembles fragmented LpPackets; unfragmented ones pass through.
#[derive(Default)]
pub struct Reassembler {
    partial: HashMap<u64, Partial>,
    counter: u64,
    /// Fragments dropped as malformed or evicted, for diagnostics.
    pub dropped: u64,
}

impl Reassembler {
    /// Accepts one decoded LpPacket; returns the network-layer packet once whole.
    pub fn push(&mut self, lp: LpPacket) -> Option<Bytes> {
        let fragment = lp.fragment?;
        let count = lp.frag_count.unwrap_or(1);
        if count <= 1 {
            return Some(fragment);
        }
        let (Some(seq), index) = (lp.sequence, lp.frag_index.unwrap_or(0)) else {
            self.dropped += 1;
            return None;
        };
        if count > MAX_FRAGMENTS || index >= count {
            self.dropped += 1;
            return None;
        }
        let base = seq.wrapping_sub(index);
        if !self.partial.contains_key(&base) && self.partial.len() >= MAX_PARTIAL {
            if let Some(oldest) = self.partial.iter().min_by_key(|(_, p)| p.started).map(|(k, _)| *k) {
                self.partial.remove(&oldest);
                self.dropped += 1;
            }
        }
        self.counter += 1;
        let started = self.counter;
        let p = self.partial.entry(base).or_insert_with(|| Partial {
            pieces: vec![None; count as usize],
            have: 0,
            size: 0,
            started,
        });
        if p.pieces.len() as u64 != count || p.size + fragment.len() > MAX_PACKET_SIZE {
            self.partial.remove(&base);
            self.dropped += 1;
            return None;
        }
        let slot = &mut p.pieces[index as usize];
        if slot.is_none() {
            p.size += fragment.len();
            p.have += 1;
            *slot = Some(fragment);
        }
        if p.have < p.pieces.len() {
            return None;
        }
        let p = self.partial.remove(&base)?;
        let mut whole = BytesMut::with_capacity(p.size);
        p.pieces.iter().flatten().for_each(|piece| whole.extend_from_slice(piece));
        Some(whole.freeze())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn piece(seq: u64, index: u64, count: u64, data: &[u8]) -> LpPacket {
        LpPacket {
            sequence: Some(seq),
            frag_index: Some(index),
            frag_count: Some(count),
            fragment: Some(Bytes::copy_from_slice(data)),
            ..Default::default()
        }
    }

    #[test]
    fn reassembles_out_of_order_and_ignores_duplicates() {
        let mut r = Reassembler::default();
        assert_eq!(r.push(piece(12, 2, 3, b"c")), None);
        assert_eq!(r.push(piece(10, 0, 3, b"a")), None);
        assert_eq!(r.push(piece(10, 0, 3, b"a")), None);
        assert_eq!(r.push(piece(11, 1, 3, b"b")).as_deref(), Some(&b"abc"[..]));
        assert!(r.partial.is_empty());
    }

    #[test]
    fn passes_whole_packets_and_bounds_state() {
        let mut r = Reassembler::default();
        let whole = LpPacket { fragment: Some(Bytes::from_static(b"x")), ..Default::default() };
        assert_eq!(r.push(whole).as_deref(), Some(&b"x"[..]));
        for i in 0..(MAX_PARTIAL as u64 + 10) {
            assert_eq!(r.push(piece(i * 100, 0, 2, b"p")), None);
        }
        assert_eq!(r.partial.len(), MAX_PARTIAL);
        assert_eq!(r.dropped, 10);
        // Too many pieces, a count that changes, an oversized packet.
        assert_eq!(r.push(piece(5, 0, MAX_FRAGMENTS + 1, b"p")), None);
        assert_eq!(r.push(piece(5, 5, 5, b"p")), None);
        assert_eq!(r.push(piece(2001, 1, 3, b"p")), None);
        assert!(!r.partial.contains_key(&2000));
        let big = vec![0u8; MAX_PACKET_SIZE];
        assert_eq!(r.push(piece(7000, 0, 2, &big)), None);
        assert_eq!(r.push(piece(7001, 1, 2, b"more")), None);
    }
}
