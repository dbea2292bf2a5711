//! A hierarchical timing wheel: the tables' only notion of "later". CCN-par found
//! periodic aging scans to be a throughput killer, so nothing here ever walks all
//! timers: scheduling and cancelling are O(1), and advancing costs one step per
//! occupied slot reached plus one per timer fired or moved down a level.
//!
//! Six levels of 64 slots, each slot of level `L` spanning 64^L ms, cover 2^36 ms
//! (about 795 days) ahead of the wheel's time; later deadlines wait on an overflow
//! list that is re-sorted once per such span. A timer sits at the level of the
//! highest 6-bit group in which its deadline differs from the wheel's time, so every
//! timer on a lower level is due before any timer on a higher one, and the next slot
//! to handle is always the lowest occupied slot of the lowest non-empty level
//! (found with one `trailing_zeros` per level).

use crate::ilist::{Linked, Links, List};
use crate::slab::{Key, Slab};

const SLOT_BITS: u32 = 6;
const SLOTS: usize = 1 << SLOT_BITS;
const LEVELS: usize = 6;
/// Deadlines at least this far from the wheel's time (in the high bits) overflow.
const SPAN_MASK: u64 = (1 << (SLOT_BITS as usize * LEVELS)) - 1;
/// List of timers whose deadline had already passed when they were scheduled.
const DUE: u16 = (LEVELS * SLOTS) as u16;
/// List of timers beyond the wheel's span.
const OVERFLOW: u16 = DUE + 1;

/// Names a scheduled timer for [`TimerWheel::cancel`]. The generation inside makes a
/// stale id (its timer fired or was cancelled) miss instead of hitting a newer timer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TimerId(Key);

struct Node<T> {
    deadline: u64,
    list: u16,
    links: Links,
    item: T,
}

impl<T> Linked for Node<T> {
    fn links(&self) -> &Links {
        &self.links
    }
    fn links_mut(&mut self) -> &mut Links {
        &mut self.links
    }
}

/// A timer wheel holding items of type `T` (the PIT stores entry ids in one).
pub struct TimerWheel<T> {
    nodes: Slab<Node<T>>,
    /// Every level's slots, then [`DUE`], then [`OVERFLOW`].
    lists: Vec<List>,
    /// Bit `s` of `occupied[L]` is set when slot `s` of level `L` is non-empty.
    occupied: [u64; LEVELS],
    /// The wheel's time: every timer with a deadline at or before it has fired or
    /// is on the due list.
    now: u64,
    /// A lower bound of the due list's deadlines.
    due_min: u64,
}

impl<T> TimerWheel<T> {
    /// An empty wheel whose time starts at `now_ms`.
    pub fn new(now_ms: u64) -> Self {
        TimerWheel {
            nodes: Slab::new(),
            lists: vec![List::default(); OVERFLOW as usize + 1],
            occupied: [0; LEVELS],
            now: now_ms,
            due_min: u64::MAX,
        }
    }

    /// Number of scheduled timers.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// True when no timer is scheduled.
    pub fn is_empty(&self) -> bool {
        self.nodes.len() == 0
    }

    /// Schedules `item` to fire once the wheel reaches `deadline_ms`. A deadline that
    /// has already passed fires on the next [`TimerWheel::advance`].
    pub fn schedule(&mut self, deadline_ms: u64, item: T) -> TimerId {
        let key = self.nodes.insert(Node { deadline: deadline_ms, list: 0, links: Links::default(), item });
        if deadline_ms <= self.now {
            self.due_min = self.due_min.min(deadline_ms);
            self.link(key.idx, DUE);
        } else {
            self.link(key.idx, self.list_for(deadline_ms));
        }
        TimerId(key)
    }

    /// Cancels a timer, returning its item; `None` if it already fired or was cancelled.
    pub fn cancel(&mut self, id: TimerId) -> Option<T> {
        self.nodes.get(id.0)?;
        self.unlink(id.0.idx);
        self.nodes.remove(id.0).map(|n| n.item)
    }

    /// Moves the wheel's time to `now_ms` and appends to `fired` every item whose
    /// deadline is at or before it. Time never moves backwards: an earlier `now_ms`
    /// only fires the timers that were scheduled in the past.
    pub fn advance(&mut self, now_ms: u64, fired: &mut Vec<T>) {
        let mut due = std::mem::take(&mut self.lists[DUE as usize]);
        while let Some(idx) = due.head() {
            due.unlink(&mut self.nodes, idx);
            self.fire(idx, fired);
        }
        self.due_min = u64::MAX;
        if now_ms <= self.now {
            return;
        }
        while let Some((list, start)) = self.next_expiration() {
            if start > now_ms {
                break;
            }
            // Every timer left anywhere is due at or after `start`, so the wheel's
            // time may jump there; the slot's timers then fire or move down.
            // The list is detached first because an overflow timer may go back onto it.
            self.now = start;
            self.clear_occupied(list);
            let mut slot = std::mem::take(&mut self.lists[list as usize]);
            while let Some(idx) = slot.head() {
                slot.unlink(&mut self.nodes, idx);
                let deadline = self.nodes.at(idx).deadline;
                if deadline <= now_ms {
                    self.fire(idx, fired);
                } else {
                    self.link(idx, self.list_for(deadline));
                }
            }
        }
        self.now = now_ms;
    }

    /// A lower bound of the earliest deadline, for the I/O loop's poll timeout. It is
    /// exact for timers under 64 ms away; further ones report the time their slot is
    /// reached, when they move to a finer level.
    pub fn next_deadline(&self) -> Option<u64> {
        let due = (!self.lists[DUE as usize].is_empty()).then_some(self.due_min);
        let wheel = self.next_expiration().map(|(_, start)| start);
        match (due, wheel) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// The list a deadline after the wheel's time belongs on.
    fn list_for(&self, deadline: u64) -> u16 {
        debug_assert!(deadline > self.now);
        let differing = (self.now ^ deadline) | (SLOTS as u64 - 1);
        let level = ((63 - differing.leading_zeros()) / SLOT_BITS) as usize;
        if level >= LEVELS {
            return OVERFLOW;
        }
        let slot = (deadline >> (SLOT_BITS as usize * level)) as usize & (SLOTS - 1);
        (level * SLOTS + slot) as u16
    }

    /// The next list to handle and the time it is reached, ignoring the due list.
    fn next_expiration(&self) -> Option<(u16, u64)> {
        for (level, &bits) in self.occupied.iter().enumerate() {
            if bits != 0 {
                let slot = bits.trailing_zeros() as u64;
                let shift = SLOT_BITS as usize * level;
                let level_start = self.now & !((1u64 << (shift + SLOT_BITS as usize)) - 1);
                return Some(((level * SLOTS) as u16 + slot as u16, level_start + (slot << shift)));
            }
        }
        if self.lists[OVERFLOW as usize].is_empty() {
            return None;
        }
        // Overflow timers lie in a later span, so the current span is not the last.
        Some((OVERFLOW, (self.now | SPAN_MASK) + 1))
    }

    fn link(&mut self, idx: u32, list: u16) {
        self.nodes.at_mut(idx).list = list;
        self.lists[list as usize].push_front(&mut self.nodes, idx);
        if list < DUE {
            self.occupied[list as usize / SLOTS] |= 1 << (list as usize % SLOTS);
        }
    }

    fn unlink(&mut self, idx: u32) {
        let list = self.nodes.at(idx).list;
        self.lists[list as usize].unlink(&mut self.nodes, idx);
        if self.lists[list as usize].is_empty() {
            self.clear_occupied(list);
        }
    }

    fn clear_occupied(&mut self, list: u16) {
        if list < DUE {
            self.occupied[list as usize / SLOTS] &= !(1 << (list as usize % SLOTS));
        }
    }

    /// Removes an unlinked timer, handing its item over.
    fn fire(&mut self, idx: u32, fired: &mut Vec<T>) {
        let key = self.nodes.key_at(idx);
        fired.extend(self.nodes.remove(key).map(|n| n.item));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    fn advance(w: &mut TimerWheel<u32>, now: u64) -> Vec<u32> {
        let mut fired = Vec::new();
        w.advance(now, &mut fired);
        fired.sort_unstable();
        fired
    }

    #[test]
    fn fires_at_deadline_not_before() {
        let mut w = TimerWheel::new(1000);
        w.schedule(1005, 1);
        w.schedule(1070, 2);
        w.schedule(5000, 3);
        assert_eq!(w.len(), 3);
        assert_eq!(w.next_deadline(), Some(1005));
        assert_eq!(advance(&mut w, 1004), Vec::<u32>::new());
        assert_eq!(advance(&mut w, 1005), [1]);
        assert!(w.next_deadline().unwrap() <= 1070);
        assert_eq!(advance(&mut w, 1069), Vec::<u32>::new());
        assert_eq!(advance(&mut w, 1070), [2]);
        assert_eq!(advance(&mut w, 4999), Vec::<u32>::new());
        assert_eq!(w.next_deadline(), Some(5000), "a near timer's deadline is exact");
        assert_eq!(advance(&mut w, 9999), [3]);
        assert_eq!(w.len(), 0);
        assert_eq!(w.next_deadline(), None);
    }

    #[test]
    fn past_deadline_fires_on_next_advance_even_without_time_moving() {
        let mut w = TimerWheel::new(500);
        w.schedule(500, 1);
        w.schedule(10, 2);
        assert_eq!(w.next_deadline(), Some(10));
        assert_eq!(advance(&mut w, 500), [1, 2]);
        w.schedule(500, 3);
        assert_eq!(advance(&mut w, 400), [3], "an earlier clock still fires overdue timers");
    }

    #[test]
    fn cancel_and_stale_ids() {
        let mut w = TimerWheel::new(0);
        let a = w.schedule(100, 1);
        let b = w.schedule(100, 2);
        assert_eq!(w.cancel(a), Some(1));
        assert_eq!(w.cancel(a), None);
        assert_eq!(advance(&mut w, 100), [2]);
        assert_eq!(w.cancel(b), None, "a fired timer's id is stale");
        let c = w.schedule(200, 3);
        assert_eq!(w.cancel(a), None, "a stale id does not hit a timer reusing its slot");
        assert_eq!(w.cancel(b), None);
        assert_eq!(w.len(), 1);
        assert_eq!(w.cancel(c), Some(3));
        assert_eq!(w.next_deadline(), None);
    }

    #[test]
    fn deadlines_beyond_the_span_and_at_the_end_of_time() {
        let mut w = TimerWheel::new(7);
        w.schedule(1 << 40, 1);
        w.schedule(u64::MAX, 2);
        w.schedule((1 << 36) + 3, 3);
        assert_eq!(advance(&mut w, 1 << 36), Vec::<u32>::new());
        assert_eq!(advance(&mut w, (1 << 36) + 3), [3]);
        assert_eq!(advance(&mut w, (1 << 40) - 1), Vec::<u32>::new());
        assert_eq!(advance(&mut w, 1 << 40), [1]);
        assert_eq!(advance(&mut w, u64::MAX - 1), Vec::<u32>::new());
        assert_eq!(advance(&mut w, u64::MAX), [2]);
        assert!(w.is_empty());
    }

    #[derive(Debug, Clone)]
    enum Op {
        /// A deadline this far after the current time, or before it when the flag is set.
        Schedule(u64, bool),
        Cancel(usize),
        Advance(u64),
    }

    fn op() -> impl Strategy<Value = Op> {
        let delta = prop_oneof![
            4 => 0u64..70,
            3 => 0u64..5000,
            2 => 0u64..400_000,
            1 => 0u64..(1 << 38),
        ];
        prop_oneof![
            5 => (delta.clone(), any::<bool>()).prop_map(|(d, past)| Op::Schedule(d, past)),
            2 => any::<usize>().prop_map(Op::Cancel),
            3 => delta.prop_map(Op::Advance),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        /// The wheel fires exactly what a sorted map of (deadline, item) fires.
        #[test]
        fn matches_sorted_reference(start in 0u64..(1 << 40), ops in proptest::collection::vec(op(), 1..200)) {
            let mut w = TimerWheel::new(start);
            let mut now = start;
            let mut reference: BTreeMap<(u64, u32), ()> = BTreeMap::new();
            let mut ids: Vec<(TimerId, u64, u32)> = Vec::new();
            for (n, op) in ops.into_iter().enumerate() {
                let item = n as u32;
                match op {
                    Op::Schedule(d, past) => {
                        let deadline = if past { now.saturating_sub(d) } else { now + d };
                        ids.push((w.schedule(deadline, item), deadline, item));
                        reference.insert((deadline, item), ());
                    }
                    Op::Cancel(i) if !ids.is_empty() => {
                        let (id, deadline, item) = ids[i % ids.len()];
                        let expect = reference.remove(&(deadline, item)).map(|_| item);
                        prop_assert_eq!(w.cancel(id), expect);
                    }
                    Op::Cancel(_) => {}
                    Op::Advance(d) => {
                        now += d;
                        let mut fired = Vec::new();
                        w.advance(now, &mut fired);
                        fired.sort_unstable();
                        let due: Vec<(u64, u32)> = reference.range(..=(now, u32::MAX)).map(|(k, _)| *k).collect();
                        let mut expect: Vec<u32> = due.iter().map(|k| k.1).collect();
                        expect.sort_unstable();
                        for k in due {
                            reference.remove(&k);
                        }
                        prop_assert_eq!(fired, expect);
                    }
                }
                prop_assert_eq!(w.len(), reference.len());
                let earliest = reference.keys().next().map(|k| k.0);
                match (w.next_deadline(), earliest) {
                    (None, None) => {}
                    (Some(lb), Some(e)) => prop_assert!(lb <= e, "next_deadline {} after earliest {}", lb, e),
                    (got, want) => prop_assert!(false, "next_deadline {:?} vs earliest {:?}", got, want),
                }
            }
        }
    }
}
