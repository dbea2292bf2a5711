//! `trajan gen` end to end through the real daemon: over UDP on loopback, and (with
//! `--features dpdk`) over two memif ports between the router and the generator in
//! another process, and over AF_XDP on veth pairs between network namespaces the
//! test creates — virtual devices, no NIC and no hugepages needed. Every run is
//! bounded in count and time.

mod common;

use std::process::Command;
#[cfg(feature = "dpdk")]
use std::{
    io::{BufRead, BufReader},
    process::Stdio,
};

use common::{trajan, Router};

/// Runs `trajan gen ARGS --json` and returns its JSON report.
fn gen(args: &[&str]) -> serde_json::Value {
    gen_cmd(Command::new(trajan()), args)
}

/// Runs `CMD gen ARGS --json` (CMD: `trajan`, or `trajan` inside a namespace).
fn gen_cmd(cmd: Command, args: &[&str]) -> serde_json::Value {
    let out = gen_args(cmd, args).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "gen failed: {}\n{stdout}", String::from_utf8_lossy(&out.stderr));
    report(stdout.lines().last().unwrap_or_default())
}

/// `CMD gen ARGS --json`, bounded in time, not yet run.
fn gen_args(mut cmd: Command, args: &[&str]) -> Command {
    cmd.arg("gen").args(args).args(["--json", "--duration", "20"]);
    cmd
}

/// The JSON report `gen --json` printed as `line`.
fn report(line: &str) -> serde_json::Value {
    serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line:?}"))
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
    // The generator holds its ports open after its report until the router
    // is gone: DPDK 22.11's memif driver can crash a router whose peer
    // disconnects while it polls (docs/ARCHITECTURE.md).
    let args = ["/gen", "--consumer", "dpdk:net_memif0", "--producer", "dpdk:net_memif1@udp4", "--eal=--no-pci", "--eal=--no-huge", &ce, &pe, "-c", "5000", "-w", "64", "--hold"];
    let mut g = gen_args(Command::new(trajan()), &args).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
    let mut line = String::new();
    BufReader::new(g.stdout.take().unwrap()).read_line(&mut line).unwrap();
    assert!(!line.is_empty(), "gen printed no report\nrouter log:\n{}", r.log());
    let j = report(&line);
    assert_eq!(j["satisfied"], 5000, "{j}\nrouter log:\n{}", r.log());
    assert_eq!(j["lost"], 0, "{j}");
    // Management lists the DPDK faces, with what they carried.
    let list = common::text(&r.tool(&["face", "list"]));
    for dev in ["dev://net_memif0", "dev://net_memif1"] {
        assert!(list.contains(dev), "{dev} missing from:\n{list}");
    }
    drop(r);
    drop(g.stdin.take());
    let status = g.wait().unwrap();
    assert!(status.success(), "gen after --hold: {status}");
}

/// Network namespaces made for one test, deleted (with their veths) on drop.
#[cfg(feature = "dpdk")]
struct Namespaces(Vec<String>);

#[cfg(feature = "dpdk")]
impl Namespaces {
    /// Runs `ip ARGS`, panicking with its error output on failure.
    fn ip(args: &[&str]) {
        let out = Command::new("ip").args(args).output().expect("the ip command (iproute2)");
        assert!(out.status.success(), "ip {}: {}", args.join(" "), String::from_utf8_lossy(&out.stderr));
    }

    /// Namespaces `<tag>-<pid>-<suffix>` for each suffix, loopback up.
    fn new(tag: &str, suffixes: &[&str]) -> Namespaces {
        let mut ns = Namespaces(Vec::new());
        for s in suffixes {
            let name = format!("{tag}-{}-{s}", std::process::id());
            Namespaces::ip(&["netns", "add", &name]);
            ns.0.push(name.clone());
            Namespaces::ip(&["-n", &name, "link", "set", "lo", "up"]);
        }
        ns
    }

    /// A veth pair, `a` in namespace `na` and `b` in `nb`, both up.
    fn veth(&self, (na, a): (usize, &str), (nb, b): (usize, &str)) {
        Namespaces::ip(&["link", "add", a, "netns", &self.0[na], "type", "veth", "peer", "name", b, "netns", &self.0[nb]]);
        Namespaces::ip(&["-n", &self.0[na], "link", "set", a, "up"]);
        Namespaces::ip(&["-n", &self.0[nb], "link", "set", b, "up"]);
    }
}

#[cfg(feature = "dpdk")]
impl Drop for Namespaces {
    fn drop(&mut self) {
        for n in &self.0 {
            let _ = Command::new("ip").args(["netns", "del", n]).status();
        }
    }
}

/// AF_XDP on veth: the router in one namespace, the generator's consumer and
/// producer in another, two veth pairs between them. Every Interest must come back:
/// DPDK 22.11's AF_XDP driver silently dropped the frames of mbufs outside the block
/// it registers with the kernel, and a default (page-bound) pool without hugepages
/// put 40 % of its mbufs there, so about 3 % of the exchanges were lost.
#[cfg(feature = "dpdk")]
#[test]
fn gen_over_af_xdp_on_veth_between_namespaces_loses_nothing() {
    // /proc/self belongs to the process's effective user.
    if std::os::unix::fs::MetadataExt::uid(&std::fs::metadata("/proc/self").unwrap()) != 0 {
        eprintln!("skipped: network namespaces need root");
        return;
    }
    let ns = Namespaces::new("trajan-xdp", &["r", "g"]);
    let (r, g) = (ns.0[0].as_str(), ns.0[1].as_str());
    ns.veth((1, "xg0"), (0, "xr0"));
    ns.veth((1, "xg1"), (0, "xr1"));
    let dir = tempfile::tempdir().unwrap();
    // A pool small enough that 5000 exchanges cycle through all of its mbufs.
    let config = "[tables]\ncs_capacity = 1024\n\
         [dpdk]\neal_args = [\"--no-pci\", \"--no-huge\", \"--vdev=net_af_xdp0,iface=xr0,busy_budget=0\", \"--vdev=net_af_xdp1,iface=xr1,busy_budget=0\"]\n\
         mbufs = 8191\nqueue_size = 256\n\
         [[dpdk.ports]]\nname = \"net_af_xdp0\"\n\
         [[dpdk.ports]]\nname = \"net_af_xdp1\"\n\
         [[routes]]\nprefix = \"/gen\"\nface = \"dev://net_af_xdp1\"\n";
    let path = dir.path().join("trajan.toml");
    std::fs::write(&path, config).unwrap();
    let router = Router::start_in(r, &["--workers", "1", "--config", path.to_str().unwrap()]);
    let mut cmd = Command::new("ip");
    cmd.args(["netns", "exec", g, trajan()]);
    let j = gen_cmd(
        cmd,
        &[
            "/gen", "--consumer", "dpdk:net_af_xdp0", "--producer", "dpdk:net_af_xdp1", "--eal=--no-pci", "--eal=--no-huge",
            "--eal=--vdev=net_af_xdp0,iface=xg0,busy_budget=0", "--eal=--vdev=net_af_xdp1,iface=xg1,busy_budget=0", "-c", "5000", "-w", "32",
        ],
    );
    assert_eq!(j["lost"], 0, "{j}\nrouter log:\n{}", router.log());
    assert_eq!(j["satisfied"], 5000, "{j}");
    drop(router);
}
