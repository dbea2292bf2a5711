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

#![warn(missing_docs)]

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
    EalInit {
        /// The EAL command line built from the configuration (`dpdk.eal_args` and more).
        args: Vec<String>,
        /// DPDK's text for its error number.
        reason: String,
        /// What the operator most likely has to change (hugepages, privileges, arguments).
        hint: &'static str,
    },
    /// EAL can be started only once per process.
    #[error("DPDK's EAL is already initialised in this process")]
    AlreadyInitialised,
    /// No ethdev port has the configured name (a PCI address or a `--vdev` device).
    #[error("no DPDK port named `{0}` (give it to EAL with --vdev, or check the PCI address and the driver binding)")]
    NoSuchPort(String),
    /// The packet-buffer pool could not be created, usually for want of memory.
    #[error("cannot create mempool `{name}` of {mbufs} mbufs: {reason} (lower dpdk.mbufs or give EAL more memory with -m)")]
    Mempool {
        /// The pool's name.
        name: String,
        /// How many buffers were asked for (`dpdk.mbufs`).
        mbufs: u32,
        /// DPDK's text for its error number.
        reason: String,
    },
    /// A port could not be configured, started, restarted or queried.
    #[error("cannot start port {port}: {step}: {reason}")]
    Port {
        /// The port's id.
        port: u16,
        /// The DPDK call or setup step that failed.
        step: String,
        /// DPDK's text for its error number.
        reason: String,
    },
    /// The back-to-back ring ports used by tests and benchmarks could not be created.
    #[error("cannot create ring pair `{name}`: {reason}")]
    RingPair {
        /// The name the two ports were to be derived from.
        name: String,
        /// DPDK's text for its error number.
        reason: String,
    },
    /// A name handed to DPDK (an EAL argument, a port, pool or ring name) contains a
    /// NUL byte, which a C string cannot carry.
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
