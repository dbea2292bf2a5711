//! Sharded workers forward exactly as one engine does. The same random traffic
//! as the engine's random-traffic test (Interests, Data and Nacks from six
//! faces, in NDNLPv2 headers or not, some damaged, with faces removed now and
//! then) goes one packet at a time both to a single engine, as the
//! single-threaded daemon runs it, and through `Workers` to three engines
//! that each own a shard of the names. A clock moved by hand gives both the
//! same times. After every packet:
//! - the workers sent exactly the packets the single engine sent, byte for
//!   byte (in any order);
//! - their counters add up to the single engine's: the copy of a Data that
//!   dispatch also hands to the worker of a short Interest (a name of fewer
//!   components than the dispatch key) is counted by no worker, as the Data's
//!   owner counts the packet.
//!
//! This is the sharding's contract: each exchange's packets meet on one
//! worker, whatever their headers, damage or full names. It holds for every
//! CanBePrefix Interest whose name has at least the dispatch key's
//! components, so shorter ones are not drawn: their Data may extend them
//! under another key, and [`trajan_router::dispatch::ShortPrefixes`] then
//! reaches them with a copy rather than in the same way.

#[path = "../../engine/tests/traffic/mod.rs"]
mod traffic;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use bytes::Bytes;
use proptest::prelude::*;
use traffic::*;
use trajan_engine::{EngineConfig, Forwarder, Outgoing, StrategyKind};
use trajan_router::dispatch::{name_keys, DISPATCH_COMPONENTS};
use trajan_router::node_fibs::NodeFibs;
use trajan_router::workers::{Change, Clock, FromWorker, ShardStats, Workers};
use trajan_tables::Fib;
use trajan_wire::lp::LpPacket;
use trajan_wire::Interest;

const WORKERS: usize = 3;

/// Large enough that no shard and not the single engine ever evicts: a
/// store's evictions follow its own size, which sharding divides.
fn config() -> EngineConfig {
    EngineConfig { cs_capacity: 64, pit_capacity: 256, ..Default::default() }
}

fn routes(fib: &mut Fib) {
    for (prefix, hops) in ROUTES {
        for (cost, hop) in hops.iter().enumerate() {
            fib.add_nexthop(&name(prefix), *hop, 10 + cost as u64);
        }
    }
}

/// The single engine, with its own FIB, as the single-threaded daemon has.
fn single() -> Forwarder {
    let mut f = Forwarder::new(&config(), 0);
    for id in &FACES[..KNOWN] {
        f.add_face(*id, meta(*id));
    }
    routes(&mut f.fib);
    f.strategies.insert(&name(MULTICAST), StrategyKind::Multicast);
    f
}

/// [`WORKERS`] engines sharing one FIB, on their threads, reading `clock`.
fn sharded(clock: &Arc<AtomicU64>) -> Workers {
    let mut fib = Fib::new();
    routes(&mut fib);
    let fibs = NodeFibs::new(&fib, &[], WORKERS);
    let fwds = (0..WORKERS)
        .map(|w| {
            let mut f = Forwarder::with_fib(&config(), 0, fibs.reader(w));
            for id in &FACES[..KNOWN] {
                f.add_face(*id, meta(*id));
            }
            f.strategies.insert(&name(MULTICAST), StrategyKind::Multicast);
            f
        })
        .collect();
    Workers::start(fwds, fibs, &[], Vec::new(), Vec::new(), Arc::new(|| {}), Clock::Manual(clock.clone())).expect("workers start")
}

/// Received traffic, with CanBePrefix only on names of at least the dispatch
/// key's components (see the module documentation), and without Interests
/// that lost their Nonce to damage: an engine gives each a random one.
fn any_sharded() -> impl Strategy<Value = Received> {
    any_received()
        .prop_map(|mut r| {
            if let Packet::Interest { name: n, can_be_prefix, .. } = &mut r.packet {
                let n = name_at(*n);
                *can_be_prefix &= n.len() - usize::from(n.implicit_digest().is_some()) >= DISPATCH_COMPONENTS;
            }
            r
        })
        .prop_filter("an Interest without a Nonce gets a random one", |r| {
            let fragment = LpPacket::decode(&r.encode()).ok().and_then(|lp| lp.fragment);
            fragment.and_then(|f| Interest::decode(&f).ok()).is_none_or(|i| i.nonce.is_some())
        })
}

fn sorted(mut out: Vec<Outgoing>) -> Vec<(u32, Bytes)> {
    let mut v: Vec<(u32, Bytes)> = out.drain(..).map(|o| (o.face, o.pkt)).collect();
    v.sort();
    v
}

/// What the workers sent, once each has processed what it was handed (the
/// statistics query is a barrier: a worker answers it after the packets
/// before it), and their statistics.
fn settle(w: &mut Workers) -> (Vec<Outgoing>, Vec<ShardStats>) {
    let stats = w.stats();
    let mut back = Vec::new();
    w.drain(&mut back);
    let out = back
        .into_iter()
        .filter_map(|b| match b {
            FromWorker::Send(o) => Some(o),
            _ => None,
        })
        .collect();
    (out, stats)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn sharded_workers_forward_as_one_engine(
        steps in prop::collection::vec((0u64..60, any_sharded(), prop::option::weighted(0.03, prop::sample::select(REMOVABLE.to_vec()))), 1..80)
    ) {
        let clock = Arc::new(AtomicU64::new(0));
        let mut one = single();
        let mut workers = sharded(&clock);
        let mut dispatched = 0;
        let (mut now, mut last_tick) = (0, u64::MAX);
        for (advance, received, removed) in steps {
            now += advance;
            clock.store(now, Ordering::SeqCst);
            // Timers run once per millisecond of the clock, before the packet,
            // as a worker runs them.
            if now != last_tick {
                last_tick = now;
                one.tick(now);
            }
            if let Some(face) = removed {
                one.remove_face(face);
                workers.broadcast(Change::Face(face, None));
            }
            let pkt = received.encode();
            let mut out = Vec::new();
            one.process_burst(now, &mut [(received.face, pkt.clone())], &mut out);
            workers.dispatch(received.face, pkt.clone(), now);
            workers.notify();
            let (sent, stats) = settle(&mut workers);
            prop_assert_eq!(sorted(sent), sorted(out), "sent for {:?}", received);

            let total = ShardStats::sum(&stats);
            let copies = total.dispatched - dispatched - 1;
            dispatched = total.dispatched;
            prop_assert!(copies == 0 || name_keys(&pkt).is_some_and(|k| !k.interest), "only a Data is copied");
            prop_assert_eq!(&total.counters, &one.counters, "counters after {:?}", received);
            for (id, m) in one.faces.iter() {
                prop_assert_eq!(total.faces.get(&id), Some(&m.counters), "face {} counters after {:?}", id, received);
            }
            prop_assert_eq!(total.pit_entries, one.pcct.pit.len());
            prop_assert_eq!(total.cs_entries, one.pcct.cs.len());
        }
    }
}
