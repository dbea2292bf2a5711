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
//! still queued. The copies are what the queue's byte bounds count, each with
//! [`crate::QUEUED_PACKET_OVERHEAD`] for its slot and allocation.
//!
//! A queue's ring never shrinks by itself, so one that held 100,000 packets
//! for a peer that stopped reading would keep their slots for the life of the
//! face, uncounted. It gives them back when it empties, down to
//! [`KEEP_SLOTS`].

use std::collections::VecDeque;
use std::ops::Deref;

use bytes::Bytes;

/// Slots an empty queue keeps: a queue that empties with more gives the rest
/// back. One poll returns at most four bursts (256 packets by default), so a
/// face whose peer keeps up, which empties its queue at every flush, seldom
/// needs more and then reallocates nothing; a queue that grew past it was
/// waiting on its peer. What an empty queue may keep is then 8 KiB for a
/// stream face (32-byte slots) and 18 KiB for a UDP channel (72-byte slots).
pub(crate) const KEEP_SLOTS: usize = 256;

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
        if self.items.is_empty() {
            self.release();
        }
        item
    }

    /// Takes the first `n` packets off, in order (those the iterator leaves
    /// are taken off as it drops).
    pub(crate) fn drain_front(&mut self, n: usize) -> DrainFront<'_, T> {
        debug_assert!(n <= self.items.len(), "draining {n} of {} queued packets", self.items.len());
        let left = n.min(self.items.len());
        DrainFront { queue: self, left }
    }
}

impl<T> SendQueue<T> {
    /// Gives back the slots of an empty queue beyond [`KEEP_SLOTS`].
    fn release(&mut self) {
        if self.items.capacity() > KEEP_SLOTS {
            self.items.shrink_to(KEEP_SLOTS);
        }
    }
}

/// The packets [`SendQueue::drain_front`] takes off, front first: a queue
/// that they leave empty gives back its slots ([`KEEP_SLOTS`]) as the
/// iterator drops.
pub(crate) struct DrainFront<'a, T> {
    queue: &'a mut SendQueue<T>,
    left: usize,
}

impl<T> Iterator for DrainFront<'_, T> {
    type Item = T;

    fn next(&mut self) -> Option<T> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let item = self.queue.items.pop_front();
        self.queue.views = self.queue.views.min(self.queue.items.len());
        item
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl<T> Drop for DrainFront<'_, T> {
    fn drop(&mut self) {
        self.for_each(drop);
        if self.queue.items.is_empty() {
            self.queue.release();
        }
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

    /// A queue that held many packets for a peer that did not read gives their
    /// slots back once it empties, whether written one by one (a stream face)
    /// or in batches (a UDP channel); one that stays small keeps its ring.
    #[test]
    fn a_queue_that_empties_gives_back_its_slots_beyond_the_few_it_keeps() {
        let pkt = Bytes::from_static(b"a nack");
        let fill = |q: &mut SendQueue<Bytes>, n: usize| (0..n).for_each(|_| q.push_back(pkt.clone(), true));
        let mut q = SendQueue::default();
        fill(&mut q, 10_000);
        assert!(q.capacity() >= 10_000);
        while q.len() > 1 {
            q.pop_front();
        }
        assert!(q.capacity() >= 10_000, "not empty yet: the ring stays");
        q.pop_front();
        assert!(q.capacity() <= KEEP_SLOTS, "{} slots kept", q.capacity());

        fill(&mut q, 10_000);
        assert_eq!(q.drain_front(5_000).count(), 5_000);
        assert!(q.capacity() >= 10_000);
        // Taken off even if the iterator is dropped before its end.
        let mut d = q.drain_front(5_000);
        assert!(d.next().is_some());
        drop(d);
        assert!(q.is_empty() && q.capacity() <= KEEP_SLOTS, "{} slots kept", q.capacity());

        fill(&mut q, KEEP_SLOTS / 2);
        let ring = q.capacity();
        assert_eq!(q.drain_front(KEEP_SLOTS / 2).count(), KEEP_SLOTS / 2);
        fill(&mut q, KEEP_SLOTS / 2);
        assert_eq!(q.capacity(), ring, "a small queue that empties keeps its ring");
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
