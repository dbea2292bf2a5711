//! Replays the committed fuzz corpus (`fuzz/corpus/<target>/*`) through the same
//! checks the fuzz targets run, so every input the fuzzer kept, including the ones
//! that once found a bug, is re-checked by the default stable-Rust test run.
//! (trajan-engine's corpus test replays its own targets' folders, beside these,
//! and checks that every folder belongs to some crate's target.)

use std::path::Path;

use trajan_wire::fuzzing::{replay, TARGETS};

#[test]
fn every_corpus_input_passes_its_check() {
    let failures = replay(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus"), TARGETS);
    assert!(failures.is_empty(), "corpus inputs failing their check: {failures:#?}");
}
