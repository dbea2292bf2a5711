//! End-to-end with several forwarding workers: the real daemon started with
//! `--workers 2`, so every exchange crosses the I/O thread's name dispatch — or,
//! with `--udp-ports`, reaches its worker directly on the worker's own UDP port.

mod common;

use std::net::UdpSocket;

use common::*;

/// The per-worker lines of `trajan status` ("worker N ...: key=value ...").
fn worker_lines(r: &Router) -> Vec<String> {
    let o = r.tool(&["status"]);
    assert!(o.status.success(), "{}", text(&o));
    String::from_utf8_lossy(&o.stdout).lines().filter(|l| l.starts_with("worker ")).map(str::to_owned).collect()
}

fn field(line: &str, key: &str) -> u64 {
    let prefix = format!("{key}=");
    line.split_whitespace()
        .find_map(|w| w.strip_prefix(prefix.as_str()))
        .unwrap_or_else(|| panic!("no {key} in {line}"))
        .parse()
        .unwrap()
}

/// Starts a 2-worker router with a UDP-port-by-hash face on loopback (ports chosen
/// by the kernel); returns it with the client options of a port-by-hash sender and
/// the face's first port.
fn hash_router() -> (Router, Vec<String>, u16) {
    hash_router_of(2)
}

/// [`hash_router`] with `workers` workers (and ports).
fn hash_router_of(workers: usize) -> (Router, Vec<String>, u16) {
    let n = workers.to_string();
    let r = Router::start_with(&["--workers", &n, "--udp-ports", "127.0.0.1:0"]);
    // The line is logged just after the Unix socket the harness waits for appears.
    let base = |log: String| -> Option<u16> {
        let line = log.lines().find(|l| l.contains("port-by-hash"))?.to_owned();
        line.split("127.0.0.1:").nth(1)?.split(|c: char| !c.is_ascii_digit()).next()?.parse().ok()
    };
    let base = (0..500)
        .find_map(|_| {
            let found = base(r.log());
            if found.is_none() {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            found
        })
        .unwrap_or_else(|| panic!("no port-by-hash face in the log:\n{}", r.log()));
    let client = vec!["--transport".into(), format!("udp://127.0.0.1:{base}"), "--udp-ports".into(), n];
    (r, client, base)
}

/// Sums one key over the per-worker lines.
fn total(lines: &[String], key: &str) -> u64 {
    lines.iter().map(|l| field(l, key)).sum()
}

/// Publishes `names` (a file each), fetches each through the router with version
/// discovery (a CanBePrefix Interest answered by longer Data), and checks the bytes.
fn put_and_get(r: &Router, names: &[&str], size: usize) {
    put_and_get_with(r, &r.unix_client(), names, size)
}

/// [`put_and_get`] with producers and consumers using these client options.
fn put_and_get_with(r: &Router, client: &[String], names: &[&str], size: usize) {
    let mut producers = Vec::new();
    let mut files = Vec::new();
    for (i, name) in names.iter().enumerate() {
        let file = random_file(r.dir.path(), size, 10 + i as u64);
        let mut p = r.spawn_tool_with(client, &["put", name, file.to_str().unwrap()]);
        wait_ready_line(&mut p);
        producers.push(p);
        files.push(file);
    }
    for (name, file) in names.iter().zip(&files) {
        let out = r.dir.path().join("fetched.bin");
        let o = r.tool_with(client, &["get", name, "-o", out.to_str().unwrap()]);
        assert!(o.status.success(), "get {name}: {}\nrouter log:\n{}", text(&o), r.log());
        assert_eq!(std::fs::read(&out).unwrap(), std::fs::read(file).unwrap(), "{name}");
    }
    for mut p in producers {
        let _ = p.kill();
        let _ = p.wait();
    }
}

#[test]
fn can_be_prefix_fetches_work_and_every_data_meets_its_interest() {
    let r = Router::start_with(&["--workers", "2"]);
    put_and_get(&r, &["/w2/alpha", "/w2/beta", "/w2/gamma", "/w2/delta", "/w2/epsilon", "/w2/zeta"], 60_000);
    let lines = worker_lines(&r);
    assert_eq!(lines.len(), 2, "{lines:?}");
    for l in &lines {
        assert!(field(l, "in-interests") > 0, "a worker got no exchange: {l}");
        assert!(field(l, "in-data") > 0, "{l}");
        // Data that reached a worker other than its Interest's would be unsolicited there.
        assert_eq!(field(l, "unsolicited-data"), 0, "{l}");
        assert_eq!(field(l, "ring-drops"), 0, "{l}");
    }
    assert!(r.log().contains("worker 1 on cpu"), "placement is logged");
}

#[test]
fn route_churn_during_a_fetch_loses_nothing() {
    let r = Router::start_with(&["--workers", "2"]);
    churn_during_a_fetch(&r, &r.unix_client());
}

#[test]
fn route_churn_during_a_port_by_hash_fetch_loses_nothing() {
    let (r, client, _) = hash_router();
    churn_during_a_fetch(&r, &client);
    assert!(total(&worker_lines(&r), "direct") > 0);
}

/// Adds and removes routes while a large object is fetched with `client`'s options.
fn churn_during_a_fetch(r: &Router, client: &[String]) {
    let peer = UdpSocket::bind("127.0.0.1:0").unwrap();
    let peer_uri = format!("udp4://{}", peer.local_addr().unwrap());
    let o = r.tool(&["face", "create", &peer_uri]);
    assert!(o.status.success(), "{}", text(&o));
    std::thread::scope(|s| {
        let churn = s.spawn(|| {
            for i in 0..10 {
                let prefix = format!("/w2/churn{i}");
                let o = r.tool(&["route", "add", &prefix, &peer_uri]);
                assert!(o.status.success(), "{}", text(&o));
                let o = r.tool(&["route", "remove", &prefix, &peer_uri]);
                assert!(o.status.success(), "{}", text(&o));
            }
        });
        put_and_get_with(r, client, &["/w2/big"], 400_000);
        churn.join().unwrap();
    });
    for l in worker_lines(r) {
        assert_eq!(field(&l, "unsolicited-data"), 0, "{l}");
        assert_eq!(field(&l, "ring-drops"), 0, "{l}");
    }
    let o = r.tool(&["route", "list"]);
    assert!(!String::from_utf8_lossy(&o.stdout).contains("/w2/churn"), "{}", text(&o));
}

#[test]
fn port_by_hash_exchanges_reach_their_worker_without_hand_off() {
    let (r, client, _) = hash_router();
    put_and_get_with(&r, &client, &["/h2/alpha", "/h2/beta", "/h2/gamma", "/h2/delta"], 200_000);
    let lines = worker_lines(&r);
    assert_eq!(lines.len(), 2, "{lines:?}");
    for l in &lines {
        assert!(field(l, "direct") > 0, "a worker read nothing on its port: {l}");
        assert_eq!(field(l, "unsolicited-data"), 0, "{l}");
        assert_eq!(field(l, "ring-drops"), 0, "{l}");
    }
    // Only a new peer's first packets (before the workers know its face) and
    // management go through the I/O thread: 4 × 25 segments were fetched.
    let (direct, punted) = (total(&lines, "direct"), total(&lines, "punted"));
    assert!(direct >= 2 * 4 * 25 - punted && direct > punted, "direct={direct} punted={punted}");
    // A one-component CanBePrefix Interest is keyed differently from its Data:
    // the I/O thread still routes that Data to the Interest's worker.
    put_and_get_with(&r, &client, &["/h1solo"], 30_000);
}

#[test]
fn one_worker_reads_its_single_hash_port_on_the_io_thread() {
    let (r, client, _) = hash_router_of(1);
    put_and_get_with(&r, &client, &["/h1/file"], 30_000);
}

#[test]
fn senders_on_a_single_or_wrong_port_are_still_served() {
    let (r, _, base) = hash_router();
    // Connected sockets to one port each: half the names belong to the other
    // worker, and every reply must come from the port the client talks to.
    for port in [base, base + 1] {
        let client = vec!["--transport".to_owned(), format!("udp://127.0.0.1:{port}")];
        put_and_get_with(&r, &client, &[&format!("/p{port}/a"), &format!("/p{port}/b"), &format!("/p{port}/c")], 60_000);
    }
    let lines = worker_lines(&r);
    for l in &lines {
        assert!(field(l, "punted") > 0, "no misdirected packet was handed over: {l}");
        assert_eq!(field(l, "unsolicited-data"), 0, "{l}");
        assert_eq!(field(l, "ring-drops"), 0, "{l}");
    }
}

/// Sends a ping for `/ping/<seq>` on `sock` and waits for its Data: the
/// dispatch key (two components) differs per ping, so pings spread over workers.
fn ping_over(sock: &UdpSocket, seq: u32) -> Result<(), String> {
    use trajan_wire::{Data, Interest, Name};
    let name: Name = format!("/ping/{seq}").parse().unwrap();
    let mut i = Interest::new(name.clone());
    i.nonce = Some(0x5eed_0000 + seq);
    i.lifetime_ms = Some(2000);
    sock.send(&i.encode()).unwrap();
    let mut buf = vec![0u8; 9000];
    match sock.recv(&mut buf) {
        Ok(n) => match Data::decode(&buf[..n].to_vec().into()) {
            Ok(d) if *d.name() == name => Ok(()),
            other => Err(format!("ping {seq}: unexpected reply {other:?}")),
        },
        Err(e) => Err(format!("ping {seq}: no reply ({e})")),
    }
}

#[test]
fn a_new_socket_on_a_departed_peers_address_hears_back_from_the_port_it_uses() {
    // The kernel may give a new client the address of one that has gone, whose
    // face the router still has: that face must now answer from the new client's
    // port, whichever worker owns the name (about half the pings go to each).
    let (r, _, base) = hash_router();
    let mut server = r.spawn_tool(&["ping", "--serve", "/"]);
    wait_ready_line(&mut server);
    let first = UdpSocket::bind("127.0.0.1:0").unwrap();
    let addr = first.local_addr().unwrap();
    first.connect(("127.0.0.1", base)).unwrap();
    first.set_read_timeout(Some(std::time::Duration::from_secs(3))).unwrap();
    for seq in 0..8 {
        ping_over(&first, seq).unwrap();
    }
    drop(first);
    let second = UdpSocket::bind(addr).unwrap();
    second.connect(("127.0.0.1", base + 1)).unwrap();
    second.set_read_timeout(Some(std::time::Duration::from_secs(3))).unwrap();
    let lost: Vec<String> = (100..116).filter_map(|seq| ping_over(&second, seq).err()).collect();
    let _ = server.kill();
    let _ = server.wait();
    assert!(lost.is_empty(), "{lost:?}\nrouter log:\n{}", r.log());
    assert!(r.log().contains("one-port peer moved"), "{}", r.log());
}

#[test]
fn one_worker_forwards_on_the_io_thread() {
    let r = Router::start_with(&["--workers", "1"]);
    put_and_get(&r, &["/w1/file"], 30_000);
    let lines = worker_lines(&r);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(lines[0].starts_with("worker 0:"), "unpinned: {lines:?}");
    assert!(r.log().contains("1 worker: forwarding on the I/O thread"));
}

#[test]
fn a_router_forwards_to_a_port_by_hash_neighbour_on_its_owners_ports() {
    // B serves /chain from a local producer on a 2-port hash face; A routes /chain
    // to B's ports as a port-by-hash neighbour face.
    // A sends from its I/O thread, or with its own ports from its workers.
    for a_ports in [None, Some("127.0.0.1:0")] {
        chain_to_a_neighbour(a_ports);
    }
}

fn chain_to_a_neighbour(a_ports: Option<&str>) {
    let (b, _, b_base) = hash_router();
    let cfg = b.dir.path().join("a.toml");
    std::fs::write(&cfg, format!("[[routes]]\nprefix = \"/chain\"\nface = \"udp4://127.0.0.1:{b_base}\"\nudp_ports = 2\n")).unwrap();
    let mut args = vec!["--workers", "2", "--config", cfg.to_str().unwrap()];
    args.extend(a_ports.iter().flat_map(|p| ["--udp-ports", p]));
    let a = Router::start_with(&args);
    let file = random_file(b.dir.path(), 200_000, 77);
    let names = ["/chain/one", "/chain/two", "/chain/three"];
    let mut producers: Vec<_> = names.iter().map(|n| b.spawn_tool(&["put", n, file.to_str().unwrap()])).collect();
    for p in &mut producers {
        wait_ready_line(p);
    }
    for name in names {
        let out = a.dir.path().join("fetched.bin");
        let o = a.tool(&["get", name, "-o", out.to_str().unwrap()]);
        assert!(o.status.success(), "get {name}: {}\nA:\n{}\nB:\n{}", text(&o), a.log(), b.log());
        assert_eq!(std::fs::read(&out).unwrap(), std::fs::read(&file).unwrap());
    }
    for mut p in producers {
        let _ = p.kill();
        let _ = p.wait();
    }
    // On B, A's Interests arrived on the ports of the workers owning them.
    let lines = worker_lines(&b);
    for l in &lines {
        assert!(field(l, "direct") > 0, "{l}");
        assert_eq!(field(l, "unsolicited-data"), 0, "{l}");
    }
    assert!(total(&lines, "direct") > total(&lines, "punted"), "{a_ports:?}: {lines:?}");
    if a_ports.is_some() {
        assert!(total(&worker_lines(&a), "direct") > 0, "B's Data reached A's workers on their ports");
    }
}
