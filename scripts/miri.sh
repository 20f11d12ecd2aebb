#!/usr/bin/env bash
# Runs hydron's targeted Miri tests: small tests of every `unsafe` block
# (hydron-core/tests/miri.rs, hydron-codec/tests/miri.rs, and the unit
# tests named below), in the three ways the batch kernels can be
# dispatched. scripts/check-unsafe.py checks that docs/fuzzing.md's table
# names a test for every `unsafe` block. Installs Miri on the nightly
# toolchain if it is missing. See docs/fuzzing.md ("Unsafe code under
# Miri") for what is covered and the measured time.
#
# Usage: bash scripts/miri.sh            (MIRIFLAGS and MIRI_TOOLCHAIN may be set)
set -euo pipefail
cd "$(dirname "$0")/.."

toolchain="${MIRI_TOOLCHAIN:-nightly}"
if ! rustup component list --toolchain "$toolchain" --installed 2>/dev/null | grep -q '^miri'; then
  rustup component add --toolchain "$toolchain" miri rust-src
fi

# Strict provenance: no integer-to-pointer casts. Symbolic alignment: an
# access must be aligned for its type whatever address the allocation got,
# so code that is aligned only by luck fails.
export MIRIFLAGS="${MIRIFLAGS:--Zmiri-strict-provenance -Zmiri-symbolic-alignment-check}"

step() { printf '\n==> %s\n' "$*"; }
miri() {
  step "${RUSTFLAGS:+RUSTFLAGS=\"$RUSTFLAGS\" }MIRIFLAGS=\"$MIRIFLAGS\" cargo +$toolchain miri test $*"
  cargo +"$toolchain" miri test "$@"
}

# 1. Scalar kernels only (no `simd` feature).
miri -p hydron-core --test miri
miri -p hydron-codec --features fory --test miri
# The Parquet fast path's SSE2 byte-stream-split interleave (the only
# `unsafe` in the Parquet code): its unit test alone.
miri -p hydron-codec --features parquet --lib parquet::fast::tests::unsplit
# The parallel `file::load` (`file/parallel.rs`: `pread` into the output's
# uninitialized capacity, its `[f32; 8]` view, `set_len`): its unit tests
# with small sizes, on real files (so without isolation). On one thread
# under the flags above; then across rayon's pool under Tree Borrows, with
# permissive provenance and no leak check, which rayon's crossbeam-epoch
# needs (it breaks Stacked Borrows and strict provenance, and never frees
# its global collector).
codec_parallel=(-p hydron-codec --features fory-messages,parallel --lib)
with_rayon="-Zmiri-tree-borrows -Zmiri-permissive-provenance -Zmiri-ignore-leaks -Zmiri-symbolic-alignment-check"
MIRIFLAGS="$MIRIFLAGS -Zmiri-disable-isolation" \
  miri "${codec_parallel[@]}" file::parallel::tests::small_pieces
MIRIFLAGS="$with_rayon -Zmiri-disable-isolation" \
  miri "${codec_parallel[@]}" file::parallel::tests::small_sizes
# hydron-core's pool for a forked child (`parallel.rs`, `process_pool`:
# a leaked `Box` read back as `&'static`), through its unit test, whose
# split of 131,075 vectors is left out under Miri; rayon again.
MIRIFLAGS="$with_rayon" \
  miri -p hydron-core --features parallel --lib parallel::tests::another_process_splits_in_a_pool_of_its_own

# 2. With `simd`: under Miri, runtime CPU detection finds nothing, so the
#    dispatch picks the portable (`wide`) backend.
miri -p hydron-core --features simd --test miri
miri -p hydron-codec --features fory,hydron-core/simd --test miri

# 3. AVX2 and FMA compiled in: detection is answered at compile time, and
#    Miri executes the AVX2 kernels' intrinsics. A separate target
#    directory keeps these flags from invalidating the other builds.
export RUSTFLAGS="-C target-feature=+avx2,+fma"
export CARGO_TARGET_DIR=target/miri-avx2
miri -p hydron-core --features simd --test miri
miri -p hydron-codec --features fory,hydron-core/simd --test miri

step "Miri found no undefined behaviour"
