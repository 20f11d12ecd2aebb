#!/usr/bin/env bash
# hydron on WebAssembly: builds hydron-core (every feature) and hydron-codec
# (fory and json) for wasm32-unknown-unknown and wasm32-wasip1, then runs
# hydron-core's tests as WASI programs under Node's built-in `node:wasi`
# (scripts/wasi-run.mjs; nothing to download), once with the scalar kernels
# and once with the portable kernels on `simd128`.
#
# Needs: rustup targets wasm32-unknown-unknown and wasm32-wasip1 (test-all.sh adds
# them), and Node >= 20.
#
# Usage: bash scripts/wasm-test.sh          # builds and tests
#        bash scripts/wasm-test.sh --bench  # times the backends under Node
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n==> %s\n' "$*"; }
run() { step "$*"; "$@"; }

command -v node >/dev/null || { echo "wasm-test: node (>= 20) is needed to run WASI tests" >&2; exit 1; }
export CARGO_TARGET_WASM32_WASIP1_RUNNER="node $PWD/scripts/wasi-run.mjs"
SIMD128="-C target-feature=+simd128"

if [[ "${1:-}" == "--bench" ]]; then
  # simd128 build: the scalar and wide-simd128 backends side by side.
  step "CARGO_TARGET_WASM32_WASIP1_RUSTFLAGS=\"$SIMD128\" cargo run --release --example backends"
  CARGO_TARGET_WASM32_WASIP1_RUSTFLAGS="$SIMD128" \
    cargo run --release -p hydron-core --features simd --example backends --target wasm32-wasip1
  run cargo run --release -p hydron-core --features simd --example backends --target wasm32-wasip1
  exit 0
fi

features=hydron-core/simd,hydron-core/approx,hydron-core/serde,hydron-core/fory,hydron-core/parallel
features+=,hydron-codec/fory,hydron-codec/json
for target in wasm32-unknown-unknown wasm32-wasip1; do
  run cargo build --target "$target" -p hydron-core -p hydron-codec --features "$features"
done

# hydron-core's unit and integration tests (doctests need a native host).
# Skipped under WebAssembly, which aborts on panic and has no threads: the
# tests that catch a panic (#[should_panic], catch_unwind) and the tests
# that build thread pools of their own (tests/parallel.rs).
core_tests=(-p hydron-core --target wasm32-wasip1 --features simd,approx,serde,fory,parallel --lib --tests)
run cargo test "${core_tests[@]}"
step "CARGO_TARGET_WASM32_WASIP1_RUSTFLAGS=\"$SIMD128\" cargo test ${core_tests[*]}"
CARGO_TARGET_WASM32_WASIP1_RUSTFLAGS="$SIMD128" cargo test "${core_tests[@]}"
step "wasm tests passed"
