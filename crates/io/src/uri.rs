//! Face URIs in NFD's canonical form (`udp4://192.0.2.1:6363`, `tcp6://[::1]:6363`),
//! because nfdc, NDNts and python-ndn print and send exactly these strings.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use crate::IoError;

/// NDN's registered port, used when a URI names no port (as NFD does).
pub const NDN_PORT: u16 = 6363;

/// Transport named by a face URI.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Scheme {
    Udp,
    Tcp,
}

impl Scheme {
    fn name(self) -> &'static str {
        match self {
            Scheme::Udp => "udp",
            Scheme::Tcp => "tcp",
        }
    }
}

/// Parses a remote URI for `create_face`. Host names are refused rather than
/// resolved, because resolving would block the forwarding loop. The remote must
/// be one unicast peer: a multicast or broadcast group, or the unspecified
/// address, would get a point-to-point face that reaches no single peer and
/// hears no replies (NFD refuses them too).
pub(crate) fn parse(uri: &str) -> Result<(Scheme, SocketAddr), IoError> {
    let bad = |reason: &'static str| IoError::BadUri { uri: uri.to_owned(), reason };
    let (scheme, rest) = uri.split_once("://").ok_or(bad("expected scheme://host:port"))?;
    let (scheme, family) = match scheme {
        "udp" => (Scheme::Udp, None),
        "udp4" => (Scheme::Udp, Some(4)),
        "udp6" => (Scheme::Udp, Some(6)),
        "tcp" => (Scheme::Tcp, None),
        "tcp4" => (Scheme::Tcp, Some(4)),
        "tcp6" => (Scheme::Tcp, Some(6)),
        _ => return Err(bad("unsupported scheme (udp4, udp6, tcp4 and tcp6 are)")),
    };
    let rest = rest.strip_suffix('/').unwrap_or(rest);
    let addr = if let Ok(addr) = rest.parse::<SocketAddr>() {
        addr
    } else {
        let host = rest.strip_prefix('[').and_then(|h| h.strip_suffix(']')).unwrap_or(rest);
        match host.parse::<IpAddr>() {
            Ok(ip) => SocketAddr::new(ip, NDN_PORT),
            // An address literal with a port that is not one (`:99999`, `:x`)
            // is named for what is wrong with it.
            Err(_) if rest.rsplit_once(':').is_some_and(|(h, _)| is_ip_literal(h)) => {
                return Err(bad("port must be a number from 1 to 65535"))
            }
            Err(_) => return Err(bad("host must be an IP address literal")),
        }
    };
    if addr.port() == 0 {
        return Err(bad("port 0 is not a remote endpoint"));
    }
    let ip = addr.ip().to_canonical();
    if ip.is_unspecified() {
        return Err(bad("the unspecified address is not a remote endpoint"));
    }
    if ip.is_multicast() || ip == IpAddr::from(std::net::Ipv4Addr::BROADCAST) {
        return Err(bad("multicast and broadcast faces are not supported (the remote must be one unicast peer)"));
    }
    let actual = if addr.is_ipv4() { 4 } else { 6 };
    if family.is_some_and(|f| f != actual) {
        return Err(bad("address family does not match the scheme"));
    }
    Ok((scheme, addr))
}

/// Checks a remote URI as [`crate::Io::create_face_ports`] will, `ports` being its
/// port-by-hash count (1 for an ordinary face), without opening anything: a
/// configuration file is refused whole, before any of it is applied, when one
/// of its faces could never be made. `Ok` tells whether the face would have
/// local scope (a loopback peer), which a command asking for local fields
/// must know before it makes the face.
pub fn check_remote(uri: &str, ports: usize) -> Result<bool, IoError> {
    parse_ports(uri, ports).map(|(_, addr)| is_local(addr.ip()))
}

/// [`parse`], and a port-by-hash face's `ports` checked against its scheme and
/// the port range.
pub(crate) fn parse_ports(uri: &str, ports: usize) -> Result<(Scheme, SocketAddr), IoError> {
    let (scheme, addr) = parse(uri)?;
    if ports > 1 && (scheme != Scheme::Udp || addr.port() as usize + ports - 1 > u16::MAX as usize) {
        return Err(IoError::BadUri { uri: uri.to_owned(), reason: "port-by-hash needs a UDP face whose ports end by 65535" });
    }
    Ok((scheme, addr))
}

/// An IPv4 address, or an IPv6 address in brackets, as a URI writes a host
/// before its port.
fn is_ip_literal(host: &str) -> bool {
    match host.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
        Some(v6) => v6.parse::<Ipv6Addr>().is_ok(),
        None => host.parse::<Ipv4Addr>().is_ok(),
    }
}

/// Formats an endpoint the way NFD does, e.g. `udp4://127.0.0.1:6363`.
pub(crate) fn format(scheme: Scheme, addr: SocketAddr) -> String {
    let family = if addr.is_ipv4() { 4 } else { 6 };
    format!("{}{}://{}", scheme.name(), family, addr)
}

/// May a peer at this address send `/localhost` commands? NFD grants local scope
/// to loopback peers only (Unix sockets are always local).
pub(crate) fn is_local(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4.is_loopback(),
        IpAddr::V6(v6) => v6.is_loopback() || v6.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_nfd_forms() {
        assert_eq!(parse("udp4://127.0.0.1:56363").unwrap(), (Scheme::Udp, "127.0.0.1:56363".parse().unwrap()));
        assert_eq!(parse("tcp6://[::1]:7000").unwrap(), (Scheme::Tcp, "[::1]:7000".parse().unwrap()));
        assert_eq!(parse("tcp://192.0.2.1").unwrap(), (Scheme::Tcp, "192.0.2.1:6363".parse().unwrap()));
        assert_eq!(parse("udp6://[::1]").unwrap(), (Scheme::Udp, "[::1]:6363".parse().unwrap()));
        assert_eq!(parse("udp4://10.0.0.1:9/").unwrap().1.port(), 9);
    }

    #[test]
    fn rejects_what_it_cannot_open() {
        let unopenable = ["ether://[01:02:03:04:05:06]", "unix:///run/nfd.sock", "udp4://example.com:6363", "udp6://127.0.0.1:1", "tcp4://127.0.0.1:0", "127.0.0.1:6363", "udp4://"];
        let not_one_peer = ["udp4://224.0.23.170:56363", "udp6://[ff02::1]:6363", "udp4://255.255.255.255:6363", "tcp4://0.0.0.0:6363", "tcp6://[::]:6363", "udp6://[::ffff:224.0.0.1]:6363"];
        for uri in unopenable.into_iter().chain(not_one_peer) {
            assert!(matches!(parse(uri), Err(IoError::BadUri { .. })), "{uri}");
        }
    }

    #[test]
    fn says_whether_the_host_or_the_port_is_wrong() {
        let reason = |uri: &str| match parse(uri) {
            Err(IoError::BadUri { reason, .. }) => reason,
            other => panic!("{uri}: {other:?}"),
        };
        for uri in ["udp4://127.0.0.1:99999", "tcp4://127.0.0.1:x", "udp6://[::1]:65536", "udp4://127.0.0.1:"] {
            assert_eq!(reason(uri), "port must be a number from 1 to 65535", "{uri}");
        }
        for uri in ["udp4://example.com:6363", "udp4://example.com", "udp4://1.2.3:6363", "udp6://[::1:6363"] {
            assert_eq!(reason(uri), "host must be an IP address literal", "{uri}");
        }
    }

    #[test]
    fn formats_round_trip() {
        for uri in ["udp4://127.0.0.1:6363", "tcp6://[::1]:40000"] {
            let (scheme, addr) = parse(uri).unwrap();
            assert_eq!(format(scheme, addr), uri);
        }
    }

    #[test]
    fn local_scope() {
        assert!(is_local("127.9.9.9".parse().unwrap()));
        assert!(is_local("::1".parse().unwrap()));
        assert!(is_local("::ffff:127.0.0.1".parse().unwrap()));
        assert!(!is_local("192.0.2.1".parse().unwrap()));
        assert_eq!(check_remote("udp4://127.0.0.1:6363", 1).ok(), Some(true));
        assert_eq!(check_remote("tcp6://[2001:db8::1]:6363", 1).ok(), Some(false));
        assert!(!is_local("::ffff:192.0.2.1".parse().unwrap()));
    }
}
