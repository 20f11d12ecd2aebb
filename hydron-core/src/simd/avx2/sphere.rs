//! The sphere kernels on AVX2: four pairs at a time in `__m256d`, the
//! arithmetic of `simd/sphere.rs` lane by lane. Four rows are loaded as
//! they are in memory and transposed in `f32` (the in-lane 4×4 transpose
//! gives coordinates `k` and `k + 4` in one register), then widened to
//! `f64` columns; slerp's columns go back the same way. The tails run the
//! scalar kernel, and the results are bit-identical to it: the same IEEE
//! operations in the same order, no FMA contraction.

use core::arch::x86_64::{
    __m128, __m256, __m256d, _mm256_add_pd, _mm256_and_pd, _mm256_blendv_pd,
    _mm256_castps128_ps256, _mm256_castps256_ps128, _mm256_castsi256_pd, _mm256_cmp_pd,
    _mm256_cvtpd_ps, _mm256_cvtps_pd, _mm256_div_pd, _mm256_extractf128_ps, _mm256_insertf128_ps,
    _mm256_movemask_pd, _mm256_mul_pd, _mm256_or_pd, _mm256_set1_epi64x, _mm256_set1_pd,
    _mm256_sqrt_pd, _mm256_sub_pd, _mm256_xor_pd, _CMP_EQ_OQ, _CMP_GE_OQ, _CMP_GT_OQ, _CMP_LE_OQ,
    _CMP_LT_OQ,
};

use super::{load, transpose_4x4, Avx2Fma};
use crate::batch::PerRow;
use crate::simd::sphere;
use crate::Gf8;

/// The sphere kernels, entered only through the token.
impl Avx2Fma {
    /// [`batch::geodesic_distances_into`](crate::batch::geodesic_distances_into);
    /// the operands have `out.len()` rows.
    #[inline]
    pub(crate) fn geodesic_distances_into(
        self,
        a: PerRow<'_, Gf8>,
        b: PerRow<'_, Gf8>,
        out: &mut [f32],
    ) {
        // SAFETY: `self` exists only if `detect` found AVX2 and FMA on this
        // CPU, the features `geodesic_distances_avx2` is compiled for.
        unsafe { geodesic_distances_avx2(a, b, out) }
    }

    /// [`batch::slerp_into`](crate::batch::slerp_into); the operands have
    /// `out.len()` rows.
    #[inline]
    pub(crate) fn slerp_into(
        self,
        a: PerRow<'_, Gf8>,
        b: PerRow<'_, Gf8>,
        t: PerRow<'_, f32>,
        out: &mut [Gf8],
    ) {
        // SAFETY: as in `geodesic_distances_into`: detection found AVX2
        // and FMA.
        unsafe { slerp_avx2(a, b, t, out) }
    }
}

type F = __m256d;
type M = __m256d;

#[inline]
#[target_feature(enable = "avx2,fma")]
fn splat(x: f64) -> F {
    _mm256_set1_pd(x)
}
#[inline]
#[target_feature(enable = "avx2,fma")]
fn add(a: F, b: F) -> F {
    _mm256_add_pd(a, b)
}
#[inline]
#[target_feature(enable = "avx2,fma")]
fn sub(a: F, b: F) -> F {
    _mm256_sub_pd(a, b)
}
#[inline]
#[target_feature(enable = "avx2,fma")]
fn mul(a: F, b: F) -> F {
    _mm256_mul_pd(a, b)
}
#[inline]
#[target_feature(enable = "avx2,fma")]
fn div(a: F, b: F) -> F {
    _mm256_div_pd(a, b)
}
#[inline]
#[target_feature(enable = "avx2,fma")]
fn sqrt(a: F) -> F {
    _mm256_sqrt_pd(a)
}
/// The sign bit flipped, as `-x` on `f64`.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn neg(a: F) -> F {
    _mm256_xor_pd(a, _mm256_set1_pd(-0.0))
}
#[inline]
#[target_feature(enable = "avx2,fma")]
fn eq(a: F, b: F) -> F {
    _mm256_cmp_pd::<_CMP_EQ_OQ>(a, b)
}
#[inline]
#[target_feature(enable = "avx2,fma")]
fn lt(a: F, b: F) -> F {
    _mm256_cmp_pd::<_CMP_LT_OQ>(a, b)
}
#[inline]
#[target_feature(enable = "avx2,fma")]
fn le(a: F, b: F) -> F {
    _mm256_cmp_pd::<_CMP_LE_OQ>(a, b)
}
#[inline]
#[target_feature(enable = "avx2,fma")]
fn gt(a: F, b: F) -> F {
    _mm256_cmp_pd::<_CMP_GT_OQ>(a, b)
}
#[inline]
#[target_feature(enable = "avx2,fma")]
fn ge(a: F, b: F) -> F {
    _mm256_cmp_pd::<_CMP_GE_OQ>(a, b)
}
#[inline]
#[target_feature(enable = "avx2,fma")]
fn and(a: F, b: F) -> F {
    _mm256_and_pd(a, b)
}
#[inline]
#[target_feature(enable = "avx2,fma")]
fn or(a: F, b: F) -> F {
    _mm256_or_pd(a, b)
}
#[inline]
#[target_feature(enable = "avx2,fma")]
fn not(a: F) -> F {
    _mm256_xor_pd(a, _mm256_castsi256_pd(_mm256_set1_epi64x(-1)))
}
/// The sign bit cleared, as `f64::abs`.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn abs(a: F) -> F {
    _mm256_and_pd(a, _mm256_castsi256_pd(_mm256_set1_epi64x(i64::MAX)))
}
#[inline]
#[target_feature(enable = "avx2,fma")]
fn all(mask: F) -> bool {
    _mm256_movemask_pd(mask) == 0b1111
}
#[inline]
#[target_feature(enable = "avx2,fma")]
fn select(mask: F, if_true: F, if_false: F) -> F {
    _mm256_blendv_pd(if_false, if_true, mask)
}

sphere::sphere_lanes!(#[target_feature(enable = "avx2,fma")]);

/// An operand in `f64` columns of four rows: the same columns for every
/// group of four (one vector), or read from the slice. (One per operand
/// of a call, on the stack: the size of `All` costs nothing.)
#[allow(clippy::large_enum_variant)]
enum Columns<'a> {
    All([F; 8]),
    Each(&'a [[f32; 8]]),
}

/// `operand` as [`Columns`].
#[inline]
#[target_feature(enable = "avx2,fma")]
fn columns(operand: PerRow<'_, Gf8>) -> Columns<'_> {
    match operand {
        PerRow::All(v) => {
            let mut columns = [splat(0.0); 8];
            for (column, &x) in columns.iter_mut().zip(v.as_array()) {
                *column = splat(f64::from(x));
            }
            Columns::All(columns)
        }
        PerRow::Each(vs) => Columns::Each(Gf8::slice_as_arrays(vs)),
    }
}

/// Coordinate `k` of rows `start..start + 4` in column `k`.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn columns_at(columns: &Columns<'_>, start: usize) -> [F; 8] {
    match columns {
        Columns::All(columns) => *columns,
        Columns::Each(rows) => {
            let rows = &rows[start..start + 4];
            let (c04, c15, c26, c37) = transpose_4x4(&[
                load(&rows[0]),
                load(&rows[1]),
                load(&rows[2]),
                load(&rows[3]),
            ]);
            [
                low(c04),
                low(c15),
                low(c26),
                low(c37),
                high(c04),
                high(c15),
                high(c26),
                high(c37),
            ]
        }
    }
}

/// The low four `f32` of a register, widened.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn low(v: __m256) -> F {
    _mm256_cvtps_pd(_mm256_castps256_ps128(v))
}

/// The high four `f32` of a register, widened.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn high(v: __m256) -> F {
    _mm256_cvtps_pd(_mm256_extractf128_ps::<1>(v))
}

/// `t` of rows `start..start + 4`.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn ts_at(t: PerRow<'_, f32>, start: usize) -> F {
    match t {
        PerRow::All(t) => splat(f64::from(t)),
        PerRow::Each(ts) => {
            let ts: [f32; 4] = ts[start..start + 4].try_into().expect("4 rows");
            _mm256_cvtps_pd(bytemuck::cast::<[f32; 4], __m128>(ts))
        }
    }
}

/// [`batch::geodesic_distances_into`](crate::batch::geodesic_distances_into):
/// the fast lanes for each group of four pairs, one loop per form of the
/// operands (so that a single vector's columns stay in registers), and the
/// scalar kernel for the lanes the fast path leaves (and the tail).
#[target_feature(enable = "avx2,fma")]
fn geodesic_distances_avx2(a: PerRow<'_, Gf8>, b: PerRow<'_, Gf8>, out: &mut [f32]) {
    let (quads, tail) = out.as_chunks_mut::<4>();
    let done = 4 * quads.len();
    match (a, b) {
        (PerRow::Each(x), PerRow::Each(y)) => {
            let (x, y) = (Gf8::slice_as_arrays(x), Gf8::slice_as_arrays(y));
            for (n, quad) in quads.iter_mut().enumerate() {
                let (cx, cy) = (rows_at(x, 4 * n), rows_at(y, 4 * n));
                geodesic_quad(&cx, &cy, quad, a, b, 4 * n);
            }
        }
        (PerRow::All(q), PerRow::Each(y)) => {
            let cq = splat_columns(q);
            let y = Gf8::slice_as_arrays(y);
            for (n, quad) in quads.iter_mut().enumerate() {
                geodesic_quad(&cq, &rows_at(y, 4 * n), quad, a, b, 4 * n);
            }
        }
        (PerRow::Each(x), PerRow::All(q)) => {
            let cq = splat_columns(q);
            let x = Gf8::slice_as_arrays(x);
            for (n, quad) in quads.iter_mut().enumerate() {
                geodesic_quad(&rows_at(x, 4 * n), &cq, quad, a, b, 4 * n);
            }
        }
        (PerRow::All(p), PerRow::All(q)) => {
            let (cp, cq) = (splat_columns(p), splat_columns(q));
            for (n, quad) in quads.iter_mut().enumerate() {
                geodesic_quad(&cp, &cq, quad, a, b, 4 * n);
            }
        }
    }
    let rest = tail.len();
    sphere::geodesic_distances_from(a.rows(done, rest), b.rows(done, rest), tail);
}

/// The angles of one group of four pairs into `quad` (rows `start..`):
/// the fast lanes, then the scalar kernel for any lane they leave.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn geodesic_quad(
    ca: &[F; 8],
    cb: &[F; 8],
    quad: &mut [f32; 4],
    a: PerRow<'_, Gf8>,
    b: PerRow<'_, Gf8>,
    start: usize,
) {
    let (angles, ok) = geodesic_fast_lanes(ca, cb);
    *quad = bytemuck::cast(_mm256_cvtpd_ps(angles));
    if !all(ok) {
        sphere::redo_geodesic(a, b, start, quad, _mm256_movemask_pd(ok) as u32);
    }
}

/// Rows `start..start + 4` of `rows` as columns.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn rows_at(rows: &[[f32; 8]], start: usize) -> [F; 8] {
    columns_of(rows[start..start + 4].try_into().expect("4 rows"))
}

/// One vector in every lane of its columns.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn splat_columns(v: Gf8) -> [F; 8] {
    let mut columns = [splat(0.0); 8];
    for (column, &x) in columns.iter_mut().zip(v.as_array()) {
        *column = splat(f64::from(x));
    }
    columns
}

/// Four rows as `f64` columns: loaded as they are, transposed in `f32`
/// (coordinates `k` and `k + 4` in one register), widened.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn columns_of(rows: &[[f32; 8]; 4]) -> [F; 8] {
    let (c04, c15, c26, c37) = transpose_4x4(&[
        load(&rows[0]),
        load(&rows[1]),
        load(&rows[2]),
        load(&rows[3]),
    ]);
    [
        low(c04),
        low(c15),
        low(c26),
        low(c37),
        high(c04),
        high(c15),
        high(c26),
        high(c37),
    ]
}

/// [`batch::slerp_into`](crate::batch::slerp_into): the fast lanes for
/// each group of four, and the scalar kernel for the lanes they leave
/// (and the tail).
#[target_feature(enable = "avx2,fma")]
fn slerp_avx2(a: PerRow<'_, Gf8>, b: PerRow<'_, Gf8>, t: PerRow<'_, f32>, out: &mut [Gf8]) {
    let (columns_a, columns_b) = (columns(a), columns(b));
    let (quads, tail) = out.as_chunks_mut::<4>();
    let done = 4 * quads.len();
    for (n, quad) in quads.iter_mut().enumerate() {
        let start = 4 * n;
        let (c, ok) = slerp_fast_lanes(
            &columns_at(&columns_a, start),
            &columns_at(&columns_b, start),
            ts_at(t, start),
        );
        // Back to rows: coordinates k and k + 4 in one register, then the
        // in-lane transpose (its own inverse).
        let mut joined = [_mm256_castps128_ps256(_mm256_cvtpd_ps(c[0])); 4];
        for (k, register) in joined.iter_mut().enumerate() {
            *register = _mm256_insertf128_ps::<1>(
                _mm256_castps128_ps256(_mm256_cvtpd_ps(c[k])),
                _mm256_cvtpd_ps(c[k + 4]),
            );
        }
        let (r0, r1, r2, r3) = transpose_4x4(&joined);
        for (slot, row) in quad.iter_mut().zip([r0, r1, r2, r3]) {
            *slot = Gf8::new_unchecked(bytemuck::cast(row));
        }
        if !all(ok) {
            sphere::redo_slerp(a, b, t, start, quad, _mm256_movemask_pd(ok) as u32);
        }
    }
    let rest = tail.len();
    sphere::slerp_from(
        a.rows(done, rest),
        b.rows(done, rest),
        t.rows(done, rest),
        tail,
    );
}

#[cfg(test)]
impl Avx2Fma {
    /// As `portable::lanes_for_test`: the lane functions on four pairs in
    /// `f64`, for the unit test of `simd/sphere.rs`.
    pub(crate) fn sphere_lanes_for_test(
        self,
        a: &[[f64; 8]; 4],
        b: &[[f64; 8]; 4],
        t: [f64; 4],
    ) -> ([f64; 4], [[f64; 8]; 4]) {
        // SAFETY: the token proves AVX2 and FMA.
        unsafe { lanes_for_test_avx2(a, b, t) }
    }
}

#[cfg(test)]
#[target_feature(enable = "avx2,fma")]
fn lanes_for_test_avx2(
    a: &[[f64; 8]; 4],
    b: &[[f64; 8]; 4],
    t: [f64; 4],
) -> ([f64; 4], [[f64; 8]; 4]) {
    let mut ca = [splat(0.0); 8];
    let mut cb = [splat(0.0); 8];
    for k in 0..8 {
        ca[k] = bytemuck::cast(a.map(|row| row[k]));
        cb[k] = bytemuck::cast(b.map(|row| row[k]));
    }
    let angles: [f64; 4] = bytemuck::cast(geodesic_lanes(&ca, &cb));
    let c = slerp_lanes(&ca, &cb, bytemuck::cast(t));
    let mut rows = [[0.0; 8]; 4];
    for (k, column) in c.iter().enumerate() {
        let column: [f64; 4] = bytemuck::cast(*column);
        for i in 0..4 {
            rows[i][k] = column[i];
        }
    }
    (angles, rows)
}
