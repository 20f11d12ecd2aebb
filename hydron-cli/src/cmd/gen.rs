//! `hydron gen N OUT [--seed S] [--format F]`.

use std::time::Instant;

use hydron_core::Gf8;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, StandardNormal};

use super::{bytes, report_and_commit};
use crate::cli::GenArgs;
use crate::error::CliError;
use crate::input::CHUNK;
use crate::interrupt;
use crate::output::{over_capacity, Sink};
use crate::progress;

/// Writes `n` vectors uniformly distributed on S⁷: 8 standard normal
/// coordinates, normalized (the normal distribution is rotation-invariant).
pub fn run(args: &GenArgs) -> Result<(), CliError> {
    let started = Instant::now();
    let layout = args.layout()?;
    if let Some(e) = over_capacity(&args.output, args.format, args.n) {
        return Err(e);
    }
    let seed = args.seed.unwrap_or_else(rand::random);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut sink = Sink::create(&args.output, args.format, layout)?;
    let bar = progress::vectors(Some(args.n), "gen");
    let mut buf = Vec::with_capacity(CHUNK);
    let mut left = args.n;
    while left > 0 {
        interrupt::check()?;
        let take = left.min(CHUNK as u64);
        buf.clear();
        buf.extend((0..take).map(|_| random_unit(&mut rng)));
        sink.write(&buf)?;
        left -= take;
        bar.inc(take);
    }
    bar.finish_and_clear();
    let done = sink.finish()?;
    let size = done.size();
    let report = format!(
        "wrote {} random unit vectors (seed {seed}) in {:.2} s\n  to {} ({}, {})\n",
        args.n,
        started.elapsed().as_secs_f64(),
        args.output.display(),
        args.format.describe(),
        bytes(size),
    );
    report_and_commit(done, &report)
}

/// One random unit vector; Gaussian samples too close to zero to normalize
/// (probability far below 2^-100) are drawn again.
fn random_unit(rng: &mut ChaCha8Rng) -> Gf8 {
    loop {
        let coords: [f32; 8] = std::array::from_fn(|_| StandardNormal.sample(rng));
        if let Ok(v) = Gf8::normalize(coords) {
            return v;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_vectors_are_unit_and_repeatable() {
        let draw = |seed| {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            (0..100).map(|_| random_unit(&mut rng)).collect::<Vec<_>>()
        };
        let a = draw(7);
        assert_eq!(a, draw(7));
        assert_ne!(a, draw(8));
        assert!(a.iter().all(|v| (v.norm() - 1.0).abs() < 1e-5));
        // Symmetric: each coordinate's mean over many draws is near 0.
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let n = 20_000;
        let mut sum = [0.0f64; 8];
        for _ in 0..n {
            let v = random_unit(&mut rng);
            for (s, x) in sum.iter_mut().zip(v.as_array()) {
                *s += f64::from(*x);
            }
        }
        // sd of a coordinate is 1/√8 ≈ 0.354; 5 sd of the mean is 0.0125.
        assert!(
            sum.iter().all(|s| (s / f64::from(n)).abs() < 0.0125),
            "{sum:?}"
        );
    }
}
