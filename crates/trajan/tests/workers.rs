//! End-to-end with several forwarding workers: the real daemon started with
//! `--workers 2`, so every exchange crosses the I/O thread's name dispatch.

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

/// Publishes `names` (a file each), fetches each through the router with version
/// discovery (a CanBePrefix Interest answered by longer Data), and checks the bytes.
fn put_and_get(r: &Router, names: &[&str], size: usize) {
    let mut producers = Vec::new();
    let mut files = Vec::new();
    for (i, name) in names.iter().enumerate() {
        let file = random_file(r.dir.path(), size, 10 + i as u64);
        let mut p = r.spawn_tool(&["put", name, file.to_str().unwrap()]);
        wait_ready_line(&mut p);
        producers.push(p);
        files.push(file);
    }
    for (name, file) in names.iter().zip(&files) {
        let out = r.dir.path().join("fetched.bin");
        let o = r.tool(&["get", name, "-o", out.to_str().unwrap()]);
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
        put_and_get(&r, &["/w2/big"], 400_000);
        churn.join().unwrap();
    });
    for l in worker_lines(&r) {
        assert_eq!(field(&l, "unsolicited-data"), 0, "{l}");
        assert_eq!(field(&l, "ring-drops"), 0, "{l}");
    }
    let o = r.tool(&["route", "list"]);
    assert!(!String::from_utf8_lossy(&o.stdout).contains("/w2/churn"), "{}", text(&o));
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
