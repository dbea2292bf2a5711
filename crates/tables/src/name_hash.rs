//! Per-prefix hashes of a name in one pass: Caesar's O(k + d) scheme (§3.3).
//!
//! Longest-prefix match over a d-component name needs k hash values for every prefix
//! length, k·d in all. Computing each from scratch would be O(k·d) work over the
//! name's bytes. Instead, the first hash function h₁ is a hardware CRC32C extended one
//! component at a time, so h₁ of every prefix p₁ … p_d comes out of a single pass
//! over the name (d seed values); the other k − 1 functions are computed from scratch
//! only on the first component p₁ (k − 1 more seeds), and every other value is
//! derived by XOR:
//!
//! ```text
//! H(i, j) = h_i(p_j)           if i = 1 or j = 1
//!         = H(i, 1) ⊕ H(1, j)   otherwise
//! ```
//!
//! That is k + d − 1 seed hashes and (k − 1)(d − 1) XORs. The FIB's Bloom filter,
//! block choice and hash table all read from one [`NameHashes`], and the engine can
//! compute it once per Interest and reuse it.
//!
//! XOR with a per-first-component constant is linear, so two values derived from the
//! same seeds differ by a fixed mask; consumers therefore pass every value through
//! [`mix`] (a bijective avalanche finaliser, different salt per use) before reducing
//! it to a range, which keeps a block's k bit positions and its choice of block
//! independent of each other.

use smallvec::SmallVec;
use trajan_wire::tlv::read_header;
use trajan_wire::Name;

/// Hash functions per prefix (Caesar's k). The paper settled on 2: every further
/// seed costs a CRC pass over the first component for little false-positive gain.
pub const K: usize = 2;

/// CRC32C initial values of h₁ … h_k. Arbitrary distinct odd constants.
const SEEDS: [u32; K] = [0x9e37_79b9, 0x7f4a_7c15];

/// The hashes of every prefix of one name, up to a bound.
#[derive(Clone, Debug, Default)]
pub struct NameHashes {
    /// `h1[j - 1]` = h₁(p_j): CRC32C of the encoded first j components.
    h1: SmallVec<[u32; 16]>,
    /// `first[i]` = h_{i+1}(p₁), the seeds of the other functions.
    first: [u32; K],
}

impl NameHashes {
    /// Hashes the prefixes p₁ … p_n of `name`, n = min(len, `max_components`). A
    /// caller that knows the FIB's longest prefix passes it as the bound, so a
    /// long name from the network costs no more than the longest useful prefix.
    pub fn new(name: &Name, max_components: usize) -> Self {
        let n = name.len().min(max_components);
        Self::from_ends(name.value(), (0..n).map(|i| name.component_end(i)))
    }

    /// Same as [`NameHashes::new`] over the encoded components (a Name's TLV-VALUE)
    /// of a prefix stored out of line. Stops at the first malformed component, which
    /// cannot occur for bytes that came from a [`Name`].
    pub fn from_encoded(value: &[u8]) -> Self {
        let mut pos = 0;
        let ends = std::iter::from_fn(|| {
            if pos >= value.len() {
                return None;
            }
            read_header(value, &mut pos).ok().map(|(_, _, end)| end)
        });
        Self::from_ends(value, ends)
    }

    fn from_ends(value: &[u8], ends: impl Iterator<Item = usize>) -> Self {
        let mut h1 = SmallVec::new();
        let mut first = [0; K];
        let mut crc = SEEDS[0];
        let mut start = 0;
        for end in ends {
            let comp = &value[start..end];
            crc = crc32c::crc32c_append(crc, comp);
            if start == 0 {
                for (f, seed) in first.iter_mut().zip(SEEDS).skip(1) {
                    *f = crc32c::crc32c_append(seed, comp);
                }
                first[0] = crc;
            }
            h1.push(crc);
            start = end;
        }
        NameHashes { h1, first }
    }

    /// How many prefixes were hashed.
    #[inline]
    pub fn len(&self) -> usize {
        self.h1.len()
    }

    /// True when no prefix was hashed (the root name, or a zero bound).
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.h1.is_empty()
    }

    /// h₁(p_j), 1 ≤ j ≤ len: the value that keys the hash table and picks PBF blocks.
    #[inline]
    pub fn prefix(&self, j: usize) -> u32 {
        self.h1[j - 1]
    }

    /// H(i, j) for hash function `i` (0-based, < [`K`]) and prefix length j ≥ 1.
    #[inline]
    pub fn get(&self, i: usize, j: usize) -> u32 {
        match (i, j) {
            (0, _) => self.h1[j - 1],
            (_, 1) => self.first[i],
            _ => self.first[i] ^ self.h1[j - 1],
        }
    }
}

/// A bijective 32-bit avalanche finaliser (MurmurHash3's fmix32) over `h ⊕ salt`.
/// Each consumer of [`NameHashes`] uses its own salt, so that block choice, bit
/// positions and bucket choice are independent functions of the same hash.
#[inline]
pub fn mix(h: u32, salt: u32) -> u32 {
    let mut x = h ^ salt;
    x ^= x >> 16;
    x = x.wrapping_mul(0x85eb_ca6b);
    x ^= x >> 13;
    x = x.wrapping_mul(0xc2b2_ae35);
    x ^ (x >> 16)
}

/// Maps a uniform 32-bit value to `0..n` with a multiply and a shift (Lemire's
/// fast range reduction), which uses the value's high bits and needs no division.
#[inline]
pub fn reduce(x: u32, n: usize) -> usize {
    ((x as u64 * n as u64) >> 32) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(s: &str) -> Name {
        s.parse().unwrap()
    }

    #[test]
    fn every_prefix_hash_equals_a_from_scratch_crc_and_xor_derivation() {
        let name = n("/com/example/www/a%00b/9=x");
        let h = NameHashes::new(&name, usize::MAX);
        assert_eq!(h.len(), 5);
        for j in 1..=5 {
            let p = name.prefix_value(j);
            assert_eq!(h.prefix(j), crc32c::crc32c_append(SEEDS[0], p));
            assert_eq!(h.get(0, j), h.prefix(j));
            let h2_p1 = crc32c::crc32c_append(SEEDS[1], name.prefix_value(1));
            let want = if j == 1 { h2_p1 } else { h2_p1 ^ h.prefix(j) };
            assert_eq!(h.get(1, j), want);
        }
    }

    #[test]
    fn bound_limits_work_and_encoded_form_agrees() {
        let name = n("/a/b/c/d");
        let short = NameHashes::new(&name, 2);
        assert_eq!(short.len(), 2);
        let full = NameHashes::new(&name, 10);
        assert_eq!(short.prefix(2), full.prefix(2));
        let enc = NameHashes::from_encoded(name.value());
        assert_eq!(enc.len(), 4);
        for j in 1..=4 {
            for i in 0..K {
                assert_eq!(enc.get(i, j), full.get(i, j));
            }
        }
        assert!(NameHashes::new(&Name::root(), 10).is_empty());
    }

    #[test]
    fn hashes_depend_on_component_boundaries_and_types() {
        let a = NameHashes::new(&n("/ab"), 4);
        let b = NameHashes::new(&n("/a/b"), 4);
        let c = NameHashes::new(&n("/9=ab"), 4);
        assert_ne!(a.prefix(1), b.prefix(2));
        assert_ne!(a.prefix(1), c.prefix(1));
    }

    #[test]
    fn reduce_stays_in_range_and_mix_is_bijective_on_a_sample() {
        for x in [0u32, 1, 0x8000_0000, u32::MAX] {
            assert!(reduce(x, 7) < 7);
        }
        assert_eq!(reduce(u32::MAX, 1000), 999);
        let mut seen: Vec<u32> = (0..10_000).map(|x| mix(x, 5)).collect();
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(seen.len(), 10_000);
    }
}
