//! The daemon at its face limit: a remote producer, idle while nobody asks
//! for its prefix, keeps its face when a new peer needs room, because the
//! daemon tells the I/O layer which faces routes go through; an idle face
//! without routes gives way.

use std::net::{SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

use trajan_router::config::Config;
use trajan_router::daemon::Daemon;
use trajan_router::rib::{Route, ORIGIN_APP};
use trajan_wire::{Interest, Name};

/// A daemon with a UDP listener on loopback only, room for two network
/// faces, and faces giving way after 1 s idle.
fn daemon() -> Daemon {
    let text = "[faces]\nunix_path = \"\"\nudp_listen = [\"127.0.0.1:0\"]\ntcp_listen = []\nmax_faces = 2\nevict_idle_s = 1\n[workers]\ncount = 1\n";
    Daemon::new(&Config::parse(text, "test").unwrap()).unwrap()
}

/// The face of the peer at `peer`, if it has one.
fn face_of(d: &Daemon, peer: &UdpSocket) -> Option<u32> {
    let port = format!(":{}", peer.local_addr().unwrap().port());
    d.io.faces().find(|f| f.remote_uri.ends_with(&port)).map(|f| f.id)
}

/// Sends an Interest from a new peer and runs the daemon until its face is
/// up (or 5 s pass, and the face is missing).
fn peer_heard(d: &mut Daemon, router: SocketAddr, name: &str) -> (UdpSocket, Option<u32>) {
    let peer = UdpSocket::bind("127.0.0.1:0").unwrap();
    peer.send_to(&Interest::new(name.parse::<Name>().unwrap()).encode(), router).unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    while face_of(d, &peer).is_none() && Instant::now() < deadline {
        d.run_once().unwrap();
    }
    let face = face_of(d, &peer);
    (peer, face)
}

#[test]
fn a_producer_with_a_route_keeps_its_face_when_a_new_peer_needs_room() {
    let mut d = daemon();
    let router = d.io.local_addrs().0[0];
    let (_producer, producer_face) = peer_heard(&mut d, router, "/from/producer");
    let producer_face = producer_face.expect("the producer's face");
    let (_other, other_face) = peer_heard(&mut d, router, "/from/other");
    let other_face = other_face.expect("the other peer's face");
    // As rib/register from the producer's face would.
    let route = Route { face: producer_face, origin: ORIGIN_APP, cost: 0, flags: 1, expires_ms: None };
    d.rib.register(&mut d.fwd.fib, &"/producer".parse::<Name>().unwrap(), route);
    d.run_once().unwrap();

    // Both idle past evict_idle_s; the producer the longer.
    std::thread::sleep(Duration::from_millis(1100));
    let (_late, late_face) = peer_heard(&mut d, router, "/from/late");
    assert!(late_face.is_some(), "the new peer has a face");
    let open: Vec<u32> = d.io.faces().map(|f| f.id).collect();
    assert!(open.contains(&producer_face), "the producer's face stays: {open:?}");
    assert!(!open.contains(&other_face), "the face without routes gave way: {open:?}");
}
