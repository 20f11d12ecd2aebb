//! The arithmetic of [`ScaleMode::Direction`](super::ScaleMode::Direction):
//! the decoded vector normalized, and the search's distance to the
//! normalized reconstruction. One scalar function each, which every
//! backend calls after its own accumulation, so they stay bit-identical.

/// Divides `v` by its Euclidean norm (summed in order in `f64`), leaving
/// a zero vector zero.
#[inline(always)]
pub(crate) fn normalize(v: &mut [f64]) {
    let norm = v.iter().map(|a| a * a).sum::<f64>().sqrt();
    if norm > 0.0 {
        for a in v {
            *a /= norm;
        }
    }
}

/// The search's distance to a normalized reconstruction `ĉ / ‖ĉ‖`, from
/// the two sums the kernels accumulate: `dot = q·ĉ` and `norm2 = ‖ĉ‖²`
/// (both `f32`), and the query's `‖q‖²`. With `l2`, the squared distance
/// `‖q‖² + 1 − 2 q·ĉ/‖ĉ‖`; else the inner product `q·ĉ/‖ĉ‖`. Computed in
/// `f64` and rounded once. A reconstruction of norm 0 (which no code
/// gives: every E8P codeword and every shell point is nonzero) counts as
/// the zero vector: inner product 0, squared distance `‖q‖²`.
#[inline(always)]
pub(crate) fn distance(l2: bool, dot: f32, norm2: f32, query_norm2: f64) -> f32 {
    let (cos, one) = if norm2 > 0.0 {
        (f64::from(dot) / f64::from(norm2).sqrt(), 1.0)
    } else {
        (0.0, 0.0)
    };
    if l2 {
        (query_norm2 + one - 2.0 * cos) as f32
    } else {
        cos as f32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_zero_reconstruction_is_the_zero_vector() {
        assert_eq!(distance(true, 0.0, 0.0, 2.5), 2.5);
        assert_eq!(distance(false, 0.0, 0.0, 2.5), 0.0);
        let mut v = [0.0; 5];
        normalize(&mut v);
        assert_eq!(v, [0.0; 5]);
    }

    #[test]
    fn distances_are_to_the_unit_vector() {
        // ĉ = (3, 4): ĉ/‖ĉ‖ = (0.6, 0.8); q = (1, 2): q·ĉ = 11, ‖q‖² = 5.
        assert_eq!(distance(false, 11.0, 25.0, 5.0), 2.2);
        assert_eq!(distance(true, 11.0, 25.0, 5.0), (5.0f64 + 1.0 - 4.4) as f32);
        let mut v = [3.0, 4.0];
        normalize(&mut v);
        assert_eq!(v, [0.6, 0.8]);
    }
}
