//! Software dispatch (Augustus §3.1.2's dispatcher option): which worker owns a packet.
//!
//! Each worker owns a shard of the PIT and CS, so every packet of an exchange —
//! the Interest, its Data, a Nack — must reach the same worker, or the Data misses
//! the PIT entry and the CS is polluted with copies in several shards. The key is a
//! CRC32C over the first [`DISPATCH_COMPONENTS`] name components (their TLV bytes,
//! read straight off the wire without decoding the packet), as NDN-DPDK's name
//! dispatch table hashes a fixed-length name prefix:
//!
//! - a Nack carries its Interest, so it has the Interest's name and key;
//! - Data answering an exact Interest has the Interest's name;
//! - Data answering a CanBePrefix Interest *extends* the Interest's name
//!   (`/video/file` → `/video/file/v=3/seg=0`); it shares the key whenever the
//!   Interest names at least `DISPATCH_COMPONENTS` components, which is why the key
//!   stops there instead of hashing the whole name.
//!
//! Why 2: a CanBePrefix Interest shorter than 2 components (`/video` CanBePrefix)
//! can be answered by Data under a different key. [`ShortPrefixes`] covers that
//! case: the I/O thread remembers the workers of Interests with short names and also
//! hands Data extending them to those workers (the worker without a matching PIT
//! entry counts its copy as unsolicited). Real names start with an application or
//! network prefix plus at least one more component, and NDN-DPDK defaults to 2 for
//! the same reason. The cost is load balance: every packet under one 2-component
//! prefix (`/ndn/video`) lands on one worker, so a workload with a single hot
//! 2-component prefix runs on one core. 3 would balance better but would need the
//! short-prefix table for every 2-component discovery Interest (`/app/object` +
//! CanBePrefix to find the version), which are common.
//!
//! The key is computed by [`trajan_io::dispatch_key`] (re-exported here), because
//! the senders of the UDP-port-by-hash face pick their destination port with it.
//! With that face, the short-prefix case also holds: a worker hands an Interest
//! with fewer than 2 components back to the I/O thread so that it is noted here,
//! and while any is remembered, Data read on a worker's port goes through the I/O
//! thread too.
//!
//! Packets with no name (IDLE LpPackets, garbage) go to worker 0, whose engine
//! counts and drops them exactly as the single-threaded daemon does.

use std::collections::HashMap;

pub use trajan_io::dispatch_key::{name_key, name_keys, owner, NameKeys, DISPATCH_COMPONENTS};

/// Most short Interest prefixes remembered at once; beyond it new ones are not
/// recorded (their CanBePrefix Data may then miss, as with a single key).
pub const MAX_SHORT_PREFIXES: usize = 4096;
/// How long (ms) a short prefix is remembered after its last Interest. Longer than
/// any usual InterestLifetime; a stale entry only costs a redundant copy of some Data,
/// which the other worker finds nothing for and counts nowhere.
pub const SHORT_PREFIX_TTL_MS: u64 = 60_000;

/// Interests whose names are shorter than [`DISPATCH_COMPONENTS`], remembered so
/// that Data extending them reaches their worker too. A CanBePrefix Interest for
/// `/video` is keyed by `/video`, but its Data `/video/file/v=3` by `/video/file`:
/// without this, the Data would meet no PIT entry on its own worker.
#[derive(Debug, Default)]
pub struct ShortPrefixes {
    owners: HashMap<u32, (usize, u64)>,
    /// While the table is full: the earliest time (ms) any entry may have aged
    /// out, before which a pass over it would free nothing. A flood of new
    /// short names then costs no pass each.
    sweep_at: u64,
}

impl ShortPrefixes {
    /// Notes a dispatched CanBePrefix Interest whose name is short, with the
    /// worker it went to. (A short Interest without CanBePrefix wants a Data
    /// of its own name, which has its key.)
    pub fn note_interest(&mut self, keys: &NameKeys, worker: usize, now_ms: u64) {
        if !keys.can_be_prefix || keys.hashed >= DISPATCH_COMPONENTS {
            return;
        }
        let key = keys.key();
        // A name already remembered is refreshed even when the table is full.
        if self.owners.len() >= MAX_SHORT_PREFIXES && !self.owners.contains_key(&key) {
            if now_ms < self.sweep_at {
                return;
            }
            self.owners.retain(|_, (_, seen)| now_ms.saturating_sub(*seen) < SHORT_PREFIX_TTL_MS);
            let oldest = self.owners.values().map(|&(_, seen)| seen).min();
            self.sweep_at = oldest.map_or(0, |seen| seen.saturating_add(SHORT_PREFIX_TTL_MS));
            if self.owners.len() >= MAX_SHORT_PREFIXES {
                return;
            }
        }
        self.owners.insert(key, (worker, now_ms));
    }

    /// Other workers that should also get this Data: those holding a short Interest
    /// whose name is a proper prefix of the Data's name.
    pub fn extra_owners(&self, keys: &NameKeys, owner: usize, now_ms: u64, out: &mut Vec<usize>) {
        out.clear();
        if keys.interest || self.owners.is_empty() {
            return;
        }
        for k in &keys.prefix[..keys.hashed] {
            if let Some(&(w, seen)) = self.owners.get(k) {
                if w != owner && now_ms.saturating_sub(seen) < SHORT_PREFIX_TTL_MS && !out.contains(&w) {
                    out.push(w);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use trajan_wire::data::DataBuilder;
    use trajan_wire::{Interest, Name};

    /// The keys of a CanBePrefix Interest (or of Data) named `name`.
    fn keys(name: &str, is_interest: bool) -> NameKeys {
        let name: Name = name.parse().unwrap();
        let pkt = if is_interest {
            let mut i = Interest::new(name);
            i.can_be_prefix = true;
            i.encode()
        } else {
            DataBuilder::new(name).build(b"x")
        };
        name_keys(&pkt).unwrap()
    }

    #[test]
    fn data_for_a_short_can_be_prefix_interest_also_reaches_its_worker() {
        let now = 1_000;
        let mut short = ShortPrefixes::default();
        let i = keys("/video", true);
        let d = keys("/video/file/v=3", false);
        let (wi, wd) = (owner(Some(i.key()), 64), owner(Some(d.key()), 64));
        assert_ne!(wi, wd, "test names must land on different workers");
        short.note_interest(&i, wi, now);
        let mut extra = Vec::new();
        short.extra_owners(&d, wd, now, &mut extra);
        assert_eq!(extra, vec![wi]);
        // Long Interests are not remembered, nor short ones without
        // CanBePrefix, and nothing is sent once the entry is stale.
        let mut fresh = ShortPrefixes::default();
        fresh.note_interest(&keys("/video/file", true), wi, now);
        let mut exact = Interest::new("/video".parse().unwrap());
        exact.nonce = Some(1);
        fresh.note_interest(&name_keys(&exact.encode()).unwrap(), wi, now);
        fresh.extra_owners(&d, wd, now, &mut extra);
        assert!(extra.is_empty());
        short.extra_owners(&d, wd, now + SHORT_PREFIX_TTL_MS, &mut extra);
        assert!(extra.is_empty());
    }

    /// A full table still refreshes the names it holds, takes no new one until
    /// an entry has aged out, and then makes room.
    #[test]
    fn a_full_table_refreshes_what_it_holds_and_ages_out_the_rest() {
        let mut short = ShortPrefixes::default();
        for n in 0..MAX_SHORT_PREFIXES {
            short.note_interest(&keys(&format!("/k{n}"), true), 1, 0);
        }
        assert_eq!(short.owners.len(), MAX_SHORT_PREFIXES);
        let late = SHORT_PREFIX_TTL_MS - 1;
        short.note_interest(&keys("/k0", true), 2, late);
        short.note_interest(&keys("/new", true), 3, late);
        assert_eq!(short.owners.get(&keys("/k0", true).key()), Some(&(2, late)));
        assert!(!short.owners.contains_key(&keys("/new", true).key()));

        // Every entry but the refreshed one has aged out: the new name fits.
        let mut extra = Vec::new();
        short.note_interest(&keys("/new", true), 3, SHORT_PREFIX_TTL_MS);
        assert_eq!(short.owners.len(), 2);
        short.extra_owners(&keys("/k0/x/y", false), 0, SHORT_PREFIX_TTL_MS, &mut extra);
        assert_eq!(extra, vec![2]);
        short.extra_owners(&keys("/new/x/y", false), 0, SHORT_PREFIX_TTL_MS, &mut extra);
        assert_eq!(extra, vec![3]);
    }
}
