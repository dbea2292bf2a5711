//! Random traffic for the engine's property tests: faces, names, routes and
//! a generator of received packets (Interests, Data, Nacks, in NDNLPv2 headers
//! or not, sometimes damaged). Shared by the engine's random-traffic test and
//! the router's sharded-workers test (included there by path), so that both
//! draw the same traffic.
#![allow(dead_code)] // each test uses a part

use bytes::Bytes;
use proptest::prelude::*;
use trajan_engine::FaceMeta;
use trajan_wire::data::DataBuilder;
use trajan_wire::lp::{LpHeaders, LpPacket};
use trajan_wire::{Data, Interest, NackReason, Name};

pub const CONSUMER: u32 = 300;
pub const CONSUMER2: u32 = 301;
pub const PRODUCER: u32 = 400;
pub const PRODUCER2: u32 = 401;
/// A local application face, whose NextHopFaceId is honoured.
pub const APP: u32 = 500;
/// A multi-access face (a shared medium), one of `/b`'s next hops: Nacks are
/// neither sent to it nor taken from it.
pub const SHARED: u32 = 600;
/// Never added: its packets must be ignored.
pub const STRANGER: u32 = 999;
pub const FACES: [u32; 7] = [CONSUMER, CONSUMER2, PRODUCER, PRODUCER2, APP, SHARED, STRANGER];
/// The faces the forwarder knows at the start: all but the stranger.
pub const KNOWN: usize = FACES.len() - 1;
/// Faces a run may remove between bursts (never to come back: face ids are
/// not reused). Their packets are then ignored, their routes gone, and
/// nothing may be sent to them.
pub const REMOVABLE: [u32; 4] = [CONSUMER2, PRODUCER2, APP, SHARED];

/// Small enough that names repeat (aggregation, cache hits, loops), with
/// prefixes of one another (CanBePrefix, longest-prefix match) and a
/// `/localhost` name that must never leave the router, and a name of one
/// component. Interests may also ask for Data by their full names ([`name_at`]).
pub const NAMES: [&str; 10] = ["/a", "/a/b", "/a/b/c", "/a/x", "/b/1", "/b/1/2", "/c", "/localhost/n", "/hub/h", "/x"];
/// The FIB: `/b` is multicast ([`MULTICAST`]), `/c` has no route.
pub const ROUTES: [(&str, &[u32]); 5] = [("/a", &[PRODUCER]), ("/a/b", &[PRODUCER2]), ("/b", &[PRODUCER, PRODUCER2, SHARED]), ("/hub", &[PRODUCER2]), ("/x", &[PRODUCER])];
/// The prefix whose strategy is multicast.
pub const MULTICAST: &str = "/b";

/// How the forwarder knows a face of [`FACES`]: every one is non-local and
/// point-to-point but [`APP`] (local, with local fields) and [`SHARED`]
/// (multi-access).
pub fn meta(id: u32) -> FaceMeta {
    FaceMeta { local: id == APP, local_fields: id == APP, point_to_point: id != SHARED, ..Default::default() }
}

pub fn name(s: &str) -> Name {
    s.parse().unwrap()
}

/// A packet as a consumer or producer would send it.
#[derive(Debug, Clone)]
pub enum Packet {
    Interest { name: usize, can_be_prefix: bool, must_be_fresh: bool, nonce: u8, lifetime_ms: Option<u64>, hop_limit: Option<u8>, hint: bool },
    Data { name: usize, freshness_ms: Option<u64> },
    Nack { name: usize, nonce: u8, reason: u8 },
}

/// How a packet is damaged on its way in.
#[derive(Debug, Clone)]
pub enum Damage {
    None,
    Replace { at: usize, byte: u8 },
    Cut { keep: usize },
    Append(Vec<u8>),
}

/// One received packet: from which face, in which NDNLPv2 headers, damaged how.
#[derive(Debug, Clone)]
pub struct Received {
    pub face: u32,
    pub packet: Packet,
    pub pit_token: Option<u8>,
    pub next_hop: Option<u64>,
    pub damage: Damage,
}

/// The Data every producer sends for `NAMES[n]`.
pub fn data_of(n: usize, freshness_ms: Option<u64>) -> Bytes {
    let mut b = DataBuilder::new(name(NAMES[n]));
    if let Some(ms) = freshness_ms {
        b = b.freshness_ms(ms);
    }
    b.build(b"payload")
}

/// `NAMES[n]`, or past its end the full name (with its implicit digest) of
/// the Data for `/a/b`, then of the one for `/x`, both with no FreshnessPeriod.
pub fn name_at(n: usize) -> Name {
    match NAMES.get(n) {
        Some(uri) => name(uri),
        None => {
            let of = if n == NAMES.len() { 1 } else { 9 };
            Data::decode(&data_of(of, None)).unwrap().full_name()
        }
    }
}

/// How many names [`name_at`] knows.
pub const NAMES_AT: usize = NAMES.len() + 2;

pub fn interest_of(n: usize, nonce: u8) -> Interest {
    let mut i = Interest::new(name_at(n));
    i.nonce = Some(u32::from(nonce));
    i
}

impl Received {
    /// The packet as it reaches the router.
    pub fn encode(&self) -> Bytes {
        let (bare, nack) = match &self.packet {
            Packet::Interest { name: n, can_be_prefix, must_be_fresh, nonce, lifetime_ms, hop_limit, hint } => {
                let mut i = interest_of(*n, *nonce);
                i.can_be_prefix = *can_be_prefix;
                i.must_be_fresh = *must_be_fresh;
                i.lifetime_ms = *lifetime_ms;
                i.hop_limit = *hop_limit;
                if *hint {
                    i.forwarding_hint = Some(Bytes::from(name("/hub").to_wire()));
                }
                (i.encode(), None)
            }
            Packet::Data { name: n, freshness_ms } => (data_of(*n, *freshness_ms), None),
            Packet::Nack { name: n, nonce, reason } => (interest_of(*n, *nonce).encode(), Some(NackReason::from_code(u64::from(*reason)))),
        };
        let headers = LpHeaders {
            pit_token: self.pit_token.map(|t| Bytes::from(vec![t; 4])),
            nack,
            next_hop_face_id: self.next_hop,
            ..Default::default()
        };
        let wire = if headers == LpHeaders::default() { bare } else { LpPacket::wrap(&bare, &headers) };
        let mut bytes = wire.to_vec();
        match &self.damage {
            Damage::None => {}
            Damage::Replace { at, byte } => {
                let at = at % bytes.len();
                bytes[at] = *byte;
            }
            Damage::Cut { keep } => bytes.truncate(keep % bytes.len()),
            Damage::Append(tail) => bytes.extend_from_slice(tail),
        }
        Bytes::from(bytes)
    }
}

pub fn any_received() -> impl Strategy<Value = Received> {
    let n = 0..NAMES_AT;
    let packet = prop_oneof![
        4 => (n.clone(), any::<bool>(), any::<bool>(), 0u8..4, prop_oneof![Just(None), Just(Some(0)), Just(Some(30)), Just(Some(500)), Just(Some(u64::MAX))], prop_oneof![3 => Just(None), 1 => (0u8..3).prop_map(Some)], prop::bool::weighted(0.1))
            .prop_map(|(name, can_be_prefix, must_be_fresh, nonce, lifetime_ms, hop_limit, hint)| Packet::Interest { name, can_be_prefix, must_be_fresh, nonce, lifetime_ms, hop_limit, hint }),
        3 => (0..NAMES.len(), prop_oneof![Just(None), Just(Some(0)), Just(Some(20)), Just(Some(10_000)), Just(Some(u64::MAX))]).prop_map(|(name, freshness_ms)| Packet::Data { name, freshness_ms }),
        1 => (n, 0u8..4, 0u8..200).prop_map(|(name, nonce, reason)| Packet::Nack { name, nonce, reason }),
    ];
    let damage = prop_oneof![
        12 => Just(Damage::None),
        2 => (any::<usize>(), any::<u8>()).prop_map(|(at, byte)| Damage::Replace { at, byte }),
        1 => any::<usize>().prop_map(|keep| Damage::Cut { keep }),
        1 => prop::collection::vec(any::<u8>(), 1..6).prop_map(Damage::Append),
    ];
    let face = prop_oneof![10 => prop::sample::select(FACES[..KNOWN].to_vec()), 1 => Just(STRANGER)];
    // Ids of faces, known or not, and one past 32 bits whose low bits are a face's.
    let ids: Vec<u64> = FACES.iter().map(|f| u64::from(*f)).chain([(1 << 32) + u64::from(PRODUCER2)]).collect();
    let next_hop = prop_oneof![6 => Just(None), 1 => prop::sample::select(ids).prop_map(Some)];
    (face, packet, prop::option::weighted(0.2, any::<u8>()), next_hop, damage).prop_map(|(face, packet, pit_token, next_hop, damage)| Received { face, packet, pit_token, next_hop, damage })
}
