//! Ethdev ports and their queues.

use std::os::raw::c_char;
use std::ptr::NonNull;
use std::sync::Arc;

use crate::mbuf::{Mbuf, Mempool};
use crate::{ffi, strerror, DpdkError, Eal};

/// Most frames moved by one rx or tx burst (DPDK's customary 32).
pub const BURST: usize = 32;

/// A started ethdev port.
#[derive(Debug)]
pub struct Port {
    id: u16,
    queues: u16,
    mac: [u8; 6],
    pool: Arc<Mempool>,
}

/// The port's hardware counters (`rte_eth_stats`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PortStats {
    /// Frames the port received, on all its queues.
    pub in_packets: u64,
    /// Frames the port sent, on all its queues.
    pub out_packets: u64,
    /// Frames the port dropped because its RX queues were full.
    pub missed: u64,
    /// Received frames the port found erroneous and dropped.
    pub in_errors: u64,
    /// Frames the port failed to transmit.
    pub out_errors: u64,
    /// Receptions that failed for want of an mbuf in the pool.
    pub no_mbuf: u64,
}

impl Port {
    /// Configures port `id` with `queues` RX/TX queue pairs of `desc` descriptors
    /// (RSS over them where the port supports it), receiving into `pool`, and starts it.
    pub fn start(_eal: &Eal, id: u16, queues: u16, desc: u16, pool: Arc<Mempool>) -> Result<Port, DpdkError> {
        let mut mac = [0u8; 6];
        let mut why: *const c_char = std::ptr::null();
        // SAFETY: EAL is running (an Eal exists); the pool is valid for the process's
        // life; mac has room for 6 bytes; why receives a pointer to a static string.
        let rc = unsafe { ffi::trajan_port_start(id, queues.max(1), desc, pool.as_ptr(), mac.as_mut_ptr(), &mut why) };
        if rc != 0 {
            let step = if why.is_null() {
                "start".to_owned()
            } else {
                // SAFETY: the shim only stores pointers to string literals in why.
                unsafe { std::ffi::CStr::from_ptr(why) }.to_string_lossy().into_owned()
            };
            return Err(DpdkError::Port { port: id, step, reason: strerror(rc) });
        }
        Ok(Port { id, queues: queues.max(1), mac, pool })
    }

    /// The number of RX/TX queue pairs the port was started with.
    pub fn queues(&self) -> u16 {
        self.queues
    }

    /// The port's MAC address, the source of the frames Trajan sends.
    pub fn mac(&self) -> [u8; 6] {
        self.mac
    }

    /// Queue pair `index` (below [`Port::queues`]), to be owned by one thread. Each
    /// index must be taken once: two handles on one queue would race in DPDK.
    pub fn queue(&self, index: u16) -> Option<Queue> {
        (index < self.queues).then(|| Queue { port: self.id, queue: index, pool: Arc::clone(&self.pool), tx: Vec::with_capacity(BURST), dropped: 0 })
    }

    /// Whether the link is up (a memif peer connected, a cable plugged in).
    pub fn link_up(&self) -> bool {
        // SAFETY: reads the link state of a started port into the shim's own struct.
        unsafe { ffi::trajan_link_up(self.id) == 1 }
    }

    /// Stops and starts the port again, keeping its queues: a virtual device that
    /// connects at start (a memif client whose server was not ready) tries again.
    pub fn restart(&self) -> Result<(), DpdkError> {
        let fail = |step: &str, rc: i32| DpdkError::Port { port: self.id, step: step.to_owned(), reason: strerror(rc) };
        // SAFETY: the port is started and configured; stop/start keep its queues.
        let rc = unsafe { ffi::rte_eth_dev_stop(self.id) };
        if rc != 0 {
            return Err(fail("rte_eth_dev_stop", rc));
        }
        // SAFETY: as above.
        let rc = unsafe { ffi::rte_eth_dev_start(self.id) };
        if rc != 0 {
            return Err(fail("rte_eth_dev_start", rc));
        }
        Ok(())
    }

    /// The port's counters, or zeros when the driver keeps none.
    pub fn stats(&self) -> PortStats {
        let mut v = [0u64; 6];
        // SAFETY: v has room for the 6 counters the shim writes.
        if unsafe { ffi::trajan_port_stats(self.id, v.as_mut_ptr()) } != 0 {
            return PortStats::default();
        }
        PortStats { in_packets: v[0], out_packets: v[1], missed: v[2], in_errors: v[3], out_errors: v[4], no_mbuf: v[5] }
    }
}

/// One RX/TX queue pair of a port, owned by one thread. Frames to send are buffered
/// and go out in bursts of [`BURST`] or at [`Queue::flush`].
#[derive(Debug)]
pub struct Queue {
    port: u16,
    queue: u16,
    pool: Arc<Mempool>,
    tx: Vec<*mut ffi::RteMbuf>,
    /// Frames the port refused since the last [`Queue::take_dropped`].
    dropped: u64,
}

// SAFETY: a queue is used by one thread at a time (it is not Sync, and &mut self is
// needed to touch it); the buffered mbufs are owned by it.
unsafe impl Send for Queue {}

impl Queue {
    /// Registers the calling thread — the one that will use this queue — with EAL,
    /// so that its mbuf allocations and frees go through a per-thread mempool cache
    /// rather than the pool's shared ring. Failure only costs speed.
    pub fn register_thread(&self) {
        crate::register_thread();
    }

    /// Receives up to [`BURST`] frames, appending them to `out`; returns how many.
    pub fn rx_burst(&mut self, out: &mut Vec<Mbuf>) -> usize {
        let mut raw = [std::ptr::null_mut::<ffi::RteMbuf>(); BURST];
        // SAFETY: raw has room for BURST pointers; this Queue is the only user of
        // (port, queue), so no other thread polls it.
        let n = unsafe { ffi::trajan_rx_burst(self.port, self.queue, raw.as_mut_ptr(), BURST as u16) } as usize;
        for &p in &raw[..n.min(BURST)] {
            if let Some(p) = NonNull::new(p) {
                // SAFETY: rx_burst hands over ownership of each returned mbuf.
                out.push(unsafe { Mbuf::from_raw(p) });
            }
        }
        n
    }

    /// Queues a frame of `len` bytes written by `fill`; sends a burst when full.
    /// Returns false (and counts nothing itself) when no mbuf was available.
    pub fn send(&mut self, len: usize, fill: impl FnOnce(&mut [u8])) -> bool {
        let Some(m) = self.pool.frame(len, fill) else { return false };
        self.send_mbuf(m);
        true
    }

    /// Queues a frame already in an mbuf.
    fn send_mbuf(&mut self, m: Mbuf) {
        self.tx.push(m.into_raw());
        if self.tx.len() >= BURST {
            self.flush();
        }
    }

    /// Frames the port refused (full TX ring) since the last call.
    pub fn take_dropped(&mut self) -> u64 {
        std::mem::take(&mut self.dropped)
    }

    /// Sends what is queued; frames the port does not take are freed and counted
    /// (see [`Queue::take_dropped`]).
    pub fn flush(&mut self) {
        if self.tx.is_empty() {
            return;
        }
        let n = self.tx.len().min(u16::MAX as usize);
        // SAFETY: tx holds n owned mbufs; tx_burst takes ownership of the first
        // `sent`, and we free the rest exactly once below.
        let sent = unsafe { ffi::trajan_tx_burst(self.port, self.queue, self.tx.as_mut_ptr(), n as u16) } as usize;
        let dropped = self.tx.len() - sent.min(self.tx.len());
        for &p in &self.tx[sent.min(self.tx.len())..] {
            // SAFETY: not taken by the port; still ours, freed once.
            unsafe { ffi::trajan_mbuf_free(p) };
        }
        self.tx.clear();
        self.dropped += dropped as u64;
    }
}

impl Drop for Queue {
    fn drop(&mut self) {
        self.flush();
    }
}
