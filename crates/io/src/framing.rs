//! TLV framing of a byte stream (TCP and Unix faces): a fixed-size receive buffer
//! that yields complete top-level elements as they arrive, however the peer split
//! its writes.
//!
//! The buffer never grows: a frame can be at most [`MAX_FRAME_SIZE`] bytes and the
//! buffer holds two of them, so a hostile peer costs a bounded amount of memory and
//! a corrupt or oversized header is reported instead of being waited for.

use std::io::{self, Read};

use bytes::Bytes;
use trajan_wire::tlv::frame_len;
use trajan_wire::WireError;

use crate::MAX_FRAME_SIZE;

/// Receive buffer size: room for one maximal frame still incomplete plus as much
/// again for the next read, so a read always makes progress after compaction.
const RX_BUFFER: usize = 2 * MAX_FRAME_SIZE;

/// Stream receive state of one face.
pub(crate) struct FrameBuffer {
    buf: Box<[u8]>,
    start: usize,
    end: usize,
}

impl FrameBuffer {
    /// An empty buffer of [`RX_BUFFER`] bytes, allocated once per stream face:
    /// each frame is copied out whole, and a partial one moves to its front.
    pub(crate) fn new() -> Self {
        FrameBuffer { buf: vec![0; RX_BUFFER].into_boxed_slice(), start: 0, end: 0 }
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
    pub(crate) fn read_from(&mut self, src: &mut impl Read) -> io::Result<usize> {
        if self.start > 0 {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        debug_assert!(self.end < self.buf.len(), "read_from called with a complete frame still buffered");
        let n = src.read(&mut self.buf[self.end..])?;
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
