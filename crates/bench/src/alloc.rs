//! A counting global allocator, so the benchmark can report heap allocations per
//! packet and bytes per table entry from the very binary that runs the daemon.
//!
//! The `trajan` binary installs it with one line:
//! `#[global_allocator] static ALLOC: trajan_bench::alloc::CountingAllocator = CountingAllocator;`.
//! Counting is off unless a benchmark turns it on, and while off every allocation
//! pays one relaxed load of a flag and a well-predicted branch before going to the
//! system allocator, so the daemon runs at full speed with it installed. While on,
//! each call adds a relaxed atomic increment or two.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};

static COUNTING: AtomicBool = AtomicBool::new(false);
static ALLOCS: AtomicU64 = AtomicU64::new(0);
static ALLOCATED: AtomicU64 = AtomicU64::new(0);
static FREED: AtomicU64 = AtomicU64::new(0);

/// The system allocator, counting allocations and bytes while counting is on.
pub struct CountingAllocator;

// SAFETY: every call is forwarded unchanged to `System`, which upholds the
// `GlobalAlloc` contract; the counters only observe sizes.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if COUNTING.load(Relaxed) {
            ALLOCS.fetch_add(1, Relaxed);
            ALLOCATED.fetch_add(layout.size() as u64, Relaxed);
        }
        // SAFETY: the caller's contract for `alloc` is passed on as is.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if COUNTING.load(Relaxed) {
            ALLOCS.fetch_add(1, Relaxed);
            ALLOCATED.fetch_add(layout.size() as u64, Relaxed);
        }
        // SAFETY: as for `alloc`.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if COUNTING.load(Relaxed) {
            FREED.fetch_add(layout.size() as u64, Relaxed);
        }
        // SAFETY: `ptr` came from this allocator, i.e. from `System`, with `layout`.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if COUNTING.load(Relaxed) {
            // A reallocation is a heap operation on the fast path like any other.
            ALLOCS.fetch_add(1, Relaxed);
            ALLOCATED.fetch_add(new_size as u64, Relaxed);
            FREED.fetch_add(layout.size() as u64, Relaxed);
        }
        // SAFETY: `ptr` came from `System` with `layout`; the caller guarantees `new_size`.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

/// Cumulative counts since the process started, covering only the time counting was on.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AllocSnapshot {
    /// Allocations and reallocations.
    pub allocs: u64,
    /// Bytes requested.
    pub allocated: u64,
    /// Bytes released (the old size of a reallocation included).
    pub freed: u64,
}

impl AllocSnapshot {
    /// Reads the counters now.
    pub fn now() -> Self {
        AllocSnapshot { allocs: ALLOCS.load(Relaxed), allocated: ALLOCATED.load(Relaxed), freed: FREED.load(Relaxed) }
    }

    /// Allocations made between `earlier` and `self`.
    pub fn allocs_since(&self, earlier: &AllocSnapshot) -> u64 {
        self.allocs - earlier.allocs
    }

    /// Growth of live heap bytes between `earlier` and `self` (negative when more
    /// was freed than allocated): what a table filled in between costs.
    pub fn live_growth_since(&self, earlier: &AllocSnapshot) -> i64 {
        (self.allocated - earlier.allocated) as i64 - (self.freed - earlier.freed) as i64
    }
}

/// Turns counting on or off for the whole process. Counting is global, so a
/// measurement must not overlap other threads' work it does not mean to count.
pub fn set_counting(on: bool) {
    COUNTING.store(on, Relaxed);
}

/// Whether [`CountingAllocator`] is this process's global allocator: without it the
/// counters never move, and a report must say "unknown" rather than "zero".
pub fn installed() -> bool {
    let was = COUNTING.swap(true, Relaxed);
    let before = AllocSnapshot::now();
    let probe = std::hint::black_box(Box::new(0u64));
    let after = AllocSnapshot::now();
    drop(probe);
    COUNTING.store(was, Relaxed);
    after.allocs_since(&before) > 0
}

/// What a piece of code allocated, as [`counted`] measures it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counted {
    /// Allocations and reallocations made.
    pub allocs: u64,
    /// Growth of live heap bytes: what a table filled meanwhile costs.
    pub live_bytes: i64,
}

/// Runs `f` with counting on and returns what it allocated. Nested use keeps the
/// outer measurement counting.
pub fn counted<R>(f: impl FnOnce() -> R) -> (R, Counted) {
    let was = COUNTING.swap(true, Relaxed);
    let before = AllocSnapshot::now();
    let r = f();
    let after = AllocSnapshot::now();
    COUNTING.store(was, Relaxed);
    (r, Counted { allocs: after.allocs_since(&before), live_bytes: after.live_growth_since(&before) })
}

#[cfg(test)]
mod tests {
    /// Unit tests run on the system allocator: the bench must then report
    /// allocations as unknown, not as zero.
    #[test]
    fn not_installed_means_unknown() {
        assert!(!super::installed());
    }
}
