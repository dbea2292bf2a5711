//! Writing to a peer that has gone must close its face, not kill the router with
//! SIGPIPE. Rust programs usually ignore SIGPIPE, but a library cannot rely on its
//! host doing so, so this test binary restores the default action first.

use std::net::TcpStream;
use std::os::unix::net::UnixStream;
use std::time::Duration;

use bytes::Bytes;
use nix::sys::signal::{signal, SigHandler, Signal};
use trajan_io::{FaceId, Io, IoConfig, IoEvent};

fn wait_face(io: &mut Io, events: &mut Vec<IoEvent>, down: Option<FaceId>) -> FaceId {
    for _ in 0..500 {
        io.poll(Some(Duration::from_millis(20)), events).unwrap();
        for e in events.iter() {
            match (e, down) {
                (IoEvent::FaceUp(info), None) => return info.id,
                (IoEvent::FaceDown(id), Some(d)) if *id == d => return d,
                _ => {}
            }
        }
    }
    panic!("face event not seen: {events:?}");
}

/// Sends to the face of a peer that has closed, then expects the face to go down.
fn write_to_vanished_peer(io: &mut Io, face: FaceId) {
    let pkt = Bytes::from_static(&[5, 3, 7, 1, 0x61]);
    for _ in 0..20 {
        io.send(face, pkt.clone());
        io.flush();
    }
    let mut events = Vec::new();
    wait_face(io, &mut events, Some(face));
}

#[test]
fn vanished_stream_peers_do_not_raise_sigpipe() {
    // SAFETY: installs the default disposition (no Rust handler runs) before any
    // other thread of this test binary touches sockets.
    unsafe { signal(Signal::SIGPIPE, SigHandler::SigDfl) }.unwrap();

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nfd.sock");
    let cfg = IoConfig {
        udp_listen: vec![],
        tcp_listen: vec!["127.0.0.1:0".parse().unwrap()],
        unix_path: Some(path.clone()),
        ..IoConfig::default()
    };
    let mut io = Io::new(cfg).unwrap();
    let tcp = io.local_addrs().1[0];

    let client = UnixStream::connect(&path).unwrap();
    let face = wait_face(&mut io, &mut Vec::new(), None);
    drop(client);
    write_to_vanished_peer(&mut io, face);

    let client = TcpStream::connect(tcp).unwrap();
    let face = wait_face(&mut io, &mut Vec::new(), None);
    drop(client);
    write_to_vanished_peer(&mut io, face);
}
