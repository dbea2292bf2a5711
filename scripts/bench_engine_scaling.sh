#!/bin/bash
# Engine scaling in memory (docs/PERFORMANCE.md, "Multi-core (issue 5)"): PAIRS
# back-to-back pairs of `trajan bench engine --workers 1` and `--workers N`, worst
# case, one line per run with each worker's rate and CPU share (a pair is clean when
# every share is >= 0.95; this machine's other work otherwise inflates the times).
# Usage: scripts/bench_engine_scaling.sh [PAIRS] [N] [FIB]   (defaults 3, 2, 1K)
# TRAJAN selects the binary (default target/release/trajan).
set -euo pipefail
B=${TRAJAN:-target/release/trajan}
PAIRS=${1:-3}; N=${2:-2}; FIB=${3:-1K}
export TRAJAN_DATA=${TRAJAN_DATA:-$(cd "$(dirname "$0")/../.." && pwd)/shared/data}
# Prints one line per JSON report.
SUMMARY=$(cat <<'PY'
import json, sys
for line in sys.stdin:
    r = json.loads(line)
    per = " + ".join(f"{p['exchanges_per_sec']:,.0f} (cpu {p['cpu_share'] or 0:.2f})" for p in r["per_worker"])
    print(f"workers={r['workers']} fib={r['fib_prefixes']} exchanges/s={r['exchanges_per_sec']:,.0f} = {per}")
PY
)
for _ in $(seq "$PAIRS"); do
  for w in 1 "$N"; do
    "$B" bench engine --workload worst --fib-prefixes "$FIB" --duration 4 --pool 200K --workers "$w" --json | python3 -c "$SUMMARY"
  done
done
