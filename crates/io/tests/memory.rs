//! What faces cost in memory, counted by the allocator: this test binary's
//! global allocator keeps, per thread, the bytes allocated and not yet freed,
//! so each test measures what its own `Io` (which runs on the test's thread)
//! holds, whatever the other tests do meanwhile. Every wait is bounded by a
//! count of polls, and nothing asserts how long anything took.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use bytes::Bytes;
use trajan_io::{FaceId, Io, IoConfig, IoEvent, MAX_FRAME_SIZE, QUEUED_PACKET_OVERHEAD};
use trajan_wire::tlv::write_tlv;
use trajan_wire::types::DATA;
use trajan_wire::{Interest, Name};

/// The system allocator, counting what each thread holds.
struct Counting;

thread_local! {
    /// Bytes this thread allocated, less those it freed.
    static LIVE: Cell<isize> = const { Cell::new(0) };
}

fn count(bytes: isize) {
    // Not at all once the thread's storage is gone, as it exits.
    let _ = LIVE.try_with(|live| live.set(live.get() + bytes));
}

// SAFETY: every call is passed to the system allocator unchanged; counting
// touches only a thread-local cell, which allocates nothing.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            count(layout.size() as isize);
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            count(layout.size() as isize);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        count(-(layout.size() as isize));
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            count(new_size as isize - layout.size() as isize);
        }
        p
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Bytes the current thread holds on the heap.
fn live() -> isize {
    LIVE.with(Cell::get)
}

fn config() -> IoConfig {
    IoConfig {
        udp_listen: vec!["127.0.0.1:0".parse().unwrap()],
        tcp_listen: vec!["127.0.0.1:0".parse().unwrap()],
        unix_path: None,
        hash_ports: None,
        ..IoConfig::default()
    }
}

fn tcp_addr(io: &Io) -> SocketAddr {
    io.local_addrs().1[0]
}

/// Polls until `done` holds (at most 500 polls).
fn poll_until(io: &mut Io, events: &mut Vec<IoEvent>, mut done: impl FnMut(&Io, &[IoEvent]) -> bool) {
    for _ in 0..500 {
        io.poll(Some(Duration::from_millis(20)), events).unwrap();
        if done(io, events) {
            return;
        }
    }
    panic!("condition not reached; {} events so far", events.len());
}

fn face_ups(events: &[IoEvent]) -> Vec<FaceId> {
    events.iter().filter_map(|e| if let IoEvent::FaceUp(info) = e { Some(info.id) } else { None }).collect()
}

/// A 33-byte TLV element: the size of the Nacks a router queues for a peer
/// sending Interests it has no route for.
fn small_packet() -> Bytes {
    let mut v = Vec::new();
    write_tlv(&mut v, DATA, &[7; 31]);
    assert_eq!(v.len(), 33);
    Bytes::from(v)
}

/// A peer that reads nothing has small packets queued for it until its queue
/// bound is reached: what they take on the heap, their slots in the queue
/// included, stays within that bound, which a count of their bytes alone would
/// exceed twice over. Once the peer reads them all, the queue gives back what
/// it grew to.
#[test]
fn small_packets_queued_for_a_peer_take_no_more_memory_than_the_queue_bound() {
    let per_face = 1 << 20;
    let mut io = Io::new(IoConfig { stream_queue_bytes: per_face, ..config() }).unwrap();
    let mut events = Vec::with_capacity(64);
    let mut peer = TcpStream::connect(tcp_addr(&io)).unwrap();
    poll_until(&mut io, &mut events, |_, ev| !face_ups(ev).is_empty());
    let face = face_ups(&events)[0];
    let pkt = small_packet();
    let mut buf = vec![0u8; 64 << 10];
    io.poll(Some(Duration::ZERO), &mut events).unwrap();
    events.clear();

    let before = live();
    let mut sent = 0;
    while io.counters(face).unwrap().dropped_out == 0 && sent < 1_000_000 {
        // Each packet its own allocation, as the copy of a waiting one is.
        io.send(face, Bytes::copy_from_slice(&pkt));
        sent += 1;
    }
    let held = live() - before;
    assert!(io.queued_bytes() <= per_face, "{} queued", io.queued_bytes());
    let queued = sent - 1;
    assert_eq!(io.queued_bytes(), queued * (pkt.len() + QUEUED_PACKET_OVERHEAD));
    assert!(held <= per_face as isize, "{queued} packets of {} bytes take {held} bytes for a bound of {per_face}", pkt.len());

    // The peer reads everything; the emptied queue keeps a few slots at most.
    peer.set_nonblocking(true).unwrap();
    let mut received = 0;
    for _ in 0..2000 {
        io.flush();
        io.poll(Some(Duration::from_millis(1)), &mut events).unwrap();
        events.clear();
        match peer.read(&mut buf) {
            Ok(n) => received += n,
            Err(e) if e.kind() == ErrorKind::WouldBlock => {}
            Err(e) => panic!("{e}"),
        }
        if received == queued * pkt.len() {
            break;
        }
    }
    assert_eq!(received, queued * pkt.len());
    assert_eq!(io.queued_bytes(), 0);
    let kept = live() - before;
    assert!(kept <= 16 << 10, "the emptied queue holds {kept} bytes");
}

/// Connections that send nothing cost no receive buffer, and one that did
/// send frees its buffer once it has been idle for a sweep or two.
#[test]
fn idle_connections_hold_no_receive_buffer() {
    const PEERS: usize = 100;
    // Sweeps every 10 ms (a quarter of the stall timeout, at least 10 ms).
    let mut io = Io::new(IoConfig { stall_timeout: Duration::from_millis(40), ..config() }).unwrap();
    let mut events = Vec::with_capacity(4 * PEERS);
    let mut peers = Vec::with_capacity(PEERS);
    io.poll(Some(Duration::ZERO), &mut events).unwrap();

    let before = live();
    for _ in 0..PEERS {
        peers.push(TcpStream::connect(tcp_addr(&io)).unwrap());
    }
    poll_until(&mut io, &mut events, |_, ev| face_ups(ev).len() == PEERS);
    let per_face = (live() - before) / PEERS as isize;
    assert!(per_face < 4096, "an idle connection costs {per_face} bytes");
    let idle = live();

    // Each sends one Interest: each face reads, into a buffer of its own.
    let pkt = Interest::new("/idle/after/this".parse::<Name>().unwrap()).encode();
    for peer in &mut peers {
        peer.write_all(&pkt).unwrap();
    }
    let packets = |ev: &[IoEvent]| ev.iter().filter(|e| matches!(e, IoEvent::Packet { .. })).count();
    poll_until(&mut io, &mut events, |_, ev| packets(ev) == PEERS);
    events.clear();
    // Then nothing more: the sweeps give the buffers back.
    poll_until(&mut io, &mut events, |_, _| live() - idle < (PEERS * MAX_FRAME_SIZE / 4) as isize);
    assert!(live() - idle < (PEERS * 1024) as isize, "{} bytes more than before the Interests", live() - idle);
}
