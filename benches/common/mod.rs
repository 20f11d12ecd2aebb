//! What both benchmarks share: deterministic input data.

use hydron_core::{batch, Gf8};

/// A small deterministic generator (xorshift64*), so every run sees the
/// same data.
pub struct Rng(pub u64);

impl Rng {
    /// Uniform in [-1, 1).
    pub fn next_f32(&mut self) -> f32 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let bits = self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 40;
        bits as f32 / (1u64 << 23) as f32 - 1.0
    }

    /// Eight uniform coordinates.
    pub fn array(&mut self) -> [f32; 8] {
        core::array::from_fn(|_| self.next_f32())
    }

    /// `n` raw vectors.
    pub fn arrays(&mut self, n: usize) -> Vec<[f32; 8]> {
        (0..n).map(|_| self.array()).collect()
    }

    /// `n` unit vectors (normalized raw vectors).
    #[allow(dead_code)] // not every bench uses every helper
    pub fn units(&mut self, n: usize) -> Vec<Gf8> {
        batch::scalar::normalize(&self.arrays(n)).expect("finite input")
    }
}
