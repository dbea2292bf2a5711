//! Where the forwarding pipeline's time goes, measured inside
//! [`crate::Forwarder::process_burst`] and [`crate::Forwarder::tick`] as they
//! run, phase by phase.
//!
//! Timing each table call alone (as the benchmark's isolated stages do) shows
//! what a call costs with cold caches and no neighbours, and those figures add
//! up to twice an exchange's real time. The phases here are the pipeline's own
//! loops, timed at their boundaries (a few clock reads per burst, none per
//! packet), so they add up to the time the engine took, and show which part of
//! a real burst costs what. Off unless asked for: the engine's hot path then
//! only tests that it is off, once per phase.

use std::time::Instant;

/// Nanoseconds the forwarder spent in each phase of its pipeline since phase
/// timing was turned on ([`crate::Forwarder::time_phases`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PhaseNs {
    /// Decoding a burst's packets: each name parsed, hashed once, and the
    /// loads of its table lines started.
    pub decode: u64,
    /// Each packet's own pipeline, in arrival order. An Interest: scope,
    /// HopLimit and loop checks, the one PCCT probe that answers from the CS,
    /// aggregates or creates the PIT entry. A Data: its PIT match, the CS
    /// insert (with the eviction it makes) and the sends downstream. A Nack
    /// and its retry. The end of the burst (buffers let go) counts here too.
    pub packets: u64,
    /// The FIB lookups of the Interests that reached the FIB, one pipelined
    /// burst at a time.
    pub fib: u64,
    /// The strategy's choice for each of those Interests and its sends
    /// upstream (out-records, output).
    pub forward: u64,
    /// [`crate::Forwarder::tick`]: pending Interests expired.
    pub timers: u64,
}

impl PhaseNs {
    /// The sum of every phase: the time the engine ran while timed.
    pub fn total(&self) -> u64 {
        self.decode + self.packets + self.fib + self.forward + self.timers
    }

    /// Each phase's time since `earlier` (an earlier reading of the same
    /// counters), for a caller that attributes stretches of a run to what it
    /// fed the engine then. A reading from before timing was restarted is
    /// not earlier: a phase it exceeds counts zero.
    pub fn since(&self, earlier: &PhaseNs) -> PhaseNs {
        PhaseNs {
            decode: self.decode.saturating_sub(earlier.decode),
            packets: self.packets.saturating_sub(earlier.packets),
            fib: self.fib.saturating_sub(earlier.fib),
            forward: self.forward.saturating_sub(earlier.forward),
            timers: self.timers.saturating_sub(earlier.timers),
        }
    }
}

/// Adds another stretch's phases, phase by phase, for a caller that sums
/// stretches of a run (see [`PhaseNs::since`]).
impl std::ops::AddAssign for PhaseNs {
    fn add_assign(&mut self, more: PhaseNs) {
        self.decode += more.decode;
        self.packets += more.packets;
        self.fib += more.fib;
        self.forward += more.forward;
        self.timers += more.timers;
    }
}

/// Nanoseconds from `*mark` to now, moving the mark to now: one clock read
/// ends a phase and starts the next. Saturating (a run does not last 584 years).
#[inline]
pub(crate) fn lap(mark: &mut Instant) -> u64 {
    let now = Instant::now();
    let ns = now.duration_since(*mark).as_nanos();
    *mark = now;
    u64::try_from(ns).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn since_and_total_are_per_phase() {
        let a = PhaseNs { decode: 1, packets: 2, fib: 3, forward: 4, timers: 5 };
        let b = PhaseNs { decode: 11, packets: 22, fib: 33, forward: 44, timers: 55 };
        assert_eq!(b.since(&a), PhaseNs { decode: 10, packets: 20, fib: 30, forward: 40, timers: 50 });
        assert_eq!(a.total(), 15);
        let mut sum = a;
        sum += b.since(&a);
        assert_eq!(sum, b);
        assert_eq!(a.since(&b), PhaseNs::default(), "not an earlier reading");
    }
}
