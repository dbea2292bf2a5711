//! Decoding errors. Each variant is a reason a packet is counted and dropped.

use thiserror::Error;

/// Why a buffer could not be decoded. Cheap to construct (no allocation), because
/// a router under attack builds one per hostile packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum WireError {
    /// The buffer ended inside a TLV header or value.
    #[error("truncated TLV")]
    Truncated,
    /// A TLV-TYPE or TLV-LENGTH used a non-minimal or reserved VAR-NUMBER form.
    #[error("malformed VAR-NUMBER")]
    BadVarNumber,
    /// A TLV-LENGTH exceeds what Trajan accepts for that element.
    #[error("element too large")]
    TooLarge,
    /// The outer element was not of the expected type.
    #[error("unexpected TLV-TYPE {got}, expected {expected}")]
    UnexpectedType {
        /// The TLV-TYPE the decoder required here.
        expected: u32,
        /// The TLV-TYPE the buffer held.
        got: u32,
    },
    /// A required element was absent.
    #[error("missing required element {0}")]
    Missing(u32),
    /// An element the spec marks critical (type < 32 or odd) appeared where it is not known.
    #[error("unrecognized critical element {0}")]
    UnknownCritical(u32),
    /// An element appeared out of the order the spec requires, or twice.
    #[error("element {0} out of order or repeated")]
    OutOfOrder(u32),
    /// A NonNegativeInteger was not 1, 2, 4 or 8 bytes long.
    #[error("bad NonNegativeInteger")]
    BadInteger,
    /// A field held a value outside its allowed range (e.g. a Nonce not 4 bytes).
    #[error("invalid value in element {0}")]
    BadValue(u32),
    /// Bytes were left over after the outermost element.
    #[error("trailing bytes after packet")]
    Trailing,
    /// A name URI could not be parsed, and what in it was wrong: a user
    /// typing a name needs to know which rule it broke.
    #[error("bad name URI: {0}")]
    BadUri(&'static str),
}
