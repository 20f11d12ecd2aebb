//! Shared by the integration tests: deterministic random sources, the batch
//! backends under test, and the precondition rule.
#![allow(dead_code)] // each test binary uses a different part

mod precondition;
pub mod search_checks;
pub mod search_oracle;

pub use precondition::precondition;

use hydron_core::Gf8;

/// A small deterministic generator (SplitMix64), so failures reproduce.
pub struct SplitMix64(pub u64);

impl SplitMix64 {
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in (0, 1].
    pub fn unit_interval(&mut self) -> f64 {
        ((self.next_u64() >> 11) + 1) as f64 / (1u64 << 53) as f64
    }

    /// Uniform in [-1, 1).
    pub fn symmetric(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 52) as f64 - 1.0
    }

    /// Eight standard normal samples (Box–Muller), so that the normalized
    /// vector is uniform on the sphere.
    pub fn gaussian8(&mut self) -> [f32; 8] {
        let mut out = [0.0f32; 8];
        for pair in out.chunks_exact_mut(2) {
            let radius = (-2.0 * self.unit_interval().ln()).sqrt();
            let angle = 2.0 * core::f64::consts::PI * self.unit_interval();
            pair[0] = (radius * angle.cos()) as f32;
            pair[1] = (radius * angle.sin()) as f32;
        }
        out
    }
}

/// A small deterministic generator (xorshift64*), so failures reproduce.
pub struct Rng(pub u64);

impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in [-1, 1).
    pub fn coord(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 / (1u64 << 23) as f32 - 1.0
    }

    pub fn array(&mut self) -> [f32; 8] {
        core::array::from_fn(|_| self.coord())
    }

    pub fn unit(&mut self) -> Gf8 {
        Gf8::normalize(self.array()).unwrap()
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
}

/// The batch backends under test: every one this build and CPU offer,
/// scalar first. A build with `simd` on x86-64 must offer the AVX2 one, or
/// its kernels go untested: a [`precondition`] (an x86-64 CPU with AVX2
/// and FMA), so this fails under `HYDRON_REQUIRE_ALL=1` and says so
/// otherwise.
pub fn backends() -> Vec<hydron_core::batch::Backend> {
    use hydron_core::batch::{self, Backend};
    let all: Vec<Backend> = batch::backends().collect();
    assert_eq!(all[0], Backend::Scalar);
    assert!(all.contains(&batch::backend()));
    if cfg!(all(feature = "simd", target_arch = "x86_64")) {
        precondition(
            all.contains(&Backend::Avx2Fma),
            "an x86-64 CPU with AVX2 and FMA (the AVX2 batch kernels are not tested here)",
        );
    }
    all
}

/// Runs `f` when the build has hydron's AVX2 kernels (`simd` on x86-64) and
/// the CPU has AVX2; a CPU without AVX2 is then a missing precondition.
/// Other builds and targets (wasm32) skip `f`. (Under `cfg`, not `cfg!`:
/// the detection macro does not compile for other targets.)
pub fn with_avx2(what: &str, f: impl FnOnce()) {
    #[cfg(all(feature = "simd", target_arch = "x86_64"))]
    {
        if std::is_x86_feature_detected!("avx2") {
            f();
            return;
        }
        precondition(false, &format!("an x86-64 CPU with AVX2 ({what})"));
    }
    #[cfg(not(all(feature = "simd", target_arch = "x86_64")))]
    drop((what, f));
}
