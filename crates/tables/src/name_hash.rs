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
//!
//! Each component enters the CRC zero-padded to whole [`BLOCK`]s of 16 bytes (its
//! TLV header, which the hashed bytes include, fixes its length, so padding never
//! makes two names alike). Most components fit one block, which the CRC
//! instruction takes as two 8-byte words read at once, masked to the component:
//! the same steps whatever the component's length. Hashing the exact bytes took a
//! loop over 8-byte words and a 4-, 2- and 1-byte tail, branches that follow the
//! length of each component and so were mispredicted about four times per name.

use std::ops::Range;

use trajan_wire::tlv::read_header;
use trajan_wire::Name;

/// Hash functions per prefix (Caesar's k). The paper settled on 2: every further
/// seed costs a CRC pass over the first component for little false-positive gain.
pub const K: usize = 2;

/// CRC32C initial values of h₁ … h_k. Arbitrary distinct odd constants.
const SEEDS: [u32; K] = [0x9e37_79b9, 0x7f4a_7c15];

/// Bytes a component is zero-padded to a multiple of (at least one block)
/// before it is hashed; see the module documentation.
pub const BLOCK: usize = 16;

/// Prefix hashes a [`NameHashes`] holds without a heap allocation.
pub const INLINE_PREFIXES: usize = 48;

/// The hashes of every prefix of one name, up to a bound.
#[derive(Clone, Debug, Default)]
pub struct NameHashes {
    /// `h1[j - 1]` = h₁(p_j): CRC32C of the encoded first j components (each
    /// padded to whole [`BLOCK`]s). Inline up
    /// to [`INLINE_PREFIXES`] so that forwarding allocates nothing per packet: real
    /// host names reach 34 components (Umbrella top 100k), and the count is bounded
    /// by the FIB's longest prefix, not by the name.
    h1: PrefixValues,
    /// `first[i]` = h_{i+1}(p₁), the seeds of the other functions.
    first: [u32; K],
}

/// A name's h₁ values, in prefix order: the first [`INLINE_PREFIXES`] in an
/// array, any more in a vector (a rare name that long allocates once). An
/// array and a count, not a `SmallVec`, whose every push and read first tests
/// whether it spilled (≈ 7 instructions per component, docs/PERFORMANCE.md).
#[derive(Clone, Debug)]
struct PrefixValues {
    inline: [u32; INLINE_PREFIXES],
    more: Vec<u32>,
    len: usize,
}

impl Default for PrefixValues {
    fn default() -> Self {
        PrefixValues { inline: [0; INLINE_PREFIXES], more: Vec::new(), len: 0 }
    }
}

impl PrefixValues {
    #[inline]
    fn clear(&mut self) {
        self.len = 0;
        self.more.clear();
    }

    #[inline]
    fn push(&mut self, h: u32) {
        match self.inline.get_mut(self.len) {
            Some(slot) => *slot = h,
            None => self.more.push(h),
        }
        self.len += 1;
    }

    /// The `k`th value (0-based), `k` below the count. (Checked in debug
    /// builds only: past the count it is a stale value, never memory beyond
    /// the arrays; a lookup compares the prefix bytes a hash leads to anyway.)
    #[inline]
    fn get(&self, k: usize) -> u32 {
        debug_assert!(k < self.len, "prefix hash {k} of {}", self.len);
        match self.inline.get(k) {
            Some(&h) => h,
            None => self.more[k - INLINE_PREFIXES],
        }
    }

    /// The values, for tests.
    #[cfg(test)]
    fn to_vec(&self) -> Vec<u32> {
        (0..self.len).map(|k| self.get(k)).collect()
    }
}

impl NameHashes {
    /// Hashes the prefixes p₁ … p_n of `name`, n = min(len, `max_components`). A
    /// caller that knows the FIB's longest prefix passes it as the bound, so a
    /// long name from the network costs no more than the longest useful prefix.
    pub fn new(name: &Name, max_components: usize) -> Self {
        Self::new_with(name, max_components, |_| {})
    }

    /// [`NameHashes::new`], calling `first(h₁(p₁))` as soon as the first
    /// component is hashed, before the rest of the name: a lookup whose first
    /// memory access depends on the first component alone (the prefix Bloom
    /// filter's block) can start loading it there, so the miss overlaps the
    /// hashing of the other components instead of following it.
    #[inline]
    pub fn new_with(name: &Name, max_components: usize, first: impl FnOnce(u32)) -> Self {
        let mut h = NameHashes::default();
        h.fill_with(name, max_components, first);
        h
    }

    /// [`NameHashes::new`] into `self`, reusing its storage: a burst of lookups
    /// rehashes its in-flight slots in place rather than building and moving a
    /// new value (a few hundred bytes) per name.
    #[inline]
    pub fn fill(&mut self, name: &Name, max_components: usize) {
        self.fill_with(name, max_components, |_| {});
    }

    #[inline]
    fn fill_with(&mut self, name: &Name, max_components: usize, first: impl FnOnce(u32)) {
        self.fill_from_ends(name.value(), name.prefix_ends(max_components), first);
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
        let mut h = NameHashes::default();
        h.fill_from_ends(value, ends, |_| {});
        h
    }

    #[inline]
    fn fill_from_ends(&mut self, value: &[u8], ends: impl Iterator<Item = usize>, on_first: impl FnOnce(u32)) {
        #[cfg(target_arch = "x86_64")]
        if let Some(hw) = sse42::Crc::detect() {
            return hw.hash_components(self, value, ends, on_first);
        }
        self.hash_components(value, ends, Portable, on_first)
    }

    /// The O(k + d) pass with `step` as h₁'s incremental CRC32C. Always inlined,
    /// like the hardware step, so that in [`sse42::Crc::hash_components`] the CRC
    /// instructions are inlined into the loop rather than called once per
    /// component. (Hence a plain loop: a generic helper such as
    /// `SmallVec::extend` is compiled without SSE4.2 and would call the step out
    /// of line.)
    #[inline(always)]
    fn hash_components(&mut self, value: &[u8], mut ends: impl Iterator<Item = usize>, step: impl Step, on_first: impl FnOnce(u32)) {
        self.h1.clear();
        let Some(end1) = ends.next() else {
            self.first = [0; K];
            return;
        };
        // The first component goes through every seed at once: each of its
        // blocks is loaded and masked once for the K CRCs.
        self.first = step.append(SEEDS, value, 0..end1);
        on_first(self.first[0]);
        // A plain loop of pushes into storage that is inline up to
        // [`INLINE_PREFIXES`] (the rare longer name spills to the heap once).
        let (mut crc, mut start) = (self.first[0], end1);
        self.h1.push(crc);
        for end in ends {
            [crc] = step.append([crc], value, start..end);
            self.h1.push(crc);
            start = end;
        }
    }

    /// How many prefixes were hashed.
    #[inline]
    pub fn len(&self) -> usize {
        self.h1.len
    }

    /// True when no prefix was hashed (the root name, or a zero bound).
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.h1.len == 0
    }

    /// h₁(p_j), 1 ≤ j ≤ len: the value that keys the hash table and picks PBF blocks.
    #[inline]
    pub fn prefix(&self, j: usize) -> u32 {
        self.h1.get(j - 1)
    }

    /// H(i, j) for hash function `i` (0-based, < [`K`]) and prefix length j ≥ 1.
    #[inline]
    pub fn get(&self, i: usize, j: usize) -> u32 {
        match (i, j) {
            (0, _) => self.h1.get(j - 1),
            (_, 1) => self.first[i],
            _ => self.first[i] ^ self.h1.get(j - 1),
        }
    }
}

/// h₁'s step over one component: a way to compute it.
trait Step: Copy {
    /// The CRC32C of each of `crcs` (finished: pre- and post-inverted, as
    /// `crc32c::crc32c_append`) continued over the component `value[component]`
    /// and the zeros that pad it to whole [`BLOCK`]s (at least one). Several
    /// CRCs at once share the component's bytes: the first component is
    /// hashed under every seed.
    fn append<const N: usize>(self, crcs: [u32; N], value: &[u8], component: Range<usize>) -> [u32; N];
}

/// The step with the `crc32c` crate, on any CPU: the definition the
/// hardware step is tested against.
#[derive(Clone, Copy)]
struct Portable;

impl Step for Portable {
    fn append<const N: usize>(self, crcs: [u32; N], value: &[u8], component: Range<usize>) -> [u32; N] {
        let len = component.len();
        let pad = len.max(1).next_multiple_of(BLOCK) - len;
        crcs.map(|crc| crc32c::crc32c_append(crc32c::crc32c_append(crc, &value[component.clone()]), &[0; BLOCK][..pad]))
    }
}

/// The next block of the component ending at `end` that starts at `at` of
/// `value` (`at <= end <= value.len()`): its up to [`BLOCK`] bytes from `at`, as
/// two little-endian words, zero above them. One 16-byte load and two masks: no
/// branch on the component's length. A block that would run past the end of
/// `value` is the last 16 bytes of `value` shifted down; only a name shorter
/// than a block is copied out.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
#[inline(always)]
fn block(value: &[u8], at: usize, end: usize) -> [u64; 2] {
    let load = |from: usize| u128::from_le_bytes(*value[from..].first_chunk::<BLOCK>().expect("a block lies inside `value`"));
    let bytes = match value.len().checked_sub(BLOCK) {
        Some(last) if at <= last => load(at),
        // `at - last` is 1 to 16, 16 only for an empty component at the very
        // end (then masked off entirely).
        Some(last) => load(last).checked_shr(8 * (at - last) as u32).unwrap_or(0),
        None => {
            let mut b = [0; BLOCK];
            b[..value.len() - at].copy_from_slice(&value[at..]);
            u128::from_le_bytes(b)
        }
    };
    // The block's bytes of the component, under a mask of its low `n` bytes
    // loaded from a table rather than computed with shifts and compares.
    let n = (end - at).min(BLOCK);
    let mask = u128::from_le_bytes(*LOW_BYTES[BLOCK - n..].first_chunk::<BLOCK>().expect("n is at most a block"));
    let v = bytes & mask;
    [v as u64, (v >> 64) as u64]
}

/// A block of ones then a block of zeros: the [`BLOCK`] bytes from `BLOCK - n`
/// are a mask of the low `n` bytes of a block, read little-endian.
static LOW_BYTES: [u8; 2 * BLOCK] = {
    let mut m = [0; 2 * BLOCK];
    let mut i = 0;
    while i < BLOCK {
        m[i] = 0xff;
        i += 1;
    }
    m
};

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

/// CRC32C with the SSE4.2 `crc32` instruction, inline in the hashing loop.
///
/// The `crc32c` crate's entry point is built for long buffers (three interleaved
/// streams, a runtime feature check per call) and is not inlined; name components
/// are a few bytes each, so a call per component costs more than the CRC itself
/// (15–20 % of a lookup in a profile). Here each 16-byte block of a padded
/// component goes through two 8-byte `crc32` instructions; the result equals
/// [`Portable`]'s, the `crc32c` crate over the padded bytes (tested below).
#[cfg(target_arch = "x86_64")]
mod sse42 {
    use std::arch::x86_64::_mm_crc32_u64;
    use std::ops::Range;

    use super::{block, NameHashes, Step, BLOCK};

    /// Proof that the CPU has SSE4.2: only [`Crc::detect`] makes one.
    #[derive(Clone, Copy)]
    pub(super) struct Crc(());

    impl Crc {
        /// `Some` when the CPU running this has SSE4.2 (std caches the answer).
        #[inline]
        pub(super) fn detect() -> Option<Crc> {
            std::arch::is_x86_feature_detected!("sse4.2").then_some(Crc(()))
        }

        /// [`NameHashes::hash_components`] with the CRC instruction.
        #[inline]
        pub(super) fn hash_components(self, out: &mut NameHashes, value: &[u8], ends: impl Iterator<Item = usize>, on_first: impl FnOnce(u32)) {
            // SAFETY: `self` exists only if `detect` found SSE4.2 on this CPU, the
            // one requirement of `hash_components_sse42`.
            unsafe { hash_components_sse42(self, out, value, ends, on_first) }
        }
    }

    /// # Safety
    /// The CPU must support SSE4.2.
    #[target_feature(enable = "sse4.2")]
    unsafe fn hash_components_sse42(crc: Crc, out: &mut NameHashes, value: &[u8], ends: impl Iterator<Item = usize>, on_first: impl FnOnce(u32)) {
        out.hash_components(value, ends, crc, on_first)
    }

    /// The step with the CRC instruction, each block two `crc32` of 8 bytes.
    /// Always inlined into `hash_components_sse42`, the per-component loop:
    /// the step has no `target_feature` of its own (a function with one is not
    /// inlined there, and was called per component); `Crc` is its proof.
    impl Step for Crc {
        #[inline(always)]
        // The intrinsic needs `unsafe` under the workspace's minimum Rust (1.85);
        // from 1.87 on, a build whose target enables SSE4.2 (x86-64-v3, the
        // default) may call it without, hence the allow.
        #[allow(unused_unsafe)]
        fn append<const N: usize>(self, crcs: [u32; N], value: &[u8], component: Range<usize>) -> [u32; N] {
            let mut states = crcs.map(|crc| u64::from(!crc));
            let mut at = component.start;
            loop {
                let [lo, hi] = block(value, at, component.end);
                for state in &mut states {
                    // SAFETY: `self` exists only if `detect` found SSE4.2 on this CPU.
                    *state = unsafe { _mm_crc32_u64(_mm_crc32_u64(*state, lo), hi) };
                }
                at += BLOCK;
                if at >= component.end {
                    return states.map(|state| !(state as u32));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(s: &str) -> Name {
        s.parse().unwrap()
    }

    /// h_seed of the first `j` components of `name`, from the definition: the
    /// CRC32C of each component's encoding followed by the zeros that pad it to
    /// whole blocks (at least one).
    fn from_definition(seed: u32, name: &Name, j: usize) -> u32 {
        (0..j).fold(seed, |crc, k| {
            let mut padded = name.component_wire(k).to_vec();
            padded.resize(padded.len().max(1).next_multiple_of(BLOCK), 0);
            crc32c::crc32c_append(crc, &padded)
        })
    }

    #[test]
    fn fill_in_place_equals_new() {
        let mut h = NameHashes::new(&n("/a/b/c/d/e/f/g/h"), usize::MAX);
        for (uri, bound) in [("/x/y", 10), ("/", 10), ("/p/q/r", 2), ("/com/example/www", usize::MAX)] {
            h.fill(&n(uri), bound);
            let fresh = NameHashes::new(&n(uri), bound);
            assert_eq!((h.h1.to_vec(), h.first), (fresh.h1.to_vec(), fresh.first), "{uri} bounded at {bound}");
        }
    }

    #[test]
    fn every_prefix_hash_equals_a_from_scratch_crc_and_xor_derivation() {
        let name = n("/com/example/www/a%00b/9=x");
        let h = NameHashes::new(&name, usize::MAX);
        assert_eq!(h.len(), 5);
        for j in 1..=5 {
            assert_eq!(h.prefix(j), from_definition(SEEDS[0], &name, j));
            assert_eq!(h.get(0, j), h.prefix(j));
            let h2_p1 = from_definition(SEEDS[1], &name, 1);
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
    fn names_longer_than_the_inline_storage_keep_every_prefix_hash() {
        let comps: Vec<String> = (0..INLINE_PREFIXES + 5).map(|i| format!("c{i}")).collect();
        let name = Name::from_components(comps.iter().map(|c| (8u32, c.as_bytes())));
        let mut early = Vec::new();
        let h = NameHashes::new_with(&name, usize::MAX, |h1| early.push(h1));
        assert_eq!(h.len(), INLINE_PREFIXES + 5);
        assert_eq!(early, [h.prefix(1)], "the first component's hash, once");
        let enc = NameHashes::from_encoded(name.value());
        for j in 1..=h.len() {
            assert_eq!(h.prefix(j), from_definition(SEEDS[0], &name, j), "prefix {j}");
            assert_eq!(enc.prefix(j), h.prefix(j));
        }
        let mut none = 0;
        assert!(NameHashes::new_with(&Name::root(), 10, |_| none += 1).is_empty());
        assert_eq!(none, 0);
    }

    #[test]
    fn hashes_depend_on_component_boundaries_and_types() {
        let a = NameHashes::new(&n("/ab"), 4);
        let b = NameHashes::new(&n("/a/b"), 4);
        let c = NameHashes::new(&n("/9=ab"), 4);
        assert_ne!(a.prefix(1), b.prefix(2));
        assert_ne!(a.prefix(1), c.prefix(1));
        // Padding cannot make a component equal to a longer one ending in zeros:
        // the length in its header differs.
        let zeros = NameHashes::new(&n("/a%00%00"), 4);
        let short = NameHashes::new(&n("/a"), 4);
        assert_ne!(zeros.prefix(1), short.prefix(1));
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

    /// The 16-byte load with its shift and mask reads exactly the component's
    /// bytes wherever it lies: far from the end of the name, within a block of
    /// it, and in a name shorter than a block.
    #[test]
    fn a_block_is_the_bytes_of_the_component_zero_above() {
        let data: Vec<u8> = (1..=40u8).collect();
        for len in [0, 1, 5, 15, 16, 17, 40] {
            let value = &data[..len];
            for at in 0..=len {
                for end in at..=len {
                    let mut want = [0u8; BLOCK];
                    let n = (end - at).min(BLOCK);
                    want[..n].copy_from_slice(&value[at..at + n]);
                    let [lo, hi] = block(value, at, end);
                    assert_eq!((u128::from(hi) << 64) | u128::from(lo), u128::from_le_bytes(want), "len {len} at {at} end {end}");
                }
            }
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn sse42_crc_equals_the_portable_form_on_every_length_and_place() {
        let Some(hw) = sse42::Crc::detect() else { return };
        let data: Vec<u8> = (0..300u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
        // Values of several lengths (under a block, around it, long), and
        // components anywhere in them, including up to their very end.
        for value_len in [3, 15, 16, 17, 40, 120] {
            let value = &data[..value_len];
            for start in 0..value_len.min(20) {
                for end in start..=value_len {
                    // One CRC at a time, and all of them in one pass over the
                    // component, as the first component is hashed.
                    let seeds = [0, 1, SEEDS[0], SEEDS[1], u32::MAX];
                    let each = seeds.map(|seed| Portable.append([seed], value, start..end)[0]);
                    for (seed, want) in seeds.into_iter().zip(each) {
                        assert_eq!(hw.append([seed], value, start..end), [want], "value {value_len} component {start}..{end}");
                    }
                    assert_eq!(hw.append(seeds, value, start..end), each, "value {value_len} component {start}..{end}");
                    assert_eq!(Portable.append(seeds, value, start..end), each);
                }
            }
        }
        // The whole pass agrees too, on a name with long and short components.
        let name = n("/com/example-with-a-long-component-of-many-bytes/a/%00%01%02%03%04%05%06%07%08");
        let value = name.value();
        let ends = || name.component_ends();
        let (mut fast, mut slow) = (NameHashes::default(), NameHashes::default());
        hw.hash_components(&mut fast, value, ends(), |_| {});
        slow.hash_components(value, ends(), Portable, |_| {});
        assert_eq!(fast.h1.to_vec(), slow.h1.to_vec());
        assert_eq!(fast.first, slow.first);
    }
}
