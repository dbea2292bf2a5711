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
    /// Most bytes queued on one stream face; beyond it packets are dropped and counted (default 4 MiB).
    pub stream_queue_bytes: usize,
    /// Most bytes queued for sending on all faces together.
    pub queue_bytes: usize,
    /// Most faces before new network peers are refused (local applications and
    /// management are always admitted).
    pub max_faces: usize,
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

    fn validate(&self, origin: &str) -> Result<(), ConfigError> {
        let invalid = |key: &str, message: String| ConfigError::Invalid { path: origin.to_owned(), key: key.to_owned(), message };
        for (i, r) in self.routes.iter().enumerate() {
            r.prefix.parse::<trajan_wire::Name>().map_err(|e| invalid(&format!("routes[{i}].prefix"), e.to_string()))?;
            if let Some(dev) = r.face.strip_prefix("dev://") {
                if !self.dpdk.ports.iter().any(|p| p.name == dev) {
                    return Err(invalid(&format!("routes[{i}].face"), format!("`{}` names no port of dpdk.ports", r.face)));
                }
            } else if !(r.face.starts_with("udp4://") || r.face.starts_with("tcp4://") || r.face.starts_with("udp6://") || r.face.starts_with("tcp6://")) {
                return Err(invalid(&format!("routes[{i}].face"), format!("`{}` is not a udp4://, udp6://, tcp4://, tcp6:// or dev:// (DPDK port) face URI", r.face)));
            }
            if r.udp_ports == 0 || (r.udp_ports > 1 && !r.face.starts_with("udp")) {
                return Err(invalid(&format!("routes[{i}].udp_ports"), "must be 1, or more for a udp4:// or udp6:// face".to_owned()));
            }
        }
        for (i, s) in self.strategies.iter().enumerate() {
            s.prefix.parse::<trajan_wire::Name>().map_err(|e| invalid(&format!("strategies[{i}].prefix"), e.to_string()))?;
            s.strategy.parse::<StrategyKind>().map_err(|e| invalid(&format!("strategies[{i}].strategy"), e))?;
        }
        for (i, p) in self.dpdk.ports.iter().enumerate() {
            p.encap.parse::<trajan_io::encap::Encap>().map_err(|e| invalid(&format!("dpdk.ports[{i}].encap"), e))?;
            parse_mac(&p.remote_mac).map_err(|e| invalid(&format!("dpdk.ports[{i}].remote_mac"), e))?;
        }
        if self.workers.udp_ports.len() > 1 {
            return Err(invalid("workers.udp_ports", format!("{} base addresses given; one face of per-worker ports is supported", self.workers.udp_ports.len())));
        }
        if !self.workers.cores.is_empty() && self.workers.count != 0 && self.workers.count != self.workers.cores.len() {
            return Err(invalid("workers.cores", format!("{} cores listed for workers.count = {}", self.workers.cores.len(), self.workers.count)));
        }
        self.tables
            .fib_variant
            .parse::<trajan_tables::FibVariant>()
            .map_err(|e| invalid("tables.fib_variant", e))?;
        if !matches!(self.log.level.as_str(), "error" | "warn" | "info" | "debug" | "trace") {
            return Err(invalid("log.level", format!("`{}` is not one of error, warn, info, debug, trace", self.log.level)));
        }
        Ok(())
    }
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
    stream_queue_bytes: Option<usize>,
    queue_bytes: Option<usize>,
    max_faces: Option<usize>,
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
}
