//! Graceful shutdown for long-running tools (producers, ping): SIGINT and SIGTERM
//! set a flag the tool's loop polls, so it can print its summary and exit cleanly.

use std::io::Read;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use signal_hook::consts::{SIGINT, SIGTERM};

/// A flag set by SIGINT or SIGTERM and, if `after` is given, once that time has passed
/// (for tests and scripts that need a producer to end on its own).
pub fn stop_flag(after: Option<Duration>) -> anyhow::Result<Arc<AtomicBool>> {
    let flag = Arc::new(AtomicBool::new(false));
    for sig in [SIGINT, SIGTERM] {
        signal_hook::flag::register(sig, Arc::clone(&flag)).context("installing a signal handler")?;
    }
    if let Some(after) = after {
        let f = Arc::clone(&flag);
        std::thread::spawn(move || {
            std::thread::sleep(after);
            f.store(true, Ordering::Relaxed);
        });
    }
    Ok(flag)
}

/// Sets `flag` once stdin reaches its end (or fails), for a tool that holds
/// something open until the script that runs it says so by closing its stdin.
/// What comes in is read into a fixed buffer and discarded; the read blocks in
/// a thread of its own, left behind if the flag is set otherwise first.
pub fn set_at_stdin_end(flag: &Arc<AtomicBool>) {
    let f = Arc::clone(flag);
    std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        let mut stdin = std::io::stdin().lock();
        while matches!(stdin.read(&mut buf), Ok(n) if n > 0) {}
        f.store(true, Ordering::Relaxed);
    });
}
