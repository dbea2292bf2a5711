//! Replays the committed corpus of this crate's fuzz target
//! (`fuzz/corpus/mgmt/*`) through the check the target runs, so the default
//! stable-Rust test run re-checks every input the fuzzer kept.

use std::path::Path;

use trajan_wire::fuzzing::replay;

#[test]
fn every_corpus_input_passes_its_check() {
    let failures = replay(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus"), trajan_router::fuzzing::TARGETS);
    assert!(failures.is_empty(), "corpus inputs failing their check: {failures:#?}");
}
