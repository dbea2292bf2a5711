//! The FIB's prefix strings, stored once and out of line (Caesar §3.4): a hash-table
//! entry holds a 32-bit reference instead of the prefix, so a cache-line bucket fits
//! five entries, and the bytes are read only to confirm a 32-bit hash match.
//!
//! A record is a 16-bit byte length (a [`trajan_wire::Name`]'s value is at most
//! 65 535 bytes) followed by the encoded components, padded to four bytes. Records
//! live in chunks of at most 16 MiB that never move once full, so a reference is
//! `chunk << 22 | word offset` and addresses 16 GiB. Removal only counts the record
//! as garbage; a FIB rebuild compacts.

/// A reference to a stored prefix; 0 means none.
pub(crate) type PrefixRef = u32;

const CHUNK_SHIFT: u32 = 22;
const CHUNK_WORDS: usize = 1 << CHUNK_SHIFT;
const MAX_CHUNKS: usize = 1 << (32 - CHUNK_SHIFT);
const CHUNK_BYTES: usize = CHUNK_WORDS * 4;
const HEADER_BYTES: usize = 2;

fn record_size(len: usize) -> usize {
    (HEADER_BYTES + len).next_multiple_of(4)
}

/// The chunks of prefix records, and the bytes removed prefixes left in them,
/// which the FIB's memory report shows until a rebuild compacts them.
#[derive(Clone, Default)]
pub(crate) struct PrefixArena {
    chunks: Vec<Vec<u8>>,
    garbage_bytes: usize,
}

impl PrefixArena {
    /// Stores `bytes` (a Name's value, at most 65 535 bytes).
    /// Panics past 16 GiB of prefixes, which the 32-bit references cannot address.
    pub fn push(&mut self, bytes: &[u8]) -> PrefixRef {
        let len = u16::try_from(bytes.len()).expect("a Name's value is at most 65 535 bytes");
        let size = record_size(bytes.len());
        let fits = self.chunks.last().is_some_and(|c| c.len() + size <= CHUNK_BYTES);
        if !fits {
            assert!(self.chunks.len() < MAX_CHUNKS, "FIB prefix arena full (16 GiB)");
            // Word 0 of chunk 0 stays unused so that no record has reference 0.
            self.chunks.push(if self.chunks.is_empty() { vec![0; 4] } else { Vec::new() });
        }
        let chunk_index = self.chunks.len() - 1;
        let chunk = &mut self.chunks[chunk_index];
        let at = chunk.len();
        if chunk.capacity() - at < size {
            // Grow by a quarter (slack stays small) but never past the chunk size,
            // so a full chunk holds no slack and never reallocates again.
            crate::huge::reserve(chunk, size.max(at / 4).max(4096).min(CHUNK_BYTES - at));
        }
        chunk.extend_from_slice(&len.to_ne_bytes());
        chunk.extend_from_slice(bytes);
        chunk.resize(at + size, 0);
        ((chunk_index as u32) << CHUNK_SHIFT) | (at / 4) as u32
    }

    #[inline]
    fn record(&self, r: PrefixRef) -> &[u8] {
        &self.chunks[(r >> CHUNK_SHIFT) as usize][(r as usize & (CHUNK_WORDS - 1)) * 4..]
    }

    #[inline]
    fn len(rec: &[u8]) -> usize {
        u16::from_ne_bytes([rec[0], rec[1]]) as usize
    }

    /// The encoded components of a stored prefix.
    #[inline]
    pub fn bytes(&self, r: PrefixRef) -> &[u8] {
        let rec = self.record(r);
        &rec[HEADER_BYTES..HEADER_BYTES + Self::len(rec)]
    }

    /// Starts loading the lines of a record expected to hold `len` bytes of
    /// prefix (the looked-up name's prefix of the candidate length: the bytes
    /// compared when it matches). Records are four-byte aligned, so one of a few
    /// dozen bytes crosses into a second line about half the time; loading only
    /// the first left that second miss on the lookup's path.
    #[inline]
    pub fn prefetch(&self, r: PrefixRef, len: usize) {
        let rec = self.record(r);
        let start = rec.as_ptr() as usize;
        super::prefetch_addr(start);
        let last = start + HEADER_BYTES.saturating_add(len).min(rec.len()).saturating_sub(1);
        if last / 64 != start / 64 {
            super::prefetch_addr(last);
        }
    }

    /// Marks a record dead; its space comes back at the next rebuild.
    pub fn free(&mut self, r: PrefixRef) {
        self.garbage_bytes += record_size(Self::len(self.record(r)));
    }

    /// Bytes held, dead records included.
    pub fn heap_bytes(&self) -> usize {
        self.chunks.iter().map(|c| c.capacity()).sum::<usize>() + self.chunks.capacity() * 24
    }

    /// Bytes of dead records.
    pub fn garbage_bytes(&self) -> usize {
        self.garbage_bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_with_padding() {
        let mut a = PrefixArena::default();
        let inputs: Vec<Vec<u8>> = (0..50).map(|i| (0..i as u8).collect()).collect();
        let refs: Vec<PrefixRef> = inputs.iter().map(|b| a.push(b)).collect();
        assert!(refs.iter().all(|&r| r != 0));
        for (&r, b) in refs.iter().zip(&inputs) {
            assert_eq!(a.bytes(r), &b[..]);
        }
        a.free(refs[5]);
        assert_eq!(a.garbage_bytes(), 8, "2-byte header + 5 bytes, padded to 4");
        let longest = vec![7u8; u16::MAX as usize];
        let r = a.push(&longest);
        assert_eq!(a.bytes(r), &longest[..]);
        // A prefetch is a hint whatever length it is given, even past the
        // chunk's end, and changes nothing.
        for len in [0, 5, u16::MAX as usize, usize::MAX] {
            a.prefetch(r, len);
            a.prefetch(refs[49], len);
        }
        assert_eq!(a.bytes(r), &longest[..]);
    }

    #[test]
    fn full_chunk_starts_a_new_one_without_moving_old_records() {
        let mut a = PrefixArena::default();
        let big = vec![0xabu8; 4096];
        let first = a.push(b"first");
        let mut last = first;
        while last >> CHUNK_SHIFT == 0 {
            last = a.push(&big);
        }
        assert_eq!(last >> CHUNK_SHIFT, 1);
        assert_eq!(last & (CHUNK_WORDS as u32 - 1), 0, "records start at a chunk's first word");
        assert_eq!(a.bytes(first), b"first");
        assert_eq!(a.bytes(last), &big[..]);
    }
}
