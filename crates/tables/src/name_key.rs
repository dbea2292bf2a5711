//! One keyed hash per name, shared by the exact-match tables (PIT, content store,
//! dead nonce list): the engine hashes each received name once, as it decodes the
//! burst, and every table probes with that value instead of hashing the name again.
//!
//! The hash is ahash over the name's encoded components, seeded at random per
//! [`NameHasher`]. Built with AES-NI (`.cargo/config.toml`), ahash mixes 16 bytes
//! per `aesenc`: an exchange hashes three names (the Interest's, the Data's and
//! its parent's), which took 57 fewer instructions than with foldhash and ran
//! the worst case 1–5 % faster (docs/PERFORMANCE.md). Without AES at compile
//! time ahash falls back to a folded multiply, as foldhash does. A Data's parent
//! prefix (which the content store registers) is hashed in a second pass over
//! the prefix's bytes: feeding the hasher one component at a time would give
//! every prefix's hash from one pass, but costs more than three whole-name
//! hashes for the 4–6 component names of the benchmarks (measured with
//! callgrind: ≈ 330 instructions per name).
//!
//! These tables are filled with names chosen by whoever sends Interests and Data,
//! so unlike the FIB's hardware CRC32C (linear and unkeyed: colliding names are
//! easy to make, but FIB entries come from the operator) this hash is keyed: an
//! attacker cannot aim a flood of names at one bucket.

use ahash::RandomState;
use trajan_wire::Name;

/// The hash function of one forwarder's exact-match tables. Clones hash alike, so
/// the engine and its tables each hold one; two hashers made by [`NameHasher::new`]
/// do not.
#[derive(Clone, Debug, Default)]
pub struct NameHasher(RandomState);

/// The hashes of a received name that the tables need: its own, and its parent's
/// (the name less its last component; the root's for a one-component name, and
/// the root's own for the root).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NameKey {
    /// Hash of the whole name.
    pub full: u64,
    /// Hash of the name's parent prefix.
    pub parent: u64,
}

impl NameHasher {
    /// A hasher with a fresh random seed.
    pub fn new() -> Self {
        NameHasher(RandomState::default())
    }

    /// The hash of the name whose encoded components are `value`, for a
    /// caller that holds a prefix's bytes already (it checks their length).
    #[inline]
    pub(crate) fn encoded(&self, value: &[u8]) -> u64 {
        self.0.hash_one(value)
    }

    /// The hash of `name`'s first `len` components (at most its length).
    #[inline]
    pub fn prefix(&self, name: &Name, len: usize) -> u64 {
        self.encoded(name.prefix_value(len))
    }

    /// The hash of the whole `name`.
    #[inline]
    pub fn full(&self, name: &Name) -> u64 {
        self.encoded(name.value())
    }

    /// `name`'s hash and its parent's. Always inlined (once per Data), as the
    /// profile-guided build does.
    #[inline(always)]
    pub fn key(&self, name: &Name) -> NameKey {
        NameKey { full: self.full(name), parent: self.prefix(name, name.len().saturating_sub(1)) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_util::{arb_name, name};
    use proptest::prelude::*;

    #[test]
    fn key_is_the_name_and_its_parent() {
        let h = NameHasher::new();
        let n = name("/a/b/c");
        assert_eq!(h.key(&n), NameKey { full: h.full(&n), parent: h.full(&name("/a/b")) });
        assert_eq!(h.key(&name("/a")).parent, h.full(&Name::root()));
        let root = h.key(&Name::root());
        assert_eq!(root.full, root.parent);
    }

    #[test]
    fn clones_agree_and_fresh_hashers_differ() {
        let (a, b) = (NameHasher::new(), NameHasher::new());
        let n = name("/x/y");
        assert_eq!(a.full(&n), a.clone().full(&n));
        assert_ne!(a.full(&n), b.full(&n), "each hasher has its own seed");
    }

    #[test]
    fn component_boundaries_matter() {
        let h = NameHasher::new();
        assert_ne!(h.full(&name("/ab/c")), h.full(&name("/a/bc")));
        assert_ne!(h.full(&name("/a")), h.full(&Name::root()));
    }

    proptest! {
        /// A prefix's hash is its own name's, so a table may store a name under
        /// the hash of a longer name's prefix.
        #[test]
        fn prefixes_agree_with_their_own_names(n in arb_name(8)) {
            let h = NameHasher::new();
            for j in 0..=n.len() {
                prop_assert_eq!(h.prefix(&n, j), h.full(&n.prefix(j)));
            }
        }
    }
}
