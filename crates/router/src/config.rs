//! The daemon's configuration: a TOML file whose every key has a documented default.
//! The defaults live in `config/default.toml`, which is compiled into the binary, so
//! the file users read and the values the router uses cannot drift apart.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use thiserror::Error;
use trajan_engine::StrategyKind;

/// The embedded default configuration file.
pub const DEFAULT_CONFIG: &str = include_str!("../../../config/default.toml");

/// A configuration that could not be loaded, with the file, line and key at fault.
/// A read error's message ends with the operating system's, which is therefore not
/// also its `source` (a report of the chain would print it twice).
#[derive(Debug, Error)]
pub enum ConfigError {
    /// The file could not be read at all.
    #[error("cannot read {path}: {error}")]
    Read {
        /// The configuration file.
        path: PathBuf,
        /// The operating system's reason.
        error: std::io::Error,
    },
    /// The text is not TOML, or has an unknown key or a value of the wrong type.
    #[error("{path}: {message}")]
    Parse {
        /// The file, or `<embedded default>` for the built-in defaults.
        path: String,
        /// The parser's message, led by "line L, column C" when it knows where.
        message: String,
    },
    /// A value parses but is not acceptable (an unknown strategy, a bad route).
    #[error("{path}: {key}: {message}")]
    Invalid {
        /// The file, or `<embedded default>` for the built-in defaults.
        path: String,
        /// The offending key in dotted form, such as `routes[0].face`.
        key: String,
        /// What is wrong with its value.
        message: String,
    },
}

/// The whole configuration.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// `[faces]`: the listeners the daemon opens and the limits on faces.
    pub faces: FacesConfig,
    /// `[tables]`: sizes and switches of the CS, PIT, dead nonce list and FIB.
    pub tables: TablesConfig,
    /// `[log]`: how much the daemon logs, and in which format.
    pub log: LogConfig,
    /// `[workers]`: how many forwarding threads, on which CPUs.
    pub workers: WorkersConfig,
    /// `[dpdk]`: kernel-bypass ports, if any.
    pub dpdk: DpdkConfig,
    /// `[[routes]]`: static routes installed at start (origin 255); none by default.
    #[serde(default)]
    pub routes: Vec<RouteConfig>,
    /// `[[strategies]]`: per-namespace strategy choices; none by default (best-route for `/`).
    #[serde(default)]
    pub strategies: Vec<StrategyConfig>,
}

/// Listeners and face limits.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FacesConfig {
    /// UDP listeners; a datagram from a new remote creates an on-demand face (default `0.0.0.0:6363`).
    pub udp_listen: Vec<SocketAddr>,
    /// TCP listeners for stream faces (default `0.0.0.0:6363`).
    pub tcp_listen: Vec<SocketAddr>,
    /// Empty string disables the Unix socket.
    pub unix_path: PathBuf,
    /// Seconds an on-demand UDP face may stay idle before it is closed (default 600).
    pub udp_idle_timeout_s: u64,
    /// Seconds a stream face's peer may take none of its queued output before the
    /// face is closed (default 30): a peer that stops reading would otherwise hold
    /// its queue for ever.
    pub stall_timeout_s: u64,
    /// Most bytes queued on one stream face, each packet counted with 96 bytes
    /// for its slot and allocation, so that the bound holds for memory; beyond
    /// it packets are dropped and counted (default 4 MiB).
    pub stream_queue_bytes: usize,
    /// Most bytes queued for sending on all faces together, each packet
    /// counted as for `stream_queue_bytes`.
    pub queue_bytes: usize,
    /// Most faces before new network peers are refused (local applications and
    /// management are always admitted).
    pub max_faces: usize,
    /// Seconds an on-demand face a network peer opened must have received
    /// nothing before it gives way to a new peer at `max_faces` (default 60):
    /// without it, idle TCP connections, which never time out, would lock new
    /// peers out for good, and an idle face has nothing of its own pending once
    /// Interests have expired.
    pub evict_idle_s: u64,
    /// Bytes all faces may hold in packets being reassembled from fragments.
    pub reassembly_bytes: usize,
}

/// Table sizes.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TablesConfig {
    /// Content store capacity in packets; 0 disables caching (default 65536).
    pub cs_capacity: usize,
    /// Whether the CS admits new Data and serves Interests at start.
    pub cs_admit: bool,
    /// Whether the CS answers Interests at start; false sends every one upstream (default true).
    pub cs_serve: bool,
    /// Most pending Interests, and bound on extra downstream records (default 1048576).
    pub pit_capacity: usize,
    /// Longest an Interest stays pending in milliseconds, whatever it asks (default 3600000).
    pub max_interest_lifetime_ms: u64,
    /// Milliseconds a Nonce is remembered for loop detection after its Interest is gone (default 6000).
    pub dead_nonce_lifetime_ms: u64,
    /// FIB structure: `hash`, `pbf` or `pbf-exp` (Caesar's variants, for side-by-side runs).
    pub fib_variant: String,
    /// Names of the producer regions this router is in (NFD's `tables.network_region`):
    /// a ForwardingHint whose delegation is a prefix of one has brought its
    /// Interest to its producer's region, where it must go by name (none by default).
    pub network_regions: Vec<String>,
}

/// Forwarding threads (Augustus' sharded workers).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkersConfig {
    /// Forwarding threads; 0 means one per physical core of this machine.
    pub count: usize,
    /// CPUs to pin the workers to, one each, overriding the automatic placement;
    /// when set, `count` must be 0 or match its length.
    pub cores: Vec<usize>,
    /// The UDP-port-by-hash face (Augustus §3.1.2): at most one base address; the
    /// daemon listens on one port per worker from it, and each worker reads its own.
    pub udp_ports: Vec<SocketAddr>,
}

/// Kernel-bypass faces (DPDK; only in a `trajan` built with `--features dpdk`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DpdkConfig {
    /// EAL's own arguments (`--vdev=...`, `-a PCI`, `--no-huge`, ...).
    pub eal_args: Vec<String>,
    /// Packet buffers in the one pool all ports share; 0 sizes it from the CS
    /// capacity (every cached packet keeps its mbuf) plus the queues' descriptors
    /// and the workers' rings.
    pub mbufs: u32,
    /// Descriptors per RX and per TX queue.
    pub queue_size: u16,
    /// The ports, each one face. Empty: DPDK is not started.
    pub ports: Vec<DpdkPortConfig>,
}

/// One DPDK port: a point-to-point face to the device or host at its other end.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DpdkPortConfig {
    /// The ethdev name: a vdev given in `eal_args` (`net_memif0`) or a PCI address.
    pub name: String,
    /// `ether` (NDN over Ethernet, 0x8624), `udp4` or `icn4` (Augustus, IPv4 protocol 253).
    #[serde(default = "default_encap")]
    pub encap: String,
    /// Destination MAC of the frames sent; NDN's multicast group by default.
    #[serde(default = "default_remote_mac")]
    pub remote_mac: String,
    /// IPv4 addresses and UDP ports (udp4, icn4).
    #[serde(default = "default_local_ip")]
    pub local_ip: std::net::Ipv4Addr,
    /// IPv4 address of the other end (udp4, icn4; default 192.0.2.2).
    #[serde(default = "default_remote_ip")]
    pub remote_ip: std::net::Ipv4Addr,
    /// UDP source port of the packets sent (udp4; default 6363).
    #[serde(default = "ndn_port")]
    pub local_port: u16,
    /// UDP destination port of the packets sent (udp4; default 6363).
    #[serde(default = "ndn_port")]
    pub remote_port: u16,
}

fn default_encap() -> String {
    "ether".to_owned()
}
fn default_remote_mac() -> String {
    "01:00:5e:00:17:aa".to_owned()
}
fn default_local_ip() -> std::net::Ipv4Addr {
    std::net::Ipv4Addr::new(192, 0, 2, 1)
}
fn default_remote_ip() -> std::net::Ipv4Addr {
    std::net::Ipv4Addr::new(192, 0, 2, 2)
}
fn ndn_port() -> u16 {
    trajan_io::NDN_PORT
}

/// Parses `aa:bb:cc:dd:ee:ff`.
pub fn parse_mac(s: &str) -> Result<[u8; 6], String> {
    let parts: Vec<&str> = s.split(':').collect();
    let mut mac = [0u8; 6];
    if parts.len() != 6 {
        return Err(format!("`{s}` is not a MAC address (aa:bb:cc:dd:ee:ff)"));
    }
    for (m, p) in mac.iter_mut().zip(parts) {
        *m = u8::from_str_radix(p, 16).map_err(|_| format!("`{s}` is not a MAC address (aa:bb:cc:dd:ee:ff)"))?;
    }
    Ok(mac)
}

/// Logging.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LogConfig {
    /// Least severe level logged: error, warn, info, debug or trace; RUST_LOG overrides it (default info).
    pub level: String,
    /// How log lines are written (default text).
    pub format: LogFormat,
}

/// Log output format.
#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    /// Human-readable lines, for people.
    Text,
    /// One JSON object per line, for log collectors.
    Json,
}

/// A static route.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RouteConfig {
    /// The name prefix routed, such as `/example`.
    pub prefix: String,
    /// A face URI such as `udp4://192.0.2.1:6363` or `tcp4://...`; the face is created at start.
    pub face: String,
    /// Route cost; best-route sends to the cheapest usable next hop (default 0).
    #[serde(default)]
    pub cost: u64,
    /// More than 1: the face is a Trajan neighbour's UDP-port-by-hash face with this
    /// many ports from the URI's port (its `workers.udp_ports` base and its worker
    /// count); each Interest goes to the port of the neighbour's worker owning it.
    #[serde(default = "one")]
    pub udp_ports: usize,
}

fn one() -> usize {
    1
}

/// A strategy choice.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StrategyConfig {
    /// The namespace the choice applies to, such as `/ndn/broadcast`.
    pub prefix: String,
    /// The strategy by name: `best-route`, `multicast` or `dynamic`.
    pub strategy: String,
}

impl Config {
    /// The embedded defaults.
    pub fn default_config() -> Config {
        Config::parse(DEFAULT_CONFIG, "<embedded default>").expect("the embedded default configuration is valid")
    }

    /// Loads a file, filling absent keys from the embedded defaults.
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|error| ConfigError::Read { path: path.to_owned(), error })?;
        Config::parse(&text, &path.display().to_string())
    }

    /// Parses configuration text (named `origin` in errors) over the defaults.
    pub fn parse(text: &str, origin: &str) -> Result<Config, ConfigError> {
        let parse_err = |e: toml::de::Error| ConfigError::Parse { path: origin.to_owned(), message: describe(text, &e) };
        let mut base: toml::Table = toml::from_str(DEFAULT_CONFIG).expect("embedded default is valid TOML");
        let user: toml::Table = toml::from_str(text).map_err(parse_err)?;
        merge(&mut base, user);
        let merged = toml::to_string(&base).expect("a TOML table serializes");
        // Re-parse the user's text alone first so unknown keys are reported with the
        // user's own line numbers.
        toml::from_str::<PartialCheck>(text).map_err(parse_err)?;
        let cfg: Config = toml::from_str(&merged).map_err(|e| ConfigError::Parse { path: origin.to_owned(), message: e.message().to_owned() })?;
        cfg.validate(origin)?;
        Ok(cfg)
    }

    /// Checks everything about the configuration that can be checked without
    /// the running router, so that a file with an error is refused whole, with
    /// one line naming the key, at start and on SIGHUP alike ([`Config::parse`]
    /// and [`Config::load`] call it; call it again after changing a loaded
    /// configuration, as command-line overrides do). Route face URIs go through
    /// the I/O layer's own parser ([`trajan_io::check_remote`]), numbers through the
    /// ranges documented in `config/default.toml`. What only applying can tell
    /// still fails then, route by route: a UDP face without a listener of its
    /// address family, a TCP neighbour that cannot be dialed (a permanent face,
    /// redialed), a DPDK port that does not start, a CPU that is not online.
    pub fn validate(&self, origin: &str) -> Result<(), ConfigError> {
        let invalid = |key: &str, message: String| ConfigError::Invalid { path: origin.to_owned(), key: key.to_owned(), message };
        let same_name = |a: &str, b: &trajan_wire::Name| a.parse::<trajan_wire::Name>().is_ok_and(|a| a == *b);
        for (i, r) in self.routes.iter().enumerate() {
            let prefix = r.prefix.parse::<trajan_wire::Name>().map_err(|e| invalid(&format!("routes[{i}].prefix"), e.to_string()))?;
            // The RIB keeps one static route per prefix and face: a second would
            // only change the first's cost, and a reload that dropped either
            // would take the route away.
            if let Some(j) = self.routes[..i].iter().position(|o| o.face == r.face && same_name(&o.prefix, &prefix)) {
                return Err(invalid(&format!("routes[{i}].prefix"), format!("{prefix} via `{}` is routes[{j}] already: one route per prefix and face (give it one cost)", r.face)));
            }
            if r.udp_ports == 0 || (r.udp_ports > 1 && !r.face.starts_with("udp")) {
                return Err(invalid(&format!("routes[{i}].udp_ports"), "must be 1, or more for a udp4:// or udp6:// face".to_owned()));
            }
            if let Some(dev) = r.face.strip_prefix("dev://") {
                if !self.dpdk.ports.iter().any(|p| p.name == dev) {
                    return Err(invalid(&format!("routes[{i}].face"), format!("`{}` names no port of dpdk.ports", r.face)));
                }
            } else if !(r.face.starts_with("udp4://") || r.face.starts_with("tcp4://") || r.face.starts_with("udp6://") || r.face.starts_with("tcp6://")) {
                return Err(invalid(&format!("routes[{i}].face"), format!("`{}` is not a udp4://, udp6://, tcp4://, tcp6:// or dev:// (DPDK port) face URI", r.face)));
            } else if let Err(trajan_io::IoError::BadUri { reason, .. }) = trajan_io::check_remote(&r.face, r.udp_ports) {
                // The port-by-hash range is the one reason that is about udp_ports.
                // A route that left udp_ports at its default of 1 is not told of it.
                let (key, ports) = match r.udp_ports {
                    1 => ("face", String::new()),
                    n if reason.contains("port-by-hash") => ("udp_ports", format!(" (udp_ports = {n})")),
                    n => ("face", format!(" (udp_ports = {n})")),
                };
                return Err(invalid(&format!("routes[{i}].{key}"), format!("`{}`{ports}: {reason}", r.face)));
            }
            // One face has one number of ports: the route applied first would
            // decide it, and the other's would be ignored.
            if let Some(j) = self.routes[..i].iter().position(|o| o.face == r.face && o.udp_ports != r.udp_ports) {
                let o = &self.routes[j];
                return Err(invalid(&format!("routes[{i}].udp_ports"), format!("`{}` has udp_ports = {} here and {} in routes[{j}] (prefix {}): a face has one number of ports", r.face, r.udp_ports, o.udp_ports, o.prefix)));
            }
        }
        for (i, s) in self.strategies.iter().enumerate() {
            let prefix = s.prefix.parse::<trajan_wire::Name>().map_err(|e| invalid(&format!("strategies[{i}].prefix"), e.to_string()))?;
            if let Some(j) = self.strategies[..i].iter().position(|o| same_name(&o.prefix, &prefix)) {
                return Err(invalid(&format!("strategies[{i}].prefix"), format!("{prefix} has a strategy in strategies[{j}] already: one per namespace")));
            }
            s.strategy.parse::<StrategyKind>().map_err(|e| invalid(&format!("strategies[{i}].strategy"), e))?;
        }
        for (i, p) in self.dpdk.ports.iter().enumerate() {
            p.encap.parse::<trajan_io::encap::Encap>().map_err(|e| invalid(&format!("dpdk.ports[{i}].encap"), e))?;
            parse_mac(&p.remote_mac).map_err(|e| invalid(&format!("dpdk.ports[{i}].remote_mac"), e))?;
        }
        self.validate_workers(invalid)?;
        // The second listener on an address would fail to bind with "address
        // in use", which reads as another program holding the port.
        for (key, addrs) in [("faces.udp_listen", &self.faces.udp_listen), ("faces.tcp_listen", &self.faces.tcp_listen)] {
            if let Some((i, a)) = addrs.iter().enumerate().find(|(i, a)| a.port() != 0 && addrs[..*i].contains(a)) {
                let first = addrs.iter().position(|b| b == a).unwrap_or(0);
                return Err(invalid(key, format!("{a} is listed twice (entries {first} and {i}); one listener per address")));
            }
        }
        let ranges = [
            // A queue or budget smaller than one packet drops every largest packet.
            ("faces.udp_idle_timeout_s", self.faces.udp_idle_timeout_s, 1, u64::MAX),
            ("faces.stall_timeout_s", self.faces.stall_timeout_s, 1, u64::MAX),
            ("faces.evict_idle_s", self.faces.evict_idle_s, 1, 86_400),
            ("faces.stream_queue_bytes", self.faces.stream_queue_bytes as u64, MIN_QUEUE_BYTES, u64::MAX),
            ("faces.queue_bytes", self.faces.queue_bytes as u64, MIN_QUEUE_BYTES, u64::MAX),
            ("faces.reassembly_bytes", self.faces.reassembly_bytes as u64, MIN_REASSEMBLY_BYTES as u64, u64::MAX),
            // The tables take no more than their maximum and would quietly shrink a larger one.
            ("tables.cs_capacity", self.tables.cs_capacity as u64, 0, trajan_tables::cs::MAX_CAPACITY as u64),
            ("tables.pit_capacity", self.tables.pit_capacity as u64, 1, trajan_tables::pit::MAX_CAPACITY as u64),
            ("tables.max_interest_lifetime_ms", self.tables.max_interest_lifetime_ms, 1, u64::MAX),
            ("dpdk.queue_size", u64::from(self.dpdk.queue_size), 1, u64::from(u16::MAX)),
        ];
        for (key, value, min, max) in ranges {
            check_range(value, min, max).map_err(|e| invalid(key, e))?;
        }
        self.tables
            .fib_variant
            .parse::<trajan_tables::FibVariant>()
            .map_err(|e| invalid("tables.fib_variant", e))?;
        for (i, r) in self.tables.network_regions.iter().enumerate() {
            let key = format!("tables.network_regions[{i}]");
            match r.parse::<trajan_wire::Name>() {
                Err(e) => return Err(invalid(&key, format!("`{r}` is not an NDN name ({e}); write a region as a name URI such as /example/region"))),
                // Only a hint naming the root itself would be inside it.
                Ok(n) if n.is_empty() => return Err(invalid(&key, format!("`{r}` is the root, which names no region; write the region's own name, such as /example/region"))),
                Ok(_) => {}
            }
        }
        if !matches!(self.log.level.as_str(), "error" | "warn" | "info" | "debug" | "trace") {
            return Err(invalid("log.level", format!("`{}` is not one of error, warn, info, debug, trace", self.log.level)));
        }
        Ok(())
    }

    /// `[workers]`: a count and a CPU list a machine can run (at most
    /// [`max_workers`], no CPU twice: two workers pinned to one CPU only take
    /// turns), and a port-by-hash base whose per-worker ports end by 65535.
    /// `invalid` makes [`Config::validate`]'s error for a key.
    fn validate_workers(&self, invalid: impl Fn(&str, String) -> ConfigError) -> Result<(), ConfigError> {
        let w = &self.workers;
        let most = max_workers();
        check_range(w.count as u64, 0, most as u64).map_err(|e| invalid("workers.count", format!("{e} (0: one per physical core)")))?;
        if w.cores.len() > most {
            return Err(invalid("workers.cores", format!("{} CPUs listed; at most {most} workers", w.cores.len())));
        }
        if let Some((i, cpu)) = w.cores.iter().enumerate().find(|(i, c)| w.cores[..*i].contains(c)) {
            return Err(invalid("workers.cores", format!("CPU {cpu} is listed twice (entry {i}); each worker needs a CPU of its own")));
        }
        if !w.cores.is_empty() && w.count != 0 && w.count != w.cores.len() {
            return Err(invalid("workers.cores", format!("{} cores listed for workers.count = {}", w.cores.len(), w.count)));
        }
        if w.udp_ports.len() > 1 {
            return Err(invalid("workers.udp_ports", format!("{} base addresses given; one face of per-worker ports is supported", w.udp_ports.len())));
        }
        // With an automatic count the number of ports is known only on the machine.
        let ports = if w.cores.is_empty() { w.count } else { w.cores.len() };
        if let Some(base) = w.udp_ports.first().filter(|b| b.port() != 0 && ports > 0) {
            if usize::from(base.port()) + ports - 1 > usize::from(u16::MAX) {
                return Err(invalid("workers.udp_ports", format!("{ports} ports from {base} end past port 65535")));
            }
        }
        Ok(())
    }
}

/// Fewest bytes `faces.reassembly_bytes` may be: what the largest packet costs
/// while it is reassembled from the most fragments, so that a smaller budget
/// does not drop every such packet.
pub const MIN_REASSEMBLY_BYTES: usize = trajan_io::reassembly::MAX_HELD_PER_FACE / trajan_io::reassembly::MAX_PARTIAL_PACKETS;

/// Fewest bytes `faces.stream_queue_bytes` and `faces.queue_bytes` may be:
/// what the largest packet is charged while it waits (its length and
/// [`trajan_io::QUEUED_PACKET_OVERHEAD`]), so that a smaller bound does not
/// drop every such packet.
const MIN_QUEUE_BYTES: u64 = (trajan_io::MAX_FRAME_SIZE + trajan_io::QUEUED_PACKET_OVERHEAD) as u64;

/// Fewest workers [`max_workers`] allows whatever the machine: a machine with
/// fewer CPUs may still run this many, sharing CPUs (the daemon warns), as
/// tests and trials on a laptop do; each worker holds a thread, two file
/// descriptors and rings of its own, so far more fails at start on the
/// descriptor limit (`Too many open files`) rather than forwarding.
pub const MAX_WORKERS: usize = 256;

/// The most workers (`workers.count`, `workers.cores`) a configuration may ask
/// for here: [`MAX_WORKERS`], or one per CPU this process may run on where
/// that is more.
pub fn max_workers() -> usize {
    MAX_WORKERS.max(std::thread::available_parallelism().map_or(0, |n| n.get()))
}

/// `value` if within `min..=max`, or the line saying it is not (the key is the caller's).
fn check_range(value: u64, min: u64, max: u64) -> Result<(), String> {
    if (min..=max).contains(&value) {
        return Ok(());
    }
    Err(match max {
        u64::MAX => format!("{value} is out of range: at least {min}"),
        _ => format!("{value} is out of range: {min} to {max}"),
    })
}

/// The same shape as [`Config`] with every section optional, to check a user's file
/// for unknown keys and wrong types against its own line numbers.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)] // fields exist only to be type-checked by serde
struct PartialCheck {
    faces: Option<PartialFaces>,
    tables: Option<PartialTables>,
    log: Option<PartialLog>,
    workers: Option<PartialWorkers>,
    dpdk: Option<PartialDpdk>,
    routes: Option<Vec<RouteConfig>>,
    strategies: Option<Vec<StrategyConfig>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct PartialFaces {
    udp_listen: Option<Vec<SocketAddr>>,
    tcp_listen: Option<Vec<SocketAddr>>,
    unix_path: Option<PathBuf>,
    udp_idle_timeout_s: Option<u64>,
    stall_timeout_s: Option<u64>,
    stream_queue_bytes: Option<usize>,
    queue_bytes: Option<usize>,
    max_faces: Option<usize>,
    evict_idle_s: Option<u64>,
    reassembly_bytes: Option<usize>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct PartialTables {
    cs_capacity: Option<usize>,
    cs_admit: Option<bool>,
    cs_serve: Option<bool>,
    pit_capacity: Option<usize>,
    max_interest_lifetime_ms: Option<u64>,
    dead_nonce_lifetime_ms: Option<u64>,
    fib_variant: Option<String>,
    network_regions: Option<Vec<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct PartialWorkers {
    count: Option<usize>,
    cores: Option<Vec<usize>>,
    udp_ports: Option<Vec<SocketAddr>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct PartialDpdk {
    eal_args: Option<Vec<String>>,
    mbufs: Option<u32>,
    queue_size: Option<u16>,
    ports: Option<Vec<DpdkPortConfig>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct PartialLog {
    level: Option<String>,
    format: Option<LogFormat>,
}

/// Overlays `user` on `base`, table by table.
fn merge(base: &mut toml::Table, user: toml::Table) {
    for (k, v) in user {
        match (base.get_mut(&k), v) {
            (Some(toml::Value::Table(b)), toml::Value::Table(u)) => merge(b, u),
            (_, v) => {
                base.insert(k, v);
            }
        }
    }
}

/// A parse error as "line L, column C: message".
fn describe(text: &str, e: &toml::de::Error) -> String {
    match e.span() {
        Some(span) => {
            let before = &text[..span.start.min(text.len())];
            let line = before.matches('\n').count() + 1;
            let col = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
            format!("line {line}, column {col}: {}", e.message())
        }
        None => e.message().to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_default_parses() {
        let c = Config::default_config();
        assert_eq!(c.faces.unix_path, PathBuf::from("/run/nfd/nfd.sock"));
        assert_eq!(c.tables.cs_capacity, 65536);
        assert_eq!(c.faces.evict_idle_s, 60);
    }

    #[test]
    fn partial_file_keeps_defaults() {
        let c = Config::parse("[tables]\ncs_capacity = 10\n", "t").unwrap();
        assert_eq!(c.tables.cs_capacity, 10);
        assert_eq!(c.tables.pit_capacity, 1048576);
        assert_eq!(c.faces.udp_listen.len(), 1);
    }

    #[test]
    fn unknown_key_names_line_and_key() {
        let e = Config::parse("[tables]\ncs_capacity = 10\ncs_capacty = 3\n", "t.toml").unwrap_err().to_string();
        assert!(e.contains("line 3"), "{e}");
        assert!(e.contains("cs_capacty"), "{e}");
    }

    #[test]
    fn wrong_type_names_line() {
        let e = Config::parse("[faces]\nudp_listen = [\"not an address\"]\n", "t.toml").unwrap_err().to_string();
        assert!(e.contains("line 2"), "{e}");
    }

    #[test]
    fn workers_default_to_auto_and_cores_must_match_count() {
        let c = Config::default_config();
        assert_eq!((c.workers.count, c.workers.cores.len()), (0, 0));
        let c = Config::parse("[workers]\ncores = [1, 0]\n", "t").unwrap();
        assert_eq!(c.workers.cores, vec![1, 0]);
        let e = Config::parse("[workers]\ncount = 3\ncores = [0]\n", "t.toml").unwrap_err().to_string();
        assert!(e.contains("workers.cores"), "{e}");
    }

    #[test]
    fn fib_variant_is_checked() {
        assert_eq!(Config::default_config().tables.fib_variant, "pbf-exp");
        assert!(Config::parse("[tables]\nfib_variant = \"hash\"\n", "t").is_ok());
        let e = Config::parse("[tables]\nfib_variant = \"trie\"\n", "t.toml").unwrap_err().to_string();
        assert!(e.contains("tables.fib_variant"), "{e}");
    }

    /// Region names are NDN names, kept in order; a malformed one, or the
    /// root, is refused naming the entry, the value and what a region looks like.
    #[test]
    fn network_regions_are_names() {
        assert!(Config::default_config().tables.network_regions.is_empty());
        let c = Config::parse("[tables]\nnetwork_regions = [\"/example/region\", \"/ucla/cs\"]\n", "t").unwrap();
        assert_eq!(c.tables.network_regions, ["/example/region", "/ucla/cs"]);
        let e = rejected("[tables]\nnetwork_regions = [\"/ok\", \"/bad/%zz\"]\n", "tables.network_regions[1]");
        assert!(e.contains("`/bad/%zz` is not an NDN name") && e.contains("such as /example/region"), "{e}");
        let e = rejected("[tables]\nnetwork_regions = [\"/\"]\n", "tables.network_regions[0]");
        assert!(e.contains("`/` is the root"), "{e}");
        let e = Config::parse("[tables]\nnetwork_regions = \"/example/region\"\n", "t.toml").unwrap_err().to_string();
        assert!(e.contains("line 2"), "a single name is not a list: {e}");
    }

    #[test]
    fn dpdk_ports_and_their_routes_are_checked() {
        assert!(Config::default_config().dpdk.ports.is_empty());
        let ok = "[dpdk]\neal_args = [\"--vdev=net_null0\"]\n[[dpdk.ports]]\nname = \"net_null0\"\n[[routes]]\nprefix = \"/a\"\nface = \"dev://net_null0\"\n";
        let c = Config::parse(ok, "t").unwrap();
        assert_eq!((c.dpdk.ports[0].encap.as_str(), c.dpdk.ports[0].local_port), ("ether", 6363));
        let e = Config::parse("[[routes]]\nprefix = \"/a\"\nface = \"dev://nope\"\n", "t.toml").unwrap_err().to_string();
        assert!(e.contains("routes[0].face"), "{e}");
        let e = Config::parse("[[dpdk.ports]]\nname = \"x\"\nencap = \"ip6\"\n", "t.toml").unwrap_err().to_string();
        assert!(e.contains("dpdk.ports[0].encap"), "{e}");
        let e = Config::parse("[[dpdk.ports]]\nname = \"x\"\nremote_mac = \"1:2\"\n", "t.toml").unwrap_err().to_string();
        assert!(e.contains("dpdk.ports[0].remote_mac"), "{e}");
        assert_eq!(parse_mac("02:00:00:00:0a:ff"), Ok([2, 0, 0, 0, 10, 255]));
    }

    #[test]
    fn bad_route_is_rejected_with_key() {
        let e = Config::parse("[[routes]]\nprefix = \"/a\"\nface = \"eth://x\"\n", "t.toml").unwrap_err().to_string();
        assert!(e.contains("routes[0].face"), "{e}");
    }

    #[test]
    fn strategies_are_named_by_word_and_an_unknown_one_lists_the_known() {
        let c = Config::parse("[[strategies]]\nprefix = \"/d\"\nstrategy = \"dynamic\"\n", "t.toml").unwrap();
        assert_eq!(crate::daemon::strategy_kind(&c.strategies[0]), StrategyKind::Dynamic);
        let e = Config::parse("[[strategies]]\nprefix = \"/d\"\nstrategy = \"asf\"\n", "t.toml").unwrap_err().to_string();
        assert!(e.contains("strategies[0].strategy") && e.contains("best-route, multicast, dynamic"), "{e}");
    }

    /// The error `text` gets, which must name `key`.
    fn rejected(text: &str, key: &str) -> String {
        let e = Config::parse(text, "t.toml").expect_err(text).to_string();
        assert!(e.starts_with(&format!("t.toml: {key}: ")), "{text} → {e}");
        e
    }

    /// A prefix routed twice through one face, or given two strategies, is
    /// refused, naming the first: the second would silently win or lose.
    #[test]
    fn a_prefix_has_one_route_per_face_and_one_strategy() {
        let route = |prefix: &str, face: &str, cost: u64| format!("[[routes]]\nprefix = \"{prefix}\"\nface = \"{face}\"\ncost = {cost}\n");
        let e = rejected(&format!("{}{}", route("/a", "udp4://127.0.0.1:9", 1), route("/a/", "udp4://127.0.0.1:9", 2)), "routes[1].prefix");
        assert!(e.contains("/a via `udp4://127.0.0.1:9` is routes[0] already"), "{e}");
        Config::parse(&format!("{}{}", route("/a", "udp4://127.0.0.1:9", 1), route("/a", "udp4://127.0.0.1:10", 2)), "t").unwrap();
        let strategy = |prefix: &str, s: &str| format!("[[strategies]]\nprefix = \"{prefix}\"\nstrategy = \"{s}\"\n");
        let e = rejected(&format!("{}{}", strategy("/v", "multicast"), strategy("/v", "best-route")), "strategies[1].prefix");
        assert!(e.contains("strategies[0]"), "{e}");
    }

    /// Two routes through one face URI with different `udp_ports` are refused,
    /// naming both: the second count would otherwise be ignored without a word.
    #[test]
    fn routes_through_one_face_must_agree_on_udp_ports() {
        let route = |prefix: &str, ports: usize| format!("[[routes]]\nprefix = \"{prefix}\"\nface = \"udp4://127.0.0.1:40000\"\nudp_ports = {ports}\n");
        let e = rejected(&format!("{}{}{}", route("/a", 4), route("/b", 4), route("/c", 1)), "routes[2].udp_ports");
        assert!(e.contains("`udp4://127.0.0.1:40000` has udp_ports = 1 here and 4 in routes[0] (prefix /a)"), "{e}");
        Config::parse(&format!("{}{}", route("/a", 4), route("/b", 4)), "t").unwrap();
    }

    /// An address listed twice would fail to bind as if another program held
    /// it; the ephemeral port 0 may be listed more than once.
    #[test]
    fn a_listener_address_listed_twice_is_refused_naming_both_entries() {
        let e = rejected("[faces]\nudp_listen = [\"127.0.0.1:26393\", \"127.0.0.1:26394\", \"127.0.0.1:26393\"]\n", "faces.udp_listen");
        assert!(e.contains("127.0.0.1:26393 is listed twice (entries 0 and 2)"), "{e}");
        rejected("[faces]\ntcp_listen = [\"[::1]:6363\", \"[::1]:6363\"]\n", "faces.tcp_listen");
        Config::parse("[faces]\nudp_listen = [\"127.0.0.1:0\", \"127.0.0.1:0\"]\ntcp_listen = [\"127.0.0.1:6363\", \"[::1]:6363\"]\n", "t").unwrap();
    }

    #[test]
    fn a_route_face_uri_is_parsed_as_the_daemon_parses_it() {
        let route = |face: &str, ports: usize| format!("[[routes]]\nprefix = \"/a\"\nface = \"{face}\"\nudp_ports = {ports}\n");
        let e = rejected(&route("udp4://router-b.example:6363", 1), "routes[0].face");
        assert!(e.contains("router-b.example") && e.contains("host must be an IP address literal"), "{e}");
        assert!(!e.contains("udp_ports"), "a route that did not set udp_ports is not told of it: {e}");
        let e = rejected(&route("tcp4://router-b.example:6363", 1), "routes[0].face");
        assert!(e.contains("tcp4://router-b.example:6363") && e.contains("IP address literal"), "{e}");
        for bad in ["udp4://224.0.23.170:6363", "tcp6://[::]:6363", "udp4://127.0.0.1:0", "udp6://127.0.0.1:6363", "udp4://127.0.0.1:70000"] {
            rejected(&route(bad, 1), "routes[0].face");
        }
        let e = rejected(&route("udp4://127.0.0.1:65535", 4), "routes[0].udp_ports");
        assert!(e.contains("65535") && e.contains("(udp_ports = 4)"), "{e}");
        // What parses is left to the daemon: no listener is needed to validate,
        // and a TCP neighbour is not dialed.
        for good in ["udp4://127.0.0.1:65535", "udp6://[::1]:6363", "tcp4://127.0.0.1:9", "tcp6://[::1]:9", "udp4://192.0.2.1"] {
            Config::parse(&route(good, 1), "t").unwrap_or_else(|e| panic!("{good}: {e}"));
        }
        Config::parse(&route("udp4://127.0.0.1:65532", 4), "t").unwrap();
    }

    #[test]
    fn numbers_that_cannot_work_are_rejected_with_key_value_and_range() {
        for (text, key, says) in [
            ("[faces]\nudp_idle_timeout_s = 0\n", "faces.udp_idle_timeout_s", "0 is out of range: at least 1"),
            ("[faces]\nstall_timeout_s = 0\n", "faces.stall_timeout_s", "0 is out of range: at least 1"),
            ("[faces]\nevict_idle_s = 0\n", "faces.evict_idle_s", "0 is out of range: 1 to 86400"),
            ("[faces]\nevict_idle_s = 86401\n", "faces.evict_idle_s", "86401 is out of range: 1 to 86400"),
            ("[faces]\nstream_queue_bytes = 0\n", "faces.stream_queue_bytes", "0 is out of range: at least 9152"),
            ("[faces]\nstream_queue_bytes = 9151\n", "faces.stream_queue_bytes", "9151 is out of range: at least 9152"),
            ("[faces]\nqueue_bytes = 0\n", "faces.queue_bytes", "0 is out of range: at least 9152"),
            ("[faces]\nreassembly_bytes = 0\n", "faces.reassembly_bytes", "0 is out of range: at least "),
            ("[tables]\npit_capacity = 0\n", "tables.pit_capacity", "0 is out of range: 1 to 1073741823"),
            ("[tables]\npit_capacity = 1073741824\n", "tables.pit_capacity", "1073741824 is out of range: 1 to 1073741823"),
            ("[tables]\ncs_capacity = 268435457\n", "tables.cs_capacity", "268435457 is out of range: 0 to 268435456"),
            ("[tables]\nmax_interest_lifetime_ms = 0\n", "tables.max_interest_lifetime_ms", "0 is out of range: at least 1"),
            ("[dpdk]\nqueue_size = 0\n", "dpdk.queue_size", "0 is out of range: 1 to 65535"),
            ("[workers]\ncount = 100000\n", "workers.count", "100000 is out of range: 0 to "),
        ] {
            let e = rejected(text, key);
            assert!(e.contains(says), "{text} → {e}");
        }
        let e = rejected("[faces]\nreassembly_bytes = 1\n", "faces.reassembly_bytes");
        assert!(e.ends_with(&format!("at least {MIN_REASSEMBLY_BYTES}")), "{e}");
        // The smallest values that work, and the zeros that mean something.
        let edges = format!(
            "[faces]\nudp_idle_timeout_s = 1\nstream_queue_bytes = 9152\nqueue_bytes = 9152\nreassembly_bytes = {MIN_REASSEMBLY_BYTES}\nmax_faces = 0\nevict_idle_s = 1\n\
             [tables]\ncs_capacity = 0\npit_capacity = 1\nmax_interest_lifetime_ms = 1\ndead_nonce_lifetime_ms = 0\n\
             [dpdk]\nqueue_size = 1\nmbufs = 0\n[workers]\ncount = {MAX_WORKERS}\n"
        );
        Config::parse(&edges, "t").unwrap();
        assert_eq!(Config::parse("[faces]\nevict_idle_s = 86400\n", "t").unwrap().faces.evict_idle_s, 86_400);
    }

    #[test]
    fn workers_are_bounded_and_cores_are_not_shared() {
        let e = rejected("[workers]\ncores = [0, 0]\n", "workers.cores");
        assert!(e.contains("CPU 0 is listed twice"), "{e}");
        rejected("[workers]\ncores = [3, 1, 2, 1]\n", "workers.cores");
        let many: Vec<String> = (0..=max_workers()).map(|c| c.to_string()).collect();
        let e = rejected(&format!("[workers]\ncores = [{}]\n", many.join(", ")), "workers.cores");
        assert!(e.contains(&format!("at most {} workers", max_workers())), "{e}");
        assert!(max_workers() >= MAX_WORKERS);
        let e = rejected("[workers]\ncount = 4\nudp_ports = [\"127.0.0.1:65533\"]\n", "workers.udp_ports");
        assert!(e.contains("4 ports from 127.0.0.1:65533"), "{e}");
        // Port 0 (the kernel picks) and an automatic count are checked at start.
        Config::parse("[workers]\ncount = 4\nudp_ports = [\"127.0.0.1:0\"]\n", "t").unwrap();
        Config::parse("[workers]\nudp_ports = [\"127.0.0.1:65535\"]\n", "t").unwrap();
        Config::parse("[workers]\ncount = 3\nudp_ports = [\"127.0.0.1:65533\"]\n", "t").unwrap();
    }

    /// Validation after overriding a loaded configuration, as `trajan run
    /// --cores` does, sees the override.
    #[test]
    fn validate_checks_a_changed_configuration() {
        let mut c = Config::default_config();
        c.workers.cores = vec![0, 0];
        c.workers.count = 2;
        let e = c.validate("command line").unwrap_err().to_string();
        assert!(e.starts_with("command line: workers.cores: "), "{e}");
    }
}
