//! TLV-TYPE numbers, named once so every codec and table agrees on them.
//! Values come from the NDN packet format v0.3, NDNLPv2 and the NFD management protocol.

// Packets
pub const INTEREST: u32 = 0x05;
pub const DATA: u32 = 0x06;
pub const LP_PACKET: u32 = 0x64;

// Name and components
pub const NAME: u32 = 0x07;
pub const GENERIC_COMPONENT: u32 = 0x08;
pub const IMPLICIT_SHA256_DIGEST: u32 = 0x01;
pub const PARAMETERS_SHA256_DIGEST: u32 = 0x02;
pub const KEYWORD_COMPONENT: u32 = 0x20;
pub const SEGMENT_COMPONENT: u32 = 0x32;
pub const BYTE_OFFSET_COMPONENT: u32 = 0x34;
pub const VERSION_COMPONENT: u32 = 0x36;
pub const TIMESTAMP_COMPONENT: u32 = 0x38;
pub const SEQUENCE_NUM_COMPONENT: u32 = 0x3a;

// Interest
pub const CAN_BE_PREFIX: u32 = 0x21;
pub const MUST_BE_FRESH: u32 = 0x12;
pub const FORWARDING_HINT: u32 = 0x1e;
pub const NONCE: u32 = 0x0a;
pub const INTEREST_LIFETIME: u32 = 0x0c;
pub const HOP_LIMIT: u32 = 0x22;
pub const APPLICATION_PARAMETERS: u32 = 0x24;
pub const INTEREST_SIGNATURE_INFO: u32 = 0x2c;
pub const INTEREST_SIGNATURE_VALUE: u32 = 0x2e;

// Data
pub const META_INFO: u32 = 0x14;
pub const CONTENT: u32 = 0x15;
pub const SIGNATURE_INFO: u32 = 0x16;
pub const SIGNATURE_VALUE: u32 = 0x17;
pub const CONTENT_TYPE: u32 = 0x18;
pub const FRESHNESS_PERIOD: u32 = 0x19;
pub const FINAL_BLOCK_ID: u32 = 0x1a;
pub const SIGNATURE_TYPE: u32 = 0x1b;
pub const KEY_LOCATOR: u32 = 0x1c;

/// SignatureType value for DigestSha256, the only signature the forwarder itself makes.
pub const SIGNATURE_DIGEST_SHA256: u64 = 0;

// NDNLPv2
pub const LP_SEQUENCE: u32 = 0x51;
pub const LP_FRAG_INDEX: u32 = 0x52;
pub const LP_FRAG_COUNT: u32 = 0x53;
pub const LP_PIT_TOKEN: u32 = 0x62;
pub const LP_FRAGMENT: u32 = 0x50;
pub const LP_NACK: u32 = 0x0320;
pub const LP_NACK_REASON: u32 = 0x0321;
pub const LP_INCOMING_FACE_ID: u32 = 0x032c;
pub const LP_NEXT_HOP_FACE_ID: u32 = 0x0330;
pub const LP_CACHE_POLICY: u32 = 0x0334;
pub const LP_CACHE_POLICY_TYPE: u32 = 0x0335;
pub const LP_CONGESTION_MARK: u32 = 0x0340;
pub const LP_ACK: u32 = 0x0344;
pub const LP_TX_SEQUENCE: u32 = 0x0348;
pub const LP_NON_DISCOVERY: u32 = 0x034c;
pub const LP_PREFIX_ANNOUNCEMENT: u32 = 0x0350;

/// Is an unknown element of this type critical under the NDN v0.3 evolvability rule
/// (types 0..=31 and all odd types must be understood)?
#[inline]
pub fn is_critical(typ: u32) -> bool {
    typ < 32 || typ & 1 == 1
}

/// Is an unknown NDNLPv2 header field of this type safe to ignore? NDNLPv2 reserves
/// 800..=959 for fields, and only those whose two low bits are zero may be ignored.
#[inline]
pub fn lp_is_ignorable(typ: u32) -> bool {
    (800..=959).contains(&typ) && typ & 0b11 == 0
}
