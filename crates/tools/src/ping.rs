//! `trajan ping`: reachability and round-trip time to a prefix, compatible with
//! ndnping/ndnpingserver (Interests `<prefix>/ping/<sequence number as text>`).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use trajan_wire::data::DataBuilder;
use trajan_wire::{Interest, Name};

use crate::client::{name_arg, Client, ClientArgs, Event, Pipeline};
use crate::stop::stop_flag;

/// How long a ping reply may be served from a cache, as ndnpingserver sets it.
pub const SERVER_FRESHNESS_MS: u64 = 1000;
/// What the server puts in every reply.
const SERVER_CONTENT: &[u8] = b"Trajan ping";

/// Arguments of `trajan ping`.
#[derive(clap::Args, Debug, Clone)]
pub struct PingArgs {
    /// Prefix to ping (or, with --serve, to answer pings for)
    #[arg(value_parser = name_arg)]
    pub prefix: Name,
    /// Stop after COUNT pings (with --serve: after answering COUNT and a quiet moment) [default: until interrupted]
    #[arg(short = 'c', long, value_parser = clap::value_parser!(u64).range(1..))]
    pub count: Option<u64>,
    /// Milliseconds between pings
    #[arg(short = 'i', long, default_value_t = 1000, value_parser = clap::value_parser!(u64).range(1..))]
    pub interval: u64,
    /// Milliseconds to wait for each reply (InterestLifetime)
    #[arg(long, default_value_t = 4000, value_parser = clap::value_parser!(u64).range(1..))]
    pub timeout: u64,
    /// Answer pings under the prefix instead of sending them (like ndnpingserver)
    #[arg(long)]
    pub serve: bool,
    /// How to reach the forwarder (`--transport`, `--udp-ports`).
    #[command(flatten)]
    pub client: ClientArgs,
}

/// `<prefix>/ping`, the name pings are sent under.
fn ping_prefix(prefix: &Name) -> Name {
    prefix.append_generic(b"ping")
}

/// Round-trip statistics, as ping prints them.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Stats {
    /// Pings sent.
    pub sent: u64,
    /// Pings answered by a Nack (counted as lost).
    pub nacked: u64,
    /// Round-trip times of the answered pings, in milliseconds.
    pub rtts: Vec<f64>,
}

impl Stats {
    /// The summary lines printed at the end.
    pub fn summary(&self, prefix: &Name) -> String {
        let received = self.rtts.len() as u64;
        let lost = self.sent - received;
        let mut s = format!(
            "--- {prefix} ping statistics ---\n{} packets transmitted, {received} received, {:.1}% lost, {} nacked",
            self.sent,
            if self.sent == 0 { 0.0 } else { lost as f64 * 100.0 / self.sent as f64 },
            self.nacked
        );
        if received > 0 {
            let n = received as f64;
            let min = self.rtts.iter().copied().fold(f64::INFINITY, f64::min);
            let max = self.rtts.iter().copied().fold(0.0, f64::max);
            let avg = self.rtts.iter().sum::<f64>() / n;
            let mdev = (self.rtts.iter().map(|r| (r - avg) * (r - avg)).sum::<f64>() / n).sqrt();
            s += &format!("\nrtt min/avg/max/mdev = {min:.3}/{avg:.3}/{max:.3}/{mdev:.3} ms");
        }
        s
    }
}

fn run_client(args: &PingArgs, prefix: &Name) -> anyhow::Result<()> {
    let stop = stop_flag(None)?;
    let mut client = Client::from_args(&args.client)?;
    let base = ping_prefix(prefix);
    let interval = Duration::from_millis(args.interval);
    let mut seq: u64 = rand::random::<u32>().into();
    let mut pipeline: Pipeline<u64> = Pipeline::new();
    let mut sent_at: HashMap<u64, Instant> = HashMap::new();
    let mut stats = Stats::default();
    let mut next_send = Instant::now();
    println!("PING {base}");
    while !stop.load(Ordering::Relaxed) {
        let more = args.count.is_none_or(|c| stats.sent < c);
        if !more && pipeline.is_empty() {
            break;
        }
        let now = Instant::now();
        if more && now >= next_send {
            let mut i = Interest::new(base.append_generic(seq.to_string().as_bytes()));
            i.must_be_fresh = true;
            i.lifetime_ms = Some(args.timeout);
            pipeline.express(&mut client, seq, i)?;
            sent_at.insert(seq, now);
            stats.sent += 1;
            seq += 1;
            next_send += interval;
        }
        let tick = now + Duration::from_millis(100);
        let until = if more { next_send.min(tick) } else { tick };
        for ev in pipeline.poll(&mut client, until)? {
            let (s, line) = match ev {
                Event::Data(s, d) => {
                    let rtt = sent_at.get(&s).map_or(0.0, |t| t.elapsed().as_secs_f64() * 1000.0);
                    stats.rtts.push(rtt);
                    (s, format!("content from {}: seq={s} time={rtt:.3} ms", d.name().prefix(d.name().len().saturating_sub(2))))
                }
                Event::Nack(s, r) => {
                    stats.nacked += 1;
                    (s, format!("nack from {prefix}: seq={s} reason={r:?}"))
                }
                Event::Timeout(s) => (s, format!("timeout from {prefix}: seq={s}")),
            };
            sent_at.remove(&s);
            println!("{line}");
        }
    }
    println!("\n{}", stats.summary(prefix));
    if stats.sent > 0 && stats.rtts.is_empty() {
        bail!("no reply from {prefix}: all {} pings lost", stats.sent);
    }
    Ok(())
}

/// Whether `interest` is a ping for the server at `base` (`<prefix>/ping`).
fn is_ping(base: &Name, interest: &Interest) -> bool {
    interest.name.len() == base.len() + 1 && base.is_prefix_of(&interest.name)
}

fn run_server(args: &PingArgs, prefix: &Name) -> anyhow::Result<()> {
    let stop = stop_flag(None)?;
    let done = AtomicBool::new(false);
    let mut client = Client::from_args(&args.client)?;
    let base = ping_prefix(prefix);
    client.register(&base).with_context(|| format!("registering {base}"))?;
    println!("READY ping server {base}");
    let mut answered = 0u64;
    client.serve_until_done(&stop, &done, |interest| {
        if !is_ping(&base, interest) {
            return None;
        }
        println!("interest received: {}", interest.name);
        answered += 1;
        if args.count.is_some_and(|c| answered >= c) {
            done.store(true, Ordering::Relaxed);
        }
        Some(DataBuilder::new(interest.name.clone()).freshness_ms(SERVER_FRESHNESS_MS).build(SERVER_CONTENT))
    })?;
    let _ = client.unregister(&base);
    eprintln!("ping server: answered {answered} pings");
    Ok(())
}

/// Runs `trajan ping`: the client fails when every ping is lost.
pub fn run(args: PingArgs) -> anyhow::Result<()> {
    if args.serve {
        run_server(&args, &args.prefix)
    } else {
        run_client(&args, &args.prefix)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_args::parse;


    #[test]
    fn summary_reports_loss_and_rtt() {
        let p: Name = "/p".parse().unwrap();
        let s = Stats { sent: 4, nacked: 1, rtts: vec![1.0, 3.0] };
        let text = s.summary(&p);
        assert!(text.contains("4 packets transmitted, 2 received, 50.0% lost, 1 nacked"), "{text}");
        assert!(text.contains("rtt min/avg/max/mdev = 1.000/2.000/3.000/1.000 ms"), "{text}");
        assert!(!Stats::default().summary(&p).contains("rtt"));
    }

    #[test]
    fn server_answers_only_pings() {
        let base = ping_prefix(&"/p".parse().unwrap());
        assert!(is_ping(&base, &Interest::new("/p/ping/17".parse().unwrap())));
        assert!(!is_ping(&base, &Interest::new("/p/ping".parse().unwrap())));
        assert!(!is_ping(&base, &Interest::new("/p/ping/1/2".parse().unwrap())));
        assert!(!is_ping(&base, &Interest::new("/q/ping/1".parse().unwrap())));
    }

    #[test]
    fn parses_arguments() {
        let c = parse::<PingArgs>(&["ping", "/p", "-c", "3", "-i", "10"]).unwrap();
        assert_eq!((c.count, c.interval, c.serve), (Some(3), 10, false));
        let c = parse::<PingArgs>(&["ping", "--serve", "/p"]).unwrap();
        assert!(c.serve && c.count.is_none());
        assert!(parse::<PingArgs>(&["ping", "/p", "-i", "0"]).is_err());
        assert!(parse::<PingArgs>(&["ping", "/p", "-c", "0"]).is_err(), "nothing to send, nothing to answer");
    }
}
