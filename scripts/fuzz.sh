#!/usr/bin/env bash
# Fuzzes trajan-wire's codecs, trajan-engine's forwarder, trajan-io's
# dispatch key, inbound handling (fragment reassembly within a shared
# budget), stream framing and UDP face table (faces made, timed out and
# giving way to new peers at the face limit, from hostile datagrams), and
# trajan-router's NFD management (sequences of commands and dataset requests
# from local and remote faces) with cargo-fuzz (libFuzzer), one target at a
# time.
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]
#
# SECONDS per target (default 30); TARGETs default to every fuzz/fuzz_targets/*.rs.
# New inputs go to fuzz/target/corpus/<target>/ (ignored by git), seeded from the
# committed fuzz/corpus/<target>/. Environment:
#   MERGE=1            afterwards fold the inputs that add coverage into
#                      fuzz/corpus/<target>/, to be committed (the target's crate
#                      replays that folder in its tests/corpus.rs, in the default
#                      test run)
#   SANITIZER=address  run under AddressSanitizer (default none: trajan-wire's one
#                      `unsafe` read, `Name::value`, is checked by a debug assertion in
#                      these builds, and without ASan the fuzzer runs several times faster;
#                      the forwarder target also runs trajan-tables' `unsafe` hot spots,
#                      worth a run under ASan now and then)
# A finding stops the script; libFuzzer prints the fuzz/artifacts/ path of the input,
# and `cargo fuzz fmt <target> <file>` shows it. Needs nightly Rust, or stable Rust
# with RUSTC_BOOTSTRAP=1, which is used when no nightly toolchain is installed.
set -euo pipefail
cd "$(dirname "$0")/.."

secs=${1:-30}
shift || true
if (($# > 0)); then
    targets=("$@")
else
    targets=()
    for f in fuzz/fuzz_targets/*.rs; do targets+=("$(basename "$f" .rs)"); done
fi

command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked
if rustup run nightly rustc --version >/dev/null 2>&1; then
    fuzz=(cargo +nightly fuzz)
else
    fuzz=(env RUSTC_BOOTSTRAP=1 cargo fuzz)
fi
flags=(--sanitizer "${SANITIZER:-none}" --debug-assertions)

"${fuzz[@]}" build "${flags[@]}"
for t in "${targets[@]}"; do
    work=fuzz/target/corpus/$t
    mkdir -p "$work" "fuzz/corpus/$t"
    echo "== fuzzing $t for ${secs}s"
    "${fuzz[@]}" run "${flags[@]}" "$t" "$work" "fuzz/corpus/$t" -- \
        -max_total_time="$secs" -max_len=9000 -print_final_stats=1
    if [[ ${MERGE:-0} == 1 ]]; then
        "${fuzz[@]}" run "${flags[@]}" "$t" "fuzz/corpus/$t" "$work" -- -merge=1 -max_len=9000
    fi
done
