//! `trajan demo` (and `trajan` with no command): start the router, publish a small
//! object through it, fetch it back through it, and print how to reach the router,
//! so a newcomer sees it working with one command.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

use anyhow::Context;
use trajan_tools::client::{now_ms, Client, ClientArgs};
use trajan_tools::get::{fetch, GetArgs};
use trajan_tools::put::Publication;
use trajan_tools::transport::{resolve_transport, Transport};
use trajan_wire::Name;

use crate::run::{start, RunArgs};

/// Where the demo object lives.
pub const DEMO_PREFIX: &str = "/trajan/demo/hello";

const GREETING: &str = "Hello from Trajan, a high-speed NDN router. This object was published by an \
in-process producer and fetched back through the router's forwarding pipeline.\n";

/// The commands the demo suggests, each with `--transport` unless the tools
/// find `router` without it (`found`: where they look by themselves, from the
/// environment and ~/.ndn/client.conf): a command that cannot reach the
/// router would greet a newcomer with an error.
fn try_commands(router: &Transport, found: Option<&Transport>) -> Vec<(String, &'static str)> {
    let flag = if found == Some(router) { String::new() } else { format!(" --transport {router}") };
    [
        (format!("trajan get {DEMO_PREFIX}"), "fetch the demo object"),
        ("trajan status".to_owned(), "counters, faces, content store"),
        ("trajan route list".to_owned(), "routes (the demo prefix is one)"),
        ("trajan put /my/file ./README.md".to_owned(), "publish a file; trajan get /my/file fetches it"),
    ]
    .into_iter()
    .map(|(command, what)| (format!("{command}{flag}"), what))
    .collect()
}

/// Runs the demo; returns when the router is stopped (Ctrl-C or SIGTERM).
/// SIGHUP reloads its configuration, as in `trajan run`.
pub fn run(args: RunArgs) -> anyhow::Result<()> {
    // Handlers before the sockets open, as in `trajan run`.
    let stop = trajan_router::stop_on_signals()?;
    let hangup = trajan_router::reload_on_hangup()?;
    let cfg = args.load()?;
    let mut daemon = start(&cfg)?;
    let (udp, tcp) = daemon.io.local_addrs();
    let transport = if !cfg.faces.unix_path.as_os_str().is_empty() {
        Transport::Unix(cfg.faces.unix_path.clone())
    } else if let Some(a) = tcp.first() {
        let host = if a.ip().is_unspecified() { "127.0.0.1".to_owned() } else { a.ip().to_string() };
        Transport::Tcp(format!("{host}:{}", a.port()))
    } else {
        anyhow::bail!("the demo needs the Unix socket or a TCP listener to reach the router");
    };
    let config_file = args.config.clone();
    let router_stop = Arc::clone(&stop);
    let router = std::thread::Builder::new()
        .name("router".into())
        .spawn(move || daemon.run_reloading(&router_stop, &hangup, || args.load().map_err(|e| format!("{e:#}"))))?;

    // The producer: a segmented object, served from its own client face.
    let prefix: Name = DEMO_PREFIX.parse().expect("static name");
    let publication = Publication::new(&prefix, now_ms(), GREETING.as_bytes(), 8000, 60_000)?;
    let mut producer = Client::connect(&transport).context("the demo producer cannot reach the router")?;
    producer.register(&prefix).context("registering the demo prefix")?;
    let producer_stop = Arc::clone(&stop);
    let producer = std::thread::Builder::new().name("demo-producer".into()).spawn(move || {
        producer.serve(&producer_stop, |interest| publication.answer(interest).map(|(_, d)| d.clone()))
    })?;

    // The consumer: fetch it through the router, as `trajan get` would.
    let uri = transport.to_string();
    let get = GetArgs {
        name: prefix.clone(),
        output: None,
        window: 4,
        timeout: 2000,
        retries: 2,
        client: ClientArgs { transport: Some(uri.clone()), ..ClientArgs::default() },
    };
    let started = Instant::now();
    let mut content = Vec::new();
    // No stop signal of its own: a signal stops the router, which ends this bounded fetch.
    let summary = fetch(&get, &mut content, &AtomicUsize::new(0));
    let elapsed = started.elapsed();

    match &config_file {
        Some(file) => println!("Trajan is running on the configuration in {}.", file.display()),
        None => println!("Trajan is running on its embedded default configuration."),
    }
    println!("  applications:  {uri}");
    for a in &udp {
        println!("  UDP faces:     {a}");
    }
    for a in &tcp {
        println!("  TCP faces:     {a}");
    }
    match summary {
        Ok(s) => {
            println!();
            println!("Demo: published {DEMO_PREFIX} and fetched it back through the router in {:.1} ms", elapsed.as_secs_f64() * 1e3);
            println!("  {} ({} bytes, {} segment, signature verified):", s.versioned, s.bytes, s.segments);
            println!("  {}", String::from_utf8_lossy(&content).trim_end());
        }
        Err(e) => println!("\nDemo fetch failed: {e:#}"),
    }
    println!();
    println!("Try it from another terminal:");
    let commands = try_commands(&transport, resolve_transport(None).ok().as_ref());
    let width = commands.iter().map(|(command, _)| command.len()).max().unwrap_or(0);
    for (command, what) in &commands {
        println!("  {command:<width$}  # {what}");
    }
    println!("Unmodified python-ndn, NDNts and ndnd applications find the router at {uri}.");
    println!("Press Ctrl-C to stop.");

    let result = router.join().map_err(|_| anyhow::anyhow!("the router thread panicked"))?;
    stop.store(true, Ordering::Relaxed);
    let _ = producer.join();
    result.context("the router stopped with an error")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggested_commands_reach_the_demo_router() {
        let router = Transport::Unix("/tmp/demo.sock".into());
        let plain = try_commands(&router, Some(&router));
        assert!(plain.iter().all(|(c, _)| !c.contains("--transport")), "{plain:?}");
        let elsewhere = Transport::Unix("/run/nfd/nfd.sock".into());
        for found in [Some(&elsewhere), None] {
            let flagged = try_commands(&router, found);
            assert!(flagged.iter().all(|(c, _)| c.ends_with(" --transport unix:///tmp/demo.sock")), "{flagged:?}");
        }
    }
}
