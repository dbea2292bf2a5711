//! End-to-end: the real daemon on loopback, driven by Trajan's own tools.

mod common;

use std::io::Write;
use std::net::{TcpStream, UdpSocket};
use std::os::unix::net::UnixStream;
use std::time::Duration;

use common::*;

/// Publishes a random file of `size` bytes (from `seed`) under `name` with
/// `trajan put`, fetches it with `trajan get` through the router, both over its
/// Unix socket, and checks the bytes.
fn put_and_fetch(r: &Router, name: &str, size: usize, seed: u64) {
    let file = random_file(r.dir.path(), size, seed);
    let mut producer = r.spawn_tool(&["put", name, file.to_str().unwrap()]);
    wait_ready_line(&mut producer);
    let out = r.dir.path().join("fetched.bin");
    let o = r.tool(&["get", name, "-o", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}\nrouter log:\n{}", text(&o), r.log());
    assert_eq!(std::fs::read(&out).unwrap(), std::fs::read(&file).unwrap());
    let _ = producer.kill();
}

#[test]
fn put_then_get_through_the_router() {
    let r = Router::start();
    put_and_fetch(&r, "/e2e/file", 300_000, 1);
    // A version given is published as given, so fetching that name finds it.
    put_and_fetch(&r, "/e2e/given/v=5", 20_000, 2);
}

#[test]
fn ping_and_ping_server() {
    let r = Router::start();
    let mut server = r.spawn_tool(&["ping", "--serve", "/e2e/pinger"]);
    wait_ready_line(&mut server);
    let o = r.tool(&["ping", "/e2e/pinger", "-c", "3", "-i", "50"]);
    assert!(o.status.success(), "{}", text(&o));
    let s = String::from_utf8_lossy(&o.stdout);
    assert!(s.contains("3 received") || s.contains("received 3") || s.matches("time=").count() == 3, "{s}");
    let _ = server.kill();
}

/// `trajan strategy set PREFIX dynamic`: pings to a prefix two servers answer
/// are spread over both (best-route would send every one to the same server),
/// and the router reports the prefix's measurements. Single-threaded and with
/// workers, each of which measures the Interests it forwards.
#[test]
fn dynamic_strategy_spreads_interests_over_two_producers() {
    dynamic_strategy_on(&Router::start(), 1);
    dynamic_strategy_on(&Router::start_with(&["--workers", "2"]), 2);
}

/// [`dynamic_strategy_spreads_interests_over_two_producers`] on `r`, whose
/// `workers` may each hold an entry for the prefix.
fn dynamic_strategy_on(r: &Router, workers: u64) {
    let mut servers: Vec<_> = (0..2).map(|_| r.spawn_tool(&["ping", "--serve", "/e2e/dyn"])).collect();
    servers.iter_mut().for_each(wait_ready_line);
    let o = r.tool(&["strategy", "set", "/e2e/dyn", "dynamic"]);
    assert!(o.status.success() && text(&o).contains("strategy=/localhost/nfd/strategy/dynamic/v=1"), "{}", text(&o));
    let o = r.tool(&["ping", "/e2e/dyn", "-c", "40", "-i", "5"]);
    assert!(o.status.success(), "{}", text(&o));
    let faces = text(&r.tool(&["face", "list"]));
    // The Interests each face was sent: the second "<n>i" of its row (In, then Out).
    let sent: Vec<u64> = faces
        .lines()
        .filter(|l| !l.contains("internal://"))
        .filter_map(|l| l.split_whitespace().filter_map(|t| t.strip_suffix('i')?.parse::<u64>().ok()).nth(1))
        .filter(|&n| n > 0)
        .collect();
    assert_eq!(sent.len(), 2, "two faces were sent pings:\n{faces}");
    assert!(sent.iter().all(|&n| n >= 5) && sent.iter().sum::<u64>() >= 40, "both servers get a share: {sent:?}\n{faces}");
    let status = text(&r.tool(&["status"]));
    let entries = status.lines().find_map(|l| l.trim().strip_prefix("measurements entries: ")?.parse::<u64>().ok());
    assert!(entries.is_some_and(|n| (1..=workers).contains(&n)), "{status}");
    for mut s in servers {
        let _ = s.kill();
    }
}

#[test]
fn no_route_is_reported() {
    let r = Router::start();
    let o = r.tool(&["get", "/nobody/home", "--retries", "0", "--timeout", "1000"]);
    assert!(!o.status.success(), "{}", text(&o));
}

#[test]
fn routes_faces_and_status_via_management() {
    let r = Router::start();
    let peer = UdpSocket::bind("127.0.0.1:0").unwrap();
    let peer_uri = format!("udp4://{}", peer.local_addr().unwrap());

    let o = r.tool(&["face", "create", &peer_uri]);
    assert!(o.status.success(), "{}", text(&o));
    let o = r.tool(&["face", "list"]);
    assert!(o.status.success() && String::from_utf8_lossy(&o.stdout).contains(&peer_uri), "{}", text(&o));

    let o = r.tool(&["route", "add", "/e2e/routed", &peer_uri, "--cost", "7"]);
    assert!(o.status.success(), "{}", text(&o));
    let o = r.tool(&["route", "list"]);
    let listing = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(o.status.success() && listing.contains("/e2e/routed"), "{}", text(&o));

    // An Interest for the prefix now goes out to the peer's socket.
    let mut consumer = r.spawn_tool(&["get", "/e2e/routed/x", "--retries", "0", "--timeout", "3000"]);
    peer.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut buf = [0u8; 9000];
    let (n, _) = peer.recv_from(&mut buf).expect("the routed Interest reaches the peer");
    assert!(n > 0 && (buf[0] == 0x05 || buf[0] == 0x64));
    let _ = consumer.kill();
    let _ = consumer.wait();

    let o = r.tool(&["route", "remove", "/e2e/routed", &peer_uri]);
    assert!(o.status.success(), "{}", text(&o));
    let o = r.tool(&["route", "list"]);
    assert!(!String::from_utf8_lossy(&o.stdout).contains("/e2e/routed"), "{}", text(&o));
    let o = r.tool(&["route", "add", "/e2e/mine", "0"]);
    assert!(!o.status.success() && text(&o).contains("face 0 would be this tool's own connection"), "{}", text(&o));
    // Removing what is not there is an error, not a "route-removed".
    let o = r.tool(&["route", "remove", "/e2e/routed", &peer_uri]);
    assert!(!o.status.success() && text(&o).contains("no route for /e2e/routed"), "{}", text(&o));

    let o = r.tool(&["face", "destroy", &peer_uri]);
    assert!(o.status.success(), "{}", text(&o));
    let o = r.tool(&["face", "list"]);
    assert!(!String::from_utf8_lossy(&o.stdout).contains(&peer_uri), "{}", text(&o));
    let o = r.tool(&["face", "destroy", "99999"]);
    assert!(!o.status.success() && text(&o).contains("no face 99999"), "{}", text(&o));

    let o = r.tool(&["status"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stdout).to_lowercase().contains("trajan"), "{}", text(&o));
}

#[test]
fn two_router_chain_with_content_store_hit() {
    let a = Router::start();
    let b = Router::start();
    let file = random_file(a.dir.path(), 50_000, 2);
    let mut producer = b.spawn_tool(&["put", "/chain/obj", file.to_str().unwrap(), "--freshness", "60000"]);
    wait_ready_line(&mut producer);
    let b_uri = format!("udp4://127.0.0.1:{}", b.port);
    let o = a.tool(&["face", "create", &b_uri]);
    assert!(o.status.success(), "{}", text(&o));
    let o = a.tool(&["route", "add", "/chain", &b_uri]);
    assert!(o.status.success(), "{}", text(&o));

    let first = a.dir.path().join("first.bin");
    let o = a.tool(&["get", "/chain/obj", "-o", first.to_str().unwrap()]);
    assert!(o.status.success(), "{}\nA:\n{}\nB:\n{}", text(&o), a.log(), b.log());
    assert_eq!(std::fs::read(&first).unwrap(), std::fs::read(&file).unwrap());

    // Take the producer and router B away: the second fetch can only come from A's CS.
    let _ = producer.kill();
    let mut b = b;
    assert!(b.stop());
    let second = a.dir.path().join("second.bin");
    let o = a.tool(&["get", "/chain/obj", "-o", second.to_str().unwrap()]);
    assert!(o.status.success(), "{}\nA:\n{}", text(&o), a.log());
    assert_eq!(std::fs::read(&second).unwrap(), std::fs::read(&file).unwrap());
    let o = a.tool(&["status"]);
    assert!(o.status.success(), "{}", text(&o));
    let status = String::from_utf8_lossy(&o.stdout).to_string();
    let hits = status
        .lines()
        .find_map(|l| l.split_once("CS hits/misses:").and_then(|(_, v)| v.trim().split('/').next()?.parse::<u64>().ok()))
        .unwrap_or_else(|| panic!("no CS hits in status:\n{status}"));
    assert!(hits > 0, "A's content store answered the second fetch:\n{status}");
}

/// `trajan cs` and `trajan strategy` drive the running router: a store told
/// not to serve lets a cached object's fetch fail once its producer is gone,
/// serves it again when told to, erases it, and admits nothing while admit
/// is off; a strategy choice is listed until unset, and an unknown strategy
/// is refused with the router's reason. Single-threaded and with workers,
/// whose stores follow the control thread's configuration.
#[test]
fn content_store_and_strategy_via_management() {
    content_store_and_strategy_on(&Router::start());
    content_store_and_strategy_on(&Router::start_with(&["--workers", "2"]));
}

fn content_store_and_strategy_on(r: &Router) {
    let file = random_file(r.dir.path(), 20_000, 3);
    let fetch = |what: &str| {
        let out = r.dir.path().join(format!("{what}.bin"));
        let o = r.tool(&["get", "/e2e/cs/obj", "-o", out.to_str().unwrap(), "--retries", "0", "--timeout", "1000"]);
        (o.status.success() && std::fs::read(&out).unwrap() == std::fs::read(&file).unwrap(), text(&o))
    };
    let ok = |args: &[&str]| {
        let o = r.tool(args);
        assert!(o.status.success(), "{args:?}: {}
router log:
{}", text(&o), r.log());
        String::from_utf8_lossy(&o.stdout).to_string()
    };
    let entries = || {
        let info = ok(&["cs", "info"]);
        info.lines().find_map(|l| l.trim().strip_prefix("entries: ")?.parse::<u64>().ok()).unwrap_or_else(|| panic!("{info}"))
    };

    let mut producer = r.spawn_tool(&["put", "/e2e/cs/obj", file.to_str().unwrap(), "--freshness", "60000"]);
    wait_ready_line(&mut producer);
    let (fetched, log) = fetch("first");
    assert!(fetched, "{log}");
    let _ = producer.kill();
    let _ = producer.wait();
    let cached = entries();
    assert!(cached > 0, "the fetched segments are cached");

    assert!(ok(&["cs", "config", "--serve", "off"]).contains("admit=on serve=off"));
    assert!(ok(&["cs", "info"]).contains("serve: off"));
    let (fetched, log) = fetch("unserved");
    assert!(!fetched, "a store that does not serve answered:\n{log}");
    assert!(ok(&["cs", "config", "--serve", "on"]).contains("serve=on"));
    let (fetched, log) = fetch("served");
    assert!(fetched, "{log}");

    let erased = ok(&["cs", "erase", "/e2e/cs"]);
    assert!(erased.contains(&format!("count={cached}")), "{erased}");
    assert_eq!(entries(), 0);
    assert!(!fetch("erased").0, "nothing left to answer with");

    assert!(ok(&["cs", "config", "--admit", "off", "--capacity", "500"]).contains("capacity=500 admit=off serve=on"));
    let mut producer = r.spawn_tool(&["put", "/e2e/cs/obj", file.to_str().unwrap(), "--freshness", "60000"]);
    wait_ready_line(&mut producer);
    let (fetched, log) = fetch("unadmitted");
    let _ = producer.kill();
    assert!(fetched, "{log}");
    assert_eq!(entries(), 0, "a store that does not admit cached nothing");

    let set = ok(&["strategy", "set", "/e2e/m", "multicast"]);
    assert!(set.contains("strategy-set prefix=/e2e/m strategy=/localhost/nfd/strategy/multicast/v="), "the version chosen: {set}");
    let listed = ok(&["strategy", "list"]);
    assert!(listed.lines().any(|l| l.starts_with("/e2e/m ") && l.contains("multicast")), "{listed}");
    let o = r.tool(&["strategy", "set", "/e2e/m", "no-such-strategy"]);
    assert!(!o.status.success() && text(&o).contains("404"), "{}", text(&o));
    ok(&["strategy", "unset", "/e2e/m"]);
    assert!(!ok(&["strategy", "list"]).contains("/e2e/m"));
    let o = r.tool(&["strategy", "unset", "/"]);
    assert!(!o.status.success() && text(&o).contains("root"), "{}", text(&o));
}

/// The content store's hit count, from `trajan cs info`.
fn cs_hits(r: &Router) -> u64 {
    let o = r.tool(&["cs", "info"]);
    let info = String::from_utf8_lossy(&o.stdout).to_string();
    info.lines().find_map(|l| l.trim().strip_prefix("hits: ")?.parse().ok()).unwrap_or_else(|| panic!("{}", text(&o)))
}

/// A second `trajan load` or `trajan gen` run against one router asks for
/// names the first did not: the router forwards them to the producer, and
/// its content store, which holds the first run's Data, answers none. Over
/// UDP too, where the first run's producer face outlives it: the producer
/// unregisters its prefix as it exits, or the router would send the second
/// run's Interests to the first's face.
#[test]
fn load_and_gen_runs_do_not_repeat_names() {
    let r = Router::start();
    let udp = format!("udp://127.0.0.1:{}", r.port);
    for run in 0..2 {
        let before = cs_hits(&r);
        for client in [r.unix_client(), vec!["--transport".into(), udp.clone()]] {
            let o = r.tool_with(&client, &["load", "/e2e/load", "-c", "300", "--duration", "20"]);
            assert!(o.status.success() && text(&o).contains("received=300"), "run {run} {client:?}: {}", text(&o));
        }
        assert_eq!(cs_hits(&r), before, "load run {run} was answered from the content store");
        let o = r.tool_with(&[], &["gen", "/e2e/gen", "--consumer", &udp, "--producer", &udp, "-c", "200", "--duration", "20", "--json"]);
        assert!(o.status.success(), "run {run}: {}", text(&o));
        let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&o)));
        assert!(report["satisfied"].as_u64() > Some(0), "{report}");
        assert!(report["producer"]["data"].as_u64() >= report["satisfied"].as_u64(), "gen run {run}: every Data from the producer: {report}");
        assert_eq!(cs_hits(&r), before, "gen run {run} was answered from the content store");
    }
}

/// Management refuses what it would misread: an empty name (an unset shell
/// variable) is not the root, and unsetting a strategy choice that is not
/// there is an error, not a "strategy-unset".
#[test]
fn management_refuses_empty_names_and_absent_choices() {
    let r = Router::start();
    for args in [&["route", "add", "", "1"][..], &["strategy", "set", "", "multicast"], &["cs", "erase", ""], &["get", ""], &["ping", "", "-c", "1"]] {
        let o = r.tool(args);
        assert!(!o.status.success() && text(&o).contains("the name is empty (the root is written /)"), "{args:?}: {}", text(&o));
    }
    let o = r.tool(&["strategy", "list"]);
    assert_eq!(String::from_utf8_lossy(&o.stdout).lines().count(), 2, "only the root's choice: {}", text(&o));
    let o = r.tool(&["strategy", "unset", "/e2e/never-set"]);
    assert!(!o.status.success() && text(&o).contains("no strategy choice for /e2e/never-set"), "{}", text(&o));
    assert!(r.tool(&["strategy", "set", "/e2e/set", "multicast"]).status.success());
    let o = r.tool(&["strategy", "unset", "/e2e/set"]);
    assert!(o.status.success() && text(&o).contains("strategy-unset prefix=/e2e/set"), "{}", text(&o));
}

/// `trajan demo` on a socket of its own says how to reach it: each command
/// it suggests carries `--transport`, which the tools need to find it.
#[test]
fn demo_suggests_commands_that_reach_it() {
    let dir = tempfile::tempdir().unwrap();
    let sock = dir.path().join("demo.sock");
    let addr = format!("127.0.0.1:{}", free_port());
    let mut demo = std::process::Command::new(trajan())
        .args(["demo", "--unix"])
        .arg(&sock)
        .args(["--udp", &addr, "--tcp", &addr])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let out = demo.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        use std::io::BufRead;
        for line in std::io::BufReader::new(out).lines().map_while(Result::ok) {
            let last = line.starts_with("Press Ctrl-C");
            let _ = tx.send(line);
            if last {
                break;
            }
        }
    });
    let mut lines = Vec::new();
    while let Ok(line) = rx.recv_timeout(Duration::from_secs(20)) {
        lines.push(line);
        if lines.last().is_some_and(|l| l.starts_with("Press Ctrl-C")) {
            break;
        }
    }
    unsafe_free_signal(demo.id(), "TERM");
    let stopped = wait_bounded(&mut demo, Duration::from_secs(10));
    let text = lines.join("\n");
    assert!(text.contains("Demo: published /trajan/demo/hello"), "{text}");
    let flag = format!("trajan status --transport unix://{}", sock.display());
    assert!(text.contains(&flag), "{text}");
    assert!(stopped.is_some_and(|s| s.success()), "{stopped:?}");
}

/// Hostile packets of every kind on every face type; afterwards the router still forwards.
#[test]
fn malformed_barrage_then_normal_fetch() {
    let r = Router::start();
    let mut garbage: Vec<Vec<u8>> = vec![
        vec![],
        vec![0x05],
        vec![0x05, 0xff],
        vec![0x05, 0xfe, 0xff, 0xff, 0xff, 0xff],
        vec![0x06, 0x03, 0x07, 0x01, 0x08],
        vec![0x05, 0x04, 0x07, 0x00, 0x0f, 0x00],
        vec![0x64, 0x05, 0xfd, 0x03, 0x55, 0x01, 0x00],
        vec![0x64, 0x04, 0x50, 0x02, 0x05, 0x00],
        vec![0x05, 0x06, 0x07, 0x04, 0x08, 0x05, 0x61, 0x62],
        vec![0xff; 64],
        vec![0x00; 64],
    ];
    for (i, len) in [1usize, 7, 100, 1500, 8000, 9000].into_iter().enumerate() {
        garbage.push(pseudo_random_bytes(len, 0x9e37_79b9 + i as u64));
    }
    let mut oversize = vec![0x05, 0xfd, 0x27, 0x10];
    oversize.resize(10_004, 0x08);
    garbage.push(oversize);

    let udp = UdpSocket::bind("127.0.0.1:0").unwrap();
    for round in 0..20 {
        for g in &garbage {
            let _ = udp.send_to(g, ("127.0.0.1", r.port));
        }
        if round % 5 == 0 {
            for g in &garbage {
                if let Ok(mut t) = TcpStream::connect(("127.0.0.1", r.port)) {
                    let _ = t.write_all(g);
                }
                if let Ok(mut u) = UnixStream::connect(&r.sock) {
                    let _ = u.write_all(g);
                }
            }
        }
    }
    put_and_fetch(&r, "/after/barrage", 20_000, 3);
}

/// `faces.max_faces = 0`: no peer on the network gets a face, each refusal is
/// counted in `trajan status`, and local applications are served as before.
#[test]
fn a_router_at_its_face_limit_refuses_network_peers_but_serves_local_ones() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("limit.toml");
    std::fs::write(&cfg, "[faces]\nmax_faces = 0\n").unwrap();
    let r = Router::start_with(&["--config", cfg.to_str().unwrap()]);
    let udp = UdpSocket::bind("127.0.0.1:0").unwrap();
    let interest = [0x05, 0x05, 0x07, 0x03, 0x08, 0x01, 0x61];
    let drops = |r: &Router| -> u64 {
        let o = r.tool(&["status"]);
        assert!(o.status.success(), "{}", text(&o));
        let out = String::from_utf8_lossy(&o.stdout).to_string();
        out.split_whitespace().find_map(|w| w.strip_prefix("face-limit-drops=")).unwrap_or_else(|| panic!("no face-limit-drops in {out}")).parse().unwrap()
    };
    let mut refused = 0;
    for _ in 0..50 {
        udp.send_to(&interest, ("127.0.0.1", r.port)).unwrap();
        refused = drops(&r);
        if refused > 0 {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(refused > 0, "{}", r.log());
    let o = r.tool(&["face", "list"]);
    assert!(!String::from_utf8_lossy(&o.stdout).contains("udp4://127.0.0.1:"), "{}", text(&o));

    put_and_fetch(&r, "/local/only", 20_000, 4);
}

/// `face create tcp4://...` answers once the connection is made, as NFD's does:
/// a refused connection is an error (no face left behind), an accepted one a
/// face that carries a fetch at once. Router A runs two workers, so the
/// answer also takes the path through a worker.
#[test]
fn tcp_face_create_answers_after_connecting() {
    let a = Router::start_with(&["--workers", "2"]);
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let refused = format!("tcp4://{closed}");
    let o = a.tool(&["face", "create", &refused]);
    assert!(!o.status.success(), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("504") && err.contains("refused"), "{err}");
    // A permanent face too: it redials only once it has connected.
    let o = a.tool(&["face", "create", &refused, "--persistency", "permanent"]);
    assert!(!o.status.success() && String::from_utf8_lossy(&o.stderr).contains("504"), "{}", text(&o));
    let o = a.tool(&["face", "list"]);
    assert!(!String::from_utf8_lossy(&o.stdout).contains(&refused), "{}", text(&o));

    let b = Router::start();
    let file = random_file(b.dir.path(), 30_000, 5);
    let mut producer = b.spawn_tool(&["put", "/tcp/obj", file.to_str().unwrap()]);
    wait_ready_line(&mut producer);
    let b_uri = format!("tcp4://127.0.0.1:{}", b.port);
    let o = a.tool(&["face", "create", &b_uri]);
    assert!(o.status.success() && String::from_utf8_lossy(&o.stdout).contains("face-created"), "{}", text(&o));
    let o = a.tool(&["route", "add", "/tcp", &b_uri]);
    assert!(o.status.success(), "{}", text(&o));
    let out = a.dir.path().join("over-tcp.bin");
    let o = a.tool(&["get", "/tcp/obj", "-o", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}\nA:\n{}", text(&o), a.log());
    assert_eq!(std::fs::read(&out).unwrap(), std::fs::read(&file).unwrap());
    let _ = producer.kill();
}

/// A configured route over TCP to a neighbour that is not up yet: the router
/// starts anyway, the route's permanent face redials, and once the neighbour
/// listens the route carries a fetch.
#[test]
fn configured_tcp_route_waits_for_its_neighbour() {
    let b_port = free_port();
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("a.toml");
    std::fs::write(&cfg, format!("[[routes]]\nprefix = \"/later\"\nface = \"tcp4://127.0.0.1:{b_port}\"\n")).unwrap();
    let a = Router::start_with(&["--config", cfg.to_str().unwrap()]);
    let b = Router::start_on(b_port, &[]);
    let file = random_file(b.dir.path(), 20_000, 6);
    let mut producer = b.spawn_tool(&["put", "/later/obj", file.to_str().unwrap()]);
    wait_ready_line(&mut producer);
    // Interests sent while A's face waits to redial are dropped: retry until it has.
    let out = a.dir.path().join("later.bin");
    let o = a.tool(&["get", "/later/obj", "-o", out.to_str().unwrap(), "--timeout", "1000", "--retries", "15"]);
    assert!(o.status.success(), "{}\nA:\n{}", text(&o), a.log());
    assert_eq!(std::fs::read(&out).unwrap(), std::fs::read(&file).unwrap());
    let _ = producer.kill();
}

#[test]
fn sigterm_shuts_down_cleanly() {
    let mut r = Router::start();
    assert!(r.stop(), "{}", r.log());
    assert!(!r.sock.exists(), "the socket file is removed on shutdown");
}

#[test]
fn bad_config_names_line_and_key() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("bad.toml");
    std::fs::write(&cfg, "[tables]\ncs_capacity = 10\nno_such_key = 1\n").unwrap();
    let o = run_bounded(std::process::Command::new(trajan()).args(["run", "--config"]).arg(&cfg), Duration::from_secs(20));
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("line 3") && err.contains("no_such_key"), "{err}");
}

/// A start that fails says why once: the operating system's error ends the
/// message of the error that names the address or file, and is not printed
/// again as each error of the chain is reported.
#[test]
fn start_errors_name_the_cause_once() {
    let r = Router::start();
    let dir = tempfile::tempdir().unwrap();
    let taken = format!("127.0.0.1:{}", r.port);
    let mut cmd = std::process::Command::new(trajan());
    cmd.args(["run", "--unix"]).arg(dir.path().join("nfd.sock")).args(["--udp", &taken, "--tcp", &taken]);
    let o = run_bounded(&mut cmd, Duration::from_secs(20));
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    let last = err.lines().last().unwrap_or_default();
    assert!(last.contains(&format!("cannot listen on udp {taken}")), "{err}");
    assert_eq!(last.matches("(os error 98)").count(), 1, "{last}");

    let o = run_bounded(std::process::Command::new(trajan()).args(["run", "--config"]).arg(dir.path().join("missing.toml")), Duration::from_secs(20));
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("cannot read") && err.contains("missing.toml"), "{err}");
    assert_eq!(err.matches("(os error 2)").count(), 1, "{err}");
}

/// SIGHUP reloads the configuration file, as NFD's does, without a restart:
/// router A (two workers) gains a static route to router B, whose producer
/// then answers fetches through A, and loses it again; a file that does not
/// load leaves the running configuration, and the router runs on.
#[test]
fn sighup_reloads_static_routes_into_every_worker() {
    let b = Router::start();
    let file = random_file(b.dir.path(), 30_000, 6);
    let mut producer = b.spawn_tool(&["put", "/reload/obj", file.to_str().unwrap()]);
    wait_ready_line(&mut producer);

    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("trajan.toml");
    // No CS at A: each fetch must reach B over the route.
    let tables = "[tables]\ncs_capacity = 0\n";
    std::fs::write(&cfg, tables).unwrap();
    let a = Router::start_with(&["--workers", "2", "--config", cfg.to_str().unwrap()]);
    let fetch = |what: &str| {
        let out = a.dir.path().join(format!("{what}.bin"));
        let o = a.tool(&["get", "/reload/obj", "-o", out.to_str().unwrap(), "--retries", "1", "--timeout", "1000"]);
        (o.status.success() && std::fs::read(&out).unwrap() == std::fs::read(&file).unwrap(), text(&o))
    };
    assert!(!fetch("before").0, "no route yet");

    let route = format!("{tables}[[routes]]\nprefix = \"/reload\"\nface = \"udp4://127.0.0.1:{}\"\n", b.port);
    std::fs::write(&cfg, &route).unwrap();
    let log = a.reload(0);
    assert!(log.contains("reload: route + /reload via udp4://127.0.0.1:"), "{log}");
    assert!(!log.contains("changes only at the next start"), "the command line's overrides apply again:\n{log}");
    let (fetched, out) = fetch("routed");
    assert!(fetched, "{out}\nA:\n{}", a.log());

    std::fs::write(&cfg, "[tables\n").unwrap();
    let log = a.reload(1);
    assert!(log.contains("configuration not reloaded, the running one stays"), "{log}");
    assert!(fetch("still routed").0, "the running configuration stayed");

    std::fs::write(&cfg, format!("{tables}[faces]\nmax_faces = 7\n")).unwrap();
    let log = a.reload(2);
    assert!(log.contains("reload: route - /reload") && log.contains("faces.max_faces changes only at the next start"), "{log}");
    assert!(!fetch("unrouted").0, "the route is gone from every worker");
    let mut a = a;
    assert!(a.stop(), "the router ran on through three SIGHUPs and stops cleanly:\n{}", a.log());
    let _ = producer.kill();
}

/// A tool whose output reader has gone (`trajan default-config | head -1`, the
/// pipe closed before it writes) exits quietly with a shell's SIGPIPE status,
/// without a panic and a backtrace on the terminal.
#[test]
fn a_closed_output_pipe_ends_a_tool_quietly() {
    let (read_end, write_end) = nix::unistd::pipe().unwrap();
    drop(read_end);
    let mut child = std::process::Command::new(trajan())
        .arg("default-config")
        .stdout(std::process::Stdio::from(write_end))
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let status = wait_bounded(&mut child, Duration::from_secs(20)).expect("the tool ends");
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    assert_eq!(status.code(), Some(141), "{stderr}");
    assert!(stderr.is_empty(), "{stderr}");
}

/// SIGINT or SIGTERM during `trajan get -o FILE` removes the partial file and
/// exits as a shell reports that signal, saying so in one line. The forwarder
/// is a socket that takes the Interests and never answers them.
#[test]
fn an_interrupted_get_leaves_no_partial_file() {
    let dir = tempfile::tempdir().unwrap();
    let sock = dir.path().join("silent.sock");
    let _silent = std::os::unix::net::UnixListener::bind(&sock).unwrap();
    let transport = format!("unix://{}", sock.display());
    let out = dir.path().join("obj.bin");
    for (sig, status) in [("INT", 130), ("TERM", 143)] {
        let mut child = std::process::Command::new(trajan())
            .args(["get", "/silent/obj", "-o", out.to_str().unwrap(), "--timeout", "60000", "--transport", &transport])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let partial = dir.path().join(format!(".obj.bin.part-{}", child.id()));
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        while !partial.exists() {
            assert!(std::time::Instant::now() < deadline, "get never started writing {}", partial.display());
            std::thread::sleep(Duration::from_millis(20));
        }
        unsafe_free_signal(child.id(), sig);
        let exit = wait_bounded(&mut child, Duration::from_secs(20)).expect("get ends");
        let mut stderr = String::new();
        std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
        assert_eq!(exit.code(), Some(status), "SIG{sig}: {stderr}");
        assert_eq!(stderr, format!("trajan: interrupted by SIG{sig}\n"));
        assert!(!partial.exists() && !out.exists(), "SIG{sig} left output behind");
    }
}
