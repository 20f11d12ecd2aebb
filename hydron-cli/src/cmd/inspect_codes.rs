//! `hydron inspect` of a file of lattice codes (a fory `LatticeCodes`
//! message, or Parquet with the `hydron.quant.*` footer keys): its
//! parameters, read and checked whole.

use std::fmt::Write as _;
use std::io::Read;
use std::path::Path;

use hydron_codec::quant::{self, CodesScale, LatticeCodes};
use hydron_codec::{parquet, CodecError};
use serde_json::json;

use super::{bytes, print, print_json};
use crate::cli::InspectArgs;
use crate::error::CliError;

/// The two stored forms.
#[derive(Clone, Copy)]
enum Form {
    Fory,
    Parquet,
}

impl Form {
    fn name(self) -> &'static str {
        match self {
            Form::Fory => "lattice-codes",
            Form::Parquet => "parquet-lattice-codes",
        }
    }

    fn describe(self) -> &'static str {
        match self {
            Form::Fory => "lattice codes, one fory LatticeCodes message",
            Form::Parquet => "lattice codes, Parquet (FixedSizeBinary column `code`)",
        }
    }
}

/// Which form `path` holds, if it is a regular file of lattice codes;
/// `None` for anything else (the generic inspection reports it).
fn sniff(path: &Path) -> Option<Form> {
    if path.as_os_str() == "-" || !std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
        return None;
    }
    let mut head = Vec::with_capacity(16);
    std::fs::File::open(path)
        .ok()?
        .take(16)
        .read_to_end(&mut head)
        .ok()?;
    if quant::looks_like_lattice_codes(&head) {
        return Some(Form::Fory);
    }
    if parquet::looks_like_parquet(&head) && matches!(quant::parquet_params(path), Ok(Some(_))) {
        return Some(Form::Parquet);
    }
    None
}

/// Inspects `args.file` if it is a file of lattice codes: `None` if it is
/// not one.
pub fn run(args: &InspectArgs, limit: u64) -> Option<Result<(), CliError>> {
    let form = sniff(&args.file)?;
    Some(inspect(args, form, limit))
}

fn inspect(args: &InspectArgs, form: Form, limit: u64) -> Result<(), CliError> {
    let path = &args.file;
    let size = std::fs::metadata(path)
        .map_err(|e| CliError::io(path, &e))?
        .len();
    let loaded = match form {
        Form::Fory if size > limit => Err(CodecError::TooLarge {
            length: size,
            limit,
            what: "an input read whole (--max-input-bytes)",
        }),
        Form::Fory => quant::load(path),
        Form::Parquet => quant::load_parquet(path),
    };
    let (codes, error) = match loaded {
        Ok(c) => (Some(c), None),
        Err(e) => (None, Some(CliError::codec(path, &e))),
    };
    if args.json {
        print_json(&to_json(args, form, size, codes.as_ref(), error.as_ref()))?;
    } else {
        print(&to_text(args, form, size, codes.as_ref()))?;
    }
    match error {
        Some(e) => Err(e),
        None => Ok(()),
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

fn to_text(args: &InspectArgs, form: Form, size: u64, codes: Option<&LatticeCodes>) -> String {
    let mut t = String::new();
    let _ = writeln!(t, "file:       {}", args.file.display());
    let _ = writeln!(t, "size:       {}", bytes(size));
    let _ = writeln!(t, "format:     {}", form.describe());
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
    form: Form,
    size: u64,
    codes: Option<&LatticeCodes>,
    error: Option<&CliError>,
) -> serde_json::Value {
    let p = codes.map(LatticeCodes::params);
    json!({
        "file": args.file.display().to_string(),
        "bytes": size,
        "format": form.name(),
        "format_description": form.describe(),
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
    use super::*;
    use crate::error::Class;

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
