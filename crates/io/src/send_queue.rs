//! A face's queue of packets waiting for its socket, in which a waiting packet
//! holds only its own bytes.
//!
//! A packet handed to a face is often a view of a larger buffer: a Data the
//! engine received from a DPDK port is a slice of its mbuf (2 KiB from a pool
//! sized for the content store), one received over UDP in an LpPacket is a slice
//! of its datagram. Sent at once, the view costs nothing. Left waiting behind a
//! peer that does not read, it pins the whole buffer while the queue's bound
//! counts only the packet: a local consumer that stalls with 4 MiB of 100-byte
//! Data queued would hold 40,000 mbufs, and the ports would stop receiving. So a
//! packet is copied once it has to wait, and only then: when the socket is
//! already full as it is queued, or when a write finds the socket full with it
//! still queued. The copies are what the queue's byte bounds count.

use std::collections::VecDeque;
use std::ops::Deref;

use bytes::Bytes;

/// A queued item, whose packet the queue can replace by a copy.
pub(crate) trait Waiting {
    /// The packet, for the queue to replace by a copy of its bytes.
    fn packet_mut(&mut self) -> &mut Bytes;
}

impl Waiting for Bytes {
    fn packet_mut(&mut self) -> &mut Bytes {
        self
    }
}

/// A FIFO of packets for one socket: read it as a `VecDeque`, change it through
/// its own methods, which keep track of which packets are still views.
#[derive(Debug)]
pub(crate) struct SendQueue<T> {
    items: VecDeque<T>,
    /// How many packets at the back are still views of their buffers; every
    /// packet before them is a copy.
    views: usize,
}

impl<T> Default for SendQueue<T> {
    fn default() -> Self {
        SendQueue { items: VecDeque::new(), views: 0 }
    }
}

impl<T: Waiting> SendQueue<T> {
    /// Appends `item`; `waits` says the socket is already full, so the packet is
    /// copied now rather than left pinning its buffer.
    pub(crate) fn push_back(&mut self, item: T, waits: bool) {
        self.items.push_back(item);
        self.views += 1;
        if waits {
            self.detach();
        }
    }

    /// The socket is full and everything queued waits: copies the packets that
    /// are still views.
    pub(crate) fn detach(&mut self) {
        let from = self.items.len() - self.views;
        for item in self.items.range_mut(from..) {
            own(item.packet_mut());
        }
        self.views = 0;
    }

    /// Takes the front packet off (it was sent, or dropped).
    pub(crate) fn pop_front(&mut self) -> Option<T> {
        let item = self.items.pop_front();
        self.views = self.views.min(self.items.len());
        item
    }

    /// Takes the first `n` packets off, in order.
    pub(crate) fn drain_front(&mut self, n: usize) -> std::collections::vec_deque::Drain<'_, T> {
        self.views = self.views.min(self.items.len() - n);
        self.items.drain(..n)
    }
}

impl<T> Deref for SendQueue<T> {
    type Target = VecDeque<T>;

    fn deref(&self) -> &VecDeque<T> {
        &self.items
    }
}

/// Replaces `pkt` by a copy of its bytes, which releases the buffer it viewed.
fn own(pkt: &mut Bytes) {
    *pkt = Bytes::copy_from_slice(pkt);
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
    use std::sync::Arc;

    use super::*;

    /// A 64 KiB receive buffer that counts itself while alive.
    struct Buffer {
        bytes: Vec<u8>,
        alive: Arc<AtomicUsize>,
    }

    impl AsRef<[u8]> for Buffer {
        fn as_ref(&self) -> &[u8] {
            &self.bytes
        }
    }

    impl Drop for Buffer {
        fn drop(&mut self) {
            self.alive.fetch_sub(1, Relaxed);
        }
    }

    /// A 100-byte packet viewing a buffer of its own.
    fn view(alive: &Arc<AtomicUsize>, tag: u8) -> Bytes {
        alive.fetch_add(1, Relaxed);
        Bytes::from_owner(Buffer { bytes: vec![tag; 64 << 10], alive: Arc::clone(alive) }).slice(100..200)
    }

    #[test]
    fn only_waiting_packets_are_copied_and_order_and_bytes_are_kept() {
        let alive = Arc::new(AtomicUsize::new(0));
        let mut q = SendQueue::default();
        q.push_back(view(&alive, 1), false);
        q.push_back(view(&alive, 2), false);
        assert_eq!(alive.load(Relaxed), 2, "a packet about to be written stays a view");
        q.detach();
        assert_eq!(alive.load(Relaxed), 0, "a write left them waiting: copies now");
        q.push_back(view(&alive, 3), true);
        assert_eq!(alive.load(Relaxed), 0, "queued behind a full socket: copied at once");
        q.push_back(view(&alive, 4), false);
        assert_eq!(alive.load(Relaxed), 1);
        let got: Vec<u8> = q.iter().map(|p| p[0]).collect();
        assert_eq!(got, [1, 2, 3, 4]);
        assert!(q.iter().all(|p| p.len() == 100));
        assert_eq!(q.drain_front(3).count(), 3);
        assert_eq!(alive.load(Relaxed), 1, "the view at the back is still one");
        q.detach();
        assert_eq!(alive.load(Relaxed), 0);
        assert_eq!(q.pop_front().map(|p| p[0]), Some(4));
        assert!(q.pop_front().is_none());
        q.detach();
    }

    proptest::proptest! {
        /// Any sequence of pushes (behind a full socket or not), blocked writes
        /// and sends: the queue is the FIFO of what was pushed, byte for byte,
        /// and exactly the packets pushed since the last time the socket was
        /// full are still views.
        #[test]
        fn a_queue_is_a_fifo_whose_waiting_packets_are_copies(ops in proptest::collection::vec(0u8..4, 0..200)) {
            let alive = Arc::new(AtomicUsize::new(0));
            let mut q = SendQueue::default();
            let mut model = std::collections::VecDeque::new();
            let mut views = 0usize;
            for (i, op) in ops.into_iter().enumerate() {
                let tag = i as u8;
                match op {
                    0 => {
                        q.push_back(view(&alive, tag), false);
                        model.push_back(tag);
                        views += 1;
                    }
                    1 => {
                        q.push_back(view(&alive, tag), true);
                        model.push_back(tag);
                        views = 0;
                    }
                    2 => {
                        q.detach();
                        views = 0;
                    }
                    _ => {
                        let n = model.len().min(3);
                        proptest::prop_assert_eq!(q.drain_front(n).count(), n);
                        model.drain(..n);
                        views = views.min(model.len());
                    }
                }
                proptest::prop_assert_eq!(alive.load(Relaxed), views);
                let got: Vec<u8> = q.iter().map(|p| p[0]).collect();
                proptest::prop_assert_eq!(&got, &model.iter().copied().collect::<Vec<_>>());
                proptest::prop_assert!(q.iter().all(|p| p.len() == 100));
            }
        }
    }

    #[test]
    fn pushing_behind_a_full_socket_copies_the_views_queued_before_it() {
        let alive = Arc::new(AtomicUsize::new(0));
        let mut q = SendQueue::default();
        q.push_back(view(&alive, 1), false);
        q.push_back(view(&alive, 2), true);
        assert_eq!(alive.load(Relaxed), 0);
        q.pop_front();
        q.push_back(view(&alive, 3), false);
        q.pop_front();
        assert_eq!(alive.load(Relaxed), 1, "the one view left is the back one");
        q.detach();
        assert_eq!(alive.load(Relaxed), 0);
    }
}
