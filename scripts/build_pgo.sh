#!/usr/bin/env bash
# Builds `trajan` with profile-guided optimisation (docs/PERFORMANCE.md, "Profile-
# guided build"): an instrumented build first runs the engine benchmark's four
# workloads and one short round of the daemon over UDP on loopback (so the I/O
# threads' code is profiled too, not left to be optimised as cold), then the
# release build uses that profile to lay out and inline the code that ran. The
# result is the same program, the daemon included, built differently: nothing in
# it depends on the profile being present or accurate.
#
# Output: target/pgo/release/trajan (the plain build, target/release/trajan, is
# untouched). Takes two release builds (≈ 4 minutes on 2 cores) and ≈ 30 s of
# training. Needs rustup's llvm-tools component (installed here when missing) for
# `llvm-profdata` of the compiler's own LLVM version.
#
# usage: scripts/build_pgo.sh [TRAINING_SECONDS_PER_WORKLOAD]   (default 2)
set -euo pipefail
cd "$(dirname "$0")/.."
SECS=${1:-2}
export TRAJAN_DATA=${TRAJAN_DATA:-$(cd .. && pwd)/shared/data}
SYSROOT=$(rustc --print sysroot)
HOST=$(rustc -vV | sed -n 's/^host: //p')
PROFDATA=$SYSROOT/lib/rustlib/$HOST/bin/llvm-profdata
if [ ! -x "$PROFDATA" ]; then
  command -v rustup >/dev/null || { echo "build_pgo: no llvm-profdata at $PROFDATA, and no rustup to install llvm-tools with" >&2; exit 1; }
  rustup component add llvm-tools
fi
[ -x "$PROFDATA" ] || { echo "build_pgo: no llvm-profdata at $PROFDATA" >&2; exit 1; }

# RUSTFLAGS replaces the flags of .cargo/config.toml, so they are passed on here
# (or the caller's RUSTFLAGS, when set, as a plain build would use them).
BASE_FLAGS=${RUSTFLAGS:-$(python3 -c 'import sys, tomllib; c = tomllib.load(open(".cargo/config.toml", "rb")); print(" ".join(c.get("target", {}).get(sys.argv[1], {}).get("rustflags", [])))' "$HOST")}

WORK=target/pgo-work
rm -rf "$WORK"
mkdir -p "$WORK/raw"
RAW=$(cd "$WORK/raw" && pwd)

echo "build_pgo: instrumented build" >&2
RUSTFLAGS="$BASE_FLAGS -Cprofile-generate=$RAW" cargo build --release -p trajan --target-dir "$WORK/target"
GEN=$WORK/target/release/trajan

echo "build_pgo: training (${SECS} s per engine workload, then the daemon over UDP)" >&2
# Profiles written while building (build scripts ran instrumented) are not the
# program's: start from an empty folder.
rm -f "$RAW"/*.profraw
for workload in worst zipf aggregate; do
  "$GEN" bench engine --workload "$workload" --fib-prefixes 1K --duration "$SECS" >/dev/null
done
"$GEN" bench engine --workload reference --fib-prefixes 100K --duration "$SECS" >/dev/null
TRAJAN=$GEN scripts/bench_daemon_udp.sh 1 20000 >/dev/null
ls "$RAW"/*.profraw >/dev/null 2>&1 || { echo "build_pgo: training wrote no profile" >&2; exit 1; }
"$PROFDATA" merge -o "$WORK/merged.profdata" "$RAW"

echo "build_pgo: optimised build" >&2
RUSTFLAGS="$BASE_FLAGS -Cprofile-use=$(pwd)/$WORK/merged.profdata -Cllvm-args=-pgo-warn-missing-function=false" \
  cargo build --release -p trajan --target-dir target/pgo
echo "build_pgo: target/pgo/release/trajan" >&2
