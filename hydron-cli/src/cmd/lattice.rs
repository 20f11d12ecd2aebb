//! `hydron inspect` and `hydron validate` of lattice codes (a fory
//! `LatticeCodes` message, or Parquet with the `hydron.quant.*` footer
//! keys; found from the content, from a path or a stream, by
//! [`crate::input`], which reads and checks them whole): their parameters,
//! or what is wrong and where.

use std::fmt::Write as _;

use hydron_codec::quant::{CodesScale, LatticeCodes};
use serde_json::json;

use super::{bytes, print, print_json};
use crate::cli::{InspectArgs, ValidateArgs};
use crate::error::CliError;
use crate::input::{Input, Kind};

/// Describes the lattice codes `input` holds (or, after what it found,
/// why they are not valid).
pub fn run(
    args: &InspectArgs,
    input: &Input,
    codes: Result<LatticeCodes, CliError>,
) -> Result<(), CliError> {
    let (codes, error) = split(codes);
    let (kind, size) = (input.kind(), input.bytes());
    if args.json {
        print_json(&to_json(args, kind, size, codes.as_ref(), error.as_ref()))?;
    } else {
        print(&to_text(args, kind, size, codes.as_ref()))?;
    }
    error.map_or(Ok(()), Err)
}

/// Checks the lattice codes `input` holds: exit 0 if every parameter,
/// length, code and scale (and, in Parquet, every checksum the file
/// holds) is right; otherwise the error names the byte offset or the row.
pub fn validate(
    args: &ValidateArgs,
    input: &Input,
    codes: Result<LatticeCodes, CliError>,
) -> Result<(), CliError> {
    let (codes, error) = split(codes);
    let file = args.file.display();
    let kind = input.kind();
    if args.json {
        let p = codes.as_ref().map(LatticeCodes::params);
        print_json(&json!({
            "file": file.to_string(),
            "format": kind.name(),
            "valid": codes.is_some(),
            "complete": codes.is_some(),
            "count": codes.as_ref().map(LatticeCodes::count),
            "dim": p.map(|p| p.dim()),
            "bits": p.map(|p| p.bits()),
            "scale_mode": p.map(|p| p.scale().name()),
            "exit_code": error.as_ref().map_or(0, CliError::code),
            "error": error.as_ref().map(CliError::to_json),
        }))?;
    } else if let Some(c) = &codes {
        let p = c.params();
        print(&format!(
            "{file}: valid: {} lattice codes of dimension {}, {} bits per coordinate, {} \
             scale (every parameter, length, code and scale checked{}); {}\n",
            c.count(),
            p.dim(),
            p.bits(),
            p.scale().name(),
            if kind.is_parquet() {
                ", and every checksum the file holds"
            } else {
                ""
            },
            kind.describe()
        ))?;
    } else {
        print(&format!("{file}: NOT valid: {}\n", kind.describe()))?;
    }
    error.map_or(Ok(()), Err)
}

fn split(codes: Result<LatticeCodes, CliError>) -> (Option<LatticeCodes>, Option<CliError>) {
    match codes {
        Ok(c) => (Some(c), None),
        Err(e) => (None, Some(e)),
    }
}

fn scale_text(scale: CodesScale) -> &'static str {
    match scale {
        CodesScale::PerVector => "per-vector (one float32 scale per vector)",
        CodesScale::Unit => "unit (no scale stored: vectors of norm 1)",
        CodesScale::Direction => "direction (no scale stored: each decoded vector normalized)",
        _ => "unknown",
    }
}

fn to_text(args: &InspectArgs, kind: Kind, size: u64, codes: Option<&LatticeCodes>) -> String {
    let mut t = String::new();
    let _ = writeln!(t, "file:       {}", args.file.display());
    let _ = writeln!(t, "size:       {}", bytes(size));
    let _ = writeln!(t, "format:     {}", kind.describe());
    if let Some(c) = codes {
        let p = c.params();
        let _ = writeln!(t, "dim:        {}", p.dim());
        let _ = writeln!(
            t,
            "bits:       {} per coordinate ({}-bit code per 8-dim block, {} bytes per vector)",
            p.bits(),
            8 * u32::from(p.bits()),
            p.code_size()
        );
        let _ = writeln!(t, "seed:       {}", p.seed());
        let _ = writeln!(t, "rotation:   {}", if p.rotation() { "on" } else { "off" });
        let _ = writeln!(t, "scale mode: {}", scale_text(p.scale()));
        let _ = writeln!(t, "count:      {} vectors", c.count());
        let _ = writeln!(
            t,
            "complete:   yes (every parameter, length, code and scale checked)"
        );
    }
    t
}

fn to_json(
    args: &InspectArgs,
    kind: Kind,
    size: u64,
    codes: Option<&LatticeCodes>,
    error: Option<&CliError>,
) -> serde_json::Value {
    let p = codes.map(LatticeCodes::params);
    json!({
        "file": args.file.display().to_string(),
        "bytes": size,
        "format": kind.name(),
        "format_description": kind.describe(),
        "complete": codes.is_some(),
        "dim": p.map(|p| p.dim()),
        "bits": p.map(|p| p.bits()),
        "code_size": p.map(|p| p.code_size()),
        "seed": p.map(|p| p.seed()),
        "rotation": p.map(|p| p.rotation()),
        "scale_mode": p.map(|p| p.scale().name()),
        "count": codes.map(LatticeCodes::count),
        "error": error.map(CliError::to_json),
    })
}

#[cfg(test)]
mod tests {
    use crate::error::Class;
    use hydron_codec::CodecError;

    #[test]
    fn bad_codes_are_corrupt() {
        let e = CodecError::BadCodes {
            offset: Some(64),
            row: None,
            detail: "x".into(),
        };
        assert_eq!(Class::of(&e), Class::Corrupt);
    }
}
