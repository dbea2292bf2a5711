//! Trajan's wire layer: zero-copy views over received buffers and encoders for
//! every packet format the router speaks.
//!
//! Everything here is pure and allocation-bounded: decoders take a [`bytes::Bytes`]
//! (a cheap, reference-counted slice of a receive buffer) and never copy the payload,
//! and they reject rather than panic on any malformed input, because every byte that
//! reaches them came from the network.

#![warn(missing_docs)]

pub mod error;
pub mod tlv;
pub mod types;
pub mod name;
pub mod interest;
pub mod data;
pub mod lp;
pub mod nack;
pub mod augustus;
pub mod fuzzing;
pub mod mgmt;
pub mod signed;

pub use error::WireError;
pub use name::{Component, Name};
pub use interest::Interest;
pub use data::Data;
pub use lp::LpPacket;
pub use nack::{Nack, NackReason};

/// The largest NDN packet Trajan accepts or produces, as in NFD (`MAX_NDN_PACKET_SIZE`).
/// Bounding every packet keeps stream reassembly and receive buffers finite.
pub const MAX_PACKET_SIZE: usize = 8800;
