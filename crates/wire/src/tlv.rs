//! TLV primitives: VAR-NUMBER and NonNegativeInteger coding, a zero-copy element
//! reader over [`Bytes`], and append-only writers.
//!
//! Every read is bounds-checked and every length is checked against the bytes that
//! remain, so a hostile TLV-LENGTH can never cause a large allocation or a panic.

use bytes::Bytes;

use crate::error::WireError;

/// Reads a VAR-NUMBER at `*pos`, advancing `pos`.
///
/// Non-minimal encodings are accepted (ndn-cxx accepts them too) so that Trajan is
/// no stricter than the forwarders applications were tested against.
#[inline]
pub fn read_varnum(buf: &[u8], pos: &mut usize) -> Result<u64, WireError> {
    let first = *buf.get(*pos).ok_or(WireError::Truncated)?;
    let (len, start) = match first {
        0..=252 => {
            *pos += 1;
            return Ok(first as u64);
        }
        253 => (2, *pos + 1),
        254 => (4, *pos + 1),
        255 => (8, *pos + 1),
    };
    let end = start.checked_add(len).ok_or(WireError::Truncated)?;
    let bytes = buf.get(start..end).ok_or(WireError::Truncated)?;
    let mut v = 0u64;
    for b in bytes {
        v = (v << 8) | *b as u64;
    }
    *pos = end;
    Ok(v)
}

/// How many bytes [`write_varnum`] uses for `v`.
#[inline]
pub fn varnum_len(v: u64) -> usize {
    match v {
        0..=252 => 1,
        253..=0xffff => 3,
        0x1_0000..=0xffff_ffff => 5,
        _ => 9,
    }
}

/// Appends `v` as a minimal VAR-NUMBER.
#[inline]
pub fn write_varnum(out: &mut Vec<u8>, v: u64) {
    match v {
        0..=252 => out.push(v as u8),
        253..=0xffff => {
            out.push(253);
            out.extend_from_slice(&(v as u16).to_be_bytes());
        }
        0x1_0000..=0xffff_ffff => {
            out.push(254);
            out.extend_from_slice(&(v as u32).to_be_bytes());
        }
        _ => {
            out.push(255);
            out.extend_from_slice(&v.to_be_bytes());
        }
    }
}

/// Appends a TLV header (type and length).
#[inline]
pub fn write_header(out: &mut Vec<u8>, typ: u32, len: usize) {
    write_varnum(out, typ as u64);
    write_varnum(out, len as u64);
}

/// Appends a whole TLV element.
#[inline]
pub fn write_tlv(out: &mut Vec<u8>, typ: u32, value: &[u8]) {
    write_header(out, typ, value.len());
    out.extend_from_slice(value);
}

/// Encoded size of a TLV element with a value of `len` bytes.
#[inline]
pub fn tlv_len(typ: u32, len: usize) -> usize {
    varnum_len(typ as u64) + varnum_len(len as u64) + len
}

/// The shortest NonNegativeInteger encoding of `v` (1, 2, 4 or 8 bytes), returned
/// on the stack so callers need not allocate.
#[inline]
pub fn nonneg_bytes(v: u64) -> ([u8; 8], usize) {
    let b = v.to_be_bytes();
    let n = match v {
        0..=0xff => 1,
        0x100..=0xffff => 2,
        0x1_0000..=0xffff_ffff => 4,
        _ => 8,
    };
    (b, n)
}

/// Appends a TLV whose value is a NonNegativeInteger.
#[inline]
pub fn write_nonneg(out: &mut Vec<u8>, typ: u32, v: u64) {
    let (b, n) = nonneg_bytes(v);
    write_tlv(out, typ, &b[8 - n..]);
}

/// Decodes a NonNegativeInteger value (1, 2, 4 or 8 bytes, big-endian). One
/// load per width rather than a loop over the bytes: several of these are read
/// per packet (InterestLifetime, FreshnessPeriod, ContentType, SignatureType),
/// so always inlined.
#[inline(always)]
pub fn read_nonneg(value: &[u8]) -> Result<u64, WireError> {
    match *value {
        [a] => Ok(a as u64),
        [a, b] => Ok(u16::from_be_bytes([a, b]) as u64),
        [a, b, c, d] => Ok(u32::from_be_bytes([a, b, c, d]) as u64),
        [a, b, c, d, e, f, g, h] => Ok(u64::from_be_bytes([a, b, c, d, e, f, g, h])),
        _ => Err(WireError::BadInteger),
    }
}

/// One decoded element: its type, its value and its whole encoding, all sharing the
/// receive buffer.
#[derive(Debug, Clone)]
pub struct Element {
    /// TLV-TYPE.
    pub typ: u32,
    /// TLV-VALUE.
    pub value: Bytes,
    /// The whole element, header included, for passing it on unchanged.
    pub wire: Bytes,
}

/// The type and length of the TLV header at `pos` of `buf` when both are one byte
/// (values below 253), the form almost every element has: it needs none of the
/// range and shortest-form checks of longer VAR-NUMBERs. `None` for any other form.
#[inline(always)]
pub(crate) fn short_header(buf: &[u8], pos: usize) -> Option<(u8, u8)> {
    match buf.get(pos..) {
        Some(&[t @ 1..=252, l @ 0..=252, ..]) => Some((t, l)),
        _ => None,
    }
}

/// Parses the TLV header at `*pos` of `buf` and returns (type, value range).
/// The value range is guaranteed to lie inside `buf`.
#[inline]
pub fn read_header(buf: &[u8], pos: &mut usize) -> Result<(u32, usize, usize), WireError> {
    if let Some((t, l)) = short_header(buf, *pos) {
        let start = *pos + 2;
        let end = start + l as usize;
        if end > buf.len() {
            *pos = start;
            return Err(WireError::Truncated);
        }
        *pos = end;
        return Ok((t as u32, start, end));
    }
    let typ = read_varnum(buf, pos)?;
    if typ == 0 || typ > u32::MAX as u64 {
        return Err(WireError::BadVarNumber);
    }
    let len = read_varnum(buf, pos)?;
    let remaining = (buf.len() - *pos) as u64;
    if len > remaining {
        return Err(WireError::Truncated);
    }
    let start = *pos;
    let end = start + len as usize;
    *pos = end;
    Ok((typ as u32, start, end))
}

/// Length of the complete TLV element at the start of `buf`, if `buf` holds all of it.
/// `Ok(None)` means "need more bytes" (stream framing); errors mean the stream is
/// corrupt or the element larger than `max`.
pub fn frame_len(buf: &[u8], max: usize) -> Result<Option<usize>, WireError> {
    let mut pos = 0;
    let typ = match read_varnum(buf, &mut pos) {
        Ok(t) => t,
        Err(WireError::Truncated) => return Ok(None),
        Err(e) => return Err(e),
    };
    if typ == 0 || typ > u32::MAX as u64 {
        return Err(WireError::BadVarNumber);
    }
    let len = match read_varnum(buf, &mut pos) {
        Ok(l) => l,
        Err(WireError::Truncated) => return Ok(None),
        Err(e) => return Err(e),
    };
    let total = (pos as u64).saturating_add(len);
    if total > max as u64 {
        return Err(WireError::TooLarge);
    }
    let total = total as usize;
    Ok(if buf.len() >= total { Some(total) } else { None })
}

/// Zero-copy sequential reader of the TLV elements in a buffer.
#[derive(Debug, Clone)]
pub struct TlvReader {
    buf: Bytes,
    pos: usize,
}

impl TlvReader {
    /// Reads the elements of `buf`, typically the value of an enclosing element.
    pub fn new(buf: Bytes) -> Self {
        TlvReader { buf, pos: 0 }
    }

    /// True when every element has been read.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.pos >= self.buf.len()
    }

    /// Reads the next element.
    #[inline]
    pub fn read(&mut self) -> Result<Element, WireError> {
        let begin = self.pos;
        let mut pos = self.pos;
        let (typ, start, end) = read_header(&self.buf, &mut pos)?;
        self.pos = pos;
        Ok(Element {
            typ,
            value: self.buf.slice(start..end),
            wire: self.buf.slice(begin..end),
        })
    }

    /// Reads the next element and checks its type.
    pub fn expect(&mut self, typ: u32) -> Result<Element, WireError> {
        let e = self.read()?;
        if e.typ != typ {
            return Err(WireError::UnexpectedType { expected: typ, got: e.typ });
        }
        Ok(e)
    }

    /// The bytes from the current position to the end, without consuming them.
    pub fn rest(&self) -> Bytes {
        self.buf.slice(self.pos.min(self.buf.len())..)
    }
}

/// Where one element lies in the buffer a [`SliceReader`] reads: positions are
/// offsets into that whole buffer, so a decoder can keep a part of the packet as a
/// [`Bytes`] view (`wire.slice(span.value())`) only where it needs one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    /// The element's TLV-TYPE.
    pub typ: u32,
    /// Where the element's header starts.
    pub begin: usize,
    /// Where its value starts.
    pub start: usize,
    /// Where it ends.
    pub end: usize,
}

impl Span {
    /// The value's range.
    #[inline]
    pub fn value(&self) -> std::ops::Range<usize> {
        self.start..self.end
    }

    /// The whole element's range (header and value).
    #[inline]
    pub fn whole(&self) -> std::ops::Range<usize> {
        self.begin..self.end
    }
}

/// Sequential reader of the TLV elements in a borrowed buffer. Unlike [`TlvReader`]
/// it touches no reference count per element, which is what made decoding the
/// largest cost of forwarding a packet: the hot decoders read with this and take a
/// `Bytes` view only of the parts they keep.
#[derive(Debug, Clone)]
pub struct SliceReader<'a> {
    /// The buffer, cut at the end of the region being read (positions stay absolute).
    buf: &'a [u8],
    pos: usize,
}

impl<'a> SliceReader<'a> {
    /// Reads the elements filling all of `buf`.
    #[inline]
    pub fn new(buf: &'a [u8]) -> Self {
        SliceReader { buf, pos: 0 }
    }

    /// Reads the elements inside the value of `span`, an element this reader returned.
    #[inline]
    pub fn inner(&self, span: &Span) -> SliceReader<'a> {
        SliceReader { buf: &self.buf[..span.end], pos: span.start }
    }

    /// True when every element has been read.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.pos >= self.buf.len()
    }

    /// Where the next element starts.
    #[inline]
    pub fn position(&self) -> usize {
        self.pos
    }

    /// Reads the next element.
    #[inline]
    pub fn read(&mut self) -> Result<Span, WireError> {
        let begin = self.pos;
        let (typ, start, end) = read_header(self.buf, &mut self.pos)?;
        Ok(Span { typ, begin, start, end })
    }

    /// Reads the next element and checks its type.
    #[inline]
    pub fn expect(&mut self, typ: u32) -> Result<Span, WireError> {
        let e = self.read()?;
        if e.typ != typ {
            return Err(WireError::UnexpectedType { expected: typ, got: e.typ });
        }
        Ok(e)
    }

    /// The value bytes of an element this reader returned.
    #[inline]
    pub fn value(&self, span: &Span) -> &'a [u8] {
        &self.buf[span.start..span.end]
    }

    /// Reads exactly one element of type `typ` filling the whole region.
    #[inline]
    pub fn outer(buf: &'a [u8], typ: u32) -> Result<(SliceReader<'a>, Span), WireError> {
        let mut r = SliceReader::new(buf);
        let e = r.expect(typ)?;
        if !r.is_empty() {
            return Err(WireError::Trailing);
        }
        Ok((r, e))
    }
}

/// Reads a packet of the shape nearly every Interest and Data has: elements of
/// one-byte types, in the order the format prescribes, each with a one-byte or a
/// three-byte (0xFD) TLV-LENGTH. A packet decoder tries this first and falls back
/// to its general [`SliceReader`] loop as soon as the packet has any other shape,
/// so the common case pays for one type-byte comparison per field rather than
/// for a general header parse, a dispatch and an order check (issue 3: decoding
/// was a quarter of the engine's instructions).
///
/// It never rejects a packet: `None` means "not this shape", and the general
/// decoder gives the verdict.
pub(crate) struct ShapeReader<'a> {
    /// The packet up to the end of the region being read (its enclosing
    /// element's end): positions are the packet's, and the region's end is
    /// this slice's length, so a read checks its position against one bound.
    buf: &'a [u8],
    pos: usize,
}

impl<'a> ShapeReader<'a> {
    /// The value of the element of type `typ` that fills all of `buf`, as a
    /// reader of the elements inside it.
    #[inline(always)]
    pub(crate) fn outer(buf: &'a [u8], typ: u32) -> Option<Self> {
        let mut r = ShapeReader { buf, pos: 0 };
        let value = r.take(typ)?;
        (value.end == buf.len()).then_some(ShapeReader { buf, pos: value.start })
    }

    /// A reader of the elements inside `value`, a range [`ShapeReader::take`] returned.
    #[inline(always)]
    pub(crate) fn inner(&self, value: std::ops::Range<usize>) -> Self {
        ShapeReader { buf: &self.buf[..value.end], pos: value.start }
    }

    /// The value range of the next element if its type is `typ` (below 253) and
    /// its length has one of the two short forms and fits the region; the reader
    /// then moves past it. Otherwise `None`, and the reader stays where it was.
    #[inline(always)]
    pub(crate) fn take(&mut self, typ: u32) -> Option<std::ops::Range<usize>> {
        debug_assert!(typ < 253, "a one-byte type");
        let (start, len) = match *self.buf.get(self.pos..)? {
            [t, l @ 0..=252, ..] if t as u32 == typ => (self.pos + 2, l as usize),
            [t, 253, hi, lo, ..] if t as u32 == typ => (self.pos + 4, u16::from_be_bytes([hi, lo]) as usize),
            _ => return None,
        };
        let end = start + len;
        if end > self.buf.len() {
            return None;
        }
        self.pos = end;
        Some(start..end)
    }

    /// Whether the next element is an empty one of type `typ` (below 253), a
    /// flag such as CanBePrefix; the reader then moves past it. A non-empty
    /// one is not taken, and leaves the packet to the general decoder.
    #[inline(always)]
    pub(crate) fn take_empty(&mut self, typ: u32) -> bool {
        debug_assert!(typ < 253, "a one-byte type");
        let taken = matches!(*self.buf.get(self.pos..).unwrap_or_default(), [t, 0, ..] if t as u32 == typ);
        self.pos += 2 * taken as usize;
        taken
    }

    /// The bytes of a value range this reader returned.
    #[inline(always)]
    pub(crate) fn value(&self, value: std::ops::Range<usize>) -> &'a [u8] {
        &self.buf[value]
    }

    /// True when every element of the region has been read.
    #[inline(always)]
    pub(crate) fn is_done(&self) -> bool {
        self.pos == self.buf.len()
    }
}

/// The type of the first element of `buf`, without decoding it (`None` if empty).
#[inline]
pub fn first_type(buf: &[u8]) -> Result<Option<u32>, WireError> {
    if buf.is_empty() {
        return Ok(None);
    }
    let t = read_varnum(buf, &mut 0)?;
    if t == 0 || t > u32::MAX as u64 {
        return Err(WireError::BadVarNumber);
    }
    Ok(Some(t as u32))
}

/// Decodes exactly one element of type `typ` filling all of `buf`.
pub fn decode_outer(buf: &Bytes, typ: u32) -> Result<Element, WireError> {
    let mut r = TlvReader::new(buf.clone());
    let e = r.expect(typ)?;
    if !r.is_empty() {
        return Err(WireError::Trailing);
    }
    Ok(e)
}

/// Strategies and encoders for the tests that check a packet's common-shape
/// decoder against its general one.
#[cfg(test)]
pub(crate) mod testing {
    use proptest::prelude::*;

    /// An element to encode: type, value, and whether its length takes the
    /// three-byte form whatever its size.
    pub(crate) type RawElement = (u8, Vec<u8>, bool);

    /// A Name's TLV-VALUE: mostly well-formed components, or any bytes.
    pub(crate) fn any_name_value() -> impl Strategy<Value = Vec<u8>> {
        prop_oneof![
            3 => proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..4), 0..4)
                .prop_map(|c| crate::Name::from_components(c.iter().map(|v| (8u32, v.as_slice()))).value().to_vec()),
            1 => proptest::collection::vec(any::<u8>(), 0..12),
        ]
    }

    /// A value of mostly `usual` bytes, else of any length up to 8.
    fn value(usual: usize) -> impl Strategy<Value = Vec<u8>> {
        prop_oneof![3 => Just(usual), 1 => 0usize..9].prop_flat_map(|n| proptest::collection::vec(any::<u8>(), n))
    }

    /// Elements of the types in `fields` (each with its usual value length), in
    /// that order, each absent, present or twice; sometimes one element of a
    /// type in `strays` somewhere among them; sometimes one element moved out of
    /// order.
    pub(crate) fn shaped_elements(fields: &'static [(u8, usize)], strays: &'static [u8]) -> impl Strategy<Value = Vec<RawElement>> {
        let count = prop_oneof![4 => Just(0usize), 5 => Just(1), 1 => Just(2)];
        let present = fields.iter().map(move |&(typ, usual)| (Just(typ), count.clone(), value(usual), any::<bool>())).collect::<Vec<_>>();
        let stray = proptest::option::weighted(0.25, (proptest::sample::select(strays), value(4), any::<bool>(), any::<usize>()));
        let moved = proptest::option::weighted(0.25, any::<(usize, usize)>());
        (present, stray, moved).prop_map(|(present, stray, moved)| {
            let mut out: Vec<RawElement> = Vec::new();
            for (typ, n, value, long) in present {
                out.extend(std::iter::repeat_n((typ, value, long), n));
            }
            if let Some((typ, value, long, at)) = stray {
                out.insert(at % (out.len() + 1), (typ, value, long));
            }
            if let (Some((from, to)), false) = (moved, out.is_empty()) {
                let e = out.remove(from % out.len());
                out.insert(to % (out.len() + 1), e);
            }
            out
        })
    }

    /// Mostly nothing, sometimes a stray byte to follow a packet.
    pub(crate) fn trailing() -> impl Strategy<Value = Vec<u8>> {
        prop_oneof![3 => Just(Vec::new()), 1 => proptest::collection::vec(any::<u8>(), 1)]
    }

    /// The elements, one after the other.
    pub(crate) fn encode_elements(elements: &[RawElement]) -> Vec<u8> {
        let mut out = Vec::new();
        for (typ, value, long) in elements {
            if *long {
                out.extend_from_slice(&[*typ, 253]);
                out.extend_from_slice(&(value.len() as u16).to_be_bytes());
                out.extend_from_slice(value);
            } else {
                super::write_tlv(&mut out, *typ as u32, value);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn varnum_round_trip(v in any::<u64>()) {
            let mut out = Vec::new();
            write_varnum(&mut out, v);
            prop_assert_eq!(out.len(), varnum_len(v));
            let mut pos = 0;
            prop_assert_eq!(read_varnum(&out, &mut pos).unwrap(), v);
            prop_assert_eq!(pos, out.len());
        }

        #[test]
        fn nonneg_round_trip(v in any::<u64>()) {
            let (b, n) = nonneg_bytes(v);
            prop_assert_eq!(read_nonneg(&b[8 - n..]).unwrap(), v);
        }

        /// Every width reads as the big-endian number it holds, wider than
        /// needed or not; only 1, 2, 4 and 8 bytes are integers.
        #[test]
        fn nonneg_reads_any_width_big_endian(bytes in proptest::collection::vec(any::<u8>(), 0..10)) {
            let want = bytes.iter().fold(0u64, |acc, b| (acc << 8) | *b as u64);
            match bytes.len() {
                1 | 2 | 4 | 8 => prop_assert_eq!(read_nonneg(&bytes), Ok(want)),
                _ => prop_assert_eq!(read_nonneg(&bytes), Err(WireError::BadInteger)),
            }
        }

        #[test]
        fn reader_never_panics(data in proptest::collection::vec(any::<u8>(), 0..64)) {
            let mut r = TlvReader::new(Bytes::from(data.clone()));
            for _ in 0..64 { if r.read().is_err() || r.is_empty() { break; } }
            let _ = frame_len(&data, 8800);
        }
    }

    proptest! {
        /// The borrowed reader sees exactly the elements, types and bytes the
        /// `Bytes` reader sees, errors included, at every nesting level.
        #[test]
        fn slice_reader_agrees_with_tlv_reader(data in proptest::collection::vec(any::<u8>(), 0..64)) {
            let bytes = Bytes::from(data.clone());
            let mut a = TlvReader::new(bytes.clone());
            let mut b = SliceReader::new(&data);
            for _ in 0..64 {
                prop_assert_eq!(a.is_empty(), b.is_empty());
                if a.is_empty() { break; }
                match (a.read(), b.read()) {
                    (Ok(x), Ok(y)) => {
                        prop_assert_eq!(x.typ, y.typ);
                        prop_assert_eq!(&x.value[..], b.value(&y));
                        prop_assert_eq!(&x.wire[..], &data[y.whole()]);
                        let (mut ia, mut ib) = (TlvReader::new(x.value.clone()), b.inner(&y));
                        while !ia.is_empty() {
                            match (ia.read(), ib.read()) {
                                (Ok(p), Ok(q)) => prop_assert_eq!(&p.wire[..], &data[q.whole()]),
                                (Err(p), Err(q)) => { prop_assert_eq!(p, q); break; }
                                (p, q) => prop_assert!(false, "{:?} vs {:?}", p, q),
                            }
                        }
                    }
                    (Err(x), Err(y)) => { prop_assert_eq!(x, y); break; }
                    (x, y) => prop_assert!(false, "{:?} vs {:?}", x, y),
                }
            }
        }
    }

    proptest! {
        /// `read_header`'s one-byte fast path gives what reading both VAR-NUMBERs
        /// gives, errors and position included, at any position.
        #[test]
        fn read_header_agrees_with_varnum_reading(data in proptest::collection::vec(any::<u8>(), 0..8), at in 0usize..10) {
            let by_varnum = |pos: &mut usize| -> Result<(u32, usize, usize), WireError> {
                let typ = read_varnum(&data, pos)?;
                if typ == 0 || typ > u32::MAX as u64 {
                    return Err(WireError::BadVarNumber);
                }
                let len = read_varnum(&data, pos)?;
                if len > (data.len() - *pos) as u64 {
                    return Err(WireError::Truncated);
                }
                let start = *pos;
                *pos += len as usize;
                Ok((typ as u32, start, *pos))
            };
            let (mut p, mut q) = (at, at);
            prop_assert_eq!(read_header(&data, &mut p), by_varnum(&mut q));
            prop_assert_eq!(p, q);
        }
    }

    #[test]
    fn length_beyond_buffer_is_truncated_not_alloc() {
        // type 5, length 0xffffffff with no value
        let buf = [5u8, 254, 0xff, 0xff, 0xff, 0xff];
        let mut pos = 0;
        assert_eq!(read_header(&buf, &mut pos), Err(WireError::Truncated));
        assert_eq!(frame_len(&buf, 8800), Err(WireError::TooLarge));
    }

    #[test]
    fn frame_len_waits_for_more() {
        assert_eq!(frame_len(&[5], 8800), Ok(None));
        assert_eq!(frame_len(&[5, 3, 1], 8800), Ok(None));
        assert_eq!(frame_len(&[5, 1, 1, 9], 8800), Ok(Some(3)));
        assert_eq!(frame_len(&[0, 1, 1], 8800), Err(WireError::BadVarNumber));
    }
}
