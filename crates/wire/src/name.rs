//! NDN names: a zero-copy view over the TLV-VALUE of a Name element, with the end
//! offsets of its first components computed once at decode time so that prefixes,
//! component access and per-prefix hashing never re-parse a name of up to
//! [`INLINE_COMPONENTS`] components (nearly every real name). Past those, offsets
//! are found by walking the (already validated) component headers: a long name
//! costs a little time per access, and never a heap allocation.

use std::fmt;
use std::hash::{Hash, Hasher};
use std::str::FromStr;

use bytes::Bytes;

use crate::error::WireError;
use crate::MAX_PACKET_SIZE;
use crate::tlv::{nonneg_bytes, read_header, read_nonneg, short_header, varnum_len, write_header, write_tlv};
use crate::types::*;

/// The most components a name may have. NDN sets no limit, but a bound keeps every
/// per-component loop finite; 8800 bytes allow at most 4400 empty components, far
/// above any real name.
pub const MAX_COMPONENTS: usize = 4400;

/// Components whose end offsets a [`Name`] keeps (inline: a name never allocates a
/// table), as many as keep a name in one 64-byte cache line. 0.3 % of the
/// Umbrella top host names have more, up to 34.
pub const INLINE_COMPONENTS: usize = 13;

/// Validates the name component at `*pos` of `buf` (a Name's TLV-VALUE, at most
/// [`MAX_PACKET_SIZE`] bytes) and returns its end offset, advancing `pos` there: any
/// component, long headers and digest types included. (The names of ordinary
/// components take [`Name::set_ordinary_ends`] instead.)
#[inline(always)]
fn component_end(buf: &[u8], pos: &mut usize) -> Result<u16, WireError> {
    let (typ, len) = match short_header(buf, *pos) {
        // A one-byte type and length is the only encoding of those values.
        Some((t, l)) => {
            *pos += 2 + l as usize;
            if *pos > buf.len() {
                return Err(WireError::Truncated);
            }
            (t as u32, l as usize)
        }
        None => {
            let begin = *pos;
            let (typ, start, end) = read_header(buf, pos)?;
            if typ > 0xffff {
                return Err(WireError::BadValue(NAME));
            }
            // Equality and hashing are over the encoded bytes, so a component must
            // have exactly one encoding: its header in the shortest form.
            if start - begin != varnum_len(typ as u64) + varnum_len((end - start) as u64) {
                return Err(WireError::BadVarNumber);
            }
            (typ, end - start)
        }
    };
    if matches!(typ, IMPLICIT_SHA256_DIGEST | PARAMETERS_SHA256_DIGEST) && len != 32 {
        return Err(WireError::BadValue(NAME));
    }
    // `pos` is at most `buf.len()`, which the caller bounds by MAX_PACKET_SIZE.
    Ok(*pos as u16)
}

/// The end offset of the component that starts at `pos` of a validated name's
/// TLV-VALUE. Validation makes an error impossible; were there one, the walk ends
/// at the buffer's end rather than panicking. Needed only past the offset table
/// (rare), so kept out of line: [`ComponentEnds::next`] stays small enough to inline.
#[cold]
#[inline(never)]
fn next_end(buf: &[u8], pos: usize) -> usize {
    if let Some((_, l)) = short_header(buf, pos) {
        return (pos + 2 + l as usize).min(buf.len());
    }
    let mut at = pos;
    read_header(buf, &mut at).map_or(buf.len(), |(_, _, end)| end)
}

/// A name: the encoded components (TLV-VALUE of the Name element), the component
/// count, and the end offsets of the first [`INLINE_COMPONENTS`] components.
/// Equality and hashing are over the encoded bytes, which is exact name equality
/// because component TLVs are self-delimiting.
///
/// The encoded components lie in a buffer the name holds ([`Name::buffer`]):
/// a name decoded from a packet holds the whole packet, not a view of its own
/// bytes, so the packet and its name are one reference to the receive buffer,
/// not two. Every view made or dropped is an atomic reference count change,
/// and two more of those pairs per exchange cost the engine's worst case 8 %
/// (docs/PERFORMANCE.md).
#[derive(Default, Clone)]
pub struct Name {
    /// Holds the encoded components at `start .. start + vlen`.
    buf: Bytes,
    start: u16,
    vlen: u16,
    /// End offsets, from the first component's start.
    ends: [u16; INLINE_COMPONENTS],
    len: u16,
}

/// [`Name::component_ends`]: a plain struct rather than a chain of adapters, so
/// that its `next` inlines into a per-component loop (the FIB hashes every
/// prefix of every Interest name; the adapter chain was a call per component).
pub struct ComponentEnds<'a> {
    name: &'a Name,
    next: usize,
    /// The count of components visited: `next` stops there.
    stop: usize,
    pos: usize,
}

impl Iterator for ComponentEnds<'_> {
    type Item = usize;

    #[inline]
    fn next(&mut self) -> Option<usize> {
        let i = self.next;
        if i >= self.stop {
            return None;
        }
        self.pos = match self.name.ends.get(i) {
            Some(&end) => end as usize,
            None => next_end(self.name.value(), self.pos),
        };
        self.next = i + 1;
        Some(self.pos)
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = self.stop - self.next;
        (left, Some(left))
    }
}

impl ExactSizeIterator for ComponentEnds<'_> {}

/// One name component, borrowed from its [`Name`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Component<'a> {
    /// TLV-TYPE, e.g. GenericNameComponent or a typed (segment, version) component.
    pub typ: u32,
    /// TLV-VALUE, borrowed from the name's buffer.
    pub value: &'a [u8],
}

impl Name {
    /// The empty name `/`.
    pub fn root() -> Self {
        Name::default()
    }

    /// Parses the TLV-VALUE of a Name element, validating every component.
    ///
    /// Always inlined, like four table calls made once per packet: on the
    /// forwarding path the calls cost ≈ 100 instructions per exchange, and inlining
    /// them gained 3–5 % in the worst case (docs/PERFORMANCE.md).
    #[inline(always)]
    pub fn from_value(value: Bytes) -> Result<Self, WireError> {
        let mut name = Name::default();
        name.set_value(value)?;
        Ok(name)
    }

    /// [`Name::from_value`] into `self`, in place: a packet the engine decodes
    /// into a slot it keeps is never copied, and a copy read right after
    /// the component loop wrote the end offsets one by one stalls the pipeline
    /// (store forwarding). On an error `self` becomes the root name.
    #[inline(always)]
    pub fn set_value(&mut self, value: Bytes) -> Result<(), WireError> {
        let len = value.len();
        self.set_within(value, 0..len)
    }

    /// Parses the TLV-VALUE of a Name element that lies at `range` in `buf`
    /// (a packet), keeping `buf` itself: see [`Name::buffer`].
    #[inline(always)]
    pub fn from_within(buf: Bytes, range: std::ops::Range<usize>) -> Result<Self, WireError> {
        let mut name = Name::default();
        name.set_within(buf, range)?;
        Ok(name)
    }

    /// [`Name::from_within`] into `self`, in place (as [`Name::set_value`]).
    /// A range outside `buf` is an error, [`WireError::Truncated`], and one
    /// ending past its first 64 KiB, whose offsets a name cannot hold,
    /// [`WireError::TooLarge`] (a packet is at most [`MAX_PACKET_SIZE`]
    /// bytes): a name that is made keeps `buf` itself, which a decoder
    /// relies on to hand its packet back.
    #[inline(always)]
    pub fn set_within(&mut self, buf: Bytes, range: std::ops::Range<usize>) -> Result<(), WireError> {
        self.set_within_marked(buf, range).map(drop)
    }

    /// [`Name::set_within`], also saying whether the name may hold a digest
    /// component: false when the fast pass took it ([`Name::set_ordinary_ends`]:
    /// none of its components is a digest), true for any other name. The
    /// Interest decoders must refuse a ParametersSha256DigestComponent that
    /// does not match the Interest's parameters, and this lets them look for
    /// one only in the rare names that may have it: the pass that validated
    /// the name already read every component's type.
    #[inline(always)]
    pub(crate) fn set_within_marked(&mut self, buf: Bytes, range: std::ops::Range<usize>) -> Result<bool, WireError> {
        let ends = match buf.get(range.clone()) {
            Some(_) if range.end > u16::MAX as usize => Err(WireError::TooLarge),
            Some(value) => self.set_ends(value),
            None => Err(WireError::Truncated),
        };
        match ends {
            Ok((len, marked)) => {
                self.len = len;
                // Both fit: `range.end` was checked above.
                (self.start, self.vlen) = (range.start as u16, range.len() as u16);
                self.buf = buf;
                Ok(marked)
            }
            Err(e) => {
                *self = Name::root();
                Err(e)
            }
        }
    }

    /// Validates every component of `buf` (a Name's TLV-VALUE), records the end
    /// offsets of the first ones in `self.ends`, and returns the count. A name
    /// longer than a packet may be ([`MAX_PACKET_SIZE`]) is [`WireError::TooLarge`]:
    /// so any decoded name, extended by a digest or a few more components,
    /// stays far inside the 64 KiB a name's offsets can hold.
    /// The flag is [`Name::set_within_marked`]'s: whether the full pass ran.
    #[inline(always)]
    fn set_ends(&mut self, buf: &[u8]) -> Result<(u16, bool), WireError> {
        if buf.len() > MAX_PACKET_SIZE {
            return Err(WireError::TooLarge);
        }
        match self.set_ordinary_ends(buf) {
            Some(n) => Ok((n, false)),
            None => self.set_checked_ends(buf).map(|n| (n, true)),
        }
    }

    /// [`Name::set_ends`] for any name: every component validated on its own.
    #[inline(always)]
    fn set_checked_ends(&mut self, buf: &[u8]) -> Result<u16, WireError> {
        let mut pos = 0;
        let mut n = 0;
        while pos < buf.len() && n < INLINE_COMPONENTS {
            self.ends[n] = component_end(buf, &mut pos)?;
            n += 1;
        }
        while pos < buf.len() {
            component_end(buf, &mut pos)?;
            if n >= MAX_COMPONENTS {
                return Err(WireError::TooLarge);
            }
            n += 1;
        }
        Ok(n as u16)
    }

    /// The fast pass of [`Name::set_ends`], for a name of at most
    /// [`INLINE_COMPONENTS`] components that each have a one-byte header and a
    /// type other than the two digests (every name the benchmarks and nearly
    /// every real one): their count, or `None` for any other name, valid or not,
    /// which the full pass then validates. One test for the whole name after the
    /// loop replaces a branch per header check, which took 25 instructions per
    /// component (docs/PERFORMANCE.md).
    #[inline(always)]
    fn set_ordinary_ends(&mut self, buf: &[u8]) -> Option<u16> {
        let (mut pos, mut n, mut odd) = (0, 0, false);
        while pos + 1 < buf.len() && n < INLINE_COMPONENTS {
            let (t, l) = (buf[pos], buf[pos + 1]);
            odd |= !(3..=252).contains(&t) | (l > 252);
            pos += 2 + l as usize;
            // Fits in a u16 unless `pos` ran past the end, which sends the name
            // to the full pass, which rewrites the offsets.
            self.ends[n] = pos as u16;
            n += 1;
        }
        (!odd && pos == buf.len()).then_some(n as u16)
    }

    /// Parses a whole Name element (type and length included).
    pub fn from_wire(wire: &Bytes) -> Result<Self, WireError> {
        let e = crate::tlv::decode_outer(wire, NAME)?;
        Name::from_value(e.value)
    }

    /// Builds a name from (type, value) components.
    pub fn from_components<'a>(comps: impl IntoIterator<Item = (u32, &'a [u8])>) -> Self {
        let mut buf = Vec::new();
        let mut name = Name::default();
        for (typ, v) in comps {
            write_tlv(&mut buf, typ, v);
            name.push_end(buf.len());
        }
        name.own(buf);
        name
    }

    /// Makes `value`, whose components the offsets already count, this name's
    /// bytes. Names are at most 64 KiB (a packet is under 9 KB): longer
    /// bytes are a caller's bug.
    fn own(&mut self, value: Vec<u8>) {
        self.vlen = u16::try_from(value.len()).expect("a name under 64 KiB");
        self.start = 0;
        self.buf = Bytes::from(value);
    }

    /// Counts one more component, ending at `end`.
    fn push_end(&mut self, end: usize) {
        if let Some(slot) = self.ends.get_mut(self.len as usize) {
            *slot = end as u16;
        }
        self.len += 1;
    }

    /// Number of components.
    #[inline]
    pub fn len(&self) -> usize {
        self.len as usize
    }

    /// True for the root name `/`.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The end offset of component `i` (< `len()`): from the table, or past it by
    /// walking the headers after the last offset kept.
    #[inline]
    fn end(&self, i: usize) -> usize {
        debug_assert!(i < self.len());
        match self.ends.get(i) {
            Some(&e) => e as usize,
            None => self.end_past_table(i),
        }
    }

    /// [`Name::end`] past the table. The last component ends where the name
    /// does, without a walk: the whole name as a prefix is what the tables
    /// hash and look up for every cached packet (the content store once per
    /// CanBePrefix Interest its Data satisfies), and walking a name of 4,000
    /// components for it each time cost 15 µs per such Interest.
    #[cold]
    fn end_past_table(&self, i: usize) -> usize {
        if i + 1 == self.len() {
            return self.vlen as usize;
        }
        #[cfg(test)]
        tests::WALKED.with(|w| w.set(w.get() + i + 1 - INLINE_COMPONENTS));
        let mut pos = self.ends[INLINE_COMPONENTS - 1] as usize;
        for _ in INLINE_COMPONENTS..=i {
            pos = next_end(self.value(), pos);
        }
        pos
    }

    /// The end offset of every component, in order, each found once (a walk past
    /// the table continues from the previous end): for callers that hash every
    /// prefix or visit every component.
    #[inline]
    pub fn component_ends(&self) -> ComponentEnds<'_> {
        self.prefix_ends(self.len())
    }

    /// [`Name::component_ends`] of the first `n` components (all of them if
    /// fewer): the prefixes a FIB lookup bounded by its longest prefix hashes.
    #[inline]
    pub fn prefix_ends(&self, n: usize) -> ComponentEnds<'_> {
        ComponentEnds { name: self, next: 0, stop: n.min(self.len()), pos: 0 }
    }

    /// The encoded components (TLV-VALUE of the Name element).
    #[inline(always)]
    pub fn value(&self) -> &[u8] {
        let range = self.range_in_buffer();
        debug_assert!(range.end <= self.buf.len());
        // SAFETY: every constructor sets `start` and `vlen` together with
        // `buf` to a range inside it (`set_within` checks it, the others take
        // a prefix of a name's range or all of their own bytes), and nothing
        // changes one without the others. Checked indexing here cost ≈ 70
        // instructions per exchange: the engine reads names' bytes a few
        // dozen times per packet.
        unsafe { self.buf.get_unchecked(range) }
    }

    /// [`Name::value`] as a view of its own (an atomic reference count more),
    /// for the tests, which build names from other names' bytes.
    #[cfg(test)]
    pub fn value_bytes(&self) -> Bytes {
        self.buf.slice(self.range_in_buffer())
    }

    /// The buffer the encoded components lie in: for a name decoded from a
    /// packet ([`Name::from_within`]), the whole packet, which a decoder that
    /// gives its packet to the name hands back this way; for any other name,
    /// its own bytes.
    #[inline]
    pub fn buffer(&self) -> &Bytes {
        &self.buf
    }

    /// Takes [`Name::buffer`], leaving the root name.
    #[inline]
    pub fn take_buffer(&mut self) -> Bytes {
        std::mem::take(self).buf
    }

    /// Makes the name a view of `buf`, which holds the same encoded components
    /// from `start` on (the name as encoded in another packet, such as a
    /// re-encoding of the one it was decoded from), so that a holder of both
    /// the name and that packet keeps one buffer, not two: a PIT entry that
    /// sends a modified Interest upstream kept the received packet alive
    /// through its name besides. The end offsets count from the first
    /// component, so they stay and nothing is parsed again; the bytes are
    /// compared instead. Refused (other bytes there, a range outside `buf`
    /// or one ending past its first 64 KiB, where a name's offsets cannot
    /// reach), it gives `buf` back and leaves the name as it was: a caller
    /// may keep the buffer otherwise, and needs no copy of it meanwhile.
    pub fn move_to(&mut self, buf: Bytes, start: usize) -> Result<(), Bytes> {
        let Some(end) = start.checked_add(self.vlen as usize).filter(|&end| end <= u16::MAX as usize) else { return Err(buf) };
        if buf.get(start..end) != Some(self.value()) {
            return Err(buf);
        }
        // Fits: `end` was checked above.
        self.start = start as u16;
        self.buf = buf;
        Ok(())
    }

    /// Where the encoded components lie in [`Name::buffer`].
    #[inline(always)]
    pub fn range_in_buffer(&self) -> std::ops::Range<usize> {
        self.start as usize..self.start as usize + self.vlen as usize
    }

    /// The encoded bytes of the first `n` components: the exact-match key of that prefix.
    #[inline]
    pub fn prefix_value(&self, n: usize) -> &[u8] {
        assert!(n <= self.len(), "prefix of {n} components of a {}-component name", self.len());
        let end = if n == 0 { 0 } else { self.end(n - 1) };
        &self.value()[..end]
    }

    /// The byte offset where component `i` ends, for callers that hash prefixes
    /// incrementally. Panics if `i >= len()`, like slice indexing.
    #[inline]
    pub fn component_end(&self, i: usize) -> usize {
        assert!(i < self.len(), "component {i} of a {}-component name", self.len());
        self.end(i)
    }

    /// The encoded bytes (type, length and value) of component `i`. Panics if
    /// `i >= len()`, like slice indexing.
    #[inline]
    pub fn component_wire(&self, i: usize) -> &[u8] {
        let start = if i == 0 { 0 } else { self.component_end(i - 1) };
        &self.value()[start..self.component_end(i)]
    }

    /// Component `i`. Panics if `i >= len()`, like slice indexing.
    pub fn get(&self, i: usize) -> Component<'_> {
        component_of(self.component_wire(i))
    }

    /// The last component, if any.
    pub fn last(&self) -> Option<Component<'_>> {
        (!self.is_empty()).then(|| self.get(self.len() - 1))
    }

    /// Iterates over the components.
    pub fn components(&self) -> impl Iterator<Item = Component<'_>> + '_ {
        let mut start = 0;
        self.component_ends().map(move |end| {
            let w = &self.value()[start..end];
            start = end;
            component_of(w)
        })
    }

    /// The first `n` components as a name sharing this name's buffer.
    pub fn prefix(&self, n: usize) -> Name {
        let n = n.min(self.len());
        let end = if n == 0 { 0 } else { self.end(n - 1) };
        let mut ends = [0u16; INLINE_COMPONENTS];
        let kept = n.min(INLINE_COMPONENTS);
        ends[..kept].copy_from_slice(&self.ends[..kept]);
        Name { buf: self.buf.clone(), start: self.start, vlen: end as u16, ends, len: n as u16 }
    }

    /// True if `self` is a prefix of (or equal to) `other`.
    ///
    /// The engine asks this of every packet (is it under `/localhost`, under
    /// `/localhop`?), and nearly always the answer is no: where `other`'s first
    /// `self.len()` components end, read from its offset table, already settles
    /// most of those without a byte comparison (a `memcmp` call).
    #[inline]
    pub fn is_prefix_of(&self, other: &Name) -> bool {
        match self.len() {
            0 => true,
            n => n <= other.len() && other.end(n - 1) == self.vlen as usize && other.value().starts_with(self.value()),
        }
    }

    /// A new name with one more component.
    pub fn append(&self, typ: u32, value: &[u8]) -> Name {
        let mut buf = Vec::with_capacity(self.value().len() + value.len() + 6);
        buf.extend_from_slice(self.value());
        write_tlv(&mut buf, typ, value);
        let mut name = Name { ends: self.ends, len: self.len, ..Name::default() };
        name.push_end(buf.len());
        name.own(buf);
        name
    }

    /// Appends a generic component.
    pub fn append_generic(&self, value: &[u8]) -> Name {
        self.append(GENERIC_COMPONENT, value)
    }

    /// Appends a component holding a NonNegativeInteger (segment, version, ...).
    pub fn append_number(&self, typ: u32, v: u64) -> Name {
        let (b, n) = nonneg_bytes(v);
        self.append(typ, &b[8 - n..])
    }

    /// The segment number, if the last component is a segment component.
    pub fn segment(&self) -> Option<u64> {
        self.last().filter(|c| c.typ == SEGMENT_COMPONENT).and_then(|c| read_nonneg(c.value).ok())
    }

    /// The implicit SHA-256 digest in the last component, if present.
    ///
    /// Asked of every Interest the engine forwards, so it reads two header
    /// bytes instead of parsing the last component: validation made a digest
    /// component exactly 34 bytes (one type byte, one length byte of 32, the
    /// digest), so only the two bytes 34 from the end can start one. Most names
    /// are told apart there, before their last component is located (which
    /// cost as much again).
    #[inline]
    pub fn implicit_digest(&self) -> Option<&[u8]> {
        let value = self.value();
        let start = value.len().checked_sub(34)?;
        if u32::from(value[start]) != IMPLICIT_SHA256_DIGEST || value[start + 1] != 32 {
            return None;
        }
        // Those bytes may lie inside an earlier component: they start the
        // digest only where the component before the last one ends.
        let n = self.len();
        let last = if n >= 2 { self.end(n - 2) } else { 0 };
        (last == start).then(|| &value[start + 2..])
    }

    /// Appends the whole Name element to `out`.
    pub fn encode_into(&self, out: &mut Vec<u8>) {
        write_header(out, NAME, self.value().len());
        out.extend_from_slice(self.value());
    }

    /// The whole Name element.
    pub fn to_wire(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.value().len() + 4);
        self.encode_into(&mut out);
        out
    }
}

/// The type and value of one validated component's encoding.
fn component_of(w: &[u8]) -> Component<'_> {
    let mut pos = 0;
    // Validated at construction, so this cannot fail.
    let (typ, s, e) = read_header(w, &mut pos).expect("validated name component");
    Component { typ, value: &w[s..e] }
}

impl PartialEq for Name {
    fn eq(&self, other: &Self) -> bool {
        self.value() == other.value()
    }
}
impl Eq for Name {}

impl Hash for Name {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.value().hash(state)
    }
}

fn is_unreserved(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~')
}

fn write_escaped(f: &mut fmt::Formatter<'_>, v: &[u8]) -> fmt::Result {
    if v.iter().all(|b| *b == b'.') {
        f.write_str("...")?;
    }
    for b in v {
        if is_unreserved(*b) {
            write!(f, "{}", *b as char)?;
        } else {
            write!(f, "%{:02X}", b)?;
        }
    }
    Ok(())
}

impl fmt::Display for Component<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Only the shortest encoding may use the `seg=N` form: URI parsing produces
        // that encoding, so any other one must be printed as raw bytes to survive.
        let number = || read_nonneg(self.value).ok().filter(|n| nonneg_bytes(*n).1 == self.value.len());
        match self.typ {
            GENERIC_COMPONENT => write_escaped(f, self.value),
            IMPLICIT_SHA256_DIGEST | PARAMETERS_SHA256_DIGEST => {
                f.write_str(if self.typ == IMPLICIT_SHA256_DIGEST { "sha256digest=" } else { "params-sha256=" })?;
                self.value.iter().try_for_each(|b| write!(f, "{:02x}", b))
            }
            SEGMENT_COMPONENT | VERSION_COMPONENT | TIMESTAMP_COMPONENT | SEQUENCE_NUM_COMPONENT
            | BYTE_OFFSET_COMPONENT
                if number().is_some() =>
            {
                let label = match self.typ {
                    SEGMENT_COMPONENT => "seg",
                    VERSION_COMPONENT => "v",
                    TIMESTAMP_COMPONENT => "t",
                    SEQUENCE_NUM_COMPONENT => "seq",
                    _ => "off",
                };
                write!(f, "{}={}", label, number().unwrap_or_default())
            }
            t => {
                write!(f, "{}=", t)?;
                write_escaped(f, self.value)
            }
        }
    }
}

impl fmt::Display for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_empty() {
            return f.write_str("/");
        }
        for c in self.components() {
            f.write_str("/")?;
            write!(f, "{}", c)?;
        }
        Ok(())
    }
}

impl fmt::Debug for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Name({})", self)
    }
}

fn unescape(s: &str) -> Result<Vec<u8>, WireError> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let escape = WireError::BadUri("% must be followed by two hexadecimal digits");
            let hex = s.get(i + 1..i + 3).ok_or(escape)?;
            out.push(u8::from_str_radix(hex, 16).map_err(|_| escape)?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    Ok(out)
}

fn parse_hex(s: &str) -> Result<Vec<u8>, WireError> {
    // ASCII only, so that the two-byte slices below fall on character boundaries.
    let bad = WireError::BadUri("a digest is written as 64 hexadecimal digits");
    if s.len() % 2 == 1 || !s.is_ascii() {
        return Err(bad);
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).map_err(|_| bad))
        .collect()
}

fn parse_component(s: &str) -> Result<(u32, Vec<u8>), WireError> {
    if let Some((label, rest)) = s.split_once('=') {
        let number = |typ: u32| -> Result<(u32, Vec<u8>), WireError> {
            let v: u64 = rest.parse().map_err(|_| WireError::BadUri("seg=, v=, t=, seq= and off= take a decimal number below 2^64"))?;
            let (b, n) = nonneg_bytes(v);
            Ok((typ, b[8 - n..].to_vec()))
        };
        match label {
            "seg" => return number(SEGMENT_COMPONENT),
            "v" => return number(VERSION_COMPONENT),
            "t" => return number(TIMESTAMP_COMPONENT),
            "seq" => return number(SEQUENCE_NUM_COMPONENT),
            "off" => return number(BYTE_OFFSET_COMPONENT),
            "sha256digest" | "params-sha256" => {
                let v = parse_hex(rest)?;
                if v.len() != 32 {
                    return Err(WireError::BadUri("a digest is written as 64 hexadecimal digits"));
                }
                let t = if label == "sha256digest" { IMPLICIT_SHA256_DIGEST } else { PARAMETERS_SHA256_DIGEST };
                return Ok((t, v));
            }
            _ => {
                if let Ok(t) = label.parse::<u32>() {
                    if t == 0 || t > 0xffff {
                        return Err(WireError::BadUri("a component's type number is 1 to 65535"));
                    }
                    let v = unescape_dots(rest)?;
                    if matches!(t, IMPLICIT_SHA256_DIGEST | PARAMETERS_SHA256_DIGEST) && v.len() != 32 {
                        return Err(WireError::BadUri("a digest component (type 1 or 2) holds 32 bytes"));
                    }
                    return Ok((t, v));
                }
            }
        }
    }
    Ok((GENERIC_COMPONENT, unescape_dots(s)?))
}

/// Unescapes a component value, applying the URI rule that a value of only periods
/// is written with three extra periods (so `...` is the empty component).
fn unescape_dots(s: &str) -> Result<Vec<u8>, WireError> {
    let v = unescape(s)?;
    if !v.is_empty() && v.iter().all(|b| *b == b'.') {
        if v.len() < 3 {
            return Err(WireError::BadUri("a component of only periods is written with three more (... is the empty component)"));
        }
        return Ok(v[3..].to_vec());
    }
    Ok(v)
}

impl FromStr for Name {
    type Err = WireError;

    /// Parses an NDN URI such as `/example/data/seg=3` (an optional `ndn:` scheme is accepted).
    fn from_str(s: &str) -> Result<Self, WireError> {
        let s = s.strip_prefix("ndn:").unwrap_or(s);
        let mut buf = Vec::new();
        for part in s.split('/').filter(|p| !p.is_empty()) {
            let (typ, v) = parse_component(part)?;
            write_tlv(&mut buf, typ, &v);
            if buf.len() > MAX_PACKET_SIZE {
                return Err(WireError::TooLarge);
            }
        }
        // The decoder's checks (digest lengths, component count) apply to URIs too,
        // so a name typed by a user is one that a peer would accept on the wire.
        Name::from_value(Bytes::from(buf)).map_err(|e| if e == WireError::TooLarge { e } else { WireError::BadUri("not a name the NDN decoder accepts") })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    thread_local! {
        /// Components this thread walked past names' offset tables.
        pub(super) static WALKED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    }

    /// Where a long name's last component ends, the whole name as a prefix,
    /// is found without walking its components; a component before it still
    /// is, and found right.
    #[test]
    fn a_long_name_ends_where_its_last_component_does_without_a_walk() {
        let name = "/...".repeat(4000).parse::<Name>().unwrap();
        let within = Name::from_within(Bytes::from([&[7, 7][..], name.value()].concat()), 2..2 + name.value().len()).unwrap();
        for n in [&name, &within] {
            WALKED.with(|w| w.set(0));
            assert_eq!(n.prefix_value(n.len()), name.value());
            assert_eq!(n.component_end(n.len() - 1), name.value().len());
            assert_eq!(n.prefix(n.len()), name);
            assert!(name.is_prefix_of(n) && n.is_prefix_of(&name));
            assert_eq!(WALKED.with(|w| w.get()), 0);
            assert_eq!(n.component_end(n.len() - 2), name.value().len() - 2);
            assert_eq!(WALKED.with(|w| w.get()), n.len() - 1 - INLINE_COMPONENTS);
        }
    }

    #[test]
    fn uri_round_trip() {
        for uri in ["/", "/a/b/c", "/a%20b/seg=3/v=7", "/%00%FF/...", "/8=x/200=y", "/..../a"] {
            let n: Name = uri.parse().unwrap();
            let again: Name = n.to_string().parse().unwrap();
            assert_eq!(n, again, "{uri}");
        }
        let n: Name = "/a/b/seg=3".parse().unwrap();
        assert_eq!(n.to_string(), "/a/b/seg=3");
        assert_eq!(n.segment(), Some(3));
        assert_eq!(n.len(), 3);
        assert_eq!(n.prefix(2).to_string(), "/a/b");
        assert!(n.prefix(2).is_prefix_of(&n));
        assert!(!n.is_prefix_of(&n.prefix(2)));
    }

    #[test]
    fn a_name_decoded_in_its_packet_holds_the_packet() {
        let name = Name::from_components([(GENERIC_COMPONENT, &b"a"[..]), (GENERIC_COMPONENT, &b"bc"[..])]);
        let mut packet = vec![5, 9, 7, 7];
        packet.extend_from_slice(name.value());
        packet.extend_from_slice(&[10, 4, 0, 0, 0, 1]);
        let packet = Bytes::from(packet);
        let inside = Name::from_within(packet.clone(), 4..4 + name.value().len()).unwrap();
        assert_eq!(inside, name);
        assert_eq!(inside.value(), name.value());
        assert_eq!(*inside.buffer(), packet);
        assert_eq!(inside.range_in_buffer(), 4..11);
        assert_eq!(inside.value_bytes(), name.value_bytes());
        // Prefixes and components read the name's bytes, not the packet's.
        assert_eq!(inside.prefix(1), name.prefix(1));
        assert_eq!(inside.prefix(1).buffer(), &packet, "a prefix shares the buffer");
        assert_eq!(inside.get(1).value, b"bc");
        assert_eq!(inside.to_string(), "/a/bc");
        assert!(inside.prefix(1).is_prefix_of(&name) && name.prefix(1).is_prefix_of(&inside));
        let mut taken = inside.clone();
        assert_eq!(taken.take_buffer(), packet);
        assert_eq!(taken, Name::root());
        assert!(taken.buffer().is_empty());
    }

    #[test]
    fn a_name_moves_to_another_buffer_holding_its_bytes_or_stays() {
        let first = Bytes::from_static(&[5, 9, 7, 7, 8, 1, b'a', 8, 2, b'b', b'c']);
        let mut n = Name::from_within(first.clone(), 4..11).unwrap();
        let kept = n.clone();
        let second = Bytes::from_static(&[0, 8, 1, b'a', 8, 2, b'b', b'c', 0xff]);
        n.move_to(second.clone(), 1).unwrap();
        assert_eq!(n, kept);
        assert_eq!(*n.buffer(), second, "the name holds the other buffer, not its first");
        assert_eq!((n.range_in_buffer(), n.get(1).value, n.component_end(0)), (1..8, &b"bc"[..], 3));
        let mut far = vec![0u8; 70_000];
        far.extend_from_slice(kept.value());
        for (buf, at) in [
            (second.clone(), 0),
            (Bytes::from_static(&[8, 1, b'a', 8, 2, b'b', b'x']), 0),
            (second.clone(), 3),
            (second.clone(), usize::MAX),
            (Bytes::from(far), 70_000),
        ] {
            assert_eq!(n.move_to(buf.clone(), at), Err(buf), "given back");
            assert_eq!((&n, n.buffer()), (&kept, &second), "a refused move leaves the name as it was");
        }
    }

    #[test]
    fn a_range_outside_the_buffer_is_an_error() {
        let packet = Bytes::from_static(&[8, 1, b'a']);
        assert_eq!(Name::from_within(packet.clone(), 0..4).err(), Some(WireError::Truncated));
        assert_eq!(Name::from_within(packet.clone(), 1..3).err(), Some(WireError::Truncated), "a component cut short");
        let mut n = Name::from_within(packet.clone(), 0..3).unwrap();
        assert_eq!(n.set_within(packet.clone(), 2..5), Err(WireError::Truncated));
        assert_eq!(n, Name::root(), "a failed parse leaves the root name");
        assert!(n.buffer().is_empty());
        // Past the offsets a name can hold: no packet puts a name there.
        let mut far = vec![0u8; 70_000];
        far.extend_from_slice(&[8, 1, b'z']);
        let far = Bytes::from(far);
        assert_eq!(Name::from_within(far.clone(), 70_000..70_003).err(), Some(WireError::TooLarge));
        assert_eq!(Name::from_within(far, 70_000..70_004).err(), Some(WireError::Truncated));
    }

    #[test]
    fn a_name_longer_than_a_packet_is_too_large() {
        let mut value = Vec::new();
        while value.len() <= MAX_PACKET_SIZE {
            write_tlv(&mut value, GENERIC_COMPONENT, &[b'x'; 200]);
        }
        assert_eq!(Name::from_value(Bytes::from(value)), Err(WireError::TooLarge));
    }

    #[test]
    fn digest_header_bytes_inside_another_component_are_no_digest() {
        // A component's value holding the bytes of a digest header exactly 34
        // bytes from the name's end: only a component starting there counts.
        let mut value = [0u8; 40];
        value[6..8].copy_from_slice(&[IMPLICIT_SHA256_DIGEST as u8, 32]);
        let inside = Name::from_components([(GENERIC_COMPONENT, &value[..])]);
        assert_eq!(inside.value()[inside.value().len() - 34..][..2], [IMPLICIT_SHA256_DIGEST as u8, 32]);
        assert_eq!(inside.implicit_digest(), None);
        // The digest alone, and after that same component.
        let digest = [7u8; 32];
        let alone = Name::from_components([(IMPLICIT_SHA256_DIGEST, &digest[..])]);
        assert_eq!(alone.implicit_digest(), Some(&digest[..]));
        assert_eq!(inside.append(IMPLICIT_SHA256_DIGEST, &digest).implicit_digest(), Some(&digest[..]));
        // A last component as long as a digest but of another type.
        assert_eq!(Name::from_components([(GENERIC_COMPONENT, &digest[..])]).implicit_digest(), None);
    }

    #[test]
    fn rejects_bad_components() {
        assert!(Name::from_value(Bytes::from_static(&[8, 5, 1])).is_err());
        assert!(Name::from_value(Bytes::from_static(&[1, 2, 0, 0])).is_err());
        // Type 0, a header cut short after a good component, a long value cut short.
        assert!(Name::from_value(Bytes::from_static(&[0, 1, b'a'])).is_err());
        assert!(Name::from_value(Bytes::from_static(&[8, 1, b'a', 8])).is_err());
        assert!(Name::from_value(Bytes::from_static(&[8, 1, b'a', 8, 0xfd, 1, 0, b'b'])).is_err());
        assert!("/a/%zz".parse::<Name>().is_err());
    }

    #[test]
    fn non_minimal_numbers_keep_their_bytes_through_uri() {
        // seg=0 encoded on two bytes is a different name from seg=0 on one byte.
        let n = Name::from_value(Bytes::from_static(&[0x32, 2, 0, 0])).unwrap();
        assert_eq!(n.to_string(), "/50=%00%00");
        assert_eq!(n.to_string().parse::<Name>().unwrap(), n);
    }

    #[test]
    fn component_headers_must_be_shortest_form() {
        // Type 44 written on three bytes would be a second encoding of `/44=x`.
        assert_eq!(Name::from_value(Bytes::from_static(&[0xfd, 0, 44, 1, b'x'])), Err(WireError::BadVarNumber));
        // Length 1 written on three bytes, likewise.
        assert_eq!(Name::from_value(Bytes::from_static(&[8, 0xfd, 0, 1, b'x'])), Err(WireError::BadVarNumber));
        assert_eq!(Name::from_value(Bytes::from_static(&[44, 1, b'x'])).unwrap().to_string(), "/44=x");
    }

    #[test]
    fn non_ascii_digest_uri_is_an_error_not_a_panic() {
        assert!(matches!("/sha256digest=a\u{e9}b".parse::<Name>(), Err(WireError::BadUri(_))));
    }

    /// A URI that does not parse says which rule it broke.
    #[test]
    fn a_bad_uri_says_what_is_wrong() {
        for (uri, says) in [
            ("/a%zz", "% must be followed by two hexadecimal digits"),
            ("/a%4", "% must be followed by two hexadecimal digits"),
            ("/seg=x", "take a decimal number"),
            ("/v=18446744073709551616", "take a decimal number"),
            ("/sha256digest=abc", "64 hexadecimal digits"),
            ("/params-sha256=00", "64 hexadecimal digits"),
            ("/0=x", "type number is 1 to 65535"),
            ("/65536=x", "type number is 1 to 65535"),
            ("/1=abc", "holds 32 bytes"),
            ("/a/..", "three more"),
        ] {
            let e = uri.parse::<Name>().unwrap_err();
            assert!(matches!(e, WireError::BadUri(_)) && e.to_string().contains(says), "{uri}: {e}");
        }
    }

    #[test]
    fn uri_parser_accepts_only_names_the_decoder_accepts() {
        // A digest-typed component by number must still hold 32 bytes.
        assert!("/1=abc".parse::<Name>().is_err());
        assert!("/2=abc".parse::<Name>().is_err());
        // Empty components (two bytes each) fill a packet-sized name.
        let too_many = "/...".repeat(MAX_COMPONENTS + 1);
        assert_eq!(too_many.parse::<Name>(), Err(WireError::TooLarge));
        assert_eq!("/...".repeat(MAX_COMPONENTS).parse::<Name>().unwrap().len(), MAX_COMPONENTS);
        // So do 2,933 three-byte ones; one more is too large.
        assert_eq!("/a".repeat(2933).parse::<Name>().unwrap().value().len(), 8799);
        assert_eq!("/a".repeat(2934).parse::<Name>(), Err(WireError::TooLarge));
    }

    fn arb_name() -> impl Strategy<Value = Name> {
        proptest::collection::vec((prop_oneof![Just(8u32), Just(0x32), 9u32..300], proptest::collection::vec(any::<u8>(), 0..12)), 0..8)
            .prop_map(|cs| Name::from_components(cs.iter().map(|(t, v)| (*t, v.as_slice()))))
    }

    /// Bytes shaped like a name's TLV-VALUE, right or wrong: headers of types
    /// around the digest and one-byte bounds, lengths that fit or overrun,
    /// long-form lengths, and digests of the right length or not.
    fn name_like_bytes() -> impl Strategy<Value = Vec<u8>> {
        let header = prop_oneof![Just(0u8), Just(1), Just(2), Just(3), Just(8), Just(252), Just(253), Just(255)];
        let piece = (header, prop_oneof![0u8..6, Just(32), Just(252), Just(253), Just(255)], proptest::collection::vec(any::<u8>(), 0..8), any::<bool>());
        proptest::collection::vec(piece, 0..2 * INLINE_COMPONENTS).prop_map(|pieces| {
            let mut v = Vec::new();
            for (t, l, value, fit) in pieces {
                v.extend_from_slice(&[t, l]);
                let n = if fit && l < 253 { l as usize } else { value.len() };
                v.extend(value.iter().copied().cycle().take(n));
            }
            v
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4096))]

        /// The fast pass over ordinary names decides as the full validation
        /// does, with the same components, for any bytes.
        #[test]
        fn fast_pass_agrees_with_full_validation(bytes in name_like_bytes()) {
            let mut full = Name::root();
            let checked = full.set_checked_ends(&bytes);
            match Name::from_value(Bytes::from(bytes.clone())) {
                Ok(n) => {
                    prop_assert_eq!(checked, Ok(n.len() as u16));
                    full.len = n.len() as u16;
                    full.own(bytes);
                    prop_assert_eq!(n.component_ends().collect::<Vec<_>>(), full.component_ends().collect::<Vec<_>>());
                }
                Err(e) => prop_assert_eq!(checked, Err(e)),
            }
        }
    }

    proptest! {
        /// A name parsed in place over another (longer or shorter, past the
        /// inline table or not) is the name parsed afresh, components included;
        /// a failed parse leaves the root name.
        #[test]
        fn set_value_over_another_name(first in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..3), 0..20),
                                       second in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..3), 0..20)) {
            let encode = |c: &Vec<Vec<u8>>| Name::from_components(c.iter().map(|v| (8u32, v.as_slice()))).value_bytes();
            let mut n = Name::from_value(encode(&first)).unwrap();
            n.set_value(encode(&second)).unwrap();
            let fresh = Name::from_value(encode(&second)).unwrap();
            prop_assert_eq!(n.len(), fresh.len());
            prop_assert_eq!(n.component_ends().collect::<Vec<_>>(), fresh.component_ends().collect::<Vec<_>>());
            prop_assert_eq!(&n, &fresh);
            let mut bad = encode(&first).to_vec();
            bad.push(8);
            prop_assert!(n.set_value(Bytes::from(bad)).is_err());
            prop_assert_eq!((n.len(), n.value().len()), (0, 0));
        }

        /// Names on both sides of the inline table's size decode to the same
        /// components, and a truncated last component is an error wherever it falls.
        #[test]
        fn decoding_finds_every_component(comps in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..4), 0..40)) {
            let n = Name::from_components(comps.iter().map(|c| (8u32, c.as_slice())));
            let d = Name::from_value(n.value_bytes()).unwrap();
            prop_assert_eq!(d.len(), comps.len());
            for (i, c) in comps.iter().enumerate() {
                prop_assert_eq!(d.get(i).value, c.as_slice());
            }
            if !n.value().is_empty() {
                let cut = n.value_bytes().slice(..n.value().len() - 1);
                prop_assert_eq!(Name::from_value(cut).err(), Some(WireError::Truncated));
            }
        }

        /// Every accessor agrees with a name built from the first components,
        /// for names shorter and longer than the offsets a name keeps (past them,
        /// offsets come from walking headers), with multi-byte headers mixed in.
        #[test]
        fn accessors_agree_past_the_kept_offsets(comps in proptest::collection::vec((prop_oneof![Just(8u32), Just(300u32)], proptest::collection::vec(any::<u8>(), 0..3)), 0..3 * INLINE_COMPONENTS)) {
            let parts: Vec<(u32, &[u8])> = comps.iter().map(|(t, v)| (*t, v.as_slice())).collect();
            let d = Name::from_value(Name::from_components(parts.iter().copied()).value_bytes()).unwrap();
            prop_assert_eq!(d.len(), parts.len());
            let ends: Vec<usize> = d.component_ends().collect();
            prop_assert_eq!(ends.len(), parts.len());
            prop_assert_eq!(d.component_ends().len(), parts.len());
            for k in 0..=parts.len() + 1 {
                prop_assert_eq!(d.prefix_ends(k).collect::<Vec<_>>(), &ends[..k.min(parts.len())]);
            }
            for k in 0..=parts.len() {
                let head = Name::from_components(parts[..k].iter().copied());
                prop_assert_eq!(d.prefix_value(k), head.value());
                let p = d.prefix(k);
                prop_assert_eq!(&p, &head);
                prop_assert_eq!(p.len(), k);
                if k > 0 {
                    prop_assert_eq!(d.component_end(k - 1), head.value().len());
                    prop_assert_eq!(ends[k - 1], head.value().len());
                    prop_assert_eq!(d.get(k - 1), Component { typ: parts[k - 1].0, value: parts[k - 1].1 });
                    prop_assert_eq!(p.last(), Some(d.get(k - 1)));
                }
            }
            let longer = d.append(8, b"x");
            prop_assert_eq!(longer.len(), d.len() + 1);
            prop_assert_eq!(longer.get(d.len()).value, b"x");
            prop_assert_eq!(longer.prefix(d.len()), d.clone());
            prop_assert_eq!(d.components().map(|c| (c.typ, c.value)).collect::<Vec<_>>(), parts);
        }

        /// `is_prefix_of` is the component-wise definition, for names on both
        /// sides of the offset table's size, whether the candidate is a true
        /// prefix, a near miss (one component changed or lengthened) or unrelated.
        #[test]
        fn is_prefix_of_compares_components(
            comps in proptest::collection::vec((prop_oneof![Just(8u32), Just(300u32)], proptest::collection::vec(any::<u8>(), 0..3)), 0..2 * INLINE_COMPONENTS),
            k in 0usize..2 * INLINE_COMPONENTS + 2,
            change in 0u8..4,
            other in arb_name(),
        ) {
            let parts: Vec<(u32, &[u8])> = comps.iter().map(|(t, v)| (*t, v.as_slice())).collect();
            let name = Name::from_value(Name::from_components(parts.iter().copied()).value_bytes()).unwrap();
            let k = k.min(parts.len());
            let mut head: Vec<(u32, Vec<u8>)> = parts[..k].iter().map(|(t, v)| (*t, v.to_vec())).collect();
            match (change, head.last_mut()) {
                (1, Some(last)) => last.1.push(0xff),
                (2, Some(last)) => last.0 ^= 1,
                _ => {}
            }
            let candidates = [
                Name::from_components(head.iter().map(|(t, v)| (*t, v.as_slice()))),
                other,
            ];
            for c in candidates {
                let by_components = c.len() <= name.len() && (0..c.len()).all(|i| c.get(i) == name.get(i));
                prop_assert_eq!(c.is_prefix_of(&name), by_components, "{} of {}", c, name);
            }
        }

        /// A name decoded where it lies in a larger buffer is the same name,
        /// prefix by prefix, as one decoded from its own bytes.
        #[test]
        fn a_name_within_a_buffer_is_the_name(n in arb_name(), before in proptest::collection::vec(any::<u8>(), 0..40), after in proptest::collection::vec(any::<u8>(), 0..40)) {
            let mut buf = before.clone();
            buf.extend_from_slice(n.value());
            buf.extend_from_slice(&after);
            let inside = Name::from_within(Bytes::from(buf), before.len()..before.len() + n.value().len()).unwrap();
            prop_assert_eq!(&inside, &n);
            prop_assert_eq!(inside.len(), n.len());
            for k in 0..=n.len() {
                prop_assert_eq!(inside.prefix_value(k), n.prefix_value(k));
                prop_assert_eq!(inside.prefix(k).value_bytes(), n.prefix(k).value_bytes());
            }
            prop_assert_eq!(inside.implicit_digest(), n.implicit_digest());
        }

        /// A name moved to another buffer holding its bytes is the same name,
        /// prefix by prefix and past its offset table, read from there.
        #[test]
        fn a_moved_name_is_the_name(n in arb_name(), extra in proptest::collection::vec((Just(8u32), proptest::collection::vec(any::<u8>(), 0..3)), 0..2 * INLINE_COMPONENTS), before in proptest::collection::vec(any::<u8>(), 0..40)) {
            let n = extra.iter().fold(n, |n, (t, v)| n.append(*t, v));
            let mut moved = Name::from_value(Bytes::copy_from_slice(n.value())).unwrap();
            let mut buf = before.clone();
            buf.extend_from_slice(n.value());
            let buf = Bytes::from(buf);
            moved.move_to(buf.clone(), before.len()).unwrap();
            prop_assert_eq!(moved.buffer(), &buf);
            prop_assert_eq!(&moved, &n);
            prop_assert_eq!(moved.len(), n.len());
            prop_assert!(moved.component_ends().eq(n.component_ends()));
            prop_assert!(moved.components().eq(n.components()));
            for k in 0..=n.len() {
                prop_assert_eq!(moved.prefix_value(k), n.prefix_value(k));
                prop_assert_eq!(moved.prefix(k).value_bytes(), n.prefix(k).value_bytes());
            }
            prop_assert_eq!(moved.implicit_digest(), n.implicit_digest());
        }

        /// The digest read from the last component's header bytes is the one
        /// its parsed component holds, with or without a digest at the end.
        #[test]
        fn implicit_digest_is_the_last_digest_component(n in arb_name(), digest in proptest::option::of(any::<[u8; 32]>())) {
            let n = match digest {
                Some(d) => n.append(IMPLICIT_SHA256_DIGEST, &d),
                None => n,
            };
            let parsed = n.last().filter(|c| c.typ == IMPLICIT_SHA256_DIGEST).map(|c| c.value);
            prop_assert_eq!(n.implicit_digest(), parsed);
            prop_assert_eq!(parsed.is_some(), digest.is_some());
        }

        #[test]
        fn wire_and_uri_round_trip(n in arb_name()) {
            let w = Bytes::from(n.to_wire());
            let d = Name::from_wire(&w).unwrap();
            prop_assert_eq!(&d, &n);
            let u: Name = n.to_string().parse().unwrap();
            prop_assert_eq!(u, n);
        }
    }
}
