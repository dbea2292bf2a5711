//! Replays the committed fuzz corpus (`fuzz/corpus/<target>/*`) through the same
//! checks the fuzz targets run, so every input the fuzzer kept, including the ones
//! that once found a bug, is re-checked by the default stable-Rust test run.

use std::fs;
use std::panic::catch_unwind;
use std::path::{Path, PathBuf};

use trajan_wire::fuzzing::TARGETS;

fn corpus_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus")
}

#[test]
fn every_corpus_input_passes_its_check() {
    let root = corpus_root();
    let mut failures = Vec::new();
    let mut replayed = 0;
    for dir in fs::read_dir(&root).unwrap_or_else(|e| panic!("{}: {e}", root.display())) {
        let dir = dir.unwrap().path();
        let target = dir.file_name().unwrap().to_string_lossy().into_owned();
        let (_, check) = TARGETS
            .iter()
            .find(|(name, _)| *name == target)
            .unwrap_or_else(|| panic!("corpus folder {target} has no check in trajan_wire::fuzzing::TARGETS"));
        for file in fs::read_dir(&dir).unwrap() {
            let path = file.unwrap().path();
            let bytes = fs::read(&path).unwrap();
            if catch_unwind(|| check(&bytes)).is_err() {
                failures.push(path.display().to_string());
            }
            replayed += 1;
        }
    }
    assert!(failures.is_empty(), "corpus inputs failing their check: {failures:#?}");
    assert!(replayed > 0, "no corpus input found under {}", root.display());
}

#[test]
fn every_target_has_seed_inputs() {
    for (target, _) in TARGETS {
        let dir = corpus_root().join(target);
        let count = fs::read_dir(&dir).map(|d| d.count()).unwrap_or(0);
        assert!(count > 0, "fuzz target {target} has no seed inputs in {}", dir.display());
    }
}
