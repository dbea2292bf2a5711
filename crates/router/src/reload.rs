//! Reloading the configuration while the router runs, on SIGHUP as NFD does:
//! the PIT, the CS's packets, the faces and the routes management added all
//! stay. What the new file changes is applied where the running router can
//! take it — static routes, strategy choices, the CS's capacity and switches,
//! the network regions, the log level —
//! and what needs a restart (listeners, workers, DPDK, the PIT's size, the
//! FIB's variant, the log format) is named in the log and keeps its running
//! value until then. A file that does not load changes nothing, and loading
//! checks all that can be checked before applying ([`Config::validate`]: route
//! face URIs with the I/O layer's parser, numbers against their ranges), so a
//! file with an error is refused whole. What only applying can tell fails
//! route by route, the rest still applying: a face that cannot be made (a UDP
//! face with no listener of its address family), or one that is up with
//! another number of ports than the route's `udp_ports`, reported in
//! [`Reloaded::failed`] and tried again at the next reload.

use trajan_engine::StrategyKind;
use trajan_wire::Name;

use crate::config::{Config, RouteConfig};
use crate::daemon::{network_regions, strategy_kind, Daemon};
use crate::logging::{self, LevelChange};
use crate::rib::ORIGIN_STATIC;
use crate::workers::Change;

/// What a reload did.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Reloaded {
    /// The changes applied, one line each (`route + /p via udp4://…`).
    pub applied: Vec<String>,
    /// The keys the new file changes that take effect only at the next start.
    pub need_restart: Vec<&'static str>,
    /// Changes that could not be made (a static route whose face cannot be
    /// made, which [`Config::validate`] cannot foresee), each with the reason;
    /// the rest of the reload still applies.
    pub failed: Vec<String>,
}

impl Daemon {
    /// Applies `new` where it differs from the configuration running, logs
    /// what it did, and returns it. Only what the file changes is applied: a
    /// CS capacity or strategy that management set since stays unless the
    /// file changes that same setting. `new` is a validated configuration
    /// ([`Config::load`] validates), so what fails here can only fail when
    /// applied. Static routes of `new` that the RIB lost since (their face was
    /// destroyed) are made again.
    pub fn reload(&mut self, mut new: Config) -> Reloaded {
        let mut done = Reloaded::default();
        let old = self.config.clone();
        self.keep_restart_only(&old, &mut new, &mut done);
        self.reload_strategies(&old, &new, &mut done);
        self.reload_routes(&new, &mut done);
        self.reload_cs(&old, &new, &mut done);
        self.reload_regions(&old, &new, &mut done);
        if new.log.level != old.log.level {
            match logging::set_level(&new.log.level) {
                LevelChange::Applied | LevelChange::NotInstalled => done.applied.push(format!("log.level {} → {}", old.log.level, new.log.level)),
                LevelChange::KeptRustLog => done.failed.push("log.level: RUST_LOG sets the level and keeps setting it".to_owned()),
            }
        }
        self.config = new;
        for change in &done.applied {
            tracing::info!("reload: {change}");
        }
        for key in &done.need_restart {
            tracing::warn!("reload: {key} changes only at the next start; the running value stays");
        }
        for failure in &done.failed {
            tracing::error!("reload: not applied: {failure}");
        }
        tracing::info!(
            applied = done.applied.len(),
            need_restart = done.need_restart.len(),
            failed = done.failed.len(),
            "configuration reloaded"
        );
        done
    }

    /// Notes each setting only a restart changes that `new` changes, and puts
    /// its running value back in `new` (which becomes the running
    /// configuration): a later reload then compares with what runs.
    fn keep_restart_only(&self, old: &Config, new: &mut Config, done: &mut Reloaded) {
        macro_rules! keep {
            ($($key:literal => $($field:ident).+),* $(,)?) => {$(
                if new.$($field).+ != old.$($field).+ {
                    done.need_restart.push($key);
                    new.$($field).+ = old.$($field).+.clone();
                }
            )*};
        }
        keep!(
            "faces.udp_listen" => faces.udp_listen,
            "faces.tcp_listen" => faces.tcp_listen,
            "faces.unix_path" => faces.unix_path,
            "faces.udp_idle_timeout_s" => faces.udp_idle_timeout_s,
            "faces.stall_timeout_s" => faces.stall_timeout_s,
            "faces.stream_queue_bytes" => faces.stream_queue_bytes,
            "faces.queue_bytes" => faces.queue_bytes,
            "faces.max_faces" => faces.max_faces,
            "faces.evict_idle_s" => faces.evict_idle_s,
            "faces.reassembly_bytes" => faces.reassembly_bytes,
            // Any key of the section not named above.
            "faces" => faces,
            "workers" => workers,
            "dpdk" => dpdk,
            "log.format" => log.format,
            "tables.pit_capacity" => tables.pit_capacity,
            "tables.max_interest_lifetime_ms" => tables.max_interest_lifetime_ms,
            "tables.dead_nonce_lifetime_ms" => tables.dead_nonce_lifetime_ms,
            "tables.fib_variant" => tables.fib_variant,
        );
    }

    /// Applies the CS settings `new` changes (capacity, admit, serve), in
    /// every worker's store too.
    fn reload_cs(&mut self, old: &Config, new: &Config, done: &mut Reloaded) {
        let (was, is) = (&old.tables, &new.tables);
        let before = done.applied.len();
        let cs = &mut self.fwd.pcct.cs;
        if is.cs_capacity != was.cs_capacity {
            cs.set_capacity(is.cs_capacity);
            done.applied.push(format!("tables.cs_capacity {} → {}", was.cs_capacity, is.cs_capacity));
        }
        if is.cs_admit != was.cs_admit {
            cs.set_admit(is.cs_admit);
            done.applied.push(format!("tables.cs_admit {} → {}", was.cs_admit, is.cs_admit));
        }
        if is.cs_serve != was.cs_serve {
            cs.set_serve(is.cs_serve);
            done.applied.push(format!("tables.cs_serve {} → {}", was.cs_serve, is.cs_serve));
        }
        if done.applied.len() > before {
            if let Some(w) = &mut self.workers {
                w.broadcast(Change::cs(&self.fwd, w.len()));
            }
        }
    }

    /// Applies the network regions `new` lists, in every worker too: the
    /// hinted Interests that arrive from then on are compared with them.
    fn reload_regions(&mut self, old: &Config, new: &Config, done: &mut Reloaded) {
        let (was, is) = (&old.tables.network_regions, &new.tables.network_regions);
        if is == was {
            return;
        }
        self.fwd.set_network_regions(network_regions(new));
        if let Some(w) = &mut self.workers {
            w.broadcast(Change::regions(&self.fwd));
        }
        done.applied.push(format!("tables.network_regions {was:?} → {is:?}"));
    }

    /// Removes the strategy choices `old` made that `new` does not (the root
    /// goes back to best-route), and makes those `new` lists.
    fn reload_strategies(&mut self, old: &Config, new: &Config, done: &mut Reloaded) {
        let parse = |p: &str| -> Name { p.parse().expect("validated when the configuration was loaded") };
        for s in old.strategies.iter().filter(|s| !new.strategies.iter().any(|n| n.prefix == s.prefix)) {
            let prefix = parse(&s.prefix);
            if prefix.is_empty() {
                self.fwd.strategies.insert(&prefix, StrategyKind::BestRoute);
            } else {
                self.fwd.strategies.remove(&prefix);
            }
            self.broadcast_strategy(&prefix);
            done.applied.push(format!("strategy - {}", s.prefix));
        }
        for s in new.strategies.iter().filter(|s| !old.strategies.contains(s)) {
            let prefix = parse(&s.prefix);
            self.fwd.strategies.insert(&prefix, strategy_kind(s));
            self.broadcast_strategy(&prefix);
            done.applied.push(format!("strategy + {} {}", s.prefix, s.strategy));
        }
    }

    fn broadcast_strategy(&mut self, prefix: &Name) {
        if let Some(w) = &mut self.workers {
            w.broadcast(Change::strategy(&self.fwd, prefix));
        }
    }

    /// Unregisters the static routes the new configuration no longer lists
    /// (their faces stay, with whatever else routes through them) and
    /// registers those it adds, and those it keeps that the RIB no longer
    /// holds: a static route's face that was destroyed (`trajan face destroy`)
    /// took the route with it, and a reload of the same file brings both back
    /// (the face made again, permanent, as at start). A face keeps the ports it
    /// was made with: a route whose `udp_ports` the file changes runs on as it
    /// is while its face lives, and the new one is reported in
    /// [`Reloaded::failed`], saying how to get it.
    fn reload_routes(&mut self, new: &Config, done: &mut Reloaded) {
        let io = &self.io;
        let ports_changed = |r: &RouteConfig, face: u32| io.face(face).is_some() && new.routes.iter().any(|n| n.prefix == r.prefix && n.face == r.face && n.udp_ports != r.udp_ports);
        let (kept, gone): (Vec<_>, Vec<_>) = std::mem::take(&mut self.static_routes).into_iter().partition(|(r, face)| new.routes.contains(r) || ports_changed(r, *face));
        let (kept, lost): (Vec<_>, Vec<_>) = kept.into_iter().partition(|(r, face)| {
            let prefix: Name = r.prefix.parse().expect("registered once, so it parses");
            self.rib.holds(&prefix, *face, ORIGIN_STATIC)
        });
        for (r, face) in gone {
            let prefix: Name = r.prefix.parse().expect("registered once, so it parses");
            self.rib.unregister(&mut self.fwd.fib, &prefix, face, ORIGIN_STATIC);
            self.rib_to_workers();
            done.applied.push(format!("route - {} via {} (face {face} stays)", r.prefix, r.face));
        }
        let added: Vec<_> = new.routes.iter().filter(|r| !kept.iter().any(|(k, _)| k == *r)).cloned().collect();
        self.static_routes = kept;
        for r in added {
            let again = if lost.iter().any(|(l, _)| *l == r) { " (again: its route was gone)" } else { "" };
            let running = self.static_routes.iter().find(|(k, _)| k.prefix == r.prefix && k.face == r.face && k.udp_ports != r.udp_ports);
            let stays = running.map(|(k, _)| format!("; the route with udp_ports = {} runs on", k.udp_ports)).unwrap_or_default();
            match self.add_static_route(&r) {
                Ok(()) => done.applied.push(format!("route + {} via {} cost {}{again}", r.prefix, r.face, r.cost)),
                Err(e) => done.failed.push(format!("route {} via {}: {e}{stays}", r.prefix, r.face)),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A one-thread router on an ephemeral loopback port, without a Unix
    /// socket or TCP, configured by `extra` (TOML) over that.
    fn config(extra: &str) -> Config {
        Config::parse(&format!("{BASE}{extra}"), "test").expect("a valid test configuration")
    }

    /// What every test configuration starts with (see [`config`]).
    const BASE: &str = "[faces]\nunix_path = \"\"\nudp_listen = [\"127.0.0.1:0\"]\ntcp_listen = []\n[workers]\ncount = 1\n";

    fn route(prefix: &str, face: &str) -> String {
        format!("[[routes]]\nprefix = \"{prefix}\"\nface = \"{face}\"\n")
    }

    fn strategy(prefix: &str, name: &str) -> String {
        format!("[[strategies]]\nprefix = \"{prefix}\"\nstrategy = \"{name}\"\n")
    }

    fn name(s: &str) -> Name {
        s.parse().unwrap()
    }

    /// The faces the FIB sends Interests under `prefix` to (its exact entry).
    fn hops(d: &Daemon, prefix: &str) -> Vec<u32> {
        d.fwd.fib.get(&name(prefix)).map(|e| e.nexthops.iter().map(|h| h.face).collect()).unwrap_or_default()
    }

    /// The region `/campus/lab`, as a file lists it.
    const IN_LAB: &str = "[tables]\nnetwork_regions = [\"/campus/lab\"]\n";
    /// A consumer's face, one out of the region and the producer's inside it.
    const CONSUMER: u32 = 900;
    const UPLINK: u32 = 901;
    const PRODUCER: u32 = 902;

    /// Gives `d` (and its workers) the test's faces and routes: the default
    /// route out of the region, and the producer's name inside it.
    fn region_routes(d: &mut Daemon) {
        for face in [CONSUMER, UPLINK, PRODUCER] {
            d.fwd.add_face(face, trajan_engine::FaceMeta { point_to_point: true, ..Default::default() });
            if let Some(w) = &mut d.workers {
                w.broadcast(Change::face(&d.fwd, face));
            }
        }
        for (prefix, face) in [("/", UPLINK), ("/alice", PRODUCER)] {
            d.fwd.fib.add_nexthop(&name(prefix), face, 10);
            if let Some(w) = &mut d.workers {
                w.broadcast(Change::route(&d.fwd, &name(prefix)));
            }
        }
    }

    /// An Interest for `/alice/<nonce>` whose ForwardingHint `/campus` leads
    /// into the region `/campus/lab`.
    fn hinted(nonce: u32) -> trajan_wire::Interest {
        let mut i = trajan_wire::Interest::new(name(&format!("/alice/{nonce}")));
        i.nonce = Some(nonce);
        i.forwarding_hint = Some(name("/campus").to_wire().into());
        i
    }

    /// Where the single-worker `d` sends `i`, and what.
    fn forwarded(d: &mut Daemon, i: &trajan_wire::Interest) -> Vec<trajan_engine::Outgoing> {
        let mut out = Vec::new();
        d.fwd.process_burst(0, &mut [(CONSUMER, i.encode())], &mut out);
        out
    }

    /// `i` as it leaves inside the region: to the producer, without its hint.
    fn by_name(i: &trajan_wire::Interest) -> trajan_engine::Outgoing {
        let stripped = trajan_wire::Interest { forwarding_hint: None, ..i.clone() };
        trajan_engine::Outgoing { face: PRODUCER, pkt: stripped.encode() }
    }

    /// The configured network regions reach the engine, and a reload changes
    /// them while it runs: inside the region a hinted Interest goes by its
    /// name, without the hint; once the file lists no region, out by the
    /// default route its hint takes; and in again when the file lists it.
    #[test]
    fn network_regions_reach_the_engine_and_a_reload_changes_them() {
        let mut d = Daemon::new(&config(IN_LAB)).unwrap();
        region_routes(&mut d);
        assert_eq!(forwarded(&mut d, &hinted(1)), [by_name(&hinted(1))]);

        let done = d.reload(config("[tables]\nnetwork_regions = []\n"));
        assert_eq!(done, Reloaded { applied: vec!["tables.network_regions [\"/campus/lab\"] → []".to_owned()], ..Default::default() });
        assert!(d.config.tables.network_regions.is_empty());
        assert_eq!(forwarded(&mut d, &hinted(2)), [trajan_engine::Outgoing { face: UPLINK, pkt: hinted(2).encode() }]);

        let done = d.reload(config(IN_LAB));
        assert_eq!(done.applied, ["tables.network_regions [] → [\"/campus/lab\"]"]);
        assert_eq!(forwarded(&mut d, &hinted(3)), [by_name(&hinted(3))]);
        assert_eq!(d.reload(config(IN_LAB)), Reloaded::default(), "the same file changes nothing");
    }

    /// A reloaded file with a region that is not a name, or is the root, is
    /// refused whole as at start, naming the entry: the running regions stay,
    /// in the engine too, and so does the rest of the running configuration.
    #[test]
    fn a_bad_region_in_a_reloaded_file_changes_nothing() {
        let mut d = Daemon::new(&config(IN_LAB)).unwrap();
        region_routes(&mut d);
        let before = d.config.clone();
        for (nonce, regions, key) in [(1, "[\"/ok\", \"/bad/%zz\"]", "tables.network_regions[1]"), (2, "[\"/\"]", "tables.network_regions[0]")] {
            let bad = format!("{BASE}[tables]\ncs_capacity = 10\nnetwork_regions = {regions}\n");
            let err = Config::parse(&bad, "trajan.toml").unwrap_err().to_string();
            assert!(err.starts_with(&format!("trajan.toml: {key}: ")), "{err}");
            // As SIGHUP does it: the loop reloads once, then stops.
            let (stop, hangup) = (std::sync::atomic::AtomicBool::new(false), std::sync::atomic::AtomicBool::new(true));
            d.run_reloading(&stop, &hangup, || {
                stop.store(true, std::sync::atomic::Ordering::Relaxed);
                Config::parse(&bad, "trajan.toml").map_err(|e| e.to_string())
            })
            .unwrap();
            assert_eq!(d.config, before);
            assert_eq!(d.fwd.network_regions(), [name("/campus/lab")]);
            assert_eq!(d.fwd.pcct.cs.capacity(), 65536);
            assert_eq!(forwarded(&mut d, &hinted(nonce)), [by_name(&hinted(nonce))]);
        }
    }

    /// With several workers a reload changes the regions of every worker's
    /// engine, as it changes their CS and strategies: the hinted Interests
    /// each worker owns go by name once the router is in the region.
    #[test]
    fn a_reload_changes_the_regions_of_every_worker() {
        let two = |extra: &str| {
            let mut c = config(extra);
            c.workers.count = 2;
            c
        };
        let mut d = Daemon::new(&two("")).unwrap();
        region_routes(&mut d);
        let done = d.reload(two(IN_LAB));
        assert_eq!(done.applied, ["tables.network_regions [] → [\"/campus/lab\"]"], "{done:?}");
        assert!(done.need_restart.is_empty() && done.failed.is_empty(), "{done:?}");
        let w = d.workers.as_mut().expect("two workers");
        let interests: Vec<_> = (0..16).map(hinted).collect();
        let owners: std::collections::BTreeSet<usize> = interests.iter().map(|i| w.owner_of(&i.encode())).collect();
        assert_eq!(owners.len(), 2, "each worker owns some of the names");
        for i in &interests {
            w.dispatch(CONSUMER, i.encode(), 0);
        }
        w.notify();
        // Each worker answers after the packets before it: what they sent is out.
        assert_eq!(w.stats().len(), 2);
        let mut back = Vec::new();
        w.drain(&mut back);
        let mut sent: Vec<_> = back.into_iter().filter_map(|b| if let crate::workers::FromWorker::Send(o) = b { Some(o) } else { None }).collect();
        let mut want: Vec<_> = interests.iter().map(by_name).collect();
        for v in [&mut sent, &mut want] {
            v.sort_by(|a, b| a.pkt.cmp(&b.pkt));
        }
        assert_eq!(sent, want);
    }

    #[test]
    fn a_changed_evict_idle_waits_for_a_restart_under_its_own_name() {
        let mut d = Daemon::new(&config("")).unwrap();
        let mut changed = config("");
        changed.faces.evict_idle_s += 1;
        assert_eq!(d.reload(changed).need_restart, ["faces.evict_idle_s"]);
        assert_eq!(d.config.faces.evict_idle_s, config("").faces.evict_idle_s);
    }

    #[test]
    fn reload_applies_routes_strategies_and_capacity_and_names_what_waits_for_a_restart() {
        let first = format!("{}{}{}", route("/kept", "udp4://127.0.0.1:9"), route("/gone", "udp4://127.0.0.1:10"), strategy("/gone", "multicast"));
        let mut d = Daemon::new(&config(&first)).unwrap();
        let gone_face = hops(&d, "/gone")[0];
        assert_eq!(d.reload(config(&first)), Reloaded::default(), "the same file changes nothing");

        let second = format!(
            "{}{}{}{}[tables]\ncs_capacity = 10\ncs_serve = false\npit_capacity = 5\n",
            route("/kept", "udp4://127.0.0.1:9"),
            route("/new", "udp4://127.0.0.1:11"),
            strategy("/new", "multicast"),
            strategy("/", "multicast"),
        );
        let done = d.reload(config(&second));
        assert_eq!(done.need_restart, ["tables.pit_capacity"]);
        assert!(done.failed.is_empty(), "{done:?}");
        assert_eq!(done.applied.len(), 7, "{done:?}");
        assert!(hops(&d, "/gone").is_empty(), "the route the file dropped is gone");
        assert!(d.io.faces().any(|f| f.id == gone_face), "its face stays");
        assert_eq!(hops(&d, "/kept").len(), 1);
        assert_eq!(hops(&d, "/new").len(), 1, "the route the file added");
        assert_eq!(d.fwd.strategies.get(&name("/gone")), None);
        assert_eq!(d.fwd.strategies.get(&name("/new")), Some(&StrategyKind::Multicast));
        assert_eq!(d.fwd.strategies.get(&Name::root()), Some(&StrategyKind::Multicast));
        assert_eq!(d.fwd.pcct.cs.capacity(), 10);
        assert!(d.fwd.pcct.cs.admits() && !d.fwd.pcct.cs.serves());
        assert_eq!(d.config.tables.pit_capacity, config("").tables.pit_capacity, "the running value stays in the running configuration");
        assert_eq!(d.reload(config(&second)).need_restart, ["tables.pit_capacity"], "and is named again while the file differs");

        // A route whose face cannot be made (no IPv6 listener) fails alone,
        // and is tried again at the next reload.
        let third = format!("{}{}", route("/kept", "udp4://127.0.0.1:9"), route("/v6", "udp6://[::1]:6363"));
        let done = d.reload(config(&third));
        assert_eq!(done.failed.len(), 1, "{done:?}");
        assert!(done.failed[0].starts_with("route /v6 via udp6://[::1]:6363: "), "{done:?}");
        assert_eq!(d.fwd.strategies.get(&Name::root()), Some(&StrategyKind::BestRoute), "the root's choice back to the default");
        assert_eq!(d.fwd.strategies.get(&name("/new")), None);
        assert!(hops(&d, "/new").is_empty() && hops(&d, "/kept").len() == 1);
        assert_eq!(d.reload(config(&third)).failed.len(), 1);
    }

    /// The CS switches the file sets at start hold until a reload changes them.
    #[test]
    fn the_cs_switches_start_as_configured() {
        let mut d = Daemon::new(&config("[tables]\ncs_admit = false\n")).unwrap();
        assert!(!d.fwd.pcct.cs.admits() && d.fwd.pcct.cs.serves());
        let done = d.reload(config("[tables]\ncs_admit = true\n"));
        assert_eq!(done.applied, ["tables.cs_admit false → true"]);
        assert!(d.fwd.pcct.cs.admits());
    }

    /// Management's own changes stay through a reload that does not touch them.
    #[test]
    fn reload_leaves_what_management_changed() {
        let mut d = Daemon::new(&config("")).unwrap();
        d.fwd.pcct.cs.set_capacity(7);
        d.fwd.strategies.insert(&name("/mgmt"), StrategyKind::Multicast);
        let done = d.reload(config(&route("/r", "udp4://127.0.0.1:12")));
        assert_eq!(done.applied.len(), 1, "{done:?}");
        assert_eq!(d.fwd.pcct.cs.capacity(), 7);
        assert_eq!(d.fwd.strategies.get(&name("/mgmt")), Some(&StrategyKind::Multicast));
    }

    /// The reviewer's case: a file that drops a static route and a strategy,
    /// changes the CS capacity and adds a route to a host name. Loading it
    /// fails on the host name, naming the key, and the running router keeps
    /// every route, strategy and CS setting it had.
    #[test]
    fn a_file_with_an_error_changes_nothing() {
        let first = format!("{}{}{}", route("/static", "udp4://127.0.0.1:9"), route("/kept", "udp4://127.0.0.1:10"), strategy("/mc", "multicast"));
        let mut d = Daemon::new(&config(&first)).unwrap();
        let before = (hops(&d, "/static"), hops(&d, "/kept"), d.config.clone());
        assert_eq!(before.0.len(), 1);
        let bad = format!(
            "[faces]\nunix_path = \"\"\nudp_listen = [\"127.0.0.1:0\"]\ntcp_listen = []\n[workers]\ncount = 1\n{}{}[tables]\ncs_capacity = 100\n",
            route("/kept", "udp4://127.0.0.1:10"),
            route("/new", "udp4://router-b.example:6363"),
        );
        let err = Config::parse(&bad, "trajan.toml").unwrap_err().to_string();
        assert!(err.starts_with("trajan.toml: routes[1].face: ") && err.contains("IP address literal"), "{err}");
        // As SIGHUP does it: the loop reloads once, then stops.
        let (stop, hangup) = (std::sync::atomic::AtomicBool::new(false), std::sync::atomic::AtomicBool::new(true));
        d.run_reloading(&stop, &hangup, || {
            stop.store(true, std::sync::atomic::Ordering::Relaxed);
            Config::parse(&bad, "trajan.toml").map_err(|e| e.to_string())
        })
        .unwrap();
        assert_eq!((hops(&d, "/static"), hops(&d, "/kept"), d.config.clone()), before);
        assert!(hops(&d, "/new").is_empty());
        assert_eq!(d.fwd.strategies.get(&name("/mc")), Some(&StrategyKind::Multicast));
        assert_eq!(d.fwd.pcct.cs.capacity(), 65536);
        // So does a port-by-hash face whose ports run past 65535.
        let bad = format!("{}[[routes]]\nprefix = \"/h\"\nface = \"udp4://127.0.0.1:65535\"\nudp_ports = 4\n", route("/kept", "udp4://127.0.0.1:10"));
        let err = Config::parse(&bad, "t").unwrap_err().to_string();
        assert!(err.starts_with("t: routes[1].udp_ports: "), "{err}");
    }

    /// A route added through a face that is up already leaves the face as it
    /// was: its counters, and the LocalFieldsEnabled `faces/update` set.
    #[test]
    fn a_reload_keeps_the_state_of_a_face_a_new_route_uses() {
        let file = route("/a", "udp4://127.0.0.1:9");
        let mut d = Daemon::new(&config(&file)).unwrap();
        let face = hops(&d, "/a")[0];
        {
            let m = d.fwd.faces.get_mut(face).unwrap();
            m.counters.packets.out_interests = 5;
            m.local_fields = true;
        }
        let done = d.reload(config(&format!("{file}{}", route("/b", "udp4://127.0.0.1:9"))));
        assert_eq!(done.applied, ["route + /b via udp4://127.0.0.1:9 cost 0"], "{done:?}");
        assert_eq!(hops(&d, "/b"), [face], "the same face");
        let m = d.fwd.faces.get(face).unwrap();
        assert_eq!(m.counters.packets.out_interests, 5, "the face's counters");
        assert!(m.local_fields, "its LocalFieldsEnabled");
    }

    /// A face keeps the ports it was made with: a reload that gives its static
    /// route another `udp_ports` is refused, saying how to get them, and the
    /// route runs on through the face as it was; once the face is destroyed,
    /// the next reload makes it again with the new ports.
    #[test]
    fn a_reload_that_changes_a_routes_udp_ports_is_refused_and_the_route_runs_on() {
        // Without a hash face of its own the I/O layer does not show a face's
        // ports (`hash_peer`); with one, the test can see them.
        for hash_face in ["", "udp_ports = [\"127.0.0.1:0\"]\n"] {
            for (was, is) in [(1, 4), (4, 1)] {
                let file = |ports: usize| config(&format!("{hash_face}[[routes]]\nprefix = \"/a\"\nface = \"udp4://127.0.0.1:40000\"\nudp_ports = {ports}\n"));
                let mut d = Daemon::new(&file(was)).unwrap();
                let face = hops(&d, "/a")[0];
                let done = d.reload(file(is));
                let s = if was == 1 { "" } else { "s" };
                let why = format!(
                    "route /a via udp4://127.0.0.1:40000: face {face} (udp4://127.0.0.1:40000) has {was} port{s}, not udp_ports = {is}: a face keeps the ports it was made with until it is destroyed (`trajan face destroy {face}`, then reload) or the router restarts; the route with udp_ports = {was} runs on"
                );
                assert_eq!(done.failed, [why], "{done:?}");
                assert!(done.applied.is_empty() && done.need_restart.is_empty(), "{done:?}");
                assert_eq!(hops(&d, "/a"), [face], "the route runs on through its face");
                assert_eq!(d.reload(file(is)).failed.len(), 1, "and the new one is refused again at the next reload");

                // As management's `faces/destroy` does.
                assert!(d.io.destroy_face(face));
                d.rib.remove_face(&mut d.fwd.fib, face);
                d.fwd.remove_face(face);
                let done = d.reload(file(is));
                assert!(done.failed.is_empty(), "{done:?}");
                let again = hops(&d, "/a");
                assert_eq!(again.len(), 1);
                if !hash_face.is_empty() {
                    assert_eq!(d.io.hash_peer(again[0]).map_or(1, |h| h.count), is, "the face made again has the new ports");
                }
                assert_eq!(d.reload(file(is)), Reloaded::default(), "and then the same file changes nothing");
            }
        }
    }

    /// A route refused because its face has other ports leaves that face as it
    /// was: a persistent face management made is not raised to permanent by a
    /// route that never took it.
    #[test]
    fn a_route_refused_for_its_ports_leaves_the_face_as_it_was() {
        let mut d = Daemon::new(&config("")).unwrap();
        let info = d.io.create_face("udp4://127.0.0.1:40000", trajan_io::Persistency::Persistent).unwrap();
        d.face_up(&info);
        let done = d.reload(config("[[routes]]\nprefix = \"/a\"\nface = \"udp4://127.0.0.1:40000\"\nudp_ports = 4\n"));
        assert_eq!(done.failed.len(), 1, "{done:?}");
        assert!(done.failed[0].contains("has 1 port, not udp_ports = 4"), "{done:?}");
        assert_eq!(d.io.face(info.id).unwrap().persistency, trajan_io::Persistency::Persistent);
    }

    /// At start, a route whose face URI names a face another route made with
    /// other ports (the URI spelled otherwise, or one of the face's ports) stops
    /// the start, naming the face, rather than being sent to its ports.
    #[test]
    fn a_route_into_a_face_with_other_ports_stops_the_start() {
        let hash = "[[routes]]\nprefix = \"/a\"\nface = \"udp4://127.0.0.1:40000\"\nudp_ports = 4\n";
        for other in ["udp4://127.0.0.1:40000/", "udp4://127.0.0.1:40002"] {
            let err = Daemon::new(&config(&format!("{hash}{}", route("/b", other)))).err().expect("refused").to_string();
            assert!(err.starts_with(&format!("static route /b via {other}: face ")) && err.contains("(udp4://127.0.0.1:40000) has 4 ports, not udp_ports = 1"), "{err}");
        }
    }

    /// A static route whose face was destroyed (which takes its routes) comes
    /// back at the next reload of the same file, on a new permanent face; one
    /// management removed from the RIB comes back on its face.
    #[test]
    fn a_lost_static_route_comes_back_at_the_next_reload() {
        let file = format!("{}{}", route("/s", "udp4://127.0.0.1:9"), route("/t", "udp4://127.0.0.1:13"));
        let mut d = Daemon::new(&config(&file)).unwrap();
        let face = hops(&d, "/s")[0];
        // As `trajan face destroy <face>` does.
        assert!(d.io.destroy_face(face));
        d.face_down(face);
        assert!(hops(&d, "/s").is_empty());
        let done = d.reload(config(&file));
        assert_eq!(done.applied, ["route + /s via udp4://127.0.0.1:9 cost 0 (again: its route was gone)"], "{done:?}");
        assert!(done.failed.is_empty());
        let again = hops(&d, "/s");
        assert_eq!(again.len(), 1);
        let info = d.io.face(again[0]).expect("a face of the I/O layer");
        assert_eq!((info.remote_uri.as_str(), info.persistency), ("udp4://127.0.0.1:9", trajan_io::Persistency::Permanent));
        assert_eq!(d.static_routes.len(), 2, "{:?}", d.static_routes);
        assert_eq!(d.reload(config(&file)), Reloaded::default(), "and then the same file changes nothing");

        // `trajan route remove /t <face> --origin 255`, the face staying.
        let t = hops(&d, "/t")[0];
        assert!(d.rib.unregister(&mut d.fwd.fib, &name("/t"), t, ORIGIN_STATIC));
        let done = d.reload(config(&file));
        assert_eq!(done.applied.len(), 1, "{done:?}");
        assert_eq!(hops(&d, "/t"), [t], "the same face");
    }
}
