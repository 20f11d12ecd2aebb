//! Inputs for comparing lattice decoders.

use hydron_core::E8Point;

use crate::common::SplitMix64;

/// Inputs that probe every path of the decoders, `count` of them from
/// `seed`: uniform at scales from 2^-30 to the range limit, a different
/// scale per coordinate, tiny coordinates (around the 2^-24 threshold of
/// the fast path) mixed with half-integers, grids full of ties, points
/// equidistant from both cosets (and a few ulps off), values at and just
/// past the range limits, and the odd NaN, infinity or random bit pattern.
pub fn probe_inputs(seed: u64, count: usize) -> Vec<[f32; 8]> {
    let mut rng = SplitMix64(seed);
    let mut out = Vec::with_capacity(count);
    let scales = [
        1e-9, 1e-6, 1e-3, 0.05, 0.3, 0.5, 1.0, 1.5, 2.0, 3.0, 8.0, 100.0, 1e4, 1e6, 4e6,
    ];
    while out.len() < count {
        let class = rng.next_u64() % 10;
        let x: [f32; 8] = match class {
            0 | 1 => {
                let scale = scales[(rng.next_u64() % scales.len() as u64) as usize];
                core::array::from_fn(|_| (rng.symmetric() * scale) as f32)
            }
            2 => core::array::from_fn(|_| {
                // A random exponent per coordinate, from 2^-40 to 2^22.
                let exponent = (rng.next_u64() % 63) as i32 - 40;
                (rng.symmetric() * 2f64.powi(exponent)) as f32
            }),
            3 => core::array::from_fn(|_| {
                let tiny = [
                    0.0,
                    -0.0,
                    f32::from_bits(1),
                    2f32.powi(-24),
                    2f32.powi(-25),
                    2f32.powi(-24) * 1.5,
                    1e-30,
                    2f32.powi(-56),
                    2f32.powi(-53),
                ];
                let base = [0.0f32, 0.5, -0.5, 1.0, -1.0, 0.25, 1.5];
                let t = tiny[(rng.next_u64() % tiny.len() as u64) as usize];
                let b = base[(rng.next_u64() % base.len() as u64) as usize];
                let sign = if rng.next_u64() & 1 == 0 { 1.0 } else { -1.0 };
                b + sign * t
            }),
            4 => {
                // Grids: multiples of 2^-k, small.
                let k = (rng.next_u64() % 4) as i32;
                core::array::from_fn(|_| ((rng.next_u64() % 33) as f32 - 16.0) * 2f32.powi(-k))
            }
            5 | 6 => {
                // Midway between an integer point and a half-integer point
                // (so equally far from both cosets), maybe a few ulps off.
                let p: [i32; 8] = core::array::from_fn(|_| (rng.next_u64() % 9) as i32 - 4);
                let q: [i32; 8] = core::array::from_fn(|_| (rng.next_u64() % 9) as i32 - 4);
                let mut x: [f32; 8] =
                    core::array::from_fn(|k| (2 * p[k] + 2 * q[k] + 1) as f32 / 4.0);
                if class == 6 {
                    let k = (rng.next_u64() % 8) as usize;
                    let steps = (rng.next_u64() % 7) as i32 - 3;
                    x[k] = f32::from_bits((x[k].to_bits() as i32 + steps) as u32);
                }
                x
            }
            7 => core::array::from_fn(|_| {
                // At and near the range limits, with quarter-steps.
                let v = E8Point::INPUT_LIMIT - (rng.next_u64() % 8) as f32 * 0.25;
                if rng.next_u64() & 1 == 0 {
                    v
                } else {
                    -v
                }
            }),
            8 => {
                let mut x: [f32; 8] = core::array::from_fn(|_| (rng.symmetric() * 3.0) as f32);
                let k = (rng.next_u64() % 8) as usize;
                x[k] = match rng.next_u64() % 6 {
                    0 => f32::NAN,
                    1 => f32::INFINITY,
                    2 => f32::NEG_INFINITY,
                    3 => f32::from_bits(E8Point::INPUT_LIMIT.to_bits() + 1),
                    4 => -f32::from_bits(E8Point::INPUT_LIMIT.to_bits() + 1),
                    _ => f32::from_bits(rng.next_u64() as u32),
                };
                x
            }
            _ => core::array::from_fn(|_| {
                // Half-integers and integers a few ulps off.
                let n = ((rng.next_u64() % 17) as f32 - 8.0) * 0.5;
                let steps = (rng.next_u64() % 5) as i32 - 2;
                f32::from_bits((n.to_bits() as i32 + steps) as u32)
            }),
        };
        out.push(x);
    }
    out
}
