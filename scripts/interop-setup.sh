#!/usr/bin/env bash
# Installs the third-party NDN software that Trajan's interoperability tests
# (tests/interop) run against, all under .interop/ in the repository root:
#
#   .interop/venv      Python venv with python-ndn and pytest
#   .interop/node      NDNts (@ndn/* 0.0.20250307) from tests/interop/ndnts/
#   .interop/bin/ndnd  ndnd (forwarder `ndnd fw` and tools put/cat/ping), built from Go source
#
# Idempotent: each piece already installed at the pinned version is skipped,
# so a second run takes about a second. Needs python3 (with venv), node/npm and
# go on PATH (scripts/install-deps.sh provides them) and the package registries.
set -euo pipefail

PYTHON_NDN_VERSION="0.5.2"
PYTEST_VERSION="9.2.0"
NDNTS_VERSION="0.0.20250307"   # newer @ndn/* tags are broken for us
NDND_VERSION="v1.5.3"

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
INTEROP="$ROOT/.interop"
mkdir -p "$INTEROP/bin"

log() { echo "interop-setup: $*"; }
elapsed() { echo "$(( $(date +%s) - $1 ))s"; }

# .interop/ holds installed software only: keep it out of git.
if ! grep -qxF '.interop/' .gitignore 2>/dev/null; then
  log "adding .interop/ to .gitignore"
  echo '.interop/' >> .gitignore
fi

# --- python-ndn --------------------------------------------------------------
t0=$(date +%s)
VENV="$INTEROP/venv"
venv_ok() {
  [ -x "$VENV/bin/python" ] && "$VENV/bin/python" - "$PYTHON_NDN_VERSION" "$PYTEST_VERSION" <<'EOF' 2>/dev/null
import sys
from importlib.metadata import version
sys.exit(0 if version("python-ndn") == sys.argv[1] and version("pytest") == sys.argv[2] else 1)
EOF
}
if venv_ok; then
  log "python-ndn $PYTHON_NDN_VERSION + pytest $PYTEST_VERSION already in $VENV (skipped)"
else
  PY="${PYTHON:-python3}"
  log "creating $VENV with $("$PY" --version 2>&1) and installing python-ndn==$PYTHON_NDN_VERSION pytest==$PYTEST_VERSION"
  [ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV"
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check \
    "python-ndn==$PYTHON_NDN_VERSION" "pytest==$PYTEST_VERSION"
  venv_ok || { log "python-ndn install check failed"; exit 1; }
  log "python venv ready ($(elapsed "$t0"))"
fi

# --- NDNts ---------------------------------------------------------------------
t0=$(date +%s)
NODE="$INTEROP/node"
SRC="$ROOT/tests/interop/ndnts"
ndnts_ok() {
  cmp -s "$SRC/package.json" "$NODE/package.json" &&
  cmp -s "$SRC/package-lock.json" "$NODE/package-lock.json" &&
  node -e '
    const need = process.argv[1];
    const deps = Object.keys(require(process.argv[2] + "/package.json").dependencies);
    for (const d of deps) {
      const v = require(process.argv[2] + "/node_modules/" + d + "/package.json").version;
      if (v !== need) { process.exit(1); }
    }' "$NDNTS_VERSION" "$NODE" 2>/dev/null
}
if ndnts_ok; then
  log "NDNts $NDNTS_VERSION already in $NODE (skipped)"
else
  command -v npm >/dev/null || { log "npm not found (run scripts/install-deps.sh)"; exit 1; }
  log "installing NDNts $NDNTS_VERSION into $NODE (npm ci from tests/interop/ndnts/package-lock.json)"
  mkdir -p "$NODE"
  cp "$SRC/package.json" "$SRC/package-lock.json" "$NODE/"
  # NDNts declares engines node ^22.11; it runs on Node 20 with the polyfill in
  # tests/interop/ndnts_common.mjs, so the engine warning is expected.
  (cd "$NODE" && npm ci --no-audit --no-fund --loglevel=error)
  ndnts_ok || { log "NDNts install check failed"; exit 1; }
  log "NDNts ready ($(elapsed "$t0"))"
fi

# --- ndnd ----------------------------------------------------------------------
t0=$(date +%s)
NDND="$INTEROP/bin/ndnd"
if [ -x "$NDND" ] && [ "$("$NDND" --version 2>/dev/null | awk '{print $NF}')" = "$NDND_VERSION" ]; then
  log "ndnd $NDND_VERSION already at $NDND (skipped)"
else
  command -v go >/dev/null || { log "go not found (run scripts/install-deps.sh)"; exit 1; }
  log "building ndnd $NDND_VERSION (github.com/named-data/ndnd/cmd/ndnd) into $NDND"
  # `go install module@version` trips over the proxy's version list for this module,
  # so build from a throwaway module that requires it.
  BUILD="$(mktemp -d)"
  trap 'rm -rf "$BUILD"' EXIT
  (
    cd "$BUILD"
    go mod init interop-ndnd-build >/dev/null 2>&1
    go get "github.com/named-data/ndnd/cmd/ndnd@$NDND_VERSION" >go-get.log 2>&1 ||
      { cat go-get.log; exit 1; }
    CGO_ENABLED=0 go build -trimpath \
      -ldflags "-s -w -X github.com/named-data/ndnd/std/utils.NDNdVersion=$NDND_VERSION" \
      -o "$NDND.tmp" github.com/named-data/ndnd/cmd/ndnd
  )
  mv "$NDND.tmp" "$NDND"
  rm -rf "$BUILD"
  trap - EXIT
  log "ndnd ready: $("$NDND" --version) ($(elapsed "$t0"))"
fi

log "done. Run: INTEROP_FORWARDER=ndnd .interop/venv/bin/pytest tests/interop -q"
