//! The routing information base: routes as applications and operators register them
//! (per prefix, per face, per origin), from which the FIB is derived. Keeping the two
//! apart lets several origins (an app's registration, a static route) coexist on one
//! prefix and face, with the FIB showing the cheapest.
//!
//! Route flags (ChildInherit, Capture) are stored and reported but do not change FIB
//! derivation: each registered prefix becomes one FIB entry, which the FIB's
//! longest-prefix match already makes inherited by longer names.
//!
//! The RIB owns only the next hops of the faces it has routes for, as NFD's RIB
//! does: a route's change updates its face's next hop and leaves the others of
//! the entry alone, such as the daemon's own `/localhost/nfd` next hop to the
//! internal face (which a local application registering that prefix would
//! otherwise have cut management off with) or one `fib/add-nexthop` set.

use std::collections::HashMap;

use trajan_tables::{Fib, FaceId, TimerId, TimerWheel};
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
    /// NFD's route flags (ChildInherit 1, Capture 2), stored and reported only.
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

/// The RIB.
pub struct Rib {
    entries: HashMap<Name, Vec<(Route, Option<TimerId>)>>,
    /// Routes per face: a face without routes (nearly every face a remote peer
    /// opens, and anyone can open and close them at will) goes away without a
    /// pass over every prefix.
    routes_of: HashMap<FaceId, usize>,
    timers: TimerWheel<RouteKey>,
    fired: Vec<RouteKey>,
    /// Faces that gained their first route or lost their last since
    /// [`Rib::drain_routed`] last ran.
    routed_changed: Vec<FaceId>,
}

impl Rib {
    /// An empty RIB.
    pub fn new(now_ms: u64) -> Self {
        Rib { entries: HashMap::new(), routes_of: HashMap::new(), timers: TimerWheel::new(now_ms), fired: Vec::new(), routed_changed: Vec::new() }
    }

    /// Adds or updates the route (prefix, face, origin) and refreshes its face's
    /// next hop in the FIB.
    pub fn register(&mut self, fib: &mut Fib, prefix: &Name, route: Route) {
        let face = route.face;
        let routes = self.entries.entry(prefix.clone()).or_default();
        let timer = route.expires_ms.map(|t| self.timers.schedule(t, (prefix.clone(), route.face, route.origin)));
        if let Some(slot) = routes.iter_mut().find(|(r, _)| r.face == route.face && r.origin == route.origin) {
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
            routes.push((route, timer));
        }
        self.sync(fib, prefix, face);
    }

    /// Removes the route (prefix, face, origin); returns whether it existed.
    pub fn unregister(&mut self, fib: &mut Fib, prefix: &Name, face: FaceId, origin: u64) -> bool {
        let Some(routes) = self.entries.get_mut(prefix) else { return false };
        let before = routes.len();
        routes.retain(|(r, t)| {
            let hit = r.face == face && r.origin == origin;
            if hit {
                if let Some(t) = t {
                    self.timers.cancel(*t);
                }
            }
            !hit
        });
        let removed = before - routes.len();
        self.forget(face, removed);
        self.sync(fib, prefix, face);
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
        let prefixes: Vec<Name> =
            self.entries.iter().filter(|(_, rs)| rs.iter().any(|(r, _)| r.face == face)).map(|(p, _)| p.clone()).collect();
        for p in prefixes {
            if let Some(routes) = self.entries.get_mut(&p) {
                routes.retain(|(r, t)| {
                    if r.face == face {
                        if let Some(t) = t {
                            self.timers.cancel(*t);
                        }
                    }
                    r.face != face
                });
            }
            self.sync(fib, &p, face);
        }
    }

    /// Drops routes whose ExpirationPeriod ran out; returns the prefixes whose FIB
    /// entry was refreshed, so FIB replicas (workers) can follow.
    pub fn expire(&mut self, fib: &mut Fib, now_ms: u64) -> Vec<Name> {
        let mut fired = std::mem::take(&mut self.fired);
        let mut changed = Vec::new();
        self.timers.advance(now_ms, &mut fired);
        for (prefix, face, origin) in fired.drain(..) {
            if let Some(routes) = self.entries.get_mut(&prefix) {
                let before = routes.len();
                routes.retain(|(r, _)| !(r.face == face && r.origin == origin && r.expires_ms.is_some_and(|t| t <= now_ms)));
                let removed = before - routes.len();
                self.forget(face, removed);
            }
            self.sync(fib, &prefix, face);
            changed.push(prefix);
        }
        self.fired = fired;
        changed
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

    /// When the next route expires, for the I/O loop's poll timeout.
    pub fn next_deadline(&self) -> Option<u64> {
        self.timers.next_deadline()
    }

    /// Whether the route (prefix, face, origin) is registered.
    pub fn holds(&self, prefix: &Name, face: FaceId, origin: u64) -> bool {
        self.entries.get(prefix).is_some_and(|routes| routes.iter().any(|(r, _)| r.face == face && r.origin == origin))
    }

    /// Every (prefix, routes) pair, for `rib/list`.
    pub fn iter(&self) -> impl Iterator<Item = (&Name, impl Iterator<Item = &Route>)> {
        self.entries.iter().map(|(p, rs)| (p, rs.iter().map(|(r, _)| r)))
    }

    /// Brings `face`'s next hop of `prefix` to the cheapest of its routes there,
    /// or removes it when it has none; the entry's other next hops are not this
    /// change's (see the module documentation).
    fn sync(&mut self, fib: &mut Fib, prefix: &Name, face: FaceId) {
        let routes = self.entries.get(prefix).map(|v| v.as_slice()).unwrap_or(&[]);
        match routes.iter().filter(|(r, _)| r.face == face).map(|(r, _)| r.cost).min() {
            Some(cost) => fib.add_nexthop(prefix, face, cost),
            None => {
                fib.remove_nexthop(prefix, face);
            }
        }
        if routes.is_empty() {
            self.entries.remove(prefix);
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
        assert_eq!(rib.expire(&mut fib, 150), vec![p.clone()]);
        assert!(fib.lpm(&p).is_none());
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
