//! `trajan put`: publishes a file as versioned, segmented Data
//! (`<prefix>/v=<ms>/seg=<n>`, FinalBlockId on every segment) and serves it until
//! stopped, like ndnputchunks and `ndnd put`. A name that ends in a version
//! (`/a/v=5`) is published as that version, as ndnputchunks does. Both ways of discovering the version
//! are answered: a CanBePrefix Interest for the prefix (as `trajan get` sends) gets
//! segment 0, and an RDR metadata Interest `<prefix>/32=metadata` (as ndncatchunks
//! and `ndnd cat` send) gets `<prefix>/32=metadata/v=<ms>/seg=0` whose content names
//! the version.

use std::io::Read;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::{bail, Context};
use bytes::Bytes;
use trajan_wire::data::DataBuilder;
use trajan_wire::tlv::{read_nonneg, write_tlv};
use trajan_wire::types::{FINAL_BLOCK_ID, KEYWORD_COMPONENT, SEGMENT_COMPONENT, VERSION_COMPONENT};
use trajan_wire::{Interest, Name, MAX_PACKET_SIZE};

use crate::client::{name_arg, now_ms, Client, ClientArgs};
use crate::stop::stop_flag;

/// Content bytes per segment by default: the largest round number whose Data, with
/// a name of a few hundred bytes, still fits NDN's 8800-byte packet limit.
pub const DEFAULT_SEGMENT_SIZE: usize = 8000;

/// The keyword component of RDR metadata names (`32=metadata`).
pub const RDR_METADATA: &[u8] = b"metadata";

/// Arguments of `trajan put`.
#[derive(clap::Args, Debug, Clone)]
pub struct PutArgs {
    /// Name prefix to publish under; a version (the time now, in ms) is appended unless the name ends with one, then segment numbers
    #[arg(value_parser = name_arg)]
    pub prefix: Name,
    /// File to publish ("-" reads standard input)
    pub file: PathBuf,
    /// FreshnessPeriod of every segment, in milliseconds
    #[arg(long, default_value_t = 10_000)]
    pub freshness: u64,
    /// Content bytes per segment (at most about 8.7 kB: a segment, name and signature included, must fit NDN's 8800-byte packet limit)
    #[arg(long, default_value_t = DEFAULT_SEGMENT_SIZE, value_parser = segment_size_arg)]
    pub segment_size: usize,
    /// Exit once every segment has been sent at least once (and Interests have stopped coming)
    #[arg(long)]
    pub once: bool,
    /// Exit after this many seconds [default: serve until interrupted]
    #[arg(long, value_name = "SECONDS")]
    pub exit_after_seconds: Option<u64>,
    /// How to reach the forwarder (`--transport`, `--udp-ports`).
    #[command(flatten)]
    pub client: ClientArgs,
}

/// Segment `seg` of `versioned`, the last being `last`, before its content.
fn segment(versioned: &Name, seg: u64, last: u64, freshness_ms: u64) -> DataBuilder {
    DataBuilder::new(versioned.append_number(SEGMENT_COMPONENT, seg)).freshness_ms(freshness_ms).final_segment(last)
}

/// The most content bytes a segment of `versioned` can carry when the last is
/// `last`, so that the whole Data, name and signature included, fits NDN's
/// packet limit. The name's length sets it, so no one bound suits every
/// prefix: checking it before cutting the file says what would fit.
pub fn max_segment_size(versioned: &Name, last: u64, freshness_ms: u64) -> usize {
    // Long enough that the Content's and the Data's lengths take three bytes,
    // as they do near the limit; the last segment's number is the widest.
    const PROBE: usize = 253;
    let probe = segment(versioned, last, last, freshness_ms).build(&[0; PROBE]);
    MAX_PACKET_SIZE.saturating_sub(probe.len() - PROBE)
}

/// `--segment-size`: from 1 to what a segment of the shortest name `put`
/// publishes (`/v=<now>/seg=0`) can carry, so that a size no prefix can use is
/// refused as the options are read. [`Publication::new`] checks the bound of
/// the prefix given, which a longer name lowers.
fn segment_size_arg(s: &str) -> Result<usize, String> {
    let most = max_segment_size(&Name::root().append_number(VERSION_COMPONENT, now_ms()), 0, 0);
    match s.parse() {
        Ok(n) if (1..=most).contains(&n) => Ok(n),
        _ => Err(format!("not a number from 1 to {most}: a segment, name and signature included, must fit the {MAX_PACKET_SIZE}-byte packet limit")),
    }
}

/// The prefix to publish under and the version to publish: the one `name`
/// ends with, or now in milliseconds.
///
/// A version given is kept, not followed by another: `/a/v=5/v=<now>` is
/// found neither by `trajan get /a/v=5`, which takes a name that ends in a
/// version as the version to fetch, nor by ndncatchunks. ndnputchunks keeps
/// it too ("appended as needed"). The prefix registered (and asked for the
/// RDR metadata) is the one before the version, where consumers discover it.
pub fn split_version(name: &Name) -> anyhow::Result<(Name, u64)> {
    let Some(last) = name.last().filter(|c| c.typ == VERSION_COMPONENT) else {
        return Ok((name.clone(), now_ms()));
    };
    let prefix = name.prefix(name.len() - 1);
    match read_nonneg(last.value) {
        // Only the shortest encoding publishes the very name given.
        Ok(v) if prefix.append_number(VERSION_COMPONENT, v) == *name => Ok((prefix, v)),
        _ => bail!("{name} ends in a version component that is not a version number: publish under {prefix}/v=<number>, or under {prefix} for a version of now"),
    }
}

/// A file cut into signed segments, ready to answer Interests.
#[derive(Debug, Clone)]
pub struct Publication {
    versioned: Name,
    segments: Vec<Bytes>,
    /// `<prefix>/32=metadata`, the name of the RDR metadata Data, and its encoding.
    metadata_prefix: Name,
    metadata_name: Name,
    metadata: Bytes,
}

impl Publication {
    /// Cuts `content` into segments of `segment_size` bytes (an empty file is one empty
    /// segment) under `<prefix>/v=<version>`, each signed with DigestSha256.
    pub fn new(prefix: &Name, version: u64, content: &[u8], segment_size: usize, freshness_ms: u64) -> anyhow::Result<Self> {
        if segment_size == 0 {
            bail!("segment size must be positive");
        }
        let versioned = prefix.append_number(VERSION_COMPONENT, version);
        let count = content.len().div_ceil(segment_size).max(1);
        let last = count as u64 - 1;
        let most = max_segment_size(&versioned, last, freshness_ms);
        if segment_size.min(content.len()) > most {
            bail!("a segment of {versioned} carries at most {most} content bytes within the {MAX_PACKET_SIZE}-byte packet limit: lower --segment-size to {most} or less");
        }
        let segments: Vec<Bytes> = (0..count)
            .map(|i| {
                let chunk = &content[(i * segment_size).min(content.len())..((i + 1) * segment_size).min(content.len())];
                segment(&versioned, i as u64, last, freshness_ms).build(chunk)
            })
            .collect();
        // RDR metadata content: the versioned Name, plus the FinalBlockId as ndnd adds it.
        let metadata_prefix = prefix.append(KEYWORD_COMPONENT, RDR_METADATA);
        let mut meta_content = versioned.to_wire();
        let final_id = Name::root().append_number(SEGMENT_COMPONENT, last);
        write_tlv(&mut meta_content, FINAL_BLOCK_ID, final_id.value());
        let metadata_name = metadata_prefix.append_number(VERSION_COMPONENT, version).append_number(SEGMENT_COMPONENT, 0);
        let metadata = DataBuilder::new(metadata_name.clone()).freshness_ms(freshness_ms).final_segment(0).build(&meta_content);
        Ok(Publication { versioned, segments, metadata_prefix, metadata_name, metadata })
    }

    /// `<prefix>/v=<version>`.
    pub fn versioned_name(&self) -> &Name {
        &self.versioned
    }

    /// Number of segments.
    pub fn len(&self) -> usize {
        self.segments.len()
    }

    /// Always false: even an empty file has one segment.
    pub fn is_empty(&self) -> bool {
        self.segments.is_empty()
    }

    /// The Data answering `interest`, if any, with its segment number (`None` for
    /// the RDR metadata): an exact segment name, segment 0 for a CanBePrefix
    /// Interest whose name is a prefix of segment 0's, or the metadata for a
    /// CanBePrefix Interest under `<prefix>/32=metadata`.
    pub fn answer(&self, interest: &Interest) -> Option<(Option<usize>, &Bytes)> {
        let n = &interest.name;
        if interest.can_be_prefix && self.metadata_prefix.is_prefix_of(n) {
            return n.is_prefix_of(&self.metadata_name).then_some((None, &self.metadata));
        }
        if n.len() == self.versioned.len() + 1 && self.versioned.is_prefix_of(n) {
            let seg = usize::try_from(n.segment()?).ok()?;
            return self.segments.get(seg).map(|d| (Some(seg), d));
        }
        if interest.can_be_prefix && n.is_prefix_of(&self.versioned) {
            return self.segments.first().map(|d| (Some(0), d));
        }
        None
    }
}

fn read_input(file: &PathBuf) -> anyhow::Result<Vec<u8>> {
    let mut content = Vec::new();
    if file.as_os_str() == "-" {
        std::io::stdin().read_to_end(&mut content).context("reading standard input")?;
    } else {
        content = std::fs::read(file).with_context(|| format!("reading {}", file.display()))?;
    }
    Ok(content)
}

/// Runs `trajan put`: registers the prefix, prints `READY <versioned name> ...` on
/// standard output once Interests can reach it, and serves until stopped.
pub fn run(args: PutArgs) -> anyhow::Result<()> {
    let (prefix, version) = split_version(&args.prefix)?;
    let prefix = &prefix;
    let content = read_input(&args.file)?;
    let publication = Publication::new(prefix, version, &content, args.segment_size, args.freshness)?;
    let stop = stop_flag(args.exit_after_seconds.map(Duration::from_secs))?;
    let mut client = Client::from_args(&args.client)?;
    client.register(prefix).with_context(|| format!("registering {prefix}"))?;
    // Printed per line, never holding the stdout lock: the tools also run as
    // threads of one process (tests), where a held lock would stall the others.
    println!("READY {} segments={} bytes={}", publication.versioned_name(), publication.len(), content.len());
    let mut sent = vec![false; publication.len()];
    let (mut unsent, mut interests) = (publication.len(), 0u64);
    let done = AtomicBool::new(false);
    client.serve_until_done(&stop, &done, |interest| {
        let (seg, data) = publication.answer(interest)?;
        interests += 1;
        if seg.is_some_and(|seg| !std::mem::replace(&mut sent[seg], true)) {
            unsent -= 1;
            if args.once && unsent == 0 {
                done.store(true, Ordering::Relaxed);
            }
        }
        Some(data.clone())
    })?;
    let _ = client.unregister(prefix);
    eprintln!("put: answered {interests} Interests for {} ({} of {} segments sent)", publication.versioned_name(), publication.len() - unsent, publication.len());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_args::parse;
    use trajan_wire::Data;


    fn decode(b: &Bytes) -> Data {
        Data::decode(b).unwrap()
    }

    #[test]
    fn segments_and_reassembles() {
        let content: Vec<u8> = (0..2500u32).map(|i| (i % 251) as u8).collect();
        let p = Publication::new(&"/f".parse().unwrap(), 42, &content, 1000, 500).unwrap();
        assert_eq!(p.len(), 3);
        assert_eq!(p.versioned_name().to_string(), "/f/v=42");
        let mut joined = Vec::new();
        for (i, s) in p.segments.iter().enumerate() {
            let d = decode(s);
            assert_eq!(d.name().segment(), Some(i as u64));
            assert_eq!(crate::client::final_segment(&d), Some(2));
            assert_eq!(d.freshness_ms, Some(500));
            joined.extend_from_slice(d.content());
        }
        assert_eq!(joined, content);
        // Exact multiples do not add an empty segment; an empty file is one segment.
        assert_eq!(Publication::new(&"/f".parse().unwrap(), 1, &content[..2000], 1000, 0).unwrap().len(), 2);
        let empty = Publication::new(&"/f".parse().unwrap(), 1, &[], 1000, 0).unwrap();
        assert_eq!(empty.len(), 1);
        assert!(decode(&empty.segments[0]).content().is_empty());
        assert!(Publication::new(&"/f".parse().unwrap(), 1, &[0; 9000], 9000, 0).is_err());
    }

    #[test]
    fn answers_segment_and_discovery_interests() {
        let p = Publication::new(&"/f".parse().unwrap(), 42, &[1; 2500], 1000, 0).unwrap();
        let ask = |uri: &str, cbp: bool| {
            let mut i = Interest::new(uri.parse().unwrap());
            i.can_be_prefix = cbp;
            p.answer(&i).map(|(seg, _)| seg)
        };
        assert_eq!(ask("/f/v=42/seg=2", false), Some(Some(2)));
        assert_eq!(ask("/f/v=42/seg=3", false), None);
        assert_eq!(ask("/f/v=41/seg=0", false), None);
        assert_eq!(ask("/f", true), Some(Some(0)));
        assert_eq!(ask("/f/v=42", true), Some(Some(0)));
        assert_eq!(ask("/f/32=metadata", true), Some(None));
        assert_eq!(ask("/f/32=metadata", false), None);
        assert_eq!(ask("/f/32=metadata/v=1", true), None);
        let mut i = Interest::new("/f/32=metadata".parse().unwrap());
        i.can_be_prefix = true;
        let meta = Data::decode(p.answer(&i).unwrap().1).unwrap();
        assert_eq!(meta.name().to_string(), "/f/32=metadata/v=42/seg=0");
        let named = Name::from_wire(&meta.content_bytes().slice(..p.versioned_name().to_wire().len())).unwrap();
        assert_eq!(&named, p.versioned_name());
        assert_eq!(ask("/f", false), None);
        assert_eq!(ask("/g", true), None);
        assert_eq!(ask("/f/v=42/seg=1/x", true), None);
    }

    /// The bound `--segment-size` and a publication check is exact: a segment
    /// that carries it fills the packet limit to the byte, and one byte more is
    /// refused before the file is cut, saying what fits.
    #[test]
    fn segment_size_is_bounded_by_the_packet_limit() {
        let prefix: Name = "/a/rather/long/prefix/for/a/file".parse().unwrap();
        let most = max_segment_size(&prefix.append_number(VERSION_COMPONENT, 7), 0, 500);
        let fits = Publication::new(&prefix, 7, &vec![1; most], most, 500).unwrap();
        assert_eq!(fits.segments[0].len(), MAX_PACKET_SIZE);
        let e = Publication::new(&prefix, 7, &vec![1; most + 1], most + 1, 500).unwrap_err().to_string();
        assert!(e.contains(&format!("lower --segment-size to {most} or less")), "{e}");
        // A size larger than the file is no segment's size.
        Publication::new(&prefix, 7, b"small", most + 1, 500).unwrap();

        let shortest = max_segment_size(&Name::root().append_number(VERSION_COMPONENT, now_ms()), 0, 0);
        assert!((most..MAX_PACKET_SIZE).contains(&shortest), "{shortest}");
        let size = |n: usize| parse::<PutArgs>(&["put", "/a", "f", "--segment-size", &n.to_string()]).map(|c| c.segment_size);
        assert_eq!(size(shortest).unwrap(), shortest);
        for refused in [0, shortest + 1, 65535] {
            let e = size(refused).unwrap_err().to_string();
            assert!(e.contains(&format!("not a number from 1 to {shortest}")), "{e}");
        }
    }

    /// A name that ends in a version is published as that version, under the
    /// name before it; any other name gets a version of now.
    #[test]
    fn a_version_given_is_published_as_given() {
        let split = |uri: &str| split_version(&uri.parse().unwrap()).map(|(p, v)| (p.to_string(), v));
        assert_eq!(split("/vv/v=5").unwrap(), ("/vv".to_owned(), 5));
        assert_eq!(split("/vv/x").unwrap().0, "/vv/x");
        // Not a NonNegativeInteger, or not its shortest encoding (which would publish another name).
        for odd in ["/vv/54=%01%02%03", "/vv/54=%00%05"] {
            let e = split(odd).unwrap_err().to_string();
            assert!(e.contains("not a version number: publish under /vv/v=<number>"), "{e}");
        }
    }

    #[test]
    fn parses_arguments() {
        let c = parse::<PutArgs>(&["put", "/a/b", "file.bin", "--freshness", "5", "--once", "--transport", "unix:///s"]).unwrap();
        assert_eq!((c.prefix.to_string().as_str(), c.freshness, c.segment_size), ("/a/b", 5, DEFAULT_SEGMENT_SIZE));
        assert!(c.once);
        assert_eq!(c.client.transport.as_deref(), Some("unix:///s"));
        assert!(parse::<PutArgs>(&["put", "/a", "f", "--segment-size", "0"]).is_err());
        assert!(parse::<PutArgs>(&["put", "/a"]).is_err());
    }
}
