//! Trajan's benchmarks, as programs rather than timed tests: seeded workloads that
//! any benchmark can share, and `trajan bench engine`, which drives the daemon's own
//! forwarding engine from pre-encoded packets in memory.

pub mod alloc;
