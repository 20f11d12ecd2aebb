//! `hydron inspect FILE [--json]`.

use std::fmt::Write as _;

use serde_json::json;

use super::scan::{open, scan, Scan};
use super::{bytes, print, print_json};
use crate::cli::InspectArgs;
use crate::error::CliError;
use crate::input::Kind;

/// Describes the file; fails (after printing what it found) only if the
/// file cannot be read to its end.
pub fn run(args: &InspectArgs, limit: u64) -> Result<(), CliError> {
    let mut opened = open(&args.file, args.read.column(), limit);
    if let Ok(input) = &mut opened {
        if let Some(codes) = input.take_lattice() {
            return super::lattice::run(args, input, codes);
        }
    }
    let s = scan(opened, 0, "inspect");
    if args.json {
        print_json(&to_json(args, &s))?;
    } else {
        print(&to_text(args, &s))?;
    }
    match s.error {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

fn to_json(args: &InspectArgs, s: &Scan) -> serde_json::Value {
    let m = &s.summary;
    json!({
        "file": args.file.display().to_string(),
        "bytes": s.bytes,
        "format": s.kind.map(Kind::name),
        "format_description": s.kind.map(Kind::describe),
        "version": s.header.map(|h| h.0),
        "chunk_vectors": s.header.map(|h| h.1),
        "complete": s.complete(),
        "vectors": s.vectors,
        "chunks": matches!(s.kind, Some(Kind::Container(_))).then_some(s.chunks),
        "claimed_vectors": s.parquet.as_ref().map(|p| p.claimed_vectors),
        "row_groups": s.parquet.as_ref().map(|p| p.row_groups),
        "column": s.parquet.as_ref().map(|p| json!({"name": p.column, "type": p.column_type})),
        "files": s.parts.as_ref().map(|parts| parts.iter().map(|p| json!({
            "path": p.relative.display().to_string(),
            "bytes": p.bytes,
            "rows": p.rows,
            "row_groups": p.row_groups,
        })).collect::<Vec<_>>()),
        "checksums": s.checksums(),
        "summary": {
            "valid": m.vectors - m.invalid,
            "invalid": m.invalid,
            "zero": m.zero,
            "norm_min": m.norm_min,
            "norm_max": m.norm_max,
            "top_roots": m.top_roots(args.top),
        },
        "error": s.error.as_ref().map(CliError::to_json),
    })
}

fn to_text(args: &InspectArgs, s: &Scan) -> String {
    let mut t = String::new();
    let m = &s.summary;
    let _ = writeln!(t, "file:       {}", args.file.display());
    if let Some(n) = s.bytes {
        let _ = writeln!(t, "size:       {}", bytes(n));
    }
    let Some(kind) = s.kind else {
        let _ = writeln!(t, "format:     unknown (see the error below)");
        return t;
    };
    match (s.header, &s.parts) {
        (_, Some(parts)) => {
            let _ = writeln!(
                t,
                "format:     {}, a data set of {} file{}",
                kind.describe(),
                parts.len(),
                if parts.len() == 1 { "" } else { "s" }
            );
            let _ = writeln!(t, "files:      (rows and row groups as each footer claims)");
            for p in parts {
                let _ = writeln!(
                    t,
                    "  {}  {} rows in {} row group{}, {} bytes",
                    p.relative.display(),
                    p.rows,
                    p.row_groups,
                    if p.row_groups == 1 { "" } else { "s" },
                    p.bytes
                );
            }
        }
        (Some((version, chunk)), None) => {
            let _ = writeln!(
                t,
                "format:     {}, version {version}, up to {chunk} vectors per chunk",
                kind.describe()
            );
        }
        (None, None) => {
            let _ = writeln!(t, "format:     {}", kind.describe());
        }
    }
    let read = if s.complete() {
        ""
    } else {
        " read before the error"
    };
    if let Some(p) = &s.parquet {
        let _ = writeln!(t, "column:     {} ({})", p.column, p.column_type);
        let _ = writeln!(
            t,
            "vectors:    {}{read} in {} row group{} (the footer{} {})",
            s.vectors,
            p.row_groups,
            if p.row_groups == 1 { "" } else { "s" },
            if s.parts.is_some() {
                "s claim"
            } else {
                " claims"
            },
            p.claimed_vectors
        );
    } else if let Kind::Container(_) = kind {
        let _ = writeln!(
            t,
            "vectors:    {} in {} chunk{}{read}",
            s.vectors,
            s.chunks,
            if s.chunks == 1 { "" } else { "s" }
        );
    } else {
        let _ = writeln!(t, "vectors:    {}{read}", s.vectors);
    }
    let checks = match s.checksums() {
        "ok" if kind.is_parquet() => {
            "ok (every checksum the file holds matches: hydron's CRC-32 of \
                                      each row group, page checksums where written)"
                .to_owned()
        }
        "ok" => format!(
            "ok (header, {} chunk{} and trailer match)",
            s.chunks,
            if s.chunks == 1 { "" } else { "s" }
        ),
        "none" if kind.is_parquet() => "none of hydron's (the file was written by another \
                                         tool, or rewritten; page checksums, where its writer \
                                         stored them, match)"
            .to_owned(),
        "none" => "none (this form has no checksums)".to_owned(),
        "failed" => "FAILED (see the error below)".to_owned(),
        _ => "not all checked (reading stopped, see the error below)".to_owned(),
    };
    let _ = writeln!(t, "checksums:  {checks}");
    let _ = writeln!(
        t,
        "valid:      {} (invalid: {})",
        m.vectors - m.invalid,
        m.invalid
    );
    let _ = writeln!(t, "zero:       {}", m.zero);
    if let (Some(lo), Some(hi)) = (m.norm_min, m.norm_max) {
        let _ = writeln!(t, "norm:       {lo} ..= {hi} (finite non-zero vectors)");
    }
    let top = m.top_roots(args.top);
    if !top.is_empty() {
        let _ = writeln!(
            t,
            "top E8 roots (nearest root of each valid non-zero vector):"
        );
        for r in top {
            let _ = writeln!(
                t,
                "  code {:>3}  {:<38} {:>10} vectors {:>7.3}%",
                r.code, r.root, r.count, r.percent
            );
        }
    }
    t
}
