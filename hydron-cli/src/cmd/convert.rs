//! `hydron convert IN OUT --to FORMAT`.

use std::time::Instant;

use hydron_codec::Policy;

use super::{bytes, note_column, report_and_commit};
use crate::cli::ConvertArgs;
use crate::error::CliError;
use crate::input::Input;
use crate::interrupt;
use crate::output::Sink;
use crate::progress;

/// Streams the input to the output chunk by chunk (constant memory for
/// container and JSON Lines inputs and container and JSON outputs). On any
/// error, the report on standard output included, a regular output file is
/// not created, or is left as it was.
pub fn run(args: &ConvertArgs, limit: u64) -> Result<(), CliError> {
    let started = Instant::now();
    let layout = args.layout()?;
    let policy = if args.renormalize {
        Policy::Renormalize
    } else {
        Policy::Strict
    };
    let mut input = Input::open(&args.input, policy, limit, args.read.column())?;
    note_column(&input);
    let mut sink = Sink::create_apart_from(&args.output, args.to, layout, &input.identities())?;
    let bar = progress::vectors(input.expected_vectors(), "convert");
    let mut buf = Vec::new();
    while let Some(chunk) = input.read_chunk(&mut buf)? {
        interrupt::check()?;
        sink.write(&buf)?;
        bar.inc(chunk.len as u64);
    }
    bar.finish_and_clear();
    let done = sink.finish()?;
    let (vectors, size) = (done.vectors(), done.size());
    let report = format!(
        "converted {vectors} vectors in {:.2} s\n  from {} ({}, {})\n  to   {} ({}, {})\n",
        started.elapsed().as_secs_f64(),
        args.input.display(),
        input.kind().describe(),
        bytes(input.bytes()),
        args.output.display(),
        args.to.describe(),
        bytes(size),
    );
    report_and_commit(done, &report)
}
