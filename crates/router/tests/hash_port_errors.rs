//! A multi-worker router's UDP-port-by-hash face: a peer whose port closed (a
//! killed producer), reached only through the workers' ports, loses its face
//! and its routes when a packet sent to it meets an ICMP port unreachable, as
//! on a listener; a permanent face stays. Every wait is bounded (10 s), and
//! nothing asserts how long anything took.

use std::net::{SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

use trajan_io::{HashPorts, Io, IoConfig, Persistency};
use trajan_router::config::Config;
use trajan_router::daemon::Daemon;
use trajan_router::rib::{Route, ORIGIN_APP};
use trajan_router::workers::Change;
use trajan_wire::data::DataBuilder;
use trajan_wire::{Interest, Name};

/// `count` consecutive loopback ports where nothing listens any more: a
/// port-by-hash neighbour's, closed.
fn closed_hash_ports(count: usize) -> HashPorts {
    let cfg = IoConfig { udp_listen: vec![], tcp_listen: vec![], unix_path: None, hash_ports: Some(HashPorts { base: "127.0.0.1:0".parse().unwrap(), count }), ..IoConfig::default() };
    Io::new(cfg).unwrap().hash_ports().unwrap()
}

/// Two workers, each reading its own port of the hash face, which is the only
/// UDP the router has; and a static route to a dead neighbour's port-by-hash
/// face `kept` (so a permanent face).
fn daemon(kept: HashPorts) -> Daemon {
    let text = format!(
        "[faces]\nunix_path = \"\"\nudp_listen = []\ntcp_listen = []\n[workers]\ncount = 2\nudp_ports = [\"127.0.0.1:0\"]\n\
         [[routes]]\nprefix = \"/kept\"\nface = \"udp4://{}\"\nudp_ports = {}\n",
        kept.base, kept.count
    );
    Daemon::new(&Config::parse(&text, "test").unwrap()).unwrap()
}

fn interest(name: &str) -> bytes::Bytes {
    Interest::new(name.parse::<Name>().unwrap()).encode()
}

/// Runs the daemon until `done` holds (at most 10 s); returns whether it did.
fn run_until(d: &mut Daemon, mut done: impl FnMut(&Daemon) -> bool) -> bool {
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        d.run_once().unwrap();
        if done(d) {
            return true;
        }
    }
    false
}

/// The face whose remote is `remote`, if it has one.
fn face_of(d: &Daemon, remote: SocketAddr) -> Option<u32> {
    d.io.faces().find(|f| f.remote_uri == format!("udp4://{remote}")).map(|f| f.id)
}

/// Registers `prefix` through `face`, in the RIB and every worker's FIB, as
/// `rib/register` does.
fn route(d: &mut Daemon, prefix: &str, face: u32) {
    let prefix: Name = prefix.parse().unwrap();
    d.rib.register(&mut d.fwd.fib, &prefix, Route { face, origin: ORIGIN_APP, cost: 0, flags: 1, expires_ms: None });
    d.workers.as_mut().unwrap().broadcast(Change::route(&d.fwd, &prefix));
}

/// Sends an Interest for `name` from `consumer` to the port of the worker
/// owning it, which forwards it on the route, and runs the daemon until
/// `done` holds.
fn ask(d: &mut Daemon, consumer: &UdpSocket, name: &str, done: impl FnMut(&Daemon) -> bool) -> bool {
    let pkt = interest(name);
    consumer.send_to(&pkt, d.io.hash_ports().unwrap().addr_for(&pkt)).unwrap();
    run_until(d, done)
}

#[test]
fn a_dead_peer_reached_through_the_workers_ports_loses_its_face_and_routes_unless_permanent() {
    let kept = closed_hash_ports(2);
    let mut d = daemon(kept);
    let hash = d.io.hash_ports().unwrap();
    let consumer = UdpSocket::bind("127.0.0.1:0").unwrap();
    let permanent = face_of(&d, kept.base).expect("the static route's face");

    // A producer heard on the second port (an on-demand face, which the I/O
    // thread answers from that port), with a route; then killed. What it
    // sent (unsolicited Data) has no answer that could meet its closed port
    // before the Interest below does.
    let producer = UdpSocket::bind("127.0.0.1:0").unwrap();
    let at = producer.local_addr().unwrap();
    producer.send_to(&DataBuilder::new("/hello/producer".parse().unwrap()).build(b"x"), hash.nth(1)).unwrap();
    assert!(run_until(&mut d, |d| face_of(d, at).is_some()), "the producer's face");
    let on_demand = face_of(&d, at).unwrap();
    route(&mut d, "/producer", on_demand);
    drop(producer);
    assert!(ask(&mut d, &consumer, "/producer/a", |d| d.io.face(on_demand).is_none()), "the dead producer's face stayed");
    assert!(!d.rib.holds(&"/producer".parse().unwrap(), on_demand, ORIGIN_APP), "its route stayed");

    // A neighbour's port-by-hash face, which the worker owning a name sends to
    // from its own port, to ports closed since.
    let gone = closed_hash_ports(2);
    let info = d.io.create_face_ports(&format!("udp4://{}", gone.base), Persistency::Persistent, 2).unwrap();
    d.face_up(&info);
    route(&mut d, "/gone", info.id);
    assert!(ask(&mut d, &consumer, "/gone/a", |d| d.io.face(info.id).is_none()), "the dead neighbour's face stayed");
    assert!(!d.rib.holds(&"/gone".parse().unwrap(), info.id, ORIGIN_APP), "its route stayed");

    // The permanent one stays, with its route, however often it is unreachable.
    assert!(ask(&mut d, &consumer, "/kept/a", |d| d.io.stats().unreachable_kept >= 1), "no error counted for the permanent face");
    assert!(ask(&mut d, &consumer, "/kept/b", |d| d.io.stats().unreachable_kept >= 2), "no error counted for the permanent face");
    assert!(d.io.face(permanent).is_some());
    assert!(d.rib.iter().any(|(prefix, mut routes)| prefix.to_string() == "/kept" && routes.any(|r| r.face == permanent)));
    let s = d.io.stats();
    assert_eq!((s.unreachable_closes, s.udp_errors_ignored), (2, 0));
}
