//! TLV-TYPE numbers, named once so every codec and table agrees on them.
//! Values come from the NDN packet format v0.3, NDNLPv2 and the NFD management protocol.

// Packets
/// Interest: a request for Data by name (packet spec §Interest).
pub const INTEREST: u32 = 0x05;
/// Data: named, signed content answering an Interest (packet spec §Data).
pub const DATA: u32 = 0x06;
/// LpPacket: the NDNLPv2 frame that carries a fragment with hop-by-hop header fields (NDNLPv2).
pub const LP_PACKET: u32 = 0x64;

// Name and components
/// Name: the sequence of components that identifies content and routes Interests (packet spec §Name).
pub const NAME: u32 = 0x07;
/// GenericNameComponent: an opaque name component, the default kind (packet spec §Name).
pub const GENERIC_COMPONENT: u32 = 0x08;
/// ImplicitSha256DigestComponent: the SHA-256 of a whole Data packet, naming exactly that packet (packet spec §Name).
pub const IMPLICIT_SHA256_DIGEST: u32 = 0x01;
/// ParametersSha256DigestComponent: binds an Interest's name to its parameters and signature (packet spec §Interest).
pub const PARAMETERS_SHA256_DIGEST: u32 = 0x02;
/// KeywordNameComponent: a well-known keyword component (NDN TLV-TYPE registry).
pub const KEYWORD_COMPONENT: u32 = 0x20;
/// SegmentNameComponent: the segment number of a multi-packet object (NDN naming conventions).
pub const SEGMENT_COMPONENT: u32 = 0x32;
/// ByteOffsetNameComponent: a segment's byte offset within its object (NDN naming conventions).
pub const BYTE_OFFSET_COMPONENT: u32 = 0x34;
/// VersionNameComponent: the version of an object, e.g. of a management dataset (NDN naming conventions).
pub const VERSION_COMPONENT: u32 = 0x36;
/// TimestampNameComponent: a time in microseconds since the Unix epoch (NDN naming conventions).
pub const TIMESTAMP_COMPONENT: u32 = 0x38;
/// SequenceNumNameComponent: a sequence number, e.g. of a stream item (NDN naming conventions).
pub const SEQUENCE_NUM_COMPONENT: u32 = 0x3a;

// Interest
/// CanBePrefix: Data whose name the Interest's name is a prefix of may satisfy it (packet spec §Interest).
pub const CAN_BE_PREFIX: u32 = 0x21;
/// MustBeFresh: stale cached Data must not satisfy the Interest (packet spec §Interest).
pub const MUST_BE_FRESH: u32 = 0x12;
/// ForwardingHint: names to forward toward when the Interest's own name has no route (packet spec §Interest).
pub const FORWARDING_HINT: u32 = 0x1e;
/// Nonce: 4 random bytes that, with the name, detect looping Interests (packet spec §Interest).
pub const NONCE: u32 = 0x0a;
/// InterestLifetime: how long the sender waits for Data, in ms (packet spec §Interest).
pub const INTEREST_LIFETIME: u32 = 0x0c;
/// HopLimit: how many more hops the Interest may take; each forwarder decrements it (packet spec §Interest).
pub const HOP_LIMIT: u32 = 0x22;
/// ApplicationParameters: arbitrary input from the consumer to the producer (packet spec §Interest).
pub const APPLICATION_PARAMETERS: u32 = 0x24;
/// InterestSignatureInfo: the signature metadata of a signed Interest (packet spec §Interest).
pub const INTEREST_SIGNATURE_INFO: u32 = 0x2c;
/// InterestSignatureValue: the signature bits of a signed Interest (packet spec §Interest).
pub const INTEREST_SIGNATURE_VALUE: u32 = 0x2e;

// Data
/// MetaInfo: the Data's ContentType, FreshnessPeriod and FinalBlockId (packet spec §Data).
pub const META_INFO: u32 = 0x14;
/// Content: the Data's payload (packet spec §Data).
pub const CONTENT: u32 = 0x15;
/// SignatureInfo: the Data signature's type and key locator (packet spec §Signature).
pub const SIGNATURE_INFO: u32 = 0x16;
/// SignatureValue: the Data's signature bits (packet spec §Signature).
pub const SIGNATURE_VALUE: u32 = 0x17;
/// ContentType: what the Content holds (BLOB, LINK, KEY, NACK) (packet spec §MetaInfo).
pub const CONTENT_TYPE: u32 = 0x18;
/// FreshnessPeriod: how long, in ms, a cached copy of the Data stays fresh (packet spec §MetaInfo).
pub const FRESHNESS_PERIOD: u32 = 0x19;
/// FinalBlockId: the last segment's component, marking the end of an object (packet spec §MetaInfo).
pub const FINAL_BLOCK_ID: u32 = 0x1a;
/// SignatureType: the signing algorithm, inside SignatureInfo (packet spec §Signature).
pub const SIGNATURE_TYPE: u32 = 0x1b;
/// KeyLocator: the name or digest of the key that verifies the signature (packet spec §Signature).
pub const KEY_LOCATOR: u32 = 0x1c;

/// SignatureType value for DigestSha256, the only signature the forwarder itself makes.
pub const SIGNATURE_DIGEST_SHA256: u64 = 0;

// NDNLPv2
/// Sequence: the frame's link sequence number, grouping fragments of one packet (NDNLPv2 §Fragmentation).
pub const LP_SEQUENCE: u32 = 0x51;
/// FragIndex: this fragment's zero-based index within its packet (NDNLPv2 §Fragmentation).
pub const LP_FRAG_INDEX: u32 = 0x52;
/// FragCount: how many fragments the packet was split into (NDNLPv2 §Fragmentation).
pub const LP_FRAG_COUNT: u32 = 0x53;
/// PitToken: an opaque hop-by-hop token that the upstream echoes back with the Data or Nack (NDNLPv2).
pub const LP_PIT_TOKEN: u32 = 0x62;
/// Fragment: the network-layer packet, or a piece of it, that the LpPacket carries (NDNLPv2).
pub const LP_FRAGMENT: u32 = 0x50;
/// Nack: marks the carried Interest as a network Nack (NDNLPv2 §Nack).
pub const LP_NACK: u32 = 0x0320;
/// NackReason: why the Interest was Nacked, inside the Nack field (NDNLPv2 §Nack).
pub const LP_NACK_REASON: u32 = 0x0321;
/// IncomingFaceId: tells a local application which face a packet arrived on (NDNLPv2).
pub const LP_INCOMING_FACE_ID: u32 = 0x032c;
/// NextHopFaceId: a local application's choice of outgoing face for its Interest (NDNLPv2).
pub const LP_NEXT_HOP_FACE_ID: u32 = 0x0330;
/// CachePolicy: a local producer's caching instruction for its Data (NDNLPv2).
pub const LP_CACHE_POLICY: u32 = 0x0334;
/// CachePolicyType: the policy inside CachePolicy (1 = NoCache) (NDNLPv2).
pub const LP_CACHE_POLICY_TYPE: u32 = 0x0335;
/// CongestionMark: signals congestion on the packet's path (NDNLPv2).
pub const LP_CONGESTION_MARK: u32 = 0x0340;
/// Ack: acknowledges a received TxSequence, for link reliability (NDNLPv2 §Reliability).
pub const LP_ACK: u32 = 0x0344;
/// TxSequence: the transmission sequence number that Acks refer to (NDNLPv2 §Reliability).
pub const LP_TX_SEQUENCE: u32 = 0x0348;
/// NonDiscovery: the Interest must not be flooded for self-learning (NDNLPv2).
pub const LP_NON_DISCOVERY: u32 = 0x034c;
/// PrefixAnnouncement: a producer's signed prefix announcement attached to Data, for self-learning (NDNLPv2).
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
