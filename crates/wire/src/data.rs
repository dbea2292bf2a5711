//! Data packets (NDN packet format v0.3 §6).
//!
//! The forwarder never changes a Data packet, so a decoded [`Data`] is a view of the
//! fields the tables need plus the original encoding, which is what gets cached and
//! sent on. [`DataBuilder`] makes Data for Trajan's own producers (management, `put`),
//! signed with DigestSha256.

use bytes::Bytes;
use sha2::{Digest, Sha256};

use crate::error::WireError;
use crate::name::Name;
use crate::tlv::{read_nonneg, tlv_len, write_header, write_nonneg, write_tlv, ShapeReader, SliceReader};
use crate::types::*;

/// ContentType value for a Nack-like "application Nack" Data (v0.3 ContentType 3).
pub const CONTENT_TYPE_NACK: u64 = 3;

/// A decoded Data packet. The default is an empty one (no name, no
/// signature): a slot to decode into with [`Data::decode_into`].
///
/// Its name holds the packet ([`Name::buffer`], read as [`Data::wire`]): one
/// reference to the receive buffer rather than a packet and a view of its
/// name, each counted (an atomic increment and decrement per packet, which
/// the forwarder's worst case measurably pays). So the name cannot be
/// replaced, only read ([`Data::name`]): the packet goes with it.
#[derive(Debug, Clone, Default)]
pub struct Data {
    name: Name,
    /// ContentType (0 BLOB, 1 LINK, 2 KEY, 3 NACK); 0 when MetaInfo omits it.
    pub content_type: u64,
    /// FreshnessPeriod in ms; absent means the Data is never fresh.
    pub freshness_ms: Option<u64>,
    /// The FinalBlockId's component (whole TLV), if present.
    pub final_block_id: Option<Bytes>,
    /// Where TLV-VALUE of Content lies in the packet: kept as offsets, not as
    /// a `Bytes` view, because the forwarder never reads it and a view costs an
    /// atomic reference count increment and decrement per packet.
    content: std::ops::Range<usize>,
    /// SignatureType from SignatureInfo (e.g. 0 for DigestSha256).
    pub signature_type: u64,
}

/// Two Data are equal when their encodings are (which fixes every field).
impl PartialEq for Data {
    fn eq(&self, other: &Self) -> bool {
        self.wire() == other.wire()
    }
}
impl Eq for Data {}

/// The fields of a Data of the shape nearly every Data has: a name, a MetaInfo
/// of ContentType and FreshnessPeriod (either, both or none, in that order; no
/// FinalBlockId), Content, a SignatureInfo that starts with its SignatureType,
/// and a SignatureValue, each element with a one-byte type and a short length.
/// Each field is one type-byte comparison at the place the format puts it; the
/// name is only located.
///
/// Only scalars and places: [`Data::decode_into`] then writes them into the
/// Data it decodes into; a decoder that returned the decoded name and fields for it to
/// rewrap made the engine slower (docs/PERFORMANCE.md; the reason is as for
/// the Interest's common shape).
struct CommonShape {
    name: std::ops::Range<usize>,
    content_type: u64,
    freshness_ms: Option<u64>,
    content: std::ops::Range<usize>,
    signature_type: u64,
}

impl CommonShape {
    /// The fields of `wire` if it has the common shape; `None` for any other
    /// packet, valid or not, which [`Data::from_wire_general`] decides. A packet
    /// this reads decodes to the same Data there (a proptest checks).
    #[inline(always)]
    fn read(wire: &[u8]) -> Option<Self> {
        let mut r = ShapeReader::outer(wire, DATA)?;
        let name = r.take(NAME)?;
        let (mut content_type, mut freshness_ms) = (0, None);
        if let Some(v) = r.take(META_INFO) {
            let mut m = r.inner(v);
            if let Some(v) = m.take(CONTENT_TYPE) {
                content_type = read_nonneg(m.value(v)).ok()?;
            }
            if let Some(v) = m.take(FRESHNESS_PERIOD) {
                freshness_ms = Some(read_nonneg(m.value(v)).ok()?);
            }
            if !m.is_done() {
                return None;
            }
        }
        let content = r.take(CONTENT).unwrap_or_default();
        let info = r.take(SIGNATURE_INFO)?;
        let mut info = r.inner(info);
        let typ = info.take(SIGNATURE_TYPE)?;
        let signature_type = read_nonneg(info.value(typ)).ok()?;
        r.take(SIGNATURE_VALUE)?;
        r.is_done().then_some(CommonShape { name, content_type, freshness_ms, content, signature_type })
    }
}

impl Data {
    /// Decodes a whole Data element. The name is a `Bytes` view of `wire`; nothing
    /// else is copied or reference-counted.
    #[inline]
    pub fn decode(wire: &Bytes) -> Result<Self, WireError> {
        Self::from_wire(wire.clone())
    }

    /// [`Data::decode`] of a buffer the caller gives up, which the Data keeps as
    /// its `wire` without taking a reference of its own: one atomic reference
    /// count increment and decrement less per packet. The engine's burst decoder
    /// does the same with [`Data::decode_into`], into a slot it keeps.
    ///
    /// Both are always inlined; within them only the common shape's decoder is,
    /// and any other packet takes a call.
    #[inline(always)]
    pub fn from_wire(wire: Bytes) -> Result<Self, WireError> {
        let mut data = Data::default();
        data.decode_into(wire)?;
        Ok(data)
    }

    /// [`Data::from_wire`] into `self`, in place, every field replaced: the
    /// engine decodes each received Data into a slot it keeps from burst to
    /// burst, so the decoded struct is never copied (see `Interest::decode_into`). On an
    /// error `self` holds no useful value.
    #[inline(always)]
    pub fn decode_into(&mut self, wire: Bytes) -> Result<(), WireError> {
        match CommonShape::read(&wire) {
            // The general decoder would fail on the name with this same error:
            // it reads the name before any field.
            Some(f) => {
                self.name.set_within(wire, f.name)?;
                self.content_type = f.content_type;
                self.freshness_ms = f.freshness_ms;
                self.final_block_id = None;
                self.content = f.content;
                self.signature_type = f.signature_type;
            }
            None => *self = Self::from_wire_general(wire)?,
        }
        Ok(())
    }

    /// [`Data::from_wire`] of any packet: every field, in any encoding of its
    /// header, unknown elements skipped or rejected as the format says. Out of
    /// line, so the per-packet decoder that inlines the common shape stays small.
    #[inline(never)]
    fn from_wire_general(wire: Bytes) -> Result<Self, WireError> {
        let (outer, el) = SliceReader::outer(&wire, DATA)?;
        let mut r = outer.inner(&el);
        let name = Name::from_within(wire.clone(), r.expect(NAME)?.value())?;
        // The fields are gathered in locals and the Data built once at the end,
        // straight into the caller's slot rather than copied there.
        let mut meta = MetaInfo::default();
        let mut content = None;
        let mut signature_type = 0;
        let mut last = 0u8;
        let mut have_sig_info = false;
        let mut have_sig_value = false;
        // Each element's rank must exceed the last one's; one match gives the
        // rank and reads the value.
        while !r.is_empty() {
            let e = r.read()?;
            let k = match e.typ {
                META_INFO => {
                    meta = decode_meta_info(&wire, r.inner(&e))?;
                    1
                }
                CONTENT => {
                    content = Some(e.value());
                    2
                }
                SIGNATURE_INFO => {
                    let mut s = r.inner(&e);
                    let t = s.expect(SIGNATURE_TYPE)?;
                    signature_type = read_nonneg(s.value(&t))?;
                    have_sig_info = true;
                    3
                }
                SIGNATURE_VALUE => {
                    have_sig_value = true;
                    4
                }
                t if is_critical(t) => return Err(WireError::UnknownCritical(t)),
                _ => continue,
            };
            if k <= last {
                return Err(WireError::OutOfOrder(e.typ));
            }
            last = k;
        }
        if !have_sig_info {
            return Err(WireError::Missing(SIGNATURE_INFO));
        }
        if !have_sig_value {
            return Err(WireError::Missing(SIGNATURE_VALUE));
        }
        let MetaInfo { content_type, freshness_ms, final_block_id } = meta;
        let content = content.unwrap_or_default();
        Ok(Data { name, content_type, freshness_ms, final_block_id, content, signature_type })
    }

    /// The Data's name.
    #[inline(always)]
    pub fn name(&self) -> &Name {
        &self.name
    }

    /// The whole Data element as received (empty for the default Data).
    #[inline(always)]
    pub fn wire(&self) -> &Bytes {
        self.name.buffer()
    }

    /// Takes [`Data::wire`], leaving the empty Data's name and encoding (the
    /// other fields stay, describing nothing): for a forwarder sending the
    /// packet on once it has done with it.
    #[inline]
    pub fn take_wire(&mut self) -> Bytes {
        self.name.take_buffer()
    }

    /// Where the name's encoded components (TLV-VALUE of Name) lie in
    /// [`Data::wire`]. A cache keeps these offsets instead of a second
    /// reference-counted view of the buffer.
    #[inline]
    pub fn name_range(&self) -> std::ops::Range<usize> {
        self.name.range_in_buffer()
    }

    /// TLV-VALUE of Content (empty when the packet has none).
    pub fn content(&self) -> &[u8] {
        &self.wire()[self.content.clone()]
    }

    /// [`Data::content`] as a view of the packet's buffer, for a consumer that
    /// keeps it.
    pub fn content_bytes(&self) -> Bytes {
        self.wire().slice(self.content.clone())
    }

    /// SHA-256 of the whole encoding: the value of the implicit digest component
    /// that makes this packet's full name.
    pub fn implicit_digest(&self) -> [u8; 32] {
        implicit_digest_of(self.wire())
    }

    /// The full name (name plus implicit digest).
    pub fn full_name(&self) -> Name {
        self.name.append(IMPLICIT_SHA256_DIGEST, &self.implicit_digest())
    }

    /// Whether the FinalBlockId names this packet's last component (the last
    /// segment), for the tests of the builder; readers of FinalBlockId (the
    /// segment fetcher) compare segment numbers instead.
    #[cfg(test)]
    pub fn is_final_block(&self) -> bool {
        match (&self.final_block_id, self.name.last()) {
            (Some(f), Some(_)) => f[..] == *self.name.component_wire(self.name.len() - 1),
            _ => false,
        }
    }
}

/// The implicit digest of an encoded Data element, for tables that keep only the
/// wire encoding of a packet and compute its full name on demand.
pub fn implicit_digest_of(wire: &[u8]) -> [u8; 32] {
    Sha256::digest(wire).into()
}

/// The MetaInfo fields of a [`Data`] (each its default when absent).
#[derive(Default)]
struct MetaInfo {
    content_type: u64,
    freshness_ms: Option<u64>,
    final_block_id: Option<Bytes>,
}

/// The MetaInfo element's fields. Always inlined into [`Data::decode`], its one
/// caller, which runs per packet.
///
/// As ndn-cxx's `MetaInfo::wireDecode` reads it: ContentType, FreshnessPeriod
/// and FinalBlockId, each only in its place and each at most once; every
/// element after them, of any type (critical or not, a known one repeated or
/// out of order included), is application MetaInfo (v0.3 `AppMetaInfo`),
/// which the packet carries on unread. So a producer's own MetaInfo does not
/// get its Data dropped here while NFD forwards it. Every element's header is
/// still checked against the MetaInfo's bounds.
#[inline(always)]
fn decode_meta_info(wire: &Bytes, mut r: SliceReader<'_>) -> Result<MetaInfo, WireError> {
    let mut m = MetaInfo::default();
    // The rank of the last field read in its place; past the known ones
    // (`u8::MAX`) every element is application MetaInfo.
    let mut last = 0u8;
    while !r.is_empty() {
        let e = r.read()?;
        let k = match e.typ {
            CONTENT_TYPE => 1,
            FRESHNESS_PERIOD => 2,
            FINAL_BLOCK_ID => 3,
            _ => 0,
        };
        if k <= last {
            last = u8::MAX;
            continue;
        }
        last = k;
        match k {
            1 => m.content_type = read_nonneg(r.value(&e))?,
            2 => m.freshness_ms = Some(read_nonneg(r.value(&e))?),
            _ => {
                // Must hold exactly one name component.
                let value = wire.slice(e.value());
                Name::from_value(value.clone()).ok().filter(|n| n.len() == 1).ok_or(WireError::BadValue(FINAL_BLOCK_ID))?;
                m.final_block_id = Some(value);
            }
        }
    }
    Ok(m)
}

/// Builds Data signed with DigestSha256, for producers inside Trajan.
#[derive(Debug, Clone)]
pub struct DataBuilder {
    name: Name,
    content_type: Option<u64>,
    freshness_ms: Option<u64>,
    final_block_id: Option<Vec<u8>>,
}

impl DataBuilder {
    /// Starts a Data packet named `name`.
    pub fn new(name: Name) -> Self {
        DataBuilder { name, content_type: None, freshness_ms: None, final_block_id: None }
    }

    /// Sets FreshnessPeriod.
    pub fn freshness_ms(mut self, ms: u64) -> Self {
        self.freshness_ms = Some(ms);
        self
    }

    /// Sets ContentType.
    pub fn content_type(mut self, t: u64) -> Self {
        self.content_type = Some(t);
        self
    }

    /// Sets FinalBlockId to a segment number.
    pub fn final_segment(mut self, seg: u64) -> Self {
        let mut c = Vec::new();
        let (b, n) = crate::tlv::nonneg_bytes(seg);
        write_tlv(&mut c, SEGMENT_COMPONENT, &b[8 - n..]);
        self.final_block_id = Some(c);
        self
    }

    /// Encodes with `content` and signs.
    pub fn build(&self, content: &[u8]) -> Bytes {
        let mut meta = Vec::new();
        if let Some(t) = self.content_type {
            write_nonneg(&mut meta, CONTENT_TYPE, t);
        }
        if let Some(f) = self.freshness_ms {
            write_nonneg(&mut meta, FRESHNESS_PERIOD, f);
        }
        if let Some(fb) = &self.final_block_id {
            write_tlv(&mut meta, FINAL_BLOCK_ID, fb);
        }
        let sig_info: [u8; 5] = [SIGNATURE_INFO as u8, 3, SIGNATURE_TYPE as u8, 1, SIGNATURE_DIGEST_SHA256 as u8];
        let mut signed = Vec::with_capacity(content.len() + meta.len() + self.name.value().len() + 24);
        self.name.encode_into(&mut signed);
        if !meta.is_empty() {
            write_tlv(&mut signed, META_INFO, &meta);
        }
        write_tlv(&mut signed, CONTENT, content);
        signed.extend_from_slice(&sig_info);
        let digest = Sha256::digest(&signed);
        let value_len = signed.len() + tlv_len(SIGNATURE_VALUE, 32);
        let mut out = Vec::with_capacity(tlv_len(DATA, value_len));
        write_header(&mut out, DATA, value_len);
        out.extend_from_slice(&signed);
        write_tlv(&mut out, SIGNATURE_VALUE, &digest);
        Bytes::from(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tlv::testing::{any_name_value, encode_elements, shaped_elements, trailing};
    use proptest::prelude::*;

    /// Every field of `d`: equal Data have equal encodings, and these tests
    /// compare what each decoder made of one.
    #[allow(clippy::type_complexity)]
    fn fields(d: &Data) -> (Name, u64, Option<u64>, Option<Bytes>, std::ops::Range<usize>, u64, Bytes) {
        (d.name.clone(), d.content_type, d.freshness_ms, d.final_block_id.clone(), d.content.clone(), d.signature_type, d.wire().clone())
    }

    /// Encoded Data with every MetaInfo field present or not.
    fn any_data() -> impl Strategy<Value = Bytes> {
        let comps = proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..4), 1..20);
        (comps, any::<(Option<u8>, Option<u32>, Option<u8>)>(), proptest::collection::vec(any::<u8>(), 0..40)).prop_map(|(comps, (typ, fresh, last), content)| {
            let mut b = DataBuilder::new(Name::from_components(comps.iter().map(|c| (8u32, c.as_slice()))));
            if let Some(t) = typ { b = b.content_type(t as u64); }
            if let Some(f) = fresh { b = b.freshness_ms(f as u64); }
            if let Some(l) = last { b = b.final_segment(l as u64); }
            b.build(&content)
        })
    }

    #[test]
    fn build_and_decode() {
        let w = DataBuilder::new("/a/seg=2".parse().unwrap()).freshness_ms(1000).final_segment(2).build(b"hello");
        let d = Data::decode(&w).unwrap();
        assert_eq!(d.name.to_string(), "/a/seg=2");
        assert_eq!(d.freshness_ms, Some(1000));
        assert_eq!(d.content(), b"hello");
        assert_eq!(&w[d.name_range()], d.name.value());
        assert!(d.is_final_block());
        assert_eq!(*d.wire(), w);
        let mut sent = d.clone();
        assert_eq!(sent.take_wire(), w);
        assert!(sent.wire().is_empty() && sent.name.is_empty(), "the packet goes with its name");
        assert_eq!(d.full_name().len(), 3);
    }

    /// A Data whose MetaInfo is `meta` (encoded elements), named `/a`.
    fn with_meta(meta: &[u8]) -> Bytes {
        let mut inner = Vec::new();
        write_tlv(&mut inner, NAME, &[8, 1, b'a']);
        write_tlv(&mut inner, META_INFO, meta);
        write_tlv(&mut inner, SIGNATURE_INFO, &[0x1b, 1, 0]);
        write_tlv(&mut inner, SIGNATURE_VALUE, &[0; 4]);
        let mut v = Vec::new();
        write_tlv(&mut v, DATA, &inner);
        Bytes::from(v)
    }

    /// Elements after ContentType, FreshnessPeriod and FinalBlockId are
    /// application MetaInfo of any type, carried unread (ndn-cxx's
    /// `MetaInfo::wireDecode`), critical types included; a known field out of
    /// its place or repeated is one of them, not read. A malformed header is
    /// still an error.
    #[test]
    fn application_meta_info_of_any_type_is_carried_unread() {
        let d = Data::decode(&with_meta(&[0x18, 1, 2, 0x19, 1, 9, 0x1a, 3, 8, 1, b'z', 0x81, 1, 0, 0x0f, 0, 0x19, 1, 7, 0x18, 1, 3])).unwrap();
        assert_eq!((d.content_type, d.freshness_ms, d.final_block_id.as_deref()), (2, Some(9), Some(&[8, 1, b'z'][..])));
        // Out of place: FreshnessPeriod after FinalBlockId, and after an application element.
        let d = Data::decode(&with_meta(&[0x1a, 3, 8, 1, b'z', 0x19, 1, 9])).unwrap();
        assert_eq!((d.freshness_ms, d.final_block_id.is_some()), (None, true));
        let d = Data::decode(&with_meta(&[0x81, 0, 0x19, 1, 9, 0x1a, 0])).unwrap();
        assert_eq!((d.freshness_ms, d.final_block_id), (None, None));
        // FreshnessPeriod before ContentType: the ContentType is application MetaInfo.
        let d = Data::decode(&with_meta(&[0x19, 1, 9, 0x18, 1, 2])).unwrap();
        assert_eq!((d.content_type, d.freshness_ms), (0, Some(9)));
        assert!(Data::decode(&with_meta(&[0x19, 1, 9, 0x81])).is_err(), "a header cut short");
        assert!(Data::decode(&with_meta(&[0x19, 1, 9, 0x81, 5, 0])).is_err(), "a length past the MetaInfo");
    }

    #[test]
    fn requires_signature() {
        let mut v = Vec::new();
        let mut inner = Vec::new();
        write_tlv(&mut inner, NAME, &[8, 1, b'a']);
        write_tlv(&mut inner, CONTENT, b"x");
        write_tlv(&mut v, DATA, &inner);
        assert_eq!(Data::decode(&Bytes::from(v)), Err(WireError::Missing(SIGNATURE_INFO)));
    }

    proptest! {
        #[test]
        fn round_trip(content in proptest::collection::vec(any::<u8>(), 0..300), fresh: Option<u32>) {
            let mut b = DataBuilder::new("/x/y".parse().unwrap());
            if let Some(f) = fresh { b = b.freshness_ms(f as u64); }
            let w = b.build(&content);
            let d = Data::decode(&w).unwrap();
            prop_assert_eq!(d.content(), &content[..]);
            prop_assert_eq!(d.freshness_ms, fresh.map(|f| f as u64));
        }

        /// Decoding in place over an earlier Data (of any MetaInfo, FinalBlockId
        /// included) replaces every field: the result is the Data decoded afresh.
        #[test]
        fn decode_into_replaces_every_field(a in any_data(), b in any_data()) {
            let mut slot = Data::decode(&a).unwrap();
            slot.decode_into(b.clone()).unwrap();
            prop_assert_eq!(fields(&slot), fields(&Data::decode(&b).unwrap()));
        }

        /// What producers send (a MetaInfo of ContentType and FreshnessPeriod at
        /// most) takes the common-shape decoder.
        #[test]
        fn common_shape_takes_what_encoders_send(content in proptest::collection::vec(any::<u8>(), 0..600), fresh: Option<u32>, typ: Option<u8>,
                                                 comps in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..300), 0..4)) {
            let mut b = DataBuilder::new(Name::from_components(comps.iter().map(|c| (8u32, c.as_slice()))));
            if let Some(f) = fresh { b = b.freshness_ms(f as u64); }
            if let Some(t) = typ { b = b.content_type(t as u64); }
            let w = b.build(&content);
            prop_assert!(CommonShape::read(&w).is_some());
            let d = Data::decode(&w).unwrap();
            prop_assert_eq!((&d.name, d.content_type, d.freshness_ms, d.content()), (&b.name, typ.map_or(0, u64::from), fresh.map(u64::from), &content[..]));
        }

    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2048))]

        /// Whatever the common-shape decoder accepts, the general decoder decodes
        /// to the same Data: over Data of the elements, MetaInfo and SignatureInfo
        /// fields it reads and others, absent, repeated or out of order, of
        /// lengths right and wrong, with either length form, after a name that
        /// may be malformed too, and sometimes followed by a stray byte.
        #[test]
        fn common_shape_agrees_with_general(name in any_name_value(),
                                           meta in shaped_elements(&[(0x18, 1), (0x19, 2)], &[0x1a, 0x40, 0x0f]),
                                           info in shaped_elements(&[(0x1b, 1), (0x1c, 4)], &[0x40, 0x0f]),
                                           mut elements in shaped_elements(&[(0x14, 0), (0x15, 8), (0x16, 0), (0x17, 8)], &[0x40, 0x0f, 0x18]),
                                           trailing in trailing()) {
            // The MetaInfo and SignatureInfo elements hold the random fields.
            for (typ, value, _) in elements.iter_mut() {
                match *typ {
                    0x14 => *value = encode_elements(&meta),
                    0x16 => *value = encode_elements(&info),
                    _ => {}
                }
            }
            let mut w = encode_elements(&[(NAME as u8, name, false)]);
            w.extend_from_slice(&encode_elements(&elements));
            let mut w = encode_elements(&[(DATA as u8, w, false)]);
            w.extend_from_slice(&trailing);
            let w = Bytes::from(w);
            if CommonShape::read(&w).is_some() {
                prop_assert_eq!(Data::from_wire(w.clone()).map(|d| fields(&d)), Data::from_wire_general(w.clone()).map(|d| fields(&d)));
            }
            // Either way, the name holds the packet it was decoded from.
            for d in [Data::from_wire(w.clone()), Data::from_wire_general(w.clone())].into_iter().flatten() {
                prop_assert_eq!(d.wire(), &w);
                prop_assert_eq!(&w[d.name_range()], d.name.value());
            }
        }
    }

    proptest! {
        #[test]
        fn never_panics(data in proptest::collection::vec(any::<u8>(), 0..80)) {
            let mut v = vec![6u8, data.len() as u8];
            v.extend_from_slice(&data);
            let _ = Data::decode(&Bytes::from(v));
        }
    }
}
