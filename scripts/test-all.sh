#!/usr/bin/env bash
# Runs every test hydron has: the Rust suite in every feature combination that
# builds, lints and docs, WebAssembly, Miri, and the Python tests
# (python/run-tests.sh: the native module built into python/.venv, its
# stubs, pytest, and the interop tests both ways).
#
# Needs Rust (rustup, with stable and nightly), Node >= 20 and Python >= 3.11
# with pip; it installs the rest itself: the WebAssembly targets, Miri, and
# the Python packages (into python/.venv). It checks those needs up front and
# stops in seconds, naming the command that fixes a missing one.
#
# HYDRON_REQUIRE_ALL=1 (the default here) makes every test that needs a
# precondition (/usr/bin/time, sparse files, /proc, AVX2, a Python package)
# fail when it is missing instead of skipping; HYDRON_REQUIRE_ALL=0 lets
# them skip, each saying so on stderr.
#
# Usage: bash scripts/test-all.sh
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n==> [%s] %s\n' "$(date -u +%T)" "$*"; }
run() { step "$*"; "$@"; }
need() { echo "test-all.sh: $1" >&2; exit 1; }

# What this script cannot install itself.
command -v cargo >/dev/null || need "cargo is missing: install Rust with rustup (https://rustup.rs)"
command -v rustup >/dev/null || need "rustup is missing: the WebAssembly targets and Miri come through it"
rustup toolchain list | grep -q '^nightly' ||
  need "the nightly toolchain is missing (Miri runs on it): rustup toolchain install nightly"
command -v node >/dev/null || need "node is missing: Node >= 20 runs the WebAssembly tests"
node_major="$(node -p 'process.versions.node.split(".")[0]')"
[ "$node_major" -ge 20 ] || need "node $(node --version) is too old: Node >= 20 runs the WebAssembly tests"
python_ok=0
for candidate in ${PYTHON:-} python3.11 python3; do
  if command -v "$candidate" >/dev/null 2>&1 &&
    "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
    python_ok=1
    break
  fi
done
[ "$python_ok" = 1 ] || need "Python >= 3.11 is missing (python3.11 or python3 on PATH, or set PYTHON)"

# What it installs (each is a no-op when already there): the WebAssembly
# targets here, Miri in scripts/miri.sh, the Python packages in
# python/run-tests.sh.
run rustup target add wasm32-unknown-unknown wasm32-wasip1
export HYDRON_REQUIRE_ALL="${HYDRON_REQUIRE_ALL:-1}"
if [ "$HYDRON_REQUIRE_ALL" = 1 ] && [ ! -x /usr/bin/time ]; then
  need "/usr/bin/time (GNU time, which the memory tests read) is missing: apt-get install time, or run with HYDRON_REQUIRE_ALL=0 to skip those tests"
fi

# Disk: a run from a clean clone took at most 6.2 GiB (2026-11-27).
# Incremental caches only help repeated builds of the same crate; here
# they would take about 3 GiB more and speed nothing up. The free space is
# printed, for when a build runs out of it.
export CARGO_INCREMENTAL=0
step "free disk: $(df -h . | awk 'NR == 2 { print $4 }')"

run cargo fmt --all -- --check
# Every `unsafe` in hydron-core and hydron-codec has its row (and Miri
# test) in docs/fuzzing.md's table.
run python3 scripts/check-unsafe.py

# Each library crate on its own, so that cargo does not unify its features
# with those other workspace members turn on: none, each feature alone.
# (Doctests run once per crate below, with all features; the feature-gated
# examples in them are written to compile in every combination.)
for features in "" simd approx serde fory parallel; do
  run cargo test -p hydron-core --no-default-features ${features:+--features $features} --lib --tests
done
for features in "" fory-messages fory json parallel arrow parquet; do
  run cargo test -p hydron-codec --no-default-features ${features:+--features $features} --lib --tests
done
# The root package's minimal build (its defaults are fory and json).
run cargo test -p hydron --no-default-features --lib --tests
# Each combination above linked its own test executables (40 to 50 MiB
# each); none is used again below.
run cargo clean -p hydron-core -p hydron-codec -p hydron

# Everything together: all crates, all targets' tests, doctests, examples.
run cargo test --workspace --all-features

# The README's main command, on a small batch (the release run takes longer).
run cargo run --example pipeline --features simd,fory,json -- 20000

run cargo clippy --workspace --all-targets --all-features -- -D warnings
# The Python module's other builds (python/run-tests.sh tests the default
# one, which `pip install ./python` builds, and the full one): no warnings
# in either, nor with Arrow alone.
run cargo clippy -p hydron-py --all-targets -- -D warnings
run cargo clippy -p hydron-py --all-targets --features arrow -- -D warnings
step "RUSTDOCFLAGS=-D warnings cargo doc --workspace --no-deps --all-features"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --all-features

# WebAssembly: builds for wasm32-unknown-unknown and wasm32-wasip1, and
# hydron-core's tests under Node's WASI (scalar and simd128).
run bash scripts/wasm-test.sh

# Unsafe code under Miri: targeted tests of every `unsafe` block, in the
# scalar, portable and AVX2 builds (installs Miri on the nightly toolchain
# if it is missing).
run bash scripts/miri.sh

# Python: the native module in its two builds, its tests, interop both ways.
run bash python/run-tests.sh
step "all tests passed"
