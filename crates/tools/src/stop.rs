//! Graceful shutdown for long-running tools (producers, ping): SIGINT and SIGTERM
//! set a flag the tool's loop polls, so it can print its summary and exit cleanly.
//! A tool that a signal makes fail instead (`trajan get`, whose object is then
//! incomplete) learns which signal came, cleans up, and exits as a shell reports
//! a process that signal ended.

use std::io::Read;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use signal_hook::consts::{SIGINT, SIGTERM};

/// The signals that ask a tool to stop.
const STOP_SIGNALS: [i32; 2] = [SIGINT, SIGTERM];

/// A flag set by SIGINT or SIGTERM and, if `after` is given, once that time has passed
/// (for tests and scripts that need a producer to end on its own).
pub fn stop_flag(after: Option<Duration>) -> anyhow::Result<Arc<AtomicBool>> {
    let flag = Arc::new(AtomicBool::new(false));
    for sig in STOP_SIGNALS {
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

/// The number of the last SIGINT or SIGTERM to come, 0 until one does: for a
/// tool that stops by failing with [`Interrupted`] (see [`check`]).
pub fn stop_signal() -> anyhow::Result<Arc<AtomicUsize>> {
    let signal = Arc::new(AtomicUsize::new(0));
    // A second signal ends the tool as if it had no handler: the first is only
    // noticed between steps, and a step stuck in a write to a stalled pipe
    // (`trajan get | slow`) is restarted, not interrupted, by the kernel.
    let again = Arc::new(AtomicBool::new(false));
    for sig in STOP_SIGNALS {
        signal_hook::flag::register_conditional_default(sig, Arc::clone(&again)).context("installing a signal handler")?;
        signal_hook::flag::register_usize(sig, Arc::clone(&signal), sig as usize).context("installing a signal handler")?;
        signal_hook::flag::register(sig, Arc::clone(&again)).context("installing a signal handler")?;
    }
    Ok(signal)
}

/// The error of a tool a signal stopped before its work was done. `trajan`
/// exits with [`Interrupted::exit_status`], so a script sees what it would
/// have seen had the signal killed the tool outright (after the tool has
/// removed what it left half-written).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Interrupted {
    /// The signal's number.
    pub signal: i32,
}

impl Interrupted {
    /// 128 plus the signal's number: 130 for SIGINT, 143 for SIGTERM.
    pub fn exit_status(&self) -> u8 {
        u8::try_from(128 + self.signal).unwrap_or(u8::MAX)
    }
}

impl std::fmt::Display for Interrupted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.signal {
            SIGINT => f.write_str("interrupted by SIGINT"),
            SIGTERM => f.write_str("interrupted by SIGTERM"),
            n => write!(f, "interrupted by signal {n}"),
        }
    }
}

impl std::error::Error for Interrupted {}

/// Fails with [`Interrupted`] once `signal` (as [`stop_signal`] sets it) is set.
pub fn check(signal: &AtomicUsize) -> Result<(), Interrupted> {
    match signal.load(Ordering::Relaxed) {
        0 => Ok(()),
        n => Err(Interrupted { signal: i32::try_from(n).unwrap_or(i32::MAX) }),
    }
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
