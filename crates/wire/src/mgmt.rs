//! NFD management protocol: ControlParameters, ControlResponse, the status datasets
//! and command names, so that Trajan's daemon answers `nfdc`/python-ndn/ndnd clients
//! and Trajan's own tools talk to NFD-compatible forwarders.
//!
//! TLV numbers are NFD's (wiki pages ControlCommand, FaceMgmt, FibMgmt, RibMgmt,
//! CsMgmt, StrategyChoice, ForwarderStatus), checked against python-ndn's
//! `nfd_mgmt.py` and ndnd's `mgmt_2022`. The same number means different fields in
//! different structures (0x81 is LocalUri, StartTimestamp, NHits, Route and
//! NextHopRecord), so each structure has its own field table.
//!
//! Decoding rule: NFD's management numbers predate the v0.3 evolvability rule (FaceId
//! 0x69 and Origin 0x6f are odd, yet NFD, ndn-cxx and ndnd ignore unknown fields here),
//! so an unknown element is ignored unless its type is below 32, the range v0.3
//! reserves for core elements. A known field given twice is rejected: which copy a
//! forwarder would obey is ambiguous, and an ambiguous command must not be executed.

use std::fmt;
use std::str::FromStr;

use bytes::Bytes;

use crate::error::WireError;
use crate::name::Name;
use crate::tlv::{decode_outer, read_nonneg, write_nonneg, write_tlv, TlvReader};
use crate::types::{GENERIC_COMPONENT, NAME, PARAMETERS_SHA256_DIGEST};

// ControlCommand
/// ControlResponse: the reply to a command, carried as the answering Data's Content (NFD ControlCommand).
pub const CONTROL_RESPONSE: u32 = 0x65;
/// StatusCode: the HTTP-like result code in a ControlResponse (NFD ControlCommand).
pub const STATUS_CODE: u32 = 0x66;
/// StatusText: a human-readable explanation of the StatusCode (NFD ControlCommand).
pub const STATUS_TEXT: u32 = 0x67;
/// ControlParameters: a command's arguments, carried as a name component (NFD ControlCommand).
pub const CONTROL_PARAMETERS: u32 = 0x68;
/// FaceId: the face a command or dataset entry refers to (NFD FaceMgmt, FibMgmt, RibMgmt).
pub const FACE_ID: u32 = 0x69;
/// Cost: a route's or next hop's cost; lower is preferred (NFD FibMgmt, RibMgmt).
pub const COST: u32 = 0x6a;
/// Strategy: wraps the Name of a forwarding strategy (NFD StrategyChoice).
pub const STRATEGY: u32 = 0x6b;
/// Flags: a bit field whose meaning depends on the structure: route, face or CS flags (NFD ControlCommand).
pub const FLAGS: u32 = 0x6c;
/// ExpirationPeriod: milliseconds until a route or an on-demand face expires (NFD RibMgmt, FaceMgmt).
pub const EXPIRATION_PERIOD: u32 = 0x6d;
/// Origin: who registered a route (application, static, a routing protocol) (NFD RibMgmt).
pub const ORIGIN: u32 = 0x6f;
/// Mask: which bits of Flags a command sets; the others keep their value (NFD FaceMgmt, CsMgmt).
pub const MASK: u32 = 0x70;
/// Uri: a face's remote URI, e.g. `udp4://192.0.2.1:6363` (NFD FaceMgmt).
pub const URI: u32 = 0x72;
/// LocalUri: a face's local URI (NFD FaceMgmt).
pub const LOCAL_URI: u32 = 0x81;
/// Capacity: the content store's maximum number of packets (NFD CsMgmt).
pub const CAPACITY: u32 = 0x83;
/// Count: the most entries `cs/erase` may erase (NFD CsMgmt).
pub const COUNT: u32 = 0x84;
/// FacePersistency: when a face is closed, a [`FacePersistency`] code (NFD FaceMgmt).
pub const FACE_PERSISTENCY: u32 = 0x85;
/// BaseCongestionMarkingInterval: nanoseconds between congestion marks on a congested face (NFD FaceMgmt).
pub const BASE_CONGESTION_MARKING_INTERVAL: u32 = 0x87;
/// DefaultCongestionThreshold: send-queue bytes above which a face marks congestion (NFD FaceMgmt).
pub const DEFAULT_CONGESTION_THRESHOLD: u32 = 0x88;
/// Mtu: a face's maximum transmission unit, in bytes (NFD FaceMgmt).
pub const MTU: u32 = 0x89;

// Datasets
/// Every list dataset (faces, FIB, RIB, strategy choices) and cs/info wraps each
/// entry in an element of this type.
pub const DATASET_ENTRY: u32 = 0x80;
/// FaceScope: whether a face is local or non-local, in FaceStatus (NFD FaceMgmt).
pub const FACE_SCOPE: u32 = 0x84;
/// LinkType: point-to-point, multi-access or ad hoc, in FaceStatus (NFD FaceMgmt).
pub const LINK_TYPE: u32 = 0x86;
/// UriScheme: the URI scheme a `faces/query` asks for, e.g. `udp4` (NFD FaceMgmt).
pub const URI_SCHEME: u32 = 0x83;
/// FaceQueryFilter: a `faces/query` request's criteria, carried as a name component (NFD FaceMgmt).
pub const FACE_QUERY_FILTER: u32 = 0x96;
/// NextHopRecord: one next hop within a FibEntry (NFD FibMgmt).
pub const NEXT_HOP_RECORD: u32 = 0x81;
/// Route: one route within a RibEntry (NFD RibMgmt).
pub const ROUTE: u32 = 0x81;
/// NfdVersion: the forwarder's version string, in `status/general` (NFD ForwarderStatus).
pub const NFD_VERSION: u32 = 0x80;
/// StartTimestamp: when the forwarder started, in ms since the Unix epoch (NFD ForwarderStatus).
pub const START_TIMESTAMP: u32 = 0x81;
/// CurrentTimestamp: when the status was produced, in ms since the Unix epoch (NFD ForwarderStatus).
pub const CURRENT_TIMESTAMP: u32 = 0x82;
/// NNameTreeEntries: the number of name tree entries (NFD ForwarderStatus).
pub const N_NAME_TREE_ENTRIES: u32 = 0x83;
/// NFibEntries: the number of FIB entries (NFD ForwarderStatus).
pub const N_FIB_ENTRIES: u32 = 0x84;
/// NPitEntries: the number of PIT entries (NFD ForwarderStatus).
pub const N_PIT_ENTRIES: u32 = 0x85;
/// NMeasurementsEntries: the number of strategy measurements entries (NFD ForwarderStatus).
pub const N_MEASUREMENTS_ENTRIES: u32 = 0x86;
/// NCsEntries: the number of packets in the content store (NFD ForwarderStatus, CsMgmt).
pub const N_CS_ENTRIES: u32 = 0x87;
/// NInInterests: Interests received, forwarder-wide or per face (NFD ForwarderStatus, FaceMgmt).
pub const N_IN_INTERESTS: u32 = 0x90;
/// NInData: Data received, forwarder-wide or per face (NFD ForwarderStatus, FaceMgmt).
pub const N_IN_DATA: u32 = 0x91;
/// NOutInterests: Interests sent, forwarder-wide or per face (NFD ForwarderStatus, FaceMgmt).
pub const N_OUT_INTERESTS: u32 = 0x92;
/// NOutData: Data sent, forwarder-wide or per face (NFD ForwarderStatus, FaceMgmt).
pub const N_OUT_DATA: u32 = 0x93;
/// NInBytes: bytes received on a face (NFD FaceMgmt).
pub const N_IN_BYTES: u32 = 0x94;
/// NOutBytes: bytes sent on a face (NFD FaceMgmt).
pub const N_OUT_BYTES: u32 = 0x95;
/// NInNacks: Nacks received, forwarder-wide or per face (NFD ForwarderStatus, FaceMgmt).
pub const N_IN_NACKS: u32 = 0x97;
/// NOutNacks: Nacks sent, forwarder-wide or per face (NFD ForwarderStatus, FaceMgmt).
pub const N_OUT_NACKS: u32 = 0x98;
/// NSatisfiedInterests: PIT entries satisfied by Data (NFD ForwarderStatus).
pub const N_SATISFIED_INTERESTS: u32 = 0x99;
/// NUnsatisfiedInterests: PIT entries that expired unsatisfied (NFD ForwarderStatus).
pub const N_UNSATISFIED_INTERESTS: u32 = 0x9a;
/// NHits: Interests the content store answered (NFD CsMgmt).
pub const N_HITS: u32 = 0x81;
/// NMisses: Interests the content store could not answer (NFD CsMgmt).
pub const N_MISSES: u32 = 0x82;

/// StatusCode of a successful command.
pub const STATUS_OK: u32 = 200;

/// Route origin of routes added by hand (`nfdc route add` default), which is also
/// what `trajan route add` uses unless told otherwise.
pub const ORIGIN_STATIC: u64 = 255;
/// Route origin of prefixes registered by applications on their own face.
pub const ORIGIN_APP: u64 = 0;
/// Route flag: the route also applies to longer prefixes (their FIB entries inherit it).
pub const ROUTE_FLAG_CHILD_INHERIT: u64 = 1;
/// Route flag: routes of shorter prefixes do not apply to this prefix, nor to
/// the longer prefixes under it.
pub const ROUTE_FLAG_CAPTURE: u64 = 2;

/// `cs/config`'s and `cs/info`'s Flags bits (NFD's CsFlagBit): whether the
/// content store admits new Data, and whether it answers Interests.
pub const CS_ENABLE_ADMIT: u64 = 1;
/// Flags bit: the content store answers Interests (set alongside [`CS_ENABLE_ADMIT`]).
pub const CS_ENABLE_SERVE: u64 = 2;

/// A structure encoded as a sequence of TLV fields. Implemented by every management
/// structure so that nesting, lists and whole-element framing are written once.
pub trait Record: Sized {
    /// Decodes the TLV-VALUE of the structure's element.
    fn decode_value(value: Bytes) -> Result<Self, WireError>;

    /// Appends the TLV-VALUE of the structure's element.
    fn encode_value(&self, out: &mut Vec<u8>);

    /// Decodes a whole element of type `typ` that fills `wire`.
    fn decode_element(wire: &Bytes, typ: u32) -> Result<Self, WireError> {
        Self::decode_value(decode_outer(wire, typ)?.value)
    }

    /// Appends a whole element of type `typ`.
    fn encode_element(&self, typ: u32, out: &mut Vec<u8>) {
        let mut value = Vec::new();
        self.encode_value(&mut value);
        write_tlv(out, typ, &value);
    }
}

/// How one field's value is decoded from and encoded to TLV. Implemented per Rust
/// type so each structure is just a table of (field, type, TLV-TYPE).
trait Slot {
    /// Whether the field may repeat (a list of nested entries).
    const REPEATED: bool = false;
    fn put(&mut self, typ: u32, value: Bytes) -> Result<(), WireError>;
    fn emit(&self, typ: u32, out: &mut Vec<u8>);
}

impl Slot for u64 {
    fn put(&mut self, _typ: u32, value: Bytes) -> Result<(), WireError> {
        *self = read_nonneg(&value)?;
        Ok(())
    }
    fn emit(&self, typ: u32, out: &mut Vec<u8>) {
        write_nonneg(out, typ, *self);
    }
}

impl Slot for u32 {
    fn put(&mut self, typ: u32, value: Bytes) -> Result<(), WireError> {
        *self = u32::try_from(read_nonneg(&value)?).map_err(|_| WireError::BadValue(typ))?;
        Ok(())
    }
    fn emit(&self, typ: u32, out: &mut Vec<u8>) {
        write_nonneg(out, typ, u64::from(*self));
    }
}

impl Slot for String {
    fn put(&mut self, typ: u32, value: Bytes) -> Result<(), WireError> {
        *self = std::str::from_utf8(&value).map_err(|_| WireError::BadValue(typ))?.to_owned();
        Ok(())
    }
    fn emit(&self, typ: u32, out: &mut Vec<u8>) {
        write_tlv(out, typ, self.as_bytes());
    }
}

impl Slot for Name {
    fn put(&mut self, _typ: u32, value: Bytes) -> Result<(), WireError> {
        *self = Name::from_value(value)?;
        Ok(())
    }
    fn emit(&self, typ: u32, out: &mut Vec<u8>) {
        write_tlv(out, typ, self.value());
    }
}

impl<R: Record> Slot for R {
    fn put(&mut self, _typ: u32, value: Bytes) -> Result<(), WireError> {
        *self = R::decode_value(value)?;
        Ok(())
    }
    fn emit(&self, typ: u32, out: &mut Vec<u8>) {
        self.encode_element(typ, out);
    }
}

impl<T: Slot + Default> Slot for Option<T> {
    fn put(&mut self, typ: u32, value: Bytes) -> Result<(), WireError> {
        let mut v = T::default();
        v.put(typ, value)?;
        *self = Some(v);
        Ok(())
    }
    fn emit(&self, typ: u32, out: &mut Vec<u8>) {
        if let Some(v) = self {
            v.emit(typ, out);
        }
    }
}

impl<R: Record> Slot for Vec<R> {
    const REPEATED: bool = true;
    fn put(&mut self, _typ: u32, value: Bytes) -> Result<(), WireError> {
        self.push(R::decode_value(value)?);
        Ok(())
    }
    fn emit(&self, typ: u32, out: &mut Vec<u8>) {
        for r in self {
            r.encode_element(typ, out);
        }
    }
}

/// Which field types a decoder has met, to reject repeats and report missing
/// required fields. Every management TLV-TYPE is below 256.
#[derive(Default)]
struct Seen([u64; 4]);

impl Seen {
    fn once(&mut self, typ: u32, repeated: bool) -> Result<(), WireError> {
        let (word, bit) = ((typ as usize >> 6) & 3, 1u64 << (typ & 63));
        if typ < 256 && !repeated && self.0[word] & bit != 0 {
            return Err(WireError::OutOfOrder(typ));
        }
        self.0[word] |= bit;
        Ok(())
    }

    fn require(&self, typ: u32) -> Result<(), WireError> {
        let (word, bit) = ((typ as usize >> 6) & 3, 1u64 << (typ & 63));
        if self.0[word] & bit == 0 {
            return Err(WireError::Missing(typ));
        }
        Ok(())
    }
}

/// The management decoding rule for elements a structure does not know (see the
/// module documentation).
fn ignore_unknown(typ: u32) -> Result<(), WireError> {
    if typ < 32 {
        Err(WireError::UnknownCritical(typ))
    } else {
        Ok(())
    }
}

/// Declares a management structure from its field table, in NFD's encoding order,
/// and implements [`Record`] for it.
macro_rules! record {
    (
        $(#[$sm:meta])*
        pub struct $S:ident { $( $(#[$fm:meta])* $f:ident : $T:ty = $typ:expr ),* $(,)? }
        required [$($req:expr),*]
    ) => {
        $(#[$sm])*
        #[derive(Debug, Clone, Default, PartialEq, Eq)]
        pub struct $S { $( $(#[$fm])* pub $f: $T, )* }

        impl Record for $S {
            fn decode_value(value: Bytes) -> Result<Self, WireError> {
                let mut rec = $S::default();
                let mut seen = Seen::default();
                let mut r = TlvReader::new(value);
                while !r.is_empty() {
                    let e = r.read()?;
                    match e.typ {
                        $( t if t == $typ => {
                            seen.once(t, <$T as Slot>::REPEATED)?;
                            Slot::put(&mut rec.$f, t, e.value)?;
                        } )*
                        t => ignore_unknown(t)?,
                    }
                }
                $( seen.require($req)?; )*
                Ok(rec)
            }

            fn encode_value(&self, out: &mut Vec<u8>) {
                $( Slot::emit(&self.$f, $typ, out); )*
            }
        }
    };
}

record! {
    /// A forwarding strategy, named (e.g. `/localhost/nfd/strategy/best-route`).
    pub struct Strategy {
        /// The strategy's name, possibly ending in a version component.
        name: Name = NAME,
    }
    required [NAME]
}

record! {
    /// The arguments of every management command. All fields are optional because
    /// each command uses a different subset; the handler checks what it needs.
    pub struct ControlParameters {
        /// The prefix the command concerns (route, FIB entry, strategy choice, CS erase).
        name: Option<Name> = NAME,
        /// The face to act on; `rib/register` defaults it to the requesting face.
        face_id: Option<u64> = FACE_ID,
        /// Remote URI of the face to create (`faces/create`).
        uri: Option<String> = URI,
        /// Local URI of the face to create, for transports that need one.
        local_uri: Option<String> = LOCAL_URI,
        /// Who registers the route (e.g. [`ORIGIN_APP`], [`ORIGIN_STATIC`]).
        origin: Option<u64> = ORIGIN,
        /// The route's cost; lower is preferred.
        cost: Option<u64> = COST,
        /// The content store's new capacity in packets (`cs/config`).
        capacity: Option<u64> = CAPACITY,
        /// The most entries to erase (`cs/erase`).
        count: Option<u64> = COUNT,
        /// Route flags (`rib/register`), face flags (`faces/create`, `faces/update`) or CS flags (`cs/config`).
        flags: Option<u64> = FLAGS,
        /// Which bits of `flags` to apply; the others are left unchanged.
        mask: Option<u64> = MASK,
        /// The strategy to choose for `name` (`strategy-choice/set`).
        strategy: Option<Strategy> = STRATEGY,
        /// Milliseconds.
        expiration_period: Option<u64> = EXPIRATION_PERIOD,
        /// Persistency of the face to create or update, a [`FacePersistency`] code.
        face_persistency: Option<u64> = FACE_PERSISTENCY,
        /// Nanoseconds.
        base_congestion_marking_interval: Option<u64> = BASE_CONGESTION_MARKING_INTERVAL,
        /// Bytes.
        default_congestion_threshold: Option<u64> = DEFAULT_CONGESTION_THRESHOLD,
        /// MTU override for the face, in bytes.
        mtu: Option<u64> = MTU,
    }
    required []
}

impl ControlParameters {
    /// Decodes a whole ControlParameters element, as found in a command name.
    pub fn decode(wire: &Bytes) -> Result<Self, WireError> {
        Self::decode_element(wire, CONTROL_PARAMETERS)
    }

    /// The whole ControlParameters element.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.encode_element(CONTROL_PARAMETERS, &mut out);
        out
    }
}

record! {
    /// The reply to a command: the Content of the Data answering it.
    pub struct ControlResponse {
        /// HTTP-like: 200 OK, 400 bad parameters, 403 unauthorized, 404 not found,
        /// 409 conflict, 501 unknown command, 503 unavailable.
        status_code: u32 = STATUS_CODE,
        /// A human-readable explanation of `status_code`, shown by `nfdc`.
        status_text: String = STATUS_TEXT,
        /// The parameters as the forwarder applied them (with defaults filled in).
        body: Option<ControlParameters> = CONTROL_PARAMETERS,
    }
    required [STATUS_CODE, STATUS_TEXT]
}

impl ControlResponse {
    /// A success response carrying the applied parameters.
    pub fn ok(body: ControlParameters) -> Self {
        ControlResponse { status_code: STATUS_OK, status_text: "OK".into(), body: Some(body) }
    }

    /// A failure response; failures carry no body.
    pub fn error(status_code: u32, status_text: impl Into<String>) -> Self {
        ControlResponse { status_code, status_text: status_text.into(), body: None }
    }

    /// Whether the command succeeded.
    pub fn is_ok(&self) -> bool {
        self.status_code == STATUS_OK
    }

    /// Decodes the whole ControlResponse element (a Data packet's Content value).
    pub fn decode(wire: &Bytes) -> Result<Self, WireError> {
        Self::decode_element(wire, CONTROL_RESPONSE)
    }

    /// The whole ControlResponse element.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.encode_element(CONTROL_RESPONSE, &mut out);
        out
    }
}

record! {
    /// The `status/general` dataset. Its fields form the dataset content directly
    /// (no enclosing element), so use [`Record::decode_value`] and
    /// [`Record::encode_value`] on the reassembled content.
    pub struct ForwarderStatus {
        /// The forwarder's version string.
        nfd_version: String = NFD_VERSION,
        /// Milliseconds since the Unix epoch.
        start_timestamp: u64 = START_TIMESTAMP,
        /// Milliseconds since the Unix epoch.
        current_timestamp: u64 = CURRENT_TIMESTAMP,
        /// Entries in the name tree.
        n_name_tree_entries: u64 = N_NAME_TREE_ENTRIES,
        /// Entries in the FIB.
        n_fib_entries: u64 = N_FIB_ENTRIES,
        /// Pending Interest entries.
        n_pit_entries: u64 = N_PIT_ENTRIES,
        /// Strategy measurements entries.
        n_measurements_entries: u64 = N_MEASUREMENTS_ENTRIES,
        /// Data packets in the content store.
        n_cs_entries: u64 = N_CS_ENTRIES,
        /// Interests received since start.
        n_in_interests: u64 = N_IN_INTERESTS,
        /// Data received since start.
        n_in_data: u64 = N_IN_DATA,
        /// Nacks received since start.
        n_in_nacks: u64 = N_IN_NACKS,
        /// Interests sent since start.
        n_out_interests: u64 = N_OUT_INTERESTS,
        /// Data sent since start.
        n_out_data: u64 = N_OUT_DATA,
        /// Nacks sent since start.
        n_out_nacks: u64 = N_OUT_NACKS,
        /// PIT entries satisfied by Data since start.
        n_satisfied_interests: u64 = N_SATISFIED_INTERESTS,
        /// PIT entries that expired unsatisfied since start.
        n_unsatisfied_interests: u64 = N_UNSATISFIED_INTERESTS,
    }
    required []
}

record! {
    /// One entry of the `faces/list` dataset.
    pub struct FaceStatus {
        /// The face's identifier, as used by FIB next hops and commands.
        face_id: u64 = FACE_ID,
        /// Remote URI, e.g. `udp4://192.0.2.1:6363`.
        uri: String = URI,
        /// Local URI.
        local_uri: String = LOCAL_URI,
        /// Milliseconds until an on-demand face expires.
        expiration_period: Option<u64> = EXPIRATION_PERIOD,
        /// 0 non-local, 1 local.
        face_scope: u64 = FACE_SCOPE,
        /// A [`FacePersistency`] code.
        face_persistency: u64 = FACE_PERSISTENCY,
        /// 0 point-to-point, 1 multi-access, 2 ad hoc.
        link_type: u64 = LINK_TYPE,
        /// Nanoseconds between congestion marks, when the face marks congestion.
        base_congestion_marking_interval: Option<u64> = BASE_CONGESTION_MARKING_INTERVAL,
        /// Send-queue bytes above which the face marks congestion.
        default_congestion_threshold: Option<u64> = DEFAULT_CONGESTION_THRESHOLD,
        /// The face's MTU in bytes, when it has one.
        mtu: Option<u64> = MTU,
        /// Interests received on the face.
        n_in_interests: u64 = N_IN_INTERESTS,
        /// Data received on the face.
        n_in_data: u64 = N_IN_DATA,
        /// Nacks received on the face.
        n_in_nacks: u64 = N_IN_NACKS,
        /// Interests sent on the face.
        n_out_interests: u64 = N_OUT_INTERESTS,
        /// Data sent on the face.
        n_out_data: u64 = N_OUT_DATA,
        /// Nacks sent on the face.
        n_out_nacks: u64 = N_OUT_NACKS,
        /// Bytes received on the face.
        n_in_bytes: u64 = N_IN_BYTES,
        /// Bytes sent on the face.
        n_out_bytes: u64 = N_OUT_BYTES,
        /// Face flags: bit 0 local fields, bit 1 link reliability, bit 2 congestion marking.
        flags: u64 = FLAGS,
    }
    required [FACE_ID]
}

record! {
    /// The criteria of a `faces/query` dataset request (NFD FaceMgmt, Query
    /// Operation), the name component after the verb: `nfdc` turns a face URI
    /// into a FaceId with it (`nfdc route add PREFIX udp4://HOST:PORT`) and
    /// `nfdc face show` asks by FaceId. An absent field is no criterion, so an
    /// empty filter matches every face.
    pub struct FaceQueryFilter {
        /// The face's identifier.
        face_id: Option<u64> = FACE_ID,
        /// The scheme of the face's remote or local URI, e.g. `udp4`, `unix`, `internal`.
        uri_scheme: Option<String> = URI_SCHEME,
        /// The face's remote URI, exactly.
        uri: Option<String> = URI,
        /// The face's local URI, exactly.
        local_uri: Option<String> = LOCAL_URI,
        /// 0 non-local, 1 local.
        face_scope: Option<u64> = FACE_SCOPE,
        /// A [`FacePersistency`] code.
        face_persistency: Option<u64> = FACE_PERSISTENCY,
        /// 0 point-to-point, 1 multi-access, 2 ad hoc.
        link_type: Option<u64> = LINK_TYPE,
    }
    required []
}

impl FaceQueryFilter {
    /// Whether `face` meets every criterion the filter has, as NFD's face
    /// manager matches them: the scheme is that of the remote or of the local
    /// URI (the text before the first `:`), URIs match exactly. An empty
    /// string is no criterion, as ndn-cxx decodes it.
    pub fn matches(&self, face: &FaceStatus) -> bool {
        fn given(s: &Option<String>) -> Option<&str> {
            s.as_deref().filter(|s| !s.is_empty())
        }
        fn scheme(uri: &str) -> Option<&str> {
            uri.split_once(':').map(|(scheme, _)| scheme)
        }
        self.face_id.is_none_or(|id| id == face.face_id)
            && given(&self.uri_scheme).is_none_or(|s| scheme(&face.uri) == Some(s) || scheme(&face.local_uri) == Some(s))
            && given(&self.uri).is_none_or(|u| u == face.uri)
            && given(&self.local_uri).is_none_or(|u| u == face.local_uri)
            && self.face_scope.is_none_or(|s| s == face.face_scope)
            && self.face_persistency.is_none_or(|p| p == face.face_persistency)
            && self.link_type.is_none_or(|l| l == face.link_type)
    }
}

record! {
    /// One next hop of a FIB entry.
    pub struct NextHopRecord {
        /// The face to forward to.
        face_id: u64 = FACE_ID,
        /// The next hop's cost; lower is preferred.
        cost: u64 = COST,
    }
    required [FACE_ID]
}

record! {
    /// One entry of the `fib/list` dataset.
    pub struct FibEntry {
        /// The entry's prefix.
        name: Name = NAME,
        /// Where Interests under the prefix may be forwarded.
        next_hops: Vec<NextHopRecord> = NEXT_HOP_RECORD,
    }
    required [NAME]
}

record! {
    /// One route of a RIB entry.
    pub struct Route {
        /// The face the route points to.
        face_id: u64 = FACE_ID,
        /// Who registered the route (e.g. [`ORIGIN_APP`], [`ORIGIN_STATIC`]).
        origin: u64 = ORIGIN,
        /// The route's cost; lower is preferred.
        cost: u64 = COST,
        /// [`ROUTE_FLAG_CHILD_INHERIT`] and [`ROUTE_FLAG_CAPTURE`] bits.
        flags: u64 = FLAGS,
        /// Milliseconds until the route expires; absent means never.
        expiration_period: Option<u64> = EXPIRATION_PERIOD,
    }
    required [FACE_ID]
}

record! {
    /// One entry of the `rib/list` dataset.
    pub struct RibEntry {
        /// The registered prefix.
        name: Name = NAME,
        /// The routes registered for it, one per (face, origin).
        routes: Vec<Route> = ROUTE,
    }
    required [NAME]
}

record! {
    /// The `cs/info` dataset's single entry.
    pub struct CsInfo {
        /// Maximum number of packets.
        capacity: u64 = CAPACITY,
        /// Bit 0: admission enabled; bit 1: serving enabled.
        flags: u64 = FLAGS,
        /// Data packets now stored.
        n_cs_entries: u64 = N_CS_ENTRIES,
        /// Interests answered from the store.
        n_hits: u64 = N_HITS,
        /// Interests the store could not answer.
        n_misses: u64 = N_MISSES,
    }
    required []
}

record! {
    /// One entry of the `strategy-choice/list` dataset.
    pub struct StrategyChoice {
        /// The prefix the choice applies to, and everything under it.
        name: Name = NAME,
        /// The strategy chosen for it.
        strategy: Strategy = STRATEGY,
    }
    required [NAME, STRATEGY]
}

/// Decodes a list dataset's reassembled content: a sequence of [`DATASET_ENTRY`]
/// elements. The list cannot outgrow its input: every entry takes at least two bytes.
pub fn decode_list<T: Record>(content: &Bytes) -> Result<Vec<T>, WireError> {
    let mut r = TlvReader::new(content.clone());
    let mut out = Vec::new();
    while !r.is_empty() {
        let e = r.read()?;
        if e.typ == DATASET_ENTRY {
            out.push(T::decode_value(e.value)?);
        } else {
            ignore_unknown(e.typ)?;
        }
    }
    Ok(out)
}

/// Encodes a list dataset's content, to be segmented into Data packets.
pub fn encode_list<T: Record>(items: &[T]) -> Vec<u8> {
    let mut out = Vec::new();
    for i in items {
        i.encode_element(DATASET_ENTRY, &mut out);
    }
    out
}

/// FacePersistency values, named as `nfdc` names them so the CLI and the daemon's
/// logs agree with NFD's documentation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FacePersistency {
    /// Closed on a socket error; created by `face create` by default.
    Persistent,
    /// Created by an incoming packet, closed when idle.
    OnDemand,
    /// Never closed; reconnects after errors.
    Permanent,
}

impl FacePersistency {
    /// The wire code.
    pub fn code(self) -> u64 {
        match self {
            FacePersistency::Persistent => 0,
            FacePersistency::OnDemand => 1,
            FacePersistency::Permanent => 2,
        }
    }

    /// From a wire code; `None` for codes NFD does not define.
    pub fn from_code(c: u64) -> Option<Self> {
        match c {
            0 => Some(FacePersistency::Persistent),
            1 => Some(FacePersistency::OnDemand),
            2 => Some(FacePersistency::Permanent),
            _ => None,
        }
    }
}

impl fmt::Display for FacePersistency {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FacePersistency::Persistent => "persistent",
            FacePersistency::OnDemand => "on-demand",
            FacePersistency::Permanent => "permanent",
        })
    }
}

impl FromStr for FacePersistency {
    type Err = WireError;

    fn from_str(s: &str) -> Result<Self, WireError> {
        match s {
            "persistent" => Ok(FacePersistency::Persistent),
            "on-demand" | "ondemand" => Ok(FacePersistency::OnDemand),
            "permanent" => Ok(FacePersistency::Permanent),
            _ => Err(WireError::BadValue(FACE_PERSISTENCY)),
        }
    }
}

/// Which management prefix a request uses: `/localhost/nfd` is accepted only from
/// local faces (Unix socket, loopback), `/localhop/nfd` travels one hop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MgmtScope {
    /// `/localhost/nfd`: accepted only from local faces.
    Localhost,
    /// `/localhop/nfd`: accepted from a neighbour one hop away.
    Localhop,
}

impl MgmtScope {
    /// The two-component prefix, `/localhost/nfd` or `/localhop/nfd`.
    pub fn prefix(self) -> Name {
        let first: &[u8] = match self {
            MgmtScope::Localhost => b"localhost",
            MgmtScope::Localhop => b"localhop",
        };
        Name::from_components([(GENERIC_COMPONENT, first), (GENERIC_COMPONENT, &b"nfd"[..])])
    }
}

/// The name of a dataset, `<scope>/<module>/<verb>` (e.g. `/localhost/nfd/faces/list`);
/// the forwarder appends version and segment components.
pub fn dataset_name(scope: MgmtScope, module: &str, verb: &str) -> Name {
    scope.prefix().append_generic(module.as_bytes()).append_generic(verb.as_bytes())
}

/// The unsigned name of a command, `<scope>/<module>/<verb>/<ControlParameters>`.
/// Signing (see [`crate::signed`]) appends the ParametersSha256DigestComponent.
pub fn command_name(scope: MgmtScope, module: &str, verb: &str, params: &ControlParameters) -> Name {
    dataset_name(scope, module, verb).append_generic(&params.encode())
}

/// A management request as named: a command when `params` is present, else a dataset
/// request (possibly already carrying version/segment components).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MgmtRequest {
    /// Which management prefix the name uses.
    pub scope: MgmtScope,
    /// The module component, e.g. `faces` or `rib`.
    pub module: String,
    /// The verb component, e.g. `list` or `register`.
    pub verb: String,
    /// A command's arguments; `None` for a dataset request.
    pub params: Option<ControlParameters>,
    /// A `faces/query` request's criteria, which name its dataset (a version
    /// and segment follow them); `None` for every other request.
    pub filter: Option<FaceQueryFilter>,
}

/// The name of a `faces/query` request, `<scope>/faces/query/<FaceQueryFilter>`,
/// as `nfdc` names it; the forwarder appends version and segment components.
pub fn face_query_name(scope: MgmtScope, filter: &FaceQueryFilter) -> Name {
    let mut element = Vec::new();
    filter.encode_element(FACE_QUERY_FILTER, &mut element);
    dataset_name(scope, "faces", "query").append_generic(&element)
}

/// Why [`parse_request`] refused a name, told apart because NFD answers them
/// in different words: a `faces/query` carries nothing but its filter, so its
/// fault is the filter's; anything else is a malformed command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum BadRequest {
    /// Not a management name, or a command whose parameters do not parse.
    #[error("Malformed command: {0}")]
    Command(#[from] WireError),
    /// A `faces/query` whose FaceQueryFilter is missing or does not parse.
    #[error("Malformed filter: {0}")]
    Filter(WireError),
}

impl BadRequest {
    /// The ControlResponse text NFD answers it with.
    pub fn status_text(&self) -> &'static str {
        match self {
            BadRequest::Command(_) => "Malformed command",
            BadRequest::Filter(_) => "Malformed filter",
        }
    }
}

/// Parses a management Interest name. Accepted shapes after `<scope>/<module>/<verb>`:
/// nothing or non-generic components (dataset requests: version, segment); a
/// ControlParameters component alone, followed by a ParametersSha256DigestComponent
/// (v0.3 signed Interest), or followed by the four generic components of a legacy
/// signed command (timestamp, nonce, SignatureInfo, SignatureValue). Signatures are
/// not checked here. `faces/query` is a dataset named by the FaceQueryFilter
/// component after its verb, which it requires (NFD answers 400 without one),
/// followed by nothing or version and segment components.
pub fn parse_request(name: &Name) -> Result<MgmtRequest, BadRequest> {
    let bad = BadRequest::Command(WireError::BadValue(NAME));
    if name.len() < 4 {
        return Err(bad);
    }
    let generic = |i: usize| Some(name.get(i)).filter(|c| c.typ == GENERIC_COMPONENT).map(|c| c.value);
    let scope = match generic(0) {
        Some(b"localhost") => MgmtScope::Localhost,
        Some(b"localhop") => MgmtScope::Localhop,
        _ => return Err(bad),
    };
    if generic(1) != Some(b"nfd") {
        return Err(bad);
    }
    let text = |i: usize| {
        generic(i).and_then(|v| std::str::from_utf8(v).ok()).map(str::to_owned).ok_or(WireError::BadValue(NAME))
    };
    let (module, verb) = (text(2)?, text(3)?);
    let argument = (name.len() > 4).then(|| generic(4)).flatten();
    if (module.as_str(), verb.as_str()) == ("faces", "query") {
        let element = Bytes::copy_from_slice(argument.ok_or(BadRequest::Filter(WireError::BadValue(NAME)))?);
        let filter = FaceQueryFilter::decode_element(&element, FACE_QUERY_FILTER).map_err(BadRequest::Filter)?;
        return Ok(MgmtRequest { scope, module, verb, params: None, filter: Some(filter) });
    }
    let params = match argument {
        None => None,
        Some(cp) => {
            let signed_tail_ok = match name.len() {
                5 => true,
                6 => name.get(5).typ == PARAMETERS_SHA256_DIGEST,
                9 => (5..9).all(|i| generic(i).is_some()),
                _ => false,
            };
            if !signed_tail_ok {
                return Err(bad);
            }
            Some(ControlParameters::decode(&Bytes::copy_from_slice(cp))?)
        }
    };
    Ok(MgmtRequest { scope, module, verb, params, filter: None })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::{any, prop_assert_eq, proptest};
    use proptest::strategy::Strategy as Gen;

    fn arb_name() -> impl Gen<Value = Name> {
        proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..6), 0..4)
            .prop_map(|cs| Name::from_components(cs.iter().map(|c| (GENERIC_COMPONENT, c.as_slice()))))
    }

    fn arb_params() -> impl Gen<Value = ControlParameters> {
        let o = || proptest::option::of(any::<u64>());
        (
            (proptest::option::of(arb_name()), o(), proptest::option::of("[a-z0-9:/.]{0,20}"), proptest::option::of(".{0,8}")),
            (o(), o(), o(), o(), o(), o()),
            (proptest::option::of(arb_name()), o(), o(), o(), o(), o()),
        )
            .prop_map(|((name, face_id, uri, local_uri), (origin, cost, capacity, count, flags, mask), (st, exp, pers, bcmi, dct, mtu))| {
                ControlParameters {
                    name,
                    face_id,
                    uri,
                    local_uri,
                    origin,
                    cost,
                    capacity,
                    count,
                    flags,
                    mask,
                    strategy: st.map(|name| Strategy { name }),
                    expiration_period: exp,
                    face_persistency: pers,
                    base_congestion_marking_interval: bcmi,
                    default_congestion_threshold: dct,
                    mtu,
                }
            })
    }

    fn arb_face() -> impl Gen<Value = FaceStatus> {
        (any::<u64>(), ".{0,12}", ".{0,12}", proptest::option::of(any::<u64>()), proptest::array::uniform8(any::<u64>()), any::<[u64; 4]>())
            .prop_map(|(face_id, uri, local_uri, mtu, c, s)| FaceStatus {
                face_id,
                uri,
                local_uri,
                expiration_period: mtu.map(|m| m / 2),
                face_scope: s[0],
                face_persistency: s[1],
                link_type: s[2],
                base_congestion_marking_interval: None,
                default_congestion_threshold: mtu.map(|m| m / 3),
                mtu,
                n_in_interests: c[0],
                n_in_data: c[1],
                n_in_nacks: c[2],
                n_out_interests: c[3],
                n_out_data: c[4],
                n_out_nacks: c[5],
                n_in_bytes: c[6],
                n_out_bytes: c[7],
                flags: s[3],
            })
    }

    fn arb_filter() -> impl Gen<Value = FaceQueryFilter> {
        let o = || proptest::option::of(any::<u64>());
        let s = || proptest::option::of("[a-z0-9:/.\\[\\]]{0,24}");
        (o(), s(), s(), s(), o(), o(), o()).prop_map(|(face_id, uri_scheme, uri, local_uri, face_scope, face_persistency, link_type)| {
            FaceQueryFilter { face_id, uri_scheme, uri, local_uri, face_scope, face_persistency, link_type }
        })
    }

    fn round_trip<T: Record + PartialEq + fmt::Debug>(v: &T) {
        let mut out = Vec::new();
        v.encode_value(&mut out);
        assert_eq!(&T::decode_value(Bytes::from(out)).unwrap(), v);
    }

    proptest! {
        #[test]
        fn control_parameters_round_trip(p in arb_params()) {
            let w = Bytes::from(p.encode());
            prop_assert_eq!(ControlParameters::decode(&w).unwrap(), p);
        }

        #[test]
        fn control_response_round_trip(code: u32, text in ".{0,30}", body in proptest::option::of(arb_params())) {
            let r = ControlResponse { status_code: code, status_text: text, body };
            prop_assert_eq!(ControlResponse::decode(&Bytes::from(r.encode())).unwrap(), r);
        }

        #[test]
        fn forwarder_status_round_trip(v in ".{0,10}", c in proptest::array::uniform16(any::<u64>())) {
            round_trip(&ForwarderStatus {
                nfd_version: v, start_timestamp: c[0], current_timestamp: c[1], n_name_tree_entries: c[2],
                n_fib_entries: c[3], n_pit_entries: c[4], n_measurements_entries: c[5], n_cs_entries: c[6],
                n_in_interests: c[7], n_in_data: c[8], n_in_nacks: c[9], n_out_interests: c[10], n_out_data: c[11],
                n_out_nacks: c[12], n_satisfied_interests: c[13], n_unsatisfied_interests: c[14],
            });
        }

        #[test]
        fn face_list_round_trip(faces in proptest::collection::vec(arb_face(), 0..5)) {
            let w = Bytes::from(encode_list(&faces));
            prop_assert_eq!(decode_list::<FaceStatus>(&w).unwrap(), faces);
        }

        #[test]
        fn fib_and_rib_round_trip(entries in proptest::collection::vec((arb_name(), proptest::collection::vec((any::<u64>(), any::<u64>(), proptest::option::of(any::<u64>())), 0..4)), 0..4)) {
            let fib: Vec<FibEntry> = entries.iter().map(|(name, hops)| FibEntry {
                name: name.clone(),
                next_hops: hops.iter().map(|(f, c, _)| NextHopRecord { face_id: *f, cost: *c }).collect(),
            }).collect();
            prop_assert_eq!(decode_list::<FibEntry>(&Bytes::from(encode_list(&fib))).unwrap(), fib);
            let rib: Vec<RibEntry> = entries.iter().map(|(name, hops)| RibEntry {
                name: name.clone(),
                routes: hops.iter().map(|(f, c, e)| Route { face_id: *f, origin: c / 7, cost: *c, flags: c % 3, expiration_period: *e }).collect(),
            }).collect();
            prop_assert_eq!(decode_list::<RibEntry>(&Bytes::from(encode_list(&rib))).unwrap(), rib);
        }

        #[test]
        fn cs_info_and_strategy_choice_round_trip(c: [u64; 5], n in arb_name(), s in arb_name()) {
            round_trip(&CsInfo { capacity: c[0], flags: c[1], n_cs_entries: c[2], n_hits: c[3], n_misses: c[4] });
            let sc = vec![StrategyChoice { name: n, strategy: Strategy { name: s } }];
            prop_assert_eq!(decode_list::<StrategyChoice>(&Bytes::from(encode_list(&sc))).unwrap(), sc);
        }

        #[test]
        fn command_name_round_trip(p in arb_params(), localhop: bool, digest: bool) {
            let scope = if localhop { MgmtScope::Localhop } else { MgmtScope::Localhost };
            let mut name = command_name(scope, "rib", "register", &p);
            if digest {
                name = name.append(PARAMETERS_SHA256_DIGEST, &[7; 32]);
            }
            let req = parse_request(&name).unwrap();
            prop_assert_eq!(req, MgmtRequest { scope, module: "rib".into(), verb: "register".into(), params: Some(p), filter: None });
        }

        #[test]
        fn face_query_filter_round_trip(f in arb_filter(), localhop: bool, version: u64, segment: u64) {
            let mut w = Vec::new();
            f.encode_element(FACE_QUERY_FILTER, &mut w);
            prop_assert_eq!(FaceQueryFilter::decode_element(&Bytes::from(w), FACE_QUERY_FILTER).unwrap(), f.clone());
            // The name `nfdc` sends, and its later segments' names, carry the filter.
            let scope = if localhop { MgmtScope::Localhop } else { MgmtScope::Localhost };
            let name = face_query_name(scope, &f);
            let versioned = name.append_number(crate::types::VERSION_COMPONENT, version);
            for n in [name.clone(), versioned.clone(), versioned.append_number(crate::types::SEGMENT_COMPONENT, segment)] {
                let req = parse_request(&n).unwrap();
                prop_assert_eq!(req, MgmtRequest { scope, module: "faces".into(), verb: "query".into(), params: None, filter: Some(f.clone()) });
            }
        }

        #[test]
        fn decoders_never_panic(data in proptest::collection::vec(any::<u8>(), 0..120)) {
            let b = Bytes::from(data.clone());
            let _ = ControlParameters::decode_value(b.clone());
            let _ = ControlResponse::decode_value(b.clone());
            let _ = ForwarderStatus::decode_value(b.clone());
            let _ = CsInfo::decode_value(b.clone());
            let _ = decode_list::<FaceStatus>(&b);
            let _ = decode_list::<FibEntry>(&b);
            let _ = decode_list::<RibEntry>(&b);
            let _ = decode_list::<StrategyChoice>(&b);
            let _ = FaceQueryFilter::decode_value(b.clone());
            for (verb, typ) in [(&b"create"[..], CONTROL_PARAMETERS), (b"query", FACE_QUERY_FILTER)] {
                let mut w = vec![typ as u8, data.len() as u8];
                w.extend_from_slice(&data);
                let n = Name::from_components([(8, &b"localhost"[..]), (8, b"nfd"), (8, b"faces"), (8, verb), (8, &w)]);
                let _ = parse_request(&n);
            }
        }
    }

    /// Bytes produced by python-ndn's `make_command_v2('rib', 'register',
    /// name='/a', face_id=300, origin=255, cost=10, flags=1)` ControlParameters component.
    #[test]
    fn decodes_python_ndn_parameters() {
        let w = Bytes::from_static(&[
            0x68, 0x12, 0x07, 0x03, 0x08, 0x01, b'a', 0x69, 0x02, 0x01, 0x2c, 0x6f, 0x01, 0xff, 0x6a, 0x01, 0x0a, 0x6c,
            0x01, 0x01,
        ]);
        let p = ControlParameters::decode(&w).unwrap();
        assert_eq!(p.name.unwrap().to_string(), "/a");
        assert_eq!((p.face_id, p.origin, p.cost, p.flags), (Some(300), Some(255), Some(10), Some(1)));
        assert_eq!(p.uri, None);
    }

    #[test]
    fn unknown_fields_repeats_and_missing() {
        // Unknown non-core field 0x99 is ignored; core-range type 0x0f is not.
        let p = ControlParameters::decode(&Bytes::from_static(&[0x68, 6, 0x69, 1, 5, 0x99, 1, 0])).unwrap();
        assert_eq!(p.face_id, Some(5));
        assert_eq!(
            ControlParameters::decode(&Bytes::from_static(&[0x68, 3, 0x0f, 1, 0])),
            Err(WireError::UnknownCritical(0x0f))
        );
        // FaceId twice is ambiguous.
        assert_eq!(
            ControlParameters::decode(&Bytes::from_static(&[0x68, 6, 0x69, 1, 5, 0x69, 1, 6])),
            Err(WireError::OutOfOrder(FACE_ID))
        );
        // A ControlResponse without StatusText.
        assert_eq!(
            ControlResponse::decode(&Bytes::from_static(&[0x65, 4, 0x66, 2, 0x01, 0x90])),
            Err(WireError::Missing(STATUS_TEXT))
        );
        // StatusCode beyond u32.
        assert_eq!(
            ControlResponse::decode(&Bytes::from_static(&[0x65, 12, 0x66, 8, 1, 0, 0, 0, 0, 0, 0, 0, 0x67, 0])),
            Err(WireError::BadValue(STATUS_CODE))
        );
        // A Route is repeatable inside a RibEntry; a Name is not.
        let mut e = Vec::new();
        RibEntry { name: "/x".parse().unwrap(), routes: vec![Route::default(); 2] }.encode_value(&mut e);
        assert_eq!(RibEntry::decode_value(Bytes::from(e.clone())).unwrap().routes.len(), 2);
        e.extend_from_slice(&[7, 0]);
        assert_eq!(RibEntry::decode_value(Bytes::from(e)), Err(WireError::OutOfOrder(NAME)));
    }

    #[test]
    fn parses_request_shapes() {
        let p = ControlParameters { name: Some("/p".parse().unwrap()), ..Default::default() };
        let base = command_name(MgmtScope::Localhost, "rib", "register", &p);
        assert_eq!(base.to_string().split('/').nth(1), Some("localhost"));
        // Legacy signed command: four more generic components.
        let legacy = base.append_generic(b"t").append_generic(b"n").append_generic(b"i").append_generic(b"v");
        assert_eq!(parse_request(&legacy).unwrap().params, Some(p.clone()));
        // Three extra components fit neither form.
        assert!(parse_request(&base.append_generic(b"t").append_generic(b"n")).is_err());
        // Dataset requests, with and without version/segment.
        let ds = dataset_name(MgmtScope::Localhop, "faces", "list");
        let r = parse_request(&ds).unwrap();
        assert_eq!((r.scope, r.module.as_str(), r.verb.as_str(), r.params), (MgmtScope::Localhop, "faces", "list", None));
        let seg = ds.append_number(crate::types::VERSION_COMPONENT, 9).append_number(crate::types::SEGMENT_COMPONENT, 0);
        assert_eq!(parse_request(&seg).unwrap().params, None);
        // Not management, or a ControlParameters component that does not decode.
        assert!(parse_request(&"/localhost/nfx/faces/list".parse().unwrap()).is_err());
        assert!(parse_request(&"/localhost/nfd/faces".parse().unwrap()).is_err());
        assert!(parse_request(&ds.append_generic(b"junk")).is_err());
    }

    /// `faces/query` takes a FaceQueryFilter in its fifth component: one in
    /// ndn-cxx's field order decodes; none, another element, an unknown
    /// element in the core range, a repeated field or trailing bytes are
    /// refused, so that management answers 400 as NFD does; an unknown
    /// non-critical element is skipped.
    #[test]
    fn parses_face_query_requests() {
        let query = |filter: &[u8]| parse_request(&dataset_name(MgmtScope::Localhost, "faces", "query").append_generic(filter));
        // FaceId 300, UriScheme "udp4", Uri "udp4://192.0.2.1:6363", FaceScope 0.
        let mut w = vec![0x96, 0x24, 0x69, 0x02, 0x01, 0x2c, 0x83, 0x04];
        w.extend_from_slice(b"udp4");
        w.extend_from_slice(&[0x72, 0x15]);
        w.extend_from_slice(b"udp4://192.0.2.1:6363");
        w.extend_from_slice(&[0x84, 0x01, 0x00]);
        let r = query(&w).unwrap();
        let want = FaceQueryFilter {
            face_id: Some(300),
            uri_scheme: Some("udp4".into()),
            uri: Some("udp4://192.0.2.1:6363".into()),
            face_scope: Some(0),
            ..Default::default()
        };
        assert_eq!((r.module.as_str(), r.verb.as_str(), r.params, r.filter), ("faces", "query", None, Some(want)));
        // An empty filter is one that every face matches.
        assert_eq!(query(&[0x96, 0]).unwrap().filter, Some(FaceQueryFilter::default()));
        assert!(query(&[0x96, 5, 0x69, 1, 7, 0xfd, 0]).is_err(), "a truncated element");
        assert_eq!(query(&[0x96, 6, 0x69, 1, 7, 0xa0, 1, 0]).unwrap().filter.unwrap().face_id, Some(7));
        assert_eq!(query(&[0x96, 3, 0x0f, 1, 0]), Err(BadRequest::Filter(WireError::UnknownCritical(0x0f))));
        assert_eq!(query(&[0x96, 6, 0x69, 1, 7, 0x69, 1, 8]), Err(BadRequest::Filter(WireError::OutOfOrder(FACE_ID))));
        assert_eq!(query(&[0x96, 3, 0x72, 1, 0xff]), Err(BadRequest::Filter(WireError::BadValue(URI))), "a Uri that is not UTF-8");
        assert!(query(&[0x96, 0, 0]).is_err(), "trailing bytes");
        assert!(query(&ControlParameters { face_id: Some(7), ..Default::default() }.encode()).is_err());
        let bare = dataset_name(MgmtScope::Localhost, "faces", "query");
        assert!(parse_request(&bare).is_err(), "the filter is required");
        assert!(parse_request(&bare.append_number(crate::types::VERSION_COMPONENT, 1)).is_err());
    }

    /// A face matches every criterion given: the scheme of either URI (as
    /// NFD, so `unix` finds an application's face whose local URI is the
    /// socket's), URIs exactly, scope, persistency, link type; an empty
    /// string asks for nothing.
    #[test]
    fn face_query_filter_matches_as_nfd() {
        let face = FaceStatus {
            face_id: 260,
            uri: "fd://31".into(),
            local_uri: "unix:///run/nfd.sock".into(),
            face_scope: 1,
            face_persistency: FacePersistency::OnDemand.code(),
            ..Default::default()
        };
        let yes = |f: FaceQueryFilter| assert!(f.matches(&face), "{f:?}");
        let no = |f: FaceQueryFilter| assert!(!f.matches(&face), "{f:?}");
        yes(FaceQueryFilter::default());
        yes(FaceQueryFilter { face_id: Some(260), ..Default::default() });
        no(FaceQueryFilter { face_id: Some(261), ..Default::default() });
        yes(FaceQueryFilter { uri_scheme: Some("unix".into()), ..Default::default() });
        yes(FaceQueryFilter { uri_scheme: Some("fd".into()), ..Default::default() });
        no(FaceQueryFilter { uri_scheme: Some("udp4".into()), ..Default::default() });
        no(FaceQueryFilter { uri_scheme: Some("unix:".into()), ..Default::default() });
        yes(FaceQueryFilter { uri_scheme: Some(String::new()), uri: Some(String::new()), ..Default::default() });
        yes(FaceQueryFilter { uri: Some("fd://31".into()), local_uri: Some("unix:///run/nfd.sock".into()), ..Default::default() });
        no(FaceQueryFilter { uri: Some("fd://3".into()), ..Default::default() });
        no(FaceQueryFilter { local_uri: Some("fd://31".into()), ..Default::default() });
        yes(FaceQueryFilter { face_scope: Some(1), face_persistency: Some(1), link_type: Some(0), ..Default::default() });
        no(FaceQueryFilter { face_scope: Some(0), ..Default::default() });
        no(FaceQueryFilter { face_persistency: Some(FacePersistency::Persistent.code()), ..Default::default() });
        no(FaceQueryFilter { link_type: Some(1), ..Default::default() });
        no(FaceQueryFilter { face_id: Some(260), uri_scheme: Some("tcp4".into()), ..Default::default() });
    }

    #[test]
    fn persistency_names() {
        for p in [FacePersistency::Persistent, FacePersistency::OnDemand, FacePersistency::Permanent] {
            assert_eq!(p.to_string().parse::<FacePersistency>().unwrap(), p);
            assert_eq!(FacePersistency::from_code(p.code()), Some(p));
        }
        assert_eq!(FacePersistency::from_code(3), None);
    }
}
