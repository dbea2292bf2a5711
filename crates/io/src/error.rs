//! Why the I/O shell could not start or open a face. Each variant names the address
//! or path involved, because an operator reading the message must know which line
//! of the configuration (or which other process) to look at.

use std::io;
use std::net::SocketAddr;
use std::path::PathBuf;

use thiserror::Error;

/// Errors from [`Io::new`](crate::Io::new) and [`Io::create_face`](crate::Io::create_face).
/// A variant's message ends with the operating system's error, which is therefore
/// not also its `source`: a report of the whole chain would print it twice.
#[derive(Debug, Error)]
pub enum IoError {
    /// A UDP or TCP listener could not be bound (address in use, not local, no permission).
    #[error("cannot listen on {proto} {addr}: {error}")]
    Bind {
        /// `udp` or `tcp`.
        proto: &'static str,
        /// The configured address that could not be bound.
        addr: SocketAddr,
        /// The operating system's error.
        error: io::Error,
    },
    /// A live process already accepts connections on this Unix socket path.
    #[error("unix socket {path} is in use by another running process")]
    UnixInUse {
        /// The configured socket path.
        path: PathBuf,
    },
    /// Something that is not a socket sits at the Unix socket path; it is not ours to delete.
    #[error("{path} exists and is not a socket; refusing to replace it")]
    NotASocket {
        /// The configured socket path.
        path: PathBuf,
    },
    /// A step of setting up the Unix socket failed.
    #[error("unix socket {path}: cannot {action}: {error}")]
    Unix {
        /// The configured socket path.
        path: PathBuf,
        /// The step that failed (creating the directory, binding, setting permissions...).
        action: &'static str,
        /// The operating system's error.
        error: io::Error,
    },
    /// The face URI is not one this shell can open.
    #[error("bad face URI {uri:?}: {reason}")]
    BadUri {
        /// The URI as management received it.
        uri: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// UDP faces are sent from a listener socket, and none has the remote's address family.
    #[error("no UDP listener of the address family of {uri} to send from")]
    NoUdpChannel {
        /// The requested remote URI.
        uri: String,
    },
    /// A face to this remote exists with another number of UDP ports than asked
    /// ([`Io::create_face_ports`](crate::Io::create_face_ports)); it keeps those
    /// it was made with until it is destroyed.
    #[error("face {face} ({uri}) has {has} port(s), not {wanted}")]
    OtherPorts {
        /// The existing face.
        face: crate::FaceId,
        /// Its remote URI.
        uri: String,
        /// The ports it has.
        has: usize,
        /// The ports asked for.
        wanted: usize,
    },
    /// An outgoing TCP connection could not be started.
    #[error("cannot connect to {uri}: {error}")]
    Connect {
        /// The requested remote URI.
        uri: String,
        /// The operating system's error.
        error: io::Error,
    },
    /// The poller could not be created, or a socket not registered with it.
    #[error("cannot {action}: {error}")]
    Os {
        /// The operation that failed.
        action: &'static str,
        /// The operating system's error.
        error: io::Error,
    },
}
