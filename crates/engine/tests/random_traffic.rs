//! The forwarder under random traffic: sequences of bursts from several faces
//! mixing Interests, Data, Nacks and damaged copies of them (a byte replaced,
//! the end cut off, bytes appended), with the clock moving between bursts and
//! now and then a face removed. The engine's own decoder, tables and timers
//! meet what no hand-written scenario lines up (aggregation racing expiry,
//! cache hits for prefixes, Nacks for names long gone, malformed packets
//! between good ones); a failure prints the smallest sequence that shows it.
//!
//! The wire crate's decoders are the oracle of what each received packet is.
//! Whatever the engine sends must then follow from what it received:
//! - every packet sent decodes, and goes to a face the forwarder knows;
//! - a Data goes only to a face with a matching Interest still in its
//!   lifetime, with that Interest's PIT token, and one answered from the
//!   cache to a MustBeFresh Interest was still fresh;
//! - an Interest goes only where the FIB, a ForwardingHint or a local app's
//!   NextHopFaceId points, for a name received in that burst (as an Interest,
//!   or a Nack that makes the strategy try another next hop) from another
//!   face, with its HopLimit one less (from a local face too, as in NFD), and
//!   never back to a face that sent it (its Nonce) in that burst;
//! - a Nack goes only to a point-to-point face that asked for its name
//!   (lapsed or not, as in NFD), and one from a multi-access face is dropped;
//! - nothing is lost: a Data reaches a face that asked for it (in its
//!   lifetime, forwarded upstream, not answered since);
//! - every packet is counted once: as an Interest, a Data, a Nack or malformed;
//! - the tables stay within their capacities, and once every lifetime has
//!   passed (the largest an InterestLifetime can say included) the PIT is empty.


mod traffic;

use bytes::Bytes;
use proptest::prelude::*;
use traffic::*;
use trajan_engine::{EngineConfig, Forwarder, Outgoing, StrategyKind};
use trajan_wire::lp::{LpHeaders, LpPacket};
use trajan_wire::{Data, Interest, Name};

const CS_CAPACITY: usize = 4;

fn forwarder() -> Forwarder {
    let mut f = Forwarder::new(&EngineConfig { cs_capacity: CS_CAPACITY, pit_capacity: 64, ..Default::default() }, 0);
    for id in &FACES[..KNOWN] {
        f.add_face(*id, meta(*id));
    }
    for (prefix, hops) in ROUTES {
        for (cost, hop) in hops.iter().enumerate() {
            f.fib.add_nexthop(&name(prefix), *hop, 10 + cost as u64);
        }
    }
    f.strategies.insert(&name(MULTICAST), StrategyKind::Multicast);
    f
}

/// What the oracle (the wire crate's decoders) makes of a received packet.
enum Seen {
    Interest(Interest, LpHeaders),
    Data(Data),
    Nack(Interest),
    /// An NDNLPv2 packet with no fragment, or a fragment of a larger packet
    /// (reassembly is the face's work): nothing to forward, nothing wrong.
    Idle,
    Malformed,
}

/// A NextHopFaceId is refused (as in NFD) on a Data, a Nack, and an
/// Interest from a face without local fields: the packet is malformed.
fn see(wire: &Bytes, local_fields: bool) -> Seen {
    let Ok(lp) = LpPacket::decode(wire) else { return Seen::Malformed };
    let whole = !lp.is_fragmented();
    let Some(frag) = lp.fragment.filter(|_| whole) else { return Seen::Idle };
    let pinned = lp.headers.next_hop_face_id.is_some();
    if let Ok(i) = Interest::decode(&frag) {
        return match lp.headers.nack {
            _ if pinned && (lp.headers.nack.is_some() || !local_fields) => Seen::Malformed,
            Some(_) => Seen::Nack(i),
            None => Seen::Interest(i, lp.headers),
        };
    }
    match Data::decode(&frag) {
        Ok(d) if lp.headers.nack.is_none() && !pinned => Seen::Data(d),
        _ => Seen::Malformed,
    }
}

/// The faces the FIB's longest prefix match for `n` names, among the `known`
/// faces: a route loses a removed face, and a prefix left with none is gone.
fn routes(n: &Name, known: &[u32]) -> Vec<u32> {
    let live = |hops: &[u32]| hops.iter().copied().filter(|h| known.contains(h)).collect::<Vec<_>>();
    ROUTES.iter().filter(|(p, hops)| name(p).is_prefix_of(n) && !live(hops).is_empty()).max_by_key(|(p, _)| name(p).len()).map_or(Vec::new(), |(_, hops)| live(hops))
}

/// ndn-cxx's `Interest::matchesData`: a MustBeFresh Interest wants a Data
/// with a FreshnessPeriod.
fn matches(i: &Interest, d: &Data) -> bool {
    let named = i.name == *d.name() || (i.can_be_prefix && i.name.is_prefix_of(d.name())) || i.name.implicit_digest().is_some_and(|_| i.name == d.full_name());
    named && (!i.must_be_fresh || d.freshness_ms.is_some_and(|f| f > 0))
}

/// What the forwarder received so far, to check what it sends against.
#[derive(Default)]
struct History {
    /// Interests received from known faces, with when they arrived and their
    /// PIT tokens.
    interests: Vec<(u32, Interest, u64, Option<Bytes>)>,
    /// Data received from known faces: name, arrival, freshness period.
    data: Vec<(Name, u64, Option<u64>)>,
    /// Every packet from a known face, by what it was.
    interests_in: u64,
    data_in: u64,
    nacks_in: u64,
    malformed: u64,
}

/// `seen`: the burst's packets from faces the forwarder knows, as the oracle
/// reads them.
fn check_burst(now: u64, known: &[u32], seen: &[(u32, Seen)], out: &[Outgoing], history: &mut History) -> Result<(), TestCaseError> {
    let mut interests_now: Vec<(u32, Interest, LpHeaders)> = Vec::new();
    let mut nacked_now: Vec<Name> = Vec::new();
    let mut data_now: Vec<Name> = Vec::new();
    for (face, packet) in seen {
        match packet {
            Seen::Interest(i, headers) => {
                history.interests_in += 1;
                history.interests.push((*face, i.clone(), now, headers.pit_token.clone()));
                interests_now.push((*face, i.clone(), headers.clone()));
            }
            Seen::Data(d) => {
                history.data_in += 1;
                history.data.push((d.name().clone(), now, d.freshness_ms));
                data_now.push(d.name().clone());
            }
            Seen::Nack(i) => {
                history.nacks_in += 1;
                // One from a multi-access face is dropped: no strategy retry.
                if *face != SHARED {
                    nacked_now.push(i.name.clone());
                }
            }
            Seen::Idle => {}
            Seen::Malformed => history.malformed += 1,
        }
    }
    let asked = |face: u32, pred: &dyn Fn(&Interest) -> bool| history.interests.iter().any(|(f, i, at, _)| *f == face && at.saturating_add(i.lifetime()) >= now && pred(i));
    for o in out {
        prop_assert!(known.contains(&o.face), "sent to face {} the forwarder does not know", o.face);
        let lp = LpPacket::decode(&o.pkt).map_err(|e| TestCaseError::fail(format!("sent an undecodable packet: {e:?}")))?;
        let frag = lp.fragment.ok_or_else(|| TestCaseError::fail("sent a packet without a fragment"))?;
        if let Ok(i) = Interest::decode(&frag) {
            if lp.headers.nack.is_some() {
                prop_assert!(o.face != SHARED, "Nack for {} to a multi-access face", i.name);
                // In-records, lapsed or not, are Nacked, as in NFD.
                let ever_asked = history.interests.iter().any(|(f, asked, _, _)| *f == o.face && asked.name == i.name);
                prop_assert!(ever_asked, "Nack for {} to face {} that did not ask for it", i.name, o.face);
                continue;
            }
            let causes: Vec<&(u32, Interest, LpHeaders)> = interests_now.iter().filter(|(f, c, _)| *f != o.face && c.name == i.name).collect();
            prop_assert!(!causes.is_empty() || nacked_now.contains(&i.name), "Interest {} to face {} that no packet of the burst asked for", i.name, o.face);
            // A local app's NextHopFaceId is obeyed without scope control, as
            // in NFD: the app is privileged and chose the face itself.
            let chosen = causes.iter().any(|(_, _, h)| h.next_hop_face_id == Some(u64::from(o.face)));
            let mut allowed = routes(&i.name, known);
            if i.forwarding_hint.is_some() {
                allowed.extend(routes(&name("/hub"), known));
            }
            prop_assert!(chosen || allowed.contains(&o.face), "Interest {} to face {}, not a next hop", i.name, o.face);
            prop_assert!(chosen || !name("/localhost").is_prefix_of(&i.name), "/localhost Interest forwarded");
            // (Of the same PIT entry: Interests that differ in CanBePrefix or
            // MustBeFresh do not aggregate, nor are their Nonces compared.)
            let same_entry = |c: &Interest| c.name == i.name && c.can_be_prefix == i.can_be_prefix && c.must_be_fresh == i.must_be_fresh;
            // Unless another face's Interest had the same Nonce, in this burst
            // or one before (a collision, not a loop of ours: a strategy's
            // retry after a Nack sends an earlier Interest on).
            let own_now = interests_now.iter().any(|(f, c, _)| *f == o.face && same_entry(c) && c.nonce == i.nonce);
            let others = history.interests.iter().any(|(f, c, _, _)| *f != o.face && same_entry(c) && c.nonce == i.nonce);
            let own = own_now && !others;
            prop_assert!(!own, "Interest {} (Nonce {:?}) sent back to face {}, which sent it", i.name, i.nonce, o.face);
            if let Some(h) = i.hop_limit {
                // Every face's Interests spend a hop, a local app's too (as in NFD).
                prop_assert!(
                    causes.iter().any(|(_, c, _)| c.hop_limit.map(u64::from) == Some(u64::from(h) + 1)) || nacked_now.contains(&i.name),
                    "Interest {} sent with HopLimit {h}, which no Interest received leads to", i.name
                );
            }
        } else {
            let d = Data::decode(&frag).map_err(|e| TestCaseError::fail(format!("sent a fragment neither Interest nor Data: {e:?}")))?;
            prop_assert!(lp.headers.nack.is_none(), "a Data sent as a Nack");
            prop_assert!(asked(o.face, &|i| matches(i, &d)), "Data {} to face {} with no matching Interest in its lifetime", d.name(), o.face);
            // It carries the PIT token of an Interest it answers (or none, if
            // one of them had none).
            let echoed = history.interests.iter().any(|(f, i, at, token)| {
                *f == o.face && matches(i, &d) && at.saturating_add(i.lifetime()) >= now && *token == lp.headers.pit_token
            });
            prop_assert!(echoed, "Data {} to face {} with PIT token {:?}, none of its Interests'", d.name(), o.face, lp.headers.pit_token);
            // Not just received: then the cache answered, and only fresh Data
            // may answer MustBeFresh.
            let only_fresh_asked = !asked(o.face, &|i| matches(i, &d) && !i.must_be_fresh);
            if only_fresh_asked && !data_now.contains(d.name()) {
                let fresh = history.data.iter().any(|(n, at, fp)| n == d.name() && fp.is_some_and(|fp| at.saturating_add(fp) > now));
                prop_assert!(fresh, "stale Data {} from the cache to a MustBeFresh Interest of face {}", d.name(), o.face);
            }
        }
    }
    Ok(())
}

/// A consumer's Interest the forwarder sent upstream (with the consumer's own
/// Nonce), whose in-record no packet has touched since.
struct Awaiting {
    face: u32,
    interest: Interest,
    at: u64,
}

/// The Data a packet sent carries, if it is one.
fn sent_data(o: &Outgoing) -> Option<Data> {
    let frag = LpPacket::decode(&o.pkt).ok()?.fragment?;
    Data::decode(&frag).ok()
}

/// The Interest a packet sent carries, if it is one, and whether it is a Nack.
fn sent_interest(o: &Outgoing) -> Option<(Interest, bool)> {
    let lp = LpPacket::decode(&o.pkt).ok()?;
    Some((Interest::decode(&lp.fragment?).ok()?, lp.headers.nack.is_some()))
}

/// Nothing lost: a Data that arrives first in its burst reaches every face
/// still awaiting it (see [`Awaiting`]) other than its sender. Then the waits
/// this burst touched end (a packet from the face for the name; a Data or
/// Nack sent to it; a Data for it from anyone; for the multi-access face, a
/// Nack for it from upstream), and those it began start: an
/// Interest forwarded with its own Nonce, its face's only packet for the
/// name in the burst, and no Data for it in the burst.
fn check_delivery(now: u64, known: &[u32], seen: &[(u32, Seen)], out: &[Outgoing], awaiting: &mut Vec<Awaiting>) -> Result<(), TestCaseError> {
    if let Some((from, Seen::Data(d))) = seen.first() {
        // A non-local face's /localhost Data is dropped on arrival.
        let scoped_out = *from != APP && name("/localhost").is_prefix_of(d.name());
        for a in awaiting.iter().filter(|a| !scoped_out && a.face != *from && known.contains(&a.face) && matches(&a.interest, d) && now < a.at.saturating_add(a.interest.lifetime())) {
            let delivered = out.iter().any(|o| o.face == a.face && sent_data(o).is_some_and(|s| s.name() == d.name()));
            prop_assert!(delivered, "Data {} from face {from} lost: face {} asked for {} at {} and still waits", d.name(), a.face, a.interest.name, a.at);
        }
    }
    let names = |s: &Seen| match s {
        Seen::Interest(i, _) | Seen::Nack(i) => Some(i.name.clone()),
        Seen::Data(d) => Some(d.name().clone()),
        Seen::Idle | Seen::Malformed => None,
    };
    let data_for = |i: &Interest| seen.iter().any(|(_, s)| matches!(s, Seen::Data(d) if matches(i, d)));
    let answered = |face: u32, i: &Interest| {
        out.iter().any(|o| o.face == face && (sent_data(o).is_some_and(|d| matches(i, &d)) || sent_interest(o).is_some_and(|(n, nack)| nack && n.name == i.name)))
    };
    // The upstreams may have given up on a multi-access face's Interest after
    // a Nack without telling it (it gets no Nack).
    let given_up_silently = |face: u32, i: &Interest| face == SHARED && seen.iter().any(|(f, s)| *f != SHARED && matches!(s, Seen::Nack(n) if n.name == i.name));
    awaiting.retain(|a| {
        if !known.contains(&a.face) {
            return false;
        }
        let from_it = seen.iter().any(|(f, s)| *f == a.face && names(s).as_ref() == Some(&a.interest.name));
        !from_it && !given_up_silently(a.face, &a.interest) && !data_for(&a.interest) && !answered(a.face, &a.interest)
    });
    for (face, s) in seen {
        let Seen::Interest(i, _) = s else { continue };
        let alone = seen.iter().filter(|(f, t)| f == face && names(t).as_ref() == Some(&i.name)).count() == 1;
        // Its Nonce is its own in the burst, so an Interest sent with it was this one.
        let own_nonce = !seen.iter().any(|(f, t)| f != face && matches!(t, Seen::Interest(o, _) if o.name == i.name && o.nonce == i.nonce));
        let spent = i.hop_limit == Some(0);
        let forwarded = out.iter().any(|o| sent_interest(o).is_some_and(|(n, nack)| !nack && n.name == i.name && n.nonce == i.nonce));
        if alone && own_nonce && !spent && forwarded && !data_for(i) && !answered(*face, i) && !given_up_silently(*face, i) {
            awaiting.push(Awaiting { face: *face, interest: i.clone(), at: now });
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 4096, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn what_the_forwarder_sends_follows_from_what_it_received(
        bursts in prop::collection::vec((0u64..60, prop::collection::vec(any_received(), 1..8), prop::option::weighted(0.03, prop::sample::select(REMOVABLE.to_vec()))), 1..40)
    ) {
        let mut f = forwarder();
        let mut known = FACES[..KNOWN].to_vec();
        let mut history = History::default();
        let mut awaiting = Vec::new();
        let mut now = 0;
        for (advance, received, removed) in bursts {
            now += advance;
            f.tick(now);
            if let Some(face) = removed {
                f.remove_face(face);
                known.retain(|k| *k != face);
            }
            let mut burst: Vec<(u32, Bytes)> = received.iter().map(|r| (r.face, r.encode())).collect();
            let seen: Vec<(u32, Seen)> = burst.iter().filter(|(f, _)| known.contains(f)).map(|(f, w)| (*f, see(w, meta(*f).local_fields))).collect();
            let mut out = Vec::new();
            f.process_burst(now, &mut burst, &mut out);
            check_burst(now, &known, &seen, &out, &mut history)?;
            check_delivery(now, &known, &seen, &out, &mut awaiting)?;
            prop_assert!(f.pcct.cs.len() <= CS_CAPACITY);
            prop_assert!(f.pcct.pit.len() <= f.pcct.pit.capacity());
            let c = &f.counters;
            prop_assert_eq!(
                (c.packets.in_interests, c.packets.in_data, c.packets.in_nacks, c.malformed),
                (history.interests_in, history.data_in, history.nacks_in, history.malformed)
            );
        }
        // Lifetimes run up to the end of time (an InterestLifetime of 2^64 - 1
        // saturates): then every entry has lapsed.
        f.tick(u64::MAX);
        prop_assert_eq!(f.pcct.pit.len(), 0);
        prop_assert_eq!(f.next_deadline(), None);
    }
}
