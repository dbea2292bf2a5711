//! Trajan's benchmarks, as programs rather than timed tests: seeded workloads that
//! any benchmark can share, and `trajan bench engine`, which drives the daemon's own
//! forwarding engine from pre-encoded packets in memory.

#![warn(missing_docs)]

pub mod alloc;
pub mod engine;
pub mod fib;
pub mod workload;

/// `trajan bench ...`: the benchmark programs.
#[derive(clap::Args, Debug)]
pub struct BenchArgs {
    /// Which benchmark to run, with its options.
    #[command(subcommand)]
    pub command: BenchCommand,
}

/// Which benchmark to run.
#[derive(clap::Subcommand, Debug)]
pub enum BenchCommand {
    /// The forwarding engine from memory: exchanges/s, ns per pipeline phase (timed
    /// inside the engine) and per stage (each alone), latency, allocations and
    /// bytes per table entry, for a seeded workload.
    Engine(engine::EngineArgs),
    /// The FIB alone, variants side by side: lookups/s, false-positive rate, bytes
    /// per prefix, build time and update rates (one JSON line per result with --json).
    Fib(fib::FibArgs),
}

/// Runs a benchmark and prints its report (one JSON line with `--json`, else a table).
pub fn run(args: BenchArgs) -> anyhow::Result<()> {
    match args.command {
        BenchCommand::Engine(a) => {
            let reports = match a.side_by_side {
                Some(_) => engine::run_side_by_side(&a)?.to_vec(),
                None => vec![engine::run(&a)?],
            };
            for (k, report) in reports.iter().enumerate() {
                if a.json {
                    println!("{}", serde_json::to_string(report)?);
                } else {
                    if k > 0 {
                        println!();
                    }
                    engine::print_table(report);
                }
            }
            Ok(())
        }
        BenchCommand::Fib(a) => fib::run(&a, |r| {
            if a.json {
                println!("{}", serde_json::to_string(r).expect("report serialises"));
            } else {
                fib::print_line(r);
            }
        }),
    }
}
