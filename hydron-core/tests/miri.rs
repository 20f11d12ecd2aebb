//! Small tests of every `unsafe` block in hydron-core, sized to run under
//! Miri in seconds (`bash scripts/miri.sh`); they also run in the normal
//! suite. Each one goes through the public API that wraps the unsafe code:
//!
//! - `batch::copy_validated_uninit` / `copy_validated_into` (the
//!   `as_slots` / `assume_written` casts in `simd/scalar.rs` and
//!   `batch.rs`), on every backend, from input slices starting at offsets
//!   0..4 of a buffer, for lengths around the 8-vector block size, with and
//!   without a bad vector (whose error must come before any slot past it
//!   is read);
//! - `Gf8::vec_from_arrays{,_unchecked}`, `vec_into_arrays`,
//!   `slice_from_arrays{,_unchecked}` (`Vec::from_raw_parts` and
//!   `slice::from_raw_parts` in `gf8.rs`), with capacity ≠ length;
//! - the `unsafe impl CheckedBitPattern for Gf8` through bytemuck's checked
//!   casts, aligned and misaligned;
//! - `E8Point::nearest`'s calls into its AVX2 or SSE2 `target_feature`
//!   path (`lattice.rs`, `lattice/avx2.rs`), on a few inputs against the
//!   old decoder;
//! - `Gf8::nearest_root`'s call into its SSE2 closed form (`e8.rs`), on
//!   roots, unit vectors and coordinates whose scores overflow;
//! - the E8P encoder's calls into its AVX2 kernels (`quant/e8p_avx2.rs`),
//!   against the scalar one, and the lattice quantizer's pipeline compiled
//!   for AVX2 (`quant/quantizer.rs`);
//! - `huge::zeroed_vec` and `huge::advise_spare` on buffers large enough
//!   to be advised (`huge.rs`; Miri has no `madvise`, which is compiled
//!   out under it: the rest of the path runs).
//!
//! Under Miri, `is_x86_feature_detected!` answers false, so the dispatch
//! picks the scalar or portable backend; built with `-C
//! target-feature=+avx2,+fma` it picks AVX2, whose intrinsics Miri
//! executes. `scripts/miri.sh` runs all three.

#[path = "common/old_lattice.rs"]
mod old_lattice;

use std::mem::MaybeUninit;

use hydron_core::batch::{self, Backend, PerRow};
use hydron_core::{huge, E8Point, E8Root, Gf8, E8_ROOTS};

/// Lengths around the 8-vector block of the SIMD kernels.
const LENGTHS: [usize; 7] = [0, 1, 2, 7, 8, 9, 17];

fn unit(i: usize) -> [f32; 8] {
    // Exactly representable unit vectors: a signed basis vector or
    // (±0.6, ±0.8) in two coordinates.
    let mut v = [0.0; 8];
    match i % 3 {
        0 => v[i % 8] = if i.is_multiple_of(2) { 1.0 } else { -1.0 },
        1 => {
            v[i % 8] = 0.6;
            v[(i + 3) % 8] = -0.8;
        }
        _ => {}
    }
    v
}

/// The arrays' little-endian bytes, after `offset` filler bytes.
fn bytes_at(offset: usize, arrays: &[[f32; 8]]) -> Vec<u8> {
    let mut buf = vec![0xA5; offset];
    for x in arrays.as_flattened() {
        buf.extend_from_slice(&x.to_le_bytes());
    }
    buf
}

#[test]
fn copy_validated_uninit_reads_any_alignment_and_writes_every_slot() {
    for n in LENGTHS {
        let arrays: Vec<[f32; 8]> = (0..n).map(unit).collect();
        for offset in 0..4 {
            let buf = bytes_at(offset, &arrays);
            let input = &buf[offset..];
            for backend in Backend::ALL {
                let mut out: Vec<Gf8> = Vec::with_capacity(n + 3);
                let written = backend
                    .copy_validated_uninit(input, &mut out.spare_capacity_mut()[..n])
                    .unwrap();
                assert_eq!(Gf8::slice_as_arrays(written), &arrays[..], "{backend:?}");
            }
            let mut slots = vec![MaybeUninit::<Gf8>::uninit(); n];
            let written = batch::copy_validated_uninit(input, &mut slots).unwrap();
            assert_eq!(Gf8::slice_as_arrays(written), &arrays[..]);
        }
    }
}

#[test]
fn a_bad_vector_stops_the_copy_without_reading_unwritten_slots() {
    for n in LENGTHS.into_iter().filter(|&n| n > 0) {
        for bad in [0, n / 2, n - 1] {
            let mut arrays: Vec<[f32; 8]> = (0..n).map(unit).collect();
            arrays[bad][bad % 8] = f32::NAN;
            for offset in 0..4 {
                let buf = bytes_at(offset, &arrays);
                for backend in Backend::ALL {
                    let mut slots = vec![MaybeUninit::<Gf8>::uninit(); n];
                    let err = backend
                        .copy_validated_uninit(&buf[offset..], &mut slots)
                        .unwrap_err();
                    assert_eq!(err.index, bad, "{backend:?}, n {n}, offset {offset}");
                }
            }
        }
    }
}

#[test]
fn copy_validated_into_initialized_arrays() {
    for n in LENGTHS {
        let arrays: Vec<[f32; 8]> = (0..n).map(unit).collect();
        for offset in 0..4 {
            let buf = bytes_at(offset, &arrays);
            for backend in Backend::ALL {
                let mut out = vec![[9.0f32; 8]; n];
                backend
                    .copy_validated_into(&buf[offset..], &mut out)
                    .unwrap();
                assert_eq!(out, arrays, "{backend:?}");
            }
        }
    }
}

#[test]
fn vec_casts_keep_the_allocation_and_its_capacity() {
    for n in LENGTHS {
        let mut arrays: Vec<[f32; 8]> = Vec::with_capacity(n + 5);
        arrays.extend((0..n).map(unit));
        let ptr = arrays.as_ptr() as usize;
        let vs = Gf8::vec_from_arrays(arrays).unwrap();
        assert_eq!((vs.len(), vs.capacity()), (n, n + 5));
        assert_eq!(vs.as_ptr() as usize, ptr, "no copy");
        let mut back = Gf8::vec_into_arrays(vs);
        assert_eq!(back.capacity(), n + 5);
        back.push([0.0; 8]); // the allocation is usable as `Vec<[f32; 8]>`
        let vs = Gf8::vec_from_arrays_unchecked(back);
        assert_eq!(vs.len(), n + 1);
        drop(vs); // freed with the layout it was allocated with
    }
    // On error the arrays are dropped, not leaked (Miri checks leaks).
    assert!(Gf8::vec_from_arrays(vec![[2.0; 8]; 3]).is_err());
}

#[test]
fn slice_casts_cover_the_same_memory() {
    for n in LENGTHS {
        let arrays: Vec<[f32; 8]> = (0..n).map(unit).collect();
        let vs = Gf8::slice_from_arrays(&arrays).unwrap();
        assert_eq!(vs.len(), n);
        assert_eq!(Gf8::slice_as_arrays(vs), &arrays[..]);
        let unchecked = Gf8::slice_from_arrays_unchecked(&arrays);
        assert_eq!(unchecked.as_ptr().cast::<[f32; 8]>(), arrays.as_ptr());
    }
}

#[test]
fn checked_bit_pattern_casts_validate_and_respect_alignment() {
    let arrays: Vec<[f32; 8]> = (0..3).map(unit).collect();
    // `[f32; 8]` storage gives a 4-aligned byte view.
    let aligned: &[u8] = bytemuck::cast_slice(&arrays);
    let vs: &[Gf8] = bytemuck::checked::try_cast_slice(aligned).unwrap();
    assert_eq!(Gf8::slice_as_arrays(vs), &arrays[..]);
    for offset in 1..4 {
        // Misaligned: an error, never an unaligned reference.
        let misaligned = &aligned[offset..offset + 32];
        assert!(bytemuck::checked::try_cast_slice::<u8, Gf8>(misaligned).is_err());
        // An unaligned read copies, and validates.
        let buf = bytes_at(offset, &arrays);
        let v: Gf8 = bytemuck::checked::try_pod_read_unaligned(&buf[offset..offset + 32]).unwrap();
        assert_eq!(v.to_array(), arrays[0]);
    }
    let mut bad = arrays.clone();
    bad[1][0] = f32::INFINITY;
    assert!(bytemuck::checked::try_cast_slice::<u8, Gf8>(bytemuck::cast_slice(&bad)).is_err());
}

/// Under Miri, runtime detection finds no CPU features, so the AVX2
/// backend runs only when it is compiled in: with `-C
/// target-feature=+avx2,+fma` detection is answered at compile time, and
/// Miri then executes the AVX2 kernels (it implements those intrinsics),
/// which is how `scripts/miri.sh` checks them.
#[test]
#[cfg(miri)]
fn miri_runs_avx2_only_when_compiled_in() {
    let compiled_in = cfg!(all(
        feature = "simd",
        target_arch = "x86_64",
        target_feature = "avx2",
        target_feature = "fma"
    ));
    assert_eq!(batch::backend() == Backend::Avx2Fma, compiled_in);
    assert_eq!(Backend::Avx2Fma.is_available(), compiled_in);
}

#[test]
fn dispatching_kernels_on_small_batches() {
    // The other batch kernels have no unsafe code of their own outside the
    // AVX2 backend (one call per kernel, through its token), but run here
    // once so that Miri sees the dispatch and, in the AVX2 build, each
    // kernel.
    let arrays: Vec<[f32; 8]> = (0..9).map(|i| unit(3 * i)).collect();
    let vs = batch::normalize(&arrays).unwrap();
    assert_eq!(Gf8::slice_as_arrays(&vs), &arrays[..]);
    assert_eq!(batch::nearest_roots(&vs).len(), 9);
    assert_eq!(
        batch::nearest_roots_checked(&arrays),
        Ok(batch::nearest_roots(&vs))
    );
    assert_eq!(batch::dot_many(vs[0], &vs)[0], 1.0);
    // Every backend's `validate` and lattice kernel (the scalar one runs
    // `E8Point::nearest`'s fast path per vector, through the AVX2 token
    // when that is compiled in), a block of eight and a tail.
    let points: Vec<E8Point> = arrays
        .iter()
        .map(|x| E8Point::nearest(&x.map(|c| c * 2.5)).unwrap())
        .collect();
    let scaled: Vec<[f32; 8]> = arrays.iter().map(|x| x.map(|c| c * 2.5)).collect();
    for backend in Backend::ALL {
        backend.validate(&arrays).unwrap();
        let mut out = vec![E8Point::ORIGIN; scaled.len()];
        backend
            .nearest_lattice_points_into(&scaled, &mut out)
            .unwrap();
        assert_eq!(out, points, "{backend:?}");
    }
}

#[test]
fn sphere_kernels_on_small_batches() {
    // The sphere kernels (geodesic distances, slerp) of every backend:
    // geodesic distances in a group of eight and a tail of two, slerp in
    // two groups of four and a tail of two, each operand per row and one
    // for all, against the scalar backend (in the AVX2 build, its loads,
    // transposes and `f32` and `f64` lanes, one call each through the
    // token).
    let a = batch::normalize(&(0..10).map(|i| unit(5 * i)).collect::<Vec<_>>()).unwrap();
    let b = batch::normalize(&(0..10).map(|i| unit(7 * i + 1)).collect::<Vec<_>>()).unwrap();
    let ts = [0.0, 0.25, 0.5, 0.75, 1.0, 0.1, 0.3, 0.6, 0.9, 0.45];
    let mut want_d = [0.0f32; 10];
    Backend::Scalar.geodesic_distances_into(PerRow::Each(&a), PerRow::All(b[0]), &mut want_d);
    let mut want_e = [0.0f32; 10];
    Backend::Scalar.geodesic_distances_into(PerRow::Each(&a), PerRow::Each(&b), &mut want_e);
    let mut want_v = [Gf8::ZERO; 10];
    Backend::Scalar.slerp_into(
        PerRow::Each(&a),
        PerRow::Each(&b),
        PerRow::Each(&ts),
        &mut want_v,
    );
    for backend in Backend::ALL {
        let mut d = [f32::NAN; 10];
        backend.geodesic_distances_into(PerRow::Each(&a), PerRow::All(b[0]), &mut d);
        assert_eq!(d, want_d, "{backend:?}");
        backend.geodesic_distances_into(PerRow::Each(&a), PerRow::Each(&b), &mut d);
        assert_eq!(d, want_e, "{backend:?}");
        let mut v = [Gf8::ZERO; 10];
        backend.slerp_into(
            PerRow::Each(&a),
            PerRow::Each(&b),
            PerRow::Each(&ts),
            &mut v,
        );
        assert_eq!(v, want_v, "{backend:?}");
    }
    assert_eq!(want_v[0], a[0]);
    assert_eq!(want_v[4], b[4]);
}

#[test]
fn nearest_lattice_point_on_the_detected_path() {
    // `E8Point::nearest` takes its AVX2 path (a `target_feature` call) when
    // detection finds AVX2 and FMA, its SSE2 one otherwise: a few inputs
    // through each step (ties, deep holes, tiny, out of range, NaN),
    // against the old decoder.
    let mut inputs = vec![
        [1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
        [0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, -0.5],
        [-2.5, 0.5, 1.5, 0.5, 0.5, 0.5, 0.5, 0.5],
        [0.9, 0.2, -0.1, 0.0, 0.0, 0.0, 0.0, 1.1],
        [0.4, 0.6, 0.5, 0.5, 0.3, 0.7, 0.5, 0.5],
        [1e-30, 0.3, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
        [4_194_304.0, -4_194_303.5, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
        [0.0, 0.0, 5e6, 0.0, 0.0, 0.0, 0.0, 0.0],
        [0.0, 0.0, 0.0, f32::NAN, 0.0, 0.0, 0.0, 0.0],
    ];
    inputs.extend((0..12).map(|i| unit(i).map(|x| x * (1.0 + i as f32 * 0.37))));
    for x in &inputs {
        assert_eq!(
            E8Point::nearest(x).map(|p| p.doubled()),
            old_lattice::old_nearest(x),
            "{x:?}"
        );
    }
}

#[test]
fn nearest_root_on_the_sse2_path() {
    // `Gf8::nearest_root` runs the closed form in SSE2 on x86-64 (a
    // `target_feature` call, the baseline), and in plain Rust where its
    // scores overflow.
    for (code, root) in E8_ROOTS.iter().enumerate().step_by(7) {
        assert_eq!(root.nearest_root(), E8Root::new(code as u8).unwrap());
    }
    for i in 0..12 {
        let v = Gf8::try_new(unit(i)).unwrap();
        if !v.is_zero() {
            assert_eq!(v.nearest_root(), E8Root::nearest_brute_force(v), "{i}");
        }
    }
    // Scores that overflow `f32` go through the scaled form: the same root
    // as the same direction at unit length.
    let big = [3e38, -1e38, 0.0, 2e38, 0.0, 0.0, 0.0, 0.0];
    let unit_big = Gf8::normalize(big.map(|x| x * 1e-38)).unwrap();
    assert_eq!(
        Gf8::new_unchecked(big).nearest_root(),
        unit_big.nearest_root()
    );
}

#[test]
fn huge_buffers_are_advised_without_changing_them() {
    // 4 MiB and more are advised (the interior of whole 2 MiB pages).
    let n = huge::MIN_HUGE_BYTES / 4 + 3;
    let zeros: Vec<f32> = huge::zeroed_vec(n);
    assert_eq!(zeros.len(), n);
    assert!([0, n / 2, n - 1].iter().all(|&i| zeros[i] == 0.0));
    let mut out: Vec<u8> = Vec::with_capacity(huge::MIN_HUGE_BYTES + 5);
    out.push(7);
    huge::advise_spare(&mut out);
    out.extend_from_slice(&[1, 2, 3]);
    assert_eq!(out, [7, 1, 2, 3]);
    // Small ones are not, and a full vector has no spare capacity.
    let small: Vec<Gf8> = huge::zeroed_vec(3);
    assert!(small.iter().all(|v| v.is_zero()));
    let mut full = vec![1u8; 16];
    full.shrink_to_fit();
    huge::advise_spare(&mut full);
    assert_eq!(full, [1; 16]);
}

/// Only in a build with AVX2 compiled in (scripts/miri.sh's third build),
/// the one where this test reaches `unsafe` code: each encode is seconds
/// under Miri, and `tests/quant.rs` checks every backend natively.
#[cfg(all(feature = "simd", target_arch = "x86_64", target_feature = "avx2"))]
#[test]
fn e8p_encoder_on_every_backend() {
    // `quant::e8p` runs its AVX2 kernel (a `target_feature` call through its
    // own token) on `Backend::Avx2Fma` when the build and CPU have AVX2. Codewords encode to themselves, and
    // the AVX2 backend gives the scalar codes. (Few blocks: each is a
    // search over the codebook, seconds under Miri.)
    use hydron_core::quant::e8p;
    // Four blocks: one group of the batch kernel (`quant/e8p_batch.rs`).
    let blocks = [
        e8p::decode(0),
        e8p::decode(12_345),
        unit(1).map(|x| x * 1.7 + 0.1),
        unit(2).map(|x| x * 2.3 - 0.2),
    ];
    let mut scalar = vec![0u16; blocks.len()];
    e8p::encode_into_with(Backend::Scalar, &blocks, &mut scalar).unwrap();
    assert_eq!(scalar[..2], [0, 12_345]);
    if Backend::Avx2Fma.is_available() {
        let mut avx2 = vec![0u16; blocks.len()];
        e8p::encode_into_with(Backend::Avx2Fma, &blocks, &mut avx2).unwrap();
        assert_eq!(avx2, scalar);
    }
}

/// The lattice quantizer's pipeline (rotation, scale, blocks) compiled
/// for AVX2 (`target_feature` functions called after run-time detection):
/// only in the build with AVX2 compiled in, as above. One 32-dim vector
/// (four blocks, a group of the batch encoder) encoded and decoded.
#[cfg(all(feature = "simd", target_arch = "x86_64", target_feature = "avx2"))]
#[test]
fn lattice_quantizer_pipeline_on_avx2() {
    use hydron_core::quant::LatticeQuantizer;
    let q = LatticeQuantizer::new(32, 2, 3).unwrap();
    let x: Vec<f32> = (0..32).map(|i| ((i * 13 % 7) as f32 - 3.0) * 0.4).collect();
    let codes = q.encode(&x).unwrap();
    let y = q.decode(&codes).unwrap();
    let err: f32 = x.iter().zip(&y).map(|(a, b)| (a - b) * (a - b)).sum();
    let energy: f32 = x.iter().map(|a| a * a).sum();
    assert!(err < 0.3 * energy, "{err} {energy}");
}

/// The E8 shell encoder compiled for AVX2 (a `target_feature` function
/// called after run-time detection, one block through `encode`, many
/// through `encode_into`): only in the build with AVX2 compiled in, as
/// above.
#[cfg(all(feature = "simd", target_arch = "x86_64", target_feature = "avx2"))]
#[test]
fn shell_encoder_on_every_backend() {
    use hydron_core::quant::shell;
    let blocks = [
        [0.0; 8],
        [3.0, -1.0, 0.0, 0.0, 2.0, -2.0, 1.0, 0.5],
        unit(2).map(|x| x * 2.8),
    ];
    let mut scalar = [0u32; 3];
    shell::encode_into_with(Backend::Scalar, &blocks, &mut scalar).unwrap();
    let mut avx2 = [0u32; 3];
    shell::encode_into_with(Backend::Avx2Fma, &blocks, &mut avx2).unwrap();
    assert_eq!(avx2, scalar);
    for (x, &code) in blocks.iter().zip(&scalar) {
        assert_eq!(shell::encode(x).unwrap(), code);
    }
}

/// The search kernel's AVX2 path (`quant/search_avx2.rs`: one call through
/// the `Avx2Fma` token, unchecked query loads after one bounds check), in
/// the build with AVX2 compiled in: a few 16-dim codes, 1 and 9 queries (a
/// group of 8 and a tail), both metrics; the AVX2 backend gives the scalar
/// results bit for bit. 2 bits only: the unsafe code is the same for every
/// rate (generic over the block decoder), and the 4-bit decoder builds a
/// 2 MB table on first use, minutes under Miri.
#[cfg(all(feature = "simd", target_arch = "x86_64", target_feature = "avx2"))]
#[test]
fn search_kernels_on_every_backend() {
    use hydron_core::quant::{LatticeQuantizer, Metric};
    let x: Vec<f32> = (0..10 * 16)
        .map(|i| ((i * 37 % 23) as f32 - 11.0) / 7.0)
        .collect();
    for bits in [2] {
        let q = LatticeQuantizer::new(16, bits, 3).unwrap();
        let codes = q.encode(&x).unwrap();
        for queries in [1, 9] {
            let qs = &x[..queries * 16];
            for metric in [Metric::L2, Metric::InnerProduct] {
                let run = |backend| {
                    q.search_codes_with(backend, &codes.codes, &codes.scales, qs, 3, metric)
                        .unwrap()
                };
                let scalar = run(Backend::Scalar);
                assert_eq!(scalar.ids.len(), queries * 3);
                let avx2 = run(Backend::Avx2Fma);
                assert_eq!(avx2.ids, scalar.ids);
                let bits_of = |r: &hydron_core::quant::SearchResult| {
                    r.distances.iter().map(|d| d.to_bits()).collect::<Vec<_>>()
                };
                assert_eq!(bits_of(&avx2), bits_of(&scalar));
            }
        }
    }
}
