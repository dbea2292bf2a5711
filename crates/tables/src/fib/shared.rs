//! A FIB shared between one control thread that updates it and forwarding threads
//! that read it without locks.
//!
//! Design: double buffering with an operation log, via the `left-right` crate. Two
//! complete [`Fib`]s exist; readers use one while the writer applies updates to the
//! other. [`FibWriter::publish`] swaps them with one atomic pointer store, waits
//! until no reader is still inside the old copy, then replays the same operations on
//! it. So:
//!
//! - a reader never sees a half-applied update: everything logged between two
//!   publishes appears at once, including block expansions and rebuilds that touch
//!   many cache lines (which in-place RCU on the Caesar structures would have to
//!   order word by word);
//! - a read costs two increments of the reader's own epoch counter and a fence per
//!   [`FibReader::read`] — amortised over a burst of lookups — and never waits;
//! - an update costs applying it twice, and memory is two FIBs. A 100 M-prefix FIB
//!   that cannot afford the second copy uses [`Fib`] alone (single owner).
//!
//! The alternative the issue suggested — an immutable snapshot swapped with
//! `arc-swap` plus an overlay log of recent updates — either copies the whole FIB
//! per publish or makes every lookup consult the overlay too (an LPM over the union
//! with deletions), which is the forwarding fast path paying for the control plane.

use std::ops::Deref;

use left_right::{Absorb, ReadGuard, ReadHandle, WriteHandle};
use smallvec::SmallVec;
use trajan_wire::Name;

use super::{Fib, NextHop};
use crate::FaceId;

/// An update, logged so it can be replayed on the second copy.
enum FibOp {
    Add(Name, FaceId, u64),
    Remove(Name, FaceId),
    Set(Name, SmallVec<[NextHop; 4]>),
    RemoveFace(FaceId),
    Rebuild,
}

impl Absorb<FibOp> for Fib {
    fn absorb_first(&mut self, op: &mut FibOp, _other: &Self) {
        match op {
            FibOp::Add(prefix, face, cost) => self.add_nexthop(prefix, *face, *cost),
            FibOp::Remove(prefix, face) => {
                self.remove_nexthop(prefix, *face);
            }
            FibOp::Set(prefix, nexthops) => self.set_nexthops(prefix, nexthops),
            FibOp::RemoveFace(face) => {
                self.remove_face(*face);
            }
            FibOp::Rebuild => self.rebuild(),
        }
    }

    fn sync_with(&mut self, first: &Self) {
        *self = first.clone();
    }
}

/// The single writer of a shared FIB. Updates are invisible to readers until
/// [`FibWriter::publish`].
pub struct FibWriter {
    handle: WriteHandle<Fib, FibOp>,
}

/// A forwarding thread's handle on a shared FIB. Clone one per thread (a handle is
/// `Send` but not `Sync`: each thread has its own epoch counter).
#[derive(Clone)]
pub struct FibReader {
    handle: ReadHandle<Fib>,
}

/// A consistent view of the FIB; the writer's next publish waits for it to drop, so
/// hold it for a burst, not indefinitely.
pub type FibReadGuard<'a> = ReadGuard<'a, Fib>;

impl FibWriter {
    /// Shares `fib` (its contents and variant) between a writer and readers.
    pub fn new(fib: Fib) -> (FibWriter, FibReader) {
        let (w, r) = left_right::new_from_empty(fib);
        (FibWriter { handle: w }, FibReader { handle: r })
    }

    /// Logs [`Fib::add_nexthop`].
    pub fn add_nexthop(&mut self, prefix: &Name, face: FaceId, cost: u64) {
        self.handle.append(FibOp::Add(prefix.clone(), face, cost));
    }

    /// Logs [`Fib::remove_nexthop`].
    pub fn remove_nexthop(&mut self, prefix: &Name, face: FaceId) {
        self.handle.append(FibOp::Remove(prefix.clone(), face));
    }

    /// Logs [`Fib::set_nexthops`].
    pub fn set_nexthops(&mut self, prefix: &Name, nexthops: &[NextHop]) {
        self.handle.append(FibOp::Set(prefix.clone(), nexthops.iter().cloned().collect()));
    }

    /// Logs [`Fib::remove_face`].
    pub fn remove_face(&mut self, face: FaceId) {
        self.handle.append(FibOp::RemoveFace(face));
    }

    /// Logs [`Fib::rebuild`].
    pub fn rebuild(&mut self) {
        self.handle.append(FibOp::Rebuild);
    }

    /// Makes every logged update visible to readers at once.
    pub fn publish(&mut self) {
        self.handle.publish();
    }

    /// A new reader handle.
    pub fn reader(&self) -> FibReader {
        FibReader { handle: (*self.handle).clone() }
    }
}

impl FibReader {
    /// The FIB as last published; `None` once the writer is gone.
    #[inline]
    pub fn read(&self) -> Option<FibReadGuard<'_>> {
        self.handle.enter()
    }
}

/// How a forwarder reaches its FIB, so the engine's code is the same whether it owns
/// the FIB (the single-threaded daemon, the control replica, benchmarks) or reads a
/// replica that the workers of one NUMA node share (Augustus §3.1: the FIB is
/// read-only on the fast path, one copy per node). Resolved statically: owning
/// costs nothing; sharing costs the reader's epoch update per [`FibSource::view`].
pub trait FibSource {
    /// A consistent view, held for one burst of lookups.
    type View<'a>: Deref<Target = Fib>
    where
        Self: 'a;

    /// The FIB as of now; `None` only when a shared FIB's writer is gone (the
    /// daemon is stopping), which forwards nothing.
    fn view(&self) -> Option<Self::View<'_>>;

    /// A face went away: an owned FIB drops its next hops; a shared one leaves that
    /// to its writer, which publishes the removal to every reader at once.
    fn face_removed(&mut self, face: FaceId);
}

impl FibSource for Fib {
    type View<'a> = &'a Fib;

    #[inline]
    fn view(&self) -> Option<&Fib> {
        Some(self)
    }

    fn face_removed(&mut self, face: FaceId) {
        self.remove_face(face);
    }
}

impl FibSource for FibReader {
    type View<'a> = FibReadGuard<'a>;

    #[inline]
    fn view(&self) -> Option<FibReadGuard<'_>> {
        self.read()
    }

    fn face_removed(&mut self, _face: FaceId) {}
}
