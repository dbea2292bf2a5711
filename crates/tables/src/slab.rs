//! A generational slab: entries live in one vector and are named by (index,
//! generation), so a table can hand out small copyable handles (PIT ids, timer ids)
//! that stay harmless after their entry is gone, and can link entries to each other
//! by 32-bit index instead of by pointer.

use crate::ilist::NIL;

/// A handle to a slab entry. The generation makes a handle to a removed entry miss
/// even after its index is reused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Key {
    /// The slot's index: stable while the entry lives, so tables link entries
    /// and tag them by it alone where a handle's full size is not needed.
    pub idx: u32,
    /// The slot's generation when the entry was stored; a slot that has been
    /// freed since has a newer one, so this handle misses.
    pub gen: u32,
}

struct Slot<T> {
    gen: u32,
    val: Option<T>,
}

/// The slab. Indices are `u32` because every table that uses one is bounded far
/// below 4 billion entries, and half-size links keep linked entries compact.
pub(crate) struct Slab<T> {
    slots: Vec<Slot<T>>,
    free: Vec<u32>,
    len: usize,
}

impl<T> Slab<T> {
    /// An empty slab; it allocates nothing until the first insert, so an unused
    /// table costs no memory.
    pub fn new() -> Self {
        Slab { slots: Vec::new(), free: Vec::new(), len: 0 }
    }

    /// Entries stored (not slots): what a table reports as its size and checks
    /// against its capacity.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Slots in use or free: what the table has grown to, which only
    /// [`Slab::compact`] lowers.
    pub fn slots(&self) -> usize {
        self.slots.len()
    }

    /// Stores `val`, reusing a freed index when there is one.
    #[inline]
    pub fn insert(&mut self, val: T) -> Key {
        self.insert_with(|| val)
    }

    /// Stores the value `make` returns, called once its slot is chosen, so that a
    /// large entry (a PIT entry is ≈ 670 bytes) can be built straight into a
    /// reused slot rather than on the stack and then copied there.
    #[inline(always)]
    pub fn insert_with(&mut self, make: impl FnOnce() -> T) -> Key {
        self.len += 1;
        if let Some(idx) = self.free.pop() {
            let slot = &mut self.slots[idx as usize];
            // A freed slot is vacant (`release`'s callers take or drop its
            // value). Filling it where it is None lets the compiler build the
            // value in place: an assignment dropped the old value first and
            // copied a PIT entry (≈ 670 bytes) in from the stack, 16
            // instructions per exchange more.
            debug_assert!(slot.val.is_none(), "a free index's slot is vacant");
            slot.val.get_or_insert_with(make);
            return Key { idx, gen: slot.gen };
        }
        let idx = u32::try_from(self.slots.len()).expect("slab index fits in u32");
        if self.slots.len() == self.slots.capacity() {
            // Doubling, as `push` would, but into memory advised for huge pages.
            let more = self.slots.len().max(4);
            crate::huge::reserve(&mut self.slots, more);
        }
        self.slots.push(Slot { gen: 0, val: Some(make()) });
        Key { idx, gen: 0 }
    }

    /// The key the next [`Slab::insert`] will return, so an entry can be stored
    /// already holding things (timers) that refer to it.
    pub fn next_key(&self) -> Key {
        match self.free.last() {
            Some(&idx) => Key { idx, gen: self.slots[idx as usize].gen },
            None => Key { idx: self.slots.len() as u32, gen: 0 },
        }
    }

    /// The entry `key` names, or None for a stale key (its entry removed, its
    /// index perhaps reused): holders of handles need no other check.
    pub fn get(&self, key: Key) -> Option<&T> {
        self.slots.get(key.idx as usize).filter(|s| s.gen == key.gen).and_then(|s| s.val.as_ref())
    }

    /// As [`Slab::get`], to update the entry in place.
    pub fn get_mut(&mut self, key: Key) -> Option<&mut T> {
        self.slots.get_mut(key.idx as usize).filter(|s| s.gen == key.gen).and_then(|s| s.val.as_mut())
    }

    /// Removes the entry and bumps the generation, so every outstanding handle to it
    /// misses from now on.
    pub fn remove(&mut self, key: Key) -> Option<T> {
        self.release(key)?.take()
    }

    /// Removes the entry and drops it in place, for entries too large to move out.
    /// Returns whether it existed.
    pub fn discard(&mut self, key: Key) -> bool {
        self.release(key).map(|v| *v = None).is_some()
    }

    /// Frees an occupied slot's index and bumps its generation, handing back its
    /// value to take or drop.
    fn release(&mut self, key: Key) -> Option<&mut Option<T>> {
        let live = self.slots.get(key.idx as usize).is_some_and(|s| s.gen == key.gen && s.val.is_some());
        if !live {
            return None;
        }
        self.free.push(key.idx);
        self.len -= 1;
        let slot = &mut self.slots[key.idx as usize];
        slot.gen = slot.gen.wrapping_add(1);
        Some(&mut slot.val)
    }

    /// The current handle of an occupied index, for tables that reach entries
    /// through internal links rather than through handles.
    pub fn key_at(&self, idx: u32) -> Key {
        Key { idx, gen: self.slots[idx as usize].gen }
    }

    /// The entry at an index that the caller's own links say is occupied; a vacant
    /// index here is a bug in that table, not something input can cause.
    pub fn at(&self, idx: u32) -> &T {
        self.slots[idx as usize].val.as_ref().expect("linked slab index is occupied")
    }

    /// The entry at an index, if one is there: for a table whose references
    /// to entries may be stale (the CS's parent table).
    #[inline]
    pub fn get_at(&self, idx: u32) -> Option<&T> {
        self.slots.get(idx as usize).and_then(|s| s.val.as_ref())
    }

    /// Mutable form of [`Slab::at`].
    pub fn at_mut(&mut self, idx: u32) -> &mut T {
        self.slots[idx as usize].val.as_mut().expect("linked slab index is occupied")
    }

    /// Moves every entry down to the lowest indices, in index order, and gives
    /// back the memory of the rest: a table whose entries went (a content
    /// store whose capacity was lowered) holds no more than it keeps. Returns
    /// each old index's new one ([`NIL`] for a vacant one), through which the
    /// caller must translate every index it holds, so only a table that names
    /// its entries by index and can find every such index may call it.
    pub fn compact(&mut self) -> Vec<u32> {
        let mut map = vec![NIL; self.slots.len()];
        let mut slots = Vec::new();
        crate::huge::reserve(&mut slots, self.len);
        for (old, slot) in std::mem::take(&mut self.slots).into_iter().enumerate() {
            if slot.val.is_some() {
                // Below `self.slots.len()`, a u32.
                map[old] = slots.len() as u32;
                slots.push(slot);
            }
        }
        self.slots = slots;
        self.free = Vec::new();
        map
    }

    /// Slots allocated, for tests of the memory a table gives back.
    #[cfg(test)]
    pub fn allocated(&self) -> usize {
        self.slots.capacity()
    }

    /// Starts loading every cache line of the slot at `idx` (an entry may straddle
    /// lines), for a table that knows which entry it will touch next. A hint only.
    pub fn prefetch(&self, idx: u32) {
        let Some(slot) = self.slots.get(idx as usize) else { return };
        let start = slot as *const Slot<T> as usize;
        let size = std::mem::size_of::<Slot<T>>();
        // Addresses 64 bytes apart from the first byte, then the last byte, touch
        // every line whatever the slot's alignment. Their count depends on the
        // size alone (a constant, so the loop unrolls), not on how many lines
        // this slot happens to straddle: that loop mispredicted.
        for offset in (0..size - 1).step_by(64) {
            crate::fib::prefetch_addr(start + offset);
        }
        crate::fib::prefetch_addr(start + size - 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stale_keys_miss_after_reuse() {
        let mut s = Slab::new();
        let a = s.insert("a");
        let b = s.insert("b");
        assert_eq!(s.len(), 2);
        assert_eq!(s.remove(a), Some("a"));
        assert_eq!(s.remove(a), None);
        assert!(!s.discard(a), "a stale key discards nothing");
        let predicted = s.next_key();
        let c = s.insert("c");
        assert_eq!(c, predicted);
        assert_eq!(c.idx, a.idx, "freed index is reused");
        assert_ne!(c, a);
        assert_eq!(s.get(a), None);
        assert_eq!(s.get(c), Some(&"c"));
        assert_eq!(s.get(b), Some(&"b"));
        assert_eq!(s.key_at(c.idx), c);
        *s.get_mut(b).unwrap() = "B";
        assert_eq!(s.at(b.idx), &"B");
        assert_eq!(s.len(), 2);
        assert_eq!(s.next_key(), Key { idx: 2, gen: 0 });
        assert!(s.discard(c));
        assert!(!s.discard(c));
        assert_eq!((s.get(c), s.len()), (None, 1));
        let d = s.insert("d");
        assert_eq!(d.idx, c.idx, "a discarded index is reused too");
        assert_ne!(d, c);
    }

    #[test]
    fn compaction_moves_entries_down_in_order_and_gives_back_the_rest() {
        let mut s = Slab::new();
        let keys: Vec<Key> = (0..1000u32).map(|i| s.insert(i)).collect();
        for k in keys.iter().filter(|k| k.idx % 10 != 3) {
            s.remove(*k);
        }
        let map = s.compact();
        assert_eq!((s.len(), map.len()), (100, 1000));
        assert!(s.allocated() < 200, "{} slots held for 100 entries", s.allocated());
        for (old, &new) in map.iter().enumerate() {
            match old % 10 {
                3 => assert_eq!((new, *s.at(new)), (old as u32 / 10, old as u32)),
                _ => assert_eq!(new, NIL),
            }
        }
        let k = s.insert(7);
        assert_eq!((k.idx, s.len()), (100, 101), "no free index is left over");
        assert_eq!(s.compact(), (0..101).collect::<Vec<u32>>());
    }

    #[test]
    fn growth_by_doubling_keeps_every_entry_and_allocates_rarely() {
        let mut s = Slab::new();
        let mut capacities = Vec::new();
        // Past 2 MiB of slots, where growth lands in memory advised for huge pages.
        let n = 3 * (2 << 20) / std::mem::size_of::<Slot<u64>>();
        let keys: Vec<Key> = (0..n as u64)
            .map(|i| {
                let k = s.insert(i);
                if capacities.last() != Some(&s.slots.capacity()) {
                    capacities.push(s.slots.capacity());
                }
                k
            })
            .collect();
        assert!(capacities.len() <= 20, "one move per doubling: {capacities:?}");
        assert!(capacities.windows(2).all(|w| w[1] >= 2 * w[0]));
        assert!(keys.iter().enumerate().all(|(i, &k)| s.get(k) == Some(&(i as u64))));
    }
}
