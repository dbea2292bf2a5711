//! The NDNLPv2 fields the forwarder reads from a received packet and passes
//! on, or refuses, as NFD's GenericLinkService and forwarder do: a Data's
//! CongestionMark goes on to its downstreams, a face with local fields learns
//! the face a Data came from (254 for the content store), and fields a packet
//! may not carry make it malformed.

use bytes::Bytes;
use trajan_engine::CONTENT_STORE_FACE;
use trajan_engine::{FaceMeta, Forwarder, Outgoing};
use trajan_wire::data::DataBuilder;
use trajan_wire::lp::{LpHeaders, LpPacket, CACHE_POLICY_NO_CACHE};
use trajan_wire::{Interest, NackReason};

mod common;
use common::{forwarder_with, name, CONSUMER, CONSUMER2, PRODUCER, PRODUCER2};

/// A local application with local fields (NFD's LocalFieldsEnabled).
const APP: u32 = 500;

fn forwarder() -> Forwarder {
    let mut f = forwarder_with(&[CONSUMER, CONSUMER2, PRODUCER, PRODUCER2]);
    f.add_face(APP, FaceMeta { local: true, local_fields: true, point_to_point: true, ..Default::default() });
    f.fib.add_nexthop(&name("/a"), PRODUCER2, 20);
    f
}

fn interest(n: &str, nonce: u32) -> Bytes {
    let mut i = Interest::new(name(n));
    i.nonce = Some(nonce);
    i.lifetime_ms = Some(1000);
    i.encode()
}

fn data(n: &str) -> Bytes {
    DataBuilder::new(name(n)).freshness_ms(10_000).build(b"payload")
}

fn with(pkt: &Bytes, headers: LpHeaders) -> Bytes {
    LpPacket::wrap(pkt, &headers)
}

fn run(f: &mut Forwarder, now: u64, mut input: Vec<(u32, Bytes)>) -> Vec<Outgoing> {
    let mut out = Vec::new();
    f.process_burst(now, &mut input, &mut out);
    out
}

/// Each packet sent: its face and link headers.
fn headers(out: &[Outgoing]) -> Vec<(u32, LpHeaders)> {
    out.iter().map(|o| (o.face, LpPacket::decode(&o.pkt).unwrap().headers)).collect()
}

/// NFD tags a received Data with its CongestionMark and sends that Data to
/// every downstream, whose link service writes the mark again: a consumer
/// hears of congestion on the path beyond this router. One downstream has a
/// PIT token, which goes with the mark.
#[test]
fn a_data_s_congestion_mark_goes_to_every_downstream() {
    let mut f = forwarder();
    let token = Bytes::from_static(b"tok1");
    let tokened = with(&interest("/a/1", 2), LpHeaders { pit_token: Some(token.clone()), ..Default::default() });
    run(&mut f, 0, vec![(CONSUMER, interest("/a/1", 1)), (CONSUMER2, tokened)]);
    let marked = with(&data("/a/1"), LpHeaders { congestion_mark: Some(1), ..Default::default() });
    let out = run(&mut f, 1, vec![(PRODUCER, marked)]);
    let mut sent = headers(&out);
    sent.sort_by_key(|(face, _)| *face);
    let marked = |pit_token| LpHeaders { pit_token, congestion_mark: Some(1), ..Default::default() };
    assert_eq!(sent, [(CONSUMER, marked(None)), (CONSUMER2, marked(Some(token)))]);
    // The mark was the Data's on that link, not the Data's own: the cached
    // copy answers unmarked.
    let out = run(&mut f, 2, vec![(CONSUMER, interest("/a/1", 3))]);
    assert_eq!(out.iter().map(|o| (o.face, &o.pkt)).collect::<Vec<_>>(), [(CONSUMER, &data("/a/1"))]);
}

/// NFD's encodeLpFields writes IncomingFaceId on a face with local fields:
/// the Data's upstream, or `FACEID_CONTENT_STORE` (254) for a CS answer.
/// A face without local fields still gets the bare Data, the very bytes.
#[test]
fn a_face_with_local_fields_learns_where_its_data_came_from() {
    let mut f = forwarder();
    run(&mut f, 0, vec![(APP, interest("/a/1", 1)), (CONSUMER, interest("/a/1", 2))]);
    let out = run(&mut f, 1, vec![(PRODUCER, data("/a/1"))]);
    let to = |face: u32| out.iter().find(|o| o.face == face).unwrap();
    assert_eq!(to(CONSUMER).pkt, data("/a/1"), "no local fields: bare");
    let lp = LpPacket::decode(&to(APP).pkt).unwrap();
    assert_eq!(lp.headers, LpHeaders { incoming_face_id: Some(u64::from(PRODUCER)), ..Default::default() });
    assert_eq!(lp.fragment, Some(data("/a/1")));
    let out = run(&mut f, 2, vec![(APP, interest("/a/1", 3))]);
    assert_eq!(f.counters.cs_hits, 1);
    assert_eq!(CONTENT_STORE_FACE, 254);
    assert_eq!(headers(&out), [(APP, LpHeaders { incoming_face_id: Some(254), ..Default::default() })]);
    // With a PIT token and a mark, the three together.
    let token = Bytes::from_static(b"tok2");
    let asked = with(&interest("/a/2", 4), LpHeaders { pit_token: Some(token.clone()), ..Default::default() });
    run(&mut f, 3, vec![(APP, asked)]);
    let marked = with(&data("/a/2"), LpHeaders { congestion_mark: Some(7), ..Default::default() });
    let out = run(&mut f, 4, vec![(PRODUCER, marked)]);
    let all = LpHeaders { pit_token: Some(token), incoming_face_id: Some(u64::from(PRODUCER)), congestion_mark: Some(7), ..Default::default() };
    assert_eq!(headers(&out), [(APP, all)]);
}

/// NFD sends a Nack downstream as a new Nack of the in-record's Interest
/// (Forwarder::onOutgoingNack), which carries none of the received Nack's
/// tags: neither its CongestionMark nor an IncomingFaceId, even to a face
/// with local fields. Trajan does the same.
#[test]
fn a_nack_sent_on_carries_neither_the_mark_nor_the_upstream() {
    let mut f = forwarder();
    f.fib.add_nexthop(&name("/n"), PRODUCER, 10);
    run(&mut f, 0, vec![(APP, interest("/n/1", 1))]);
    let nack = with(&interest("/n/1", 1), LpHeaders { nack: Some(NackReason::Congestion), congestion_mark: Some(1), ..Default::default() });
    let out = run(&mut f, 1, vec![(PRODUCER, nack)]);
    assert_eq!(headers(&out), [(APP, LpHeaders { nack: Some(NackReason::Congestion), ..Default::default() })]);
}

/// What NFD's GenericLinkService drops (decodeInterest, decodeData,
/// decodeNack), each counted here as malformed and acted on in no way: no
/// PIT entry, nothing cached, nothing sent, no other counter.
#[test]
fn fields_a_packet_may_not_carry_make_it_malformed() {
    let pinned = LpHeaders { next_hop_face_id: Some(u64::from(PRODUCER2)), ..Default::default() };
    let no_cache = LpHeaders { cache_policy: Some(CACHE_POLICY_NO_CACHE), ..Default::default() };
    let nack = |h: &LpHeaders| LpHeaders { nack: Some(NackReason::NoRoute), ..h.clone() };
    let refused = [
        ("NextHopFaceId on an Interest from a face without local fields", CONSUMER, with(&interest("/a/1", 1), pinned.clone())),
        ("CachePolicy on an Interest", APP, with(&interest("/a/1", 1), no_cache.clone())),
        ("NextHopFaceId on a Data", PRODUCER, with(&data("/a/1"), pinned.clone())),
        ("NextHopFaceId on a Nack", PRODUCER, with(&interest("/a/1", 1), nack(&pinned))),
        ("CachePolicy on a Nack", PRODUCER, with(&interest("/a/1", 1), nack(&no_cache))),
    ];
    for (what, face, pkt) in refused {
        let mut f = forwarder();
        // A pending Interest for the Data and the Nacks to act on.
        let pending = (what.contains("Data") || what.contains("Nack")).then(|| run(&mut f, 0, vec![(CONSUMER2, interest("/a/1", 1))]));
        let before = f.counters.clone();
        let out = run(&mut f, 1, vec![(face, pkt)]);
        assert_eq!(out, [], "{what}: acted on");
        assert_eq!((f.counters.malformed, f.faces.get(face).unwrap().counters.malformed), (1, 1), "{what}: not counted");
        assert_eq!(f.counters, trajan_engine::ForwarderCounters { malformed: 1, ..before }, "{what}: counted as more");
        assert_eq!(f.pcct.pit.len(), usize::from(pending.is_some()), "{what}: the PIT changed");
        assert_eq!(f.pcct.cs.len(), 0, "{what}: cached");
    }
    // The fields where they belong are no reason to drop anything.
    let mut f = forwarder();
    let out = run(&mut f, 0, vec![(APP, with(&interest("/a/1", 1), pinned))]);
    assert_eq!(out.iter().map(|o| o.face).collect::<Vec<_>>(), [PRODUCER2]);
    let out = run(&mut f, 1, vec![(PRODUCER2, with(&data("/a/1"), no_cache))]);
    assert_eq!(out.iter().map(|o| o.face).collect::<Vec<_>>(), [APP]);
    assert_eq!((f.counters.malformed, f.pcct.cs.len()), (0, 0));
}
