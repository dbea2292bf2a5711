//! Network Nacks (NDNLPv2 §Nack): an Interest returned downstream with a reason.

use crate::types::LP_NACK_REASON;

/// Why an upstream refused an Interest. Codes are NDNLPv2's; unknown ones are kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NackReason {
    /// The Nack field carried no reason.
    None,
    /// Code 50: the upstream is congested; try another path or slow down.
    Congestion,
    /// Code 100: the upstream already saw this Nonce, so the Interest looped.
    Duplicate,
    /// Code 150: the upstream has no route for the name.
    NoRoute,
    /// A code NDNLPv2 does not define, kept so it can be passed on.
    Other(u64),
}

impl NackReason {
    /// The wire code (0 for [`NackReason::None`]).
    pub fn code(self) -> u64 {
        match self {
            NackReason::None => 0,
            NackReason::Congestion => 50,
            NackReason::Duplicate => 100,
            NackReason::NoRoute => 150,
            NackReason::Other(c) => c,
        }
    }

    /// From a wire code.
    pub fn from_code(c: u64) -> Self {
        match c {
            0 => NackReason::None,
            50 => NackReason::Congestion,
            100 => NackReason::Duplicate,
            150 => NackReason::NoRoute,
            c => NackReason::Other(c),
        }
    }

    /// NFD's severity order, used to pick one reason when every upstream Nacked:
    /// the least severe reason wins (Congestion < Duplicate < NoRoute < others).
    pub fn severity(self) -> u8 {
        match self {
            NackReason::Congestion => 0,
            NackReason::Duplicate => 1,
            NackReason::NoRoute => 2,
            _ => 3,
        }
    }

    /// The Nack header field's TLV-VALUE (a NackReason element, or empty).
    pub fn field_value(self) -> Vec<u8> {
        let mut v = Vec::new();
        if self != NackReason::None {
            crate::tlv::write_nonneg(&mut v, LP_NACK_REASON, self.code());
        }
        v
    }
}

/// A Nack as the engine sees it: the reason plus the Interest it refers to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Nack {
    /// Why the Interest was refused.
    pub reason: NackReason,
    /// The refused Interest, as sent upstream; matched against the PIT.
    pub interest: crate::Interest,
}
