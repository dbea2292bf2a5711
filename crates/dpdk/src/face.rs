//! A DPDK face: one queue pair of a port plus a link encapsulation. Frames in,
//! NDN packets out (a Data a slice of its mbuf, anything else a copy), and NDN
//! packets back into frames.

use bytes::Bytes;
use trajan_io::encap::{icn_to_ndn, ndn_to_icn, Encap, Link};
use trajan_io::FaceCounters;
use trajan_wire::lp::network_packet;
use trajan_wire::types::DATA;

use crate::{Mbuf, Queue};

/// True when `pkt` is a Data, bare or in an unfragmented LpPacket's Fragment (or
/// the first piece of a fragmented one, which reassembly copies anyway).
fn carries_data(pkt: &[u8]) -> bool {
    network_packet(pkt).is_some_and(|(typ, _)| typ == DATA)
}

/// One queue pair speaking one encapsulation.
#[derive(Debug)]
pub struct Face {
    queue: Queue,
    link: Link,
    rx: Vec<Mbuf>,
    /// Frames and bytes in and out; `dropped_in` counts frames not for this face or
    /// malformed, `dropped_out` packets that found no mbuf, no room in the port, or no
    /// form in the encapsulation.
    pub counters: FaceCounters,
}

impl Face {
    /// A face on `queue` framing its packets as `link` says, with its counters at zero.
    pub fn new(queue: Queue, link: Link) -> Face {
        Face { queue, link, rx: Vec::with_capacity(crate::BURST), counters: FaceCounters::default() }
    }

    /// Registers the calling thread with EAL for this face's queue (see
    /// [`Queue::register_thread`]).
    pub fn register_thread(&self) {
        self.queue.register_thread();
    }

    /// Receives one burst and appends each frame's NDN packet to `out`; returns the
    /// number of frames read (0: the queue was empty). Bad frames are counted and
    /// dropped.
    ///
    /// A Data is a view of its mbuf, which the content store may keep: the pool
    /// is sized for that (`dpdk.mbufs`). Anything else (an Interest, a Nack, a
    /// fragment) is copied out and its mbuf freed at once: a pending Interest
    /// lives in the PIT for up to its lifetime, and a million of them holding
    /// their mbufs would leave the ports none to receive into.
    pub fn recv(&mut self, out: &mut Vec<Bytes>) -> usize {
        let n = self.queue.rx_burst(&mut self.rx);
        for m in self.rx.drain(..) {
            let frame = m.into_bytes();
            self.counters.in_packets += 1;
            self.counters.in_bytes += frame.len() as u64;
            let pkt = match self.link.payload(&frame) {
                Ok(r) if self.link.encap == Encap::Icn4 => icn_to_ndn(&frame.slice(r)).ok(),
                Ok(r) if carries_data(&frame[r.clone()]) => Some(frame.slice(r)),
                Ok(r) => Some(Bytes::copy_from_slice(&frame[r])),
                Err(_) => None,
            };
            match pkt {
                Some(p) => out.push(p),
                None => self.counters.dropped_in += 1,
            }
        }
        n
    }

    /// Queues `pkt` (an NDN packet or LpPacket) in a frame: the headers, then the
    /// packet copied once into a fresh mbuf. Sent at the next full burst or flush.
    pub fn send(&mut self, pkt: &Bytes) {
        let icn;
        let payload: &[u8] = if self.link.encap == Encap::Icn4 {
            match ndn_to_icn(pkt) {
                Ok(p) => {
                    icn = p.encode();
                    &icn
                }
                Err(_) => {
                    self.counters.dropped_out += 1;
                    return;
                }
            }
        } else {
            pkt
        };
        let hl = self.link.header_len();
        let len = hl + payload.len();
        let link = self.link;
        let queued = self.queue.send(len, |frame| {
            frame[hl..].copy_from_slice(payload);
            link.write_headers(frame);
        });
        if queued {
            self.counters.out_packets += 1;
            self.counters.out_bytes += len as u64;
        } else {
            self.counters.dropped_out += 1;
        }
    }

    /// Sends what is queued.
    pub fn flush(&mut self) {
        self.queue.flush();
        self.counters.dropped_out += self.queue.take_dropped();
    }
}
