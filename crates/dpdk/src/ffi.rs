//! The C functions Trajan calls: DPDK's own non-inline API, declared by hand (a
//! handful of stable signatures, so no bindgen and no libclang at build time), and
//! the shim's wrappers of DPDK's inline functions (`csrc/shim.c`).

use std::os::raw::{c_char, c_int, c_uint};

/// DPDK's `struct rte_mbuf`, only ever handled by pointer.
#[repr(C)]
pub struct RteMbuf {
    _opaque: [u8; 0],
}

/// DPDK's `struct rte_mempool`, only ever handled by pointer.
#[repr(C)]
pub struct RteMempool {
    _opaque: [u8; 0],
}

extern "C" {
    /// Starts DPDK's environment (hugepages, devices, lcores) from an argv of EAL options; the number of arguments it consumed, or -1 with `rte_errno` set.
    pub fn rte_eal_init(argc: c_int, argv: *mut *mut c_char) -> c_int;
    /// DPDK's message for an `rte_errno` or negative return code, which covers DPDK's own codes as well as errno's.
    pub fn rte_strerror(errnum: c_int) -> *const c_char;
    /// Registers the calling thread with the EAL; without it the thread's mempool access bypasses the per-lcore caches.
    pub fn rte_thread_register() -> c_int;
    /// The buffers free in the pool (cached ones included), for the gauges that show a leak or an exhausted pool.
    pub fn rte_mempool_avail_count(mp: *const RteMempool) -> c_uint;
    /// The port id of a probed device by its name (a PCI address or a vdev name), 0 or a negative errno.
    pub fn rte_eth_dev_get_port_by_name(name: *const c_char, port_id: *mut u16) -> c_int;
    /// Stops a started port, keeping its queues (the first half of a restart, which lets a memif client retry its connection); 0 or a negative errno.
    pub fn rte_eth_dev_stop(port_id: u16) -> c_int;
    /// Starts a stopped port again with the queues it had; 0 or a negative errno.
    pub fn rte_eth_dev_start(port_id: u16) -> c_int;

    /// `rte_errno`, a per-lcore variable behind a macro that Rust cannot read directly.
    pub fn trajan_errno() -> c_int;
    /// Wraps the inline `rte_eth_rx_burst`: up to `n` received mbufs into `pkts`, returning how many.
    pub fn trajan_rx_burst(port: u16, queue: u16, pkts: *mut *mut RteMbuf, n: u16) -> u16;
    /// Wraps the inline `rte_eth_tx_burst`: queues up to `n` mbufs of `pkts`, returning how many the port took (the rest stay the caller's).
    pub fn trajan_tx_burst(port: u16, queue: u16, pkts: *mut *mut RteMbuf, n: u16) -> u16;
    /// Wraps the inline `rte_pktmbuf_alloc`: a reset mbuf from the pool, or null when it is empty.
    pub fn trajan_mbuf_alloc(mp: *mut RteMempool) -> *mut RteMbuf;
    /// Wraps the inline `rte_pktmbuf_free`: returns the mbuf (and any chained segments) to its pool.
    pub fn trajan_mbuf_free(m: *mut RteMbuf);
    /// Where the probed ports need their buffers: 0 all virtual (pack them), 1 a physical port (keep each within a page), 2 besides a net_af_xdp port.
    pub fn trajan_ports_layout() -> c_int;
    /// Creates a pool of `n` mbufs of `data_room` bytes, packed back to back when `packed` is 1 or page-bounded as DPDK's default; null with `rte_errno` set on failure.
    pub fn trajan_pool_create(name: *const c_char, n: c_uint, cache: c_uint, data_room: u16, packed: c_int) -> *mut RteMempool;
    /// 1 when the pool is one back-to-back block, which net_af_xdp needs to reach every buffer.
    pub fn trajan_pool_is_packed(mp: *const RteMempool) -> c_int;
    /// Starts loading both cache lines of an mbuf header that freeing it reads; a hint.
    pub fn trajan_mbuf_prefetch(m: *mut RteMbuf);
    /// The bytes and length of a one-segment mbuf; null (length 0) for a chained one.
    pub fn trajan_mbuf_data(m: *mut RteMbuf, len: *mut u16) -> *mut u8;
    /// Wraps the inline `rte_pktmbuf_append`: room for `len` more bytes at the end of the data, or null.
    pub fn trajan_mbuf_append(m: *mut RteMbuf, len: u16) -> *mut u8;
    /// Configures and starts a port with `queues` RX/TX queue pairs of `desc` descriptors receiving into `mp` (RSS when there is more than one), filling `mac`; 0 or a negative errno with `why` naming the failing step.
    pub fn trajan_port_start(port: u16, queues: u16, desc: u16, mp: *mut RteMempool, mac: *mut u8, why: *mut *const c_char) -> c_int;
    /// 1 if the port's link is up, 0 if down, a negative errno on error, without waiting for autonegotiation.
    pub fn trajan_link_up(port: u16) -> c_int;
    /// Fills `out[0..6]` with the port's counters: in, out, missed, in errors, out errors, no mbuf; 0 or a negative errno.
    pub fn trajan_port_stats(port: u16, out: *mut u64) -> c_int;
    /// The most queue pairs Trajan may use on the port by itself (1 for memif, whose peer must open each queue), or a negative errno.
    pub fn trajan_port_max_queues(port: u16) -> c_int;
    /// Two ports joined back to back by `queues` ring pairs, a virtual cable inside one process for tests and the one-process benchmark; fills `ports` with their ids, 0 or a negative errno.
    pub fn trajan_ring_pair(name: *const c_char, size: c_uint, queues: u16, ports: *mut u16) -> c_int;
}
