//! The lattice decoder against the old `f64` decoder, interleaved: both
//! decode the same 4096 inputs (the `batch_lattice` bench's, `raw × 4`),
//! one after the other, `pairs` times, and the median of the per-pair
//! ratios is printed with its 10th and 90th percentiles.
//!
//! Criterion (`benches/math.rs`, group `batch_lattice`) times one path after
//! the other, so a host that changes speed between them moves the ratio;
//! alternating within milliseconds cancels that. The issue-10 goal is a
//! ratio of at least 5.
//!
//! ```sh
//! cargo run --release --example lattice_ratio -- 3000
//! ```

#[path = "../hydron-core/tests/common/old_lattice.rs"]
mod old_lattice;

use std::hint::black_box;
use std::time::Instant;

use hydron_core::E8Point;

const BATCH: usize = 4096;

fn main() {
    let pairs: usize = match std::env::args().nth(1).map(|a| a.parse()) {
        None => 3000,
        Some(Ok(n)) if n > 0 => n,
        Some(_) => {
            eprintln!("usage: lattice_ratio [PAIRS]  (a positive number; default 3000)");
            std::process::exit(2);
        }
    };
    // xorshift64: coordinates uniform in [-1, 1), times 4.
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let input: Vec<[f32; 8]> = (0..BATCH)
        .map(|_| core::array::from_fn(|_| ((next() >> 40) as f32 / (1 << 23) as f32 - 1.0) * 4.0))
        .collect();

    let mut ratios = Vec::with_capacity(pairs);
    let mut old_ns = Vec::with_capacity(pairs);
    let mut new_ns = Vec::with_capacity(pairs);
    for _ in 0..pairs {
        let start = Instant::now();
        for x in black_box(&input) {
            let _ = black_box(old_lattice::old_nearest(x));
        }
        let old = start.elapsed().as_nanos() as f64;
        let start = Instant::now();
        for x in black_box(&input) {
            let _ = black_box(E8Point::nearest(x));
        }
        let new = start.elapsed().as_nanos() as f64;
        ratios.push(old / new);
        old_ns.push(old / BATCH as f64);
        new_ns.push(new / BATCH as f64);
    }
    for v in [&mut ratios, &mut old_ns, &mut new_ns] {
        v.sort_by(f64::total_cmp);
    }
    let at = |v: &[f64], q: f64| v[((v.len() - 1) as f64 * q) as usize];
    println!(
        "E8Point::nearest vs the old f64 decoder, {pairs} alternating pairs of {BATCH} vectors: \
         ratio p10 {:.2}, median {:.2}, p90 {:.2}; per vector, medians: old {:.1} ns, new {:.1} ns",
        at(&ratios, 0.1),
        at(&ratios, 0.5),
        at(&ratios, 0.9),
        at(&old_ns, 0.5),
        at(&new_ns, 0.5)
    );
}
