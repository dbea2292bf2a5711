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
    pub fn rte_eal_init(argc: c_int, argv: *mut *mut c_char) -> c_int;
    pub fn rte_strerror(errnum: c_int) -> *const c_char;
    pub fn rte_thread_register() -> c_int;
    pub fn rte_mempool_avail_count(mp: *const RteMempool) -> c_uint;
    pub fn rte_eth_dev_get_port_by_name(name: *const c_char, port_id: *mut u16) -> c_int;
    pub fn rte_eth_dev_stop(port_id: u16) -> c_int;
    pub fn rte_eth_dev_start(port_id: u16) -> c_int;

    pub fn trajan_errno() -> c_int;
    pub fn trajan_rx_burst(port: u16, queue: u16, pkts: *mut *mut RteMbuf, n: u16) -> u16;
    pub fn trajan_tx_burst(port: u16, queue: u16, pkts: *mut *mut RteMbuf, n: u16) -> u16;
    pub fn trajan_mbuf_alloc(mp: *mut RteMempool) -> *mut RteMbuf;
    pub fn trajan_mbuf_free(m: *mut RteMbuf);
    pub fn trajan_ports_layout() -> c_int;
    pub fn trajan_pool_create(name: *const c_char, n: c_uint, cache: c_uint, data_room: u16, packed: c_int) -> *mut RteMempool;
    pub fn trajan_pool_is_packed(mp: *const RteMempool) -> c_int;
    pub fn trajan_mbuf_prefetch(m: *mut RteMbuf);
    pub fn trajan_mbuf_data(m: *mut RteMbuf, len: *mut u16) -> *mut u8;
    pub fn trajan_mbuf_append(m: *mut RteMbuf, len: u16) -> *mut u8;
    pub fn trajan_port_start(port: u16, queues: u16, desc: u16, mp: *mut RteMempool, mac: *mut u8, why: *mut *const c_char) -> c_int;
    pub fn trajan_link_up(port: u16) -> c_int;
    pub fn trajan_port_stats(port: u16, out: *mut u64) -> c_int;
    pub fn trajan_port_max_queues(port: u16) -> c_int;
    pub fn trajan_ring_pair(name: *const c_char, size: c_uint, queues: u16, ports: *mut u16) -> c_int;
}
