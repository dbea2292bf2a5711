//! Replays the committed corpus of this crate's fuzz target
//! (`fuzz/corpus/mgmt/*`) through the check the target runs, so the default
//! stable-Rust test run re-checks every input the fuzzer kept; and, since this
//! crate sees every crate's targets, checks that no corpus folder is left out.

use std::fs;
use std::path::{Path, PathBuf};

use trajan_wire::fuzzing::replay;

fn corpus_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus")
}

#[test]
fn every_corpus_input_passes_its_check() {
    let failures = replay(&corpus_root(), trajan_router::fuzzing::TARGETS);
    assert!(failures.is_empty(), "corpus inputs failing their check: {failures:#?}");
}

/// A corpus folder no crate replays would be fuzzed but never re-checked.
#[test]
fn every_corpus_folder_belongs_to_a_target() {
    let root = corpus_root();
    let targets: Vec<&str> = [trajan_wire::fuzzing::TARGETS, trajan_engine::fuzzing::TARGETS, trajan_io::fuzzing::TARGETS, trajan_router::fuzzing::TARGETS]
        .concat()
        .iter()
        .map(|(name, _)| *name)
        .collect();
    for dir in fs::read_dir(&root).unwrap_or_else(|e| panic!("{}: {e}", root.display())) {
        let name = dir.unwrap().file_name().to_string_lossy().into_owned();
        assert!(targets.contains(&name.as_str()), "corpus folder {name} is no fuzz target's (trajan_wire, trajan_engine, trajan_io or trajan_router::fuzzing::TARGETS)");
    }
}
