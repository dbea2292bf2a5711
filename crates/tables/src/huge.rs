//! Transparent huge pages for the tables' large arrays.
//!
//! A lookup at millions of prefixes misses the cache on a filter block, a bucket
//! and the prefix bytes, and with 4 KiB pages each of those also misses the TLB:
//! a page walk per access (two-dimensional under a hypervisor). So does a full
//! content store's insert, on the victim's entry and on index lines, at 10^5
//! packets (≈ 20 MiB of entries, beyond the TLB's reach in 4 KiB pages): slabs
//! and the CS index grow into advised memory too. With 2 MiB pages the TLB
//! covers a thousand times more memory. This machine, like many, enables
//! transparent huge pages only where `madvise(MADV_HUGEPAGE)` asks, and a page
//! becomes huge when first touched, so arrays are advised before they are filled.

/// Size of a transparent huge page on x86-64 and most aarch64 kernels.
const HUGE: usize = 2 << 20;

/// Asks the kernel to back `v`'s allocation (its whole capacity) with huge pages
/// where it can: the 2 MiB-aligned part of it, pages touched from now on. Small
/// arrays contain no aligned 2 MiB and are left alone. Advice only: contents and
/// behaviour are unchanged, and failure is ignored.
pub(crate) fn advise<T>(v: &Vec<T>) {
    let start = v.as_ptr() as usize;
    let end = start + v.capacity() * std::mem::size_of::<T>();
    let (from, to) = (start.next_multiple_of(HUGE), end & !(HUGE - 1));
    if to > from {
        #[cfg(target_os = "linux")]
        // SAFETY: [from, to) lies inside `v`'s allocation, which this process
        // owns and maps, and is page-aligned; MADV_HUGEPAGE changes how the
        // kernel backs those pages, never their contents or whether they are
        // mapped, so no Rust reference is affected.
        unsafe {
            libc::madvise(from as *mut libc::c_void, to - from, libc::MADV_HUGEPAGE);
        }
    }
}

/// Makes room for `additional` more elements of `v` by moving them into a fresh
/// allocation advised for huge pages, never by `realloc`: glibc grows a large
/// block with `mremap`, which keeps the pages it moves as they are (4 KiB pages
/// touched before any advice stay small) and may split the huge ones, so an array
/// grown in place ends up mostly on 4 KiB pages. Copying costs what doubling would.
pub(crate) fn reserve<T>(v: &mut Vec<T>, additional: usize) {
    if v.capacity() - v.len() >= additional {
        return;
    }
    let mut fresh = Vec::with_capacity(v.len() + additional);
    advise(&fresh);
    fresh.append(v);
    *v = fresh;
}

/// `n` copies of `value` in memory advised for huge pages before it is touched.
/// Public for measurements outside the tables (the bench's memory floor) whose
/// arrays must be backed as the tables' are, for figures that compare.
pub fn filled<T: Clone>(n: usize, value: T) -> Vec<T> {
    let mut v = Vec::with_capacity(n);
    advise(&v);
    v.resize(n, value);
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn advised_arrays_keep_their_contents() {
        let small = filled(10, 7u8);
        assert_eq!(small, vec![7u8; 10]);
        // Large enough to hold aligned huge pages.
        let mut big = filled(3 * HUGE / 8, 5u64);
        assert!(big.iter().all(|&x| x == 5));
        big[HUGE / 8] = 9;
        big.reserve_exact(HUGE);
        advise(&big);
        big.extend(std::iter::repeat_n(1, HUGE / 8));
        assert_eq!((big[0], big[HUGE / 8], big[3 * HUGE / 8], big.len()), (5, 9, 1, HUGE / 2));
        let before = big.capacity();
        reserve(&mut big, 1);
        assert_eq!(big.capacity(), before, "room was left: nothing moves");
        reserve(&mut big, before);
        assert!(big.capacity() >= HUGE / 2 + before);
        assert_eq!((big[0], big[HUGE / 8], big[3 * HUGE / 8], big.len()), (5, 9, 1, HUGE / 2));
    }
}
