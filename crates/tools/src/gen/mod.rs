//! `trajan gen`: Augustus' traffic generator and sink (§4, Figure 4). A consumer
//! sends Interests for unique (or Zipf-popular) names at a target or maximum rate;
//! a producer answers every Interest with Data of a chosen size. Either side, or
//! both, runs over a forwarder's UDP face or a DPDK port, all in one thread that
//! polls without blocking, so the generator can sit on both ends of a router (or of
//! `dpdk-testpmd`) on one core. The run is bounded by `--count` and `--duration`.
//! The report gives sent, satisfied, lost, rates and latency percentiles, as a line
//! or (`--json`) one JSON object.

mod consumer;
mod ports;
mod producer;

use std::io::Write;
use std::net::Ipv4Addr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use trajan_io::encap::{Encap, Link, LinkAddrs};
use trajan_wire::Name;

pub use consumer::{Consumer, ConsumerStats, Names};
pub use ports::{GenPort, PortSpec, UdpPort};
pub use producer::{Producer, ProducerStats};

use crate::client::parse_name;
use crate::stop::{set_at_stdin_end, stop_flag};

/// How long the ports' links may take to come up.
const LINK_TIMEOUT: Duration = Duration::from_secs(10);

/// Arguments of `trajan gen`.
#[derive(clap::Args, Debug, Clone)]
pub struct GenArgs {
    /// Name prefix of the traffic: names are PREFIX/pK/N
    pub prefix: String,
    /// Consumer port: udp://HOST:PORT (a forwarder's UDP face), dpdk:NAME or dpdk:NAME@ENCAP
    #[arg(long, value_name = "PORT")]
    pub consumer: Option<PortSpec>,
    /// Producer port: udp://HOST:PORT (registers the prefix there), dpdk:NAME or dpdk:NAME@ENCAP
    #[arg(long, value_name = "PORT")]
    pub producer: Option<PortSpec>,
    /// Stop sending after this many Interests
    #[arg(short = 'c', long, default_value_t = 1_000_000, value_parser = clap::value_parser!(u64).range(1..=1_000_000_000))]
    pub count: u64,
    /// Stop sending after this many seconds (a producer alone serves this long)
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=600))]
    pub duration: u64,
    /// Interests per second; 0 = as fast as the window allows
    #[arg(long, default_value_t = 0.0)]
    pub rate: f64,
    /// Interests in flight at most
    #[arg(short = 'w', long, default_value_t = 256, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub window: u32,
    /// Zipf exponent of name popularity over --names names; 0 = a unique name per Interest
    #[arg(long, default_value_t = 0.0)]
    pub zipf: f64,
    /// Distinct names for --zipf
    #[arg(long, default_value_t = 1_000_000, value_parser = clap::value_parser!(u64).range(1..=1_000_000_000))]
    pub names: u64,
    /// Distinct components after the prefix (the pK). A multi-worker router
    /// dispatches on a name's first two components, so with a one-component prefix
    /// the names spread over its workers; with a longer one they all go to one worker
    #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub prefixes: u32,
    /// Content bytes of each Data the producer sends
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u64).range(0..=8000))]
    pub size: u64,
    /// InterestLifetime (ms): an Interest unanswered by then is lost
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u64).range(1..=60_000))]
    pub lifetime: u64,
    /// EAL argument for DPDK ports (repeatable), e.g. --eal=--vdev=net_memif0,socket=/tmp/a.sock
    #[arg(long, allow_hyphen_values = true)]
    pub eal: Vec<String>,
    /// Encapsulation on DPDK ports without their own @ENCAP: ether (0x8624), udp4 or icn4 (Augustus, IPv4 protocol 253)
    #[arg(long, default_value = "ether")]
    pub encap: Encap,
    /// This end's IPv4 address on DPDK ports (udp4, icn4)
    #[arg(long, default_value = "192.0.2.2")]
    pub local_ip: Ipv4Addr,
    /// The router's IPv4 address on DPDK ports (udp4, icn4)
    #[arg(long, default_value = "192.0.2.1")]
    pub remote_ip: Ipv4Addr,
    /// Print one JSON object instead of a line
    #[arg(long)]
    pub json: bool,
    /// After the report, keep the ports open until stdin closes (or SIGINT/SIGTERM).
    /// A router whose memif peer disconnects while it polls the port can crash
    /// (DPDK 22.11's driver, docs/ARCHITECTURE.md): a script that runs the
    /// generator against one reads the report, stops the router, then closes
    /// the generator's stdin
    #[arg(long)]
    pub hold: bool,
}

/// The whole report.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// The consumer's counts; none when the run had no consumer port.
    pub consumer: Option<ConsumerStats>,
    /// min, p50, p99, max of the satisfied Interests' round trips, in ns.
    pub latency_ns: [u64; 4],
    /// The producer's counts; none when the run had no producer port.
    pub producer: Option<ProducerStats>,
    /// Packets the ports could not send.
    pub send_drops: u64,
}

impl Report {
    /// The JSON object `--json` prints.
    pub fn json(&self) -> serde_json::Value {
        let c = self.consumer.clone().unwrap_or_default();
        let per_s = |n: u64| if c.seconds > 0.0 { n as f64 / c.seconds } else { 0.0 };
        let [min, p50, p99, max] = self.latency_ns;
        let p = self.producer.clone().unwrap_or_default();
        serde_json::json!({
            "sent": c.sent, "satisfied": c.satisfied, "lost": c.lost, "nacked": c.nacked,
            "unexpected": c.unexpected, "seconds": c.seconds,
            "interests_per_sec": per_s(c.sent), "data_per_sec": per_s(c.satisfied),
            "latency_ns": { "min": min, "p50": p50, "p99": p99, "max": max },
            "producer": { "interests": p.interests, "data": p.data, "ignored": p.ignored },
            "send_drops": self.send_drops,
        })
    }

    /// One line of `key=value` fields.
    pub fn line(&self) -> String {
        let j = self.json();
        let mut parts = Vec::new();
        for key in ["sent", "satisfied", "lost", "nacked", "interests_per_sec", "data_per_sec"] {
            parts.push(format!("{key}={:.0}", j[key].as_f64().unwrap_or(0.0)));
        }
        let l = &j["latency_ns"];
        parts.push(format!("latency-us(min/p50/p99/max)={:.1}/{:.1}/{:.1}/{:.1}", nsf(l, "min"), nsf(l, "p50"), nsf(l, "p99"), nsf(l, "max")));
        parts.push(format!("produced={} send-drops={}", j["producer"]["data"], self.send_drops));
        parts.join(" ")
    }
}

fn nsf(v: &serde_json::Value, k: &str) -> f64 {
    v[k].as_f64().unwrap_or(0.0) / 1000.0
}

/// The ports of a run; DPDK ones share one EAL.
struct Ports {
    consumer: Option<Box<dyn GenPort>>,
    producer: Option<Box<dyn GenPort>>,
}

fn open_ports(args: &GenArgs, prefix: &Name) -> anyhow::Result<Ports> {
    #[cfg(feature = "dpdk")]
    let dpdk = match (&args.consumer, &args.producer) {
        (Some(PortSpec::Dpdk(..)), _) | (_, Some(PortSpec::Dpdk(..))) => Some(ports::DpdkPorts::start(&args.eal)?),
        _ => None,
    };
    let link = Link {
        encap: args.encap,
        addrs: LinkAddrs { local_ip: args.local_ip, remote_ip: args.remote_ip, ..LinkAddrs::default() },
    };
    let open = |spec: &Option<PortSpec>, register: Option<&Name>| -> anyhow::Result<Option<Box<dyn GenPort>>> {
        Ok(match spec {
            None => None,
            Some(PortSpec::Udp(hp)) => Some(Box::new(UdpPort::open(hp, register)?)),
            #[cfg(feature = "dpdk")]
            Some(PortSpec::Dpdk(name, encap)) => {
                let link = Link { encap: encap.unwrap_or(link.encap), ..link };
                Some(Box::new(dpdk.as_ref().expect("started above").open(name, link)?))
            }
            #[cfg(not(feature = "dpdk"))]
            Some(PortSpec::Dpdk(..)) => {
                let _ = link;
                bail!("this trajan was built without DPDK: rebuild with `--features dpdk`")
            }
        })
    };
    let consumer = open(&args.consumer, None)?;
    let producer = open(&args.producer, Some(prefix))?;
    Ok(Ports { consumer, producer })
}

/// Waits until every port can carry packets, asking those that cannot to retry
/// every second (a memif client refused by a server not yet started).
fn wait_ready(ports: &mut Ports) -> anyhow::Result<()> {
    let start = Instant::now();
    let mut retried = 0;
    loop {
        let elapsed = start.elapsed();
        let retry = elapsed.as_secs() > retried;
        retried = elapsed.as_secs();
        let mut all = true;
        for p in [&mut ports.consumer, &mut ports.producer].into_iter().flatten() {
            all &= p.ready(retry)?;
        }
        if all {
            return Ok(());
        }
        if elapsed >= LINK_TIMEOUT {
            bail!("a DPDK port's link is still down after {LINK_TIMEOUT:?} (is its peer running?)");
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// A finished run: its report, and its ports, still open until dropped (see
/// `--hold`).
struct Finished {
    report: Report,
    ports: Ports,
    stop: Arc<AtomicBool>,
}

/// Runs the generator until the consumer is done (or, with only a producer, for
/// `--duration`), or SIGINT/SIGTERM.
fn generate(args: &GenArgs) -> anyhow::Result<Finished> {
    let prefix = parse_name(&args.prefix)?;
    if args.consumer.is_none() && args.producer.is_none() {
        bail!("give --consumer PORT, --producer PORT or both");
    }
    if !(args.rate >= 0.0 && args.rate.is_finite() && args.zipf >= 0.0 && args.zipf.is_finite()) {
        bail!("--rate and --zipf must be finite and not negative");
    }
    let names = if args.zipf > 0.0 { Names::Zipf(rand_distr::Zipf::new(args.names, args.zipf)?) } else { Names::Unique };
    let mut ports = open_ports(args, &prefix)?;
    wait_ready(&mut ports)?;
    let stop = stop_flag(None)?;
    let duration = Duration::from_secs(args.duration);
    let lifetime = Duration::from_millis(args.lifetime);
    let mut consumer = ports.consumer.as_ref().map(|_| {
        Consumer::new(prefix.clone(), args.prefixes, names, args.rate, args.window as usize, lifetime, args.count, duration)
    });
    let mut producer = ports.producer.as_ref().map(|_| Producer::new(prefix.clone(), args.size as usize));
    let mut rng = rand::thread_rng();
    let start = Instant::now();
    // A hard bound whatever happens: sending time, one lifetime to drain, a second.
    let hard_end = start + duration + lifetime + Duration::from_secs(1);
    loop {
        let now = Instant::now();
        if stop.load(Ordering::Relaxed) || now >= hard_end {
            break;
        }
        if let (Some(p), Some(port)) = (&mut producer, &mut ports.producer) {
            p.step(port.as_mut());
        }
        match (&mut consumer, &mut ports.consumer) {
            (Some(c), Some(port)) => {
                c.step(port.as_mut(), &mut rng);
                if c.done(now) {
                    break;
                }
            }
            _ if now >= start + duration => break,
            _ => {}
        }
    }
    let mut report = Report { producer: producer.map(|p| p.stats), ..Report::default() };
    report.send_drops = [&ports.consumer, &ports.producer].iter().filter_map(|p| p.as_ref()).map(|p| p.dropped()).sum();
    if let Some(mut c) = consumer {
        let h = &c.latency;
        if !h.is_empty() {
            report.latency_ns = [h.min(), h.value_at_quantile(0.5), h.value_at_quantile(0.99), h.max()];
        }
        report.consumer = Some(c.finish());
    }
    Ok(Finished { report, ports, stop })
}

/// `trajan gen`: prints the report; fails when a consumer sent nothing or got
/// nothing back.
pub fn run(args: GenArgs) -> anyhow::Result<()> {
    let Finished { report, ports, stop } = generate(&args)?;
    if args.json {
        println!("{}", report.json());
    } else {
        println!("{}", report.line());
    }
    if args.hold {
        std::io::stdout().flush().context("writing the report")?;
        set_at_stdin_end(&stop);
        while !stop.load(Ordering::Relaxed) {
            std::thread::sleep(Duration::from_millis(10));
        }
    }
    drop(ports);
    match report.consumer {
        Some(c) if c.sent == 0 => {
            let why = if args.rate > 0.0 { format!(" (--rate {} for --duration {} s comes to less than one)", args.rate, args.duration) } else { String::new() };
            bail!("the consumer sent no Interest{why}")
        }
        Some(c) if c.satisfied == 0 => bail!("no Data came back for {} Interests under {}", c.sent, args.prefix),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A run whose rate allows no Interest in its duration is a failure, not
    /// a report of zeros.
    #[test]
    fn a_consumer_that_sends_nothing_fails() {
        let argv = ["gen", "/g", "--consumer", "udp://127.0.0.1:9", "--rate", "0.5", "--duration", "1"];
        let err = run(crate::test_args::parse::<GenArgs>(&argv).unwrap()).unwrap_err().to_string();
        assert!(err.contains("sent no Interest (--rate 0.5 for --duration 1 s comes to less than one)"), "{err}");
    }

    #[test]
    fn json_has_the_documented_fields() {
        let c = ConsumerStats { sent: 10, satisfied: 8, lost: 2, seconds: 2.0, ..Default::default() };
        let r = Report { consumer: Some(c), latency_ns: [1000, 2000, 3000, 4000], ..Default::default() };
        let j = r.json();
        assert_eq!((j["sent"].as_u64(), j["satisfied"].as_u64(), j["lost"].as_u64()), (Some(10), Some(8), Some(2)));
        assert_eq!((j["interests_per_sec"].as_f64(), j["data_per_sec"].as_f64()), (Some(5.0), Some(4.0)));
        assert_eq!(j["latency_ns"]["p99"].as_u64(), Some(3000));
        assert!(r.line().contains("latency-us(min/p50/p99/max)=1.0/2.0/3.0/4.0"), "{}", r.line());
    }
}
