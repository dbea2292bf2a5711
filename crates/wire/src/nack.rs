//! Network Nacks (NDNLPv2 §Nack): an Interest returned downstream with a reason.

use crate::types::LP_NACK_REASON;

/// Why an upstream refused an Interest. Codes are NDNLPv2's; an unknown one
/// reads as [`NackReason::None`], as in NFD.
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
}

impl NackReason {
    /// The wire code (0 for [`NackReason::None`]).
    pub fn code(self) -> u64 {
        match self {
            NackReason::None => 0,
            NackReason::Congestion => 50,
            NackReason::Duplicate => 100,
            NackReason::NoRoute => 150,
        }
    }

    /// From a wire code: a code NDNLPv2 does not define is
    /// [`NackReason::None`], as ndn-cxx's `lp::NackHeader::getReason` reads it
    /// for NFD, so a code no one knows is not passed on.
    pub fn from_code(c: u64) -> Self {
        match c {
            50 => NackReason::Congestion,
            100 => NackReason::Duplicate,
            150 => NackReason::NoRoute,
            _ => NackReason::None,
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The codes NDNLPv2 defines read as themselves; any other, as no
    /// reason (ndn-cxx's `NackHeader::getReason`), never as a code passed on.
    #[test]
    fn an_unknown_code_is_no_reason() {
        for r in [NackReason::Congestion, NackReason::Duplicate, NackReason::NoRoute, NackReason::None] {
            assert_eq!(NackReason::from_code(r.code()), r);
        }
        for c in [1, 49, 51, 101, 151, 200, u64::MAX] {
            assert_eq!(NackReason::from_code(c), NackReason::None, "code {c}");
        }
    }
}
