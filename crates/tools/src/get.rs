//! `trajan get`: fetches segmented Data (as published by `trajan put`,
//! ndnputchunks or `ndnd put`) with a window of Interests in flight, verifying every
//! segment, and writes the reassembled object.
//!
//! The version is discovered with a CanBePrefix+MustBeFresh Interest unless the name
//! ends with one. Lost segments are retransmitted (at once after a timeout, after a
//! growing pause after a Nack) up to `--retries` times each; the fetch fails with the
//! segment and the reason when a segment runs out of retries, when FinalBlockIds
//! disagree, or when a DigestSha256 signature does not match. SIGINT and SIGTERM
//! stop it within 100 ms: the fetch fails with [`Interrupted`], and `trajan`
//! exits as a shell reports that signal (130, 143).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicUsize;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use bytes::Bytes;
use trajan_wire::signed::{verify_data, SignatureCheck};
use trajan_wire::types::{SEGMENT_COMPONENT, VERSION_COMPONENT};
use trajan_wire::{Data, Interest, Name, NackReason};

use crate::client::{final_segment, name_arg, Client, ClientArgs, Event, Pipeline, Reply, STOP_POLL};
use crate::stop::{check, stop_signal, Interrupted};

/// Segments received out of order are buffered until the gap fills; new segments are
/// not requested further than this beyond the first missing one, bounding memory.
pub const MAX_REORDER: u64 = 4096;

/// Arguments of `trajan get`.
#[derive(clap::Args, Debug, Clone)]
pub struct GetArgs {
    /// Name of the object, with or without a version component (v=...)
    #[arg(value_parser = name_arg)]
    pub name: Name,
    /// Write the object to this file instead of standard output
    #[arg(short, long)]
    pub output: Option<PathBuf>,
    /// Interests in flight at once
    #[arg(long, default_value_t = 16, value_parser = clap::builder::TypedValueParser::map(clap::value_parser!(u16).range(1..), usize::from))]
    pub window: usize,
    /// InterestLifetime, in milliseconds: how long to wait for each segment
    #[arg(long, default_value_t = 4000, value_parser = clap::value_parser!(u64).range(1..))]
    pub timeout: u64,
    /// Retransmissions allowed per segment
    #[arg(long, default_value_t = 3)]
    pub retries: u32,
    /// How to reach the forwarder (`--transport`, `--udp-ports`).
    #[command(flatten)]
    pub client: ClientArgs,
}

/// Puts segments back in order and checks the object's shape: one FinalBlockId for
/// all segments that carry one, no segment beyond it, none missing.
#[derive(Debug, Default)]
pub struct Assembly {
    final_seg: Option<u64>,
    /// Out-of-order segments waiting for the gap before them to fill.
    waiting: BTreeMap<u64, Bytes>,
    /// The first segment not yet written.
    next_write: u64,
    highest: Option<u64>,
    bytes: u64,
}

impl Assembly {
    /// An assembly with nothing received.
    pub fn new() -> Self {
        Self::default()
    }

    /// The last segment number, once a segment has named it.
    pub fn final_segment(&self) -> Option<u64> {
        self.final_seg
    }

    /// Whether segment `seg` is still needed.
    pub fn wants(&self, seg: u64) -> bool {
        seg >= self.next_write && !self.waiting.contains_key(&seg) && self.final_seg.is_none_or(|f| seg <= f)
    }

    /// Whether a new Interest for `seg` may be sent: needed, and not too far ahead
    /// of the first gap.
    pub fn may_request(&self, seg: u64) -> bool {
        self.wants(seg) && seg < self.next_write.saturating_add(MAX_REORDER)
    }

    /// The first segment from `seg` on that is still needed (or the one past the final).
    pub fn next_wanted(&self, mut seg: u64) -> u64 {
        seg = seg.max(self.next_write);
        while self.waiting.contains_key(&seg) {
            seg += 1;
        }
        seg
    }

    /// Every segment up to the final one has been written.
    pub fn is_complete(&self) -> bool {
        self.final_seg.is_some_and(|f| self.next_write > f)
    }

    /// Content bytes written so far.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Accepts segment `seg` (carrying FinalBlockId `final_seg`, if any) and writes
    /// every segment now in order to `out`. Duplicates are ignored.
    pub fn accept(&mut self, seg: u64, final_seg: Option<u64>, content: Bytes, out: &mut impl Write) -> anyhow::Result<()> {
        if let Some(f) = final_seg {
            match self.final_seg {
                Some(g) if g != f => bail!("segment {seg} has FinalBlockId {f}, earlier segments said {g}"),
                _ => {}
            }
            if let Some(h) = self.highest.filter(|h| *h > f) {
                bail!("segment {seg} has FinalBlockId {f}, but segment {h} exists");
            }
            self.final_seg = Some(f);
        }
        if let Some(f) = self.final_seg.filter(|f| seg > *f) {
            bail!("segment {seg} is beyond the FinalBlockId {f}");
        }
        if !self.wants(seg) {
            return Ok(());
        }
        self.highest = self.highest.max(Some(seg));
        self.waiting.insert(seg, content);
        while let Some(c) = self.waiting.remove(&self.next_write) {
            out.write_all(&c).context("writing the output")?;
            self.bytes += c.len() as u64;
            self.next_write += 1;
        }
        Ok(())
    }
}

/// Signature statistics for the summary.
#[derive(Debug, Default)]
struct Verified {
    digest: u64,
    other: BTreeMap<u64, u64>,
}

impl Verified {
    fn check(&mut self, seg: u64, d: &Data) -> anyhow::Result<()> {
        match verify_data(d).with_context(|| format!("segment {seg}: malformed signature"))? {
            SignatureCheck::Valid => self.digest += 1,
            SignatureCheck::OtherType(t) => *self.other.entry(t).or_default() += 1,
            _ => bail!("segment {seg}: DigestSha256 signature does not match (corrupted or forged)"),
        }
        Ok(())
    }
}

/// Pause before retransmitting after the `k`th Nack of a segment: the producer or a
/// route may be on its way (NoRoute), or a link congested.
fn nack_backoff(k: u32) -> Duration {
    Duration::from_millis(10u64 << k.min(7)).min(Duration::from_secs(1))
}

/// The segment a Data packet carries: its name must be `<versioned>/seg=N`.
fn segment_of(versioned: &Name, d: &Data) -> anyhow::Result<u64> {
    match d.name().segment() {
        Some(s) if d.name().len() == versioned.len() + 1 && versioned.is_prefix_of(d.name()) => Ok(s),
        _ => bail!("Data {} is not a segment of {versioned}", d.name()),
    }
}

/// The FinalBlockId as a segment number; a FinalBlockId of another kind is an error.
fn checked_final(seg: u64, d: &Data) -> anyhow::Result<Option<u64>> {
    match (&d.final_block_id, final_segment(d)) {
        (Some(_), None) => bail!("segment {seg}: FinalBlockId is not a segment number"),
        (_, f) => Ok(f),
    }
}

struct Fetch<'a> {
    args: &'a GetArgs,
    /// Set by a stop signal, as [`stop_signal`] sets it.
    stop: &'a AtomicUsize,
    client: Client,
    out: &'a mut dyn Write,
    asm: Assembly,
    verified: Verified,
    retries: HashMap<u64, u32>,
    retransmissions: u64,
}

impl Fetch<'_> {
    fn interest(&self, name: Name) -> Interest {
        let mut i = Interest::new(name);
        i.lifetime_ms = Some(self.args.timeout);
        i
    }

    /// Waits `pause`, or less if a stop signal comes.
    fn pause(&self, pause: Duration) -> Result<(), Interrupted> {
        let until = Instant::now() + pause;
        loop {
            check(self.stop)?;
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Ok(());
            }
            std::thread::sleep(left.min(STOP_POLL));
        }
    }

    /// Counts one more retry of `seg`, failing once its budget is spent.
    fn retry(&mut self, seg: u64, why: &str) -> anyhow::Result<u32> {
        let k = self.retries.entry(seg).or_default();
        *k += 1;
        if *k > self.args.retries {
            bail!("segment {seg}: {why} after {} retransmissions", self.args.retries);
        }
        self.retransmissions += 1;
        Ok(*k)
    }

    fn take(&mut self, versioned: &Name, d: &Data) -> anyhow::Result<()> {
        let seg = segment_of(versioned, d)?;
        self.verified.check(seg, d)?;
        let f = checked_final(seg, d)?;
        self.asm.accept(seg, f, d.content_bytes(), &mut self.out)
    }

    /// Discovers the latest version of `name`: returns the versioned name, having
    /// taken the segment that answered.
    fn discover(&mut self, name: &Name) -> anyhow::Result<Name> {
        let mut i = self.interest(name.clone());
        i.can_be_prefix = true;
        i.must_be_fresh = true;
        loop {
            i.nonce = None;
            let stop = self.stop;
            let why = match self.client.express_checking(&i, || Ok(check(stop)?))? {
                Reply::Data(d) => {
                    let n = d.name().len();
                    let is_segment = n >= 2 && d.name().segment().is_some() && d.name().get(n - 2).typ == VERSION_COMPONENT;
                    if !is_segment || n < name.len() + 2 {
                        bail!("{} answered {name}, but it is not <name>/<version>/<segment>", d.name());
                    }
                    let versioned = d.name().prefix(n - 1);
                    self.take(&versioned, &d)?;
                    return Ok(versioned);
                }
                Reply::Nack(r) => {
                    let hint = if r == NackReason::NoRoute { ": no producer or route for it, see `trajan route list`" } else { "" };
                    let k = self.retry(0, &format!("version discovery for {name} Nacked ({}{hint})", nack_name(r)))?;
                    self.pause(nack_backoff(k))?;
                    continue;
                }
                Reply::Timeout => "version discovery timed out",
            };
            self.retry(0, &format!("{why} for {name}"))?;
        }
    }

    /// Fetches every segment of `versioned` with a window of Interests.
    fn fetch(&mut self, versioned: &Name) -> anyhow::Result<()> {
        let mut pipeline: Pipeline<u64> = Pipeline::new();
        let mut due: BTreeSet<(Instant, u64)> = BTreeSet::new();
        let mut next_new = 0u64;
        while !self.asm.is_complete() {
            check(self.stop)?;
            let now = Instant::now();
            while pipeline.len() < self.args.window {
                let seg = match due.first().copied() {
                    Some((t, s)) if t <= now => {
                        due.remove(&(t, s));
                        s
                    }
                    _ => {
                        next_new = self.asm.next_wanted(next_new);
                        if !self.asm.may_request(next_new) {
                            break;
                        }
                        next_new += 1;
                        next_new - 1
                    }
                };
                if self.asm.wants(seg) {
                    let i = self.interest(versioned.append_number(SEGMENT_COMPONENT, seg));
                    pipeline.express(&mut self.client, seg, i)?;
                }
            }
            if pipeline.is_empty() && due.is_empty() {
                bail!("no segment left to request, yet segment {} is missing", self.asm.next_write);
            }
            let tick = now + STOP_POLL;
            let until = due.first().map_or(tick, |(t, _)| (*t).min(tick));
            for ev in pipeline.poll(&mut self.client, until)? {
                match ev {
                    Event::Data(_, d) => self.take(versioned, &d)?,
                    Event::Nack(seg, r) if self.asm.wants(seg) => {
                        let k = self.retry(seg, &format!("Nacked ({})", nack_name(r)))?;
                        due.insert((Instant::now() + nack_backoff(k), seg));
                    }
                    Event::Timeout(seg) if self.asm.wants(seg) => {
                        self.retry(seg, "timed out")?;
                        due.insert((Instant::now(), seg));
                    }
                    _ => {}
                }
            }
        }
        Ok(())
    }
}

fn nack_name(r: NackReason) -> String {
    match r {
        NackReason::NoRoute => "no route".into(),
        NackReason::Congestion => "congestion".into(),
        NackReason::Duplicate => "duplicate".into(),
        NackReason::None => "no reason".into(),
    }
}

/// What a completed fetch did, for the summary line.
#[derive(Debug, Clone)]
pub struct Summary {
    /// The name with its version, as discovered or given.
    pub versioned: Name,
    /// Content bytes written.
    pub bytes: u64,
    /// Segments in the object.
    pub segments: u64,
    /// Segments whose DigestSha256 signature was checked.
    pub digest_verified: u64,
    /// Segments per other SignatureType, which cannot be checked without keys.
    pub unverified: BTreeMap<u64, u64>,
    /// Interests sent again after a timeout or Nack.
    pub retransmissions: u64,
}

/// Fetches the object `args` names into `out`, failing with [`Interrupted`]
/// once `stop` holds a signal number (as [`stop_signal`] sets it; 0 goes on).
pub fn fetch(args: &GetArgs, out: &mut dyn Write, stop: &AtomicUsize) -> anyhow::Result<Summary> {
    let name = args.name.clone();
    let mut f = Fetch {
        args,
        stop,
        client: Client::from_args(&args.client)?,
        out,
        asm: Assembly::new(),
        verified: Verified::default(),
        retries: HashMap::new(),
        retransmissions: 0,
    };
    let versioned = match name.last() {
        Some(c) if c.typ == VERSION_COMPONENT => name.clone(),
        _ => f.discover(&name)?,
    };
    f.retries.clear();
    f.fetch(&versioned)?;
    f.out.flush().context("writing the output")?;
    Ok(Summary {
        segments: f.asm.final_segment().map_or(0, |s| s + 1),
        bytes: f.asm.bytes(),
        digest_verified: f.verified.digest,
        unverified: f.verified.other,
        retransmissions: f.retransmissions,
        versioned,
    })
}

/// Fetches into `path`. A file is written beside it and renamed over it once
/// complete, so a failed or interrupted fetch leaves no partial output and an
/// existing file as it was; what is not a file (`/dev/null`, a pipe) is
/// written directly.
fn fetch_to(args: &GetArgs, path: &Path, stop: &AtomicUsize) -> anyhow::Result<Summary> {
    if path.metadata().is_ok_and(|m| !m.is_file()) {
        let file = File::create(path).with_context(|| format!("opening {}", path.display()))?;
        return fetch(args, &mut BufWriter::new(file), stop);
    }
    let name = path.file_name().with_context(|| format!("{} names no file", path.display()))?;
    let partial = path.with_file_name(format!(".{}.part-{}", name.to_string_lossy(), std::process::id()));
    let file = File::create(&partial).with_context(|| format!("writing {}: creating {}", path.display(), partial.display()))?;
    let mut w = BufWriter::new(file);
    let fetched = fetch(args, &mut w, stop);
    drop(w);
    let done = fetched.and_then(|s| {
        std::fs::rename(&partial, path).with_context(|| format!("renaming {} to {}", partial.display(), path.display()))?;
        Ok(s)
    });
    if done.is_err() {
        let _ = std::fs::remove_file(&partial);
    }
    done
}

/// Runs `trajan get`: fetches, writes the object, and prints a summary on standard
/// error.
pub fn run(args: GetArgs) -> anyhow::Result<()> {
    let start = Instant::now();
    // Caught before a partial file exists, so that no signal can leave one.
    let stop = stop_signal()?;
    let summary = match &args.output {
        Some(path) => fetch_to(&args, path, &stop)?,
        None => fetch(&args, &mut BufWriter::new(std::io::stdout()), &stop)?,
    };
    let secs = start.elapsed().as_secs_f64();
    let unverified: u64 = summary.unverified.values().sum();
    let types: Vec<String> = summary.unverified.keys().map(|t| t.to_string()).collect();
    eprintln!(
        "get: {} bytes in {} segments of {} in {:.3} s ({:.2} Mbit/s goodput); {} DigestSha256 signatures verified{}; {} retransmissions",
        summary.bytes,
        summary.segments,
        summary.versioned,
        secs,
        summary.bytes as f64 * 8.0 / secs.max(1e-9) / 1e6,
        summary.digest_verified,
        if unverified > 0 { format!(", {unverified} not verifiable without keys (SignatureType {})", types.join(",")) } else { String::new() },
        summary.retransmissions,
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_args::parse;
    use crate::test_forwarder::next_interest;
    use bytes::BytesMut;
    use signal_hook::consts::SIGTERM;
    use std::io::Read;
    use std::os::unix::net::UnixListener;
    use std::sync::atomic::Ordering;
    use std::sync::Arc;
    use trajan_wire::data::DataBuilder;


    fn b(s: &str) -> Bytes {
        Bytes::copy_from_slice(s.as_bytes())
    }

    #[test]
    fn assembles_in_order_from_any_arrival_order() {
        let mut a = Assembly::new();
        let mut out = Vec::new();
        assert!(a.wants(0) && a.wants(100) && !a.is_complete());
        a.accept(2, Some(3), b("c"), &mut out).unwrap();
        assert!(out.is_empty());
        assert!(!a.wants(4) && !a.wants(2) && a.wants(3));
        a.accept(0, None, b("a"), &mut out).unwrap();
        a.accept(0, None, b("a"), &mut out).unwrap();
        assert_eq!(out, b"a");
        a.accept(3, Some(3), b("d"), &mut out).unwrap();
        a.accept(1, Some(3), b("b"), &mut out).unwrap();
        assert_eq!(out, b"abcd");
        assert!(a.is_complete());
        assert_eq!(a.bytes(), 4);
        assert_eq!(a.next_wanted(0), 4);
        let mut gap = Assembly::new();
        gap.accept(0, None, b("a"), &mut out).unwrap();
        gap.accept(2, None, b("c"), &mut out).unwrap();
        gap.accept(3, None, b("d"), &mut out).unwrap();
        assert_eq!((gap.next_wanted(0), gap.next_wanted(2), gap.next_wanted(5)), (1, 4, 5));
    }

    #[test]
    fn rejects_inconsistent_final_block_ids() {
        let mut out = Vec::new();
        let mut a = Assembly::new();
        a.accept(0, Some(2), b("a"), &mut out).unwrap();
        assert!(a.accept(1, Some(3), b("b"), &mut out).is_err());
        assert!(a.accept(5, None, b("x"), &mut out).is_err());
        let mut a = Assembly::new();
        a.accept(4, None, b("e"), &mut out).unwrap();
        let e = a.accept(1, Some(2), b("b"), &mut out).unwrap_err();
        assert!(e.to_string().contains("segment 4 exists"), "{e}");
    }

    #[test]
    fn bounds_reordering() {
        let a = Assembly::new();
        assert!(a.may_request(MAX_REORDER - 1));
        assert!(!a.may_request(MAX_REORDER));
    }

    #[test]
    fn checks_segment_names_and_signatures() {
        let v: Name = "/o/v=3".parse().unwrap();
        let seg = |n: u64| v.append_number(SEGMENT_COMPONENT, n);
        let d = Data::decode(&DataBuilder::new(seg(1)).final_segment(1).build(b"x")).unwrap();
        assert_eq!(segment_of(&v, &d).unwrap(), 1);
        assert_eq!(checked_final(1, &d).unwrap(), Some(1));
        let mut ver = Verified::default();
        ver.check(1, &d).unwrap();
        let mut wire = d.wire().to_vec();
        let at = wire.len() - 1;
        wire[at] ^= 1;
        let forged = Data::decode(&Bytes::from(wire)).unwrap();
        assert!(ver.check(1, &forged).is_err());
        let mut other_type = d.clone();
        other_type.signature_type = 1;
        ver.check(1, &other_type).unwrap();
        assert_eq!((ver.digest, ver.other.get(&1)), (1, Some(&1)));
        let other = Data::decode(&DataBuilder::new("/o/v=4/seg=1".parse().unwrap()).build(b"x")).unwrap();
        assert!(segment_of(&v, &other).is_err());
        let unsegmented_final = Data::decode(&DataBuilder::new(seg(0)).build(b"x")).unwrap();
        assert_eq!(checked_final(0, &unsegmented_final).unwrap(), None);
        assert_eq!(nack_backoff(1), Duration::from_millis(20));
        assert_eq!(nack_backoff(30), Duration::from_secs(1));
    }

    /// A stop signal ends a fetch without waiting out the Interests in flight,
    /// and leaves no partial file: a scripted forwarder answers the first of
    /// three segments, then nothing, and raises the signal once the next
    /// Interest shows the fetch under way.
    #[test]
    fn an_interrupted_fetch_leaves_no_partial_file() {
        let dir = tempfile::tempdir().unwrap();
        let sock = dir.path().join("fw.sock");
        let listener = UnixListener::bind(&sock).unwrap();
        let out = dir.path().join("obj.bin");
        let partial = dir.path().join(format!(".obj.bin.part-{}", std::process::id()));
        let stop = Arc::new(AtomicUsize::new(0));
        let raise = Arc::clone(&stop);
        let seen = partial.clone();
        let forwarder = std::thread::spawn(move || {
            let (mut s, _) = listener.accept().unwrap();
            s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
            let mut rx = BytesMut::new();
            assert!(next_interest(&mut s, &mut rx).can_be_prefix, "version discovery first");
            s.write_all(&DataBuilder::new("/obj/v=1/seg=0".parse().unwrap()).final_segment(2).build(b"a")).unwrap();
            assert_eq!(next_interest(&mut s, &mut rx).name.segment(), Some(1));
            let under_way = seen.exists();
            raise.store(SIGTERM as usize, Ordering::Relaxed);
            // Unanswered until the fetch closes the connection.
            while matches!(s.read(&mut [0; 4096]), Ok(n) if n > 0) {}
            under_way
        });
        let transport = format!("unix://{}", sock.display());
        // A fetch that missed the signal would fail otherwise, after its timeout.
        let args = parse::<GetArgs>(&["get", "/obj", "-o", out.to_str().unwrap(), "--transport", &transport, "--timeout", "20000", "--retries", "0"]).unwrap();
        let e = fetch_to(&args, &out, &stop).unwrap_err();
        assert_eq!(e.downcast_ref::<Interrupted>(), Some(&Interrupted { signal: SIGTERM }), "{e:#}");
        assert!(forwarder.join().unwrap(), "the partial file existed while the fetch ran");
        assert!(!partial.exists() && !out.exists());
    }

    /// A fetch that fails leaves the file `-o` names as it was, and nothing beside it.
    #[test]
    fn a_failed_fetch_keeps_an_existing_output_file() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("keep.txt");
        std::fs::write(&out, b"precious").unwrap();
        let absent = format!("unix://{}", dir.path().join("absent.sock").display());
        let args = parse::<GetArgs>(&["get", "/a", "-o", out.to_str().unwrap(), "--transport", &absent]).unwrap();
        assert!(run(args).is_err());
        assert_eq!(std::fs::read(&out).unwrap(), b"precious");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1, "no partial file is left");
    }

    #[test]
    fn parses_arguments() {
        let c = parse::<GetArgs>(&["get", "/a/v=1", "-o", "out.bin", "--window", "4", "--retries", "0"]).unwrap();
        assert_eq!(c.output, Some(PathBuf::from("out.bin")));
        assert_eq!((c.window, c.retries, c.timeout), (4, 0, 4000));
        assert!(parse::<GetArgs>(&["get", "/a", "--window", "0"]).is_err());
        assert!(parse::<GetArgs>(&["get", "/a", "--timeout", "0"]).is_err());
    }
}
