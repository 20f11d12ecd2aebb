//! `hydron._hydron`: the native module of the `hydron` Python package.
//!
//! Thin PyO3 bindings over hydron-core (the math) and hydron-codec (every
//! format; Arrow through the PyCapsule interface, `capsule`). Each function
//! converts its arguments (`arrays`: numpy in place, no copies where the
//! layout allows), releases the GIL around the Rust call unless its input
//! is tiny (`gil`), and converts the result, or the error (`errors`: one Python class
//! per Rust error kind, with the same fields), back. The Python-facing
//! documentation is in `python/hydron/_hydron.pyi`.

mod arrays;
#[cfg(feature = "arrow")]
mod arrow;
#[cfg(feature = "arrow")]
mod capsule;
mod codec;
mod errors;
mod file;
mod gil;
mod math;
#[cfg_attr(not(feature = "parquet"), path = "parquet_not_built.rs")]
mod parquet;
mod policy;
mod quant;
mod quant_io;
mod stream;

use pyo3::prelude::*;

#[pymodule]
fn _hydron(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(math::normalize, m)?)?;
    m.add_function(wrap_pyfunction!(math::validate, m)?)?;
    m.add_function(wrap_pyfunction!(math::nearest_roots, m)?)?;
    m.add_function(wrap_pyfunction!(math::codes_to_vectors, m)?)?;
    m.add_function(wrap_pyfunction!(math::nearest_lattice_points, m)?)?;
    m.add_function(wrap_pyfunction!(math::dot, m)?)?;
    m.add_function(wrap_pyfunction!(math::geodesic_distance, m)?)?;
    m.add_function(wrap_pyfunction!(math::slerp, m)?)?;
    m.add_function(wrap_pyfunction!(math::spherical_mean, m)?)?;
    m.add_function(wrap_pyfunction!(math::e8_roots, m)?)?;
    m.add_function(wrap_pyfunction!(math::backend, m)?)?;
    m.add_function(wrap_pyfunction!(codec::encode_batch, m)?)?;
    m.add_function(wrap_pyfunction!(codec::decode_batch, m)?)?;
    m.add_function(wrap_pyfunction!(codec::encode_gf8, m)?)?;
    m.add_function(wrap_pyfunction!(codec::decode_gf8, m)?)?;
    m.add_function(wrap_pyfunction!(codec::encode_codes, m)?)?;
    m.add_function(wrap_pyfunction!(codec::decode_codes, m)?)?;
    m.add_function(wrap_pyfunction!(codec::encode_json, m)?)?;
    m.add_function(wrap_pyfunction!(codec::decode_json, m)?)?;
    m.add_function(wrap_pyfunction!(codec::encode_jsonl, m)?)?;
    m.add_function(wrap_pyfunction!(codec::decode_jsonl, m)?)?;
    m.add_function(wrap_pyfunction!(file::save, m)?)?;
    m.add_function(wrap_pyfunction!(file::dumps, m)?)?;
    m.add_function(wrap_pyfunction!(file::load, m)?)?;
    m.add_function(wrap_pyfunction!(file::loads, m)?)?;
    m.add_function(wrap_pyfunction!(file::iter_chunks, m)?)?;
    m.add_function(wrap_pyfunction!(file::detect_format, m)?)?;
    m.add_class::<file::FileWriter>()?;
    m.add_class::<file::ChunkIter>()?;
    m.add_class::<quant::LatticeQuantizer>()?;
    m.add_class::<quant::LatticeCodes>()?;
    m.add_function(wrap_pyfunction!(quant_io::save_lattice_codes, m)?)?;
    m.add_function(wrap_pyfunction!(quant_io::load_lattice_codes, m)?)?;
    m.add_function(wrap_pyfunction!(quant_io::is_lattice_codes, m)?)?;
    m.add_function(wrap_pyfunction!(quant_io::_load_file_object, m)?)?;
    #[cfg(feature = "arrow")]
    {
        m.add_class::<capsule::ArrowArray>()?;
        m.add_class::<capsule::ArrowTable>()?;
        m.add_function(wrap_pyfunction!(arrow::to_arrow, m)?)?;
        m.add_function(wrap_pyfunction!(arrow::to_arrow_table, m)?)?;
        m.add_function(wrap_pyfunction!(arrow::from_arrow, m)?)?;
        m.add_function(wrap_pyfunction!(arrow::codes_to_arrow, m)?)?;
        m.add_function(wrap_pyfunction!(arrow::codes_from_arrow, m)?)?;
    }
    #[cfg(feature = "parquet")]
    {
        m.add_function(wrap_pyfunction!(parquet::save_parquet, m)?)?;
        m.add_function(wrap_pyfunction!(parquet::save_codes_parquet, m)?)?;
        m.add_function(wrap_pyfunction!(parquet::load_parquet, m)?)?;
        m.add_function(wrap_pyfunction!(parquet::load_codes_parquet, m)?)?;
        m.add_function(wrap_pyfunction!(parquet::iter_parquet, m)?)?;
        m.add_class::<parquet::ParquetChunkIter>()?;
    }
    // What this build has (`hydron.FEATURES`); see Cargo.toml.
    let features: &[&str] = &[
        #[cfg(feature = "arrow")]
        "arrow",
        #[cfg(feature = "parquet")]
        "parquet",
    ];
    m.add("FEATURES", pyo3::types::PyFrozenSet::new(m.py(), features)?)?;
    m.add("NORM_TOLERANCE", hydron_core::NORM_TOLERANCE)?;
    m.add(
        "DEFAULT_CHUNK_VECTORS",
        hydron_codec::file::FileOptions::DEFAULT_CHUNK_VECTORS,
    )?;
    m.add(
        "MAX_CHUNK_VECTORS",
        hydron_codec::file::FileOptions::MAX_CHUNK_VECTORS,
    )?;
    m.add("MAX_BATCH_LEN", hydron_codec::fory::MAX_BATCH_LEN)?;
    m.add("MAX_CODES_LEN", hydron_codec::fory::MAX_CODES_LEN)?;
    m.add(
        "DEFAULT_ROW_GROUP_VECTORS",
        parquet::DEFAULT_ROW_GROUP_VECTORS,
    )?;
    Ok(())
}
