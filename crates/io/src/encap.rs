//! Link encapsulations of the kernel-bypass faces: how an NDN packet sits in an
//! Ethernet frame. A DPDK port hands the router whole frames, so the face itself
//! writes and checks the headers the kernel would otherwise own.
//!
//! - [`Encap::Ether`]: NDN straight over Ethernet, EtherType 0x8624 (NFD's Ethernet
//!   face; the payload is an NDN packet or an NDNLPv2 LpPacket).
//! - [`Encap::Udp4`]: NDN over UDP over IPv4 (NFD's UDP face), with the IPv4 header
//!   checksum and the UDP checksum written and verified, so a kernel peer accepts it.
//! - [`Encap::Icn4`]: Augustus' ICN packets straight over IPv4, protocol 253
//!   (`trajan_wire::augustus`); the face translates them to and from NDN.
//!
//! Parsing is bounds-checked and never panics: a frame that is not for the face
//! (another EtherType, protocol or port) or is malformed yields an [`EncapError`],
//! which the face counts and drops.

use std::net::Ipv4Addr;
use std::ops::Range;
use std::str::FromStr;

use bytes::Bytes;
use trajan_wire::augustus::{self, internet_checksum_of, AugustusError, Ipv4Header, IPPROTO_ICN, IPV4_HEADER_LEN};
use trajan_wire::data::DataBuilder;
use trajan_wire::tlv::frame_len;
use trajan_wire::types::{DATA, INTEREST};
use trajan_wire::{Data, Interest, LpPacket, WireError};

/// NDN's EtherType (IEEE-assigned, used by NFD's Ethernet faces).
pub const ETHERTYPE_NDN: u16 = 0x8624;
/// IPv4's EtherType.
pub const ETHERTYPE_IPV4: u16 = 0x0800;
/// Destination MAC, source MAC, EtherType (no VLAN tag).
pub const ETHER_HEADER_LEN: usize = 14;
/// Source port, destination port, length, checksum.
pub const UDP_HEADER_LEN: usize = 8;
/// IP protocol number of UDP.
const IPPROTO_UDP: u8 = 17;
/// TTL of the IPv4 packets a face sends.
const TTL: u8 = 64;

/// How NDN packets are carried in the frames of a port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encap {
    /// Ethernet, EtherType 0x8624.
    Ether,
    /// Ethernet, IPv4, UDP.
    Udp4,
    /// Ethernet, IPv4 protocol 253, Augustus' packet format.
    Icn4,
}

impl FromStr for Encap {
    type Err = String;

    /// The configuration names: `ether`, `udp4`, `icn4`.
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "ether" => Ok(Encap::Ether),
            "udp4" => Ok(Encap::Udp4),
            "icn4" => Ok(Encap::Icn4),
            _ => Err(format!("unknown encapsulation `{s}` (ether, udp4, icn4)")),
        }
    }
}

/// The addresses a face writes into every frame it sends and expects in every frame
/// it receives. IPv4 addresses and ports matter only to the encapsulations that
/// carry them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LinkAddrs {
    /// The port's own MAC address, the source of every frame sent.
    pub local_mac: [u8; 6],
    /// The peer's (or a multicast group's) MAC address, the destination of every frame sent.
    pub remote_mac: [u8; 6],
    /// Source address of the IPv4 packets sent.
    pub local_ip: Ipv4Addr,
    /// Destination address of the IPv4 packets sent.
    pub remote_ip: Ipv4Addr,
    /// UDP source port of datagrams sent; received datagrams must be addressed to it.
    pub local_port: u16,
    /// UDP destination port of datagrams sent.
    pub remote_port: u16,
}

impl Default for LinkAddrs {
    /// NDN's Ethernet multicast group as destination, NDN's UDP port on both ends.
    fn default() -> Self {
        LinkAddrs {
            local_mac: [0; 6],
            remote_mac: [0x01, 0x00, 0x5e, 0x00, 0x17, 0xaa],
            local_ip: Ipv4Addr::UNSPECIFIED,
            remote_ip: Ipv4Addr::UNSPECIFIED,
            local_port: crate::NDN_PORT,
            remote_port: crate::NDN_PORT,
        }
    }
}

/// Why a received frame was dropped.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EncapError {
    /// The frame ends before its headers do, or holds no whole TLV element after them.
    #[error("frame shorter than its headers")]
    Truncated,
    /// The frame's EtherType is not the encapsulation's (traffic for another protocol).
    #[error("EtherType {0:#06x} is not the face's")]
    EtherType(u16),
    /// The IPv4 header is malformed, fails its checksum or names another protocol.
    #[error("IPv4: {0}")]
    Ipv4(#[from] AugustusError),
    /// The UDP length field is below the header's size or beyond the IPv4 payload.
    #[error("malformed UDP header")]
    BadUdp,
    /// The UDP checksum does not verify: the datagram was damaged on the way.
    #[error("UDP checksum mismatch")]
    UdpChecksum,
    /// The datagram is addressed to another UDP port than the face's local port.
    #[error("UDP port {0} is not the face's")]
    Port(u16),
    /// An Icn4 payload is not a valid Augustus packet, or a name has no Augustus form.
    #[error("Augustus packet: {0}")]
    Augustus(AugustusError),
    /// An NDN packet to translate for an Icn4 face does not decode.
    #[error("NDN packet: {0}")]
    Ndn(#[from] WireError),
    /// NDN packets without an Augustus form: Nacks, fragments, link-only packets.
    #[error("no Augustus form for this NDN packet")]
    Untranslatable,
}

/// Augustus' packet (an [`Encap::Icn4`] payload) as the NDN packet the engine
/// forwards: an Interest with the same name and hop limit, or a Data with the
/// payload as content (signed DigestSha256, since Augustus Data carry no signature).
pub fn icn_to_ndn(payload: &Bytes) -> Result<Bytes, EncapError> {
    let p = augustus::Packet::decode(payload).map_err(EncapError::Augustus)?;
    Ok(match p.kind {
        augustus::Kind::Interest => {
            let mut i = Interest::new(p.name());
            i.hop_limit = Some(p.hop_limit);
            i.encode()
        }
        augustus::Kind::Data => DataBuilder::new(p.name()).build(p.payload()),
    })
}

/// The engine's NDN packet as an Augustus packet for an [`Encap::Icn4`] face: the
/// name (generic components only) and, for Data, the content. Link headers (a PIT
/// token) are dropped: Augustus has no field for them.
pub fn ndn_to_icn(pkt: &Bytes) -> Result<augustus::Packet, EncapError> {
    let lp = LpPacket::decode(pkt)?;
    if lp.headers.nack.is_some() || lp.frag_count.is_some_and(|n| n > 1) {
        return Err(EncapError::Untranslatable);
    }
    let inner = lp.fragment.ok_or(EncapError::Untranslatable)?;
    let to_icn = |r: Result<augustus::Packet, AugustusError>| r.map_err(EncapError::Augustus);
    match inner.first().map(|&t| u32::from(t)) {
        Some(INTEREST) => {
            let i = Interest::decode(&inner)?;
            let mut p = to_icn(augustus::Packet::from_name(augustus::Kind::Interest, &i.name, Bytes::new()))?;
            p.hop_limit = i.hop_limit.unwrap_or(augustus::DEFAULT_HOP_LIMIT);
            Ok(p)
        }
        Some(DATA) => {
            let d = Data::decode(&inner)?;
            to_icn(augustus::Packet::from_name(augustus::Kind::Data, d.name(), d.content_bytes()))
        }
        _ => Err(EncapError::Untranslatable),
    }
}

/// One face's encapsulation and addresses: writes the headers of frames it sends and
/// finds the payload of frames it receives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Link {
    /// Which headers surround the payload.
    pub encap: Encap,
    /// The addresses written into and checked in those headers.
    pub addrs: LinkAddrs,
}

fn be16(b: &[u8], at: usize) -> Result<u16, EncapError> {
    let two = b.get(at..at + 2).ok_or(EncapError::Truncated)?;
    Ok(u16::from_be_bytes([two[0], two[1]]))
}

impl Link {
    /// Bytes of headers in front of the payload.
    pub fn header_len(&self) -> usize {
        match self.encap {
            Encap::Ether => ETHER_HEADER_LEN,
            Encap::Udp4 => ETHER_HEADER_LEN + IPV4_HEADER_LEN + UDP_HEADER_LEN,
            Encap::Icn4 => ETHER_HEADER_LEN + IPV4_HEADER_LEN,
        }
    }

    fn ethertype(&self) -> u16 {
        match self.encap {
            Encap::Ether => ETHERTYPE_NDN,
            Encap::Udp4 | Encap::Icn4 => ETHERTYPE_IPV4,
        }
    }

    /// Writes the headers of a frame whose `payload` follows them: `frame` is the
    /// whole frame, `header_len()` bytes of headers then the payload already in place
    /// (the UDP checksum covers it). Frames shorter than the headers are left alone.
    pub fn write_headers(&self, frame: &mut [u8]) {
        let hl = self.header_len();
        if frame.len() < hl {
            return;
        }
        let (head, payload) = frame.split_at_mut(hl);
        let a = &self.addrs;
        head[0..6].copy_from_slice(&a.remote_mac);
        head[6..12].copy_from_slice(&a.local_mac);
        head[12..14].copy_from_slice(&self.ethertype().to_be_bytes());
        let ip = Ipv4Header::new(a.local_ip, a.remote_ip, TTL);
        match self.encap {
            Encap::Ether => {}
            Encap::Icn4 => head[ETHER_HEADER_LEN..].copy_from_slice(&ip.to_bytes(payload.len(), IPPROTO_ICN)),
            Encap::Udp4 => {
                let udp_len = UDP_HEADER_LEN + payload.len();
                let (iph, udp) = head[ETHER_HEADER_LEN..].split_at_mut(IPV4_HEADER_LEN);
                iph.copy_from_slice(&ip.to_bytes(udp_len, IPPROTO_UDP));
                udp[0..2].copy_from_slice(&a.local_port.to_be_bytes());
                udp[2..4].copy_from_slice(&a.remote_port.to_be_bytes());
                udp[4..6].copy_from_slice(&(udp_len.min(u16::MAX as usize) as u16).to_be_bytes());
                udp[6..8].copy_from_slice(&[0, 0]);
                let sum = udp_checksum(a.local_ip, a.remote_ip, udp, payload);
                // RFC 768: a computed zero is sent as all ones (zero means "none").
                let sum = if sum == 0 { 0xffff } else { sum };
                udp[6..8].copy_from_slice(&sum.to_be_bytes());
            }
        }
    }

    /// Where the payload of a received frame lies, after checking every header of
    /// the encapsulation (EtherType; IPv4 header, checksum and protocol; UDP length,
    /// checksum and the face's port). The source addresses are not checked: a port is
    /// a point-to-point link.
    pub fn payload(&self, frame: &[u8]) -> Result<Range<usize>, EncapError> {
        let ethertype = be16(frame, 12)?;
        if ethertype != self.ethertype() {
            return Err(EncapError::EtherType(ethertype));
        }
        let ip_start = ETHER_HEADER_LEN;
        match self.encap {
            // Short frames arrive padded to Ethernet's 60 bytes: the payload is the
            // one TLV element at the start.
            Encap::Ether => match frame_len(&frame[ETHER_HEADER_LEN..], crate::MAX_FRAME_SIZE)? {
                Some(n) => Ok(ETHER_HEADER_LEN..ETHER_HEADER_LEN + n),
                None => Err(EncapError::Truncated),
            },
            Encap::Icn4 => {
                let (_, r) = Ipv4Header::parse(&frame[ip_start..], IPPROTO_ICN)?;
                Ok(ip_start + r.start..ip_start + r.end)
            }
            Encap::Udp4 => {
                let (ip, r) = Ipv4Header::parse(&frame[ip_start..], IPPROTO_UDP)?;
                let dgram = &frame[ip_start + r.start..ip_start + r.end];
                let udp = dgram.get(..UDP_HEADER_LEN).ok_or(EncapError::Truncated)?;
                let udp_len = be16(udp, 4)? as usize;
                if udp_len < UDP_HEADER_LEN || udp_len > dgram.len() {
                    return Err(EncapError::BadUdp);
                }
                let dst = be16(udp, 2)?;
                if dst != self.addrs.local_port {
                    return Err(EncapError::Port(dst));
                }
                let payload = &dgram[UDP_HEADER_LEN..udp_len];
                // A zero checksum means the sender computed none (allowed over IPv4).
                if be16(udp, 6)? != 0 && udp_checksum(ip.src, ip.dst, udp, payload) != 0 {
                    return Err(EncapError::UdpChecksum);
                }
                let start = ip_start + r.start + UDP_HEADER_LEN;
                Ok(start..start + payload.len())
            }
        }
    }
}

/// The UDP checksum over the IPv4 pseudo-header, the UDP header (with its checksum
/// field as it stands: zero when computing, as received when verifying) and the
/// payload.
fn udp_checksum(src: Ipv4Addr, dst: Ipv4Addr, udp_header: &[u8], payload: &[u8]) -> u16 {
    let len = ((UDP_HEADER_LEN + payload.len()).min(u16::MAX as usize) as u16).to_be_bytes();
    let (s, d) = (src.octets(), dst.octets());
    let pseudo = [s[0], s[1], s[2], s[3], d[0], d[1], d[2], d[3], 0, IPPROTO_UDP, len[0], len[1]];
    internet_checksum_of(&[&pseudo, udp_header, payload])
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn link(encap: Encap) -> Link {
        let addrs = LinkAddrs {
            local_mac: [2, 0, 0, 0, 0, 1],
            remote_mac: [2, 0, 0, 0, 0, 2],
            local_ip: Ipv4Addr::new(10, 0, 0, 1),
            remote_ip: Ipv4Addr::new(10, 0, 0, 2),
            local_port: 6363,
            remote_port: 6364,
        };
        Link { encap, addrs }
    }

    /// The peer's view of a link: the same addresses, ends swapped.
    fn peer(l: &Link) -> Link {
        let a = l.addrs;
        let addrs = LinkAddrs {
            local_mac: a.remote_mac,
            remote_mac: a.local_mac,
            local_ip: a.remote_ip,
            remote_ip: a.local_ip,
            local_port: a.remote_port,
            remote_port: a.local_port,
        };
        Link { encap: l.encap, addrs }
    }

    fn frame(l: &Link, payload: &[u8]) -> Vec<u8> {
        let mut f = vec![0u8; l.header_len()];
        f.extend_from_slice(payload);
        l.write_headers(&mut f);
        f
    }

    #[test]
    fn ether_frame_is_laid_out_as_nfd_sends_it() {
        let l = link(Encap::Ether);
        let mut f = frame(&l, b"\x05\x03abc");
        assert_eq!(&f[..6], &[2, 0, 0, 0, 0, 2]);
        assert_eq!(&f[6..12], &[2, 0, 0, 0, 0, 1]);
        assert_eq!(&f[12..14], &[0x86, 0x24]);
        assert_eq!(&f[peer(&l).payload(&f).unwrap()], b"\x05\x03abc");
        f.resize(60, 0);
        assert_eq!(&f[peer(&l).payload(&f).unwrap()], b"\x05\x03abc", "Ethernet padding is not payload");
    }

    #[test]
    fn udp_frame_has_valid_checksums_and_ports() {
        let l = link(Encap::Udp4);
        let f = frame(&l, b"\x05\x03abc");
        assert_eq!(f.len(), 14 + 20 + 8 + 5);
        assert_eq!(trajan_wire::augustus::internet_checksum(&f[14..34]), 0);
        assert_eq!(&f[34..36], &6363u16.to_be_bytes());
        assert_eq!(&f[36..38], &6364u16.to_be_bytes());
        assert_eq!(&f[peer(&l).payload(&f).unwrap()], b"\x05\x03abc");
        // The receiving face listens on 6364; the sender's own face does not.
        assert_eq!(l.payload(&f), Err(EncapError::Port(6364)));
        let mut bad = f.clone();
        bad[44] ^= 1;
        assert_eq!(peer(&l).payload(&bad), Err(EncapError::UdpChecksum));
        let mut none = f.clone();
        none[40..42].copy_from_slice(&[0, 0]);
        none[44] ^= 1;
        assert!(peer(&l).payload(&none).is_ok(), "a zero UDP checksum is not verified");
    }

    #[test]
    fn icn_frame_carries_an_augustus_packet_in_protocol_253() {
        let l = link(Encap::Icn4);
        let f = frame(&l, b"icn");
        assert_eq!(f[14 + 9], 253);
        assert_eq!(&f[peer(&l).payload(&f).unwrap()], b"icn");
        let udp = frame(&link(Encap::Udp4), b"icn");
        assert_eq!(peer(&l).payload(&udp), Err(EncapError::Ipv4(AugustusError::NotIcn(17))));
    }

    #[test]
    fn augustus_packets_translate_to_ndn_and_back() {
        let name: trajan_wire::Name = "/com/google/www".parse().unwrap();
        let mut aug = augustus::Packet::from_name(augustus::Kind::Interest, &name, Bytes::new()).unwrap();
        aug.hop_limit = 7;
        let ndn = icn_to_ndn(&aug.encode()).unwrap();
        let i = Interest::decode(&ndn).unwrap();
        assert_eq!((i.name.to_string(), i.hop_limit), ("/com/google/www".to_owned(), Some(7)));
        assert_eq!(ndn_to_icn(&ndn).unwrap(), aug);
        let data = augustus::Packet::from_name(augustus::Kind::Data, &name, Bytes::from_static(b"payload")).unwrap();
        let ndn = icn_to_ndn(&data.encode()).unwrap();
        assert_eq!(Data::decode(&ndn).unwrap().content(), b"payload");
        assert_eq!(ndn_to_icn(&ndn).unwrap().encode(), data.encode());
        let typed: trajan_wire::Name = "/a/seg=1".parse().unwrap();
        assert!(ndn_to_icn(&Interest::new(typed).encode()).is_err());
        assert!(icn_to_ndn(&Bytes::from_static(b"\x00\x00junk")).is_err());
    }

    #[test]
    fn frames_of_other_encapsulations_are_refused() {
        let f = frame(&link(Encap::Ether), b"\x05\x00");
        assert_eq!(peer(&link(Encap::Udp4)).payload(&f), Err(EncapError::EtherType(0x8624)));
        assert_eq!(link(Encap::Ether).payload(&[0; 13]), Err(EncapError::Truncated));
        assert_eq!("udp4".parse(), Ok(Encap::Udp4));
        assert!("eth".parse::<Encap>().is_err());
    }

    proptest! {
        #[test]
        fn round_trip_and_no_panic_on_any_frame(body in proptest::collection::vec(any::<u8>(), 0..200), noise in proptest::collection::vec(any::<u8>(), 0..80), which in 0..3usize) {
            let l = link([Encap::Ether, Encap::Udp4, Encap::Icn4][which]);
            // A TLV element, as Ethernet faces need (one-byte length: body < 253).
            let mut payload = vec![0x06, body.len() as u8];
            payload.extend_from_slice(&body);
            let f = frame(&l, &payload);
            prop_assert_eq!(&f[peer(&l).payload(&f).unwrap()], &payload[..]);
            // Truncations and arbitrary bytes are refused or accepted, never a panic,
            // and an accepted payload lies inside the frame.
            for cut in [0, 1, 13, 14, 20, 34, 41, 42] {
                if let Ok(r) = peer(&l).payload(&f[..cut.min(f.len())]) { prop_assert!(r.end <= cut.min(f.len())); }
            }
            if let Ok(r) = peer(&l).payload(&noise) { prop_assert!(r.end <= noise.len()); }
        }
    }
}
