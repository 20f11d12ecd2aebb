//! Times each batch backend this build can run on the same vectors: a quick
//! answer to "what does SIMD buy on this machine", where criterion is not
//! at hand (it runs under WebAssembly too).
//!
//! ```text
//! cargo run --release -p hydron-core --features simd --example backends
//! # WebAssembly under Node (scripts/wasm-test.sh --bench runs exactly this):
//! CARGO_TARGET_WASM32_WASIP1_RUNNER="node $PWD/scripts/wasi-run.mjs" \
//! CARGO_TARGET_WASM32_WASIP1_RUSTFLAGS="-C target-feature=+simd128" \
//!   cargo run --release -p hydron-core --features simd --example backends --target wasm32-wasip1
//! ```
//!
//! Prints the best of several rounds per backend and kernel, in ns per vector.

use std::hint::black_box;
use std::time::{Duration, Instant};

use hydron_core::batch::{self, Backend};
use hydron_core::{E8Root, Gf8};

/// Vectors per round: 128 KiB of input.
const N: usize = 4096;
const ROUNDS: usize = 200;

/// The best time of `ROUNDS` runs of `f`, per vector.
fn best_ns_per_vector(mut f: impl FnMut()) -> f64 {
    let mut best = Duration::MAX;
    for _ in 0..ROUNDS {
        let start = Instant::now();
        f();
        best = best.min(start.elapsed());
    }
    best.as_secs_f64() * 1e9 / N as f64
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Deterministic inputs (xorshift64*), uniform in [-1, 1).
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut coord = move || {
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        (state.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 40) as f32 / (1u64 << 23) as f32 - 1.0
    };
    let raw: Vec<[f32; 8]> = (0..N).map(|_| core::array::from_fn(|_| coord())).collect();
    let units = batch::scalar::normalize(&raw)?;
    let mut roots = vec![E8Root::new(0)?; N];
    let mut normalized = vec![Gf8::ZERO; N];

    println!(
        "target {}, {N} vectors, best of {ROUNDS} rounds; dispatched backend: {}",
        std::env::consts::ARCH,
        batch::backend()
    );
    println!(
        "{:<14} {:>20} {:>20}",
        "backend", "nearest_roots ns/v", "normalize ns/v"
    );
    let backends: Vec<Backend> = batch::backends().collect();
    for backend in backends {
        let nearest =
            best_ns_per_vector(|| backend.nearest_roots_into(black_box(&units), &mut roots));
        assert_eq!(roots, batch::scalar::nearest_roots(&units), "{backend}");
        let normalize = best_ns_per_vector(|| {
            backend
                .normalize_into(black_box(&raw), &mut normalized)
                .expect("finite input");
        });
        assert_eq!(normalized, units, "{backend}");
        println!("{:<14} {nearest:>20.2} {normalize:>20.2}", backend.name());
    }
    Ok(())
}
