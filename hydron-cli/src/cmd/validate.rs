//! `hydron validate FILE [--json]`.

use std::fmt::Write as _;

use serde_json::json;

use super::scan::{open, scan, Scan};
use super::{print, print_json};
use crate::cli::ValidateArgs;
use crate::error::{Class, CliError, Place};
use crate::input::Kind;

/// Checks the whole file: exit 0 if every checksum matches and every
/// vector is valid; otherwise lists what is wrong and where, and fails with
/// the class of the first structural error, or [`Class::Invalid`]. Lattice
/// codes (found from the content, from a path or a stream) are checked
/// whole instead: every parameter, length, code and scale.
pub fn run(args: &ValidateArgs, limit: u64) -> Result<(), CliError> {
    let mut opened = open(&args.file, args.read.column(), limit);
    if let Ok(input) = &mut opened {
        if let Some(codes) = input.take_lattice() {
            return super::lattice::validate(args, input, codes);
        }
    }
    let s = scan(opened, args.max_problems, "validate");
    let failure = verdict(args, &s);
    if args.json {
        let mut v = to_json(args, &s);
        v["exit_code"] = json!(failure.as_ref().map_or(0, CliError::code));
        v["error"] = json!(failure.as_ref().map(CliError::to_json));
        print_json(&v)?;
    } else {
        print(&to_text(args, &s))?;
    }
    match failure {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// The error to exit with, if any: a structural one first (the file could
/// not be read to its end), else one summing up the invalid vectors.
fn verdict(args: &ValidateArgs, s: &Scan) -> Option<CliError> {
    if let Some(e) = &s.error {
        return Some(CliError {
            class: e.class,
            message: e.message.clone(),
            place: e.place.clone(),
        });
    }
    let invalid = s.summary.invalid;
    if invalid == 0 {
        return None;
    }
    // Invalid data fails however many problems are listed (0 included).
    let (first, place) = match s.problems.first() {
        Some(p) => (format!("; the first is {}", p.describe()), p.place),
        None => (String::new(), Place::default()),
    };
    Some(CliError {
        class: Class::Invalid,
        message: format!(
            "{}: {invalid} of {} vectors {} invalid{first}",
            args.file.display(),
            s.vectors,
            if invalid == 1 { "is" } else { "are" },
        ),
        place: Box::new(place),
    })
}

fn to_json(args: &ValidateArgs, s: &Scan) -> serde_json::Value {
    json!({
        "file": args.file.display().to_string(),
        "format": s.kind.map(Kind::name),
        "valid": s.complete() && s.summary.invalid == 0,
        "complete": s.complete(),
        "vectors": s.vectors,
        "chunks": matches!(s.kind, Some(Kind::Container(_))).then_some(s.chunks),
        "row_groups": s.parquet.as_ref().map(|p| p.row_groups),
        "column": s.parquet.as_ref().map(|p| json!({"name": p.column, "type": p.column_type})),
        "checksums": s.checksums(),
        "invalid_vectors": s.summary.invalid,
        "problems": s.problems,
        "problems_truncated": s.summary.invalid > s.problems.len() as u64,
    })
}

fn to_text(args: &ValidateArgs, s: &Scan) -> String {
    let mut t = String::new();
    let file = args.file.display();
    for p in &s.problems {
        let _ = writeln!(t, "{file}: {}", p.describe());
    }
    let more = s.summary.invalid - s.problems.len() as u64;
    if more > 0 {
        let _ = writeln!(t, "{file}: ... and {more} more invalid vectors");
    }
    let Some(kind) = s.kind else {
        return t;
    };
    if s.complete() && s.summary.invalid == 0 {
        let checks = if let Some(p) = &s.parquet {
            let plural = if p.row_groups == 1 { "" } else { "s" };
            if p.hydron_checksums {
                format!(
                    ", hydron's checksums match ({} row group{plural})",
                    p.row_groups
                )
            } else {
                format!(
                    " ({} row group{plural}; it holds none of hydron's checksums, so only \
                     page checksums, where its writer stored them, were checked)",
                    p.row_groups
                )
            }
        } else if kind.has_checksums() {
            format!(
                ", all checksums match ({} chunk{})",
                s.chunks,
                if s.chunks == 1 { "" } else { "s" }
            )
        } else {
            " (this form has no checksums)".to_owned()
        };
        let _ = writeln!(
            t,
            "{file}: valid: {} vectors{checks}; {}",
            s.vectors,
            kind.describe()
        );
    } else if !s.complete() {
        let _ = writeln!(
            t,
            "{file}: NOT valid: reading stopped after {} vectors ({} invalid)",
            s.vectors, s.summary.invalid
        );
    } else {
        let _ = writeln!(
            t,
            "{file}: NOT valid: {} of {} vectors are invalid",
            s.summary.invalid, s.vectors
        );
    }
    t
}
