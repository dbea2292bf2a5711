//! TLV framing of a byte stream (TCP and Unix faces): a fixed-size receive buffer
//! that yields complete top-level elements as they arrive, however the peer split
//! its writes.
//!
//! The buffer never grows: a frame can be at most [`MAX_FRAME_SIZE`] bytes and the
//! buffer holds two of them, so a hostile peer costs a bounded amount of memory and
//! a corrupt or oversized header is reported instead of being waited for.
//!
//! Nor is it there when not needed: it is allocated by the first read, and freed
//! by the poll loop's sweep ([`FrameBuffer::sweep`]) once the face has received
//! nothing for a whole sweep interval with nothing buffered, so an idle connection
//! costs no 18 KB buffer, while a face that keeps receiving
//! keeps its buffer and allocates nothing per read.

use std::io::{self, Read};
use std::mem;

use bytes::Bytes;
use trajan_wire::tlv::frame_len;
use trajan_wire::WireError;

use crate::MAX_FRAME_SIZE;

/// Receive buffer size: room for one maximal frame still incomplete plus as much
/// again for the next read, so a read always makes progress after compaction.
const RX_BUFFER: usize = 2 * MAX_FRAME_SIZE;

/// Stream receive state of one face.
pub(crate) struct FrameBuffer {
    /// [`RX_BUFFER`] bytes while the face receives; empty (no allocation)
    /// before its first read and after a sweep found it idle and empty.
    buf: Box<[u8]>,
    start: usize,
    end: usize,
    /// A read happened since the last [`sweep`](Self::sweep).
    read_since_sweep: bool,
}

impl FrameBuffer {
    /// An empty buffer, which allocates its [`RX_BUFFER`] bytes on the first
    /// read: each frame is copied out whole, and a partial one moves to its front.
    pub(crate) fn new() -> Self {
        FrameBuffer { buf: Box::default(), start: 0, end: 0, read_since_sweep: false }
    }

    /// Frees the buffer if nothing was read since the last call and nothing is
    /// buffered: the poll loop calls it every sweep interval (a second at most),
    /// so an idle face holds no buffer, and a face that receives more often than
    /// that keeps it and allocates nothing per read. Bytes of a partial frame
    /// keep it (they are the peer's, and the next read completes them).
    pub(crate) fn sweep(&mut self) {
        if !mem::take(&mut self.read_since_sweep) && self.start == self.end && !self.buf.is_empty() {
            self.buf = Box::default();
            self.start = 0;
            self.end = 0;
        }
    }

    /// The next complete frame, copied out so that a small packet kept in the
    /// content store does not pin the whole receive buffer. `Ok(None)` means more
    /// bytes are needed; an error means the stream can never be resynchronised.
    pub(crate) fn next_frame(&mut self) -> Result<Option<Bytes>, WireError> {
        let pending = &self.buf[self.start..self.end];
        match frame_len(pending, MAX_FRAME_SIZE)? {
            Some(n) => {
                let frame = Bytes::copy_from_slice(&pending[..n]);
                self.start += n;
                if self.start == self.end {
                    self.start = 0;
                    self.end = 0;
                }
                Ok(Some(frame))
            }
            None => Ok(None),
        }
    }

    /// Reads once from `src` into the free space. Call only after
    /// [`next_frame`](Self::next_frame) returned `Ok(None)`, so the buffered bytes
    /// are less than one frame and compaction leaves room. Returns 0 at end of stream.
    /// A buffer allocated for a read that brings nothing (the read the poll loop
    /// makes as a connection is accepted, for bytes that came before it) is
    /// freed at once.
    pub(crate) fn read_from(&mut self, src: &mut impl Read) -> io::Result<usize> {
        let fresh = self.buf.is_empty();
        if fresh {
            self.buf = vec![0; RX_BUFFER].into_boxed_slice();
        }
        if self.start > 0 {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        debug_assert!(self.end < self.buf.len(), "read_from called with a complete frame still buffered");
        let n = match src.read(&mut self.buf[self.end..]) {
            Ok(n) if n > 0 => n,
            other => {
                if fresh {
                    self.buf = Box::default();
                }
                return other;
            }
        };
        self.read_since_sweep = true;
        self.end += n;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use trajan_wire::tlv::write_tlv;

    fn tlv(typ: u32, len: usize) -> Vec<u8> {
        let mut v = Vec::new();
        write_tlv(&mut v, typ, &vec![0xab; len]);
        v
    }

    /// Feeds `chunks` one read at a time and collects every frame produced.
    fn feed(chunks: &[&[u8]]) -> (Vec<Bytes>, Option<WireError>) {
        let mut fb = FrameBuffer::new();
        let mut frames = Vec::new();
        for chunk in chunks {
            let mut src: &[u8] = chunk;
            while !src.is_empty() {
                fb.read_from(&mut src).unwrap();
                loop {
                    match fb.next_frame() {
                        Ok(Some(f)) => frames.push(f),
                        Ok(None) => break,
                        Err(e) => return (frames, Some(e)),
                    }
                }
            }
        }
        (frames, None)
    }

    #[test]
    fn one_byte_at_a_time() {
        let pkt = tlv(5, 300);
        let bytes: Vec<&[u8]> = pkt.chunks(1).collect();
        let (frames, err) = feed(&bytes);
        assert_eq!(err, None);
        assert_eq!(frames, vec![Bytes::from(pkt)]);
    }

    #[test]
    fn several_frames_in_one_read_and_a_split_tail() {
        let a = tlv(5, 10);
        let b = tlv(6, 2000);
        let c = tlv(100, MAX_FRAME_SIZE - 4);
        let mut all = [a.clone(), b.clone(), c.clone()].concat();
        let tail = all.split_off(a.len() + b.len() + 7);
        let (frames, err) = feed(&[&all, &tail]);
        assert_eq!(err, None);
        assert_eq!(frames, vec![Bytes::from(a), Bytes::from(b), Bytes::from(c)]);
    }

    #[test]
    fn maximal_frames_back_to_back_never_stall() {
        let big = tlv(6, MAX_FRAME_SIZE - 4);
        assert_eq!(big.len(), MAX_FRAME_SIZE);
        let stream = big.repeat(5);
        let chunks: Vec<&[u8]> = stream.chunks(3001).collect();
        let (frames, err) = feed(&chunks);
        assert_eq!(err, None);
        assert_eq!(frames.len(), 5);
    }

    /// A socket with nothing to read.
    struct WouldBlock;

    impl Read for WouldBlock {
        fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
            Err(io::ErrorKind::WouldBlock.into())
        }
    }

    /// A face that has not received yet, or received nothing for a sweep
    /// interval with nothing buffered, holds no buffer; one that receives, or
    /// waits for the rest of a frame, keeps it.
    #[test]
    fn only_a_face_that_receives_or_holds_part_of_a_frame_keeps_its_buffer() {
        let mut fb = FrameBuffer::new();
        assert_eq!(fb.buf.len(), 0, "allocated before anything arrived");
        assert_eq!(fb.next_frame(), Ok(None));
        // A read that brings nothing (as at accept) keeps nothing.
        assert_eq!(fb.read_from(&mut io::empty()).unwrap(), 0);
        let mut blocked = WouldBlock;
        assert_eq!(fb.read_from(&mut blocked).unwrap_err().kind(), io::ErrorKind::WouldBlock);
        assert_eq!(fb.buf.len(), 0, "allocated for reads that brought nothing");
        let pkt = tlv(5, 300);
        fb.read_from(&mut &pkt[..]).unwrap();
        assert_eq!(fb.buf.len(), RX_BUFFER);
        assert_eq!(fb.next_frame(), Ok(Some(Bytes::from(pkt.clone()))));
        fb.sweep();
        assert_eq!(fb.buf.len(), RX_BUFFER, "read since the last sweep: kept");
        fb.read_from(&mut &pkt[..]).unwrap();
        assert!(fb.next_frame().unwrap().is_some());
        fb.sweep();
        assert_eq!(fb.buf.len(), RX_BUFFER, "still receiving: kept");
        fb.sweep();
        assert_eq!(fb.buf.len(), 0, "idle for a sweep interval and empty: freed");
        // Part of a frame keeps the buffer however long the rest takes.
        fb.read_from(&mut &pkt[..100]).unwrap();
        assert_eq!(fb.next_frame(), Ok(None));
        fb.sweep();
        fb.sweep();
        assert_eq!(fb.buf.len(), RX_BUFFER);
        fb.read_from(&mut &pkt[100..]).unwrap();
        assert_eq!(fb.next_frame(), Ok(Some(Bytes::from(pkt))));
        fb.sweep();
        fb.sweep();
        assert_eq!(fb.buf.len(), 0);
    }

    #[test]
    fn oversize_header_is_an_error_before_the_body_arrives() {
        let header = [6u8, 253, 0xff, 0xff];
        let (frames, err) = feed(&[&header]);
        assert!(frames.is_empty());
        assert_eq!(err, Some(WireError::TooLarge));
    }

    #[test]
    fn zero_type_is_corrupt() {
        let (frames, err) = feed(&[&tlv(5, 1), &[0, 1, 1]]);
        assert_eq!(frames.len(), 1);
        assert_eq!(err, Some(WireError::BadVarNumber));
    }
}
