//! The sphere kernels' arithmetic, written once for every backend: the
//! geodesic distance and slerp of [`batch::geodesic_distances_into`] and
//! [`batch::slerp_into`], on lanes of `f64`, and the narrow geodesic path
//! on lanes of `f32`.
//!
//! [`sphere_lanes!`] expands, in a backend's module, to the lane functions
//! in terms of a few operations the module defines on its lane type `F`
//! and mask type `M`: `splat`, `add`, `sub`, `mul`, `div`, `sqrt`, `neg`,
//! `abs` (the sign bit cleared), the comparisons `eq`, `lt`, `le`, `gt`,
//! `ge`, the mask operations `and`, `or`, `not`, `all` (every lane set),
//! and `select(mask, if_true, if_false)`. Each is one IEEE operation
//! (correctly rounded, no FMA), so every backend computes the same bits:
//! the scalar one here on `f64`, the portable one on `wide::f64x4`, the
//! AVX2 one on `__m256d`. [`geodesic_narrow_lanes!`] does the same on `f32`
//! (`f32`, `wide::f32x8`, `__m256`: eight pairs to a register).
//!
//! # The narrow geodesic path
//!
//! The geodesic kernels first take every pair through
//! `geodesic_narrow`, in `f32`: the stable `2·atan2(‖a − b‖, ‖a + b‖)`
//! with the lengths matched to first order, and a polynomial `atan`. Its
//! squared norms are those `Gf8::check` tests, bit for bit, so the same
//! pass checks unchecked rows. It holds for valid non-zero rows whose angle
//! is more than about 1e-3 rad from 0 and π ([`NARROW_MIN_SQ`]); the others
//! (zero vectors, angles closer to 0 or π, and invalid rows, which are
//! checked then) take the `f64` path below. Its results are within 5 ulp
//! of `f32` of the exact angle (`narrow_path_accuracy_sweep` below measures
//! at most 3.4, with a mean of 0.5; `tests/batch_sphere.rs` 2.7 on its
//! pairs; 5 million random and nearly equal or opposite pairs 3.5): the
//! rounding of `a ∓ b` and its squared norm in `f32`.
//! Slerp stays in `f64`.
//!
//! # Two paths
//!
//! Each kernel has a fast path and a stable one, and each pair takes one
//! of them by a test on that pair alone, so the result does not depend on
//! the backend or on the pair's neighbours:
//!
//! - the fast path (`geodesic_fast_lanes`, `slerp_fast_lanes`), for unit
//!   inputs (`|‖a‖²‖b‖² − 1| ≤ 1e-4`, which every non-zero `Gf8` meets)
//!   whose cosine is below 0.9999 in magnitude (more than 0.0141 rad from
//!   0 and π): the cosine from the dot products with a polynomial
//!   `1/sqrt`, `acos` from a polynomial `asin`; one or two square roots per
//!   pair and at most one division, which is what these kernels spend
//!   their time on;
//! - the stable path (`geodesic_stable_lanes`, `slerp_stable_lanes`), for
//!   every other pair (zero vectors, nearly equal or opposite ones): the
//!   formulas of `Gf8::geodesic_distance` and `Gf8::slerp`, with `atan2`
//!   of `‖â − b̂‖` and `‖â + b̂‖`, and the Gram–Schmidt direction.
//!
//! The SIMD slerp kernels run the fast path on four pairs at a time and
//! hand the lanes it leaves to the scalar kernel (`redo_slerp`), which
//! takes the stable path for them. The SIMD geodesic kernels run the
//! narrow path on eight pairs at a time and hand the lanes it leaves to
//! the scalar kernel (`redo_geodesic`), which takes this `f64` path (the
//! SIMD `f64` geodesic lanes serve the unit tests only).
//!
//! # Accuracy
//!
//! On the `f64` path, everything is computed in `f64` from the `f32`
//! inputs and rounded once to `f32` at the end. `atan` (Cephes' rational
//! approximation, with its range reduction), `sin`/`cos` (Cephes'
//! polynomials on `[−π/4, π/4]`, after one exact subtraction of a two-part
//! π/2 or π) and `asin` (a degree-12 polynomial, [`ASIN_P`]) stay within
//! 2 ulp of `f64` of libm's (`sphere_math_matches_libm` below checks them
//! over a sweep). The stable path is within a few 1e-16 rad of the exact
//! angle; the fast path within about 5e-16 / sin θ (at most 3e-14 rad,
//! 3e-5 ulp of `f32`, at its 0.0141 rad edge). So the `f32` results are
//! the correctly rounded ones but for values that close to a rounding
//! boundary, where they may be 1 ulp off; `tests/batch_sphere.rs` checks
//! them against the exact angle and the per-vector methods.
//!
//! [`batch::geodesic_distances_into`]: crate::batch::geodesic_distances_into
//! [`batch::slerp_into`]: crate::batch::slerp_into

use crate::batch::PerRow;
use crate::Gf8;

/// `tan(3π/8)`: above it `atan` reduces `x` to `−1/x`.
pub(crate) const T3P8: f64 = 2.414_213_562_373_095;
/// At most this, `atan` takes its argument as it is; between it and
/// [`T3P8`], `(x − 1)/(x + 1)`.
pub(crate) const ATAN_DIRECT: f64 = 0.66;
/// The part of π/2 that `f64`'s `FRAC_PI_2` leaves out (Cephes' `MOREBITS`).
pub(crate) const FRAC_PI_2_LO: f64 = 6.123_233_995_736_766e-17;
/// The part of π that `f64`'s `PI` leaves out.
pub(crate) const PI_LO: f64 = 1.224_646_799_147_353_2e-16;
/// Cephes' `atan` numerator, highest power first (its decimal constants,
/// as `f64`).
pub(crate) const ATAN_P: [f64; 5] = [
    -0.875_060_860_003_190_4,
    -16.157_537_187_333_652,
    -75.008_557_923_147_05,
    -122.886_668_449_013_61,
    -64.850_219_049_420_25,
];
/// Cephes' `atan` denominator (monic), highest power first, after the 1.
pub(crate) const ATAN_Q: [f64; 5] = [
    24.858_464_901_423_062,
    165.027_009_831_698_85,
    432.881_060_491_290_27,
    485.390_399_635_913_7,
    194.550_657_148_261_4,
];
/// Cephes' `sin` polynomial on `[−π/4, π/4]`, highest power first.
pub(crate) const SIN_P: [f64; 6] = [
    1.589_623_015_765_465_6e-10,
    -2.505_074_776_285_780_7e-8,
    2.755_731_362_138_572_2e-6,
    -1.984_126_982_958_954e-4,
    8.333_333_333_322_118e-3,
    -0.166_666_666_666_666_3,
];
/// Cephes' `cos` polynomial on `[−π/4, π/4]`, highest power first.
pub(crate) const COS_P: [f64; 6] = [
    -1.135_853_652_138_768_2e-11,
    2.087_570_084_197_473e-9,
    -2.755_731_417_929_674e-7,
    2.480_158_728_885_170_4e-5,
    -1.388_888_888_887_305_6e-3,
    4.166_666_666_666_659_5e-2,
];
/// `1/sqrt(1 + e)` to `e⁴` (its Taylor series: the next term is below
/// 3e-21 for `|e| ≤ 1e-4`), highest power first.
pub(crate) const RSQRT_P: [f64; 5] = [0.273_437_5, -0.312_5, 0.375, -0.5, 1.0];
/// The fast geodesic path takes pairs whose `‖a‖²‖b‖² − 1` is at most
/// this (unit vectors, within `Gf8`'s tolerance; not zero vectors).
pub(crate) const FAST_NORM_DEVIATION: f64 = 1e-4;
/// ... and whose cosine is below this in magnitude (an angle of more than
/// 0.0141 rad from 0 and π), where `acos` of the cosine loses nothing an
/// `f32` result could show: the cosine's error of some 4e-16 becomes at
/// most 3e-14 rad, 3e-5 ulp of `f32` there.
pub(crate) const FAST_MAX_COSINE: f64 = 0.9999;
/// `(asin(x)/x − 1)/x²` as a polynomial in `z = x²` on `[0, 1/4]`
/// (`x ≤ 1/2`), highest power first: the Chebyshev economization of its
/// Taylor series to degree 12 (truncation error below 1.5e-17), computed
/// exactly with rationals; `x + x·z·P(z)` is within 1 ulp of libm's `asin`.
pub(crate) const ASIN_P: [f64; 13] = [
    0.028_878_362_746_452_394,
    -0.015_032_162_599_250_314,
    0.017_518_833_979_538_67,
    0.005_413_184_483_715_509,
    0.010_333_372_152_967_26,
    0.011_477_517_005_507_167,
    0.013_971_387_083_102_13,
    0.017_352_380_709_839_098,
    0.022_372_173_467_043_486,
    0.030_381_944_125_008_75,
    0.044_642_857_146_535_23,
    0.074_999_999_999_983_4,
    0.166_666_666_666_666_69,
];
/// Slerp treats unit inputs whose perpendicular part is shorter than this
/// as parallel or opposite, as `Gf8::slerp` does.
pub(crate) const PARALLEL_EPS: f64 = 1e-12;

/// `(atan(r)/r − 1)/r²` as a polynomial in `z = r²` on `[0, tan²(π/8)]`,
/// highest power first, in `f32`: a weighted least-squares fit iterated
/// towards minimax (Lawson); `r + r·z·P(z)` evaluated in `f32` by Horner's
/// rule is within 0.61 ulp of `atan(r)` there.
pub(crate) const ATAN32_P: [f32; 5] = [
    -0.060_834_53,
    0.105_960_01,
    -0.142_438_49,
    0.199_984_9,
    -0.333_333_16,
];
/// `tan(π/8)`: above it (as a ratio) the narrow `atan` reduces its
/// argument to `(r − 1)/(r + 1)`.
pub(crate) const TAN_FRAC_PI_8: f32 = 0.414_213_57;
/// The part of π/4 that `f32`'s `FRAC_PI_4` leaves out.
pub(crate) const FRAC_PI_4_LO32: f32 = -2.185_569_4e-8;
/// The part of π that `f32`'s `PI` leaves out.
pub(crate) const PI_LO32: f32 = -8.742_278e-8;
/// The narrow geodesic path takes pairs whose `‖â ∓ b̂‖²` (the smaller)
/// is at least this: angles more than about 1e-3 rad from 0 and π, where
/// the `f32` rounding of the squared norms changes the angle by less than
/// 0.1 ulp (the mismatch of the two lengths enters squared).
pub(crate) const NARROW_MIN_SQ: f32 = 1e-6;

/// The narrow geodesic lane function (`f32` lanes), in terms of the
/// operations of the module it is expanded in: `splat`, `add`, `sub`,
/// `mul`, `div`, `sqrt`, `abs`, `le`, `and`, `select` on the lane type
/// `F` of `f32` and its mask type `M`, each one IEEE operation (no FMA).
macro_rules! geodesic_narrow_lanes {
    ($(#[$attr:meta])*) => {
        /// `((x0 + x4) + (x2 + x6)) + ((x1 + x5) + (x3 + x7))`: the
        /// pairwise order of `gf8::dot`, so a squared norm is bit for bit
        /// the one `Gf8::check` tests.
        $(#[$attr])*
        #[inline]
        fn sum8(x: &[F; 8]) -> F {
            add(
                add(add(x[0], x[4]), add(x[2], x[6])),
                add(add(x[1], x[5]), add(x[3], x[7])),
            )
        }

        /// The narrow geodesic path, on `f32` lanes: the stable
        /// `2·atan2(‖a' − b'‖, ‖a' + b'‖)` of `a' = (1 − h)·a` and
        /// `b' = (1 + h)·b`, `h = (‖a‖² − ‖b‖²)/4`, which have equal
        /// lengths to first order (the rest changes the ratio only in
        /// second order): `‖a' ∓ b'‖²` from `‖a ∓ b‖²` (`a ∓ b` exact for
        /// close coordinates), `(a − b)·(a + b)` and `h`, symmetric in `a`
        /// and `b` bit for bit. Then a polynomial `atan` of the smaller
        /// norm over the larger (one division, two square roots).
        /// The mask says which lanes it holds for: both inputs pass
        /// `Gf8::check`'s fast test (unit norm: no zero, NaN or infinite
        /// vector) and the angle is more than about 1e-3 rad from 0 and π
        /// ([`NARROW_MIN_SQ`]).
        $(#[$attr])*
        #[inline]
        fn geodesic_narrow(a: &[F; 8], b: &[F; 8]) -> (F, M) {
            use $crate::simd::sphere::{ATAN32_P, FRAC_PI_4_LO32, NARROW_MIN_SQ, PI_LO32, TAN_FRAC_PI_8};
            let zero = splat(0.0);
            let mut p = [zero; 8];
            for k in 0..8 {
                p[k] = mul(a[k], a[k]);
            }
            let na = sum8(&p);
            for k in 0..8 {
                p[k] = mul(b[k], b[k]);
            }
            let nb = sum8(&p);
            // a·(1 − h) and b·(1 + h) have equal lengths to first order;
            // with D = ‖a − b‖², S = ‖a + b‖², P = (a − b)·(a + b):
            // ‖(a − b) − h(a + b)‖² = D − 2hP + h²S, and the same with D
            // and S exchanged for the sum.
            let h = mul(sub(na, nb), splat(0.25));
            let mut d = [zero; 8];
            let mut s = [zero; 8];
            let mut c = [zero; 8];
            for k in 0..8 {
                let (difference, sum) = (sub(a[k], b[k]), add(a[k], b[k]));
                d[k] = mul(difference, difference);
                s[k] = mul(sum, sum);
                c[k] = mul(difference, sum);
            }
            let (d0, s0, p) = (sum8(&d), sum8(&s), sum8(&c));
            let cross = mul(add(h, h), p);
            let h2 = mul(h, h);
            let dd = add(sub(d0, cross), mul(h2, s0));
            let ss = add(sub(s0, cross), mul(h2, d0));
            let acute = le(dd, ss);
            let shorter = select(acute, dd, ss);
            let y = sqrt(shorter);
            let x = sqrt(select(acute, ss, dd));
            // φ = atan(y / x) in [0, π/4].
            let small = le(y, mul(splat(TAN_FRAC_PI_8), x));
            let r = div(select(small, y, sub(y, x)), select(small, x, add(y, x)));
            let z = mul(r, r);
            let mut poly = splat(ATAN32_P[0]);
            for &c in &ATAN32_P[1..] {
                poly = add(mul(poly, z), splat(c));
            }
            let base = select(small, zero, splat(core::f32::consts::FRAC_PI_4));
            let base_lo = select(small, zero, splat(FRAC_PI_4_LO32));
            let phi = add(base, add(add(r, mul(r, mul(z, poly))), base_lo));
            let twice = add(phi, phi);
            let angle = select(
                acute,
                twice,
                add(sub(splat(core::f32::consts::PI), twice), splat(PI_LO32)),
            );
            let one = splat(1.0);
            let tolerance = splat($crate::gf8::NORM_SQ_TOLERANCE);
            let ok = and(
                and(le(abs(sub(na, one)), tolerance), le(abs(sub(nb, one)), tolerance)),
                le(splat(NARROW_MIN_SQ), shorter),
            );
            (angle, ok)
        }
    };
}
pub(crate) use geodesic_narrow_lanes;

/// The lane functions, in terms of the operations of the module it is
/// expanded in (see the module docs); the attributes (a `target_feature`)
/// go on every function.
macro_rules! sphere_lanes {
    ($(#[$attr:meta])*) => {
        /// `((x0 + x4) + (x2 + x6)) + ((x1 + x5) + (x3 + x7))`: the
        /// pairwise order of `gf8::dot`.
        $(#[$attr])*
        #[inline]
        fn sum8(x: &[F; 8]) -> F {
            add(
                add(add(x[0], x[4]), add(x[2], x[6])),
                add(add(x[1], x[5]), add(x[3], x[7])),
            )
        }

        /// Lane by lane, `Σ a_k b_k` in the order of [`sum8`].
        $(#[$attr])*
        #[inline]
        fn dot8(a: &[F; 8], b: &[F; 8]) -> F {
            let mut p = [splat(0.0); 8];
            for k in 0..8 {
                p[k] = mul(a[k], b[k]);
            }
            sum8(&p)
        }

        /// Horner's rule on `coefficients` (highest power first), with an
        /// implicit leading 1 when `monic`.
        $(#[$attr])*
        #[inline]
        fn horner(z: F, coefficients: &[f64], monic: bool) -> F {
            let mut acc = if monic {
                add(z, splat(coefficients[0]))
            } else {
                splat(coefficients[0])
            };
            for &c in &coefficients[1..] {
                acc = add(mul(acc, z), splat(c));
            }
            acc
        }

        /// The polynomial with `coefficients` (highest power first) by
        /// Estrin's scheme: pairs of terms combined with `z`,
        /// then pairs of those with `z²`, and so on, for a short chain of
        /// dependent operations.
        $(#[$attr])*
        #[inline]
        fn estrin<const N: usize>(z: F, coefficients: &[f64; N]) -> F {
            let n = N;
            let mut terms = [splat(0.0); N];
            for i in 0..n {
                terms[i] = splat(coefficients[n - 1 - i]);
            }
            let mut power = z;
            let mut len = n;
            while len > 1 {
                for i in 0..len / 2 {
                    terms[i] = add(terms[2 * i], mul(terms[2 * i + 1], power));
                }
                if len % 2 == 1 {
                    terms[len / 2] = terms[len - 1];
                }
                len = len.div_ceil(2);
                if len > 1 {
                    power = mul(power, power);
                }
            }
            terms[0]
        }

        /// `atan2(y, x)` for `y, x ≥ 0`, not both zero: Cephes' `atan`
        /// of `y / x` with its range reduction done on `y` and `x`
        /// (`−x / y` above `tan(3π/8)`, `(y − x)/(y + x)` above 0.66).
        $(#[$attr])*
        #[inline]
        fn atan2_positive(y: F, x: F) -> F {
            use $crate::simd::sphere::{ATAN_DIRECT, ATAN_P, ATAN_Q, FRAC_PI_2_LO, T3P8};
            let big = gt(y, mul(splat(T3P8), x));
            let small = le(y, mul(splat(ATAN_DIRECT), x));
            let num = select(big, neg(x), select(small, y, sub(y, x)));
            let den = select(big, y, select(small, x, add(y, x)));
            let base = select(
                big,
                splat(core::f64::consts::FRAC_PI_2),
                select(small, splat(0.0), splat(core::f64::consts::FRAC_PI_4)),
            );
            let more = select(
                big,
                splat(FRAC_PI_2_LO),
                select(small, splat(0.0), splat(0.5 * FRAC_PI_2_LO)),
            );
            let r = div(num, den);
            let z = mul(r, r);
            let w = div(mul(z, horner(z, &ATAN_P, false)), horner(z, &ATAN_Q, true));
            add(base, add(add(mul(r, w), r), more))
        }

        /// `(sin φ, cos φ)` for `φ` in `[0, π]`: reduced to `[−π/4, π/4]`
        /// by one exact subtraction of `π/2` or `π` (each in two parts),
        /// then Cephes' polynomials.
        $(#[$attr])*
        #[inline]
        fn sin_cos_lanes(phi: F) -> (F, F) {
            use $crate::simd::sphere::{COS_P, FRAC_PI_2_LO, PI_LO, SIN_P};
            use core::f64::consts::{FRAC_PI_2, FRAC_PI_4, PI};
            let mid = gt(phi, splat(FRAC_PI_4));
            let top = gt(phi, splat(3.0 * FRAC_PI_4));
            let r = select(
                top,
                sub(sub(phi, splat(PI)), splat(PI_LO)),
                select(mid, sub(sub(phi, splat(FRAC_PI_2)), splat(FRAC_PI_2_LO)), phi),
            );
            let z = mul(r, r);
            let s = add(r, mul(r, mul(z, estrin(z, &SIN_P))));
            let c = add(
                sub(splat(1.0), mul(splat(0.5), z)),
                mul(mul(z, z), estrin(z, &COS_P)),
            );
            (
                select(top, neg(s), select(mid, c, s)),
                select(top, neg(c), select(mid, neg(s), c)),
            )
        }

        /// `acos(c)` for `|c| < 1`: a polynomial `asin` of `|c|` below 1/2,
        /// of `sqrt((1 − |c|)/2)` above (`1 − |c|` is exact there), one
        /// square root and no division. Accurate to the error of `c`
        /// divided by `sin θ`: the fast paths use it up to
        /// [`FAST_MAX_COSINE`].
        $(#[$attr])*
        #[inline]
        fn acos_lanes(cosine: F) -> F {
            use $crate::simd::sphere::ASIN_P;
            use core::f64::consts::{FRAC_PI_2, PI};
            let half = splat(0.5);
            let magnitude = abs(cosine);
            let small = lt(magnitude, half);
            let rest = mul(sub(splat(1.0), magnitude), half);
            let x = select(small, magnitude, sqrt(rest));
            let z = select(small, mul(magnitude, magnitude), rest);
            // asin(x), x in [0, 1/2].
            let s = add(x, mul(x, mul(z, estrin(z, &ASIN_P))));
            let negative = lt(cosine, splat(0.0));
            let twice = add(s, s);
            select(
                small,
                select(negative, add(splat(FRAC_PI_2), s), sub(splat(FRAC_PI_2), s)),
                select(negative, sub(splat(PI), twice), twice),
            )
        }

        /// The fast geodesic path: `acos` of the cosine
        /// `a·b / sqrt(‖a‖²‖b‖²)`, with a polynomial `1/sqrt` (the norms
        /// are 1 within 1e-4): one square root and no division. The mask
        /// says which lanes it holds for (unit inputs, cosine below
        /// [`FAST_MAX_COSINE`] in magnitude).
        $(#[$attr])*
        #[inline]
        fn geodesic_fast_lanes(a: &[F; 8], b: &[F; 8]) -> (F, M) {
            use $crate::simd::sphere::{FAST_MAX_COSINE, FAST_NORM_DEVIATION, RSQRT_P};
            let deviation = sub(mul(dot8(a, a), dot8(b, b)), splat(1.0));
            let cosine = mul(dot8(a, b), estrin(deviation, &RSQRT_P));
            let ok = and(
                le(abs(deviation), splat(FAST_NORM_DEVIATION)),
                lt(abs(cosine), splat(FAST_MAX_COSINE)),
            );
            (acos_lanes(cosine), ok)
        }

        /// The fast slerp path: `(sin((1 − t)θ)·â + sin(tθ)·b̂)`, rescaled
        /// to unit length, with `â`, `b̂` from a polynomial `1/sqrt` (the
        /// norms are 1 within 1e-4), `θ` from [`acos_lanes`], `sin θ` as
        /// `sqrt((1 − c)(1 + c))` and `sin((1 − t)θ)` as
        /// `sin θ cos tθ − cos θ sin tθ`: two square roots and one
        /// division. `t` at most 0 (or NaN) gives `a`, at least 1 gives `b`.
        /// The mask says which lanes it holds for (unit inputs, cosine
        /// below [`FAST_MAX_COSINE`] in magnitude, so no parallel, opposite
        /// or equal inputs).
        $(#[$attr])*
        #[inline]
        fn slerp_fast_lanes(a: &[F; 8], b: &[F; 8], t: F) -> ([F; 8], M) {
            use $crate::simd::sphere::{FAST_MAX_COSINE, FAST_NORM_DEVIATION, RSQRT_P};
            let zero = splat(0.0);
            let one = splat(1.0);
            let da = sub(dot8(a, a), one);
            let db = sub(dot8(b, b), one);
            let ia = estrin(da, &RSQRT_P);
            let ib = estrin(db, &RSQRT_P);
            let cosine = mul(mul(dot8(a, b), ia), ib);
            let theta = acos_lanes(cosine);
            let sin_theta = sqrt(mul(sub(one, cosine), add(one, cosine)));
            let (sin_t, cos_t) = sin_cos_lanes(mul(t, theta));
            let alpha = mul(sub(mul(sin_theta, cos_t), mul(cosine, sin_t)), ia);
            let beta = mul(sin_t, ib);
            let mut v = [zero; 8];
            for k in 0..8 {
                v[k] = add(mul(alpha, a[k]), mul(beta, b[k]));
            }
            let inv = div(one, sqrt(dot8(&v, &v)));
            let t_low = not(gt(t, zero));
            let t_high = ge(t, one);
            let mut out = [zero; 8];
            for k in 0..8 {
                out[k] = select(t_low, a[k], select(t_high, b[k], mul(v[k], inv)));
            }
            let bound = splat(FAST_NORM_DEVIATION);
            let ok = and(
                and(le(abs(da), bound), le(abs(db), bound)),
                lt(abs(cosine), splat(FAST_MAX_COSINE)),
            );
            (out, ok)
        }

        /// The geodesic distance of `Gf8::geodesic_distance`, lane by lane:
        /// [`geodesic_fast_lanes`] where it holds, else
        /// [`geodesic_stable_lanes`]; each lane's result depends on that
        /// lane only. (The SIMD kernels take the fast lanes and leave the
        /// rest to the scalar kernel, which gives the same bits; they call
        /// this in the unit tests only.)
        $(#[$attr])*
        #[inline]
        #[allow(dead_code)]
        fn geodesic_lanes(a: &[F; 8], b: &[F; 8]) -> F {
            let (fast, ok) = geodesic_fast_lanes(a, b);
            if all(ok) {
                fast
            } else {
                select(ok, fast, geodesic_stable_lanes(a, b))
            }
        }

        /// The geodesic distance of `Gf8::geodesic_distance`, lane by lane,
        /// for any input (the path of zero vectors, and of angles near 0
        /// and π):
        /// `2·atan2(‖a/|a| − b/|b|‖, ‖a/|a| + b/|b|‖)`, with both terms
        /// multiplied by `|a||b|` (which leaves the angle unchanged and
        /// saves two divisions); π/2 between zero and a unit vector, 0
        /// between two zeros.
        $(#[$attr])*
        #[inline(never)]
        #[allow(dead_code)]
        fn geodesic_stable_lanes(a: &[F; 8], b: &[F; 8]) -> F {
            let zero = splat(0.0);
            let na = dot8(a, a);
            let nb = dot8(b, b);
            let la = sqrt(na);
            let lb = sqrt(nb);
            let mut d = [zero; 8];
            let mut s = [zero; 8];
            for k in 0..8 {
                let x = mul(a[k], lb);
                let y = mul(b[k], la);
                d[k] = sub(x, y);
                s[k] = add(x, y);
            }
            let angle = mul(
                splat(2.0),
                atan2_positive(sqrt(dot8(&d, &d)), sqrt(dot8(&s, &s))),
            );
            let a_zero = eq(na, zero);
            let b_zero = eq(nb, zero);
            let right = splat(core::f64::consts::FRAC_PI_2);
            select(
                a_zero,
                select(b_zero, zero, right),
                select(b_zero, right, angle),
            )
        }

        /// `Gf8::slerp`, lane by lane: [`slerp_fast_lanes`] where it
        /// holds, else [`slerp_stable_lanes`]; each lane's result depends
        /// on that lane only. (The SIMD kernels take the fast lanes and
        /// leave the rest to the scalar kernel, which gives the same bits;
        /// they call this in the unit tests only.)
        $(#[$attr])*
        #[inline]
        #[allow(dead_code)]
        fn slerp_lanes(a: &[F; 8], b: &[F; 8], t: F) -> [F; 8] {
            let (fast, ok) = slerp_fast_lanes(a, b, t);
            if all(ok) {
                return fast;
            }
            let stable = slerp_stable_lanes(a, b, t);
            let mut out = fast;
            for k in 0..8 {
                out[k] = select(ok, fast[k], stable[k]);
            }
            out
        }

        /// `Gf8::slerp`, lane by lane, for any input, with its cases as masks: `t` NaN or
        /// at most 0 gives `a`, at least 1 gives `b`, equal inputs give
        /// `a`; a zero input, or parallel inputs, the normalized linear
        /// interpolation; opposite ones the great circle through `J·a`.
        $(#[$attr])*
        #[inline(never)]
        #[allow(dead_code)]
        fn slerp_stable_lanes(a: &[F; 8], b: &[F; 8], t: F) -> [F; 8] {
            use $crate::simd::sphere::PARALLEL_EPS;
            let zero = splat(0.0);
            let one = splat(1.0);
            let na = dot8(a, a);
            let nb = dot8(b, b);
            let any_zero = or(eq(na, zero), eq(nb, zero));
            // Unit inputs (NaN in the lanes of a zero one, which take the
            // linear branch on the raw inputs).
            let ia = div(one, sqrt(na));
            let ib = div(one, sqrt(nb));
            let mut ua = [zero; 8];
            let mut ub = [zero; 8];
            let mut d = [zero; 8];
            let mut s = [zero; 8];
            for k in 0..8 {
                ua[k] = mul(a[k], ia);
                ub[k] = mul(b[k], ib);
                d[k] = sub(ua[k], ub[k]);
                s[k] = add(ua[k], ub[k]);
            }
            let theta = mul(
                splat(2.0),
                atan2_positive(sqrt(dot8(&d, &d)), sqrt(dot8(&s, &s))),
            );
            // The part of `ub` perpendicular to `ua` (Gram–Schmidt twice).
            let cosine = dot8(&ub, &ua);
            let mut p = [zero; 8];
            for k in 0..8 {
                p[k] = sub(ub[k], mul(cosine, ua[k]));
            }
            let c = dot8(&p, &ua);
            for k in 0..8 {
                p[k] = sub(p[k], mul(c, ua[k]));
            }
            let length = sqrt(dot8(&p, &p));
            let general = gt(length, splat(PARALLEL_EPS));
            let on_circle = or(general, lt(cosine, zero));
            let linear = or(any_zero, not(on_circle));
            let inv_length = div(one, length);
            let (sin, cos) = sin_cos_lanes(mul(t, theta));
            let alpha = select(linear, sub(one, t), cos);
            let beta = select(linear, t, sin);
            let mut v = [zero; 8];
            for k in 0..8 {
                // J·ua = (−ua1, ua0, −ua3, ua2, …).
                let j = if k % 2 == 0 { neg(ua[k + 1]) } else { ua[k - 1] };
                let direction = select(general, mul(p[k], inv_length), j);
                let x = select(any_zero, a[k], ua[k]);
                let y = select(any_zero, b[k], select(on_circle, direction, ub[k]));
                v[k] = add(mul(alpha, x), mul(beta, y));
            }
            let nv = dot8(&v, &v);
            let inv = div(one, sqrt(nv));
            let v_zero = eq(nv, zero);
            let t_low = not(gt(t, zero));
            let t_high = ge(t, one);
            let mut same = eq(a[0], b[0]);
            for k in 1..8 {
                same = and(same, eq(a[k], b[k]));
            }
            let mut out = [zero; 8];
            for k in 0..8 {
                let narrowed = select(v_zero, zero, mul(v[k], inv));
                out[k] = select(
                    t_low,
                    a[k],
                    select(t_high, b[k], select(same, a[k], narrowed)),
                );
            }
            out
        }
    };
}
pub(crate) use sphere_lanes;

/// The lane operations written alike on a plain float and on a `wide`
/// vector (its operators): `add`, `sub`, `mul`, `div`, `sqrt`, `abs`, and
/// the mask operations `and`, `or`, `not`, on the lane type `F` and the
/// mask type `M` of the module it is expanded in. For
/// [`scalar_lane_ops!`] and `portable/sphere.rs`'s `wide_lane_ops!`; the
/// narrow lanes use no `or` or `not`.
macro_rules! operator_lane_ops {
    () => {
        #[inline]
        fn add(a: F, b: F) -> F {
            a + b
        }
        #[inline]
        fn sub(a: F, b: F) -> F {
            a - b
        }
        #[inline]
        fn mul(a: F, b: F) -> F {
            a * b
        }
        #[inline]
        fn div(a: F, b: F) -> F {
            a / b
        }
        #[inline]
        fn sqrt(a: F) -> F {
            a.sqrt()
        }
        #[inline]
        fn abs(a: F) -> F {
            a.abs()
        }
        #[inline]
        fn and(a: M, b: M) -> M {
            a & b
        }
        #[inline]
        #[allow(dead_code)]
        fn or(a: M, b: M) -> M {
            a | b
        }
        #[inline]
        #[allow(dead_code)]
        fn not(a: M) -> M {
            !a
        }
    };
}
pub(crate) use operator_lane_ops;

/// The lane operations of [`sphere_lanes!`] and [`geodesic_narrow_lanes!`]
/// on one plain float `$t` (one lane; a mask is a `bool`). The narrow lanes
/// use a subset: the operations only [`sphere_lanes!`] uses are allowed to
/// go unused.
macro_rules! scalar_lane_ops {
    ($t:ty) => {
        type F = $t;
        type M = bool;

        $crate::simd::sphere::operator_lane_ops!();
        #[inline]
        fn splat(x: $t) -> F {
            x
        }
        #[inline]
        fn le(a: F, b: F) -> M {
            a <= b
        }
        #[inline]
        fn select(mask: M, if_true: F, if_false: F) -> F {
            if mask {
                if_true
            } else {
                if_false
            }
        }
        #[inline]
        #[allow(dead_code)]
        fn neg(a: F) -> F {
            -a
        }
        #[inline]
        #[allow(dead_code)]
        fn eq(a: F, b: F) -> M {
            a == b
        }
        #[inline]
        #[allow(dead_code)]
        fn lt(a: F, b: F) -> M {
            a < b
        }
        #[inline]
        #[allow(dead_code)]
        fn gt(a: F, b: F) -> M {
            a > b
        }
        #[inline]
        #[allow(dead_code)]
        fn ge(a: F, b: F) -> M {
            a >= b
        }
        #[inline]
        #[allow(dead_code)]
        fn all(mask: M) -> bool {
            mask
        }
    };
}

/// The lanes on plain `f64`: the scalar backend, and the tails of the
/// others.
mod lanes {
    scalar_lane_ops!(f64);

    super::sphere_lanes!();

    pub(super) fn geodesic(a: &[F; 8], b: &[F; 8]) -> F {
        geodesic_lanes(a, b)
    }
    pub(super) fn slerp(a: &[F; 8], b: &[F; 8], t: F) -> [F; 8] {
        slerp_lanes(a, b, t)
    }
    #[cfg(test)]
    pub(super) fn atan2(y: F, x: F) -> F {
        atan2_positive(y, x)
    }
    #[cfg(test)]
    pub(super) fn sin_cos(phi: F) -> (F, F) {
        sin_cos_lanes(phi)
    }
}

/// The narrow lanes on plain `f32`: the scalar backend's narrow geodesic
/// path, and the tails of the others.
mod narrow {
    scalar_lane_ops!(f32);

    super::geodesic_narrow_lanes!();

    #[inline]
    pub(super) fn geodesic(a: &[F; 8], b: &[F; 8]) -> (F, M) {
        geodesic_narrow(a, b)
    }
}

/// A vector's coordinates in `f64` (exact).
#[inline]
fn widen(v: Gf8) -> [f64; 8] {
    v.to_array().map(f64::from)
}

/// The geodesic distance of one pair on the wide (`f64`) path, for the
/// pairs the narrow path leaves.
#[inline]
fn geodesic_wide(a: Gf8, b: Gf8) -> f32 {
    lanes::geodesic(&widen(a), &widen(b)) as f32
}

/// The geodesic distance of one pair of unchecked rows, exactly as every
/// backend computes it: the narrow path where it holds, else (zero
/// vectors, angles within about 1e-3 rad of 0 or π, and invalid rows)
/// [`geodesic_checked_slow`]. `None` if a row fails `Gf8::check`.
#[inline]
#[must_use]
pub(crate) fn geodesic_checked(a: &[f32; 8], b: &[f32; 8]) -> Option<f32> {
    let (angle, ok) = narrow::geodesic(a, b);
    if ok {
        Some(angle)
    } else {
        geodesic_checked_slow(a, b)
    }
}

/// The rows the narrow path leaves: checked as `Gf8::check` checks them,
/// then the wide path. Out of line.
#[cold]
#[inline(never)]
fn geodesic_checked_slow(a: &[f32; 8], b: &[f32; 8]) -> Option<f32> {
    let valid = Gf8::check(a).is_ok() && Gf8::check(b).is_ok();
    valid.then(|| geodesic_wide(Gf8::new_unchecked(*a), Gf8::new_unchecked(*b)))
}

/// The slerp of one pair, exactly as every backend computes it.
#[inline]
#[must_use]
pub(crate) fn slerp(a: Gf8, b: Gf8, t: f32) -> Gf8 {
    Gf8::new_unchecked(lanes::slerp(&widen(a), &widen(b), f64::from(t)).map(|x| x as f32))
}

/// For the SIMD kernels: the lanes of a group of eight (rows `start..`)
/// whose bit in `fast` is clear get the scalar result (checked, then the
/// wide path). Out of line: zero vectors, angles within about 1e-3 rad of
/// 0 or π, and invalid rows only. `false` if a row fails `Gf8::check`.
#[cfg(feature = "simd")]
#[cold]
#[inline(never)]
pub(crate) fn redo_geodesic(
    a: PerRow<'_, [f32; 8]>,
    b: PerRow<'_, [f32; 8]>,
    start: usize,
    octet: &mut [f32; 8],
    fast: u32,
) -> bool {
    for (i, slot) in octet.iter_mut().enumerate() {
        if fast & (1 << i) == 0 {
            match geodesic_checked_slow(&a.get(start + i), &b.get(start + i)) {
                Some(angle) => *slot = angle,
                None => return false,
            }
        }
    }
    true
}

/// For the SIMD kernels: the lanes of a group of four (rows `start..`)
/// whose bit in `fast` is clear get the scalar result. Out of line: angles
/// within 0.0141 rad of 0 or π, equal or opposite inputs, and zero vectors,
/// only.
#[cfg(feature = "simd")]
#[cold]
#[inline(never)]
pub(crate) fn redo_slerp(
    a: PerRow<'_, [f32; 8]>,
    b: PerRow<'_, [f32; 8]>,
    t: PerRow<'_, f32>,
    start: usize,
    quad: &mut [Gf8; 4],
    fast: u32,
) {
    for (i, slot) in quad.iter_mut().enumerate() {
        if fast & (1 << i) == 0 {
            *slot = slerp(
                Gf8::new_unchecked(a.get(start + i)),
                Gf8::new_unchecked(b.get(start + i)),
                t.get(start + i),
            );
        }
    }
}

/// For the SIMD slerp kernels: whether the rows `start..start + 4` of
/// `a` whose bit in `unit_a` is clear (and those of `b`, by `unit_b`) pass
/// `Gf8::check` (zero vectors). Out of line. (Only the AVX2 kernel calls
/// it.)
#[cfg(all(feature = "simd", target_arch = "x86_64"))]
#[cold]
#[inline(never)]
pub(crate) fn recheck_quad(
    a: PerRow<'_, [f32; 8]>,
    b: PerRow<'_, [f32; 8]>,
    start: usize,
    unit_a: u32,
    unit_b: u32,
) -> bool {
    (0..4).all(|i| {
        (unit_a & (1 << i) != 0 || Gf8::check(&a.get(start + i)).is_ok())
            && (unit_b & (1 << i) != 0 || Gf8::check(&b.get(start + i)).is_ok())
    })
}

/// The scalar geodesic kernel: row `i` of `out` from row `i` of `a` and
/// `b` (lengths checked by the caller), each row checked as `Gf8::check`
/// checks it. `false` if one fails (`out` is then unspecified).
pub(crate) fn geodesic_distances_from(
    a: PerRow<'_, [f32; 8]>,
    b: PerRow<'_, [f32; 8]>,
    out: &mut [f32],
) -> bool {
    for (i, slot) in out.iter_mut().enumerate() {
        match geodesic_checked(&a.get(i), &b.get(i)) {
            Some(angle) => *slot = angle,
            None => return false,
        }
    }
    true
}

/// The scalar slerp kernel: row `i` of `out` from row `i` of `a`, `b` and
/// `t` (lengths checked by the caller), each row of `a` and `b` checked as
/// `Gf8::check` checks it. `false` if one fails (`out` is then
/// unspecified).
pub(crate) fn slerp_from(
    a: PerRow<'_, [f32; 8]>,
    b: PerRow<'_, [f32; 8]>,
    t: PerRow<'_, f32>,
    out: &mut [Gf8],
) -> bool {
    for (i, slot) in out.iter_mut().enumerate() {
        let (x, y) = (a.get(i), b.get(i));
        if Gf8::check(&x).is_err() || Gf8::check(&y).is_err() {
            return false;
        }
        *slot = slerp(Gf8::new_unchecked(x), Gf8::new_unchecked(y), t.get(i));
    }
    true
}

#[cfg(test)]
mod tests {
    use super::{lanes, narrow};

    /// Ulps of `f64` between two numbers of the same sign.
    fn ulps(a: f64, b: f64) -> u64 {
        a.to_bits().abs_diff(b.to_bits())
    }

    #[test]
    fn sphere_math_matches_libm() {
        let mut worst = (0, 0, 0);
        for i in 0..=200_000u32 {
            // atan2 over every ratio, both ways round.
            let y = f64::from(i) / 200_000.0;
            for (y, x) in [(y, 1.0), (1.0, y), (y * 1e-9, 1.0)] {
                worst.0 = worst.0.max(ulps(lanes::atan2(y, x), y.atan2(x)));
            }
            // sin and cos on [0, π].
            let phi = core::f64::consts::PI * f64::from(i) / 200_000.0;
            let (sin, cos) = lanes::sin_cos(phi);
            // Near a zero, the error of the argument's own rounding (half
            // an ulp of π) dominates: compare absolutely there.
            let (ref_sin, ref_cos) = phi.sin_cos();
            let close = |a: f64, b: f64| (a - b).abs() <= 2.5e-16 || ulps(a.abs(), b.abs()) <= 2;
            assert!(close(sin, ref_sin), "sin({phi}): {sin} vs {ref_sin}");
            assert!(close(cos, ref_cos), "cos({phi}): {cos} vs {ref_cos}");
            worst.1 = worst.1.max(if ref_sin.abs() > 1e-3 {
                ulps(sin, ref_sin)
            } else {
                0
            });
            worst.2 = worst.2.max(if ref_cos.abs() > 1e-3 {
                ulps(cos.abs(), ref_cos.abs())
            } else {
                0
            });
        }
        assert_eq!(lanes::atan2(0.0, 1.0), 0.0);
        assert_eq!(lanes::atan2(1.0, 0.0), core::f64::consts::FRAC_PI_2);
        assert!(
            worst.0 <= 2 && worst.1 <= 2 && worst.2 <= 2,
            "worst ulps {worst:?}"
        );
    }

    /// Random `f64` inputs (not only widened `f32`), so that any operation
    /// a backend does differently shows in the last bits of the `f64`
    /// results, before rounding to `f32` hides most of it.
    #[test]
    fn backends_compute_the_same_f64_bits() {
        let mut state = 0x1234_5678_9ABC_DEF0u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 11) as f64 / (1u64 << 52) as f64 - 1.0
        };
        for round in 0..20_000 {
            let mut a = [[0.0f64; 8]; 4];
            let mut b = [[0.0f64; 8]; 4];
            for i in 0..4 {
                a[i] = core::array::from_fn(|_| next());
                if round % 3 != 0 {
                    // Unit within 1e-5 (the fast geodesic path), or not.
                    let n = a[i].iter().map(|x| x * x).sum::<f64>().sqrt();
                    a[i] = a[i].map(|x| x / n * (1.0 + 4e-6 * next()));
                }
                b[i] = match (round + i) % 5 {
                    0 => a[i].map(|x| -x + 1e-9 * next()),
                    1 => a[i].map(|x| x + 1e-7 * next()),
                    2 => {
                        // Exactly opposite, with zero coordinates: the
                        // great circle through J·a, signs of zero included.
                        a[i][(round % 4) * 2] = 0.0;
                        a[i][(round % 4) * 2 + 1] = 0.0;
                        a[i].map(|x| -x)
                    }
                    _ => {
                        let v: [f64; 8] = core::array::from_fn(|_| next());
                        let n = v.iter().map(|x| x * x).sum::<f64>().sqrt();
                        v.map(|x| x / n * (1.0 + 4e-6 * next()))
                    }
                };
            }
            let t: [f64; 4] = core::array::from_fn(|_| 0.5 + 0.6 * next());
            let angles: [f64; 4] = core::array::from_fn(|i| lanes::geodesic(&a[i], &b[i]));
            let slerped: [[f64; 8]; 4] = core::array::from_fn(|i| lanes::slerp(&a[i], &b[i], t[i]));
            let expected = (
                angles.map(f64::to_bits),
                slerped.map(|v| v.map(f64::to_bits)),
            );
            let as_bits = |(g, s): ([f64; 4], [[f64; 8]; 4])| {
                (g.map(f64::to_bits), s.map(|v| v.map(f64::to_bits)))
            };
            #[cfg(feature = "simd")]
            assert_eq!(
                as_bits(crate::simd::portable::sphere_lanes_for_test(&a, &b, t)),
                expected,
                "portable, round {round}"
            );
            #[cfg(all(feature = "simd", target_arch = "x86_64"))]
            if let Some(token) = crate::simd::Avx2Fma::detect() {
                assert_eq!(
                    as_bits(token.sphere_lanes_for_test(&a, &b, t)),
                    expected,
                    "AVX2, round {round}"
                );
            }
            let _ = (as_bits, expected);
        }
        #[cfg(all(feature = "simd", target_arch = "x86_64"))]
        crate::precondition::precondition(
            crate::simd::Avx2Fma::detect().is_some(),
            "an x86-64 CPU with AVX2 and FMA (the AVX2 sphere lanes are not tested here)",
        );
    }

    /// A xorshift generator of numbers in `[−1, 1)`.
    fn uniform(seed: u64) -> impl FnMut() -> f64 {
        let mut state = seed;
        move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 11) as f64 / (1u64 << 52) as f64 - 1.0
        }
    }

    /// `v / ‖v‖` times `scale`, in `f32`.
    fn unit_f32(v: [f64; 8], scale: f64) -> [f32; 8] {
        let n = v.iter().map(|x| x * x).sum::<f64>().sqrt();
        v.map(|x| (x / n * scale) as f32)
    }

    /// The narrow geodesic lanes give the same bits, and the same mask, on
    /// every backend: unit pairs at every angle, nearly equal and nearly
    /// opposite ones, norms at the edge of `Gf8::check`'s band and beyond
    /// it, zero, NaN and infinite rows.
    #[test]
    fn narrow_backends_compute_the_same_bits() {
        let mut next = uniform(0x0BAD_5EED_1234_5678);
        for round in 0..40_000 {
            let mut a = [[0.0f32; 8]; 8];
            let mut b = [[0.0f32; 8]; 8];
            for i in 0..8 {
                let x: [f64; 8] = core::array::from_fn(|_| next());
                let scale = 1.0 + 1.1e-5 * next();
                a[i] = unit_f32(x, scale);
                let y: [f64; 8] = core::array::from_fn(|_| next());
                let scale = 1.0 + 1.1e-5 * next();
                b[i] = match (round + i) % 7 {
                    0 => unit_f32(core::array::from_fn(|k| x[k] + 1e-3 * y[k]), scale),
                    1 => unit_f32(core::array::from_fn(|k| -x[k] + 1e-2 * y[k]), scale),
                    2 => a[i],
                    3 => [0.0; 8],
                    4 => {
                        let mut v = unit_f32(y, scale);
                        v[round % 8] = [f32::NAN, f32::INFINITY, 2.0][round % 3];
                        v
                    }
                    _ => unit_f32(y, scale),
                };
            }
            let scalar: [(f32, bool); 8] = core::array::from_fn(|i| narrow::geodesic(&a[i], &b[i]));
            let angles = scalar.map(|(angle, _)| angle.to_bits());
            let mask = scalar
                .iter()
                .enumerate()
                .fold(0u32, |m, (i, &(_, ok))| m | (u32::from(ok) << i));
            let as_bits = |(angles, mask): ([f32; 8], u32)| {
                // Lanes outside the mask are the scalar kernel's: only
                // the mask and the lanes in it must agree.
                (
                    core::array::from_fn::<u32, 8, _>(|i| {
                        if mask & (1 << i) != 0 {
                            angles[i].to_bits()
                        } else {
                            0
                        }
                    }),
                    mask,
                )
            };
            let expected = as_bits((angles.map(f32::from_bits), mask));
            #[cfg(feature = "simd")]
            assert_eq!(
                as_bits(crate::simd::portable::sphere_narrow_lanes_for_test(&a, &b)),
                expected,
                "portable, round {round}"
            );
            #[cfg(all(feature = "simd", target_arch = "x86_64"))]
            if let Some(token) = crate::simd::Avx2Fma::detect() {
                assert_eq!(
                    as_bits(token.narrow_lanes_for_test(&a, &b)),
                    expected,
                    "AVX2, round {round}"
                );
            }
            let _ = (as_bits, expected);
        }
    }

    /// The accuracy of the narrow geodesic path, against the exact angle
    /// (in `f64`) of the normalized inputs: a sweep over the angles it
    /// takes, from 1e-3 rad to π − 1e-3, with norms anywhere in
    /// `Gf8::check`'s band. The worst is some 4 ulps of `f32` (the
    /// rounding of `a ∓ b` and of its squared norm in `f32`).
    #[test]
    fn narrow_path_accuracy_sweep() {
        let mut next = uniform(0x5EED_0000_0000_0022);
        let (mut worst, mut sum, mut count) = (0.0f64, 0.0f64, 0u32);
        let steps = 400_000;
        for step in 0..steps {
            let theta = 1e-3 + (core::f64::consts::PI - 2e-3) * f64::from(step) / f64::from(steps);
            // x and a unit y perpendicular to it, then b at `theta` from x.
            let x: [f64; 8] = core::array::from_fn(|_| next());
            let nx = x.iter().map(|v| v * v).sum::<f64>().sqrt();
            let x = x.map(|v| v / nx);
            let y: [f64; 8] = core::array::from_fn(|_| next());
            let along = (0..8).map(|k| x[k] * y[k]).sum::<f64>();
            let y: [f64; 8] = core::array::from_fn(|k| y[k] - along * x[k]);
            let ny = y.iter().map(|v| v * v).sum::<f64>().sqrt();
            let b: [f64; 8] =
                core::array::from_fn(|k| x[k] * theta.cos() + y[k] / ny * theta.sin());
            let a = unit_f32(x, 1.0 + 9.9e-6 * next());
            let b = unit_f32(b, 1.0 + 9.9e-6 * next());
            let (angle, ok) = narrow::geodesic(&a, &b);
            if !ok {
                continue;
            }
            // The exact angle of the f32 inputs, normalized in f64.
            let wa = a.map(f64::from);
            let wb = b.map(f64::from);
            let na = wa.iter().map(|v| v * v).sum::<f64>().sqrt();
            let nb = wb.iter().map(|v| v * v).sum::<f64>().sqrt();
            let d = (0..8)
                .map(|k| (wa[k] / na - wb[k] / nb).powi(2))
                .sum::<f64>()
                .sqrt();
            let s = (0..8)
                .map(|k| (wa[k] / na + wb[k] / nb).powi(2))
                .sum::<f64>()
                .sqrt();
            let exact = 2.0 * d.atan2(s);
            let rounded = exact as f32;
            let ulp = f64::from(f32::from_bits(rounded.to_bits() + 1) - rounded);
            let error = (f64::from(angle) - exact).abs() / ulp;
            worst = worst.max(error);
            sum += error;
            count += 1;
        }
        eprintln!(
            "narrow geodesic: {count} angles, worst {worst} ulp, mean {} ulp",
            sum / f64::from(count)
        );
        assert!(
            count > steps * 99 / 100,
            "{count} of {steps} on the narrow path"
        );
        assert!(worst <= 5.0, "worst {worst} ulp");
    }

    /// Every backend's slerp kernel checks every row of a per-row operand:
    /// a norm just outside `Gf8::check`'s band, or a NaN, at each position
    /// of a group of four and of the tail, in `a` or in `b`, makes it
    /// return `false`; zero rows and valid ones do not.
    #[test]
    fn slerp_kernels_check_every_row() {
        use crate::batch::PerRow;
        use crate::Gf8;
        let mut next = uniform(0x0C0F_FEE0);
        let rows = 11;
        let good: Vec<[f32; 8]> = (0..rows)
            .map(|_| unit_f32(core::array::from_fn(|_| next()), 1.0))
            .collect();
        let other: Vec<[f32; 8]> = (0..rows)
            .map(|i| {
                if i == 5 {
                    [0.0; 8]
                } else {
                    unit_f32(core::array::from_fn(|_| next()), 1.0)
                }
            })
            .collect();
        let t = PerRow::All(0.4);
        type Kernel =
            fn(PerRow<'_, [f32; 8]>, PerRow<'_, [f32; 8]>, PerRow<'_, f32>, &mut [Gf8]) -> bool;
        #[allow(unused_mut)] // without `simd`, the scalar kernel only
        let mut kernels: Vec<(&str, Kernel)> = vec![("scalar", super::slerp_from)];
        #[cfg(feature = "simd")]
        kernels.push(("portable", crate::simd::portable::slerp_into));
        #[cfg(all(feature = "simd", target_arch = "x86_64"))]
        if crate::simd::Avx2Fma::detect().is_some() {
            kernels.push(("AVX2", |a, b, t, out| {
                crate::simd::Avx2Fma::detect()
                    .expect("AVX2")
                    .slerp_into(a, b, t, out)
            }));
        }
        for (name, kernel) in kernels {
            let mut out = vec![Gf8::ZERO; rows];
            assert!(
                kernel(PerRow::Each(&good), PerRow::Each(&other), t, &mut out),
                "{name}"
            );
            assert!(
                kernel(PerRow::All(good[0]), PerRow::Each(&other), t, &mut out),
                "{name}"
            );
            for index in 0..rows {
                // Squared norms 1 + 3e-5 (the band is 2e-5 wide) and NaN.
                for bad in [1.000_03_f32.sqrt(), f32::NAN] {
                    let mut rows_bad = good.clone();
                    if bad.is_nan() {
                        rows_bad[index][index % 8] = bad;
                    } else {
                        rows_bad[index] = rows_bad[index].map(|x| x * bad);
                    }
                    for (a, b) in [(&rows_bad, &other), (&other, &rows_bad)] {
                        assert!(
                            !kernel(PerRow::Each(a), PerRow::Each(b), t, &mut out),
                            "{name}: row {index} ({bad}) passed"
                        );
                    }
                }
            }
        }
    }
}
