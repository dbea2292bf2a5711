//! Names as long as a packet holds, through the whole engine: thousands of
//! empty components, or a few dozen of 250 bytes. Such a name is as valid as
//! a short one, so it must be forwarded by its longest FIB prefix (a prefix
//! of thousands of components included), answered, cached, found again by
//! exact name and with CanBePrefix, Nacked and routed by ForwardingHint
//! delegations just as short ones are. (That each of those costs work
//! linear in the name is checked where the work is counted, in the wire and
//! tables crates' own tests.)

use bytes::Bytes;
use trajan_engine::{EngineConfig, FaceMeta, Forwarder, Outgoing};
use trajan_tables::FibVariant;
use trajan_wire::data::DataBuilder;
use trajan_wire::lp::{LpHeaders, LpPacket};
use trajan_wire::{Data, Interest, NackReason, Name, MAX_PACKET_SIZE};

const CONSUMER: u32 = 300;
const CONSUMER2: u32 = 301;
const PRODUCER: u32 = 400;
const OTHER: u32 = 401;

/// The two shapes of a long name: how many components the FIB's long
/// prefix has, and the bytes of each component after the first.
#[derive(Clone, Copy, Debug)]
struct Shape {
    route: usize,
    width: usize,
}

/// Empty components: a prefix of 3,000 and names up to 4,300 (8.6 KB).
const EMPTY: Shape = Shape { route: 3000, width: 0 };
/// 250-byte components: a prefix of 20 and names up to 33 (8.4 KB).
const WIDE: Shape = Shape { route: 20, width: 250 };

impl Shape {
    /// A name of `k` components: `first`, then `k - 1` of this shape's width.
    fn name(self, first: &str, k: usize) -> Name {
        let fill = vec![b'x'; self.width];
        Name::from_components(std::iter::once((8u32, first.as_bytes())).chain(std::iter::repeat_n((8u32, &fill[..]), k - 1)))
    }

    /// The FIB's long prefix.
    fn route(self) -> Name {
        self.name("r", self.route)
    }

    /// The longest name under the long prefix: a packet of it fits.
    fn longest(self) -> usize {
        if self.width == 0 { 4300 } else { 33 }
    }

    /// A name under the long prefix `extra` components below it.
    fn under(self, extra: usize) -> Name {
        self.name("r", self.route + extra)
    }
}

/// A forwarder whose FIB holds the long prefix (to [`PRODUCER`]), short
/// routes to [`OTHER`], and long prefixes of other lengths that lookups
/// must pass over.
fn forwarder(shape: Shape, variant: FibVariant) -> Forwarder {
    let mut f = Forwarder::new(&EngineConfig { cs_capacity: 100, fib_variant: variant, ..Default::default() }, 0);
    for id in [CONSUMER, CONSUMER2, PRODUCER, OTHER] {
        f.add_face(id, FaceMeta { local: false, point_to_point: true, ..Default::default() });
    }
    f.fib.add_nexthop(&shape.route(), PRODUCER, 10);
    f.fib.add_nexthop(&shape.name("r", 1), OTHER, 10);
    f.fib.add_nexthop(&shape.name("o", 1), OTHER, 10);
    for k in [shape.route / 3, shape.route / 2, shape.route + 5] {
        f.fib.add_nexthop(&shape.name("o", k), OTHER, 10);
    }
    f
}

fn interest(name: Name, nonce: u32, can_be_prefix: bool) -> Interest {
    let mut i = Interest::new(name);
    (i.nonce, i.can_be_prefix, i.lifetime_ms) = (Some(nonce), can_be_prefix, Some(1000));
    i
}

fn data(name: Name) -> Bytes {
    DataBuilder::new(name).freshness_ms(10_000).build(b"payload")
}

fn run(f: &mut Forwarder, now: u64, mut input: Vec<(u32, Bytes)>) -> Vec<Outgoing> {
    for (_, pkt) in &input {
        assert!(pkt.len() <= MAX_PACKET_SIZE, "a packet of {} bytes", pkt.len());
    }
    let mut out = Vec::new();
    f.process_burst(now, &mut input, &mut out);
    out
}

/// The face each packet went to and, when it is a Data, its name.
fn sent(out: &[Outgoing]) -> Vec<(u32, Option<Name>)> {
    out.iter()
        .map(|o| {
            let frag = LpPacket::decode(&o.pkt).unwrap().fragment.unwrap();
            (o.face, Data::decode(&frag).ok().map(|d| d.name().clone()))
        })
        .collect()
}

/// An Interest of the longest name is forwarded by the long prefix, not by
/// the shorter or longer ones beside it; its Data goes back, is cached, and
/// answers the same name again, its parent with CanBePrefix (the parent the
/// packet registered), and a prefix far above it with CanBePrefix once an
/// Interest for that prefix was answered by it (an indirect entry).
#[test]
fn a_long_name_is_forwarded_by_its_longest_prefix_then_answered_from_the_cache() {
    for shape in [EMPTY, WIDE] {
        for variant in FibVariant::ALL {
            let mut f = forwarder(shape, variant);
            let name = shape.under(shape.longest() - shape.route);
            let out = run(&mut f, 0, vec![(CONSUMER, interest(name.clone(), 1, false).encode())]);
            assert_eq!(sent(&out), [(PRODUCER, None)], "{shape:?} {variant}");
            let out = run(&mut f, 1, vec![(PRODUCER, data(name.clone()))]);
            assert_eq!(sent(&out), [(CONSUMER, Some(name.clone()))], "{shape:?} {variant}");
            assert_eq!(f.pcct.cs.len(), 1);

            let parent = name.prefix(name.len() - 1);
            let out = run(&mut f, 2, vec![(CONSUMER2, interest(name.clone(), 2, false).encode()), (CONSUMER2, interest(parent, 3, true).encode())]);
            assert_eq!(sent(&out), [(CONSUMER2, Some(name.clone())), (CONSUMER2, Some(name.clone()))], "{shape:?} {variant}");

            // A prefix far above: upstream first, then from the cache.
            let above = shape.under(1);
            let out = run(&mut f, 3, vec![(CONSUMER, interest(above.clone(), 4, true).encode())]);
            assert_eq!(sent(&out), [(PRODUCER, None)], "{shape:?} {variant}");
            let out = run(&mut f, 4, vec![(PRODUCER, data(name.clone()))]);
            assert_eq!(sent(&out), [(CONSUMER, Some(name.clone()))], "{shape:?} {variant}");
            let out = run(&mut f, 5, vec![(CONSUMER2, interest(above, 5, true).encode())]);
            assert_eq!(sent(&out), [(CONSUMER2, Some(name.clone()))], "{shape:?} {variant}");
            assert_eq!(f.counters.cs_hits, 3, "{shape:?} {variant}");
            assert_eq!(f.pcct.pit.len(), 0);
        }
    }
}

/// Data of a long name satisfies every pending CanBePrefix Interest for a
/// prefix of it, short or long, and only those.
#[test]
fn a_long_data_satisfies_the_can_be_prefix_interests_of_its_prefixes() {
    for shape in [EMPTY, WIDE] {
        let mut f = forwarder(shape, FibVariant::default());
        let name = shape.under(shape.longest() - shape.route);
        let lengths = [1, 2, shape.route / 2, shape.route, shape.route + 1, name.len() - 1];
        let mut burst: Vec<(u32, Bytes)> = lengths.iter().enumerate().map(|(k, &len)| (CONSUMER, interest(name.prefix(len), k as u32, true).encode())).collect();
        burst.push((CONSUMER, interest(shape.under(1).append_generic(b"elsewhere"), 99, true).encode()));
        run(&mut f, 0, burst);
        assert_eq!(f.pcct.pit.len(), lengths.len() + 1);
        let out = run(&mut f, 1, vec![(PRODUCER, data(name.clone()))]);
        assert_eq!(sent(&out), [(CONSUMER, Some(name))], "{shape:?}: one copy for the consumer");
        assert_eq!(f.counters.satisfied_interests, lengths.len() as u64, "{shape:?}");
        assert_eq!(f.pcct.pit.len(), 1, "{shape:?}: the Interest for another name still waits");
    }
}

/// A Nack of a long Interest from its only upstream goes back to the consumer.
#[test]
fn a_nack_of_a_long_interest_reaches_its_consumer() {
    for shape in [EMPTY, WIDE] {
        let mut f = forwarder(shape, FibVariant::default());
        let sent_up = interest(shape.under(shape.longest() - shape.route), 7, false);
        let out = run(&mut f, 0, vec![(CONSUMER, sent_up.encode())]);
        assert_eq!(sent(&out), [(PRODUCER, None)]);
        let nack = LpHeaders { nack: Some(NackReason::NoRoute), ..Default::default() };
        let out = run(&mut f, 1, vec![(PRODUCER, LpPacket::wrap(&sent_up.encode(), &nack))]);
        assert_eq!(out.len(), 1, "{shape:?}");
        assert_eq!(out[0].face, CONSUMER);
        let back = LpPacket::decode(&out[0].pkt).unwrap();
        assert_eq!(back.headers.nack, Some(NackReason::NoRoute));
        assert_eq!(Interest::decode(&back.fragment.unwrap()).unwrap().name, sent_up.name);
        assert_eq!(f.pcct.pit.len(), 0);
    }
}

/// An Interest with no route of its own goes where its first routed
/// ForwardingHint delegation leads, long delegations included.
#[test]
fn long_forwarding_hint_delegations_are_routed() {
    for shape in [EMPTY, WIDE] {
        for variant in FibVariant::ALL {
            let mut f = forwarder(shape, variant);
            let mut i = interest(Name::from_components([(8u32, &b"z"[..])]), 1, false);
            let mut hint = Vec::new();
            shape.name("nowhere", shape.route / 10).encode_into(&mut hint);
            shape.name("nowhere-else", shape.route / 10).encode_into(&mut hint);
            shape.under(1).encode_into(&mut hint);
            i.forwarding_hint = Some(Bytes::from(hint));
            let out = run(&mut f, 0, vec![(CONSUMER, i.encode())]);
            assert_eq!(sent(&out), [(PRODUCER, None)], "{shape:?} {variant}");
        }
    }
}
