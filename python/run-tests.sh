#!/usr/bin/env bash
# The Python tests of hydron, and the interop tests both ways.
# Usage: bash python/run-tests.sh
#
# 1. Creates python/.venv (first run) and installs python/requirements.txt
#    (again only when that file changes): maturin, pyfory, numpy, pytest,
#    hypothesis, mypy, and the Arrow/Parquet tools hydron is tested against
#    (pyarrow, polars, duckdb, pandas, dask[distributed]).
# 2. Builds the native module (hydron-py) in release mode into the venv with
#    `maturin develop --release` (cargo rebuilds only what changed).
# 3. Checks that the type stubs match the module (mypy's stubtest).
# 4. Rust writes messages and files (examples/interop_write.rs) into a fresh
#    directory under target/.
# 5. pytest (python/tests, the doctests of python/hydron and of the native
#    module) decodes them with hydron and with stock pyfory, and writes its
#    own (with both) into another directory.
# 6. Rust decodes what Python wrote (tests/python_interop.rs).
#
# Exits non-zero on any failure; the work directory is kept then, and removed
# on success. Needs only cargo, Python >= 3.11 (python3.11, or $PYTHON) and pip.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

step() { printf '\n==> [%s] %s\n' "$(date -u +%T)" "$*"; }

python_bin="${PYTHON:-}"
if [ -z "$python_bin" ]; then
  for candidate in python3.11 python3; do
    if command -v "$candidate" >/dev/null 2>&1; then
      python_bin="$candidate"
      break
    fi
  done
fi
if [ -z "$python_bin" ]; then
  echo "run-tests.sh: no python3.11 or python3 on PATH (or set PYTHON)" >&2
  exit 1
fi

venv="$root/python/.venv"
py="$venv/bin/python"
if [ ! -x "$py" ]; then
  step "creating python/.venv with $("$python_bin" --version 2>&1)"
  "$python_bin" -m venv "$venv"
fi
if ! "$py" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
  echo "run-tests.sh: python/.venv has $("$py" --version 2>&1); 3.11 or newer is needed" \
    "(delete python/.venv, set PYTHON)" >&2
  exit 1
fi

stamp="$venv/.requirements.sha256"
want="$("$py" -c 'import hashlib, sys; print(hashlib.sha256(open(sys.argv[1], "rb").read()).hexdigest())' \
  python/requirements.txt)"
if [ "$(cat "$stamp" 2>/dev/null || true)" != "$want" ]; then
  step "pip install -r python/requirements.txt"
  "$py" -m pip install --quiet --disable-pip-version-check -r python/requirements.txt
  echo "$want" >"$stamp"
fi

step "maturin develop --release: the native module into python/.venv"
(
  cd python
  VIRTUAL_ENV="$venv" PATH="$venv/bin:$PATH" "$venv/bin/maturin" develop --release --quiet
)

step "stubtest: python/hydron/_hydron.pyi matches the native module"
(
  cd python
  MYPY_CACHE_DIR="$root/target/mypy-cache" "$py" -m mypy.stubtest hydron._hydron \
    --allowlist tests/stubtest-allowlist.txt
)

mkdir -p "$root/target"
work="$(mktemp -d "$root/target/python-interop.XXXXXX")"
mkdir "$work/rust" "$work/python"

step "Rust writes (examples/interop_write.rs) into $work/rust"
cargo run --quiet --example interop_write --features fory,json -- "$work/rust"

step "cargo build -p hydron-cli (the property test compares Python with it)"
cargo build --quiet -p hydron-cli
cli="$(cargo metadata --format-version 1 --no-deps 2>/dev/null |
  "$py" -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')/debug/hydron"

step "pytest: Python reads what Rust wrote, writes into $work/python"
(
  cd python
  HYDRON_RUST_DIR="$work/rust" HYDRON_PY_DIR="$work/python" HYDRON_REQUIRE_INTEROP=1 \
    HYDRON_CLI="$cli" "$py" -m pytest -q
)

step "Rust reads what Python wrote (tests/python_interop.rs)"
HYDRON_INTEROP_DIR="$work/python" \
  cargo test --quiet --features fory,json --test python_interop -- --ignored

rm -rf "$work"
step "python interop tests passed"
