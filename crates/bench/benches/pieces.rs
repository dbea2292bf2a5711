//! Criterion benchmarks of the engine's pieces, each alone, on the reference
//! workload at a 1 K-prefix FIB: Interest and Data decoding, the name hash the
//! tables use, FIB longest-prefix match, a PIT insert and its removal by Data, and
//! a CS lookup. Small and quick (`cargo bench -p trajan-bench`); `trajan bench
//! engine` measures the whole pipeline.

use std::hint::black_box;
use std::time::Duration;

use bytes::Bytes;
use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use trajan_tables::{Cs, Fib, NameHasher, Pcct};
use trajan_wire::data::DataBuilder;
use trajan_wire::lp::LpPacket;
use trajan_wire::{Data, Interest, Name};
use trajan_bench::workload;

const FIB_PREFIXES: usize = 1000;
const NAMES: usize = 1024;

struct Packets {
    fib: Fib,
    names: Vec<Name>,
    interests: Vec<Bytes>,
    data: Vec<Bytes>,
}

fn packets() -> Packets {
    let hosts = workload::reference_hosts().expect("reference data");
    let prefixes = workload::reference_fib(&hosts, FIB_PREFIXES, 1).expect("1K prefixes");
    let mut fib = Fib::new();
    for p in prefixes.iter() {
        fib.add_nexthop(&p, 1, 0);
    }
    let names: Vec<Name> = workload::reference_names(&prefixes, NAMES, 2).iter().collect();
    let interests = names
        .iter()
        .enumerate()
        .map(|(k, n)| {
            let mut i = Interest::new(n.clone());
            i.nonce = Some(k as u32);
            i.lifetime_ms = Some(1000);
            i.encode()
        })
        .collect();
    let data = names.iter().map(|n| DataBuilder::new(n.clone()).freshness_ms(10_000).build(&[0x5a; 100])).collect();
    Packets { fib, names, interests, data }
}

fn pieces(c: &mut Criterion) {
    let p = packets();
    let decoded: Vec<Interest> = p.interests.iter().map(|w| Interest::decode(w).unwrap()).collect();
    let data: Vec<Data> = p.data.iter().map(|w| Data::decode(w).unwrap()).collect();
    let mut g = c.benchmark_group("per 1024 packets");

    g.bench_function("interest decode", |b| {
        b.iter(|| {
            for w in &p.interests {
                let frag = LpPacket::decode(w).unwrap().fragment.unwrap();
                black_box(Interest::decode(&frag).unwrap());
            }
        })
    });
    g.bench_function("data decode", |b| {
        b.iter(|| {
            for w in &p.data {
                let frag = LpPacket::decode(w).unwrap().fragment.unwrap();
                black_box(Data::decode(&frag).unwrap());
            }
        })
    });
    let names = NameHasher::new();
    g.bench_function("name hash", |b| {
        b.iter(|| {
            for n in &p.names {
                black_box(names.full(n));
            }
        })
    });
    g.bench_function("fib lpm (1K prefixes)", |b| {
        b.iter(|| {
            for n in &p.names {
                black_box(p.fib.lpm(n));
            }
        })
    });
    g.bench_function("pit insert+remove", |b| {
        b.iter_batched_ref(
            || Pcct::with_hasher(usize::MAX, 0, 0, names.clone()),
            |pit| {
                let mut ids = Vec::new();
                for (i, d) in decoded.iter().zip(&data) {
                    pit.find_or_insert(i, 0).unwrap();
                    ids.clear();
                    pit.matches_for_data(d, names.full(d.name()), &mut ids);
                    for id in ids.drain(..) {
                        black_box(pit.remove(id));
                    }
                }
            },
            BatchSize::SmallInput,
        )
    });
    let mut cs = Cs::new(NAMES);
    for d in data.iter().step_by(2) {
        cs.insert(d, 0);
    }
    g.bench_function("cs lookup (half hit)", |b| {
        b.iter(|| {
            for i in &decoded {
                black_box(cs.lookup(i, 1).is_some());
            }
        })
    });
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20).warm_up_time(Duration::from_millis(300)).measurement_time(Duration::from_secs(1));
    targets = pieces
}
criterion_main!(benches);
