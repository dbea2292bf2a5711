#!/usr/bin/env bash
# Compares two builds of the engine on this noisy machine: separate runs drift by
# 15–30 % and the second of two back-to-back runs tends to be faster, so the two
# binaries run the same `trajan bench engine` command in turn, their order swapped
# every round. Prints one line per run (round, FIB size, label, exchanges/s in
# thousands, CPU share), then each binary's median and how many rounds it won.
#
# usage: scripts/bench_engine_ab.sh OLD NEW [ROUNDS] [FIB]...   (binaries; default 6 rounds at 1K)
# extra bench options: BENCH_ARGS="--workload reference --duration 3"
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 2 ] || { sed -n '2,9p' "$0"; exit 2; }
OLD=$1 NEW=$2 ROUNDS=${3:-6}
shift $(($# < 3 ? $# : 3))
FIBS=${*:-1K}
export TRAJAN_DATA=${TRAJAN_DATA:-$PWD/../shared/data}
ARGS=${BENCH_ARGS:---workload worst --duration 2 --pool 200K}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for r in $(seq "$ROUNDS"); do
  if [ $((r % 2)) = 1 ]; then order="new old"; else order="old new"; fi
  for f in $FIBS; do
    for which in $order; do
      bin=$OLD; [ "$which" = new ] && bin=$NEW
      # shellcheck disable=SC2086
      "$bin" bench engine $ARGS --fib-prefixes "$f" --json 2>/dev/null |
        python3 -c "import json,sys; d=json.loads(sys.stdin.readline()); print('$r', '$f', '$which', round(d['exchanges_per_sec']/1e3), round(d['cpu_share'], 2))" |
        tee -a "$out"
    done
  done
done
python3 - "$out" <<'EOF'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    r, f, which, k, _ = line.split()
    runs.setdefault(f, {}).setdefault(which, {})[r] = int(k)
for f, by in runs.items():
    old, new = by.get("old", {}), by.get("new", {})
    won = sum(new[r] > old[r] for r in new if r in old)
    print(f"{f}: old median {statistics.median(old.values()):.0f} K, new median {statistics.median(new.values()):.0f} K, new faster in {won} of {len(set(old) & set(new))} rounds")
EOF
