//! The sphere kernels on AVX2: slerp four pairs at a time in `__m256d`,
//! the arithmetic of `simd/sphere.rs` lane by lane (four rows are loaded
//! as they are in memory and transposed in `f32`, the in-lane 4×4
//! transpose giving coordinates `k` and `k + 4` in one register, then
//! widened to `f64` columns; the results go back the same way), and the
//! geodesic distance eight pairs at a time in `__m256` (`narrow` below).
//! The tails run the scalar kernel, and the results are bit-identical to
//! it: the same IEEE operations in the same order, no FMA contraction.

use core::arch::x86_64::{
    __m128, __m256, __m256d, _mm256_add_pd, _mm256_and_pd, _mm256_blendv_pd,
    _mm256_castps128_ps256, _mm256_castps256_ps128, _mm256_castsi256_pd, _mm256_cmp_pd,
    _mm256_cvtpd_ps, _mm256_cvtps_pd, _mm256_div_pd, _mm256_extractf128_ps, _mm256_insertf128_ps,
    _mm256_movemask_pd, _mm256_mul_pd, _mm256_mul_ps, _mm256_or_pd, _mm256_set1_epi64x,
    _mm256_set1_pd, _mm256_sqrt_pd, _mm256_sub_pd, _mm256_xor_pd, _mm_add_ps, _mm_and_ps,
    _mm_castsi128_ps, _mm_cmp_ps, _mm_movemask_ps, _mm_set1_epi32, _mm_set1_ps, _mm_sub_ps,
    _CMP_EQ_OQ, _CMP_GE_OQ, _CMP_GT_OQ, _CMP_LE_OQ, _CMP_LT_OQ,
};

use super::{load, transpose_4x4, Avx2Fma};
use crate::batch::PerRow;
use crate::gf8::NORM_SQ_TOLERANCE;
use crate::simd::sphere;
use crate::Gf8;

/// The sphere kernels, entered only through the token.
impl Avx2Fma {
    /// [`batch::geodesic_distances_into`](crate::batch::geodesic_distances_into);
    /// the operands have `out.len()` rows.
    /// The rows are checked as they are measured: `false` if one fails
    /// `Gf8::check` (`out` is then unspecified).
    #[inline]
    pub(crate) fn geodesic_distances_into(
        self,
        a: PerRow<'_, [f32; 8]>,
        b: PerRow<'_, [f32; 8]>,
        out: &mut [f32],
    ) -> bool {
        // SAFETY: `self` exists only if `detect` found AVX2 and FMA on this
        // CPU, the features `geodesic_distances_avx2` is compiled for.
        unsafe { narrow::geodesic_distances_avx2(a, b, out) }
    }

    /// [`batch::slerp_into`](crate::batch::slerp_into); the operands have
    /// `out.len()` rows.
    /// The rows of a per-row operand are checked in the same pass (a
    /// single vector must have been checked): `false` if one fails
    /// `Gf8::check` (`out` is then unspecified).
    #[inline]
    pub(crate) fn slerp_into(
        self,
        a: PerRow<'_, [f32; 8]>,
        b: PerRow<'_, [f32; 8]>,
        t: PerRow<'_, f32>,
        out: &mut [Gf8],
    ) -> bool {
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
fn columns(operand: PerRow<'_, [f32; 8]>) -> Columns<'_> {
    match operand {
        PerRow::All(v) => {
            let mut columns = [splat(0.0); 8];
            for (column, x) in columns.iter_mut().zip(v) {
                *column = splat(f64::from(x));
            }
            Columns::All(columns)
        }
        PerRow::Each(rows) => Columns::Each(rows),
    }
}

/// Coordinate `k` of rows `start..start + 4` in column `k`, and the bit
/// mask of the rows whose squared norm (in `f32`, in the order of
/// `gf8::dot`) passes `Gf8::check`'s fast test (all four for one vector,
/// which the caller has checked).
#[inline]
#[target_feature(enable = "avx2,fma")]
fn columns_at(columns: &Columns<'_>, start: usize) -> ([F; 8], u32) {
    match columns {
        Columns::All(columns) => (*columns, 0b1111),
        Columns::Each(rows) => {
            let rows = &rows[start..start + 4];
            let (c04, c15, c26, c37) = transpose_4x4(&[
                load(&rows[0]),
                load(&rows[1]),
                load(&rows[2]),
                load(&rows[3]),
            ]);
            // x_k² + x_{k+4}² for each row, then the pairwise sum.
            let halves = |c: __m256| {
                let square = _mm256_mul_ps(c, c);
                _mm_add_ps(
                    _mm256_castps256_ps128(square),
                    _mm256_extractf128_ps::<1>(square),
                )
            };
            let norm_sq = _mm_add_ps(
                _mm_add_ps(halves(c04), halves(c26)),
                _mm_add_ps(halves(c15), halves(c37)),
            );
            let deviation = _mm_and_ps(
                _mm_sub_ps(norm_sq, _mm_set1_ps(1.0)),
                _mm_castsi128_ps(_mm_set1_epi32(i32::MAX)),
            );
            let unit = _mm_movemask_ps(_mm_cmp_ps::<_CMP_LE_OQ>(
                deviation,
                _mm_set1_ps(NORM_SQ_TOLERANCE),
            )) as u32;
            (
                [
                    low(c04),
                    low(c15),
                    low(c26),
                    low(c37),
                    high(c04),
                    high(c15),
                    high(c26),
                    high(c37),
                ],
                unit,
            )
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

/// [`batch::slerp_into`](crate::batch::slerp_into): the fast lanes for
/// each group of four, and the scalar kernel for the lanes they leave
/// (and the tail). The rows of a per-row operand are checked in the same
/// pass (a single vector must have been checked): `false` if one fails
/// `Gf8::check`.
#[target_feature(enable = "avx2,fma")]
fn slerp_avx2(
    a: PerRow<'_, [f32; 8]>,
    b: PerRow<'_, [f32; 8]>,
    t: PerRow<'_, f32>,
    out: &mut [Gf8],
) -> bool {
    let (columns_a, columns_b) = (columns(a), columns(b));
    let (quads, tail) = out.as_chunks_mut::<4>();
    let done = 4 * quads.len();
    for (n, quad) in quads.iter_mut().enumerate() {
        let start = 4 * n;
        let ((ca, unit_a), (cb, unit_b)) =
            (columns_at(&columns_a, start), columns_at(&columns_b, start));
        if unit_a & unit_b != 0b1111 && !sphere::recheck_quad(a, b, start, unit_a, unit_b) {
            return false;
        }
        let (c, ok) = slerp_fast_lanes(&ca, &cb, ts_at(t, start));
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
    )
}

/// The narrow geodesic path on `__m256`: eight pairs at a time in `f32`
/// lanes, the arithmetic of `simd/sphere.rs`'s `geodesic_narrow_lanes!`.
/// Eight rows are loaded as they are in memory and transposed (two in-lane
/// 4×4 transposes, then the halves exchanged); the lanes the narrow path
/// leaves, and the tail, run the scalar kernel, so the results are
/// bit-identical to it.
mod narrow {
    use core::arch::x86_64::{
        __m256, _mm256_add_ps, _mm256_and_ps, _mm256_blendv_ps, _mm256_castsi256_ps, _mm256_cmp_ps,
        _mm256_div_ps, _mm256_movemask_ps, _mm256_mul_ps, _mm256_permute2f128_ps,
        _mm256_set1_epi32, _mm256_set1_ps, _mm256_sqrt_ps, _mm256_sub_ps, _CMP_LE_OQ,
    };

    use super::super::{load, transpose_4x4};
    use crate::batch::PerRow;
    use crate::simd::sphere;

    type F = __m256;
    type M = __m256;

    #[inline]
    #[target_feature(enable = "avx2,fma")]
    fn splat(x: f32) -> F {
        _mm256_set1_ps(x)
    }
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    fn add(a: F, b: F) -> F {
        _mm256_add_ps(a, b)
    }
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    fn sub(a: F, b: F) -> F {
        _mm256_sub_ps(a, b)
    }
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    fn mul(a: F, b: F) -> F {
        _mm256_mul_ps(a, b)
    }
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    fn div(a: F, b: F) -> F {
        _mm256_div_ps(a, b)
    }
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    fn sqrt(a: F) -> F {
        _mm256_sqrt_ps(a)
    }
    /// The sign bit cleared, as `f32::abs`.
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    fn abs(a: F) -> F {
        _mm256_and_ps(a, _mm256_castsi256_ps(_mm256_set1_epi32(i32::MAX)))
    }
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    fn le(a: F, b: F) -> M {
        _mm256_cmp_ps::<_CMP_LE_OQ>(a, b)
    }
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    fn and(a: M, b: M) -> M {
        _mm256_and_ps(a, b)
    }
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    fn select(mask: M, if_true: F, if_false: F) -> F {
        _mm256_blendv_ps(if_false, if_true, mask)
    }

    sphere::geodesic_narrow_lanes!(#[target_feature(enable = "avx2,fma")]);

    /// Rows `start..start + 8` of `rows` as columns: column `k` lane `i` is
    /// coordinate `k` of row `start + i`.
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    fn rows_at(rows: &[[f32; 8]], start: usize) -> [F; 8] {
        let rows: &[[f32; 8]; 8] = rows[start..start + 8].try_into().expect("8 rows");
        // Coordinates k (low half) and k + 4 (high half) of four rows.
        let (l0, l1, l2, l3) = transpose_4x4(&[
            load(&rows[0]),
            load(&rows[1]),
            load(&rows[2]),
            load(&rows[3]),
        ]);
        let (h0, h1, h2, h3) = transpose_4x4(&[
            load(&rows[4]),
            load(&rows[5]),
            load(&rows[6]),
            load(&rows[7]),
        ]);
        [
            _mm256_permute2f128_ps::<0x20>(l0, h0),
            _mm256_permute2f128_ps::<0x20>(l1, h1),
            _mm256_permute2f128_ps::<0x20>(l2, h2),
            _mm256_permute2f128_ps::<0x20>(l3, h3),
            _mm256_permute2f128_ps::<0x31>(l0, h0),
            _mm256_permute2f128_ps::<0x31>(l1, h1),
            _mm256_permute2f128_ps::<0x31>(l2, h2),
            _mm256_permute2f128_ps::<0x31>(l3, h3),
        ]
    }

    /// Asks for the eight rows [`PREFETCH_ROWS`] after `start` (two cache
    /// lines): a hint, which reads nothing (an address past the end
    /// included). On a loaded machine, one thread's geodesic distances on
    /// 1M pairs took some 6.5 ms with it (64 rows ahead) against 8.5
    /// without, and some 6% less again 256 rows ahead (the kernel waits
    /// for memory there).
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    fn prefetch(rows: &[[f32; 8]], start: usize) {
        use core::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let ahead = rows.as_ptr().wrapping_add(start + PREFETCH_ROWS);
        _mm_prefetch::<_MM_HINT_T0>(ahead.cast());
        _mm_prefetch::<_MM_HINT_T0>(ahead.wrapping_add(4).cast());
    }

    /// How far ahead [`prefetch`] asks for rows (in rows of 32 bytes: 8 KiB).
    const PREFETCH_ROWS: usize = 256;

    /// One row in every lane of its columns.
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    fn splat_columns(v: [f32; 8]) -> [F; 8] {
        let mut columns = [splat(0.0); 8];
        for (column, x) in columns.iter_mut().zip(v) {
            *column = splat(x);
        }
        columns
    }

    /// [`batch::geodesic_distances_checked_into`](crate::batch::geodesic_distances_checked_into)'s
    /// kernel: the narrow lanes for each group of eight pairs, one loop
    /// per form of the operands (so that a single row's columns stay in
    /// registers), and the scalar kernel for the lanes they leave (and the
    /// tail). `false` if a row fails `Gf8::check`.
    #[target_feature(enable = "avx2,fma")]
    pub(super) fn geodesic_distances_avx2(
        a: PerRow<'_, [f32; 8]>,
        b: PerRow<'_, [f32; 8]>,
        out: &mut [f32],
    ) -> bool {
        let (octets, tail) = out.as_chunks_mut::<8>();
        let done = 8 * octets.len();
        // One loop per form of the operands, the lane function inlined in
        // each (`$n` is the group of eight).
        macro_rules! run {
            ($n:ident, $ca:expr, $cb:expr $(, $ahead:expr)?) => {
                for ($n, octet) in octets.iter_mut().enumerate() {
                    $($ahead;)?
                    let (angles, ok) = geodesic_narrow($ca, $cb);
                    *octet = bytemuck::cast(angles);
                    let fast = _mm256_movemask_ps(ok) as u32;
                    if fast != 0xFF && !sphere::redo_geodesic(a, b, 8 * $n, octet, fast) {
                        return false;
                    }
                }
            };
        }
        match (a, b) {
            (PerRow::Each(x), PerRow::Each(y)) => {
                run!(n, &rows_at(x, 8 * n), &rows_at(y, 8 * n), {
                    prefetch(x, 8 * n);
                    prefetch(y, 8 * n)
                })
            }
            (PerRow::All(p), PerRow::Each(y)) => {
                let cp = splat_columns(p);
                run!(n, &cp, &rows_at(y, 8 * n), prefetch(y, 8 * n))
            }
            (PerRow::Each(x), PerRow::All(q)) => {
                let cq = splat_columns(q);
                run!(n, &rows_at(x, 8 * n), &cq, prefetch(x, 8 * n))
            }
            (PerRow::All(p), PerRow::All(q)) => {
                let (cp, cq) = (splat_columns(p), splat_columns(q));
                run!(_n, &cp, &cq)
            }
        }
        let rest = tail.len();
        sphere::geodesic_distances_from(a.rows(done, rest), b.rows(done, rest), tail)
    }

    /// The narrow lanes on eight pairs of rows, for the unit test of
    /// `simd/sphere.rs`: the angles and the mask of lanes they hold for.
    #[cfg(test)]
    #[target_feature(enable = "avx2,fma")]
    pub(super) fn lanes_for_test(a: &[[f32; 8]; 8], b: &[[f32; 8]; 8]) -> ([f32; 8], u32) {
        let (angles, ok) = geodesic_narrow(&rows_at(a, 0), &rows_at(b, 0));
        (bytemuck::cast(angles), _mm256_movemask_ps(ok) as u32)
    }
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

    /// The narrow geodesic lanes on eight pairs, for the unit test of
    /// `simd/sphere.rs`.
    pub(crate) fn narrow_lanes_for_test(
        self,
        a: &[[f32; 8]; 8],
        b: &[[f32; 8]; 8],
    ) -> ([f32; 8], u32) {
        // SAFETY: the token proves AVX2 and FMA.
        unsafe { narrow::lanes_for_test(a, b) }
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
