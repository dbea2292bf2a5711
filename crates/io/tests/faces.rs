//! Faces over real loopback sockets. Every wait is bounded by a count of polls,
//! and nothing asserts how long anything took.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use bytes::Bytes;
use trajan_io::{FaceId, FaceKind, HashPorts, Io, IoConfig, IoError, IoEvent, Persistency, SocketError, WorkerPort, FACE_QUEUE_RESERVE, MAX_FRAME_SIZE, QUEUED_PACKET_OVERHEAD, TCP_CONNECT_TIMEOUT};
use trajan_wire::lp::LpHeaders;
use trajan_wire::tlv::write_tlv;
use trajan_wire::types::DATA;
use trajan_wire::{Interest, LpPacket, Name};

const PEER_TIMEOUT: Option<Duration> = Some(Duration::from_secs(10));

fn config(unix_path: Option<PathBuf>) -> IoConfig {
    IoConfig {
        udp_listen: vec!["127.0.0.1:0".parse().unwrap()],
        tcp_listen: vec!["127.0.0.1:0".parse().unwrap()],
        unix_path,
        udp_idle_timeout: Duration::from_secs(600),
        stream_queue_bytes: 64 << 10,
        burst: 64,
        hash_ports: None,
        ..IoConfig::default()
    }
}

fn addrs(io: &Io) -> (SocketAddr, SocketAddr) {
    let (udp, tcp) = io.local_addrs();
    (udp[0], tcp[0])
}

fn interest(name: &str) -> Bytes {
    Interest::new(name.parse::<Name>().unwrap()).encode()
}

/// One TLV element of `len` bytes in all (the shell only cares about framing).
fn element(len: usize, fill: u8) -> Bytes {
    let header = if len - 2 < 253 { 2 } else { 4 };
    let mut v = Vec::new();
    write_tlv(&mut v, DATA, &vec![fill; len - header]);
    assert_eq!(v.len(), len);
    Bytes::from(v)
}

/// Polls until `done` holds for the events gathered so far (at most ~10 s of polls).
fn poll_until(io: &mut Io, events: &mut Vec<IoEvent>, mut done: impl FnMut(&[IoEvent]) -> bool) {
    for _ in 0..500 {
        io.poll(Some(Duration::from_millis(20)), events).unwrap();
        if done(events) {
            return;
        }
    }
    panic!("condition not reached; events so far: {events:?}");
}

fn packets_from(events: &[IoEvent], face: FaceId) -> Vec<Bytes> {
    events
        .iter()
        .filter_map(|e| match e {
            IoEvent::Packet { face: f, pkt } if *f == face => Some(pkt.clone()),
            _ => None,
        })
        .collect()
}

fn face_ups(events: &[IoEvent]) -> Vec<trajan_io::FaceInfo> {
    events
        .iter()
        .filter_map(|e| match e {
            IoEvent::FaceUp(info) => Some(info.clone()),
            _ => None,
        })
        .collect()
}

fn went_down(events: &[IoEvent], face: FaceId) -> bool {
    events.iter().any(|e| matches!(e, IoEvent::FaceDown(f) if *f == face))
}

fn udp_peer() -> UdpSocket {
    let s = UdpSocket::bind("127.0.0.1:0").unwrap();
    s.set_read_timeout(PEER_TIMEOUT).unwrap();
    s
}

/// Waits for the first stream face to come up.
fn accept_face(io: &mut Io, events: &mut Vec<IoEvent>) -> trajan_io::FaceInfo {
    poll_until(io, events, |ev| !face_ups(ev).is_empty());
    face_ups(events).remove(0)
}

#[test]
fn udp_round_trip_creates_on_demand_face() {
    let mut io = Io::new(config(None)).unwrap();
    let (udp, _) = addrs(&io);
    let peer = udp_peer();
    let i = interest("/udp/round/trip");
    peer.send_to(&i, udp).unwrap();

    let mut events = Vec::new();
    poll_until(&mut io, &mut events, |ev| ev.iter().any(|e| matches!(e, IoEvent::Packet { .. })));
    let IoEvent::FaceUp(info) = &events[0] else { panic!("FaceUp must precede the packet: {events:?}") };
    assert_eq!(info.kind, FaceKind::Udp);
    assert_eq!(info.remote_uri, format!("udp4://{}", peer.local_addr().unwrap()));
    assert_eq!(info.local_uri, format!("udp4://{udp}"));
    assert!(info.local_scope);
    assert_eq!(info.persistency, Persistency::OnDemand);
    assert!(info.id >= trajan_io::FIRST_FACE_ID);
    let face = info.id;
    assert_eq!(packets_from(&events, face), vec![i.clone()]);

    let reply = element(500, 7);
    io.send(face, reply.clone());
    io.flush();
    let mut buf = [0u8; 2000];
    let (n, from) = peer.recv_from(&mut buf).unwrap();
    assert_eq!(&buf[..n], &reply[..]);
    assert_eq!(from, udp);

    // The same peer again: same face, no second FaceUp.
    events.clear();
    peer.send_to(&i, udp).unwrap();
    poll_until(&mut io, &mut events, |ev| !packets_from(ev, face).is_empty());
    assert!(face_ups(&events).is_empty());
    let c = io.counters(face).unwrap();
    assert_eq!((c.in_packets, c.out_packets, c.dropped_in, c.dropped_out), (2, 1, 0, 0));
    assert_eq!(c.in_bytes, 2 * i.len() as u64);
    assert_eq!(c.out_bytes, reply.len() as u64);
}

#[test]
fn udp_reads_in_bounded_batches() {
    let mut cfg = config(None);
    cfg.burst = 8;
    let mut io = Io::new(cfg).unwrap();
    let (udp, _) = addrs(&io);
    let peer = udp_peer();
    let sent: Vec<Bytes> = (0..100).map(|n| interest(&format!("/batch/{n}"))).collect();
    for p in &sent {
        peer.send_to(p, udp).unwrap();
    }
    let mut all = Vec::new();
    for _ in 0..500 {
        let mut events = Vec::new();
        io.poll(Some(Duration::from_millis(20)), &mut events).unwrap();
        let packets = events.iter().filter(|e| matches!(e, IoEvent::Packet { .. })).count();
        assert!(packets <= 8, "one socket gave {packets} packets in one poll");
        all.extend(events);
        if all.iter().filter(|e| matches!(e, IoEvent::Packet { .. })).count() == sent.len() {
            break;
        }
    }
    let face = face_ups(&all)[0].id;
    assert_eq!(packets_from(&all, face), sent);
}

#[test]
fn malformed_datagrams_are_counted_and_dropped() {
    let mut io = Io::new(config(None)).unwrap();
    let (udp, _) = addrs(&io);
    let peer = udp_peer();

    // From an unknown peer: no face is made for garbage.
    peer.send_to(&[0xff, 0xff], udp).unwrap();
    let stranger = udp_peer();
    stranger.send_to(&interest("/hello"), udp).unwrap();
    let mut events = Vec::new();
    poll_until(&mut io, &mut events, |ev| face_ups(ev).len() == 1 && ev.iter().any(|e| matches!(e, IoEvent::Packet { .. })));
    assert_eq!(face_ups(&events)[0].remote_uri, format!("udp4://{}", stranger.local_addr().unwrap()));
    assert_eq!(io.stats().unknown_peer_drops, 1);

    // From a known peer: each is charged to its face.
    let face = face_ups(&events)[0].id;
    let good = interest("/still/fine");
    let mut trailing = good.to_vec();
    trailing.push(0);
    let truncated = &good[..good.len() - 1];
    let oversize = vec![6u8; MAX_FRAME_SIZE + 100];
    let empty: &[u8] = &[];
    for bad in [&trailing[..], truncated, &oversize[..], empty] {
        stranger.send_to(bad, udp).unwrap();
    }
    stranger.send_to(&good, udp).unwrap();
    let sent = [interest("/hello").len(), trailing.len(), truncated.len(), oversize.len(), 0, good.len()].iter().sum::<usize>();
    events.clear();
    poll_until(&mut io, &mut events, |ev| !packets_from(ev, face).is_empty());
    assert_eq!(packets_from(&events, face), vec![good]);
    let c = io.counters(face).unwrap();
    assert_eq!(c.dropped_in, 4);
    assert_eq!(c.in_packets, 6);
    // Bytes are what the peer sent, an oversize datagram's whole length
    // included, not the part of it that fit the receive buffer.
    assert_eq!(c.in_bytes, sent as u64);
}

#[test]
fn fragments_over_udp_are_reassembled() {
    let mut io = Io::new(config(None)).unwrap();
    let (udp, _) = addrs(&io);
    let peer = udp_peer();
    let packet = element(4000, 9);
    let token = Bytes::from_static(b"\x01\x02\x03\x04");
    let pieces: Vec<Bytes> = packet
        .chunks(1400)
        .enumerate()
        .map(|(i, chunk)| {
            let lp = LpPacket {
                headers: if i == 0 { LpHeaders { pit_token: Some(token.clone()), ..Default::default() } } else { LpHeaders::default() },
                sequence: Some(77 + i as u64),
                frag_index: Some(i as u64),
                frag_count: Some(3),
                fragment: Some(Bytes::copy_from_slice(chunk)),
            };
            let mut out = Vec::new();
            lp.encode_into(&mut out);
            Bytes::from(out)
        })
        .collect();
    assert_eq!(pieces.len(), 3);
    // Out of order, with a duplicate that must be counted and ignored.
    for p in [&pieces[2], &pieces[0], &pieces[0], &pieces[1]] {
        peer.send_to(p, udp).unwrap();
    }
    let mut events = Vec::new();
    poll_until(&mut io, &mut events, |ev| ev.iter().any(|e| matches!(e, IoEvent::Packet { .. })));
    let face = face_ups(&events)[0].id;
    let got = packets_from(&events, face);
    assert_eq!(got.len(), 1);
    let lp = LpPacket::decode(&got[0]).unwrap();
    assert_eq!(lp.headers.pit_token, Some(token));
    assert_eq!(lp.fragment, Some(packet));
    let c = io.counters(face).unwrap();
    assert_eq!((c.in_packets, c.dropped_in), (4, 1));
}

/// Polls until `done` holds for the shell itself (at most ~10 s of polls).
fn poll_io_until(io: &mut Io, events: &mut Vec<IoEvent>, mut done: impl FnMut(&Io, &[IoEvent]) -> bool) {
    for _ in 0..500 {
        io.poll(Some(Duration::from_millis(20)), events).unwrap();
        if done(io, events) {
            return;
        }
    }
    panic!("condition not reached; events so far: {events:?}");
}

/// Fragment `index` of 2 of the packet whose first fragment has Sequence `base`.
fn fragment(base: u64, index: u64, piece: &[u8]) -> Bytes {
    let lp = LpPacket {
        sequence: Some(base + index),
        frag_index: Some(index),
        frag_count: Some(2),
        fragment: Some(Bytes::copy_from_slice(piece)),
        ..Default::default()
    };
    let mut out = Vec::new();
    lp.encode_into(&mut out);
    Bytes::from(out)
}

#[test]
fn fragments_of_every_face_share_one_budget() {
    // Room for one 3,100-byte packet in progress, not for the first
    // fragments of two: the newer takes the older one's place.
    let mut io = Io::new(IoConfig { reassembly_bytes: 5000, ..config(None) }).unwrap();
    let (udp, _) = addrs(&io);
    let (a, b) = (udp_peer(), udp_peer());
    let packet = element(3100, 5);
    let (head, tail) = packet.split_at(3000);
    let mut events = Vec::new();
    a.send_to(&fragment(10, 0, head), udp).unwrap();
    poll_io_until(&mut io, &mut events, |io, _| io.reassembly_held() > 0);
    let face_a = face_ups(&events)[0].id;
    b.send_to(&fragment(20, 0, head), udp).unwrap();
    poll_until(&mut io, &mut events, |ev| face_ups(ev).len() == 2);
    let face_b = face_ups(&events)[1].id;
    assert_eq!(io.counters(face_b).unwrap().dropped_in, 0, "b's fragment took the place of a's older packet");
    assert!(io.reassembly_held() <= 5000);

    // b's packet completes and gives its bytes back; a's, sent again, then fits.
    b.send_to(&fragment(20, 1, tail), udp).unwrap();
    poll_until(&mut io, &mut events, |ev| !packets_from(ev, face_b).is_empty());
    assert_eq!(io.reassembly_held(), 0);
    for index in 0..2 {
        a.send_to(&fragment(30, index, [head, tail][index as usize]), udp).unwrap();
    }
    poll_until(&mut io, &mut events, |ev| !packets_from(ev, face_a).is_empty());
    assert_eq!(packets_from(&events, face_a), vec![packet.clone()]);
    assert_eq!(packets_from(&events, face_b), vec![packet.clone()]);

    // A fragment whose siblings never come is given up even if its face falls silent.
    a.send_to(&fragment(40, 0, head), udp).unwrap();
    poll_io_until(&mut io, &mut events, |io, _| io.reassembly_held() > 0);
    poll_io_until(&mut io, &mut events, |io, _| io.reassembly_held() == 0);
    assert!(io.face(face_a).is_some());
}

#[test]
fn new_network_peers_beyond_the_face_limit_are_refused_and_counted() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nfd.sock");
    let mut io = Io::new(IoConfig { max_faces: 2, ..config(Some(path.clone())) }).unwrap();
    let (udp, tcp) = addrs(&io);
    let mut events = Vec::new();
    // A face management makes counts toward the limit.
    let made = udp_peer();
    let made = io.create_face(&format!("udp4://{}", made.local_addr().unwrap()), Persistency::Persistent).unwrap();
    let first = udp_peer();
    first.send_to(&interest("/first"), udp).unwrap();
    poll_until(&mut io, &mut events, |ev| face_ups(ev).len() == 1);
    let first_face = face_ups(&events)[0].id;

    // At the limit: a new UDP peer and a new TCP connection are refused...
    let late = udp_peer();
    late.send_to(&interest("/late"), udp).unwrap();
    let mut refused = TcpStream::connect(tcp).unwrap();
    refused.set_read_timeout(PEER_TIMEOUT).unwrap();
    poll_io_until(&mut io, &mut events, |io, _| io.stats().face_limit_drops == 2);
    let closed = refused.read(&mut [0; 1]);
    assert!(matches!(&closed, Ok(0)) || matches!(&closed, Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset), "{closed:?}");
    // ...while a known peer is still heard, and a local application still connects.
    first.send_to(&interest("/first/again"), udp).unwrap();
    poll_until(&mut io, &mut events, |ev| packets_from(ev, first_face).len() == 2);
    let _app = UnixStream::connect(&path).unwrap();
    poll_until(&mut io, &mut events, |ev| face_ups(ev).iter().any(|f| f.kind == FaceKind::Unix));
    assert_eq!(face_ups(&events).len(), 2);
    assert_eq!(io.faces().count(), 3);

    // Below the limit again, the late peer gets its face.
    assert!(io.destroy_face(made.id) && io.destroy_face(first_face));
    late.send_to(&interest("/late/again"), udp).unwrap();
    poll_until(&mut io, &mut events, |ev| face_ups(ev).len() == 3);
    let late_face = face_ups(&events).remove(2);
    assert_eq!(late_face.remote_uri, format!("udp4://{}", late.local_addr().unwrap()));
    assert_eq!(packets_from(&events, late_face.id), vec![interest("/late/again")]);
    assert_eq!(io.stats().face_limit_drops, 2);
}

#[test]
fn idle_on_demand_udp_faces_expire_but_persistent_ones_stay() {
    let mut cfg = config(None);
    cfg.udp_idle_timeout = Duration::from_millis(100);
    let mut io = Io::new(cfg).unwrap();
    let (udp, _) = addrs(&io);
    let kept = udp_peer();
    let persistent = io.create_face(&format!("udp4://{}", kept.local_addr().unwrap()), Persistency::Persistent).unwrap();
    let peer = udp_peer();
    peer.send_to(&interest("/soon/idle"), udp).unwrap();
    let mut events = Vec::new();
    poll_until(&mut io, &mut events, |ev| !face_ups(ev).is_empty());
    let on_demand = face_ups(&events)[0].id;
    poll_until(&mut io, &mut events, |ev| went_down(ev, on_demand));
    assert!(io.face(on_demand).is_none());
    assert!(io.face(persistent.id).is_some());
    assert!(!went_down(&events, persistent.id));
}

/// An address on `ip` where nothing listens any more: a socket's, closed.
fn closed_port(ip: &str) -> SocketAddr {
    let gone = UdpSocket::bind((ip, 0)).unwrap();
    gone.local_addr().unwrap()
}

/// Sends one packet on `face` and hands it to the kernel.
fn send_now(io: &mut Io, face: FaceId, pkt: Bytes) {
    io.send(face, pkt);
    io.flush();
}

#[test]
fn a_udp_face_whose_peer_port_closed_goes_down_unless_permanent() {
    let mut io = Io::new(config(None)).unwrap();
    let (udp, _) = addrs(&io);
    let mut events = Vec::new();

    // A peer that opened an on-demand face, then was killed.
    let peer = udp_peer();
    peer.send_to(&interest("/producer/hello"), udp).unwrap();
    poll_until(&mut io, &mut events, |ev| !face_ups(ev).is_empty());
    let on_demand = face_ups(&events)[0].id;
    drop(peer);
    send_now(&mut io, on_demand, interest("/producer/a"));
    poll_until(&mut io, &mut events, |ev| went_down(ev, on_demand));
    assert!(io.face(on_demand).is_none());

    // Faces management made: a persistent one closes the same way, a
    // permanent one stays however often its peer is unreachable.
    let persistent = io.create_face(&format!("udp4://{}", closed_port("127.0.0.1")), Persistency::Persistent).unwrap().id;
    let permanent = io.create_face(&format!("udp4://{}", closed_port("127.0.0.1")), Persistency::Permanent).unwrap().id;
    send_now(&mut io, persistent, interest("/producer/b"));
    poll_until(&mut io, &mut events, |ev| went_down(ev, persistent));
    for kept in 1..=3 {
        send_now(&mut io, permanent, interest("/producer/c"));
        poll_io_until(&mut io, &mut events, |io, _| io.stats().unreachable_kept == kept);
    }
    assert!(io.face(permanent).is_some());
    assert!(!went_down(&events, permanent));
    let s = io.stats();
    assert_eq!((s.unreachable_closes, s.unreachable_kept, s.udp_errors_ignored), (2, 3, 0));
}

/// A peer's last datagram, read with the error its closed port left (the
/// read the error failed reads the datagrams behind it at once), is taken
/// before the error closes the face: the other way round, it made the face
/// again, without its routes, until the idle timeout.
#[test]
fn a_dead_peers_last_datagram_does_not_make_its_face_again() {
    let mut io = Io::new(config(None)).unwrap();
    let (udp, _) = addrs(&io);
    let mut events = Vec::new();
    let peer = udp_peer();
    let uri = format!("udp4://{}", peer.local_addr().unwrap());
    peer.send_to(&interest("/producer/hello"), udp).unwrap();
    poll_until(&mut io, &mut events, |ev| !face_ups(ev).is_empty());
    let face = face_ups(&events)[0].id;
    // Its last datagram waits unread when the error its closed port draws comes.
    peer.send_to(&interest("/producer/last"), udp).unwrap();
    drop(peer);
    send_now(&mut io, face, interest("/producer/a"));
    poll_until(&mut io, &mut events, |ev| went_down(ev, face));
    assert_eq!(packets_from(&events, face).len(), 2, "the last datagram reached the face before it went down");
    io.poll(Some(Duration::from_millis(50)), &mut events).unwrap();
    assert_eq!(face_ups(&events).iter().filter(|f| f.remote_uri == uri).count(), 1, "no face made again for {uri}");
    assert!(io.faces().all(|f| f.remote_uri != uri));
}

#[test]
fn an_unreachable_peer_costs_other_peers_nothing() {
    let mut io = Io::new(config(None)).unwrap();
    let (udp, _) = addrs(&io);
    let live = udp_peer();
    let face = io.create_face(&format!("udp4://{}", live.local_addr().unwrap()), Persistency::Persistent).unwrap().id;
    let dead = io.create_face(&format!("udp4://{}", closed_port("127.0.0.1")), Persistency::Permanent).unwrap().id;
    // The error the dead peer's port leaves on the shared socket must not take
    // the place of the next datagram, in the same `sendmmsg` or the next one.
    send_now(&mut io, dead, interest("/dead/1"));
    send_now(&mut io, face, interest("/live/1"));
    io.send(dead, interest("/dead/2"));
    io.send(face, interest("/live/2"));
    io.flush();
    let mut buf = [0u8; 1000];
    for name in ["/live/1", "/live/2"] {
        let (n, _) = live.recv_from(&mut buf).unwrap();
        assert_eq!(&buf[..n], &interest(name)[..]);
    }
    let c = io.counters(face).unwrap();
    assert_eq!((c.out_packets, c.dropped_out), (2, 0));
    let mut events = Vec::new();
    poll_io_until(&mut io, &mut events, |io, _| io.stats().unreachable_kept == 2);
    // Nor the place of a datagram that arrived before it, in a receive.
    live.send_to(&interest("/live/back"), udp).unwrap();
    send_now(&mut io, dead, interest("/dead/3"));
    poll_until(&mut io, &mut events, |ev| !packets_from(ev, face).is_empty());
    poll_io_until(&mut io, &mut events, |io, _| io.stats().unreachable_kept == 3);
    assert!(events.iter().all(|e| !matches!(e, IoEvent::FaceDown(_))), "{events:?}");
}

#[test]
fn an_ipv6_udp_face_whose_peer_port_closed_goes_down() {
    let Ok(mut io) = Io::new(IoConfig { udp_listen: vec!["[::1]:0".parse().unwrap()], ..config(None) }) else {
        eprintln!("no IPv6 loopback here; skipped");
        return;
    };
    let face = io.create_face(&format!("udp6://{}", closed_port("::1")), Persistency::Persistent).unwrap().id;
    send_now(&mut io, face, interest("/producer/v6"));
    let mut events = Vec::new();
    poll_until(&mut io, &mut events, |ev| went_down(ev, face));
    assert_eq!(io.stats().unreachable_closes, 1);
}

/// Only the UDP-port-by-hash face's `count` ports, on loopback.
fn hash_only(count: usize) -> IoConfig {
    IoConfig { udp_listen: vec![], tcp_listen: vec![], hash_ports: Some(HashPorts { base: "127.0.0.1:0".parse().unwrap(), count }), ..config(None) }
}

/// `count` consecutive ports on loopback where nothing listens any more: a
/// port-by-hash neighbour's, closed.
fn closed_hash_ports(count: usize) -> HashPorts {
    let gone = Io::new(hash_only(count)).unwrap();
    gone.hash_ports().unwrap()
}

/// What a worker reads of its port's error queue once its poller reports an
/// error, as the router's workers do (at most ~10 s of polls).
fn worker_reads_errors(poll: &mut mio::Poll, port: &mut WorkerPort) -> Vec<SocketError> {
    let mut events = mio::Events::with_capacity(4);
    let mut errors = Vec::new();
    for _ in 0..500 {
        poll.poll(&mut events, Some(Duration::from_millis(20))).unwrap();
        port.errors(events.iter().any(|e| e.is_error()), &mut errors);
        if !errors.is_empty() {
            return errors;
        }
    }
    panic!("the worker's poller reported no error");
}

#[test]
fn a_hash_port_peer_whose_port_closed_goes_down_while_the_io_thread_reads_the_ports() {
    // Before the workers take them (a single-worker router never hands them
    // out), the I/O thread reads the hash face's ports like listeners.
    let mut io = Io::new(hash_only(2)).unwrap();
    let hash = io.hash_ports().unwrap();
    let mut events = Vec::new();
    let peer = udp_peer();
    peer.send_to(&interest("/producer/hello"), hash.nth(1)).unwrap();
    poll_until(&mut io, &mut events, |ev| !face_ups(ev).is_empty());
    let on_demand = face_ups(&events)[0].id;
    drop(peer);
    // Sent from the second port, which the peer used: the error is that port's.
    send_now(&mut io, on_demand, interest("/producer/a"));
    poll_until(&mut io, &mut events, |ev| went_down(ev, on_demand));
    let permanent = io.create_face(&format!("udp4://{}", closed_port("127.0.0.1")), Persistency::Permanent).unwrap().id;
    send_now(&mut io, permanent, interest("/producer/b"));
    poll_io_until(&mut io, &mut events, |io, _| io.stats().unreachable_kept == 1);
    assert!(io.face(permanent).is_some());
    let s = io.stats();
    assert_eq!((s.unreachable_closes, s.unreachable_kept, s.udp_errors_ignored), (1, 1, 0));
}

#[test]
fn a_port_by_hash_face_goes_down_unless_permanent_when_its_worker_reads_the_error() {
    let mut io = Io::new(hash_only(2)).unwrap();
    let mut ports = io.worker_ports(Duration::ZERO).unwrap();
    let mut poll = mio::Poll::new().unwrap();
    ports[0].register(poll.registry(), mio::Token(0)).unwrap();
    // Neighbours' port-by-hash faces, to ports closed since: worker 0 sends
    // to them itself, from its port, as a worker does.
    let (gone, kept) = (closed_hash_ports(2), closed_hash_ports(2));
    let persistent = io.create_face_ports(&format!("udp4://{}", gone.base), Persistency::Persistent, 2).unwrap().id;
    let permanent = io.create_face_ports(&format!("udp4://{}", kept.base), Persistency::Permanent, 2).unwrap().id;
    let mut events = Vec::new();
    for (face, to, downs) in [(persistent, gone.nth(1), true), (permanent, kept.nth(0), false)] {
        ports[0].queue(face, to, interest("/n/a"));
        ports[0].flush(|_, _, sent| assert!(sent));
        let errors = worker_reads_errors(&mut poll, &mut ports[0]);
        assert_eq!(errors, [SocketError::PortUnreachable(to)]);
        // The worker hands them over; the faces are the I/O thread's.
        io.hash_errors(0, errors, &mut events);
        assert_eq!(went_down(&events, face), downs, "{events:?}");
        assert_eq!(io.face(face).is_none(), downs);
    }
    let s = io.stats();
    assert_eq!((s.unreachable_closes, s.unreachable_kept, s.udp_errors_ignored), (1, 1, 0));
    // The queue was read dry: the poller has nothing more to report.
    poll.poll(&mut mio::Events::with_capacity(4), Some(Duration::ZERO)).unwrap();
    let mut left = Vec::new();
    assert!(!ports[0].errors(false, &mut left) && left.is_empty());
}

#[test]
fn a_send_of_the_io_thread_that_meets_an_error_on_a_workers_port_reads_it_there() {
    // The workers are busy or asleep and read nothing: the I/O thread, whose
    // own send on the port met the error's mark, reads the queue itself.
    let mut io = Io::new(hash_only(2)).unwrap();
    let _ports = io.worker_ports(Duration::ZERO).unwrap();
    // Faces made here send from the hash face's first port.
    let persistent = io.create_face(&format!("udp4://{}", closed_port("127.0.0.1")), Persistency::Persistent).unwrap().id;
    let live = udp_peer();
    let face = io.create_face(&format!("udp4://{}", live.local_addr().unwrap()), Persistency::Persistent).unwrap().id;
    send_now(&mut io, persistent, interest("/dead/1"));
    let mut events = Vec::new();
    let mut buf = [0u8; 1000];
    for _ in 0..500 {
        // Each reaches the live peer even when its send met the error.
        send_now(&mut io, face, interest("/live"));
        let (n, _) = live.recv_from(&mut buf).unwrap();
        assert_eq!(&buf[..n], &interest("/live")[..]);
        io.poll(Some(Duration::from_millis(20)), &mut events).unwrap();
        if went_down(&events, persistent) {
            break;
        }
    }
    assert!(went_down(&events, persistent), "{events:?}");
    assert!(io.face(face).is_some());
    assert_eq!(io.counters(face).unwrap().dropped_out, 0);
    assert_eq!(io.stats().unreachable_closes, 1);
}

#[test]
fn a_worker_reads_its_ports_error_queue_in_bounded_batches_and_dry() {
    let mut io = Io::new(hash_only(1)).unwrap();
    let mut ports = io.worker_ports(Duration::ZERO).unwrap();
    let port = &mut ports[0];
    let mut poll = mio::Poll::new().unwrap();
    port.register(poll.registry(), mio::Token(0)).unwrap();
    let dead = closed_port("127.0.0.1");
    let mut events = mio::Events::with_capacity(4);
    // More errors than one batch, each seen queued before the next is asked
    // for (a lost ICMP message, rate-limited, is asked for again).
    let (want, mut queued) = (70, 0);
    for _ in 0..10 * want {
        if queued == want {
            break;
        }
        port.queue(0, dead, interest("/dead"));
        port.flush(|_, _, _| {});
        poll.poll(&mut events, Some(Duration::from_millis(100))).unwrap();
        queued += usize::from(events.iter().any(|e| e.is_error()));
    }
    assert_eq!(queued, want);
    let mut errors = Vec::new();
    assert!(port.errors(true, &mut errors), "one batch leaves the rest for the next call");
    assert_eq!(errors.len(), 64);
    while port.errors(false, &mut errors) {}
    assert_eq!(errors.len(), want);
    assert!(errors.iter().all(|e| *e == SocketError::PortUnreachable(dead)));
    // Dry: the poller reports no error again, so a worker sleeps.
    poll.poll(&mut events, Some(Duration::ZERO)).unwrap();
    assert!(events.iter().all(|e| !e.is_error()), "{events:?}");
}

#[test]
fn at_the_face_limit_an_idle_udp_peer_gives_way_to_a_tcp_one() {
    let evict_idle = Duration::from_millis(200);
    let mut io = Io::new(IoConfig { max_faces: 1, evict_idle, ..config(None) }).unwrap();
    let (udp, tcp) = addrs(&io);
    let peer = udp_peer();
    peer.send_to(&interest("/soon/idle"), udp).unwrap();
    let mut events = Vec::new();
    poll_until(&mut io, &mut events, |ev| !face_ups(ev).is_empty());
    let idle = face_ups(&events)[0].id;
    std::thread::sleep(evict_idle + Duration::from_millis(50));

    let mut conn = TcpStream::connect(tcp).unwrap();
    poll_until(&mut io, &mut events, |ev| face_ups(ev).len() == 2);
    assert!(went_down(&events, idle));
    assert!(io.face(idle).is_none());
    assert_eq!((io.stats().idle_evictions, io.stats().face_limit_drops), (1, 0));
    let face = face_ups(&events)[1].id;
    conn.write_all(&interest("/in/its/place")).unwrap();
    poll_until(&mut io, &mut events, |ev| !packets_from(ev, face).is_empty());
}

#[test]
fn create_udp_face_sends_from_the_listener_and_upgrades() {
    let mut io = Io::new(config(None)).unwrap();
    let (udp, _) = addrs(&io);
    let peer = udp_peer();
    let uri = format!("udp4://{}", peer.local_addr().unwrap());
    let info = io.create_face(&uri, Persistency::Persistent).unwrap();
    assert_eq!((info.kind, info.persistency, info.remote_uri.as_str()), (FaceKind::Udp, Persistency::Persistent, uri.as_str()));

    let out = interest("/to/peer");
    io.send(info.id, out.clone());
    io.flush();
    let mut buf = [0u8; 1000];
    let (n, from) = peer.recv_from(&mut buf).unwrap();
    assert_eq!((&buf[..n], from), (&out[..], udp));

    let back = element(100, 1);
    peer.send_to(&back, udp).unwrap();
    let mut events = Vec::new();
    poll_until(&mut io, &mut events, |ev| !packets_from(ev, info.id).is_empty());
    assert!(face_ups(&events).is_empty(), "the reply must arrive on the created face");

    assert_eq!(io.create_face(&uri, Persistency::OnDemand).unwrap().persistency, Persistency::Persistent);
    let other_ports = io.create_face_ports(&uri, Persistency::Permanent, 4);
    assert!(matches!(other_ports, Err(IoError::OtherPorts { face, has: 1, wanted: 4, .. }) if face == info.id), "{other_ports:?}");
    assert_eq!(io.face(info.id).unwrap().persistency, Persistency::Persistent, "a refused face is left as it was");
    let upgraded = io.create_face(&uri, Persistency::Permanent).unwrap();
    assert_eq!((upgraded.id, upgraded.persistency), (info.id, Persistency::Permanent));
    assert_eq!(io.faces().count(), 1);
}

#[test]
fn a_port_by_hash_neighbour_is_one_face_sent_to_by_name() {
    let two_ports = || IoConfig { hash_ports: Some(HashPorts { base: "127.0.0.1:0".parse().unwrap(), count: 2 }), ..config(None) };
    let mut io = Io::new(two_ports()).unwrap();
    let mut neighbour = Io::new(two_ports()).unwrap();
    let theirs = neighbour.hash_ports().unwrap();
    let info = io.create_face_ports(&format!("udp4://{}", theirs.base), Persistency::Permanent, 2).unwrap();
    assert!(io.create_face_ports(&format!("tcp4://{}", theirs.base), Persistency::Permanent, 2).is_err());
    assert_eq!(io.hash_peer(info.id), Some(theirs));
    // Each Interest goes to the neighbour's port its name hashes to.
    let mut sent = [0usize; 2];
    for i in 0..40 {
        let pkt = interest(&format!("/n/obj{i}/seg=0"));
        sent[usize::from(theirs.addr_for(&pkt) != theirs.base)] += 1;
        io.send(info.id, pkt);
    }
    io.flush();
    assert!(sent[0] > 0 && sent[1] > 0, "{sent:?}");
    for (k, port) in neighbour.worker_ports(Duration::ZERO).unwrap().iter_mut().enumerate() {
        let mut got = Vec::new();
        for _ in 0..500 {
            port.recv(&mut got);
            if got.len() >= sent[k] {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        assert_eq!(got.len(), sent[k], "port {k}");
        // An answer from either of the neighbour's ports belongs to the one face.
        port.queue(0, got[0].from, element(50, k as u8));
        port.flush(|_, _, sent| assert!(sent));
    }
    let mut events = Vec::new();
    poll_until(&mut io, &mut events, |ev| packets_from(ev, info.id).len() == 2);
    assert!(face_ups(&events).is_empty(), "{events:?}");
}

#[test]
fn create_face_rejects_what_it_cannot_open() {
    let mut io = Io::new(config(None)).unwrap();
    for uri in ["ether://[01:02:03:04:05:06]", "udp4://localhost:6363", "unix:///tmp/x.sock"] {
        assert!(matches!(io.create_face(uri, Persistency::Persistent), Err(IoError::BadUri { .. })), "{uri}");
    }
    assert!(matches!(io.create_face("udp6://[::1]:6363", Persistency::Persistent), Err(IoError::NoUdpChannel { .. })));
}

#[test]
fn create_tcp_face_connects_and_carries_packets() {
    let mut io = Io::new(config(None)).unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let remote = listener.local_addr().unwrap();
    let out = interest("/over/tcp");
    let back = element(3000, 4);
    let (expect, reply) = (out.clone(), back.clone());
    let peer = std::thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        s.set_read_timeout(PEER_TIMEOUT).unwrap();
        let mut buf = vec![0u8; expect.len()];
        s.read_exact(&mut buf).unwrap();
        assert_eq!(buf, expect);
        s.write_all(&reply).unwrap();
        // Stay connected until the router closes the face.
        let mut rest = Vec::new();
        s.read_to_end(&mut rest).unwrap();
    });

    let info = io.create_face(&format!("tcp4://{remote}"), Persistency::Persistent).unwrap();
    assert_eq!((info.kind, info.remote_uri.clone()), (FaceKind::Tcp, format!("tcp4://{remote}")));
    assert!(info.local_scope);
    assert!(io.is_connecting(info.id));
    // Queued while the connection is still being set up.
    io.send(info.id, out);
    io.flush();
    let mut events = Vec::new();
    poll_until(&mut io, &mut events, |ev| !packets_from(ev, info.id).is_empty());
    assert_eq!(packets_from(&events, info.id), vec![back]);
    // The connection is reported once, before the face's first packet.
    let connected: Vec<usize> = (0..events.len()).filter(|&i| matches!(events[i], IoEvent::Connected(f) if f == info.id)).collect();
    let first_packet = events.iter().position(|e| matches!(e, IoEvent::Packet { .. })).unwrap();
    assert!(connected.len() == 1 && connected[0] < first_packet, "{events:?}");
    assert!(!io.is_connecting(info.id));
    assert_eq!(io.create_face(&format!("tcp4://{remote}"), Persistency::Persistent).unwrap().id, info.id);
    assert!(io.destroy_face(info.id));
    assert!(!io.destroy_face(info.id));
    peer.join().unwrap();
}

fn connect_failure(events: &[IoEvent], face: FaceId) -> Option<&str> {
    events.iter().find_map(|e| match e {
        IoEvent::ConnectFailed { face: f, reason } if *f == face => Some(reason.as_str()),
        _ => None,
    })
}

#[test]
fn refused_tcp_connect_reports_why_and_removes_the_face() {
    let mut io = Io::new(config(None)).unwrap();
    let closed = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    match io.create_face(&format!("tcp4://{closed}"), Persistency::Persistent) {
        Ok(info) => {
            let mut events = Vec::new();
            poll_until(&mut io, &mut events, |ev| connect_failure(ev, info.id).is_some());
            let reason = connect_failure(&events, info.id).unwrap();
            assert!(reason.contains("refused"), "{reason}");
            assert!(io.face(info.id).is_none() && !io.is_connecting(info.id));
            assert!(!went_down(&events, info.id), "a face that never connected does not also go down: {events:?}");
        }
        Err(e) => assert!(matches!(e, IoError::Connect { .. }), "{e}"),
    }
}

/// A permanent TCP face this side dialed outlives its connection, as NFD's do:
/// refused, it redials until the peer listens; hung up on, it redials again;
/// what is sent between connections is dropped and counted.
#[test]
fn permanent_tcp_face_redials_until_the_peer_listens_and_after_it_hangs_up() {
    let mut io = Io::new(config(None)).unwrap();
    let remote = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let info = io.create_face(&format!("tcp4://{remote}"), Persistency::Permanent).unwrap();
    let mut events = Vec::new();
    poll_until(&mut io, &mut events, |ev| connect_failure(ev, info.id).is_some());
    assert!(io.face(info.id).is_some() && !went_down(&events, info.id), "{events:?}");
    io.send(info.id, interest("/between/connections"));
    assert_eq!(io.counters(info.id).unwrap().dropped_out, 1);

    let listener = TcpListener::bind(remote).unwrap();
    let connected = |ev: &[IoEvent]| ev.iter().any(|e| matches!(e, IoEvent::Connected(f) if *f == info.id));
    events.clear();
    poll_until(&mut io, &mut events, connected);
    let (mut peer, _) = listener.accept().unwrap();
    peer.set_read_timeout(PEER_TIMEOUT).unwrap();
    let out = interest("/over/the/redialed/face");
    io.send(info.id, out.clone());
    io.flush();
    let mut buf = vec![0u8; out.len()];
    peer.read_exact(&mut buf).unwrap();
    assert_eq!(buf, out);

    drop(peer);
    events.clear();
    poll_until(&mut io, &mut events, connected);
    assert!(!went_down(&events, info.id), "{events:?}");
    assert_eq!(io.face(info.id).unwrap().persistency, Persistency::Permanent);
    assert!(io.destroy_face(info.id));
}

/// A listener whose accept queue is full (backlog 0, one connection waiting)
/// drops further SYNs, so a connect to it neither succeeds nor fails: the face
/// is given up after [`TCP_CONNECT_TIMEOUT`].
#[test]
fn tcp_connect_that_never_completes_is_given_up() {
    let listener = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    listener.bind(&"127.0.0.1:0".parse::<SocketAddr>().unwrap().into()).unwrap();
    listener.listen(0).unwrap();
    let remote = listener.local_addr().unwrap().as_socket().unwrap();
    // Fill the accept queue: connects that complete at once, until one does not.
    let mut queued = Vec::new();
    for _ in 0..8 {
        let s = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
        if s.connect_timeout(&remote.into(), Duration::from_millis(300)).is_err() {
            break;
        }
        queued.push(s);
    }
    let mut io = Io::new(config(None)).unwrap();
    let info = io.create_face(&format!("tcp4://{remote}"), Persistency::Persistent).unwrap();
    let mut events = Vec::new();
    poll_until(&mut io, &mut events, |ev| connect_failure(ev, info.id).is_some());
    let reason = connect_failure(&events, info.id).unwrap();
    assert!(reason.contains(&format!("not connected within {} s", TCP_CONNECT_TIMEOUT.as_secs())), "{reason}");
    assert!(io.face(info.id).is_none() && !io.is_connecting(info.id));
    assert!(!events.iter().any(|e| matches!(e, IoEvent::Connected(_))), "{events:?}");
}

/// Framing checks shared by TCP and Unix faces: one packet written a byte at a
/// time, then several in one write, then a reply.
fn check_stream_framing<S: Read + Write>(io: &mut Io, client: &mut S, kind: FaceKind) -> FaceId {
    let mut events = Vec::new();
    let info = accept_face(io, &mut events);
    assert_eq!(info.kind, kind);
    assert!(info.local_scope);
    let face = info.id;

    let first = element(1000, 1);
    for byte in first.iter() {
        client.write_all(&[*byte]).unwrap();
        io.poll(Some(Duration::ZERO), &mut events).unwrap();
    }
    let batch: Vec<Bytes> = vec![interest("/a"), element(8000, 2), interest("/b/c"), element(300, 3)];
    client.write_all(&batch.concat()).unwrap();
    let expected: Vec<Bytes> = std::iter::once(first).chain(batch).collect();
    poll_until(io, &mut events, |ev| packets_from(ev, face).len() >= expected.len());
    assert_eq!(packets_from(&events, face), expected);
    assert_eq!(io.counters(face).unwrap().in_packets, expected.len() as u64);

    let reply = element(7000, 5);
    io.send(face, reply.clone());
    io.flush();
    let mut buf = vec![0u8; reply.len()];
    client.read_exact(&mut buf).unwrap();
    assert_eq!(buf, reply);
    face
}

#[test]
fn tcp_stream_framing() {
    let mut io = Io::new(config(None)).unwrap();
    let (_, tcp) = addrs(&io);
    let mut client = TcpStream::connect(tcp).unwrap();
    client.set_nodelay(true).unwrap();
    client.set_read_timeout(PEER_TIMEOUT).unwrap();
    let face = check_stream_framing(&mut io, &mut client, FaceKind::Tcp);
    let info = io.face(face).unwrap();
    assert_eq!(info.remote_uri, format!("tcp4://{}", client.local_addr().unwrap()));
    assert_eq!(info.local_uri, format!("tcp4://{tcp}"));

    // EOF closes the face.
    drop(client);
    let mut events = Vec::new();
    poll_until(&mut io, &mut events, |ev| went_down(ev, face));
}

#[test]
fn unix_stream_framing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run/nfd.sock");
    let mut io = Io::new(config(Some(path.clone()))).unwrap();
    let mut client = UnixStream::connect(&path).unwrap();
    client.set_read_timeout(PEER_TIMEOUT).unwrap();
    let face = check_stream_framing(&mut io, &mut client, FaceKind::Unix);
    let info = io.face(face).unwrap();
    assert!(info.remote_uri.starts_with("fd://"), "{}", info.remote_uri);
    assert_eq!(info.local_uri, format!("unix://{}", path.display()));

    // A second router on the same path is refused while this one runs.
    let err = Io::new(config(Some(path.clone()))).err().expect("socket in use");
    assert!(matches!(err, IoError::UnixInUse { .. }) && err.to_string().contains(&path.display().to_string()), "{err}");
    drop(io);
    assert!(!path.exists());
}

#[test]
fn corrupt_stream_closes_only_its_face() {
    let mut io = Io::new(config(None)).unwrap();
    let (_, tcp) = addrs(&io);
    let mut events = Vec::new();
    let mut bad = TcpStream::connect(tcp).unwrap();
    bad.set_read_timeout(PEER_TIMEOUT).unwrap();
    let bad_face = accept_face(&mut io, &mut events).id;
    let mut good = TcpStream::connect(tcp).unwrap();
    good.set_read_timeout(PEER_TIMEOUT).unwrap();
    events.clear();
    let good_face = accept_face(&mut io, &mut events).id;

    // A valid packet, then a header announcing 65535 bytes.
    let ok = interest("/before/garbage");
    bad.write_all(&[&ok[..], &[6, 253, 0xff, 0xff]].concat()).unwrap();
    events.clear();
    poll_until(&mut io, &mut events, |ev| went_down(ev, bad_face));
    assert_eq!(packets_from(&events, bad_face), vec![ok]);
    assert_eq!(io.stats().corrupt_streams, 1);
    let mut rest = Vec::new();
    assert_eq!(bad.read_to_end(&mut rest).unwrap_or(0), 0, "the router closed the connection");

    // The other face is untouched in both directions.
    let pkt = interest("/after/garbage");
    good.write_all(&pkt).unwrap();
    poll_until(&mut io, &mut events, |ev| !packets_from(ev, good_face).is_empty());
    assert_eq!(packets_from(&events, good_face), vec![pkt.clone()]);
    io.send(good_face, pkt.clone());
    io.flush();
    let mut buf = vec![0u8; pkt.len()];
    good.read_exact(&mut buf).unwrap();
    assert_eq!(buf, pkt);
}

#[test]
fn a_peer_that_never_reads_does_not_block_others() {
    let mut io = Io::new(config(None)).unwrap();
    let (udp, tcp) = addrs(&io);
    let mut events = Vec::new();
    let mut stalled = TcpStream::connect(tcp).unwrap();
    let slow = accept_face(&mut io, &mut events).id;
    let other = udp_peer();
    let fast = io.create_face(&format!("udp4://{}", other.local_addr().unwrap()), Persistency::Persistent).unwrap().id;

    // Fill the kernel buffers and then the bounded queue.
    let big = element(8000, 6);
    let attempts = fill_queue(&mut io, slow, &big);
    let c = io.counters(slow).unwrap().clone();
    assert!(c.out_packets < attempts);

    // Delivery to and from the other face goes on.
    for n in 0..10 {
        let pkt = interest(&format!("/fast/{n}"));
        io.send(fast, pkt.clone());
        io.flush();
        let mut buf = [0u8; 1000];
        let (len, _) = other.recv_from(&mut buf).unwrap();
        assert_eq!(&buf[..len], &pkt[..]);
        other.send_to(&pkt, udp).unwrap();
        events.clear();
        poll_until(&mut io, &mut events, |ev| !packets_from(ev, fast).is_empty());
    }

    // Once the peer reads, the queue drains through writability events.
    let queued_when_stalled = attempts - c.dropped_out - c.out_packets;
    assert!(queued_when_stalled > 0);
    let reader = std::thread::spawn(move || {
        let mut sink = vec![0u8; 1 << 16];
        let mut total = 0u64;
        stalled.set_read_timeout(PEER_TIMEOUT).unwrap();
        while let Ok(n) = stalled.read(&mut sink) {
            if n == 0 {
                break;
            }
            total += n as u64;
        }
        total
    });
    let mut polls = 0;
    while io.counters(slow).unwrap().out_packets + io.counters(slow).unwrap().dropped_out < attempts {
        io.poll(Some(Duration::from_millis(20)), &mut events).unwrap();
        polls += 1;
        assert!(polls < 500, "queue did not drain: {:?}", io.counters(slow));
    }
    let c = io.counters(slow).unwrap().clone();
    assert_eq!(c.out_bytes, c.out_packets * big.len() as u64);
    io.destroy_face(slow);
    assert_eq!(reader.join().unwrap(), c.out_bytes);
}

/// Sends `pkt` to `face` until its queue refuses one; returns how many were sent.
fn fill_queue(io: &mut Io, face: FaceId, pkt: &Bytes) -> u64 {
    let mut attempts = 0u64;
    while io.counters(face).unwrap().dropped_out == 0 && attempts < 20_000 {
        io.send(face, pkt.clone());
        io.flush();
        attempts += 1;
    }
    assert!(io.counters(face).unwrap().dropped_out > 0, "queue bound never reached after {attempts} packets");
    attempts
}

/// A packet handed to a face is often a view of a larger buffer (a Data of its
/// DPDK mbuf, from a pool sized for the content store): once it waits for a peer
/// that does not read, the queue holds a copy of its bytes, not the buffer.
#[test]
fn packets_waiting_for_a_stalled_peer_hold_their_own_bytes_not_their_buffer() {
    let mut io = Io::new(config(None)).unwrap();
    let (_, tcp) = addrs(&io);
    let mut events = Vec::new();
    let mut stalled = TcpStream::connect(tcp).unwrap();
    let face = accept_face(&mut io, &mut events).id;
    let pkt = element(1000, 9);
    // A received buffer the packets are views of, as a DPDK mbuf is of its Data.
    let mut buf = vec![0u8; 64 << 10];
    buf[100..100 + pkt.len()].copy_from_slice(&pkt);
    let buffer = Bytes::from(buf);
    let view = || buffer.slice(100..100 + pkt.len());
    let mut attempts = 0u64;
    while io.counters(face).unwrap().dropped_out == 0 && attempts < 100_000 {
        io.send(face, view());
        io.flush();
        attempts += 1;
    }
    let c = io.counters(face).unwrap().clone();
    assert!(c.dropped_out > 0 && io.queued_bytes() > 0, "the queue filled: {c:?}");
    assert!(buffer.is_unique(), "no waiting packet holds the buffer");
    // And what waited arrives intact once the peer reads.
    let reader = std::thread::spawn(move || {
        let mut got = Vec::new();
        stalled.set_read_timeout(PEER_TIMEOUT).unwrap();
        let _ = stalled.read_to_end(&mut got);
        got
    });
    let mut polls = 0;
    while io.queued_bytes() > 0 {
        io.poll(Some(Duration::from_millis(20)), &mut events).unwrap();
        polls += 1;
        assert!(polls < 500, "queue did not drain: {:?}", io.counters(face));
    }
    let sent = io.counters(face).unwrap().out_packets;
    io.destroy_face(face);
    let got = reader.join().unwrap();
    assert_eq!(got.len() as u64, sent * pkt.len() as u64);
    assert!(got.chunks(pkt.len()).all(|c| c == &pkt[..]));
}

#[test]
fn stalled_peers_share_one_bound_on_queued_bytes() {
    // Each face may queue 256 KiB, all of them together less than two faces'
    // worth; beyond that a face may still fill its 64 KiB reserve.
    let per_face = 256 << 10;
    let total = 300_000;
    let mut io = Io::new(IoConfig { stream_queue_bytes: per_face, queue_bytes: total, ..config(None) }).unwrap();
    let (_, tcp) = addrs(&io);
    let mut events = Vec::new();
    let _a = TcpStream::connect(tcp).unwrap();
    let a = accept_face(&mut io, &mut events).id;
    events.clear();
    let _b = TcpStream::connect(tcp).unwrap();
    let b = accept_face(&mut io, &mut events).id;
    let big = element(8000, 3);

    fill_queue(&mut io, a, &big);
    let held_by_a = io.queued_bytes();
    assert!(held_by_a > per_face - 8000 && held_by_a <= per_face, "{held_by_a}");
    fill_queue(&mut io, b, &big);
    let held_by_b = io.queued_bytes() - held_by_a;
    assert!(io.queued_bytes() > total, "b filled its reserve past the shared bound: {held_by_b}");
    assert!(io.queued_bytes() <= total + 2 * FACE_QUEUE_RESERVE, "{} queued", io.queued_bytes());
    assert!(held_by_b > FACE_QUEUE_RESERVE - 8000 && held_by_b <= FACE_QUEUE_RESERVE, "b was refused by the shared bound past its reserve, not its own: {held_by_b}");

    // Closing a face gives its share back.
    assert!(io.destroy_face(a));
    assert_eq!(io.queued_bytes(), held_by_b);
    let dropped = io.counters(b).unwrap().dropped_out;
    io.send(b, big.clone());
    io.flush();
    assert_eq!(io.counters(b).unwrap().dropped_out, dropped);
    // Each packet counts with what it costs in memory besides its bytes.
    assert_eq!(io.queued_bytes(), held_by_b + big.len() + QUEUED_PACKET_OVERHEAD);
    assert!(io.destroy_face(b));
    assert_eq!(io.queued_bytes(), 0);

    // UDP packets count until their channel sends them.
    let peer = udp_peer();
    let face = io.create_face(&format!("udp4://{}", peer.local_addr().unwrap()), Persistency::Persistent).unwrap().id;
    io.send(face, big.clone());
    assert_eq!(io.queued_bytes(), big.len() + QUEUED_PACKET_OVERHEAD);
    io.flush();
    assert_eq!(io.queued_bytes(), 0);
    assert_eq!(peer.recv(&mut [0; 9000]).unwrap(), big.len());
}

#[test]
fn destroy_emits_nothing_and_unknown_faces_are_ignored() {
    let mut io = Io::new(config(None)).unwrap();
    let (_, tcp) = addrs(&io);
    let mut client = TcpStream::connect(tcp).unwrap();
    client.set_read_timeout(PEER_TIMEOUT).unwrap();
    let mut events = Vec::new();
    let face = accept_face(&mut io, &mut events).id;
    assert!(io.destroy_face(face));
    assert!(io.face(face).is_none() && io.counters(face).is_none());
    io.send(face, interest("/nobody"));
    io.send(12345, interest("/nobody"));
    io.flush();
    let mut rest = Vec::new();
    assert_eq!(client.read_to_end(&mut rest).unwrap(), 0);
    events.clear();
    for _ in 0..5 {
        io.poll(Some(Duration::from_millis(10)), &mut events).unwrap();
    }
    assert!(events.is_empty(), "{events:?}");
}

/// Bytes `face` holds in its queue, from its counters, when every one of the
/// `attempts` packets of `len` bytes sent to it was written, dropped or queued.
fn held(io: &Io, face: FaceId, attempts: u64, len: usize) -> usize {
    let c = io.counters(face).unwrap();
    (attempts - c.out_packets - c.dropped_out) as usize * len
}

/// Peers that never read fill the shared bound on queued bytes (the reviewer's
/// attack: Interests for cached Data from connections that are never read);
/// every face still has its reserve, so one whose peer reads (stream or UDP)
/// keeps carrying packets, and the total stays bounded.
#[test]
fn peers_that_never_read_cannot_starve_the_faces_that_do() {
    const STALLED: usize = 6;
    let per_face = 256 << 10;
    let total = 600_000;
    let mut io = Io::new(IoConfig { stream_queue_bytes: per_face, queue_bytes: total, ..config(None) }).unwrap();
    let (_, tcp) = addrs(&io);
    let mut events = Vec::new();
    let mut clients = Vec::new();
    let mut stalled = Vec::new();
    for _ in 0..STALLED {
        clients.push(TcpStream::connect(tcp).unwrap());
        events.clear();
        stalled.push(accept_face(&mut io, &mut events).id);
    }
    let big = element(8000, 5);
    for &face in &stalled {
        let attempts = fill_queue(&mut io, face, &big);
        // The last ones come when the shared bound is full, and still queue.
        assert!(held(&io, face, attempts, big.len()) > 0, "face {face} refused with nothing queued: {:?}", io.counters(face));
    }
    assert!(io.queued_bytes() > total, "the stalled peers filled the shared bound: {}", io.queued_bytes());
    assert!(io.queued_bytes() <= total + STALLED * FACE_QUEUE_RESERVE, "{} queued", io.queued_bytes());

    // A stream face whose peer reads gets every packet through.
    let mut reader = TcpStream::connect(tcp).unwrap();
    events.clear();
    let healthy = accept_face(&mut io, &mut events).id;
    let pkts: Vec<Bytes> = (0..200).map(|n| element(1000, n as u8)).collect();
    let expected = pkts.concat();
    let want = expected.len();
    let reading = std::thread::spawn(move || {
        reader.set_read_timeout(PEER_TIMEOUT).unwrap();
        let mut got = vec![0u8; want];
        // The socket is kept open: its closing would close the face.
        reader.read_exact(&mut got).map(|()| (got, reader))
    });
    for batch in pkts.chunks(10) {
        for pkt in batch {
            io.send(healthy, pkt.clone());
        }
        io.flush();
        io.poll(Some(Duration::from_millis(5)), &mut events).unwrap();
        assert_eq!(io.counters(healthy).unwrap().dropped_out, 0, "the healthy face was refused; {} queued", io.queued_bytes());
    }
    let mut polls = 0;
    while !reading.is_finished() {
        io.poll(Some(Duration::from_millis(20)), &mut events).unwrap();
        polls += 1;
        assert!(polls < 500, "the healthy face did not drain: {:?}", io.counters(healthy));
    }
    let (got, _reader) = reading.join().unwrap().unwrap();
    assert!(got == expected, "the reading peer got other bytes than were sent");
    assert_eq!(io.counters(healthy).unwrap().dropped_out, 0);

    // So does a UDP face: the shared bound applies to it alike.
    let peer = udp_peer();
    let face = io.create_face(&format!("udp4://{}", peer.local_addr().unwrap()), Persistency::Persistent).unwrap().id;
    for pkt in &pkts[..10] {
        io.send(face, pkt.clone());
        io.flush();
        let mut buf = [0u8; 2000];
        let len = peer.recv(&mut buf).unwrap();
        assert_eq!(&buf[..len], &pkt[..]);
    }
    assert_eq!(io.counters(face).unwrap().dropped_out, 0);

    for face in stalled {
        assert!(io.destroy_face(face));
    }
    assert_eq!(io.queued_bytes(), 0);
}

/// Sends `pkt` to `face` until one more is dropped: keeps its queue full.
fn top_up(io: &mut Io, face: FaceId, pkt: &Bytes) {
    let dropped = |io: &Io| io.counters(face).map_or(u64::MAX, |c| c.dropped_out);
    let before = dropped(io);
    for _ in 0..1000 {
        io.send(face, pkt.clone());
        io.flush();
        if dropped(io) != before {
            return;
        }
    }
}

/// A peer that reads nothing holds its queue only until the stall timeout: its
/// face then closes, with `FaceDown`, and is counted; a peer that reads slowly
/// but steadily, its queue always full, keeps its face.
#[test]
fn a_peer_that_reads_nothing_is_closed_after_the_stall_timeout_but_a_slow_reader_is_not() {
    let stall = Duration::from_millis(400);
    let mut io = Io::new(IoConfig { stall_timeout: stall, ..config(None) }).unwrap();
    let (_, tcp) = addrs(&io);
    let mut events = Vec::new();
    let _silent = TcpStream::connect(tcp).unwrap();
    let dead = accept_face(&mut io, &mut events).id;
    let mut slow_peer = TcpStream::connect(tcp).unwrap();
    events.clear();
    let slow = accept_face(&mut io, &mut events).id;
    let big = element(8000, 4);
    // Before any write could find the socket full and start the stall clock.
    let started = Instant::now();
    fill_queue(&mut io, dead, &big);
    fill_queue(&mut io, slow, &big);
    let out_before = io.counters(slow).unwrap().out_bytes;
    let reading = std::thread::spawn(move || {
        slow_peer.set_read_timeout(PEER_TIMEOUT).unwrap();
        let mut buf = vec![0u8; 8 << 10];
        let mut total = 0u64;
        while let Ok(n) = slow_peer.read(&mut buf) {
            if n == 0 {
                break;
            }
            total += n as u64;
            std::thread::sleep(Duration::from_millis(2));
        }
        total
    });

    events.clear();
    let mut closed_after = None;
    let mut polls = 0;
    // Several stall timeouts, and until the silent peer's face is gone.
    while closed_after.is_none() || started.elapsed() < 4 * stall {
        top_up(&mut io, slow, &big);
        if io.face(dead).is_some() {
            // As a peer's Interests for cached Data would.
            top_up(&mut io, dead, &big);
        }
        io.poll(Some(Duration::from_millis(20)), &mut events).unwrap();
        if closed_after.is_none() && went_down(&events, dead) {
            closed_after = Some(started.elapsed());
        }
        polls += 1;
        assert!(polls < 500, "the silent peer's face was not closed: {events:?}");
    }
    assert!(closed_after.is_some_and(|t| t >= stall), "closed before the stall timeout: {closed_after:?}");
    assert!(io.face(dead).is_none());
    assert_eq!(io.stats().stalled_streams, 1);
    assert!(!went_down(&events, slow) && io.face(slow).is_some(), "the slow reader's face was closed: {events:?}");
    let c = io.counters(slow).unwrap().clone();
    assert!(c.out_bytes > out_before && c.dropped_out > 1, "the slow face's queue moved and stayed full: {c:?}");
    // The closed face's queue went with it.
    assert!(io.queued_bytes() <= 64 << 10, "{} queued", io.queued_bytes());

    // Everything the kernel took reaches the slow reader in the end.
    assert!(io.destroy_face(slow));
    assert!(reading.join().unwrap() >= c.out_bytes);
}

/// A permanent face this side dialed whose peer stops reading is handled as
/// after its connection fails: it keeps its id and redials, with no `FaceDown`.
#[test]
fn a_stalled_permanent_face_redials() {
    let stall = Duration::from_millis(200);
    let mut io = Io::new(IoConfig { stall_timeout: stall, ..config(None) }).unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let remote = listener.local_addr().unwrap();
    let info = io.create_face(&format!("tcp4://{remote}"), Persistency::Permanent).unwrap();
    let connected = |ev: &[IoEvent]| ev.iter().any(|e| matches!(e, IoEvent::Connected(f) if *f == info.id));
    let mut events = Vec::new();
    poll_until(&mut io, &mut events, connected);
    let (_first, _) = listener.accept().unwrap();
    let big = element(8000, 2);
    fill_queue(&mut io, info.id, &big);
    events.clear();
    for _ in 0..500 {
        if !io.is_connecting(info.id) && io.stats().stalled_streams == 0 {
            top_up(&mut io, info.id, &big);
        }
        io.poll(Some(Duration::from_millis(20)), &mut events).unwrap();
        if connected(&events) {
            break;
        }
    }
    assert!(connected(&events), "{events:?}");
    assert_eq!(io.stats().stalled_streams, 1);
    assert!(!went_down(&events, info.id), "{events:?}");
    assert!(io.face(info.id).is_some());
    assert_eq!(io.queued_bytes(), 0, "the stalled connection's queue went with it");
    let (mut second, _) = listener.accept().unwrap();
    second.set_read_timeout(PEER_TIMEOUT).unwrap();
    let out = interest("/after/the/stall");
    io.send(info.id, out.clone());
    io.flush();
    let mut buf = vec![0u8; out.len()];
    second.read_exact(&mut buf).unwrap();
    assert_eq!(buf, out);
    assert!(io.destroy_face(info.id));
}
