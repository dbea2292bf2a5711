//! The generator's consumer side: Interests at a target or maximum rate, a bounded
//! window in flight, and the latency of every satisfied one.

use std::collections::{HashMap, VecDeque};
use std::time::{Duration, Instant};

use bytes::Bytes;
use hdrhistogram::Histogram;
use rand::Rng;
use rand_distr::{Distribution, Zipf};
use trajan_wire::{Data, Interest, LpPacket, Name};

use super::ports::GenPort;
use crate::load::{first_seq, name_of};

/// Which names the consumer asks for.
#[derive(Debug, Clone)]
pub enum Names {
    /// A new name for every Interest (no CS hit, no aggregation: the worst case).
    Unique,
    /// Ranks 1..=n drawn from Zipf(n, s): popular names repeat, as in Augustus' CS runs.
    Zipf(Zipf<f64>),
}

/// What the consumer measured.
#[derive(Debug, Clone, Default)]
pub struct ConsumerStats {
    /// Interests sent.
    pub sent: u64,
    /// Interests answered by their Data; each one's round trip is in the latency histogram.
    pub satisfied: u64,
    /// Lifetime passed with no Data.
    pub lost: u64,
    /// Interests answered by a Nack.
    pub nacked: u64,
    /// Packets that were not Data for a pending name (late, duplicate, malformed).
    pub unexpected: u64,
    /// From the first Interest to the last reply or loss.
    pub seconds: f64,
}

/// The consumer: sends until `count` or `until`, then waits at most one lifetime
/// for the replies still due.
pub struct Consumer {
    prefix: Name,
    prefixes: u32,
    names: Names,
    /// Interests per second; 0 sends whenever the window has room.
    rate: f64,
    window: usize,
    lifetime: Duration,
    count: u64,
    /// Added to every key: a run's names are not those of an earlier run.
    first: u64,
    until: Instant,
    start: Instant,
    last: Instant,
    /// Send time of each pending name, by key (sequence number or Zipf rank).
    pending: HashMap<u64, Instant>,
    /// Keys in send order, for expiry; entries already answered are skipped.
    order: VecDeque<(u64, Instant)>,
    rx: Vec<Bytes>,
    nonce: u32,
    /// Counts so far; `finish` returns the final ones, with the run's duration.
    pub stats: ConsumerStats,
    /// Round trip of every satisfied Interest, in ns (1 ns to 100 s, 3 significant digits), for the report's percentiles.
    pub latency: Histogram<u64>,
}

/// The key of a name built by [`name_of`]: its last component, in decimal.
fn key_of(name: &Name) -> Option<u64> {
    std::str::from_utf8(name.components().last()?.value).ok()?.parse().ok()
}

impl Consumer {
    /// A consumer under `prefix` (second components `p0..p{prefixes-1}`, so that a
    /// multi-worker router's dispatch spreads the names).
    #[allow(clippy::too_many_arguments)] // every argument is a distinct knob of the run
    pub fn new(prefix: Name, prefixes: u32, names: Names, rate: f64, window: usize, lifetime: Duration, count: u64, duration: Duration) -> Self {
        let now = Instant::now();
        Consumer {
            prefix,
            prefixes,
            names,
            rate,
            window: window.max(1),
            lifetime,
            count,
            first: first_seq(),
            until: now + duration,
            start: now,
            last: now,
            pending: HashMap::with_capacity(window),
            order: VecDeque::with_capacity(window),
            rx: Vec::with_capacity(64),
            nonce: rand::thread_rng().gen(),
            stats: ConsumerStats::default(),
            // 1 ns to 100 s at 3 significant digits: every latency fits.
            latency: Histogram::new_with_bounds(1, 100_000_000_000, 3).expect("valid histogram bounds"),
        }
    }

    /// Whether new Interests may still be sent.
    fn sending(&self, now: Instant) -> bool {
        self.stats.sent < self.count && now < self.until
    }

    /// Whether the run is over: nothing more to send and nothing pending.
    pub fn done(&self, now: Instant) -> bool {
        !self.sending(now) && self.pending.is_empty()
    }

    /// One round: expire, receive, send what the rate and window allow.
    pub fn step(&mut self, port: &mut dyn GenPort, rng: &mut impl Rng) {
        let now = Instant::now();
        self.expire(now);
        self.receive(port, now);
        let budget = if self.rate > 0.0 {
            let due = (now.duration_since(self.start).as_secs_f64() * self.rate) as u64;
            due.saturating_sub(self.stats.sent)
        } else {
            u64::MAX
        };
        let mut n = 0;
        while n < budget && n < 64 && self.pending.len() < self.window && self.sending(now) {
            let key = self.first
                + match &self.names {
                    Names::Unique => self.stats.sent,
                    Names::Zipf(z) => z.sample(rng) as u64,
                };
            // A popular name already pending is not asked again: the router would
            // aggregate it and one Data would answer two Interests.
            if self.pending.contains_key(&key) {
                break;
            }
            let mut i = Interest::new(name_of(&self.prefix, self.prefixes, key));
            self.nonce = self.nonce.wrapping_add(0x9e37_79b9);
            i.nonce = Some(self.nonce);
            i.lifetime_ms = Some(self.lifetime.as_millis() as u64);
            port.send(&i.encode());
            self.pending.insert(key, now);
            self.order.push_back((key, now));
            self.stats.sent += 1;
            n += 1;
        }
        port.flush();
    }

    fn receive(&mut self, port: &mut dyn GenPort, now: Instant) {
        port.recv(&mut self.rx);
        for pkt in std::mem::take(&mut self.rx) {
            let Some((key, nack)) = decode_reply(&pkt) else {
                self.stats.unexpected += 1;
                continue;
            };
            let Some(sent_at) = self.pending.remove(&key) else {
                self.stats.unexpected += 1;
                continue;
            };
            self.last = now;
            if nack {
                self.stats.nacked += 1;
            } else {
                self.stats.satisfied += 1;
                let ns = now.duration_since(sent_at).as_nanos().clamp(1, 100_000_000_000) as u64;
                let _ = self.latency.record(ns);
            }
        }
    }

    fn expire(&mut self, now: Instant) {
        while let Some(&(key, at)) = self.order.front() {
            if now.duration_since(at) < self.lifetime {
                break;
            }
            self.order.pop_front();
            // Only if this send is still the pending one (not answered, not re-sent).
            if self.pending.get(&key) == Some(&at) {
                self.pending.remove(&key);
                self.stats.lost += 1;
                self.last = now;
            }
        }
    }

    /// Final figures.
    pub fn finish(&mut self) -> ConsumerStats {
        self.stats.seconds = self.last.duration_since(self.start).as_secs_f64();
        self.stats.clone()
    }
}

/// The key of the name a reply answers, and whether it is a Nack.
fn decode_reply(pkt: &Bytes) -> Option<(u64, bool)> {
    let lp = LpPacket::decode(pkt).ok()?;
    let inner = lp.fragment?;
    if lp.headers.nack.is_some() {
        return Some((key_of(&Interest::decode(&inner).ok()?.name)?, true));
    }
    Some((key_of(Data::decode(&inner).ok()?.name())?, false))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Records what is sent; receives nothing.
    #[derive(Default)]
    struct Capture(Vec<Bytes>);

    impl GenPort for Capture {
        fn send(&mut self, pkt: &Bytes) {
            self.0.push(pkt.clone());
        }
        fn recv(&mut self, _: &mut Vec<Bytes>) {}
        fn flush(&mut self) {}
        fn dropped(&self) -> u64 {
            0
        }
    }

    /// Two runs ask for different names, so the second is not answered by
    /// the content store the first one filled.
    #[test]
    fn runs_do_not_repeat_names() {
        let names = |zipf: bool| -> Vec<Name> {
            let names = if zipf { Names::Zipf(Zipf::new(10, 1.0).unwrap()) } else { Names::Unique };
            let mut c = Consumer::new("/gen".parse().unwrap(), 4, names, 0.0, 8, Duration::from_secs(1), 8, Duration::from_secs(1));
            let mut port = Capture::default();
            c.step(&mut port, &mut rand::thread_rng());
            port.0.iter().map(|p| Interest::decode(p).unwrap().name).collect()
        };
        for zipf in [false, true] {
            let (a, b) = (names(zipf), names(zipf));
            assert!(!a.is_empty() && !b.is_empty());
            assert!(a.iter().all(|n| !b.contains(n)), "{a:?} {b:?}");
        }
    }

    #[test]
    fn keys_come_back_from_names() {
        let p: Name = "/gen".parse().unwrap();
        assert_eq!(key_of(&name_of(&p, 8, 12345)), Some(12345));
        assert_eq!(key_of(&"/gen/x".parse().unwrap()), None);
        let d = trajan_wire::data::DataBuilder::new(name_of(&p, 8, 9)).build(b"x");
        assert_eq!(decode_reply(&d), Some((9, false)));
        assert_eq!(decode_reply(&Bytes::from_static(b"\x06\x01")), None);
    }
}
