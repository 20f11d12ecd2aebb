//! The E8 shell code (4 bits per coordinate): the leaders against the
//! theta series, ranking against unranking, the shape encoder against
//! brute force, the gain levels, the error on Gaussian data, and
//! `LatticeQuantizer` at 4 bits end to end.

mod common;

use std::sync::OnceLock;

use common::SplitMix64;
use hydron_core::batch::Backend;
use hydron_core::quant::{shell, LatticeQuantizer, QuantError, ScaleMode};
use hydron_core::Gf8Error;

// ---------------------------------------------------------------- leaders

/// `240 · σ₃(98)`: the number of E8 vectors of squared norm 196 (the
/// coefficient of the E8 theta series, `240 σ₃(m)` at norm `2m`).
fn theta_coefficient() -> u64 {
    240 * (1..=98u64)
        .filter(|d| 98 % d == 0)
        .map(|d| d.pow(3))
        .sum::<u64>()
}

#[test]
fn leaders_are_the_whole_shell() {
    assert_eq!(theta_coefficient(), u64::from(shell::SHAPES));
    let mut total = 0u64;
    let mut previous: Option<[u8; 8]> = None;
    for k in 0..shell::LEADERS {
        let l = shell::leader(k);
        assert!(
            l.windows(2).all(|w| w[0] >= w[1]),
            "leader {k} {l:?} not sorted"
        );
        assert_eq!(l.iter().map(|&v| u32::from(v).pow(2)).sum::<u32>(), 784);
        let odd = l[0] % 2;
        assert!(l.iter().all(|&v| v % 2 == odd), "leader {k} mixes parities");
        if let Some(p) = previous {
            assert!(p < l, "leaders {} and {k} out of order", k - 1);
        }
        previous = Some(l);
        // Points of the leader, counted independently: arrangements by
        // brute force over all 8! orders, signs by brute force too.
        let mut arrangements = std::collections::BTreeSet::new();
        permutations(&l, &mut |a| {
            arrangements.insert(*a);
        });
        let a = arrangements.iter().next().unwrap();
        let signs = (0..256u32)
            .filter(|s| {
                let p: Vec<i32> = (0..8)
                    .map(|i| {
                        if s >> i & 1 == 1 {
                            -i32::from(a[i])
                        } else {
                            i32::from(a[i])
                        }
                    })
                    .collect();
                let zero_sign = (0..8).any(|i| a[i] == 0 && s >> i & 1 == 1);
                !zero_sign && p.iter().sum::<i32>().rem_euclid(4) == 0
            })
            .count() as u64;
        let count = arrangements.len() as u64 * signs;
        let (offset, n) = shell::leader_range(k);
        assert_eq!(u64::from(n), count, "leader {k}");
        assert_eq!(u64::from(offset), total, "leader {k}");
        total += count;
    }
    assert_eq!(total, theta_coefficient());
}

/// Calls `f` with every permutation of `v` (Heap's algorithm, repeats
/// included).
fn permutations(v: &[u8; 8], f: &mut impl FnMut(&[u8; 8])) {
    fn heap(k: usize, a: &mut [u8; 8], f: &mut impl FnMut(&[u8; 8])) {
        if k == 1 {
            f(a);
            return;
        }
        for i in 0..k {
            heap(k - 1, a, f);
            let j = if k.is_multiple_of(2) { i } else { 0 };
            if i + 1 < k {
                a.swap(j, k - 1);
            }
        }
    }
    let mut a = *v;
    heap(8, &mut a, f);
}

// ---------------------------------------------------------------- ranking

/// Checks that `p` is a point of the shell.
fn assert_on_shell(p: &[i8; 8], what: &str) {
    assert_eq!(
        p.iter().map(|&v| i32::from(v).pow(2)).sum::<i32>(),
        784,
        "{what}: {p:?}"
    );
    let odd = p[0].rem_euclid(2);
    assert!(p.iter().all(|v| v.rem_euclid(2) == odd), "{what}: {p:?}");
    assert_eq!(
        p.iter().map(|&v| i32::from(v)).sum::<i32>().rem_euclid(4),
        0,
        "{what}: {p:?}"
    );
}

#[test]
fn small_leaders_rank_every_index() {
    // Every index of every leader with at most 2^17 points (and at least
    // 2 leaders of each parity): unrank, check, rank back.
    let mut checked = 0;
    for k in 0..shell::LEADERS {
        let (offset, n) = shell::leader_range(k);
        if n > 1 << 17 {
            continue;
        }
        let mut sorted = shell::leader(k);
        let mut seen = std::collections::HashSet::new();
        sorted.reverse();
        for index in offset..offset + n {
            let p = shell::shape(index).unwrap();
            assert_on_shell(&p, &format!("index {index}"));
            let mut abs = p.map(i8::unsigned_abs);
            abs.sort_unstable();
            assert_eq!(abs, sorted, "index {index} left leader {k}");
            assert!(seen.insert(p), "index {index} repeats a point");
            assert_eq!(shell::shape_index(&p), Some(index));
        }
        checked += 1;
    }
    assert!(checked >= 20, "only {checked} small leaders");
}

#[test]
fn every_leader_ranks_random_points() {
    let mut rng = SplitMix64(0x5EED_0001);
    for k in 0..shell::LEADERS {
        let (offset, n) = shell::leader_range(k);
        let l = shell::leader(k);
        for _ in 0..200 {
            // A random point of the leader: shuffle, random signs, fix
            // the parity on the last nonzero coordinate.
            let mut a = l;
            for i in (1..8).rev() {
                a.swap(i, (rng.next_u64() % (i as u64 + 1)) as usize);
            }
            let mut p = a.map(|v| {
                let v = v as i8;
                if rng.next_u64() & 1 == 1 {
                    -v
                } else {
                    v
                }
            });
            if p.iter().map(|&v| i32::from(v)).sum::<i32>().rem_euclid(4) != 0 {
                let last = (0..8).rev().find(|&i| p[i] != 0).unwrap();
                p[last] = -p[last];
            }
            assert_on_shell(&p, "random point");
            let index = shell::shape_index(&p).unwrap();
            assert!((offset..offset + n).contains(&index), "leader {k}: {index}");
            assert_eq!(shell::shape(index), Some(p));
            // And a random index of the leader.
            let index = offset + (rng.next_u64() % u64::from(n)) as u32;
            let q = shell::shape(index).unwrap();
            assert_on_shell(&q, "random index");
            assert_eq!(shell::shape_index(&q), Some(index));
        }
    }
}

#[test]
fn points_off_the_shell_have_no_index() {
    assert_eq!(
        shell::shape_index(&[28, 0, 0, 0, 0, 0, 0, 0]),
        Some(shell::SHAPES - 2)
    );
    // Wrong norm.
    assert_eq!(shell::shape_index(&[26, 0, 0, 0, 0, 0, 0, 0]), None);
    // Mixed parities.
    assert_eq!(shell::shape_index(&[27, 2, 2, 2, 2, 2, 1, 1]), None);
    // All odd, norm 784, but Σ ≡ 2 (mod 4): the other coset of D8 + ½.
    assert_eq!(shell::shape_index(&[-27, 7, 1, 1, 1, 1, 1, 1]), None);
    assert!(shell::shape_index(&[27, 7, 1, 1, 1, 1, 1, 1]).is_some());
    assert!(shell::shape_index(&[-27, -7, 1, 1, 1, 1, 1, 1]).is_some());
    assert_eq!(shell::shape(shell::SHAPES), None);
    assert_eq!(shell::shape(u32::MAX), None);
    assert!(!shell::is_valid(shell::SHAPES));
    assert!(shell::is_valid(shell::SHAPES - 1));
}

// ---------------------------------------------------------------- encoder

/// Every distinct arrangement of every leader, once.
fn arrangements() -> &'static Vec<(bool, [u8; 8])> {
    static ALL: OnceLock<Vec<(bool, [u8; 8])>> = OnceLock::new();
    ALL.get_or_init(|| {
        let mut all = Vec::new();
        for k in 0..shell::LEADERS {
            let l = shell::leader(k);
            let mut set = std::collections::HashSet::new();
            permutations(&l, &mut |a| {
                set.insert(*a);
            });
            all.extend(set.into_iter().map(|a| (l[0] % 2 == 1, a)));
        }
        all
    })
}

/// max over the whole shell of `⟨x, p⟩`, by brute force over every
/// arrangement: for a fixed arrangement each coordinate's sign is free
/// (its term is `±|x_i| a_i`) except that an all-odd point needs the right
/// number of negative signs, which costs the smallest term when the signs
/// of `x` have the wrong parity.
fn brute_force_best(x: &[f32; 8]) -> f64 {
    let ax = x.map(|v| f64::from(v.abs()));
    let negatives = x.iter().filter(|&&v| v < 0.0).count();
    let mut best = f64::NEG_INFINITY;
    for (odd, a) in arrangements() {
        let mut s = 0.0;
        let mut smallest = f64::INFINITY;
        let mut signed = 0i32;
        for i in 0..8 {
            let t = ax[i] * f64::from(a[i]);
            s += t;
            smallest = smallest.min(t);
            let v = i32::from(a[i]);
            signed += if x[i] < 0.0 { -v } else { v };
        }
        let _ = negatives;
        if *odd && signed.rem_euclid(4) != 0 {
            s -= 2.0 * smallest;
        }
        best = best.max(s);
    }
    best
}

fn dot(x: &[f32; 8], p: &[i8; 8]) -> f64 {
    x.iter()
        .zip(p)
        .map(|(&a, &b)| f64::from(a) * f64::from(b))
        .sum()
}

/// Blocks with ties and zeros as well as Gaussian ones.
fn test_blocks(n: usize, seed: u64) -> Vec<[f32; 8]> {
    let mut rng = SplitMix64(seed);
    (0..n)
        .map(|i| match i % 4 {
            0 | 1 => rng.gaussian8(),
            // Small integers: many equal |x_i|, zeros, exact ties.
            2 => [0; 8].map(|_: i32| (rng.next_u64() % 7) as f32 - 3.0),
            _ => {
                let mut x = rng.gaussian8();
                x[(rng.next_u64() % 8) as usize] = 0.0;
                x[(rng.next_u64() % 8) as usize] = -x[(rng.next_u64() % 8) as usize];
                x
            }
        })
        .collect()
}

#[test]
fn shape_encoder_matches_brute_force() {
    for (b, x) in test_blocks(400, 0x5EED_0002).iter().enumerate() {
        let index = shell::encode_shape(x).unwrap();
        let p = shell::shape(index).unwrap();
        let ours = dot(x, &p);
        let best = brute_force_best(x);
        // Sums of eight exact products of small integers and f32s: the
        // test blocks are in the range where f64 sums are exact.
        assert_eq!(ours, best, "block {b}: {x:?} got {p:?}");
        // The code's gain half picks the same shape.
        assert_eq!(
            shell::encode(x).unwrap() & ((1 << shell::SHAPE_BITS) - 1),
            index
        );
    }
}

/// The shape maximizing `⟨x, p⟩` over every one of the 254,864,880
/// points, for 16 blocks, and every index unranked and ranked back.
/// One to two minutes in a release build: `cargo test --release -p
/// hydron-core --test quant_shell whole_shell -- --ignored`.
#[test]
#[ignore = "a minute or two: every point of the shell"]
fn whole_shell_brute_force() {
    let blocks = test_blocks(16, 0x5EED_0003);
    let mut best = vec![f64::NEG_INFINITY; blocks.len()];
    for index in 0..shell::SHAPES {
        let p = shell::shape(index).unwrap();
        assert_eq!(shell::shape_index(&p), Some(index));
        for (b, x) in best.iter_mut().zip(&blocks) {
            *b = b.max(dot(x, &p));
        }
    }
    for (x, b) in blocks.iter().zip(&best) {
        let p = shell::shape(shell::encode_shape(x).unwrap()).unwrap();
        assert_eq!(dot(x, &p), *b, "{x:?}");
    }
}

/// The AVX2 scorer gives the scalar codes, bit for bit (a CPU without
/// AVX2 is a missing precondition when the build has the AVX2 path).
#[test]
fn every_backend_gives_the_scalar_codes() {
    if !cfg!(all(feature = "simd", target_arch = "x86_64")) {
        return;
    }
    #[cfg(target_arch = "x86_64")]
    if !common::precondition(
        std::is_x86_feature_detected!("avx2"),
        "an x86-64 CPU with AVX2 (the shell encoder's AVX2 scorer)",
    ) {
        return;
    }
    let mut blocks = test_blocks(40_000, 0x5EED_000B);
    // Huge, tiny and widely spread coordinates too.
    let mut rng = SplitMix64(0x5EED_000C);
    for _ in 0..2000 {
        let mut x = rng.gaussian8();
        for v in &mut x {
            *v *= 2f32.powi((rng.next_u64() % 200) as i32 - 100);
        }
        blocks.push(x);
    }
    let mut a = vec![0u32; blocks.len()];
    let mut b = vec![0u32; blocks.len()];
    shell::encode_into_with(Backend::Scalar, &blocks, &mut a).unwrap();
    shell::encode_into_with(Backend::Avx2Fma, &blocks, &mut b).unwrap();
    assert_eq!(a, b);
}

#[test]
fn encode_refuses_nan_and_infinity() {
    let mut x = [0.5f32; 8];
    x[3] = f32::NAN;
    assert_eq!(
        shell::encode(&x),
        Err(Gf8Error::NotANumber { coordinate: 3 })
    );
    x[3] = f32::NEG_INFINITY;
    assert!(matches!(
        shell::encode_shape(&x),
        Err(Gf8Error::Infinite { coordinate: 3, .. })
    ));
    let mut out = [0u32; 2];
    let err = shell::encode_into(&[[0.0; 8], x], &mut out).unwrap_err();
    assert_eq!(err.index, 1);
}

#[test]
fn codewords_encode_to_themselves() {
    let mut rng = SplitMix64(0x5EED_0004);
    for _ in 0..2000 {
        let code = (rng.next_u64() as u32 & 0xF000_0000)
            | (rng.next_u64() % u64::from(shell::SHAPES)) as u32;
        let y = shell::decode(code);
        assert_eq!(shell::encode(&y).unwrap(), code, "{y:?}");
    }
}

// ---------------------------------------------------------------- gain

/// `t = ⟨x, ŝ⟩` of `n` seeded Gaussian blocks.
fn gain_samples(n: usize, seed: u64) -> Vec<f64> {
    let mut rng = SplitMix64(seed);
    (0..n)
        .map(|_| {
            let x = rng.gaussian8();
            let p = shell::shape(shell::encode_shape(&x).unwrap()).unwrap();
            dot(&x, &p) / 28.0
        })
        .collect()
}

/// One Lloyd step: each level becomes the mean of the samples nearest it.
fn lloyd_step(levels: &[f64; 16], samples: &[f64]) -> [f64; 16] {
    let mut sum = [0.0; 16];
    let mut count = [0usize; 16];
    for &t in samples {
        let k = (0..16)
            .min_by(|&a, &b| (t - levels[a]).abs().total_cmp(&(t - levels[b]).abs()))
            .unwrap();
        sum[k] += t;
        count[k] += 1;
    }
    let mut out = *levels;
    for k in 0..16 {
        if count[k] > 0 {
            out[k] = sum[k] / count[k] as f64;
        }
    }
    out
}

/// Recomputes `GAIN_LEVELS` (`--ignored --nocapture`, release build).
#[test]
#[ignore = "a minute: Lloyd's algorithm on a million blocks"]
fn gain_levels_lloyd() {
    let mut samples = gain_samples(1_000_000, 0x5EED_6A17);
    samples.sort_by(f64::total_cmp);
    let mut levels = [0.0; 16];
    for (k, l) in levels.iter_mut().enumerate() {
        *l = samples[((k as f64 + 0.5) / 16.0 * samples.len() as f64) as usize];
    }
    for _ in 0..10_000 {
        let next = lloyd_step(&levels, &samples);
        let moved = next
            .iter()
            .zip(&levels)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        levels = next;
        if moved < 1e-7 {
            break;
        }
    }
    let levels = levels.map(|l| l as f32);
    println!("GAIN_LEVELS = {levels:?}");
    for (a, b) in levels.iter().zip(&shell::GAIN_LEVELS) {
        assert!((a - b).abs() < 1e-4, "{levels:?}");
    }
}

#[test]
fn gain_levels_are_a_fixed_point() {
    let samples = gain_samples(200_000, 0x5EED_0005);
    let levels = shell::GAIN_LEVELS.map(f64::from);
    let next = lloyd_step(&levels, &samples);
    for (k, (a, b)) in next.iter().zip(&levels).enumerate() {
        assert!((a - b).abs() < 0.01, "level {k}: {b} moves to {a}");
    }
    assert!(shell::GAIN_LEVELS.windows(2).all(|w| w[0] < w[1]));
}

#[test]
fn gain_is_the_nearest_level() {
    // A shape scaled to lengths around each midpoint.
    let p = shell::shape(777).unwrap();
    for k in 0..15 {
        let mid = 0.5 * (f64::from(shell::GAIN_LEVELS[k]) + f64::from(shell::GAIN_LEVELS[k + 1]));
        for (t, g) in [(mid * 0.999, k), (mid * 1.001, k + 1)] {
            let x = p.map(|v| (f64::from(v) / 28.0 * t) as f32);
            assert_eq!(shell::encode(&x).unwrap() >> 28, g as u32, "t = {t}");
        }
    }
}

// ---------------------------------------------------------------- error

/// `Σ|x − x̂|² / Σ|x|²` of `shell::encode` on `n` seeded Gaussian blocks.
fn block_nmse(n: usize, seed: u64) -> f64 {
    let mut rng = SplitMix64(seed);
    let (mut err, mut energy) = (0.0, 0.0);
    for _ in 0..n {
        let x = rng.gaussian8();
        let y = shell::decode(shell::encode(&x).unwrap());
        for (a, b) in x.iter().zip(&y) {
            err += f64::from(a - b).powi(2);
            energy += f64::from(*a).powi(2);
        }
    }
    err / energy
}

#[test]
fn gaussian_nmse() {
    let nmse = block_nmse(200_000, 0x5EED_0006);
    eprintln!("shell code, 200,000 N(0, 1) blocks: NMSE {nmse:.5}");
    assert!(nmse <= 0.0070, "NMSE {nmse}");
}

// ---------------------------------------------------------------- quantizer

/// `n` seeded vectors of `dim` i.i.d. N(0, 1) coordinates.
fn gaussian_vectors(n: usize, dim: usize, seed: u64) -> Vec<f32> {
    let mut rng = SplitMix64(seed);
    let mut out = Vec::with_capacity(n * dim + 8);
    while out.len() < n * dim {
        out.extend(rng.gaussian8());
    }
    out.truncate(n * dim);
    out
}

fn nmse(x: &[f32], y: &[f32]) -> f64 {
    let err: f64 = x.iter().zip(y).map(|(a, b)| f64::from(a - b).powi(2)).sum();
    let energy: f64 = x.iter().map(|a| f64::from(*a).powi(2)).sum();
    err / energy
}

#[test]
fn quantizer_at_4_bits_384_d_gaussian() {
    // 2,100 vectors of 48 blocks: 100,800 blocks, rotated, per-vector scale.
    let q = LatticeQuantizer::new(384, 4, 7).unwrap();
    assert_eq!((q.bits_per_dim(), q.code_size()), (4, 192));
    assert!(q.rotation().is_some());
    let x = gaussian_vectors(2100, 384, 0x5EED_0007);
    let codes = q.encode(&x).unwrap();
    assert_eq!((codes.codes.len(), codes.scales.len()), (2100 * 192, 2100));
    let e = nmse(&x, &q.decode(&codes).unwrap());
    eprintln!("LatticeQuantizer 4 bits, 384-d Gaussian, rotated: NMSE {e:.5}");
    assert!(e <= 0.0070, "NMSE {e}");
}

#[test]
fn quantizer_at_4_bits_8_d_gaussian() {
    // 100,000 vectors of one block, no rotation, per-vector scale.
    let q = LatticeQuantizer::new(8, 4, 0).unwrap();
    assert!(q.rotation().is_none());
    let x = gaussian_vectors(100_000, 8, 0x5EED_0008);
    let codes = q.encode(&x).unwrap();
    let e = nmse(&x, &q.decode(&codes).unwrap());
    eprintln!("LatticeQuantizer 4 bits, 8-d Gaussian: NMSE {e:.5}");
    assert!(e <= 0.0070, "NMSE {e}");
    // Each code is the shell code of the vector over its scale.
    for (v, (x, code)) in x
        .chunks_exact(8)
        .zip(codes.codes.chunks_exact(4))
        .take(1000)
        .enumerate()
    {
        let s = codes.scales[v];
        let block: [f32; 8] = core::array::from_fn(|i| (f64::from(x[i]) / f64::from(s)) as f32);
        assert_eq!(
            u32::from_le_bytes(code.try_into().unwrap()),
            shell::encode(&block).unwrap()
        );
        let norm = x.iter().map(|a| f64::from(*a).powi(2)).sum::<f64>().sqrt();
        assert_eq!(s, (norm / 8f64.sqrt()) as f32);
    }
}

#[test]
fn quantizer_at_4_bits_unit_mode_and_padding() {
    let q = LatticeQuantizer::new(20, 4, 3)
        .unwrap()
        .with_scale(ScaleMode::Unit);
    assert_eq!(q.code_size(), 12);
    let mut x = gaussian_vectors(500, 20, 0x5EED_0009);
    for v in x.chunks_exact_mut(20) {
        let n = v.iter().map(|a| a * a).sum::<f32>().sqrt();
        v.iter_mut().for_each(|a| *a /= n);
    }
    let codes = q.encode(&x).unwrap();
    assert!(codes.scales.is_empty());
    let e = nmse(&x, &q.decode(&codes).unwrap());
    assert!(e < 0.012, "NMSE {e}");
    // The same vectors with a per-vector scale: the scale only helps.
    let p = LatticeQuantizer::new(20, 4, 3).unwrap();
    let e2 = nmse(&x, &p.decode(&p.encode(&x).unwrap()).unwrap());
    assert!(e2 <= e * 1.05, "{e2} vs {e}");
    // The zero vector decodes to zero.
    assert_eq!(
        p.decode(&p.encode(&[0.0; 20]).unwrap()).unwrap(),
        vec![0.0; 20]
    );
}

#[test]
fn quantizer_at_4_bits_errors_name_the_place() {
    let q = LatticeQuantizer::new(12, 4, 0).unwrap();
    let mut x = vec![0.5f32; 36];
    x[12 + 5] = f32::NAN;
    assert_eq!(
        q.encode(&x),
        Err(QuantError::NotANumber {
            vector: 1,
            coordinate: 5
        })
    );
    x[12 + 5] = 0.5;
    let mut codes = q.encode(&x).unwrap();
    assert_eq!(codes.codes.len(), 24);
    // Vector 2, block 1: shape index SHAPES, no point.
    let bad = shell::SHAPES.to_le_bytes();
    codes.codes[2 * 8 + 4..2 * 8 + 8].copy_from_slice(&bad);
    let err = q.decode(&codes).unwrap_err();
    assert_eq!(
        err,
        QuantError::InvalidCode {
            vector: 2,
            block: 1
        }
    );
    assert_eq!(
        err.to_string(),
        "vector 2, block 1: the code names no point of the E8 shell"
    );
    codes.codes.truncate(22);
    assert_eq!(
        q.decode(&codes),
        Err(QuantError::CodesLength {
            len: 22,
            code_size: 8
        })
    );
    let short = hydron_core::quant::QuantCodes {
        codes: vec![0; 16],
        scales: vec![1.0],
    };
    assert_eq!(
        q.decode(&short),
        Err(QuantError::ScaleCount {
            scales: 1,
            vectors: 2,
            expected: 2
        })
    );
}

#[test]
fn quantizer_at_4_bits_large_batches_match_small_ones() {
    // Large enough for the parallel split (with `parallel`): the same
    // codes as vector by vector.
    let q = LatticeQuantizer::new(64, 4, 11).unwrap();
    let x = gaussian_vectors(1200, 64, 0x5EED_000A);
    let all = q.encode(&x).unwrap();
    for (v, chunk) in x.chunks_exact(64).enumerate().step_by(37) {
        let one = q.encode(chunk).unwrap();
        assert_eq!(one.codes, all.codes[v * 32..(v + 1) * 32], "vector {v}");
        assert_eq!(one.scales[0], all.scales[v]);
    }
    let y = q.decode(&all).unwrap();
    for (v, chunk) in all.codes.chunks_exact(32).enumerate().step_by(41) {
        let one = hydron_core::quant::QuantCodes {
            codes: chunk.to_vec(),
            scales: vec![all.scales[v]],
        };
        assert_eq!(
            q.decode(&one).unwrap(),
            y[v * 64..(v + 1) * 64],
            "vector {v}"
        );
    }
}
