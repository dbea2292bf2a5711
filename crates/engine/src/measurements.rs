//! What the dynamic strategy learns of its upstreams: CCN-par's dynamic forwarding
//! (§II-E), after Carofiglio et al. (ICNP 2013).
//!
//! For each FIB prefix an Interest under the strategy matched, and each face it
//! went to, the table counts the Interests still pending there and keeps a moving
//! average of that count. A face whose Interests come back slowly, or not at all,
//! holds more of them pending, so the strategy sends it a smaller share: each
//! Interest goes to one next hop drawn at random with weight `1 / (1 + average)`.
//! At first every face weighs one and traffic is spread evenly; a face that stops
//! answering keeps its Interests pending until they expire and its share falls
//! towards nothing, though never to nothing: the few Interests it still gets find
//! out when it answers again.
//!
//! Each worker keeps its own table, as it keeps its own PIT: the counts it holds
//! are its Interests'. A PIT out-record names the entry it was counted in
//! ([`MeasureId`]), so the count goes down exactly once when the upstream
//! answers (Data or Nack) or the Interest ends (satisfied from elsewhere,
//! expired, given up), whatever the FIB has become since.

use foldhash::fast::RandomState;
use hashbrown::HashMap;
use smallvec::SmallVec;

use crate::FaceId;

/// Names an entry of [`Measurements`]; [`NOT_MEASURED`] for an out-record
/// no entry counts.
pub type MeasureId = u32;

/// The [`MeasureId`] of an out-record that is not counted.
pub const NOT_MEASURED: MeasureId = 0;

/// Most entries per worker. Entries are made only for FIB prefixes (which the
/// router's operator and local applications add), one per prefix, so this
/// bound is reached only by an enormous FIB under the strategy; past it, its
/// further prefixes are forwarded evenly, unmeasured.
pub const MAX_ENTRIES: usize = 1 << 16;

/// Weight of a new count in the moving average (the rest is the old average).
const ALPHA: f32 = 1.0 / 8.0;

/// An entry with nothing pending, unused this long, is dropped (ms).
pub const IDLE_MS: u64 = 60_000;

/// How often idle entries are looked for (ms).
const SWEEP_EVERY_MS: u64 = 10_000;

/// One upstream of a prefix.
#[derive(Debug, Clone, Copy, PartialEq)]
struct FaceStat {
    face: FaceId,
    /// Interests sent there and not yet answered nor ended.
    pending: u32,
    /// Moving average of `pending`, updated whenever it changes.
    average: f32,
}

impl FaceStat {
    fn weight(&self) -> f32 {
        1.0 / (1.0 + self.average)
    }

    fn set_pending(&mut self, pending: u32) {
        self.pending = pending;
        self.average += ALPHA * (pending as f32 - self.average);
    }
}

/// The measurements of one FIB prefix (the key it has in [`Measurements::ids`]).
#[derive(Debug)]
struct Entry {
    faces: SmallVec<[FaceStat; 4]>,
    used_ms: u64,
}

impl Entry {
    fn stat(&mut self, face: FaceId) -> &mut FaceStat {
        match self.faces.iter().position(|s| s.face == face) {
            Some(i) => &mut self.faces[i],
            None => {
                self.faces.push(FaceStat { face, pending: 0, average: 0.0 });
                self.faces.last_mut().expect("just pushed")
            }
        }
    }

    fn idle(&self) -> bool {
        self.faces.iter().all(|s| s.pending == 0)
    }
}

/// The dynamic strategy's table; see the module documentation.
#[derive(Debug, Default)]
pub struct Measurements {
    /// Entry ids by prefix (a name's TLV value bytes).
    ids: HashMap<Box<[u8]>, MeasureId, RandomState>,
    /// `entries[id - 1]`; `None` where an entry was dropped.
    entries: Vec<Option<Entry>>,
    /// Ids of dropped entries, to be reused.
    free: Vec<MeasureId>,
    next_sweep_ms: u64,
}

impl Measurements {
    /// Entries held (`n_measurements_entries` of the forwarder's status).
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// Whether the table holds nothing, so that forwarding under other
    /// strategies need not look at their out-records.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// The entry of the FIB prefix whose TLV value is `prefix`, made if there is
    /// none; [`NOT_MEASURED`] when the table is full.
    pub fn entry(&mut self, prefix: &[u8], now_ms: u64) -> MeasureId {
        let id = match self.ids.get(prefix) {
            Some(&id) => id,
            None if self.ids.len() >= MAX_ENTRIES => return NOT_MEASURED,
            None => {
                let entry = Some(Entry { faces: SmallVec::new(), used_ms: now_ms });
                let id = match self.free.pop() {
                    Some(id) => {
                        self.entries[id as usize - 1] = entry;
                        id
                    }
                    None => {
                        self.entries.push(entry);
                        self.entries.len() as MeasureId
                    }
                };
                self.ids.insert(prefix.into(), id);
                id
            }
        };
        if let Some(e) = self.get_mut(id) {
            e.used_ms = now_ms;
        }
        id
    }

    fn get_mut(&mut self, id: MeasureId) -> Option<&mut Entry> {
        self.entries.get_mut((id as usize).checked_sub(1)?)?.as_mut()
    }

    /// Draws one of `candidates` (not empty) for an Interest counted in `id`,
    /// each with weight `1 / (1 + its average pending count)`; `r` is a uniform
    /// random number in [0, 1). Unmeasured ([`NOT_MEASURED`]), all weigh one.
    pub fn choose(&mut self, id: MeasureId, candidates: &[FaceId], r: f32) -> FaceId {
        debug_assert!(!candidates.is_empty());
        let weights: SmallVec<[f32; 8]> = match self.get_mut(id) {
            Some(e) => {
                // Faces no longer among the next hops are forgotten once
                // nothing is pending there: a prefix whose producers come and
                // go (each a new face) keeps a short list.
                e.faces.retain(|s| s.pending > 0 || candidates.contains(&s.face));
                candidates.iter().map(|&f| e.stat(f).weight()).collect()
            }
            None => candidates.iter().map(|_| 1.0).collect(),
        };
        let mut left = r * weights.iter().sum::<f32>();
        for (&face, w) in candidates.iter().zip(&weights) {
            if left < *w {
                return face;
            }
            left -= w;
        }
        // Rounding left a sliver past the last weight.
        *candidates.last().expect("not empty")
    }

    /// An Interest counted in `id` went to `face`.
    pub fn sent(&mut self, id: MeasureId, face: FaceId) {
        if let Some(e) = self.get_mut(id) {
            let s = e.stat(face);
            s.set_pending(s.pending.saturating_add(1));
        }
    }

    /// An Interest counted in `id` is no longer pending at `face`: the face
    /// answered it, or the Interest ended.
    pub fn answered(&mut self, id: MeasureId, face: FaceId) {
        if let Some(s) = self.get_mut(id).and_then(|e| e.faces.iter_mut().find(|s| s.face == face)) {
            s.set_pending(s.pending.saturating_sub(1));
        }
    }

    /// The pending count and its moving average for `face` under the prefix
    /// whose TLV value is `prefix`, if measured.
    pub fn pending(&self, prefix: &[u8], face: FaceId) -> Option<(u32, f32)> {
        let id = *self.ids.get(prefix)?;
        let e = self.entries.get(id as usize - 1)?.as_ref()?;
        e.faces.iter().find(|s| s.face == face).map(|s| (s.pending, s.average))
    }

    /// Interests counted as pending, over every prefix and face: none once
    /// every Interest has ended (the fuzz target's check that no count leaks).
    pub fn pending_total(&self) -> u64 {
        self.entries.iter().flatten().flat_map(|e| &e.faces).map(|s| u64::from(s.pending)).sum()
    }

    /// Drops the entries with nothing pending that went unused for [`IDLE_MS`]
    /// (their prefixes left the FIB or the strategy, or carry no traffic),
    /// looking at most every few seconds. Nothing counts in a dropped entry,
    /// so no out-record refers to it.
    pub fn sweep(&mut self, now_ms: u64) {
        if self.ids.is_empty() || now_ms < self.next_sweep_ms {
            return;
        }
        self.next_sweep_ms = now_ms.saturating_add(SWEEP_EVERY_MS);
        let Measurements { ids, entries, free, .. } = self;
        ids.retain(|_, &mut id| {
            let slot = &mut entries[id as usize - 1];
            let idle = slot.as_ref().is_some_and(|e| e.idle() && e.used_ms.saturating_add(IDLE_MS) <= now_ms);
            if idle {
                *slot = None;
                free.push(id);
            }
            !idle
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// How often each of `faces` is drawn in `n` evenly spread draws.
    fn shares(m: &mut Measurements, id: MeasureId, faces: &[FaceId], n: usize) -> Vec<usize> {
        let mut got = vec![0; faces.len()];
        for k in 0..n {
            let f = m.choose(id, faces, k as f32 / n as f32);
            got[faces.iter().position(|&x| x == f).unwrap()] += 1;
        }
        got
    }

    #[test]
    fn faces_start_with_equal_shares() {
        let mut m = Measurements::default();
        let id = m.entry(b"\x08\x01a", 0);
        assert_eq!(shares(&mut m, id, &[1, 2], 1000), [500, 500]);
        assert_eq!(shares(&mut m, NOT_MEASURED, &[1, 2, 3, 4], 400), [100; 4]);
    }

    #[test]
    fn a_face_holding_pending_interests_gets_a_smaller_share() {
        let mut m = Measurements::default();
        let id = m.entry(b"\x08\x01a", 0);
        for _ in 0..50 {
            m.sent(id, 1);
            m.sent(id, 2);
            m.answered(id, 2);
        }
        let (pending, average) = m.pending(b"\x08\x01a", 1).unwrap();
        assert_eq!(pending, 50);
        assert!(average > 40.0, "{average}");
        assert_eq!(m.pending(b"\x08\x01a", 2).unwrap().0, 0);
        let s = shares(&mut m, id, &[1, 2], 1000);
        assert!(s[0] > 0 && s[0] < 50, "{s:?}");
        // Once face 1's Interests end, its share comes back.
        for _ in 0..50 {
            m.answered(id, 1);
        }
        for _ in 0..50 {
            m.sent(id, 1);
            m.answered(id, 1);
        }
        let s = shares(&mut m, id, &[1, 2], 1000);
        assert!(s[0] > 400, "{s:?}");
    }

    #[test]
    fn counts_never_go_below_zero_nor_touch_other_prefixes() {
        let mut m = Measurements::default();
        let (a, b) = (m.entry(b"a", 0), m.entry(b"b", 0));
        assert_ne!(a, b);
        assert_eq!(m.entry(b"a", 0), a);
        m.answered(a, 1);
        m.sent(b, 1);
        m.answered(a, 1);
        assert_eq!(m.pending(b"a", 1), None, "answered alone makes no record");
        assert_eq!(m.pending(b"b", 1).unwrap().0, 1);
        m.answered(NOT_MEASURED, 1);
        m.answered(99, 1);
    }

    #[test]
    fn idle_entries_are_dropped_and_their_ids_reused() {
        let mut m = Measurements::default();
        let a = m.entry(b"a", 0);
        let b = m.entry(b"b", 0);
        m.sent(b, 7);
        m.sweep(IDLE_MS);
        assert_eq!(m.len(), 1, "a is idle; b has an Interest pending");
        assert_eq!(m.pending(b"b", 7).unwrap().0, 1);
        assert_eq!(m.entry(b"c", IDLE_MS), a, "a's id is reused");
        m.answered(b, 7);
        m.sweep(IDLE_MS + 1);
        assert_eq!(m.len(), 2, "swept at most every few seconds");
        m.sweep(2 * IDLE_MS + SWEEP_EVERY_MS);
        assert!(m.is_empty());
        // The clock's end (a fuzzer's last tick) overflows nothing.
        m.entry(b"d", u64::MAX);
        m.sweep(u64::MAX);
        m.sweep(u64::MAX);
        assert!(m.is_empty(), "by then everything is idle");
    }

    #[test]
    fn faces_gone_from_the_next_hops_are_forgotten_once_nothing_is_pending_there() {
        let mut m = Measurements::default();
        let id = m.entry(b"p", 0);
        for face in 1..=100 {
            m.sent(id, face);
            if face != 50 {
                m.answered(id, face);
            }
        }
        m.choose(id, &[200, 201], 0.5);
        let kept: Vec<FaceId> = m.get_mut(id).unwrap().faces.iter().map(|s| s.face).collect();
        assert_eq!(kept, [50, 200, 201], "face 50 still has an Interest pending");
    }

    #[test]
    fn a_full_table_measures_no_new_prefix() {
        let mut m = Measurements::default();
        for i in 0..MAX_ENTRIES as u32 {
            assert_ne!(m.entry(&i.to_be_bytes(), 0), NOT_MEASURED);
        }
        assert_eq!(m.entry(b"one more", 0), NOT_MEASURED);
        assert_ne!(m.entry(&0u32.to_be_bytes(), 0), NOT_MEASURED, "an existing prefix still is");
    }
}
