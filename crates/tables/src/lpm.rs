//! Longest-prefix match over names: one hash table keyed by the encoded bytes of
//! each stored prefix (the root aside), probed from the longest candidate length
//! down, the root answering last. This is the plain-hash baseline (one probe per
//! prefix length that holds any entry) that the FIB and the strategy choice table
//! share; Caesar's Bloom-filter stage can later sit in front of it without changing
//! its answers.

use std::hash::BuildHasher;

use bytes::Bytes;
use foldhash::fast::RandomState;
use hashbrown::HashTable;
use trajan_wire::name::INLINE_COMPONENTS;
use trajan_wire::Name;

use crate::prefix_walk::PrefixWalk;

/// A table from name prefixes to values, answering "which stored prefix of this
/// name is longest".
pub struct LpmTable<V> {
    /// Every stored prefix but the root.
    entries: HashTable<(Name, V)>,
    /// The root's entry, kept out of the hash table: a lookup that finds nothing
    /// longer ends here without hashing the empty prefix and probing for it. (The
    /// strategy choice table usually holds the root alone, so every forwarded
    /// Interest's lookup ends here.)
    root: Option<(Name, V)>,
    hasher: RandomState,
    /// `by_len[n]` counts stored prefixes of `n` ≥ 1 components in `entries`; its
    /// last element is never zero, so its length bounds the probe lengths and empty
    /// lengths are skipped.
    by_len: Vec<u32>,
}

impl<V> Default for LpmTable<V> {
    fn default() -> Self {
        Self::new()
    }
}

impl<V> LpmTable<V> {
    /// An empty table.
    pub fn new() -> Self {
        LpmTable { entries: HashTable::new(), root: None, hasher: RandomState::default(), by_len: Vec::new() }
    }

    /// Number of stored prefixes.
    pub fn len(&self) -> usize {
        self.entries.len() + usize::from(self.root.is_some())
    }

    /// True when no prefix is stored.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn hash(&self, prefix_value: &[u8]) -> u64 {
        self.hasher.hash_one(prefix_value)
    }

    /// Stores `v` under `prefix`, returning the value it replaces. A new prefix is
    /// copied into its own buffer, so a table entry never pins the (much larger)
    /// packet the prefix was parsed from.
    pub fn insert(&mut self, prefix: &Name, v: V) -> Option<V> {
        if prefix.is_empty() {
            return self.root.replace((Name::root(), v)).map(|(_, old)| old);
        }
        let key = prefix.value();
        let hash = self.hash(key);
        if let Some((_, old)) = self.entries.find_mut(hash, |(n, _)| n.value() == key) {
            return Some(std::mem::replace(old, v));
        }
        let owned = Name::from_value(Bytes::copy_from_slice(key)).unwrap_or_else(|_| prefix.clone());
        let hasher = &self.hasher;
        self.entries.insert_unique(hash, (owned, v), |(n, _)| hasher.hash_one(n.value().as_ref()));
        if self.by_len.len() <= prefix.len() {
            self.by_len.resize(prefix.len() + 1, 0);
        }
        self.by_len[prefix.len()] += 1;
        None
    }

    /// The value stored under exactly `prefix`.
    pub fn get(&self, prefix: &Name) -> Option<&V> {
        if prefix.is_empty() {
            return self.root.as_ref().map(|(_, v)| v);
        }
        self.find(prefix.value()).map(|(_, v)| v)
    }

    /// Mutable form of [`LpmTable::get`].
    pub fn get_mut(&mut self, prefix: &Name) -> Option<&mut V> {
        if prefix.is_empty() {
            return self.root.as_mut().map(|(_, v)| v);
        }
        let key = prefix.value();
        let hash = self.hash(key);
        self.entries.find_mut(hash, |(n, _)| n.value() == key).map(|(_, v)| v)
    }

    /// Removes the value stored under exactly `prefix`.
    pub fn remove(&mut self, prefix: &Name) -> Option<V> {
        if prefix.is_empty() {
            return self.root.take().map(|(_, v)| v);
        }
        let key = prefix.value();
        let hash = self.hash(key);
        let ((name, v), _) = self.entries.find_entry(hash, |(n, _)| n.value() == key).ok()?.remove();
        self.forget_len(name.len());
        Some(v)
    }

    /// The longest stored prefix of `name` (the root `/` included, when stored) and
    /// its value. Inline while the table holds at most the root, as the
    /// strategy table of nearly every router does (it is asked once per
    /// Interest: the call cost 32 instructions an exchange, docs/PERFORMANCE.md).
    #[inline]
    pub fn lpm(&self, name: &Name) -> Option<(&Name, &V)> {
        if self.entries.is_empty() {
            return self.root.as_ref().map(|(n, v)| (n, v));
        }
        self.lpm_stored(name)
    }

    /// [`LpmTable::lpm`] of a table with prefixes below the root.
    fn lpm_stored(&self, name: &Name) -> Option<(&Name, &V)> {
        let longest = name.len().min(self.by_len.len().saturating_sub(1));
        if longest > INLINE_COMPONENTS {
            return self.lpm_long(name, longest);
        }
        self.lpm_probing(longest, |n| {
            #[cfg(test)]
            crate::prefix_walk::walked(n);
            name.prefix_value(n)
        })
    }

    /// [`LpmTable::lpm_stored`] of a name whose prefixes past its offset
    /// table ([`INLINE_COMPONENTS`]) may be probed: where each ends comes
    /// from one walk of the name, not from one walk per stored length, as
    /// [`Name::prefix_value`] finds it there. Walked per length, the work was
    /// the sum of the stored lengths up to the name's: with 50 lengths of 80
    /// to 3,920 components in the strategy table, an Interest of 4,000 took
    /// 0.6 ms (0.08 ms walking once). The walk waits for the first probe past
    /// the offset table and goes as far as that probe (the longest: probes
    /// come longest first). Out of line, with its allocation: such names and
    /// tables are rare.
    #[cold]
    #[inline(never)]
    fn lpm_long(&self, name: &Name, longest: usize) -> Option<(&Name, &V)> {
        let walk = PrefixWalk::new(name, INLINE_COMPONENTS);
        self.lpm_probing(longest, |n| walk.prefix(n))
    }

    /// The longest stored prefix of at most `longest` components, the bytes
    /// of the `n`-component one being `key(n)`.
    #[inline(always)]
    fn lpm_probing<'n>(&self, longest: usize, key: impl Fn(usize) -> &'n [u8]) -> Option<(&Name, &V)> {
        (1..=longest)
            .rev()
            .filter(|&n| self.by_len[n] != 0)
            .find_map(|n| self.find(key(n)))
            .or_else(|| self.root.as_ref().map(|(n, v)| (n, v)))
    }

    /// Every (prefix, value) pair, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (&Name, &V)> {
        self.root.iter().chain(self.entries.iter()).map(|(n, v)| (n, v))
    }

    /// Keeps only the entries for which `f` returns true; `f` may also change values.
    pub fn retain(&mut self, mut f: impl FnMut(&Name, &mut V) -> bool) {
        if let Some((n, v)) = &mut self.root {
            if !f(n, v) {
                self.root = None;
            }
        }
        let by_len = &mut self.by_len;
        self.entries.retain(|(n, v)| {
            let keep = f(n, v);
            if !keep {
                by_len[n.len()] -= 1;
            }
            keep
        });
        self.trim_lengths();
    }

    fn find(&self, key: &[u8]) -> Option<(&Name, &V)> {
        self.entries.find(self.hash(key), |(n, _)| n.value() == key).map(|(n, v)| (n, v))
    }

    fn forget_len(&mut self, len: usize) {
        self.by_len[len] -= 1;
        self.trim_lengths();
    }

    fn trim_lengths(&mut self) {
        while self.by_len.last() == Some(&0) {
            self.by_len.pop();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn n(s: &str) -> Name {
        s.parse().unwrap()
    }

    #[test]
    fn exact_operations() {
        let mut t = LpmTable::new();
        assert!(t.is_empty());
        assert_eq!(t.insert(&n("/a/b"), 1), None);
        assert_eq!(t.insert(&n("/a/b"), 2), Some(1), "insert replaces");
        assert_eq!(t.len(), 1);
        assert_eq!(t.get(&n("/a/b")), Some(&2));
        assert_eq!(t.get(&n("/a")), None, "get is exact");
        *t.get_mut(&n("/a/b")).unwrap() += 10;
        assert_eq!(t.get(&n("/a/b")), Some(&12));
        assert_eq!(t.remove(&n("/a")), None);
        assert_eq!(t.remove(&n("/a/b")), Some(12));
        assert!(t.is_empty());
        assert_eq!(t.lpm(&n("/a/b/c")), None);
    }

    #[test]
    fn longest_prefix_wins_and_root_counts_only_when_stored() {
        let mut t = LpmTable::new();
        t.insert(&n("/a"), "a");
        t.insert(&n("/a/b/c"), "abc");
        assert_eq!(t.lpm(&n("/x")), None);
        assert_eq!(t.lpm(&n("/a/b")), Some((&n("/a"), &"a")));
        assert_eq!(t.lpm(&n("/a/b/c/d/e")), Some((&n("/a/b/c"), &"abc")));
        assert_eq!(t.lpm(&n("/a/b/c")).map(|(p, _)| p.clone()), Some(n("/a/b/c")), "a name matches itself");
        assert_eq!(t.lpm(&Name::root()), None);
        t.insert(&Name::root(), "root");
        assert_eq!(t.lpm(&n("/x")), Some((&Name::root(), &"root")));
        assert_eq!(t.lpm(&Name::root()), Some((&Name::root(), &"root")));
        // Component boundaries matter: /ab is not under /a.
        t.remove(&Name::root());
        assert_eq!(t.lpm(&n("/ab")), None);
        // Typed components differ from generic ones with the same bytes.
        assert_eq!(t.lpm(&n("/9=a")), None);
    }

    #[test]
    fn stored_prefix_does_not_pin_the_packet_buffer() {
        let long = n("/a/b/c/d/e/f/g/h/i/j/k/l/m/n");
        let prefix = long.prefix(2);
        let mut t = LpmTable::new();
        t.insert(&prefix, ());
        let (stored, _) = t.iter().next().unwrap();
        assert_eq!(stored, &prefix);
        assert_eq!(stored.value().len(), prefix.value().len());
        assert_ne!(stored.value().as_ptr(), long.value().as_ptr(), "copied, not sliced");
    }

    #[test]
    fn retain_updates_lengths() {
        let mut t = LpmTable::new();
        for (i, p) in ["/a", "/a/b", "/a/b/c", "/z"].iter().enumerate() {
            t.insert(&n(p), i);
        }
        t.retain(|p, v| {
            *v *= 10;
            p.len() != 3
        });
        assert_eq!(t.len(), 3);
        assert_eq!(t.lpm(&n("/a/b/c/d")), Some((&n("/a/b"), &10)));
        let mut all: Vec<_> = t.iter().map(|(p, v)| (p.to_string(), *v)).collect();
        all.sort();
        assert_eq!(all, [("/a".to_string(), 0), ("/a/b".to_string(), 10), ("/z".to_string(), 30)]);
    }

    #[test]
    fn the_root_alone_answers_every_name_also_after_its_children_go() {
        let mut t = LpmTable::new();
        assert_eq!(t.lpm(&n("/a")), None, "empty");
        t.insert(&Name::root(), 0);
        assert_eq!(t.lpm(&n("/a/b")), Some((&Name::root(), &0)));
        t.insert(&n("/a"), 1);
        assert_eq!(t.lpm(&n("/a/b")), Some((&n("/a"), &1)));
        t.remove(&n("/a"));
        assert_eq!(t.lpm(&n("/a/b")), Some((&Name::root(), &0)), "back to the root alone");
        t.remove(&Name::root());
        assert_eq!(t.lpm(&n("/a/b")), None);
    }

    #[test]
    fn root_is_an_entry_like_any_other() {
        let mut t = LpmTable::new();
        assert_eq!(t.insert(&Name::root(), 1), None);
        assert_eq!(t.insert(&Name::root(), 2), Some(1), "insert replaces");
        t.insert(&n("/a"), 3);
        assert_eq!((t.len(), t.get(&Name::root())), (2, Some(&2)));
        *t.get_mut(&Name::root()).unwrap() += 10;
        assert_eq!(t.lpm(&n("/b/c")), Some((&Name::root(), &12)));
        assert_eq!(t.iter().count(), 2);
        t.retain(|p, _| !p.is_empty());
        assert_eq!((t.len(), t.lpm(&n("/b"))), (1, None));
        t.insert(&Name::root(), 4);
        assert_eq!(t.remove(&Name::root()), Some(4));
        assert!(t.remove(&Name::root()).is_none());
    }

    /// A lookup of a name of thousands of components in a table of prefixes
    /// of many lengths, each of hundreds of components, walks the name once:
    /// its work grows with the name, not with the name times the lengths
    /// stored. It finds the longest of those prefixes.
    #[test]
    fn a_lookup_of_thousands_of_components_walks_the_name_once() {
        use crate::prefix_walk::WALKED;
        let long = |first: &[u8], k: usize| Name::from_components(std::iter::once((8u32, first)).chain(std::iter::repeat_n((8u32, &[][..]), k - 1)));
        let mut t = LpmTable::new();
        for k in (100..3000).step_by(100) {
            t.insert(&long(b"p", k), k);
        }
        for k in [1000, 2000, 4000] {
            WALKED.with(|w| w.set(0));
            assert_eq!(t.lpm(&long(b"q", k)), None);
            assert_eq!(t.lpm(&long(b"p", k + 50)).map(|(p, v)| (p.len(), *v)), Some((k.min(2900), k.min(2900))));
            let walked = WALKED.with(|w| w.get());
            assert!(walked <= 2 * k + 50, "{walked} components walked by lookups of {k} and {} components", k + 50);
        }
        assert_eq!(t.lpm(&long(b"p", 99)), None);
    }

    fn arb_name(max: usize) -> impl Strategy<Value = Name> {
        // A small alphabet makes shared prefixes (and so interesting matches) common.
        proptest::collection::vec((prop_oneof![Just(8u32), Just(9u32)], prop_oneof![Just(&b"a"[..]), Just(&b"b"[..]), Just(&b"ab"[..])]), 0..max)
            .prop_map(Name::from_components)
    }

    proptest! {
        /// `lpm` agrees with a naive scan for the longest stored prefix, through inserts and removes.
        #[test]
        fn lpm_matches_naive_scan(
            ops in proptest::collection::vec((any::<bool>(), arb_name(5)), 0..60),
            queries in proptest::collection::vec(arb_name(7), 1..40),
        ) {
            let mut t = LpmTable::new();
            let mut naive: Vec<(Name, usize)> = Vec::new();
            for (i, (add, p)) in ops.into_iter().enumerate() {
                if add {
                    t.insert(&p, i);
                    naive.retain(|(q, _)| *q != p);
                    naive.push((p, i));
                } else {
                    let expect = naive.iter().position(|(q, _)| *q == p).map(|at| naive.remove(at).1);
                    prop_assert_eq!(t.remove(&p), expect);
                }
            }
            prop_assert_eq!(t.len(), naive.len());
            for q in &queries {
                let expect = naive.iter().filter(|(p, _)| p.is_prefix_of(q)).max_by_key(|(p, _)| p.len());
                prop_assert_eq!(t.lpm(q), expect.map(|(p, v)| (p, v)));
            }
        }
    }
}
