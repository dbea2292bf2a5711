//! A counting global allocator, so the benchmark can report heap allocations per
//! packet and bytes per table entry from the very binary that runs the daemon.
//!
//! The `trajan` binary installs it with one line:
//! `#[global_allocator] static ALLOC: trajan_bench::alloc::CountingAllocator = CountingAllocator;`.
//! Counting is per thread and off unless a benchmark turns it on for its own
//! thread: several engine workers can each count their own packets' allocations
//! while the others run the harness around them (`--workers`). While off, every
//! allocation pays one thread-local load of a flag and a well-predicted branch
//! before going to the system allocator, so the daemon runs at full speed with it
//! installed. While on, each call adds a thread-local increment or two.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

/// One thread's switch and counters. Plain cells with a constant initialiser: no
/// destructor is registered, so the allocator can reach them at any point of the
/// thread's life, its teardown included, without allocating.
struct ThreadCounts {
    on: Cell<bool>,
    allocs: Cell<u64>,
    allocated: Cell<u64>,
    freed: Cell<u64>,
}

thread_local! {
    static COUNTS: ThreadCounts = const {
        ThreadCounts { on: Cell::new(false), allocs: Cell::new(0), allocated: Cell::new(0), freed: Cell::new(0) }
    };
}

/// Adds an allocation of `allocated` bytes (0 for a release) and a release of
/// `freed` bytes to the calling thread's counters, if it is counting.
#[inline]
fn note(allocs: u64, allocated: usize, freed: usize) {
    let _ = COUNTS.try_with(|c| {
        if c.on.get() {
            c.allocs.set(c.allocs.get() + allocs);
            c.allocated.set(c.allocated.get() + allocated as u64);
            c.freed.set(c.freed.get() + freed as u64);
        }
    });
}

/// The system allocator, counting allocations and bytes of the threads that count.
pub struct CountingAllocator;

// SAFETY: every call is forwarded unchanged to `System`, which upholds the
// `GlobalAlloc` contract; the counters only observe sizes, and touching them
// allocates nothing.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note(1, layout.size(), 0);
        // SAFETY: the caller's contract for `alloc` is passed on as is.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note(1, layout.size(), 0);
        // SAFETY: as for `alloc`.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        note(0, 0, layout.size());
        // SAFETY: `ptr` came from this allocator, i.e. from `System`, with `layout`.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // A reallocation is a heap operation on the fast path like any other.
        note(1, new_size, layout.size());
        // SAFETY: `ptr` came from `System` with `layout`; the caller guarantees `new_size`.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

/// The calling thread's cumulative counts since it started, covering only the time
/// it was counting. Memory one thread allocates and another frees (a packet handed
/// over) shows as growth on the first and shrinkage on the second.
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
    /// Reads the calling thread's counters now.
    pub fn now() -> Self {
        COUNTS.with(|c| AllocSnapshot { allocs: c.allocs.get(), allocated: c.allocated.get(), freed: c.freed.get() })
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

/// Turns counting on or off for the calling thread; other threads' allocations
/// are never counted in its figures.
pub fn set_counting(on: bool) {
    COUNTS.with(|c| c.on.set(on));
}

/// Sets the calling thread's switch and returns what it was.
fn swap_counting(on: bool) -> bool {
    COUNTS.with(|c| c.on.replace(on))
}

/// Whether [`CountingAllocator`] is this process's global allocator: without it the
/// counters never move, and a report must say "unknown" rather than "zero".
pub fn installed() -> bool {
    let was = swap_counting(true);
    let before = AllocSnapshot::now();
    let probe = std::hint::black_box(Box::new(0u64));
    let after = AllocSnapshot::now();
    drop(probe);
    set_counting(was);
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

/// Runs `f` with counting on and returns what it allocated on the calling thread
/// (threads `f` starts count for themselves, or not at all). Nested use keeps the
/// outer measurement counting.
pub fn counted<R>(f: impl FnOnce() -> R) -> (R, Counted) {
    let was = swap_counting(true);
    let before = AllocSnapshot::now();
    let r = f();
    let after = AllocSnapshot::now();
    set_counting(was);
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
