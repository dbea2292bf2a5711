//! `trajan bench fib`: the FIB alone, measured the way Caesar §6.2–6.3 measured its
//! LPM — lookups per second per core for each first-stage variant (hash = NoPBF,
//! pbf, pbf-exp) on the reference FIB, a Δ sweep, no-match (DoS) names, an
//! adversarial FIB with every prefix under one first component, and route updates.
//!
//! This machine is noisy and shared, so variants are measured *side by side*: every
//! variant's FIB is built first, then timed passes over the same name pool rotate
//! through the variants round after round, and each variant reports its median
//! pass. Ratios between variants of one run are the figures to trust.

use std::hint::black_box;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use anyhow::bail;
use serde::Serialize;
use trajan_tables::fib::{FibWriter, LookupStats};
use trajan_tables::{Fib, FibVariant};
use trajan_wire::Name;

use crate::engine::{parse_count, thread_cpu_ns};
use crate::workload::{self, NameSet};

/// Which measurement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FibWorkload {
    /// Caesar's reference traffic: a FIB prefix plus 1-10 components (2 on average).
    Reference,
    /// Names exactly Δ components below a FIB prefix, for each `--deltas` value.
    Delta,
    /// Names sharing no prefix with the FIB (the DoS case).
    Nomatch,
    /// Every prefix moved under `/com`, names Δ = 2 below them.
    Adversarial,
    /// Route inserts and removals per second, alone and through the shared FIB,
    /// and lookups per second of a reader while the updates stream.
    Updates,
}

/// `trajan bench fib` options.
#[derive(clap::Args, Debug)]
pub struct FibArgs {
    /// FIB sizes, comma-separated (K and M suffixes: 1K,100K,1M,10M).
    #[arg(long, value_delimiter = ',', default_value = "1K,100K,1M", value_parser = parse_count)]
    pub fib_prefixes: Vec<usize>,
    /// Variants measured side by side.
    #[arg(long, value_delimiter = ',', default_value = "hash,pbf,pbf-exp", value_parser = parse_variant)]
    pub variants: Vec<FibVariant>,
    /// Workloads, comma-separated.
    #[arg(long, value_delimiter = ',', value_enum, default_value = "reference,delta,nomatch,adversarial,updates")]
    pub workloads: Vec<FibWorkload>,
    /// Δ values of the delta workload (0 = the FIB's own prefixes, exact match).
    #[arg(long, value_delimiter = ',', default_value = "0,1,2,3,4,5,6,7,8,9,10")]
    pub deltas: Vec<usize>,
    /// Names per timed pass (accepts K and M).
    #[arg(long, default_value = "200K", value_parser = parse_count)]
    pub pool: usize,
    /// Timed passes per variant; the median is reported.
    #[arg(long, default_value_t = 5)]
    pub rounds: usize,
    /// Prefixes inserted, then removed, by the updates workload, at most a third of
    /// the FIB (accepts K and M).
    #[arg(long, default_value = "200K", value_parser = parse_count)]
    pub updates: usize,
    /// Build each FIB sized for its prefix count (a router loading a RIB of known
    /// size) instead of from empty: no table growth or filter rebuilds while
    /// building, so a lower memory peak — what lets 100 M prefixes fit.
    #[arg(long)]
    pub presize: bool,
    /// Seed of every generator: the same seed is the same workload.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// One JSON object per line instead of a table.
    #[arg(long)]
    pub json: bool,
}

fn parse_variant(s: &str) -> Result<FibVariant, String> {
    s.parse()
}

/// One line of output.
#[derive(Debug, Clone, Serialize)]
pub struct FibReport {
    /// The FIB's first LPM stage: `hash`, `pbf` or `pbf-exp`.
    pub variant: String,
    /// The measurement this line reports.
    pub workload: FibWorkload,
    /// Prefixes in the FIB measured.
    pub fib_prefixes: usize,
    /// Components between names and their matching prefix, where it applies.
    pub delta: Option<usize>,
    /// Median over the rounds, one core, one name at a time ([`Fib::lpm`]).
    pub lookups_per_sec: f64,
    /// This variant's lookups/s over the `hash` variant's in the same run.
    pub speedup_vs_hash: Option<f64>,
    /// Same names through [`Fib::lpm_burst`] (hashing and prefetching a few
    /// names ahead), median over the rounds, one core.
    pub burst_lookups_per_sec: Option<f64>,
    /// `burst_lookups_per_sec` over the `hash` variant's in the same run.
    pub burst_speedup_vs_hash: Option<f64>,
    /// `lookups_per_sec` per second of the thread's own CPU time, median over
    /// the rounds: on this shared machine a pass preempted midway
    /// loses wall time the lookups never used, so ratios of these are steadier
    /// than of the wall-clock rates (both are reported).
    pub lookups_per_cpu_sec: Option<f64>,
    /// `burst_lookups_per_sec` per second of the thread's CPU time, median over the rounds.
    pub burst_lookups_per_cpu_sec: Option<f64>,
    /// `lookups_per_cpu_sec` over the `hash` variant's in the same run.
    pub cpu_speedup_vs_hash: Option<f64>,
    /// `burst_lookups_per_cpu_sec` over the `hash` variant's in the same run.
    pub burst_cpu_speedup_vs_hash: Option<f64>,
    /// Share of the timed passes' (updates: insert and removal phases') wall time
    /// this thread was on a CPU (1 = it was never preempted; lower means the
    /// machine was busy and figures are low).
    pub cpu_share: Option<f64>,
    /// Filter "maybe" answers for absent prefixes / filter tests of absent prefixes.
    pub false_positive_rate: f64,
    /// The formula's rate for the filter's block loads, (1/b)·Σ(1 − e^(−k·nᵢ/m))^k.
    pub expected_false_positive_rate: Option<f64>,
    /// Filter blocks read per lookup.
    pub blocks_per_lookup: f64,
    /// Hash-table probes per lookup.
    pub probes_per_lookup: f64,
    /// FIB bytes per prefix beyond the prefix's encoded name bytes.
    pub bytes_per_prefix: f64,
    /// Encoded name bytes per prefix.
    pub name_bytes_per_prefix: f64,
    /// All FIB memory.
    pub fib_bytes: usize,
    /// Building the FIB, one `add_nexthop` per prefix, from empty or (`presized`)
    /// into a FIB sized for the prefix count.
    pub build_secs: f64,
    /// Whether the FIB was built sized for its prefix count (`--presize`).
    pub presized: bool,
    /// Prefixes inserted per second while building (prefixes over `build_secs`).
    pub build_inserts_per_sec: f64,
    /// Expansions done while building.
    pub expansions: Option<u64>,
    /// Updates workload: new prefixes inserted, then removed, on the FIB alone;
    /// median over the rounds, each starting from a freshly rebuilt FIB.
    pub inserts_per_sec: Option<f64>,
    /// Updates workload: the same prefixes removed per second, median over the rounds.
    pub removals_per_sec: Option<f64>,
    /// Same through [`FibWriter`] (each update applied to both copies), publishing
    /// every 1024 updates.
    pub shared_updates_per_sec: Option<f64>,
    /// A reader thread's lookups/s with no writer active (to compare with
    /// `lookups_per_sec`, measured while the writer streams updates).
    pub idle_lookups_per_sec: Option<f64>,
    /// The process's resident memory when the line was printed (VmRSS), in bytes.
    pub rss_bytes: u64,
    /// The process's peak resident memory so far (VmHWM), in bytes; 0 where /proc is absent.
    pub peak_rss_bytes: u64,
}

/// Runs the requested measurements, calling `emit` with each line as it is ready.
pub fn run(args: &FibArgs, mut emit: impl FnMut(&FibReport)) -> anyhow::Result<()> {
    if args.variants.is_empty() || args.rounds == 0 || args.pool == 0 {
        bail!("--variants, --rounds and --pool must not be empty or zero");
    }
    let hosts = workload::reference_hosts()?;
    for &n in &args.fib_prefixes {
        let wants = |w| args.workloads.contains(&w);
        let needs_reference = [FibWorkload::Reference, FibWorkload::Delta, FibWorkload::Nomatch, FibWorkload::Updates].into_iter().any(wants);
        if needs_reference {
            let fib_names = workload::reference_fib(&hosts, n, args.seed)?;
            let mut fibs = build_all(args, fib_names.len(), (0..fib_names.len()).map(|i| fib_names.get(i)));
            let name_seed = args.seed.wrapping_add(1);
            if wants(FibWorkload::Reference) {
                let names = materialise(&workload::reference_names(&fib_names, args.pool, name_seed));
                measure(args, &fibs, FibWorkload::Reference, None, &names, &mut emit);
            }
            if wants(FibWorkload::Delta) {
                for &d in &args.deltas {
                    let names = if d == 0 {
                        (0..args.pool).map(|i| fib_names.get(i * 7919 % fib_names.len())).collect()
                    } else {
                        materialise(&workload::worst_case_names(&fib_names, args.pool, d, name_seed))
                    };
                    measure(args, &fibs, FibWorkload::Delta, Some(d), &names, &mut emit);
                }
            }
            if wants(FibWorkload::Nomatch) {
                let names = materialise(&workload::no_match_names(args.pool, name_seed));
                measure(args, &fibs, FibWorkload::Nomatch, None, &names, &mut emit);
            }
            if wants(FibWorkload::Updates) {
                // Churn at steady state: at most a third of the FIB, which the
                // rebuilt filter and table absorb without growing.
                let count = args.updates.min(n / 3).max(1);
                let fresh = workload::reference_fib(&hosts, n + count, args.seed)?;
                let new: Vec<Name> = (n..n + count).map(|i| fresh.get(i)).collect();
                drop(fresh);
                let names = materialise(&workload::reference_names(&fib_names, args.pool, name_seed));
                for built in fibs.drain(..) {
                    emit(&updates(built, &new, &names, args.rounds));
                }
            }
        }
        if wants(FibWorkload::Adversarial) {
            let com = Name::root().append_generic(b"com");
            let under_com = |set: &NameSet| -> Vec<Name> { set.iter().map(|p| prepend(&com, &p)).collect() };
            let fib_names = workload::reference_fib(&hosts, n, args.seed)?;
            let prefixes = under_com(&fib_names);
            let fibs = build_all(args, prefixes.len(), prefixes.iter().cloned());
            drop(prefixes);
            let names = under_com(&workload::worst_case_names(&fib_names, args.pool, 2, args.seed.wrapping_add(1)));
            measure(args, &fibs, FibWorkload::Adversarial, Some(2), &names, &mut emit);
        }
    }
    Ok(())
}

/// A FIB of one variant with what building it cost.
struct Built {
    fib: Fib,
    build_secs: f64,
    presized: bool,
    expansions: Option<u64>,
}

/// Builds a FIB of every variant from the `count` `prefixes`.
fn build_all(args: &FibArgs, count: usize, prefixes: impl Iterator<Item = Name> + Clone) -> Vec<Built> {
    args
        .variants
        .iter()
        .map(|&v| {
            let mut fib = Fib::with_capacity(v, if args.presize { count } else { 0 });
            let start = Instant::now();
            // Next hops spread over two faces, as Caesar spread them over its two
            // output line cards.
            for (i, p) in prefixes.clone().enumerate() {
                fib.add_nexthop(&p, 1 + (i % 2) as u32, 0);
            }
            let build_secs = start.elapsed().as_secs_f64();
            let expansions = fib.filter_stats().map(|s| s.expansions);
            Built { fib, build_secs, presized: args.presize, expansions }
        })
        .collect()
}

fn materialise(set: &NameSet) -> Vec<Name> {
    set.iter().collect()
}

fn prepend(first: &Name, rest: &Name) -> Name {
    let mut value = first.value().to_vec();
    value.extend_from_slice(rest.value());
    Name::from_value(value.into()).expect("two valid names concatenate to a valid name")
}

/// One timed pass, one name at a time or in bursts: lookups per second of wall
/// time and of this thread's CPU time (NaN where the CPU time is unavailable).
fn pass(fib: &Fib, names: &[Name], burst: bool) -> [f64; 2] {
    let (start, cpu) = (Instant::now(), thread_cpu_ns());
    if burst {
        for chunk in names.chunks(BURST) {
            fib.lpm_burst(black_box(chunk), |_, hit| {
                black_box(hit.map(|(p, e)| (p.len(), e.nexthops[0].face)));
            });
        }
    } else {
        for name in names {
            black_box(fib.lpm(black_box(name)).map(|(p, e)| (p.len(), e.nexthops[0].face)));
        }
    }
    let wall = start.elapsed().as_secs_f64();
    let cpu = cpu.zip(thread_cpu_ns()).map_or(f64::NAN, |(a, b)| (b - a) as f64 / 1e9);
    [names.len() as f64 / wall, names.len() as f64 / cpu]
}

/// Names per [`Fib::lpm_burst`] call: an engine burst (the design guide's 32–64).
const BURST: usize = 64;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn measure(args: &FibArgs, fibs: &[Built], workload: FibWorkload, delta: Option<usize>, names: &[Name], emit: &mut impl FnMut(&FibReport)) {
    // Warm every FIB once, then rotate through the variants (and through single
    // and burst lookups) round by round.
    for b in fibs {
        pass(&b.fib, names, false);
    }
    // rates[variant][single, burst][wall, cpu]: one entry per round.
    let mut rates = vec![[[(); 2].map(|_| Vec::with_capacity(args.rounds)), [(); 2].map(|_| Vec::with_capacity(args.rounds))]; fibs.len()];
    let (wall, cpu) = (Instant::now(), thread_cpu_ns());
    for _ in 0..args.rounds {
        for (b, r) in fibs.iter().zip(&mut rates) {
            for (burst, r) in [false, true].into_iter().zip(r) {
                for (r, rate) in r.iter_mut().zip(pass(&b.fib, names, burst)) {
                    r.push(rate);
                }
            }
        }
    }
    let cpu_share = cpu.zip(thread_cpu_ns()).map(|(a, b)| (b - a) as f64 / 1e9 / wall.elapsed().as_secs_f64());
    let rates: Vec<[[f64; 2]; 2]> = rates.into_iter().map(|r| r.map(|by_clock| by_clock.map(median))).collect();
    let hash_rate = fibs.iter().zip(&rates).find(|(b, _)| b.fib.variant() == FibVariant::Hash).map(|(_, &r)| r);
    let finite = |x: f64| x.is_finite().then_some(x);
    for (b, &[single, burst]) in fibs.iter().zip(&rates) {
        let mut report = describe(b, workload, names);
        report.delta = delta;
        report.lookups_per_sec = single[0];
        report.speedup_vs_hash = hash_rate.map(|h| single[0] / h[0][0]);
        report.burst_lookups_per_sec = Some(burst[0]);
        report.burst_speedup_vs_hash = hash_rate.map(|h| burst[0] / h[1][0]);
        report.lookups_per_cpu_sec = finite(single[1]);
        report.burst_lookups_per_cpu_sec = finite(burst[1]);
        report.cpu_speedup_vs_hash = hash_rate.and_then(|h| finite(single[1] / h[0][1]));
        report.burst_cpu_speedup_vs_hash = hash_rate.and_then(|h| finite(burst[1] / h[1][1]));
        report.cpu_share = cpu_share;
        emit(&report);
    }
}

/// The untimed parts of a report: memory, build, and a tallied pass for the
/// filter's false-positive rate and accesses per lookup.
fn describe(b: &Built, workload: FibWorkload, names: &[Name]) -> FibReport {
    let fib = &b.fib;
    let mut tally = LookupStats::default();
    for name in names {
        fib.lpm_tallied(name, &mut tally);
    }
    let mem = fib.memory();
    let (rss, peak) = rss();
    FibReport {
        variant: fib.variant().to_string(),
        workload,
        fib_prefixes: fib.len(),
        delta: None,
        lookups_per_sec: 0.0,
        speedup_vs_hash: None,
        burst_lookups_per_sec: None,
        burst_speedup_vs_hash: None,
        lookups_per_cpu_sec: None,
        burst_lookups_per_cpu_sec: None,
        cpu_speedup_vs_hash: None,
        burst_cpu_speedup_vs_hash: None,
        cpu_share: None,
        false_positive_rate: tally.false_positive_rate(),
        expected_false_positive_rate: fib.filter_stats().map(|s| s.expected_fpr),
        blocks_per_lookup: tally.blocks as f64 / names.len().max(1) as f64,
        probes_per_lookup: tally.probes as f64 / names.len().max(1) as f64,
        bytes_per_prefix: mem.overhead_per_prefix(),
        name_bytes_per_prefix: mem.name_bytes as f64 / mem.prefixes.max(1) as f64,
        fib_bytes: mem.total(),
        build_secs: b.build_secs,
        presized: b.presized,
        build_inserts_per_sec: fib.len() as f64 / b.build_secs,
        expansions: b.expansions,
        inserts_per_sec: None,
        removals_per_sec: None,
        shared_updates_per_sec: None,
        idle_lookups_per_sec: None,
        rss_bytes: rss,
        peak_rss_bytes: peak,
    }
}

/// Route churn on a built FIB: insert `new`, remove it again (`rounds` times,
/// reporting the medians), alone and then through a [`FibWriter`] while a reader
/// thread looks up `names`.
fn updates(mut b: Built, new: &[Name], names: &[Name], rounds: usize) -> FibReport {
    let (mut inserts, mut removals) = (Vec::with_capacity(rounds), Vec::with_capacity(rounds));
    let (mut wall, mut cpu) = (0.0, Some(0u64));
    for _ in 0..rounds {
        // Caesar's long-timescale rebuild first: the filter and table sized for
        // the FIB, as a router that loaded its routes would run. Every round starts
        // from one, so later rounds do not find the blocks already expanded.
        b.fib.rebuild();
        let (start, cpu_start) = (Instant::now(), thread_cpu_ns());
        for p in new {
            b.fib.add_nexthop(p, 3, 0);
        }
        let secs = start.elapsed().as_secs_f64();
        inserts.push(new.len() as f64 / secs);
        let start = Instant::now();
        for p in new {
            b.fib.remove_nexthop(p, 3);
        }
        removals.push(new.len() as f64 / start.elapsed().as_secs_f64());
        wall += secs + start.elapsed().as_secs_f64();
        cpu = cpu.zip(cpu_start).zip(thread_cpu_ns()).map(|((c, a), b)| c + (b - a));
    }
    let mut report = describe(&b, FibWorkload::Updates, names);
    report.inserts_per_sec = Some(median(inserts));
    report.removals_per_sec = Some(median(removals));
    report.cpu_share = cpu.map(|c| c as f64 / 1e9 / wall);

    let (mut writer, reader) = FibWriter::new(b.fib);
    let writing = Arc::new(AtomicBool::new(false));
    let stop = Arc::new(AtomicBool::new(false));
    let counts = Arc::new([AtomicU64::new(0), AtomicU64::new(0)]);
    let thread = {
        let (writing, stop, counts, names) = (writing.clone(), stop.clone(), counts.clone(), names.to_vec());
        std::thread::spawn(move || {
            // Counts lookups done while the writer is idle ([0]) and busy ([1]), a
            // burst of 64 per read guard, as a forwarding thread would.
            while !stop.load(Ordering::Acquire) {
                for chunk in names.chunks(64) {
                    let busy = usize::from(writing.load(Ordering::Relaxed));
                    let fib = reader.read().expect("writer alive");
                    for name in chunk {
                        black_box(fib.lpm(name).map(|(p, _)| p.len()));
                    }
                    counts[busy].fetch_add(chunk.len() as u64, Ordering::Relaxed);
                }
            }
        })
    };
    let idle_start = Instant::now();
    let idle_for = std::time::Duration::from_millis(500);
    while idle_start.elapsed() < idle_for {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let idle = counts[0].load(Ordering::Relaxed) as f64 / idle_start.elapsed().as_secs_f64();
    writing.store(true, Ordering::Relaxed);
    let start = Instant::now();
    for (round, batch) in new.chunks(1024).enumerate() {
        for p in batch {
            writer.add_nexthop(p, 3 + (round % 2) as u32, 0);
        }
        writer.publish();
    }
    for batch in new.chunks(1024) {
        for p in batch {
            for face in [3, 4] {
                writer.remove_nexthop(p, face);
            }
        }
        writer.publish();
    }
    let secs = start.elapsed().as_secs_f64();
    writing.store(false, Ordering::Relaxed);
    stop.store(true, Ordering::Release);
    thread.join().expect("reader thread");
    report.shared_updates_per_sec = Some(2.0 * new.len() as f64 / secs);
    report.lookups_per_sec = counts[1].load(Ordering::Relaxed) as f64 / secs;
    report.idle_lookups_per_sec = Some(idle);
    report
}

/// (current, peak) resident memory of this process, from /proc; zeros elsewhere.
fn rss() -> (u64, u64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |key: &str| {
        status.lines().find(|l| l.starts_with(key)).and_then(|l| l.split_whitespace().nth(1)).and_then(|kb| kb.parse::<u64>().ok()).map_or(0, |kb| kb * 1024)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// A human-readable line per report.
pub fn print_line(r: &FibReport) {
    let delta = r.delta.map_or("-".to_string(), |d| d.to_string());
    let speedup = r.speedup_vs_hash.map_or("-".to_string(), |s| format!("{s:.2}x"));
    let burst = match (r.burst_lookups_per_sec, r.burst_speedup_vs_hash) {
        (Some(b), Some(s)) => format!(" burst {:.2} M/s ({s:.2}x)", b / 1e6),
        (Some(b), None) => format!(" burst {:.2} M/s", b / 1e6),
        _ => String::new(),
    };
    let by_cpu = match (r.cpu_speedup_vs_hash, r.burst_cpu_speedup_vs_hash) {
        (Some(s), Some(b)) => format!(" (per CPU-second {s:.2}x, burst {b:.2}x)"),
        _ => String::new(),
    };
    let cpu = r.cpu_share.map_or(String::new(), |c| format!(" cpu {:.0}%", c * 100.0));
    let updates = match (r.inserts_per_sec, r.removals_per_sec, r.shared_updates_per_sec) {
        (Some(i), Some(x), Some(s)) => format!(" ins {:.2}M/s rem {:.2}M/s shared {:.2}M/s", i / 1e6, x / 1e6, s / 1e6),
        _ => String::new(),
    };
    println!(
        "{:<8} {:<12} n={:<9} Δ={:<3} {:>7.2} M lookups/s ({speedup:>6}){burst}{by_cpu} fp {:.4} blk {:.2} probes {:.2} {:.1} B/prefix (+{:.1} name) build {:.2}s{updates}{cpu}",
        r.variant,
        format!("{:?}", r.workload).to_lowercase(),
        r.fib_prefixes,
        delta,
        r.lookups_per_sec / 1e6,
        r.false_positive_rate,
        r.blocks_per_lookup,
        r.probes_per_lookup,
        r.bytes_per_prefix,
        r.name_bytes_per_prefix,
        r.build_secs,
    );
}
