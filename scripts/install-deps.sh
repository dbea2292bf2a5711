#!/usr/bin/env bash
# Installs the system packages Trajan needs to build and to run its full test suite
# on Debian 12. Idempotent: packages already present are not touched, so it is cheap
# to run before every build. Needs root (or sudo) only when something is missing.
set -euo pipefail

need=()
have() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
# Build: a C toolchain for crates with build scripts. Tests: ip/netns for namespace
# tests, python3-venv for python-ndn, Node.js and Go for NDNts and ndnd. DPDK
# (libdpdk-dev: headers and libraries for `--features dpdk`; dpdk: dpdk-devbind.py;
# dpdk-dev: dpdk-testpmd, the benchmark's reference) for the kernel-bypass faces;
# the default build does not need it.
for pkg in build-essential pkg-config ca-certificates curl git iproute2 python3 python3-venv libdpdk-dev dpdk dpdk-dev; do
  have "$pkg" || need+=("$pkg")
done
command -v node >/dev/null 2>&1 || need+=(nodejs npm)
command -v go >/dev/null 2>&1 || need+=(golang-go)

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
if [ ${#need[@]} -gt 0 ]; then
  echo "install-deps: installing ${need[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}"
fi

# Hugepages for DPDK, only when asked: DPDK_HUGEPAGES=N reserves N pages of 2 MiB
# (not persistent across reboots; Trajan falls back to --no-huge without them).
if [ -n "${DPDK_HUGEPAGES:-}" ]; then
  echo "install-deps: reserving ${DPDK_HUGEPAGES} hugepages of 2 MiB"
  echo "$DPDK_HUGEPAGES" | $SUDO tee /sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages >/dev/null
  grep -q ' /dev/hugepages ' /proc/mounts || { $SUDO mkdir -p /dev/hugepages && $SUDO mount -t hugetlbfs nodev /dev/hugepages; }
fi

# Rust: Debian 12's rustc is too old for Trajan's dependencies; use rustup's stable.
if ! command -v cargo >/dev/null 2>&1; then
  if [ -x "$HOME/.cargo/bin/cargo" ]; then
    echo "install-deps: add \$HOME/.cargo/bin to PATH (source \$HOME/.cargo/env)"
  else
    echo "install-deps: installing Rust with rustup"
    curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal
  fi
fi
