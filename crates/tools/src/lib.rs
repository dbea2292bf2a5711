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

/// The forwarder's side of a client connection, for unit tests that script one.
#[cfg(test)]
mod test_forwarder {
    use std::io::Read;
    use std::os::unix::net::UnixStream;

    use bytes::BytesMut;
    use trajan_wire::tlv::frame_len;
    use trajan_wire::{Interest, MAX_PACKET_SIZE};

    /// The next Interest the client sent on `s` (`rx` holds what was read past
    /// the last one); panics if the connection ends or its read timeout passes.
    pub fn next_interest(s: &mut UnixStream, rx: &mut BytesMut) -> Interest {
        loop {
            if let Some(n) = frame_len(rx, MAX_PACKET_SIZE).unwrap() {
                return Interest::decode(&rx.split_to(n).freeze()).unwrap();
            }
            let mut b = [0u8; 4096];
            let n = s.read(&mut b).unwrap();
            assert!(n > 0);
            rx.extend_from_slice(&b[..n]);
        }
    }
}
