//! The next-hop side table (Caesar §3.4 keeps next-hop MAC addresses in a separate
//! table and a 16-bit index per entry). Here a hash-table entry holds the index of
//! its *set* of next hops; sets are interned with a reference count, because a
//! router has few faces and most prefixes share one of a few sets, so a prefix
//! costs four bytes of next-hop information rather than a list of its own.

use std::hash::BuildHasher;

use foldhash::fast::FixedState;
use hashbrown::HashTable;

use super::FibEntry;
use crate::FaceId;

/// Index of an interned next-hop set.
pub(crate) type SetId = u32;

#[derive(Clone, Default)]
struct Slot {
    entry: FibEntry,
    refs: u32,
}

/// The interned sets, found by content (to share an equal set) and by id (for a
/// lookup's answer); freed ids are reused so ids stay dense.
#[derive(Clone, Default)]
pub(crate) struct NexthopSets {
    slots: Vec<Slot>,
    free: Vec<SetId>,
    index: HashTable<SetId>,
}

fn hash(e: &FibEntry) -> u64 {
    FixedState::default().hash_one(e)
}

impl NexthopSets {
    /// Takes a reference to the set equal to `entry`, adding it if new.
    pub fn intern(&mut self, entry: FibEntry) -> SetId {
        let h = hash(&entry);
        let slots = &mut self.slots;
        if let Some(&id) = self.index.find(h, |&id| slots[id as usize].entry == entry) {
            slots[id as usize].refs += 1;
            return id;
        }
        let id = match self.free.pop() {
            Some(id) => {
                slots[id as usize] = Slot { entry, refs: 1 };
                id
            }
            None => {
                slots.push(Slot { entry, refs: 1 });
                (slots.len() - 1) as SetId
            }
        };
        self.index.insert_unique(h, id, |&id| hash(&slots[id as usize].entry));
        id
    }

    /// Drops a reference; the last one frees the set.
    pub fn release(&mut self, id: SetId) {
        let slot = &mut self.slots[id as usize];
        slot.refs -= 1;
        if slot.refs == 0 {
            let entry = std::mem::take(&mut slot.entry);
            if let Ok(found) = self.index.find_entry(hash(&entry), |&other| other == id) {
                found.remove();
            }
            self.free.push(id);
        }
    }

    /// The set `id` names: what a lookup answers with once the hash table gave
    /// the prefix's id, and what a route update copies to change.
    #[inline]
    pub fn get(&self, id: SetId) -> &FibEntry {
        &self.slots[id as usize].entry
    }

    /// Whether any referenced set has a next hop through `face`: a face with no
    /// route (nearly every face a remote peer opens) is forgotten without a
    /// pass over the prefixes. Sets are few (one per distinct next-hop list).
    pub fn any_through(&self, face: FaceId) -> bool {
        self.slots.iter().any(|s| s.refs > 0 && s.entry.nexthops.iter().any(|nh| nh.face == face))
    }

    /// Sets currently referenced.
    pub fn len(&self) -> usize {
        self.slots.len() - self.free.len()
    }

    /// Heap bytes the sets hold, spilled next-hop lists included, for the FIB's
    /// memory report.
    pub fn heap_bytes(&self) -> usize {
        let spilled: usize = self.slots.iter().filter(|s| s.entry.nexthops.spilled()).map(|s| s.entry.nexthops.capacity() * 16).sum();
        self.slots.capacity() * std::mem::size_of::<Slot>() + self.free.capacity() * 4 + self.index.capacity() * 5 + spilled
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::NextHop;

    fn entry(faces: &[u32]) -> FibEntry {
        FibEntry { nexthops: faces.iter().map(|&face| NextHop { face, cost: 0 }).collect() }
    }

    #[test]
    fn equal_sets_share_one_slot_until_the_last_release() {
        let mut s = NexthopSets::default();
        let a = s.intern(entry(&[1, 2]));
        let b = s.intern(entry(&[1, 2]));
        let c = s.intern(entry(&[3]));
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_eq!(s.len(), 2);
        s.release(a);
        assert_eq!(s.get(b), &entry(&[1, 2]));
        s.release(b);
        assert_eq!(s.len(), 1);
        let d = s.intern(entry(&[4]));
        assert_eq!(d, a, "freed slot reused");
        assert_eq!(s.intern(entry(&[1, 2])), 2, "a released set is gone from the index");
        assert_eq!(s.get(c), &entry(&[3]));
    }

    #[test]
    fn any_through_sees_only_referenced_sets() {
        let mut s = NexthopSets::default();
        let a = s.intern(entry(&[1, 2]));
        s.intern(entry(&[3]));
        assert!(s.any_through(2) && s.any_through(3));
        assert!(!s.any_through(4));
        s.release(a);
        assert!(!s.any_through(1), "a released set routes nowhere");
        assert!(s.any_through(3));
    }
}
