//! The counting allocator, installed as this test binary's global allocator.

use trajan_bench::alloc::{self, AllocSnapshot, CountingAllocator};

#[global_allocator]
static ALLOC: CountingAllocator = CountingAllocator;

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

/// Engine workers count their own packets while other workers run the harness:
/// one thread's allocations never show in another's figures, and a thread that
/// does not count is not slowed into counting.
#[test]
fn counting_is_per_thread() {
    use std::sync::{Arc, Barrier};
    let (go, done) = (Arc::new(Barrier::new(2)), Arc::new(Barrier::new(2)));
    let other = {
        let (go, done) = (Arc::clone(&go), Arc::clone(&done));
        std::thread::spawn(move || {
            go.wait();
            let ((), own) = alloc::counted(|| {
                for i in 0..1000u64 {
                    std::hint::black_box(Box::new(i));
                }
            });
            done.wait();
            own
        })
    };
    let ((), mine) = alloc::counted(|| {
        go.wait();
        let v = std::hint::black_box(vec![1u8; 10]);
        done.wait();
        drop(v);
    });
    let theirs = other.join().unwrap();
    assert_eq!(mine.allocs, 1, "only this thread's one vector: {mine:?}");
    assert_eq!(mine.live_bytes, 0, "{mine:?}");
    assert_eq!(theirs.allocs, 1000, "{theirs:?}");

    let before = AllocSnapshot::now();
    std::thread::spawn(|| {
        alloc::set_counting(true);
        std::hint::black_box(Box::new(1u8));
    })
    .join()
    .unwrap();
    assert_eq!(AllocSnapshot::now(), before, "another thread's counting is its own");
}
