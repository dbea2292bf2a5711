//! Comparing every way of a cache-line bucket with a key at once. The tables
//! keep their buckets' 32-bit tags side by side (the PCCT's index seven, the
//! FIB's hash table five), and a scan way by way costs instructions and, worse,
//! a branch per way whose outcome follows where the match happens to sit, which
//! the core mispredicts about once per probe.

/// Bit `w` set for each of the `N` words equal to `key` (4 ≤ `N` ≤ 8), found
/// with two 16-byte comparisons.
#[inline(always)]
pub(crate) fn ways_equal<const N: usize>(words: &[u32; N], key: u32) -> u32 {
    const {
        assert!(
            N >= 4 && N <= 8,
            "two overlapping 4-word loads cover 4 to 8 words"
        )
    };
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{
            _mm_castsi128_ps, _mm_cmpeq_epi32, _mm_loadu_si128, _mm_movemask_ps, _mm_set1_epi32,
        };
        // SAFETY: SSE2 is part of the x86_64 baseline, so these intrinsics are
        // available; the two unaligned 16-byte loads read `words[0..4]` and
        // `words[N - 4..N]`, both inside `words` (N ≥ 4 words of 4 bytes).
        unsafe {
            let key = _mm_set1_epi32(key as i32);
            let lo = _mm_loadu_si128(words.as_ptr().cast());
            let hi = _mm_loadu_si128(words.as_ptr().add(N - 4).cast());
            let lo = _mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(lo, key))) as u32;
            let hi = _mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(hi, key))) as u32;
            lo | hi << (N - 4)
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        ways_equal_each(words, key)
    }
}

/// [`ways_equal`] one word at a time: the definition, and what other targets run.
#[cfg(any(test, not(target_arch = "x86_64")))]
pub(crate) fn ways_equal_each<const N: usize>(words: &[u32; N], key: u32) -> u32 {
    words
        .iter()
        .enumerate()
        .filter(|&(_, &w)| w == key)
        .fold(0, |m, (w, _)| m | 1 << w)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The ways found at once are those a one-by-one comparison finds, for
        /// both bucket widths in use, with words drawn from a small set so that
        /// several match.
        #[test]
        fn agree_with_each_way(picks in proptest::array::uniform8(0usize..4), key in 0usize..4) {
            let set = [0, 1, 0x8000_0000, u32::MAX];
            let words = picks.map(|p| set[p]);
            let five: [u32; 5] = words[..5].try_into().unwrap();
            let seven: [u32; 7] = words[..7].try_into().unwrap();
            prop_assert_eq!(ways_equal(&five, set[key]), ways_equal_each(&five, set[key]));
            prop_assert_eq!(ways_equal(&seven, set[key]), ways_equal_each(&seven, set[key]));
            prop_assert_eq!(ways_equal(&words, set[key]), ways_equal_each(&words, set[key]));
        }
    }
}
