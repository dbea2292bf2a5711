//! Trajan's client tools, as a library the `trajan` binary exposes as subcommands:
//! `put`/`get` (segmented publish and fetch), `ping`, `load` (a bounded
//! consumer–producer pair for throughput runs), `gen` (Augustus' traffic
//! generator and sink, over UDP or DPDK ports), and the management commands
//! `route`, `face`, `strategy`, `cs` and `status`. They speak to any NFD-compatible forwarder (Trajan,
//! NFD, ndnd) over its Unix socket, TCP or UDP, so they double as interoperability
//! probes.

#![warn(missing_docs)]

pub mod client;
pub mod cs_cli;
pub mod gen;
pub mod get;
pub mod load;
pub mod mgmt_cli;
pub mod ping;
pub mod put;
pub mod stop;
pub mod strategy_cli;
pub mod transport;

/// Parsing a tool's arguments in unit tests, without a `clap::Parser` of
/// each tool's own.
#[cfg(test)]
mod test_args {
    use clap::Parser;

    /// Any tool's arguments as a whole command line.
    #[derive(Parser)]
    struct Command<A: clap::Args> {
        #[command(flatten)]
        args: A,
    }

    /// `argv` (program name first) parsed as `A`.
    pub fn parse<A: clap::Args>(argv: &[&str]) -> Result<A, clap::Error> {
        Command::<A>::try_parse_from(argv).map(|c| c.args)
    }
}
