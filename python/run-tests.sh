#!/usr/bin/env bash
# The Python tests of hydron, and the interop tests both ways.
# Usage: bash python/run-tests.sh
#
# 1. Creates python/.venv (first run) and installs python/requirements.txt
#    (again only when that file changes): maturin, pyfory, numpy, pytest,
#    hypothesis, mypy, and the Arrow/Parquet tools hydron is tested against
#    (pyarrow, polars, duckdb, pandas, dask[dataframe,distributed]).
# 2. Rust writes messages and files (examples/interop_write.rs) into a fresh
#    directory under target/, and the `hydron` CLI is built (debug) for the
#    tests that compare Python with it.
# 3. Builds the native module (hydron-py) in release mode into the venv with
#    `maturin develop --release` as `pip install ./python` builds it (no
#    Arrow, no Parquet), and runs pytest on it: the Arrow and Parquet tests
#    are skipped, and tests/test_features.py checks that their functions,
#    and the readers given a Parquet file, refuse with FeatureNotBuiltError.
# 4. Builds it again with every feature (`--features full`; cargo keeps
#    both builds, so a rerun rebuilds only what changed), checks that the
#    type stubs match the module (mypy's stubtest), and runs pytest
#    (python/tests, the doctests of python/hydron and of the native module):
#    it decodes the Rust files with hydron and with stock pyfory, and writes
#    its own (with both) into another directory.
# 5. Rust decodes what Python wrote (tests/python_interop.rs).
#
# Exits non-zero on any failure; the work directory is kept then, and removed
# on success. Needs only cargo, Python >= 3.11 ($PYTHON, else python3.11 or
# python3 on PATH) and pip.
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

# The native module into the venv, built with the cargo features given
# (none: what `pip install ./python` builds).
develop() {
  (
    cd python
    VIRTUAL_ENV="$venv" PATH="$venv/bin:$PATH" "$venv/bin/maturin" develop --release --quiet "$@"
  )
}

mkdir -p "$root/target"
work="$(mktemp -d "$root/target/python-interop.XXXXXX")"
mkdir "$work/rust" "$work/python" "$work/python-default"

step "Rust writes (examples/interop_write.rs) into $work/rust"
cargo run --quiet --example interop_write --features fory,json -- "$work/rust"

step "cargo build -p hydron-cli (the property test compares Python with it)"
cargo build --quiet -p hydron-cli
cli="$(cargo metadata --format-version 1 --no-deps 2>/dev/null |
  "$py" -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')/debug/hydron"

# pytest in the build the venv holds; $1: the features it must have, $2: the
# directory the tests write into.
run_pytest() {
  (
    cd python
    HYDRON_EXPECT_FEATURES="$1" HYDRON_RUST_DIR="$work/rust" HYDRON_PY_DIR="$2" \
      HYDRON_REQUIRE_INTEROP=1 HYDRON_CLI="$cli" "$py" -m pytest -q
  )
}

step "maturin develop --release: the default build (no Arrow, no Parquet), as pip install ./python"
develop
step "pytest in the default build (the Arrow and Parquet tests are skipped; their functions must refuse)"
run_pytest "" "$work/python-default"

step "maturin develop --release --features full: with Arrow and Parquet"
develop --features full

step "stubtest: python/hydron/_hydron.pyi matches the native module"
(
  cd python
  MYPY_CACHE_DIR="$root/target/mypy-cache" "$py" -m mypy.stubtest hydron._hydron \
    --allowlist tests/stubtest-allowlist.txt
)

step "pytest in the full build: Python reads what Rust wrote, writes into $work/python"
run_pytest "arrow,parquet" "$work/python"

step "Rust reads what Python wrote (tests/python_interop.rs)"
HYDRON_INTEROP_DIR="$work/python" \
  cargo test --quiet --features fory,json --test python_interop -- --ignored

rm -rf "$work"
step "python interop tests passed"
