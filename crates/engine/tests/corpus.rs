//! Replays the committed corpus of the engine's fuzz target
//! (`fuzz/corpus/forwarder/*`) through the check the target runs, so the default
//! stable-Rust test run re-checks every input the fuzzer kept. The codecs' targets
//! are replayed by trajan-wire's own corpus test; trajan-router's, the crate
//! that sees every crate's targets, checks that each corpus folder is one's.

use std::path::Path;

use trajan_wire::fuzzing::replay;

#[test]
fn every_corpus_input_passes_its_check() {
    let failures = replay(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus"), trajan_engine::fuzzing::TARGETS);
    assert!(failures.is_empty(), "corpus inputs failing their check: {failures:#?}");
}
