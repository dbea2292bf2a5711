//! Packet buffers: pools and owned mbufs.

use std::os::raw::c_int;
use std::ptr::NonNull;

use bytes::Bytes;

use crate::{cstring, ffi, strerror, DpdkError, Eal};

/// Bytes of frame an mbuf holds (2048: any 1500-byte-MTU Ethernet frame; jumbo
/// frames are not taken), plus DPDK's 128-byte headroom: DPDK's default size.
pub const DATA_ROOM: u16 = 2048 + 128;

/// A pool of packet buffers, shared by the ports that receive into it. Never freed:
/// received packets may be referenced (by the content store) for the process's life.
#[derive(Debug)]
pub struct Mempool {
    ptr: NonNull<ffi::RteMempool>,
}

// SAFETY: a DPDK mempool is a multi-producer, multi-consumer structure designed to be
// used from every thread; the pointer is never freed.
unsafe impl Send for Mempool {}
// SAFETY: as above, all operations on it are thread-safe.
unsafe impl Sync for Mempool {}

impl Mempool {
    /// Creates a pool of `mbufs` buffers of `data_room` bytes, with a per-thread
    /// cache for threads registered with EAL.
    ///
    /// When every port EAL probed is a virtual device, the buffers are packed back
    /// to back: DPDK 22.11's `net_af_xdp` needs that (it registers the pool with
    /// the kernel as one block from its first buffer, and a frame in a buffer
    /// beyond the block is dropped without a counter), and no virtual device needs
    /// DPDK's default layout, which keeps each buffer within a page for NICs that
    /// DMA to physical addresses. With a physical port the default layout is kept,
    /// with a warning if an AF_XDP port shares the pool.
    pub fn new(_eal: &Eal, name: &str, mbufs: u32, data_room: u16) -> Result<Mempool, DpdkError> {
        let c = cstring(name)?;
        let cache = 256.min(mbufs / 8);
        // SAFETY: EAL is initialised (an Eal exists); the shim only reads the probed
        // ports' device information.
        let layout = unsafe { ffi::trajan_ports_layout() };
        if layout == 2 {
            tracing::warn!(
                pool = name,
                "a net_af_xdp port shares the buffer pool with a physical (PCI) port, so the pool keeps each buffer within a page and DPDK 22.11's AF_XDP driver cannot reach those past its first block: frames in them are lost; run AF_XDP ports in a process of their own"
            );
        }
        // SAFETY: EAL is initialised; c is a valid C string.
        let ptr = unsafe { ffi::trajan_pool_create(c.as_ptr(), mbufs, cache, data_room, c_int::from(layout == 0)) };
        match NonNull::new(ptr) {
            Some(ptr) => Ok(Mempool { ptr }),
            None => {
                // SAFETY: reads DPDK's per-thread errno after the failed call.
                let code = unsafe { ffi::trajan_errno() };
                Err(DpdkError::Mempool { name: name.to_owned(), mbufs, reason: strerror(code) })
            }
        }
    }

    /// Whether the buffers lie back to back in one block of memory (see [`Mempool::new`]).
    pub fn is_packed(&self) -> bool {
        // SAFETY: the pool pointer is valid for the process's life; the shim reads
        // its memory-chunk list and sizes.
        unsafe { ffi::trajan_pool_is_packed(self.as_ptr()) == 1 }
    }

    /// Buffers free in the pool (per-thread caches included).
    pub fn available(&self) -> u32 {
        // SAFETY: the pool pointer is valid for the process's life.
        unsafe { ffi::rte_mempool_avail_count(self.as_ptr()) }
    }

    /// The pool as the C shim's calls take it.
    pub(crate) fn as_ptr(&self) -> *mut ffi::RteMempool {
        self.ptr.as_ptr()
    }

    /// A fresh mbuf holding `len` bytes written by `fill`, or `None` when the pool is
    /// empty or `len` exceeds the buffer.
    pub fn frame(&self, len: usize, fill: impl FnOnce(&mut [u8])) -> Option<Mbuf> {
        let len16 = u16::try_from(len).ok()?;
        // SAFETY: the pool pointer is valid for the process's life.
        let m = Mbuf { ptr: NonNull::new(unsafe { ffi::trajan_mbuf_alloc(self.as_ptr()) })? };
        // SAFETY: m is a fresh, owned, one-segment mbuf; append returns a pointer to
        // len writable bytes inside its buffer, or NULL (then m is dropped, freed).
        let data = unsafe { ffi::trajan_mbuf_append(m.ptr.as_ptr(), len16) };
        if data.is_null() {
            return None;
        }
        // SAFETY: data points to len bytes inside the mbuf we own exclusively.
        fill(unsafe { std::slice::from_raw_parts_mut(data, len) });
        Some(m)
    }
}

/// One frame in a DPDK buffer, owned: dropping it returns the buffer to its pool.
#[derive(Debug)]
pub struct Mbuf {
    ptr: NonNull<ffi::RteMbuf>,
}

// SAFETY: an mbuf is owned by exactly one Mbuf; DPDK allows freeing it from any
// thread (the pool is multi-producer).
unsafe impl Send for Mbuf {}
// SAFETY: shared access only reads the frame's bytes.
unsafe impl Sync for Mbuf {}

impl Mbuf {
    /// Takes ownership of an mbuf DPDK handed over (from rx_burst).
    ///
    /// # Safety
    /// `ptr` must be a valid mbuf that nothing else will use or free.
    pub(crate) unsafe fn from_raw(ptr: NonNull<ffi::RteMbuf>) -> Mbuf {
        Mbuf { ptr }
    }

    /// Gives the mbuf to DPDK (for tx_burst), which will free it.
    pub(crate) fn into_raw(self) -> *mut ffi::RteMbuf {
        let p = self.ptr.as_ptr();
        std::mem::forget(self);
        p
    }

    /// The frame, without copying: the engine parses these bytes, and whatever keeps
    /// a slice of them (the content store) keeps the mbuf, which returns to its pool
    /// when the last slice is dropped.
    pub fn into_bytes(self) -> Bytes {
        Bytes::from_owner(self)
    }
}

impl AsRef<[u8]> for Mbuf {
    /// The frame's bytes; empty for a chained (multi-segment) mbuf, which Trajan's
    /// pools never produce and faces therefore drop.
    fn as_ref(&self) -> &[u8] {
        let mut len = 0u16;
        // SAFETY: the mbuf is valid and owned by self; the returned pointer is to
        // len bytes inside its buffer, valid while self lives.
        let data = unsafe { ffi::trajan_mbuf_data(self.ptr.as_ptr(), &mut len) };
        if data.is_null() {
            return &[];
        }
        // SAFETY: see above; nothing writes the frame while it is shared.
        unsafe { std::slice::from_raw_parts(data, len as usize) }
    }
}

impl Drop for Mbuf {
    /// Frees the mbuf [`FREE_LAG`] drops later on this thread (see `LaggedFrees`).
    fn drop(&mut self) {
        let m = self.ptr.as_ptr();
        // SAFETY: a prefetch of a valid mbuf's header, which it only hints to load.
        unsafe { ffi::trajan_mbuf_prefetch(m) };
        // While the thread is being torn down its queue is gone: free at once.
        let due = LAGGED.try_with(|l| l.borrow_mut().push(m)).unwrap_or(m);
        if !due.is_null() {
            // SAFETY: every mbuf enters a queue once (from its one owner's drop) and
            // leaves it once (here, in flush_lagged_frees or in LaggedFrees::drop),
            // so it is freed exactly once; pools are never freed.
            unsafe { ffi::trajan_mbuf_free(due) }
        }
    }
}

/// Drops between an mbuf's release and its free (see `LaggedFrees`).
pub const FREE_LAG: usize = 16;

/// The mbufs a thread released but has not freed yet. Freeing reads the mbuf's
/// header, which is cold when the content store evicts a packet cached long ago
/// (every insert into a full store evicts one): a miss per packet, 13 % of the
/// forwarder's time over memif. So a drop only prefetches the header and queues
/// the mbuf, and frees the one queued [`FREE_LAG`] drops earlier, whose header has
/// had time to arrive. At most `FREE_LAG` mbufs per thread wait, which no pool
/// sizing notices (pools hold thousands).
struct LaggedFrees {
    ring: [*mut ffi::RteMbuf; FREE_LAG],
    next: usize,
}

impl LaggedFrees {
    /// Queues `m` and returns the mbuf it displaces (null while the ring fills).
    fn push(&mut self, m: *mut ffi::RteMbuf) -> *mut ffi::RteMbuf {
        let due = std::mem::replace(&mut self.ring[self.next], m);
        self.next = (self.next + 1) % FREE_LAG;
        due
    }

    fn free_all(&mut self) {
        for slot in &mut self.ring {
            let m = std::mem::replace(slot, std::ptr::null_mut());
            if !m.is_null() {
                // SAFETY: as in Mbuf::drop: queued once, taken out once.
                unsafe { ffi::trajan_mbuf_free(m) }
            }
        }
    }
}

impl Drop for LaggedFrees {
    fn drop(&mut self) {
        self.free_all();
    }
}

thread_local! {
    static LAGGED: std::cell::RefCell<LaggedFrees> =
        const { std::cell::RefCell::new(LaggedFrees { ring: [std::ptr::null_mut(); FREE_LAG], next: 0 }) };
}

/// Frees now the mbufs this thread released but still holds (at most
/// [`FREE_LAG`]): for code that counts a pool's free buffers, such as tests.
pub fn flush_lagged_frees() {
    LAGGED.with(|l| l.borrow_mut().free_all());
}
