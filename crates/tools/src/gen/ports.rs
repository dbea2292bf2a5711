//! Where `trajan gen` sends and receives: a UDP socket to a forwarder, or a DPDK
//! port (with `--features dpdk`). Both move packets in bursts without blocking, so
//! one thread can drive a consumer and a producer side by side.

use std::io::ErrorKind;
use std::net::UdpSocket;

use anyhow::{bail, Context};
use bytes::Bytes;
use trajan_io::encap::Encap;
use trajan_wire::Name;

use crate::client::Client;
use crate::transport::Transport;

/// Most datagrams read per [`GenPort::recv`] call.
const UDP_BURST: usize = 32;

/// A non-blocking packet port.
pub trait GenPort {
    /// Queues or sends one NDN packet (or LpPacket); counts it as dropped when the
    /// port has no room.
    fn send(&mut self, pkt: &Bytes);
    /// Appends the NDN packets that have arrived (at most one burst) to `out`.
    fn recv(&mut self, out: &mut Vec<Bytes>);
    /// Pushes out what is queued.
    fn flush(&mut self);
    /// Packets the port could not send.
    fn dropped(&self) -> u64;
    /// Whether the port can carry packets yet (a DPDK link is up: a memif peer may
    /// take a moment to connect). `retry` asks a port that is not to try again.
    fn ready(&mut self, retry: bool) -> anyhow::Result<bool> {
        let _ = retry;
        Ok(true)
    }
}

/// A port as given on the command line: `udp://HOST:PORT` (a forwarder's UDP face)
/// or `dpdk:NAME[@ENCAP]` (an ethdev EAL knows, e.g. a `--vdev` of `--eal`, with its
/// own encapsulation instead of `--encap`'s).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PortSpec {
    /// `udp://HOST:PORT`: a forwarder's UDP face, as HOST:PORT.
    Udp(String),
    /// `dpdk:NAME[@ENCAP]`: the ethdev's name, and its own encapsulation if given (else `--encap`'s).
    Dpdk(String, Option<Encap>),
}

impl std::str::FromStr for PortSpec {
    type Err = anyhow::Error;

    fn from_str(s: &str) -> anyhow::Result<Self> {
        if let Some(spec) = s.strip_prefix("dpdk:") {
            let (name, encap) = match spec.rsplit_once('@') {
                Some((n, e)) => (n, Some(e.parse::<Encap>().map_err(anyhow::Error::msg)?)),
                None => (spec, None),
            };
            if name.is_empty() {
                bail!("`dpdk:` needs a port name, e.g. dpdk:net_memif0");
            }
            return Ok(PortSpec::Dpdk(name.to_owned(), encap));
        }
        match s.parse::<Transport>() {
            Ok(Transport::Udp(hp)) => Ok(PortSpec::Udp(hp)),
            _ => bail!("port {s:?} is neither udp://HOST:PORT nor dpdk:NAME"),
        }
    }
}

/// A UDP socket connected to the forwarder: one face.
pub struct UdpPort {
    sock: UdpSocket,
    buf: Vec<u8>,
    dropped: u64,
    /// The client that registered a prefix on this face (its socket is `sock`),
    /// and the prefix, to unregister when the port closes.
    registered: Option<(Client, Name)>,
}

impl UdpPort {
    /// Connects to `hostport`; with a `prefix`, first registers it on this socket's
    /// face (NFD's rib/register), so Interests under it come to this port.
    pub fn open(hostport: &str, prefix: Option<&Name>) -> anyhow::Result<UdpPort> {
        let mut client = Client::connect(&Transport::Udp(hostport.to_owned()))?;
        if let Some(p) = prefix {
            client.register(p).with_context(|| format!("registering {p} at udp://{hostport}"))?;
        }
        let sock = client.udp_socket().context("a one-port UDP client has a socket")?.try_clone()?;
        sock.set_nonblocking(true)?;
        Ok(UdpPort { sock, buf: vec![0; 65536], dropped: 0, registered: prefix.map(|p| (client, p.clone())) })
    }
}

impl Drop for UdpPort {
    /// Unregisters the prefix, as closing a stream face would. A UDP face
    /// outlives its socket, and the router would go on sending the prefix's
    /// Interests to it: the producer of a later run, registered on a face of
    /// its own, would get none of them.
    fn drop(&mut self) {
        if let Some((client, prefix)) = &mut self.registered {
            // The client waits for the answer on the socket, blocking with a timeout.
            let _ = self.sock.set_nonblocking(false);
            let _ = client.unregister(prefix);
        }
    }
}

impl GenPort for UdpPort {
    fn send(&mut self, pkt: &Bytes) {
        if self.sock.send(pkt).is_err() {
            self.dropped += 1;
        }
    }

    fn recv(&mut self, out: &mut Vec<Bytes>) {
        for _ in 0..UDP_BURST {
            match self.sock.recv(&mut self.buf) {
                Ok(n) => out.push(Bytes::copy_from_slice(&self.buf[..n])),
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                // ICMP port unreachable and the like: nothing to read now.
                Err(_) => break,
            }
        }
    }

    fn flush(&mut self) {}

    fn dropped(&self) -> u64 {
        self.dropped
    }
}

#[cfg(feature = "dpdk")]
pub use dpdk::DpdkPorts;

#[cfg(feature = "dpdk")]
mod dpdk {
    use std::sync::Arc;

    use bytes::Bytes;
    use trajan_dpdk::face::Face;
    use trajan_dpdk::{Eal, EalConfig, Mempool, Port, DATA_ROOM};
    use trajan_io::encap::{Link, LinkAddrs};

    use super::GenPort;

    /// EAL and the pool of the generator's DPDK ports.
    pub struct DpdkPorts {
        eal: Eal,
        pool: Arc<Mempool>,
    }

    impl DpdkPorts {
        /// Starts EAL with `args` and a pool for `ports` ports.
        pub fn start(args: &[String]) -> anyhow::Result<DpdkPorts> {
            let eal = Eal::init(&EalConfig { args: args.to_vec(), no_huge_mb: 256 })?;
            eal.register_thread();
            let pool = Arc::new(Mempool::new(&eal, "gen_pool", 32767, DATA_ROOM)?);
            Ok(DpdkPorts { eal, pool })
        }

        /// Opens port `name` as a face speaking `link` (its local MAC is the port's).
        pub fn open(&self, name: &str, mut link: Link) -> anyhow::Result<DpdkPort> {
            let id = self.eal.port_id(name)?;
            let port = Port::start(&self.eal, id, 1, 1024, Arc::clone(&self.pool))?;
            link.addrs = LinkAddrs { local_mac: port.mac(), ..link.addrs };
            let queue = port.queue(0).expect("started with one queue");
            Ok(DpdkPort { face: Face::new(queue, link), port })
        }
    }

    /// One DPDK port of the generator.
    pub struct DpdkPort {
        face: Face,
        port: Port,
    }

    impl GenPort for DpdkPort {
        fn send(&mut self, pkt: &Bytes) {
            self.face.send(pkt);
        }

        fn recv(&mut self, out: &mut Vec<Bytes>) {
            self.face.recv(out);
        }

        fn flush(&mut self) {
            self.face.flush();
        }

        fn dropped(&self) -> u64 {
            self.face.counters.dropped_out
        }

        fn ready(&mut self, retry: bool) -> anyhow::Result<bool> {
            if self.port.link_up() {
                return Ok(true);
            }
            if retry {
                self.port.restart()?;
            }
            Ok(false)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn port_specs() {
        assert_eq!("udp://127.0.0.1:6363".parse::<PortSpec>().unwrap(), PortSpec::Udp("127.0.0.1:6363".into()));
        assert_eq!("dpdk:net_memif0".parse::<PortSpec>().unwrap(), PortSpec::Dpdk("net_memif0".into(), None));
        assert_eq!("dpdk:0000:03:00.0@udp4".parse::<PortSpec>().unwrap(), PortSpec::Dpdk("0000:03:00.0".into(), Some(Encap::Udp4)));
        assert!("dpdk:x@ip6".parse::<PortSpec>().is_err());
        assert!("dpdk:".parse::<PortSpec>().is_err());
        assert!("tcp://127.0.0.1:6363".parse::<PortSpec>().is_err());
    }
}
