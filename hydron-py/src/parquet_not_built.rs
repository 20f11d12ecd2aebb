//! A build without the `parquet` feature: the items `file` uses for a
//! Parquet file (see `parquet.rs`), each of which raises
//! `hydron.errors.FeatureNotBuiltError`. A Parquet file is still told by
//! its magic, so that `load`, `loads` and `iter_chunks` say what it is and
//! how to get a build that reads it, instead of "not a hydron file".
//! The Parquet functions themselves (`save_parquet`, ...) are not in the
//! module; `python/hydron/__init__.py` puts in their place functions that
//! raise the same error.

use std::path::Path;

use hydron_codec::{CodecError, Policy};
use hydron_core::{E8Root, Gf8};
use pyo3::prelude::*;

use crate::errors;
use crate::stream;

/// Rows per row group when none is given (`hydron.DEFAULT_ROW_GROUP_VECTORS`;
/// the `parquet` feature's build takes it from hydron-codec and checks it
/// is this).
pub const DEFAULT_ROW_GROUP_VECTORS: usize = 262_144;

/// Whether `head` starts with Parquet's magic (`PAR1`, the first and last
/// four bytes of every Parquet file).
pub fn looks_like_parquet(head: &[u8]) -> bool {
    head.starts_with(b"PAR1")
}

/// Write options: none can be made without the feature.
#[derive(Clone, Copy)]
pub enum Options {}

/// A reader of a Parquet file: none can be opened without the feature.
pub enum Reader {}

impl Reader {
    /// Never called: there is no `Reader`.
    pub fn read_chunk(&mut self, _out: &mut Vec<Gf8>) -> Result<usize, CodecError> {
        match *self {}
    }
}

/// `hydron.errors.FeatureNotBuiltError` for `what`, which needs Parquet.
fn not_built(py: Python<'_>, what: &str) -> PyErr {
    errors::feature_not_built(py, what, "parquet")
}

/// Refuses: Parquet options are for writing Parquet.
pub fn container_options(_chunk_vectors: u64, _durable: bool) -> PyResult<Options> {
    Python::attach(|py| Err(not_built(py, "writing Parquet")))
}

/// Never called: there are no [`Options`].
pub fn save(_py: Python<'_>, _path: &Path, _vectors: &[Gf8], options: Options) -> PyResult<()> {
    match options {}
}

/// Never called: there are no [`Options`].
pub fn to_vec(_vectors: &[Gf8], options: Options) -> Result<Vec<u8>, CodecError> {
    match options {}
}

/// A Parquet file written in pieces: none can be started without the
/// feature.
pub enum Writer {}

/// Refuses, before anything is created: writing Parquet needs the feature.
pub fn writer(
    py: Python<'_>,
    _path: &Path,
    _compression: Option<&str>,
    _row_group_vectors: Option<u64>,
    _durable: bool,
    _codes: bool,
) -> PyResult<Writer> {
    Err(not_built(py, "writing Parquet"))
}

impl Writer {
    /// Never called: there is no `Writer`.
    pub fn write(&mut self, _vectors: &[Gf8]) -> Result<(), CodecError> {
        match *self {}
    }

    /// Never called: there is no `Writer`.
    pub fn write_codes(&mut self, _codes: &[E8Root]) -> Result<(), CodecError> {
        match *self {}
    }

    /// Never called: there is no `Writer`.
    pub fn vectors(&self) -> u64 {
        match *self {}
    }

    /// Never called: there is no `Writer`.
    pub fn finish(self) -> Result<(), CodecError> {
        match self {}
    }
}

/// The error for the Parquet file (or data set directory) at `path`.
fn at(py: Python<'_>, path: &Path) -> PyErr {
    let what = if path.is_dir() {
        "a directory, read as a Parquet data set"
    } else {
        "a Parquet file"
    };
    not_built(py, &format!("{}: {what}", path.display()))
}

/// Refuses the Parquet file at `path`.
pub fn open_path(py: Python<'_>, path: &Path, _policy: Policy) -> PyResult<Reader> {
    Err(at(py, path))
}

/// Refuses a Parquet file held in memory.
pub fn vectors_from_bytes(
    py: Python<'_>,
    _source: &Bound<'_, PyAny>,
    _policy: Policy,
) -> PyResult<Vec<Gf8>> {
    Err(not_built(py, "the data is a Parquet file"))
}

/// Refuses a Parquet file in a file object, before reading it on.
pub fn vectors_from_stream(
    py: Python<'_>,
    _stream: stream::Stream,
    _policy: Policy,
) -> PyResult<Vec<Gf8>> {
    Err(not_built(py, "the file object holds a Parquet file"))
}

/// Refuses the Parquet file at `path`.
pub fn load_path(py: Python<'_>, path: &Path, _policy: Policy) -> PyResult<Vec<Gf8>> {
    Err(at(py, path))
}
