//! Interest packets (NDN packet format v0.3 §5.1).
//!
//! A decoded [`Interest`] keeps its original encoding; [`Interest::encode`] rebuilds
//! it from the fields so the forwarder can set a Nonce or decrement HopLimit, while
//! everything from ApplicationParameters on (parameters and the Interest signature)
//! is carried as one raw slice and so forwarded byte-exact.

use bytes::Bytes;
use sha2::{Digest, Sha256};

use crate::error::WireError;
use crate::name::Name;
use crate::tlv::{read_nonneg, tlv_len, write_header, write_nonneg, write_tlv, ShapeReader, SliceReader, TlvReader};
use crate::types::*;

/// InterestLifetime when the element is absent (v0.3 §5.2.5).
pub const DEFAULT_LIFETIME_MS: u64 = 4000;

/// A decoded or locally built Interest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Interest {
    /// The name of the requested Data, or of a prefix of it with CanBePrefix.
    pub name: Name,
    /// CanBePrefix: Data whose name extends `name` may satisfy the Interest.
    pub can_be_prefix: bool,
    /// MustBeFresh: stale cached Data must not satisfy the Interest.
    pub must_be_fresh: bool,
    /// TLV-VALUE of ForwardingHint (a sequence of Names), kept raw.
    pub forwarding_hint: Option<Bytes>,
    /// Nonce, for loop detection; `None` when the packet has none and one is yet to be set.
    pub nonce: Option<u32>,
    /// InterestLifetime in ms as encoded; `None` means the default (see [`Interest::lifetime`]).
    pub lifetime_ms: Option<u64>,
    /// HopLimit: hops the Interest may still take; `None` means no limit.
    pub hop_limit: Option<u8>,
    /// Raw encoding of ApplicationParameters and every element after it
    /// (InterestSignatureInfo, InterestSignatureValue), forwarded unchanged.
    pub params_tail: Option<Bytes>,
}

/// The fields of an Interest of the shape nearly every Interest has: a name,
/// then any of CanBePrefix, MustBeFresh, Nonce, InterestLifetime and HopLimit in
/// that order, each element with a one-byte type and a short length (no
/// ForwardingHint, no parameters, nothing unknown; CanBePrefix and
/// MustBeFresh empty). Each field is one type-byte
/// comparison at the place the format puts it; the name is only located.
///
/// Only scalars and the name's place: [`Interest::decode_into`] then writes
/// them into the Interest it decodes into. A decoder that returned a whole
/// `Option<Interest>` for it to rewrap made the engine no faster despite fewer
/// instructions (docs/PERFORMANCE.md): the rewrap copies the struct with wide
/// loads right after its fields were written one by one, which store forwarding
/// cannot serve (read from the generated code, not measured by counters).
struct CommonShape {
    name: std::ops::Range<usize>,
    can_be_prefix: bool,
    must_be_fresh: bool,
    nonce: Option<u32>,
    lifetime_ms: Option<u64>,
    hop_limit: Option<u8>,
}

impl CommonShape {
    /// The fields of `wire` if it has the common shape; `None` for any other
    /// packet, valid or not, which [`Interest::decode_general`] decides. A packet
    /// this reads decodes to the same Interest there (a proptest checks).
    #[inline(always)]
    fn read(wire: &[u8]) -> Option<Self> {
        let mut r = ShapeReader::outer(wire, INTEREST)?;
        // An empty name is left to the general decoder, which rejects it.
        let name = r.take(NAME).filter(|v| !v.is_empty())?;
        // CanBePrefix and MustBeFresh must be empty (ndn-cxx throws otherwise):
        // one with a value is not taken, so the packet is not done, and the
        // general decoder refuses it.
        let can_be_prefix = r.take_empty(CAN_BE_PREFIX);
        let must_be_fresh = r.take_empty(MUST_BE_FRESH);
        let nonce = match r.take(NONCE) {
            Some(v) => Some(u32::from_be_bytes(r.value(v).try_into().ok()?)),
            None => None,
        };
        let lifetime_ms = match r.take(INTEREST_LIFETIME) {
            Some(v) => Some(read_nonneg(r.value(v)).ok()?),
            None => None,
        };
        let hop_limit = match r.take(HOP_LIMIT).map(|v| r.value(v)) {
            Some(&[h]) => Some(h),
            Some(_) => return None,
            None => None,
        };
        r.is_done().then_some(CommonShape { name, can_be_prefix, must_be_fresh, nonce, lifetime_ms, hop_limit })
    }
}

impl Interest {
    /// An Interest for `name` with every optional field absent.
    pub fn new(name: Name) -> Self {
        Interest {
            name,
            can_be_prefix: false,
            must_be_fresh: false,
            forwarding_hint: None,
            nonce: None,
            lifetime_ms: None,
            hop_limit: None,
            params_tail: None,
        }
    }

    /// InterestLifetime in milliseconds, with the protocol default applied.
    pub fn lifetime(&self) -> u64 {
        self.lifetime_ms.unwrap_or(DEFAULT_LIFETIME_MS)
    }

    /// The TLV-VALUE of ApplicationParameters, if present.
    pub fn app_parameters(&self) -> Option<Bytes> {
        let tail = self.params_tail.as_ref()?;
        let mut r = TlvReader::new(tail.clone());
        let e = r.read().ok()?;
        (e.typ == APPLICATION_PARAMETERS).then_some(e.value)
    }

    /// Decodes a whole Interest element. Only the parts the Interest keeps (the
    /// name, a ForwardingHint, the parameters) become `Bytes` views of `wire`;
    /// the name holds the whole packet: [`Name::buffer`] of a decoded
    /// Interest's name is its encoding (until the name is replaced).
    ///
    /// The engine's burst decoder uses [`Interest::decode_into`] instead, which
    /// decodes into a slot it keeps rather than into a new Interest to be moved.
    /// Both are always inlined; within them only the common shape's decoder is,
    /// and any other packet takes a call.
    #[inline(always)]
    pub fn decode(wire: &Bytes) -> Result<Self, WireError> {
        let mut interest = Interest::new(Name::root());
        interest.decode_into(wire.clone())?;
        Ok(interest)
    }

    /// [`Interest::decode`] into `self`, in place, every field replaced: the
    /// engine decodes each received Interest into a slot it keeps from burst to
    /// burst, so the decoded struct is never copied (a copy read right after the fields
    /// were written one by one stalls the pipeline: store forwarding cannot
    /// serve it). It takes the packet, which its name keeps (a view of the
    /// name alone would be one more reference to count). On an error `self`
    /// holds no useful value.
    #[inline(always)]
    pub fn decode_into(&mut self, wire: Bytes) -> Result<(), WireError> {
        match CommonShape::read(&wire) {
            // The general decoder would fail on the name with this same error:
            // it reads the name before any field.
            Some(f) => {
                // A name the fast pass took has no digest component; any
                // other is looked at, as the general decoder does.
                if self.name.set_within_marked(wire, f.name)? {
                    no_params_digest(&self.name)?;
                }
                self.can_be_prefix = f.can_be_prefix;
                self.must_be_fresh = f.must_be_fresh;
                self.forwarding_hint = None;
                self.nonce = f.nonce;
                self.lifetime_ms = f.lifetime_ms;
                self.hop_limit = f.hop_limit;
                self.params_tail = None;
            }
            None => *self = Self::decode_general(&wire)?,
        }
        Ok(())
    }

    /// [`Interest::decode`] of any packet: every field, in any encoding of its
    /// header, unknown elements skipped or rejected as the format says. Out of
    /// line, so the per-packet decoder that inlines the common shape stays small.
    #[inline(never)]
    fn decode_general(wire: &Bytes) -> Result<Self, WireError> {
        let (outer, el) = SliceReader::outer(wire, INTEREST)?;
        let mut r = outer.inner(&el);
        let name_el = r.expect(NAME)?;
        let mut name = Name::root();
        let marked = name.set_within_marked(wire.clone(), name_el.value())?;
        // v0.3: an Interest whose name has no component must be discarded (it
        // would match every Data, `/localhost` ones included, as a prefix).
        if name.is_empty() {
            return Err(WireError::BadValue(NAME));
        }
        // The fields are gathered in locals and the Interest built once at the end,
        // straight into the caller's slot rather than copied there.
        let (mut can_be_prefix, mut must_be_fresh, mut forwarding_hint, mut params_tail) = (false, false, None, None);
        let (mut nonce, mut lifetime_ms, mut hop_limit) = (None, None, None);
        // Each known element's rank in the order v0.3 prescribes must exceed the
        // last one's; one match gives the rank and reads the value. As in
        // ndn-cxx's `Interest::wireDecode`, HopLimit and ApplicationParameters,
        // both non-critical, are skipped rather than refused when out of order
        // or repeated (their value unread); every other known element is refused.
        let mut last = 0u8;
        while !r.is_empty() {
            let e = r.read()?;
            let value = r.value(&e);
            let k = match e.typ {
                CAN_BE_PREFIX => {
                    if !value.is_empty() {
                        return Err(WireError::BadValue(CAN_BE_PREFIX));
                    }
                    can_be_prefix = true;
                    1
                }
                MUST_BE_FRESH => {
                    if !value.is_empty() {
                        return Err(WireError::BadValue(MUST_BE_FRESH));
                    }
                    must_be_fresh = true;
                    2
                }
                FORWARDING_HINT => {
                    forwarding_hint = Some(wire.slice(e.value()));
                    3
                }
                NONCE => {
                    let v: [u8; 4] = value.try_into().map_err(|_| WireError::BadValue(NONCE))?;
                    nonce = Some(u32::from_be_bytes(v));
                    4
                }
                INTEREST_LIFETIME => {
                    lifetime_ms = Some(read_nonneg(value)?);
                    5
                }
                HOP_LIMIT if last >= 6 => continue,
                HOP_LIMIT => {
                    let &[h] = value else { return Err(WireError::BadValue(HOP_LIMIT)) };
                    hop_limit = Some(h);
                    6
                }
                APPLICATION_PARAMETERS => 7,
                t if is_critical(t) => return Err(WireError::UnknownCritical(t)),
                _ => continue,
            };
            if k <= last {
                return Err(WireError::OutOfOrder(e.typ));
            }
            last = k;
            if e.typ == APPLICATION_PARAMETERS {
                // Everything from here on is signature material: validate its TLV
                // structure, then keep it raw. The ParametersSha256DigestComponent
                // covers ndn-cxx's parameters: ApplicationParameters and every
                // element after it but the HopLimit and ApplicationParameters it
                // skips (kept in the raw tail, as it keeps them in the packet).
                let mut digest = Sha256::new();
                digest.update(&wire[e.whole()]);
                while !r.is_empty() {
                    let e = r.read()?;
                    if !matches!(e.typ, INTEREST_SIGNATURE_INFO | INTEREST_SIGNATURE_VALUE) && is_critical(e.typ) {
                        return Err(WireError::UnknownCritical(e.typ));
                    }
                    if !matches!(e.typ, HOP_LIMIT | APPLICATION_PARAMETERS) {
                        digest.update(&wire[e.whole()]);
                    }
                }
                params_digest(&name, marked, &digest.finalize())?;
                params_tail = Some(wire.slice(e.begin..el.end));
                break;
            }
        }
        if params_tail.is_none() && marked {
            no_params_digest(&name)?;
        }
        Ok(Interest { name, can_be_prefix, must_be_fresh, forwarding_hint, nonce, lifetime_ms, hop_limit, params_tail })
    }

    /// Encoded size, so [`Interest::encode`] allocates exactly once.
    pub fn encoded_len(&self) -> usize {
        tlv_len(INTEREST, self.value_len())
    }

    fn value_len(&self) -> usize {
        let mut n = tlv_len(NAME, self.name.value().len());
        n += if self.can_be_prefix { 2 } else { 0 };
        n += if self.must_be_fresh { 2 } else { 0 };
        n += self.forwarding_hint.as_ref().map_or(0, |h| tlv_len(FORWARDING_HINT, h.len()));
        n += if self.nonce.is_some() { 6 } else { 0 };
        n += self.lifetime_ms.map_or(0, |l| tlv_len(INTEREST_LIFETIME, crate::tlv::nonneg_bytes(l).1));
        n += if self.hop_limit.is_some() { 3 } else { 0 };
        n += self.params_tail.as_ref().map_or(0, |t| t.len());
        n
    }

    /// Appends the encoding to `out`.
    pub fn encode_into(&self, out: &mut Vec<u8>) {
        self.write(out, self.value_len());
    }

    /// The encoding as a new buffer.
    pub fn encode(&self) -> Bytes {
        self.encode_locating_name().0
    }

    /// [`Interest::encode`], and where the name's encoded components begin
    /// in it (its TLV-VALUE, which the Interest's and the Name's headers
    /// precede): a holder of the name can move it there
    /// ([`Name::move_to`]) and so keep the one buffer, without parsing the
    /// encoding for it.
    pub fn encode_locating_name(&self) -> (Bytes, usize) {
        let value_len = self.value_len();
        let mut out = Vec::with_capacity(tlv_len(INTEREST, value_len));
        let at = self.write(&mut out, value_len);
        (Bytes::from(out), at)
    }

    /// Appends the encoding, whose TLV-VALUE is `value_len` bytes long, to
    /// `out`; returns the offset in `out` where the name's components begin.
    fn write(&self, out: &mut Vec<u8>, value_len: usize) -> usize {
        write_header(out, INTEREST, value_len);
        write_header(out, NAME, self.name.value().len());
        let at = out.len();
        out.extend_from_slice(self.name.value());
        if self.can_be_prefix {
            write_tlv(out, CAN_BE_PREFIX, &[]);
        }
        if self.must_be_fresh {
            write_tlv(out, MUST_BE_FRESH, &[]);
        }
        if let Some(h) = &self.forwarding_hint {
            write_tlv(out, FORWARDING_HINT, h);
        }
        if let Some(n) = self.nonce {
            write_tlv(out, NONCE, &n.to_be_bytes());
        }
        if let Some(l) = self.lifetime_ms {
            write_nonneg(out, INTEREST_LIFETIME, l);
        }
        if let Some(h) = self.hop_limit {
            write_tlv(out, HOP_LIMIT, &[h]);
        }
        if let Some(t) = &self.params_tail {
            out.extend_from_slice(t);
        }
        at
    }
}

/// Refuses a ParametersSha256DigestComponent in the name of an Interest
/// without parameters, as NFD does (ndn-cxx's
/// `Interest::isParametersDigestValid`). Only for a name that may have one
/// ([`Name::set_within_marked`]), so out of line.
#[cold]
#[inline(never)]
fn no_params_digest(name: &Name) -> Result<(), WireError> {
    match name.components().any(|c| c.typ == PARAMETERS_SHA256_DIGEST) {
        true => Err(WireError::Missing(APPLICATION_PARAMETERS)),
        false => Ok(()),
    }
}

/// Checks the name of an Interest with parameters whose digest is `digest`
/// (see [`Interest::decode_general`]) as ndn-cxx's `Interest::wireDecode`
/// does for NFD: it must have exactly one ParametersSha256DigestComponent,
/// and that one must be the digest. `marked` is [`Name::set_within_marked`]'s
/// flag: a name without it has no digest component.
fn params_digest(name: &Name, marked: bool, digest: &[u8]) -> Result<(), WireError> {
    let mut found = None;
    if marked {
        for c in name.components().filter(|c| c.typ == PARAMETERS_SHA256_DIGEST) {
            if found.replace(c.value).is_some() {
                return Err(WireError::OutOfOrder(PARAMETERS_SHA256_DIGEST));
            }
        }
    }
    match found {
        None => Err(WireError::Missing(PARAMETERS_SHA256_DIGEST)),
        Some(v) if v != digest => Err(WireError::BadValue(PARAMETERS_SHA256_DIGEST)),
        Some(_) => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tlv::testing::{any_name_value, encode_elements, shaped_elements, trailing};
    use proptest::prelude::*;

    /// Interests with every field present or not, a ForwardingHint and
    /// parameters included.
    fn any_interest() -> impl Strategy<Value = Interest> {
        let comps = proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..4), 1..20);
        (comps, any::<(bool, bool, Option<u32>, Option<u64>, Option<u8>)>(), any::<bool>(), proptest::option::of(proptest::collection::vec(any::<u8>(), 0..6)))
            .prop_map(|(comps, (cbp, mbf, nonce, life, hop), hint, params)| {
                let mut i = Interest::new(Name::from_components(comps.iter().map(|c| (8u32, c.as_slice()))));
                (i.can_be_prefix, i.must_be_fresh, i.nonce, i.lifetime_ms, i.hop_limit) = (cbp, mbf, nonce, life, hop);
                if hint {
                    let mut h = Vec::new();
                    write_tlv(&mut h, NAME, &[8, 1, b'h']);
                    i.forwarding_hint = Some(Bytes::from(h));
                }
                if let Some(p) = params {
                    crate::signed::set_parameters(&mut i, &p);
                }
                i
            })
    }

    #[test]
    fn an_empty_name_is_refused_in_either_encoding() {
        let mut i = Interest::new(Name::root());
        i.nonce = Some(7);
        let common = i.encode();
        assert!(CommonShape::read(&common).is_none(), "left to the general decoder");
        i.forwarding_hint = Some(Bytes::from_static(&[7, 3, 8, 1, b'h']));
        for w in [common, i.encode()] {
            assert_eq!(Interest::decode(&w), Err(WireError::BadValue(NAME)));
        }
    }

    #[test]
    fn decodes_and_reencodes_byte_exact() {
        let mut i = Interest::new("/a/b".parse().unwrap());
        i.can_be_prefix = true;
        i.must_be_fresh = true;
        i.nonce = Some(0xdeadbeef);
        i.lifetime_ms = Some(1000);
        i.hop_limit = Some(7);
        let mut tail = Vec::new();
        write_tlv(&mut tail, APPLICATION_PARAMETERS, b"xyz");
        write_tlv(&mut tail, INTEREST_SIGNATURE_INFO, &[0x1b, 1, 0]);
        write_tlv(&mut tail, INTEREST_SIGNATURE_VALUE, &[9; 32]);
        i.name = i.name.append(PARAMETERS_SHA256_DIGEST, &Sha256::digest(&tail));
        i.params_tail = Some(Bytes::from(tail));
        let w = i.encode();
        assert_eq!(w.len(), i.encoded_len());
        let d = Interest::decode(&w).unwrap();
        assert_eq!(d, i);
        assert_eq!(d.encode(), w);
        assert_eq!(d.app_parameters().unwrap(), Bytes::from_static(b"xyz"));
    }

    /// An Interest named `/a` with `fields` after its name.
    fn named_a(fields: &[u8]) -> Bytes {
        let mut v = vec![5, 5 + fields.len() as u8, 7, 3, 8, 1, b'a'];
        v.extend_from_slice(fields);
        Bytes::from(v)
    }

    #[test]
    fn rejects_malformed() {
        // Missing name
        assert!(Interest::decode(&Bytes::from_static(&[5, 2, 0x0a, 0])).is_err());
        // A name without a component
        assert_eq!(Interest::decode(&Bytes::from_static(&[5, 2, 7, 0])), Err(WireError::BadValue(NAME)));
        // Nonce of wrong length
        assert_eq!(Interest::decode(&named_a(&[0x0a, 3, 1, 2, 3])), Err(WireError::BadValue(NONCE)));
        // Unknown critical element
        assert_eq!(Interest::decode(&named_a(&[0x0f, 0])), Err(WireError::UnknownCritical(0x0f)));
        // Unknown non-critical element is ignored
        assert!(Interest::decode(&named_a(&[0x40, 0])).is_ok());
        // Out of order
        assert!(Interest::decode(&named_a(&[0x12, 0, 0x21, 0])).is_err());
        // A field twice
        assert_eq!(Interest::decode(&named_a(&[0x0a, 4, 1, 2, 3, 4, 0x0a, 4, 1, 2, 3, 4])), Err(WireError::OutOfOrder(0x0a)));
        // HopLimit of two bytes
        assert_eq!(Interest::decode(&named_a(&[0x22, 2, 1, 2])), Err(WireError::BadValue(0x22)));
        // A well-formed one: every field read
        let i = Interest::decode(&named_a(&[0x21, 0, 0x12, 0, 0x0a, 4, 1, 2, 3, 4, 0x22, 1, 9])).unwrap();
        assert!(i.can_be_prefix && i.must_be_fresh);
        assert_eq!((i.nonce, i.hop_limit, i.lifetime_ms), (Some(0x01020304), Some(9), None));
    }

    /// An Interest named `comps` (generic components) and then a
    /// ParametersSha256DigestComponent for each of `digests`, with `fields`
    /// (encoded elements) after its name.
    fn with_digests(comps: &[&[u8]], digests: &[&[u8]], fields: &[u8]) -> Bytes {
        let mut name = Vec::new();
        comps.iter().for_each(|c| write_tlv(&mut name, GENERIC_COMPONENT, c));
        digests.iter().for_each(|d| write_tlv(&mut name, PARAMETERS_SHA256_DIGEST, d));
        let mut v = Vec::new();
        write_tlv(&mut v, NAME, &name);
        v.extend_from_slice(fields);
        let mut w = Vec::new();
        write_tlv(&mut w, INTEREST, &v);
        Bytes::from(w)
    }

    /// The ParametersSha256DigestComponent is checked as NFD checks it
    /// (ndn-cxx's `Interest::wireDecode` and `isParametersDigestValid`): an
    /// Interest with parameters needs exactly one, the SHA-256 of
    /// ApplicationParameters through the signature; one without parameters
    /// may have none, in either decoder.
    #[test]
    fn the_parameters_digest_is_checked() {
        let mut tail = Vec::new();
        write_tlv(&mut tail, APPLICATION_PARAMETERS, b"xyz");
        write_tlv(&mut tail, INTEREST_SIGNATURE_INFO, &[0x1b, 1, 0]);
        write_tlv(&mut tail, INTEREST_SIGNATURE_VALUE, &[9; 32]);
        let digest: [u8; 32] = Sha256::digest(&tail).into();
        let d = Interest::decode(&with_digests(&[b"a"], &[&digest], &tail)).unwrap();
        assert_eq!(d.params_tail.as_deref(), Some(&tail[..]));
        // Missing, wrong (a signature byte changed), twice.
        assert_eq!(Interest::decode(&with_digests(&[b"a"], &[], &tail)), Err(WireError::Missing(PARAMETERS_SHA256_DIGEST)));
        let mut tampered = tail.clone();
        *tampered.last_mut().unwrap() ^= 1;
        assert_eq!(Interest::decode(&with_digests(&[b"a"], &[&digest], &tampered)), Err(WireError::BadValue(PARAMETERS_SHA256_DIGEST)));
        assert_eq!(Interest::decode(&with_digests(&[b"a"], &[&digest, &digest], &tail)), Err(WireError::OutOfOrder(PARAMETERS_SHA256_DIGEST)));
        // Without parameters: none may be there, whichever decoder reads the packet.
        let nonce = [0x0a, 4, 1, 2, 3, 4];
        let common = with_digests(&[b"a"], &[&digest], &nonce);
        assert!(CommonShape::read(&common).is_some());
        let hinted = with_digests(&[b"a"], &[&digest], &[0x1e, 5, 7, 3, 8, 1, b'h', 0x0a, 4, 1, 2, 3, 4]);
        assert!(CommonShape::read(&hinted).is_none());
        for w in [&common, &hinted] {
            assert_eq!(Interest::decode(w), Err(WireError::Missing(APPLICATION_PARAMETERS)));
        }
        // Names the fast pass does not take, with no digest, are fine.
        let long: Vec<&[u8]> = vec![b"c"; crate::name::INLINE_COMPONENTS + 3];
        let implicit = [0u8; 32];
        let mut with_implicit = Vec::new();
        write_tlv(&mut with_implicit, NAME, &[&[8, 1, b'a'][..], &[1, 32], &implicit].concat());
        with_implicit.extend_from_slice(&nonce);
        for w in [with_digests(&long, &[], &nonce), Bytes::from([&[5, with_implicit.len() as u8][..], &with_implicit].concat())] {
            assert_eq!(Interest::decode(&w).unwrap().nonce, Some(0x01020304));
        }
    }

    /// Out of order or repeated, HopLimit and ApplicationParameters (both
    /// non-critical) are skipped, as ndn-cxx's `Interest::wireDecode` skips
    /// them: left out of the parameters digest, but kept in the raw tail when
    /// they follow the parameters. Other known elements out of order are refused.
    #[test]
    fn a_hop_limit_or_parameters_out_of_order_is_skipped() {
        // A second HopLimit, even malformed, is skipped; the first is read.
        for second in [&[0x22, 1, 7][..], &[0x22, 2, 1, 2]] {
            let i = Interest::decode(&named_a(&[&[0x0a, 4, 1, 2, 3, 4, 0x22, 1, 5][..], second].concat())).unwrap();
            assert_eq!((i.nonce, i.hop_limit), (Some(0x01020304), Some(5)));
        }
        assert_eq!(Interest::decode(&named_a(&[0x22, 1, 5, 0x0a, 4, 1, 2, 3, 4])), Err(WireError::OutOfOrder(NONCE)));
        // After the parameters: a HopLimit and a second ApplicationParameters.
        let mut covered = Vec::new();
        write_tlv(&mut covered, APPLICATION_PARAMETERS, b"p");
        write_tlv(&mut covered, INTEREST_SIGNATURE_INFO, &[0x1b, 1, 0]);
        let tail = [&covered[..3], &[0x22, 1, 9, 0x24, 1, b'q'][..], &covered[3..]].concat();
        let digest: [u8; 32] = Sha256::digest(&covered).into();
        let w = with_digests(&[b"a"], &[&digest], &tail);
        let i = Interest::decode(&w).unwrap();
        assert_eq!((i.hop_limit, i.params_tail.as_deref(), i.app_parameters().as_deref()), (None, Some(&tail[..]), Some(&b"p"[..])));
        assert_eq!(i.encode(), w, "forwarded as received");
        // A digest over the skipped elements too is not the parameters'.
        let over_all: [u8; 32] = Sha256::digest(&tail).into();
        assert_eq!(Interest::decode(&with_digests(&[b"a"], &[&over_all], &tail)), Err(WireError::BadValue(PARAMETERS_SHA256_DIGEST)));
        // A critical element after the parameters is still refused.
        let bad = [&covered[..], &[0x0a, 4, 1, 2, 3, 4][..]].concat();
        assert_eq!(Interest::decode(&with_digests(&[b"a"], &[&Sha256::digest(&bad)[..]], &bad)), Err(WireError::UnknownCritical(NONCE)));
    }

    /// CanBePrefix and MustBeFresh must be empty, as ndn-cxx requires; the
    /// common-shape decoder leaves one with a value to the general one.
    #[test]
    fn can_be_prefix_and_must_be_fresh_must_be_empty() {
        for (fields, typ) in [(&[0x21, 1, 0][..], CAN_BE_PREFIX), (&[0x21, 0, 0x12, 2, 0, 0][..], MUST_BE_FRESH)] {
            let w = named_a(fields);
            assert!(CommonShape::read(&w).is_none());
            assert_eq!(Interest::decode(&w), Err(WireError::BadValue(typ)));
        }
    }

    proptest! {
        /// What an application sends without parameters (every field in its
        /// shortest encoding, names short and long) decodes to itself, by the
        /// common-shape decoder.
        #[test]
        fn round_trip(cbp: bool, mbf: bool, nonce: Option<u32>, life: Option<u64>, hop: Option<u8>,
                      comps in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..300), 1..6)) {
            let mut i = Interest::new(Name::from_components(comps.iter().map(|c| (8u32, c.as_slice()))));
            i.can_be_prefix = cbp; i.must_be_fresh = mbf; i.nonce = nonce; i.lifetime_ms = life; i.hop_limit = hop;
            let w = i.encode();
            prop_assert!(CommonShape::read(&w).is_some());
            prop_assert_eq!(Interest::decode(&w).map(|d| d.name.range_in_buffer().start), Ok(i.encode_locating_name().1), "long headers included");
            prop_assert_eq!(Interest::decode(&w), Ok(i));
        }

        /// Decoding in place over an earlier Interest (of any fields, parameters
        /// included) replaces every field: the result is the Interest decoded afresh.
        #[test]
        fn decode_into_replaces_every_field(a in any_interest(), b in any_interest()) {
            let mut slot = a;
            let w = b.encode();
            slot.decode_into(w.clone()).unwrap();
            prop_assert_eq!(slot, b);
        }

        /// The name's place an encoding reports is where its decoder finds
        /// the name, in an encoding byte for byte that of the other encoders.
        #[test]
        fn the_name_lies_where_the_encoder_says(i in any_interest()) {
            let (w, at) = i.encode_locating_name();
            let mut into = Vec::new();
            i.encode_into(&mut into);
            prop_assert_eq!(&w[..], &into[..]);
            prop_assert_eq!(w.len(), i.encoded_len());
            let decoded = Interest::decode(&w).unwrap();
            prop_assert_eq!(decoded.name.range_in_buffer(), at..at + i.name.value().len());
            let mut moved = i.name.clone();
            moved.move_to(w.clone(), at).unwrap();
            prop_assert_eq!(moved.buffer(), &w);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2048))]

        /// Whatever the common-shape decoder accepts, the general decoder decodes
        /// to the same Interest: over Interests of the fields it reads and others,
        /// absent, repeated or out of order, of lengths right and wrong, with
        /// either length form, after a name that may be malformed too, and
        /// sometimes followed by a stray byte.
        #[test]
        fn common_shape_agrees_with_general(name in any_name_value(),
                                           elements in shaped_elements(&[(0x21, 0), (0x12, 0), (0x0a, 4), (0x0c, 2), (0x22, 1)], &[0x1e, 0x24, 0x40, 0x0f, 0x2c]),
                                           trailing in trailing()) {
            let mut w = encode_elements(&[(NAME as u8, name, false)]);
            w.extend_from_slice(&encode_elements(&elements));
            let mut w = encode_elements(&[(INTEREST as u8, w, false)]);
            w.extend_from_slice(&trailing);
            let w = Bytes::from(w);
            if CommonShape::read(&w).is_some() {
                prop_assert_eq!(Interest::decode(&w), Interest::decode_general(&w));
            }
            // Either way, the name holds the packet it was decoded from.
            for i in [Interest::decode(&w), Interest::decode_general(&w)].into_iter().flatten() {
                prop_assert_eq!(i.name.buffer(), &w);
            }
        }
    }

    proptest! {
        #[test]
        fn never_panics(data in proptest::collection::vec(any::<u8>(), 0..80)) {
            let mut v = vec![5u8, data.len() as u8];
            v.extend_from_slice(&data);
            let _ = Interest::decode(&Bytes::from(v));
        }
    }
}
