//! Augustus' fixed-offset packet format: the second codec, for reproducing the
//! Augustus and Caesar experiments with their own traffic.
//!
//! The papers only say that names carry "component offsets" instead of per-component
//! TLVs; the byte layout below is the one of the Bell Labs reference code that
//! Augustus and Caesar ran on (ICN packets straight over IPv4, protocol 253, which
//! IANA reserves for experimentation). All integers are big-endian.
//!
//! | offset        | size | field                                                       |
//! |---------------|------|-------------------------------------------------------------|
//! | 0             | 2    | type: 0 = Interest, 1 = Data (2 = control, not accepted)    |
//! | 2             | 2    | pkt_len: the ICN packet, header to end of payload (no IPv4) |
//! | 4             | 1    | hop_limit                                                   |
//! | 5             | 2    | flags (opaque, carried unchanged)                           |
//! | 7             | 2    | hdr_len: bytes before the payload                           |
//! | 9             | 2    | name_len = N                                                |
//! | 11            | N    | name, e.g. `/com/google/www` (bytes, not necessarily text)  |
//! | 11+N          | 2    | 0x0001: the component-offsets TLV type                      |
//! | 13+N          | 2    | 2k: its length                                              |
//! | 15+N          | 2k   | k offsets: index in the name of the `/` opening component i |
//! | 15+N+2k       | ...  | up to hdr_len: further 2+2 TLVs ("extensions"), kept raw    |
//! | hdr_len       | ...  | up to pkt_len: payload (Data content)                       |
//!
//! The table's offsets count from the start of the ICN packet, which follows an IPv4
//! header. [`Packet::decode_ipv4`] takes the whole datagram (what a raw IPv4 socket,
//! an Ethernet or a DPDK face receives); [`Packet::decode`] the ICN packet alone (what
//! a UDP tunnel carries, the encapsulation the Augustus paper suggests for spreading
//! names over cores by port).
//!
//! The first 9 bytes are the fixed header; the name starts at byte 11. Component `i`
//! spans from just after offset `i` to offset `i+1` (or the end of the name), so a
//! router hashes the prefix of `n` components without scanning the name.
//!
//! Decoding is strict so that [`Packet::encode`] reproduces a decoded packet byte for
//! byte: the lengths must agree exactly, the offsets must start at 0, increase, and
//! point at `/` bytes. The offsets, not the `/` bytes, define the hierarchy: a `/`
//! that no offset points at is part of a component's value.
//!
//! # Mapping to NDN names
//!
//! [`Packet::name`] turns each Augustus component into a GenericNameComponent holding
//! the same bytes, so the engine's tables serve both codecs with one [`Name`] type.
//! Kept: the component sequence, hence exact-match and prefix relations (CS/PIT/FIB
//! give the same answers as on the Augustus name). Lost: nothing on the way in;
//! on the way out ([`Packet::from_name`]) only GenericNameComponents have an
//! Augustus form, so a name with typed components (segment, version, digest, ...)
//! is refused rather than silently merged with a generic one. Hashes differ: Augustus
//! hashes the raw name bytes, Trajan the NDN encoding.

use std::net::Ipv4Addr;

use bytes::Bytes;
use thiserror::Error;

use crate::name::{Name, MAX_COMPONENTS};
use crate::types::GENERIC_COMPONENT;
use crate::MAX_PACKET_SIZE;

/// IP protocol number of ICN packets (IANA: "use for experimentation and testing").
pub const IPPROTO_ICN: u8 = 253;

/// Size of the fixed header (type, pkt_len, hop_limit, flags, hdr_len).
pub const FIXED_HEADER_LEN: usize = 9;

/// Where the name starts: the fixed header plus the 2-byte name length.
pub const NAME_START: usize = FIXED_HEADER_LEN + 2;

/// TLV type of the component-offsets element that must follow the name.
pub const TLV_COMPONENT_OFFSETS: u16 = 0x0001;

/// Hop limit given to packets Trajan originates, the reference traffic generator's.
pub const DEFAULT_HOP_LIMIT: u8 = 10;

/// The smallest valid packet: fixed header, empty name, empty offsets TLV.
const MIN_LEN: usize = NAME_START + 4;

/// Size of the IPv4 header Trajan writes (no options).
pub const IPV4_HEADER_LEN: usize = 20;

/// The separator byte every component offset must point at.
const SEPARATOR: u8 = b'/';

/// Why an Augustus packet was dropped. One variant per counter a router keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum AugustusError {
    /// The buffer ended inside a field or before pkt_len bytes.
    #[error("truncated Augustus packet")]
    Truncated,
    /// pkt_len or hdr_len disagrees with the packet's layout.
    #[error("Augustus length field disagrees with the packet")]
    BadLength,
    /// Larger than [`MAX_PACKET_SIZE`], or too large for the 16-bit length fields.
    #[error("Augustus packet too large")]
    TooLarge,
    /// A packet type other than Interest (0) or Data (1).
    #[error("unknown Augustus packet type {0}")]
    UnknownType(u16),
    /// The element after the name is not the component-offsets TLV.
    #[error("component-offsets TLV missing")]
    MissingOffsets,
    /// Offsets of odd length, not starting at 0, not increasing, past the name, or
    /// not pointing at a `/`.
    #[error("bad component offsets")]
    BadOffsets,
    /// The header extensions are not a sequence of whole 2+2 TLVs.
    #[error("malformed Augustus header extension")]
    BadExtension,
    /// The datagram is not IPv4.
    #[error("not an IPv4 packet")]
    NotIpv4,
    /// IHL or total length impossible, or the reserved flag set.
    #[error("malformed IPv4 header")]
    BadIpv4Header,
    /// A fragment: its ICN header is incomplete or absent, and Trajan does not reassemble.
    #[error("IPv4 fragment")]
    Ipv4Fragment,
    /// The IPv4 payload is another protocol than the one asked for.
    #[error("IPv4 protocol {0} is not the one expected (253 for ICN)")]
    NotIcn(u8),
    /// The IPv4 header checksum does not verify.
    #[error("IPv4 header checksum mismatch")]
    BadChecksum,
    /// An NDN name component other than GenericNameComponent has no Augustus form.
    #[error("name component of type {0} has no Augustus form")]
    TypedComponent(u32),
}

/// The two packet types Augustus forwards.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// A request for content by name.
    Interest,
    /// Content answering an Interest, carried as the payload.
    Data,
}

impl Kind {
    /// The wire value of the type field.
    pub fn code(self) -> u16 {
        match self {
            Kind::Interest => 0,
            Kind::Data => 1,
        }
    }

    fn from_code(code: u16) -> Result<Self, AugustusError> {
        match code {
            0 => Ok(Kind::Interest),
            1 => Ok(Kind::Data),
            c => Err(AugustusError::UnknownType(c)),
        }
    }
}

/// A decoded Augustus packet: a view whose name, offsets, extensions and payload are
/// slices of the receive buffer. The variable parts are private because their
/// invariants (valid offsets, bounded total size) are what make [`Packet::encode`]
/// infallible.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Packet {
    /// Whether the packet is an Interest or Data.
    pub kind: Kind,
    /// Hops the packet may still take, from the fixed header.
    pub hop_limit: u8,
    /// Opaque flags, forwarded as received.
    pub flags: u16,
    name: Bytes,
    offsets: Bytes,
    extensions: Bytes,
    payload: Bytes,
}

#[inline]
fn be16(b: &[u8], at: usize) -> Result<u16, AugustusError> {
    let two = b.get(at..at + 2).ok_or(AugustusError::Truncated)?;
    Ok(u16::from_be_bytes([two[0], two[1]]))
}

/// Checks that the offsets start at 0, increase, stay inside the name and point at
/// separators; an empty name must have no offsets.
fn validate_offsets(name: &[u8], offsets: &[u8]) -> Result<(), AugustusError> {
    if offsets.len() % 2 == 1 || offsets.len() / 2 > MAX_COMPONENTS {
        return Err(AugustusError::BadOffsets);
    }
    if name.is_empty() {
        return if offsets.is_empty() { Ok(()) } else { Err(AugustusError::BadOffsets) };
    }
    let mut expected_min = 0usize;
    for (i, pair) in offsets.chunks_exact(2).enumerate() {
        let off = u16::from_be_bytes([pair[0], pair[1]]) as usize;
        let first_ok = i > 0 || off == 0;
        if !first_ok || off < expected_min || name.get(off) != Some(&SEPARATOR) {
            return Err(AugustusError::BadOffsets);
        }
        expected_min = off + 1;
    }
    if offsets.is_empty() {
        return Err(AugustusError::BadOffsets);
    }
    Ok(())
}

/// Checks that `ext` is a whole number of 2+2 TLVs.
fn validate_extensions(ext: &[u8]) -> Result<(), AugustusError> {
    let mut pos = 0;
    while pos < ext.len() {
        let len = be16(ext, pos + 2).map_err(|_| AugustusError::BadExtension)? as usize;
        pos += 4 + len;
        if pos > ext.len() {
            return Err(AugustusError::BadExtension);
        }
    }
    Ok(())
}

impl Packet {
    /// Decodes an ICN packet (the IPv4 payload).
    pub fn decode(wire: &Bytes) -> Result<Self, AugustusError> {
        let b = &wire[..];
        if b.len() > MAX_PACKET_SIZE {
            return Err(AugustusError::TooLarge);
        }
        if b.len() < MIN_LEN {
            return Err(AugustusError::Truncated);
        }
        let kind = Kind::from_code(be16(b, 0)?)?;
        let pkt_len = be16(b, 2)? as usize;
        if pkt_len > b.len() {
            return Err(AugustusError::Truncated);
        }
        if pkt_len < b.len() {
            return Err(AugustusError::BadLength);
        }
        let hop_limit = b[4];
        let flags = be16(b, 5)?;
        let hdr_len = be16(b, 7)? as usize;
        let name_end = NAME_START + be16(b, FIXED_HEADER_LEN)? as usize;
        if be16(b, name_end)? != TLV_COMPONENT_OFFSETS {
            return Err(AugustusError::MissingOffsets);
        }
        let offsets_start = name_end + 4;
        let offsets_end = offsets_start + be16(b, name_end + 2)? as usize;
        if offsets_end > b.len() {
            return Err(AugustusError::Truncated);
        }
        if hdr_len < offsets_end || hdr_len > b.len() {
            return Err(AugustusError::BadLength);
        }
        validate_offsets(&b[NAME_START..name_end], &b[offsets_start..offsets_end])?;
        validate_extensions(&b[offsets_end..hdr_len])?;
        Ok(Packet {
            kind,
            hop_limit,
            flags,
            name: wire.slice(NAME_START..name_end),
            offsets: wire.slice(offsets_start..offsets_end),
            extensions: wire.slice(offsets_end..hdr_len),
            payload: wire.slice(hdr_len..),
        })
    }

    /// Decodes an IPv4 datagram carrying an ICN packet, as Augustus receives them.
    /// Bytes past the IPv4 total length (Ethernet padding) are ignored; IPv4 options
    /// are skipped and not kept.
    pub fn decode_ipv4(datagram: &Bytes) -> Result<(Ipv4Header, Self), AugustusError> {
        let (ip, range) = Ipv4Header::parse(datagram, IPPROTO_ICN)?;
        let packet = Packet::decode(&datagram.slice(range))?;
        Ok((ip, packet))
    }

    /// Builds a packet for an NDN name, for Trajan's own producers and for faces that
    /// translate. Only GenericNameComponents can be expressed.
    pub fn from_name(kind: Kind, name: &Name, payload: Bytes) -> Result<Self, AugustusError> {
        let mut raw = Vec::with_capacity(name.value().len());
        let mut offsets = Vec::with_capacity(2 * name.len());
        for c in name.components() {
            if c.typ != GENERIC_COMPONENT {
                return Err(AugustusError::TypedComponent(c.typ));
            }
            let at = u16::try_from(raw.len()).map_err(|_| AugustusError::TooLarge)?;
            offsets.extend_from_slice(&at.to_be_bytes());
            raw.push(SEPARATOR);
            raw.extend_from_slice(c.value);
        }
        let p = Packet {
            kind,
            hop_limit: DEFAULT_HOP_LIMIT,
            flags: 0,
            name: Bytes::from(raw),
            offsets: Bytes::from(offsets),
            extensions: Bytes::new(),
            payload,
        };
        if p.encoded_len() > MAX_PACKET_SIZE {
            return Err(AugustusError::TooLarge);
        }
        Ok(p)
    }

    /// The name as carried on the wire (separators included): what Augustus hashes.
    /// For the fuzzing checks ([`crate::fuzzing`]) and tests, which assert that a
    /// name converted to NDN and back is carried the same way.
    pub(crate) fn raw_name(&self) -> &Bytes {
        &self.name
    }

    /// Number of name components.
    pub fn component_count(&self) -> usize {
        self.offsets.len() / 2
    }

    fn offset(&self, i: usize) -> usize {
        u16::from_be_bytes([self.offsets[2 * i], self.offsets[2 * i + 1]]) as usize
    }

    /// The components' values (separators excluded), in order.
    pub fn components(&self) -> impl Iterator<Item = &[u8]> + '_ {
        let k = self.component_count();
        (0..k).map(move |i| {
            let end = if i + 1 < k { self.offset(i + 1) } else { self.name.len() };
            &self.name[self.offset(i) + 1..end]
        })
    }

    /// The name as an NDN [`Name`] of GenericNameComponents (see the module docs).
    pub fn name(&self) -> Name {
        Name::from_components(self.components().map(|c| (GENERIC_COMPONENT, c)))
    }

    /// The 2+2 TLVs between the component offsets and the payload, unparsed.
    pub fn extensions(&self) -> &Bytes {
        &self.extensions
    }

    /// The payload (a Data packet's content).
    pub fn payload(&self) -> &Bytes {
        &self.payload
    }

    fn header_len(&self) -> usize {
        NAME_START + self.name.len() + 4 + self.offsets.len() + self.extensions.len()
    }

    /// Size of the ICN packet. Never above [`MAX_PACKET_SIZE`], so it fits pkt_len.
    pub fn encoded_len(&self) -> usize {
        self.header_len() + self.payload.len()
    }

    /// Appends the ICN packet to `out`.
    pub fn encode_into(&self, out: &mut Vec<u8>) {
        // Both lengths are bounded by MAX_PACKET_SIZE (checked at construction).
        let len16 = |n: usize| (n as u16).to_be_bytes();
        out.extend_from_slice(&self.kind.code().to_be_bytes());
        out.extend_from_slice(&len16(self.encoded_len()));
        out.push(self.hop_limit);
        out.extend_from_slice(&self.flags.to_be_bytes());
        out.extend_from_slice(&len16(self.header_len()));
        out.extend_from_slice(&len16(self.name.len()));
        out.extend_from_slice(&self.name);
        out.extend_from_slice(&TLV_COMPONENT_OFFSETS.to_be_bytes());
        out.extend_from_slice(&len16(self.offsets.len()));
        out.extend_from_slice(&self.offsets);
        out.extend_from_slice(&self.extensions);
        out.extend_from_slice(&self.payload);
    }

    /// The ICN packet as a new buffer.
    pub fn encode(&self) -> Bytes {
        let mut out = Vec::with_capacity(self.encoded_len());
        self.encode_into(&mut out);
        Bytes::from(out)
    }

    /// The packet inside an option-less IPv4 header: the inverse of
    /// [`Packet::decode_ipv4`], for the fuzzing checks ([`crate::fuzzing`]) and
    /// tests that round-trip it (faces write their headers with
    /// [`Ipv4Header::to_bytes`] instead, in place in their frames).
    pub(crate) fn encode_ipv4(&self, ip: &Ipv4Header) -> Bytes {
        let mut out = Vec::with_capacity(IPV4_HEADER_LEN + self.encoded_len());
        out.extend_from_slice(&ip.to_bytes(self.encoded_len(), IPPROTO_ICN));
        self.encode_into(&mut out);
        Bytes::from(out)
    }
}

/// The IPv4 fields an Augustus face reads or sets. Augustus puts a hash of the name
/// in the source address so that NIC receive-side scaling spreads names over cores.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ipv4Header {
    /// DSCP and ECN.
    pub tos: u8,
    /// IPv4 Identification, which ties fragments of one datagram together.
    pub identification: u16,
    /// The Don't Fragment flag.
    pub dont_fragment: bool,
    /// IPv4 time to live.
    pub ttl: u8,
    /// Source address; a sender puts a hash of the name here to spread names over receive queues.
    pub src: Ipv4Addr,
    /// Destination address.
    pub dst: Ipv4Addr,
}

const IPV4_FLAG_RESERVED: u16 = 0x8000;
const IPV4_FLAG_DF: u16 = 0x4000;
const IPV4_FLAG_MF: u16 = 0x2000;
const IPV4_FRAGMENT_OFFSET: u16 = 0x1fff;

/// RFC 1071 Internet checksum of a header (whose checksum field is zero when
/// computing, or as received when verifying: then the result is 0).
pub fn internet_checksum(header: &[u8]) -> u16 {
    internet_checksum_of(&[header])
}

/// RFC 1071 Internet checksum over consecutive parts, as if concatenated (every
/// part but the last must have even length): UDP's pseudo-header, header and
/// payload. The 64-bit sum cannot overflow for any packet that fits in memory.
pub fn internet_checksum_of(parts: &[&[u8]]) -> u16 {
    let mut sum: u64 = parts.iter().flat_map(|p| p.chunks(2)).map(|w| u16::from_be_bytes([w[0], *w.get(1).unwrap_or(&0)]) as u64).sum();
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

impl Ipv4Header {
    /// A header for a packet Trajan sends.
    pub fn new(src: Ipv4Addr, dst: Ipv4Addr, ttl: u8) -> Self {
        Ipv4Header { tos: 0, identification: 0, dont_fragment: true, ttl, src, dst }
    }

    /// Validates the IPv4 header of `d` (version, lengths, no fragment, checksum,
    /// the expected `protocol`) and returns it with the payload's byte range. Public
    /// because the DPDK faces carry NDN over UDP/IPv4 with the same header rules.
    pub fn parse(d: &[u8], protocol: u8) -> Result<(Self, std::ops::Range<usize>), AugustusError> {
        let first = *d.first().ok_or(AugustusError::Truncated)?;
        if first >> 4 != 4 {
            return Err(AugustusError::NotIpv4);
        }
        let ihl = (first & 0x0f) as usize * 4;
        if ihl < IPV4_HEADER_LEN {
            return Err(AugustusError::BadIpv4Header);
        }
        let header = d.get(..ihl).ok_or(AugustusError::Truncated)?;
        let total = be16(header, 2)? as usize;
        if total < ihl {
            return Err(AugustusError::BadIpv4Header);
        }
        if total > d.len() {
            return Err(AugustusError::Truncated);
        }
        let frag = be16(header, 6)?;
        if frag & IPV4_FLAG_RESERVED != 0 {
            return Err(AugustusError::BadIpv4Header);
        }
        if frag & (IPV4_FLAG_MF | IPV4_FRAGMENT_OFFSET) != 0 {
            return Err(AugustusError::Ipv4Fragment);
        }
        if header[9] != protocol {
            return Err(AugustusError::NotIcn(header[9]));
        }
        if internet_checksum(header) != 0 {
            return Err(AugustusError::BadChecksum);
        }
        let addr = |at: usize| Ipv4Addr::new(header[at], header[at + 1], header[at + 2], header[at + 3]);
        let ip = Ipv4Header {
            tos: header[1],
            identification: be16(header, 4)?,
            dont_fragment: frag & IPV4_FLAG_DF != 0,
            ttl: header[8],
            src: addr(12),
            dst: addr(16),
        };
        Ok((ip, ihl..total))
    }

    /// The option-less header of a datagram carrying `payload_len` bytes of
    /// `protocol`, checksum included (`payload_len` at most [`MAX_PACKET_SIZE`] plus
    /// link headers, so the total fits 16 bits).
    pub fn to_bytes(&self, payload_len: usize, protocol: u8) -> [u8; IPV4_HEADER_LEN] {
        let total = ((IPV4_HEADER_LEN + payload_len).min(u16::MAX as usize) as u16).to_be_bytes();
        let flags = (if self.dont_fragment { IPV4_FLAG_DF } else { 0 }).to_be_bytes();
        let id = self.identification.to_be_bytes();
        let (s, d) = (self.src.octets(), self.dst.octets());
        let mut h = [
            0x45, self.tos, total[0], total[1], id[0], id[1], flags[0], flags[1], self.ttl, protocol, 0, 0, s[0], s[1], s[2], s[3], d[0], d[1], d[2], d[3],
        ];
        let sum = internet_checksum(&h);
        h[10..12].copy_from_slice(&sum.to_be_bytes());
        h
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// `/com/google/www` as an Interest, written field by field from the layout table.
    fn google_interest() -> Vec<u8> {
        let name = b"/com/google/www";
        let mut v = vec![0, 0]; // type Interest
        let pkt_len = 11 + name.len() + 4 + 6;
        v.extend_from_slice(&(pkt_len as u16).to_be_bytes());
        v.push(10); // hop limit
        v.extend_from_slice(&[0xab, 0xcd]); // flags
        v.extend_from_slice(&(pkt_len as u16).to_be_bytes()); // hdr_len: no payload
        v.extend_from_slice(&(name.len() as u16).to_be_bytes());
        v.extend_from_slice(name);
        v.extend_from_slice(&[0, 1, 0, 6, 0, 0, 0, 4, 0, 11]);
        v
    }

    #[test]
    fn decodes_interest_laid_out_as_documented() {
        let w = Bytes::from(google_interest());
        let p = Packet::decode(&w).unwrap();
        assert_eq!(p.kind, Kind::Interest);
        assert_eq!(p.hop_limit, 10);
        assert_eq!(p.flags, 0xabcd);
        assert_eq!(&p.raw_name()[..], b"/com/google/www");
        assert_eq!(p.component_count(), 3);
        assert_eq!(p.components().collect::<Vec<_>>(), [&b"com"[..], b"google", b"www"]);
        assert_eq!(p.name().to_string(), "/com/google/www");
        assert!(p.payload().is_empty());
        assert_eq!(p.encode(), w);
    }

    #[test]
    fn builds_data_with_payload_and_header_fields() {
        let name: Name = "/com/updates/sw".parse().unwrap();
        let p = Packet::from_name(Kind::Data, &name, Bytes::from_static(b"hello")).unwrap();
        let w = p.encode();
        assert_eq!(&w[0..2], &[0, 1]);
        assert_eq!(u16::from_be_bytes([w[2], w[3]]) as usize, w.len());
        assert_eq!(w[4], DEFAULT_HOP_LIMIT);
        let hdr_len = u16::from_be_bytes([w[7], w[8]]) as usize;
        assert_eq!(&w[hdr_len..], b"hello");
        assert_eq!(u16::from_be_bytes([w[9], w[10]]), 15);
        assert_eq!(&w[NAME_START..NAME_START + 15], b"/com/updates/sw");
        assert_eq!(&w[26..36], &[0, 1, 0, 6, 0, 0, 0, 4, 0, 12]);
        let d = Packet::decode(&w).unwrap();
        assert_eq!(d.name(), name);
        assert_eq!(&d.payload()[..], b"hello");
    }

    #[test]
    fn offsets_define_the_hierarchy() {
        // One offset only: "/a/b" is a single component whose value contains '/'.
        let p = Packet::from_name(Kind::Interest, &Name::root().append_generic(b"a/b"), Bytes::new()).unwrap();
        let d = Packet::decode(&p.encode()).unwrap();
        assert_eq!(&d.raw_name()[..], b"/a/b");
        assert_eq!(d.component_count(), 1);
        assert_eq!(d.name().get(0).value, b"a/b");
        // Empty components (a trailing '/', as the reference generator writes) survive.
        let n = Name::root().append_generic(b"x").append_generic(b"");
        let d = Packet::decode(&Packet::from_name(Kind::Interest, &n, Bytes::new()).unwrap().encode()).unwrap();
        assert_eq!(&d.raw_name()[..], b"/x/");
        assert_eq!(d.name(), n);
        // The root name: no name bytes, no offsets.
        let d = Packet::decode(&Packet::from_name(Kind::Data, &Name::root(), Bytes::new()).unwrap().encode()).unwrap();
        assert!(d.name().is_empty());
    }

    #[test]
    fn keeps_header_extensions() {
        let mut v = google_interest();
        // A nonce extension TLV (type 3, 4 bytes) before the (empty) payload.
        v.extend_from_slice(&[0, 3, 0, 4, 1, 2, 3, 4]);
        let len = v.len() as u16;
        v[2..4].copy_from_slice(&len.to_be_bytes());
        v[7..9].copy_from_slice(&len.to_be_bytes());
        let w = Bytes::from(v);
        let p = Packet::decode(&w).unwrap();
        assert_eq!(&p.extensions()[..], &[0, 3, 0, 4, 1, 2, 3, 4]);
        assert_eq!(p.encode(), w);
        // The same bytes with one value byte missing are not whole TLVs.
        let mut bad = w[..w.len() - 1].to_vec();
        let len = bad.len() as u16;
        bad[2..4].copy_from_slice(&len.to_be_bytes());
        bad[7..9].copy_from_slice(&len.to_be_bytes());
        assert_eq!(Packet::decode(&Bytes::from(bad)), Err(AugustusError::BadExtension));
    }

    #[test]
    fn rejects_malformed_packets() {
        let good = google_interest();
        let with = |f: &dyn Fn(&mut Vec<u8>)| {
            let mut v = good.clone();
            f(&mut v);
            Packet::decode(&Bytes::from(v))
        };
        assert_eq!(with(&|v| v[1] = 2), Err(AugustusError::UnknownType(2)));
        assert_eq!(with(&|v| v.truncate(10)), Err(AugustusError::Truncated));
        assert_eq!(with(&|v| v.truncate(v.len() - 1)), Err(AugustusError::Truncated));
        assert_eq!(with(&|v| v.push(0)), Err(AugustusError::BadLength));
        assert_eq!(with(&|v| v[8] -= 1), Err(AugustusError::BadLength));
        assert_eq!(with(&|v| v[27] = 2), Err(AugustusError::MissingOffsets));
        // First offset not 0, offsets decreasing, offset not at a '/', odd length.
        assert_eq!(with(&|v| v[31] = 1), Err(AugustusError::BadOffsets));
        assert_eq!(with(&|v| v[33] = 0), Err(AugustusError::BadOffsets));
        assert_eq!(with(&|v| v[35] = 12), Err(AugustusError::BadOffsets));
        assert_eq!(with(&|v| v[29] = 5), Err(AugustusError::BadOffsets));
        let n: Name = "/a/seg=1".parse().unwrap();
        assert_eq!(Packet::from_name(Kind::Interest, &n, Bytes::new()), Err(AugustusError::TypedComponent(0x32)));
        let huge = Bytes::from(vec![0u8; MAX_PACKET_SIZE]);
        assert_eq!(Packet::from_name(Kind::Data, &n.prefix(1), huge), Err(AugustusError::TooLarge));
    }

    #[test]
    fn internet_checksum_matches_rfc_example() {
        // The IPv4 header used as the worked example of RFC 1071 checksumming
        // (192.168.0.1 -> 192.168.0.199, UDP): its checksum is 0xb861.
        let mut h = [0x45, 0, 0, 0x73, 0, 0, 0x40, 0, 0x40, 0x11, 0xb8, 0x61, 192, 168, 0, 1, 192, 168, 0, 199];
        assert_eq!(internet_checksum(&h), 0);
        h[10] = 0;
        h[11] = 0;
        assert_eq!(internet_checksum(&h), 0xb861);
    }

    #[test]
    fn ipv4_wrapping() {
        let p = Packet::decode(&Bytes::from(google_interest())).unwrap();
        let ip = Ipv4Header::new(Ipv4Addr::new(10, 0, 0, 1), Ipv4Addr::new(10, 0, 0, 2), 64);
        let mut w = p.encode_ipv4(&ip).to_vec();
        assert_eq!(w[9], IPPROTO_ICN);
        assert_eq!(u16::from_be_bytes([w[2], w[3]]) as usize, w.len());
        assert_eq!(Packet::decode_ipv4(&Bytes::from(w.clone())), Ok((ip, p.clone())));
        // Ethernet pads short frames: bytes past the total length are not ICN bytes.
        w.extend_from_slice(&[0; 6]);
        assert_eq!(Packet::decode_ipv4(&Bytes::from(w.clone())), Ok((ip, p)));
        let with = |f: &dyn Fn(&mut Vec<u8>)| {
            let mut v = w.clone();
            f(&mut v);
            Packet::decode_ipv4(&Bytes::from(v)).map(|_| ())
        };
        assert_eq!(with(&|v| v[0] = 0x65), Err(AugustusError::NotIpv4));
        assert_eq!(with(&|v| v[0] = 0x44), Err(AugustusError::BadIpv4Header));
        assert_eq!(with(&|v| v[11] ^= 1), Err(AugustusError::BadChecksum));
        assert_eq!(with(&|v| v[9] = 17), Err(AugustusError::NotIcn(17)));
        assert_eq!(with(&|v| v[6] |= 0x20), Err(AugustusError::Ipv4Fragment));
        assert_eq!(with(&|v| v[2] = 0xff), Err(AugustusError::Truncated));
        assert_eq!(with(&|v| v.truncate(19)), Err(AugustusError::Truncated));
    }

    fn arb_packet() -> impl Strategy<Value = Packet> {
        (
            any::<bool>(),
            any::<u8>(),
            any::<u16>(),
            proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..12), 0..8),
            proptest::collection::vec(any::<u8>(), 0..64),
        )
            .prop_map(|(data, hop, flags, comps, payload)| {
                let name = Name::from_components(comps.iter().map(|c| (GENERIC_COMPONENT, c.as_slice())));
                let kind = if data { Kind::Data } else { Kind::Interest };
                let mut p = Packet::from_name(kind, &name, Bytes::from(payload)).unwrap();
                p.hop_limit = hop;
                p.flags = flags;
                p
            })
    }

    proptest! {
        #[test]
        fn round_trip(p in arb_packet(), src: [u8; 4], ttl: u8) {
            let w = p.encode();
            prop_assert_eq!(w.len(), p.encoded_len());
            let d = Packet::decode(&w).unwrap();
            prop_assert_eq!(&d, &p);
            prop_assert_eq!(d.encode(), w);
            let again = Packet::from_name(p.kind, &d.name(), d.payload().clone()).unwrap();
            prop_assert_eq!(again.raw_name(), p.raw_name());
            let ip = Ipv4Header::new(Ipv4Addr::from(src), Ipv4Addr::LOCALHOST, ttl);
            prop_assert_eq!(Packet::decode_ipv4(&p.encode_ipv4(&ip)).unwrap(), (ip, p));
        }

        #[test]
        fn random_bytes_never_panic(data in proptest::collection::vec(any::<u8>(), 0..96)) {
            let b = Bytes::from(data);
            let _ = Packet::decode(&b);
            let _ = Packet::decode_ipv4(&b);
        }

        #[test]
        fn corrupted_packets_never_panic(p in arb_packet(), at: usize, byte: u8) {
            let mut v = p.encode().to_vec();
            let i = at % v.len();
            v[i] = byte;
            if let Ok(d) = Packet::decode(&Bytes::from(v.clone())) {
                // Whatever still decodes must still re-encode to the same bytes.
                prop_assert_eq!(&d.encode()[..], &v[..]);
            }
        }
    }
}
