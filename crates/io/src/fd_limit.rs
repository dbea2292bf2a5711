//! The process's limit on open descriptors (`RLIMIT_NOFILE`), which bounds the
//! faces as surely as [`IoConfig::max_faces`](crate::IoConfig::max_faces) does:
//! every TCP or Unix face, listener and dialed connection costs one. The soft
//! limit is often 1,024 (a shell's default, systemd's `LimitNOFILE=1024:524288`),
//! far below the default face limit, so idle connections of peers would use up
//! the descriptors first and lock out new peers and local applications alike.

use std::os::fd::BorrowedFd;

use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
use nix::sys::resource::{getrlimit, setrlimit, Resource};

/// Fewest descriptors kept out of the face limit, for what is not a network
/// peer's face: listeners, the poller, local applications' and management's
/// faces, workers' pollers, log files.
const MIN_RESERVE: usize = 32;

/// Most descriptors kept out of the face limit: beyond this many, what is not
/// a network peer's face does not grow with the limit.
const MAX_RESERVE: usize = 1024;

/// Raises the soft limit on open descriptors to the hard limit, which an
/// unprivileged process may do, and returns the limit now in force (`None`
/// when it cannot be read). A limit that cannot be raised stays as it was.
pub(crate) fn raise() -> Option<u64> {
    let (soft, hard) = getrlimit(Resource::RLIMIT_NOFILE).ok()?;
    if soft >= hard {
        return Some(soft);
    }
    match setrlimit(Resource::RLIMIT_NOFILE, hard, hard) {
        Ok(()) => Some(hard),
        Err(e) => {
            tracing::debug!(error = %e, soft, hard, "cannot raise the open-file limit");
            Some(soft)
        }
    }
}

/// The most faces `limit` descriptors allow: the limit less a reserve (an
/// eighth of it, within [`MIN_RESERVE`] and [`MAX_RESERVE`]) for descriptors
/// that are not network peers' faces, so that peers reach the face limit, and
/// give way to new peers there, before the descriptors run out.
pub(crate) fn face_cap(limit: u64) -> usize {
    let limit = usize::try_from(limit).unwrap_or(usize::MAX);
    limit.saturating_sub((limit / 8).clamp(MIN_RESERVE, MAX_RESERVE))
}

/// Whether an error means the process (EMFILE) or the system (ENFILE) has no
/// descriptor left to give.
pub(crate) fn exhausted(e: &std::io::Error) -> bool {
    matches!(e.raw_os_error(), Some(code) if code == nix::libc::EMFILE || code == nix::libc::ENFILE)
}

/// Whether `listener` has a connection waiting to be accepted. `accept` claims
/// a descriptor before it looks, so with none left it fails the same whether
/// a connection waits or not, and a face must give way only for one that does.
pub(crate) fn connection_waiting(listener: BorrowedFd<'_>) -> bool {
    let mut fds = [PollFd::new(listener, PollFlags::POLLIN)];
    matches!(poll(&mut fds, PollTimeout::ZERO), Ok(n) if n > 0)
}

#[cfg(test)]
mod tests {
    use super::face_cap;

    #[test]
    fn the_reserve_is_an_eighth_of_the_limit_within_its_bounds() {
        assert_eq!(face_cap(1024), 1024 - 128);
        assert_eq!(face_cap(100), 100 - 32);
        assert_eq!(face_cap(20), 0);
        assert_eq!(face_cap(1 << 20), (1 << 20) - 1024);
        assert_eq!(face_cap(u64::MAX), usize::MAX - 1024);
    }
}
