//! The content store: a cache of Data packets, bounded in packets, replacing the
//! least recently used (CCN-par's choice; cheap and close to the best simple policy
//! for Interest traffic).
//!
//! Exact-name lookups, the common case, go through a hash table. CanBePrefix needs
//! the Data under a name prefix: because component TLVs are self-delimiting, a name
//! prefix is a byte prefix of the encoded name, so an ordered map over encoded names
//! answers it with a range. Recency is an index-linked list through the entries.

use std::collections::BTreeMap;
use std::hash::BuildHasher;
use std::ops::Bound;

use bytes::Bytes;
use foldhash::fast::RandomState;
use hashbrown::HashTable;
use trajan_wire::{Data, Interest, Name};

use crate::ilist::{Linked, Links, List};
use crate::slab::Slab;

/// How many Data under a prefix a CanBePrefix lookup examines before giving up.
/// Without a bound, an Interest for `/` with MustBeFresh over a cache full of stale
/// Data would walk the whole cache; a miss is always a correct answer for a cache.
const MAX_PREFIX_CANDIDATES: usize = 32;

struct Node {
    data: Data,
    /// The Data is fresh strictly before this time.
    fresh_until: u64,
    links: Links,
}

impl Linked for Node {
    fn links(&self) -> &Links {
        &self.links
    }
    fn links_mut(&mut self) -> &mut Links {
        &mut self.links
    }
}

/// The content store. One Data per name: a newer packet with the same name replaces
/// the cached one.
pub struct Cs {
    nodes: Slab<Node>,
    /// (hash of the name, slab index), for exact lookups.
    exact: HashTable<(u64, u32)>,
    /// Encoded name (sharing the Data's buffer) → slab index, for prefix lookups.
    ordered: BTreeMap<Bytes, u32>,
    /// Most recently used first.
    lru: List,
    hasher: RandomState,
    capacity: usize,
    hits: u64,
    misses: u64,
}

impl Cs {
    /// A store holding at most `capacity` packets; 0 disables caching.
    pub fn new(capacity: usize) -> Self {
        Cs {
            nodes: Slab::new(),
            exact: HashTable::new(),
            ordered: BTreeMap::new(),
            lru: List::default(),
            hasher: RandomState::default(),
            capacity,
            hits: 0,
            misses: 0,
        }
    }

    /// Number of cached packets.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// True when nothing is cached.
    pub fn is_empty(&self) -> bool {
        self.nodes.len() == 0
    }

    /// The most packets the store holds.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Lookups answered from the store.
    pub fn hits(&self) -> u64 {
        self.hits
    }

    /// Lookups the store could not answer.
    pub fn misses(&self) -> u64 {
        self.misses
    }

    fn find_exact(&self, name: &[u8]) -> Option<u32> {
        let nodes = &self.nodes;
        self.exact.find(self.hasher.hash_one(name), |&(_, i)| nodes.at(i).data.name.value() == name).map(|&(_, i)| i)
    }

    /// Caches `data`, fresh until `now_ms` plus its FreshnessPeriod (an absent or zero
    /// period makes it stale at once), evicting the least recently used when full.
    pub fn insert(&mut self, data: Data, now_ms: u64) {
        if self.capacity == 0 {
            return;
        }
        let fresh_until = now_ms.saturating_add(data.freshness_ms.unwrap_or(0));
        if let Some(idx) = self.find_exact(data.name.value()) {
            // Re-key the ordered map too, so the old packet's buffer is released.
            self.ordered.remove(data.name.value().as_ref());
            self.ordered.insert(data.name.value().clone(), idx);
            let node = self.nodes.at_mut(idx);
            node.data = data;
            node.fresh_until = fresh_until;
            self.touch(idx);
            return;
        }
        while self.nodes.len() >= self.capacity {
            self.evict_lru();
        }
        let hash = self.hasher.hash_one(data.name.value().as_ref());
        let key = data.name.value().clone();
        let idx = self.nodes.insert(Node { data, fresh_until, links: Links::default() }).idx;
        self.lru.push_front(&mut self.nodes, idx);
        self.exact.insert_unique(hash, (hash, idx), |&(h, _)| h);
        self.ordered.insert(key, idx);
    }

    /// The cached Data that satisfies `interest`, marking it recently used. Exact name
    /// first; then, for a name ending in an implicit digest, the Data whose full name
    /// it is; then, with CanBePrefix, Data under the name in canonical order. With
    /// MustBeFresh only fresh Data qualify.
    pub fn lookup(&mut self, interest: &Interest, now_ms: u64) -> Option<&Data> {
        match self.find_match(interest, now_ms) {
            Some(idx) => {
                self.hits += 1;
                self.touch(idx);
                Some(&self.nodes.at(idx).data)
            }
            None => {
                self.misses += 1;
                None
            }
        }
    }

    fn find_match(&self, interest: &Interest, now_ms: u64) -> Option<u32> {
        let usable = |idx: &u32| !interest.must_be_fresh || now_ms < self.nodes.at(*idx).fresh_until;
        let name = &interest.name;
        if let Some(idx) = self.find_exact(name.value()).filter(usable) {
            return Some(idx);
        }
        if let Some(digest) = name.implicit_digest() {
            let by_full_name = self
                .find_exact(name.prefix_value(name.len() - 1))
                .filter(usable)
                .filter(|&idx| self.nodes.at(idx).data.implicit_digest()[..] == *digest);
            if by_full_name.is_some() {
                return by_full_name;
            }
        }
        if interest.can_be_prefix {
            return self.under(name).take(MAX_PREFIX_CANDIDATES).find(usable);
        }
        None
    }

    /// Slab indices of the Data whose names start with `prefix`, in canonical order.
    fn under<'a>(&'a self, prefix: &'a Name) -> impl Iterator<Item = u32> + 'a {
        let start = prefix.value().as_ref();
        self.ordered
            .range::<[u8], _>((Bound::Included(start), Bound::Unbounded))
            .take_while(move |(k, _)| k.starts_with(start))
            .map(|(_, &idx)| idx)
    }

    /// Removes up to `limit` packets under `prefix` (NFD's `cs erase`); returns how many.
    pub fn erase_prefix(&mut self, prefix: &Name, limit: usize) -> usize {
        let doomed: Vec<u32> = self.under(prefix).take(limit).collect();
        for &idx in &doomed {
            self.evict(idx);
        }
        doomed.len()
    }

    /// Changes the capacity, evicting least recently used packets down to it.
    pub fn set_capacity(&mut self, capacity: usize) {
        self.capacity = capacity;
        while self.nodes.len() > capacity {
            self.evict_lru();
        }
    }

    fn touch(&mut self, idx: u32) {
        self.lru.unlink(&mut self.nodes, idx);
        self.lru.push_front(&mut self.nodes, idx);
    }

    fn evict_lru(&mut self) {
        if let Some(idx) = self.lru.tail() {
            self.evict(idx);
        }
    }

    fn evict(&mut self, idx: u32) {
        self.lru.unlink(&mut self.nodes, idx);
        let key = self.nodes.key_at(idx);
        let Some(node) = self.nodes.remove(key) else { return };
        let name = node.data.name.value().as_ref();
        if let Ok(e) = self.exact.find_entry(self.hasher.hash_one(name), |&(_, i)| i == idx) {
            e.remove();
        }
        self.ordered.remove(name);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_util::{arb_name, data, interest, matches_data, name};
    use proptest::prelude::*;

    fn get(cs: &mut Cs, uri: &str, cbp: bool, mbf: bool, now: u64) -> Option<String> {
        cs.lookup(&interest(&name(uri), cbp, mbf), now).map(|d| d.name.to_string())
    }

    fn content(cs: &mut Cs, uri: &str, now: u64) -> Option<Vec<u8>> {
        cs.lookup(&interest(&name(uri), false, false), now).map(|d| d.content.to_vec())
    }

    #[test]
    fn exact_versus_can_be_prefix() {
        let mut cs = Cs::new(10);
        cs.insert(data("/a/b/c", None, b""), 0);
        assert_eq!(get(&mut cs, "/a/b/c", false, false, 0).as_deref(), Some("/a/b/c"));
        assert_eq!(get(&mut cs, "/a/b", false, false, 0), None, "a prefix needs CanBePrefix");
        assert_eq!(get(&mut cs, "/a/b", true, false, 0).as_deref(), Some("/a/b/c"));
        assert_eq!(get(&mut cs, "/", true, false, 0).as_deref(), Some("/a/b/c"));
        assert_eq!(get(&mut cs, "/a/b/c", true, false, 0).as_deref(), Some("/a/b/c"), "a name is its own prefix");
        assert_eq!(get(&mut cs, "/a/b/c/d", true, false, 0), None);
        assert_eq!(get(&mut cs, "/a/bb", true, false, 0), None);
        cs.insert(data("/a/bc", None, b""), 0);
        assert_eq!(get(&mut cs, "/a/b", true, false, 0).as_deref(), Some("/a/b/c"), "/a/bc is not under /a/b");
        assert_eq!(get(&mut cs, "/a/9=b", true, false, 0), None, "component type matters");
        assert_eq!((cs.hits(), cs.misses()), (5, 4));
    }

    #[test]
    fn must_be_fresh_honours_freshness_period() {
        let mut cs = Cs::new(10);
        cs.insert(data("/absent", None, b""), 100);
        cs.insert(data("/zero", Some(0), b""), 100);
        cs.insert(data("/ten", Some(10), b""), 100);
        for uri in ["/absent", "/zero"] {
            assert_eq!(get(&mut cs, uri, false, true, 100), None, "{uri} is stale at once");
            assert!(get(&mut cs, uri, false, false, 100).is_some(), "{uri} still serves Interests without MustBeFresh");
        }
        assert!(get(&mut cs, "/ten", false, true, 109).is_some());
        assert_eq!(get(&mut cs, "/ten", false, true, 110), None, "expired");
        assert!(get(&mut cs, "/ten", false, false, 110).is_some());
        cs.insert(data("/ten", Some(10), b""), 200);
        assert!(get(&mut cs, "/ten", false, true, 205).is_some(), "a newer copy refreshes it");
    }

    #[test]
    fn can_be_prefix_with_must_be_fresh_skips_stale_data() {
        let mut cs = Cs::new(10);
        cs.insert(data("/p/1", None, b""), 0);
        cs.insert(data("/p/2", Some(1000), b""), 0);
        cs.insert(data("/p/3", None, b""), 0);
        assert_eq!(get(&mut cs, "/p", true, true, 10).as_deref(), Some("/p/2"));
        assert_eq!(get(&mut cs, "/p", true, false, 10).as_deref(), Some("/p/1"), "first in canonical order");
        assert_eq!(get(&mut cs, "/p", true, true, 1000), None);
    }

    #[test]
    fn implicit_digest_matches_the_full_name_only() {
        let mut cs = Cs::new(10);
        let d = data("/a/b", Some(1000), b"one");
        let full = d.full_name();
        let wrong = data("/a/b", Some(1000), b"two").full_name();
        cs.insert(d, 0);
        let hit = |cs: &mut Cs, n: &Name, cbp, mbf, now| cs.lookup(&interest(n, cbp, mbf), now).map(|d| d.content.to_vec());
        assert_eq!(hit(&mut cs, &full, false, false, 0), Some(b"one".to_vec()));
        assert_eq!(hit(&mut cs, &full, true, false, 0), Some(b"one".to_vec()));
        assert_eq!(hit(&mut cs, &wrong, false, false, 0), None);
        assert_eq!(hit(&mut cs, &wrong, true, false, 0), None);
        assert_eq!(hit(&mut cs, &full, false, true, 1000), None, "MustBeFresh applies to digest matches too");
        // Data whose own name ends in a digest component is found by that name.
        let literal = data(&wrong.to_string(), None, b"lit");
        cs.insert(literal, 0);
        assert_eq!(hit(&mut cs, &wrong, false, false, 0), Some(b"lit".to_vec()));
    }

    #[test]
    fn same_name_replaces() {
        let mut cs = Cs::new(10);
        cs.insert(data("/a", None, b"old"), 0);
        cs.insert(data("/a", None, b"new"), 0);
        assert_eq!(cs.len(), 1);
        assert_eq!(content(&mut cs, "/a", 0), Some(b"new".to_vec()));
        assert_eq!(get(&mut cs, "/", true, false, 0).as_deref(), Some("/a"));
    }

    #[test]
    fn evicts_least_recently_used() {
        let mut cs = Cs::new(3);
        for uri in ["/a", "/b", "/c"] {
            cs.insert(data(uri, None, b""), 0);
        }
        assert!(content(&mut cs, "/a", 0).is_some()); // order now a, c, b
        cs.insert(data("/b", None, b"again"), 0); // b, a, c
        cs.insert(data("/d", None, b""), 0); // evicts c
        assert_eq!(cs.len(), 3);
        assert_eq!(content(&mut cs, "/c", 0), None);
        assert!(["/a", "/b", "/d"].iter().all(|u| content(&mut cs, u, 0).is_some()));
        assert_eq!(get(&mut cs, "/c", true, false, 0), None, "evicted from the prefix index too");
        cs.set_capacity(1); // order d, b, a: keeps d
        assert_eq!(cs.len(), 1);
        assert!(content(&mut cs, "/d", 0).is_some());
        assert_eq!(content(&mut cs, "/b", 0), None);
        assert_eq!(cs.capacity(), 1);
    }

    #[test]
    fn capacity_zero_caches_nothing() {
        let mut cs = Cs::new(0);
        cs.insert(data("/a", Some(1000), b""), 0);
        assert!(cs.is_empty());
        assert_eq!(get(&mut cs, "/a", false, false, 0), None);
        assert_eq!(cs.misses(), 1);
        let mut cs = Cs::new(2);
        cs.insert(data("/a", None, b""), 0);
        cs.set_capacity(0);
        assert!(cs.is_empty());
        cs.insert(data("/a", None, b""), 0);
        assert!(cs.is_empty(), "set_capacity(0) disables caching");
    }

    #[test]
    fn erase_prefix_up_to_limit() {
        let mut cs = Cs::new(10);
        for uri in ["/a/1", "/a/2", "/a/3", "/ab", "/b"] {
            cs.insert(data(uri, None, b""), 0);
        }
        assert_eq!(cs.erase_prefix(&name("/a"), 2), 2);
        assert_eq!(cs.len(), 3);
        assert_eq!(cs.erase_prefix(&name("/a"), 10), 1);
        assert_eq!(get(&mut cs, "/a", true, false, 0), None);
        assert!(content(&mut cs, "/ab", 0).is_some(), "/ab is not under /a");
        assert_eq!(cs.erase_prefix(&Name::root(), usize::MAX), 2);
        assert!(cs.is_empty());
        cs.insert(data("/c", None, b""), 0);
        assert!(content(&mut cs, "/c", 0).is_some(), "the store still works after erasing");
    }

    proptest! {
        /// A lookup answers iff some cached Data satisfies the Interest (ndn-cxx's rule
        /// plus freshness), and what it answers satisfies it.
        #[test]
        fn lookup_agrees_with_reference(
            cached in proptest::collection::vec((arb_name(4), proptest::option::of(0u64..20), any::<u8>()), 0..20),
            queries in proptest::collection::vec((arb_name(5), any::<bool>(), any::<bool>(), any::<prop::sample::Index>(), any::<bool>()), 1..20),
            now in 0u64..25,
        ) {
            let mut cs = Cs::new(64);
            let mut model: Vec<(Data, u64)> = Vec::new();
            for (n, fresh, c) in cached {
                let d = data(&n.to_string(), fresh, &[c]);
                model.retain(|(m, _)| m.name != d.name);
                model.push((d.clone(), fresh.unwrap_or(0)));
                cs.insert(d, 0);
            }
            for (n, cbp, mbf, pick, by_digest) in queries {
                // Some queries ask for a cached packet's full name.
                let n = match (by_digest, model.is_empty()) {
                    (true, false) => model[pick.index(model.len())].0.full_name(),
                    _ => n,
                };
                let i = interest(&n, cbp, mbf);
                let usable = |d: &Data, fresh_ms: u64| matches_data(&i, d) && (!mbf || now < fresh_ms);
                let any = model.iter().any(|(d, f)| usable(d, *f));
                match cs.lookup(&i, now) {
                    Some(got) => {
                        let f = model.iter().find(|(d, _)| d.name == got.name).map(|(_, f)| *f);
                        prop_assert!(f.is_some_and(|f| usable(got, f)), "{:?} answered {:?} wrongly", i.name, got.name);
                    }
                    None => prop_assert!(!any, "{:?} (cbp {}, mbf {}) missed", i.name, cbp, mbf),
                }
            }
        }
    }
}
