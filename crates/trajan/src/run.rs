//! `trajan run`: load the configuration, open the faces, forward until a signal.

use std::net::SocketAddr;
use std::path::PathBuf;

use anyhow::Context;
use trajan_router::{Config, Daemon};

/// Options shared by `run` and `demo`.
#[derive(clap::Args, Default, Clone)]
pub struct RunArgs {
    /// Configuration file (TOML). Keys left out take the embedded defaults (`trajan default-config`).
    #[arg(long, short)]
    pub config: Option<PathBuf>,
    /// Unix socket path for local applications (overrides faces.unix_path; "" disables it).
    // Parsed as an OS string: clap's path parser refuses the empty one.
    #[arg(long, value_parser = clap::builder::TypedValueParser::map(clap::builder::OsStringValueParser::new(), PathBuf::from))]
    pub unix: Option<PathBuf>,
    /// UDP listen address (repeatable; overrides faces.udp_listen).
    #[arg(long)]
    pub udp: Vec<SocketAddr>,
    /// TCP listen address (repeatable; overrides faces.tcp_listen).
    #[arg(long)]
    pub tcp: Vec<SocketAddr>,
    /// Forwarding threads, each pinned and owning a PIT/CS shard (overrides workers.count;
    /// 0 = one per physical core, 1 = forward on the I/O thread).
    #[arg(long)]
    pub workers: Option<usize>,
    /// CPUs to pin the workers to, e.g. `0,1` (overrides workers.cores and the automatic placement).
    #[arg(long, value_delimiter = ',')]
    pub cores: Vec<usize>,
    /// UDP-port-by-hash face: listen on one UDP port per worker from this base address
    /// (e.g. 0.0.0.0:6400 → 6400, 6401, ...; port 0: the kernel picks the first, logged
    /// at start). Senders using it pick the port from the name hash (`trajan get
    /// --udp-ports N`) so each packet reaches its worker directly (overrides workers.udp_ports).
    #[arg(long, value_name = "ADDR")]
    pub udp_ports: Option<SocketAddr>,
}

impl RunArgs {
    /// The configuration these options select.
    pub fn load(&self) -> anyhow::Result<Config> {
        let mut cfg = match &self.config {
            Some(p) => Config::load(p)?,
            None => Config::default_config(),
        };
        if let Some(u) = &self.unix {
            cfg.faces.unix_path = u.clone();
        }
        if !self.udp.is_empty() {
            cfg.faces.udp_listen = self.udp.clone();
        }
        if !self.tcp.is_empty() {
            cfg.faces.tcp_listen = self.tcp.clone();
        }
        if let Some(base) = self.udp_ports {
            cfg.workers.udp_ports = vec![base];
        }
        if let Some(n) = self.workers {
            cfg.workers.count = n;
            cfg.workers.cores.clear();
        }
        if !self.cores.is_empty() {
            anyhow::ensure!(
                self.workers.is_none_or(|n| n == 0 || n == self.cores.len()),
                "--workers {} does not match the {} CPUs of --cores",
                self.workers.unwrap_or(0),
                self.cores.len()
            );
            cfg.workers.count = self.cores.len();
            cfg.workers.cores = self.cores.clone();
        }
        // The file was checked as it was read; the options change it again.
        cfg.validate("the command line")?;
        Ok(cfg)
    }
}

/// Starts the daemon described by `cfg` and prints where it listens.
pub fn start(cfg: &Config) -> anyhow::Result<Daemon> {
    trajan_router::logging::init(&cfg.log);
    let d = Daemon::new(cfg).context("starting the router")?;
    let (udp, tcp) = d.io.local_addrs();
    tracing::info!(?udp, ?tcp, unix = %cfg.faces.unix_path.display(), "trajan is forwarding");
    Ok(d)
}

/// `trajan run`.
pub fn run(args: RunArgs) -> anyhow::Result<()> {
    // Handlers first: a SIGTERM that comes once the sockets accept (as a
    // supervisor's or a test's may) must stop the daemon cleanly, not kill it
    // before it has a handler.
    let stop = trajan_router::stop_on_signals()?;
    let hangup = trajan_router::reload_on_hangup()?;
    let cfg = args.load()?;
    let mut d = start(&cfg)?;
    // SIGHUP reads the file again, with this command line's overrides.
    d.run_reloading(&stop, &hangup, || args.load().map_err(|e| format!("{e:#}")))?;
    Ok(())
}
