//! The Trajan daemon: configuration, logging, the I/O loop around the engine, and
//! the NFD management protocol, so that unmodified NDN applications and NFD's own
//! tooling conventions work against Trajan.

#![warn(missing_docs)]

pub mod config;
pub mod daemon;
pub mod dispatch;
#[cfg(feature = "dpdk")]
pub mod dpdk;
pub mod fuzzing;
pub mod logging;
pub mod mgmt;
pub mod node_fibs;
pub mod reload;
pub mod rib;
pub mod topology;
pub mod workers;

pub use config::{Config, ConfigError};
pub use daemon::{reload_on_hangup, stop_on_signals, Daemon, StartError};
