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
    /// Point-to-point faces get Nack Duplicate on a loop; multi-access faces do not.
    pub point_to_point: bool,
    pub counters: FaceCounters,
}

/// All faces the engine may forward to.
/// Looked up several times per packet, so keyed with a fast hasher (face ids are
/// assigned by the router, not chosen by the network).
#[derive(Debug, Default)]
pub struct FaceTable {
    faces: HashMap<FaceId, FaceMeta, RandomState>,
}

impl FaceTable {
    /// Adds or replaces a face.
    pub fn insert(&mut self, id: FaceId, meta: FaceMeta) {
        self.faces.insert(id, meta);
    }

    /// Removes a face; returns whether it existed.
    pub fn remove(&mut self, id: FaceId) -> bool {
        self.faces.remove(&id).is_some()
    }

    /// A face's metadata.
    #[inline]
    pub fn get(&self, id: FaceId) -> Option<&FaceMeta> {
        self.faces.get(&id)
    }

    /// A face's metadata, mutably (for counters and the local-fields flag).
    #[inline]
    pub fn get_mut(&mut self, id: FaceId) -> Option<&mut FaceMeta> {
        self.faces.get_mut(&id)
    }

    /// Iterates over faces.
    pub fn iter(&self) -> impl Iterator<Item = (FaceId, &FaceMeta)> {
        self.faces.iter().map(|(k, v)| (*k, v))
    }

    /// Number of faces.
    pub fn len(&self) -> usize {
        self.faces.len()
    }

    /// True when there are no faces.
    pub fn is_empty(&self) -> bool {
        self.faces.is_empty()
    }
}
