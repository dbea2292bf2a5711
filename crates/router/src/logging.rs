//! Structured logs via `tracing`: text for people, JSON for collectors; `RUST_LOG`
//! overrides the configured level.

use crate::config::{LogConfig, LogFormat};

/// Installs the global subscriber (once; later calls are ignored, which keeps tests
/// that start several daemons in one process working).
pub fn init(cfg: &LogConfig) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(&cfg.level));
    let builder = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr);
    let _ = match cfg.format {
        LogFormat::Json => builder.json().try_init(),
        LogFormat::Text => builder.try_init(),
    };
}
