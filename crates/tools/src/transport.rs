//! Which forwarder a tool talks to, chosen the way NFD's client library chooses, so
//! Trajan's tools and ndn-cxx/python-ndn applications on one host agree on it.

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

use anyhow::{bail, Context};

/// Where NFD (and Trajan) listen for local applications by default.
pub const DEFAULT_TRANSPORT: &str = "unix:///run/nfd/nfd.sock";

/// The environment variable NFD's client library reads.
pub const TRANSPORT_ENV: &str = "NDN_CLIENT_TRANSPORT";

/// NDN's default port for UDP and TCP faces, used when a URI names none.
pub const DEFAULT_PORT: u16 = 6363;

/// A face URI a client can connect to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transport {
    /// A Unix stream socket path.
    Unix(PathBuf),
    /// `host:port` of a TCP listener.
    Tcp(String),
    /// `host:port` of a UDP listener.
    Udp(String),
}

/// Appends the default port when `hostport` names none (`[::1]` and `host` forms).
fn with_port(hostport: &str) -> anyhow::Result<String> {
    if hostport.is_empty() {
        bail!("transport URI has no host");
    }
    let has_port = match hostport.rfind(']') {
        Some(close) => hostport[close..].contains(':'),
        None => hostport.matches(':').count() == 1,
    };
    Ok(if has_port { hostport.to_owned() } else { format!("{hostport}:{DEFAULT_PORT}") })
}

impl FromStr for Transport {
    type Err = anyhow::Error;

    fn from_str(s: &str) -> anyhow::Result<Self> {
        let (scheme, rest) = s.split_once("://").with_context(|| format!("transport {s:?} is not a URI"))?;
        let rest = rest.trim_end_matches('/');
        match scheme {
            "unix" if !rest.is_empty() => Ok(Transport::Unix(PathBuf::from(format!("/{}", rest.trim_start_matches('/'))))),
            "tcp" | "tcp4" | "tcp6" => Ok(Transport::Tcp(with_port(rest)?)),
            "udp" | "udp4" | "udp6" => Ok(Transport::Udp(with_port(rest)?)),
            _ => bail!("unsupported transport {s:?} (use unix://PATH, tcp://HOST:PORT or udp://HOST:PORT)"),
        }
    }
}

impl fmt::Display for Transport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Transport::Unix(p) => write!(f, "unix://{}", p.display()),
            Transport::Tcp(a) => write!(f, "tcp://{a}"),
            Transport::Udp(a) => write!(f, "udp://{a}"),
        }
    }
}

/// The `transport=` value of a client.conf (INI-like: `key=value`, `;` or `#` comments).
fn conf_transport(text: &str) -> Option<&str> {
    text.lines()
        .map(|l| l.split([';', '#']).next().unwrap_or("").trim())
        .filter_map(|l| l.split_once('='))
        .find(|(k, _)| k.trim() == "transport")
        .map(|(_, v)| v.trim())
        .filter(|v| !v.is_empty())
}

/// The transport from the first source that names one: an explicit option, the
/// environment, the client.conf text, then the default.
pub fn choose_transport(explicit: Option<&str>, env: Option<&str>, client_conf: Option<&str>) -> anyhow::Result<Transport> {
    let (uri, source) = if let Some(e) = explicit {
        (e, "--transport")
    } else if let Some(e) = env.filter(|e| !e.is_empty()) {
        (e, TRANSPORT_ENV)
    } else if let Some(c) = client_conf.and_then(conf_transport) {
        (c, "~/.ndn/client.conf")
    } else {
        (DEFAULT_TRANSPORT, "the default")
    };
    uri.parse().with_context(|| format!("bad transport from {source}"))
}

/// [`choose_transport`] with this process's environment and `~/.ndn/client.conf`.
pub fn resolve_transport(explicit: Option<&str>) -> anyhow::Result<Transport> {
    let env = std::env::var(TRANSPORT_ENV).ok();
    let conf = std::env::var_os("HOME")
        .and_then(|h| std::fs::read_to_string(PathBuf::from(h).join(".ndn/client.conf")).ok());
    choose_transport(explicit, env.as_deref(), conf.as_deref())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_uris() {
        assert_eq!("unix:///run/nfd/nfd.sock".parse::<Transport>().unwrap(), Transport::Unix("/run/nfd/nfd.sock".into()));
        assert_eq!("tcp://127.0.0.1:7000".parse::<Transport>().unwrap(), Transport::Tcp("127.0.0.1:7000".into()));
        assert_eq!("tcp4://localhost".parse::<Transport>().unwrap(), Transport::Tcp("localhost:6363".into()));
        assert_eq!("udp6://[::1]".parse::<Transport>().unwrap(), Transport::Udp("[::1]:6363".into()));
        assert_eq!("udp://[::1]:9/".parse::<Transport>().unwrap(), Transport::Udp("[::1]:9".into()));
        for bad in ["unix://", "tcp://", "ether://x", "/run/nfd.sock", "ws://h:1"] {
            assert!(bad.parse::<Transport>().is_err(), "{bad}");
        }
        let t: Transport = "udp://h:1".parse().unwrap();
        assert_eq!(t.to_string().parse::<Transport>().unwrap(), t);
    }

    #[test]
    fn precedence() {
        let conf = "; comment\n[x]\ntransport = tcp://conf:1 ; trailing\n";
        let unix = |p: &str| Transport::Unix(p.into());
        assert_eq!(choose_transport(Some("unix:///a"), Some("unix:///b"), Some(conf)).unwrap(), unix("/a"));
        assert_eq!(choose_transport(None, Some("unix:///b"), Some(conf)).unwrap(), unix("/b"));
        assert_eq!(choose_transport(None, Some(""), Some(conf)).unwrap(), Transport::Tcp("conf:1".into()));
        assert_eq!(choose_transport(None, None, Some("other=1\n")).unwrap(), unix("/run/nfd/nfd.sock"));
        assert_eq!(choose_transport(None, None, None).unwrap(), unix("/run/nfd/nfd.sock"));
        let err = choose_transport(None, Some("bogus"), None).unwrap_err();
        assert!(format!("{err:#}").contains(TRANSPORT_ENV));
    }
}
