//! Forwarding strategies, chosen per name prefix: best-route (NFD's default),
//! multicast, and dynamic (CCN-par's weighted multipath, [`crate::measurements`]).
//! A strategy only decides *where* an Interest goes; the pipeline does the
//! sending, so strategies stay small pure functions over a PIT entry and the
//! FIB's next hops (dynamic's weighted draw is the pipeline's `pick`).

use smallvec::{smallvec, SmallVec};
use trajan_tables::{NextHop, OutRecord, PitEntry};
use trajan_wire::tlv::read_nonneg;
use trajan_wire::types::VERSION_COMPONENT;
use trajan_wire::{Name, NackReason};

use crate::FaceId;

/// How long after an Interest went upstream its retransmission is first held
/// back: NFD's RetxSuppressionExponential (best-route and multicast), whose
/// interval doubles with each retransmission let through, up to
/// [`RETX_SUPPRESSION_MAX_MS`]. A consumer that retransmits early costs the
/// upstreams less and less, one that waits longer than that is never held back.
pub const RETX_SUPPRESSION_INITIAL_MS: u64 = 10;

/// The longest a retransmission is held back (NFD's default, as the initial
/// interval). The back-off a PIT entry keeps is the number of doublings, a
/// byte, so that it fits the entry as it is.
pub const RETX_SUPPRESSION_MAX_MS: u64 = 250;

/// Which strategy governs a namespace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StrategyKind {
    /// Send to the cheapest usable next hop; on Nack or retransmission, try the next.
    BestRoute,
    /// Send to every usable next hop.
    Multicast,
    /// Send to one usable next hop drawn at random, weighted against the
    /// Interests each holds pending ([`crate::measurements`]); on Nack or
    /// retransmission, draw among those not tried yet.
    Dynamic,
}

impl StrategyKind {
    /// NFD's strategy name, as `strategy-choice/list` reports it.
    pub fn name(self) -> &'static str {
        match self {
            StrategyKind::BestRoute => "/localhost/nfd/strategy/best-route/v=5",
            StrategyKind::Multicast => "/localhost/nfd/strategy/multicast/v=4",
            StrategyKind::Dynamic => "/localhost/nfd/strategy/dynamic/v=1",
        }
    }

    /// Every strategy, for listing them.
    pub const ALL: [StrategyKind; 3] = [StrategyKind::BestRoute, StrategyKind::Multicast, StrategyKind::Dynamic];

    /// The strategy's short name, as parsing takes it ([`std::str::FromStr`]).
    pub fn word(self) -> &'static str {
        match self {
            StrategyKind::BestRoute => "best-route",
            StrategyKind::Multicast => "multicast",
            StrategyKind::Dynamic => "dynamic",
        }
    }

    /// The version [`StrategyKind::name`] ends with.
    fn version(self) -> u64 {
        match self {
            StrategyKind::BestRoute => 5,
            StrategyKind::Multicast => 4,
            StrategyKind::Dynamic => 1,
        }
    }

    /// Resolves a strategy name as given to `strategy-choice/set`, with or without
    /// a version component. As in NFD, a version asks for that version or a later
    /// one: up to this router's it is this router's, and a later one (or a
    /// last component that is not a version) is a strategy it does not have.
    pub fn from_name(name: &Name) -> Option<Self> {
        let base: Name = "/localhost/nfd/strategy".parse().ok()?;
        if !base.is_prefix_of(name) || name.len() < base.len() + 1 || name.len() > base.len() + 2 {
            return None;
        }
        let kind: StrategyKind = std::str::from_utf8(name.get(base.len()).value).ok()?.parse().ok()?;
        if name.len() == base.len() + 2 {
            let v = name.get(base.len() + 1);
            let asked = if v.typ == VERSION_COMPONENT { read_nonneg(v.value).ok()? } else { return None };
            if asked > kind.version() {
                return None;
            }
        }
        Some(kind)
    }
}

impl std::str::FromStr for StrategyKind {
    type Err = String;

    /// The strategy a configuration file or a tool calls `word` (`best-route`,
    /// `multicast`, `dynamic`: the component after `/localhost/nfd/strategy`),
    /// or an error that lists the known ones.
    fn from_str(word: &str) -> Result<Self, String> {
        StrategyKind::ALL.into_iter().find(|k| k.word() == word).ok_or_else(|| {
            let known: Vec<&str> = StrategyKind::ALL.iter().map(|k| k.word()).collect();
            format!("unknown strategy `{word}` ({})", known.join(", "))
        })
    }
}

/// What to do with an Interest that was just added to the PIT.
#[derive(Debug, PartialEq, Eq)]
pub enum InterestDecision {
    /// Send to this one face (best-route's decision: a variant of its own, so
    /// the common Interest builds no list).
    ForwardTo(FaceId),
    /// Send to these faces.
    Forward(SmallVec<[FaceId; 4]>),
    /// A retransmission let through: send to these faces, after
    /// [`retransmitted`] backs the entry off for the next one.
    Retransmit(SmallVec<[FaceId; 4]>),
    /// Already sent upstream very recently, or sent upstream and nothing
    /// else may take it: wait for the answer.
    Suppress,
    /// Nothing usable: tell the downstream NoRoute.
    NoRoute,
}

/// Decides where a new or retransmitted Interest goes. `usable` filters next hops the
/// pipeline may not use (the ingress face, scope violations, vanished faces);
/// `answers` tells whether an out-record on a face may still bring this
/// Interest its Data (the face is still there, and is not the one the
/// Interest came from, where Data never goes back); `pick` draws one of
/// several faces for the dynamic strategy (only it calls it).
/// Always inlined: once per Interest (see `Forwarder::forward_new`).
#[inline(always)]
pub fn on_interest(
    kind: StrategyKind,
    entry: &PitEntry,
    nexthops: &[NextHop],
    now_ms: u64,
    usable: impl Fn(FaceId) -> bool,
    answers: impl Fn(FaceId) -> bool,
    pick: impl FnOnce(&[FaceId]) -> FaceId,
) -> InterestDecision {
    let mut candidates = nexthops.iter().filter(|nh| usable(nh.face)).peekable();
    if candidates.peek().is_none() {
        return without_next_hop(kind, entry, now_ms, answers);
    }
    match kind {
        StrategyKind::Multicast => {
            let all = candidates.map(|nh| nh.face).collect();
            if entry.out_records.is_empty() {
                return InterestDecision::Forward(all);
            }
            multicast_retransmission(entry, all, now_ms)
        }
        StrategyKind::BestRoute => {
            if entry.out_records.is_empty() {
                // The first usable next hop (there is one: peeked above).
                return candidates.next().map_or(InterestDecision::NoRoute, |nh| InterestDecision::ForwardTo(nh.face));
            }
            if suppressed(entry, now_ms) {
                return InterestDecision::Suppress;
            }
            // A retransmission: prefer a next hop not tried yet, else the one tried longest ago.
            let candidates: SmallVec<[&NextHop; 4]> = candidates.collect();
            let untried = candidates.iter().find(|nh| !tried(entry, nh.face));
            let pick = untried.copied().or_else(|| {
                candidates.iter().copied().min_by_key(|nh| {
                    entry.out_records.iter().find(|o| o.face == nh.face).map_or(0, |o| o.sent_ms)
                })
            });
            pick.map_or(InterestDecision::NoRoute, |nh| InterestDecision::Retransmit(smallvec![nh.face]))
        }
        StrategyKind::Dynamic => {
            let all: SmallVec<[FaceId; 4]> = candidates.map(|nh| nh.face).collect();
            dynamic(entry, &all, now_ms, pick)
        }
    }
}

/// [`on_interest`] for a multicast retransmission, given the usable next hops
/// (`all`, not empty): held back per upstream, as in NFD, so a next hop not
/// tried yet takes it at once. Out of line: not the new Interest's path.
#[cold]
fn multicast_retransmission(entry: &PitEntry, mut all: SmallVec<[FaceId; 4]>, now_ms: u64) -> InterestDecision {
    all.retain(|f| !entry.out_records.iter().any(|o| o.face == *f && upstream_suppressed(o, now_ms)));
    if all.is_empty() {
        // Every next hop held it back.
        return InterestDecision::Suppress;
    }
    InterestDecision::Retransmit(all)
}

/// [`on_interest`] when no next hop may take the Interest. A new one gets
/// NoRoute. One that joins an entry already sent upstream, where an answer
/// may still come from (see [`on_interest`]'s `answers`), waits for it, as in
/// NFD (for a `/localhop` Interest from a remote face that a local one's
/// took upstream, for instance): always with best-route and dynamic, and with
/// multicast while an upstream holds its retransmissions back (NFD's
/// multicast Nacks it otherwise). Unlike NFD, an Interest whose only pending
/// upstream is the face it came from is Nacked: the Data from there would
/// never reach it. Nothing goes upstream, so nothing backs off.
#[cold]
fn without_next_hop(kind: StrategyKind, entry: &PitEntry, now_ms: u64, answers: impl Fn(FaceId) -> bool) -> InterestDecision {
    let pending = entry.out_records.iter().any(|o| answers(o.face));
    if pending && (kind != StrategyKind::Multicast || entry.out_records.iter().any(|o| upstream_suppressed(o, now_ms))) {
        InterestDecision::Suppress
    } else {
        InterestDecision::NoRoute
    }
}

/// How long a retransmission is held back after `backoff` doublings of
/// [`RETX_SUPPRESSION_INITIAL_MS`] ([`PitEntry::suppression`],
/// [`OutRecord::suppression`]). Shifted 16 places at most, far past the
/// cap, so that no back-off a byte holds shifts the bits out to a short wait.
#[inline]
fn suppression_interval(backoff: u8) -> u64 {
    (RETX_SUPPRESSION_INITIAL_MS << backoff.min(16)).min(RETX_SUPPRESSION_MAX_MS)
}

/// A back-off one retransmission later: the interval doubled, until it
/// reaches [`RETX_SUPPRESSION_MAX_MS`], where the count stops.
fn backed_off(backoff: u8) -> u8 {
    if suppression_interval(backoff) < RETX_SUPPRESSION_MAX_MS {
        backoff + 1
    } else {
        backoff
    }
}

/// Whether a retransmission comes too soon after the entry's Interest last
/// went upstream, to any face, for the entry's back-off (NFD's per-PIT-entry
/// suppression, best-route's and dynamic's).
#[inline]
fn suppressed(entry: &PitEntry, now_ms: u64) -> bool {
    let interval = suppression_interval(entry.suppression);
    entry.out_records.iter().any(|o| now_ms.saturating_sub(o.sent_ms) < interval)
}

/// Whether a retransmission comes too soon after the Interest last went to
/// this upstream, for that upstream's back-off (NFD's per-upstream
/// suppression, multicast's).
#[inline]
fn upstream_suppressed(o: &OutRecord, now_ms: u64) -> bool {
    now_ms.saturating_sub(o.sent_ms) < suppression_interval(o.suppression)
}

/// Backs the entry off for its next retransmission as the strategy's
/// suppression counts it, once [`InterestDecision::Retransmit`] lets one
/// through to `targets` and before it is sent there (multicast backs off
/// only the upstreams the Interest went to before). Kept apart from
/// [`on_interest`], which only reads the entry.
pub fn retransmitted(kind: StrategyKind, entry: &mut PitEntry, targets: &[FaceId]) {
    match kind {
        StrategyKind::Multicast => {
            for o in entry.out_records.iter_mut().filter(|o| targets.contains(&o.face)) {
                o.suppression = backed_off(o.suppression);
            }
        }
        StrategyKind::BestRoute | StrategyKind::Dynamic => entry.suppression = backed_off(entry.suppression),
    }
}

/// Whether the entry's Interest was sent to `face` already.
#[inline(always)]
fn tried(entry: &PitEntry, face: FaceId) -> bool {
    entry.out_records.iter().any(|o| o.face == face)
}

/// [`on_interest`] for the dynamic strategy, given the usable next hops
/// (`all`, not empty): a new Interest draws among them all, a retransmission
/// among those not tried yet (all of them once every one was). As with
/// best-route, one upstream at a time, so retransmissions are held back per
/// entry as best-route's are.
fn dynamic(entry: &PitEntry, all: &[FaceId], now_ms: u64, pick: impl FnOnce(&[FaceId]) -> FaceId) -> InterestDecision {
    if entry.out_records.is_empty() {
        return InterestDecision::ForwardTo(pick(all));
    }
    if suppressed(entry, now_ms) {
        return InterestDecision::Suppress;
    }
    let untried: SmallVec<[FaceId; 4]> = all.iter().copied().filter(|&f| !tried(entry, f)).collect();
    InterestDecision::Retransmit(smallvec![pick(if untried.is_empty() { all } else { &untried })])
}

/// What to do after an upstream Nacked the Interest (its out-record is already marked).
#[derive(Debug, PartialEq, Eq)]
pub enum NackDecision {
    /// Try this other next hop.
    Retry(FaceId),
    /// Other upstreams may still answer.
    Wait,
    /// Every upstream Nacked: return this reason downstream.
    GiveUp(NackReason),
}

/// Decides the reaction to a Nack.
/// Best-route retries the cheapest next hop not tried yet; dynamic draws one
/// with `pick` (only it calls it). Otherwise the Nack goes downstream once no
/// upstream may still answer: an out-record on a face no longer `live`
/// never will (NFD deletes such records when the face goes).
pub fn on_nack(
    kind: StrategyKind,
    entry: &PitEntry,
    nexthops: &[NextHop],
    usable: impl Fn(FaceId) -> bool,
    live: impl Fn(FaceId) -> bool,
    pick: impl FnOnce(&[FaceId]) -> FaceId,
) -> NackDecision {
    let mut untried = nexthops.iter().filter(|nh| usable(nh.face) && !tried(entry, nh.face)).map(|nh| nh.face);
    match kind {
        StrategyKind::BestRoute => {
            if let Some(face) = untried.next() {
                return NackDecision::Retry(face);
            }
        }
        StrategyKind::Dynamic => {
            let untried: SmallVec<[FaceId; 4]> = untried.collect();
            if !untried.is_empty() {
                return NackDecision::Retry(pick(&untried));
            }
        }
        StrategyKind::Multicast => {}
    }
    if entry.out_records.iter().any(|o| o.nack.is_none() && live(o.face)) {
        return NackDecision::Wait;
    }
    let reason = entry
        .out_records
        .iter()
        .filter_map(|o| o.nack)
        .min_by_key(|r| r.severity())
        .unwrap_or(NackReason::NoRoute);
    NackDecision::GiveUp(reason)
}

#[cfg(test)]
mod tests {
    use super::*;
    use trajan_tables::Pcct;
    use trajan_wire::Interest;

    const HOPS: [NextHop; 3] = [NextHop { face: 1, cost: 0 }, NextHop { face: 2, cost: 10 }, NextHop { face: 3, cost: 20 }];

    /// A pending entry of its own table, with out-records on `(face, sent_ms)`.
    fn entry(sent: &[(FaceId, u64)]) -> (Pcct, trajan_tables::PitId) {
        let mut pcct = Pcct::new(8, 0, 0);
        let (id, _) = pcct.find_or_insert(&Interest::new("/a".parse().unwrap()), 0).unwrap();
        let e = pcct.pit.get_mut(id).unwrap();
        for &(face, at) in sent {
            e.upsert_out_record(face, 1, at, 0);
        }
        (pcct, id)
    }

    /// The strategy's decision, with a `pick` that takes the last face it is offered.
    fn decide(kind: StrategyKind, sent: &[(FaceId, u64)], now: u64, usable: impl Fn(FaceId) -> bool) -> InterestDecision {
        decide_offered(kind, sent, now, usable).0
    }

    /// [`decide`], and the faces the strategy offered `pick` (none if it did not call it).
    fn decide_offered(kind: StrategyKind, sent: &[(FaceId, u64)], now: u64, usable: impl Fn(FaceId) -> bool) -> (InterestDecision, Vec<FaceId>) {
        let (pcct, id) = entry(sent);
        let mut offered = Vec::new();
        let d = on_interest(kind, pcct.pit.get(id).unwrap(), &HOPS, now, usable, |_| true, |faces| {
            offered = faces.to_vec();
            *faces.last().unwrap()
        });
        (d, offered)
    }

    #[test]
    fn best_route_sends_a_new_interest_to_the_first_usable_next_hop() {
        assert_eq!(decide(StrategyKind::BestRoute, &[], 0, |_| true), InterestDecision::ForwardTo(1));
        assert_eq!(decide(StrategyKind::BestRoute, &[], 0, |f| f != 1), InterestDecision::ForwardTo(2));
        assert_eq!(decide(StrategyKind::BestRoute, &[], 0, |_| false), InterestDecision::NoRoute);
    }

    #[test]
    fn best_route_retransmits_to_an_untried_then_the_longest_untried_next_hop() {
        let suppressed = RETX_SUPPRESSION_INITIAL_MS - 1;
        assert_eq!(decide(StrategyKind::BestRoute, &[(1, 0)], suppressed, |_| true), InterestDecision::Suppress);
        assert_eq!(decide(StrategyKind::BestRoute, &[(1, 0)], 100, |_| true), retransmit(&[2]));
        assert_eq!(decide(StrategyKind::BestRoute, &[(1, 30), (2, 0), (3, 20)], 100, |_| true), retransmit(&[2]));
        assert_eq!(decide(StrategyKind::BestRoute, &[(1, 30), (2, 0), (3, 20)], 100, |f| f != 2), retransmit(&[3]));
    }

    fn retransmit(faces: &[FaceId]) -> InterestDecision {
        InterestDecision::Retransmit(faces.iter().copied().collect())
    }

    #[test]
    fn the_suppression_interval_doubles_up_to_its_cap() {
        let mut backoff = 0;
        let mut intervals = Vec::new();
        for _ in 0..8 {
            intervals.push(suppression_interval(backoff));
            backoff = backed_off(backoff);
        }
        assert_eq!(intervals, [10, 20, 40, 80, 160, 250, 250, 250]);
        assert_eq!(backoff, 5, "it stops counting at the cap");
        for backoff in [16, 62, 63, 64, u8::MAX] {
            assert_eq!(suppression_interval(backoff), RETX_SUPPRESSION_MAX_MS, "{backoff} doublings");
        }
    }

    /// Best-route and dynamic hold a retransmission back for the entry's
    /// interval since its last send to any upstream; a retransmission let
    /// through doubles it.
    #[test]
    fn best_route_and_dynamic_back_off_per_entry() {
        for kind in [StrategyKind::BestRoute, StrategyKind::Dynamic] {
            let (mut pcct, id) = entry(&[(1, 0), (2, 100)]);
            let e = pcct.pit.get_mut(id).unwrap();
            retransmitted(kind, e, &[2]);
            assert_eq!((e.suppression, e.out_records[0].suppression, e.out_records[1].suppression), (1, 0, 0), "{kind:?}");
            let decide = |e: &PitEntry, now| on_interest(kind, e, &HOPS, now, |_| true, |_| true, |faces| faces[0]);
            assert_eq!(decide(e, 119), InterestDecision::Suppress, "{kind:?}: within 20 ms of the last send");
            assert_eq!(decide(e, 120), retransmit(&[3]), "{kind:?}: 20 ms after it");
            for _ in 0..10 {
                retransmitted(kind, e, &[3]);
            }
            assert_eq!(decide(e, 349), InterestDecision::Suppress, "{kind:?}: capped");
            assert_eq!(decide(e, 350), retransmit(&[3]), "{kind:?}: capped at 250 ms");
        }
    }

    #[test]
    fn an_interest_no_next_hop_may_take_waits_for_the_one_sent_upstream() {
        let (pcct, id) = entry(&[(1, 0)]);
        let e = pcct.pit.get(id).unwrap();
        let decide = |kind, now, answers: fn(FaceId) -> bool| on_interest(kind, e, &HOPS, now, |_| false, answers, |_| unreachable!());
        for kind in StrategyKind::ALL {
            assert_eq!(decide(kind, 1, |_| true), InterestDecision::Suppress, "{kind:?}, suppressed");
            assert_eq!(decide(kind, 1, |f| f != 1), InterestDecision::NoRoute, "{kind:?}: sent only where no answer can come from");
        }
        assert_eq!(decide(StrategyKind::BestRoute, 100, |_| true), InterestDecision::Suppress);
        assert_eq!(decide(StrategyKind::Dynamic, 100, |_| true), InterestDecision::Suppress);
        assert_eq!(decide(StrategyKind::Multicast, 100, |_| true), InterestDecision::NoRoute, "as NFD's multicast");
    }

    #[test]
    fn multicast_sends_to_every_usable_next_hop() {
        let all = decide(StrategyKind::Multicast, &[], 0, |f| f != 2);
        assert_eq!(all, InterestDecision::Forward([1, 3].into_iter().collect()));
        assert_eq!(decide(StrategyKind::Multicast, &[(1, 0)], 1, |f| f == 1), InterestDecision::Suppress);
        assert_eq!(decide(StrategyKind::Multicast, &[(1, 0)], 1, |_| true), retransmit(&[2, 3]), "untried ones are not held back");
        assert_eq!(decide(StrategyKind::Multicast, &[(1, 0), (2, 5)], 10, |_| true), retransmit(&[1, 3]));
    }

    /// Multicast holds a retransmission back per upstream, for that
    /// upstream's interval since the Interest last went there; a
    /// retransmission let through doubles the interval of those it went to
    /// before, and no other's.
    #[test]
    fn multicast_backs_off_per_upstream() {
        let (mut pcct, id) = entry(&[(1, 0), (2, 0)]);
        let e = pcct.pit.get_mut(id).unwrap();
        retransmitted(StrategyKind::Multicast, e, &[1, 3]);
        assert_eq!((e.suppression, e.out_records[0].suppression, e.out_records[1].suppression), (0, 1, 0));
        let decide = |e: &PitEntry, now| on_interest(StrategyKind::Multicast, e, &HOPS, now, |f| f != 3, |_| true, |_| unreachable!());
        assert_eq!(decide(e, 10), retransmit(&[2]), "face 1 waits 20 ms, face 2 10 ms");
        assert_eq!(decide(e, 20), retransmit(&[1, 2]));
        let no_hop = |e: &PitEntry, now| on_interest(StrategyKind::Multicast, e, &HOPS, now, |_| false, |_| true, |_| unreachable!());
        assert_eq!(no_hop(e, 19), InterestDecision::Suppress, "face 1 still holds it back");
        assert_eq!(no_hop(e, 20), InterestDecision::NoRoute);
    }

    #[test]
    fn dynamic_draws_among_usable_then_untried_next_hops() {
        let (d, offered) = decide_offered(StrategyKind::Dynamic, &[], 0, |f| f != 2);
        assert_eq!((d, offered), (InterestDecision::ForwardTo(3), vec![1, 3]));
        assert_eq!(decide_offered(StrategyKind::Dynamic, &[(1, 0)], 1, |_| true), (InterestDecision::Suppress, vec![]));
        let (d, offered) = decide_offered(StrategyKind::Dynamic, &[(3, 0)], 100, |_| true);
        assert_eq!((d, offered), (retransmit(&[2]), vec![1, 2]), "a retransmission tries another");
        let (_, offered) = decide_offered(StrategyKind::Dynamic, &[(1, 0), (2, 0), (3, 0)], 100, |_| true);
        assert_eq!(offered, [1, 2, 3], "all tried: any");
        assert_eq!(decide(StrategyKind::Dynamic, &[], 0, |_| false), InterestDecision::NoRoute);
    }

    #[test]
    fn on_nack_best_route_and_dynamic_retry_an_untried_next_hop_multicast_waits() {
        let (mut pcct, id) = entry(&[(1, 0), (2, 0)]);
        pcct.pit.get_mut(id).unwrap().out_record_mut(1).unwrap().nack = Some(NackReason::Congestion);
        let e = pcct.pit.get(id).unwrap();
        let unused = |_: &[FaceId]| -> FaceId { panic!("only dynamic draws") };
        assert_eq!(on_nack(StrategyKind::BestRoute, e, &HOPS, |_| true, |_| true, unused), NackDecision::Retry(3));
        let mut offered = Vec::new();
        let pick = |faces: &[FaceId]| {
            offered = faces.to_vec();
            faces[0]
        };
        assert_eq!(on_nack(StrategyKind::Dynamic, e, &HOPS, |_| true, |_| true, pick), NackDecision::Retry(3));
        assert_eq!(offered, [3]);
        assert_eq!(on_nack(StrategyKind::Multicast, e, &HOPS, |_| true, |_| true, unused), NackDecision::Wait, "face 2 may still answer");
        let gone = NackDecision::GiveUp(NackReason::Congestion);
        assert_eq!(on_nack(StrategyKind::Multicast, e, &HOPS, |_| true, |f| f != 2, unused), gone, "face 2 is gone: it never will");
        assert_eq!(on_nack(StrategyKind::Dynamic, e, &HOPS, |f| f != 3, |_| true, unused), NackDecision::Wait);
    }

    #[test]
    fn strategies_are_named_as_nfd_names_them() {
        for k in StrategyKind::ALL {
            assert_eq!(k.word().parse(), Ok(k));
            assert_eq!(StrategyKind::from_name(&k.name().parse().unwrap()), Some(k));
            let unversioned: Name = format!("/localhost/nfd/strategy/{}", k.word()).parse().unwrap();
            assert_eq!(StrategyKind::from_name(&unversioned), Some(k));
        }
        assert_eq!("asf".parse::<StrategyKind>(), Err("unknown strategy `asf` (best-route, multicast, dynamic)".to_owned()));
        assert_eq!(StrategyKind::from_name(&"/localhost/nfd/strategy".parse().unwrap()), None);
    }

    #[test]
    fn a_version_asks_for_that_one_or_a_later_one() {
        let named = |s: &str| StrategyKind::from_name(&s.parse().unwrap());
        for k in StrategyKind::ALL {
            assert!(k.name().ends_with(&format!("/v={}", k.version())), "{}", k.name());
            let word = k.word();
            assert_eq!(named(&format!("/localhost/nfd/strategy/{word}/v=0")), Some(k));
            assert_eq!(named(&format!("/localhost/nfd/strategy/{word}/v={}", k.version() + 1)), None);
            assert_eq!(named(&format!("/localhost/nfd/strategy/{word}/v=99")), None);
            assert_eq!(named(&format!("/localhost/nfd/strategy/{word}/5")), None, "not a version component");
        }
    }
}
