//! `policy=` and `format=` arguments: a `hydron.Policy` / `hydron.Format`
//! (both `str` enums) or their names.

use hydron_codec::file::Format;
use hydron_codec::Policy;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// The policy named by `obj` ("strict", "renormalize", "trusted", any case).
pub fn parse(obj: &Bound<'_, PyAny>) -> PyResult<Policy> {
    let name: String = obj.extract().unwrap_or_default();
    match name.to_ascii_lowercase().as_str() {
        "strict" => Ok(Policy::Strict),
        "renormalize" => Ok(Policy::Renormalize),
        "trusted" => Ok(Policy::Trusted),
        _ => Err(PyValueError::new_err(format!(
            "unknown policy {}: expected 'strict', 'renormalize' or 'trusted'",
            obj.repr().map_or_else(|_| "?".into(), |r| r.to_string())
        ))),
    }
}

/// The policy argument, `"strict"` when absent.
pub fn parse_or_strict(obj: Option<&Bound<'_, PyAny>>) -> PyResult<Policy> {
    obj.map_or(Ok(Policy::Strict), parse)
}

/// The container form named by `obj` ("fory" or "jsonl"); "parquet",
/// which every caller takes too, is handled before this.
pub fn format(obj: Option<&Bound<'_, PyAny>>) -> PyResult<Format> {
    let Some(obj) = obj else {
        return Ok(Format::Fory);
    };
    let name: String = obj.extract().unwrap_or_default();
    match name.to_ascii_lowercase().as_str() {
        "fory" => Ok(Format::Fory),
        "jsonl" => Ok(Format::JsonLines),
        _ => Err(PyValueError::new_err(format!(
            "unknown format {}: expected 'fory', 'jsonl' or 'parquet'",
            obj.repr().map_or_else(|_| "?".into(), |r| r.to_string())
        ))),
    }
}
