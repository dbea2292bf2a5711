//! Seeded, reproducible workloads: the FIBs and the streams of names that every
//! Trajan benchmark (the engine's, the FIB's) draws from, so that figures from
//! different benchmarks describe the same traffic.
//!
//! - The **reference FIB** is Caesar's: real host names (the Cisco Umbrella top
//!   100k) reversed into name components (`www.google.com` → `/com/google/www`),
//!   grown to any size the way Caesar grew its 10 M-prefix FIB: "modifying few
//!   characters" of existing prefixes (Caesar §6.4).
//! - **Interest names** are a FIB prefix plus Δ components, the last of which is a
//!   [tag](tag_component) numbering the name, so names are unique by construction and
//!   a producer can tell from the name alone which pre-encoded Data answers it.
//! - **No-match** names share no prefix with any reference FIB (a DoS workload).
//! - **Zipf** popularity and **aggregation** schedules for the caching and
//!   aggregation workloads.
//!
//! Every generator takes a seed and uses ChaCha8, whose output is fixed by its
//! specification, so a seed names the same workload on every machine and release.
//!
//! FIB prefixes are lowercase generic components (host labels are lowercased on
//! load), while the components this module adds are uppercase or typed: an added
//! component therefore never extends a match, and Δ is exactly the distance to the
//! longest matching prefix.

use std::collections::HashSet;
use std::hash::BuildHasher;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use bytes::Bytes;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Zipf};
use smallvec::SmallVec;
use trajan_wire::tlv::{read_header, write_tlv};
use trajan_wire::types::{GENERIC_COMPONENT, SEQUENCE_NUM_COMPONENT};
use trajan_wire::Name;

/// The reference host-name list, in the data folder.
pub const HOSTS_FILE: &str = "umbrella-top-100k.txt";

/// Bytes in a tag's value: 4 bytes of round, 4 bytes of index (see [`tag_component`]).
pub const TAG_LEN: usize = 8;

/// Encoded size of the tag component: type, length, value.
const TAG_WIRE_LEN: usize = 2 + TAG_LEN;

/// Most characters one growth step changes (Caesar: "a few").
const MAX_MUTATIONS: usize = 3;

/// How many candidates [`reference_fib`] may draw per prefix before giving up, so
/// a list too small to grow that far fails instead of looping.
const MAX_DRAWS_PER_PREFIX: usize = 100;

/// The folder holding the reference data: `$TRAJAN_DATA` when set, else the
/// project's `shared/data` beside the repository (where the tests and CI find it).
pub fn data_dir() -> anyhow::Result<PathBuf> {
    let dir = match std::env::var_os("TRAJAN_DATA") {
        Some(d) => PathBuf::from(d),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data"),
    };
    if !dir.join(HOSTS_FILE).is_file() {
        bail!(
            "reference data not found: {} has no {HOSTS_FILE}; set TRAJAN_DATA to the folder that holds it \
             (normally <repository>/../shared/data)",
            dir.display()
        );
    }
    Ok(dir)
}

/// Reads a host-name list (one per line), lowercased; blank lines and `#` comments skipped.
pub fn load_hosts(path: &Path) -> anyhow::Result<Vec<String>> {
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    Ok(text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_ascii_lowercase)
        .collect())
}

/// The reference host names from [`data_dir`].
pub fn reference_hosts() -> anyhow::Result<Vec<String>> {
    load_hosts(&data_dir()?.join(HOSTS_FILE))
}

/// Many names in one buffer. Millions of separately allocated names would cost
/// the benchmark more memory than the tables it measures; here a name costs its
/// encoding plus four bytes, and [`NameSet::get`] hands out zero-copy [`Name`]s.
#[derive(Clone, Default)]
pub struct NameSet {
    buf: Bytes,
    /// `ends[i]` is where name `i`'s encoding ends in `buf`.
    ends: Vec<u32>,
}

impl NameSet {
    /// Number of names.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// True when there are no names.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    fn range(&self, i: usize) -> std::ops::Range<usize> {
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        start..self.ends[i] as usize
    }

    /// The encoded components of name `i` (a Name's TLV-VALUE).
    pub fn value(&self, i: usize) -> &[u8] {
        &self.buf[self.range(i)]
    }

    /// Name `i`, sharing this set's buffer.
    pub fn get(&self, i: usize) -> Name {
        Name::from_value(self.buf.slice(self.range(i))).expect("NameSet holds only encodings it built")
    }

    /// Every name, in order.
    pub fn iter(&self) -> impl Iterator<Item = Name> + '_ {
        (0..self.len()).map(|i| self.get(i))
    }
}

/// Builds a [`NameSet`] one encoded name at a time.
#[derive(Default)]
struct NameSetBuilder {
    buf: Vec<u8>,
    ends: Vec<u32>,
}

impl NameSetBuilder {
    fn push(&mut self, value: &[u8]) {
        self.buf.extend_from_slice(value);
        self.ends.push(u32::try_from(self.buf.len()).expect("name sets stay under 4 GiB"));
    }

    fn len(&self) -> usize {
        self.ends.len()
    }

    fn value(&self, i: usize) -> &[u8] {
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        &self.buf[start..self.ends[i] as usize]
    }

    fn build(self) -> NameSet {
        NameSet { buf: Bytes::from(self.buf), ends: self.ends }
    }
}

/// The encoded components of a host name reversed into a name prefix
/// (`www.google.com` → `/com/google/www`); `None` for a name with no labels.
pub fn host_prefix_value(host: &str) -> Option<Vec<u8>> {
    let mut value = Vec::with_capacity(host.len() + 8);
    for label in host.split('.').rev().filter(|l| !l.is_empty()) {
        write_tlv(&mut value, GENERIC_COMPONENT, label.as_bytes());
    }
    (!value.is_empty()).then_some(value)
}

/// The reference FIB: `n` distinct prefixes. The first are the hosts' own
/// prefixes in list order (the most popular first), deduplicated; when the list
/// runs out, Caesar's growth: copy a random existing prefix and replace one to
/// `MAX_MUTATIONS` characters at random positions with random lowercase letters
/// or digits, keeping the result when it is new. The top-level component is never
/// mutated, so the grown FIB keeps the real distribution of first components (how
/// many prefixes share `com`), which is what spreads prefixes over Caesar's
/// Bloom-filter blocks and hash buckets. Distinctness is checked on a 64-bit hash of
/// the encoding: a collision only discards a new prefix, never admits a duplicate.
pub fn reference_fib(hosts: &[String], n: usize, seed: u64) -> anyhow::Result<NameSet> {
    let hasher = foldhash::quality::FixedState::with_seed(0x7a1a);
    let mut seen = HashSet::with_capacity_and_hasher(n, foldhash::fast::FixedState::with_seed(1));
    let mut out = NameSetBuilder::default();
    for host in hosts {
        if out.len() == n {
            break;
        }
        if let Some(v) = host_prefix_value(host) {
            if seen.insert(hasher.hash_one(&v)) {
                out.push(&v);
            }
        }
    }
    if out.ends.is_empty() && n > 0 {
        bail!("no host names to grow a FIB from");
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut scratch = Vec::new();
    let mut draws = 0usize;
    while out.len() < n {
        draws += 1;
        if draws > n.saturating_mul(MAX_DRAWS_PER_PREFIX) {
            bail!("could not grow {} host prefixes to {n} distinct ones", hosts.len());
        }
        let from = rng.gen_range(0..out.len());
        scratch.clear();
        scratch.extend_from_slice(out.value(from));
        mutate(&mut scratch, &mut rng);
        if seen.insert(hasher.hash_one(&scratch)) {
            out.push(&scratch);
        }
    }
    Ok(out.build())
}

/// Replaces 1 to [`MAX_MUTATIONS`] characters of a prefix in place (lengths, and so
/// the TLV structure, unchanged), sparing the first component unless it is the only one.
///
/// Reads the component boundaries in place: a 100 M-prefix FIB draws over 100 M
/// candidates, and copying each into a [`Name`] (an allocation and a parse) was
/// most of the generation time.
fn mutate(value: &mut [u8], rng: &mut ChaCha8Rng) {
    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
    // (start, end) of each component's value.
    let mut comps: SmallVec<[(usize, usize); 16]> = SmallVec::new();
    let mut pos = 0;
    while pos < value.len() {
        let (_, start, end) = read_header(value, &mut pos).expect("prefixes are valid names");
        comps.push((start, end));
    }
    let first = usize::from(comps.len() > 1);
    for _ in 0..rng.gen_range(1..=MAX_MUTATIONS) {
        let (start, end) = comps[rng.gen_range(first..comps.len())];
        if start == end {
            continue;
        }
        // Position, then letter: the draws' order is the workload.
        let pos = start + rng.gen_range(0..end - start);
        value[pos] = ALPHABET[rng.gen_range(0..ALPHABET.len())];
    }
}

/// The tag that ends every generated Interest name: a SequenceNum component (a type
/// no FIB prefix uses) whose 8-byte value is `round` then `index`, big-endian. The
/// engine benchmark rewrites `round` in place on each pass over its packet pool to
/// keep names unique, and its producer reads `index` back to find the Data.
pub fn tag_component(round: u32, index: u32) -> [u8; TAG_WIRE_LEN] {
    let mut c = [0u8; TAG_WIRE_LEN];
    c[0] = SEQUENCE_NUM_COMPONENT as u8;
    c[1] = TAG_LEN as u8;
    c[2..6].copy_from_slice(&round.to_be_bytes());
    c[6..].copy_from_slice(&index.to_be_bytes());
    c
}

/// The (round, index) of a name's tag, given the name's encoded components.
pub fn name_tag(name_value: &[u8]) -> Option<(u32, u32)> {
    let at = name_value.len().checked_sub(TAG_WIRE_LEN)?;
    let c = &name_value[at..];
    if c[0] != SEQUENCE_NUM_COMPONENT as u8 || c[1] != TAG_LEN as u8 {
        return None;
    }
    Some((u32::from_be_bytes(c[2..6].try_into().ok()?), u32::from_be_bytes(c[6..].try_into().ok()?)))
}

/// Δ, the number of components an Interest name has beyond its longest matching
/// FIB prefix (the tag included, so at least 1). It sets how many prefix lengths an
/// LPM may probe and how much name there is to hash.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Delta {
    /// Every name exactly this far below its prefix (clamped to 1..=[`Delta::MAX`]).
    Fixed(usize),
    /// Caesar's reference traffic: 1 to [`Delta::MAX`] components, 2 on average
    /// (each further component with probability ½).
    Reference,
}

impl Delta {
    /// Most components added below a prefix (Caesar's names add 1 to 10).
    pub const MAX: usize = 10;

    fn sample(self, rng: &mut ChaCha8Rng) -> usize {
        match self {
            Delta::Fixed(d) => d.clamp(1, Delta::MAX),
            Delta::Reference => {
                let mut d = 1;
                while d < Delta::MAX && rng.gen_bool(0.5) {
                    d += 1;
                }
                d
            }
        }
    }
}

/// Appends a random uppercase component of 3 to 10 characters: never a FIB label.
fn push_random_component(value: &mut Vec<u8>, rng: &mut ChaCha8Rng) {
    let mut c = [0u8; 10];
    let len = rng.gen_range(3..=c.len());
    for b in &mut c[..len] {
        *b = rng.gen_range(b'A'..=b'Z');
    }
    write_tlv(value, GENERIC_COMPONENT, &c[..len]);
}

/// `count` Interest names, name `i` under a uniformly drawn prefix of `fib`, Δ
/// components below it, the last being the tag (round 0, index `i`). Unique by
/// construction, and each matches its prefix exactly Δ components short.
pub fn interest_names(fib: &NameSet, count: usize, delta: Delta, seed: u64) -> NameSet {
    assert!(!fib.is_empty(), "names need a FIB prefix to live under");
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut out = NameSetBuilder::default();
    let mut value = Vec::new();
    for i in 0..count {
        value.clear();
        value.extend_from_slice(fib.value(rng.gen_range(0..fib.len())));
        for _ in 1..delta.sample(&mut rng) {
            push_random_component(&mut value, &mut rng);
        }
        value.extend_from_slice(&tag_component(0, i as u32));
        out.push(&value);
    }
    out.build()
}

/// Augustus' worst case: every name unique, every name matching a FIB prefix, `delta` below it.
pub fn worst_case_names(fib: &NameSet, count: usize, delta: usize, seed: u64) -> NameSet {
    interest_names(fib, count, Delta::Fixed(delta), seed)
}

/// Caesar's reference traffic: a random prefix plus 1 to 10 components, 2 on average.
pub fn reference_names(fib: &NameSet, count: usize, seed: u64) -> NameSet {
    interest_names(fib, count, Delta::Reference, seed)
}

/// `count` names that match no prefix of a reference FIB (not even a first
/// component): 1 to 3 random uppercase components and a tag. The DoS workload that
/// makes an LPM probe every length and find nothing.
pub fn no_match_names(count: usize, seed: u64) -> NameSet {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut out = NameSetBuilder::default();
    let mut value = Vec::new();
    for i in 0..count {
        value.clear();
        for _ in 0..rng.gen_range(1..=3) {
            push_random_component(&mut value, &mut rng);
        }
        value.extend_from_slice(&tag_component(0, i as u32));
        out.push(&value);
    }
    out.build()
}

/// Object popularity for the caching workload: Zipf(α) ranks over `objects`
/// objects, rank 0 the most popular. Object `k` is Interest name `k` of a pool.
pub struct Popularity {
    zipf: Zipf<f64>,
    rng: ChaCha8Rng,
}

impl Popularity {
    /// Zipf with exponent `alpha` (> 0) over `objects` (≥ 1) objects.
    pub fn new(objects: u64, alpha: f64, seed: u64) -> anyhow::Result<Self> {
        let zipf = Zipf::new(objects, alpha).map_err(|e| anyhow::anyhow!("Zipf({objects}, {alpha}): {e}"))?;
        Ok(Popularity { zipf, rng: ChaCha8Rng::seed_from_u64(seed) })
    }

    /// The next requested object's rank.
    pub fn next_rank(&mut self) -> u64 {
        self.zipf.sample(&mut self.rng) as u64 - 1
    }
}

/// The aggregation workload's schedule: each name is asked for by every one of
/// `consumers` consumers in turn, so the PIT sees `consumers` Interests per entry.
/// Yields (consumer, name).
pub fn aggregate<I: IntoIterator<Item = u64>>(consumers: usize, names: I) -> impl Iterator<Item = (usize, u64)> {
    names.into_iter().flat_map(move |n| (0..consumers).map(move |c| (c, n)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use trajan_tables::LpmTable;

    fn hosts() -> Vec<String> {
        ["www.google.com", "google.com", "mail.google.com", "microsoft.com", "a.b.c.example.org", "google.com"]
            .map(String::from)
            .to_vec()
    }

    fn table(fib: &NameSet) -> LpmTable<()> {
        let mut t = LpmTable::new();
        for n in fib.iter() {
            t.insert(&n, ());
        }
        t
    }

    #[test]
    fn hosts_are_reversed_into_components() {
        let v = host_prefix_value("www.google.com").unwrap();
        assert_eq!(Name::from_value(Bytes::from(v)).unwrap().to_string(), "/com/google/www");
        assert_eq!(host_prefix_value("..."), None);
    }

    #[test]
    fn loads_the_reference_list() {
        let hosts = reference_hosts().expect("shared/data is beside the repository");
        assert_eq!(hosts.len(), 100_000);
        assert!(hosts.iter().all(|h| !h.bytes().any(|b| b.is_ascii_uppercase())));
    }

    #[test]
    fn fib_keeps_hosts_first_then_grows_to_n_distinct_prefixes() {
        let fib = reference_fib(&hosts(), 2000, 7).unwrap();
        assert_eq!(fib.len(), 2000);
        let names: Vec<String> = fib.iter().map(|n| n.to_string()).collect();
        assert_eq!(names[..5], ["/com/google/www", "/com/google", "/com/google/mail", "/com/microsoft", "/org/example/c/b/a"]);
        let distinct: HashSet<&str> = names.iter().map(String::as_str).collect();
        assert_eq!(distinct.len(), 2000, "no duplicates");
        // Grown prefixes keep their origin's shape: a real top-level component and
        // the same component count as some host.
        for n in fib.iter().skip(5) {
            let top = String::from_utf8(n.get(0).value.to_vec()).unwrap();
            assert!(top == "com" || top == "org", "{n}");
            assert!((2..=5).contains(&n.len()), "{n}");
        }
        assert_eq!(reference_fib(&hosts(), 3, 7).unwrap().len(), 3, "a smaller FIB is the top of the list");
    }

    #[test]
    fn generators_are_reproducible_for_a_seed() {
        let a = reference_fib(&hosts(), 500, 1).unwrap();
        let b = reference_fib(&hosts(), 500, 1).unwrap();
        let c = reference_fib(&hosts(), 500, 2).unwrap();
        assert!(a.iter().eq(b.iter()));
        assert!(!a.iter().eq(c.iter()));
        assert!(reference_names(&a, 100, 3).iter().eq(reference_names(&b, 100, 3).iter()));
        assert!(!reference_names(&a, 100, 3).iter().eq(reference_names(&a, 100, 4).iter()));
        let ranks = |seed| {
            let mut p = Popularity::new(1000, 1.0, seed).unwrap();
            (0..100).map(|_| p.next_rank()).collect::<Vec<_>>()
        };
        assert_eq!(ranks(5), ranks(5));
        assert_ne!(ranks(5), ranks(6));
    }

    #[test]
    fn too_small_a_list_fails_instead_of_looping() {
        assert!(reference_fib(&["a.b".to_string()], 1000, 1).is_err());
        assert!(reference_fib(&[], 10, 1).is_err());
    }

    #[test]
    fn fixed_delta_is_the_distance_to_the_longest_match() {
        let fib = reference_fib(&hosts(), 300, 1).unwrap();
        let t = table(&fib);
        for delta in [1, 2, 5] {
            let names = worst_case_names(&fib, 200, delta, 9);
            for (i, n) in names.iter().enumerate() {
                let (p, _) = t.lpm(&n).expect("always matches");
                assert_eq!(n.len() - p.len(), delta, "{n} under {p}");
                assert_eq!(name_tag(n.value()), Some((0, i as u32)));
            }
        }
    }

    #[test]
    fn reference_delta_spans_one_to_ten_averaging_two() {
        let fib = reference_fib(&hosts(), 300, 1).unwrap();
        let t = table(&fib);
        let names = reference_names(&fib, 20_000, 3);
        let deltas: Vec<usize> = names.iter().map(|n| n.len() - t.lpm(&n).unwrap().0.len()).collect();
        assert_eq!(deltas.iter().min(), Some(&1));
        assert!(*deltas.iter().max().unwrap() <= Delta::MAX);
        assert!(deltas.iter().any(|&d| d >= 6));
        let mean = deltas.iter().sum::<usize>() as f64 / deltas.len() as f64;
        assert!((1.9..2.1).contains(&mean), "mean Δ {mean}");
    }

    #[test]
    fn names_are_unique() {
        let fib = reference_fib(&hosts(), 10, 1).unwrap();
        let names = worst_case_names(&fib, 5000, 1, 2);
        let distinct: HashSet<Vec<u8>> = (0..names.len()).map(|i| names.value(i).to_vec()).collect();
        assert_eq!(distinct.len(), 5000);
    }

    #[test]
    fn no_match_names_match_nothing() {
        let fib = reference_fib(&reference_hosts().unwrap(), 100_000, 1).unwrap();
        let t = table(&fib);
        let names = no_match_names(2000, 4);
        assert_eq!(names.len(), 2000);
        assert!(names.iter().all(|n| t.lpm(&n).is_none()));
    }

    #[test]
    fn zipf_ranks_are_skewed() {
        let mut p = Popularity::new(1_000_000, 1.0, 1).unwrap();
        let mut counts = [0u32; 1000];
        let draws = 100_000;
        let mut top1000 = 0;
        for _ in 0..draws {
            let r = p.next_rank();
            assert!(r < 1_000_000);
            if r < 1000 {
                counts[r as usize] += 1;
                top1000 += 1;
            }
        }
        // Zipf(1): rank 1 is drawn about twice as often as rank 2, ten times rank 10.
        assert!(counts[0] > counts[1] && counts[1] > counts[9] && counts[9] > counts[99]);
        let ratio = f64::from(counts[0]) / f64::from(counts[9]);
        assert!((5.0..20.0).contains(&ratio), "rank 1 / rank 10 = {ratio}");
        // The top 0.1% of objects take about half the requests (H(1000)/H(10^6) ≈ 0.52).
        assert!((0.45..0.60).contains(&(top1000 as f64 / draws as f64)));
        assert!(Popularity::new(10, -1.0, 1).is_err());
        assert!(Popularity::new(0, 1.0, 1).is_err());
    }

    #[test]
    fn aggregation_asks_every_consumer_for_every_name() {
        let s: Vec<(usize, u64)> = aggregate(3, [7, 8]).collect();
        assert_eq!(s, [(0, 7), (1, 7), (2, 7), (0, 8), (1, 8), (2, 8)]);
    }
}
