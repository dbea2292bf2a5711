#!/bin/bash
# Times one 20 MB fetch through `trajan run --workers N` over UDP loopback
# (docs/PERFORMANCE.md, "Multi-core (issue 5)"). Usage: scripts/bench_workers_fetch.sh N
# TRAJAN selects the binary (default target/debug/trajan).
set -e
B=${TRAJAN:-target/debug/trajan}
D=$(mktemp -d); P=$((40000 + RANDOM % 20000))
trap 'kill $PP $R 2>/dev/null; wait 2>/dev/null; rm -rf $D' EXIT
$B run --unix "$D/s" --udp 127.0.0.1:$P --tcp 127.0.0.1:$P --workers "$1" >"$D/log" 2>&1 & R=$!
sleep 0.5
head -c 20000000 /dev/urandom > "$D/f"
$B put /bench/file "$D/f" --transport udp://127.0.0.1:$P > "$D/put.out" & PP=$!
for _ in $(seq 50); do grep -q READY "$D/put.out" && break; sleep 0.1; done
S=$(date +%s.%N)
$B get /bench/file -o "$D/g" --window 64 --transport udp://127.0.0.1:$P
E=$(date +%s.%N)
cmp "$D/f" "$D/g" && echo "workers=$1 seconds=$(echo "$E - $S" | bc)"
