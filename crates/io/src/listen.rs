//! Opening the listening sockets, with the options a forwarder needs and errors that
//! name the address or path that failed.

use std::fs;
use std::io;
use std::net::SocketAddr;
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use nix::sys::socket::{setsockopt, sockopt};
use socket2::{Domain, Protocol, Socket, Type};

use crate::IoError;

/// Pending connections the kernel may hold for a TCP or Unix listener.
const BACKLOG: i32 = 1024;

/// Receive buffer asked for on UDP sockets: a burst from many peers should wait in the
/// kernel rather than be dropped while the loop is busy. The kernel caps it at
/// `net.core.rmem_max`, which is fine.
const UDP_RECV_BUFFER: usize = 4 << 20;

fn ip_socket(addr: SocketAddr, ty: Type, proto: Protocol) -> io::Result<Socket> {
    let s = Socket::new(Domain::for_address(addr), ty, Some(proto))?;
    if addr.is_ipv6() {
        // Keep [::] from also claiming the IPv4 port, so both can be configured.
        s.set_only_v6(true)?;
    }
    s.set_nonblocking(true)?;
    Ok(s)
}

/// Binds a UDP channel socket.
pub(crate) fn udp(addr: SocketAddr) -> Result<mio::net::UdpSocket, IoError> {
    let open = || -> io::Result<Socket> {
        let s = ip_socket(addr, Type::DGRAM, Protocol::UDP)?;
        // Best effort: a smaller buffer only means more drops under overload.
        let _ = s.set_recv_buffer_size(UDP_RECV_BUFFER);
        s.bind(&addr.into())?;
        Ok(s)
    };
    let s = open().map_err(|error| IoError::Bind { proto: "udp", addr, error })?;
    Ok(mio::net::UdpSocket::from_std(s.into()))
}

/// Binds a UDP channel socket, with the ICMP errors its datagrams meet queued
/// on it (IP_RECVERR / IPV6_RECVERR), each with the destination it was for: on
/// a socket shared by every face and connected to none, that queue is the only
/// way to learn that a peer's port closed (a killed producer), so that its face
/// can close rather than draw Interests until it idles out. A listener's queue
/// is read by the I/O thread, a hash face port's by the worker reading the
/// port; whoever reads must, as entries left there take the receive buffer's
/// room.
pub(crate) fn udp_channel(addr: SocketAddr) -> Result<mio::net::UdpSocket, IoError> {
    let sock = udp(addr)?;
    let on = if addr.is_ipv4() { setsockopt(&sock, sockopt::Ipv4RecvErr, &true) } else { setsockopt(&sock, sockopt::Ipv6RecvErr, &true) };
    on.map_err(|e| IoError::Bind { proto: "udp", addr, error: e.into() })?;
    Ok(sock)
}

/// Tries to find `count` free consecutive ports when the kernel picks the first.
const PORT_RANGE_TRIES: usize = 16;

/// Binds the `count` consecutive ports of a UDP-port-by-hash face from `base`,
/// each as a channel socket ([`udp_channel`]). With port 0 the kernel picks the
/// first port and the others must follow it; a range that collides with
/// another socket is given up and another tried.
pub(crate) fn udp_ports(base: SocketAddr, count: usize) -> Result<Vec<mio::net::UdpSocket>, IoError> {
    let range_error = |error| IoError::Bind { proto: "udp", addr: base, error };
    if count == 0 || base.port() as usize + count - 1 > u16::MAX as usize {
        return Err(range_error(io::Error::new(io::ErrorKind::InvalidInput, format!("{count} ports do not fit from this port"))));
    }
    let tries = if base.port() == 0 { PORT_RANGE_TRIES } else { 1 };
    for _ in 0..tries {
        let first = udp_channel(base)?;
        let port = first.local_addr().map_err(range_error)?.port();
        let mut socks = vec![first];
        for k in 1..count {
            let Some(p) = port.checked_add(k as u16) else { break };
            let mut addr = base;
            addr.set_port(p);
            match udp_channel(addr) {
                Ok(s) => socks.push(s),
                Err(e) if base.port() != 0 => return Err(e),
                Err(_) => break,
            }
        }
        if socks.len() == count {
            return Ok(socks);
        }
    }
    Err(range_error(io::Error::new(io::ErrorKind::AddrInUse, format!("found no {count} free consecutive ports"))))
}

/// Binds a TCP listener. SO_REUSEADDR lets a restarted router rebind while old
/// connections sit in TIME_WAIT.
pub(crate) fn tcp(addr: SocketAddr) -> Result<mio::net::TcpListener, IoError> {
    let open = || -> io::Result<Socket> {
        let s = ip_socket(addr, Type::STREAM, Protocol::TCP)?;
        s.set_reuse_address(true)?;
        s.bind(&addr.into())?;
        s.listen(BACKLOG)?;
        Ok(s)
    };
    let s = open().map_err(|error| IoError::Bind { proto: "tcp", addr, error })?;
    Ok(mio::net::TcpListener::from_std(s.into()))
}

/// The socket file a Unix listener created; removed again when the listener goes,
/// unless another process has since replaced it.
#[derive(Debug)]
pub(crate) struct SocketFile {
    path: PathBuf,
    dev: u64,
    ino: u64,
}

impl Drop for SocketFile {
    fn drop(&mut self) {
        if let Ok(m) = fs::symlink_metadata(&self.path) {
            if m.dev() == self.dev && m.ino() == self.ino {
                let _ = fs::remove_file(&self.path);
            }
        }
    }
}

/// Binds the Unix listener local applications connect to. A socket file left by a
/// process that died is removed; one a live process still listens on is refused,
/// and so is any path that is not a socket at all.
pub(crate) fn unix(path: &Path) -> Result<(mio::net::UnixListener, SocketFile), IoError> {
    let fail = |action: &'static str| move |error| IoError::Unix { path: path.to_owned(), action, error };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        fs::create_dir_all(dir).map_err(fail("create its directory"))?;
    }
    match fs::symlink_metadata(path) {
        Ok(m) if !m.file_type().is_socket() => return Err(IoError::NotASocket { path: path.to_owned() }),
        Ok(_) => match std::os::unix::net::UnixStream::connect(path) {
            Ok(_) => return Err(IoError::UnixInUse { path: path.to_owned() }),
            Err(e) if e.kind() == io::ErrorKind::ConnectionRefused => {
                fs::remove_file(path).map_err(fail("remove the stale socket file"))?;
            }
            Err(e) => return Err(fail("check whether the existing socket is live")(e)),
        },
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(fail("inspect the path")(e)),
    }
    let open = || -> io::Result<Socket> {
        let s = Socket::new(Domain::UNIX, Type::STREAM, None)?;
        s.set_nonblocking(true)?;
        s.bind(&socket2::SockAddr::unix(path)?)?;
        s.listen(BACKLOG)?;
        Ok(s)
    };
    let s = open().map_err(fail("bind"))?;
    let meta = fs::symlink_metadata(path).map_err(fail("inspect the new socket"))?;
    let file = SocketFile { path: path.to_owned(), dev: meta.dev(), ino: meta.ino() };
    // Any local user may talk to the forwarder, as with NFD.
    fs::set_permissions(path, fs::Permissions::from_mode(0o666)).map_err(fail("chmod 0666"))?;
    let std_listener = std::os::unix::net::UnixListener::from(std::os::fd::OwnedFd::from(s));
    Ok((mio::net::UnixListener::from_std(std_listener), file))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stale_socket_is_replaced_live_one_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/dir/nfd.sock");
        let (live, file) = unix(&path).unwrap();
        let mode = fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o666);
        assert!(matches!(unix(&path), Err(IoError::UnixInUse { .. })));
        // Closing the listener without removing the file leaves a stale socket.
        drop(live);
        std::mem::forget(file);
        assert!(path.exists());
        let (_l, file) = unix(&path).unwrap();
        drop(file);
        assert!(!path.exists(), "the socket file is removed with its listener");
    }

    #[test]
    fn refuses_to_replace_a_regular_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("not-a-socket");
        fs::write(&path, b"keep me").unwrap();
        assert!(matches!(unix(&path), Err(IoError::NotASocket { .. })));
        assert_eq!(fs::read(&path).unwrap(), b"keep me");
    }

    #[test]
    fn hash_ports_are_consecutive() {
        let socks = udp_ports("127.0.0.1:0".parse().unwrap(), 3).unwrap();
        let ports: Vec<u16> = socks.iter().map(|s| s.local_addr().unwrap().port()).collect();
        assert_eq!(ports, vec![ports[0], ports[0] + 1, ports[0] + 2]);
        let taken = socks[1].local_addr().unwrap();
        assert!(udp_ports(taken, 1).is_err(), "a fixed port in use is an error");
        assert!(udp_ports("127.0.0.1:65535".parse().unwrap(), 2).is_err(), "past the last port");
        assert!(udp_ports("127.0.0.1:0".parse().unwrap(), 0).is_err());
    }

    #[test]
    fn bind_error_names_the_address() {
        let taken = tcp("127.0.0.1:0".parse().unwrap()).unwrap();
        let addr = taken.local_addr().unwrap();
        let err = tcp(addr).unwrap_err();
        assert!(err.to_string().contains(&addr.to_string()), "{err}");
    }
}
