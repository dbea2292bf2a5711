//! The counting allocator, installed as this test binary's global allocator.

use trajan_bench::alloc::{self, AllocSnapshot, CountingAllocator};

#[global_allocator]
static ALLOC: CountingAllocator = CountingAllocator;

/// One test function: counting is process-wide, so nothing else may run meanwhile.
#[test]
fn counts_allocations_and_live_bytes_only_while_on() {
    assert!(alloc::installed());

    let (v, grew) = alloc::counted(|| vec![7u8; 1000]);
    assert!(grew.allocs >= 1);
    assert!(grew.live_bytes >= 1000, "{grew:?}");

    let ((), shrank) = alloc::counted(|| drop(v));
    assert!(shrank.live_bytes <= -1000, "{shrank:?}");
    assert_eq!(shrank.allocs, 0, "freeing is not an allocation");

    let (mut v, _) = alloc::counted(|| Vec::<u64>::with_capacity(1));
    let ((), grown) = alloc::counted(|| v.extend(0..1000));
    assert!(grown.allocs >= 1, "a reallocation counts");
    assert!(grown.live_bytes >= 7992, "{grown:?}");

    let before = AllocSnapshot::now();
    let b = std::hint::black_box(Box::new([0u8; 64]));
    drop(b);
    assert_eq!(AllocSnapshot::now(), before, "nothing is counted while counting is off");
}
