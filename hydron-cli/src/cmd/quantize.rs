//! `hydron quantize IN OUT`.

use std::time::Instant;

use hydron_codec::Policy;
use hydron_core::batch;

use super::{bytes, note_column, report_and_commit, warn};
use crate::cli::QuantizeArgs;
use crate::error::CliError;
use crate::input::Input;
use crate::interrupt;
use crate::output::Sink;
use crate::progress;

/// The angles between vectors and their nearest roots.
#[derive(Default)]
struct Angles {
    count: u64,
    sum: f64,
    max: f64,
    max_at: u64,
}

/// Writes the nearest E8 root of every vector (one `E8Codes` message, or
/// Parquet) and reports the mean and largest angle between a vector and
/// its root.
pub fn run(args: &QuantizeArgs, limit: u64) -> Result<(), CliError> {
    let started = Instant::now();
    let layout = args.layout()?;
    let mut input = Input::open(&args.input, Policy::Strict, limit, args.read.column())?;
    note_column(&input);
    let mut sink =
        Sink::create_apart_from(&args.output, args.to.out(), layout, &input.identities())?;
    let bar = progress::vectors(input.expected_vectors(), "quantize");
    let mut angles = Angles::default();
    let mut zero = 0u64;
    let mut buf = Vec::new();
    while let Some(chunk) = input.read_chunk(&mut buf)? {
        interrupt::check()?;
        let roots = batch::nearest_roots(&buf);
        for (i, (v, r)) in buf.iter().zip(&roots).enumerate() {
            if v.is_zero() {
                zero += 1;
                continue;
            }
            let a = f64::from(v.geodesic_distance(r.to_gf8()));
            angles.count += 1;
            angles.sum += a;
            if a > angles.max {
                angles.max = a;
                angles.max_at = chunk.first + i as u64;
            }
        }
        sink.write_roots(&roots)?;
        bar.inc(chunk.len as u64);
    }
    bar.finish_and_clear();
    let vectors = sink.vectors();
    let to_stderr = sink.is_stdout();
    let done = sink.finish()?;
    let size = done.size();
    let mut report = format!(
        "quantized {vectors} vectors to E8 root codes in {:.2} s\n  from {} ({})\n  to   {} ({}, {})\n",
        started.elapsed().as_secs_f64(),
        args.input.display(),
        input.kind().describe(),
        args.output.display(),
        args.to.out().describe(),
        bytes(size),
    );
    if angles.count > 0 {
        let mean = angles.sum / angles.count as f64;
        report.push_str(&format!(
            "angle between a vector and its nearest root ({} non-zero vectors):\n  \
             mean {mean:.6} rad ({:.4}°)\n  \
             max  {:.6} rad ({:.4}°) at vector {}\n",
            angles.count,
            mean.to_degrees(),
            angles.max,
            angles.max.to_degrees(),
            angles.max_at,
        ));
    }
    report.push_str(&format!("zero vectors: {zero}\n"));
    report_and_commit(done, to_stderr, &report)?;
    if zero > 0 {
        warn(&format!(
            "{zero} zero vectors have no direction, so their codes (0 for +0.0 coordinates) carry no information"
        ));
    }
    Ok(())
}
