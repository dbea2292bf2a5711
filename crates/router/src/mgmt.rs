//! NFD management on the forwarder's internal face: the commands and status
//! datasets that applications (python-ndn, NDNts, ndnd) and `trajan`'s own tools
//! use, answered with NFD's ControlResponse codes.
//!
//! Requests arrive as Interests the engine routed to face 1, wrapped in an LpPacket
//! carrying IncomingFaceId. Replies are DigestSha256-signed Data named exactly as the
//! Interest (commands) or `<name>/v=<ms>/seg=<n>` (datasets), which the daemon feeds
//! back into the engine. Command signatures are not verified: commands and datasets
//! alike are answered only on local faces (a neighbour's `/localhop/nfd` request
//! gets 403), which is the trust boundary NFD's default config also uses.
//!
//! With several workers, `fwd` is the daemon's control replica: commands change it
//! as they would the single engine, then the resulting state of what they touched
//! is broadcast to the workers ([`Change`]); datasets sum the workers' counters and
//! table sizes, and `status/workers` (Trajan's own) lists them per worker.

use std::collections::VecDeque;
use std::time::{SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use trajan_engine::{Forwarder, StrategyKind, INTERNAL_FACE};
use trajan_io::{FaceInfo, FaceKind, Io, Persistency, MAX_FRAME_SIZE};
use trajan_wire::data::DataBuilder;
use trajan_wire::lp::{LpHeaders, LpPacket, CACHE_POLICY_NO_CACHE};
use trajan_wire::mgmt::{
    encode_list, parse_request, ControlParameters, ControlResponse, CsInfo, FaceQueryFilter, FaceStatus, FibEntry,
    ForwarderStatus, NextHopRecord, Record, RibEntry, Route as RouteRecord, Strategy, StrategyChoice, CS_ENABLE_ADMIT, CS_ENABLE_SERVE,
};
use trajan_wire::types::{SEGMENT_COMPONENT, VERSION_COMPONENT};
use trajan_wire::{Interest, Name, MAX_PACKET_SIZE};

use crate::rib::{Rib, Route};
use crate::workers::{rib_to_workers, Change, ShardStats, Workers};

/// Payload bytes per dataset segment, leaving room for the name and signature
/// within the 8800-byte packet limit.
const SEGMENT_SIZE: usize = 7000;
// A `faces/query` name, up to MAX_REQUEST_NAME bytes, leaves its segments a payload.
const _: () = assert!(MAX_REQUEST_NAME < SEGMENT_SIZE);
/// How many generated datasets are kept to answer requests for later segments.
const DATASET_CACHE: usize = 16;
/// Bytes of segments those datasets may hold together: each bare request makes
/// a new version, and a large FIB's `fib/list` runs to tens of megabytes, so
/// sixteen of them would hold hundreds. The newest is kept whatever its size,
/// so that its reader can fetch every segment.
const DATASET_CACHE_BYTES: usize = 64 << 20;
/// FreshnessPeriod of every management reply.
const REPLY_FRESHNESS_MS: u64 = 1000;

/// Bytes a request's name (its TLV-VALUE) may hold. An answer is named as its
/// request, and a command's answer repeats its parameters (an error may quote
/// its Uri), so an answer is about twice its request's name: a longer request
/// is refused before it takes effect, since its answer could exceed
/// [`MAX_PACKET_SIZE`] and be dropped, leaving the tool to time out on a
/// command that did happen. Real commands' names are a few hundred bytes.
pub(crate) const MAX_REQUEST_NAME: usize = 4096;

/// Management state: the dataset segments already produced, and the
/// `faces/create` commands still waiting for their TCP connection.
pub struct Management {
    datasets: VecDeque<(Name, Vec<Bytes>)>,
    /// Bytes of the segments in `datasets`.
    dataset_bytes: usize,
    /// Most of those bytes kept beside the newest dataset ([`DATASET_CACHE_BYTES`]).
    dataset_cap: usize,
    last_version: u64,
    start_unix_ms: u64,
    /// Faces the I/O layer does not poll (DPDK ports), so that faces/list shows
    /// them too.
    pub device_faces: Vec<FaceInfo>,
    connecting: Vec<PendingCreate>,
}

/// A `faces/create` of a TCP face, answered once its connection is established
/// or has failed ([`Management::connect_settled`]), as NFD answers it: a tool
/// then never reports a face that the next command finds gone.
struct PendingCreate {
    face: u32,
    /// The command's name, which its answer carries.
    name: Name,
    uri: String,
    /// Whether the command asked for LocalFieldsEnabled.
    local_fields: bool,
}

impl Default for Management {
    fn default() -> Self {
        Self::new()
    }
}

fn unix_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}

impl Management {
    /// Fresh management state; the start time is reported by `status/general`.
    pub fn new() -> Self {
        Management {
            datasets: VecDeque::new(),
            dataset_bytes: 0,
            dataset_cap: DATASET_CACHE_BYTES,
            last_version: 0,
            start_unix_ms: unix_ms(),
            device_faces: Vec::new(),
            connecting: Vec::new(),
        }
    }

    /// Answers one packet the engine sent to the internal face. `None` when the packet
    /// deserves no answer (not an Interest, a dataset segment no longer held, a
    /// request whose name alone leaves no room for an answer in a packet), or
    /// no answer yet (a `faces/create` whose TCP connection is under way: see
    /// [`Management::connect_settled`]). `workers` are the forwarding workers when
    /// there are several.
    pub fn handle(&mut self, pkt: &Bytes, now_ms: u64, fwd: &mut Forwarder, rib: &mut Rib, io: &mut Io, workers: Option<&mut Workers>) -> Option<Bytes> {
        let lp = LpPacket::decode(pkt).ok()?;
        let interest = Interest::decode(&lp.fragment?).ok()?;
        let ingress = lp.headers.incoming_face_id.unwrap_or(0) as u32;
        if interest.name.value().len() > MAX_REQUEST_NAME {
            let why = format!("Request name over {MAX_REQUEST_NAME} bytes: its answer might not fit a packet");
            return reply(&interest.name, bad(&why)).map(uncached);
        }
        self.answer(&interest, ingress, now_ms, fwd, rib, io, workers).map(uncached)
    }

    /// The answer to the `faces/create` that waited for `face`'s TCP connection,
    /// now established (`Ok`) or failed (`Err` with the reason): the face joins
    /// the forwarder (and its workers) only once it can carry packets, and a
    /// permanent face whose first connection failed is destroyed rather than
    /// left to redial, as NFD fails the command. `None` when no command waited
    /// for it (a configured route's face, or a later redial).
    pub fn connect_settled(&mut self, face: u32, outcome: Result<(), &str>, fwd: &mut Forwarder, io: &mut Io, workers: Option<&mut Workers>) -> Option<Bytes> {
        let i = self.connecting.iter().position(|p| p.face == face)?;
        let PendingCreate { name, uri, local_fields, .. } = self.connecting.swap_remove(i);
        let resp = match (outcome, io.face(face)) {
            (Ok(()), Some(info)) => ControlResponse::ok(add_created_face(info, local_fields, fwd)),
            // Established, then closed in the same poll.
            (Ok(()), None) => ControlResponse::error(504, format!("Connection to {uri} closed by the peer")),
            (Err(reason), _) => {
                io.destroy_face(face);
                ControlResponse::error(504, format!("Cannot connect to {uri}: {reason}"))
            }
        };
        if let Some(w) = workers {
            propagate("faces", "create", &resp, fwd, w);
        }
        tracing::debug!(face, code = resp.status_code, "faces/create answered after its connection");
        reply(&name, resp).map(uncached)
    }

    #[allow(clippy::too_many_arguments)]
    fn answer(
        &mut self,
        interest: &Interest,
        ingress: u32,
        now_ms: u64,
        fwd: &mut Forwarder,
        rib: &mut Rib,
        io: &mut Io,
        mut workers: Option<&mut Workers>,
    ) -> Option<Bytes> {
        let req = match parse_request(&interest.name) {
            Ok(r) => r,
            Err(e) => return reply(&interest.name, bad(e.status_text())),
        };
        // Only local faces (applications on this host, loopback peers) manage
        // the router or read its state, as in NFD: a neighbour's `/localhop`
        // request would otherwise learn every face's address and route, and
        // each new dataset version costs the control thread a pass over them.
        if !fwd.faces.get(ingress).is_some_and(|f| f.local) {
            return reply(&interest.name, ControlResponse::error(403, "Management is open only to local faces"));
        }
        let Some(params) = req.params else {
            let stats = match workers {
                Some(w) => w.stats(),
                None => vec![ShardStats::of(fwd)],
            };
            return self.dataset(&interest.name, &req.module, &req.verb, req.filter.as_ref(), now_ms, fwd, rib, io, &stats);
        };
        let resp = match (req.module.as_str(), req.verb.as_str()) {
            ("rib", "register") => rib_register(params, ingress, now_ms, fwd, rib),
            ("rib", "unregister") => rib_unregister(params, ingress, fwd, rib),
            ("faces", "create") => self.face_create(params, &interest.name, fwd, io)?,
            ("faces", "destroy") => self.face_destroy(params, fwd, rib, io),
            ("faces", "update") => face_update(params, ingress, fwd, io),
            ("fib", "add-nexthop") => fib_add_nexthop(params, ingress, fwd),
            ("fib", "remove-nexthop") => fib_remove_nexthop(params, ingress, fwd),
            ("strategy-choice", "set") => strategy_set(params, fwd),
            ("strategy-choice", "unset") => strategy_unset(params, fwd),
            ("cs", "config") => cs_config(params, fwd),
            ("cs", "erase") => cs_erase(params, fwd, workers.as_deref_mut()),
            _ => ControlResponse::error(501, "Unsupported command"),
        };
        if let Some(w) = workers.as_deref_mut() {
            propagate(&req.module, &req.verb, &resp, fwd, w);
        }
        rib_to_workers(rib, fwd, workers);
        tracing::debug!(module = %req.module, verb = %req.verb, code = resp.status_code, "management command");
        reply(&interest.name, resp)
    }

    /// Serves a status dataset: a new version for a bare dataset name, or a later
    /// segment of a version produced earlier. `filter` is a `faces/query`
    /// request's, whose name carries it before the version.
    #[allow(clippy::too_many_arguments)]
    fn dataset(
        &mut self,
        name: &Name,
        module: &str,
        verb: &str,
        filter: Option<&FaceQueryFilter>,
        now_ms: u64,
        fwd: &Forwarder,
        rib: &Rib,
        io: &Io,
        shards: &[ShardStats],
    ) -> Option<Bytes> {
        let base_len = 4 + usize::from(filter.is_some());
        if name.len() > base_len {
            // `<dataset>/<version>` asks for segment 0 and `<dataset>/<version>/<segment>`
            // for that segment; no segment held is named by any longer name.
            let seg = match name.len() - base_len {
                1 => 0,
                2 => name.segment()?,
                _ => return None,
            };
            let versioned = name.prefix(base_len + 1);
            let (_, segments) = self.datasets.iter().find(|(n, _)| *n == versioned)?;
            return segments.get(usize::try_from(seg).ok()?).cloned();
        }
        let total = ShardStats::sum(shards);
        let content = match (module, verb) {
            ("status", "general") => {
                let mut v = Vec::new();
                self.general_status(fwd, &total).encode_value(&mut v);
                v
            }
            ("status", "workers") => workers_text(shards, io),
            ("faces", "list") => encode_list(&face_list(fwd, io, &self.device_faces, &total)),
            ("faces", "query") => {
                let mut faces = face_list(fwd, io, &self.device_faces, &total);
                faces.retain(|f| filter.is_some_and(|q| q.matches(f)));
                encode_list(&faces)
            }
            ("fib", "list") => encode_list(&fib_list(fwd)),
            ("rib", "list") => encode_list(&rib_list(rib, now_ms)),
            // CsInfo is one whole element (type 0x80), unlike status/general's bare fields.
            ("cs", "info") => encode_list(&[cs_info(fwd, &total)]),
            ("strategy-choice", "list") => encode_list(&strategy_list(fwd)),
            _ => return reply(name, ControlResponse::error(501, "Unsupported dataset")),
        };
        let version = unix_ms().max(self.last_version + 1);
        self.last_version = version;
        let versioned = name.append_number(VERSION_COMPONENT, version);
        // A `faces/query` filter, in every segment's name, takes its room from
        // the payload: SEGMENT_SIZE leaves room for a bare dataset name only.
        let payload = SEGMENT_SIZE - (name.value().len() - name.prefix(4).value().len());
        let chunks: Vec<&[u8]> = if content.is_empty() { vec![&[][..]] } else { content.chunks(payload).collect() };
        let last = chunks.len() as u64 - 1;
        let segments: Vec<Bytes> = chunks
            .iter()
            .enumerate()
            .map(|(i, c)| {
                DataBuilder::new(versioned.append_number(SEGMENT_COMPONENT, i as u64))
                    .freshness_ms(REPLY_FRESHNESS_MS)
                    .final_segment(last)
                    .build(c)
            })
            .collect();
        let first = segments[0].clone();
        self.keep_dataset(versioned, segments);
        Some(first)
    }

    /// Keeps a new dataset's segments for the requests of its later segments,
    /// giving up the oldest datasets beyond [`DATASET_CACHE`] of them or
    /// [`DATASET_CACHE_BYTES`] with this one.
    fn keep_dataset(&mut self, versioned: Name, segments: Vec<Bytes>) {
        let bytes: usize = segments.iter().map(Bytes::len).sum();
        while !self.datasets.is_empty() && (self.datasets.len() >= DATASET_CACHE || self.dataset_bytes + bytes > self.dataset_cap) {
            if let Some((_, old)) = self.datasets.pop_front() {
                self.dataset_bytes -= old.iter().map(Bytes::len).sum::<usize>();
            }
        }
        self.dataset_bytes += bytes;
        self.datasets.push_back((versioned, segments));
    }

    /// `faces/create` (the command named `name`): its answer, or `None` for a new
    /// TCP face whose connection is under way, answered by
    /// [`Management::connect_settled`]. An Mtu is taken only at or above the
    /// face's own ([`MAX_FRAME_SIZE`]): Trajan does not fragment what it
    /// sends, so it could not honour a smaller one, and says so. Flags and
    /// Mask may ask for LocalFieldsEnabled, on a local face only, as with
    /// `faces/update`; any other bit is refused rather than ignored.
    fn face_create(&mut self, p: ControlParameters, name: &Name, fwd: &mut Forwarder, io: &mut Io) -> Option<ControlResponse> {
        let Some(uri) = p.uri.clone() else { return Some(bad("Uri is required")) };
        let persistency = match p.face_persistency.map_or(Some(Persistency::Persistent), Persistency::from_code) {
            // As NFD: a face this router dials is never on-demand.
            Some(Persistency::OnDemand) => return Some(ControlResponse::error(406, "FacePersistency must be persistent or permanent: a face made by a command is never on-demand")),
            None => return Some(bad("unknown FacePersistency")),
            Some(p) => p,
        };
        let local_fields = match flags_and_mask(&p, 1, "LocalFieldsEnabled (1)") {
            Ok((flags, mask)) => flags & mask & 1 != 0,
            Err(why) => return Some(bad(&why)),
        };
        // As NFD, and as `faces/update`: local fields only on a local face.
        if local_fields && matches!(trajan_io::check_remote(&uri, 1), Ok(false)) {
            return Some(ControlResponse::error(406, "LocalFieldsEnabled requires a local face (a loopback peer)"));
        }
        if let Some(mtu) = p.mtu.filter(|&m| m < MAX_FRAME_SIZE as u64) {
            let why = format!("Mtu {mtu} is below {MAX_FRAME_SIZE}, the largest packet a face sends: this router does not fragment");
            return Some(ControlResponse::error(406, why));
        }
        // The face is an existing one if its id was (the URI may be spelled
        // another way than the face's canonical one, `udp://` or a trailing `/`).
        let known: std::collections::HashSet<_> = io.faces().map(|f| f.id).collect();
        Some(match io.create_face(&uri, persistency) {
            Ok(info) if known.contains(&info.id) => {
                ControlResponse { status_code: 409, status_text: "Face with remote URI already exists".into(), body: Some(add_created_face(&info, false, fwd)) }
            }
            Ok(info) if io.is_connecting(info.id) => {
                self.connecting.push(PendingCreate { face: info.id, name: name.clone(), uri: info.remote_uri, local_fields });
                return None;
            }
            Ok(info) => ControlResponse::ok(add_created_face(&info, local_fields, fwd)),
            Err(e) => ControlResponse::error(406, format!("Cannot create face: {e}")),
        })
    }

    /// `faces/destroy`. A `faces/create` still waiting for the face's
    /// connection is forgotten: the face is gone and no event will settle it.
    /// A face the router holds for its lifetime (the internal face, a DPDK
    /// port) is refused with 409 rather than answered 200 and kept; an
    /// unknown face is answered 200, as NFD does (it is gone either way).
    fn face_destroy(&mut self, p: ControlParameters, fwd: &mut Forwarder, rib: &mut Rib, io: &mut Io) -> ControlResponse {
        let Some(id) = p.face_id else { return bad("FaceId is required") };
        let id = id.min(u32::MAX as u64) as u32;
        if id == INTERNAL_FACE || self.device_faces.iter().any(|f| f.id == id) {
            return ControlResponse::error(409, "Face not destroyed: the router keeps it while it runs (the internal face, a DPDK port)");
        }
        if io.destroy_face(id) {
            rib.remove_face(&mut fwd.fib, id);
            fwd.remove_face(id);
            self.connecting.retain(|c| c.face != id);
        }
        ControlResponse::ok(ControlParameters { face_id: Some(id as u64), ..Default::default() })
    }

    fn general_status(&self, fwd: &Forwarder, total: &ShardStats) -> ForwarderStatus {
        let c = &total.counters.packets;
        ForwarderStatus {
            nfd_version: format!("trajan-{}", env!("CARGO_PKG_VERSION")),
            start_timestamp: self.start_unix_ms,
            current_timestamp: unix_ms(),
            n_name_tree_entries: 0,
            n_fib_entries: fwd.fib.len() as u64,
            n_pit_entries: total.pit_entries as u64,
            n_measurements_entries: total.measurements_entries as u64,
            n_cs_entries: total.cs_entries as u64,
            n_in_interests: c.in_interests,
            n_in_data: c.in_data,
            n_in_nacks: c.in_nacks,
            n_out_interests: c.out_interests,
            n_out_data: c.out_data,
            n_out_nacks: c.out_nacks,
            n_satisfied_interests: total.counters.satisfied_interests,
            n_unsatisfied_interests: total.counters.unsatisfied_interests,
        }
    }
}

/// A command reply: Data named as the Interest, carrying the ControlResponse.
/// `None` when that Data would exceed [`MAX_PACKET_SIZE`], which a consumer
/// drops anyway: only a request whose name alone nearly fills a packet, one
/// [`MAX_REQUEST_NAME`] refuses, goes unanswered.
fn reply(name: &Name, resp: ControlResponse) -> Option<Bytes> {
    let data = DataBuilder::new(name.clone()).freshness_ms(REPLY_FRESHNESS_MS).build(&resp.encode());
    if data.len() > MAX_PACKET_SIZE {
        tracing::debug!(bytes = data.len(), code = resp.status_code, "management answer too large to send");
        return None;
    }
    Some(data)
}

/// Replies describe the router's state at one instant: they are never cached, so
/// the next `route list` shows the route just added (NDNLPv2 CachePolicy
/// NoCache). Later segments of a dataset are served from `datasets`.
fn uncached(data: Bytes) -> Bytes {
    LpPacket::wrap(&data, &LpHeaders { cache_policy: Some(CACHE_POLICY_NO_CACHE), ..Default::default() })
}

fn bad(text: &str) -> ControlResponse {
    ControlResponse::error(400, text)
}

/// A command's Flags and the Mask saying which of them to change, `(0, 0)`
/// when it has neither. Flags without a Mask, a Mask without Flags, or Mask
/// bits beyond `known` (those this router implements, named in `names`) are
/// refused, with the reason for a 400 answer: a command obeyed only in part
/// must not be obeyed at all.
fn flags_and_mask(p: &ControlParameters, known: u64, names: &str) -> Result<(u64, u64), String> {
    match (p.flags, p.mask) {
        (None, None) => Ok((0, 0)),
        (Some(_), None) => Err("Flags need a Mask saying which of them to change".to_owned()),
        (None, Some(_)) => Err("Mask needs Flags giving the new values".to_owned()),
        (Some(_), Some(m)) if m & !known != 0 => Err(format!("Mask may select only {names}")),
        (Some(f), Some(m)) => Ok((f, m)),
    }
}

/// The face a command names: FaceId, or the requester's own face when 0 or absent.
fn target_face(params: &ControlParameters, ingress: u32) -> u32 {
    match params.face_id {
        None | Some(0) => ingress,
        Some(id) => id.min(u32::MAX as u64) as u32,
    }
}

fn rib_register(p: ControlParameters, ingress: u32, now_ms: u64, fwd: &mut Forwarder, rib: &mut Rib) -> ControlResponse {
    let Some(name) = p.name.clone() else { return bad("Name is required") };
    let face = target_face(&p, ingress);
    // 410 either way, as NFD's code for a face that cannot take the route, but
    // said apart: `faces/list` shows the internal face, so "not found" misled.
    if face == INTERNAL_FACE {
        return ControlResponse::error(410, format!("Face {INTERNAL_FACE} is the router's internal face (management), which takes no routes"));
    }
    if fwd.faces.get(face).is_none() {
        return ControlResponse::error(410, "Face not found");
    }
    let route = Route {
        face,
        origin: p.origin.unwrap_or(0),
        cost: p.cost.unwrap_or(0),
        flags: p.flags.unwrap_or(1),
        expires_ms: p.expiration_period.map(|e| now_ms.saturating_add(e)),
    };
    let body = ControlParameters {
        name: Some(name.clone()),
        face_id: Some(face as u64),
        origin: Some(route.origin),
        cost: Some(route.cost),
        flags: Some(route.flags),
        expiration_period: p.expiration_period,
        ..Default::default()
    };
    rib.register(&mut fwd.fib, &name, route);
    ControlResponse::ok(body)
}

fn rib_unregister(p: ControlParameters, ingress: u32, fwd: &mut Forwarder, rib: &mut Rib) -> ControlResponse {
    let Some(name) = p.name.clone() else { return bad("Name is required") };
    let face = target_face(&p, ingress);
    let origin = p.origin.unwrap_or(0);
    rib.unregister(&mut fwd.fib, &name, face, origin);
    ControlResponse::ok(ControlParameters { name: Some(name), face_id: Some(face as u64), origin: Some(origin), ..Default::default() })
}

/// Adds a face management created to the forwarder (if not there yet) and
/// describes it for the answer.
fn add_created_face(info: &FaceInfo, local_fields: bool, fwd: &mut Forwarder) -> ControlParameters {
    let meta = trajan_engine::FaceMeta { local: info.local_scope, local_fields, point_to_point: true, ..Default::default() };
    if fwd.faces.get(info.id).is_none() {
        fwd.add_face(info.id, meta);
    }
    ControlParameters {
        face_id: Some(info.id as u64),
        uri: Some(info.remote_uri.clone()),
        local_uri: Some(info.local_uri.clone()),
        face_persistency: Some(info.persistency.code()),
        flags: Some(fwd.faces.get(info.id).map_or(0, |m| m.local_fields as u64)),
        mtu: info.mtu.map(|m| m as u64),
        ..Default::default()
    }
}

/// `faces/update`: the LocalFieldsEnabled flag (bit 0, the only one this
/// router implements; other Mask bits are refused) and the FacePersistency,
/// which may only rise ([`Io::raise_persistency`]). Everything is checked
/// before anything changes.
fn face_update(p: ControlParameters, ingress: u32, fwd: &mut Forwarder, io: &mut Io) -> ControlResponse {
    let face = target_face(&p, ingress);
    let Some(meta) = fwd.faces.get(face) else { return ControlResponse::error(404, "Face not found") };
    let (flags, mask) = match flags_and_mask(&p, 1, "LocalFieldsEnabled (1)") {
        Ok(fm) => fm,
        Err(why) => return bad(&why),
    };
    let local_fields = (mask & 1 != 0).then_some(flags & 1 != 0);
    if local_fields == Some(true) && !meta.local {
        return ControlResponse::error(409, "LocalFieldsEnabled requires a local face");
    }
    if let Some(code) = p.face_persistency {
        let Some(want) = Persistency::from_code(code) else { return bad("unknown FacePersistency") };
        if let Err(why) = io.raise_persistency(face, want) {
            return ControlResponse::error(409, format!("FacePersistency not changed: {why}"));
        }
    }
    let meta = fwd.faces.get_mut(face).expect("looked up above");
    if let Some(on) = local_fields {
        meta.local_fields = on;
    }
    ControlResponse::ok(ControlParameters {
        face_id: Some(face as u64),
        flags: Some(meta.local_fields as u64),
        face_persistency: io.face(face).map(|f| f.persistency.code()),
        ..Default::default()
    })
}

fn fib_add_nexthop(p: ControlParameters, ingress: u32, fwd: &mut Forwarder) -> ControlResponse {
    let Some(name) = p.name.clone() else { return bad("Name is required") };
    let face = target_face(&p, ingress);
    if fwd.faces.get(face).is_none() {
        return ControlResponse::error(410, "Face not found");
    }
    let cost = p.cost.unwrap_or(0);
    fwd.fib.add_nexthop(&name, face, cost);
    ControlResponse::ok(ControlParameters { name: Some(name), face_id: Some(face as u64), cost: Some(cost), ..Default::default() })
}

fn fib_remove_nexthop(p: ControlParameters, ingress: u32, fwd: &mut Forwarder) -> ControlResponse {
    let Some(name) = p.name.clone() else { return bad("Name is required") };
    let face = target_face(&p, ingress);
    fwd.fib.remove_nexthop(&name, face);
    ControlResponse::ok(ControlParameters { name: Some(name), face_id: Some(face as u64), ..Default::default() })
}

fn strategy_set(p: ControlParameters, fwd: &mut Forwarder) -> ControlResponse {
    let (Some(name), Some(strategy)) = (p.name.clone(), p.strategy.clone()) else { return bad("Name and Strategy are required") };
    let Some(kind) = StrategyKind::from_name(&strategy.name) else {
        let known: Vec<&str> = StrategyKind::ALL.iter().map(|k| k.name()).collect();
        return ControlResponse::error(404, format!("Strategy not found (this router has {})", known.join(", ")));
    };
    fwd.strategies.insert(&name, kind);
    // As NFD: the answer names the strategy chosen, version included.
    ControlResponse::ok(ControlParameters { name: Some(name), strategy: Some(strategy_of(kind)), ..Default::default() })
}

fn strategy_unset(p: ControlParameters, fwd: &mut Forwarder) -> ControlResponse {
    let Some(name) = p.name.clone() else { return bad("Name is required") };
    if name.is_empty() {
        return bad("The root strategy cannot be unset");
    }
    fwd.strategies.remove(&name);
    ControlResponse::ok(ControlParameters { name: Some(name), ..Default::default() })
}

/// The CS's Flags as `cs/config` and `cs/info` report them.
fn cs_flags(cs: &trajan_tables::Cs) -> u64 {
    (if cs.admits() { CS_ENABLE_ADMIT } else { 0 }) | if cs.serves() { CS_ENABLE_SERVE } else { 0 }
}

/// `cs/config`: the capacity, and the admit and serve flags the Mask selects
/// (NFD's semantics), checked before anything changes ([`flags_and_mask`]).
/// A capacity above [`trajan_tables::cs::MAX_CAPACITY`] is refused with that
/// bound, rather than quietly lowered to it.
fn cs_config(p: ControlParameters, fwd: &mut Forwarder) -> ControlResponse {
    let (flags, mask) = match flags_and_mask(&p, CS_ENABLE_ADMIT | CS_ENABLE_SERVE, "CS_ENABLE_ADMIT (1) and CS_ENABLE_SERVE (2)") {
        Ok(fm) => fm,
        Err(why) => return bad(&why),
    };
    const MAX: usize = trajan_tables::cs::MAX_CAPACITY;
    if let Some(c) = p.capacity.filter(|&c| c > MAX as u64) {
        return bad(&format!("Capacity {c} is above the most packets a content store holds, {MAX}"));
    }
    let cs = &mut fwd.pcct.cs;
    if let Some(c) = p.capacity {
        cs.set_capacity(c as usize);
    }
    if mask & CS_ENABLE_ADMIT != 0 {
        cs.set_admit(flags & CS_ENABLE_ADMIT != 0);
    }
    if mask & CS_ENABLE_SERVE != 0 {
        cs.set_serve(flags & CS_ENABLE_SERVE != 0);
    }
    ControlResponse::ok(ControlParameters { capacity: Some(cs.capacity() as u64), flags: Some(cs_flags(cs)), ..Default::default() })
}

fn cs_erase(p: ControlParameters, fwd: &mut Forwarder, workers: Option<&mut Workers>) -> ControlResponse {
    let Some(name) = p.name.clone() else { return bad("Name is required") };
    if p.count == Some(0) {
        return bad("Count must be positive");
    }
    let limit = p.count.map_or(usize::MAX, |c| c.min(usize::MAX as u64) as usize);
    let erased = match workers {
        Some(w) => w.cs_erase(&name, limit),
        None => fwd.pcct.cs.erase_prefix(&name, limit),
    };
    ControlResponse::ok(ControlParameters { name: Some(name), count: Some(erased as u64), ..Default::default() })
}

/// Every face the forwarder sends on: the I/O layer's, the DPDK ports, and
/// the internal face management answers on, which the FIB names as the next
/// hop of `/localhost/nfd` (NFD lists it too, as `internal://`).
fn face_list(fwd: &Forwarder, io: &Io, device_faces: &[FaceInfo], total: &ShardStats) -> Vec<FaceStatus> {
    let internal = fwd.faces.get(INTERNAL_FACE).map(|_| FaceInfo {
        id: INTERNAL_FACE,
        kind: FaceKind::Internal,
        remote_uri: "internal://".to_owned(),
        local_uri: "internal://".to_owned(),
        local_scope: true,
        persistency: Persistency::Permanent,
        mtu: None,
    });
    let mut list: Vec<FaceStatus> = io
        .faces()
        .chain(device_faces)
        .chain(internal.as_ref())
        .map(|info| {
            let c = total.faces.get(&info.id).map(|m| m.packets.clone()).unwrap_or_default();
            let bytes = io.counters(info.id).cloned().unwrap_or_default();
            FaceStatus {
                face_id: info.id as u64,
                uri: info.remote_uri.clone(),
                local_uri: info.local_uri.clone(),
                face_scope: info.local_scope as u64,
                face_persistency: info.persistency.code(),
                link_type: 0,
                mtu: info.mtu.map(|m| m as u64),
                n_in_interests: c.in_interests,
                n_in_data: c.in_data,
                n_in_nacks: c.in_nacks,
                n_out_interests: c.out_interests,
                n_out_data: c.out_data,
                n_out_nacks: c.out_nacks,
                n_in_bytes: bytes.in_bytes,
                n_out_bytes: bytes.out_bytes,
                flags: fwd.faces.get(info.id).is_some_and(|m| m.local_fields) as u64,
                ..Default::default()
            }
        })
        .collect();
    list.sort_by_key(|f| f.face_id);
    list
}

fn fib_list(fwd: &Forwarder) -> Vec<FibEntry> {
    let mut list: Vec<FibEntry> = fwd
        .fib
        .iter()
        .map(|(name, e)| FibEntry {
            name: name.clone(),
            next_hops: e.nexthops.iter().map(|nh| NextHopRecord { face_id: nh.face as u64, cost: nh.cost }).collect(),
        })
        .collect();
    list.sort_by_key(|e| e.name.to_string());
    list
}

fn rib_list(rib: &Rib, now_ms: u64) -> Vec<RibEntry> {
    let mut list: Vec<RibEntry> = rib
        .iter()
        .map(|(name, routes)| RibEntry {
            name: name.clone(),
            routes: routes
                .map(|r| RouteRecord {
                    face_id: r.face as u64,
                    origin: r.origin,
                    cost: r.cost,
                    flags: r.flags,
                    expiration_period: r.expires_ms.map(|t| t.saturating_sub(now_ms)),
                })
                .collect(),
        })
        .collect();
    list.sort_by_key(|e| e.name.to_string());
    list
}

/// The CS as a whole: the configured capacity (shards get equal parts of it) and
/// every shard's entries and hits.
fn cs_info(fwd: &Forwarder, total: &ShardStats) -> CsInfo {
    CsInfo {
        capacity: fwd.pcct.cs.capacity() as u64,
        flags: cs_flags(&fwd.pcct.cs),
        n_cs_entries: total.cs_entries as u64,
        n_hits: total.cs_hits,
        n_misses: total.cs_misses,
    }
}

/// `status/workers`, Trajan's own dataset: one text line per worker with its
/// packets (`dispatched`: handed over by the I/O thread; `direct`: read on its own
/// port of the hash face; `punted`: read there but handed back), exchanges, shard
/// sizes and what its engine dropped and why (malformed, scope, loop, no route,
/// hop limit, PIT full, an entry's in-records full, downstreams of a Data cut,
/// stray Nacks), then their sum, then the I/O thread's own
/// drops (what no face could be charged with) and the bytes held in send queues
/// and for reassembly. Text rather than TLV because
/// it is for people (`trajan status`) and has no NFD counterpart to stay compatible
/// with; NFD itself answers it with 501, which tools treat as "no workers".
fn workers_text(shards: &[ShardStats], io: &Io) -> Vec<u8> {
    let line = |who: &str, s: &ShardStats| {
        let p = &s.counters.packets;
        format!(
            "{who}: dispatched={} in-interests={} in-data={} in-nacks={} out-interests={} out-data={} satisfied={} unsatisfied={} unsolicited-data={} pit={} cs={} cs-hits={} ring-drops={} direct={} punted={} \
             malformed={} scope-violations={} loops={} no-route={} hop-limit-drops={} pit-full={} in-records-full={} downstreams-cut={} dropped-nacks={}\n",
            s.dispatched,
            p.in_interests,
            p.in_data,
            p.in_nacks,
            p.out_interests,
            p.out_data,
            s.counters.satisfied_interests,
            s.counters.unsatisfied_interests,
            s.counters.unsolicited_data,
            s.pit_entries,
            s.cs_entries,
            s.cs_hits,
            s.in_ring_drops + s.out_ring_drops,
            s.direct,
            s.punted,
            s.counters.malformed,
            s.counters.scope_violations,
            s.counters.loops,
            s.counters.no_route,
            s.counters.hop_limit_drops,
            s.counters.pit_full,
            s.counters.in_records_full,
            s.counters.downstreams_cut,
            s.counters.dropped_nacks,
        )
    };
    let mut text: String = shards
        .iter()
        .enumerate()
        .map(|(i, s)| match &s.placement {
            Some(p) => line(&format!("worker {i} (cpu {}, socket {}, core {}, node {})", p.cpu.id, p.cpu.socket, p.cpu.core, p.cpu.node), s),
            None => line(&format!("worker {i}"), s),
        })
        .collect();
    text.push_str(&line("total", &ShardStats::sum(shards)));
    let s = io.stats();
    text.push_str(&format!(
        "io thread: io-faces={} unknown-peer-drops={} corrupt-streams={} face-limit-drops={} idle-evictions={} stalled-streams={} unreachable-closes={} unreachable-kept={} udp-errors-ignored={} queued-bytes={} reassembly-bytes={} reassembly-evictions={}\n",
        io.faces().count(),
        s.unknown_peer_drops,
        s.corrupt_streams,
        s.face_limit_drops,
        s.idle_evictions,
        s.stalled_streams,
        s.unreachable_closes,
        s.unreachable_kept,
        s.udp_errors_ignored,
        io.queued_bytes(),
        io.reassembly_held(),
        io.reassembly_evicted(),
    ));
    text.into_bytes()
}

/// Brings the workers' replicas to the control replica's state for what a
/// successful command touched (commands that failed carry no body and changed nothing).
/// The FIB entries a RIB change rewrote, which reach past the command's own
/// prefix, come from [`Rib::take_refreshed`] instead.
fn propagate(module: &str, verb: &str, resp: &ControlResponse, fwd: &Forwarder, workers: &mut Workers) {
    let Some(body) = &resp.body else { return };
    match (module, verb, &body.name, body.face_id) {
        ("fib", _, Some(name), _) => workers.broadcast(Change::route(fwd, name)),
        ("faces", _, _, Some(id)) => workers.broadcast(Change::face(fwd, id.min(u32::MAX as u64) as u32)),
        ("strategy-choice", _, Some(name), _) => workers.broadcast(Change::strategy(fwd, name)),
        ("cs", "config", _, _) => workers.broadcast(Change::cs(fwd, workers.len())),
        _ => {}
    }
}

/// A strategy's NFD name, as management reports it.
fn strategy_of(kind: StrategyKind) -> Strategy {
    Strategy { name: kind.name().parse().expect("static strategy names parse") }
}

fn strategy_list(fwd: &Forwarder) -> Vec<StrategyChoice> {
    fwd.strategies
        .iter()
        .map(|(name, kind)| StrategyChoice {
            name: name.clone(),
            strategy: strategy_of(*kind),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use trajan_engine::{EngineConfig, FaceMeta};
    use trajan_io::IoConfig;
    use trajan_wire::mgmt::{command_name, dataset_name, face_query_name, MgmtScope};
    use trajan_wire::Data;

    const LOCAL: u32 = 300;
    const NEIGHBOUR: u32 = 301;

    struct Router {
        mgmt: Management,
        fwd: Forwarder,
        rib: Rib,
        io: Io,
    }

    impl Router {
        fn new() -> Router {
            let mut fwd = Forwarder::new(&EngineConfig::default(), 0);
            fwd.add_face(LOCAL, FaceMeta { local: true, point_to_point: true, ..Default::default() });
            fwd.add_face(NEIGHBOUR, FaceMeta { point_to_point: true, ..Default::default() });
            let io = Io::new(IoConfig { udp_listen: vec![], tcp_listen: vec![], unix_path: None, ..IoConfig::default() }).unwrap();
            Router { mgmt: Management::new(), fwd, rib: Rib::new(0), io }
        }

        /// The reply to an Interest for `name` from `face`, as the engine hands it over.
        fn ask(&mut self, face: u32, name: Name) -> Data {
            reply_data(&self.try_ask(face, name).expect("a reply"))
        }

        /// [`Router::ask`] for a command that may be answered later.
        fn try_ask(&mut self, face: u32, name: Name) -> Option<Bytes> {
            let headers = LpHeaders { incoming_face_id: Some(face.into()), ..Default::default() };
            let pkt = LpPacket::wrap(&Interest::new(name).encode(), &headers);
            self.mgmt.handle(&pkt, 0, &mut self.fwd, &mut self.rib, &mut self.io, None)
        }
    }

    fn reply_data(reply: &Bytes) -> Data {
        Data::decode(&LpPacket::decode(reply).unwrap().fragment.unwrap()).unwrap()
    }

    fn status(data: &Data) -> Option<u32> {
        ControlResponse::decode(&data.content_bytes()).ok().map(|r| r.status_code)
    }

    /// Cached datasets stay within their count and their bytes, the newest
    /// whole whatever its size, and the count of bytes follows what is kept.
    #[test]
    fn cached_datasets_are_bounded_in_bytes_but_the_newest_stays_whole() {
        let mut m = Management::new();
        m.dataset_cap = 10_000;
        let segments = |n: usize| vec![Bytes::from(vec![0u8; n])];
        let name = |v: u64| "/localhost/nfd/fib/list".parse::<Name>().unwrap().append_number(VERSION_COMPONENT, v);
        for v in 0..5 {
            m.keep_dataset(name(v), segments(3000));
        }
        assert_eq!((m.datasets.len(), m.dataset_bytes), (3, 9000));
        assert_eq!(m.datasets[0].0, name(2), "the oldest went first");
        m.keep_dataset(name(9), segments(50_000));
        assert_eq!((m.datasets.len(), m.dataset_bytes), (1, 50_000), "a dataset above the bound is kept alone");
        for v in 10..40 {
            m.keep_dataset(name(v), segments(1));
        }
        assert_eq!((m.datasets.len(), m.dataset_bytes), (DATASET_CACHE, DATASET_CACHE));
    }

    /// `trajan status` shows why each worker's engine dropped what it dropped,
    /// summed over the workers.
    #[test]
    fn the_workers_dataset_counts_each_reason_for_a_drop() {
        let r = Router::new();
        let mut one = ShardStats::default();
        (one.counters.malformed, one.counters.pit_full, one.counters.loops) = (1, 2, 3);
        let mut two = ShardStats::default();
        (two.counters.pit_full, two.counters.no_route, two.counters.hop_limit_drops) = (5, 7, 11);
        (two.counters.scope_violations, two.counters.dropped_nacks) = (13, 17);
        (one.counters.in_records_full, two.counters.in_records_full, two.counters.downstreams_cut) = (19, 23, 29);
        let text = String::from_utf8(workers_text(&[one, two], &r.io)).unwrap();
        let total = text.lines().find(|l| l.starts_with("total:")).expect("a total line");
        let fields = ["malformed=1 ", "scope-violations=13 ", "loops=3 ", "no-route=7 ", "hop-limit-drops=11 ", "pit-full=7 ", "in-records-full=42 ", "downstreams-cut=29 ", "dropped-nacks=17"];
        for field in fields {
            assert!(total.contains(field), "{field} in {total}");
        }
        assert!(text.lines().next().unwrap().contains(" pit-full=2 "), "{text}");
    }

    /// As in NFD, only local faces manage the router or read its state: a
    /// neighbour's `/localhop/nfd` request is refused, commands and datasets
    /// alike, while a local application may use either scope.
    #[test]
    fn only_local_faces_manage_the_router_or_read_its_state() {
        let mut r = Router::new();
        let faces = dataset_name(MgmtScope::Localhop, "faces", "list");
        let answer = r.ask(LOCAL, faces.clone());
        assert_eq!(answer.name().len(), faces.len() + 2, "a dataset segment: {}", answer.name());
        assert_eq!(status(&r.ask(NEIGHBOUR, faces)), Some(403));
        // Not a later segment of a version made for a local face either.
        assert_eq!(status(&r.ask(NEIGHBOUR, answer.name().clone())), Some(403));

        let params = ControlParameters { name: Some("/from/afar".parse().unwrap()), ..Default::default() };
        assert_eq!(status(&r.ask(NEIGHBOUR, command_name(MgmtScope::Localhop, "rib", "register", &params))), Some(403));
        assert_eq!(r.rib.iter().count(), 0);
        assert_eq!(status(&r.ask(LOCAL, command_name(MgmtScope::Localhop, "rib", "register", &params))), Some(200));
        assert_eq!(r.rib.iter().count(), 1);
    }

    /// A dataset's later requests are answered only with a segment their name
    /// is a prefix of: `<version>` gets segment 0, `<version>/<segment>` that
    /// segment, and anything else nothing, where segment 0 used to come back
    /// under a name the engine then dropped as unsolicited.
    #[test]
    fn a_dataset_segment_is_answered_only_under_a_name_it_satisfies() {
        let mut r = Router::new();
        let first = r.ask(LOCAL, dataset_name(MgmtScope::Localhost, "faces", "list"));
        let version = first.name().prefix(5);
        assert_eq!(first.name(), &version.append_number(SEGMENT_COMPONENT, 0));
        assert_eq!(r.ask(LOCAL, version.clone()).name(), first.name());
        assert_eq!(r.ask(LOCAL, first.name().clone()).name(), first.name());
        for unanswerable in [
            version.append_generic(b"x"),
            version.append_number(SEGMENT_COMPONENT, 1),
            first.name().append_generic(b"x"),
            first.name().append_number(SEGMENT_COMPONENT, 0),
        ] {
            assert!(r.try_ask(LOCAL, unanswerable.clone()).is_none(), "{unanswerable}");
        }
    }

    /// Every answer fits a packet. A command whose name could make its answer
    /// too large is refused before it takes effect, with an answer that fits;
    /// one just under the bound is obeyed and its answer, which repeats the
    /// prefix, fits too; a name that alone nearly fills a packet goes
    /// unanswered. Before, a `faces/create` with a 4.4 KB Uri was answered with
    /// a Data over the limit, which was dropped, and the tool timed out.
    #[test]
    fn answers_fit_a_packet_and_longer_requests_are_refused_first() {
        let mut r = Router::new();
        let prefix = |len: usize| Name::from_components([(8u32, &vec![b'p'; len][..])]);
        let register = |len: usize| {
            let p = ControlParameters { name: Some(prefix(len)), ..Default::default() };
            command_name(MgmtScope::Localhost, "rib", "register", &p)
        };
        let fragment = |answer: &Bytes| LpPacket::decode(answer).unwrap().fragment.unwrap().len();
        let longest = (3000..5000).take_while(|&len| register(len).value().len() <= MAX_REQUEST_NAME).last().unwrap();

        let answer = r.try_ask(LOCAL, register(longest)).expect("an answer");
        assert_eq!(status(&reply_data(&answer)), Some(200));
        assert!(fragment(&answer) <= MAX_PACKET_SIZE, "{} bytes", fragment(&answer));
        assert!(r.rib.holds(&prefix(longest), LOCAL, 0));

        let answer = r.try_ask(LOCAL, register(longest + 1)).expect("an answer");
        assert_eq!(status(&reply_data(&answer)), Some(400));
        assert!(!r.rib.holds(&prefix(longest + 1), LOCAL, 0), "refused, so not registered");

        let uri = format!("udp4://{}.example:6363", "h".repeat(4400));
        let create = command_name(MgmtScope::Localhost, "faces", "create", &ControlParameters { uri: Some(uri), ..Default::default() });
        let answer = r.try_ask(LOCAL, create).expect("an answer");
        assert_eq!(status(&reply_data(&answer)), Some(400));
        assert!(fragment(&answer) <= MAX_PACKET_SIZE);

        assert!(r.try_ask(LOCAL, register(8700)).is_none(), "no answer could fit");
        assert!(!r.rib.holds(&prefix(8700), LOCAL, 0));
    }

    /// faces/list shows the internal face management answers on, which
    /// `/localhost/nfd`'s FIB entry names, with what it carried, as NFD does;
    /// faces/destroy refuses it.
    #[test]
    fn the_face_list_shows_the_internal_face_and_destroy_refuses_it() {
        let mut r = Router::new();
        let list = |r: &mut Router| {
            let d = r.ask(LOCAL, dataset_name(MgmtScope::Localhost, "faces", "list"));
            trajan_wire::mgmt::decode_list::<FaceStatus>(&d.content_bytes()).unwrap()
        };
        assert!(list(&mut r).iter().all(|f| f.face_id != u64::from(INTERNAL_FACE)), "not listed before the forwarder has it");
        r.fwd.add_face(INTERNAL_FACE, FaceMeta { local: true, local_fields: true, point_to_point: true, ..Default::default() });
        r.fwd.faces.get_mut(INTERNAL_FACE).unwrap().counters.packets.out_interests = 3;
        let faces = list(&mut r);
        let internal = faces.iter().find(|f| f.face_id == u64::from(INTERNAL_FACE)).expect("the internal face is listed");
        assert_eq!((internal.uri.as_str(), internal.local_uri.as_str()), ("internal://", "internal://"));
        assert_eq!((internal.face_scope, internal.face_persistency, internal.flags), (1, Persistency::Permanent.code(), 1));
        assert_eq!(internal.n_out_interests, 3);
        let destroy = ControlParameters { face_id: Some(INTERNAL_FACE.into()), ..Default::default() };
        assert_eq!(status(&r.ask(LOCAL, command_name(MgmtScope::Localhost, "faces", "destroy", &destroy))), Some(409));
        assert!(list(&mut r).iter().any(|f| f.face_id == u64::from(INTERNAL_FACE)), "still listed");
        // Listed, so a route to it is refused saying what it is, not "not found".
        let register = ControlParameters { name: Some("/x".parse().unwrap()), face_id: Some(INTERNAL_FACE.into()), ..Default::default() };
        let reply = r.ask(LOCAL, command_name(MgmtScope::Localhost, "rib", "register", &register));
        let resp = ControlResponse::decode(&reply.content_bytes()).unwrap();
        assert_eq!(resp.status_code, 410);
        assert!(resp.status_text.contains("internal face"), "{}", resp.status_text);
    }

    /// `cs/config` switches admit and serve as its Mask says and reports them,
    /// as `cs/info` does; Flags without a Mask, or a Mask with bits NFD does
    /// not define, change nothing, not even the capacity given with them.
    #[test]
    fn cs_config_switches_admit_and_serve_by_mask() {
        let mut r = Router::new();
        let config = |r: &mut Router, capacity: Option<u64>, flags: Option<u64>, mask: Option<u64>| {
            let p = ControlParameters { capacity, flags, mask, ..Default::default() };
            let reply = r.ask(LOCAL, command_name(MgmtScope::Localhost, "cs", "config", &p));
            let resp = ControlResponse::decode(&reply.content_bytes()).unwrap();
            (resp.status_code, resp.body.map(|b| (b.capacity, b.flags)))
        };
        let info = |r: &mut Router| {
            let d = r.ask(LOCAL, dataset_name(MgmtScope::Localhost, "cs", "info"));
            let i = trajan_wire::mgmt::decode_list::<CsInfo>(&d.content_bytes()).unwrap().remove(0);
            (i.capacity, i.flags)
        };
        let capacity = r.fwd.pcct.cs.capacity() as u64;
        assert_eq!(info(&mut r), (capacity, 3));
        assert_eq!(config(&mut r, None, Some(0), Some(1)), (200, Some((Some(capacity), Some(2)))), "admit off, serve untouched");
        assert!(!r.fwd.pcct.cs.admits() && r.fwd.pcct.cs.serves());
        assert_eq!(config(&mut r, Some(10), Some(1), Some(3)), (200, Some((Some(10), Some(1)))), "admit on, serve off");
        assert_eq!(info(&mut r), (10, 1));
        assert_eq!(config(&mut r, None, None, None), (200, Some((Some(10), Some(1)))), "nothing asked, nothing changed");
        for (flags, mask) in [(Some(3), None), (None, Some(3)), (Some(3), Some(4)), (Some(0), Some(0x11))] {
            assert_eq!(config(&mut r, Some(99), flags, mask).0, 400, "flags {flags:?} mask {mask:?}");
        }
        assert_eq!(info(&mut r), (10, 1), "a refused command changed nothing");
        let most = trajan_tables::cs::MAX_CAPACITY as u64;
        for absurd in [most + 1, 1_000_000_000, u64::MAX] {
            assert_eq!(config(&mut r, Some(absurd), None, None).0, 400, "capacity {absurd} is refused");
        }
        assert_eq!(info(&mut r), (10, 1), "a refused capacity changed nothing");
        // The bound itself is taken, and allocates nothing until packets come
        // (a store built for it took 8 GiB, and aborted the router).
        assert_eq!(config(&mut r, Some(most), None, None), (200, Some((Some(most), Some(1)))));
        assert_eq!(config(&mut r, Some(10), None, None), (200, Some((Some(10), Some(1)))));
    }

    /// `faces/update` sets LocalFieldsEnabled on a local face only, raises a
    /// dialed face's persistency but never lowers it, and refuses what it
    /// does not implement (other flag bits, Flags without a Mask) before
    /// changing anything.
    #[test]
    fn faces_update_sets_local_fields_and_raises_persistency() {
        let mut r = Router::new();
        let update = |r: &mut Router, p: ControlParameters| {
            let reply = r.ask(LOCAL, command_name(MgmtScope::Localhost, "faces", "update", &p));
            let resp = ControlResponse::decode(&reply.content_bytes()).unwrap();
            (resp.status_code, resp.body.map(|b| (b.flags, b.face_persistency)))
        };
        let on = |face: u32| ControlParameters { face_id: Some(face.into()), flags: Some(1), mask: Some(1), ..Default::default() };
        assert_eq!(update(&mut r, on(LOCAL)), (200, Some((Some(1), None))));
        assert!(r.fwd.faces.get(LOCAL).unwrap().local_fields);
        assert_eq!(update(&mut r, on(NEIGHBOUR)).0, 409, "local fields need a local face");
        for (flags, mask) in [(Some(0), None), (None, Some(1)), (Some(0), Some(3))] {
            let p = ControlParameters { face_id: Some(LOCAL.into()), flags, mask, ..Default::default() };
            assert_eq!(update(&mut r, p).0, 400, "flags {flags:?} mask {mask:?}");
        }
        assert!(r.fwd.faces.get(LOCAL).unwrap().local_fields, "refused commands changed nothing");

        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let info = r.io.create_face(&format!("tcp4://{}", listener.local_addr().unwrap()), Persistency::Persistent).unwrap();
        r.fwd.add_face(info.id, FaceMeta { point_to_point: true, ..Default::default() });
        let persistency = |p: Persistency| ControlParameters { face_id: Some(info.id.into()), face_persistency: Some(p.code()), ..Default::default() };
        assert_eq!(update(&mut r, persistency(Persistency::Permanent)), (200, Some((Some(0), Some(Persistency::Permanent.code())))));
        assert_eq!(r.io.face(info.id).unwrap().persistency, Persistency::Permanent);
        assert_eq!(update(&mut r, persistency(Persistency::Persistent)).0, 409, "never lowered");
        assert_eq!(update(&mut r, persistency(Persistency::OnDemand)).0, 409);
        assert_eq!(r.io.face(info.id).unwrap().persistency, Persistency::Permanent);
        let p = ControlParameters { face_persistency: Some(Persistency::Permanent.code()), ..on(LOCAL) };
        assert_eq!(update(&mut r, p).0, 409, "a face the I/O layer does not hold keeps what it has");
    }

    /// `faces/create` of a face that exists, in any spelling of its URI, is
    /// answered 409 with that face; an Mtu the router cannot honour is refused.
    #[test]
    fn face_create_knows_a_face_by_any_spelling_and_refuses_a_small_mtu() {
        let mut r = Router::new();
        r.io = Io::new(IoConfig { udp_listen: vec!["127.0.0.1:0".parse().unwrap()], tcp_listen: vec![], unix_path: None, ..IoConfig::default() }).unwrap();
        let mut create = |uri: &str, mtu: Option<u64>| {
            let p = ControlParameters { uri: Some(uri.into()), mtu, ..Default::default() };
            let reply = r.ask(LOCAL, command_name(MgmtScope::Localhost, "faces", "create", &p));
            let resp = ControlResponse::decode(&reply.content_bytes()).unwrap();
            (resp.status_code, resp.body.and_then(|b| b.face_id), resp.status_text)
        };
        let (code, id, _) = create("udp4://127.0.0.1:17999", None);
        assert_eq!(code, 200);
        for other in ["udp4://127.0.0.1:17999", "udp://127.0.0.1:17999", "udp4://127.0.0.1:17999/"] {
            let (code, again, _) = create(other, None);
            assert_eq!((code, again), (409, id), "{other}");
        }
        let (code, _, text) = create("udp4://127.0.0.1:17998", Some(500));
        assert_eq!(code, 406, "{text}");
        assert!(text.contains("does not fragment"), "{text}");
        assert_eq!(create("udp4://127.0.0.1:17998", Some(MAX_FRAME_SIZE as u64)).0, 200);
    }

    /// Flags and Mask are obeyed or refused, never ignored: LocalFieldsEnabled
    /// on a loopback face, not on another (406, as NFD, and the face is not
    /// kept); other bits, an on-demand face and a malformed pair are refused.
    #[test]
    fn face_create_obeys_or_refuses_its_flags() {
        let mut r = Router::new();
        r.io = Io::new(IoConfig { udp_listen: vec!["127.0.0.1:0".parse().unwrap()], tcp_listen: vec![], unix_path: None, ..IoConfig::default() }).unwrap();
        fn create(r: &mut Router, uri: &str, flags: Option<u64>, mask: Option<u64>, persistency: Option<u64>) -> (u32, Option<u32>, Option<u64>) {
            let p = ControlParameters { uri: Some(uri.into()), flags, mask, face_persistency: persistency, ..Default::default() };
            let reply = r.ask(LOCAL, command_name(MgmtScope::Localhost, "faces", "create", &p));
            let resp = ControlResponse::decode(&reply.content_bytes()).unwrap();
            let body = resp.body.unwrap_or_default();
            (resp.status_code, body.face_id.map(|f| f as u32), body.flags)
        }
        let (code, id, flags) = create(&mut r, "udp4://127.0.0.1:17990", Some(1), Some(1), None);
        assert_eq!((code, flags), (200, Some(1)));
        let (code, _, flags) = create(&mut r, "udp4://127.0.0.1:17990", None, None, None);
        assert_eq!((code, flags), (409, Some(1)), "the existing face's flags");
        let faces_before = r.io.faces().count();
        // Refused from its URI alone: no face is made (nor any packet sent).
        assert_eq!(create(&mut r, "udp4://192.0.2.1:6363", Some(1), Some(1), None).0, 406);
        assert_eq!(r.io.faces().count(), faces_before);
        assert_eq!(create(&mut r, "udp4://127.0.0.1:17991", Some(2), Some(2), None).0, 400, "a bit this router does not implement");
        assert_eq!(create(&mut r, "udp4://127.0.0.1:17991", Some(1), None, None).0, 400, "Flags without a Mask");
        assert_eq!(create(&mut r, "udp4://127.0.0.1:17991", None, None, Some(Persistency::OnDemand.code())).0, 406, "as NFD");
        let (code, _, flags) = create(&mut r, "udp4://127.0.0.1:17991", Some(0), Some(1), None);
        assert_eq!((code, flags), (200, Some(0)));
        assert!(r.fwd.faces.get(id.unwrap()).unwrap().local_fields);
    }

    /// As ndn-cxx's CsEraseCommand: a Count must be positive.
    #[test]
    fn cs_erase_refuses_a_count_of_zero() {
        let mut r = Router::new();
        let mut erase = |count| {
            let p = ControlParameters { name: Some("/a".parse().unwrap()), count, ..Default::default() };
            let reply = r.ask(LOCAL, command_name(MgmtScope::Localhost, "cs", "erase", &p));
            ControlResponse::decode(&reply.content_bytes()).unwrap().status_code
        };
        assert_eq!((erase(Some(0)), erase(Some(1)), erase(None)), (400, 200, 200));
    }

    /// A strategy this router does not have is refused with the ones it has.
    #[test]
    fn an_unknown_strategy_is_answered_with_the_known_ones() {
        let mut r = Router::new();
        let p = ControlParameters { name: Some("/p".parse().unwrap()), strategy: Some(Strategy { name: "/localhost/nfd/strategy/best-route/v=99".parse().unwrap() }), ..Default::default() };
        let reply = r.ask(LOCAL, command_name(MgmtScope::Localhost, "strategy-choice", "set", &p));
        let resp = ControlResponse::decode(&reply.content_bytes()).unwrap();
        assert_eq!(resp.status_code, 404);
        assert!(resp.status_text.contains("/localhost/nfd/strategy/best-route/v=5"), "{}", resp.status_text);
    }

    /// A TCP `faces/create` is answered once its connection is made; one whose
    /// face `faces/destroy` removed first is forgotten, as no event settles it.
    #[test]
    fn tcp_face_create_answers_when_connected_and_destroy_forgets_it() {
        let mut r = Router::new();
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let uri = format!("tcp4://{}", listener.local_addr().unwrap());
        let create = command_name(MgmtScope::Localhost, "faces", "create", &ControlParameters { uri: Some(uri.clone()), ..Default::default() });
        let face_of = |io: &Io| io.faces().find(|f| f.remote_uri == uri).map(|f| f.id).expect("the face");

        assert!(r.try_ask(LOCAL, create.clone()).is_none(), "no answer while connecting");
        let first = face_of(&r.io);
        let destroy = ControlParameters { face_id: Some(first.into()), ..Default::default() };
        assert_eq!(status(&r.ask(LOCAL, command_name(MgmtScope::Localhost, "faces", "destroy", &destroy))), Some(200));
        assert!(r.mgmt.connect_settled(first, Ok(()), &mut r.fwd, &mut r.io, None).is_none());

        assert!(r.try_ask(LOCAL, create.clone()).is_none());
        let second = face_of(&r.io);
        let mut events = Vec::new();
        for _ in 0..500 {
            r.io.poll(Some(std::time::Duration::from_millis(20)), &mut events).unwrap();
            if events.iter().any(|e| matches!(e, trajan_io::IoEvent::Connected(f) if *f == second)) {
                break;
            }
        }
        assert!(events.iter().any(|e| matches!(e, trajan_io::IoEvent::Connected(f) if *f == second)), "{events:?}");
        let answer = r.mgmt.connect_settled(second, Ok(()), &mut r.fwd, &mut r.io, None).expect("the waiting command's answer");
        let answer = reply_data(&answer);
        assert_eq!((answer.name(), status(&answer)), (&create, Some(200)));
        assert!(r.fwd.faces.get(second).is_some());
    }

    /// Adds `faces` (id, remote URI, local URI, local scope, persistency) for
    /// management to list, as device faces so that no socket is opened, and
    /// the internal face.
    fn with_faces(r: &mut Router, faces: &[(u32, &str, &str, bool, Persistency)]) {
        for &(id, remote_uri, local_uri, local_scope, persistency) in faces {
            let (remote_uri, local_uri) = (remote_uri.to_owned(), local_uri.to_owned());
            r.mgmt.device_faces.push(FaceInfo { id, kind: FaceKind::Device, remote_uri, local_uri, local_scope, persistency, mtu: None });
        }
        r.fwd.add_face(INTERNAL_FACE, FaceMeta { local: true, point_to_point: true, ..Default::default() });
    }

    /// The whole `faces/query` dataset for `filter`: its segments, fetched by
    /// version as a tool fetches them, and the entries they hold.
    fn query(r: &mut Router, filter: &FaceQueryFilter) -> (Vec<Data>, Vec<FaceStatus>) {
        let name = face_query_name(MgmtScope::Localhost, filter);
        let first = r.ask(LOCAL, name.clone());
        let versioned = first.name().prefix(name.len() + 1);
        assert_eq!(first.name(), &versioned.append_number(SEGMENT_COMPONENT, 0), "named as its request, then version and segment");
        assert_eq!(versioned.get(name.len()).typ, VERSION_COMPONENT);
        let mut segments = vec![first];
        while let Some(next) = r.try_ask(LOCAL, versioned.append_number(SEGMENT_COMPONENT, segments.len() as u64)) {
            segments.push(reply_data(&next));
        }
        let content: Vec<u8> = segments.iter().flat_map(|d| d.content_bytes().to_vec()).collect();
        (segments, trajan_wire::mgmt::decode_list::<FaceStatus>(&Bytes::from(content)).unwrap())
    }

    /// `faces/query` (what `nfdc face show` and `nfdc route add PREFIX
    /// udp4://HOST:PORT` ask) answers with faces/list's entries for the faces
    /// meeting every criterion of its filter: by FaceId, by remote or local
    /// URI, by the scheme of either URI, by scope and persistency; none is an
    /// empty dataset, one empty segment, as NFD answers.
    #[test]
    fn faces_query_answers_the_faces_its_filter_matches() {
        let mut r = Router::new();
        with_faces(&mut r, &[
            (400, "udp4://192.0.2.1:6363", "udp4://0.0.0.0:6363", false, Persistency::OnDemand),
            (401, "tcp4://127.0.0.1:6363", "tcp4://127.0.0.1:40000", true, Persistency::Persistent),
            (402, "fd://31", "unix:///run/nfd.sock", true, Persistency::OnDemand),
        ]);
        let ids = |r: &mut Router, filter: FaceQueryFilter| query(r, &filter).1.iter().map(|f| f.face_id).collect::<Vec<_>>();
        let (_, by_id) = query(&mut r, &FaceQueryFilter { face_id: Some(401), ..Default::default() });
        let list = r.ask(LOCAL, dataset_name(MgmtScope::Localhost, "faces", "list"));
        let listed = trajan_wire::mgmt::decode_list::<FaceStatus>(&list.content_bytes()).unwrap();
        assert_eq!(by_id, listed.into_iter().filter(|f| f.face_id == 401).collect::<Vec<_>>(), "faces/list's entry");
        let uri = |uri: &str| FaceQueryFilter { uri: Some(uri.into()), ..Default::default() };
        let scheme = |scheme: &str| FaceQueryFilter { uri_scheme: Some(scheme.into()), ..Default::default() };
        assert_eq!(ids(&mut r, uri("udp4://192.0.2.1:6363")), [400]);
        assert_eq!(ids(&mut r, uri("udp4://192.0.2.1:6364")), [0u64; 0]);
        assert_eq!(ids(&mut r, FaceQueryFilter { local_uri: Some("unix:///run/nfd.sock".into()), ..Default::default() }), [402]);
        assert_eq!(ids(&mut r, scheme("udp4")), [400]);
        assert_eq!(ids(&mut r, scheme("tcp4")), [401]);
        assert_eq!(ids(&mut r, scheme("unix")), [402], "the local URI's scheme");
        assert_eq!(ids(&mut r, scheme("internal")), [u64::from(INTERNAL_FACE)]);
        assert_eq!(ids(&mut r, FaceQueryFilter { face_scope: Some(1), ..Default::default() }), [u64::from(INTERNAL_FACE), 401, 402]);
        let on_demand_local = FaceQueryFilter { face_scope: Some(1), face_persistency: Some(Persistency::OnDemand.code()), link_type: Some(0), ..Default::default() };
        assert_eq!(ids(&mut r, on_demand_local), [402]);
        assert_eq!(ids(&mut r, FaceQueryFilter::default()).len(), 4, "an empty filter matches every face");
        // Nothing matches: an empty dataset, one empty segment that is the last.
        let (segments, faces) = query(&mut r, &FaceQueryFilter { face_id: Some(401), uri_scheme: Some("udp4".into()), ..Default::default() });
        assert_eq!((segments.len(), segments[0].content_bytes().len(), faces.len()), (1, 0, 0));
        let last = segments[0].final_block_id.clone().and_then(|f| Name::from_value(f).ok()).and_then(|n| n.segment());
        assert_eq!(last, Some(0));
    }

    /// A large `faces/query` answer is segmented and versioned as the other
    /// datasets are, under a name one component longer (the filter): later
    /// segments are served by version, `<version>` alone gets segment 0, and
    /// every segment fits a packet although its name carries a 3 KB filter.
    #[test]
    fn faces_query_serves_later_segments_by_version() {
        let mut r = Router::new();
        let long = format!("dev://{}", "x".repeat(3000));
        let locals: Vec<String> = (0..20).map(|i| format!("dev://port{i}")).collect();
        let faces: Vec<_> = locals.iter().enumerate().map(|(i, l)| (500 + i as u32, long.as_str(), l.as_str(), false, Persistency::Permanent)).collect();
        with_faces(&mut r, &faces);
        let filter = FaceQueryFilter { uri: Some(long.clone()), ..Default::default() };
        let (segments, found) = query(&mut r, &filter);
        assert!(segments.len() > 10, "{} segments", segments.len());
        assert_eq!(found.iter().map(|f| f.face_id).collect::<Vec<_>>(), (500..520).collect::<Vec<u64>>());
        let name = face_query_name(MgmtScope::Localhost, &filter);
        let versioned = segments[0].name().prefix(name.len() + 1);
        assert_eq!(r.ask(LOCAL, versioned.clone()).name(), segments[0].name());
        for (i, d) in segments.iter().enumerate() {
            let seg = versioned.append_number(SEGMENT_COMPONENT, i as u64);
            assert_eq!(d.name(), &seg);
            assert!(r.try_ask(LOCAL, seg).unwrap().len() <= MAX_PACKET_SIZE);
        }
        // A new request is a new version, whose segments are served too.
        let (again, _) = query(&mut r, &filter);
        assert_ne!(again[0].name().prefix(name.len() + 1), versioned);
        assert_eq!(r.ask(LOCAL, versioned.append_number(SEGMENT_COMPONENT, 1)).name(), segments[1].name(), "the older version is still held");
    }

    /// A `faces/query` whose filter does not decode, or that has none, is
    /// answered 400 under its own name, as NFD answers a malformed filter.
    #[test]
    fn a_malformed_face_query_filter_is_answered_400() {
        let mut r = Router::new();
        let bare = dataset_name(MgmtScope::Localhost, "faces", "query");
        let empty = r.ask(LOCAL, bare.append_generic(&[0x96, 0]));
        assert_eq!(empty.name().len(), bare.len() + 3, "an empty filter is a dataset: {}", empty.name());
        for bad in [
            bare.clone(),
            bare.append_generic(&[0x96, 3, 0x0f, 1, 0]),
            bare.append_generic(&[0x96, 4, 0x69, 9, 1, 2]),
            bare.append_generic(&ControlParameters { face_id: Some(1), ..Default::default() }.encode()),
        ] {
            let answer = r.ask(LOCAL, bad.clone());
            assert_eq!((answer.name(), status(&answer)), (&bad, Some(400)), "{bad}");
            let text = ControlResponse::decode(&answer.content_bytes()).unwrap().status_text;
            assert_eq!(text, "Malformed filter", "{bad}");
        }
    }
}
