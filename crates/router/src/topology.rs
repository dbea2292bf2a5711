//! The machine's shape, read from sysfs, and where forwarding workers go on it.
//!
//! Augustus' main lesson (`shared/seeds/augustus-paper.txt` §5) was that its best
//! numbers needed hand-placed threads. Trajan reads sockets, NUMA nodes, physical
//! cores, SMT siblings and caches from `/sys/devices/system/{cpu,node}` and places
//! workers itself: one per physical core first (SMT siblings share a core's L1/L2 and
//! execution units, so a second worker there gains little), alternating between
//! sockets so both memory controllers and L3s work, and SMT siblings only once every
//! core has a worker. The sysfs root is a parameter so tests can describe machines
//! this one is not.

use std::collections::BTreeMap;
use std::fmt;
use std::io;
use std::path::Path;

/// One logical CPU (hardware thread).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cpu {
    /// The kernel's CPU number, as `sched_setaffinity` takes it.
    pub id: usize,
    /// Physical package (socket).
    pub socket: usize,
    /// Core number within its socket; (socket, core) names a physical core.
    pub core: usize,
    /// NUMA node whose memory is local to this CPU.
    pub node: usize,
}

/// One cache, with the CPUs sharing it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cache {
    /// Cache level, 1 for L1 and so on (0 when sysfs does not say).
    pub level: u8,
    /// "Data", "Instruction" or "Unified".
    pub kind: String,
    /// Size in KiB.
    pub size_kib: u64,
    /// Ids of the CPUs sharing it.
    pub cpus: Vec<usize>,
}

/// The machine as sysfs describes it: online CPUs and distinct caches.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Topology {
    /// Online CPUs, by id.
    pub cpus: Vec<Cpu>,
    /// Each distinct cache once, sorted by level, kind and CPUs.
    pub caches: Vec<Cache>,
}

/// Where one worker runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Placement {
    /// The worker's index, from 0.
    pub worker: usize,
    /// The CPU the worker is pinned to.
    pub cpu: Cpu,
}

impl Topology {
    /// This machine.
    pub fn detect() -> io::Result<Topology> {
        Topology::from_sysfs(Path::new("/sys"))
    }

    /// The machine described by the sysfs tree under `root` (normally `/sys`).
    pub fn from_sysfs(root: &Path) -> io::Result<Topology> {
        let cpu_dir = root.join("devices/system/cpu");
        let online = parse_cpu_list(&std::fs::read_to_string(cpu_dir.join("online"))?)
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "unreadable online CPU list"))?;
        let mut node_of: BTreeMap<usize, usize> = BTreeMap::new();
        if let Ok(nodes) = std::fs::read_dir(root.join("devices/system/node")) {
            for n in nodes.flatten() {
                let name = n.file_name().to_string_lossy().into_owned();
                let Some(id) = name.strip_prefix("node").and_then(|s| s.parse::<usize>().ok()) else { continue };
                let list = std::fs::read_to_string(n.path().join("cpulist")).unwrap_or_default();
                for cpu in parse_cpu_list(&list).unwrap_or_default() {
                    node_of.insert(cpu, id);
                }
            }
        }
        let mut cpus = Vec::with_capacity(online.len());
        let mut caches: Vec<Cache> = Vec::new();
        for id in online {
            let dir = cpu_dir.join(format!("cpu{id}"));
            let socket = read_number(&dir.join("topology/physical_package_id")).unwrap_or(0);
            let core = read_number(&dir.join("topology/core_id")).unwrap_or(id);
            cpus.push(Cpu { id, socket, core, node: node_of.get(&id).copied().unwrap_or(0) });
            let Ok(entries) = std::fs::read_dir(dir.join("cache")) else { continue };
            for e in entries.flatten() {
                if !e.file_name().to_string_lossy().starts_with("index") {
                    continue;
                }
                let p = e.path();
                let read = |f: &str| std::fs::read_to_string(p.join(f)).map(|s| s.trim().to_owned()).unwrap_or_default();
                let cache = Cache {
                    level: read("level").parse().unwrap_or(0),
                    kind: read("type"),
                    size_kib: read("size").trim_end_matches('K').parse().unwrap_or(0),
                    cpus: parse_cpu_list(&read("shared_cpu_list")).unwrap_or_else(|| vec![id]),
                };
                if !caches.contains(&cache) {
                    caches.push(cache);
                }
            }
        }
        caches.sort_by(|a, b| (a.level, &a.kind, &a.cpus).cmp(&(b.level, &b.kind, &b.cpus)));
        Ok(Topology { cpus, caches })
    }

    /// Distinct sockets.
    pub fn sockets(&self) -> usize {
        self.distinct(|c| c.socket)
    }

    /// Distinct NUMA nodes.
    pub fn nodes(&self) -> usize {
        self.distinct(|c| c.node)
    }

    /// Distinct physical cores.
    pub fn physical_cores(&self) -> usize {
        self.distinct(|c| (c.socket, c.core))
    }

    fn distinct<K: Ord>(&self, key: impl Fn(&Cpu) -> K) -> usize {
        let mut keys: Vec<K> = self.cpus.iter().map(key).collect();
        keys.sort();
        keys.dedup();
        keys.len()
    }

    /// The default worker count: one per physical core.
    pub fn default_workers(&self) -> usize {
        self.physical_cores().max(1)
    }

    /// Where `workers` workers go: distinct physical cores first, alternating between
    /// sockets, then the cores' SMT siblings in the same order, then (more workers
    /// than CPUs) round again. Deterministic, so a restart places workers the same way.
    pub fn place(&self, workers: usize) -> Vec<Placement> {
        // Per socket, its physical cores in order; per core, its hardware threads.
        let mut sockets: BTreeMap<usize, BTreeMap<usize, Vec<&Cpu>>> = BTreeMap::new();
        for c in &self.cpus {
            sockets.entry(c.socket).or_default().entry(c.core).or_default().push(c);
        }
        let mut order: Vec<&Cpu> = Vec::with_capacity(self.cpus.len());
        let max_threads = sockets.values().flat_map(|cores| cores.values().map(Vec::len)).max().unwrap_or(0);
        let max_cores = sockets.values().map(BTreeMap::len).max().unwrap_or(0);
        for thread in 0..max_threads {
            for core in 0..max_cores {
                for cores in sockets.values() {
                    if let Some(cpu) = cores.values().nth(core).and_then(|threads| threads.get(thread)) {
                        order.push(cpu);
                    }
                }
            }
        }
        if order.is_empty() {
            return Vec::new();
        }
        (0..workers).map(|w| Placement { worker: w, cpu: order[w % order.len()].clone() }).collect()
    }

    /// An explicit placement on the listed CPUs, one worker each; errors on a CPU
    /// that is not online, so a typo does not silently run unpinned.
    pub fn place_on(&self, cpu_ids: &[usize]) -> Result<Vec<Placement>, String> {
        cpu_ids
            .iter()
            .enumerate()
            .map(|(worker, id)| match self.cpus.iter().find(|c| c.id == *id) {
                Some(cpu) => Ok(Placement { worker, cpu: cpu.clone() }),
                None => Err(format!("CPU {id} is not online (online: {})", format_cpu_list(self.cpus.iter().map(|c| c.id)))),
            })
            .collect()
    }
}

impl fmt::Display for Topology {
    /// One line for the start-up log: counts, SMT, and each cache level once.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let smt = self.cpus.len() / self.physical_cores().max(1);
        write!(
            f,
            "{} socket(s), {} NUMA node(s), {} physical core(s), {} CPU(s) ({} thread(s) per core)",
            self.sockets(),
            self.nodes(),
            self.physical_cores(),
            self.cpus.len(),
            smt
        )?;
        let mut seen: Vec<(u8, &str)> = Vec::new();
        for c in &self.caches {
            if seen.contains(&(c.level, c.kind.as_str())) {
                continue;
            }
            seen.push((c.level, c.kind.as_str()));
            let n = self.caches.iter().filter(|d| d.level == c.level && d.kind == c.kind).count();
            let kind = match c.kind.as_str() {
                "Data" => "d",
                "Instruction" => "i",
                _ => "",
            };
            write!(f, "; L{}{} {} KiB x{} shared by {} CPU(s)", c.level, kind, c.size_kib, n, c.cpus.len())?;
        }
        Ok(())
    }
}

impl fmt::Display for Placement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let c = &self.cpu;
        write!(f, "worker {} on cpu {} (socket {}, core {}, node {})", self.worker, c.id, c.socket, c.core, c.node)
    }
}

fn read_number(path: &Path) -> Option<usize> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

/// Parses the kernel's CPU list format ("0-3,8,10-11"). `None` on anything else,
/// and on ranges so large they cannot describe a real machine.
pub fn parse_cpu_list(s: &str) -> Option<Vec<usize>> {
    const MAX_CPUS: usize = 1 << 16;
    let mut out = Vec::new();
    for part in s.trim().split(',').filter(|p| !p.is_empty()) {
        let (lo, hi) = match part.split_once('-') {
            Some((a, b)) => (a.trim().parse().ok()?, b.trim().parse().ok()?),
            None => {
                let v: usize = part.trim().parse().ok()?;
                (v, v)
            }
        };
        if lo > hi || hi >= MAX_CPUS || out.len() + (hi - lo) >= MAX_CPUS {
            return None;
        }
        out.extend(lo..=hi);
    }
    Some(out)
}

/// Formats CPU ids in the kernel's list format, for messages.
pub fn format_cpu_list(ids: impl IntoIterator<Item = usize>) -> String {
    ids.into_iter().map(|i| i.to_string()).collect::<Vec<_>>().join(",")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    /// A fake sysfs: `cpus` as (socket, core) per CPU id, NUMA node = socket,
    /// per-core L1d/L2 and a per-socket L3.
    fn fake_sysfs(cpus: &[(usize, usize)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let cpu_dir = root.join("devices/system/cpu");
        std::fs::create_dir_all(&cpu_dir).unwrap();
        std::fs::write(cpu_dir.join("online"), format!("0-{}\n", cpus.len() - 1)).unwrap();
        let siblings = |pred: &dyn Fn(&(usize, usize)) -> bool| {
            format_cpu_list(cpus.iter().enumerate().filter(|(_, c)| pred(c)).map(|(i, _)| i))
        };
        for (id, &(socket, core)) in cpus.iter().enumerate() {
            let d = cpu_dir.join(format!("cpu{id}"));
            std::fs::create_dir_all(d.join("topology")).unwrap();
            std::fs::write(d.join("topology/physical_package_id"), format!("{socket}\n")).unwrap();
            std::fs::write(d.join("topology/core_id"), format!("{core}\n")).unwrap();
            let caches = [
                (1, "Data", 48, siblings(&|c| *c == (socket, core))),
                (2, "Unified", 2048, siblings(&|c| *c == (socket, core))),
                (3, "Unified", 32768, siblings(&|c| c.0 == socket)),
            ];
            for (i, (level, kind, size, shared)) in caches.iter().enumerate() {
                let c: PathBuf = d.join(format!("cache/index{i}"));
                std::fs::create_dir_all(&c).unwrap();
                std::fs::write(c.join("level"), format!("{level}\n")).unwrap();
                std::fs::write(c.join("type"), format!("{kind}\n")).unwrap();
                std::fs::write(c.join("size"), format!("{size}K\n")).unwrap();
                std::fs::write(c.join("shared_cpu_list"), format!("{shared}\n")).unwrap();
            }
            let node = root.join(format!("devices/system/node/node{socket}"));
            std::fs::create_dir_all(&node).unwrap();
            std::fs::write(node.join("cpulist"), format!("{}\n", siblings(&|c| c.0 == socket))).unwrap();
        }
        dir
    }

    /// Two sockets × two cores × two SMT threads, numbered as Linux does on Intel:
    /// first every core's first thread, then the siblings.
    fn two_socket_smt() -> Vec<(usize, usize)> {
        vec![(0, 0), (0, 1), (1, 0), (1, 1), (0, 0), (0, 1), (1, 0), (1, 1)]
    }

    #[test]
    fn reads_two_socket_smt_machine() {
        let dir = fake_sysfs(&two_socket_smt());
        let t = Topology::from_sysfs(dir.path()).unwrap();
        assert_eq!((t.sockets(), t.nodes(), t.physical_cores(), t.cpus.len()), (2, 2, 4, 8));
        assert_eq!(t.cpus[6], Cpu { id: 6, socket: 1, core: 0, node: 1 });
        // 4 L1d + 4 L2 (one per core, shared by its 2 threads) + 2 L3 (one per socket).
        assert_eq!(t.caches.len(), 10);
        let l3: Vec<_> = t.caches.iter().filter(|c| c.level == 3).map(|c| c.cpus.clone()).collect();
        assert_eq!(l3, vec![vec![0, 1, 4, 5], vec![2, 3, 6, 7]]);
        assert_eq!(t.default_workers(), 4);
        let line = t.to_string();
        assert!(line.starts_with("2 socket(s), 2 NUMA node(s), 4 physical core(s), 8 CPU(s) (2 thread(s) per core)"), "{line}");
        assert!(line.contains("L3 32768 KiB x2 shared by 4 CPU(s)"), "{line}");
    }

    #[test]
    fn places_on_distinct_cores_across_sockets_before_siblings() {
        let dir = fake_sysfs(&two_socket_smt());
        let t = Topology::from_sysfs(dir.path()).unwrap();
        let cpus = |n| t.place(n).iter().map(|p| p.cpu.id).collect::<Vec<_>>();
        assert_eq!(cpus(2), vec![0, 2], "one worker per socket");
        assert_eq!(cpus(4), vec![0, 2, 1, 3], "every physical core before any sibling");
        assert_eq!(cpus(6), vec![0, 2, 1, 3, 4, 6], "siblings only when the cores are used up");
        assert_eq!(cpus(9), vec![0, 2, 1, 3, 4, 6, 5, 7, 0], "beyond the CPUs: round again");
        let cores: Vec<_> = t.place(4).iter().map(|p| (p.cpu.socket, p.cpu.core)).collect();
        let mut distinct = cores.clone();
        distinct.sort();
        distinct.dedup();
        assert_eq!(distinct.len(), 4);
    }

    #[test]
    fn two_core_vm_without_numa_dirs() {
        let dir = fake_sysfs(&[(0, 0), (0, 1)]);
        std::fs::remove_dir_all(dir.path().join("devices/system/node")).unwrap();
        let t = Topology::from_sysfs(dir.path()).unwrap();
        assert_eq!((t.sockets(), t.nodes(), t.physical_cores(), t.cpus.len()), (1, 1, 2, 2));
        assert_eq!(t.place(2).iter().map(|p| p.cpu.id).collect::<Vec<_>>(), vec![0, 1]);
        assert_eq!(t.default_workers(), 2);
    }

    #[test]
    fn explicit_cores_are_checked() {
        let dir = fake_sysfs(&[(0, 0), (0, 1)]);
        let t = Topology::from_sysfs(dir.path()).unwrap();
        assert_eq!(t.place_on(&[1, 0]).unwrap().iter().map(|p| p.cpu.id).collect::<Vec<_>>(), vec![1, 0]);
        assert!(t.place_on(&[0, 5]).unwrap_err().contains("CPU 5 is not online"));
    }

    #[test]
    fn this_machine_is_readable() {
        let t = Topology::detect().unwrap();
        assert!(!t.cpus.is_empty());
        assert!(t.physical_cores() >= 1 && t.physical_cores() <= t.cpus.len());
        assert_eq!(t.place(1).len(), 1);
    }

    #[test]
    fn cpu_lists_parse_and_reject_garbage() {
        assert_eq!(parse_cpu_list("0-3,8,10-11\n"), Some(vec![0, 1, 2, 3, 8, 10, 11]));
        assert_eq!(parse_cpu_list(""), Some(vec![]));
        assert_eq!(parse_cpu_list("3-1"), None);
        assert_eq!(parse_cpu_list("x"), None);
        assert_eq!(parse_cpu_list("0-99999999999"), None);
    }
}
