//! Geometry on the sphere S^7: geodesic distance, slerp, the log and exp
//! maps, and means of many points.
//!
//! Every method works in `f64` internally and rounds once at the end, and
//! first rescales its inputs to exactly unit length (a [`Gf8`] may be off
//! by up to [`NORM_TOLERANCE`](crate::NORM_TOLERANCE)).
//!
//! # The zero vector
//!
//! [`Gf8::ZERO`] has no direction. The methods treat it as a vector
//! orthogonal to everything, never return NaN, and say what they do with it:
//! its distance to any unit vector is π/2 (and 0 to itself); slerp and the
//! exp map keep the direction of the non-zero input; the log map gives the
//! zero tangent; the means skip zero points.
//!
//! # Antipodal points
//!
//! From `a` to `−a` every great half-circle is a shortest path. Slerp and
//! the log map then follow the one through `J·a`, where
//! `J(x0, x1, x2, x3, …) = (−x1, x0, −x3, x2, …)` (a rotation by 90° in each
//! coordinate plane `(x_{2k}, x_{2k+1})`, so `J·a ⟂ a` and `‖J·a‖ = ‖a‖`).

use crate::{Gf8, Gf8Error};

/// A vector of R^8 in `f64`.
type V64 = [f64; 8];

/// When the component of `b` perpendicular to `a` is shorter than this
/// (for unit `a`, `b`), the two are treated as parallel or antipodal: the
/// direction of so short a component is rounding noise.
const PARALLEL_EPS: f64 = 1e-12;

/// The mean solver stops when the gradient of the Fréchet function (the
/// weighted mean of the log maps, in radians) is shorter than this.
const MEAN_GRADIENT_TOLERANCE: f64 = 1e-12;

/// A Newton step shorter than this (radians) is taken without a line
/// search: the Fréchet function changes by less than `f64` can resolve.
const MEAN_LOCAL_STEP: f64 = 1e-7;

/// When no step length decreases the Fréchet function measurably and the
/// gradient is shorter than this, the solver has reached the limit of
/// `f64` and stops (the answer is then within about this, divided by the
/// smallest curvature, of the exact mean: far below an `f32` ulp).
const MEAN_FLAT_GRADIENT: f64 = 1e-9;

/// The safety cap on solver steps ([`Gf8Error::MeanDidNotConverge`]). Sets
/// inside an open hemisphere take a handful of Newton steps.
const MEAN_MAX_ITERATIONS: usize = 100;

/// Halvings of the step length before the line search gives up.
const MEAN_MAX_HALVINGS: u32 = 50;

/// The sufficient-decrease constant of the Armijo line search.
const ARMIJO: f64 = 1e-4;

/// The normalized Euclidean mean is refused when the sum of the (weighted)
/// points is shorter than this fraction of the total weight.
const CANCELLATION_EPS: f64 = 1e-6;

impl Gf8 {
    /// The angle between `self` and `other` along the sphere, in `[0, π]`.
    ///
    /// Computed as `2·atan2(‖a − b‖, ‖a + b‖)` in `f64` on the rescaled unit
    /// vectors, which is accurate for nearly equal and for nearly opposite
    /// vectors (where `acos` of the dot product loses all precision). The
    /// distance between [`Gf8::ZERO`] and a unit vector is π/2; from zero to
    /// zero it is 0.
    ///
    /// ```
    /// use core::f32::consts::PI;
    /// use hydron_core::Gf8;
    ///
    /// let a = Gf8::try_new([1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0])?;
    /// let b = Gf8::try_new([0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0])?;
    /// assert!((a.geodesic_distance(b) - PI / 2.0).abs() < 1e-6);
    /// assert!((a.geodesic_distance(-a) - PI).abs() < 1e-6);
    /// assert_eq!(a.geodesic_distance(a), 0.0);
    /// assert!((a.geodesic_distance(Gf8::ZERO) - PI / 2.0).abs() < 1e-6);
    /// # Ok::<(), hydron_core::Gf8Error>(())
    /// ```
    #[must_use]
    pub fn geodesic_distance(self, other: Gf8) -> f32 {
        let a = unit_or_zero(self);
        let b = unit_or_zero(other);
        angle(&a, &b) as f32
    }

    /// The point a fraction `t` of the way from `self` to `other` along the
    /// shorter great circle, at constant speed (spherical linear
    /// interpolation).
    ///
    /// `t` is clamped to `[0, 1]` (NaN counts as 0); `t = 0` gives exactly
    /// `self` and `t = 1` exactly `other`, bit for bit. Otherwise the result
    /// is computed in `f64` and has unit norm.
    ///
    /// * Nearly parallel inputs (the part of `other` perpendicular to `self`
    ///   shorter than 1e-12) fall back to normalized linear interpolation.
    /// * Opposite inputs (every half great circle is then a shortest path)
    ///   follow the one through `J·self`, where
    ///   `J(x0, x1, x2, x3, …) = (−x1, x0, −x3, x2, …)`: a 90° rotation in
    ///   each coordinate plane `(x_{2k}, x_{2k+1})`, so `J·a ⟂ a`.
    /// * If either input is [`Gf8::ZERO`], the result is the normalized
    ///   linear interpolation: the direction of the non-zero input for every
    ///   `t` strictly between 0 and 1 (and zero if both are zero).
    ///
    /// ```
    /// use hydron_core::Gf8;
    ///
    /// let a = Gf8::try_new([1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0])?;
    /// let b = Gf8::try_new([0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0])?;
    /// let mid = a.slerp(b, 0.5);
    /// assert!((mid[0] - 0.70710677).abs() < 1e-7 && (mid[1] - 0.70710677).abs() < 1e-7);
    /// assert_eq!(a.slerp(b, 0.0), a);
    /// assert_eq!(a.slerp(b, 1.0), b);
    /// // Halfway to the antipode is J·a = (0, 1, 0, …).
    /// assert!((a.slerp(-a, 0.5).dot(b) - 1.0).abs() < 1e-6);
    /// # Ok::<(), hydron_core::Gf8Error>(())
    /// ```
    #[must_use]
    pub fn slerp(self, other: Gf8, t: f32) -> Gf8 {
        // NaN counts as 0.
        if t.is_nan() || t <= 0.0 {
            return self;
        }
        if t >= 1.0 {
            return other;
        }
        if self == other {
            return self;
        }
        let t = f64::from(t);
        let (Some(a), Some(b)) = (unit(self), unit(other)) else {
            let a = widen(self);
            let b = widen(other);
            return narrow(&core::array::from_fn(|k| (1.0 - t) * a[k] + t * b[k]));
        };
        let Some((direction, theta)) = direction_and_angle(&a, &b) else {
            // Parallel: normalized linear interpolation.
            return narrow(&core::array::from_fn(|k| (1.0 - t) * a[k] + t * b[k]));
        };
        narrow(&exp_unit(&a, &direction, t * theta))
    }

    /// The opposite point, `−self` (zero stays zero).
    ///
    /// ```
    /// use hydron_core::Gf8;
    /// let v = Gf8::from_scalar(1.0)?;
    /// assert_eq!(v.antipode(), -v);
    /// assert!((v.geodesic_distance(v.antipode()) - core::f32::consts::PI).abs() < 1e-6);
    /// # Ok::<(), hydron_core::Gf8Error>(())
    /// ```
    #[inline]
    #[must_use]
    pub fn antipode(self) -> Gf8 {
        -self
    }

    /// The log map at `self`: the tangent vector at `self` that points
    /// along the shortest great circle towards `target`, with length equal
    /// to their [geodesic distance](Gf8::geodesic_distance).
    ///
    /// For `target = −self` the direction is
    /// `J·self = (−x1, x0, −x3, x2, …)`, as in [`slerp`](Gf8::slerp). If
    /// either is [`Gf8::ZERO`], the result is the zero
    /// vector. [`exp_map`](Gf8::exp_map) is its inverse.
    ///
    /// ```
    /// use hydron_core::Gf8;
    ///
    /// let a = Gf8::try_new([1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0])?;
    /// let b = Gf8::try_new([0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0])?;
    /// let v = a.log_map(b);
    /// assert!(v[0].abs() < 1e-7 && (v[2] - core::f32::consts::FRAC_PI_2).abs() < 1e-6);
    /// assert!(a.exp_map(v)?.dot(b) > 0.999_999);
    /// # Ok::<(), hydron_core::Gf8Error>(())
    /// ```
    #[must_use]
    pub fn log_map(self, target: Gf8) -> [f32; 8] {
        match (unit(self), unit(target)) {
            (Some(a), Some(b)) => log_unit(&a, &b).map(|x| x as f32),
            _ => [0.0; 8],
        }
    }

    /// The exp map at `self`: the point reached by walking from `self`
    /// along the great circle in the direction of `tangent`, a distance of
    /// `‖tangent‖` (radians; any length, wrapping around the sphere).
    ///
    /// The part of `tangent` along `self` is removed first, so any vector
    /// may be given. At [`Gf8::ZERO`] the result is `ZERO`. Errors: a NaN or
    /// infinite coordinate of `tangent`, named.
    ///
    /// ```
    /// use core::f32::consts::PI;
    /// use hydron_core::Gf8;
    ///
    /// let a = Gf8::try_new([1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0])?;
    /// let b = a.exp_map([0.0, PI / 2.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0])?;
    /// assert!((b[1] - 1.0).abs() < 1e-6);
    /// assert_eq!(a.exp_map([0.0; 8])?, a);
    /// assert!(a.exp_map([f32::NAN; 8]).is_err());
    /// # Ok::<(), hydron_core::Gf8Error>(())
    /// ```
    pub fn exp_map(self, tangent: [f32; 8]) -> Result<Gf8, Gf8Error> {
        crate::gf8::check_finite(&tangent)?;
        let Some(a) = unit(self) else {
            return Ok(Gf8::ZERO);
        };
        let mut v = tangent.map(f64::from);
        project_out(&mut v, &a);
        let length = norm(&v);
        // A step this short (radians) would not change any f32 coordinate;
        // it is also what is left of a tangent parallel to `self`.
        if length <= PARALLEL_EPS {
            return Ok(self);
        }
        let direction = v.map(|x| x / length);
        Ok(narrow(&exp_unit(&a, &direction, length)))
    }

    /// The Karcher (Fréchet) mean: the point that minimizes the sum of
    /// squared geodesic distances to `points`.
    ///
    /// # Algorithm
    ///
    /// In `f64`, a safeguarded Riemannian Newton method on the Fréchet
    /// function `F(m) = Σ w_i · d(m, p_i)² / (2 Σ w_i)`. It starts at the
    /// [normalized Euclidean mean](Gf8::normalized_euclidean_mean). Each
    /// step solves `H·δ = −∇F` with the exact Hessian on the sphere,
    /// `H = Σ w_i [u_i u_iᵀ + θ_i cot θ_i (I − m mᵀ − u_i u_iᵀ)] / Σ w_i`
    /// (`θ_i = d(m, p_i)`, `u_i` the unit direction of `log_m(p_i)`), when
    /// that is positive definite, and takes the gradient step
    /// `δ = −∇F = mean of log_m(p_i)` (the classic fixed-point step)
    /// otherwise. The step is then halved until `F` decreases enough
    /// (Armijo), so `F` falls at every step; once Newton steps are shorter
    /// than 1e-7 radians they are taken as they are (quadratic
    /// convergence). It stops when `‖∇F‖` is below 1e-12, that is, on a
    /// convergence criterion, not a step count.
    ///
    /// # Guarantees
    ///
    /// * Inside an open hemisphere (all points within less than π/2 of
    ///   some point) the minimizer is unique (Buss & Fillmore, 2001), the
    ///   Hessian is positive definite near it, and the iteration converges
    ///   to it, quadratically at the end: a few steps however close to the
    ///   rim the points are (the old fixed-step iteration needed hundreds
    ///   there, and gave up).
    /// * Elsewhere it converges to a critical point of `F` (descent with
    ///   Armijo steps), which is a local minimum in practice.
    /// * A safety cap of 100 steps remains; reaching it is
    ///   [`MeanDidNotConverge`](Gf8Error::MeanDidNotConverge), an error
    ///   distinct from an undefined mean.
    ///
    /// [`Gf8::ZERO`] points have no direction and are skipped.
    ///
    /// Errors: [`EmptyInput`](Gf8Error::EmptyInput) for no points;
    /// [`NoUniqueMean`](Gf8Error::NoUniqueMean) when the mean is undefined:
    /// only zero points are given, or the points nearly cancel out (their
    /// sum is shorter than 1e-6 times the number of non-zero points; for
    /// the weighted mean, 1e-6 times their total weight);
    /// [`MeanDidNotConverge`](Gf8Error::MeanDidNotConverge) if the safety
    /// cap is reached.
    ///
    /// ```
    /// use hydron_core::Gf8;
    ///
    /// let a = Gf8::try_new([1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0])?;
    /// let b = Gf8::try_new([0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0])?;
    /// let m = Gf8::spherical_mean(&[a, b])?;
    /// assert!((m.dot(a.slerp(b, 0.5)) - 1.0).abs() < 1e-6);
    /// assert!(Gf8::spherical_mean(&[]).is_err());
    /// assert!(Gf8::spherical_mean(&[a, -a]).is_err());
    /// # Ok::<(), hydron_core::Gf8Error>(())
    /// ```
    pub fn spherical_mean(points: &[Gf8]) -> Result<Gf8, Gf8Error> {
        karcher_mean(points.len(), |i| (points[i], 1.0))
    }

    /// The weighted Karcher mean: the point that minimizes
    /// `Σ w_i · d(m, p_i)²`, as [`spherical_mean`](Gf8::spherical_mean).
    ///
    /// Weights must be finite and non-negative (otherwise
    /// [`InvalidWeight`](Gf8Error::InvalidWeight) names the first bad one);
    /// points of weight zero are skipped, and a total weight of zero is
    /// [`NoUniqueMean`](Gf8Error::NoUniqueMean). Only the ratios of the
    /// weights matter. The algorithm, its guarantees and the other errors
    /// are those of [`spherical_mean`](Gf8::spherical_mean); heavy weights
    /// change nothing (the weights are scaled by their largest first).
    ///
    /// ```
    /// use hydron_core::{Gf8, Gf8Error};
    ///
    /// let a = Gf8::try_new([1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0])?;
    /// let b = Gf8::try_new([0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0])?;
    /// // Weight 3 : 1 gives the point a quarter of the way from a to b.
    /// let m = Gf8::weighted_spherical_mean(&[(a, 3.0), (b, 1.0)])?;
    /// assert!((m.dot(a.slerp(b, 0.25)) - 1.0).abs() < 1e-6);
    /// assert_eq!(
    ///     Gf8::weighted_spherical_mean(&[(a, 1.0), (b, -1.0)]),
    ///     Err(Gf8Error::InvalidWeight { index: 1, weight: -1.0 })
    /// );
    /// # Ok::<(), hydron_core::Gf8Error>(())
    /// ```
    pub fn weighted_spherical_mean(points: &[(Gf8, f32)]) -> Result<Gf8, Gf8Error> {
        check_weights(points)?;
        karcher_mean(points.len(), |i| points[i])
    }

    /// The normalized Euclidean mean: `Σ p_i` rescaled to unit length.
    ///
    /// Cheaper than, and different from, the
    /// [spherical mean](Gf8::spherical_mean): it is pulled towards the
    /// denser side of a spread-out set (for points at 0°, 0° and 90° on a
    /// great circle, it is at 26.57° where the spherical mean is at 30°).
    /// The two agree for two points and for symmetric sets. Computed in
    /// `f64`; zero points add nothing.
    ///
    /// Errors: [`EmptyInput`](Gf8Error::EmptyInput) for no points;
    /// [`NoUniqueMean`](Gf8Error::NoUniqueMean) when the sum is shorter than
    /// 1e-6 times the number of points (they cancel out, and the direction
    /// of what is left would be noise).
    ///
    /// ```
    /// use hydron_core::Gf8;
    ///
    /// let a = Gf8::try_new([1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0])?;
    /// let b = Gf8::try_new([0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0])?;
    /// let m = Gf8::normalized_euclidean_mean(&[a, a, b])?;
    /// assert!((m[1] / m[0] - 0.5).abs() < 1e-6);
    /// # Ok::<(), hydron_core::Gf8Error>(())
    /// ```
    pub fn normalized_euclidean_mean(points: &[Gf8]) -> Result<Gf8, Gf8Error> {
        if points.is_empty() {
            return Err(Gf8Error::EmptyInput);
        }
        let mut sum = [0.0f64; 8];
        for &p in points {
            let p = widen(p);
            for k in 0..8 {
                sum[k] += p[k];
            }
        }
        if norm(&sum) <= CANCELLATION_EPS * points.len() as f64 {
            return Err(Gf8Error::NoUniqueMean);
        }
        Ok(narrow(&sum))
    }
}

/// Checks that every weight is finite and non-negative.
fn check_weights(points: &[(Gf8, f32)]) -> Result<(), Gf8Error> {
    for (index, &(_, weight)) in points.iter().enumerate() {
        if !(weight.is_finite() && weight >= 0.0) {
            return Err(Gf8Error::InvalidWeight { index, weight });
        }
    }
    Ok(())
}

/// The Karcher mean of `count` weighted points given by `point(i)`, with
/// finite, non-negative weights.
fn karcher_mean(count: usize, point: impl Fn(usize) -> (Gf8, f32)) -> Result<Gf8, Gf8Error> {
    if count == 0 {
        return Err(Gf8Error::EmptyInput);
    }
    // Unit points and weights in f64, without the zero ones. The weights are
    // divided by their largest, so that their sum cannot overflow.
    let max_weight = (0..count)
        .map(|i| f64::from(point(i).1))
        .fold(0.0f64, f64::max);
    if max_weight == 0.0 {
        return Err(Gf8Error::NoUniqueMean);
    }
    let mut points: Vec<(V64, f64)> = (0..count)
        .filter_map(|i| {
            let (p, w) = point(i);
            let w = f64::from(w) / max_weight;
            Some((unit(p)?, w)).filter(|_| w > 0.0)
        })
        .collect();

    // Start at the normalized Euclidean mean.
    let mut total = 0.0;
    let mut sum = [0.0f64; 8];
    for (p, w) in &points {
        total += w;
        for k in 0..8 {
            sum[k] += w * p[k];
        }
    }
    if total == 0.0 || norm(&sum) <= CANCELLATION_EPS * total {
        return Err(Gf8Error::NoUniqueMean);
    }
    for (_, w) in &mut points {
        *w /= total;
    }
    let mut mean = normalized(&sum);

    for _ in 0..MEAN_MAX_ITERATIONS {
        let local = frechet(&mean, &points);
        let gradient_norm = norm(&local.gradient);
        if gradient_norm <= MEAN_GRADIENT_TOLERANCE {
            return Ok(narrow(&mean));
        }
        let newton = newton_step(&mean, &local);
        let step = newton.unwrap_or(local.gradient.map(|g| -g));
        let length = norm(&step);
        if newton.is_some() && length <= MEAN_LOCAL_STEP {
            mean = walk(&mean, &step, 1.0);
            continue;
        }
        // Armijo backtracking: the slope along `step` is negative (a
        // Newton step on a positive definite Hessian, or the negative
        // gradient).
        let slope = dot(&local.gradient, &step);
        let mut t = 1.0;
        let mut accepted = None;
        for _ in 0..MEAN_MAX_HALVINGS {
            let candidate = walk(&mean, &step, t);
            if frechet_value(&candidate, &points) <= local.value + ARMIJO * t * slope {
                accepted = Some(candidate);
                break;
            }
            t *= 0.5;
        }
        match accepted {
            Some(next) => mean = next,
            // No step decreases F measurably: at the limit of f64.
            None if gradient_norm <= MEAN_FLAT_GRADIENT => return Ok(narrow(&mean)),
            None => break,
        }
    }
    Err(Gf8Error::MeanDidNotConverge {
        iterations: MEAN_MAX_ITERATIONS,
    })
}

/// The Fréchet function `F(m) = Σ w_i θ_i² / 2` (weights summing to 1),
/// its Riemannian gradient `−Σ w_i θ_i u_i`, and its Hessian (as an 8×8
/// matrix acting on the tangent space at `m`).
struct Frechet {
    value: f64,
    gradient: V64,
    hessian: [[f64; 8]; 8],
}

/// [`Frechet`] at the unit vector `m`.
fn frechet(m: &V64, points: &[(V64, f64)]) -> Frechet {
    let mut value = 0.0;
    let mut gradient = [0.0f64; 8];
    let mut outer = [[0.0f64; 8]; 8];
    // Σ w_i θ_i cot θ_i: the curvature across the geodesics.
    let mut across = 0.0;
    for (p, w) in points {
        let (direction, theta) = direction_and_angle(m, p).unwrap_or(([0.0; 8], 0.0));
        value += 0.5 * w * theta * theta;
        for k in 0..8 {
            gradient[k] -= w * theta * direction[k];
        }
        let c = theta_cot_theta(theta);
        across += w * c;
        // Along the geodesic the curvature is 1: u uᵀ (1 − θ cot θ) on top
        // of θ cot θ on the whole tangent space.
        let along = w * (1.0 - c);
        for i in 0..8 {
            for j in 0..8 {
                outer[i][j] += along * direction[i] * direction[j];
            }
        }
    }
    let mut hessian = outer;
    for i in 0..8 {
        for j in 0..8 {
            let projection = f64::from(u8::from(i == j)) - m[i] * m[j];
            hessian[i][j] += across * projection;
        }
    }
    Frechet {
        value,
        gradient,
        hessian,
    }
}

/// `F(m)` alone, for the line search.
fn frechet_value(m: &V64, points: &[(V64, f64)]) -> f64 {
    points
        .iter()
        .map(|(p, w)| {
            let theta = angle(m, p);
            0.5 * w * theta * theta
        })
        .sum()
}

/// `θ cot θ`, the curvature of `½ d²` across a geodesic of length `θ`:
/// 1 at 0, 0 at π/2, negative beyond (and very negative towards π).
fn theta_cot_theta(theta: f64) -> f64 {
    if theta < 1e-4 {
        1.0 - theta * theta / 3.0
    } else {
        theta * theta.cos() / theta.sin()
    }
}

/// The Newton step `δ` with `H δ = −∇F` in the tangent space at `m`, or
/// `None` if the Hessian is not positive definite there (or the step is
/// not finite).
fn newton_step(m: &V64, local: &Frechet) -> Option<V64> {
    // H maps m to 0; adding m mᵀ makes it invertible on all of R^8 without
    // changing it on the tangent space, and keeps the solution tangent.
    let mut a = local.hessian;
    for i in 0..8 {
        for j in 0..8 {
            a[i][j] += m[i] * m[j];
        }
    }
    let mut step = cholesky_solve(a, local.gradient.map(|g| -g))?;
    project_out(&mut step, m);
    step.iter().all(|x| x.is_finite()).then_some(step)
}

/// Solves `a x = b` for a symmetric `a` by Cholesky; `None` unless `a` is
/// positive definite with every pivot above 1e-10 (relative to its
/// diagonal): a nearly singular Hessian gives no useful Newton step.
fn cholesky_solve(mut a: [[f64; 8]; 8], b: V64) -> Option<V64> {
    let scale = (0..8).map(|i| a[i][i].abs()).fold(0.0f64, f64::max);
    for j in 0..8 {
        let row_j = &mut a[j];
        let d = row_j[j] - row_j[..j].iter().map(|x| x * x).sum::<f64>();
        if d.is_nan() || d <= 1e-10 * scale {
            return None;
        }
        let d = d.sqrt();
        row_j[j] = d;
        for i in j + 1..8 {
            let (upper, lower) = a.split_at_mut(i);
            let (row_j, row_i) = (&upper[j], &mut lower[0]);
            let s: f64 = row_i[..j].iter().zip(&row_j[..j]).map(|(x, y)| x * y).sum();
            row_i[j] = (row_i[j] - s) / d;
        }
    }
    // L y = b, then Lᵀ x = y.
    let mut y = b;
    for i in 0..8 {
        for k in 0..i {
            y[i] -= a[i][k] * y[k];
        }
        y[i] /= a[i][i];
    }
    let mut x = y;
    for i in (0..8).rev() {
        for k in i + 1..8 {
            x[i] -= a[k][i] * x[k];
        }
        x[i] /= a[i][i];
    }
    Some(x)
}

/// The point reached from unit `m` along the tangent `step`, scaled by
/// `t`, renormalized.
fn walk(m: &V64, step: &V64, t: f64) -> V64 {
    let length = norm(step) * t;
    if length == 0.0 {
        return *m;
    }
    let direction = step.map(|x| x * t / length);
    normalized(&exp_unit(m, &direction, length))
}

#[inline]
fn widen(v: Gf8) -> V64 {
    v.to_array().map(f64::from)
}

#[inline]
fn dot(a: &V64, b: &V64) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[inline]
fn norm(a: &V64) -> f64 {
    dot(a, a).sqrt()
}

/// `a` rescaled to unit length (`a` is non-zero and finite, of moderate
/// size).
#[inline]
fn normalized(a: &V64) -> V64 {
    let n = norm(a);
    a.map(|x| x / n)
}

/// The direction of `v` as an exactly unit `f64` vector, or `None` for
/// zero.
#[inline]
fn unit(v: Gf8) -> Option<V64> {
    let w = widen(v);
    let n = norm(&w);
    (n > 0.0).then(|| w.map(|x| x / n))
}

/// [`unit`], with zero for zero.
#[inline]
fn unit_or_zero(v: Gf8) -> V64 {
    unit(v).unwrap_or([0.0; 8])
}

/// Rounds a non-zero `f64` vector to a unit `Gf8`; zero gives `ZERO`.
#[inline]
fn narrow(v: &V64) -> Gf8 {
    let n = norm(v);
    if n == 0.0 {
        return Gf8::ZERO;
    }
    // Each coordinate rounds to f32 with a relative error of at most 2^-24,
    // so the norm is 1 within about 6e-8: well inside the tolerance.
    Gf8::new_unchecked(v.map(|x| (x / n) as f32))
}

/// `J·a = (−a1, a0, −a3, a2, …)`: perpendicular to `a`, of the same length.
#[inline]
fn perpendicular(a: &V64) -> V64 {
    core::array::from_fn(|k| if k % 2 == 0 { -a[k + 1] } else { a[k - 1] })
}

/// Removes from `v` its component along the unit vector `a`.
#[inline]
fn project_out(v: &mut V64, a: &V64) {
    // Twice (classical Gram–Schmidt with reorthogonalization), so the
    // result is perpendicular to `a` to rounding even when `v` is almost
    // parallel to it.
    for _ in 0..2 {
        let c = dot(v, a);
        for k in 0..8 {
            v[k] -= c * a[k];
        }
    }
}

/// The angle between two unit (or zero) vectors, stable everywhere.
#[inline]
fn angle(a: &V64, b: &V64) -> f64 {
    let diff: V64 = core::array::from_fn(|k| a[k] - b[k]);
    let sum: V64 = core::array::from_fn(|k| a[k] + b[k]);
    2.0 * norm(&diff).atan2(norm(&sum))
}

/// For unit `a` and `b`: the unit tangent at `a` towards `b` and the angle
/// between them, or `None` if they are parallel (same direction).
fn direction_and_angle(a: &V64, b: &V64) -> Option<(V64, f64)> {
    let theta = angle(a, b);
    let mut perp = *b;
    project_out(&mut perp, a);
    let length = norm(&perp);
    if length > PARALLEL_EPS {
        Some((perp.map(|x| x / length), theta))
    } else if dot(a, b) < 0.0 {
        Some((perpendicular(a), theta))
    } else {
        None
    }
}

/// The log map between unit vectors.
fn log_unit(a: &V64, b: &V64) -> V64 {
    match direction_and_angle(a, b) {
        Some((direction, theta)) => direction.map(|x| x * theta),
        None => [0.0; 8],
    }
}

/// Walks from unit `a` a distance `theta` along the unit tangent
/// `direction`.
#[inline]
fn exp_unit(a: &V64, direction: &V64, theta: f64) -> V64 {
    let (sin, cos) = theta.sin_cos();
    core::array::from_fn(|k| cos * a[k] + sin * direction[k])
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::f64::consts::PI;

    fn e(k: usize) -> Gf8 {
        let mut x = [0.0; 8];
        x[k] = 1.0;
        Gf8::try_new(x).unwrap()
    }

    #[test]
    fn perpendicular_is_perpendicular() {
        let a = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0];
        let j = perpendicular(&a);
        assert_eq!(dot(&a, &j), 0.0);
        assert_eq!(norm(&a), norm(&j));
        assert_eq!(j, [-2.0, 1.0, -4.0, 3.0, -6.0, 5.0, -8.0, 7.0]);
    }

    #[test]
    fn zero_vector_rules() {
        let a = e(3);
        let z = Gf8::ZERO;
        assert_eq!(z.geodesic_distance(z), 0.0);
        assert!((f64::from(a.geodesic_distance(z)) - PI / 2.0).abs() < 1e-7);
        assert!((f64::from(z.geodesic_distance(a)) - PI / 2.0).abs() < 1e-7);
        assert_eq!(a.slerp(z, 0.5), a);
        assert_eq!(z.slerp(a, 0.25), a);
        assert_eq!(z.slerp(a, 0.0), z);
        assert_eq!(a.slerp(z, 1.0), z);
        assert_eq!(z.slerp(z, 0.5), z);
        assert_eq!(a.log_map(z), [0.0; 8]);
        assert_eq!(z.log_map(a), [0.0; 8]);
        assert_eq!(z.exp_map([1.0; 8]), Ok(z));
        assert_eq!(Gf8::spherical_mean(&[z, a, z]), Ok(a));
        assert_eq!(Gf8::spherical_mean(&[z, z]), Err(Gf8Error::NoUniqueMean));
        assert_eq!(
            Gf8::normalized_euclidean_mean(&[z]),
            Err(Gf8Error::NoUniqueMean)
        );
    }

    #[test]
    fn slerp_clamps_t() {
        let (a, b) = (e(0), e(1));
        assert_eq!(a.slerp(b, -3.0), a);
        assert_eq!(a.slerp(b, f32::NAN), a);
        assert_eq!(a.slerp(b, f32::NEG_INFINITY), a);
        assert_eq!(a.slerp(b, 7.0), b);
        assert_eq!(a.slerp(b, f32::INFINITY), b);
    }

    #[test]
    fn antipodal_slerp_goes_through_j() {
        let a = Gf8::normalize([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]).unwrap();
        let j = narrow(&perpendicular(&widen(a)));
        let mid = a.slerp(-a, 0.5);
        assert!((mid.dot(j) - 1.0).abs() < 1e-6, "{mid}");
        let quarter = a.slerp(-a, 0.25);
        assert!((f64::from(a.geodesic_distance(quarter)) - PI / 4.0).abs() < 1e-6);
        let log = a.log_map(-a);
        assert!((norm(&log.map(f64::from)) - PI).abs() < 1e-6);
        assert!((Gf8::normalize(log).unwrap().dot(j) - 1.0).abs() < 1e-6);
    }

    #[test]
    fn invalid_weights_are_named() {
        let a = e(0);
        for bad in [f32::NAN, f32::INFINITY, -0.5] {
            let err = Gf8::weighted_spherical_mean(&[(a, 1.0), (a, 2.0), (a, bad)]).unwrap_err();
            assert!(
                matches!(err, Gf8Error::InvalidWeight { index: 2, .. }),
                "{err}"
            );
        }
        assert_eq!(
            Gf8::weighted_spherical_mean(&[(a, 0.0)]),
            Err(Gf8Error::NoUniqueMean)
        );
        assert_eq!(Gf8::weighted_spherical_mean(&[]), Err(Gf8Error::EmptyInput));
        // Huge weights do not overflow.
        let m = Gf8::weighted_spherical_mean(&[(a, f32::MAX), (e(1), f32::MAX)]).unwrap();
        assert!((m.dot(a.slerp(e(1), 0.5)) - 1.0).abs() < 1e-6);
    }
}
