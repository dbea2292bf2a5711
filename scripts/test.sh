#!/usr/bin/env bash
# Runs every Trajan test: the workspace's unit, property and end-to-end tests (the
# real daemon on loopback), then interoperability with real third-party NDN software
# (python-ndn, NDNts, ndnd), which it installs locally under .interop/ first.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
# shellcheck disable=SC1091
[ -f "$HOME/.cargo/env" ] && . "$HOME/.cargo/env"

echo "== building (release) =="
cargo build --release --locked -p trajan
echo "== interoperability setup (python-ndn, NDNts, ndnd under .interop/) =="
bash scripts/interop-setup.sh
echo "== cargo test (the tools' tests against ndnd included) =="
TRAJAN_BIN="$PWD/target/release/trajan" NDND_BIN="$PWD/.interop/bin/ndnd" cargo test --workspace --locked
echo "== documentation (rustdoc; a broken or private link fails) =="
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --locked
echo "== DPDK feature (virtual devices: net_ring, net_null, memif; no NIC, no hugepages) =="
cargo test --locked -p trajan-dpdk
cargo test --locked -p trajan-router --features dpdk dpdk
cargo test --locked -p trajan --features dpdk --test gen
echo "== interoperability (python-ndn, NDNts, ndnd) =="
TRAJAN_BIN="$PWD/target/release/trajan" INTEROP_FORWARDER=trajan .interop/venv/bin/pytest tests/interop -q -p no:cacheprovider
