//! The forwarding information base: per name prefix, the faces an Interest may be
//! sent to and what each costs. The RIB (in the router) derives it; the engine only
//! reads it, through longest-prefix match.

use smallvec::SmallVec;
use trajan_wire::Name;

use crate::lpm::LpmTable;
use crate::FaceId;

/// One way out for Interests under a prefix.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NextHop {
    /// The face to send on.
    pub face: FaceId,
    /// Routing cost; strategies prefer lower.
    pub cost: u64,
}

/// The next hops of one prefix.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FibEntry {
    /// Sorted by cost, then face, so best-route strategies take the first usable one
    /// and ties break the same way on every run. Inline for up to four, the common case.
    pub nexthops: SmallVec<[NextHop; 4]>,
}

impl FibEntry {
    fn sort(&mut self) {
        self.nexthops.sort_unstable_by_key(|nh| (nh.cost, nh.face));
    }
}

/// The FIB. Entries never hold an empty next-hop list: the last removal drops the
/// entry, so a shorter prefix's routes apply again.
#[derive(Default)]
pub struct Fib {
    table: LpmTable<FibEntry>,
}

impl Fib {
    /// An empty FIB.
    pub fn new() -> Self {
        Fib { table: LpmTable::new() }
    }

    /// Adds `face` as a next hop of `prefix`, or changes its cost if already there.
    pub fn add_nexthop(&mut self, prefix: &Name, face: FaceId, cost: u64) {
        if let Some(entry) = self.table.get_mut(prefix) {
            match entry.nexthops.iter_mut().find(|nh| nh.face == face) {
                Some(nh) => nh.cost = cost,
                None => entry.nexthops.push(NextHop { face, cost }),
            }
            entry.sort();
        } else {
            let mut entry = FibEntry::default();
            entry.nexthops.push(NextHop { face, cost });
            self.table.insert(prefix, entry);
        }
    }

    /// Removes `face` from `prefix`'s next hops; returns whether it was there.
    pub fn remove_nexthop(&mut self, prefix: &Name, face: FaceId) -> bool {
        let Some(entry) = self.table.get_mut(prefix) else { return false };
        let before = entry.nexthops.len();
        entry.nexthops.retain(|nh| nh.face != face);
        let removed = entry.nexthops.len() != before;
        if entry.nexthops.is_empty() {
            self.table.remove(prefix);
        }
        removed
    }

    /// Removes `face` from every entry (the face went away); returns how many
    /// entries routed through it. A control-plane event, so a full pass is fine.
    pub fn remove_face(&mut self, face: FaceId) -> usize {
        let mut affected = 0;
        self.table.retain(|_, entry| {
            let before = entry.nexthops.len();
            entry.nexthops.retain(|nh| nh.face != face);
            if entry.nexthops.len() != before {
                affected += 1;
            }
            !entry.nexthops.is_empty()
        });
        affected
    }

    /// The entry of exactly `prefix`.
    pub fn get(&self, prefix: &Name) -> Option<&FibEntry> {
        self.table.get(prefix)
    }

    /// The entry of the longest prefix of `name`, the one its Interests follow.
    pub fn lpm(&self, name: &Name) -> Option<(&Name, &FibEntry)> {
        self.table.lpm(name)
    }

    /// Every (prefix, entry) pair, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (&Name, &FibEntry)> {
        self.table.iter()
    }

    /// Number of prefixes with routes.
    pub fn len(&self) -> usize {
        self.table.len()
    }

    /// True when no prefix has a route.
    pub fn is_empty(&self) -> bool {
        self.table.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(s: &str) -> Name {
        s.parse().unwrap()
    }

    fn faces(e: &FibEntry) -> Vec<(FaceId, u64)> {
        e.nexthops.iter().map(|nh| (nh.face, nh.cost)).collect()
    }

    #[test]
    fn nexthops_stay_sorted_by_cost_then_face() {
        let mut fib = Fib::new();
        fib.add_nexthop(&n("/a"), 3, 10);
        fib.add_nexthop(&n("/a"), 1, 20);
        fib.add_nexthop(&n("/a"), 2, 10);
        assert_eq!(faces(fib.get(&n("/a")).unwrap()), [(2, 10), (3, 10), (1, 20)]);
        fib.add_nexthop(&n("/a"), 1, 5);
        assert_eq!(faces(fib.get(&n("/a")).unwrap()), [(1, 5), (2, 10), (3, 10)], "cost update re-sorts");
        assert_eq!(fib.len(), 1);
    }

    #[test]
    fn last_nexthop_removal_drops_entry_and_uncovers_shorter_prefix() {
        let mut fib = Fib::new();
        fib.add_nexthop(&n("/a"), 1, 0);
        fib.add_nexthop(&n("/a/b"), 2, 0);
        fib.add_nexthop(&n("/a/b"), 3, 0);
        assert_eq!(fib.lpm(&n("/a/b/c")).map(|(p, _)| p.clone()), Some(n("/a/b")));
        assert!(!fib.remove_nexthop(&n("/a/b"), 9));
        assert!(!fib.remove_nexthop(&n("/x"), 2));
        assert!(fib.remove_nexthop(&n("/a/b"), 2));
        assert_eq!(fib.len(), 2);
        assert!(fib.remove_nexthop(&n("/a/b"), 3));
        assert_eq!(fib.len(), 1);
        assert_eq!(fib.lpm(&n("/a/b/c")).map(|(p, e)| (p.clone(), faces(e))), Some((n("/a"), vec![(1, 0)])));
    }

    #[test]
    fn remove_face_everywhere() {
        let mut fib = Fib::new();
        fib.add_nexthop(&n("/a"), 1, 0);
        fib.add_nexthop(&n("/a"), 2, 0);
        fib.add_nexthop(&n("/b"), 2, 0);
        fib.add_nexthop(&n("/c"), 3, 0);
        assert_eq!(fib.remove_face(2), 2);
        assert_eq!(fib.remove_face(2), 0);
        assert_eq!(fib.len(), 2);
        assert!(fib.get(&n("/b")).is_none());
        assert_eq!(faces(fib.get(&n("/a")).unwrap()), [(1, 0)]);
        let mut prefixes: Vec<String> = fib.iter().map(|(p, _)| p.to_string()).collect();
        prefixes.sort();
        assert_eq!(prefixes, ["/a", "/c"]);
    }
}
