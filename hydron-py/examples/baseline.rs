//! Rust's own times for what `python/bench.py` times through Python: the
//! medians the Python figures are compared with, printed as one JSON object.
//!
//! ```sh
//! cargo run --release -p hydron-py --example baseline -- 1048576 points.hyd 7
//! ```
//!
//! Arguments: the number of vectors N, a hydron file holding N unit vectors
//! (written by bench.py), and the number of runs (the median is printed).
//! Times are per call in seconds: `nearest_roots` (the batch kernel on
//! `&[Gf8]`, allocating its output as the Python call does),
//! `nearest_roots_checked` (the same on raw arrays, validated in the same
//! pass, as `hydron.nearest_roots` does by default), `normalize`,
//! `validate`, and the validated `file::load` of the file.

use std::error::Error;
use std::time::Instant;

use hydron_codec::file;
use hydron_codec::Policy;
use hydron_core::{batch, Gf8};

fn median(runs: usize, mut f: impl FnMut()) -> f64 {
    let mut times: Vec<f64> = (0..runs.max(1))
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64()
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

fn main() -> Result<(), Box<dyn Error>> {
    let mut args = std::env::args().skip(1);
    let usage = "usage: baseline N FILE [RUNS]";
    let n: usize = args.next().ok_or(usage)?.parse()?;
    let path = args.next().ok_or(usage)?;
    let runs: usize = args.next().map_or(Ok(7), |r| r.parse())?;

    let vectors = file::load(&path, Policy::Strict)?;
    if vectors.len() != n {
        return Err(format!("{path} holds {} vectors, not {n}", vectors.len()).into());
    }
    // Raw arrays for the calls that take them, in memory advised for huge
    // pages as the Python module's arrays are (hydron_core::huge).
    let mut arrays: Vec<[f32; 8]> = hydron_core::huge::zeroed_vec(n);
    arrays.copy_from_slice(Gf8::slice_as_arrays(&vectors));

    let roots = median(runs, || {
        std::hint::black_box(batch::nearest_roots(std::hint::black_box(&vectors)));
    });
    let roots_checked = median(runs, || {
        std::hint::black_box(batch::nearest_roots_checked(std::hint::black_box(&arrays)).ok());
    });
    let normalize = median(runs, || {
        std::hint::black_box(batch::normalize(std::hint::black_box(&arrays)).ok());
    });
    let validate = median(runs, || {
        std::hint::black_box(batch::validate(std::hint::black_box(&arrays)).ok());
    });
    let load = median(runs, || {
        std::hint::black_box(file::load(&path, Policy::Strict).ok());
    });
    println!(
        "{{\"n\": {n}, \"runs\": {runs}, \"backend\": \"{}\", \"nearest_roots\": {roots:e}, \
         \"nearest_roots_checked\": {roots_checked:e}, \
         \"normalize\": {normalize:e}, \"validate\": {validate:e}, \"load\": {load:e}}}",
        batch::backend()
    );
    Ok(())
}
