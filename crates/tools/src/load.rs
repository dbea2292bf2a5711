//! `trajan load`: a bounded consumer and producer pair in one process, for measuring
//! a forwarder's exchanges per second through real faces.
//!
//! The producer registers `<prefix>` and answers every Interest at once; the
//! consumer keeps a window of Interests in flight, each for a new name
//! `<prefix>/p<k>/<seq>` with `k` cycling over `--prefixes` values and `seq`
//! counting from a random start. Every name is unique, also across runs (no CS
//! hit, no PIT aggregation: Augustus' worst case), and the second
//! component varies so that a multi-worker router's name-hash dispatch (first 2
//! components) spreads the load over its workers. Both ends are Trajan's ordinary
//! client, so with `--udp-ports` they are port-by-hash senders. The run stops at
//! `--count` exchanges or `--duration` seconds, whichever comes first.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use trajan_wire::data::DataBuilder;
use trajan_wire::{Interest, Name};

use crate::client::{name_arg, Client, ClientArgs, Event, Pipeline};
use crate::stop::stop_flag;

/// What the producer puts in every Data: small, so the forwarder's per-packet
/// work, not copying, is what is measured.
const CONTENT: &[u8] = b"trajan load";

/// Arguments of `trajan load`.
#[derive(clap::Args, Debug, Clone)]
pub struct LoadArgs {
    /// Prefix to produce and fetch under (the router must route it to this tool's producer, which registers it)
    #[arg(value_parser = name_arg)]
    pub prefix: Name,
    /// Stop after this many exchanges
    #[arg(short = 'c', long, default_value_t = 100_000, value_parser = clap::value_parser!(u64).range(1..=100_000_000))]
    pub count: u64,
    /// Stop after this many seconds (at most 600)
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=600))]
    pub duration: u64,
    /// Interests in flight at once
    #[arg(short = 'w', long, default_value_t = 32, value_parser = clap::value_parser!(u16).range(1..=4096))]
    pub window: u16,
    /// Distinct components after PREFIX (`p0` … `pK-1`). A multi-worker router
    /// dispatches on a name's first two components, so with a one-component PREFIX
    /// the names spread over its workers; with a longer one they all go to one worker
    #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub prefixes: u32,
    /// InterestLifetime in milliseconds; an Interest unanswered by then counts as lost
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u64).range(1..=60_000))]
    pub lifetime: u64,
    /// How to reach the forwarder (`--transport`, `--udp-ports`); the consumer and the producer each connect with it.
    #[command(flatten)]
    pub client: ClientArgs,
}

/// What a run measured.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Summary {
    /// Interests expressed.
    pub sent: u64,
    /// Interests answered by Data: the exchanges counted in the rate.
    pub received: u64,
    /// Interests answered by a Nack.
    pub nacked: u64,
    /// Interests unanswered within their lifetime (`--lifetime`).
    pub timed_out: u64,
    /// From the first Interest to the last answer or timeout.
    pub seconds: f64,
}

impl Summary {
    /// Data received per second.
    pub fn rate(&self) -> f64 {
        if self.seconds > 0.0 {
            self.received as f64 / self.seconds
        } else {
            0.0
        }
    }

    /// One line of `key=value` fields, for people and scripts.
    pub fn line(&self) -> String {
        format!(
            "sent={} received={} nacked={} timed-out={} seconds={:.3} exchanges-per-s={:.0}",
            self.sent,
            self.received,
            self.nacked,
            self.timed_out,
            self.seconds,
            self.rate()
        )
    }
}

/// The sequence number a run starts from. It is random so that a run's names
/// are new to a router that served an earlier run: its content store would
/// answer those, and the rate would measure the store instead of forwarding.
/// Below 2^40: runs of millions of names rarely meet, the names stay at most
/// 13 digits, and a run of any allowed count adds without overflow.
pub(crate) fn first_seq() -> u64 {
    rand::random::<u64>() >> 24
}

/// The name of exchange `seq` (`trajan gen` names its traffic the same way).
pub(crate) fn name_of(prefix: &Name, prefixes: u32, seq: u64) -> Name {
    let k = seq % u64::from(prefixes);
    prefix.append_generic(format!("p{k}").as_bytes()).append_generic(seq.to_string().as_bytes())
}

/// The producer: answers every Interest under `prefix` until `stop`, then
/// unregisters it.
fn produce(mut client: Client, prefix: Name, stop: Arc<AtomicBool>) -> anyhow::Result<()> {
    client.serve(&stop, |interest| prefix.is_prefix_of(&interest.name).then(|| DataBuilder::new(interest.name.clone()).build(CONTENT)))?;
    let _ = client.unregister(&prefix);
    Ok(())
}

/// The consumer: a window of Interests in flight until `count` or `duration`.
fn consume(client: &mut Client, args: &LoadArgs, prefix: &Name, stop: &AtomicBool) -> anyhow::Result<Summary> {
    let mut pipeline: Pipeline<u64> = Pipeline::new();
    let mut s = Summary::default();
    let start = Instant::now();
    let end = start + Duration::from_secs(args.duration);
    let mut last = start;
    let first = first_seq();
    loop {
        let now = Instant::now();
        let more = s.sent < args.count && now < end && !stop.load(Ordering::Relaxed);
        if !more && pipeline.is_empty() {
            break;
        }
        while more && pipeline.len() < usize::from(args.window) && s.sent < args.count {
            let mut i = Interest::new(name_of(prefix, args.prefixes, first + s.sent));
            i.lifetime_ms = Some(args.lifetime);
            pipeline.express(client, s.sent, i)?;
            s.sent += 1;
        }
        for ev in pipeline.poll(client, now + Duration::from_millis(100))? {
            last = Instant::now();
            match ev {
                Event::Data(..) => s.received += 1,
                Event::Nack(..) => s.nacked += 1,
                Event::Timeout(_) => s.timed_out += 1,
            }
        }
    }
    s.seconds = last.duration_since(start).as_secs_f64();
    Ok(s)
}

/// Runs `trajan load`: prints the summary line; fails when nothing came back.
pub fn run(args: LoadArgs) -> anyhow::Result<()> {
    let prefix = &args.prefix;
    let stop = stop_flag(None)?;
    let mut producer = Client::from_args(&args.client)?;
    producer.register(prefix).with_context(|| format!("registering {prefix}"))?;
    let producer_stop = Arc::new(AtomicBool::new(false));
    let serving = {
        let (prefix, stop) = (prefix.clone(), producer_stop.clone());
        std::thread::Builder::new().name("load-producer".into()).spawn(move || produce(producer, prefix, stop))?
    };
    let mut consumer = Client::from_args(&args.client)?;
    let summary = consume(&mut consumer, &args, prefix, &stop);
    producer_stop.store(true, Ordering::Relaxed);
    let served = serving.join().map_err(|_| anyhow::anyhow!("the producer thread panicked"))?;
    let summary = summary?;
    served?;
    println!("{}", summary.line());
    if summary.received == 0 {
        bail!("no Data came back for {} Interests under {prefix}", summary.sent);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::{Args, FromArgMatches};

    fn parse(args: &[&str]) -> Result<LoadArgs, clap::Error> {
        let m = LoadArgs::augment_args(clap::Command::new("load")).try_get_matches_from(args)?;
        LoadArgs::from_arg_matches(&m)
    }

    #[test]
    fn names_are_unique_and_spread_over_second_components() {
        let p: Name = "/load".parse().unwrap();
        assert_eq!(name_of(&p, 4, 6).to_string(), "/load/p2/6");
        let names: std::collections::HashSet<String> = (0..100).map(|s| name_of(&p, 4, s).to_string()).collect();
        assert_eq!(names.len(), 100);
    }

    #[test]
    fn bounds_and_summary() {
        let a = parse(&["load", "/l"]).unwrap();
        assert_eq!((a.count, a.duration, a.window), (100_000, 10, 32));
        assert!(parse(&["load", "/l", "--duration", "601"]).is_err());
        assert!(parse(&["load", "/l", "-w", "0"]).is_err());
        let s = Summary { sent: 10, received: 8, nacked: 1, timed_out: 1, seconds: 2.0 };
        assert_eq!(s.line(), "sent=10 received=8 nacked=1 timed-out=1 seconds=2.000 exchanges-per-s=4");
    }
}
