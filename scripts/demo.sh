#!/usr/bin/env bash
# Builds Trajan and runs it on its embedded default configuration: the router starts,
# publishes a small demo object, fetches it back through itself, and prints how to
# reach it. Ctrl-C stops it. Extra arguments go to `trajan demo` (see --help).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
# shellcheck disable=SC1091
[ -f "$HOME/.cargo/env" ] && . "$HOME/.cargo/env"
cargo build --release --locked -p trajan
args=("$@")
# NFD's socket path (/run/nfd/nfd.sock) needs root; elsewhere use a per-user path.
if [ "$(id -u)" -ne 0 ] && [[ " $* " != *" --unix "* ]]; then
  sock="${XDG_RUNTIME_DIR:-/tmp}/trajan-$(id -u)/nfd.sock"
  echo "not root: using $sock (export NDN_CLIENT_TRANSPORT=unix://$sock for NDN apps)"
  args+=(--unix "$sock")
fi
exec target/release/trajan demo "${args[@]}"
