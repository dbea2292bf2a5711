//! The forwarding engine: plain code that takes bursts of packets and a clock and
//! returns packets to send. It never touches a socket, so the daemon, the in-memory
//! benchmark and the tests all drive the very same pipeline.
//!
//! The pipeline is Augustus' (CS → PIT → FIB for Interests, PIT → CS → fan-out for
//! Data) with NDN's semantics: scope control, Nonce loop detection with a dead-nonce
//! list, CanBePrefix/MustBeFresh, HopLimit, NDNLPv2 Nacks and PIT tokens, and a
//! per-prefix strategy (best-route, multicast, or dynamic multipath).

#![warn(missing_docs)]

pub mod counters;
pub mod faces;
pub mod forwarder;
pub mod fuzzing;
pub mod measurements;
pub mod phases;
pub mod strategy;

pub use counters::{ForwarderCounters, PacketCounters};
pub use faces::{FaceMeta, FaceTable, CONTENT_STORE_FACE};
pub use forwarder::{EngineConfig, Forwarder, Outgoing, MAX_DOWNSTREAMS, MAX_FORWARDING_HINTS};
pub use phases::PhaseNs;
pub use strategy::StrategyKind;
pub use trajan_tables::FaceId;

/// The engine's internal face, where management Interests are delivered (NFD's face 1).
pub const INTERNAL_FACE: FaceId = 1;
