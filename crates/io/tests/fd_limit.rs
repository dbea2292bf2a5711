//! What the shell does when the process runs out of file descriptors: every
//! TCP or Unix face costs one, and the soft limit on them (RLIMIT_NOFILE) is
//! often 1,024, far below the default face limit, so idle connections of peers
//! could otherwise use them all and lock out new peers and local applications.
//! These tests lower the process's limit and use up every descriptor, so they
//! live in a test binary of their own (their own process) and take turns.

use std::fs::File;
use std::io::Write;
use std::net::{TcpListener, TcpStream};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::sync::{Mutex, MutexGuard, Once};
use std::time::Duration;

use bytes::Bytes;
use nix::sys::resource::{getrlimit, setrlimit, Resource};
use trajan_io::{FaceKind, Io, IoConfig, IoEvent, Persistency};
use trajan_wire::{Interest, Name};

/// Most descriptors this test process may open, so that using them all up is quick.
const HARD_LIMIT: u64 = 256;

/// How long the tests' faces idle before they may give way to a new peer.
const EVICT_IDLE: Duration = Duration::from_millis(100);

/// Lowers this process's limit on descriptors (the first time) and takes this
/// test's turn: each test uses up every descriptor of the process.
fn exclusive() -> MutexGuard<'static, ()> {
    static TURN: Mutex<()> = Mutex::new(());
    static LIMIT: Once = Once::new();
    let turn = TURN.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    LIMIT.call_once(|| {
        let (_, hard) = getrlimit(Resource::RLIMIT_NOFILE).unwrap();
        let hard = hard.min(HARD_LIMIT);
        setrlimit(Resource::RLIMIT_NOFILE, hard, hard).unwrap();
    });
    turn
}

/// A shell on loopback with a TCP listener and, given a directory, a Unix socket in it.
fn io(dir: Option<&Path>) -> Io {
    Io::new(IoConfig {
        udp_listen: vec![],
        tcp_listen: vec!["127.0.0.1:0".parse().unwrap()],
        unix_path: dir.map(|d| d.join("nfd.sock")),
        evict_idle: EVICT_IDLE,
        ..IoConfig::default()
    })
    .unwrap()
}

/// Every descriptor this process has left, held open until dropped.
fn exhaust() -> Vec<File> {
    let mut junk = Vec::new();
    loop {
        match File::open("/dev/null") {
            Ok(f) => junk.push(f),
            Err(e) => {
                assert_eq!(e.raw_os_error(), Some(nix::libc::EMFILE), "{e}");
                return junk;
            }
        }
        assert!(junk.len() <= HARD_LIMIT as usize, "the descriptor limit was not lowered");
    }
}

fn interest(name: &str) -> Bytes {
    Interest::new(name.parse::<Name>().unwrap()).encode()
}

fn ups(events: &[IoEvent], kind: FaceKind) -> usize {
    events.iter().filter(|e| matches!(e, IoEvent::FaceUp(info) if info.kind == kind)).count()
}

fn downs(events: &[IoEvent]) -> usize {
    events.iter().filter(|e| matches!(e, IoEvent::FaceDown(_))).count()
}

fn packets(events: &[IoEvent]) -> usize {
    events.iter().filter(|e| matches!(e, IoEvent::Packet { .. })).count()
}

/// Polls until `done` holds (at most 250 polls of up to 20 ms).
fn poll_until(io: &mut Io, events: &mut Vec<IoEvent>, done: impl Fn(&[IoEvent]) -> bool) {
    for _ in 0..250 {
        io.poll(Some(Duration::from_millis(20)), events).unwrap();
        if done(events) {
            return;
        }
    }
    panic!("condition not reached; events so far: {events:?}; {:?}", io.stats());
}

/// The shell takes all the descriptors the hard limit allows, and admits no
/// more faces of network peers than those leave room for, so that idle
/// connections meet the face limit (where idle faces give way) first.
#[test]
fn io_raises_the_soft_descriptor_limit_and_fits_the_face_limit_below_it() {
    let _turn = exclusive();
    let (_, hard) = getrlimit(Resource::RLIMIT_NOFILE).unwrap();
    setrlimit(Resource::RLIMIT_NOFILE, hard / 2, hard).unwrap();
    let io = io(None);
    assert_eq!(getrlimit(Resource::RLIMIT_NOFILE).unwrap(), (hard, hard));
    let max = io.max_faces();
    assert!(max > 0 && max < hard as usize, "max_faces {max} with {hard} descriptors");
    drop(io);
    let io = Io::new(IoConfig { udp_listen: vec![], tcp_listen: vec![], unix_path: None, max_faces: 10, ..IoConfig::default() }).unwrap();
    assert_eq!(io.max_faces(), 10, "a face limit the descriptors allow stays as configured");
}

/// With every descriptor taken, idle TCP faces of network peers give way, one
/// for each connection waiting, to a new peer and to a local application, as
/// at the face limit; without that, both would wait as long as the idle
/// connections stay open.
#[test]
fn with_no_descriptor_left_idle_tcp_faces_give_way_to_a_new_peer_and_a_local_application() {
    let _turn = exclusive();
    let dir = tempfile::tempdir().unwrap();
    let mut io = io(Some(dir.path()));
    let tcp = io.local_addrs().1[0];
    let mut events = Vec::new();
    let idle: Vec<TcpStream> = (0..4).map(|_| TcpStream::connect(tcp).unwrap()).collect();
    poll_until(&mut io, &mut events, |ev| ups(ev, FaceKind::Tcp) == 4);
    std::thread::sleep(EVICT_IDLE * 2);

    // Both wait in their listeners' queues until a descriptor is found for them.
    let mut peer = TcpStream::connect(tcp).unwrap();
    let mut app = UnixStream::connect(dir.path().join("nfd.sock")).unwrap();
    let junk = exhaust();
    peer.write_all(&interest("/peer")).unwrap();
    app.write_all(&interest("/app")).unwrap();
    poll_until(&mut io, &mut events, |ev| packets(ev) == 2);
    drop(junk);
    assert_eq!(ups(&events, FaceKind::Tcp), 5);
    assert_eq!(ups(&events, FaceKind::Unix), 1);
    assert_eq!(downs(&events), 2, "{events:?}");
    assert_eq!(io.stats().idle_evictions, 2);
    assert_eq!(io.stats().face_limit_drops, 0);
    assert_eq!(io.faces().count(), 4);
    drop(idle);
}

/// With every descriptor taken, an idle TCP face of a network peer gives way
/// to a TCP face management creates.
#[test]
fn with_no_descriptor_left_an_idle_tcp_face_gives_way_to_a_management_dial() {
    let _turn = exclusive();
    let mut io = io(None);
    let tcp = io.local_addrs().1[0];
    let remote = TcpListener::bind("127.0.0.1:0").unwrap();
    let mut events = Vec::new();
    let idle: Vec<TcpStream> = (0..2).map(|_| TcpStream::connect(tcp).unwrap()).collect();
    poll_until(&mut io, &mut events, |ev| ups(ev, FaceKind::Tcp) == 2);
    std::thread::sleep(EVICT_IDLE * 2);

    let junk = exhaust();
    let dialed = io.create_face(&format!("tcp4://{}", remote.local_addr().unwrap()), Persistency::Persistent);
    let face = dialed.unwrap_or_else(|e| panic!("the dial failed: {e}")).id;
    poll_until(&mut io, &mut events, |ev| ev.iter().any(|e| matches!(e, IoEvent::Connected(f) if *f == face)));
    drop(junk);
    assert_eq!(downs(&events), 1);
    assert_eq!(io.stats().idle_evictions, 1);
    drop(idle);
}

/// A connection that arrives while no descriptor is left, and no face can give
/// way, is accepted once a descriptor is free, without waiting for another
/// connection to arrive (mio reports a listener only as connections arrive).
#[test]
fn a_connection_that_waited_for_a_descriptor_is_accepted_once_one_is_free() {
    let _turn = exclusive();
    let mut io = io(None);
    let tcp = io.local_addrs().1[0];
    let mut events = Vec::new();
    let mut junk = exhaust();
    junk.pop(); // for the client's own socket
    let mut client = TcpStream::connect(tcp).unwrap();
    client.write_all(&interest("/a")).unwrap();
    for _ in 0..10 {
        io.poll(Some(Duration::from_millis(20)), &mut events).unwrap();
    }
    assert_eq!(ups(&events, FaceKind::Tcp), 0, "accepted with no descriptor left");
    drop(junk);
    poll_until(&mut io, &mut events, |ev| packets(ev) == 1);
    assert_eq!(ups(&events, FaceKind::Tcp), 1);
    assert_eq!(io.stats().idle_evictions, 0);
}
