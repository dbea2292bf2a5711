//! Trajan's forwarding tables: the FIB (longest-prefix match), the PIT and the
//! content store (sharing one index, [`Pcct`]), the dead nonce list, and the timer
//! wheel that expires entries.
//!
//! The tables are sans-I/O: they never read a clock. Every time is a `u64` count of
//! milliseconds on a monotonic clock the caller supplies, so the engine stays
//! deterministic and testable. Every table is bounded (PIT, CS and dead nonce list
//! by capacity; the timer wheel holds only what the PIT or RIB put in it), because
//! the names in them come from the network. Lookups are hash probes with a fast
//! seeded hasher (ahash for names, foldhash elsewhere), never list scans, and
//! nothing runs periodic sweeps.

#![warn(missing_docs)]

mod ilist;
mod line_index;
mod parents;
mod prefix_walk;
mod slab;
mod ways;

pub mod cs;
pub mod dead_nonce;
pub mod fib;
pub mod huge;
pub mod lpm;
pub mod name_hash;
pub mod name_key;
pub mod pcct;
pub mod pit;
pub mod timer_wheel;

pub use cs::{Ahead, Cs, CsKey};
pub use dead_nonce::DeadNonceList;
pub use fib::{Fib, FibEntry, FibPrefix, FibReader, FibSource, FibVariant, FibWriter, NextHop};
pub use lpm::LpmTable;
pub use name_key::{NameHasher, NameKey};
pub use pcct::{Pcct, Probe};
pub use pit::{InRecord, InRecordRefused, OutRecord, Pit, PitEntry, PitFull, PitId, IN_RECORDS_INLINE, MAX_IN_RECORDS};
pub use timer_wheel::{TimerId, TimerWheel};

/// Identifies a face (a link to a neighbour or an application). Faces are numbered
/// by the engine's face table; the tables only store and compare them.
pub type FaceId = u32;

#[cfg(test)]
pub(crate) mod test_util {
    use trajan_wire::data::DataBuilder;
    use trajan_wire::{Data, Interest, Name};

    /// The name `uri`, which a test writes correctly.
    pub fn name(uri: &str) -> Name {
        uri.parse().expect("test name")
    }

    /// A Data packet named `uri` with the given FreshnessPeriod and content.
    pub fn data(uri: &str, freshness_ms: Option<u64>, content: &[u8]) -> Data {
        let mut b = DataBuilder::new(name(uri));
        if let Some(f) = freshness_ms {
            b = b.freshness_ms(f);
        }
        Data::decode(&b.build(content)).expect("built Data decodes")
    }

    /// ndn-cxx's `Interest::matchesData` but for MustBeFresh, which the PIT
    /// (a Data without a FreshnessPeriod satisfies no MustBeFresh entry) and
    /// the CS (freshness runs out) each check their own way: the reference
    /// their property tests compare against.
    pub fn matches_data(i: &Interest, d: &Data) -> bool {
        if i.name.len() == d.name().len() + 1 && i.name.implicit_digest().is_some() {
            return i.name == d.full_name();
        }
        if i.can_be_prefix {
            i.name.is_prefix_of(d.name())
        } else {
            i.name == *d.name()
        }
    }

    /// Names over a tiny alphabet, so that prefixes are often shared.
    pub fn arb_name(max_len: usize) -> impl proptest::strategy::Strategy<Value = Name> {
        use proptest::prelude::*;
        proptest::collection::vec(prop_oneof![Just("a"), Just("b"), Just("ab")], 0..max_len)
            .prop_map(|cs| Name::from_components(cs.into_iter().map(|c| (8u32, c.as_bytes()))))
    }

    /// An Interest for `n` with the given selectors.
    pub fn interest(n: &Name, can_be_prefix: bool, must_be_fresh: bool) -> Interest {
        Interest { can_be_prefix, must_be_fresh, ..Interest::new(n.clone()) }
    }
}
