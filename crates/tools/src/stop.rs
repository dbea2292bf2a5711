//! Graceful shutdown for long-running tools (producers, ping): SIGINT and SIGTERM
//! set a flag the tool's loop polls, so it can print its summary and exit cleanly.

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
