//! Starting DPDK's Environment Abstraction Layer once per process.

use std::ffi::CString;
use std::os::raw::c_char;
use std::sync::atomic::{AtomicBool, Ordering};

use nix::sched::{sched_getaffinity, sched_setaffinity};
use nix::unistd::Pid;

use crate::{cstring, ffi, strerror, DpdkError};

/// Set by the first [`Eal::init`]: EAL cannot be started twice in one process.
static STARTED: AtomicBool = AtomicBool::new(false);

/// What EAL is started with.
#[derive(Clone, Debug, Default)]
pub struct EalConfig {
    /// EAL's own arguments (`--vdev net_ring0`, `-a 0000:03:00.0`, `--no-huge`, ...),
    /// passed through unchanged after Trajan's defaults.
    pub args: Vec<String>,
    /// Memory (MiB) EAL reserves when it runs without hugepages: it must hold the
    /// mempools, so the caller sizes it from them.
    pub no_huge_mb: usize,
}

/// Proof that EAL is running in this process; every port and pool needs one.
#[derive(Debug)]
pub struct Eal {
    _private: (),
}

/// Free 2 MiB (or other size) hugepages, from /proc/meminfo; 0 if unreadable.
fn free_hugepages() -> u64 {
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    meminfo
        .lines()
        .find_map(|l| l.strip_prefix("HugePages_Free:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0)
}

impl EalConfig {
    /// The full argument list: a program name; `--no-huge` when no hugepages are
    /// free and the user did not choose, with `-m N` unless the user gave a size; no files under /var/run/dpdk, so several
    /// Trajan processes can run at once (`--in-memory`, or `--no-shconf` without
    /// hugepages, which `--in-memory` refuses) unless a file prefix or process type
    /// is given; and the main lcore mapped to every CPU (EAL must not pin the calling
    /// thread: Trajan places its own threads, and [`Eal::init`] restores the
    /// caller's affinity).
    pub fn argv(&self) -> Vec<String> {
        let has = |flag: &str| self.args.iter().any(|a| a == flag || a.starts_with(&format!("{flag}=")));
        let mut argv = vec!["trajan".to_owned()];
        let no_huge = has("--no-huge") || (!has("--huge-dir") && free_hugepages() == 0);
        if no_huge && !has("--no-huge") {
            argv.push("--no-huge".to_owned());
        }
        if no_huge && !has("-m") && !has("--socket-mem") {
            argv.extend(["-m".to_owned(), self.no_huge_mb.max(64).to_string()]);
        }
        if !has("--file-prefix") && !has("--proc-type") && !has("--in-memory") && !has("--no-shconf") {
            argv.push(if no_huge { "--no-shconf" } else { "--in-memory" }.to_owned());
        }
        if !has("-l") && !has("--lcores") && !has("-c") {
            let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
            argv.push(format!("--lcores=0@(0-{})", cpus.saturating_sub(1)));
        }
        argv.extend(self.args.iter().cloned());
        argv
    }
}

impl Eal {
    /// Starts EAL. Fails if it was started before in this process, or with DPDK's
    /// reason and a hint when `rte_eal_init` refuses.
    pub fn init(cfg: &EalConfig) -> Result<Eal, DpdkError> {
        if STARTED.swap(true, Ordering::SeqCst) {
            return Err(DpdkError::AlreadyInitialised);
        }
        let args = cfg.argv();
        let owned: Vec<CString> = args.iter().map(|a| cstring(a)).collect::<Result<_, _>>()?;
        let mut argv: Vec<*mut c_char> = owned.iter().map(|a| a.as_ptr() as *mut c_char).collect();
        tracing::info!(?args, "starting DPDK EAL");
        // EAL sets the calling thread's affinity to its main lcore's CPUs; Trajan (or
        // taskset) placed this thread already, so the placement is restored after.
        let affinity = sched_getaffinity(Pid::from_raw(0)).ok();
        // SAFETY: argv holds argc valid NUL-terminated strings that outlive the call
        // (EAL may permute the pointer array, which we own, but not the strings).
        // STARTED guarantees this runs once per process.
        let rc = unsafe { ffi::rte_eal_init(argv.len() as i32, argv.as_mut_ptr()) };
        if rc < 0 {
            // SAFETY: reads DPDK's per-thread errno, set by the failed call.
            let code = unsafe { ffi::trajan_errno() };
            let hint = if args.iter().any(|a| a == "--no-huge") {
                "Check the EAL arguments (dpdk.eal_args) and that this process may lock memory (root or CAP_IPC_LOCK)."
            } else {
                "Reserve hugepages (DPDK_HUGEPAGES=512 scripts/install-deps.sh) or add \"--no-huge\" to dpdk.eal_args; run as root."
            };
            return Err(DpdkError::EalInit { args, reason: strerror(code), hint });
        }
        if let Some(set) = affinity {
            if let Err(e) = sched_setaffinity(Pid::from_raw(0), &set) {
                tracing::warn!(%e, "cannot restore this thread's CPU affinity after EAL start");
            }
        }
        Ok(Eal { _private: () })
    }

    /// Registers the calling thread with EAL so that its mempool accesses use a
    /// per-thread cache (a thread not known to EAL goes to the shared ring for
    /// every mbuf). Harmless to call twice; failure only costs speed.
    pub fn register_thread(&self) {
        crate::register_thread();
    }

    /// The id of the port EAL knows as `name` (`net_ring0`, `0000:03:00.0`, ...).
    pub fn port_id(&self, name: &str) -> Result<u16, DpdkError> {
        let c = cstring(name)?;
        let mut id = 0u16;
        // SAFETY: c is a valid C string; id is a valid out-pointer.
        let rc = unsafe { ffi::rte_eth_dev_get_port_by_name(c.as_ptr(), &mut id) };
        if rc != 0 {
            return Err(DpdkError::NoSuchPort(name.to_owned()));
        }
        Ok(id)
    }

    /// The most RX/TX queue pairs port `id` can use without its peer's help (1 for
    /// a device without multi-queue support, and for memif, whose queues exist only
    /// if the peer opens as many), so that a caller can give each worker one where
    /// it can.
    pub fn max_queues(&self, id: u16) -> Result<u16, DpdkError> {
        // SAFETY: reads the device information of port `id` into the shim's own struct.
        let rc = unsafe { ffi::trajan_port_max_queues(id) };
        if rc < 0 {
            return Err(DpdkError::Port { port: id, step: "rte_eth_dev_info_get".to_owned(), reason: strerror(rc) });
        }
        Ok((rc as u16).max(1))
    }

    /// Two new ports joined back to back by `queues` (1 to 16) pairs of rings
    /// (`<name>_a`, `<name>_b`): what one sends on its queue i the other receives on
    /// its queue i. A cable inside one process, for tests and benchmarks; with
    /// several queues the sender picks the receiving queue, as a NIC's RSS would.
    pub fn ring_pair(&self, name: &str, size: u32, queues: u16) -> Result<(u16, u16), DpdkError> {
        let c = cstring(name)?;
        let mut ports = [0u16; 2];
        // SAFETY: c is a valid C string, ports has room for the two ids written.
        let rc = unsafe { ffi::trajan_ring_pair(c.as_ptr(), size, queues, ports.as_mut_ptr()) };
        if rc < 0 {
            return Err(DpdkError::RingPair { name: name.to_owned(), reason: strerror(rc) });
        }
        Ok((ports[0], ports[1]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn argv_adds_defaults_only_where_the_user_chose_nothing() {
        let cfg = EalConfig { args: vec!["--vdev=net_null0".into()], no_huge_mb: 256 };
        let a = cfg.argv();
        assert_eq!(a[0], "trajan");
        assert!(a.contains(&"--in-memory".to_owned()) != a.contains(&"--no-shconf".to_owned()));
        assert!(a.iter().any(|x| x.starts_with("--lcores=0@(0-")));
        assert_eq!(a.last().unwrap(), "--vdev=net_null0");
        let cfg = EalConfig { args: vec!["--file-prefix=x".into(), "-l".into(), "1".into(), "--no-huge".into()], no_huge_mb: 256 };
        let a = cfg.argv();
        assert!(!a.contains(&"--in-memory".to_owned()) && !a.contains(&"--no-shconf".to_owned()));
        assert!(!a.iter().any(|x| x.starts_with("--lcores")));
        assert_eq!(a.iter().filter(|x| *x == "--no-huge").count(), 1);
        assert!(a.windows(2).any(|w| w == ["-m", "256"]), "--no-huge without a size gets one: {a:?}");
    }
}
