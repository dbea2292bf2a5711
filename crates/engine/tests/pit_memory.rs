//! What a PIT entry holds: one packet, the Interest it sends upstream, whose
//! bytes its name is a view of. A memory audit found entries holding two: the
//! received packet through the name and a re-encoding beside it (an Interest
//! with a HopLimit or without a Nonce), or the first Interest through the name
//! and the latest to join beside it; an 8,772-byte Interest with a HopLimit
//! kept 18,442 bytes per entry.

use bytes::Bytes;
use trajan_engine::{Forwarder, Outgoing};
use trajan_wire::lp::{LpHeaders, LpPacket};
use trajan_wire::Interest;

mod common;
use common::{forwarder_with, name, CONSUMER, CONSUMER2, CONSUMER3, PRODUCER};

fn forwarder() -> Forwarder {
    forwarder_with(&[CONSUMER, CONSUMER2, CONSUMER3, PRODUCER])
}

fn interest(n: &str, nonce: Option<u32>, hop_limit: Option<u8>) -> Bytes {
    let mut i = Interest::new(name(n));
    i.nonce = nonce;
    i.hop_limit = hop_limit;
    i.lifetime_ms = Some(1000);
    i.encode()
}

/// Processes `pkt` from `face` as a burst of its own and drops what the
/// engine sent (which holds the upstream packet too), leaving the PIT the
/// one holder of what it kept.
fn receive(f: &mut Forwarder, now: u64, face: u32, pkt: Bytes) -> usize {
    let mut out: Vec<Outgoing> = Vec::new();
    f.process_burst(now, &mut [(face, pkt)], &mut out);
    out.len()
}

/// The entry for `n` keeps one buffer, the one `wire()` returns, in which its
/// name lies; the decoded upstream Interest, for its fields.
fn upstream(f: &Forwarder, n: &str) -> Interest {
    let id = f.pcct.find(&name(n), false, false).expect("pending");
    let entry = f.pcct.pit.get(id).unwrap();
    assert_eq!(*entry.name(), name(n));
    assert_eq!(entry.name().buffer(), entry.wire(), "the name lies in the packet that goes upstream");
    assert_eq!(entry.name().buffer().as_ptr(), entry.wire().as_ptr(), "the very same buffer");
    Interest::decode(entry.wire()).unwrap()
}

/// An Interest the engine re-encodes (its HopLimit decremented, or a Nonce
/// added) leaves the received packet to no one: the entry's name moved
/// into the re-encoding, with its components still read right.
#[test]
fn a_new_entry_of_a_re_encoded_interest_holds_the_encoding_alone() {
    let mut f = forwarder();
    for (n, nonce, hop) in [("/a/hop", Some(1), Some(5)), ("/a/no-nonce", None, None), ("/a/both/x/y", None, Some(2))] {
        let received = interest(n, nonce, hop);
        assert_eq!(receive(&mut f, 0, CONSUMER, received.clone()), 1, "{n} forwarded");
        assert!(received.is_unique(), "{n}: the PIT holds the received packet no more");
        let up = upstream(&f, n);
        assert_eq!(up.hop_limit, hop.map(|h| h - 1));
        assert!(up.nonce.is_some());
        let id = f.pcct.find(&name(n), false, false).unwrap();
        let entry_name = f.pcct.pit.get(id).unwrap().name();
        assert_eq!(entry_name.components().map(|c| c.value.to_vec()).collect::<Vec<_>>(), name(n).components().map(|c| c.value.to_vec()).collect::<Vec<_>>());
        assert_eq!(entry_name.prefix(1), name("/a"));
    }
}

/// An Interest that joins an entry, as received or re-encoded, becomes what
/// goes upstream and the entry lets go of the earlier one, the first
/// included, whose packet the entry's name held.
#[test]
fn an_interest_joining_an_entry_replaces_the_packet_it_holds() {
    let mut f = forwarder();
    let first = interest("/a/j", Some(1), None);
    receive(&mut f, 0, CONSUMER, first.clone());
    assert!(!first.is_unique(), "a bare Interest is kept as it came, in its entry's name");
    assert_eq!(upstream(&f, "/a/j").nonce, Some(1));

    let second = interest("/a/j", Some(2), None);
    receive(&mut f, 1, CONSUMER2, second.clone());
    assert!(first.is_unique(), "the entry holds the first Interest no more");
    assert_eq!(f.pcct.pit.get(f.pcct.find(&name("/a/j"), false, false).unwrap()).unwrap().wire().as_ptr(), second.as_ptr(), "it holds the second as received");
    assert_eq!(upstream(&f, "/a/j").nonce, Some(2));

    let third = interest("/a/j", Some(3), Some(9));
    receive(&mut f, 2, CONSUMER3, third.clone());
    assert!(second.is_unique() && third.is_unique(), "a re-encoded joiner: the entry holds its encoding alone");
    let up = upstream(&f, "/a/j");
    assert_eq!((up.nonce, up.hop_limit), (Some(3), Some(8)));
}

/// An Interest in an LpPacket: the entry keeps the fragment (a view of the
/// datagram) when it sends it on as received, and neither once it
/// re-encodes it.
#[test]
fn a_re_encoded_fragment_leaves_its_datagram() {
    let mut f = forwarder();
    let datagram = LpPacket::wrap(&interest("/a/lp", Some(1), Some(3)), &LpHeaders::default());
    receive(&mut f, 0, CONSUMER, datagram.clone());
    assert!(datagram.is_unique(), "the PIT holds no view of the datagram");
    assert_eq!(upstream(&f, "/a/lp").hop_limit, Some(2));
}
