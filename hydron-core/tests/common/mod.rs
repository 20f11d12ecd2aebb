//! Shared by the integration tests: a deterministic random source.
#![allow(dead_code)] // each test binary uses a different part

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
