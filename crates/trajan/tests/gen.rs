//! `trajan gen` end to end through the real daemon: over UDP on loopback, and (with
//! `--features dpdk`) over two memif ports between the router and the generator in
//! another process — virtual devices, no NIC and no hugepages needed. Every run is
//! bounded in count and time.

mod common;

use std::process::Command;

use common::{trajan, Router};

/// Runs `trajan gen ARGS --json` and returns its JSON report.
fn gen(args: &[&str]) -> serde_json::Value {
    let out = Command::new(trajan()).arg("gen").args(args).args(["--json", "--duration", "20"]).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "gen failed: {}\n{stdout}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_str(stdout.lines().last().unwrap_or_default()).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

#[test]
fn gen_over_udp_is_answered_by_its_own_producer_through_the_router() {
    let r = Router::start_with(&["--workers", "1"]);
    let face = format!("udp://127.0.0.1:{}", r.port);
    let j = gen(&["/gen", "--consumer", &face, "--producer", &face, "-c", "2000", "-w", "32", "--size", "200"]);
    assert_eq!(j["sent"], 2000, "{j}");
    assert_eq!(j["satisfied"], 2000, "{j}");
    assert_eq!(j["lost"], 0, "{j}");
    assert_eq!(j["producer"]["data"], 2000, "{j}");
    let l = &j["latency_ns"];
    assert!(l["min"].as_u64() <= l["p50"].as_u64() && l["p50"].as_u64() <= l["p99"].as_u64() && l["p99"].as_u64() <= l["max"].as_u64(), "{j}");
}

#[cfg(feature = "dpdk")]
#[test]
fn gen_over_memif_ports_through_the_router_on_dpdk_faces() {
    gen_over_memif("1");
}

/// With two workers, memif ports (one queue: the peer opens one ring pair) are
/// polled by the I/O thread, which dispatches by name and sends what the workers
/// return.
#[cfg(feature = "dpdk")]
#[test]
fn gen_over_memif_ports_through_two_workers() {
    gen_over_memif("2");
}

/// Runs the generator through the router with `workers` on two memif ports.
#[cfg(feature = "dpdk")]
fn gen_over_memif(workers: &str) {
    let dir = tempfile::tempdir().unwrap();
    let sock = |n: &str| dir.path().join(n).display().to_string();
    let (c, p) = (sock("c.sock"), sock("p.sock"));
    let config = format!(
        "[dpdk]\neal_args = [\"--no-pci\", \"--no-huge\", \"-m\", \"512\", \"--vdev=net_memif0,role=server,socket={c},id=0\", \"--vdev=net_memif1,role=server,socket={p},id=0\"]\n\
         mbufs = 16383\n\
         [[dpdk.ports]]\nname = \"net_memif0\"\n\
         [[dpdk.ports]]\nname = \"net_memif1\"\nencap = \"udp4\"\n\
         [[routes]]\nprefix = \"/gen\"\nface = \"dev://net_memif1\"\n"
    );
    let path = dir.path().join("trajan.toml");
    std::fs::write(&path, config).unwrap();
    let r = Router::start_with(&["--workers", workers, "--config", path.to_str().unwrap()]);
    // Consumer on Ethernet (0x8624), producer on UDP/IPv4: two encapsulations at once.
    let (ce, pe) = (format!("--eal=--vdev=net_memif0,role=client,socket={c},id=0"), format!("--eal=--vdev=net_memif1,role=client,socket={p},id=0"));
    let j = gen(&["/gen", "--consumer", "dpdk:net_memif0", "--producer", "dpdk:net_memif1@udp4", "--eal=--no-pci", "--eal=--no-huge", &ce, &pe, "-c", "5000", "-w", "64"]);
    assert_eq!(j["satisfied"], 5000, "{j}\nrouter log:\n{}", r.log());
    assert_eq!(j["lost"], 0, "{j}");
    // Management lists the DPDK faces, with what they carried.
    let list = common::text(&r.tool(&["face", "list"]));
    for dev in ["dev://net_memif0", "dev://net_memif1"] {
        assert!(list.contains(dev), "{dev} missing from:\n{list}");
    }
    drop(r);
}
