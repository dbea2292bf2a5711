//! Replays the committed corpora of this crate's fuzz targets
//! (`fuzz/corpus/dispatch_key/*`, `fuzz/corpus/inbound/*`, `fuzz/corpus/framing/*`,
//! `fuzz/corpus/datagram/*`) through the checks the targets run, so the
//! default stable-Rust test run re-checks every input the fuzzer kept.

use std::path::Path;

use trajan_wire::fuzzing::replay;

#[test]
fn every_corpus_input_passes_its_check() {
    let failures = replay(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus"), trajan_io::fuzzing::TARGETS);
    assert!(failures.is_empty(), "corpus inputs failing their check: {failures:#?}");
}
