//! The E8P encoder against brute force over all 65,536 codewords, every
//! backend against the scalar one, and `LatticeQuantizer` end to end.
//!
//! The oracle here is independent of the crate's encoder: it takes every
//! codeword from `e8p::decode`, scores all of them in `f32` with a rigorous
//! error bound, and decides between the few within the bound by exact
//! integer arithmetic (a fixed-point big integer), keeping the lowest code
//! among exact ties.

mod common;

use std::cmp::Ordering;
use std::sync::OnceLock;

use common::SplitMix64;
use hydron_core::batch::{self, Backend};
use hydron_core::quant::{e8p, LatticeQuantizer, QuantError, Rotation, ScaleMode, GAUSSIAN_SCALE};
use hydron_core::{BatchError, Gf8Error};
use proptest::prelude::*;

// ---------------------------------------------------------------- oracle

/// Every codeword in structure-of-arrays form, with `½|c|²`.
struct Codebook {
    coords: [Vec<f32>; 8],
    half_norm: Vec<f32>,
    /// Codewords times 4 (integers), for the exact comparison.
    quarters: Vec<[i32; 8]>,
}

fn codebook() -> &'static Codebook {
    static BOOK: OnceLock<Codebook> = OnceLock::new();
    BOOK.get_or_init(|| {
        let mut coords: [Vec<f32>; 8] = Default::default();
        let mut half_norm = Vec::with_capacity(1 << 16);
        let mut quarters = Vec::with_capacity(1 << 16);
        for code in 0..=u16::MAX {
            let c = e8p::decode(code);
            for i in 0..8 {
                coords[i].push(c[i]);
            }
            half_norm.push(0.5 * c.iter().map(|v| v * v).sum::<f32>());
            quarters.push(c.map(|v| {
                let q = v * 4.0;
                assert_eq!(q.fract(), 0.0);
                q as i32
            }));
        }
        Codebook {
            coords,
            half_norm,
            quarters,
        }
    })
}

/// A signed fixed-point number in units of 2^-151, as 30-bit digits.
struct Fixed([i64; 13]);

impl Fixed {
    /// Adds `v · 2^shift` units (`|v| < 2^31`, `shift < 360`).
    fn add(&mut self, v: i64, shift: u32) {
        let (digit, bit) = ((shift / 30) as usize, shift % 30);
        let wide = i128::from(v) << bit;
        let mask = (1i128 << 30) - 1;
        self.0[digit] += (wide & mask) as i64;
        self.0[digit + 1] += ((wide >> 30) & mask) as i64;
        self.0[digit + 2] += (wide >> 60) as i64;
    }

    /// The sign, after carrying.
    fn sign(mut self) -> Ordering {
        for i in 0..12 {
            let carry = self.0[i].div_euclid(1 << 30);
            self.0[i] = self.0[i].rem_euclid(1 << 30);
            self.0[i + 1] += carry;
        }
        if self.0[12] != 0 {
            return self.0[12].cmp(&0);
        }
        if self.0[..12].iter().any(|&d| d != 0) {
            Ordering::Greater
        } else {
            Ordering::Equal
        }
    }
}

/// `x = m · 2^e` exactly, `|m| < 2^24`, `e ≥ −149`.
fn split(x: f32) -> (i64, i32) {
    let bits = x.to_bits();
    let biased = ((bits >> 23) & 0xFF) as i32;
    let frac = i64::from(bits & 0x7F_FFFF);
    let (m, e) = if biased == 0 {
        (frac, -149)
    } else {
        (frac | 1 << 23, biased - 150)
    };
    (if bits >> 31 == 1 { -m } else { m }, e)
}

/// The exact order of `⟨x, c⟩ − ½|c|²` for two codes.
fn exact_cmp(x: &[f32; 8], a: u16, b: u16) -> Ordering {
    let book = codebook();
    let (qa, qb) = (&book.quarters[a as usize], &book.quarters[b as usize]);
    let mut sum = Fixed([0; 13]);
    // x_i (qa_i − qb_i) / 4 = m k 2^(e − 2): units 2^-151, shift e + 149.
    for i in 0..8 {
        let (m, e) = split(x[i]);
        let k = i64::from(qa[i] - qb[i]);
        sum.add(m * k, (e + 149) as u32);
    }
    // −½(|a|² − |b|²) = −(Σ qa² − Σ qb²) / 32: shift 151 − 5.
    let sq = |q: &[i32; 8]| q.iter().map(|&v| i64::from(v * v)).sum::<i64>();
    sum.add(-(sq(qa) - sq(qb)), 146);
    sum.sign()
}

/// The nearest code by brute force: the lowest code among the exactly
/// nearest codewords.
fn brute_force(x: &[f32; 8]) -> u16 {
    let book = codebook();
    let abs_sum: f32 = x.iter().map(|v| v.abs()).sum();
    let huge = x.iter().any(|v| v.abs() > 1e30);
    let mut scores = vec![0.0f64; 1 << 16];
    let eps: f64;
    if huge {
        // f64: products exact, sum within 2^-47 (Σ|x| + 4).
        for (code, s) in scores.iter_mut().enumerate() {
            let mut g = 0.0f64;
            for (&xi, column) in x.iter().zip(&book.coords) {
                g += f64::from(xi) * f64::from(column[code]);
            }
            *s = g - f64::from(book.half_norm[code]);
        }
        eps = 2f64.powi(-47) * (f64::from(abs_sum) + 4.0);
    } else {
        // f32: 16 roundings of relative size 2^-24 on terms summing to at
        // most 2.75 Σ|x| + 6.1, plus underflow.
        let mut s32 = vec![0.0f32; 1 << 16];
        let [c0, c1, c2, c3, c4, c5, c6, c7] = &book.coords;
        let n = s32.len();
        let (c0, c1, c2, c3) = (&c0[..n], &c1[..n], &c2[..n], &c3[..n]);
        let (c4, c5, c6, c7, h) = (&c4[..n], &c5[..n], &c6[..n], &c7[..n], &book.half_norm[..n]);
        for k in 0..n {
            let g = ((x[0] * c0[k] + x[1] * c1[k]) + (x[2] * c2[k] + x[3] * c3[k]))
                + ((x[4] * c4[k] + x[5] * c5[k]) + (x[6] * c6[k] + x[7] * c7[k]));
            s32[k] = g - h[k];
        }
        for (s, v) in scores.iter_mut().zip(&s32) {
            *s = f64::from(*v);
        }
        eps = 2f64.powi(-18) * (f64::from(abs_sum) + 4.0) + 1e-40;
    }
    let top = scores.iter().fold(f64::NEG_INFINITY, |m, &s| m.max(s));
    let mut best: Option<u16> = None;
    for (code, &s) in scores.iter().enumerate() {
        if s < top - 2.0 * eps {
            continue;
        }
        let code = code as u16;
        best = match best {
            Some(b) if exact_cmp(x, code, b) != Ordering::Greater => Some(b),
            _ => Some(code),
        };
    }
    best.unwrap()
}

// ---------------------------------------------------------------- inputs

/// Blocks of every kind the encoder must get right.
fn probe_blocks(rng: &mut SplitMix64, n: usize) -> Vec<[f32; 8]> {
    let mut out = Vec::with_capacity(n);
    let book = codebook();
    while out.len() < n {
        let kind = rng.next_u64() % 10;
        let block: [f32; 8] = match kind {
            // Gaussian at several scales.
            0..=3 => {
                let scale = [1e-3f32, 0.3, 1.0, 3.0, 30.0, 1e4][(rng.next_u64() % 6) as usize];
                rng.gaussian8().map(|v| v * scale)
            }
            // Grids of eighths and quarters: ties everywhere.
            4 => core::array::from_fn(|_| ((rng.next_u64() % 49) as f32 - 24.0) / 8.0),
            5 => core::array::from_fn(|_| ((rng.next_u64() % 9) as f32 - 4.0) / 4.0),
            // Midpoints of two codewords (exact ties), sometimes nudged by an ulp.
            6 => {
                let a = (rng.next_u64() & 0xFFFF) as usize;
                let b = (rng.next_u64() & 0xFFFF) as usize;
                let nudge = rng.next_u64() % 3;
                core::array::from_fn(|i| {
                    let m = 0.5 * (book.coords[i][a] + book.coords[i][b]);
                    match nudge {
                        0 => m,
                        1 => m.next_up(),
                        _ => m.next_down(),
                    }
                })
            }
            // Huge, tiny and subnormal values, mixed.
            7 => core::array::from_fn(|_| {
                let bits = rng.next_u64() as u32 & 0x7F7F_FFFF;
                let v = f32::from_bits(bits);
                if rng.next_u64().is_multiple_of(3) {
                    0.0
                } else {
                    v
                }
            }),
            // Gaussian with a few exact zeros and one tiny coordinate.
            8 => {
                let mut b = rng.gaussian8();
                b[(rng.next_u64() % 8) as usize] = 0.0;
                b[(rng.next_u64() % 8) as usize] = 0.0;
                b[(rng.next_u64() % 8) as usize] = 1e-9;
                b
            }
            // One large coordinate among small ones (wide range).
            _ => {
                let mut b = rng.gaussian8().map(|v| v * 1e-3);
                b[(rng.next_u64() % 8) as usize] = 1e5 * rng.gaussian8()[0];
                b
            }
        };
        out.push(block);
    }
    out
}

/// The scalar kernel and the dispatched one (AVX2 when built and
/// detected) both give the oracle's code.
fn check_against_brute_force(blocks: &[[f32; 8]]) {
    let mut codes = vec![0u16; blocks.len()];
    e8p::encode_into_with(Backend::Scalar, blocks, &mut codes).unwrap();
    let dispatched = e8p::encode_many(blocks).unwrap();
    for ((x, &code), &other) in blocks.iter().zip(&codes).zip(&dispatched) {
        let expected = brute_force(x);
        assert_eq!(code, expected, "scalar, block {x:?}");
        assert_eq!(other, expected, "dispatched, block {x:?}");
    }
}

#[test]
fn encoder_equals_brute_force() {
    use rayon::prelude::*;
    let blocks = probe_blocks(&mut SplitMix64(21), 20_000);
    blocks.par_chunks(500).for_each(check_against_brute_force);
}

/// The acceptance run: a million blocks, on every core:
/// `cargo test -p hydron-core --features simd --test quant -- --ignored million`.
#[test]
#[ignore]
fn encoder_equals_brute_force_on_a_million_blocks() {
    use rayon::prelude::*;
    let blocks = probe_blocks(&mut SplitMix64(2024), 1_000_000);
    blocks.par_chunks(1000).for_each(check_against_brute_force);
}

/// Runs `f` when the AVX2 kernel is built (feature `simd` on x86-64). A
/// CPU without AVX2 and FMA is a missing precondition: a failure under
/// `HYDRON_REQUIRE_ALL=1`, otherwise a loud skip.
fn with_avx2(f: impl FnOnce()) {
    if !cfg!(all(feature = "simd", target_arch = "x86_64")) {
        return; // no AVX2 kernel in this build
    }
    if Backend::Avx2Fma.is_available() {
        f();
        return;
    }
    common::precondition(
        false,
        "an x86-64 CPU with AVX2 and FMA (the AVX2 E8P kernel is not tested here)",
    );
}

#[test]
fn every_backend_gives_the_scalar_codes() {
    let blocks = probe_blocks(&mut SplitMix64(5), 50_000);
    let mut scalar = vec![0u16; blocks.len()];
    e8p::encode_into_with(Backend::Scalar, &blocks, &mut scalar).unwrap();
    for backend in batch::backends() {
        let mut other = vec![0u16; blocks.len()];
        e8p::encode_into_with(backend, &blocks, &mut other).unwrap();
        assert_eq!(scalar, other, "{backend}");
    }
    with_avx2(|| {
        let mut avx = vec![0u16; blocks.len()];
        e8p::encode_into_with(Backend::Avx2Fma, &blocks, &mut avx).unwrap();
        for i in 0..blocks.len() {
            assert_eq!(scalar[i], avx[i], "block {:?}", blocks[i]);
        }
    });
}

#[test]
fn avx2_equals_brute_force_on_ties() {
    with_avx2(|| {
        let mut rng = SplitMix64(77);
        let blocks: Vec<[f32; 8]> = (0..3000)
            .map(|_| core::array::from_fn(|_| ((rng.next_u64() % 9) as f32 - 4.0) / 4.0))
            .collect();
        let mut codes = vec![0u16; blocks.len()];
        e8p::encode_into_with(Backend::Avx2Fma, &blocks, &mut codes).unwrap();
        for (x, &code) in blocks.iter().zip(&codes) {
            assert_eq!(code, brute_force(x), "block {x:?}");
        }
    });
}

/// Blocks the batch kernel decides with a coordinate exactly on a shift
/// (`x_i = ±1/4`, so `|x_i − σ| = 0` and its sign is free), and blocks at
/// the quantizer's scale whose best codeword is a norm-12 pattern or a
/// close call between the shifts: every backend gives the oracle's code.
#[test]
fn batch_kernel_equals_brute_force_on_zero_distances_and_norm_12() {
    let mut rng = SplitMix64(404);
    let blocks: Vec<[f32; 8]> = (0..6000)
        .map(|k| {
            let mut b = rng.gaussian8().map(|v| v * [1.04, 1.5, 0.6][k % 3]);
            if k % 2 == 0 {
                b[(rng.next_u64() % 8) as usize] = if k % 4 == 0 { 0.25 } else { -0.25 };
            }
            b
        })
        .collect();
    {
        use rayon::prelude::*;
        blocks.par_chunks(500).for_each(check_against_brute_force);
    }
    with_avx2(|| {
        let mut codes = vec![0u16; blocks.len()];
        e8p::encode_into_with(Backend::Avx2Fma, &blocks, &mut codes).unwrap();
        let mut scalar = vec![0u16; blocks.len()];
        e8p::encode_into_with(Backend::Scalar, &blocks, &mut scalar).unwrap();
        assert_eq!(codes, scalar);
    });
}

// ------------------------------------------------------------- codebook

#[test]
fn every_code_is_a_distinct_point_of_e8_plus_a_quarter() {
    let mut seen = std::collections::HashSet::new();
    let mut norms = [0usize; 64];
    for code in 0..=u16::MAX {
        let c = e8p::decode(code);
        // c − σ·1 is in E8: all half-integers with an even sum.
        let sigma = if code & 0x8000 == 0 { 0.25 } else { -0.25 };
        let doubled = c.map(|v| (v - sigma) * 2.0);
        assert!(
            doubled
                .iter()
                .all(|d| d.fract() == 0.0 && (*d as i32) % 2 != 0),
            "{code}"
        );
        assert_eq!((doubled.iter().sum::<f32>() / 2.0) as i32 % 2, 0, "{code}");
        let sq: f32 = c.iter().map(|v| (v - sigma) * (v - sigma)).sum();
        norms[sq as usize] += 1;
        assert!(
            seen.insert(c.map(f32::to_bits)),
            "code {code} repeats a point"
        );
    }
    // 128 signs x 2 shifts per pattern: 1, 8, 28, 64, 126, 29 patterns.
    assert_eq!(
        [norms[2], norms[4], norms[6], norms[8], norms[10], norms[12]],
        [1, 8, 28, 64, 126, 29].map(|p| p * 256)
    );
}

#[test]
fn every_codeword_encodes_to_its_own_code() {
    for code in 0..=u16::MAX {
        assert_eq!(e8p::encode(&e8p::decode(code)), Ok(code));
    }
}

#[test]
fn batch_helpers_agree_with_single_calls() {
    let blocks = probe_blocks(&mut SplitMix64(9), 500);
    let codes = e8p::encode_many(&blocks).unwrap();
    for (x, &c) in blocks.iter().zip(&codes) {
        assert_eq!(e8p::encode(x), Ok(c));
    }
    let decoded = e8p::decode_many(&codes);
    let mut into = vec![[0.0; 8]; codes.len()];
    e8p::decode_into(&codes, &mut into);
    assert_eq!(decoded, into);
    assert_eq!(decoded[3], e8p::decode(codes[3]));
}

#[test]
fn non_finite_blocks_are_refused_with_their_index() {
    let mut blocks = vec![[0.5f32; 8]; 10];
    blocks[6][2] = f32::NEG_INFINITY;
    blocks[8][0] = f32::NAN;
    for backend in Backend::ALL {
        let mut out = vec![0u16; 10];
        let err = e8p::encode_into_with(backend, &blocks, &mut out).unwrap_err();
        assert_eq!(
            err,
            BatchError {
                index: 6,
                error: Gf8Error::Infinite {
                    coordinate: 2,
                    value: f32::NEG_INFINITY
                }
            }
        );
    }
    assert_eq!(e8p::encode_many(&blocks[7..]).unwrap_err().index, 1);
}

// ------------------------------------------------------------ properties

fn distance(x: &[f32; 8], c: &[f32; 8]) -> f64 {
    x.iter()
        .zip(c)
        .map(|(&a, &b)| (f64::from(a) - f64::from(b)).powi(2))
        .sum()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    /// No code one bit away is nearer, and the codebook's symmetry
    /// (`-c` is a codeword) gives `-x` the same distance.
    #[test]
    fn encoding_is_locally_optimal_and_odd(x in proptest::array::uniform8(-8.0f32..8.0)) {
        let code = e8p::encode(&x).unwrap();
        let d = distance(&x, &e8p::decode(code));
        for bit in 0..16 {
            prop_assert!(d <= distance(&x, &e8p::decode(code ^ (1 << bit))) + 1e-9);
        }
        let minus = x.map(|v| -v);
        let dm = distance(&minus, &e8p::decode(e8p::encode(&minus).unwrap()));
        prop_assert!((d - dm).abs() <= 1e-9 * (1.0 + d), "{} vs {}", d, dm);
    }

    /// The decoded codeword encodes to the same code.
    #[test]
    fn decode_encode_is_a_fixed_point(x in proptest::array::uniform8(-20.0f32..20.0)) {
        let code = e8p::encode(&x).unwrap();
        let c = e8p::decode(code);
        prop_assert_eq!(e8p::encode(&c).unwrap(), code);
    }

    /// The rotation keeps norms and undoes itself.
    #[test]
    fn rotation_is_orthonormal(dim in 1usize..300, seed in any::<u64>(), salt in any::<u64>()) {
        let r = Rotation::new(dim, seed);
        let mut rng = SplitMix64(salt);
        let x: Vec<f64> = (0..dim).map(|_| rng.symmetric() * 10.0).collect();
        let mut y = x.clone();
        r.rotate(&mut y);
        let norm = |v: &[f64]| v.iter().map(|a| a * a).sum::<f64>().sqrt();
        prop_assert!((norm(&y) - norm(&x)).abs() <= 1e-12 * (1.0 + norm(&x)));
        r.unrotate(&mut y);
        for (a, b) in x.iter().zip(&y) {
            prop_assert!((a - b).abs() <= 1e-12 * (1.0 + norm(&x)));
        }
    }

    /// Encoding then decoding keeps the shape and the error bounded, for
    /// every dimension and mode.
    #[test]
    fn quantizer_round_trip(dim in 1usize..70, rotate in any::<bool>(), salt in any::<u64>()) {
        let q = LatticeQuantizer::new(dim, 2, salt).unwrap().with_rotation(rotate);
        let mut rng = SplitMix64(salt);
        let x: Vec<f32> = (0..3 * dim).map(|_| rng.symmetric() as f32).collect();
        let codes = q.encode(&x).unwrap();
        prop_assert_eq!(codes.codes.len(), 3 * q.code_size());
        prop_assert_eq!(codes.scales.len(), 3);
        let y = q.decode(&codes).unwrap();
        prop_assert_eq!(y.len(), x.len());
        let err: f64 = x.iter().zip(&y).map(|(a, b)| f64::from(a - b).powi(2)).sum();
        let energy: f64 = x.iter().map(|a| f64::from(*a).powi(2)).sum();
        prop_assert!(err <= energy + 1e-12, "{} > {}", err, energy);
    }
}

// ------------------------------------------------------------ distortion

/// `E|z − κ Q(z/κ)|²` per coordinate over `n` seeded Gaussian blocks.
fn gaussian_mse(kappa: f64, n: usize, seed: u64) -> f64 {
    gaussian_error(kappa, n, seed).0 / (8.0 * n as f64)
}

/// `Σ|z − κ Q(z/κ)|²` and `Σ|z|²` over `n` seeded N(0, 1) blocks.
fn gaussian_error(kappa: f64, n: usize, seed: u64) -> (f64, f64) {
    let mut rng = SplitMix64(seed);
    let (mut err, mut energy) = (0.0, 0.0);
    for _ in 0..n {
        let z = rng.gaussian8();
        let scaled = z.map(|v| (f64::from(v) / kappa) as f32);
        let c = e8p::decode(e8p::encode(&scaled).unwrap());
        for (&a, &b) in z.iter().zip(&c) {
            err += (f64::from(a) - kappa * f64::from(b)).powi(2);
            energy += f64::from(a).powi(2);
        }
    }
    (err, energy)
}

/// The documented search that chose `GAUSSIAN_SCALE`:
/// `cargo test -p hydron-core --test quant -- --ignored gaussian_scale_search --nocapture`.
#[test]
#[ignore]
fn gaussian_scale_search() {
    let f = |k: f64| gaussian_mse(k, 200_000, 1);
    let (mut lo, mut hi) = (0.5f64, 1.5f64);
    let phi = (5f64.sqrt() - 1.0) / 2.0;
    while hi - lo > 1e-3 {
        let a = hi - phi * (hi - lo);
        let b = lo + phi * (hi - lo);
        if f(a) < f(b) {
            hi = b;
        } else {
            lo = a;
        }
    }
    let best = 0.5 * (lo + hi);
    eprintln!("optimal scale {best:.4}, MSE {:.5}", f(best));
}

#[test]
fn gaussian_scale_is_a_minimum() {
    let k = f64::from(GAUSSIAN_SCALE);
    let at = gaussian_mse(k, 20_000, 3);
    assert!(
        at < gaussian_mse(k * 1.02, 20_000, 3),
        "a larger scale is better"
    );
    assert!(
        at < gaussian_mse(k * 0.98, 20_000, 3),
        "a smaller scale is better"
    );
}

/// NMSE (`Σ|x − x̂|² / Σ|x|²`) of the codebook on i.i.d. N(0, 1) 8-dim
/// blocks at the fixed scale `GAUSSIAN_SCALE` (the prototype:
/// 0.0911; the bound is 2^-4 = 0.0625; scalar Lloyd–Max 0.1175).
#[test]
fn gaussian_nmse_of_the_codebook() {
    let (err, energy) = gaussian_error(f64::from(GAUSSIAN_SCALE), 50_000, 11);
    let nmse = err / energy;
    eprintln!("E8P NMSE on N(0,1) blocks: {nmse:.5}");
    assert!((0.085..0.097).contains(&nmse), "{nmse}");
}

/// NMSE of the whole quantizer on 384-dim Gaussian vectors (rotation,
/// per-vector scale).
#[test]
fn gaussian_nmse_of_the_quantizer() {
    let dim = 384;
    let q = LatticeQuantizer::new(dim, 2, 1).unwrap();
    let mut rng = SplitMix64(12);
    let x: Vec<f32> = (0..500 * dim / 8).flat_map(|_| rng.gaussian8()).collect();
    let y = q.decode(&q.encode(&x).unwrap()).unwrap();
    let err: f64 = x
        .iter()
        .zip(&y)
        .map(|(a, b)| f64::from(a - b).powi(2))
        .sum();
    let energy: f64 = x.iter().map(|a| f64::from(*a).powi(2)).sum();
    let nmse = err / energy;
    eprintln!("LatticeQuantizer NMSE, 384-d Gaussian: {nmse:.5}");
    assert!((0.085..0.097).contains(&nmse), "{nmse}");
}

// ------------------------------------------------------------ quantizer

#[test]
fn quantizer_errors_name_the_place() {
    assert_eq!(
        LatticeQuantizer::new(0, 2, 0),
        Err(QuantError::ZeroDimension)
    );
    let err = LatticeQuantizer::new(8, 3, 0).unwrap_err();
    assert_eq!(err, QuantError::UnsupportedBits { bits: 3 });
    assert!(err.to_string().contains("2 and 4 are"));
    let q = LatticeQuantizer::new(5, 2, 0).unwrap();
    assert_eq!(
        q.encode(&[0.0; 7]),
        Err(QuantError::InputLength { len: 7, dim: 5 })
    );
    let mut x = vec![0.5f32; 15];
    x[13] = f32::INFINITY;
    assert_eq!(
        q.encode(&x),
        Err(QuantError::Infinite {
            vector: 2,
            coordinate: 3,
            value: f32::INFINITY
        })
    );
    x[13] = 0.0;
    x[6] = f32::NAN;
    assert_eq!(
        q.encode(&x),
        Err(QuantError::NotANumber {
            vector: 1,
            coordinate: 1
        })
    );
    x[6] = 0.0;
    let mut codes = q.encode(&x).unwrap();
    codes.scales[2] = -1.0;
    assert_eq!(
        q.decode(&codes),
        Err(QuantError::InvalidScale {
            vector: 2,
            value: -1.0
        })
    );
    codes.scales.pop();
    assert_eq!(
        q.decode(&codes),
        Err(QuantError::ScaleCount {
            scales: 2,
            vectors: 3,
            expected: 3
        })
    );
    codes.codes.pop();
    assert_eq!(
        q.decode(&codes),
        Err(QuantError::CodesLength {
            len: 5,
            code_size: 2
        })
    );
    let unit = q.clone().with_scale(ScaleMode::Unit);
    let with_scales = q.encode(&x).unwrap();
    assert_eq!(
        unit.decode(&with_scales),
        Err(QuantError::ScaleCount {
            scales: 3,
            vectors: 3,
            expected: 0
        })
    );
}

#[test]
fn quantizer_handles_zero_huge_and_tiny_vectors() {
    let q = LatticeQuantizer::new(10, 2, 3).unwrap();
    let mut x = vec![0.0f32; 30];
    x[10..20].fill(3.0e38);
    x[20] = 1e-45;
    let codes = q.encode(&x).unwrap();
    assert_eq!(codes.scales[0], 0.0);
    assert!(codes.scales[1].is_finite() && codes.scales[1] > 1e37);
    let y = q.decode(&codes).unwrap();
    assert!(y[..10].iter().all(|&v| v == 0.0));
    assert!(y.iter().all(|v| v.is_finite()));
    let rel: f64 = x[10..20]
        .iter()
        .zip(&y[10..20])
        .map(|(a, b)| (f64::from(*a) - f64::from(*b)).powi(2))
        .sum::<f64>()
        / x[10..20].iter().map(|a| f64::from(*a).powi(2)).sum::<f64>();
    assert!(rel < 0.2, "{rel}");
}

#[test]
fn unit_mode_stores_no_scale_and_matches_per_vector_on_unit_vectors() {
    let dim = 64;
    let mut rng = SplitMix64(4);
    let mut x: Vec<f32> = (0..dim).map(|_| rng.symmetric() as f32).collect();
    let norm = x.iter().map(|a| a * a).sum::<f32>().sqrt();
    x.iter_mut().for_each(|a| *a /= norm);
    let per = LatticeQuantizer::new(dim, 2, 9).unwrap();
    let unit = per.clone().with_scale(ScaleMode::Unit);
    let a = per.encode(&x).unwrap();
    let b = unit.encode(&x).unwrap();
    assert!(b.scales.is_empty());
    assert_eq!(a.codes, b.codes);
    let ya = per.decode(&a).unwrap();
    let yb = unit.decode(&b).unwrap();
    for (p, u) in ya.iter().zip(&yb) {
        assert!((p - u).abs() < 1e-5);
    }
}

#[test]
fn codes_are_little_endian_block_codes() {
    let q = LatticeQuantizer::new(16, 2, 0)
        .unwrap()
        .with_rotation(false)
        .with_scale(ScaleMode::Unit);
    // Unit mode, no rotation: blocks are x / (GAUSSIAN_SCALE / √16).
    let divisor = f64::from(GAUSSIAN_SCALE) / 4.0;
    let x: Vec<f32> = (0..16).map(|i| ((i % 5) as f32 - 2.0) * 0.2).collect();
    let codes = q.encode(&x).unwrap();
    for b in 0..2 {
        let block: [f32; 8] = core::array::from_fn(|i| (f64::from(x[8 * b + i]) / divisor) as f32);
        let expected = e8p::encode(&block).unwrap();
        assert_eq!(
            u16::from_le_bytes([codes.codes[2 * b], codes.codes[2 * b + 1]]),
            expected
        );
    }
}

#[test]
fn the_seed_chooses_the_rotation() {
    let mut rng = SplitMix64(8);
    let x: Vec<f32> = (0..96).map(|_| rng.symmetric() as f32).collect();
    let a = LatticeQuantizer::new(96, 2, 1).unwrap().encode(&x).unwrap();
    let b = LatticeQuantizer::new(96, 2, 1).unwrap().encode(&x).unwrap();
    let c = LatticeQuantizer::new(96, 2, 2).unwrap().encode(&x).unwrap();
    assert_eq!(a, b);
    assert_ne!(a.codes, c.codes);
}

/// The codes are a file format: these bytes must never change (the code
/// layout, the pattern order, the tie rule, the rotation's signs and
/// arithmetic, the scale).
#[test]
fn golden_codes() {
    let blocks = [
        [0.1f32, -0.7, 1.3, 2.2, -0.05, 0.0, 0.4, -1.9],
        [0.0; 8],
        [0.125; 8],
    ];
    assert_eq!(e8p::encode_many(&blocks).unwrap(), [0x3933, 0x007F, 0x8000]);

    let x: Vec<f32> = (0..100)
        .map(|i| ((i * 7919 % 201) as f32 - 100.0) / 37.0)
        .collect();
    let q = LatticeQuantizer::new(50, 2, 12345).unwrap();
    let codes = q.encode(&x).unwrap();
    assert_eq!(
        codes.codes,
        [
            15, 179, 99, 171, 196, 214, 24, 144, 74, 216, 180, 0, 230, 103, 5, 52, 193, 139, 205,
            86, 16, 131, 234, 131, 245, 26, 38, 33
        ]
    );
    assert_eq!(
        codes.scales.iter().map(|s| s.to_bits()).collect::<Vec<_>>(),
        [1069024540, 1068974963]
    );
}

/// A batch large enough to be split across threads (with `parallel`)
/// codes every vector as it codes it alone, in both scale modes, and
/// names the first bad vector.
#[test]
fn large_batches_equal_one_vector_at_a_time() {
    let dim = 40;
    let n = 1000; // 5000 blocks
    let mut rng = SplitMix64(31);
    let x: Vec<f32> = (0..n * dim).map(|_| rng.symmetric() as f32).collect();
    for mode in [ScaleMode::PerVector, ScaleMode::Unit] {
        let q = LatticeQuantizer::new(dim, 2, 5).unwrap().with_scale(mode);
        let all = q.encode(&x).unwrap();
        let decoded = q.decode(&all).unwrap();
        for (i, v) in x.chunks_exact(dim).enumerate() {
            let one = q.encode(v).unwrap();
            assert_eq!(
                one.codes,
                all.codes[i * q.code_size()..(i + 1) * q.code_size()]
            );
            assert_eq!(one.scales, all.scales.get(i..i + 1).unwrap_or(&[]));
            assert_eq!(q.decode(&one).unwrap(), decoded[i * dim..(i + 1) * dim]);
        }
    }
    let mut bad = x.clone();
    bad[(n - 3) * dim + 7] = f32::NAN;
    bad[(n - 1) * dim] = f32::INFINITY;
    let q = LatticeQuantizer::new(dim, 2, 5).unwrap();
    assert_eq!(
        q.encode(&bad),
        Err(QuantError::NotANumber {
            vector: n - 3,
            coordinate: 7
        })
    );
}
