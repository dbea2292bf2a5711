//! The workers' FIB: one replica per NUMA node, shared read-only by that node's
//! workers and updated by the I/O thread while they forward.
//!
//! Augustus (`shared/seeds/augustus-paper.txt` §3.1) keeps the FIB read-only on
//! the fast path and replicates it once per NUMA node, so that every lookup reads
//! local memory and no core owns a private copy of a table that may hold millions
//! of prefixes. Each replica is a [`FibWriter`] (double-buffered, `left-right`):
//! workers read it through their own [`FibReader`] without locks, and a route
//! change is logged and published to all of a node's workers at once.
//!
//! Placement of the memory: each replica is built by a short-lived thread pinned
//! to a CPU of its node, so the kernel's first-touch policy puts its pages there.
//! Updates are then applied by the I/O thread, so memory that later updates
//! allocate comes from the I/O thread's node (small next to a built FIB; a
//! `rebuild` re-creates it there too).

use trajan_tables::{FaceId, Fib, FibReader, FibWriter, NextHop};
use trajan_wire::Name;

use crate::topology::Placement;

/// One replica per NUMA node that runs workers.
pub struct NodeFibs {
    replicas: Vec<Replica>,
    /// For each worker, its replica's index.
    of_worker: Vec<usize>,
}

struct Replica {
    node: usize,
    writer: FibWriter,
}

impl NodeFibs {
    /// Replicates `fib` once per NUMA node of `placement` for `workers` workers
    /// (workers beyond `placement`, unpinned as in tests, share the first replica).
    pub fn new(fib: &Fib, placement: &[Placement], workers: usize) -> NodeFibs {
        let mut replicas: Vec<Replica> = Vec::new();
        let mut of_worker = Vec::with_capacity(workers);
        for w in 0..workers {
            let place = placement.get(w);
            let node = place.map_or(0, |p| p.cpu.node);
            let index = match replicas.iter().position(|r| r.node == node) {
                Some(i) => i,
                None => {
                    replicas.push(Replica {
                        node,
                        writer: build_on(fib, place.map(|p| p.cpu.id)),
                    });
                    replicas.len() - 1
                }
            };
            of_worker.push(index);
        }
        NodeFibs {
            replicas,
            of_worker,
        }
    }

    /// A reader of worker `w`'s node replica, for that worker alone.
    pub fn reader(&self, w: usize) -> FibReader {
        self.replicas[self.of_worker[w]].writer.reader()
    }

    /// The NUMA nodes that hold a replica.
    pub fn nodes(&self) -> impl Iterator<Item = usize> + '_ {
        self.replicas.iter().map(|r| r.node)
    }

    /// Makes `prefix`'s next hops exactly `nexthops` on every replica, visible to
    /// every worker when this returns.
    pub fn set_nexthops(&mut self, prefix: &Name, nexthops: &[NextHop]) {
        self.set_routes(std::iter::once((prefix, nexthops)));
    }

    /// [`NodeFibs::set_nexthops`] for each (prefix, next hops) of `routes`,
    /// published once for them all: a publish waits for every worker reading
    /// the replica to leave it, and one route's change may rewrite the entries
    /// of every name under it (a default route's, all of them).
    pub fn set_routes<'a>(&mut self, routes: impl Iterator<Item = (&'a Name, &'a [NextHop])> + Clone) {
        for r in &mut self.replicas {
            for (prefix, nexthops) in routes.clone() {
                r.writer.set_nexthops(prefix, nexthops);
            }
            r.writer.publish();
        }
    }

    /// Drops `face` from every route of every replica.
    pub fn remove_face(&mut self, face: FaceId) {
        for r in &mut self.replicas {
            r.writer.remove_face(face);
            r.writer.publish();
        }
    }
}

/// A shared copy of `fib`, built (both of its buffers) by a thread pinned to `cpu`
/// so that its pages are local to that CPU's node.
fn build_on(fib: &Fib, cpu: Option<usize>) -> FibWriter {
    std::thread::scope(|s| {
        s.spawn(|| {
            if let Some(id) = cpu {
                if !core_affinity::set_for_current(core_affinity::CoreId { id }) {
                    tracing::warn!(
                        cpu = id,
                        "cannot pin the FIB replica's builder; its memory may be remote"
                    );
                }
            }
            let (mut writer, _) = FibWriter::new(fib.clone());
            // left-right re-copies one buffer from the other at its second publish
            // (`Absorb::sync_with`): do both now, so that copy is made here too
            // and not by the I/O thread at the first route change.
            writer.publish();
            writer.publish();
            writer
        })
        .join()
        .expect("building a FIB replica does not panic")
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::Cpu;

    fn placed(worker: usize, node: usize) -> Placement {
        Placement {
            worker,
            cpu: Cpu {
                id: 0,
                socket: node,
                core: worker,
                node,
            },
        }
    }

    fn hops(r: &FibReader, prefix: &str) -> Vec<FaceId> {
        let fib = r.read().unwrap();
        fib.lpm(&prefix.parse().unwrap())
            .map(|(_, e)| e.nexthops.iter().map(|n| n.face).collect())
            .unwrap_or_default()
    }

    #[test]
    fn one_replica_per_node_and_updates_reach_every_worker() {
        let mut fib = Fib::new();
        fib.add_nexthop(&"/a".parse().unwrap(), 7, 0);
        let placement = [placed(0, 0), placed(1, 1), placed(2, 0), placed(3, 1)];
        let mut fibs = NodeFibs::new(&fib, &placement, 4);
        assert_eq!(fibs.nodes().collect::<Vec<_>>(), [0, 1]);
        let readers: Vec<FibReader> = (0..4).map(|w| fibs.reader(w)).collect();
        for r in &readers {
            assert_eq!(
                hops(r, "/a/x"),
                [7],
                "every worker starts with the control FIB"
            );
        }
        fibs.set_nexthops(
            &"/a".parse().unwrap(),
            &[NextHop { face: 8, cost: 1 }, NextHop { face: 9, cost: 0 }],
        );
        fibs.set_nexthops(&"/b".parse().unwrap(), &[NextHop { face: 7, cost: 0 }]);
        for r in &readers {
            assert_eq!(hops(r, "/a/x"), [9, 8], "set replaces, sorted by cost");
            assert_eq!(hops(r, "/b"), [7]);
        }
        fibs.remove_face(7);
        fibs.set_nexthops(&"/a".parse().unwrap(), &[]);
        for r in &readers {
            assert!(hops(r, "/b").is_empty() && hops(r, "/a/x").is_empty());
        }
    }

    /// Routes set together are all visible once the call returns, on every
    /// node's replica, each with its own next hops.
    #[test]
    fn routes_set_together_reach_every_worker() {
        let placement = [placed(0, 0), placed(1, 1)];
        let mut fibs = NodeFibs::new(&Fib::new(), &placement, 2);
        let readers: Vec<FibReader> = (0..2).map(|w| fibs.reader(w)).collect();
        let prefixes: Vec<Name> = (0..100).map(|i| format!("/p/{i}").parse().unwrap()).collect();
        let sets: Vec<[NextHop; 1]> = (0..100).map(|i| [NextHop { face: 1000 + i, cost: 0 }]).collect();
        fibs.set_routes(prefixes.iter().zip(sets.iter().map(|h| &h[..])));
        for r in &readers {
            for i in [0, 57, 99] {
                assert_eq!(hops(r, &format!("/p/{i}/x")), [1000 + i as FaceId]);
            }
        }
    }

    #[test]
    fn unplaced_workers_share_one_replica() {
        let fibs = NodeFibs::new(&Fib::new(), &[], 3);
        assert_eq!(fibs.nodes().count(), 1);
    }
}
