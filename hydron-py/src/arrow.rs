//! Arrow in and out through the Arrow PyCapsule interface (`capsule`):
//! numpy vectors → a `FixedSizeList<Float32, 8>` array or a one-column
//! table without copying the floats; any Arrow array, chunked array,
//! record batch, table or stream (pyarrow, Polars, DuckDB, nanoarrow, …)
//! → a checked `(N, 8)` float32 numpy array, by hydron-codec's `arrow`
//! module.

use std::panic::AssertUnwindSafe;
use std::ptr::NonNull;
use std::sync::Arc;

use arrow_array::{Array, ArrayRef, FixedSizeListArray, Float32Array, RecordBatch, StructArray};
use arrow_buffer::{Buffer, ScalarBuffer};
use arrow_schema::{DataType, Field, Schema};
use hydron_codec::arrow as harrow;
use hydron_codec::{CodecError, Policy};
use hydron_core::{E8Root, Gf8};
use numpy::{PyArray1, PyArray2};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;

use crate::arrays::{self, codes_out, gf8_out, Vectors};
use crate::capsule::{self, ArrowArray, ArrowTable};
use crate::errors::{codec_error, detached};
use crate::policy::parse_or_strict;

/// Keeps a numpy array alive for as long as an Arrow buffer reads its
/// memory. `AssertUnwindSafe`: the owner is never touched, only dropped.
struct NumpyOwner(#[allow(dead_code)] AssertUnwindSafe<Py<PyAny>>);

/// The floats of the vectors as an Arrow buffer: the memory of the numpy
/// array they were read from (the caller's own, or numpy's C-ordered copy
/// of a strided one), kept alive by the buffer. `policy` is applied first:
/// `Renormalize` makes a new allocation when it changes anything.
fn float_buffer(py: Python<'_>, input: Vectors<'_>, policy: Policy) -> PyResult<ScalarBuffer<f32>> {
    let arrays = input.arrays();
    let (start, n) = (arrays.as_ptr(), arrays.len());
    match policy {
        Policy::Strict => {
            input.gf8(py)?;
        }
        Policy::Trusted => {}
        Policy::Renormalize => {
            let owned = arrays.to_vec();
            let units = py
                .detach(|| policy.apply(owned))
                .map_err(|e| codec_error(py, e))?;
            return Ok(owned_floats(Gf8::vec_into_arrays(units)));
        }
    }
    let Some(array) = input.array() else {
        return Ok(owned_floats(arrays.to_vec()));
    };
    let ptr = NonNull::new(start.cast_mut().cast::<u8>()).unwrap_or(NonNull::dangling());
    let owner = Arc::new(NumpyOwner(AssertUnwindSafe(
        array.clone().into_any().unbind(),
    )));
    // SAFETY: `ptr` is the start of the C-contiguous, aligned float32 data
    // of the numpy array `input.array()` (`n` vectors, 32 bytes each), and
    // `owner` holds a reference to that array, so the memory stays
    // allocated for as long as the buffer lives.
    let buffer = unsafe { Buffer::from_custom_allocation(ptr, 32 * n, owner) };
    Ok(ScalarBuffer::new(buffer, 0, 8 * n))
}

fn owned_floats(arrays: Vec<[f32; 8]>) -> ScalarBuffer<f32> {
    let floats: Vec<f32> = bytemuck::allocation::try_cast_vec(arrays)
        .unwrap_or_else(|(_, arrays)| arrays.into_iter().flatten().collect());
    ScalarBuffer::from(floats)
}

/// The vector column of the vectors in `vectors`, as `to_arrow` returns it.
fn vector_array(
    py: Python<'_>,
    vectors: &Bound<'_, PyAny>,
    policy: Option<&Bound<'_, PyAny>>,
) -> PyResult<FixedSizeListArray> {
    let policy = parse_or_strict(policy)?;
    let input = arrays::vectors(vectors, "vectors")?;
    let floats = float_buffer(py, input, policy)?;
    let DataType::FixedSizeList(item, 8) = harrow::vector_data_type() else {
        unreachable!("hydron's vector type is a fixed-size list of 8");
    };
    Ok(FixedSizeListArray::new(
        item,
        8,
        Arc::new(Float32Array::new(floats, None)),
        None,
    ))
}

/// Vectors as an Arrow array, without copying: a ``FixedSizeList<float32, 8>``
/// whose values are the numpy array's own memory.
///
/// The result implements the Arrow PyCapsule interface
/// (``__arrow_c_array__``, ``__arrow_c_schema__``), so every Arrow library
/// takes it without a copy: ``pyarrow.array(a)``, ``polars.Series(a)``,
/// ``nanoarrow.Array(a)``. Like ``pyarrow.array(ndarray)`` it shares memory
/// with ``vectors`` (a C-contiguous, aligned float32 array; other layouts
/// are copied): do not modify ``vectors`` while the Arrow data is in use.
///
/// Parameters
/// ----------
/// vectors : ndarray, float32, shape (N, 8)
/// policy : {"strict", "renormalize", "trusted"}, default "strict"
///     Checked before export (in place; ``"renormalize"`` exports a
///     renormalized copy).
///
/// Returns
/// -------
/// ArrowArray
///     An Arrow PyCapsule exporter (``len()`` is the number of vectors).
///
/// Examples
/// --------
/// >>> import hydron, pyarrow as pa
/// >>> a = pa.array(hydron.to_arrow(hydron.E8_ROOTS))
/// >>> a.type
/// FixedSizeListType(fixed_size_list<item: float not null>[8])
/// >>> len(a)
/// 240
#[pyfunction]
#[pyo3(signature = (vectors, *, policy = None))]
pub fn to_arrow(
    py: Python<'_>,
    vectors: &Bound<'_, PyAny>,
    policy: Option<&Bound<'_, PyAny>>,
) -> PyResult<ArrowArray> {
    let array = vector_array(py, vectors, policy)?;
    let field = harrow::vector_field(harrow::VECTOR_COLUMN);
    Ok(ArrowArray::new(Arc::new(array), Arc::new(field)))
}

/// Vectors as a one-column Arrow table (column ``column``, default
/// ``"vector"``, marked ``hydron.type = gf8``), without copying the floats.
///
/// The result implements ``__arrow_c_stream__``: ``pyarrow.table(t)``,
/// ``polars.DataFrame(t)``, and DuckDB
/// (``duckdb.sql("SELECT ... FROM t")``) read it in place. It shares memory
/// with ``vectors``, as :func:`to_arrow` does.
///
/// Examples
/// --------
/// >>> import hydron, pyarrow as pa
/// >>> pa.table(hydron.to_arrow_table(hydron.E8_ROOTS)).schema.field("vector").metadata
/// {b'hydron.type': b'gf8'}
#[pyfunction]
#[pyo3(signature = (vectors, *, column = "vector", policy = None))]
pub fn to_arrow_table(
    py: Python<'_>,
    vectors: &Bound<'_, PyAny>,
    column: &str,
    policy: Option<&Bound<'_, PyAny>>,
) -> PyResult<ArrowTable> {
    let array: ArrayRef = Arc::new(vector_array(py, vectors, policy)?);
    let schema = Arc::new(Schema::new(vec![harrow::vector_field(column)]));
    let batch = RecordBatch::try_new(schema.clone(), vec![array])
        .map_err(|e| codec_error(py, CodecError::Arrow(e)))?;
    Ok(ArrowTable::new(vec![batch], schema))
}

/// E8 root codes (integers in 0..240) as an Arrow ``uint8`` array.
///
/// Any integer array or sequence; each code is checked, then copied into
/// the Arrow array (one byte per code).
///
/// Examples
/// --------
/// >>> import numpy as np, hydron, pyarrow as pa
/// >>> pa.array(hydron.codes_to_arrow(np.array([0, 239], np.uint8))).to_pylist()
/// [0, 239]
#[pyfunction]
pub fn codes_to_arrow(codes: &Bound<'_, PyAny>) -> PyResult<ArrowArray> {
    let codes = arrays::codes(codes, "codes")?;
    let array: ArrayRef = Arc::new(arrow_array::UInt8Array::new(
        ScalarBuffer::from(codes),
        None,
    ));
    Ok(ArrowArray::new(
        array,
        Arc::new(harrow::code_field(harrow::CODE_COLUMN)),
    ))
}

/// The Arrow data of `source` as arrays of one column (`want` finds it in
/// a struct / record batch / table), with the column's name. The data is
/// checked against its declared layout (`validate_full`) before hydron
/// reads it.
fn columns(
    py: Python<'_>,
    source: &Bound<'_, PyAny>,
    column: Option<&str>,
    find: fn(&Schema) -> Result<usize, CodecError>,
) -> PyResult<(Vec<ArrayRef>, String)> {
    let (chunks, field) = capsule::import(py, source)?;
    let (chunks, name) = match field.data_type() {
        DataType::Struct(fields) => {
            let schema = Schema::new(fields.clone());
            let index = match column {
                Some(name) => schema.index_of(name).map_err(|_| {
                    codec_error(
                        py,
                        CodecError::MissingColumn {
                            what: "named",
                            reason: format!(
                                "no column {name:?}; the columns are {}",
                                listed(&schema)
                            ),
                        },
                    )
                })?,
                None => find(&schema).map_err(|e| codec_error(py, e))?,
            };
            let mut picked = Vec::with_capacity(chunks.len());
            let mut first_row = 0u64;
            for chunk in &chunks {
                let Some(s) = chunk.as_any().downcast_ref::<StructArray>() else {
                    return Err(PyTypeError::new_err(
                        "a chunk of a struct stream is not a struct",
                    ));
                };
                // A null struct row is a null vector, whatever its child
                // holds at that row (pyarrow leaves the child's slot as
                // it was: zeros, or any vector).
                if let Some(row) = s.nulls().and_then(|n| n.iter().position(|valid| !valid)) {
                    let row = first_row + row as u64;
                    let error = CodecError::NullValue {
                        row,
                        coordinate: None,
                    };
                    return Err(codec_error(py, error));
                }
                picked.push(s.column(index).clone());
                first_row += s.len() as u64;
            }
            (picked, schema.field(index).name().clone())
        }
        // A single column: `column`, if given, must be its name (a
        // Polars Series, a named field), not silently ignored.
        _ => match column {
            Some(name) if name != field.name() => {
                return Err(PyValueError::new_err(format!(
                    "column {name:?}: the data is one column of type {} ({}), not a table, \
                     record batch or struct array to pick a column from",
                    field.data_type(),
                    if field.name().is_empty() {
                        "unnamed".to_string()
                    } else {
                        format!("named {:?}", field.name())
                    }
                )));
            }
            _ => (chunks, field.name().clone()),
        },
    };
    let mut first_row = 0u64;
    for chunk in &chunks {
        // List offsets first, so that an error names the row (arrow-rs's
        // does not).
        harrow::check_offsets(chunk.as_ref(), first_row).map_err(|e| codec_error(py, e))?;
        chunk
            .to_data()
            .validate_full()
            .map_err(|e| codec_error(py, CodecError::Arrow(e)))?;
        first_row += chunk.len() as u64;
    }
    Ok((chunks, name))
}

fn listed(schema: &Schema) -> String {
    let names: Vec<String> = schema
        .fields()
        .iter()
        .map(|f: &Arc<Field>| format!("{} ({})", f.name(), f.data_type()))
        .collect();
    names.join(", ")
}

/// Vectors from Arrow data, checked: a new ``(N, 8)`` float32 array.
///
/// ``source`` is anything that exports Arrow through the PyCapsule interface:
/// an array or chunked array of ``FixedSizeList<float32, 8>`` (or a list of
/// float32 whose rows all hold 8 values: what Parquet readers such as
/// DuckDB return), or a record batch, table or stream with such a column
/// (``column``, else the column marked ``hydron.type = gf8``, else the one
/// named ``"vector"``, else the only list-of-floats column). The floats are
/// read in place and copied once, checked by ``policy`` in the same pass.
///
/// Raises
/// ------
/// InvalidVectorError
///     A vector the policy rejects, a null row or coordinate, a row of
///     another length than 8, or list offsets that lie (below zero,
///     decreasing, past the values): ``.index`` is the row.
/// FormatError
///     No such column, or a column of another type (float64, integers).
/// TypeError
///     ``source`` is not Arrow data.
///
/// Examples
/// --------
/// >>> import hydron, pyarrow as pa
/// >>> table = pa.table({"id": list(range(240)), "vector": pa.array(hydron.to_arrow(hydron.E8_ROOTS))})
/// >>> hydron.from_arrow(table).shape
/// (240, 8)
/// >>> hydron.from_arrow(pa.array([[1.0] * 7], pa.list_(pa.float32())))
/// Traceback (most recent call last):
/// hydron.errors.InvalidVectorError: row 0 has 7 values; a vector has 8
#[pyfunction]
#[pyo3(signature = (source, *, column = None, policy = None))]
pub fn from_arrow<'py>(
    py: Python<'py>,
    source: &Bound<'py, PyAny>,
    column: Option<&str>,
    policy: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyArray2<f32>>> {
    let policy = parse_or_strict(policy)?;
    let (chunks, name) = columns(py, source, column, harrow::find_vector_column)?;
    let out: Vec<Gf8> = detached(py, || {
        gather(&chunks, |chunk, first_row, out| {
            harrow::append_vectors(chunk, policy, out, &name, first_row)
        })
    })?;
    Ok(gf8_out(py, out))
}

/// E8 root codes from Arrow data (a ``uint8`` array, chunked array, or a
/// table's code column), checked: a new ``uint8`` array.
///
/// Examples
/// --------
/// >>> import hydron, pyarrow as pa
/// >>> hydron.codes_from_arrow(pa.array([3, 240], pa.uint8()))
/// Traceback (most recent call last):
/// hydron.errors.InvalidVectorError: vector 1: E8 root code 240 is out of range (0..240)
#[pyfunction]
#[pyo3(signature = (source, *, column = None))]
pub fn codes_from_arrow<'py>(
    py: Python<'py>,
    source: &Bound<'py, PyAny>,
    column: Option<&str>,
) -> PyResult<Bound<'py, PyArray1<u8>>> {
    let (chunks, name) = columns(py, source, column, harrow::find_code_column)?;
    let out: Vec<E8Root> = detached(py, || {
        gather(&chunks, |chunk, first_row, out| {
            out.extend(harrow::codes_from_arrow_at(chunk, &name, first_row)?);
            Ok(())
        })
    })?;
    Ok(codes_out(py, out))
}

/// The rows of every chunk in one `Vec` (reserved once for them all):
/// `append` adds a chunk's rows, numbered from `first_row` for errors.
fn gather<T>(
    chunks: &[ArrayRef],
    append: impl Fn(&dyn Array, u64, &mut Vec<T>) -> Result<(), CodecError>,
) -> Result<Vec<T>, CodecError> {
    let rows: usize = chunks.iter().map(|c| c.len()).sum();
    let mut out = Vec::with_capacity(rows);
    let mut first_row = 0u64;
    for chunk in chunks {
        append(chunk.as_ref(), first_row, &mut out)?;
        first_row += chunk.len() as u64;
    }
    Ok(out)
}
