//! The E8 lattice decoder as it was before the `f32` fast path (commit
//! fa41534, `E8Point::nearest`), kept verbatim as the oracle that the new
//! decoder and every batch backend must match exactly (and as the
//! baseline row of `benches/math.rs`).

use hydron_core::{E8Point, Gf8Error};

/// The old `E8Point::nearest`, returning the doubled coordinates.
pub fn old_nearest(coords: &[f32; 8]) -> Result<[i32; 8], Gf8Error> {
    for (coordinate, &value) in coords.iter().enumerate() {
        if value.is_nan() {
            return Err(Gf8Error::NotANumber { coordinate });
        }
        if value.is_infinite() {
            return Err(Gf8Error::Infinite { coordinate, value });
        }
    }
    for (coordinate, &value) in coords.iter().enumerate() {
        if value.abs() > E8Point::INPUT_LIMIT {
            return Err(Gf8Error::OutOfLatticeRange {
                coordinate,
                value,
                limit: E8Point::INPUT_LIMIT,
            });
        }
    }
    let x = coords.map(f64::from);
    let integer = round_to_d8(&x);
    let half = round_to_d8(&x.map(|v| v - 0.5));
    let integer: [i32; 8] = integer.map(|a| (2 * a) as i32);
    let half: [i32; 8] = half.map(|b| (2 * b + 1) as i32);
    let integer_distance = doubled_distance_sq(&x, &integer);
    let half_distance = doubled_distance_sq(&x, &half);
    Ok(if integer_distance <= half_distance {
        integer
    } else {
        half
    })
}

fn round_to_d8(x: &[f64; 8]) -> [i64; 8] {
    let mut rounded = [0i64; 8];
    let mut worst = 0;
    let mut worst_error = -1.0;
    for (k, (&v, r)) in x.iter().zip(&mut rounded).enumerate() {
        let f = v.round();
        *r = f as i64;
        let error = (v - f).abs();
        if error > worst_error {
            worst_error = error;
            worst = k;
        }
    }
    if rounded.iter().sum::<i64>() & 1 != 0 {
        rounded[worst] += if x[worst] >= rounded[worst] as f64 {
            1
        } else {
            -1
        };
    }
    rounded
}

fn doubled_distance_sq(x: &[f64; 8], doubled: &[i32; 8]) -> f64 {
    let sum: f64 = x
        .iter()
        .zip(doubled)
        .map(|(&v, &d)| {
            let diff = 2.0 * v - f64::from(d);
            diff * diff
        })
        .sum();
    sum * 0.25
}
