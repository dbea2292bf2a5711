//! NFD's Dead Nonce List: the (name, nonce) pairs of Interests whose PIT entry is
//! gone, so that a copy of an Interest that looped back after its entry was
//! satisfied or expired is still recognised as a loop.
//!
//! Only a 64-bit hash of each pair is kept (a false "seen" needs a 64-bit collision
//! within one lifetime), in arrival order for aging and in a hash map for lookup.
//! Names come as their hash by the engine's [`crate::name_key::NameHasher`],
//! computed once per packet, so the list never reads a name.

use std::collections::hash_map::Entry;
use std::collections::{HashMap, VecDeque};
use std::hash::BuildHasher;

use foldhash::fast::RandomState;

/// The list, bounded in both age and count.
pub struct DeadNonceList {
    lifetime_ms: u64,
    capacity: usize,
    /// (hash, time added), oldest first.
    order: VecDeque<(u64, u64)>,
    /// hash → (copies in `order`, latest time added).
    seen: HashMap<u64, (u32, u64), RandomState>,
    hasher: RandomState,
}

impl DeadNonceList {
    /// A list that remembers a pair for `lifetime_ms` and at most `capacity` pairs,
    /// forgetting the oldest first when full (capacity 0 remembers nothing).
    pub fn new(lifetime_ms: u64, capacity: usize) -> Self {
        DeadNonceList {
            lifetime_ms,
            capacity,
            order: VecDeque::new(),
            seen: HashMap::with_hasher(RandomState::default()),
            hasher: RandomState::default(),
        }
    }

    fn key(&self, name_hash: u64, nonce: u32) -> u64 {
        self.hasher.hash_one((name_hash, nonce))
    }

    /// Remembers that an Interest for the name hashed `name_hash` with `nonce` has been forwarded.
    pub fn add(&mut self, name_hash: u64, nonce: u32, now_ms: u64) {
        if self.capacity == 0 {
            return;
        }
        while self.order.front().is_some_and(|&(_, t)| t.saturating_add(self.lifetime_ms) <= now_ms) {
            self.pop_oldest();
        }
        while self.order.len() >= self.capacity {
            self.pop_oldest();
        }
        let key = self.key(name_hash, nonce);
        self.order.push_back((key, now_ms));
        let e = self.seen.entry(key).or_insert((0, now_ms));
        e.0 += 1;
        e.1 = now_ms;
    }

    /// Whether the name hashed `name_hash` with `nonce` was added less than a
    /// lifetime ago and not pushed out since.
    pub fn contains(&self, name_hash: u64, nonce: u32, now_ms: u64) -> bool {
        self.seen.get(&self.key(name_hash, nonce)).is_some_and(|&(_, t)| now_ms < t.saturating_add(self.lifetime_ms))
    }

    /// How long a pair is remembered.
    pub fn lifetime_ms(&self) -> u64 {
        self.lifetime_ms
    }

    /// Number of remembered pairs (some may be past their lifetime until the next add).
    pub fn len(&self) -> usize {
        self.order.len()
    }

    /// True when nothing is remembered.
    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
    }

    fn pop_oldest(&mut self) {
        let Some((key, _)) = self.order.pop_front() else { return };
        if let Entry::Occupied(mut e) = self.seen.entry(key) {
            e.get_mut().0 -= 1;
            if e.get().0 == 0 {
                e.remove();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::name_key::NameHasher;
    use std::sync::LazyLock;

    static NAMES: LazyLock<NameHasher> = LazyLock::new(NameHasher::new);

    fn n(s: &str) -> u64 {
        NAMES.full(&s.parse().unwrap())
    }

    #[test]
    fn remembers_pairs_for_their_lifetime() {
        let mut d = DeadNonceList::new(100, 10);
        d.add(n("/a"), 1, 1000);
        assert!(d.contains(n("/a"), 1, 1000));
        assert!(d.contains(n("/a"), 1, 1099));
        assert!(!d.contains(n("/a"), 1, 1100), "forgotten after the lifetime");
        assert!(!d.contains(n("/a"), 2, 1000), "other nonce");
        assert!(!d.contains(n("/b"), 1, 1000), "other name");
        assert!(!d.contains(n("/a/b"), 1, 1000));
        assert_eq!(d.len(), 1);
        d.add(n("/b"), 1, 1100);
        assert_eq!(d.len(), 1, "aged entries are dropped on add");
    }

    #[test]
    fn re_adding_extends_lifetime_and_survives_the_old_copy_leaving() {
        let mut d = DeadNonceList::new(100, 10);
        d.add(n("/a"), 1, 0);
        d.add(n("/a"), 1, 50);
        d.add(n("/b"), 1, 120);
        assert_eq!(d.len(), 2, "the first copy aged out");
        assert!(d.contains(n("/a"), 1, 149));
        assert!(!d.contains(n("/a"), 1, 150));
    }

    #[test]
    fn bounded_by_capacity_oldest_first() {
        let mut d = DeadNonceList::new(1_000_000, 3);
        for nonce in 0..5 {
            d.add(n("/a"), nonce, 10);
        }
        assert_eq!(d.len(), 3);
        assert!(!d.contains(n("/a"), 0, 10));
        assert!(!d.contains(n("/a"), 1, 10));
        assert!((2..5).all(|nonce| d.contains(n("/a"), nonce, 10)));
    }

    #[test]
    fn capacity_zero_remembers_nothing() {
        let mut d = DeadNonceList::new(100, 0);
        d.add(n("/a"), 1, 0);
        assert!(!d.contains(n("/a"), 1, 0));
        assert!(d.is_empty());
    }
}
