//! `trajan`: the router daemon and its tools in one binary.

mod cpu;
mod demo;
mod run;

use clap::{Parser, Subcommand};

/// Counts heap allocations only while a benchmark asks (one relaxed load per
/// allocation otherwise), so `trajan bench` reports allocations per packet and
/// bytes per table entry of this very binary.
#[global_allocator]
static ALLOC: trajan_bench::alloc::CountingAllocator = trajan_bench::alloc::CountingAllocator;

/// Trajan, a high-speed NDN content router. Unmodified NDN applications (python-ndn,
/// NDNts, ndnd) talk to it as they would to NFD: over /run/nfd/nfd.sock, UDP or TCP 6363.
///
/// With no command, `trajan` runs `demo`: the router on its embedded default
/// configuration, serving and fetching a small object through itself.
#[derive(Parser)]
#[command(name = "trajan", version, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Run the forwarder daemon (until SIGINT/SIGTERM; SIGHUP reloads the configuration file).
    Run(run::RunArgs),
    /// Run the daemon and show it working: publish a demo object and fetch it through the router.
    Demo(run::RunArgs),
    /// Print the embedded default configuration (a commented TOML file to start from).
    DefaultConfig,
    /// Publish a file as segmented Data under a prefix.
    Put(trajan_tools::put::PutArgs),
    /// Fetch segmented Data into a file, verifying every segment.
    Get(trajan_tools::get::GetArgs),
    /// Measure round-trip time to a prefix, or answer pings (--serve).
    Ping(trajan_tools::ping::PingArgs),
    /// Measure exchanges/s through a router: a producer and a windowed consumer of unique names, bounded in count and time.
    Load(trajan_tools::load::LoadArgs),
    /// Traffic generator and sink (Augustus §4): Interests at a target or maximum rate and a producer answering them, over UDP or DPDK ports; reports rates, losses and latency percentiles (--json).
    Gen(trajan_tools::gen::GenArgs),
    /// Manage routes (the RIB): add, remove, list.
    Route(trajan_tools::mgmt_cli::RouteArgs),
    /// Manage faces: create, destroy, list.
    Face(trajan_tools::mgmt_cli::FaceArgs),
    /// Choose the forwarding strategy per namespace: list, set, unset.
    Strategy(trajan_tools::strategy_cli::StrategyArgs),
    /// Manage the content store: info, config (capacity, admit, serve), erase.
    Cs(trajan_tools::cs_cli::CsArgs),
    /// Show the forwarder's status. Like NFD, the router answers management only on local faces (its Unix socket, loopback): run the tools on the router's host.
    Status(trajan_tools::mgmt_cli::StatusArgs),
    /// Benchmarks: `trajan bench engine` drives this binary's forwarding engine from memory.
    Bench(trajan_bench::BenchArgs),
}

/// The exit status of a tool whose output reader went away: a process that
/// SIGPIPE ended reports 128 + 13 in a shell.
const CLOSED_OUTPUT_STATUS: i32 = 141;

/// Ends the process quietly when its standard output is a pipe whose reader
/// stopped reading (`trajan face list | head -1`), as a Unix tool ended by
/// SIGPIPE does. Rust ignores SIGPIPE, so the next write fails instead, and
/// `print!` turns that failure into a panic with a backtrace. SIGPIPE itself
/// stays ignored: the daemon and the tools write to sockets whose peers may
/// close them, and must see that as an error, not die of it.
fn quiet_on_closed_output() {
    let report = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let payload = info.payload();
        let message = payload.downcast_ref::<String>().map(String::as_str).or_else(|| payload.downcast_ref::<&str>().copied()).unwrap_or("");
        if message.starts_with("failed printing to stdout") && message.contains("Broken pipe") {
            std::process::exit(CLOSED_OUTPUT_STATUS);
        }
        report(info)
    }));
}

fn main() -> std::process::ExitCode {
    quiet_on_closed_output();
    if let Err(e) = cpu::check() {
        eprintln!("trajan: {e}");
        return std::process::ExitCode::FAILURE;
    }
    let cli = Cli::parse();
    let result = match cli.command {
        None => demo::run(run::RunArgs::default()),
        Some(Command::Demo(a)) => demo::run(a),
        Some(Command::Run(a)) => run::run(a),
        Some(Command::DefaultConfig) => {
            print!("{}", trajan_router::config::DEFAULT_CONFIG);
            Ok(())
        }
        Some(Command::Put(a)) => trajan_tools::put::run(a),
        Some(Command::Get(a)) => trajan_tools::get::run(a),
        Some(Command::Ping(a)) => trajan_tools::ping::run(a),
        Some(Command::Load(a)) => trajan_tools::load::run(a),
        Some(Command::Gen(a)) => trajan_tools::gen::run(a),
        Some(Command::Route(a)) => trajan_tools::mgmt_cli::run_route(a),
        Some(Command::Face(a)) => trajan_tools::mgmt_cli::run_face(a),
        Some(Command::Strategy(a)) => trajan_tools::strategy_cli::run(a),
        Some(Command::Cs(a)) => trajan_tools::cs_cli::run(a),
        Some(Command::Status(a)) => trajan_tools::mgmt_cli::run_status(a),
        Some(Command::Bench(a)) => trajan_bench::run(a),
    };
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("trajan: {e:#}");
            match e.downcast_ref::<trajan_tools::stop::Interrupted>() {
                Some(i) => std::process::ExitCode::from(i.exit_status()),
                None => std::process::ExitCode::FAILURE,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `--unix ""` turns the Unix socket off, as its help says.
    #[test]
    fn an_empty_unix_path_disables_the_socket() {
        let Some(Command::Run(args)) = Cli::try_parse_from(["trajan", "run", "--unix", ""]).unwrap().command else {
            panic!("not `run`");
        };
        assert_eq!(args.load().unwrap().faces.unix_path.as_os_str(), "");
    }

    /// Help says what an option does, not how the code parses it.
    #[test]
    fn run_help_leaves_out_parsing_notes() {
        use clap::CommandFactory;
        let help = Cli::command().find_subcommand_mut("run").unwrap().render_long_help().to_string();
        assert!(help.contains("\"\" disables it") && !help.contains("clap"), "{help}");
    }
}
