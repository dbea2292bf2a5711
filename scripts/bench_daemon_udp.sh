#!/bin/bash
# The daemon over UDP on loopback, side by side in one run (docs/PERFORMANCE.md,
# "Multi-core (issue 5)"): 1 worker, 2 workers with software dispatch, 2 workers with
# the UDP-port-by-hash face. Each round starts a fresh `trajan run`, drives it with
# `trajan load` (a producer and a windowed consumer of unique names spread over 64
# second components, bounded by COUNT exchanges and 30 s), then reads the per-worker
# counters: `handed` is the share of packets a worker got from the I/O thread's
# rings rather than straight from its own port, and `cpu-us` the router's CPU time
# (all its threads, user + system, from /proc) per exchange, which a loaded
# machine disturbs less than the rate.
# Usage: scripts/bench_daemon_udp.sh [ROUNDS] [COUNT]   (TRAJAN selects the binary,
# default target/release/trajan; WINDOW the consumer's window, default 32).
set -e
B=${TRAJAN:-target/release/trajan}
ROUNDS=${1:-3}
COUNT=${2:-100000}
WINDOW=${WINDOW:-32}
D=$(mktemp -d)
R=
trap '[ -n "$R" ] && kill $R 2>/dev/null; wait 2>/dev/null; rm -rf $D' EXIT

# run CONFIG WORKERS HASH: one measurement, one output line.
run() {
    local name=$1 workers=$2 hash=$3 p=$((20000 + RANDOM % 20000)) extra=() client=()
    if [ "$hash" = yes ]; then
        extra=(--udp-ports "127.0.0.1:$((p + 100))")
        client=(--transport "udp://127.0.0.1:$((p + 100))" --udp-ports "$workers")
    else
        client=(--transport "udp://127.0.0.1:$p")
    fi
    $B run --unix "$D/s" --udp "127.0.0.1:$p" --tcp "127.0.0.1:$p" --workers "$workers" "${extra[@]}" >"$D/log" 2>&1 &
    R=$!
    for _ in $(seq 50); do [ -S "$D/s" ] && break; sleep 0.1; done
    local load
    load=$(cut -d' ' -f1 /proc/loadavg)
    local out
    out=$(timeout 60 $B load /load -c "$COUNT" --duration 30 -w "$WINDOW" "${client[@]}")
    local stats
    local ticks
    ticks=$(awk '{ print $14 + $15 }' "/proc/$R/stat")
    stats=$(timeout 20 $B status --transport "unix://$D/s" | grep '^total:' || true)
    kill $R; wait $R 2>/dev/null || true; R=
    local rate dispatched direct
    rate=$(sed -n 's/.*exchanges-per-s=\([0-9]*\).*/\1/p' <<<"$out")
    dispatched=$(sed -n 's/.* dispatched=\([0-9]*\).*/\1/p' <<<"$stats")
    direct=$(sed -n 's/.* direct=\([0-9]*\).*/\1/p' <<<"$stats")
    local handed=-
    if [ -n "$dispatched" ] && [ $((dispatched + direct)) -gt 0 ]; then
        handed=$(awk -v a="$dispatched" -v b="$direct" 'BEGIN { printf "%.4f", a / (a + b) }')
    fi
    local received cpu
    received=$(sed -n 's/.*received=\([0-9]*\).*/\1/p' <<<"$out")
    cpu=$(awk -v t="$ticks" -v hz="$(getconf CLK_TCK)" -v n="$received" 'BEGIN { printf "%.1f", t / hz * 1e6 / n }')
    printf '%-12s exchanges/s=%-7s handed=%-7s cpu-us=%-6s loadavg=%s  [%s]\n' "$name" "$rate" "$handed" "$cpu" "$load" "$out"
}

for round in $(seq "$ROUNDS"); do
    echo "round $round"
    run 1-worker 1 no
    run 2-software 2 no
    run 2-port-hash 2 yes
done
