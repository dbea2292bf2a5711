//! Trajan's kernel-bypass data path over DPDK (the system's `libdpdk`, 22.11).
//!
//! Augustus moves packets with DPDK because a kernel socket costs microseconds per
//! datagram, far above a forwarder's per-packet budget. This crate keeps every
//! `unsafe` call into DPDK behind a small safe API:
//!
//! - [`Eal`]: the Environment Abstraction Layer, started once per process from
//!   Trajan's configuration ([`EalConfig`]), falling back to `--no-huge` when the
//!   machine has no free hugepages, with a clear error when DPDK cannot start.
//! - [`Mempool`]: a packet-buffer pool sized from the configuration.
//! - [`Port`] and [`Queue`]: an ethdev port (a NIC's PMD or a virtual device such
//!   as `net_ring`, `net_null`, `net_memif`, `net_af_xdp`, `net_af_packet`) with one
//!   RX/TX queue pair per forwarding worker; bursts in and out.
//! - [`Mbuf`]: one received frame, owned; [`Mbuf::into_bytes`] makes it a
//!   [`bytes::Bytes`] without copying, so the engine parses a Data's mbuf's own
//!   bytes and the content store keeps a reference to the mbuf rather than a copy
//!   (other packets are copied out: [`face::Face::recv`]).
//! - [`face::Face`]: a queue plus a link encapsulation (`trajan_io::encap`): frames
//!   in, NDN packets out, and back.

mod eal;
pub mod face;
mod ffi;
mod mbuf;
mod port;

pub use eal::{Eal, EalConfig};
pub use mbuf::{flush_lagged_frees, Mbuf, Mempool, FREE_LAG, DATA_ROOM};
pub use port::{Port, PortStats, Queue, BURST};

/// Why DPDK could not do what was asked.
#[derive(Debug, thiserror::Error)]
pub enum DpdkError {
    /// `rte_eal_init` failed; the message says what to check.
    #[error("DPDK could not start (rte_eal_init with {args:?}): {reason}. {hint}")]
    EalInit { args: Vec<String>, reason: String, hint: &'static str },
    /// EAL can be started only once per process.
    #[error("DPDK's EAL is already initialised in this process")]
    AlreadyInitialised,
    #[error("no DPDK port named `{0}` (give it to EAL with --vdev, or check the PCI address and the driver binding)")]
    NoSuchPort(String),
    #[error("cannot create mempool `{name}` of {mbufs} mbufs: {reason} (lower dpdk.mbufs or give EAL more memory with -m)")]
    Mempool { name: String, mbufs: u32, reason: String },
    #[error("cannot start port {port}: {step}: {reason}")]
    Port { port: u16, step: String, reason: String },
    #[error("cannot create ring pair `{name}`: {reason}")]
    RingPair { name: String, reason: String },
    #[error("name `{0}` contains a NUL byte")]
    BadName(String),
}

/// Registers the calling thread with the running EAL (callers hold an [`Eal`] or
/// a [`Queue`], which prove it runs). Harmless to call twice.
fn register_thread() {
    // SAFETY: rte_thread_register only touches the calling thread's EAL state.
    if unsafe { ffi::rte_thread_register() } < 0 {
        tracing::warn!("rte_thread_register failed: mempool access from this thread is uncached");
    }
}

/// DPDK's text for an error number (positive or negative).
fn strerror(code: i32) -> String {
    // SAFETY: rte_strerror returns a pointer to a static or thread-local string for
    // any error number; it is copied out at once.
    unsafe { std::ffi::CStr::from_ptr(ffi::rte_strerror(code.abs())) }.to_string_lossy().into_owned()
}

/// `s` as a C string, or the error naming it.
fn cstring(s: &str) -> Result<std::ffi::CString, DpdkError> {
    std::ffi::CString::new(s).map_err(|_| DpdkError::BadName(s.to_owned()))
}
