//! The dispatch key under arbitrary bytes, for the `dispatch_key` fuzz target
//! (`fuzz/`) and the corpus replay test (`tests/corpus.rs`), as
//! `trajan_wire::fuzzing` does for the codecs.
//!
//! Sharding rests on one promise: every packet of an exchange reaches the
//! worker that owns its name. [`crate::dispatch_key`] reads the name off the
//! wire without decoding the packet, so the check holds it to the decoders:
//! whatever packet the engine would decode as an Interest (or the Interest of a
//! Nack) or a Data, its key is the CRC32C of the decoded name's first
//! components, as many as the key takes and up to an implicit digest. A
//! packet the decoders reject may have any key or none; it is counted as
//! malformed wherever it goes.

use bytes::Bytes;
use trajan_wire::fuzzing::Check;
use trajan_wire::types::IMPLICIT_SHA256_DIGEST;
use trajan_wire::{Data, Interest, LpPacket, Name};

use crate::dispatch_key::{name_keys, DISPATCH_COMPONENTS};

/// Every fuzz target of this crate by name (the name of its
/// `fuzz/fuzz_targets/*.rs` file and its `fuzz/corpus/*` folder), with its check.
pub const TARGETS: &[(&str, Check)] = &[("dispatch_key", dispatch_key)];

/// The dispatch key agrees with the decoders (see the module documentation).
pub fn dispatch_key(bytes: &[u8]) {
    let keys = name_keys(bytes);
    let Ok(lp) = LpPacket::decode(&Bytes::copy_from_slice(bytes)) else { return };
    // A fragment of a larger packet is dispatched once reassembled.
    let whole = !lp.is_fragmented();
    let Some(fragment) = lp.fragment.filter(|_| whole) else { return };
    let (interest, name) = match Interest::decode(&fragment) {
        Ok(i) => (true, i.name),
        Err(_) => match Data::decode(&fragment) {
            Ok(d) => (false, d.name().clone()),
            Err(_) => return,
        },
    };
    let keys = keys.unwrap_or_else(|| panic!("no dispatch key for a packet that decodes, named {name}"));
    assert_eq!(keys.interest, interest, "{name}: Interest or Data");
    assert_eq!((keys.hashed, keys.key()), expected(&name), "{name}: the key of another name");
}

/// How many components of `name` the key hashes, and the key.
fn expected(name: &Name) -> (usize, u32) {
    let mut key = 0;
    let hashed = (0..name.len()).take(DISPATCH_COMPONENTS).take_while(|&i| name.get(i).typ != IMPLICIT_SHA256_DIGEST).count();
    for i in 0..hashed {
        key = crc32c::crc32c_append(key, name.component_wire(i));
    }
    (hashed, key)
}
