//! `trajan bench engine` runs every workload end to end for a few rounds: exchanges
//! are counted, the producer answers everything, and the JSON report has every key
//! the issue asks for. Behaviour only; no figure is checked.

use clap::Parser;
use trajan_bench::alloc::CountingAllocator;
use trajan_bench::engine::{self, EngineArgs};

#[global_allocator]
static ALLOC: CountingAllocator = CountingAllocator;

/// Runs take turns, so each has the machine's cores to itself.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[derive(Parser)]
struct Cli {
    #[command(flatten)]
    args: EngineArgs,
}

fn args(extra: &[&str]) -> EngineArgs {
    let base = ["bench", "--fib-prefixes", "1K", "--pool", "2K", "--rounds", "20", "--warmup", "0", "--cs-capacity", "1K"];
    Cli::parse_from(base.iter().chain(extra)).args
}

fn run(extra: &[&str]) -> (engine::Report, serde_json::Value) {
    let _turn = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let report = engine::run(&args(extra)).expect("bench runs");
    let json = serde_json::to_value(&report).unwrap();
    assert_eq!(report.nacks, 0, "every Interest is routed");
    assert_eq!(report.unanswered, 0, "the producer answers every forwarded Interest");
    assert_eq!(report.rounds, 20);
    (report, json)
}

/// Every strategy forwards the worst case (one upstream) and answers every
/// Interest, and the report names it; an unknown one is refused.
#[test]
fn every_strategy_answers_every_interest() {
    for strategy in ["best-route", "multicast", "dynamic"] {
        let (r, json) = run(&["--workload", "worst", "--strategy", strategy]);
        assert_eq!(r.exchanges, r.interests, "{strategy}");
        assert_eq!(json["strategy"], strategy);
    }
    assert!(Cli::try_parse_from(["bench", "--strategy", "asf"]).is_err());
}

#[test]
fn worst_case_answers_every_interest_through_the_producer() {
    let (r, json) = run(&["--workload", "worst", "--burst", "32"]);
    assert_eq!(r.interests, 20 * 32);
    assert_eq!(r.exchanges, r.interests, "one Data per unique Interest");
    assert_eq!(r.packets, 2 * r.interests, "each Interest forwarded, each Data returned");
    assert_eq!(r.cs_hit_ratio, 0.0, "unique names never hit the CS");
    assert!(r.exchanges_per_sec > 0.0 && r.ns_per_exchange > 0.0);
    assert!(r.allocs_per_packet.is_some(), "the counting allocator is installed here");
    assert!(r.bytes_per_pit_entry.unwrap() > 0.0 && r.bytes_per_cs_entry.unwrap() > 0.0);
    assert!(r.bytes_per_fib_prefix.unwrap() > 0.0);
    assert!(r.latency_ns.min <= r.latency_ns.p50 && r.latency_ns.p50 <= r.latency_ns.p99 && r.latency_ns.p99 <= r.latency_ns.max);
    assert!(r.stage_ns.sum > 0.0);

    let line = serde_json::to_string(&r).unwrap();
    assert!(!line.contains('\n'), "one JSON object per line");
    for key in [
        "workload",
        "fib_prefixes",
        "workers",
        "exchanges_per_sec",
        "packets_per_sec",
        "ns_per_exchange",
        "cpu_share",
        "allocs_per_packet",
        "stage_ns",
        "pipeline_ns",
        "latency_ns",
        "cs_hit_ratio",
        "bytes_per_pit_entry",
        "bytes_per_cs_entry",
        "bytes_per_fib_prefix",
    ] {
        assert!(json.get(key).is_some(), "missing {key}");
    }
    assert_eq!(json["workload"], "worst");
    assert_eq!(json["fib_prefixes"], 1000);
    assert_eq!(json["workers"], 1);
    assert_eq!(json["fib_variant"], "pbf-exp", "Caesar's FIB with block expansion by default");
    for key in ["decode_interest", "decode_data", "hash_name", "pit_find_insert", "cs_lookup", "fib_lpm", "strategy", "encode_output"] {
        assert!(json["stage_ns"][key].as_f64().is_some_and(|v| v > 0.0), "stage {key}");
    }
    for key in ["min", "p50", "p99", "max"] {
        assert!(json["latency_ns"][key].is_u64(), "latency {key}");
    }
    // Every phase of the worst case runs, and the phases are timed inside the
    // engine calls the same rounds timed whole: they cannot add up to more.
    for key in ["interest_decode", "interest_tables", "fib", "forward", "data_decode", "data_tables", "timers"] {
        assert!(json["pipeline_ns"][key].as_f64().is_some_and(|v| v > 0.0), "phase {key}");
    }
    let p = &r.pipeline_ns;
    assert!(p.sum > 0.0 && p.sum <= p.measured, "phases {} ns within the engine's {} ns", p.sum, p.measured);
}

#[test]
fn reference_workload_runs() {
    let (r, json) = run(&["--workload", "reference"]);
    assert_eq!(r.exchanges, r.interests);
    assert!(json["delta"].is_null(), "Δ is drawn per name");
}

#[test]
fn zipf_hits_the_cache() {
    let (r, json) = run(&["--workload", "zipf", "--objects", "500", "--alpha", "1.0"]);
    assert!(r.cs_hit_ratio > 0.0, "popular objects come back from the CS");
    assert!(r.exchanges > 0);
    assert!(r.packets < 2 * r.interests, "CS hits spare the producer");
    assert_eq!(json["zipf_alpha"], 1.0);
}

#[test]
fn aggregation_sends_one_interest_upstream_for_all_consumers() {
    let (r, _) = run(&["--workload", "aggregate", "--consumers", "4", "--burst", "64"]);
    assert_eq!(r.consumers, 4);
    assert_eq!(r.exchanges, r.interests, "every consumer gets the Data");
    assert_eq!(r.packets, r.interests + r.interests / 4, "one Data per four Interests");
}

#[test]
fn counts_take_k_and_m_suffixes() {
    assert_eq!(engine::parse_count("10M"), Ok(10_000_000));
    assert_eq!(engine::parse_count("1k"), Ok(1000));
    assert_eq!(engine::parse_count("123"), Ok(123));
    assert!(engine::parse_count("1G").is_err());
    assert!(engine::parse_count("").is_err());
}

#[test]
fn workers_share_one_fib_run_their_own_engines_and_totals_add_up() {
    let _turn = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let r = engine::run(&args(&["--workload", "worst", "--burst", "16", "--workers", "2"])).expect("bench runs");
    let json = serde_json::to_value(&r).unwrap();
    assert_eq!(json["workers"], 2);
    assert_eq!(r.per_worker.len(), 2);
    assert_eq!((r.nacks, r.unanswered), (0, 0));
    assert_eq!(r.rounds, 2 * 20, "rounds are summed over the workers");
    let per: u64 = r.per_worker.iter().map(|w| w.exchanges).sum();
    assert_eq!(per, r.exchanges, "the total is the workers' sum");
    assert!(r.per_worker.iter().all(|w| w.exchanges == 20 * 16), "every worker answered its own Interests");
    // Each worker counts its own engine calls only, not the harness the other
    // runs meanwhile (it allocates every round): the same figure as one worker's.
    let one = engine::run(&args(&["--workload", "worst", "--burst", "16", "--workers", "1"])).expect("bench runs");
    assert_eq!(r.allocs_per_packet, one.allocs_per_packet, "what the engine allocates, on any worker");
    let rate: f64 = r.per_worker.iter().map(|w| w.exchanges_per_sec).sum();
    assert!((rate - r.exchanges_per_sec).abs() < 1e-6 * rate.max(1.0));
}

#[test]
fn every_fib_variant_routes_every_interest() {
    for variant in ["hash", "pbf", "pbf-exp"] {
        let (r, json) = run(&["--workload", "reference", "--burst", "16", "--fib-variant", variant]);
        assert_eq!(json["fib_variant"], variant);
        assert_eq!(r.exchanges, r.interests, "{variant}: one Data per unique Interest");
    }
}

#[test]
fn side_by_side_runs_both_engines_in_turns_and_reports_their_ratio() {
    let turn = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // Slices of one round each, so the two engines alternate many times.
    let a = args(&["--workload", "worst", "--burst", "16", "--side-by-side", "3K", "--slice", "0.000001"]);
    let [small, big] = engine::run_side_by_side(&a).expect("bench runs");
    assert_eq!((small.fib_prefixes, big.fib_prefixes), (1000, 3000));
    for r in [&small, &big] {
        assert_eq!(r.rounds, 20, "each engine runs its own --rounds");
        assert_eq!(r.exchanges, 20 * 16, "every Interest answered");
        assert_eq!((r.nacks, r.unanswered), (0, 0));
    }
    let (vs, vb) = (small.versus.as_ref().unwrap(), big.versus.as_ref().unwrap());
    assert_eq!((vs.fib_prefixes, vb.fib_prefixes), (3000, 1000));
    assert!((vs.exchanges_ratio - small.exchanges_per_sec / big.exchanges_per_sec).abs() < 1e-9);
    assert!((vs.exchanges_ratio * vb.exchanges_ratio - 1.0).abs() < 1e-9, "the two ratios are each other's inverse");
    assert!(serde_json::to_value(&small).unwrap()["versus"]["exchanges_ratio"].is_f64());
    let mut two = args(&["--workers", "2"]);
    two.side_by_side = Some(3000);
    assert!(engine::run_side_by_side(&two).is_err(), "one worker per engine");
    drop(turn);

    let lone = run(&["--workload", "worst"]).1;
    assert!(lone["versus"].is_null(), "a lone run compares with nothing");
}

/// A run that could measure nothing is refused by its options: no rounds, no
/// time, a negative or non-numeric time; a warm-up of 0 s is allowed.
#[test]
fn options_that_measure_nothing_are_refused() {
    let parse = |extra: &[&str]| Cli::try_parse_from(["bench"].iter().chain(extra)).map(|c| c.args);
    for bad in [&["--rounds", "0"][..], &["--duration", "0"], &["--duration", "-1"], &["--duration", "nan"], &["--warmup", "-0.5"], &["--warmup", "inf"]] {
        assert!(parse(bad).is_err(), "{bad:?}");
    }
    let ok = parse(&["--warmup", "0", "--duration", "0.5", "--rounds", "1"]).unwrap();
    assert_eq!((ok.warmup, ok.duration, ok.rounds), (0.0, 0.5, Some(1)));
}
