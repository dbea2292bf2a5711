//! The routing information base: routes as applications and operators register them
//! (per prefix, per face, per origin), from which the FIB is derived. Keeping the two
//! apart lets several origins (an app's registration, a static route) coexist on one
//! prefix and face, with the FIB showing the cheapest.
//!
//! Each RIB name with routes gets a FIB entry holding, as NFD's RIB computes it
//! (`rib/fib-updater.cpp`), its own routes and those it inherits: the
//! ChildInherit routes of the names above it, read upwards from the nearest and
//! no further than one with a Capture route, and none at all when one of its own
//! routes captures. Per face, its own routes win, at their lowest cost, then the
//! nearest name above with a ChildInherit route to that face, at the lowest cost
//! of those. A route's change rewrites the FIB entries of its name and of the
//! names under it that inherit (control-plane work in the number of those);
//! lookups are the FIB's, unchanged.
//!
//! The RIB owns only the next hops it wrote, as NFD's RIB does: a change takes
//! back those it no longer derives and leaves the entry's others alone, such as
//! the daemon's own `/localhost/nfd` next hop to the internal face (which a local
//! application registering that prefix would otherwise have cut management off
//! with) or one `fib/add-nexthop` set.

use std::collections::{BTreeMap, HashMap};
use std::ops::Bound;

use trajan_tables::{Fib, FaceId, TimerId, TimerWheel};
use trajan_wire::mgmt::{ROUTE_FLAG_CAPTURE, ROUTE_FLAG_CHILD_INHERIT};
use trajan_wire::Name;

/// One route of a RIB entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Route {
    /// The next hop's face.
    pub face: FaceId,
    /// Who registered it (NFD's origin: [`ORIGIN_APP`], [`ORIGIN_STATIC`], ...); one route per face and origin.
    pub origin: u64,
    /// Its cost; the FIB next hop of a face takes the lowest of the face's routes.
    pub cost: u64,
    /// NFD's route flags ([`ROUTE_FLAG_CHILD_INHERIT`], [`ROUTE_FLAG_CAPTURE`]): what
    /// the names under this one inherit (see the module documentation).
    pub flags: u64,
    /// When the route expires (ms on the daemon's clock), if it does.
    pub expires_ms: Option<u64>,
}

/// Origin of routes from the configuration file (NFD's "static").
pub const ORIGIN_STATIC: u64 = 255;
/// Origin of routes registered by applications (NFD's "app").
pub const ORIGIN_APP: u64 = 0;

/// Route key in the expiry timer.
type RouteKey = (Name, FaceId, u64);

/// One name of the RIB.
struct Entry {
    name: Name,
    routes: Vec<(Route, Option<TimerId>)>,
    /// The next hops last written to the name's FIB entry, sorted by face: the
    /// ones the RIB owns there, to take back when it no longer derives them.
    installed: Vec<(FaceId, u64)>,
}

impl Entry {
    /// Whether a route of this name stops inheritance from the names above it.
    fn captures(&self) -> bool {
        self.routes.iter().any(|(r, _)| r.flags & ROUTE_FLAG_CAPTURE != 0)
    }
}

/// The RIB.
pub struct Rib {
    /// By the name's TLV-VALUE, whose byte order puts the names under a name
    /// right after it: the entries a route's change reaches are one range.
    entries: BTreeMap<Vec<u8>, Entry>,
    /// Routes per face: a face without routes (nearly every face a remote peer
    /// opens, and anyone can open and close them at will) goes away without a
    /// pass over every prefix.
    routes_of: HashMap<FaceId, usize>,
    timers: TimerWheel<RouteKey>,
    fired: Vec<RouteKey>,
    /// Faces that gained their first route or lost their last since
    /// [`Rib::drain_routed`] last ran.
    routed_changed: Vec<FaceId>,
    /// Names whose FIB entry was rewritten since [`Rib::take_refreshed`] last ran.
    refreshed: Vec<Name>,
}

impl Rib {
    /// An empty RIB.
    pub fn new(now_ms: u64) -> Self {
        Rib {
            entries: BTreeMap::new(),
            routes_of: HashMap::new(),
            timers: TimerWheel::new(now_ms),
            fired: Vec::new(),
            routed_changed: Vec::new(),
            refreshed: Vec::new(),
        }
    }

    /// Adds or updates the route (prefix, face, origin) and rewrites the FIB
    /// entries it reaches: its prefix's, all of whose next hops are written
    /// again, and those of the names under it that inherit.
    pub fn register(&mut self, fib: &mut Fib, prefix: &Name, route: Route) {
        let entry = self.entries.entry(prefix.value().to_vec()).or_insert_with(|| Entry { name: prefix.clone(), routes: Vec::new(), installed: Vec::new() });
        let timer = route.expires_ms.map(|t| self.timers.schedule(t, (prefix.clone(), route.face, route.origin)));
        if let Some(slot) = entry.routes.iter_mut().find(|(r, _)| r.face == route.face && r.origin == route.origin) {
            if let Some(old) = slot.1.take() {
                self.timers.cancel(old);
            }
            *slot = (route, timer);
        } else {
            let count = self.routes_of.entry(route.face).or_default();
            if *count == 0 {
                self.routed_changed.push(route.face);
            }
            *count += 1;
            entry.routes.push((route, timer));
        }
        self.refresh(fib, prefix);
    }

    /// Removes the route (prefix, face, origin); returns whether it existed.
    pub fn unregister(&mut self, fib: &mut Fib, prefix: &Name, face: FaceId, origin: u64) -> bool {
        let Some(entry) = self.entries.get_mut(prefix.value()) else { return false };
        let before = entry.routes.len();
        entry.routes.retain(|(r, t)| {
            let hit = r.face == face && r.origin == origin;
            if hit {
                if let Some(t) = t {
                    self.timers.cancel(*t);
                }
            }
            !hit
        });
        let removed = before - entry.routes.len();
        self.forget(face, removed);
        if removed > 0 {
            self.refresh(fib, prefix);
        }
        removed > 0
    }

    /// Counts `n` routes through `face` gone.
    fn forget(&mut self, face: FaceId, n: usize) {
        if let Some(count) = self.routes_of.get_mut(&face) {
            *count -= n;
            if *count == 0 {
                self.routes_of.remove(&face);
                self.routed_changed.push(face);
            }
        }
    }

    /// Removes every route through a face that went away.
    pub fn remove_face(&mut self, fib: &mut Fib, face: FaceId) {
        if self.routes_of.remove(&face).is_none() {
            return;
        }
        let timers = &mut self.timers;
        let mut prefixes = Vec::new();
        for e in self.entries.values_mut() {
            let before = e.routes.len();
            e.routes.retain(|(r, t)| {
                if r.face == face {
                    if let Some(t) = t {
                        timers.cancel(*t);
                    }
                }
                r.face != face
            });
            if e.routes.len() != before {
                prefixes.push(e.name.clone());
            }
        }
        for p in prefixes {
            self.refresh(fib, &p);
        }
    }

    /// Drops routes whose ExpirationPeriod ran out.
    pub fn expire(&mut self, fib: &mut Fib, now_ms: u64) {
        let mut fired = std::mem::take(&mut self.fired);
        self.timers.advance(now_ms, &mut fired);
        for (prefix, face, origin) in fired.drain(..) {
            let Some(entry) = self.entries.get_mut(prefix.value()) else { continue };
            let before = entry.routes.len();
            entry.routes.retain(|(r, _)| !(r.face == face && r.origin == origin && r.expires_ms.is_some_and(|t| t <= now_ms)));
            let removed = before - entry.routes.len();
            self.forget(face, removed);
            if removed > 0 {
                self.refresh(fib, &prefix);
            }
        }
        self.fired = fired;
    }

    /// Calls `f(face, routed)` for each face that gained its first route or lost
    /// its last since the last call, with whether a route goes through it now:
    /// the daemon passes it to the I/O layer, which keeps such a face
    /// (`trajan_io::Io::set_routed`) when a new peer needs room.
    pub fn drain_routed(&mut self, mut f: impl FnMut(FaceId, bool)) {
        for face in self.routed_changed.drain(..) {
            f(face, self.routes_of.contains_key(&face));
        }
    }

    /// The names whose FIB entry the RIB rewrote since the last call: one
    /// route's change may reach every name under its own, and the workers' FIB
    /// replicas must follow each (all at once, `Workers::set_routes`). Whoever
    /// changes the RIB calls this after, with or without replicas, which keeps
    /// the list short.
    pub fn take_refreshed(&mut self) -> Vec<Name> {
        std::mem::take(&mut self.refreshed)
    }

    /// When the next route expires, for the I/O loop's poll timeout.
    pub fn next_deadline(&self) -> Option<u64> {
        self.timers.next_deadline()
    }

    /// Whether the route (prefix, face, origin) is registered.
    pub fn holds(&self, prefix: &Name, face: FaceId, origin: u64) -> bool {
        self.entries.get(prefix.value()).is_some_and(|e| e.routes.iter().any(|(r, _)| r.face == face && r.origin == origin))
    }

    /// Every (prefix, routes) pair, for `rib/list`: the routes as registered,
    /// without those inherited.
    pub fn iter(&self) -> impl Iterator<Item = (&Name, impl Iterator<Item = &Route>)> {
        self.entries.values().map(|e| (&e.name, e.routes.iter().map(|(r, _)| r)))
    }

    /// Rewrites the FIB entries a change of `prefix`'s routes reaches: its own
    /// (gone with its last route), and those of the names under it, except
    /// below a name whose routes capture, which inherits nothing from above it.
    fn refresh(&mut self, fib: &mut Fib, prefix: &Name) {
        let key = prefix.value();
        let mut under = Vec::new();
        let mut captured: Option<&[u8]> = None;
        for (k, e) in self.entries.range::<[u8], _>((Bound::Excluded(key), Bound::Unbounded)).take_while(|(k, _)| k.starts_with(key)) {
            if captured.is_some_and(|c| k.starts_with(c)) {
                continue;
            }
            if e.captures() {
                captured = Some(k);
            } else {
                under.push(e.name.clone());
            }
        }
        self.rewrite(fib, prefix, true);
        for name in under {
            self.rewrite(fib, &name, false);
        }
    }

    /// Brings `name`'s FIB entry to the next hops the RIB derives for it,
    /// taking back those it wrote and no longer derives, and drops the RIB
    /// entry once it has no routes. `all` writes every derived next hop again
    /// (registering a route anew restores one `fib/remove-nexthop` took), else
    /// only the changed ones, and nothing when none changed.
    fn rewrite(&mut self, fib: &mut Fib, name: &Name, all: bool) {
        let hops = self.derive(name);
        let Some(entry) = self.entries.get_mut(name.value()) else { return };
        if !all && entry.installed == hops {
            return;
        }
        for &(face, _) in entry.installed.iter().filter(|(f, _)| !hops.iter().any(|h| h.0 == *f)) {
            fib.remove_nexthop(name, face);
        }
        for &(face, cost) in hops.iter().filter(|h| all || !entry.installed.contains(h)) {
            fib.add_nexthop(name, face, cost);
        }
        if entry.routes.is_empty() {
            self.entries.remove(name.value());
        } else {
            entry.installed = hops;
        }
        self.refreshed.push(name.clone());
    }

    /// The next hops `name`'s FIB entry takes from the RIB, sorted by face
    /// (the rule is the module documentation's); none without routes.
    fn derive(&self, name: &Name) -> Vec<(FaceId, u64)> {
        let mut hops = Vec::new();
        let Some(own) = self.entries.get(name.value()) else { return hops };
        cheapest_of_new_faces(&mut hops, own.routes.iter().map(|(r, _)| r));
        if !own.routes.is_empty() && !own.captures() {
            for above in (0..name.len()).rev().filter_map(|n| self.entries.get(name.prefix_value(n))) {
                cheapest_of_new_faces(&mut hops, above.routes.iter().map(|(r, _)| r).filter(|r| r.flags & ROUTE_FLAG_CHILD_INHERIT != 0));
                if above.captures() {
                    break;
                }
            }
        }
        hops.sort_unstable();
        hops
    }
}

/// Adds to `hops` the lowest cost of `routes` to each face `hops` had none to:
/// a face that nearer routes reach keeps their cost.
fn cheapest_of_new_faces<'a>(hops: &mut Vec<(FaceId, u64)>, routes: impl Iterator<Item = &'a Route>) {
    let known = hops.len();
    for r in routes {
        if hops[..known].iter().any(|h| h.0 == r.face) {
            continue;
        }
        match hops[known..].iter_mut().find(|h| h.0 == r.face) {
            Some(h) => h.1 = h.1.min(r.cost),
            None => hops.push((r.face, r.cost)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn route(face: FaceId, origin: u64, cost: u64) -> Route {
        Route { face, origin, cost, flags: 1, expires_ms: None }
    }

    /// The I/O layer hears when a face's first route comes and its last goes,
    /// and not for the routes between.
    #[test]
    fn faces_gaining_their_first_route_or_losing_their_last_are_reported() {
        let mut fib = Fib::new();
        let mut rib = Rib::new(0);
        let (a, b): (Name, Name) = ("/a".parse().unwrap(), "/b".parse().unwrap());
        let drained = |rib: &mut Rib| {
            let mut v = Vec::new();
            rib.drain_routed(|face, routed| v.push((face, routed)));
            v
        };
        rib.register(&mut fib, &a, route(7, ORIGIN_APP, 1));
        rib.register(&mut fib, &b, route(7, ORIGIN_APP, 1));
        rib.register(&mut fib, &a, Route { expires_ms: Some(100), ..route(8, ORIGIN_APP, 1) });
        assert_eq!(drained(&mut rib), [(7, true), (8, true)]);
        assert!(rib.unregister(&mut fib, &a, 7, ORIGIN_APP));
        assert_eq!(drained(&mut rib), []);
        assert!(rib.unregister(&mut fib, &b, 7, ORIGIN_APP));
        rib.expire(&mut fib, 150);
        assert_eq!(drained(&mut rib), [(7, false), (8, false)]);
        // Gone and back before the daemon looked: reported as it is now.
        rib.register(&mut fib, &a, route(9, ORIGIN_APP, 1));
        assert!(rib.unregister(&mut fib, &a, 9, ORIGIN_APP));
        rib.register(&mut fib, &a, route(9, ORIGIN_APP, 1));
        assert_eq!(drained(&mut rib), [(9, true), (9, true), (9, true)]);
    }

    #[test]
    fn fib_follows_cheapest_route_per_face() {
        let mut fib = Fib::new();
        let mut rib = Rib::new(0);
        let p: Name = "/a".parse().unwrap();
        rib.register(&mut fib, &p, route(300, ORIGIN_APP, 10));
        rib.register(&mut fib, &p, route(300, ORIGIN_STATIC, 5));
        rib.register(&mut fib, &p, route(301, ORIGIN_APP, 1));
        let (_, e) = fib.lpm(&p).unwrap();
        assert_eq!(e.nexthops.iter().map(|n| (n.face, n.cost)).collect::<Vec<_>>(), vec![(301, 1), (300, 5)]);
        assert!(rib.unregister(&mut fib, &p, 300, ORIGIN_STATIC));
        let (_, e) = fib.lpm(&p).unwrap();
        assert_eq!(e.nexthops.iter().map(|n| (n.face, n.cost)).collect::<Vec<_>>(), vec![(301, 1), (300, 10)]);
        rib.remove_face(&mut fib, 300);
        rib.remove_face(&mut fib, 301);
        assert!(fib.lpm(&p).is_none());
        assert_eq!(rib.iter().count(), 0);
    }

    /// A route coming and going changes its own face's next hop only: a local
    /// application registering `/localhost/nfd`, then unregistering it, left
    /// that prefix without the internal face, and so every application without
    /// management until the router restarted (caught by the `mgmt` fuzz
    /// target's checks).
    #[test]
    fn routes_leave_the_next_hops_of_other_faces_alone() {
        let mut fib = Fib::new();
        let mut rib = Rib::new(0);
        let mgmt: Name = "/localhost/nfd".parse().unwrap();
        fib.add_nexthop(&mgmt, 1, 0);
        let hops = |fib: &Fib| fib.get(&mgmt).map(|e| e.nexthops.iter().map(|n| (n.face, n.cost)).collect::<Vec<_>>());
        rib.register(&mut fib, &mgmt, route(300, ORIGIN_APP, 5));
        assert_eq!(hops(&fib), Some(vec![(1, 0), (300, 5)]));
        rib.register(&mut fib, &mgmt, Route { expires_ms: Some(100), ..route(301, ORIGIN_APP, 0) });
        rib.expire(&mut fib, 150);
        assert!(rib.unregister(&mut fib, &mgmt, 300, ORIGIN_APP));
        assert_eq!(hops(&fib), Some(vec![(1, 0)]));
        rib.register(&mut fib, &mgmt, route(302, ORIGIN_APP, 5));
        rib.remove_face(&mut fib, 302);
        assert_eq!(hops(&fib), Some(vec![(1, 0)]), "management stays reachable");
    }

    #[test]
    fn routes_expire_by_timer() {
        let mut fib = Fib::new();
        let mut rib = Rib::new(0);
        let p: Name = "/e".parse().unwrap();
        rib.register(&mut fib, &p, Route { expires_ms: Some(100), ..route(400, 0, 0) });
        rib.expire(&mut fib, 50);
        assert!(fib.lpm(&p).is_some());
        assert_eq!(refreshed(&mut rib), ["/e"], "the registration");
        rib.expire(&mut fib, 150);
        assert_eq!(refreshed(&mut rib), ["/e"], "the expiry");
        assert!(fib.lpm(&p).is_none());
    }

    fn name(s: &str) -> Name {
        s.parse().unwrap()
    }

    /// `prefix`'s exact FIB entry, by face.
    fn hops(fib: &Fib, prefix: &str) -> Vec<(FaceId, u64)> {
        let mut hops: Vec<_> = fib.get(&name(prefix)).map(|e| e.nexthops.iter().map(|n| (n.face, n.cost)).collect()).unwrap_or_default();
        hops.sort_unstable();
        hops
    }

    /// The names whose FIB entries the RIB rewrote since the last call, sorted.
    fn refreshed(rib: &mut Rib) -> Vec<String> {
        let mut names: Vec<String> = rib.take_refreshed().iter().map(Name::to_string).collect();
        names.sort();
        names
    }

    fn flagged(face: FaceId, cost: u64, flags: u64) -> Route {
        Route { flags, ..route(face, ORIGIN_STATIC, cost) }
    }

    /// A FIB and the RIB that wrote it, with `routes` registered in order.
    fn registered(routes: &[(&str, Route)]) -> (Fib, Rib) {
        let (mut fib, mut rib) = (Fib::new(), Rib::new(0));
        for (prefix, r) in routes {
            rib.register(&mut fib, &name(prefix), r.clone());
        }
        (fib, rib)
    }

    const INHERIT: u64 = ROUTE_FLAG_CHILD_INHERIT;
    const CAPTURE: u64 = ROUTE_FLAG_CAPTURE;

    /// The audit's case: `/inh` via 275 at 50 (ChildInherit, the default) and
    /// `/inh/p` via 273 at 1 give `/inh/p` both next hops, whichever came
    /// first, as NFD's FIB does; the parent's route leaving takes the
    /// inherited hop with it, and the RIB's own dataset keeps the routes as
    /// registered.
    #[test]
    fn a_longer_prefix_inherits_the_routes_of_shorter_ones() {
        for parent_first in [true, false] {
            let mut routes = [("/inh", flagged(275, 50, INHERIT)), ("/inh/p", flagged(273, 1, INHERIT))];
            if !parent_first {
                routes.reverse();
            }
            let (mut fib, mut rib) = registered(&routes);
            assert_eq!(hops(&fib, "/inh/p"), [(273, 1), (275, 50)], "parent first: {parent_first}");
            assert_eq!(hops(&fib, "/inh"), [(275, 50)]);
            assert_eq!(refreshed(&mut rib), &["/inh", "/inh/p", "/inh/p"][..if parent_first { 2 } else { 3 }], "every rewritten entry, for the replicas");
            let listed: Vec<_> = rib.iter().map(|(p, rs)| (p.to_string(), rs.map(|r| r.face).collect::<Vec<_>>())).collect();
            assert_eq!(listed, [("/inh".to_owned(), vec![275]), ("/inh/p".to_owned(), vec![273])], "rib/list shows no inherited route");

            assert!(rib.unregister(&mut fib, &name("/inh"), 275, ORIGIN_STATIC));
            assert_eq!(hops(&fib, "/inh/p"), [(273, 1)]);
            assert_eq!(hops(&fib, "/inh"), []);
            assert_eq!(refreshed(&mut rib), ["/inh", "/inh/p"]);
        }
    }

    /// A route without ChildInherit (`trajan route add --no-inherit`) stays on
    /// its own prefix; one with it reaches every name below, however deep,
    /// and expires from all of them.
    #[test]
    fn only_child_inherit_routes_reach_longer_prefixes() {
        let (mut fib, mut rib) = registered(&[("/a/b/c", flagged(3, 0, INHERIT)), ("/a", flagged(1, 10, 0))]);
        assert_eq!(hops(&fib, "/a/b/c"), [(3, 0)]);
        assert_eq!(hops(&fib, "/a"), [(1, 10)]);
        rib.register(&mut fib, &name("/a"), Route { expires_ms: Some(100), ..flagged(2, 20, INHERIT) });
        assert_eq!(hops(&fib, "/a/b/c"), [(2, 20), (3, 0)]);
        // Turning ChildInherit off (the same route registered again) takes it back.
        rib.register(&mut fib, &name("/a"), Route { expires_ms: Some(100), ..flagged(2, 20, 0) });
        assert_eq!(hops(&fib, "/a/b/c"), [(3, 0)]);
        rib.register(&mut fib, &name("/a"), Route { expires_ms: Some(100), ..flagged(2, 20, INHERIT) });
        refreshed(&mut rib);
        rib.expire(&mut fib, 150);
        assert_eq!(hops(&fib, "/a/b/c"), [(3, 0)]);
        assert_eq!(hops(&fib, "/a"), [(1, 10)]);
        assert_eq!(refreshed(&mut rib), ["/a", "/a/b/c"], "the expiry reached the name below");
    }

    /// A Capture route keeps its prefix, and the names under it, from the
    /// routes of shorter prefixes; its own ChildInherit routes still go down.
    /// Once it goes, by unregistration or with its face, they inherit again.
    #[test]
    fn capture_stops_inheritance_from_above() {
        let (mut fib, mut rib) = registered(&[
            ("/a", flagged(1, 10, INHERIT)),
            ("/a/b/c", flagged(3, 0, INHERIT)),
            ("/a/b/c/d", flagged(4, 0, INHERIT)),
            ("/a/b/c", flagged(5, 7, CAPTURE)),
        ]);
        assert_eq!(hops(&fib, "/a/b/c"), [(3, 0), (5, 7)], "a capturing child takes nothing from its parent");
        assert_eq!(hops(&fib, "/a/b/c/d"), [(3, 0), (4, 0)], "nor do the names under it, which get its ChildInherit routes alone");

        // A capturing name in the middle: its routes are inherited, nothing above it is.
        rib.register(&mut fib, &name("/a/b"), flagged(2, 5, INHERIT | CAPTURE));
        rib.register(&mut fib, &name("/a/b/x"), flagged(6, 0, INHERIT));
        assert_eq!(hops(&fib, "/a/b/x"), [(2, 5), (6, 0)]);
        assert_eq!(hops(&fib, "/a/b"), [(2, 5)]);

        assert!(rib.unregister(&mut fib, &name("/a/b/c"), 5, ORIGIN_STATIC));
        assert_eq!(hops(&fib, "/a/b/c"), [(2, 5), (3, 0)], "no longer capturing, it inherits up to the next capture");
        assert_eq!(hops(&fib, "/a/b/c/d"), [(2, 5), (3, 0), (4, 0)]);
        refreshed(&mut rib);
        rib.remove_face(&mut fib, 2);
        assert_eq!(hops(&fib, "/a/b/c/d"), [(1, 10), (3, 0), (4, 0)], "the capture gone with its face, the root's route comes through");
        assert_eq!(hops(&fib, "/a/b/x"), [(1, 10), (6, 0)]);
        assert_eq!(refreshed(&mut rib), ["/a/b", "/a/b/c", "/a/b/c/d", "/a/b/x"], "the replicas learn of the hops the face did not carry");
    }

    /// A default route reaches every registered name, so best-route falls back
    /// to it when a longer prefix's own next hop is down or answers a Nack.
    #[test]
    fn a_default_route_reaches_every_registered_name() {
        let (fib, _rib) = registered(&[("/a", flagged(10, 0, INHERIT)), ("/a/b", flagged(11, 0, INHERIT)), ("/c/d/e", flagged(12, 0, INHERIT)), ("/", flagged(1, 100, INHERIT))]);
        assert_eq!(hops(&fib, "/"), [(1, 100)]);
        assert_eq!(hops(&fib, "/a"), [(1, 100), (10, 0)]);
        assert_eq!(hops(&fib, "/a/b"), [(1, 100), (10, 0), (11, 0)]);
        assert_eq!(hops(&fib, "/c/d/e"), [(1, 100), (12, 0)]);
    }

    /// NFD's rule per face: the prefix's own routes win, at their lowest cost,
    /// even over a cheaper inherited one; else the nearest shorter prefix's
    /// lowest-cost ChildInherit route, even over a cheaper one further up.
    #[test]
    fn each_face_takes_its_own_routes_cost_else_the_nearest_inherited_one() {
        let (fib, _rib) = registered(&[
            ("/a", flagged(1, 1, INHERIT)),
            ("/a", flagged(2, 1, INHERIT)),
            ("/a/b", flagged(2, 30, INHERIT)),
            ("/a/b", Route { origin: ORIGIN_APP, ..flagged(2, 20, INHERIT) }),
            ("/a/b", Route { origin: 128, ..flagged(2, 5, 0) }),
            ("/a/b/c", flagged(3, 0, INHERIT)),
            ("/a/b/c", flagged(1, 40, 0)),
        ]);
        assert_eq!(hops(&fib, "/a/b"), [(1, 1), (2, 5)], "its own routes' lowest, whatever their flags");
        assert_eq!(hops(&fib, "/a/b/c"), [(1, 40), (2, 20), (3, 0)], "own 1 over the cheaper inherited; 2 from /a/b's ChildInherit routes, not /a's");
    }

    /// With several workers, every FIB entry a route's change rewrote reaches
    /// the workers' replicas, not only its own prefix's: Interests under the
    /// names below `/inh` (multicast there), which each worker owns some of, go
    /// to the inherited next hop as soon as `rib/register` of `/inh` is
    /// answered, and no longer once it is unregistered.
    #[test]
    fn the_workers_replicas_get_every_rewritten_entry() {
        use crate::config::Config;
        use crate::daemon::Daemon;
        use crate::workers::{Change, FromWorker};
        use trajan_engine::FaceMeta;
        use trajan_wire::lp::{LpHeaders, LpPacket};
        use trajan_wire::mgmt::{command_name, ControlParameters, MgmtScope};
        use trajan_wire::Interest;

        const APP: FaceId = 900;
        const PARENT: FaceId = 901;
        const CHILD: FaceId = 902;
        const CONSUMER: FaceId = 903;
        let cfg = "[faces]\nunix_path = \"\"\nudp_listen = [\"127.0.0.1:0\"]\ntcp_listen = []\n[workers]\ncount = 2\n[[strategies]]\nprefix = \"/inh\"\nstrategy = \"multicast\"\n";
        let mut d = Daemon::new(&Config::parse(cfg, "test").unwrap()).unwrap();
        for (face, local) in [(APP, true), (PARENT, false), (CHILD, false), (CONSUMER, false)] {
            d.fwd.add_face(face, FaceMeta { local, point_to_point: true, ..Default::default() });
            d.workers.as_mut().unwrap().broadcast(Change::face(&d.fwd, face));
        }
        let command = |d: &mut Daemon, verb: &str, prefix: &str, face: FaceId, cost: u64| {
            let params = ControlParameters { name: Some(name(prefix)), face_id: Some(face.into()), cost: Some(cost), ..Default::default() };
            let interest = Interest::new(command_name(MgmtScope::Localhost, "rib", verb, &params));
            let pkt = LpPacket::wrap(&interest.encode(), &LpHeaders { incoming_face_id: Some(APP.into()), ..Default::default() });
            assert!(d.mgmt.handle(&pkt, 0, &mut d.fwd, &mut d.rib, &mut d.io, d.workers.as_mut()).is_some());
        };
        let children: Vec<String> = (0..8).map(|k| format!("/inh/c{k}")).collect();
        // The faces the workers send Interests under `children` to.
        let forwarded = |d: &mut Daemon, round: u32| {
            let w = d.workers.as_mut().unwrap();
            let interests: Vec<_> = (0..8).map(|k| Interest { nonce: Some(round * 100 + k), ..Interest::new(name(&format!("/inh/c{k}/{round}"))) }).collect();
            for i in &interests {
                w.dispatch(CONSUMER, i.encode(), 0);
            }
            w.notify();
            assert_eq!(w.stats().len(), 2, "both workers answered, after their packets");
            let mut back = Vec::new();
            w.drain(&mut back);
            let mut faces: Vec<FaceId> = back.into_iter().filter_map(|b| if let FromWorker::Send(o) = b { Some(o.face) } else { None }).collect();
            faces.sort_unstable();
            faces.dedup_by_key(|f| *f);
            let owners: std::collections::BTreeSet<usize> = interests.iter().map(|i| w.owner_of(&i.encode())).collect();
            assert_eq!(owners.len(), 2, "each worker owns some of the names");
            faces
        };
        for child in &children {
            command(&mut d, "register", child, CHILD, 1);
        }
        assert_eq!(forwarded(&mut d, 1), [CHILD]);
        command(&mut d, "register", "/inh", PARENT, 50);
        assert_eq!(hops(&d.fwd.fib, &children[0]), [(PARENT, 50), (CHILD, 1)]);
        assert_eq!(forwarded(&mut d, 2), [PARENT, CHILD]);
        command(&mut d, "unregister", "/inh", PARENT, 50);
        assert_eq!(forwarded(&mut d, 3), [CHILD]);
    }

    /// The per-face route counts follow every way a route comes and goes, so a
    /// face that still has routes is never skipped when it goes away.
    #[test]
    fn routes_per_face_follow_every_change() {
        let mut fib = Fib::new();
        let mut rib = Rib::new(0);
        let (a, b, c): (Name, Name, Name) = ("/a".parse().unwrap(), "/b".parse().unwrap(), "/c".parse().unwrap());
        rib.register(&mut fib, &a, route(7, ORIGIN_APP, 1));
        rib.register(&mut fib, &a, route(7, ORIGIN_APP, 2)); // an update, not a second route
        rib.register(&mut fib, &a, route(7, ORIGIN_STATIC, 3));
        rib.register(&mut fib, &b, Route { expires_ms: Some(100), ..route(7, ORIGIN_APP, 1) });
        rib.register(&mut fib, &c, route(8, ORIGIN_APP, 1));
        assert_eq!(rib.routes_of.get(&7), Some(&3));
        assert!(rib.unregister(&mut fib, &a, 7, ORIGIN_STATIC));
        assert!(!rib.unregister(&mut fib, &a, 7, ORIGIN_STATIC));
        rib.expire(&mut fib, 150);
        assert_eq!(rib.routes_of.get(&7), Some(&1));
        // A face without routes changes nothing; one with routes loses them all.
        rib.remove_face(&mut fib, 9);
        assert!(fib.lpm(&a).is_some() && fib.lpm(&c).is_some());
        rib.remove_face(&mut fib, 7);
        assert!(fib.lpm(&a).is_none());
        assert_eq!(rib.routes_of.get(&7), None);
        assert!(rib.unregister(&mut fib, &c, 8, ORIGIN_APP));
        assert!(rib.routes_of.is_empty());
    }
}
