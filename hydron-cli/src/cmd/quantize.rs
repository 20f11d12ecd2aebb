//! `hydron quantize IN OUT [--bits 8|16|32]`.

use std::time::Instant;

use hydron_codec::Policy;
use hydron_core::{batch, gf8_codes, Gf8};

use super::{bytes, note_column, report_and_commit, warn};
use crate::cli::{CodesFormat, QuantizeArgs};
use crate::error::CliError;
use crate::input::Input;
use crate::interrupt;
use crate::output::Sink;
use crate::progress;

/// The angles between vectors and their decoded codes.
#[derive(Default)]
struct Angles {
    count: u64,
    sum: f64,
    max: f64,
    max_at: u64,
}

impl Angles {
    /// Adds the angles of a chunk starting at vector `first`; counts its
    /// zero vectors into `zero`.
    fn add(&mut self, first: u64, vectors: &[Gf8], decoded: &[Gf8], zero: &mut u64) {
        for (i, (v, d)) in vectors.iter().zip(decoded).enumerate() {
            if v.is_zero() {
                *zero += 1;
                continue;
            }
            let a = f64::from(v.geodesic_distance(*d));
            self.count += 1;
            self.sum += a;
            if a > self.max {
                self.max = a;
                self.max_at = first + i as u64;
            }
        }
    }
}

/// Writes the code of every vector (8 bits: its nearest E8 root, as one
/// `E8Codes` message or Parquet; 16 or 32 bits: a `LatticeCodes` message
/// or lattice-code Parquet) and reports the mean and largest angle between
/// a vector and its decoded code.
pub fn run(args: &QuantizeArgs, limit: u64) -> Result<(), CliError> {
    let started = Instant::now();
    let layout = args.layout()?;
    let mut input = Input::open(&args.input, Policy::Strict, limit, args.read.column())?;
    note_column(&input);
    let mut sink = if args.bits == 8 {
        Sink::create_apart_from(&args.output, args.to.out(), layout, &input.identities())?
    } else {
        let parquet = (args.to == CodesFormat::Parquet).then_some(layout.parquet);
        Sink::create_gf8_codes(&args.output, args.bits / 8, parquet, &input.identities())?
    };
    let bar = progress::vectors(input.expected_vectors(), "quantize");
    let mut angles = Angles::default();
    let mut zero = 0u64;
    let mut buf = Vec::new();
    let mut code_bytes = Vec::new();
    while let Some(chunk) = input.read_chunk(&mut buf)? {
        interrupt::check()?;
        match args.bits {
            8 => {
                let roots = batch::nearest_roots(&buf);
                let decoded: Vec<Gf8> = roots.iter().map(|r| r.to_gf8()).collect();
                angles.add(chunk.first, &buf, &decoded, &mut zero);
                sink.write_roots(&roots)?;
            }
            16 => {
                let codes = gf8_codes::encode16(&buf);
                angles.add(chunk.first, &buf, &gf8_codes::decode16(&codes), &mut zero);
                code_bytes.clear();
                code_bytes.extend(codes.iter().flat_map(|c| c.to_le_bytes()));
                sink.write_gf8_codes(&code_bytes, buf.len())?;
            }
            _ => {
                let codes = gf8_codes::encode32(&buf);
                let decoded: Vec<Gf8> = codes
                    .iter()
                    .map(|&c| Gf8::from_code32(c).expect("encode32 gives codes"))
                    .collect();
                angles.add(chunk.first, &buf, &decoded, &mut zero);
                code_bytes.clear();
                code_bytes.extend(codes.iter().flat_map(|c| c.to_le_bytes()));
                sink.write_gf8_codes(&code_bytes, buf.len())?;
            }
        }
        bar.inc(chunk.len as u64);
    }
    bar.finish_and_clear();
    let done = sink.finish()?;
    let (vectors, size) = (done.vectors(), done.size());
    let (what, form, nearest) = match (args.bits, args.to) {
        (8, _) => (
            "E8 root codes",
            args.to.out().describe(),
            "its nearest root",
        ),
        (16, CodesFormat::Codes) => (
            "16-bit Gf8 codes",
            "fory LatticeCodes message",
            "its decoded code",
        ),
        (16, CodesFormat::Parquet) => (
            "16-bit Gf8 codes",
            "Parquet, lattice codes",
            "its decoded code",
        ),
        (_, CodesFormat::Codes) => (
            "32-bit Gf8 codes",
            "fory LatticeCodes message",
            "its decoded code",
        ),
        (_, CodesFormat::Parquet) => (
            "32-bit Gf8 codes",
            "Parquet, lattice codes",
            "its decoded code",
        ),
    };
    let mut report = format!(
        "quantized {vectors} vectors to {what} in {:.2} s\n  from {} ({})\n  to   {} ({form}, {})\n",
        started.elapsed().as_secs_f64(),
        args.input.display(),
        input.kind().describe(),
        args.output.display(),
        bytes(size),
    );
    if angles.count > 0 {
        let mean = angles.sum / angles.count as f64;
        report.push_str(&format!(
            "angle between a vector and {nearest} ({} non-zero vectors):\n  \
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
    report_and_commit(done, &report)?;
    if zero > 0 {
        warn(&format!(
            "{zero} zero vectors have no direction, so their codes ({}) carry no information",
            if args.bits == 8 {
                "0 for +0.0 coordinates"
            } else {
                "decoded to unit vectors"
            }
        ));
    }
    Ok(())
}
