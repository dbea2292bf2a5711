//! Shared helpers for the end-to-end tests: start the real `trajan` binary on
//! loopback in a temporary directory and run its tools against it. Every wait is
//! bounded; every address is loopback.

#![allow(dead_code)] // each test binary uses a different subset

use std::net::{TcpListener, UdpSocket};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The binary under test.
pub fn trajan() -> &'static str {
    env!("CARGO_BIN_EXE_trajan")
}

/// A free loopback port for both UDP and TCP (bound, then released).
pub fn free_port() -> u16 {
    loop {
        let t = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = t.local_addr().unwrap().port();
        if UdpSocket::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
}

/// A running daemon, killed on drop.
pub struct Router {
    pub child: Option<Child>,
    pub dir: tempfile::TempDir,
    pub sock: PathBuf,
    pub port: u16,
}

impl Router {
    /// Starts `trajan run` with its own Unix socket and a free UDP/TCP port.
    pub fn start() -> Router {
        Router::start_with(&[])
    }

    /// Starts `trajan run` with extra arguments.
    pub fn start_with(extra: &[&str]) -> Router {
        Router::start_cmd(Command::new(trajan()), free_port(), extra)
    }

    /// Starts `trajan run` on a given UDP/TCP port (one another router was told of).
    pub fn start_on(port: u16, extra: &[&str]) -> Router {
        Router::start_cmd(Command::new(trajan()), port, extra)
    }

    /// Starts `trajan run` inside network namespace `netns` (whose loopback must be
    /// up); its Unix socket is still reachable from here.
    pub fn start_in(netns: &str, extra: &[&str]) -> Router {
        let mut cmd = Command::new("ip");
        cmd.args(["netns", "exec", netns, trajan()]);
        Router::start_cmd(cmd, free_port(), extra)
    }

    fn start_cmd(mut cmd: Command, port: u16, extra: &[&str]) -> Router {
        let dir = tempfile::tempdir().unwrap();
        let sock = dir.path().join("nfd.sock");
        let log = std::fs::File::create(dir.path().join("trajan.log")).unwrap();
        let addr = format!("127.0.0.1:{port}");
        let child = cmd
            .args(["run", "--unix"])
            .arg(&sock)
            .args(["--udp", &addr, "--tcp", &addr])
            .args(extra)
            .env("RUST_LOG", "debug")
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .unwrap();
        let r = Router { child: Some(child), dir, sock, port };
        r.wait_ready();
        r
    }

    fn wait_ready(&self) {
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if UnixStream::connect(&self.sock).is_ok() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("router did not start; log:\n{}", self.log());
    }

    /// The router's log so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("trajan.log")).unwrap_or_default()
    }

    /// `unix://...` for `--transport`.
    pub fn transport(&self) -> String {
        format!("unix://{}", self.sock.display())
    }

    /// The client options that reach this router over its Unix socket.
    pub fn unix_client(&self) -> Vec<String> {
        vec!["--transport".into(), self.transport()]
    }

    /// Runs a `trajan` tool against this router and waits (bounded) for it.
    pub fn tool(&self, args: &[&str]) -> Output {
        self.tool_with(&self.unix_client(), args)
    }

    /// [`Router::tool`] with other client options (`--transport`, `--udp-ports`).
    pub fn tool_with(&self, client: &[String], args: &[&str]) -> Output {
        run_bounded(Command::new(trajan()).args(args).args(client), Duration::from_secs(60))
    }

    /// Starts a long-running tool (a producer) against this router.
    pub fn spawn_tool(&self, args: &[&str]) -> Child {
        self.spawn_tool_with(&self.unix_client(), args)
    }

    /// [`Router::spawn_tool`] with other client options.
    pub fn spawn_tool_with(&self, client: &[String], args: &[&str]) -> Child {
        Command::new(trajan())
            .args(args)
            .args(client)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap()
    }

    /// Sends SIGTERM and waits (bounded) for a clean exit; returns the exit status success.
    pub fn stop(&mut self) -> bool {
        let Some(mut child) = self.child.take() else { return false };
        unsafe_free_signal(child.id(), "TERM");
        wait_bounded(&mut child, Duration::from_secs(10)).is_some_and(|s| s.success())
    }

    /// Sends SIGHUP (reload the configuration) and waits (bounded) until the
    /// log shows the reload done, one more than `before` reloads; returns the log.
    pub fn reload(&self, before: usize) -> String {
        let child = self.child.as_ref().expect("running");
        unsafe_free_signal(child.id(), "HUP");
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            let log = self.log();
            if log.matches("configuration reloaded").count() + log.matches("configuration not reloaded").count() > before {
                return log;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("no reload logged; log:\n{}", self.log());
    }
}

impl Drop for Router {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// Sends signal `sig` (`TERM`, `HUP`) through the `kill` command, keeping the
/// tests free of `unsafe`.
pub fn unsafe_free_signal(pid: u32, sig: &str) {
    let _ = Command::new("kill").args([&format!("-{sig}"), &pid.to_string()]).status();
}

/// Waits at most `limit` for a child.
pub fn wait_bounded(child: &mut Child, limit: Duration) -> Option<std::process::ExitStatus> {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if let Ok(Some(s)) = child.try_wait() {
            return Some(s);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    child.wait().ok()
}

/// Runs a command with a time limit, capturing its output.
pub fn run_bounded(cmd: &mut Command, limit: Duration) -> Output {
    let mut child = cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let deadline = Instant::now() + limit;
    loop {
        if child.try_wait().unwrap().is_some() || Instant::now() >= deadline {
            let _ = child.kill();
            return child.wait_with_output().unwrap();
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Waits (bounded) until a producer prints its READY line.
pub fn wait_ready_line(child: &mut Child) {
    use std::io::{BufRead, BufReader};
    let out = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines().map_while(Result::ok) {
            if line.starts_with("READY") {
                let _ = tx.send(());
            }
        }
    });
    rx.recv_timeout(Duration::from_secs(20)).expect("producer did not become ready");
}

/// `len` reproducible pseudo-random bytes (xorshift; tests need no real randomness).
pub fn pseudo_random_bytes(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

/// A file of `len` pseudo-random bytes in `dir`.
pub fn random_file(dir: &Path, len: usize, seed: u64) -> PathBuf {
    let p = dir.join(format!("file-{seed}.bin"));
    std::fs::write(&p, pseudo_random_bytes(len, seed)).unwrap();
    p
}

/// Output as text, for assertions and failure messages.
pub fn text(o: &Output) -> String {
    format!("status {:?}\nstdout:\n{}\nstderr:\n{}", o.status, String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}
