//! NFD management under arbitrary requests, for the `mgmt` fuzz target
//! (`fuzz/`) and the corpus replay test (`tests/corpus.rs`), as
//! `trajan_wire::fuzzing` does for the codecs. Every command reaches
//! management as an Interest from a face, a local application's or (for
//! `/localhop/nfd`) a neighbour's, so what it makes of them is hostile input
//! that changes the RIB, the FIB, the faces, the strategies and the CS.
//!
//! The input is read as a sequence of requests, each a header byte, a
//! two-byte length and that many bytes (fewer at the end of the input), the
//! body. The header's low five bits pick what is asked: a command (its body
//! is the ControlParameters' TLV-VALUE), a dataset (`faces/query`'s body is
//! its FaceQueryFilter's TLV-VALUE), a later segment of a
//! dataset already fetched (the body's first byte picks the version, the
//! second the segment), an Interest named by the body (a Name TLV-VALUE), a
//! whole packet (the body), or a tick of the clock by the body's milliseconds,
//! after which the RIB drops expired routes. Bits 5 and 6 pick the face
//! asking: a local application's, a neighbour's (a DPDK port's, not local),
//! the face the last `faces/create` made, or none (no IncomingFaceId). Bit 7
//! signs the Interest with DigestSha256 as Trajan's tools do. One [`Management`], with
//! one forwarder, RIB and I/O layer (a UDP channel on loopback, no other
//! listener), answers them all as the daemon's single thread does, handling
//! the I/O layer's events (a dialed connection made or refused) after each.
//!
//! `faces/create` dials only loopback: a Uri the I/O layer would take is
//! rewritten to 127.0.0.1, on a port where a listener of this module takes
//! connections or one where nothing listens; one it refuses is left as it is.
//!
//! The checks panic on purpose, so nothing on a forwarding path may call
//! them. They are what the code promises: an answer is one Data, never cached,
//! named as the Interest (commands, refusals) or as a dataset segment of it;
//! no answer only where documented; a ControlResponse's status is one the
//! handlers give, with a body on success; a dataset decodes and describes the
//! tables as they are; a refused command changes nothing, a successful one
//! what it says; and after every request the FIB holds what the RIB derives
//! (per prefix and face, the cheapest own or else inherited route) besides
//! what `fib` commands and the daemon put there, routes and next hops name
//! only faces the forwarder has, management's own prefixes still reach the
//! internal face, the faces agree with the I/O layer's, LocalFieldsEnabled is
//! only on local faces, persistency never falls, the root keeps a strategy,
//! and expired routes are gone.

use std::collections::{BTreeMap, HashSet};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::OnceLock;
use std::time::Duration;

use bytes::Bytes;
use trajan_engine::{EngineConfig, FaceId, FaceMeta, Forwarder, StrategyKind, INTERNAL_FACE};
use trajan_io::{check_remote, FaceInfo, FaceKind, Io, IoConfig, IoEvent, Persistency, NDN_PORT};
use trajan_wire::fuzzing::Check;
use trajan_wire::lp::{LpHeaders, CACHE_POLICY_NO_CACHE};
use trajan_wire::mgmt::{
    dataset_name, decode_list, parse_request, ControlParameters, ControlResponse, CsInfo, FaceQueryFilter, FaceStatus, FibEntry,
    ForwarderStatus, MgmtScope, Record, RibEntry, StrategyChoice, CONTROL_PARAMETERS, CS_ENABLE_ADMIT, CS_ENABLE_SERVE,
    FACE_QUERY_FILTER, ROUTE_FLAG_CAPTURE, ROUTE_FLAG_CHILD_INHERIT,
};
use trajan_wire::signed::{sign_digest_sha256, SignatureFields};
use trajan_wire::tlv::{read_nonneg, write_tlv};
use trajan_wire::types::{SEGMENT_COMPONENT, VERSION_COMPONENT};
use trajan_wire::{Data, Interest, LpPacket, Name, MAX_PACKET_SIZE};

use crate::mgmt::{Management, MAX_REQUEST_NAME};
use crate::rib::Rib;

/// Every fuzz target of this crate by name (the name of its
/// `fuzz/fuzz_targets/*.rs` file and its `fuzz/corpus/*` folder), with its check.
pub const TARGETS: &[(&str, Check)] = &[("mgmt", mgmt)];

/// What a request's header byte asks for (its low five bits index [`OPS`]).
#[derive(Clone, Copy)]
enum Op {
    /// A command; the body is its ControlParameters' TLV-VALUE.
    Command(MgmtScope, &'static str, &'static str),
    /// A dataset, by its bare name; `faces/query`'s also carries its filter,
    /// whose TLV-VALUE is the body.
    Dataset(MgmtScope, &'static str, &'static str),
    /// A later segment of a dataset version already answered.
    Segment,
    /// An Interest whose Name TLV-VALUE is the body.
    Name,
    /// The body, as the packet the engine routed to management.
    Packet,
    /// The clock moves by the body (big-endian milliseconds, up to four bytes).
    Tick,
}

/// What each value of a header's low five bits asks for: every command and
/// dataset management knows, a command it does not, and some under
/// `/localhop/nfd`.
const OPS: [Op; 32] = {
    use MgmtScope::{Localhop as Hop, Localhost as Host};
    use Op::*;
    [
        Command(Host, "rib", "register"),
        Command(Host, "rib", "unregister"),
        Command(Host, "faces", "create"),
        Command(Host, "faces", "update"),
        Command(Host, "faces", "destroy"),
        Command(Host, "fib", "add-nexthop"),
        Command(Host, "fib", "remove-nexthop"),
        Command(Host, "strategy-choice", "set"),
        Command(Host, "strategy-choice", "unset"),
        Command(Host, "cs", "config"),
        Command(Host, "cs", "erase"),
        Command(Host, "rib", "announce"),
        Dataset(Host, "status", "general"),
        Dataset(Host, "status", "workers"),
        Dataset(Host, "faces", "list"),
        Dataset(Host, "fib", "list"),
        Dataset(Host, "rib", "list"),
        Dataset(Host, "cs", "info"),
        Dataset(Host, "strategy-choice", "list"),
        Dataset(Host, "faces", "query"),
        Segment,
        Name,
        Packet,
        Tick,
        Command(Hop, "rib", "register"),
        Command(Hop, "rib", "unregister"),
        Command(Hop, "faces", "create"),
        Command(Hop, "fib", "add-nexthop"),
        Dataset(Hop, "faces", "list"),
        Dataset(Hop, "rib", "list"),
        Segment,
        Tick,
    ]
};

/// Every status code the handlers answer with (`connect_settled`'s 504 included).
const STATUS_CODES: [u32; 9] = [200, 400, 403, 404, 406, 409, 410, 501, 504];

/// The neighbour's face: a DPDK port's, numbered as the daemon numbers them
/// (`FIRST_DPDK_FACE`, behind the `dpdk` feature), not local.
const DEVICE_FACE: FaceId = 0x4000_0000;

/// Management's own prefixes, which the daemon routes to the internal face.
const MGMT_PREFIXES: [&str; 2] = ["/localhost/nfd", "/localhop/nfd"];

/// Where a sanitised `faces/create` dials: a listener that takes connections
/// (accepted by the harness, so that its backlog never fills), and a port
/// where nothing listens.
struct Loopback {
    listener: TcpListener,
    open: u16,
    closed: u16,
}

fn loopback() -> &'static Loopback {
    static LOOPBACK: OnceLock<Loopback> = OnceLock::new();
    LOOPBACK.get_or_init(|| {
        let bind = || TcpListener::bind("127.0.0.1:0").expect("a loopback listener");
        let listener = bind();
        listener.set_nonblocking(true).expect("a non-blocking listener");
        let open = listener.local_addr().expect("bound").port();
        let closed = bind().local_addr().expect("bound").port();
        Loopback { listener, open, closed }
    })
}

/// `uri` as it may be dialed: unchanged if the I/O layer refuses it (nothing
/// is opened for it), else the same scheme on 127.0.0.1, at the open port for
/// an even port and the closed one for an odd one.
fn loopback_uri(uri: &str) -> String {
    let Some((scheme, rest)) = uri.split_once("://").filter(|_| check_remote(uri, 1).is_ok()) else { return uri.to_owned() };
    let (rest, slash) = rest.strip_suffix('/').map_or((rest, ""), |r| (r, "/"));
    let port = rest.parse::<SocketAddr>().map_or(NDN_PORT, |a| a.port());
    let lo = loopback();
    format!("{scheme}://127.0.0.1:{}{slash}", if port % 2 == 0 { lo.open } else { lo.closed })
}

/// The Interest in `pkt` and its LP headers, decoded as
/// [`Management::handle`] decodes them: `None` for what it does not answer.
fn request_of(pkt: &Bytes) -> Option<(Interest, LpHeaders)> {
    let lp = LpPacket::decode(pkt).ok()?;
    Some((Interest::decode(&lp.fragment?).ok()?, lp.headers))
}

/// The Uri of the `faces/create` `interest` asks for, if it is one.
fn create_uri(interest: &Interest) -> Option<String> {
    let req = parse_request(&interest.name).ok()?;
    req.params.filter(|_| (req.module.as_str(), req.verb.as_str()) == ("faces", "create")).and_then(|p| p.uri)
}

/// `pkt` with its `faces/create` Uri, if any, confined to loopback
/// ([`loopback_uri`]); `None` if it could not be (it is then not sent).
fn confined(pkt: Bytes) -> Option<Bytes> {
    let Some((mut interest, headers)) = request_of(&pkt) else { return Some(pkt) };
    let Some(uri) = create_uri(&interest) else { return Some(pkt) };
    let safe = loopback_uri(&uri);
    if safe == uri {
        return Some(pkt);
    }
    let mut params = parse_request(&interest.name).ok()?.params?;
    params.uri = Some(safe.clone());
    let old = interest.name;
    interest.name = (5..old.len()).fold(old.prefix(4).append_generic(&params.encode()), |n, i| n.append(old.get(i).typ, old.get(i).value));
    let pkt = LpPacket::wrap(&interest.encode(), &headers);
    // Whatever management will read from the rewritten packet dials loopback only.
    match request_of(&pkt).map(|(i, _)| create_uri(&i)) {
        None | Some(None) => Some(pkt),
        Some(Some(uri)) if uri == safe => Some(pkt),
        Some(Some(_)) => None,
    }
}

/// A route as [`Tables`] keys it: prefix (its TLV-VALUE), face, origin.
type RouteKey = (Vec<u8>, FaceId, u64);

/// The tables management changes, comparable from one request to the next.
#[derive(Debug, PartialEq, Eq)]
struct Tables {
    /// Each route's cost, flags and expiry.
    rib: BTreeMap<RouteKey, (u64, u64, Option<u64>)>,
    /// prefix → next hops (face, cost), in the FIB's order.
    fib: BTreeMap<Vec<u8>, Vec<(FaceId, u64)>>,
    strategies: BTreeMap<Vec<u8>, &'static str>,
    /// The forwarder's faces: (local, LocalFieldsEnabled).
    faces: BTreeMap<FaceId, (bool, bool)>,
    /// The I/O layer's faces: their persistency.
    io_faces: BTreeMap<FaceId, Persistency>,
    /// Capacity, and admit and serve as NFD's Flags (CS_ENABLE_ADMIT, CS_ENABLE_SERVE).
    cs: (usize, u64),
}

impl Tables {
    fn of(h: &Harness) -> Tables {
        let rib = h.rib.iter().flat_map(|(p, rs)| rs.map(|r| ((p.value().to_vec(), r.face, r.origin), (r.cost, r.flags, r.expires_ms)))).collect();
        let fib = h.fwd.fib.iter().map(|(p, e)| (p.value().to_vec(), e.nexthops.iter().map(|nh| (nh.face, nh.cost)).collect())).collect();
        let strategies = h.fwd.strategies.iter().map(|(p, k)| (p.value().to_vec(), k.name())).collect();
        let faces = h.fwd.faces.iter().map(|(id, m)| (id, (m.local, m.local_fields))).collect();
        let io_faces = h.io.faces().map(|f| (f.id, f.persistency)).collect();
        let cs = &h.fwd.pcct.cs;
        let flags = if cs.admits() { CS_ENABLE_ADMIT } else { 0 } | if cs.serves() { CS_ENABLE_SERVE } else { 0 };
        Tables { rib, fib, strategies, faces, io_faces, cs: (cs.capacity(), flags) }
    }

    /// The FIB's next hops the RIB derives, as NFD derives them: per prefix,
    /// each face at the cheapest of the prefix's own routes to it, else at the
    /// cheapest ChildInherit route to it of the longest shorter prefix that
    /// has one, shorter prefixes read up to the first with a Capture route and
    /// not at all past the prefix's own Capture.
    fn derived(&self) -> BTreeMap<(Vec<u8>, FaceId), u64> {
        let mut derived = BTreeMap::new();
        let prefixes: std::collections::BTreeSet<&Vec<u8>> = self.rib.keys().map(|(p, _, _)| p).collect();
        for prefix in prefixes {
            let name = Name::from_value(Bytes::copy_from_slice(prefix)).expect("a registered name");
            let mut faces: BTreeMap<FaceId, u64> = BTreeMap::new();
            for len in (0..=name.len()).rev() {
                let level = name.prefix_value(len);
                let routes = self.rib.range((level.to_vec(), 0, 0)..).take_while(|((p, _, _), _)| p.as_slice() == level);
                let mut here: BTreeMap<FaceId, u64> = BTreeMap::new();
                let mut captures = false;
                for ((_, face, _), &(cost, flags, _)) in routes {
                    captures |= flags & ROUTE_FLAG_CAPTURE != 0;
                    if len == name.len() || flags & ROUTE_FLAG_CHILD_INHERIT != 0 {
                        here.entry(*face).and_modify(|c| *c = cost.min(*c)).or_insert(cost);
                    }
                }
                for (face, cost) in here {
                    faces.entry(face).or_insert(cost);
                }
                if captures {
                    break;
                }
            }
            derived.extend(faces.into_iter().map(|(face, cost)| ((prefix.clone(), face), cost)));
        }
        derived
    }
}

/// One management, its tables and what the checks remember between requests.
struct Harness {
    /// Connections the loopback listener accepted; before `io`, so that they
    /// close first and the dialing side is not left in TIME_WAIT.
    peers: Vec<TcpStream>,
    mgmt: Management,
    fwd: Forwarder,
    rib: Rib,
    io: Io,
    now: u64,
    /// The local application's face (UDP to loopback, hence local).
    app: FaceId,
    /// The face the last `faces/create` answered with.
    created: FaceId,
    /// Dataset versions answered, oldest first.
    versions: Vec<Name>,
    /// `faces/create` commands waiting for their connection: face, command name.
    pending: Vec<(FaceId, Name)>,
    /// (prefix, face) next hops that `fib` commands set or removed, beside the RIB's.
    touched: HashSet<(Vec<u8>, FaceId)>,
}

impl Harness {
    fn new() -> Harness {
        let lo = loopback();
        while lo.listener.accept().is_ok() {}
        let cfg = EngineConfig { cs_capacity: 16, pit_capacity: 16, dead_nonce_capacity: 16, ..EngineConfig::default() };
        let mut fwd = Forwarder::new(&cfg, 0);
        fwd.add_face(INTERNAL_FACE, FaceMeta { local: true, local_fields: true, point_to_point: true, ..Default::default() });
        fwd.add_face(DEVICE_FACE, FaceMeta { point_to_point: true, ..Default::default() });
        for p in MGMT_PREFIXES {
            fwd.fib.add_nexthop(&p.parse().expect("static name"), INTERNAL_FACE, 0);
        }
        let udp = vec![SocketAddr::from(([127, 0, 0, 1], 0))];
        let mut io = Io::new(IoConfig { udp_listen: udp, tcp_listen: vec![], unix_path: None, ..IoConfig::default() }).expect("an I/O layer");
        let app = io.create_face(&format!("udp4://127.0.0.1:{}", lo.closed), Persistency::Persistent).expect("the application's face");
        fwd.add_face(app.id, FaceMeta { local: app.local_scope, point_to_point: true, ..Default::default() });
        let mut mgmt = Management::new();
        let uri = "dev://fuzz".to_owned();
        let kind = FaceKind::Device;
        mgmt.device_faces.push(FaceInfo { id: DEVICE_FACE, kind, remote_uri: uri.clone(), local_uri: uri, local_scope: false, persistency: Persistency::Permanent, mtu: None });
        let app = app.id;
        Harness { peers: Vec::new(), mgmt, fwd, rib: Rib::new(0), io, now: 0, app, created: app, versions: Vec::new(), pending: Vec::new(), touched: HashSet::new() }
    }

    fn ingress(&self, header: u8) -> Option<FaceId> {
        [Some(self.app), Some(DEVICE_FACE), Some(self.created), None][usize::from(header >> 5 & 3)]
    }

    /// The request `op` makes of `body`, as the engine hands it to management.
    fn packet(&self, op: Op, header: u8, body: &[u8]) -> Option<Bytes> {
        let element = |typ: u32| {
            let mut e = Vec::with_capacity(body.len() + 4);
            write_tlv(&mut e, typ, body);
            e
        };
        let name = match op {
            Op::Command(scope, module, verb) => dataset_name(scope, module, verb).append_generic(&element(CONTROL_PARAMETERS)),
            Op::Dataset(scope, "faces", "query") => dataset_name(scope, "faces", "query").append_generic(&element(FACE_QUERY_FILTER)),
            Op::Dataset(scope, module, verb) => dataset_name(scope, module, verb),
            Op::Segment => {
                let back = usize::from(body.first().copied().unwrap_or(0));
                let version = match self.versions.len() {
                    0 => dataset_name(MgmtScope::Localhost, "faces", "list").append_number(VERSION_COMPONENT, back as u64),
                    n => self.versions[n - 1 - back % n].clone(),
                };
                version.append_number(SEGMENT_COMPONENT, u64::from(body.get(1).copied().unwrap_or(0)))
            }
            Op::Name => Name::from_value(Bytes::copy_from_slice(body)).ok()?,
            Op::Packet => return Some(self.wrap(header, &Bytes::copy_from_slice(body))),
            Op::Tick => return None,
        };
        let mut interest = Interest::new(name);
        if header & 0x80 != 0 {
            let fields = SignatureFields { nonce: Some(vec![7; 8]), time_ms: Some(self.now), seq_num: None };
            sign_digest_sha256(&mut interest, &[], &fields);
        }
        Some(self.wrap(header, &interest.encode()))
    }

    fn wrap(&self, header: u8, pkt: &Bytes) -> Bytes {
        LpPacket::wrap(pkt, &LpHeaders { incoming_face_id: self.ingress(header).map(u64::from), ..Default::default() })
    }

    /// Hands `pkt` to management and checks the answer and what it changed.
    fn ask(&mut self, pkt: Bytes) {
        let before = Tables::of(self);
        let request = request_of(&pkt);
        let answer = self.mgmt.handle(&pkt, self.now, &mut self.fwd, &mut self.rib, &mut self.io, None);
        let Some((interest, headers)) = request else {
            assert!(answer.is_none(), "an answer to what is not an Interest");
            return;
        };
        // The face as management reads it, and whether it was local when it asked.
        let ingress = headers.incoming_face_id.unwrap_or(0) as FaceId;
        let local = before.faces.get(&ingress).is_some_and(|&(l, _)| l);
        let name = &interest.name;
        if name.value().len() > MAX_REQUEST_NAME {
            // Unanswered only when no answer could fit: a refusal adds under 256 bytes to the name.
            if answer.is_some() || name.value().len() < MAX_PACKET_SIZE - 256 {
                assert_eq!(status_of(&named(&answer, name)).status_code, 400, "{name}: over the bound");
            }
            return assert_eq!(Tables::of(self), before, "{name}: a request over the bound changed the tables");
        }
        let Ok(req) = parse_request(name) else {
            assert_eq!(status_of(&named(&answer, name)).status_code, 400, "{name}: a malformed request");
            return assert_eq!(Tables::of(self), before, "{name}: a malformed request changed the tables");
        };
        if !local {
            assert_eq!(status_of(&named(&answer, name)).status_code, 403, "{name}: from face {ingress}, not local");
            return assert_eq!(Tables::of(self), before, "{name}: a refused request changed the tables");
        }
        let Some(params) = req.params else {
            self.dataset(name, &req.module, &req.verb, req.filter.as_ref(), ingress, answer);
            return assert_eq!(Tables::of(self), before, "{name}: a dataset request changed the tables");
        };
        let what = (req.module.as_str(), req.verb.as_str());
        let Some(answer) = answer else {
            assert_eq!(what, ("faces", "create"), "{name}: no answer");
            let new = self.io.faces().map(|f| f.id).find(|id| !before.io_faces.contains_key(id) && self.io.is_connecting(*id));
            let face = new.unwrap_or_else(|| panic!("{name}: unanswered, yet no connection under way"));
            self.pending.push((face, name.clone()));
            return;
        };
        let resp = status_of(&named(&Some(answer), name));
        let after = Tables::of(self);
        let body = resp.body.clone().unwrap_or_default();
        let face = body.face_id.and_then(|f| u32::try_from(f).ok());
        match (what, resp.status_code) {
            (("faces", "create"), 200 | 409) => {
                let face = face.expect("faces/create answers with the face");
                assert!(self.io.face(face).is_some() && self.fwd.faces.get(face).is_some(), "{name}: face {face} is not up");
                self.created = face;
            }
            (_, 200) => self.succeeded(what, &params, &body, face, &after, name),
            _ => assert_eq!(after, before, "{name}: a refused command ({} {}) changed the tables", resp.status_code, resp.status_text),
        }
    }

    /// What a successful command promises, beyond the invariants.
    fn succeeded(&mut self, what: (&str, &str), asked: &ControlParameters, body: &ControlParameters, face: Option<FaceId>, after: &Tables, name: &Name) {
        let prefix = body.name.clone().unwrap_or_default();
        let key = prefix.value().to_vec();
        let hops = after.fib.get(&key).cloned().unwrap_or_default();
        let origin = body.origin.unwrap_or(0);
        match what {
            ("rib", "register") => assert!(self.rib.holds(&prefix, face.expect("a face"), origin), "{name}: not registered"),
            ("rib", "unregister") => assert!(!self.rib.holds(&prefix, face.expect("a face"), origin), "{name}: still registered"),
            ("faces", "destroy") => {
                let face = face.expect("a face");
                assert!(self.io.face(face).is_none() && self.fwd.faces.get(face).is_none(), "{name}: face {face} is still up");
                self.pending.retain(|(f, _)| *f != face);
            }
            ("faces", "update") => {
                let meta = self.fwd.faces.get(face.expect("a face")).expect("an updated face exists");
                assert_eq!(body.flags, Some(u64::from(meta.local_fields)), "{name}: LocalFieldsEnabled");
            }
            ("fib", "add-nexthop") => {
                let face = face.expect("a face");
                assert!(hops.contains(&(face, body.cost.unwrap_or(0))), "{name}: next hop missing: {hops:?}");
                self.touched.insert((key, face));
            }
            ("fib", "remove-nexthop") => {
                let face = face.expect("a face");
                assert!(hops.iter().all(|&(f, _)| f != face), "{name}: next hop still there: {hops:?}");
                self.touched.insert((key, face));
            }
            ("strategy-choice", "set") => {
                let kind = body.strategy.as_ref().and_then(|s| StrategyKind::from_name(&s.name));
                assert_eq!(self.fwd.strategies.get(&prefix).copied(), kind, "{name}: strategy");
            }
            ("strategy-choice", "unset") => {
                assert!(!prefix.is_empty() && self.fwd.strategies.get(&prefix).is_none(), "{name}: strategy still set");
            }
            ("cs", "config") => {
                let (capacity, flags) = after.cs;
                assert_eq!((body.capacity, body.flags), (Some(capacity as u64), Some(flags)), "{name}: CS configuration");
            }
            ("cs", "erase") => assert!(body.count.unwrap_or(0) <= asked.count.unwrap_or(u64::MAX), "{name}: erased more than asked"),
            _ => panic!("{name}: success of a command management does not know"),
        }
    }

    /// Checks a dataset's answer: a new version of a bare name (a
    /// `faces/query`'s carries its `filter`), whose every segment this fetches
    /// and whose content it holds to the tables, or a segment already made.
    fn dataset(&mut self, name: &Name, module: &str, verb: &str, filter: Option<&FaceQueryFilter>, ingress: FaceId, answer: Option<Bytes>) {
        let base = 4 + usize::from(filter.is_some());
        if name.len() > base {
            let Some(answer) = answer else { return };
            let d = reply_data(&answer);
            let want = name.prefix(base + 1).append_number(SEGMENT_COMPONENT, name.segment().unwrap_or(0));
            return assert!(d.name() == &want && name.is_prefix_of(d.name()), "{name} answered with {}", d.name());
        }
        let first = reply_data(&answer.unwrap_or_else(|| panic!("{name}: no answer")));
        let known = ["general", "workers"].contains(&verb) && module == "status"
            || verb == "list" && ["faces", "fib", "rib", "strategy-choice"].contains(&module)
            || (module, verb) == ("cs", "info")
            || filter.is_some();
        if !known {
            assert_eq!(first.name(), name, "an unknown dataset is refused by name");
            return assert_eq!(status_of(&first).status_code, 501, "{name}: unknown dataset");
        }
        let versioned = first.name().prefix(base + 1);
        assert!(first.name().len() == base + 2 && name.is_prefix_of(first.name()), "{name} answered as {}", first.name());
        assert_eq!((versioned.get(base).typ, first.name().segment()), (VERSION_COMPONENT, Some(0)), "{name} answered as {}", first.name());
        let version = |v: &Name| read_nonneg(v.get(v.len() - 1).value).expect("a version number");
        assert!(self.versions.last().is_none_or(|v| version(v) < version(&versioned)), "{name}: version {versioned} is not the newest");
        let last = first.final_block_id.as_ref().and_then(|f| Name::from_value(f.clone()).ok()).and_then(|n| n.segment());
        let last = last.unwrap_or_else(|| panic!("{name}: no final segment"));
        let mut content = first.content().to_vec();
        for seg in 1..=last {
            let want = versioned.append_number(SEGMENT_COMPONENT, seg);
            let pkt = LpPacket::wrap(&Interest::new(want.clone()).encode(), &LpHeaders { incoming_face_id: Some(ingress.into()), ..Default::default() });
            let answer = self.mgmt.handle(&pkt, self.now, &mut self.fwd, &mut self.rib, &mut self.io, None);
            let d = reply_data(&answer.unwrap_or_else(|| panic!("{want}: the newest version lost a segment")));
            assert_eq!(d.name(), &want);
            content.extend_from_slice(d.content());
        }
        self.versions.push(versioned);
        self.describes(module, verb, filter, &Bytes::from(content));
    }

    /// A dataset's content describes the tables as they are.
    fn describes(&self, module: &str, verb: &str, filter: Option<&FaceQueryFilter>, content: &Bytes) {
        let t = Tables::of(self);
        let mut faces: Vec<u64> = t.io_faces.keys().chain([DEVICE_FACE, INTERNAL_FACE].iter()).map(|&f| u64::from(f)).collect();
        faces.sort_unstable();
        match (module, verb) {
            ("status", "general") => {
                let s = ForwarderStatus::decode_value(content.clone()).expect("status/general decodes");
                assert_eq!(s.n_fib_entries, t.fib.len() as u64);
            }
            ("status", "workers") => assert!(std::str::from_utf8(content).is_ok(), "status/workers is text"),
            ("faces", "list") => {
                let listed: Vec<u64> = decode_list::<FaceStatus>(content).expect("faces/list decodes").iter().map(|f| f.face_id).collect();
                assert_eq!(listed, faces, "faces/list lists every face once, in order");
            }
            ("faces", "query") => {
                let filter = filter.expect("faces/query carries its filter");
                let listed = decode_list::<FaceStatus>(content).expect("faces/query decodes");
                assert!(listed.iter().all(|f| filter.matches(f)), "faces/query lists only faces its filter matches");
                let ids: Vec<u64> = listed.iter().map(|f| f.face_id).collect();
                assert!(ids.windows(2).all(|w| w[0] < w[1]) && ids.iter().all(|id| faces.contains(id)), "faces/query lists faces once, in order");
                if *filter == FaceQueryFilter::default() {
                    assert_eq!(ids, faces, "an empty filter matches every face");
                }
            }
            ("fib", "list") => {
                let listed: BTreeMap<Vec<u8>, Vec<(FaceId, u64)>> = decode_list::<FibEntry>(content)
                    .expect("fib/list decodes")
                    .into_iter()
                    .map(|e| (e.name.value().to_vec(), e.next_hops.iter().map(|nh| (nh.face_id as FaceId, nh.cost)).collect()))
                    .collect();
                assert_eq!(listed, t.fib, "fib/list is the FIB");
            }
            ("rib", "list") => {
                let listed: BTreeMap<_, _> = decode_list::<RibEntry>(content)
                    .expect("rib/list decodes")
                    .into_iter()
                    .flat_map(|e| {
                        let p = e.name.value().to_vec();
                        e.routes.into_iter().map(move |r| ((p.clone(), r.face_id as FaceId, r.origin), (r.cost, r.flags, r.expiration_period.is_some())))
                    })
                    .collect();
                let rib: BTreeMap<_, _> = t.rib.iter().map(|(k, &(cost, flags, e))| (k.clone(), (cost, flags, e.is_some()))).collect();
                assert_eq!(listed, rib, "rib/list is the RIB");
            }
            ("strategy-choice", "list") => {
                let listed: BTreeMap<Vec<u8>, &str> = decode_list::<StrategyChoice>(content)
                    .expect("strategy-choice/list decodes")
                    .iter()
                    .map(|c| (c.name.value().to_vec(), StrategyKind::from_name(&c.strategy.name).expect("a strategy this router has").name()))
                    .collect();
                assert_eq!(listed, t.strategies, "strategy-choice/list is the strategy table");
            }
            ("cs", "info") => {
                let info = decode_list::<CsInfo>(content).expect("cs/info decodes");
                let (capacity, flags) = t.cs;
                assert_eq!(info.iter().map(|i| (i.capacity, i.flags)).collect::<Vec<_>>(), [(capacity as u64, flags)]);
            }
            _ => unreachable!("a dataset management does not know was refused"),
        }
    }

    /// The clock moves: routes expire and the I/O layer's events are
    /// handled, as the daemon's loop does both.
    fn tick(&mut self, ms: u64) {
        self.now = self.now.saturating_add(ms);
        self.rib.expire(&mut self.fwd.fib, self.now);
        self.rib.take_refreshed();
        let now = self.now;
        assert!(self.rib.iter().all(|(_, mut rs)| rs.all(|r| r.expires_ms.is_none_or(|t| t > now))), "a route outlived its expiry at {now}");
    }

    /// Handles what the I/O layer reports, as the daemon's `face_event` does,
    /// and checks the answers of the `faces/create` that waited.
    fn events(&mut self, timeout: Duration) {
        let lo = loopback();
        while let Ok((peer, _)) = lo.listener.accept() {
            self.peers.push(peer);
        }
        let mut events = Vec::new();
        self.io.poll(Some(timeout), &mut events).expect("poll");
        for ev in events {
            let (face, outcome) = match ev {
                IoEvent::FaceUp(info) => {
                    self.fwd.add_face(info.id, FaceMeta { local: info.local_scope, point_to_point: true, ..Default::default() });
                    continue;
                }
                IoEvent::FaceDown(id) => {
                    self.face_down(id);
                    continue;
                }
                IoEvent::Connected(id) => (id, Ok(())),
                IoEvent::ConnectFailed { face, reason } => (face, Err(reason)),
                IoEvent::Packet { .. } | IoEvent::PeerMoved { .. } => continue,
            };
            let answer = self.mgmt.connect_settled(face, outcome.as_ref().map_err(String::as_str).copied(), &mut self.fwd, &mut self.io, None);
            if outcome.is_err() && self.io.face(face).is_none() {
                self.face_down(face);
            }
            let waiting = self.pending.iter().position(|(f, _)| *f == face).map(|i| self.pending.swap_remove(i));
            match (waiting, answer) {
                (None, None) => {}
                (None, Some(_)) => panic!("face {face}: an answer no faces/create waited for"),
                (Some((_, name)), answer) => {
                    let code = status_of(&named(&answer, &name)).status_code;
                    assert!(code == 504 || code == 200 && self.fwd.faces.get(face).is_some(), "{name}: settled with {code}");
                }
            }
        }
    }

    fn face_down(&mut self, id: FaceId) {
        self.rib.remove_face(&mut self.fwd.fib, id);
        self.rib.take_refreshed();
        self.fwd.remove_face(id);
    }

    /// What holds after every request, whatever it was.
    fn invariants(&self, previous: &Tables) {
        let t = Tables::of(self);
        for (p, face, _) in t.rib.keys() {
            assert!(*face != INTERNAL_FACE && t.faces.contains_key(face), "{}: a route via face {face}, which is not up", show(p));
        }
        let derived = t.derived();
        for ((p, face), cost) in &derived {
            if !self.touched.contains(&(p.clone(), *face)) {
                let hops = t.fib.get(p).cloned().unwrap_or_default();
                assert!(hops.contains(&(*face, *cost)), "{}: the FIB {hops:?} lacks the RIB's next hop {face} at {cost}", show(p));
            }
        }
        for (p, hops) in &t.fib {
            for (face, _) in hops {
                assert!(t.faces.contains_key(face), "{}: a next hop via face {face}, which is not up", show(p));
                let key = (p.clone(), *face);
                let daemon = *face == INTERNAL_FACE && mgmt_keys().any(|k| k == *p);
                assert!(daemon || derived.contains_key(&key) || self.touched.contains(&key), "{}: a next hop via {face} that nothing set", show(p));
            }
        }
        for key in mgmt_keys().filter(|k| !self.touched.contains(&(k.clone(), INTERNAL_FACE))) {
            let hops = t.fib.get(&key).cloned().unwrap_or_default();
            assert!(hops.contains(&(INTERNAL_FACE, 0)), "{} no longer reaches management: {hops:?}", show(&key));
        }
        for (&id, &(local, local_fields)) in &t.faces {
            assert!(local || !local_fields, "face {id}: LocalFieldsEnabled on a face that is not local");
            assert!(t.io_faces.contains_key(&id) || id == INTERNAL_FACE || id == DEVICE_FACE, "face {id}: in the forwarder, not in the I/O layer");
        }
        for (&id, &p) in &t.io_faces {
            assert!(t.faces.contains_key(&id) || self.io.is_connecting(id), "face {id}: up but unknown to the forwarder");
            assert!(previous.io_faces.get(&id).is_none_or(|&was| was <= p), "face {id}: persistency fell to {p:?}");
        }
        assert!(t.strategies.contains_key(&Vec::new()), "the root lost its strategy");
        assert!(t.cs.0 <= trajan_tables::cs::MAX_CAPACITY, "CS capacity {}", t.cs.0);
    }
}

/// The TLV-VALUEs of [`MGMT_PREFIXES`].
fn mgmt_keys() -> impl Iterator<Item = Vec<u8>> {
    MGMT_PREFIXES.iter().map(|p| p.parse::<Name>().expect("static name").value().to_vec())
}

/// The prefix `value` as a URI, for messages.
fn show(value: &[u8]) -> String {
    Name::from_value(Bytes::copy_from_slice(value)).map_or_else(|e| format!("{e:?}"), |n| n.to_string())
}

/// An answer as the engine receives it: one Data in an LpPacket that
/// forbids caching it.
fn reply_data(answer: &Bytes) -> Data {
    let lp = LpPacket::decode(answer).expect("an answer is an LpPacket");
    assert_eq!(lp.headers.cache_policy, Some(CACHE_POLICY_NO_CACHE), "an answer may be cached");
    let data = lp.fragment.expect("an answer carries a packet");
    assert!(data.len() <= MAX_PACKET_SIZE, "an answer of {} bytes, which no consumer takes", data.len());
    Data::decode(&data).expect("an answer is a Data")
}

/// The Data of `answer`, which must be named `name`.
fn named(answer: &Option<Bytes>, name: &Name) -> Data {
    let d = reply_data(answer.as_ref().unwrap_or_else(|| panic!("{name}: no answer")));
    assert_eq!(d.name(), name, "an answer named otherwise than its command");
    d
}

/// The ControlResponse a Data carries, with a status the handlers give.
fn status_of(d: &Data) -> ControlResponse {
    let r = ControlResponse::decode(&d.content_bytes()).unwrap_or_else(|e| panic!("{}: not a ControlResponse: {e:?}", d.name()));
    assert!(STATUS_CODES.contains(&r.status_code), "{}: status {}", d.name(), r.status_code);
    assert!(r.status_code != 200 || r.body.is_some(), "{}: a success without its parameters", d.name());
    r
}

/// Runs arbitrary requests through one management (see the module documentation).
pub fn mgmt(bytes: &[u8]) {
    let mut h = Harness::new();
    let mut at = 0usize;
    while at < bytes.len() {
        let header = bytes[at];
        let len = bytes.get(at + 1..at + 3).map_or(0, |b| usize::from(u16::from_be_bytes([b[0], b[1]])));
        at = (at + 3).min(bytes.len());
        let end = (at + len).min(bytes.len());
        let body = &bytes[at..end];
        at = end;
        let previous = Tables::of(&h);
        let op = OPS[usize::from(header & 0x1f)];
        if let Op::Tick = op {
            h.tick(body.iter().take(4).fold(0, |ms, &b| ms << 8 | u64::from(b)));
        } else if let Some(pkt) = h.packet(op, header, body).and_then(confined) {
            h.ask(pkt);
        }
        h.events(Duration::ZERO);
        h.invariants(&previous);
    }
    for _ in 0..100 {
        if h.pending.is_empty() {
            break;
        }
        let previous = Tables::of(&h);
        h.events(Duration::from_millis(10));
        h.invariants(&previous);
    }
    assert!(h.pending.is_empty(), "faces/create never answered: {:?}", h.pending);
}
