//! The 4-bit shell encoder against the original one, kept here as an
//! oracle: the first version of `shell::encode` (a stable sort of `|x|`,
//! the 415 leader scores in `f64` in a fixed order, the first of the
//! largest, the shape ranked, the nearest gain level), written against the
//! public API. Every backend must give its codes bit for bit, on Gaussian
//! blocks and on adversarial ones (ties, zeros, signed zeros, huge, tiny
//! and widely spread values, permutations of repeated magnitudes, the
//! shell's own points).

mod common;

use common::SplitMix64;
use hydron_core::batch::{self, Backend};
use hydron_core::quant::{shell, LatticeQuantizer};

// ---------------------------------------------------------------- oracle

/// The original encoder: the code nearest `x` (finite).
fn oracle(x: &[f32; 8]) -> u32 {
    let a = x.map(|v| f64::from(v.abs()));
    let mut order = [0usize, 1, 2, 3, 4, 5, 6, 7];
    // Stable: equal |x_i| keep coordinate order.
    order.sort_by(|&i, &j| a[j].total_cmp(&a[i]));
    let sorted = order.map(|i| a[i]);
    let negatives = x.iter().filter(|&&v| v < 0.0).count() as u32;

    // Leader k's score: ⟨sorted, L_k⟩, less 2 · |x|₇ L₇ when the leader is
    // all-odd and the signs of x have the wrong parity; in this order.
    let fix = 2.0 * sorted[7];
    let mut best = 0;
    let mut best_score = f64::NEG_INFINITY;
    for k in 0..shell::LEADERS {
        let l = shell::leader(k).map(f64::from);
        let mut s = sorted[0] * l[0];
        for i in 1..8 {
            s += sorted[i] * l[i];
        }
        let wrong = if wrong_parity(k, negatives) { 1.0 } else { 0.0 };
        let v = s - fix * l[7] * wrong;
        if v > best_score {
            (best, best_score) = (k, v);
        }
    }

    let leader = shell::leader(best);
    let mut p = [0i8; 8];
    for (rank, &i) in order.iter().enumerate() {
        let v = leader[rank] as i8;
        p[i] = if x[i] < 0.0 { -v } else { v };
    }
    if wrong_parity(best, negatives) {
        p[order[7]] = -p[order[7]];
    }
    let index = shell::shape_index(&p).expect("a point of the shell");
    let t = best_score / 28.0;
    let gain = (0..15)
        .filter(|&k| {
            t > 0.5 * (f64::from(shell::GAIN_LEVELS[k]) + f64::from(shell::GAIN_LEVELS[k + 1]))
        })
        .count() as u32;
    (gain << shell::SHAPE_BITS) | index
}

/// Whether leader `k` is all-odd and `negatives` negative signs give its
/// points the wrong coordinate sum (one sign must flip).
fn wrong_parity(k: usize, negatives: u32) -> bool {
    let l = shell::leader(k);
    if l[0].is_multiple_of(2) {
        return false;
    }
    let half_sum: u32 = l.iter().map(|&v| u32::from(v)).sum::<u32>() / 2;
    (negatives + half_sum) % 2 == 1
}

/// The original decoder, from the format's definition: the leader of the
/// shape index by the leaders' ranges, the arrangement of its rank by
/// counting arrangements (smaller values first), the free signs on the
/// nonzero coordinates in order (coordinates 0–6 of an all-odd leader,
/// whose coordinate 7 takes the sign that makes the parity right), then
/// `f32::from(p_i) · (GAIN_LEVELS[g] / 28)`.
fn decode_oracle(code: u32) -> [f32; 8] {
    let index = code & ((1 << shell::SHAPE_BITS) - 1);
    if index >= shell::SHAPES {
        return [0.0; 8];
    }
    let k = (0..shell::LEADERS)
        .rfind(|&k| shell::leader_range(k).0 <= index)
        .unwrap();
    let leader = shell::leader(k);
    let odd = leader[0] % 2 == 1;
    let free = if odd {
        7
    } else {
        leader.iter().filter(|&&v| v != 0).count()
    };
    let local = index - shell::leader_range(k).0;
    let mut rank = u64::from(local >> free);
    let mut signs = local & ((1 << free) - 1);
    // Unrank: at each position, the smallest value whose arrangements of
    // the rest reach past the rank.
    let mut left: Vec<u8> = leader.to_vec();
    left.sort_unstable();
    let arrangements = |rest: &[u8]| -> u64 {
        let mut n: u64 = (1..=rest.len() as u64).product();
        let mut i = 0;
        while i < rest.len() {
            let run = rest[i..].iter().take_while(|&&v| v == rest[i]).count();
            n /= (1..=run as u64).product::<u64>();
            i += run;
        }
        n
    };
    let mut p = [0i8; 8];
    for slot in &mut p {
        let mut values = left.clone();
        values.dedup();
        for v in values {
            let mut rest = left.clone();
            rest.remove(rest.iter().position(|&w| w == v).unwrap());
            let count = arrangements(&rest);
            if rank < count {
                *slot = v as i8;
                left = rest;
                break;
            }
            rank -= count;
        }
    }
    let mut negatives = 0;
    for v in p.iter_mut().take(if odd { 7 } else { 8 }) {
        if *v != 0 {
            if signs & 1 == 1 {
                *v = -*v;
                negatives += 1;
            }
            signs >>= 1;
        }
    }
    if odd && wrong_parity(k, negatives) {
        p[7] = -p[7];
    }
    let factor = shell::GAIN_LEVELS[(code >> shell::SHAPE_BITS) as usize] / 28.0;
    p.map(|v| f32::from(v) * factor)
}

// ---------------------------------------------------------------- blocks

/// Leader `k`'s weights for a block with `negatives` negative
/// coordinates: its score is the dot product with `|x|` sorted.
fn weights(k: usize, negatives: u32) -> [f64; 8] {
    let mut w = shell::leader(k).map(f64::from);
    if wrong_parity(k, negatives) {
        w[7] = -w[7];
    }
    w
}

/// A Gaussian block moved so that its two best leaders tie (its sorted
/// magnitudes projected onto the plane where their scores are equal),
/// then every magnitude scaled by `1 + ε u` (`u` uniform in [-1, 1]): the
/// blocks where rounding the magnitudes could pick the wrong leader.
fn near_tie(rng: &mut SplitMix64, epsilon: f64) -> [f32; 8] {
    let x = rng.gaussian8();
    let a = x.map(|v| f64::from(v.abs()));
    let mut order = [0usize, 1, 2, 3, 4, 5, 6, 7];
    order.sort_by(|&i, &j| a[j].total_cmp(&a[i]));
    let s = order.map(|i| a[i]);
    let negatives = x.iter().filter(|&&v| v < 0.0).count() as u32;
    let score = |k: usize| -> f64 {
        weights(k, negatives)
            .iter()
            .zip(&s)
            .map(|(w, v)| w * v)
            .sum()
    };
    let mut ranked: Vec<usize> = (0..shell::LEADERS).collect();
    ranked.sort_by(|&i, &j| score(j).total_cmp(&score(i)));
    let (wa, wb) = (weights(ranked[0], negatives), weights(ranked[1], negatives));
    let d: [f64; 8] = core::array::from_fn(|i| wa[i] - wb[i]);
    let lambda = (score(ranked[0]) - score(ranked[1])) / d.iter().map(|v| v * v).sum::<f64>();
    let mut out = x;
    for (r, &i) in order.iter().enumerate() {
        let u = rng.symmetric();
        let m = ((s[r] - lambda * d[r]) * (1.0 + epsilon * u)).abs() as f32;
        out[i] = if x[i] < 0.0 { -m } else { m };
    }
    out
}

/// A random permutation of `x`.
fn shuffle(rng: &mut SplitMix64, mut x: [f32; 8]) -> [f32; 8] {
    for i in (1..8).rev() {
        x.swap(i, (rng.next_u64() % (i as u64 + 1)) as usize);
    }
    x
}

/// A random sign on every coordinate.
fn random_signs(rng: &mut SplitMix64, x: [f32; 8]) -> [f32; 8] {
    let bits = rng.next_u64();
    core::array::from_fn(|i| if bits >> i & 1 == 1 { -x[i] } else { x[i] })
}

/// A block whose two best leaders nearly tie and whose magnitudes, scaled
/// so the largest is 32767, sit just off half-integers, each on the side
/// that rounds in favour of the loser: the blocks where the encoder's
/// rounded scores are furthest from the exact ones.
fn rounding_tie(rng: &mut SplitMix64) -> [f32; 8] {
    let x = near_tie(rng, 0.0);
    let a = x.map(|v| f64::from(v.abs()));
    let mut order = [0usize, 1, 2, 3, 4, 5, 6, 7];
    order.sort_by(|&i, &j| a[j].total_cmp(&a[i]));
    let s = order.map(|i| a[i] * 32767.0 / a[order[0]]);
    let negatives = x.iter().filter(|&&v| v < 0.0).count() as u32;
    let score = |k: usize, s: &[f64; 8]| -> f64 {
        weights(k, negatives)
            .iter()
            .zip(s)
            .map(|(w, v)| w * v)
            .sum()
    };
    let mut ranked: Vec<usize> = (0..shell::LEADERS).collect();
    ranked.sort_by(|&i, &j| score(j, &s).total_cmp(&score(i, &s)));
    let (wa, wb) = (weights(ranked[0], negatives), weights(ranked[1], negatives));
    let d: [f64; 8] = core::array::from_fn(|i| wa[i] - wb[i]);
    let mut t = s;
    for r in 1..8 {
        if d[r] != 0.0 {
            t[r] = s[r].floor() + 0.5 - d[r].signum() / 256.0;
        }
    }
    // Back to a near tie, through the coordinate that moves it most.
    let r = (1..8)
        .max_by(|&i, &j| d[i].abs().total_cmp(&d[j].abs()))
        .unwrap();
    if d[r] != 0.0 {
        t[r] -= (score(ranked[0], &t) - score(ranked[1], &t) - 1e-3) / d[r];
    }
    let mut out = x;
    for (r, &i) in order.iter().enumerate() {
        let m = t[r].abs() as f32;
        out[i] = if x[i] < 0.0 { -m } else { m };
    }
    out
}

/// Blocks of every adversarial kind, `n` of each, and Gaussian ones.
fn adversarial_blocks(n: usize, seed: u64) -> Vec<[f32; 8]> {
    let mut rng = SplitMix64(seed);
    let mut out = vec![
        [0.0; 8],
        [-0.0; 8],
        [0.0, -0.0, 0.0, -0.0, 0.0, 0.0, -0.0, 0.0],
        [1.0; 8],
        [-1.0; 8],
        [f32::MAX; 8],
        [-f32::MAX; 8],
        [f32::MIN_POSITIVE; 8],
        [f32::from_bits(1); 8],
        [f32::MAX, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, f32::from_bits(1)],
        [
            f32::MAX,
            f32::from_bits(1),
            1.0,
            -1.0,
            1e-30,
            -1e30,
            0.0,
            -0.0,
        ],
    ];
    for kind in 0..13 {
        for _ in 0..n {
            let x = match kind {
                0 => rng.gaussian8(),
                // Small integers: many equal |x_i|, zeros, exact ties.
                1 => [0; 8].map(|_: i32| (rng.next_u64() % 7) as f32 - 3.0),
                // Few distinct magnitudes, permuted, random signs.
                2 => {
                    let m = [0; 3].map(|_: i32| rng.gaussian8()[0].abs());
                    let x = [0; 8].map(|_: i32| m[(rng.next_u64() % 3) as usize]);
                    random_signs(&mut rng, x)
                }
                // A Gaussian block with some coordinates zeroed or copied.
                3 => {
                    let mut x = rng.gaussian8();
                    for _ in 0..(rng.next_u64() % 5) {
                        let (i, j) = ((rng.next_u64() % 8) as usize, (rng.next_u64() % 8) as usize);
                        x[i] = if rng.next_u64().is_multiple_of(2) {
                            0.0
                        } else {
                            -x[j]
                        };
                    }
                    x
                }
                // Widely spread scales: huge, tiny, subnormal.
                4 => {
                    let mut x = rng.gaussian8();
                    for v in &mut x {
                        *v *= 2f32.powi((rng.next_u64() % 250) as i32 - 150);
                    }
                    x
                }
                // The whole block huge or tiny.
                5 => {
                    let e = if rng.next_u64().is_multiple_of(2) {
                        120
                    } else {
                        -140
                    };
                    rng.gaussian8().map(|v| v * 2f32.powi(e))
                }
                // A shell point scaled (its own code), or nudged by an ulp.
                6 => {
                    let index = (rng.next_u64() % u64::from(shell::SHAPES)) as u32;
                    let p = shell::shape(index).unwrap();
                    let g = shell::GAIN_LEVELS[(rng.next_u64() % 16) as usize];
                    let mut x = p.map(|v| f32::from(v) / 28.0 * g);
                    if rng.next_u64().is_multiple_of(2) {
                        let i = (rng.next_u64() % 8) as usize;
                        x[i] = f32::from_bits(x[i].to_bits() + 1);
                    }
                    x
                }
                // A leader's values (halved, so ties between leaders), permuted.
                7 => {
                    let l = shell::leader((rng.next_u64() % shell::LEADERS as u64) as usize);
                    let x = shuffle(&mut rng, l.map(|v| f32::from(v) * 0.5));
                    random_signs(&mut rng, x)
                }
                // One or two nonzero coordinates.
                8 => {
                    let mut x = [0.0; 8];
                    let v = rng.gaussian8();
                    x[(rng.next_u64() % 8) as usize] = v[0];
                    x[(rng.next_u64() % 8) as usize] = v[1];
                    x
                }
                // Two leaders tied, or nearly.
                10 => {
                    let epsilon = [0.0, 1e-7, 1e-6, 1e-5, 1e-4][(rng.next_u64() % 5) as usize];
                    near_tie(&mut rng, epsilon)
                }
                11 => rounding_tie(&mut rng),
                // Magnitudes one ulp apart.
                _ => {
                    let base = rng.gaussian8()[0].abs().max(1e-3);
                    let x = [0; 8]
                        .map(|_: i32| f32::from_bits(base.to_bits() + (rng.next_u64() % 3) as u32));
                    let x = shuffle(&mut rng, x);
                    random_signs(&mut rng, x)
                }
            };
            out.push(x);
        }
    }
    out
}

// ---------------------------------------------------------------- tests

/// Every backend gives the oracle's codes, bit for bit.
#[test]
fn encoder_matches_the_oracle() {
    let blocks = adversarial_blocks(3000, 0x5EED_0E02);
    let expected: Vec<u32> = blocks.iter().map(oracle).collect();
    let mut codes = vec![0u32; blocks.len()];
    for backend in Backend::ALL {
        shell::encode_into_with(backend, &blocks, &mut codes).unwrap();
        for ((x, &want), &got) in blocks.iter().zip(&expected).zip(&codes) {
            assert_eq!(got, want, "{backend}: {x:?}");
        }
    }
    for (x, &want) in blocks.iter().zip(&expected) {
        assert_eq!(shell::encode(x).unwrap(), want, "{x:?}");
        let shape = shell::encode_shape(x).unwrap();
        assert_eq!(shape, want & ((1 << shell::SHAPE_BITS) - 1), "{x:?}");
    }
}

/// The decoder gives the oracle's blocks, bit for bit: the first, second,
/// last and a random index of every leader, random codes, and codes that
/// name no point, with every gain.
#[test]
fn decoder_matches_the_oracle() {
    let mut rng = SplitMix64(0x5EED_0E03);
    let mut indices = vec![];
    for k in 0..shell::LEADERS {
        let (first, count) = shell::leader_range(k);
        let random = (rng.next_u64() % u64::from(count)) as u32;
        indices.extend([
            first,
            first + 1.min(count - 1),
            first + count - 1,
            first + random,
        ]);
    }
    indices.extend((0..20_000).map(|_| (rng.next_u64() % u64::from(shell::SHAPES)) as u32));
    indices.extend([
        shell::SHAPES,
        shell::SHAPES + 1,
        (1 << shell::SHAPE_BITS) - 1,
    ]);
    let codes: Vec<u32> = indices
        .iter()
        .map(|&i| i | ((rng.next_u64() % 16) as u32) << shell::SHAPE_BITS)
        .collect();
    let mut out = vec![[0.0f32; 8]; codes.len()];
    shell::decode_into(&codes, &mut out);
    for (&code, y) in codes.iter().zip(&out) {
        let want = decode_oracle(code).map(f32::to_bits);
        assert_eq!(shell::decode(code).map(f32::to_bits), want, "{code:#x}");
        assert_eq!(y.map(f32::to_bits), want, "{code:#x}");
        let index = code & ((1 << shell::SHAPE_BITS) - 1);
        if let Some(p) = shell::shape(index) {
            let factor = shell::GAIN_LEVELS[(code >> shell::SHAPE_BITS) as usize] / 28.0;
            assert_eq!(
                p.map(|v| (f32::from(v) * factor).to_bits()),
                want,
                "{code:#x}"
            );
        } else {
            assert_eq!(want, [0; 8]);
        }
    }
}

/// Nanoseconds per block of one call of `f`: the least, the tenth
/// percentile and the median of `rounds`.
fn ns_per_block(rounds: usize, blocks: usize, mut f: impl FnMut()) -> [f64; 3] {
    let mut times: Vec<f64> = (0..rounds)
        .map(|_| {
            let t = std::time::Instant::now();
            f();
            t.elapsed().as_nanos() as f64 / blocks as f64
        })
        .collect();
    times.sort_by(f64::total_cmp);
    [times[0], times[rounds / 10], times[rounds / 2]]
}

/// ns per Gaussian block of `shell::encode_into` on every backend and of
/// the oracle, in one process (`--release -- --ignored --nocapture`).
#[test]
#[ignore = "timing: run by hand in a release build"]
fn encode_timing() {
    let mut rng = SplitMix64(0x5EED_7777);
    let blocks: Vec<[f32; 8]> = (0..4096).map(|_| rng.gaussian8()).collect();
    let mut codes = vec![0u32; blocks.len()];
    for round in 0..3 {
        for backend in batch::backends() {
            let [min, p10, median] = ns_per_block(101, blocks.len(), || {
                shell::encode_into_with(backend, std::hint::black_box(&blocks), &mut codes)
                    .unwrap();
            });
            eprintln!(
                "round {round} {backend}: min {min:.1} p10 {p10:.1} median {median:.1} ns/block"
            );
        }
        let [min, p10, median] = ns_per_block(5, blocks.len(), || {
            for (x, c) in blocks.iter().zip(&mut codes) {
                *c = oracle(std::hint::black_box(x));
            }
        });
        eprintln!("round {round} oracle: min {min:.1} p10 {p10:.1} median {median:.1} ns/block");
    }
}

/// ns per code of `shell::decode_into` on the codes of Gaussian blocks
/// (`--release -- --ignored --nocapture`).
#[test]
#[ignore = "timing: run by hand in a release build"]
fn decode_timing() {
    let mut rng = SplitMix64(0x5EED_7778);
    let blocks: Vec<[f32; 8]> = (0..4096).map(|_| rng.gaussian8()).collect();
    let mut codes = vec![0u32; blocks.len()];
    shell::encode_into(&blocks, &mut codes).unwrap();
    let mut out = vec![[0.0f32; 8]; blocks.len()];
    for round in 0..3 {
        let [min, p10, median] = ns_per_block(101, blocks.len(), || {
            shell::decode_into(std::hint::black_box(&codes), &mut out);
        });
        eprintln!("round {round} decode: min {min:.1} p10 {p10:.1} median {median:.1} ns/code");
    }
}

/// µs per 384-dimensional Gaussian vector of `LatticeQuantizer` at 4 bits
/// (rotated, per-vector scale), encode and decode into buffers made once
/// (`--release -- --ignored --nocapture`).
#[test]
#[ignore = "timing: run by hand in a release build"]
fn quantizer_timing() {
    let (dim, n) = (384, 1024);
    let q = LatticeQuantizer::new(dim, 4, 0).unwrap();
    let mut rng = SplitMix64(0x5EED_7779);
    let x: Vec<f32> = (0..n * dim / 8).flat_map(|_| rng.gaussian8()).collect();
    let codes = q.encode(&x).unwrap();
    let (mut bytes, mut scales) = (codes.codes.clone(), codes.scales.clone());
    let mut y = vec![0.0f32; n * dim];
    for round in 0..3 {
        let [min, p10, median] = ns_per_block(21, n, || {
            q.encode_into(std::hint::black_box(&x), &mut bytes, &mut scales)
                .unwrap();
        })
        .map(|ns| ns / 1000.0);
        eprintln!("round {round} encode: min {min:.2} p10 {p10:.2} median {median:.2} us/vector");
        let [min, p10, median] = ns_per_block(21, n, || {
            q.decode_into(std::hint::black_box(&bytes), &scales, &mut y)
                .unwrap();
        })
        .map(|ns| ns / 1000.0);
        eprintln!("round {round} decode: min {min:.2} p10 {p10:.2} median {median:.2} us/vector");
    }
}
