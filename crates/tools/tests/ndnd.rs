//! The tools against a real NFD-compatible forwarder: ndnd's `fw` (YaNFD), started per
//! test on a Unix socket in a temporary directory and UDP/TCP ports on loopback.
//!
//! Runs when `NDND_BIN` names an ndnd binary (`scripts/interop-setup.sh` installs one
//! at `.interop/bin/ndnd`); otherwise each test says so and passes.

use std::io::Write;
use std::net::{TcpListener, TcpStream, UdpSocket};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use clap::Parser;
use trajan_tools::client::{Client, Reply};
use trajan_tools::mgmt_cli::canonical_uri;
use trajan_tools::transport::Transport;
use trajan_tools::{get, mgmt_cli, ping, put};
use trajan_wire::mgmt::{decode_list, CsInfo, FaceStatus, ForwarderStatus, Record, RibEntry};
use trajan_wire::{Interest, Name};

/// The tools' command line, as the `trajan` binary exposes it.
#[derive(Parser)]
enum Cli {
    Put(put::PutArgs),
    Get(get::GetArgs),
    Ping(ping::PingArgs),
    Route(mgmt_cli::RouteArgs),
    Face(mgmt_cli::FaceArgs),
    Status(mgmt_cli::StatusArgs),
}

fn run(args: &[&str]) -> anyhow::Result<()> {
    match Cli::try_parse_from(std::iter::once("trajan").chain(args.iter().copied()))? {
        Cli::Put(a) => put::run(a),
        Cli::Get(a) => get::run(a),
        Cli::Ping(a) => ping::run(a),
        Cli::Route(a) => mgmt_cli::run_route(a),
        Cli::Face(a) => mgmt_cli::run_face(a),
        Cli::Status(a) => mgmt_cli::run_status(a),
    }
}

/// A port free for both UDP and TCP (ndnd binds its listeners on all addresses).
fn free_port() -> u16 {
    (0..50)
        .find_map(|_| {
            let port = TcpListener::bind("0.0.0.0:0").ok()?.local_addr().ok()?.port();
            UdpSocket::bind(("0.0.0.0", port)).ok().map(|_| port)
        })
        .expect("a free port")
}

struct Ndnd {
    child: Child,
    dir: tempfile::TempDir,
    port: u16,
}

impl Ndnd {
    /// Starts ndnd fw, or returns `None` (after saying why) when NDND_BIN is
    /// unset, as on a developer's plain `cargo test`. Under CI (`CI` set) a
    /// missing ndnd fails the test instead: `scripts/test.sh` installs ndnd and
    /// sets NDND_BIN, and a skip there would pass without testing anything.
    fn start(test: &str) -> Option<Ndnd> {
        let Some(bin) = std::env::var_os("NDND_BIN") else {
            assert!(std::env::var_os("CI").is_none(), "{test}: NDND_BIN is unset under CI (scripts/test.sh sets it)");
            eprintln!("{test}: skipped, set NDND_BIN to an ndnd binary to run it");
            return None;
        };
        let dir = tempfile::Builder::new().prefix("ndnd").tempdir_in("/tmp").unwrap();
        let port = free_port();
        let sock = dir.path().join("nfd.sock");
        let config = format!(
            "core:\n  log_level: WARN\nfaces:\n  congestion_marking: false\n  udp:\n    enabled_unicast: true\n    enabled_multicast: false\n    port_unicast: {port}\n  tcp:\n    enabled: true\n    port_unicast: {port}\n  unix:\n    enabled: true\n    socket_path: {}\n  websocket:\n    enabled: false\n  http3:\n    enabled: false\nfw:\n  threads: 1\ntables:\n  rib:\n    readvertise_nlsr: false\n",
            sock.display()
        );
        let cfg = dir.path().join("fw.yml");
        std::fs::write(&cfg, config).unwrap();
        let log = std::fs::File::create(dir.path().join("fw.log")).unwrap();
        let child = Command::new(&bin)
            .args(["fw", "run"])
            .arg(&cfg)
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", PathBuf::from(&bin).display()));
        let fw = Ndnd { child, dir, port };
        let deadline = Instant::now() + Duration::from_secs(10);
        while UnixStream::connect(&sock).is_err() || TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "ndnd did not start:\n{}", fw.log());
            thread::sleep(Duration::from_millis(50));
        }
        Some(fw)
    }

    fn unix(&self) -> String {
        format!("unix://{}", self.dir.path().join("nfd.sock").display())
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("fw.log")).unwrap_or_default()
    }

    fn client(&self) -> Client {
        Client::connect(&self.unix().parse::<Transport>().unwrap()).unwrap()
    }

    /// Waits (bounded) until `prefix` has a route, i.e. a producer registered it.
    fn wait_route(&self, prefix: &str) {
        let want: Name = prefix.parse().unwrap();
        let mut c = self.client();
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let rib: Vec<RibEntry> = decode_list(&c.dataset("rib", "list").unwrap()).unwrap();
            if rib.iter().any(|e| e.name == want) {
                return;
            }
            assert!(Instant::now() < deadline, "{prefix} never registered");
            thread::sleep(Duration::from_millis(50));
        }
    }

    fn faces(&self) -> Vec<FaceStatus> {
        decode_list(&self.client().dataset("faces", "list").unwrap()).unwrap()
    }
}

impl Drop for Ndnd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if thread::panicking() {
            eprintln!("ndnd log:\n{}", self.log());
        }
    }
}

/// Waits (bounded) for `cond`. Datasets may lag a command by their FreshnessPeriod:
/// a forwarder's cache may answer a MustBeFresh dataset Interest with a copy made a
/// millisecond earlier (ndnd gives datasets 1 ms, NFD 1 s).
fn eventually(what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while !cond() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        thread::sleep(Duration::from_millis(20));
    }
}

fn fetch(fw: &Ndnd, transport: &str, name: &str, out: &Path) -> Vec<u8> {
    let out_s = out.to_str().unwrap();
    run(&["get", name, "-o", out_s, "--timeout", "2000", "--transport", transport]).unwrap_or_else(|e| panic!("get over {transport}: {e:#}\n{}", fw.log()));
    std::fs::read(out).unwrap()
}

#[test]
fn put_then_get_over_unix_tcp_and_udp() {
    let Some(fw) = Ndnd::start("put_then_get_over_unix_tcp_and_udp") else { return };
    let file: Vec<u8> = (0..1_000_000).map(|_| rand::random::<u8>()).collect();
    let input = fw.dir.path().join("in.bin");
    std::fs::File::create(&input).unwrap().write_all(&file).unwrap();
    let unix = fw.unix();
    let producer = {
        let (unix, input) = (unix.clone(), input.clone());
        thread::spawn(move || run(&["put", "/interop/file", input.to_str().unwrap(), "--exit-after-seconds", "120", "--transport", &unix]))
    };
    fw.wait_route("/interop/file");
    let out = fw.dir.path().join("out.bin");
    for transport in [unix, format!("tcp://127.0.0.1:{}", fw.port), format!("udp://127.0.0.1:{}", fw.port)] {
        assert!(fetch(&fw, &transport, "/interop/file", &out) == file, "content differs over {transport}");
    }
    // A versioned name skips discovery.
    let mut discovery = Interest::new("/interop/file".parse().unwrap());
    discovery.can_be_prefix = true;
    let Reply::Data(d) = fw.client().express(&discovery).unwrap() else { panic!("no discovery reply") };
    let versioned = d.name().prefix(d.name().len() - 1).to_string();
    assert!(versioned.contains("/v="), "{versioned}");
    assert!(fetch(&fw, &fw.unix(), &versioned, &out) == file);
    drop(fw);
    // The forwarder is gone: the producer reports it instead of hanging.
    let err = producer.join().unwrap().unwrap_err();
    assert!(format!("{err:#}").contains("closed the connection"), "{err:#}");
}

#[test]
fn put_once_exits_after_serving_everything() {
    let Some(fw) = Ndnd::start("put_once_exits_after_serving_everything") else { return };
    let file: Vec<u8> = (0..20_000).map(|_| rand::random::<u8>()).collect();
    let input = fw.dir.path().join("in.bin");
    std::fs::write(&input, &file).unwrap();
    let unix = fw.unix();
    let producer = {
        let (unix, input) = (unix.clone(), input.clone());
        thread::spawn(move || run(&["put", "/interop/once", input.to_str().unwrap(), "--once", "--transport", &unix]))
    };
    fw.wait_route("/interop/once");
    assert!(fetch(&fw, &unix, "/interop/once", &fw.dir.path().join("out.bin")) == file);
    producer.join().unwrap().unwrap();
}

#[test]
fn ping_and_clear_failures() {
    let Some(fw) = Ndnd::start("ping_and_clear_failures") else { return };
    let unix = fw.unix();
    let server = {
        let unix = unix.clone();
        thread::spawn(move || run(&["ping", "--serve", "/interop/pinger", "-c", "3", "--transport", &unix]))
    };
    fw.wait_route("/interop/pinger/ping");
    run(&["ping", "/interop/pinger", "-c", "2", "-i", "20", "--transport", &unix]).unwrap();
    // The server's last answer still arrives although it leaves right after.
    let mut last = Interest::new("/interop/pinger/ping/last".parse().unwrap());
    last.must_be_fresh = true;
    assert!(matches!(fw.client().express(&last).unwrap(), Reply::Data(_)));
    server.join().unwrap().unwrap();

    let err = run(&["ping", "/interop/nobody", "-c", "2", "-i", "10", "--timeout", "200", "--transport", &unix]).unwrap_err();
    assert!(err.to_string().contains("all 2 pings lost"), "{err:#}");
    let out = fw.dir.path().join("none.bin");
    let err = run(&["get", "/interop/nothing", "-o", out.to_str().unwrap(), "--timeout", "200", "--retries", "1", "--transport", &unix])
        .unwrap_err();
    assert!(format!("{err:#}").contains("version discovery timed out"), "{err:#}");
    assert!(!out.exists(), "a failed get leaves no partial file");
}

#[test]
fn routes_faces_and_status() {
    let Some(fw) = Ndnd::start("routes_faces_and_status") else { return };
    let unix = fw.unix();
    let t = ["--transport", unix.as_str()];
    let remote = UdpSocket::bind("127.0.0.1:0").unwrap();
    let uri = format!("udp://{}", remote.local_addr().unwrap());
    let with = |args: &[&str]| -> anyhow::Result<()> { run(&[args, &t[..]].concat()) };

    with(&["face", "create", &uri]).unwrap();
    // Creating it again is reported, not an error (like nfdc's face-exists).
    with(&["face", "create", &uri]).unwrap();
    let listed = |fw: &Ndnd| fw.faces().into_iter().find(|f| canonical_uri(&f.uri) == canonical_uri(&uri));
    eventually("the face to be listed", || listed(&fw).is_some());
    let face = listed(&fw).unwrap();
    with(&["face", "list"]).unwrap();

    with(&["route", "add", "/interop/route", &uri, "--cost", "7"]).unwrap();
    with(&["route", "add", "/interop/route2", &face.face_id.to_string()]).unwrap();
    let routes = |fw: &Ndnd| -> Vec<(String, u64, u64)> {
        let rib: Vec<RibEntry> = decode_list(&fw.client().dataset("rib", "list").unwrap()).unwrap();
        rib.iter().flat_map(|e| e.routes.iter().map(move |r| (e.name.to_string(), r.face_id, r.cost))).collect()
    };
    eventually("both routes to be listed", || {
        let r = routes(&fw);
        r.contains(&("/interop/route".into(), face.face_id, 7)) && r.contains(&("/interop/route2".into(), face.face_id, 0))
    });
    with(&["route", "list"]).unwrap();
    with(&["route", "list", "--fib"]).unwrap();

    with(&["route", "remove", "/interop/route", &face.face_id.to_string()]).unwrap();
    eventually("the route to disappear", || !routes(&fw).iter().any(|(n, ..)| n == "/interop/route"));
    let err = with(&["route", "add", "/interop/x", "4000000"]).unwrap_err();
    assert!(err.to_string().contains("rib/register failed: 4"), "{err:#}");
    let err = with(&["route", "add", "/interop/x", "udp://127.0.0.1:1"]).unwrap_err();
    assert!(err.to_string().contains("no face with URI"), "{err:#}");

    with(&["face", "destroy", &uri]).unwrap();
    // ndnd closes the face asynchronously, after answering.
    eventually("the face to disappear", || !fw.faces().iter().any(|f| f.face_id == face.face_id));
    let err = with(&["face", "create", "bogus://x"]).unwrap_err();
    assert!(err.to_string().contains("faces/create bogus://x failed: 4"), "{err:#}");

    with(&["status"]).unwrap();
    let general = ForwarderStatus::decode_value(fw.client().dataset("status", "general").unwrap()).unwrap();
    assert!(!general.nfd_version.is_empty() && general.current_timestamp >= general.start_timestamp);
    let cs: Vec<CsInfo> = decode_list(&fw.client().dataset("cs", "info").unwrap()).unwrap();
    assert_eq!(cs.len(), 1);
}
