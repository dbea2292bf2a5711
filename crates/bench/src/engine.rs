//! `trajan bench engine`: the daemon's own [`Forwarder`] driven from pre-encoded
//! packets in memory, with an in-memory producer that answers every forwarded
//! Interest with its Data, as Augustus' echo server did.
//!
//! One *round* is a burst of consumer Interests through `process_burst`, the
//! producer's Data for whatever the engine forwarded through a second
//! `process_burst`, and one `tick` of the simulated clock (1 ms per round, so PIT
//! timers, lifetime 1000 ms, run). An *exchange* is one Data delivered to a
//! consumer. Only the engine calls are timed: building bursts and the producer are
//! the harness, reported apart as wall time.
//!
//! **Unique names, bounded memory.** Interests and Data are encoded once, into a pool
//! of templates. Each name ends with a tag (round, index) (see
//! [`workload::tag_component`]); a burst copies its templates into one fresh
//! buffer (like a receive buffer) and patches the round and the Nonce there, so
//! every pass over the pool yields new names while memory stays the pool plus the
//! buffers the PIT and CS still pin. Copying and patching happen *outside* the timed
//! region. The producer reads the index from the forwarded Interest's tag, copies
//! that Data template and writes the Interest's tag into it (the DigestSha256
//! signature then no longer matches; a forwarder does not verify it, and none is
//! computed in the loop).
//!
//! **Where the time goes**, two ways, both after the timed run so that neither
//! touches its figure. *Phases* (`pipeline_ns`): more rounds with the engine's
//! own phase timing on ([`Forwarder::time_phases`]: its loops timed at their
//! boundaries, a few clock reads per burst), split by the burst they ran in, so
//! they add up to the engine's time per exchange. *Stages* (`stage_ns`): the same
//! table and codec functions the pipeline calls, each timed *alone* over the same
//! kind of packets: what one call costs without its neighbours in the burst, so
//! their sum against the measured ns per exchange shows what the glue and the
//! cache interactions between stages cost.

use std::hint::black_box;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use bytes::{Bytes, BytesMut};
use hdrhistogram::Histogram;
use serde::Serialize;
use trajan_engine::strategy::{self, StrategyKind};
use trajan_engine::{EngineConfig, FaceMeta, FaceId, Forwarder, Outgoing, PhaseNs};
use trajan_tables::{Cs, Fib, FibSource, FibVariant, FibWriter, NameHasher, Pcct};
use trajan_wire::lp::{LpHeaders, LpPacket};
use trajan_wire::tlv::read_header;
use trajan_wire::types::{DATA, NAME, NONCE};
use trajan_wire::{Data, Interest, Name};

use crate::alloc;
use crate::workload::{self, Delta, NameSet, Popularity, TAG_LEN};

/// The producer's face; consumers are numbered from `PRODUCER + 1`.
const PRODUCER: FaceId = 300;

/// InterestLifetime of every Interest (Augustus' PIT lifetime).
const LIFETIME_MS: u64 = 1000;

/// FreshnessPeriod of the producer's Data.
const FRESHNESS_MS: u64 = 10_000;

/// Packets in the isolated per-stage measurements.
const STAGE_SAMPLE: usize = 1 << 16;

/// Entries filled to measure bytes per PIT and CS entry.
const MEMORY_SAMPLE: usize = 100_000;

/// Rounds run with allocation counting on, after the timed run.
const COUNTED_ROUNDS: u64 = 1000;

/// Rounds run with the engine's phase timing on, after the timed run.
const PHASE_ROUNDS: u64 = 2000;

/// What the consumers ask for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Workload {
    /// Augustus' worst case: every name unique (no CS hit, no aggregation), FIB always matches.
    Worst,
    /// Caesar's reference traffic: names 1 to 10 components below their prefix, 2 on average.
    Reference,
    /// Caching: Zipf(α) popularity over `--objects` objects.
    Zipf,
    /// Aggregation: `--consumers` consumers ask for every (unique) name.
    Aggregate,
}

/// Options of `trajan bench engine`.
#[derive(clap::Args, Debug, Clone)]
pub struct EngineArgs {
    /// Workload.
    #[arg(long, value_enum, default_value = "worst")]
    pub workload: Workload,
    /// Prefixes in the reference FIB (accepts K and M suffixes: 1K, 1M, 10M).
    #[arg(long, default_value = "1K", value_parser = parse_count)]
    pub fib_prefixes: usize,
    /// Seconds of timed run (after warm-up), more than 0.
    #[arg(long, default_value_t = 5.0, value_parser = parse_positive_seconds)]
    pub duration: f64,
    /// Seconds of warm-up before timing, extended (up to 5×) until the CS is full.
    #[arg(long, default_value_t = 1.0, value_parser = parse_seconds)]
    pub warmup: f64,
    /// Run exactly this many timed rounds (at least 1) instead of `--duration`.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub rounds: Option<u64>,
    /// Seed of every generator: the same seed is the same workload.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Interests per burst.
    #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u16).range(1..=256))]
    pub burst: u16,
    /// Pre-encoded Interest/Data pairs cycled through (zipf: `--objects`). Accepts K and M.
    #[arg(long, default_value = "1M", value_parser = parse_count)]
    pub pool: usize,
    /// Components between a name and its FIB prefix (worst and aggregate; reference draws 1-10).
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u8).range(1..=10))]
    pub delta: u8,
    /// Zipf exponent α (zipf workload).
    #[arg(long, default_value_t = 0.8)]
    pub alpha: f64,
    /// Objects under Zipf popularity (zipf workload).
    #[arg(long, default_value = "1M", value_parser = parse_count)]
    pub objects: usize,
    /// Content store capacity in packets.
    #[arg(long, default_value = "100K", value_parser = parse_count)]
    pub cs_capacity: usize,
    /// Consumer faces (default 4 for aggregate, else 1).
    #[arg(long)]
    pub consumers: Option<usize>,
    /// Content bytes per Data.
    #[arg(long, default_value_t = 100)]
    pub payload: usize,
    /// Engine threads: each pinned to its own core, owning its own Forwarder (PIT/CS
    /// shard) and its own disjoint names, all reading one shared FIB replica, as the
    /// daemon's workers do after name dispatch. Timing starts together on a barrier.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=256))]
    pub workers: u16,
    /// The FIB's first LPM stage (Caesar §6.3's variants: `hash`, `pbf`, `pbf-exp`).
    #[arg(long, default_value = "pbf-exp")]
    pub fib_variant: FibVariant,
    /// The strategy for every name (`best-route`, `multicast`, `dynamic`), to see
    /// what one costs per exchange. The workloads have one upstream, so a
    /// strategy's choice is always the same; its bookkeeping is what is measured.
    #[arg(long, default_value = "best-route")]
    pub strategy: StrategyKind,
    /// Also run an engine whose FIB has this many prefixes (K and M suffixes),
    /// same workload and options, alternating timed slices of `--slice` seconds
    /// between the two until each has run `--duration`: both then see the same
    /// machine, so the ratio of their rates holds on a host whose speed drifts
    /// more than the difference measured, as separate runs do not. Prints both
    /// runs, each with `versus` (the other's FIB size and this rate over its).
    #[arg(long, value_parser = parse_count)]
    pub side_by_side: Option<usize>,
    /// Seconds per timed slice of a `--side-by-side` run.
    #[arg(long, default_value_t = 0.2)]
    pub slice: f64,
    /// Print one JSON object per run instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// Parses a number of seconds, 0 or more: a negative, infinite or NaN time
/// has no run to measure.
pub fn parse_seconds(s: &str) -> Result<f64, String> {
    s.trim().parse::<f64>().ok().filter(|v| v.is_finite() && *v >= 0.0).ok_or_else(|| format!("{s:?} is not a number of seconds (e.g. 0.5, 3)"))
}

/// [`parse_seconds`] for a timed run, which must last: 0 s would report the
/// rate of one round, or of none.
pub fn parse_positive_seconds(s: &str) -> Result<f64, String> {
    Some(parse_seconds(s)?).filter(|v| *v > 0.0).ok_or_else(|| format!("{s:?}: a timed run lasts more than 0 seconds"))
}

/// Parses a count with an optional K (10^3) or M (10^6) suffix.
pub fn parse_count(s: &str) -> Result<usize, String> {
    let s = s.trim();
    let (digits, mult) = match s.as_bytes().last() {
        Some(b'k' | b'K') => (&s[..s.len() - 1], 1_000),
        Some(b'm' | b'M') => (&s[..s.len() - 1], 1_000_000),
        _ => (s, 1),
    };
    digits
        .parse::<usize>()
        .ok()
        .and_then(|n| n.checked_mul(mult))
        .ok_or_else(|| format!("{s:?} is not a count (e.g. 1000, 1K, 10M)"))
}

/// The engine's time per exchange by phase of its pipeline, timed inside
/// `process_burst` and `tick` ([`Forwarder::time_phases`]) over rounds run
/// after the timed run, in ns per exchange. They add up to the engine's time
/// per exchange in those rounds, a few clock reads per burst included.
#[derive(Debug, Clone, Default, Serialize)]
pub struct PipelineNs {
    /// Decoding the Interest bursts (each name parsed and hashed once, the
    /// loads of its PCCT line started).
    pub interest_decode: f64,
    /// The Interests' own pipelines: scope and loop checks, the PCCT probe
    /// (CS lookup, aggregation, PIT insert), CS hits sent.
    pub interest_tables: f64,
    /// The pipelined FIB lookups of the Interests that reached the FIB.
    pub fib: f64,
    /// The strategy's choices and the Interests sent upstream.
    pub forward: f64,
    /// Decoding the Data bursts (name parsed and hashed, CS lines prefetched).
    pub data_decode: f64,
    /// The Data's own pipelines: PIT match and removal, CS insert and
    /// eviction, sends downstream.
    pub data_tables: f64,
    /// `tick`: PIT timers.
    pub timers: f64,
    /// Sum of the above.
    pub sum: f64,
    /// The engine's ns per exchange over the same rounds (untimed by phase, it
    /// would be this less the clock reads).
    pub measured: f64,
}

/// The per-stage costs, each measured in isolation over the run's kind of packets,
/// in ns per call as the pipeline makes it on an exchange that misses the CS.
#[derive(Debug, Clone, Default, Serialize)]
pub struct StageNs {
    /// `LpPacket::decode` + `Interest::decode`.
    pub decode_interest: f64,
    /// `LpPacket::decode` + `Data::decode`.
    pub decode_data: f64,
    /// The engine's one hash of a name ([`NameHasher::full`]), which every
    /// exact-match table probes with (included in the table stages below, each
    /// timed alone, so not part of the sum).
    pub hash_name: f64,
    /// Dead-nonce-list lookup of the Interest's (name, Nonce).
    pub dead_nonce_check: f64,
    /// `Pcct::find_or_insert` in tables with no cache (the PIT's share of the
    /// engine's one probe) + in- and out-record + timer reschedule.
    pub pit_find_insert: f64,
    /// `cs.lookup` on the engine's CS after the run: the cache's share of the
    /// one probe, which the engine walks once for both tables (so the sum counts
    /// that walk twice).
    pub cs_lookup: f64,
    /// `fib.lpm` on the run's FIB, next hops copied out.
    pub fib_lpm: f64,
    /// Strategy choice (an LPM) and best-route's decision.
    pub strategy: f64,
    /// `Pcct::matches_for_data` + `remove`, in tables with no cache.
    pub pit_match_remove: f64,
    /// `cs.insert` into the engine's full CS (an LRU eviction each), which walks
    /// the index for the name again (the engine reuses its match's walk).
    pub cs_insert: f64,
    /// Dead-nonce-list insertion of one out-record. The engine makes it only for
    /// expired Interests and for satisfied MustBeFresh Interests whose Data goes stale
    /// before the list forgets (NFD's rule), none of which a benchmark workload has,
    /// so it is reported but not summed.
    pub dead_nonce_add: f64,
    /// Outgoing Interest (shared bytes) and Data (`LpPacket::wrap`) pushed to the output.
    pub encode_output: f64,
    /// Sum of the stages above except `hash_name` and `dead_nonce_add`: one CS-miss
    /// exchange in isolation.
    pub sum: f64,
}

/// One worker's share of a multi-worker run.
#[derive(Debug, Clone, Serialize)]
pub struct WorkerFigures {
    /// The worker's index, from 0.
    pub worker: usize,
    /// The CPU it was pinned to, if pinning worked.
    pub cpu: Option<usize>,
    /// Data this worker delivered to its consumers in the timed run.
    pub exchanges: u64,
    /// Its exchanges per second of its engine time.
    pub exchanges_per_sec: f64,
    /// Its engine time per exchange, in ns.
    pub ns_per_exchange: f64,
    /// Share of its timed loop's wall time it spent on a CPU (Linux schedstat); null where unknown.
    pub cpu_share: Option<f64>,
}

/// Per-packet time inside the engine: each burst's `process_burst` time divided by
/// its packets (one value per burst, not individual packets' latency).
#[derive(Debug, Clone, Default, Serialize)]
pub struct Latency {
    /// The fastest burst, in ns per packet.
    pub min: u64,
    /// The median burst, in ns per packet.
    pub p50: u64,
    /// The 99th-percentile burst, in ns per packet.
    pub p99: u64,
    /// The slowest burst, in ns per packet.
    pub max: u64,
}

/// One run's results; `--json` prints it as one line.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// The workload run (`--workload`).
    pub workload: Workload,
    /// Prefixes in the FIB (`--fib-prefixes`).
    pub fib_prefixes: usize,
    /// `hash`, `pbf` or `pbf-exp` (`--fib-variant`).
    pub fib_variant: &'static str,
    /// `--strategy`.
    pub strategy: &'static str,
    /// Engine threads, each with its own Forwarder (`--workers`).
    pub workers: u32,
    /// Each worker's own figures; the totals above sum their rates.
    pub per_worker: Vec<WorkerFigures>,
    /// Seed of every generator (`--seed`): the same seed is the same workload.
    pub seed: u64,
    /// Interests per burst (`--burst`).
    pub burst: usize,
    /// Pre-encoded Interest/Data pairs cycled through.
    pub pool: usize,
    /// Fixed Δ, or null when drawn (reference).
    pub delta: Option<u8>,
    /// Consumer faces.
    pub consumers: usize,
    /// Zipf exponent α (`--alpha`) of the zipf workload; null for the others.
    pub zipf_alpha: Option<f64>,
    /// Content store capacity in packets (`--cs-capacity`).
    pub cs_capacity: usize,
    /// Timed rounds, summed over the workers.
    pub rounds: u64,
    /// Consumer Interests into the engine in the timed rounds.
    pub interests: u64,
    /// Data delivered to consumers.
    pub exchanges: u64,
    /// Packets into the engine (Interests and Data).
    pub packets: u64,
    /// Seconds inside `process_burst` and `tick`.
    pub engine_s: f64,
    /// Seconds of the timed loop, harness included.
    pub wall_s: f64,
    /// Share of `wall_s` this thread spent on a CPU (Linux schedstat); below 1 the
    /// machine's other work preempted the run and every time figure is inflated.
    pub cpu_share: Option<f64>,
    /// Exchanges per second of engine time (`engine_s`, not wall time).
    pub exchanges_per_sec: f64,
    /// Packets into the engine per second of engine time.
    pub packets_per_sec: f64,
    /// Engine time per exchange, in ns (averaged over the workers).
    pub ns_per_exchange: f64,
    /// Heap allocations per packet in steady state; null when the counting allocator
    /// is not this process's global allocator.
    pub allocs_per_packet: Option<f64>,
    /// Interests answered from the CS.
    pub cs_hit_ratio: f64,
    /// Nacks received by consumers (expected 0).
    pub nacks: u64,
    /// Interests the producer could not answer (expected 0).
    pub unanswered: u64,
    /// The engine's time per exchange by phase of its pipeline, as it ran.
    pub pipeline_ns: PipelineNs,
    /// What each stage costs timed alone, in ns per call.
    pub stage_ns: StageNs,
    /// Engine time per packet, burst by burst, in ns: min, p50, p99 and max.
    pub latency_ns: Latency,
    /// Heap bytes the PIT owns per entry (the Interest's packet buffer, which the
    /// entry also keeps alive, not included: see `interest_wire_bytes`).
    pub bytes_per_pit_entry: Option<f64>,
    /// Heap bytes the CS owns per entry (the Data packet itself not included).
    pub bytes_per_cs_entry: Option<f64>,
    /// Heap bytes the FIB owns per prefix.
    pub bytes_per_fib_prefix: Option<f64>,
    /// Mean encoded size of the pool's Interests (bare, no LpPacket), in bytes.
    pub interest_wire_bytes: f64,
    /// Mean encoded size of the pool's Data (bare, no LpPacket), in bytes.
    pub data_wire_bytes: f64,
    /// Seconds spent building the FIB and the packet pool.
    pub setup_s: f64,
    /// The engine this one ran beside (`--side-by-side`), null for a lone run.
    pub versus: Option<Versus>,
}

/// How a `--side-by-side` run compares with the engine it alternated with.
#[derive(Debug, Clone, Serialize)]
pub struct Versus {
    /// The other engine's FIB size.
    pub fib_prefixes: usize,
    /// This run's exchanges per second over the other's.
    pub exchanges_ratio: f64,
}

/// Pre-encoded packets in one buffer, with where each one's tag and Nonce lie.
#[derive(Default)]
struct Templates {
    buf: Vec<u8>,
    spans: Vec<Span>,
}

#[derive(Clone, Copy)]
struct Span {
    start: usize,
    len: u32,
    /// Offset of the tag's value (round, index) in the packet.
    tag: u16,
    /// Offset of the Nonce's value (Interests only).
    nonce: u16,
}

impl Templates {
    fn push(&mut self, wire: &[u8], typ: u32) -> anyhow::Result<()> {
        let (tag, nonce) = locate(wire, typ).context("a template the bench encoded does not parse")?;
        let span = Span { start: self.buf.len(), len: wire.len() as u32, tag: tag as u16, nonce: nonce.unwrap_or(0) as u16 };
        self.buf.extend_from_slice(wire);
        self.spans.push(span);
        Ok(())
    }

    fn len(&self, idx: u32) -> usize {
        self.spans[idx as usize].len as usize
    }

    /// Appends packet `idx` to `out` with its tag replaced, and its Nonce when given.
    fn copy_into(&self, idx: u32, out: &mut BytesMut, tag: &[u8; TAG_LEN], nonce: Option<u32>) -> std::ops::Range<usize> {
        let s = self.spans[idx as usize];
        let at = out.len();
        out.extend_from_slice(&self.buf[s.start..s.start + s.len as usize]);
        out[at + s.tag as usize..][..TAG_LEN].copy_from_slice(tag);
        if let Some(n) = nonce {
            out[at + s.nonce as usize..][..4].copy_from_slice(&n.to_be_bytes());
        }
        at..out.len()
    }

    fn mean_len(&self) -> f64 {
        self.buf.len() as f64 / self.spans.len().max(1) as f64
    }
}

/// The offsets of the tag value and (for an Interest) of the Nonce value in a
/// packet of type `typ`, by walking its TLV headers.
fn locate(wire: &[u8], typ: u32) -> Option<(usize, Option<usize>)> {
    let mut pos = 0;
    let (t, start, end) = read_header(wire, &mut pos).ok()?;
    if t != typ {
        return None;
    }
    let mut pos = start;
    let (t, _, name_end) = read_header(wire, &mut pos).ok()?;
    if t != NAME || name_end < start + TAG_LEN {
        return None;
    }
    let mut nonce = None;
    while pos < end {
        let (t, vs, _) = read_header(wire, &mut pos).ok()?;
        if t == NONCE {
            nonce = Some(vs);
        }
    }
    Some((name_end - TAG_LEN, nonce))
}

/// Where the next Interests' (consumer, template, round) come from.
enum Source {
    /// Each template in turn, a new round on each pass (unique names).
    Sequential { next: u64 },
    /// Zipf-drawn objects, always round 0 (repeated names, for the CS).
    Popular(Box<Popularity>),
    /// Unique names, each asked for by every consumer.
    Aggregate { next: u64 },
}

#[derive(Clone, Copy)]
struct Item {
    consumer: FaceId,
    index: u32,
    round: u32,
}

impl Source {
    fn fill(&mut self, burst: usize, pool: u64, consumers: &[FaceId], items: &mut Vec<Item>) {
        items.clear();
        let round_of = |n: u64| (n / pool + 1) as u32;
        match self {
            Source::Sequential { next } => {
                for k in 0..burst {
                    let n = *next;
                    *next += 1;
                    items.push(Item { consumer: consumers[k % consumers.len()], index: (n % pool) as u32, round: round_of(n) });
                }
            }
            Source::Popular(p) => {
                for k in 0..burst {
                    items.push(Item { consumer: consumers[k % consumers.len()], index: p.next_rank() as u32, round: 0 });
                }
            }
            Source::Aggregate { next } => {
                let names = (burst / consumers.len()).max(1) as u64;
                let first = *next;
                *next += names;
                for (c, n) in workload::aggregate(consumers.len(), first..first + names) {
                    items.push(Item { consumer: consumers[c], index: (n % pool) as u32, round: round_of(n) });
                }
            }
        }
    }
}

fn tag_bytes(round: u32, index: u32) -> [u8; TAG_LEN] {
    let c = workload::tag_component(round, index);
    c[2..].try_into().expect("tag value is TAG_LEN bytes")
}

/// Counts of one stretch of rounds.
#[derive(Default)]
struct Tally {
    rounds: u64,
    interests: u64,
    packets: u64,
    exchanges: u64,
    cs_hits: u64,
    nacks: u64,
    unanswered: u64,
    engine: Duration,
    /// With the engine's phase timing on: its phases in Interest bursts and in
    /// Data bursts (with the round's `tick`).
    phases: [PhaseNs; 2],
}

/// The forwarder, its packet pool, and the harness state around it; `F` is how the
/// forwarder reaches the FIB (its own, or a replica shared by the workers).
struct Bench<F: FibSource = Fib> {
    fwd: Forwarder<F>,
    interests: Templates,
    data: Templates,
    source: Source,
    consumers: Vec<FaceId>,
    burst: usize,
    now_ms: u64,
    nonce: u32,
    items: Vec<Item>,
    input: Vec<(FaceId, Bytes)>,
    data_in: Vec<(FaceId, Bytes)>,
    out: Vec<Outgoing>,
    answers: Vec<(u32, [u8; TAG_LEN])>,
}

impl<F: FibSource> Bench<F> {
    fn pool(&self) -> u64 {
        self.interests.spans.len() as u64
    }

    /// Builds the next burst of Interests into one fresh buffer.
    fn next_interests(&mut self) {
        let pool = self.pool();
        self.source.fill(self.burst, pool, &self.consumers, &mut self.items);
        let total = self.items.iter().map(|it| self.interests.len(it.index)).sum();
        let mut buf = BytesMut::with_capacity(total);
        let mut ranges = Vec::with_capacity(self.items.len());
        for it in &self.items {
            self.nonce = self.nonce.wrapping_add(1);
            ranges.push(self.interests.copy_into(it.index, &mut buf, &tag_bytes(it.round, it.index), Some(self.nonce)));
        }
        let buf = buf.freeze();
        self.input.clear();
        self.input.extend(self.items.iter().zip(ranges).map(|(it, r)| (it.consumer, buf.slice(r))));
    }

    /// Sorts the engine's output: Interests to the producer become answers to
    /// build, packets to consumers are counted. Returns Data delivered.
    fn take_output(&mut self, t: &mut Tally) -> u64 {
        let mut delivered = 0;
        for o in self.out.drain(..) {
            if o.face == PRODUCER {
                match producer_answer(&o.pkt) {
                    Some(a) if (a.0 as usize) < self.data.spans.len() => self.answers.push(a),
                    _ => t.unanswered += 1,
                }
            } else if o.pkt.first() == Some(&(DATA as u8)) {
                delivered += 1;
            } else {
                t.nacks += 1;
            }
        }
        delivered
    }

    /// Builds the producer's Data for the answers collected.
    fn next_data(&mut self) {
        let total = self.answers.iter().map(|a| self.data.len(a.0)).sum();
        let mut buf = BytesMut::with_capacity(total);
        let ranges: Vec<_> = self.answers.iter().map(|(idx, tag)| self.data.copy_into(*idx, &mut buf, tag, None)).collect();
        let buf = buf.freeze();
        self.answers.clear();
        self.data_in.clear();
        self.data_in.extend(ranges.into_iter().map(|r| (PRODUCER, buf.slice(r))));
    }

    /// One round; engine calls timed, and counted when `count` is set.
    fn round(&mut self, t: &mut Tally, hist: Option<&mut Histogram<u64>>, count: bool) {
        self.next_interests();
        let n_in = self.input.len() as u64;
        let now = self.now_ms;
        let phases = self.fwd.phase_ns();
        let t0 = Instant::now();
        alloc::set_counting(count);
        self.fwd.process_burst(now, &mut self.input, &mut self.out);
        alloc::set_counting(false);
        let t1 = Instant::now();
        let mid_phases = self.fwd.phase_ns();
        self.input.clear();
        let hits = self.take_output(t);
        self.next_data();
        let n_data = self.data_in.len() as u64;
        let t2 = Instant::now();
        alloc::set_counting(count);
        if n_data > 0 {
            self.fwd.process_burst(now, &mut self.data_in, &mut self.out);
        }
        self.fwd.tick(now);
        alloc::set_counting(false);
        let t3 = Instant::now();
        if let (Some(start), Some(mid), Some(end)) = (phases, mid_phases, self.fwd.phase_ns()) {
            t.phases[0] += mid.since(&start);
            t.phases[1] += end.since(&mid);
        }
        self.data_in.clear();
        let delivered = self.take_output(t);
        self.now_ms += 1;

        t.rounds += 1;
        t.interests += n_in;
        t.packets += n_in + n_data;
        t.cs_hits += hits;
        t.exchanges += hits + delivered;
        t.engine += (t1 - t0) + (t3 - t2);
        if let Some(h) = hist {
            h.saturating_record((t1 - t0).as_nanos() as u64 / n_in.max(1));
            // The Data burst's time includes the round's `tick`.
            if let Some(per_packet) = ((t3 - t2).as_nanos() as u64).checked_div(n_data) {
                h.saturating_record(per_packet);
            }
        }
    }

    /// The next `n` Interests and their Data, as wires, for the isolated stages.
    fn sample(&mut self, n: usize) -> (Vec<(FaceId, Bytes)>, Vec<Bytes>) {
        let mut interests = Vec::with_capacity(n);
        let mut data = Vec::with_capacity(n);
        while interests.len() < n {
            self.next_interests();
            let mut dbuf = BytesMut::new();
            let ranges: Vec<_> = self
                .input
                .iter()
                .map(|(_, w)| {
                    let (idx, tag) = producer_answer(w).expect("the bench's own Interest");
                    self.data.copy_into(idx, &mut dbuf, &tag, None)
                })
                .collect();
            let dbuf = dbuf.freeze();
            data.extend(ranges.into_iter().map(|r| dbuf.slice(r)));
            interests.append(&mut self.input);
        }
        interests.truncate(n);
        data.truncate(n);
        (interests, data)
    }
}

/// What the producer reads from a forwarded Interest: the Data template's index
/// and the tag to give the Data. `None` for anything but a bare Interest with a tag.
fn producer_answer(interest: &[u8]) -> Option<(u32, [u8; TAG_LEN])> {
    let mut pos = 0;
    let (t, start, _) = read_header(interest, &mut pos).ok()?;
    if t != trajan_wire::types::INTEREST {
        return None;
    }
    let mut pos = start;
    let (t, vs, ve) = read_header(interest, &mut pos).ok()?;
    if t != NAME {
        return None;
    }
    let (_, index) = workload::name_tag(&interest[vs..ve])?;
    Some((index, interest[ve - TAG_LEN..ve].try_into().ok()?))
}

/// Encodes the template pool: for name `i`, an Interest (Nonce and
/// InterestLifetime, no HopLimit, as applications send them, so the engine
/// forwards the same bytes) and its Data.
fn templates(names: &NameSet, payload: usize) -> anyhow::Result<(Templates, Templates)> {
    let content = vec![0x5a; payload];
    let (mut interests, mut data) = (Templates::default(), Templates::default());
    for name in names.iter() {
        let mut i = Interest::new(name.clone());
        i.nonce = Some(0);
        i.lifetime_ms = Some(LIFETIME_MS);
        interests.push(&i.encode(), trajan_wire::types::INTEREST)?;
        data.push(&trajan_wire::data::DataBuilder::new(name).freshness_ms(FRESHNESS_MS).build(&content), DATA)?;
    }
    Ok((interests, data))
}

/// Runs one benchmark as `args` describe, returning its report.
pub fn run(args: &EngineArgs) -> anyhow::Result<Report> {
    check(args)?;
    let n = usize::from(args.workers);
    let setup = Instant::now();
    let prefixes = reference_prefixes(args)?;
    let (fib, fib_mem) = build_fib(args, &prefixes);
    let fib_s = setup.elapsed().as_secs_f64();
    if n == 1 {
        return Ok(Runner::new(args, 0, &prefixes, fib, fib_mem, fib_s, None)?.run(args, 0, None));
    }
    // One replica every worker reads, as the daemon's workers of one NUMA node do.
    let (shared, _) = FibWriter::new(fib);
    let cores = core_affinity::get_core_ids().unwrap_or_default();
    let start = std::sync::Barrier::new(n);
    let reports: Vec<anyhow::Result<Report>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..n)
            .map(|w| {
                let core = cores.get(w % cores.len().max(1)).copied();
                let (start, prefixes, fib) = (&start, &prefixes, shared.reader());
                scope.spawn(move || {
                    let pinned = core.filter(|c| core_affinity::set_for_current(*c)).map(|c| c.id);
                    Ok(Runner::new(args, w, prefixes, fib, fib_mem, fib_s, Some(start))?.run(args, w, pinned))
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap_or_else(|_| Err(anyhow::anyhow!("a bench worker panicked")))).collect()
    });
    let reports = reports.into_iter().collect::<anyhow::Result<Vec<Report>>>()?;
    Ok(combine(reports))
}

/// Refuses counts that leave nothing to measure.
fn check(args: &EngineArgs) -> anyhow::Result<()> {
    if args.fib_prefixes == 0 || args.pool == 0 || args.objects == 0 || args.side_by_side == Some(0) {
        bail!("--fib-prefixes, --side-by-side, --pool and --objects must be at least 1");
    }
    Ok(())
}

/// A FIB routing every one of `prefixes` to the producer, and what building it
/// allocated.
fn build_fib(args: &EngineArgs, prefixes: &NameSet) -> (Fib, alloc::Counted) {
    let mut fib = Fib::with_capacity(args.fib_variant, 0);
    let ((), fib_mem) = alloc::counted(|| {
        for prefix in prefixes.iter() {
            fib.add_nexthop(&prefix, PRODUCER, 0);
        }
    });
    (fib, fib_mem)
}

/// The reference FIB's prefixes at the size `args` asks for.
fn reference_prefixes(args: &EngineArgs) -> anyhow::Result<NameSet> {
    let hosts = workload::reference_hosts()?;
    workload::reference_fib(&hosts, args.fib_prefixes, args.seed)
}

/// Totals of a multi-worker run: counts and rates summed, per-exchange time and CPU
/// share averaged; phases, stages, latency and memory are worker 0's.
fn combine(reports: Vec<Report>) -> Report {
    let n = reports.len();
    let mut total = reports[0].clone();
    total.workers = n as u32;
    total.per_worker = reports.iter().flat_map(|r| r.per_worker.iter().cloned()).collect();
    for r in &reports[1..] {
        total.rounds += r.rounds;
        total.interests += r.interests;
        total.exchanges += r.exchanges;
        total.packets += r.packets;
        total.exchanges_per_sec += r.exchanges_per_sec;
        total.packets_per_sec += r.packets_per_sec;
        total.nacks += r.nacks;
        total.unanswered += r.unanswered;
    }
    total.ns_per_exchange = reports.iter().map(|r| r.ns_per_exchange).sum::<f64>() / n as f64;
    total.cpu_share = reports.iter().map(|r| r.cpu_share).sum::<Option<f64>>().map(|s| s / n as f64);
    total.cs_hit_ratio = reports.iter().map(|r| r.cs_hit_ratio).sum::<f64>() / n as f64;
    total
}

/// Runs `args`' workload on two engines in one process, one with
/// `--fib-prefixes` prefixes and one with `--side-by-side` prefixes, alternating
/// timed slices of `--slice` seconds between them until each has run
/// `--duration` (or `--rounds`). Both see the same machine slice by slice, and
/// neither runs after the other has freed its memory, so the ratio of their rates
/// holds on a host whose speed drifts by more than the difference measured.
/// Returns the two reports in that order, each with [`Versus`] filled in.
pub fn run_side_by_side(args: &EngineArgs) -> anyhow::Result<[Report; 2]> {
    check(args)?;
    let Some(other) = args.side_by_side else { bail!("--side-by-side names the second engine's FIB size") };
    if args.workers != 1 {
        bail!("--side-by-side runs one worker per engine (drop --workers)");
    }
    let engines = [args.fib_prefixes, other].map(|size| EngineArgs { fib_prefixes: size, ..args.clone() });
    let mut runners = Vec::with_capacity(2);
    for one in &engines {
        let setup = Instant::now();
        let prefixes = reference_prefixes(one)?;
        let (fib, fib_mem) = build_fib(one, &prefixes);
        runners.push(Runner::new(one, 0, &prefixes, fib, fib_mem, setup.elapsed().as_secs_f64(), None)?);
    }
    let slice = Duration::from_secs_f64(args.slice.max(0.001));
    // Whichever engine has run less goes next, so neither is always first.
    while let Some(r) = runners.iter_mut().filter(|r| !run_done(args, r.t.rounds, r.wall)).min_by_key(|r| r.wall) {
        let before = r.t.rounds;
        r.timed(|rounds, elapsed| args.rounds.is_some_and(|n| rounds >= n) || (elapsed >= slice && rounds > before));
    }
    let mut reports: Vec<Report> = runners.into_iter().zip(&engines).map(|(r, one)| r.finish(one, 0, None)).collect();
    let rates = [reports[0].exchanges_per_sec, reports[1].exchanges_per_sec];
    for (k, r) in reports.iter_mut().enumerate() {
        r.versus = Some(Versus { fib_prefixes: engines[1 - k].fib_prefixes, exchanges_ratio: if rates[1 - k] > 0.0 { rates[k] / rates[1 - k] } else { 0.0 } });
    }
    Ok(reports.try_into().unwrap_or_else(|_| unreachable!("one report per engine")))
}

/// True once an engine has run `rounds` timed rounds in `time`: `--rounds` of
/// them, else `--duration` and at least one round.
fn run_done(args: &EngineArgs, rounds: u64, time: Duration) -> bool {
    match args.rounds {
        Some(n) => rounds >= n,
        None => time >= Duration::from_secs_f64(args.duration.max(0.0)) && rounds > 0,
    }
}

/// An engine built and warmed up, and what its timed slices added up to.
struct Runner<F: FibSource> {
    b: Bench<F>,
    delta: Option<u8>,
    consumers: usize,
    /// Prefixes in the FIB, for bytes per prefix.
    prefixes: usize,
    fib_mem: alloc::Counted,
    setup_s: f64,
    counting: bool,
    t: Tally,
    hist: Histogram<u64>,
    /// Wall time of the timed slices, harness included.
    wall: Duration,
    /// CPU time of the timed slices; `None` where the OS does not say.
    cpu_ns: Option<u64>,
}

impl<F: FibSource> Runner<F> {
    /// Builds worker `worker`'s engine around `fib` (which holds `prefixes`;
    /// building it took `fib_s` seconds and `fib_mem`), drawing the worker's own
    /// names (seeded by `worker`), and warms it up: until `--warmup` has passed
    /// and the CS is full (or 5× `--warmup`). With a `start` barrier, warm-up
    /// begins once every worker is built.
    fn new(
        args: &EngineArgs,
        worker: usize,
        prefixes: &NameSet,
        fib: F,
        fib_mem: alloc::Counted,
        fib_s: f64,
        start: Option<&std::sync::Barrier>,
    ) -> anyhow::Result<Self> {
        let setup = Instant::now();
        let built = build(args, worker, prefixes, fib);
        if let Some(b) = start {
            // Every worker reaches the barrier, even after a failed build, so none waits forever.
            b.wait();
        }
        let (mut b, delta, consumers) = built?;
        let setup_s = fib_s + setup.elapsed().as_secs_f64();
        let warm = Instant::now();
        let warmup = Duration::from_secs_f64(args.warmup.max(0.0));
        let mut scratch = Tally::default();
        while warm.elapsed() < warmup || (b.fwd.pcct.cs.len() < args.cs_capacity && warm.elapsed() < warmup * 5) {
            b.round(&mut scratch, None, false);
        }
        Ok(Runner {
            b,
            delta,
            consumers,
            prefixes: prefixes.len(),
            fib_mem,
            setup_s,
            counting: alloc::installed(),
            t: Tally::default(),
            hist: Histogram::<u64>::new_with_bounds(1, 60_000_000_000, 3).expect("valid bounds"),
            wall: Duration::ZERO,
            cpu_ns: thread_cpu_ns().map(|_| 0),
        })
    }

    /// A lone engine's run: `--duration` (or `--rounds`) in one slice, then its
    /// report (`cpu`: the CPU it was pinned to).
    fn run(mut self, args: &EngineArgs, worker: usize, cpu: Option<usize>) -> Report {
        self.timed(|rounds, elapsed| run_done(args, rounds, elapsed));
        self.finish(args, worker, cpu)
    }

    /// Runs timed rounds until `done(rounds so far, this slice's time)`, adding
    /// the slice's wall and CPU time to the run's.
    fn timed(&mut self, done: impl Fn(u64, Duration) -> bool) {
        let cpu_before = thread_cpu_ns();
        let start = Instant::now();
        while !done(self.t.rounds, start.elapsed()) {
            self.b.round(&mut self.t, Some(&mut self.hist), false);
        }
        self.wall += start.elapsed();
        self.cpu_ns = match (self.cpu_ns, cpu_before, thread_cpu_ns()) {
            (Some(sum), Some(a), Some(b)) => Some(sum + b.saturating_sub(a)),
            _ => None,
        };
    }

    /// Counts allocations over a few more rounds, measures the stages and the
    /// tables' memory, and reports.
    fn finish(mut self, args: &EngineArgs, worker: usize, cpu: Option<usize>) -> Report {
        let (b, t, hist, counting) = (&mut self.b, &self.t, &self.hist, self.counting);
        let wall_s = self.wall.as_secs_f64();
        let cpu_share = self.cpu_ns.filter(|_| wall_s > 0.0).map(|ns| ns as f64 / 1e9 / wall_s);
        let allocs_per_packet = counting.then(|| {
            let mut c = Tally::default();
            let before = alloc::AllocSnapshot::now();
            for _ in 0..COUNTED_ROUNDS.min(args.rounds.unwrap_or(COUNTED_ROUNDS)).max(1) {
                b.round(&mut c, None, true);
            }
            alloc::AllocSnapshot::now().allocs_since(&before) as f64 / c.packets.max(1) as f64
        });

        let pipeline_ns = pipeline_phases(b, args);
        let sample = STAGE_SAMPLE.min(b.pool() as usize);
        let stage_ns = stages(b, sample);
        let (bytes_per_pit_entry, bytes_per_cs_entry) = if counting { memory(b) } else { (None, None) };

        let engine_s = t.engine.as_secs_f64();
        let per_sec = |n: u64| if engine_s > 0.0 { n as f64 / engine_s } else { 0.0 };
        let ns_per_exchange = if t.exchanges > 0 { engine_s * 1e9 / t.exchanges as f64 } else { 0.0 };
        Report {
            workload: args.workload,
            fib_prefixes: args.fib_prefixes,
            fib_variant: args.fib_variant.as_str(),
            strategy: args.strategy.word(),
            workers: 1,
            per_worker: vec![WorkerFigures {
                worker,
                cpu,
                exchanges: t.exchanges,
                exchanges_per_sec: per_sec(t.exchanges),
                ns_per_exchange,
                cpu_share,
            }],
            seed: args.seed,
            burst: b.burst,
            pool: b.pool() as usize,
            delta: self.delta,
            consumers: self.consumers,
            zipf_alpha: (args.workload == Workload::Zipf).then_some(args.alpha),
            cs_capacity: args.cs_capacity,
            rounds: t.rounds,
            interests: t.interests,
            exchanges: t.exchanges,
            packets: t.packets,
            engine_s,
            wall_s,
            cpu_share,
            exchanges_per_sec: per_sec(t.exchanges),
            packets_per_sec: per_sec(t.packets),
            ns_per_exchange,
            allocs_per_packet,
            cs_hit_ratio: t.cs_hits as f64 / t.interests.max(1) as f64,
            nacks: t.nacks,
            unanswered: t.unanswered,
            pipeline_ns,
            stage_ns,
            latency_ns: Latency { min: hist.min(), p50: hist.value_at_quantile(0.5), p99: hist.value_at_quantile(0.99), max: hist.max() },
            bytes_per_pit_entry,
            bytes_per_cs_entry,
            bytes_per_fib_prefix: counting.then(|| self.fib_mem.live_bytes as f64 / self.prefixes.max(1) as f64),
            interest_wire_bytes: b.interests.mean_len(),
            data_wire_bytes: b.data.mean_len(),
            setup_s: self.setup_s,
            versus: None,
        }
    }
}

/// What one worker needs: its Bench, Δ and consumers.
type Built<F> = (Bench<F>, Option<u8>, usize);

/// Builds one worker's forwarder around `fib` (which routes `prefixes` to the
/// producer) and its packet pool.
fn build<F: FibSource>(args: &EngineArgs, worker: usize, fib_names: &NameSet, fib: F) -> anyhow::Result<Built<F>> {
    let names_seed = args.seed.wrapping_add(1).wrapping_add(worker as u64 * 0x9e37_79b9);
    let (names, delta) = match args.workload {
        Workload::Reference => (workload::reference_names(fib_names, args.pool, names_seed), None),
        Workload::Zipf => (workload::interest_names(fib_names, args.objects, Delta::Fixed(args.delta.into()), names_seed), Some(args.delta)),
        Workload::Worst | Workload::Aggregate => (workload::worst_case_names(fib_names, args.pool, args.delta.into(), names_seed), Some(args.delta)),
    };
    let (interests, data) = templates(&names, args.payload)?;
    drop(names);
    let consumers = args.consumers.unwrap_or(if args.workload == Workload::Aggregate { 4 } else { 1 }).max(1);
    let cfg = EngineConfig { cs_capacity: args.cs_capacity, pit_capacity: 1 << 20, ..EngineConfig::default() };
    let mut fwd = Forwarder::with_fib(&cfg, 0, fib);
    fwd.strategies.insert(&Name::root(), args.strategy);
    let face = FaceMeta { local: false, point_to_point: true, ..Default::default() };
    fwd.add_face(PRODUCER, face.clone());
    let consumer_ids: Vec<FaceId> = (1..=consumers as FaceId).map(|c| PRODUCER + c).collect();
    for &c in &consumer_ids {
        fwd.add_face(c, face.clone());
    }
    let source = match args.workload {
        Workload::Zipf => Source::Popular(Box::new(Popularity::new(args.objects as u64, args.alpha, args.seed.wrapping_add(2))?)),
        Workload::Aggregate => Source::Aggregate { next: 0 },
        Workload::Worst | Workload::Reference => Source::Sequential { next: 0 },
    };
    let b = Bench {
        fwd,
        interests,
        data,
        source,
        consumers: consumer_ids,
        burst: args.burst.into(),
        now_ms: 1,
        nonce: 0,
        items: Vec::new(),
        input: Vec::new(),
        data_in: Vec::new(),
        out: Vec::new(),
        answers: Vec::new(),
    };
    Ok((b, delta, consumers))
}

/// Nanoseconds the calling thread has spent on a CPU, from Linux's schedstat;
/// `None` elsewhere.
pub(crate) fn thread_cpu_ns() -> Option<u64> {
    std::fs::read_to_string("/proc/thread-self/schedstat").ok()?.split_whitespace().next()?.parse().ok()
}

/// Runs [`PHASE_ROUNDS`] more rounds (at most `--rounds`) with the engine's
/// phase timing on, and divides each phase by the exchanges they made.
fn pipeline_phases<F: FibSource>(b: &mut Bench<F>, args: &EngineArgs) -> PipelineNs {
    let mut t = Tally::default();
    b.fwd.time_phases(true);
    for _ in 0..PHASE_ROUNDS.min(args.rounds.unwrap_or(PHASE_ROUNDS)).max(1) {
        b.round(&mut t, None, false);
    }
    b.fwd.time_phases(false);
    let per = |ns: u64| ns as f64 / t.exchanges.max(1) as f64;
    let [i, d] = t.phases;
    PipelineNs {
        interest_decode: per(i.decode),
        interest_tables: per(i.packets),
        fib: per(i.fib + d.fib),
        forward: per(i.forward + d.forward),
        data_decode: per(d.decode),
        data_tables: per(d.packets),
        timers: per(i.timers + d.timers),
        sum: per(i.total() + d.total()),
        measured: per(u64::try_from(t.engine.as_nanos()).unwrap_or(u64::MAX)),
    }
}

/// ns per item of `f` over `items`, best of `passes` passes (the least disturbed).
fn per_item<T>(items: &[T], passes: usize, mut f: impl FnMut(&T)) -> f64 {
    let mut best = f64::INFINITY;
    for _ in 0..passes.max(1) {
        let t = Instant::now();
        for it in items {
            f(it);
        }
        best = best.min(t.elapsed().as_nanos() as f64);
    }
    best / items.len().max(1) as f64
}

fn decode_interest(w: &Bytes) -> Option<Interest> {
    LpPacket::decode(w).ok()?.fragment.and_then(|f| Interest::decode(&f).ok())
}

fn decode_data(w: &Bytes) -> Option<Data> {
    LpPacket::decode(w).ok()?.fragment.and_then(|f| Data::decode(&f).ok())
}

/// Measures each pipeline stage alone over `n` fresh packets of the run's kind.
fn stages<F: FibSource>(b: &mut Bench<F>, n: usize) -> StageNs {
    let (wires, dwires) = b.sample(n);
    let interests: Vec<(FaceId, Interest)> = wires.iter().map(|(f, w)| (*f, decode_interest(w).expect("own packet"))).collect();
    let data: Vec<Data> = dwires.iter().map(|w| decode_data(w).expect("own packet")).collect();
    let now = b.now_ms;
    let mut s = StageNs {
        decode_interest: per_item(&wires, 3, |(_, w)| {
            black_box(decode_interest(w));
        }),
        decode_data: per_item(&dwires, 3, |w| {
            black_box(decode_data(w));
        }),
        ..StageNs::default()
    };
    // The engine's hash of a name, which every exact-match table probes with;
    // each table stage below includes it, as each stage is timed alone.
    let names = NameHasher::new();
    s.hash_name = per_item(&interests, 3, |(_, i)| {
        black_box(names.full(&i.name));
    });
    let fwd = &mut b.fwd;
    let fib = fwd.fib.view().expect("the bench keeps its FIB's writer");
    s.dead_nonce_check = per_item(&interests, 3, |(_, i)| {
        black_box(fwd.dead_nonces.contains(names.full(&i.name), i.nonce.unwrap_or(0), now));
    });
    s.fib_lpm = per_item(&interests, 3, |(_, i)| {
        black_box(fib.lpm(&i.name).map(|(_, e)| e.nexthops.clone()));
    });
    let nexthops: Vec<_> = interests.iter().map(|(_, i)| fib.lpm(&i.name).map(|(_, e)| e.nexthops.clone()).unwrap_or_default()).collect();
    drop(fib);
    let mut pit = Pcct::new(usize::MAX, 0, now);
    let (probe, _) = pit.find_or_insert(&interests[0].1, now).expect("unbounded");
    let entry = pit.pit.get(probe).expect("just inserted").clone();
    let localhop: Name = "/localhop".parse().expect("static name");
    let strategies = &fwd.strategies;
    let faces = &fwd.faces;
    s.strategy = per_item(&interests.iter().zip(&nexthops).collect::<Vec<_>>(), 3, |((ingress, i), nh)| {
        let kind = strategies.lpm(&i.name).map_or(StrategyKind::BestRoute, |(_, k)| *k);
        let local = localhop.is_prefix_of(&i.name);
        black_box(strategy::on_interest(kind, &entry, nh, now, |f| f != *ingress && !local && faces.get(f).is_some(), |f| f != *ingress && faces.get(f).is_some(), |faces| faces[0]));
    });
    s.cs_lookup = per_item(&interests, 1, |(_, i)| {
        black_box(fwd.pcct.cs.lookup(i, now).is_some());
    });
    let mut out = Vec::with_capacity(2 * b.burst);
    s.encode_output = per_item(&wires.iter().zip(&data).collect::<Vec<_>>(), 3, |((f, w), d)| {
        if out.len() >= 2 * b.burst {
            out.clear();
        }
        out.push(Outgoing { face: PRODUCER, pkt: w.clone() });
        out.push(Outgoing { face: *f, pkt: LpPacket::wrap(d.wire(), &LpHeaders::default()) });
    });
    drop(out);

    // PIT: insert a burst, then satisfy it, as the pipeline does round after round.
    let mut pit = Pcct::with_hasher(usize::MAX, 0, now, names.clone());
    let (mut insert, mut satisfy) = (Duration::ZERO, Duration::ZERO);
    let mut ids = Vec::new();
    for (chunk, dchunk) in interests.chunks(b.burst).zip(data.chunks(b.burst)) {
        let t = Instant::now();
        for (face, i) in chunk {
            let nonce = i.nonce.unwrap_or(0);
            let (id, _) = pit.find_or_insert(i, now).expect("unbounded");
            pit.pit.upsert_in_record(id, *face, nonce, now + LIFETIME_MS, None).expect("unbounded");
            pit.pit.get_mut(id).expect("just inserted").upsert_out_record(PRODUCER, nonce, now, 0);
            pit.pit.reschedule(id);
        }
        let t1 = Instant::now();
        for d in dchunk {
            ids.clear();
            pit.matches_for_data(d, names.full(d.name()), &mut ids);
            for id in ids.drain(..) {
                black_box(pit.remove(id));
            }
        }
        satisfy += t1.elapsed();
        insert += t1 - t;
    }
    s.pit_find_insert = insert.as_nanos() as f64 / n as f64;
    s.pit_match_remove = satisfy.as_nanos() as f64 / n as f64;

    s.cs_insert = per_item(&data, 1, |d| fwd.pcct.cs.insert(d, now));
    s.dead_nonce_add = per_item(&interests, 1, |(_, i)| fwd.dead_nonces.add(names.full(&i.name), i.nonce.unwrap_or(0), now));
    s.sum = s.decode_interest
        + s.decode_data
        + s.dead_nonce_check
        + s.pit_find_insert
        + s.cs_lookup
        + s.fib_lpm
        + s.strategy
        + s.pit_match_remove
        + s.cs_insert
        + s.encode_output;
    s
}

/// Heap bytes per PIT and CS entry: fresh tables filled with the run's packets
/// (decoded beforehand, so only what the tables allocate is counted).
fn memory<F: FibSource>(b: &mut Bench<F>) -> (Option<f64>, Option<f64>) {
    let n = MEMORY_SAMPLE.min(b.pool() as usize);
    let (wires, dwires) = b.sample(n);
    let interests: Vec<Interest> = wires.iter().filter_map(|(_, w)| decode_interest(w)).collect();
    let data: Vec<Data> = dwires.iter().filter_map(decode_data).collect();
    let now = b.now_ms;
    let mut pit = Pcct::new(usize::MAX, 0, now);
    let ((), pit_mem) = alloc::counted(|| {
        for i in &interests {
            let nonce = i.nonce.unwrap_or(0);
            if let Ok((id, _)) = pit.find_or_insert(i, now) {
                pit.pit.upsert_in_record(id, PRODUCER + 1, nonce, now + LIFETIME_MS, None).expect("unbounded");
                pit.pit.get_mut(id).expect("just inserted").upsert_out_record(PRODUCER, nonce, now, 0);
            }
        }
    });
    let pit_entries = pit.pit.len();
    drop(pit);
    // Made inside the count: its parent table is allocated for its capacity.
    let (cs, cs_mem) = alloc::counted(|| {
        let mut cs = Cs::new(data.len());
        for d in &data {
            cs.insert(d, now);
        }
        cs
    });
    let per = |bytes: i64, n: usize| (n > 0).then(|| bytes as f64 / n as f64);
    (per(pit_mem.live_bytes, pit_entries), per(cs_mem.live_bytes, cs.len()))
}

/// Prints a report as a table for people.
pub fn print_table(r: &Report) {
    let alloc = r.allocs_per_packet.map_or("n/a (counting allocator not installed)".to_string(), |a| format!("{a:.2}"));
    let bytes = |v: Option<f64>| v.map_or("n/a".to_string(), |v| format!("{v:.0} B"));
    println!("trajan bench engine — workload {:?}, FIB {} prefixes ({}), {} worker(s), {}", r.workload, r.fib_prefixes, r.fib_variant, r.workers, r.strategy);
    println!(
        "  burst {}  pool {}  Δ {}  consumers {}  CS capacity {}  seed {}{}",
        r.burst,
        r.pool,
        r.delta.map_or("1-10 (reference)".to_string(), |d| d.to_string()),
        r.consumers,
        r.cs_capacity,
        r.seed,
        r.zipf_alpha.map_or(String::new(), |a| format!("  Zipf α {a}"))
    );
    println!("  Interest {:.0} B, Data {:.0} B on the wire; setup {:.1} s", r.interest_wire_bytes, r.data_wire_bytes, r.setup_s);
    println!();
    println!("  exchanges/s        {:>12.0}   ({} exchanges in {:.2} s of engine time, {:.2} s wall)", r.exchanges_per_sec, r.exchanges, r.engine_s, r.wall_s);
    println!("  packets/s          {:>12.0}", r.packets_per_sec);
    if r.per_worker.len() > 1 {
        for w in &r.per_worker {
            let cpu = w.cpu.map_or("unpinned".to_string(), |c| format!("CPU {c}"));
            let share = w.cpu_share.map_or(String::new(), |s| format!(", CPU share {s:.2}"));
            println!("    worker {} ({cpu}): {:>10.0} exchanges/s, {:.1} ns/exchange{share}", w.worker, w.exchanges_per_sec, w.ns_per_exchange);
        }
    }
    if let Some(share) = r.cpu_share {
        println!("  CPU share          {share:>12.2}   (of the timed loop's wall time this thread ran; < 1 means preempted)");
    }
    if let Some(v) = &r.versus {
        println!("  versus {} prefixes {:>8.3}×  (this rate over the other engine's, timed in alternating slices)", v.fib_prefixes, v.exchanges_ratio);
    }
    println!("  ns/exchange        {:>12.1}", r.ns_per_exchange);
    println!("  allocs/packet      {alloc:>12}");
    println!("  CS hit ratio       {:>12.3}", r.cs_hit_ratio);
    if r.nacks + r.unanswered > 0 {
        println!("  nacks {}  unanswered {}", r.nacks, r.unanswered);
    }
    let l = &r.latency_ns;
    println!("  ns/packet in engine (per burst ÷ packets): min {}  p50 {}  p99 {}  max {}", l.min, l.p50, l.p99, l.max);
    println!(
        "  memory: PIT {} / entry, CS {} / entry, FIB {} / prefix (table-owned heap)",
        bytes(r.bytes_per_pit_entry),
        bytes(r.bytes_per_cs_entry),
        bytes(r.bytes_per_fib_prefix)
    );
    println!();
    let p = &r.pipeline_ns;
    println!("  pipeline phases, timed inside the engine as it ran (ns per exchange, {PHASE_ROUNDS} rounds after the timed run):");
    for (label, v) in [
        ("Interest decode", p.interest_decode),
        ("Interest PIT/CS", p.interest_tables),
        ("FIB lookup", p.fib),
        ("strategy+send", p.forward),
        ("Data decode", p.data_decode),
        ("Data PIT/CS+send", p.data_tables),
        ("timers", p.timers),
    ] {
        ns_row(label, v, "");
    }
    ns_row("sum", p.sum, &format!("   (those rounds: {:.1} ns/exchange)", p.measured));
    println!();
    println!("  stages, each measured in isolation (ns per call; one CS-miss exchange makes each once):");
    let s = &r.stage_ns;
    for (label, v) in [
        ("decode Interest", s.decode_interest),
        ("dead-nonce check", s.dead_nonce_check),
        ("PIT probe+insert", s.pit_find_insert),
        ("CS lookup", s.cs_lookup),
        ("FIB LPM", s.fib_lpm),
        ("strategy", s.strategy),
        ("decode Data", s.decode_data),
        ("PIT match+remove", s.pit_match_remove),
        ("CS insert", s.cs_insert),
        ("encode/output", s.encode_output),
    ] {
        ns_row(label, v, "");
    }
    ns_row("dead-nonce add", s.dead_nonce_add, "   (expired or stale-soon MustBeFresh Interests only, not summed)");
    ns_row("sum", s.sum, &format!("   (measured: {:.1} ns/exchange)", r.ns_per_exchange));
    ns_row("name hash", s.hash_name, "   (inside the table stages, not summed)");
}

/// One line of the table's phase and stage lists: a label, ns, and a note.
fn ns_row(label: &str, ns: f64, note: &str) {
    println!("    {label:<18} {ns:>8.1}{note}");
}
