//! The sphere kernels on `wide`: slerp on `f64x4`, four pairs at a time,
//! each coordinate widened into a column of four lanes (structure of
//! arrays), the arithmetic of `simd/sphere.rs` lane by lane; the geodesic
//! distance on `f32x8`, eight pairs at a time (`narrow` below); the tails
//! on the scalar kernel. Results are bit-identical to the scalar kernels
//! (the same IEEE operations in the same order).

use wide::f64x4;

use crate::batch::PerRow;
use crate::simd::sphere;
use crate::Gf8;

/// The lane operations of `sphere::sphere_lanes!` and
/// `sphere::geodesic_narrow_lanes!` on the `wide` vector `$t` of `$e`
/// lanes (a mask is a `$t` of all-ones or all-zeros lanes). The narrow
/// lanes use a subset: the operations only `sphere_lanes!` uses are
/// allowed to go unused.
macro_rules! wide_lane_ops {
    ($t:ty, $e:ty) => {
        type F = $t;
        type M = $t;

        $crate::simd::sphere::operator_lane_ops!();
        #[inline]
        fn splat(x: $e) -> F {
            F::splat(x)
        }
        #[inline]
        fn le(a: F, b: F) -> M {
            a.simd_le(b)
        }
        #[inline]
        fn select(mask: M, if_true: F, if_false: F) -> F {
            mask.select(if_true, if_false)
        }
        /// The sign bit flipped, as `-x` on a float.
        #[inline]
        #[allow(dead_code)]
        fn neg(a: F) -> F {
            a ^ F::splat(-0.0)
        }
        #[inline]
        #[allow(dead_code)]
        fn eq(a: F, b: F) -> M {
            a.simd_eq(b)
        }
        #[inline]
        #[allow(dead_code)]
        fn lt(a: F, b: F) -> M {
            a.simd_lt(b)
        }
        #[inline]
        #[allow(dead_code)]
        fn gt(a: F, b: F) -> M {
            a.simd_gt(b)
        }
        #[inline]
        #[allow(dead_code)]
        fn ge(a: F, b: F) -> M {
            a.simd_ge(b)
        }
        #[inline]
        #[allow(dead_code)]
        fn all(mask: M) -> bool {
            mask.all()
        }
    };
}

wide_lane_ops!(f64x4, f64);

sphere::sphere_lanes!();

/// An operand in columns of four rows: the same columns for every group
/// of four (one vector), or read from the slice. (One per operand of a
/// call, on the stack: the size of `All` costs nothing.)
#[allow(clippy::large_enum_variant)]
enum Columns<'a> {
    All([F; 8]),
    Each(&'a [[f32; 8]]),
}

impl<'a> Columns<'a> {
    fn new(operand: PerRow<'a, [f32; 8]>) -> Self {
        match operand {
            PerRow::All(v) => Columns::All(v.map(|x| splat(f64::from(x)))),
            PerRow::Each(rows) => Columns::Each(rows),
        }
    }

    /// Whether rows `start..start + 4` pass `Gf8::check` (a single vector
    /// is checked by the caller).
    #[inline]
    fn valid(&self, start: usize) -> bool {
        match self {
            Columns::All(_) => true,
            Columns::Each(rows) => rows[start..start + 4]
                .iter()
                .all(|row| Gf8::check(row).is_ok()),
        }
    }

    /// Coordinate `k` of rows `start..start + 4` in column `k`.
    #[inline]
    fn at(&self, start: usize) -> [F; 8] {
        match self {
            Columns::All(columns) => *columns,
            Columns::Each(rows) => {
                let rows: &[[f32; 8]; 4] = rows[start..start + 4].try_into().expect("4 rows");
                core::array::from_fn(|k| F::new(rows.map(|row| f64::from(row[k]))))
            }
        }
    }
}

/// `t` of rows `start..start + 4`.
#[inline]
fn ts_at(t: PerRow<'_, f32>, start: usize) -> F {
    match t {
        PerRow::All(t) => splat(f64::from(t)),
        PerRow::Each(ts) => {
            let ts: &[f32; 4] = ts[start..start + 4].try_into().expect("4 rows");
            F::new(ts.map(f64::from))
        }
    }
}

/// [`batch::slerp_into`](crate::batch::slerp_into); the operands have
/// `out.len()` rows, and the rows of a per-row operand are checked as
/// `Gf8::check` checks them (a single vector must have been checked):
/// `false` if one fails.
pub(crate) fn slerp_into(
    a: PerRow<'_, [f32; 8]>,
    b: PerRow<'_, [f32; 8]>,
    t: PerRow<'_, f32>,
    out: &mut [Gf8],
) -> bool {
    let (columns_a, columns_b) = (Columns::new(a), Columns::new(b));
    let (quads, tail) = out.as_chunks_mut::<4>();
    let done = 4 * quads.len();
    for (n, quad) in quads.iter_mut().enumerate() {
        let start = 4 * n;
        if !(columns_a.valid(start) && columns_b.valid(start)) {
            return false;
        }
        let (columns, ok) =
            slerp_fast_lanes(&columns_a.at(start), &columns_b.at(start), ts_at(t, start));
        let columns = columns.map(|c| c.to_array());
        for (i, slot) in quad.iter_mut().enumerate() {
            *slot = Gf8::new_unchecked(core::array::from_fn(|k| columns[k][i] as f32));
        }
        if !all(ok) {
            sphere::redo_slerp(a, b, t, start, quad, ok.to_bitmask());
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

/// The lane functions on four pairs given in `f64` (rows), as `f64`: the
/// unit test of `simd/sphere.rs` compares them with the scalar lanes bit
/// for bit, before any rounding to `f32` could hide a difference.
#[cfg(test)]
pub(crate) fn lanes_for_test(
    a: &[[f64; 8]; 4],
    b: &[[f64; 8]; 4],
    t: [f64; 4],
) -> ([f64; 4], [[f64; 8]; 4]) {
    let columns = |rows: &[[f64; 8]; 4]| -> [F; 8] {
        core::array::from_fn(|k| F::new(rows.map(|row| row[k])))
    };
    let (ca, cb) = (columns(a), columns(b));
    let angles = geodesic_lanes(&ca, &cb).to_array();
    let c = slerp_lanes(&ca, &cb, F::new(t)).map(|c| c.to_array());
    (
        angles,
        core::array::from_fn(|i| core::array::from_fn(|k| c[k][i])),
    )
}

pub(crate) use narrow::geodesic_distances_into;
#[cfg(test)]
pub(crate) use narrow::lanes_for_test as narrow_lanes_for_test;

/// The narrow geodesic path on `wide::f32x8`: eight pairs at a time in
/// `f32` lanes, the arithmetic of `simd/sphere.rs`'s
/// `geodesic_narrow_lanes!`, and the scalar kernel for the lanes it leaves
/// and the tail (bit-identical to it).
mod narrow {
    use wide::f32x8;

    use crate::batch::PerRow;
    use crate::simd::sphere;

    wide_lane_ops!(f32x8, f32);

    sphere::geodesic_narrow_lanes!();

    /// Rows `start..start + 8` of `rows` as columns.
    #[inline]
    fn rows_at(rows: &[[f32; 8]], start: usize) -> [F; 8] {
        let block: &[[f32; 8]; 8] = rows[start..start + 8].try_into().expect("8 rows");
        super::super::transpose(block)
    }

    /// [`batch::geodesic_distances_checked_into`](crate::batch::geodesic_distances_checked_into)'s
    /// kernel, one loop per form of the operands; `false` if a row fails
    /// `Gf8::check`.
    pub(crate) fn geodesic_distances_into(
        a: PerRow<'_, [f32; 8]>,
        b: PerRow<'_, [f32; 8]>,
        out: &mut [f32],
    ) -> bool {
        let (octets, tail) = out.as_chunks_mut::<8>();
        let done = 8 * octets.len();
        // One loop per form of the operands, the lane function inlined in
        // each (`$n` is the group of eight).
        macro_rules! run {
            ($n:ident, $ca:expr, $cb:expr) => {
                for ($n, octet) in octets.iter_mut().enumerate() {
                    let (angles, ok) = geodesic_narrow($ca, $cb);
                    *octet = angles.to_array();
                    let fast = ok.to_bitmask();
                    if fast != 0xFF && !sphere::redo_geodesic(a, b, 8 * $n, octet, fast) {
                        return false;
                    }
                }
            };
        }
        match (a, b) {
            (PerRow::Each(x), PerRow::Each(y)) => {
                run!(n, &rows_at(x, 8 * n), &rows_at(y, 8 * n))
            }
            (PerRow::All(p), PerRow::Each(y)) => {
                let cp = p.map(splat);
                run!(n, &cp, &rows_at(y, 8 * n))
            }
            (PerRow::Each(x), PerRow::All(q)) => {
                let cq = q.map(splat);
                run!(n, &rows_at(x, 8 * n), &cq)
            }
            (PerRow::All(p), PerRow::All(q)) => {
                let (cp, cq) = (p.map(splat), q.map(splat));
                run!(_n, &cp, &cq)
            }
        }
        let rest = tail.len();
        sphere::geodesic_distances_from(a.rows(done, rest), b.rows(done, rest), tail)
    }

    /// The narrow lanes on eight pairs of rows, for the unit test of
    /// `simd/sphere.rs`.
    #[cfg(test)]
    pub(crate) fn lanes_for_test(a: &[[f32; 8]; 8], b: &[[f32; 8]; 8]) -> ([f32; 8], u32) {
        let (angles, ok) = geodesic_narrow(&rows_at(a, 0), &rows_at(b, 0));
        (angles.to_array(), ok.to_bitmask())
    }
}
