//! Structured logs via `tracing`: text for people, JSON for collectors; `RUST_LOG`
//! overrides the configured level. The level can change while the router runs
//! (a configuration reload, [`set_level`]); the format is chosen once.

use std::ffi::OsString;
use std::io::IsTerminal;
use std::sync::OnceLock;

use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{fmt, reload, EnvFilter, Registry};

use crate::config::{LogConfig, LogFormat};

/// The installed subscriber's filter, which [`set_level`] replaces.
static FILTER: OnceLock<reload::Handle<EnvFilter, Registry>> = OnceLock::new();

/// Installs the global subscriber (once; later calls are ignored, which keeps tests
/// that start several daemons in one process working).
pub fn init(cfg: &LogConfig) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(&cfg.level));
    let (filter, handle) = reload::Layer::new(filter);
    let registry = tracing_subscriber::registry().with(filter);
    let installed = match cfg.format {
        LogFormat::Json => registry.with(fmt::layer().json().with_writer(std::io::stderr)).try_init(),
        LogFormat::Text => {
            let ansi = colours_wanted(std::io::stderr().is_terminal(), std::env::var_os("NO_COLOR"));
            registry.with(fmt::layer().with_ansi(ansi).with_writer(std::io::stderr)).try_init()
        }
    };
    if installed.is_ok() {
        let _ = FILTER.set(handle);
    }
}

/// Whether text logs carry colour codes: only on a terminal, and not when
/// `NO_COLOR` is set to anything but the empty string (no-color.org). A log
/// file or journald would otherwise keep the escape codes.
fn colours_wanted(terminal: bool, no_color: Option<OsString>) -> bool {
    terminal && no_color.is_none_or(|v| v.is_empty())
}

/// What [`set_level`] did.
#[derive(Debug, PartialEq, Eq)]
pub enum LevelChange {
    /// The new level applies from now on.
    Applied,
    /// `RUST_LOG` chose the level, and keeps choosing it.
    KeptRustLog,
    /// This process installed no subscriber of its own (a test harness's, or none).
    NotInstalled,
}

/// Makes `level` (one of the configuration's levels) the level of every log
/// line from now on, unless `RUST_LOG` set it: a reload must not undo what
/// the operator asked for on the command line.
pub fn set_level(level: &str) -> LevelChange {
    if std::env::var_os("RUST_LOG").is_some() {
        return LevelChange::KeptRustLog;
    }
    match FILTER.get() {
        Some(handle) if handle.reload(EnvFilter::new(level)).is_ok() => LevelChange::Applied,
        _ => LevelChange::NotInstalled,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colours_only_on_a_terminal_without_no_color() {
        assert!(colours_wanted(true, None));
        assert!(colours_wanted(true, Some(OsString::new())), "an empty NO_COLOR is unset");
        assert!(!colours_wanted(true, Some("1".into())));
        assert!(!colours_wanted(false, None), "a file or a pipe gets plain text");
    }
}
