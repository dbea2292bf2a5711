//! The name-hash dispatch key (Augustus §3.1.2): which of `n` workers owns a packet.
//!
//! Each worker owns a shard of the PIT and CS, so every packet of an exchange —
//! the Interest, its Data, a Nack — must reach the same worker. The key is a CRC32C
//! over the first [`DISPATCH_COMPONENTS`] name components (their TLV bytes, read
//! straight off the wire without decoding the packet), as NDN-DPDK's name dispatch
//! table hashes a fixed-length name prefix. It lives in the I/O crate because both
//! ends use it: the router's dispatcher and per-worker UDP ports, and a cooperating
//! sender (Trajan's tools, a Trajan neighbour) that picks the destination port of a
//! [`crate::HashPorts`] face from the same key. Why 2 components, and what that
//! costs, is explained in `trajan_router::dispatch` and docs/ARCHITECTURE.md.
//!
//! Reading the key is the only place this crate looks past a packet's framing, and
//! it reads no further than the name's first components.

use trajan_wire::tlv::read_header;
use trajan_wire::lp::network_packet;
use trajan_wire::types::{CAN_BE_PREFIX, DATA, IMPLICIT_SHA256_DIGEST, INTEREST, NAME};

/// Name components hashed to choose a worker (see the module documentation).
pub const DISPATCH_COMPONENTS: usize = 2;

/// What dispatch reads off a packet's name, without decoding the packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NameKeys {
    /// True for an Interest (or a Nack, which carries one), false for Data.
    pub interest: bool,
    /// For an Interest, whether it has CanBePrefix (read where v0.3 puts it,
    /// right after the name): only such an Interest can be answered by a Data
    /// of a longer name, which may have another key. False for Data.
    pub can_be_prefix: bool,
    /// How many components were hashed: the name's length, capped at
    /// [`DISPATCH_COMPONENTS`].
    pub hashed: usize,
    /// `prefix[i]`: CRC32C of the name's first `i` components, for `i <= hashed`.
    /// `prefix[hashed]` is the dispatch key.
    pub prefix: [u32; DISPATCH_COMPONENTS + 1],
}

impl NameKeys {
    /// The dispatch key.
    pub fn key(&self) -> u32 {
        self.prefix[self.hashed]
    }
}

/// The dispatch hash of a received packet (bare or in an LpPacket): CRC32C of its
/// name's first [`DISPATCH_COMPONENTS`] components, an implicit digest excluded. `None` when there is no name to
/// read; the caller sends such packets to worker 0.
pub fn name_key(pkt: &[u8]) -> Option<u32> {
    name_keys(pkt).map(|k| k.key())
}

/// The dispatch key of a packet plus the keys of its shorter name prefixes, which
/// the router's `ShortPrefixes` needs to route Data to a short CanBePrefix Interest's worker.
pub fn name_keys(pkt: &[u8]) -> Option<NameKeys> {
    let (typ, value) = network_packet(pkt)?;
    let (start, end) = (value.start, value.end);
    if typ != INTEREST && typ != DATA {
        return None;
    }
    let mut p = start;
    let (t, name_start, name_end) = read_header(&pkt[..end], &mut p).ok()?;
    if t != NAME {
        return None;
    }
    let interest = typ == INTEREST;
    // The element after the name, if inside the packet, starts with its type.
    let can_be_prefix = interest && pkt[..end].get(name_end) == Some(&(CAN_BE_PREFIX as u8));
    let mut keys = NameKeys { interest, can_be_prefix, hashed: 0, prefix: [0; DISPATCH_COMPONENTS + 1] };
    let mut q = name_start;
    while keys.hashed < DISPATCH_COMPONENTS && q < name_end {
        let from = q;
        let (component, _, _) = read_header(&pkt[..name_end], &mut q).ok()?;
        // A full name's implicit digest is no part of its Data's name, which
        // must get the same key.
        if component == IMPLICIT_SHA256_DIGEST {
            break;
        }
        keys.prefix[keys.hashed + 1] = crc32c::crc32c_append(keys.prefix[keys.hashed], &pkt[from..q]);
        keys.hashed += 1;
    }
    Some(keys)
}

/// The worker of `n` that owns a packet with this key. Multiply-shift rather than
/// modulo so the high bits of the hash matter too.
#[inline]
pub fn owner(key: Option<u32>, n: usize) -> usize {
    key.map_or(0, |k| ((k as u64 * n as u64) >> 32) as usize)
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;
    use trajan_wire::data::DataBuilder;
    use trajan_wire::lp::{LpHeaders, LpPacket};
    use trajan_wire::{Interest, NackReason, Name};

    fn interest(name: &str, can_be_prefix: bool) -> Bytes {
        let mut i = Interest::new(name.parse().unwrap());
        i.can_be_prefix = can_be_prefix;
        i.nonce = Some(7);
        i.encode()
    }

    fn data(name: &str) -> Bytes {
        DataBuilder::new(name.parse::<Name>().unwrap()).build(b"x")
    }

    #[test]
    fn exchange_shares_a_key() {
        let k = name_key(&interest("/video/file", true)).unwrap();
        assert_eq!(name_key(&data("/video/file/v=3/seg=0")), Some(k), "CanBePrefix Data");
        assert_eq!(name_key(&data("/video/file")), Some(k));
        let token = LpHeaders { pit_token: Some(Bytes::from_static(b"tok")), ..Default::default() };
        assert_eq!(name_key(&LpPacket::wrap(&interest("/video/file/seg=1", false), &token)), Some(k), "in an LpPacket");
        let nack = LpHeaders { nack: Some(NackReason::NoRoute), ..Default::default() };
        assert_eq!(name_key(&LpPacket::wrap(&interest("/video/file/seg=1", false), &nack)), Some(k), "Nack");
        assert_ne!(name_key(&interest("/video/other", false)), Some(k));
    }

    #[test]
    fn an_interest_says_whether_it_can_be_prefix() {
        assert!(name_keys(&interest("/a", true)).unwrap().can_be_prefix);
        assert!(!name_keys(&interest("/a", false)).unwrap().can_be_prefix);
        assert!(!name_keys(&data("/a")).unwrap().can_be_prefix);
        let token = LpHeaders { pit_token: Some(Bytes::from_static(b"tok")), ..Default::default() };
        assert!(name_keys(&LpPacket::wrap(&interest("/a", true), &token)).unwrap().can_be_prefix, "in an LpPacket");
    }

    #[test]
    fn short_names_hash_what_they_have() {
        assert_eq!(name_key(&interest("/a", false)), name_key(&data("/a")));
        assert!(name_key(&interest("/", true)).is_some());
    }

    /// An Interest for a Data by its full name (the implicit digest last) meets
    /// that Data's worker: the digest is not part of the Data's name, so it is
    /// not hashed, even when the name has fewer components than the key.
    #[test]
    fn a_full_name_shares_its_data_key() {
        for n in ["/", "/a", "/a/b", "/a/b/c"] {
            let d = data(n);
            let mut i = Interest::new(trajan_wire::Data::decode(&d).unwrap().full_name());
            i.nonce = Some(1);
            assert_eq!(name_keys(&i.encode()).map(|k| k.key()), name_key(&d), "{n}");
        }
    }

    #[test]
    fn nameless_and_malformed_packets_have_no_key() {
        assert_eq!(name_key(&[]), None);
        assert_eq!(name_key(&[0x64, 0x00]), None, "IDLE LpPacket");
        assert_eq!(name_key(&[0x05, 0x10, 0x07]), None, "truncated");
        assert_eq!(name_key(&[0x06, 0x03, 0x15, 0x01, 0x00]), None, "no Name first");
        let i = interest("/a/b/c", false);
        for cut in 0..i.len() {
            let _ = name_key(&i[..cut]);
        }
    }

    #[test]
    fn owners_spread_over_workers() {
        let mut hits = [0usize; 4];
        for i in 0..4000 {
            let key = name_key(&interest(&format!("/app/obj{i}/seg=0"), false));
            let w = owner(key, 4);
            assert!(w < 4);
            hits[w] += 1;
        }
        assert!(hits.iter().all(|&h| h > 700), "{hits:?}");
        assert_eq!(owner(None, 4), 0);
        assert_eq!(owner(Some(u32::MAX), 1), 0);
    }
}
