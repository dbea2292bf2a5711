//! ForwardingHint and the network region table (`EngineConfig::network_regions`,
//! NFD's `tables.network_region`): a hinted Interest that reaches its
//! producer's region is forwarded by its own name, without the hint, as NFD
//! forwards it; anywhere else the hint's delegations lead, as before.
//!
//! The router here sits inside the region `/campus/lab`: its FIB has a
//! default route out (`/`, the way toward the hint's delegation `/campus` from
//! inside) and routes for the producer's name `/alice` inside.

use bytes::Bytes;
use trajan_engine::{EngineConfig, FaceMeta, Forwarder, Outgoing, StrategyKind, MAX_FORWARDING_HINTS};
use trajan_wire::data::DataBuilder;
use trajan_wire::lp::{LpHeaders, LpPacket};
use trajan_wire::{Interest, NackReason, Name};

const CONSUMER: u32 = 300;
const CONSUMER2: u32 = 301;
/// The default route's face: out of the region, toward the hint.
const UPLINK: u32 = 400;
/// The producer's face, its name's route inside the region.
const PRODUCER: u32 = 401;
/// A costlier route to the producer.
const PRODUCER2: u32 = 402;
/// A local application that may pin the next hop.
const APP: u32 = 500;

fn name(s: &str) -> Name {
    s.parse().unwrap()
}

/// A router in `regions`, with the routes above.
fn router(regions: &[&str]) -> Forwarder {
    let cfg = EngineConfig { network_regions: regions.iter().map(|r| name(r)).collect(), ..Default::default() };
    let mut f = Forwarder::new(&cfg, 0);
    for id in [CONSUMER, CONSUMER2, UPLINK, PRODUCER, PRODUCER2] {
        f.add_face(id, FaceMeta { local: false, point_to_point: true, ..Default::default() });
    }
    f.add_face(APP, FaceMeta { local: true, local_fields: true, point_to_point: true, ..Default::default() });
    f.fib.add_nexthop(&name("/"), UPLINK, 10);
    f.fib.add_nexthop(&name("/alice"), PRODUCER, 10);
    f.fib.add_nexthop(&name("/alice"), PRODUCER2, 20);
    f
}

/// An Interest for `n` whose ForwardingHint lists `delegations`, in order.
fn hinted(n: &str, delegations: &[&str], nonce: u32) -> Interest {
    let mut i = Interest::new(name(n));
    i.nonce = Some(nonce);
    i.lifetime_ms = Some(1000);
    let mut hint = Vec::new();
    for d in delegations {
        hint.extend_from_slice(&name(d).to_wire());
    }
    i.forwarding_hint = Some(Bytes::from(hint));
    i
}

/// `i` without its hint: what NFD sends on inside the producer's region.
fn stripped(i: &Interest) -> Interest {
    Interest { forwarding_hint: None, ..i.clone() }
}

fn run(f: &mut Forwarder, now: u64, mut input: Vec<(u32, Bytes)>) -> Vec<Outgoing> {
    let mut out = Vec::new();
    f.process_burst(now, &mut input, &mut out);
    out
}

/// The one packet sent, its face and its bytes.
fn one(out: &[Outgoing]) -> (u32, &Bytes) {
    assert_eq!(out.len(), 1, "one packet sent: {out:?}");
    (out[0].face, &out[0].pkt)
}

fn nack(i: &Interest, reason: NackReason) -> Bytes {
    LpPacket::wrap(&i.encode(), &LpHeaders { nack: Some(reason), ..Default::default() })
}

/// Inside the region the Interest goes to its name's next hop, not out by the
/// default route its hint would take, and without the hint (every other field
/// as received, a HopLimit spent); its Data comes back as any other's.
#[test]
fn inside_the_region_a_hinted_interest_goes_by_name_without_its_hint() {
    let mut f = router(&["/campus/lab"]);
    let i = hinted("/alice/1", &["/campus"], 1);
    let out = run(&mut f, 0, vec![(CONSUMER, i.encode())]);
    assert_eq!(one(&out), (PRODUCER, &stripped(&i).encode()));
    let d = DataBuilder::new(name("/alice/1")).build(b"x");
    assert_eq!(one(&run(&mut f, 1, vec![(PRODUCER, d.clone())])), (CONSUMER, &d));
    assert_eq!(f.pcct.pit.len(), 0);

    // A delegation equal to the region is inside too; a HopLimit is spent as ever.
    let mut i = hinted("/alice/2", &["/elsewhere", "/campus/lab"], 2);
    i.hop_limit = Some(5);
    let out = run(&mut f, 2, vec![(CONSUMER, i.encode())]);
    let sent = Interest { hop_limit: Some(4), ..stripped(&i) };
    assert_eq!(one(&out), (PRODUCER, &sent.encode()));
}

/// Outside every region nothing changes: the hint's first delegation with a
/// route leads (here the default route out), and the Interest goes on byte
/// for byte, hint included. A region is inside a delegation, not the other
/// way round (NFD's test): a router of `/campus/lab` is not inside the
/// region of a hint naming `/campus/lab/bench`.
#[test]
fn outside_the_regions_the_hint_leads_and_stays() {
    for regions in [&[][..], &["/campus/lab"][..], &["/other"][..]] {
        let mut f = router(regions);
        let i = hinted("/alice/1", &["/campus/lab/bench"], 1);
        let out = run(&mut f, 0, vec![(CONSUMER, i.encode())]);
        assert_eq!(one(&out), (UPLINK, &i.encode()), "regions {regions:?}");
    }
    // Without regions, even a hint naming the region leads out.
    let mut f = router(&[]);
    let i = hinted("/alice/2", &["/campus"], 2);
    assert_eq!(one(&run(&mut f, 0, vec![(CONSUMER, i.encode())])), (UPLINK, &i.encode()));
}

/// Only the delegations the router reads are compared with its regions: the
/// first [`MAX_FORWARDING_HINTS`], as for the FIB.
#[test]
fn only_the_first_delegations_are_compared_with_the_regions() {
    let hint = |others: usize| {
        let mut d: Vec<String> = (0..others).map(|k| format!("/nowhere/{k}")).collect();
        d.push("/campus".to_owned());
        d
    };
    let mut f = router(&["/campus/lab"]);
    let last = hint(MAX_FORWARDING_HINTS - 1);
    let i = hinted("/alice/1", &last.iter().map(String::as_str).collect::<Vec<_>>(), 1);
    assert_eq!(one(&run(&mut f, 0, vec![(CONSUMER, i.encode())])), (PRODUCER, &stripped(&i).encode()));
    let past = hint(MAX_FORWARDING_HINTS);
    let i = hinted("/alice/2", &past.iter().map(String::as_str).collect::<Vec<_>>(), 2);
    assert_eq!(one(&run(&mut f, 0, vec![(CONSUMER, i.encode())])), (UPLINK, &i.encode()));
}

/// The PIT entry keeps the Interest without its hint, so what it sends later
/// goes by name too: an Interest aggregated into it, and the retry after a
/// Nack, which goes to the name's other next hop rather than out by the hint.
#[test]
fn the_entry_forgets_the_hint_for_aggregation_and_retries() {
    let mut f = router(&["/campus/lab"]);
    let first = hinted("/alice/1", &["/campus"], 1);
    let second = hinted("/alice/1", &["/campus"], 2);
    assert_eq!(one(&run(&mut f, 0, vec![(CONSUMER, first.encode())])), (PRODUCER, &stripped(&first).encode()));
    assert_eq!(run(&mut f, 0, vec![(CONSUMER2, second.encode())]), [], "the second waits on the first");
    let out = run(&mut f, 1, vec![(PRODUCER, nack(&stripped(&first), NackReason::Congestion))]);
    let (face, pkt) = one(&out);
    assert_eq!(face, PRODUCER2, "the name's other next hop, not the hint's way out");
    assert_eq!(pkt, &stripped(&second).encode(), "the latest Interest, as the entry keeps it");
    let out = run(&mut f, 2, vec![(PRODUCER2, nack(&Interest::decode(pkt).unwrap(), NackReason::NoRoute))]);
    assert_eq!(out.len(), 2, "no next hop is left: both downstreams are Nacked: {out:?}");
    for o in &out {
        let lp = LpPacket::decode(&o.pkt).unwrap();
        assert!(lp.headers.nack.is_some());
        assert_eq!(Interest::decode(&lp.fragment.unwrap()).unwrap().forwarding_hint, None);
    }
}

/// A local application's NextHopFaceId is obeyed as ever, with the Interest
/// it sends on stripped of a hint that reached the region (NFD strips it as
/// the Interest arrives, before anything else looks at it).
#[test]
fn a_pinned_next_hop_inside_the_region_gets_the_interest_without_its_hint() {
    let mut f = router(&["/campus/lab"]);
    let i = hinted("/alice/1", &["/campus"], 1);
    let pinned = LpPacket::wrap(&i.encode(), &LpHeaders { next_hop_face_id: Some(u64::from(PRODUCER2)), ..Default::default() });
    assert_eq!(one(&run(&mut f, 0, vec![(APP, pinned)])), (PRODUCER2, &stripped(&i).encode()));
    let mut f = router(&[]);
    let pinned = LpPacket::wrap(&i.encode(), &LpHeaders { next_hop_face_id: Some(u64::from(PRODUCER2)), ..Default::default() });
    assert_eq!(one(&run(&mut f, 0, vec![(APP, pinned)])), (PRODUCER2, &i.encode()));
}

/// The dynamic strategy counts an Interest that reached the region under its
/// name's FIB prefix, whose next hops it chose among, and one routed by its
/// hint under the hint's prefix (here the default route's).
#[test]
fn dynamic_measures_under_the_prefix_that_routed_the_interest() {
    let mut f = router(&["/campus/lab"]);
    f.strategies.insert(&name("/alice"), StrategyKind::Dynamic);
    let i = hinted("/alice/1", &["/campus"], 1);
    let (face, _) = one(&run(&mut f, 0, vec![(CONSUMER, i.encode())]));
    assert!(face == PRODUCER || face == PRODUCER2, "{face}");
    assert_eq!(f.measurements.pending(name("/alice").value(), face).map(|p| p.0), Some(1));
    let i = hinted("/alice/2", &["/campus/lab/bench"], 2);
    assert_eq!(one(&run(&mut f, 0, vec![(CONSUMER, i.encode())])).0, UPLINK);
    assert_eq!(f.measurements.pending(name("/").value(), UPLINK).map(|p| p.0), Some(1));
    assert_eq!(f.measurements.len(), 2);
}

/// The regions change while the forwarder runs (a configuration reload):
/// the Interests that arrive from then on are compared with the new ones,
/// into a region and out of it again.
#[test]
fn the_regions_change_while_the_forwarder_runs() {
    let mut f = router(&[]);
    let i = hinted("/alice/1", &["/campus"], 1);
    assert_eq!(one(&run(&mut f, 0, vec![(CONSUMER, i.encode())])), (UPLINK, &i.encode()));
    f.set_network_regions(vec![name("/other"), name("/campus/lab")]);
    assert_eq!(f.network_regions(), [name("/other"), name("/campus/lab")]);
    let i = hinted("/alice/2", &["/campus"], 2);
    assert_eq!(one(&run(&mut f, 1, vec![(CONSUMER, i.encode())])), (PRODUCER, &stripped(&i).encode()));
    f.set_network_regions(Vec::new());
    let i = hinted("/alice/3", &["/campus"], 3);
    assert_eq!(one(&run(&mut f, 2, vec![(CONSUMER, i.encode())])), (UPLINK, &i.encode()));
}
