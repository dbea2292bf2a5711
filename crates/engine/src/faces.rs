//! The engine's view of faces: only what forwarding decisions need (scope, local
//! fields) and the per-packet-type counters NFD reports in `faces/list`. Sockets,
//! addresses and byte counters belong to the I/O layer.

use foldhash::fast::RandomState;
use hashbrown::HashMap;

use crate::counters::PacketCounters;
use crate::FaceId;

/// Per-face packet counters.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FaceCounters {
    /// Packets in and out of this face (NFD's `faces/list` counters).
    pub packets: PacketCounters,
    /// Packets from this face that failed to decode.
    pub malformed: u64,
}

/// What the engine knows about a face.
#[derive(Debug, Clone, Default)]
pub struct FaceMeta {
    /// Local faces (Unix socket, loopback, the internal face) may send `/localhost`
    /// packets and management commands.
    pub local: bool,
    /// NFD's "local fields": packets to this face carry IncomingFaceId, and
    /// NextHopFaceId from it is honoured. Only meaningful on local faces.
    pub local_fields: bool,
    /// Nacks go to and come from point-to-point faces only: on a multi-access
    /// face (a shared medium) they are neither sent nor accepted, as in NFD.
    pub point_to_point: bool,
    /// What went through the face, for `faces/list`.
    pub counters: FaceCounters,
}

/// The IncomingFaceId a Data answered from the content store carries to a
/// face with local fields (NFD's `FACEID_CONTENT_STORE`): no face received
/// it, and a local application such as a cache inspector tells a cached
/// answer from a fresh one by it. Reserved: the I/O layer numbers faces from
/// 256.
pub const CONTENT_STORE_FACE: FaceId = 254;

/// Faces the table holds in its direct-mapped slots: face `id` goes to slot
/// `id % SLOTS`. Face ids are handed out in sequence, so a router's first 64
/// faces, and any 64 made one after another, never share a slot.
const SLOTS: usize = 64;

/// All faces the engine may forward to.
///
/// Looked up about seven times per Interest–Data exchange, so a face sits in a
/// direct-mapped slot found by its id alone: one load and one compare, where a
/// hash map's probe cost ≈ 10 instructions more per lookup and 70 per exchange
/// (docs/PERFORMANCE.md, "the face table"). A face whose slot is taken waits in a hash map (keyed
/// with a fast hasher: face ids are assigned by the router, not chosen by the
/// network), and moves into the slot when it frees.
#[derive(Debug)]
pub struct FaceTable {
    /// An array, not a slice: a slot number below [`SLOTS`] needs no bounds
    /// check (five face lookups per exchange).
    slots: Box<[Option<(FaceId, FaceMeta)>; SLOTS]>,
    /// Faces whose slot another face holds.
    overflow: HashMap<FaceId, FaceMeta, RandomState>,
    /// The ids in `overflow`, by the slot each waits for: a removal hands its
    /// slot to a waiting face without scanning the whole map (with thousands of
    /// faces, a scan per removal made every face that closed cost milliseconds).
    waiting: Box<[Vec<FaceId>; SLOTS]>,
    /// Faces in `slots`.
    slotted: usize,
}

impl Default for FaceTable {
    fn default() -> Self {
        FaceTable {
            slots: Box::new(std::array::from_fn(|_| None)),
            overflow: HashMap::default(),
            waiting: Box::new(std::array::from_fn(|_| Vec::new())),
            slotted: 0,
        }
    }
}

#[inline]
fn slot_of(id: FaceId) -> usize {
    id as usize % SLOTS
}

impl FaceTable {
    /// Adds or replaces a face.
    pub fn insert(&mut self, id: FaceId, meta: FaceMeta) {
        let s = slot_of(id);
        match &mut self.slots[s] {
            Some((k, m)) if *k == id => *m = meta,
            Some(_) => {
                if self.overflow.insert(id, meta).is_none() {
                    self.waiting[s].push(id);
                }
            }
            slot @ None => {
                *slot = Some((id, meta));
                self.slotted += 1;
            }
        }
    }

    /// Takes `id` out of the overflow map; returns whether it was there.
    fn remove_waiting(&mut self, id: FaceId) -> bool {
        if self.overflow.remove(&id).is_none() {
            return false;
        }
        let waiting = &mut self.waiting[slot_of(id)];
        if let Some(i) = waiting.iter().position(|&w| w == id) {
            waiting.swap_remove(i);
        }
        true
    }

    /// Removes a face; returns whether it existed.
    pub fn remove(&mut self, id: FaceId) -> bool {
        let s = slot_of(id);
        if !matches!(&self.slots[s], Some((k, _)) if *k == id) {
            return self.remove_waiting(id);
        }
        // A face waiting for this slot takes it.
        let waiting = self.waiting[s].pop();
        self.slots[s] = waiting.and_then(|w| self.overflow.remove(&w).map(|m| (w, m)));
        if self.slots[s].is_none() {
            self.slotted -= 1;
        }
        true
    }

    /// A face's metadata.
    #[inline]
    pub fn get(&self, id: FaceId) -> Option<&FaceMeta> {
        match &self.slots[slot_of(id)] {
            Some((k, m)) if *k == id => Some(m),
            _ if self.overflow.is_empty() => None,
            _ => self.overflow.get(&id),
        }
    }

    /// A face's metadata, mutably (for counters and the local-fields flag).
    #[inline]
    pub fn get_mut(&mut self, id: FaceId) -> Option<&mut FaceMeta> {
        match &mut self.slots[slot_of(id)] {
            Some((k, m)) if *k == id => Some(m),
            _ if self.overflow.is_empty() => None,
            _ => self.overflow.get_mut(&id),
        }
    }

    /// Iterates over faces.
    pub fn iter(&self) -> impl Iterator<Item = (FaceId, &FaceMeta)> {
        let slotted = self.slots.iter().flatten().map(|(k, v)| (*k, v));
        slotted.chain(self.overflow.iter().map(|(k, v)| (*k, v)))
    }

    /// Number of faces.
    pub fn len(&self) -> usize {
        self.slotted + self.overflow.len()
    }

    /// True when there are no faces.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    fn meta(tag: u64) -> FaceMeta {
        let mut m = FaceMeta::default();
        m.counters.malformed = tag;
        m
    }

    #[derive(Clone, Debug)]
    enum Op {
        Insert(FaceId, u64),
        Remove(FaceId),
        Bump(FaceId),
    }

    /// Ids from three runs a multiple of `SLOTS` apart, so slots collide often.
    fn id() -> impl Strategy<Value = FaceId> {
        (0..3u32, 0..6u32).prop_map(|(run, k)| run * SLOTS as u32 + k + 1)
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            (id(), any::<u64>()).prop_map(|(i, t)| Op::Insert(i, t)),
            id().prop_map(Op::Remove),
            id().prop_map(Op::Bump),
        ]
    }

    proptest! {
        /// Against a map: whichever of slot and overflow holds a face, every
        /// lookup, update, removal, count and iteration agrees.
        #[test]
        fn behaves_as_a_map(ops in proptest::collection::vec(op(), 1..200)) {
            let (mut t, mut model) = (FaceTable::default(), BTreeMap::new());
            for op in ops {
                match op {
                    Op::Insert(i, tag) => {
                        t.insert(i, meta(tag));
                        model.insert(i, tag);
                    }
                    Op::Remove(i) => prop_assert_eq!(t.remove(i), model.remove(&i).is_some()),
                    Op::Bump(i) => {
                        let got = t.get_mut(i).map(|m| {
                            m.counters.malformed = m.counters.malformed.wrapping_add(1);
                            m.counters.malformed
                        });
                        let want = model.get_mut(&i).map(|v| {
                            *v = v.wrapping_add(1);
                            *v
                        });
                        prop_assert_eq!(got, want);
                    }
                }
                prop_assert_eq!(t.len(), model.len());
                prop_assert_eq!(t.is_empty(), model.is_empty());
                // Each waiting face is listed once, under its own slot, and a
                // slot has waiters only while another face holds it.
                for (s, waiting) in t.waiting.iter().enumerate() {
                    prop_assert!(waiting.is_empty() || t.slots[s].is_some());
                    for w in waiting {
                        prop_assert_eq!(slot_of(*w), s);
                        prop_assert!(t.overflow.contains_key(w));
                    }
                }
                prop_assert_eq!(t.waiting.iter().map(Vec::len).sum::<usize>(), t.overflow.len());
                for i in (0..3 * SLOTS as u32 + 8).chain([FaceId::MAX]) {
                    prop_assert_eq!(t.get(i).map(|m| m.counters.malformed), model.get(&i).copied());
                }
                let listed: BTreeMap<FaceId, u64> = t.iter().map(|(i, m)| (i, m.counters.malformed)).collect();
                prop_assert_eq!(t.iter().count(), model.len(), "a face listed twice");
                prop_assert_eq!(&listed, &model);
            }
        }
    }

    /// A face that waited in the overflow map moves into the slot its
    /// predecessor frees, so lookups of it are direct again.
    #[test]
    fn a_freed_slot_is_taken_by_a_waiting_face() {
        let mut t = FaceTable::default();
        let (a, b) = (3, 3 + SLOTS as FaceId);
        t.insert(a, meta(1));
        t.insert(b, meta(2));
        assert_eq!(t.overflow.len(), 1);
        assert!(t.remove(a));
        assert!(t.overflow.is_empty());
        assert_eq!(t.get(b).map(|m| m.counters.malformed), Some(2));
        assert_eq!(t.len(), 1);
    }
}
