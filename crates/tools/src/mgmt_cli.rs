//! `trajan route`, `trajan face`, `trajan status`: the everyday subset of `nfdc`,
//! speaking the NFD management protocol to any compatible forwarder.

use std::fmt::Write as _;
use std::net::{SocketAddr, ToSocketAddrs};

use anyhow::{bail, Context};
use trajan_wire::mgmt::{
    decode_list, ControlParameters, CsInfo, FaceStatus, FacePersistency, FibEntry, ForwarderStatus, Record, RibEntry, Route,
    ORIGIN_STATIC, ROUTE_FLAG_CAPTURE, ROUTE_FLAG_CHILD_INHERIT,
};
use trajan_wire::Name;

use crate::client::{name_arg, Client, ClientArgs};

/// Arguments of `trajan route`.
#[derive(clap::Args, Debug, Clone)]
pub struct RouteArgs {
    /// What to do with routes.
    #[command(subcommand)]
    pub command: RouteCommand,
    /// How to reach the forwarder (`--transport`, `--udp-ports`).
    #[command(flatten)]
    pub client: ClientArgs,
}

/// `trajan route` subcommands.
#[derive(clap::Subcommand, Debug, Clone)]
pub enum RouteCommand {
    /// Add a route: Interests under PREFIX go to NEXTHOP (rib/register)
    Add {
        /// Name prefix the route is for
        #[arg(value_parser = name_arg)]
        prefix: Name,
        /// Face ID, or the URI of an existing face
        nexthop: String,
        /// Route cost; strategies prefer lower costs
        #[arg(long, default_value_t = 0)]
        cost: u64,
        /// Route origin (255 static, 0 app, 128 nlsr)
        #[arg(long, default_value_t = ORIGIN_STATIC)]
        origin: u64,
        /// Do not apply the route to longer prefixes (by default they inherit it)
        #[arg(long)]
        no_inherit: bool,
        /// Keep routes of shorter prefixes from this prefix and the longer ones under it
        #[arg(long)]
        capture: bool,
        /// Remove the route after this many milliseconds [default: never]
        #[arg(long, value_name = "MS", value_parser = clap::value_parser!(u64).range(1..))]
        expires: Option<u64>,
    },
    /// Remove a route (rib/unregister)
    Remove {
        /// Name prefix the route is for
        #[arg(value_parser = name_arg)]
        prefix: Name,
        /// Face ID, or the URI of an existing face
        nexthop: String,
        /// Origin of the route to remove
        #[arg(long, default_value_t = ORIGIN_STATIC)]
        origin: u64,
    },
    /// List routes (rib/list), or the forwarding table with --fib (fib/list)
    List {
        /// Show the forwarding table (FIB) instead of the routes (RIB)
        #[arg(long)]
        fib: bool,
    },
}

/// Arguments of `trajan face`.
#[derive(clap::Args, Debug, Clone)]
pub struct FaceArgs {
    /// What to do with faces.
    #[command(subcommand)]
    pub command: FaceCommand,
    /// How to reach the forwarder (`--transport`, `--udp-ports`).
    #[command(flatten)]
    pub client: ClientArgs,
}

/// `trajan face` subcommands.
#[derive(clap::Subcommand, Debug, Clone)]
pub enum FaceCommand {
    /// Create a face to a remote URI such as udp4://192.0.2.1:6363 (faces/create)
    Create {
        /// Remote face URI
        uri: String,
        /// persistent faces close on errors; permanent ones reconnect
        #[arg(long, default_value = "persistent", value_parser = ["persistent", "permanent"])]
        persistency: String,
        /// MTU in bytes, for tools that send one (nfdc does). Trajan does not
        /// fragment what it sends, so the router takes only a value at or above
        /// its faces' own (9056) and refuses a smaller one
        #[arg(long)]
        mtu: Option<u64>,
    },
    /// Destroy a face given by ID or URI (faces/destroy)
    Destroy {
        /// Face ID or remote URI
        face: String,
    },
    /// List faces (faces/list)
    List,
}

/// Arguments of `trajan status`.
#[derive(clap::Args, Debug, Clone)]
pub struct StatusArgs {
    /// How to reach the forwarder (`--transport`, `--udp-ports`).
    #[command(flatten)]
    pub client: ClientArgs,
}

/// A face URI in canonical form, as nfdc makes it: a host name becomes its
/// address (IPv4 first for a bare `udp`/`tcp`), the scheme names the address's
/// family, and a trailing `/` goes. So `udp://localhost:6363/` finds the face
/// the forwarder lists as `udp4://127.0.0.1:6363`, and `face create` sends the
/// router the address it takes (it resolves no names). A URI that is not
/// `scheme://host:port` over UDP or TCP, or whose host does not resolve, stays
/// as given, for the router to say what is wrong with it.
pub fn canonical_uri(uri: &str) -> String {
    let uri = uri.trim_end_matches('/');
    let Some((scheme, hostport)) = uri.split_once("://") else {
        return uri.to_owned();
    };
    let (transport, family) = match scheme {
        "udp" | "tcp" => (scheme, None),
        "udp4" | "tcp4" => (&scheme[..3], Some(true)),
        "udp6" | "tcp6" => (&scheme[..3], Some(false)),
        _ => return uri.to_owned(),
    };
    let Ok(addrs) = hostport.to_socket_addrs() else {
        return uri.to_owned();
    };
    let addrs: Vec<SocketAddr> = addrs.filter(|a| family.is_none_or(|v4| a.is_ipv4() == v4)).collect();
    match addrs.iter().find(|a| a.is_ipv4()).or(addrs.first()) {
        Some(a) => format!("{transport}{}://{a}", if a.is_ipv4() { 4 } else { 6 }),
        None => uri.to_owned(),
    }
}

fn face_list(client: &mut Client) -> anyhow::Result<Vec<FaceStatus>> {
    let content = client.dataset("faces", "list")?;
    decode_list(&content).context("decoding faces/list")
}

/// The hint for a face URI that names no face (for a new route's next hop,
/// the hint is to create it instead).
const LIST_FACES: &str = "`trajan face list` shows the faces";

/// A face ID from a number or from the URI of a listed face; `missing` says
/// what to do when no face has the URI.
fn resolve_face(client: &mut Client, face: &str, missing: &str) -> anyhow::Result<u64> {
    match face_id_arg(face)? {
        Some(id) => Ok(id),
        None => face_with_uri(&face_list(client)?, face, missing),
    }
}

/// The face ID `face` gives as a number, `None` for a URI.
fn face_id_arg(face: &str) -> anyhow::Result<Option<u64>> {
    match face.parse() {
        // In a command, face 0 means the requester's own face: this tool's
        // connection, gone when it exits (a route through it would vanish).
        Ok(0) => bail!("face 0 would be this tool's own connection, which closes when it exits: give a face id or URI from `trajan face list`"),
        Ok(id) => Ok(Some(id)),
        Err(_) if face.contains("://") => Ok(None),
        Err(_) => bail!("{face:?} is neither a face id nor a face URI such as udp4://127.0.0.1:6363 ({LIST_FACES})"),
    }
}

/// The ID of the listed face whose remote URI is `uri`, in any spelling.
fn face_with_uri(faces: &[FaceStatus], uri: &str, missing: &str) -> anyhow::Result<u64> {
    let want = canonical_uri(uri);
    faces
        .iter()
        .find(|f| canonical_uri(&f.uri) == want)
        .map(|f| f.face_id)
        .with_context(|| format!("no face with URI {uri} ({missing})"))
}

/// Prints rows as columns aligned under the headers.
pub fn table(headers: &[&str], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = headers.iter().map(|h| h.len()).collect();
    for r in rows {
        for (w, c) in widths.iter_mut().zip(r) {
            *w = (*w).max(c.len());
        }
    }
    let mut out = String::new();
    let mut line = |cells: Vec<&str>| {
        let text: Vec<String> = cells.iter().zip(&widths).map(|(c, w)| format!("{c:<w$}")).collect();
        let _ = writeln!(out, "{}", text.join("  ").trim_end());
    };
    line(headers.to_vec());
    for r in rows {
        line(r.iter().map(String::as_str).collect());
    }
    out
}

fn route_flags(flags: u64) -> String {
    let mut names = Vec::new();
    if flags & ROUTE_FLAG_CHILD_INHERIT != 0 {
        names.push("child-inherit");
    }
    if flags & ROUTE_FLAG_CAPTURE != 0 {
        names.push("capture");
    }
    names.join(",")
}

/// Runs `trajan route`.
pub fn run_route(args: RouteArgs) -> anyhow::Result<()> {
    let mut client = Client::from_args(&args.client)?;
    match args.command {
        RouteCommand::Add { prefix: name, nexthop, cost, origin, no_inherit, capture, expires } => {
            let face_id = resolve_face(&mut client, &nexthop, &format!("create one with `trajan face create {nexthop}`"))?;
            let flags = if no_inherit { 0 } else { ROUTE_FLAG_CHILD_INHERIT } | if capture { ROUTE_FLAG_CAPTURE } else { 0 };
            let p = ControlParameters {
                name: Some(name.clone()),
                face_id: Some(face_id),
                origin: Some(origin),
                cost: Some(cost),
                flags: Some(flags),
                expiration_period: expires,
                ..Default::default()
            };
            let r = client.command_ok("rib", "register", &p)?;
            println!(
                "route-add-accepted prefix={} nexthop={} origin={} cost={} flags={} expires={}",
                r.name.as_ref().unwrap_or(&name),
                r.face_id.unwrap_or(face_id),
                r.origin.unwrap_or(origin),
                r.cost.unwrap_or(cost),
                route_flags(r.flags.unwrap_or(flags)),
                r.expiration_period.or(expires).map_or("never".into(), |ms| format!("{ms}ms")),
            );
        }
        RouteCommand::Remove { prefix: name, nexthop, origin } => {
            let face_id = resolve_face(&mut client, &nexthop, LIST_FACES)?;
            // The router answers rib/unregister with 200 whether or not the
            // route was there (as NFD does): ask first, so a mistyped prefix,
            // face or origin is an error rather than a "removed".
            let entries: Vec<RibEntry> = decode_list(&client.dataset("rib", "list")?).context("decoding rib/list")?;
            let routes: Vec<&Route> = entries.iter().filter(|e| e.name == name).flat_map(|e| &e.routes).collect();
            if !routes.iter().any(|r| r.face_id == face_id && r.origin == origin) {
                let have: Vec<String> = routes.iter().map(|r| format!("nexthop={} origin={}", r.face_id, r.origin)).collect();
                if have.is_empty() {
                    bail!("no route for {name} (`trajan route list` shows the routes)");
                }
                bail!("no route for {name} with nexthop={face_id} origin={origin}; it has: {}", have.join(", "));
            }
            let p = ControlParameters { name: Some(name.clone()), face_id: Some(face_id), origin: Some(origin), ..Default::default() };
            client.command_ok("rib", "unregister", &p)?;
            println!("route-removed prefix={name} nexthop={face_id} origin={origin}");
        }
        RouteCommand::List { fib: false } => {
            let entries: Vec<RibEntry> = decode_list(&client.dataset("rib", "list")?).context("decoding rib/list")?;
            let rows: Vec<Vec<String>> = entries
                .iter()
                .flat_map(|e| {
                    e.routes.iter().map(|r| {
                        vec![
                            e.name.to_string(),
                            r.face_id.to_string(),
                            r.origin.to_string(),
                            r.cost.to_string(),
                            route_flags(r.flags),
                            r.expiration_period.map_or("never".into(), |ms| format!("{ms} ms")),
                        ]
                    })
                })
                .collect();
            print!("{}", table(&["Prefix", "Nexthop", "Origin", "Cost", "Flags", "Expires"], &rows));
        }
        RouteCommand::List { fib: true } => {
            let entries: Vec<FibEntry> = decode_list(&client.dataset("fib", "list")?).context("decoding fib/list")?;
            let rows: Vec<Vec<String>> = entries
                .iter()
                .map(|e| {
                    let hops: Vec<String> = e.next_hops.iter().map(|h| format!("{} (cost {})", h.face_id, h.cost)).collect();
                    vec![e.name.to_string(), hops.join(", ")]
                })
                .collect();
            print!("{}", table(&["Prefix", "Nexthops"], &rows));
        }
    }
    Ok(())
}

fn persistency_name(code: u64) -> String {
    FacePersistency::from_code(code).map_or_else(|| code.to_string(), |p| p.to_string())
}

/// Runs `trajan face`.
pub fn run_face(args: FaceArgs) -> anyhow::Result<()> {
    let mut client = Client::from_args(&args.client)?;
    match args.command {
        FaceCommand::Create { uri, persistency, mtu } => {
            let persistency: FacePersistency = persistency.parse().context("bad persistency")?;
            let p = ControlParameters {
                uri: Some(canonical_uri(&uri)),
                face_persistency: Some(persistency.code()),
                mtu,
                ..Default::default()
            };
            let r = client.command("faces", "create", &p)?;
            let kind = match r.status_code {
                200 => "face-created",
                409 => "face-exists",
                code => bail!("faces/create {uri} failed: {code} {}", r.status_text),
            };
            let b = r.body.unwrap_or_default();
            println!(
                "{kind} id={} local={} remote={} persistency={}",
                b.face_id.map_or("?".into(), |id| id.to_string()),
                b.local_uri.as_deref().unwrap_or("?"),
                b.uri.as_deref().unwrap_or(&uri),
                b.face_persistency.map_or("?".into(), persistency_name),
            );
        }
        FaceCommand::Destroy { face } => {
            // faces/destroy of an unknown face is answered 200 (as NFD does);
            // like nfdc, look the face up first so a wrong id is an error.
            let faces = face_list(&mut client)?;
            let face_id = match face_id_arg(&face)? {
                Some(id) if faces.iter().any(|f| f.face_id == id) => id,
                Some(id) => bail!("no face {id} (`trajan face list` shows the faces)"),
                None => face_with_uri(&faces, &face, LIST_FACES)?,
            };
            client.command_ok("faces", "destroy", &ControlParameters { face_id: Some(face_id), ..Default::default() })?;
            println!("face-destroyed id={face_id}");
        }
        FaceCommand::List => {
            let rows: Vec<Vec<String>> = face_list(&mut client)?
                .iter()
                .map(|f| {
                    vec![
                        f.face_id.to_string(),
                        f.uri.clone(),
                        f.local_uri.clone(),
                        if f.face_scope == 1 { "local".into() } else { "non-local".into() },
                        persistency_name(f.face_persistency),
                        f.mtu.map_or("-".into(), |m| m.to_string()),
                        format!("{}i {}d {}n {}B", f.n_in_interests, f.n_in_data, f.n_in_nacks, f.n_in_bytes),
                        format!("{}i {}d {}n {}B", f.n_out_interests, f.n_out_data, f.n_out_nacks, f.n_out_bytes),
                    ]
                })
                .collect();
            print!("{}", table(&["FaceId", "Remote", "Local", "Scope", "Persistency", "MTU", "In", "Out"], &rows));
        }
    }
    Ok(())
}

/// The text `trajan status` prints for the forwarder's datasets; a missing optional
/// dataset is reported in place.
pub fn status_text(general: &ForwarderStatus, faces: anyhow::Result<usize>, cs: anyhow::Result<CsInfo>) -> String {
    let g = general;
    let mut s = String::new();
    let uptime_s = g.current_timestamp.saturating_sub(g.start_timestamp) / 1000;
    let _ = writeln!(s, "General forwarder status:");
    let mut kv = |k: &str, v: String| {
        let _ = writeln!(s, "  {k:>22}: {v}");
    };
    kv("version", g.nfd_version.clone());
    kv("uptime", format!("{uptime_s} s"));
    // No name tree entries: the router has no name tree (its tables are hash
    // tables), and the 0 it reports there read as a fault beside a full FIB.
    kv("FIB entries", g.n_fib_entries.to_string());
    kv("PIT entries", g.n_pit_entries.to_string());
    kv("measurements entries", g.n_measurements_entries.to_string());
    kv("CS entries", g.n_cs_entries.to_string());
    kv("Interests in/out", format!("{}/{}", g.n_in_interests, g.n_out_interests));
    kv("Data in/out", format!("{}/{}", g.n_in_data, g.n_out_data));
    kv("Nacks in/out", format!("{}/{}", g.n_in_nacks, g.n_out_nacks));
    kv("satisfied/unsatisfied", format!("{}/{}", g.n_satisfied_interests, g.n_unsatisfied_interests));
    kv("faces", faces.map_or_else(|e| format!("unavailable ({e:#})"), |n| n.to_string()));
    match cs {
        Ok(c) => {
            let on = |bit: u64| if c.flags & bit != 0 { "on" } else { "off" };
            kv("CS capacity", c.capacity.to_string());
            kv("CS admit/serve", format!("{}/{}", on(1), on(2)));
            kv("CS hits/misses", format!("{}/{}", c.n_hits, c.n_misses));
        }
        Err(e) => kv("content store", format!("unavailable ({e:#})")),
    }
    s
}

/// Runs `trajan status`: status/general (required), the face count and cs/info.
pub fn run_status(args: StatusArgs) -> anyhow::Result<()> {
    let mut client = Client::from_args(&args.client)?;
    let general = ForwarderStatus::decode_value(client.dataset("status", "general")?).context("decoding status/general")?;
    let faces = face_list(&mut client).map(|f| f.len());
    let cs = client.dataset("cs", "info").and_then(|c| {
        decode_list::<CsInfo>(&c).context("decoding cs/info")?.into_iter().next().context("cs/info is empty")
    });
    print!("{}", status_text(&general, faces, cs));
    // Trajan's per-worker placement and counters; NFD and ndnd answer this unknown
    // dataset with an error response (TLV, not this text), which is skipped.
    if let Ok(workers) = client.dataset("status", "workers") {
        if let Some(text) = std::str::from_utf8(&workers).ok().filter(|t| t.starts_with("worker ")) {
            print!("Workers:\n{text}");
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    enum Cli {
        Route(RouteArgs),
        Face(FaceArgs),
        Status(StatusArgs),
    }

    #[test]
    fn canonical_uris() {
        assert_eq!(canonical_uri("udp://127.0.0.1:6363/"), "udp4://127.0.0.1:6363");
        assert_eq!(canonical_uri("tcp://localhost:1"), "tcp4://127.0.0.1:1");
        assert_eq!(canonical_uri("udp://[::1]:6363"), "udp6://[::1]:6363");
        assert_eq!(canonical_uri("udp4://10.0.0.1:1"), "udp4://10.0.0.1:1");
        assert_eq!(canonical_uri("unix:///run/x.sock"), "unix:///run/x.sock");
        assert_eq!(canonical_uri("internal://"), "internal:");
        assert_eq!(canonical_uri("tcp4://localhost:6363/"), "tcp4://127.0.0.1:6363");
        assert_eq!(canonical_uri("udp6://127.0.0.1:1"), "udp6://127.0.0.1:1", "no address of the family: as given");
        assert_eq!(canonical_uri("udp4://127.0.0.1:99999"), "udp4://127.0.0.1:99999");
        assert_eq!(canonical_uri("udp4://127.0.0.1"), "udp4://127.0.0.1");
    }

    #[test]
    fn face_arguments() {
        assert_eq!(face_id_arg("7").unwrap(), Some(7));
        assert_eq!(face_id_arg("udp4://127.0.0.1:6363").unwrap(), None);
        assert!(face_id_arg("0").is_err());
        for bad in ["", "-3", "99999999999999999999", "bogus"] {
            let e = face_id_arg(bad).unwrap_err().to_string();
            assert!(e.contains("is neither a face id nor a face URI"), "{bad}: {e}");
        }
        let faces = [FaceStatus { face_id: 9, uri: "udp4://127.0.0.1:1".into(), ..Default::default() }];
        assert_eq!(face_with_uri(&faces, "udp://127.0.0.1:1/", LIST_FACES).unwrap(), 9);
        let e = face_with_uri(&faces, "udp4://127.0.0.1:2", LIST_FACES).unwrap_err().to_string();
        assert_eq!(e, "no face with URI udp4://127.0.0.1:2 (`trajan face list` shows the faces)");
    }

    #[test]
    fn aligns_tables() {
        let t = table(&["A", "Long header"], &[vec!["wide cell".into(), "x".into()], vec!["b".into(), "y".into()]]);
        assert_eq!(t, "A          Long header\nwide cell  x\nb          y\n");
    }

    #[test]
    fn formats_status() {
        let g = ForwarderStatus { nfd_version: "t1".into(), start_timestamp: 1000, current_timestamp: 61_000, ..Default::default() };
        let cs = CsInfo { capacity: 10, flags: 1, n_hits: 2, n_misses: 3, ..Default::default() };
        let s = status_text(&g, Ok(4), Ok(cs));
        assert!(s.contains("uptime: 60 s") && s.contains("faces: 4") && s.contains("CS admit/serve: on/off"), "{s}");
        assert!(!s.contains("name tree"), "no name tree to count: {s}");
        let s = status_text(&g, Err(anyhow::anyhow!("boom")), Err(anyhow::anyhow!("gone")));
        assert!(s.contains("faces: unavailable (boom)") && s.contains("content store: unavailable (gone)"), "{s}");
        assert_eq!(route_flags(3), "child-inherit,capture");
        assert_eq!(persistency_name(2), "permanent");
        assert_eq!(persistency_name(9), "9");
    }

    #[test]
    fn parses_arguments() {
        match Cli::try_parse_from(["t", "route", "add", "/p", "udp://h:1", "--cost", "5", "--transport", "unix:///s"]).unwrap() {
            Cli::Route(RouteArgs { command: RouteCommand::Add { prefix, nexthop, cost, origin, no_inherit, .. }, client }) => {
                assert_eq!((prefix.to_string().as_str(), nexthop.as_str(), cost, origin, no_inherit), ("/p", "udp://h:1", 5, 255, false));
                assert_eq!(client.transport.as_deref(), Some("unix:///s"));
            }
            _ => panic!("wrong subcommand"),
        }
        assert!(matches!(Cli::try_parse_from(["t", "route", "list", "--fib"]).unwrap(), Cli::Route(RouteArgs { command: RouteCommand::List { fib: true }, .. })));
        assert!(matches!(
            Cli::try_parse_from(["t", "face", "create", "udp://h:1", "--persistency", "permanent"]).unwrap(),
            Cli::Face(FaceArgs { command: FaceCommand::Create { .. }, .. })
        ));
        assert!(Cli::try_parse_from(["t", "face", "create", "udp://h:1", "--persistency", "on-demand"]).is_err());
        assert!(matches!(Cli::try_parse_from(["t", "status"]).unwrap(), Cli::Status(_)));
        assert!(Cli::try_parse_from(["t", "route", "remove", "/p"]).is_err());
        assert!(Cli::try_parse_from(["t", "route", "add", "/p", "7", "--expires", "0"]).is_err(), "a route gone before it is listed");
    }
}
