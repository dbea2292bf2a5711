//! The floor a FIB lookup's memory accesses set on this machine: random
//! cache lines of a large table, read in chains of dependent loads (each line's
//! address known only once the one before it is read, as a filter block leads
//! to a bucket and a bucket to a prefix's bytes), for groups of lookups whose
//! chains are software-pipelined as `Fib::lpm_burst` does: every lookup of a
//! group prefetches its next line, then the group moves on one step.
//!
//! `cargo run --release -p trajan-bench --example memory_floor -- MIB GROUP CHAIN HUGE`
//! (defaults 700 16 3 1: a table the size of the 10M-prefix FIB, groups of 16
//! as `BURST_STAGE`, three lines per lookup, transparent huge pages asked for).
//! Prints nanoseconds per lookup and per line. Not a test: a measurement for
//! docs/PERFORMANCE.md.

use std::time::Instant;

use trajan_tables::fib::prefetch;
use trajan_tables::huge;

/// Lookups timed: enough for a stable figure, bounded so a run takes seconds.
const LOOKUPS: usize = 4_000_000;

fn arg(i: usize, default: usize) -> usize {
    std::env::args().nth(i).map_or(default, |a| a.parse().expect("arguments are whole numbers: MIB GROUP CHAIN HUGE"))
}

fn main() {
    let (mib, group, chain, huge) = (arg(1, 700), arg(2, 16).clamp(1, 256), arg(3, 3).max(1), arg(4, 1) != 0);
    let lines = (mib << 20) / 64;
    assert!(lines > 0, "the table needs at least one line");
    // Backed as the FIB's arrays are: huge pages asked for before first touch.
    let table = if huge { huge::filled(lines * 64, 1u8) } else { vec![1u8; lines * 64] };
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let mut random = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let starts: Vec<usize> = (0..LOOKUPS).map(|_| (random() % lines as u64) as usize).collect();
    let mut at = vec![0usize; group];
    let mut sum = 0u64;
    let t = Instant::now();
    for g in starts.chunks_exact(group) {
        for (a, &s) in at.iter_mut().zip(g) {
            *a = s;
            prefetch(&table[s * 64]);
        }
        for _ in 1..chain {
            for a in at.iter_mut() {
                // The next line depends on this one's contents.
                let v = std::hint::black_box(table[*a * 64]) as u64;
                *a = ((((*a as u64) ^ v).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 20) % lines as u64) as usize;
                prefetch(&table[*a * 64]);
            }
        }
        sum += at.iter().map(|&a| u64::from(std::hint::black_box(table[a * 64]))).sum::<u64>();
    }
    let ns = t.elapsed().as_nanos() as f64 / (LOOKUPS / group * group) as f64;
    println!("{mib} MiB, groups of {group}, {chain} lines per lookup, huge pages {huge}: {ns:.1} ns per lookup, {:.1} ns per line (checksum {})", ns / chain as f64, sum & 1);
}
