#!/usr/bin/env bash
# Issue 6: Trajan on AF_XDP ports, generator ns → router ns → producer ns, over
# veth pairs this script creates (and deletes on exit). Only interfaces inside the
# three namespaces are used; every run is bounded in count and time. Needs root.
#
# usage: scripts/bench_afxdp.sh [COUNT]   (TRAJAN=path/to/trajan built with --features dpdk;
#        XDP_ARGS=,force_copy=1 appends net_af_xdp arguments to every port;
#        ONE_GEN=1 runs consumer and producer in one generator process in the
#        generator ns, both veth pairs ending there: two busy pollers instead of
#        three, for machines with fewer than three cores)
set -euo pipefail
cd "$(dirname "$0")/.."
COUNT=${1:-200000}
TRAJAN=$(realpath "${TRAJAN:-target/release/trajan}")
NS=trajan-xdp-$$
DIR=$(mktemp -d /tmp/trajan-bench-afxdp.XXXXXX)
cleanup() {
  kill $(jobs -p) 2>/dev/null || true
  for n in g r p; do ip netns del "$NS-$n" 2>/dev/null || true; done
  rm -rf "$DIR"
}
trap cleanup EXIT
for n in g r p; do
  ip netns add "$NS-$n"
  ip netns exec "$NS-$n" ip link set lo up
done
ip link add xg0 netns "$NS-g" type veth peer name xr0 netns "$NS-r"
PNS=$NS-p
[ "${ONE_GEN:-0}" = 1 ] && PNS=$NS-g
ip link add xp0 netns "$PNS" type veth peer name xr1 netns "$NS-r"
ip netns exec "$NS-g" ip link set xg0 up
ip netns exec "$NS-r" ip link set xr0 up
ip netns exec "$NS-r" ip link set xr1 up
ip netns exec "$PNS" ip link set xp0 up

cat >"$DIR/trajan.toml" <<EOF
[faces]
udp_listen = []
tcp_listen = []
unix_path = "$DIR/nfd.sock"
[log]
level = "warn"
[tables]
# Every cached packet keeps its mbuf: the CS must stay below the pool (mbufs).
cs_capacity = 8192
[dpdk]
eal_args = ["--no-pci", "--no-huge", "-m", "1024", "--vdev=net_af_xdp0,iface=xr0,busy_budget=0${XDP_ARGS:-}", "--vdev=net_af_xdp1,iface=xr1,busy_budget=0${XDP_ARGS:-}"]
mbufs = 16383
[[dpdk.ports]]
name = "net_af_xdp0"
[[dpdk.ports]]
name = "net_af_xdp1"
[[routes]]
prefix = "/gen"
face = "dev://net_af_xdp1"
EOF
ip netns exec "$NS-r" timeout 120 "$TRAJAN" run --workers 1 --config "$DIR/trajan.toml" >"$DIR/router.log" 2>&1 &
sleep 3
XDP=busy_budget=0${XDP_ARGS:-}
if [ "${ONE_GEN:-0}" = 1 ]; then
  echo "# $(date -u +%FT%TZ) $(git rev-parse --short HEAD) AF_XDP on veth, gen ns (consumer + producer, one process) <-> router ns"
  ip netns exec "$NS-g" timeout 60 "$TRAJAN" gen /gen --consumer dpdk:net_af_xdp0 --producer dpdk:net_af_xdp1 -c "$COUNT" --duration 20 -w 256 --json \
    --eal=--no-pci --eal=--vdev=net_af_xdp0,iface=xg0,$XDP --eal=--vdev=net_af_xdp1,iface=xp0,$XDP 2>"$DIR/consumer.err" | tail -1
  exit 0
fi
ip netns exec "$NS-p" timeout 120 "$TRAJAN" gen /gen --producer dpdk:net_af_xdp0 --duration 40 --json \
  --eal=--no-pci --eal=--vdev=net_af_xdp0,iface=xp0,$XDP >"$DIR/producer.json" 2>"$DIR/producer.err" &
sleep 3
echo "# $(date -u +%FT%TZ) $(git rev-parse --short HEAD) AF_XDP on veth, gen ns -> router ns -> producer ns"
ip netns exec "$NS-g" timeout 60 "$TRAJAN" gen /gen --consumer dpdk:net_af_xdp0 -c "$COUNT" --duration 20 -w 256 --json \
  --eal=--no-pci --eal=--vdev=net_af_xdp0,iface=xg0,$XDP 2>"$DIR/consumer.err" | tail -1
