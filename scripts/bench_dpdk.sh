#!/usr/bin/env bash
# Issue 6's measurement: the same `trajan gen` worst-case workload (unique names,
# 100-byte Data, window 256) through
#   direct  — gen's consumer port wired to its own producer port (memif): the
#             generator's own ceiling, to show it is not what the others measure;
#   trajan  — `trajan run` forwarding between two memif ports (DPDK faces);
#   testpmd — `dpdk-testpmd --forward-mode=io` on the same two memif ports;
#   udp     — `trajan run` over kernel UDP on loopback, for contrast.
# The generator runs pinned to CPU $GEN_CPU, the forwarder to CPU $FWD_CPU. Each
# configuration runs $RUNS times, interleaved; every run is bounded by -c and
# --duration. No hugepages needed (--no-huge). Prints one JSON line per run.
#
# usage: scripts/bench_dpdk.sh [COUNT] [RUNS]    (TRAJAN=path/to/trajan built with --features dpdk)
set -euo pipefail
cd "$(dirname "$0")/.."
COUNT=${1:-2000000}
RUNS=${2:-3}
TRAJAN=${TRAJAN:-target/release/trajan}
GEN_CPU=${GEN_CPU:-0}
FWD_CPU=${FWD_CPU:-1}
DIR=$(mktemp -d /tmp/trajan-bench-dpdk.XXXXXX)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$DIR"' EXIT
GEN_ARGS=(/gen --duration 30 -w "${WINDOW:-256}" --size 100 --json)
MEMIF=${MEMIF:-}
EAL_GEN=(--eal=--no-pci --eal=--no-huge --eal=-m --eal=512)

client_eal() { # the generator's two memif clients on $DIR/c.sock and $DIR/p.sock
  echo "--eal=--vdev=net_memif0,role=client,socket=$DIR/c.sock,id=0$MEMIF" "--eal=--vdev=net_memif1,role=client,socket=$DIR/p.sock,id=0$MEMIF"
}

run_direct() {
  taskset -c "$GEN_CPU" "$TRAJAN" gen "${GEN_ARGS[@]}" -c "$COUNT" --consumer dpdk:net_memif0 --producer dpdk:net_memif1 "${EAL_GEN[@]}" \
    "--eal=--vdev=net_memif0,role=server,socket=$DIR/d.sock,id=0$MEMIF" "--eal=--vdev=net_memif1,role=client,socket=$DIR/d.sock,id=0$MEMIF" 2>"$DIR/direct.err" | tail -1 || tail -3 "$DIR/direct.err" >&2
}

run_trajan() {
  cat >"$DIR/trajan.toml" <<EOF
[faces]
udp_listen = []
tcp_listen = []
unix_path = ""
[log]
level = "warn"
[dpdk]
eal_args = ["--no-pci", "--no-huge", "-m", "1024", "--vdev=net_memif0,role=server,socket=$DIR/c.sock,id=0$MEMIF", "--vdev=net_memif1,role=server,socket=$DIR/p.sock,id=0$MEMIF"]
[[dpdk.ports]]
name = "net_memif0"
[[dpdk.ports]]
name = "net_memif1"
[[routes]]
prefix = "/gen"
face = "dev://net_memif1"
EOF
  "$TRAJAN" run --config "$DIR/trajan.toml" --cores "$FWD_CPU" >"$DIR/router.log" 2>&1 &
  local pid=$!
  sleep 2
  # shellcheck disable=SC2046
  taskset -c "$GEN_CPU" "$TRAJAN" gen "${GEN_ARGS[@]}" -c "$COUNT" --consumer dpdk:net_memif0 --producer dpdk:net_memif1 "${EAL_GEN[@]}" $(client_eal) 2>/dev/null | tail -1
  kill -INT "$pid"; wait "$pid" || true
}

run_testpmd() {
  dpdk-testpmd -l "$GEN_CPU,$FWD_CPU" --main-lcore "$GEN_CPU" --no-pci --no-huge -m 1024 --no-shconf \
    "--vdev=net_memif0,role=server,socket=$DIR/c.sock,id=0$MEMIF" "--vdev=net_memif1,role=server,socket=$DIR/p.sock,id=0$MEMIF" \
    -- --forward-mode=io --auto-start --stats-period 5 --nb-cores=1 >"$DIR/testpmd.log" 2>&1 &
  local pid=$!
  sleep 2
  # shellcheck disable=SC2046
  taskset -c "$GEN_CPU" "$TRAJAN" gen "${GEN_ARGS[@]}" -c "$COUNT" --consumer dpdk:net_memif0 --producer dpdk:net_memif1 "${EAL_GEN[@]}" $(client_eal) 2>/dev/null | tail -1
  kill -INT "$pid"; wait "$pid" || true
}

run_udp() {
  local port=$((20000 + RANDOM % 20000))
  "$TRAJAN" run --workers 1 --cores "$FWD_CPU" --unix "$DIR/nfd.sock" --udp "127.0.0.1:$port" --tcp "127.0.0.1:$port" >"$DIR/udp.log" 2>&1 &
  local pid=$!
  sleep 1
  taskset -c "$GEN_CPU" "$TRAJAN" gen "${GEN_ARGS[@]}" -c $((COUNT / 10)) --consumer "udp://127.0.0.1:$port" --producer "udp://127.0.0.1:$port" | tail -1
  kill -INT "$pid"; wait "$pid" || true
}

echo "# $(date -u +%FT%TZ) $(git rev-parse --short HEAD) $(nproc) CPUs: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
WHAT=${WHAT:-direct trajan testpmd udp}
for r in $(seq "$RUNS"); do
  for what in $WHAT; do
    echo "{\"run\":$r,\"what\":\"$what\",\"result\":$(run_$what)}"
  done
done
