//! Behaviour of the forwarding pipeline, driven entirely in memory.

use bytes::Bytes;
use trajan_engine::{EngineConfig, FaceMeta, Forwarder, Outgoing, StrategyKind, MAX_DOWNSTREAMS, MAX_FORWARDING_HINTS};
use trajan_tables::MAX_IN_RECORDS;
use trajan_wire::data::DataBuilder;
use trajan_wire::lp::{LpHeaders, LpPacket};
use trajan_wire::{Data, Interest, NackReason, Name};

mod common;
use common::{forwarder_with, name, CONSUMER, CONSUMER2, PRODUCER, PRODUCER2};

fn forwarder() -> Forwarder {
    forwarder_with(&[CONSUMER, CONSUMER2, PRODUCER, PRODUCER2])
}

fn interest(n: &str, nonce: u32) -> Interest {
    let mut i = Interest::new(name(n));
    i.nonce = Some(nonce);
    i.lifetime_ms = Some(1000);
    i
}

fn data(n: &str, fresh: Option<u64>) -> Bytes {
    let mut b = DataBuilder::new(name(n));
    if let Some(f) = fresh {
        b = b.freshness_ms(f);
    }
    b.build(b"payload")
}

fn run(f: &mut Forwarder, now: u64, mut input: Vec<(u32, Bytes)>) -> Vec<Outgoing> {
    let mut out = Vec::new();
    f.process_burst(now, &mut input, &mut out);
    out
}

/// What was sent on `face`, decoded: (Interest, Data, Nack reason, PitToken).
fn decode(o: &Outgoing) -> (Option<Interest>, Option<Data>, Option<NackReason>, Option<Bytes>) {
    let lp = LpPacket::decode(&o.pkt).unwrap();
    let frag = lp.fragment.unwrap();
    let i = Interest::decode(&frag).ok();
    let d = Data::decode(&frag).ok();
    (i, d, lp.headers.nack, lp.headers.pit_token)
}

#[test]
fn interest_data_exchange_then_cs_hit() {
    let mut f = forwarder();
    let out = run(&mut f, 0, vec![(CONSUMER, interest("/a/1", 1).encode())]);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].face, PRODUCER);
    // Forwarded unchanged: the very same bytes.
    assert_eq!(out[0].pkt, interest("/a/1", 1).encode());
    let out = run(&mut f, 1, vec![(PRODUCER, data("/a/1", Some(10_000)))]);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].face, CONSUMER);
    assert_eq!(f.pcct.pit.len(), 0);
    // Second Interest: answered from the CS, nothing goes upstream.
    let out = run(&mut f, 2, vec![(CONSUMER2, interest("/a/1", 2).encode())]);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].face, CONSUMER2);
    assert_eq!(f.counters.cs_hits, 1);
    assert_eq!(f.counters.satisfied_interests, 1);
}

/// The engine takes the bare packets it keeps out of the burst, and what it
/// sends and caches is still those very bytes: a forwarded Interest (bare or in
/// an LpPacket) and a Data (cached, then answering a later Interest).
#[test]
fn kept_packets_are_taken_from_the_burst_unchanged() {
    let mut f = forwarder();
    let bare = interest("/a/t1", 1).encode();
    let wrapped = LpPacket::wrap(&interest("/a/t2", 2).encode(), &LpHeaders { pit_token: Some(Bytes::from_static(b"tk")), ..Default::default() });
    let mut input = vec![(CONSUMER, bare.clone()), (CONSUMER2, wrapped)];
    let mut out = Vec::new();
    f.process_burst(0, &mut input, &mut out);
    // The bare Interest's buffer went to its PIT entry; of the LpPacket, the
    // entry took the fragment (a view of it) and the caller keeps the rest.
    assert!(input[0].1.is_empty());
    assert!(!input[1].1.is_empty());
    assert_eq!(out.len(), 2);
    assert_eq!(out[0].pkt, bare);
    assert_eq!(out[1].pkt, interest("/a/t2", 2).encode());

    let d = data("/a/t1", Some(10_000));
    let mut input = vec![(PRODUCER, d.clone())];
    out.clear();
    f.process_burst(1, &mut input, &mut out);
    assert!(input[0].1.is_empty(), "the Data went to the CS and downstream");
    assert_eq!((out.len(), out[0].face, &out[0].pkt), (1, CONSUMER, &d));
    let out = run(&mut f, 2, vec![(CONSUMER2, interest("/a/t1", 3).encode())]);
    assert_eq!((out.len(), out[0].face, &out[0].pkt), (1, CONSUMER2, &d));
    assert_eq!(f.counters.cs_hits, 1);
}

/// A ForwardingHint delegation the FIB knows steers the Interest, which goes
/// out unchanged (its name the new PIT entry took from the decoded Interest).
#[test]
fn forwarding_hint_steers() {
    let mut f = forwarder();
    f.fib.add_nexthop(&name("/hub"), PRODUCER2, 10);
    let out = run(&mut f, 0, vec![(CONSUMER, hinted("/b/1", &["/hub"], 1))]);
    assert_eq!(out.len(), 1);
    assert_eq!((out[0].face, &out[0].pkt), (PRODUCER2, &hinted("/b/1", &["/hub"], 1)));
}

/// An Interest `n` whose ForwardingHint lists `delegations`, encoded.
fn hinted(n: &str, delegations: &[&str], nonce: u32) -> Bytes {
    let mut i = interest(n, nonce);
    i.forwarding_hint = Some(Bytes::from(delegations.iter().flat_map(|d| name(d).to_wire()).collect::<Vec<u8>>()));
    i.encode()
}

/// The Nack NoRoute `out` holds alone, to `CONSUMER`, for the Interest named `n`.
fn nacked_no_route(out: &[Outgoing], n: &str) {
    assert_eq!(out.len(), 1, "{out:?}");
    let (i, _, reason, _) = decode(&out[0]);
    assert_eq!((out[0].face, reason, i.unwrap().name), (CONSUMER, Some(NackReason::NoRoute), name(n)));
}

/// When no delegation of a hint has a route, the Interest goes where NFD's
/// `lookupFib` sends it: by the root's entry, which without a default route
/// is no route at all (Nacked NoRoute), never by its name's route, which
/// leads elsewhere than the hint asked. With a default route it goes out
/// by that. A hint with no delegation is no hint: then the name routes.
#[test]
fn a_hint_without_a_route_takes_the_root_route_not_the_names() {
    let mut f = forwarder();
    nacked_no_route(&run(&mut f, 0, vec![(CONSUMER, hinted("/a/1", &["/nowhere"], 1))]), "/a/1");
    nacked_no_route(&run(&mut f, 0, vec![(CONSUMER, hinted("/zz/2", &["/nowhere", "/nor/here"], 2))]), "/zz/2");
    assert_eq!(f.pcct.pit.len(), 0);
    let out = run(&mut f, 0, vec![(CONSUMER, hinted("/a/3", &[], 3))]);
    assert_eq!((out.len(), out[0].face, &out[0].pkt), (1, PRODUCER, &hinted("/a/3", &[], 3)));

    f.fib.add_nexthop(&Name::root(), PRODUCER2, 10);
    let out = run(&mut f, 0, vec![(CONSUMER, hinted("/a/4", &["/nowhere"], 4))]);
    assert_eq!((out.len(), out[0].face, &out[0].pkt), (1, PRODUCER2, &hinted("/a/4", &["/nowhere"], 4)));
}

/// Only the first [`MAX_FORWARDING_HINTS`] delegations are looked up (a hint
/// of thousands would cost as many FIB lookups); the others are ignored, and
/// the Interest still goes out unchanged, or is Nacked NoRoute when none of
/// those looked up has a route.
#[test]
fn only_the_first_delegations_of_a_hint_are_looked_up() {
    let mut f = forwarder();
    f.fib.add_nexthop(&name("/hub"), PRODUCER2, 10);
    let hinted = |n: &str, unknown: usize, nonce| {
        let mut delegations: Vec<String> = (0..unknown).map(|k| format!("/nowhere/{k}")).collect();
        delegations.push("/hub".to_owned());
        hinted(n, &delegations.iter().map(String::as_str).collect::<Vec<_>>(), nonce)
    };
    let last = MAX_FORWARDING_HINTS - 1;
    let out = run(&mut f, 0, vec![(CONSUMER, hinted("/a/1", last, 1))]);
    assert_eq!((out[0].face, &out[0].pkt), (PRODUCER2, &hinted("/a/1", last, 1)));
    nacked_no_route(&run(&mut f, 0, vec![(CONSUMER, hinted("/a/2", last + 1, 2))]), "/a/2");
}

#[test]
fn aggregation_sends_one_interest_and_data_to_all() {
    let mut f = forwarder();
    let out = run(&mut f, 0, vec![(CONSUMER, interest("/a/x", 1).encode()), (CONSUMER2, interest("/a/x", 2).encode())]);
    assert_eq!(out.iter().filter(|o| o.face == PRODUCER).count(), 1);
    let out = run(&mut f, 1, vec![(PRODUCER, data("/a/x", None))]);
    let mut faces: Vec<u32> = out.iter().map(|o| o.face).collect();
    faces.sort();
    assert_eq!(faces, vec![CONSUMER, CONSUMER2]);
    // One gets the received buffer, the other a reference: the same bytes.
    assert!(out.iter().all(|o| o.pkt == data("/a/x", None)));
}

/// A name may be asked for by every face, but the PIT holds no more records
/// beyond each entry's inline ones than it holds entries: past that, a new
/// face's Interest is dropped as when the PIT is full, and those recorded are
/// answered as before.
#[test]
fn aggregation_beyond_the_inline_records_is_bounded_by_the_pit_capacity() {
    let mut f = Forwarder::new(&EngineConfig { pit_capacity: 2, ..Default::default() }, 0);
    let faces: Vec<u32> = (1000..1000 + trajan_tables::IN_RECORDS_INLINE as u32 + 3).collect();
    for &id in faces.iter().chain(&[PRODUCER]) {
        f.add_face(id, FaceMeta { point_to_point: true, ..Default::default() });
    }
    f.fib.add_nexthop(&name("/a"), PRODUCER, 10);
    let input = faces.iter().enumerate().map(|(k, &face)| (face, interest("/a/x", k as u32).encode())).collect();
    let out = run(&mut f, 0, input);
    assert_eq!(out.iter().filter(|o| o.face == PRODUCER).count(), 1);
    assert_eq!(f.counters.pit_full, 1, "the last face's Interest found no room");
    let out = run(&mut f, 1, vec![(PRODUCER, data("/a/x", None))]);
    let mut answered: Vec<u32> = out.iter().map(|o| o.face).collect();
    answered.sort();
    assert_eq!(answered, faces[..faces.len() - 1], "every recorded face gets the Data");
    assert_eq!((f.pcct.pit.len(), f.pcct.pit.extra_in_records()), (0, 0));
}

/// `i` with the NDNLPv2 PIT token `token`, encoded.
fn tokened(i: &Interest, token: &[u8]) -> Bytes {
    LpPacket::wrap(&i.encode(), &LpHeaders { pit_token: Some(Bytes::copy_from_slice(token)), ..Default::default() })
}

/// A forwarder with `n` point-to-point consumer faces (returned) and the
/// producer, which `/a` is routed to.
fn crowd(n: u32) -> (Forwarder, Vec<u32>) {
    let mut f = Forwarder::new(&EngineConfig::default(), 0);
    let faces: Vec<u32> = (1000..1000 + n).collect();
    for &id in faces.iter().chain(&[PRODUCER]) {
        f.add_face(id, FaceMeta { point_to_point: true, ..Default::default() });
    }
    f.fib.add_nexthop(&name("/a"), PRODUCER, 10);
    (f, faces)
}

/// [`run`] for more packets than a burst.
fn run_bursts(f: &mut Forwarder, now: u64, input: Vec<(u32, Bytes)>) -> Vec<Outgoing> {
    input.chunks(64).flat_map(|burst| run(f, now, burst.to_vec())).collect()
}

/// A Data satisfying several entries (its name's and its prefixes' with
/// CanBePrefix) goes once to each downstream and PIT token, however many of
/// those entries it is recorded in: a face asking under one token twice gets
/// one copy, under two tokens two.
#[test]
fn a_downstream_shared_by_several_entries_gets_the_data_once_per_token() {
    let mut f = forwarder();
    let prefix = |n: &str, nonce| Interest { can_be_prefix: true, ..interest(n, nonce) };
    let input = vec![
        (CONSUMER, tokened(&interest("/a/x/y", 1), b"t1")),
        (CONSUMER, tokened(&prefix("/a/x", 2), b"t1")),
        (CONSUMER, tokened(&prefix("/a", 3), b"t1")),
        (CONSUMER2, tokened(&interest("/a/x/y", 4), b"t2")),
        (CONSUMER2, tokened(&prefix("/a/x", 5), b"t3")),
        (CONSUMER2, tokened(&prefix("/a", 6), b"t2")),
    ];
    run(&mut f, 0, input);
    assert_eq!(f.pcct.pit.len(), 3);
    let d = data("/a/x/y", None);
    let out = run(&mut f, 1, vec![(PRODUCER, d.clone())]);
    let mut sent: Vec<(u32, Bytes)> = out.iter().map(|o| (o.face, decode(o).3.expect("a token"))).collect();
    sent.sort();
    let expected = [(CONSUMER, "t1"), (CONSUMER2, "t2"), (CONSUMER2, "t3")].map(|(f, t)| (f, Bytes::from(t)));
    assert_eq!(sent, expected);
    assert!(out.iter().all(|o| decode(o).1.is_some_and(|data| *data.wire() == d)));
    assert_eq!((f.counters.satisfied_interests, f.counters.packets.out_data, f.counters.downstreams_cut), (3, 3, 0));
    assert_eq!(f.pcct.pit.len(), 0);
}

/// One Data is sent to at most [`MAX_DOWNSTREAMS`] downstreams: the rest are
/// counted, and every entry it matched is satisfied all the same.
#[test]
fn the_downstreams_of_one_data_are_capped_and_the_rest_counted() {
    // Nine entries (the name's and eight prefixes'), each asked for by every
    // face under its own token: a face more than the cap allows.
    let entries = 9;
    let n = (MAX_DOWNSTREAMS / (entries - 1)) as u32;
    assert!(n as usize <= MAX_IN_RECORDS, "each entry takes every face");
    let (mut f, faces) = crowd(n);
    let full: Name = name("/a/1/2/3/4/5/6/7/8");
    let mut input = Vec::new();
    for (k, &face) in faces.iter().enumerate() {
        for len in 1..=entries {
            let i = Interest { can_be_prefix: len < entries, ..interest(&full.prefix(len).to_string(), (k * entries + len) as u32) };
            input.push((face, tokened(&i, &[len as u8])));
        }
    }
    run_bursts(&mut f, 0, input);
    assert_eq!((f.pcct.pit.len(), f.counters.pit_full, f.counters.in_records_full), (entries, 0, 0));
    let out = run(&mut f, 1, vec![(PRODUCER, data("/a/1/2/3/4/5/6/7/8", None))]);
    assert_eq!(out.len(), MAX_DOWNSTREAMS);
    let mut sent: Vec<(u32, Bytes)> = out.iter().map(|o| (o.face, decode(o).3.expect("a token"))).collect();
    sent.sort();
    sent.dedup();
    assert_eq!(sent.len(), MAX_DOWNSTREAMS, "each downstream once");
    assert_eq!(f.counters.downstreams_cut, (entries * n as usize - MAX_DOWNSTREAMS) as u64);
    assert_eq!((f.counters.satisfied_interests, f.counters.packets.out_data), (entries as u64, MAX_DOWNSTREAMS as u64));
    assert_eq!((f.pcct.pit.len(), f.pcct.pit.extra_in_records()), (0, 0));
}

/// One PIT entry records at most [`MAX_IN_RECORDS`] faces: an Interest from
/// one more is dropped and counted, while a face already recorded still
/// refreshes its record (its new PIT token is the one the Data echoes).
#[test]
fn an_entry_at_its_in_record_cap_drops_a_new_face_but_takes_a_refresh() {
    let (mut f, faces) = crowd(MAX_IN_RECORDS as u32 + 1);
    let (last, recorded) = faces.split_last().unwrap();
    let input = recorded.iter().map(|&face| (face, tokened(&interest("/a/x", face), b"old"))).collect();
    assert_eq!(run_bursts(&mut f, 0, input).iter().filter(|o| o.face == PRODUCER).count(), 1);
    let out = run(&mut f, 1, vec![(*last, tokened(&interest("/a/x", 1), b"new"))]);
    assert!(out.is_empty());
    assert_eq!((f.counters.in_records_full, f.counters.pit_full), (1, 0));
    let refreshed = recorded[0];
    run(&mut f, 2, vec![(refreshed, tokened(&interest("/a/x", 2), b"new"))]);
    assert_eq!(f.counters.in_records_full, 1, "a refresh is not refused");
    let out = run(&mut f, 3, vec![(PRODUCER, data("/a/x", None))]);
    assert_eq!(out.len(), MAX_IN_RECORDS);
    assert!(out.iter().all(|o| o.face != *last));
    for o in &out {
        let token = decode(o).3.expect("a token");
        assert_eq!(token, if o.face == refreshed { "new" } else { "old" }, "face {}", o.face);
    }
}

#[test]
fn no_route_gives_nack() {
    let mut f = forwarder();
    let out = run(&mut f, 0, vec![(CONSUMER, interest("/zzz", 1).encode())]);
    assert_eq!(out.len(), 1);
    let (i, _, nack, _) = decode(&out[0]);
    assert_eq!(nack, Some(NackReason::NoRoute));
    assert_eq!(i.unwrap().name, name("/zzz"));
    assert_eq!(f.pcct.pit.len(), 0);
    assert_eq!(f.counters.no_route, 1);
}

#[test]
fn duplicate_nonce_from_other_face_is_a_loop() {
    let mut f = forwarder();
    run(&mut f, 0, vec![(CONSUMER, interest("/a/l", 7).encode())]);
    let out = run(&mut f, 1, vec![(CONSUMER2, interest("/a/l", 7).encode())]);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].face, CONSUMER2);
    assert_eq!(decode(&out[0]).2, Some(NackReason::Duplicate));
    assert_eq!(f.counters.loops, 1);
}

/// NFD's loop rule: an Interest this router sent upstream that comes back on
/// that face is a loop, even once the consumer's retransmission took another
/// Nonce elsewhere; only a point-to-point face's own in-record makes a repeat
/// a retransmission.
#[test]
fn an_interest_back_from_the_upstream_it_went_to_is_a_loop() {
    let mut f = forwarder();
    f.fib.add_nexthop(&name("/a"), PRODUCER2, 20);
    assert_eq!(run(&mut f, 0, vec![(CONSUMER, interest("/a/x", 1).encode())])[0].face, PRODUCER);
    assert_eq!(run(&mut f, 100, vec![(CONSUMER, interest("/a/x", 2).encode())])[0].face, PRODUCER2);
    let out = run(&mut f, 200, vec![(PRODUCER, interest("/a/x", 1).encode())]);
    assert_eq!(out.iter().map(|o| (o.face, decode(o).2)).collect::<Vec<_>>(), [(PRODUCER, Some(NackReason::Duplicate))]);
    assert_eq!(f.counters.loops, 1);
    // The consumer's own retransmission of its latest Nonce is not.
    assert_eq!(run(&mut f, 300, vec![(CONSUMER, interest("/a/x", 2).encode())]).len(), 1);
    assert_eq!(f.counters.loops, 1);
}

#[test]
fn dead_nonce_list_catches_late_loops() {
    let mut f = forwarder();
    let fresh = |n: &str, nonce| Interest { must_be_fresh: true, ..interest(n, nonce) }.encode();
    run(&mut f, 0, vec![(CONSUMER, fresh("/a/d", 9))]);
    run(&mut f, 1, vec![(PRODUCER, data("/a/d", None))]);
    // The same Interest looping back after satisfaction: the cached Data is stale,
    // so only the dead-nonce list can tell it is a loop.
    let out = run(&mut f, 2, vec![(CONSUMER2, fresh("/a/d", 9))]);
    assert_eq!(decode(&out[0]).2, Some(NackReason::Duplicate));
    // An unanswered Interest's Nonce is remembered when it expires.
    run(&mut f, 3, vec![(CONSUMER, interest("/a/e", 10).encode())]);
    f.tick(2000);
    let out = run(&mut f, 2001, vec![(CONSUMER2, interest("/a/e", 10).encode())]);
    assert_eq!(decode(&out[0]).2, Some(NackReason::Duplicate));
}

#[test]
fn a_satisfied_loop_the_cs_answers_skips_the_dead_nonce_list() {
    // NFD's rule: without MustBeFresh a looping copy is answered from the CS, so
    // the satisfied entry's Nonce is not worth remembering.
    let mut f = forwarder();
    run(&mut f, 0, vec![(CONSUMER, interest("/a/d", 9).encode())]);
    run(&mut f, 1, vec![(PRODUCER, data("/a/d", None))]);
    assert!(f.dead_nonces.is_empty());
    let out = run(&mut f, 2, vec![(CONSUMER2, interest("/a/d", 9).encode())]);
    assert_eq!(out.len(), 1);
    assert!(decode(&out[0]).1.is_some(), "answered with the cached Data");
    assert_eq!(f.counters.cs_hits, 1);
}

#[test]
fn localhost_from_non_local_face_is_dropped() {
    let mut f = forwarder();
    f.fib.add_nexthop(&name("/localhost/nfd"), 1, 0);
    f.add_face(1, FaceMeta { local: true, local_fields: true, ..Default::default() });
    let out = run(&mut f, 0, vec![(CONSUMER, interest("/localhost/nfd/status/general", 1).encode())]);
    assert!(out.is_empty());
    assert_eq!(f.counters.scope_violations, 1);
    // From a local face it reaches the internal face, with IncomingFaceId.
    f.add_face(500, FaceMeta { local: true, ..Default::default() });
    let out = run(&mut f, 1, vec![(500, interest("/localhost/nfd/status/general", 2).encode())]);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].face, 1);
    assert_eq!(LpPacket::decode(&out[0].pkt).unwrap().headers.incoming_face_id, Some(500));
}

/// Scope on the way out, as NFD's `wouldViolateScope`: a local app's
/// `/localhost` Interest never follows a route (here the default one) to a
/// non-local face, neither first nor as a retry after a Nack, and a
/// `/localhop` Interest crosses one non-local hop at most.
#[test]
fn scoped_interests_leave_only_by_faces_their_scope_allows() {
    const APP: u32 = 500;
    const LOCAL_PEER: u32 = 501;
    let mut f = forwarder();
    for id in [APP, LOCAL_PEER] {
        f.add_face(id, FaceMeta { local: true, point_to_point: true, ..Default::default() });
    }
    f.fib.add_nexthop(&name("/"), PRODUCER, 10);
    let nacked_no_route = |out: &[Outgoing], to: u32| out.len() == 1 && out[0].face == to && decode(&out[0]).2 == Some(NackReason::NoRoute);
    let out = run(&mut f, 0, vec![(APP, interest("/localhost/x", 1).encode())]);
    assert!(nacked_no_route(&out, APP), "{out:?}");
    let out = run(&mut f, 1, vec![(CONSUMER, interest("/localhop/y", 2).encode())]);
    assert!(nacked_no_route(&out, CONSUMER), "{out:?}");
    let out = run(&mut f, 2, vec![(APP, interest("/localhop/y", 3).encode())]);
    assert_eq!(out.iter().map(|o| o.face).collect::<Vec<_>>(), [PRODUCER]);
    // Pinned by the app to a non-local face, then Nacked there: the strategy's
    // retry does not take the default route either.
    f.add_face(APP, FaceMeta { local: true, local_fields: true, point_to_point: true, ..Default::default() });
    f.fib.add_nexthop(&name("/"), PRODUCER2, 20);
    let pinned = LpPacket::wrap(&interest("/localhost/p", 4).encode(), &LpHeaders { next_hop_face_id: Some(PRODUCER2 as u64), ..Default::default() });
    let out = run(&mut f, 3, vec![(APP, pinned)]);
    assert_eq!(out.iter().map(|o| o.face).collect::<Vec<_>>(), [PRODUCER2]);
    let nack = LpPacket::wrap(&interest("/localhost/p", 4).encode(), &LpHeaders { nack: Some(NackReason::Congestion), ..Default::default() });
    let out = run(&mut f, 4, vec![(PRODUCER2, nack)]);
    assert_eq!(out.iter().map(|o| (o.face, decode(o).2)).collect::<Vec<_>>(), [(APP, Some(NackReason::Congestion))]);
    // The same when the app has gone by the time the Nack comes.
    let pinned = LpPacket::wrap(&interest("/localhost/q", 6).encode(), &LpHeaders { next_hop_face_id: Some(PRODUCER2 as u64), ..Default::default() });
    assert_eq!(run(&mut f, 4, vec![(APP, pinned)]).len(), 1);
    f.remove_face(APP);
    let nack = LpPacket::wrap(&interest("/localhost/q", 6).encode(), &LpHeaders { nack: Some(NackReason::Congestion), ..Default::default() });
    assert_eq!(run(&mut f, 4, vec![(PRODUCER2, nack)]), []);
    f.add_face(APP, FaceMeta { local: true, point_to_point: true, ..Default::default() });
    f.fib.add_nexthop(&name("/localhost/x"), LOCAL_PEER, 10);
    let out = run(&mut f, 5, vec![(APP, interest("/localhost/x", 5).encode())]);
    assert_eq!(out.iter().map(|o| o.face).collect::<Vec<_>>(), [LOCAL_PEER]);
    assert_eq!(f.counters.no_route, 2);
}

/// As in NFD, a remote face's `/localhop` Interest joins a local
/// application's that went upstream for the same name, and both get the Data.
#[test]
fn a_remote_localhop_interest_joins_a_local_ones_pending_upstream() {
    const APP: u32 = 500;
    let mut f = forwarder();
    f.add_face(APP, FaceMeta { local: true, point_to_point: true, ..Default::default() });
    f.fib.add_nexthop(&name("/localhop"), PRODUCER, 10);
    assert_eq!(run(&mut f, 0, vec![(APP, interest("/localhop/y", 1).encode())]).len(), 1);
    assert_eq!(run(&mut f, 1, vec![(CONSUMER, interest("/localhop/y", 2).encode())]), []);
    assert_eq!(run(&mut f, 100, vec![(CONSUMER, interest("/localhop/y", 3).encode())]), [], "still waiting, not Nacked");
    let mut faces: Vec<u32> = run(&mut f, 101, vec![(PRODUCER, data("/localhop/y", None))]).iter().map(|o| o.face).collect();
    faces.sort_unstable();
    assert_eq!(faces, [CONSUMER, APP]);
}

/// A removed upstream's out-record no longer holds back the Nack of the
/// others: NFD deletes it with the face.
#[test]
fn an_upstream_removed_does_not_hold_back_the_nack() {
    for multicast in [true, false] {
        let mut f = forwarder();
        f.fib.add_nexthop(&name("/a"), PRODUCER2, 20);
        if multicast {
            f.strategies.insert(&name("/a"), StrategyKind::Multicast);
            assert_eq!(run(&mut f, 0, vec![(CONSUMER, interest("/a/m", 5).encode())]).len(), 2);
        } else {
            // Best-route: the first try, then a retransmission to the other.
            assert_eq!(run(&mut f, 0, vec![(CONSUMER, interest("/a/m", 4).encode())])[0].face, PRODUCER);
            assert_eq!(run(&mut f, 100, vec![(CONSUMER, interest("/a/m", 5).encode())])[0].face, PRODUCER2);
        }
        f.remove_face(PRODUCER2);
        let nack = LpPacket::wrap(&interest("/a/m", if multicast { 5 } else { 4 }).encode(), &LpHeaders { nack: Some(NackReason::NoRoute), ..Default::default() });
        let out = run(&mut f, 101, vec![(PRODUCER, nack)]);
        assert_eq!(out.iter().map(|o| (o.face, decode(o).2)).collect::<Vec<_>>(), [(CONSUMER, Some(NackReason::NoRoute))], "multicast {multicast}");
    }
}

#[test]
fn unsolicited_data_is_dropped() {
    let mut f = forwarder();
    let out = run(&mut f, 0, vec![(PRODUCER, data("/a/u", None))]);
    assert!(out.is_empty());
    assert_eq!(f.counters.unsolicited_data, 1);
    assert_eq!(f.pcct.cs.len(), 0);
}

#[test]
fn can_be_prefix_and_must_be_fresh() {
    let mut f = forwarder();
    let mut i = interest("/a/p", 1);
    i.can_be_prefix = true;
    run(&mut f, 0, vec![(CONSUMER, i.encode())]);
    let out = run(&mut f, 1, vec![(PRODUCER, data("/a/p/v1", Some(0)))]);
    assert_eq!(out.len(), 1, "CanBePrefix Interest satisfied by a longer name");
    // Cached but stale (freshness 0): a MustBeFresh Interest goes upstream.
    let mut i2 = interest("/a/p/v1", 2);
    i2.must_be_fresh = true;
    let out = run(&mut f, 2, vec![(CONSUMER2, i2.encode())]);
    assert_eq!(out[0].face, PRODUCER);
    // Without MustBeFresh the stale copy answers.
    let out = run(&mut f, 3, vec![(CONSUMER2, interest("/a/p/v1", 3).encode())]);
    assert_eq!(out[0].face, CONSUMER2);
    // An exact Interest is not satisfied by a longer name.
    run(&mut f, 4, vec![(CONSUMER, interest("/a/q", 4).encode())]);
    let out = run(&mut f, 5, vec![(PRODUCER, data("/a/q/longer", None))]);
    assert!(out.is_empty());
}

#[test]
fn pit_token_is_echoed() {
    let mut f = forwarder();
    let token = Bytes::from_static(b"\x01\x02\x03\x04");
    let wire = LpPacket::wrap(&interest("/a/t", 1).encode(), &LpHeaders { pit_token: Some(token.clone()), ..Default::default() });
    let out = run(&mut f, 0, vec![(CONSUMER, wire)]);
    // Upstream gets no token of ours.
    assert_eq!(decode(&out[0]).3, None);
    let out = run(&mut f, 1, vec![(PRODUCER, data("/a/t", None))]);
    assert_eq!(decode(&out[0]).3, Some(token));
}

#[test]
fn best_route_tries_next_hop_on_nack_then_gives_up() {
    let mut f = forwarder();
    f.fib.add_nexthop(&name("/a"), PRODUCER2, 20);
    let out = run(&mut f, 0, vec![(CONSUMER, interest("/a/n", 5).encode())]);
    assert_eq!(out[0].face, PRODUCER);
    let nack = |reason| LpPacket::wrap(&interest("/a/n", 5).encode(), &LpHeaders { nack: Some(reason), ..Default::default() });
    let out = run(&mut f, 1, vec![(PRODUCER, nack(NackReason::Congestion))]);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].face, PRODUCER2);
    let out = run(&mut f, 2, vec![(PRODUCER2, nack(NackReason::NoRoute))]);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].face, CONSUMER);
    // The least severe reason is reported.
    assert_eq!(decode(&out[0]).2, Some(NackReason::Congestion));
    assert_eq!(f.pcct.pit.len(), 0);
}

/// A Nack's Interest takes an Interest slot of the burst: Interests decoded
/// before and after it in the same burst keep their own, and each packet takes
/// effect in arrival order.
#[test]
fn a_nack_between_interests_of_one_burst() {
    let mut f = forwarder();
    f.fib.add_nexthop(&name("/a"), PRODUCER2, 20);
    run(&mut f, 0, vec![(CONSUMER, interest("/a/n", 5).encode())]);
    let nack = LpPacket::wrap(&interest("/a/n", 5).encode(), &LpHeaders { nack: Some(NackReason::Congestion), ..Default::default() });
    let out = run(&mut f, 1, vec![(CONSUMER, interest("/a/x", 6).encode()), (PRODUCER, nack), (CONSUMER2, interest("/a/y", 7).encode())]);
    let sent: Vec<(u32, Name)> = out.iter().map(|o| (o.face, decode(o).0.expect("an Interest").name)).collect();
    assert_eq!(sent, [(PRODUCER, name("/a/x")), (PRODUCER2, name("/a/n")), (PRODUCER, name("/a/y"))]);
    assert_eq!(f.pcct.pit.len(), 3);
}

/// Packets from a face the forwarder does not know (never added, or removed
/// while its packets were queued) are ignored and counted nowhere, whatever
/// they are, and the known faces' packets of the same burst go on as usual.
#[test]
fn packets_from_an_unknown_face_are_ignored() {
    const STRANGER: u32 = 999;
    let mut f = forwarder();
    run(&mut f, 0, vec![(CONSUMER, interest("/a/p", 1).encode())]);
    let nack = LpPacket::wrap(&interest("/a/p", 1).encode(), &LpHeaders { nack: Some(NackReason::Congestion), ..Default::default() });
    let garbage = Bytes::from_static(&[0x05, 0xff]);
    let out = run(&mut f, 1, vec![(STRANGER, interest("/a/q", 2).encode()), (STRANGER, data("/a/p", None)), (STRANGER, nack), (STRANGER, garbage), (CONSUMER2, interest("/a/r", 3).encode())]);
    let sent: Vec<(u32, Name)> = out.iter().map(|o| (o.face, decode(o).0.expect("an Interest").name)).collect();
    assert_eq!(sent, [(PRODUCER, name("/a/r"))]);
    assert_eq!(f.pcct.pit.len(), 2, "/a/p still pending, /a/r added, /a/q never");
    assert_eq!((f.counters.packets.in_interests, f.counters.packets.in_data, f.counters.packets.in_nacks), (2, 0, 0));
    assert_eq!((f.counters.malformed, f.counters.unsolicited_data, f.counters.dropped_nacks), (0, 0, 0));
}

#[test]
fn multicast_forwards_to_every_next_hop() {
    let mut f = forwarder();
    f.fib.add_nexthop(&name("/a"), PRODUCER2, 20);
    f.strategies.insert(&name("/a"), StrategyKind::Multicast);
    let out = run(&mut f, 0, vec![(CONSUMER, interest("/a/m", 5).encode())]);
    let mut faces: Vec<u32> = out.iter().map(|o| o.face).collect();
    faces.sort();
    assert_eq!(faces, vec![PRODUCER, PRODUCER2]);
}

/// An InterestLifetime is any 64-bit number: the largest keeps its entry
/// for the longest time the router allows, not (wrapping around) for no time
/// at all, and not for ever (a PIT full of entries that never expire would
/// pass no new Interest again). It goes upstream as it came.
#[test]
fn the_longest_interest_lifetime_does_not_wrap_around_and_is_bounded() {
    let mut f = forwarder();
    let max = EngineConfig::default().max_lifetime_ms;
    let mut i = interest("/a/long", 1);
    i.lifetime_ms = Some(u64::MAX);
    let out = run(&mut f, 10, vec![(CONSUMER, i.encode())]);
    assert_eq!(out.len(), 1);
    assert_eq!(Interest::decode(&out[0].pkt).unwrap().lifetime_ms, Some(u64::MAX));
    f.tick(10 + max - 1);
    assert_eq!(f.pcct.pit.len(), 1);
    assert_eq!(run(&mut f, 10 + max - 1, vec![(PRODUCER, data("/a/long", None))]).len(), 1);

    let mut i = interest("/a/longer", 2);
    i.lifetime_ms = Some(u64::MAX);
    run(&mut f, 0, vec![(CONSUMER, i.encode())]);
    f.tick(max);
    assert_eq!((f.pcct.pit.len(), f.counters.unsatisfied_interests), (0, 1));
}

#[test]
fn the_bound_on_lifetimes_is_configurable_and_shorter_ones_are_kept() {
    let mut f = Forwarder::new(&EngineConfig { max_lifetime_ms: 500, ..Default::default() }, 0);
    f.add_face(CONSUMER, FaceMeta { point_to_point: true, ..Default::default() });
    f.add_face(PRODUCER, FaceMeta { point_to_point: true, ..Default::default() });
    f.fib.add_nexthop(&name("/a"), PRODUCER, 10);
    let mut long = interest("/a/capped", 1);
    long.lifetime_ms = Some(10_000);
    let mut short = interest("/a/short", 2);
    short.lifetime_ms = Some(300);
    run(&mut f, 0, vec![(CONSUMER, long.encode()), (CONSUMER, short.encode())]);
    f.tick(299);
    assert_eq!(f.pcct.pit.len(), 2);
    f.tick(300);
    assert_eq!(f.pcct.pit.len(), 1);
    f.tick(499);
    assert_eq!(f.pcct.pit.len(), 1);
    f.tick(500);
    assert_eq!((f.pcct.pit.len(), f.counters.unsatisfied_interests), (0, 2));
}

#[test]
fn pending_interests_expire_by_timer() {
    let mut f = forwarder();
    run(&mut f, 0, vec![(CONSUMER, interest("/a/e", 1).encode())]);
    assert_eq!(f.pcct.pit.len(), 1);
    assert!(f.next_deadline().is_some_and(|d| d <= 1000));
    f.tick(500);
    assert_eq!(f.pcct.pit.len(), 1);
    f.tick(1001);
    assert_eq!(f.pcct.pit.len(), 0);
    assert_eq!(f.counters.unsatisfied_interests, 1);
    // Data after expiry is unsolicited.
    run(&mut f, 1002, vec![(PRODUCER, data("/a/e", None))]);
    assert_eq!(f.counters.unsolicited_data, 1);
}

#[test]
fn hop_limit_is_decremented_and_enforced() {
    let mut f = forwarder();
    let mut i = interest("/a/h", 1);
    i.hop_limit = Some(3);
    let out = run(&mut f, 0, vec![(CONSUMER, i.encode())]);
    // Re-encoded with the name the new PIT entry took from the decoded Interest.
    let sent = Interest::decode(&out[0].pkt).unwrap();
    assert_eq!((sent.name, sent.hop_limit), (name("/a/h"), Some(2)));
    let mut i = interest("/a/h0", 2);
    i.hop_limit = Some(0);
    let out = run(&mut f, 0, vec![(CONSUMER, i.encode())]);
    assert!(out.is_empty());
    assert_eq!(f.counters.hop_limit_drops, 1);
    // A local application's HopLimit counts too, as in NFD: at 1 it may reach
    // local faces only, and at 0 it is dropped, even where the CS could answer.
    const APP: u32 = 500;
    f.add_face(APP, FaceMeta { local: true, point_to_point: true, ..Default::default() });
    let mut i = interest("/a/h1", 3);
    i.hop_limit = Some(1);
    assert_eq!(run(&mut f, 1, vec![(APP, i.encode())]), [], "nowhere but a non-local face to go");
    assert_eq!(f.counters.hop_limit_drops, 2);
    run(&mut f, 2, vec![(CONSUMER, interest("/a/c", 4).encode())]);
    assert_eq!(run(&mut f, 3, vec![(PRODUCER, data("/a/c", Some(10_000)))]).len(), 1);
    let mut i = interest("/a/c", 5);
    i.hop_limit = Some(0);
    assert_eq!(run(&mut f, 4, vec![(APP, i.encode())]), []);
    assert_eq!((f.counters.hop_limit_drops, f.counters.cs_hits), (3, 0));
}

/// An aggregated Interest that spent its hops makes the entry's Interest
/// one no non-local face may take: a Nack then goes downstream rather than
/// a retry that could not leave.
#[test]
fn a_retry_the_hop_limit_forbids_gives_the_nack_downstream() {
    let mut f = forwarder();
    f.fib.add_nexthop(&name("/a"), PRODUCER2, 20);
    let mut i = interest("/a/z", 1);
    i.hop_limit = Some(5);
    assert_eq!(run(&mut f, 0, vec![(CONSUMER, i.encode())]).len(), 1);
    let mut i = interest("/a/z", 2);
    i.hop_limit = Some(1);
    assert_eq!(run(&mut f, 1, vec![(CONSUMER2, i.encode())]), [], "aggregated, its retransmission suppressed");
    let mut upstream = interest("/a/z", 1);
    upstream.hop_limit = Some(4);
    let nack = LpPacket::wrap(&upstream.encode(), &LpHeaders { nack: Some(NackReason::Congestion), ..Default::default() });
    let out = run(&mut f, 2, vec![(PRODUCER, nack)]);
    let mut sent: Vec<(u32, Option<NackReason>)> = out.iter().map(|o| (o.face, decode(o).2)).collect();
    sent.sort_unstable_by_key(|s| s.0);
    assert_eq!(sent, [(CONSUMER, Some(NackReason::Congestion)), (CONSUMER2, Some(NackReason::Congestion))]);
    assert_eq!(f.pcct.pit.len(), 0);
}

/// v0.3: an Interest whose name has no component is discarded (as a prefix
/// it would match every Data, `/localhost` ones a local app fetched included).
#[test]
fn an_interest_without_a_name_component_is_malformed() {
    let mut f = forwarder();
    f.fib.add_nexthop(&name("/"), PRODUCER2, 10);
    let mut i = Interest::new(Name::root());
    (i.nonce, i.can_be_prefix) = (Some(5), true);
    assert_eq!(run(&mut f, 0, vec![(CONSUMER, i.encode())]), []);
    assert_eq!((f.counters.malformed, f.pcct.pit.len()), (1, 0));
}

#[test]
fn missing_nonce_is_added() {
    let mut f = forwarder();
    let i = Interest::new(name("/a/nn"));
    let out = run(&mut f, 0, vec![(CONSUMER, i.encode())]);
    let sent = Interest::decode(&out[0].pkt).unwrap();
    assert!(sent.nonce.is_some());
    assert_eq!(sent.name, name("/a/nn"));
}

#[test]
fn signed_interest_parameters_are_forwarded_byte_exact() {
    let mut f = forwarder();
    let mut i = interest("/a/s", 1);
    i.hop_limit = Some(9);
    trajan_wire::signed::sign_digest_sha256(&mut i, b"params", &Default::default());
    let tail = i.params_tail.clone().expect("signed");
    let out = run(&mut f, 0, vec![(CONSUMER, i.encode())]);
    let fwd = Interest::decode(&out[0].pkt).unwrap();
    assert_eq!(fwd.params_tail.unwrap(), tail);
    assert_eq!(fwd.name, i.name, "the name keeps its ParametersSha256DigestComponent");
}

/// Bare and LpPacket-wrapped packets mixed in one burst: each keeps its own link
/// headers, and an Interest that came in an LpPacket goes upstream as its fragment.
#[test]
fn bare_and_wrapped_packets_in_one_burst_keep_their_own_headers() {
    let mut f = forwarder();
    let token = Bytes::from_static(b"\x05\x06\x07\x08");
    let wrapped = interest("/a/w", 2).encode();
    let input = vec![
        (CONSUMER, interest("/a/b", 1).encode()),
        (CONSUMER2, LpPacket::wrap(&wrapped, &LpHeaders { pit_token: Some(token.clone()), ..Default::default() })),
        (CONSUMER, interest("/a/c", 3).encode()),
    ];
    let out = run(&mut f, 0, input);
    assert_eq!(out.len(), 3);
    assert_eq!(out[1].pkt, wrapped);
    let no_cache = LpHeaders { cache_policy: Some(trajan_wire::lp::CACHE_POLICY_NO_CACHE), ..Default::default() };
    let input = vec![
        (PRODUCER, LpPacket::wrap(&data("/a/w", None), &no_cache)),
        (PRODUCER, data("/a/b", None)),
        (PRODUCER, data("/a/c", None)),
    ];
    let out = run(&mut f, 1, input);
    let sent: Vec<(u32, Option<Bytes>)> = out.iter().map(|o| (o.face, decode(o).3)).collect();
    assert_eq!(sent, vec![(CONSUMER2, Some(token)), (CONSUMER, None), (CONSUMER, None)]);
    // The Data that asked not to be cached is not; the others are.
    assert_eq!(f.pcct.cs.len(), 2);
}

#[test]
fn malformed_packets_are_counted_and_the_rest_of_the_burst_forwarded() {
    let mut f = forwarder();
    let garbage = vec![
        Bytes::from_static(&[0x05, 0xff]),
        Bytes::from_static(&[0x64, 0x02, 0x99, 0x00]),
        Bytes::from_static(&[0x06, 0x03, 0x07, 0x01, 0x08]),
        Bytes::from_static(&[0xfd, 0xff]),
        Bytes::from_static(&[0x05, 0x04, 0x07, 0x00, 0x0f, 0x00]),
    ];
    let mut input: Vec<(u32, Bytes)> = garbage.into_iter().map(|g| (CONSUMER, g)).collect();
    input.push((CONSUMER, interest("/a/ok", 1).encode()));
    let out = run(&mut f, 0, input);
    assert_eq!(out.len(), 1);
    assert_eq!(f.counters.malformed, 5);
}

#[test]
fn next_hop_face_id_from_local_app_is_honoured() {
    let mut f = forwarder();
    f.add_face(500, FaceMeta { local: true, local_fields: true, ..Default::default() });
    let wire = LpPacket::wrap(&interest("/a/nh", 1).encode(), &LpHeaders { next_hop_face_id: Some(PRODUCER2 as u64), ..Default::default() });
    let out = run(&mut f, 0, vec![(500, wire)]);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].face, PRODUCER2);
    // An id beyond 32 bits names no face, not the one its low bits would.
    let wire = LpPacket::wrap(&interest("/a/nh2", 2).encode(), &LpHeaders { next_hop_face_id: Some((1 << 32) + PRODUCER2 as u64), ..Default::default() });
    assert_eq!(run(&mut f, 0, vec![(500, wire)]), []);
}

#[test]
fn can_be_prefix_answers_are_cached_for_the_prefix() {
    let mut f = forwarder();
    let discover = |nonce| Interest { can_be_prefix: true, ..interest("/a/obj", nonce) }.encode();
    let out = run(&mut f, 0, vec![(CONSUMER, discover(1))]);
    assert_eq!(out[0].face, PRODUCER);
    run(&mut f, 1, vec![(PRODUCER, data("/a/obj/v=1/seg=0", Some(10_000)))]);
    // A second consumer's discovery is answered from the CS with the same packet.
    let out = run(&mut f, 2, vec![(CONSUMER2, discover(2))]);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].face, CONSUMER2);
    assert_eq!(*decode(&out[0]).1.unwrap().name(), name("/a/obj/v=1/seg=0"));
    assert_eq!(f.counters.cs_hits, 1);
    // Without CanBePrefix the prefix is not the packet's name.
    let out = run(&mut f, 3, vec![(CONSUMER2, interest("/a/obj", 3).encode())]);
    assert_eq!(out[0].face, PRODUCER);
}

#[test]
fn a_burst_takes_effect_in_arrival_order() {
    let mut f = forwarder();
    // Interest and its Data in one burst: the Interest is forwarded before the Data
    // arrives, so the Data is not unsolicited.
    let out = run(&mut f, 0, vec![(CONSUMER, interest("/a/o", 1).encode()), (PRODUCER, data("/a/o", None))]);
    let faces: Vec<u32> = out.iter().map(|o| o.face).collect();
    assert_eq!(faces, vec![PRODUCER, CONSUMER]);
    assert_eq!(f.counters.unsolicited_data, 0);
    // Two unroutable Interests from one face in one burst: the first's NoRoute
    // removes the shared entry; the second must not find it gone in a bad way.
    let out = run(&mut f, 1, vec![(CONSUMER, interest("/zzz", 2).encode()), (CONSUMER, interest("/zzz", 3).encode())]);
    assert!(!out.is_empty() && out.iter().all(|o| o.face == CONSUMER && decode(o).2 == Some(NackReason::NoRoute)));
    assert_eq!(f.pcct.pit.len(), 0);
    // A long burst of distinct Interests is forwarded in order, in chunks.
    let burst: Vec<(u32, Bytes)> = (0..150).map(|i| (CONSUMER, interest(&format!("/a/n/{i}"), 100 + i).encode())).collect();
    let out = run(&mut f, 2, burst.clone());
    assert_eq!(out.iter().map(|o| o.pkt.clone()).collect::<Vec<_>>(), burst.into_iter().map(|(_, p)| p).collect::<Vec<_>>());
}

#[test]
fn a_burst_keeps_no_view_of_its_packets_once_processed() {
    // The decoded Interests and Data live in slots reused by the next burst; an
    // idle forwarder must not pin the buffers of packets it dropped.
    let mut f = forwarder();
    let scoped = interest("/localhost/x", 1).encode();
    let unsolicited = data("/a/unsolicited", None);
    let (keep_interest, keep_data) = (scoped.clone(), unsolicited.clone());
    let out = run(&mut f, 0, vec![(CONSUMER, scoped), (PRODUCER, unsolicited)]);
    assert!(out.is_empty());
    assert_eq!((f.counters.scope_violations, f.counters.unsolicited_data), (1, 1));
    assert!(keep_interest.is_unique(), "the Interest's slot still views its buffer");
    assert!(keep_data.is_unique(), "the Data's slot still views its buffer");
}

/// Phase timing is off unless asked for; on, each phase gains time exactly
/// when the pipeline runs it: an Interest burst decodes, probes, looks up
/// the FIB and forwards; a Data burst has no FIB lookup or forwarding; only
/// `tick` runs the timers. Off again, the counts are gone.
#[test]
fn phases_are_timed_only_when_asked_and_only_where_they_run() {
    let mut f = forwarder();
    let burst = |prefix: &str| (1..33).map(|k| (CONSUMER, interest(&format!("{prefix}/{k}"), k).encode())).collect();
    // Left unanswered, to expire at the tick below (untimed until then).
    assert_eq!(run(&mut f, 0, burst("/a/late")).len(), 32);
    assert_eq!(f.phase_ns(), None);
    f.time_phases(true);
    assert_eq!(f.phase_ns(), Some(Default::default()));

    let out = run(&mut f, 1, burst("/a"));
    assert_eq!(out.len(), 32);
    let after_interests = f.phase_ns().unwrap();
    assert!(after_interests.decode > 0 && after_interests.packets > 0);
    assert!(after_interests.fib > 0 && after_interests.forward > 0);
    assert_eq!(after_interests.timers, 0);

    let answers = (1..33).map(|k| (PRODUCER, data(&format!("/a/{k}"), Some(10_000)))).collect();
    assert_eq!(run(&mut f, 2, answers).len(), 32);
    let data_only = f.phase_ns().unwrap().since(&after_interests);
    assert!(data_only.decode > 0 && data_only.packets > 0);
    assert_eq!((data_only.fib, data_only.forward, data_only.timers), (0, 0, 0));

    let before_tick = f.phase_ns().unwrap();
    f.tick(5_000);
    let ticked = f.phase_ns().unwrap().since(&before_tick);
    assert_eq!((ticked.decode, ticked.packets, ticked.fib, ticked.forward), (0, 0, 0, 0));
    assert!(ticked.timers > 0, "the expiry of /a/late/* was timed");
    assert_eq!(f.counters.unsatisfied_interests, 32);

    f.time_phases(false);
    assert_eq!(f.phase_ns(), None);
}

/// Bursts that hit the CS make the next burst prefetch its Interests' answers
/// ahead (a hint): answers stay exactly the cached packets, whatever mix of
/// hits, misses and aggregation the burst holds, and a burst that misses
/// forwards as before.
#[test]
fn bursts_answered_from_the_cache_stay_exact_while_answers_are_prefetched() {
    let mut f = forwarder();
    let names: Vec<String> = (0..40).map(|k| format!("/a/c/{k}")).collect();
    let burst = |names: &[String], nonce: u32| -> Vec<(u32, Bytes)> { names.iter().enumerate().map(|(k, n)| (CONSUMER, interest(n, nonce + k as u32).encode())).collect() };
    assert_eq!(run(&mut f, 0, burst(&names, 0)).len(), 40);
    let cached: Vec<Bytes> = names.iter().map(|n| data(n, Some(60_000))).collect();
    assert_eq!(run(&mut f, 1, names.iter().zip(&cached).map(|(_, d)| (PRODUCER, d.clone())).collect()).len(), 40);

    // Every Interest hits, twice over (the second burst with prefetching on).
    for (round, nonce) in [(2, 1000), (3, 2000)] {
        let out = run(&mut f, round, burst(&names, nonce));
        assert_eq!(out.len(), 40);
        for (o, d) in out.iter().zip(&cached) {
            assert_eq!((o.face, &o.pkt), (CONSUMER, d), "the cached packet itself");
        }
    }
    assert_eq!(f.counters.cs_hits, 80);

    // Hits between new names, each new name asked twice (two Nonces, one face).
    let mut mixed = Vec::new();
    for k in 0..20u32 {
        mixed.push((CONSUMER, interest(&names[k as usize], 3000 + k).encode()));
        mixed.push((CONSUMER2, interest(&format!("/a/new/{}", k / 2), 4000 + k).encode()));
    }
    let out = run(&mut f, 4, mixed);
    let answers: Vec<_> = out.iter().filter(|o| o.face == CONSUMER).map(|o| o.pkt.clone()).collect();
    assert_eq!(answers, cached[..20].to_vec());
    let upstream = out.iter().filter(|o| o.face == PRODUCER).count();
    assert_eq!(upstream, 10, "one Interest per new name; its second one aggregates");
    assert_eq!(f.pcct.pit.len(), 10);
}

/// Two Interests for one name in one burst, the second from the face the
/// first goes to: the first goes upstream as it came (its own Nonce, not the
/// upstream's, which would come back to it as a loop), and the second is
/// Nacked, its only next hop being its own face. In the other order the same,
/// and the same when the first is a retransmission of an Interest forwarded
/// before.
#[test]
fn an_upstream_never_gets_its_own_interest_back_from_one_burst() {
    for (upstream_first, retransmitted) in [(false, false), (true, false), (false, true)] {
        let mut f = forwarder();
        if retransmitted {
            let out = run(&mut f, 0, vec![(CONSUMER, interest("/a/u", 1).encode())]);
            assert_eq!(out.len(), 1);
        }
        let mut from_upstream = interest("/a/u", 7);
        from_upstream.hop_limit = Some(2);
        let mut input = vec![(CONSUMER, interest("/a/u", 1).encode()), (PRODUCER, from_upstream.encode())];
        if upstream_first {
            input.reverse();
        }
        let out = run(&mut f, 500, input);
        let sent: Vec<(u32, Option<u32>, Option<NackReason>)> = out.iter().map(|o| {
            let (i, _, nack, _) = decode(o);
            (o.face, i.and_then(|i| i.nonce), nack)
        }).collect();
        assert!(sent.contains(&(PRODUCER, Some(1), None)), "{upstream_first} {retransmitted}: {sent:?}");
        assert!(sent.contains(&(PRODUCER, Some(7), Some(NackReason::NoRoute))), "{upstream_first} {retransmitted}: {sent:?}");
        assert_eq!(sent.len(), 2, "{upstream_first} {retransmitted}: {sent:?}");
    }
}

/// The same when the upstream's Nonce is one the first Interest's face used
/// before, in the same burst, and has since replaced: the entry's encoding is
/// then the upstream's although its Nonce matches the first Interest's.
#[test]
fn an_upstream_never_gets_its_own_interest_back_when_nonces_collide() {
    let mut f = forwarder();
    let mut from_upstream = interest("/a/c", 2);
    from_upstream.hop_limit = Some(2);
    let input = vec![(CONSUMER, interest("/a/c", 2).encode()), (CONSUMER, interest("/a/c", 3).encode()), (PRODUCER, from_upstream.encode())];
    let out = run(&mut f, 0, input);
    for o in &out {
        let (i, _, nack, _) = decode(o);
        let i = i.expect("an Interest or Nack");
        assert!(o.face != PRODUCER || nack.is_some() || i.hop_limit.is_none(), "the upstream got its own Interest back: {i:?}");
    }
}

/// As in NFD, a Nack is neither sent to nor accepted from a multi-access face:
/// no NoRoute or Duplicate Nack for its Interests, no Nack to it when the
/// upstreams give up (its point-to-point fellow downstream still gets one),
/// and a Nack it sends is counted and dropped, the Interest left pending.
#[test]
fn nacks_neither_go_to_nor_come_from_a_multi_access_face() {
    const SHARED: u32 = 500;
    let mut f = forwarder();
    f.add_face(SHARED, FaceMeta { local: false, point_to_point: false, ..Default::default() });
    let out = run(&mut f, 0, vec![(SHARED, interest("/zzz", 1).encode())]);
    assert!(out.is_empty(), "no NoRoute Nack to a multi-access face");
    assert_eq!((f.counters.no_route, f.pcct.pit.len()), (1, 0));

    run(&mut f, 0, vec![(SHARED, interest("/a/l", 2).encode())]);
    let out = run(&mut f, 1, vec![(SHARED, interest("/a/l", 2).encode())]);
    assert!(out.is_empty(), "no Duplicate Nack to a multi-access face");

    let out = run(&mut f, 2, vec![(CONSUMER, interest("/a/g", 3).encode()), (SHARED, interest("/a/g", 4).encode())]);
    assert_eq!(out.len(), 1);
    let upstream_nonce = decode(&out[0]).0.expect("an Interest").nonce.expect("a Nonce");
    let nack = |n, nonce| LpPacket::wrap(&interest(n, nonce).encode(), &LpHeaders { nack: Some(NackReason::Congestion), ..Default::default() });
    let out = run(&mut f, 3, vec![(PRODUCER, nack("/a/g", upstream_nonce))]);
    let sent: Vec<(u32, Option<NackReason>)> = out.iter().map(|o| (o.face, decode(o).2)).collect();
    assert_eq!(sent, [(CONSUMER, Some(NackReason::Congestion))]);

    f.fib.add_nexthop(&name("/s"), SHARED, 10);
    let out = run(&mut f, 4, vec![(CONSUMER, interest("/s/x", 5).encode())]);
    assert_eq!(out.iter().map(|o| o.face).collect::<Vec<_>>(), [SHARED]);
    let dropped = f.counters.dropped_nacks;
    let out = run(&mut f, 5, vec![(SHARED, nack("/s/x", 5))]);
    assert!(out.is_empty());
    assert_eq!(f.counters.dropped_nacks, dropped + 1);
    assert_eq!(f.counters.packets.in_nacks, 2);
    assert!(f.pcct.find(&name("/s/x"), false, false).is_some(), "the Interest still waits for its Data");
    assert_eq!(f.counters.packets.out_nacks, 1);
}

/// Where a burst's one Interest went.
fn sent_to(out: &[Outgoing]) -> u32 {
    assert_eq!(out.len(), 1, "one Interest forwarded");
    out[0].face
}

/// The dynamic strategy (CCN-par's dynamic forwarding): two upstreams that
/// both answer share the Interests; once one stops answering, its Interests
/// stay pending and its share falls away; when they expire, nothing stays
/// counted.
#[test]
fn dynamic_moves_traffic_off_an_upstream_that_stops_answering() {
    let mut f = forwarder();
    f.fib.add_nexthop(&name("/a"), PRODUCER2, 20);
    run(&mut f, 0, vec![(CONSUMER, interest("/a/best-route", 1).encode())]);
    assert!(f.measurements.is_empty(), "other strategies measure nothing");
    f.strategies.insert(&name("/a"), StrategyKind::Dynamic);
    let prefix = name("/a");
    let mut now = 1;
    let mut to = |f: &mut Forwarder, k: u32, answering: &[u32]| {
        now += 1;
        let n = format!("/a/{k}");
        let face = sent_to(&run(f, now, vec![(CONSUMER, interest(&n, 1000 + k).encode())]));
        if answering.contains(&face) {
            assert_eq!(run(f, now, vec![(face, data(&n, None))]).len(), 1);
        }
        face
    };
    let both: Vec<u32> = (0..200).map(|k| to(&mut f, k, &[PRODUCER, PRODUCER2])).collect();
    let second = both.iter().filter(|&&x| x == PRODUCER2).count();
    assert!((60..=140).contains(&second), "both answer: about half each, got {second} of 200 to the second");
    assert_eq!(f.measurements.pending(prefix.value(), PRODUCER2).map(|p| p.0), Some(0));

    let one: Vec<u32> = (200..600).map(|k| to(&mut f, k, &[PRODUCER])).collect();
    let late = one[200..].iter().filter(|&&x| x == PRODUCER2).count();
    assert!((1..20).contains(&late), "the silent upstream gets a trickle: {late} of the last 200");
    let silent = one.iter().filter(|&&x| x == PRODUCER2).count() as u32;
    assert_eq!(f.measurements.pending(prefix.value(), PRODUCER2).map(|p| p.0), Some(silent));
    assert_eq!(f.measurements.pending(prefix.value(), PRODUCER).map(|p| p.0), Some(0));
    assert_eq!(f.measurements.len(), 1);

    f.tick(now + 1000);
    assert_eq!(f.pcct.pit.len(), 0);
    assert_eq!(f.measurements.pending(prefix.value(), PRODUCER2).map(|p| p.0), Some(0), "expired Interests are no longer pending");
}

/// The dynamic strategy counts an Interest forwarded by its ForwardingHint
/// under the hint's FIB prefix, whose next hops it chose among, not under
/// its name's (which usually has no route: that is why it carries a hint).
#[test]
fn dynamic_measures_a_hinted_interest_under_the_hint_prefix() {
    let mut f = forwarder();
    for face in [PRODUCER, PRODUCER2] {
        f.fib.add_nexthop(&name("/hub"), face, 10);
    }
    f.strategies.insert(&name("/b"), StrategyKind::Dynamic);
    let hub = name("/hub");
    let pending = |f: &Forwarder, face| f.measurements.pending(hub.value(), face).map_or(0, |p| p.0);
    let mut i = interest("/b/1", 1);
    i.forwarding_hint = Some(Bytes::from(hub.to_wire()));
    let face = sent_to(&run(&mut f, 0, vec![(CONSUMER, i.encode())]));
    assert_eq!(f.measurements.len(), 1, "one entry, the hint's prefix");
    assert_eq!(pending(&f, face), 1);
    assert_eq!(run(&mut f, 1, vec![(face, data("/b/1", None))]).len(), 1);
    assert_eq!((pending(&f, PRODUCER), pending(&f, PRODUCER2)), (0, 0), "the Data ends the count");
}

/// Under the dynamic strategy a Nack ends the count at the face that sent
/// it and the Interest is tried at another next hop, whose Data ends that
/// count too; a consumer's retransmission to the same face counts once.
#[test]
fn dynamic_counts_each_pending_interest_once_through_nacks_and_retransmissions() {
    let mut f = forwarder();
    f.fib.add_nexthop(&name("/a"), PRODUCER2, 20);
    f.strategies.insert(&name("/a"), StrategyKind::Dynamic);
    let prefix = name("/a");
    let pending = |f: &Forwarder, face| f.measurements.pending(prefix.value(), face).map_or(0, |p| p.0);
    let first = sent_to(&run(&mut f, 0, vec![(CONSUMER, interest("/a/n", 1).encode())]));
    let other = if first == PRODUCER { PRODUCER2 } else { PRODUCER };
    assert_eq!((pending(&f, first), pending(&f, other)), (1, 0));
    let nack = LpPacket::wrap(&interest("/a/n", 1).encode(), &LpHeaders { nack: Some(NackReason::Congestion), ..Default::default() });
    assert_eq!(sent_to(&run(&mut f, 1, vec![(first, nack.clone())])), other, "retried at the other next hop");
    assert_eq!((pending(&f, first), pending(&f, other)), (0, 1));
    assert_eq!(run(&mut f, 2, vec![(first, nack)]), [], "a repeated Nack changes nothing");
    assert_eq!((pending(&f, first), pending(&f, other)), (0, 1));
    // The consumer retransmits: both were tried, so the strategy draws either;
    // whichever it is, each face counts the Interest at most once.
    let again = sent_to(&run(&mut f, 100, vec![(CONSUMER, interest("/a/n", 2).encode())]));
    assert_eq!(pending(&f, again), 1);
    assert_eq!(pending(&f, first) + pending(&f, other), 1 + u32::from(again == first));
    assert_eq!(run(&mut f, 101, vec![(other, data("/a/n", None))]).len(), 1);
    assert_eq!((pending(&f, first), pending(&f, other)), (0, 0), "the Data ends every count of the Interest");
    assert_eq!(f.pcct.pit.len(), 0);
}

/// As NFD's best-route (RetxSuppressionExponential, per PIT entry), best-route
/// and dynamic hold back a consumer's retransmission while it comes within an
/// interval of the entry's last send upstream: 10 ms at first, doubled by each
/// retransmission let through, up to 250 ms. A consumer retransmitting too
/// early then costs the upstreams less and less.
#[test]
fn retransmissions_back_off_exponentially_per_entry() {
    for kind in [StrategyKind::BestRoute, StrategyKind::Dynamic] {
        let mut f = forwarder();
        f.fib.add_nexthop(&name("/a"), PRODUCER2, 20);
        f.strategies.insert(&name("/a"), kind);
        let send = |f: &mut Forwarder, at, nonce| run(f, at, vec![(CONSUMER, interest("/a/r", nonce).encode())]).len();
        assert_eq!(send(&mut f, 0, 1), 1, "{kind:?}: a new Interest");
        // (when, whether it goes): 10 ms from the last send, then 20, 40, 80, 160, and 250 ms from then on.
        let steps = [(10, true), (20, false), (29, false), (30, true), (69, false), (70, true), (149, false), (150, true)];
        let capped = [(309, false), (310, true), (559, false), (560, true), (809, false), (810, true)];
        for (nonce, (at, goes)) in (2..).zip(steps.into_iter().chain(capped)) {
            assert_eq!(send(&mut f, at, nonce), usize::from(goes), "{kind:?}: a retransmission at {at} ms");
        }
    }
}

/// NFD's multicast holds back a retransmission per upstream instead: each
/// out-record has its own interval, doubled by each retransmission sent
/// there, and a next hop the Interest has not gone to yet takes it at once.
#[test]
fn multicast_backs_off_per_upstream() {
    const PRODUCER3: u32 = 402;
    let mut f = forwarder();
    f.add_face(PRODUCER3, FaceMeta { local: false, point_to_point: true, ..Default::default() });
    f.fib.add_nexthop(&name("/a"), PRODUCER2, 20);
    f.strategies.insert(&name("/a"), StrategyKind::Multicast);
    let send = |f: &mut Forwarder, at, nonce| {
        let mut faces: Vec<u32> = run(f, at, vec![(CONSUMER, interest("/a/m", nonce).encode())]).iter().map(|o| o.face).collect();
        faces.sort_unstable();
        faces
    };
    assert_eq!(send(&mut f, 0, 1), [PRODUCER, PRODUCER2]);
    assert_eq!(send(&mut f, 10, 2), [PRODUCER, PRODUCER2], "10 ms on: to both again, each now held back 20 ms");
    assert_eq!(send(&mut f, 20, 3), [], "within both upstreams' intervals");
    f.fib.add_nexthop(&name("/a"), PRODUCER3, 30);
    assert_eq!(send(&mut f, 21, 4), [PRODUCER3], "a new upstream is not held back by the others' intervals");
    assert_eq!(send(&mut f, 30, 5), [PRODUCER, PRODUCER2], "20 ms after theirs, 9 ms after the new one's");
    assert_eq!(send(&mut f, 31, 6), [PRODUCER3]);
    assert_eq!(send(&mut f, 50, 7), [], "the first two now wait 40 ms, the new one 20 ms");
}
