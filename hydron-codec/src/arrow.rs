//! Arrow arrays of vectors and codes (feature `arrow`, arrow-rs).
//!
//! A batch of [`Gf8`] is a [`FixedSizeListArray`] of 8 non-null `Float32`
//! per row, the layout Lance, LanceDB and pyarrow's `fixed_size_list` use
//! for vectors; E8 root codes are a [`UInt8Array`]. `docs/format.md` (§4)
//! specifies the schema: the column names [`VECTOR_COLUMN`] and
//! [`CODE_COLUMN`], and the field metadata key [`HYDRON_TYPE_KEY`] that
//! marks a hydron column.
//!
//! - **Export is zero-copy**: [`vectors_to_arrow`] hands the `Vec<Gf8>`'s
//!   allocation to Arrow as its float buffer, and [`codes_to_arrow`] the
//!   `Vec<E8Root>`'s as its byte buffer.
//! - **Import reads the float buffer in place**: [`vector_values`] checks
//!   the layout (type, nulls, row lengths, offsets) and returns the
//!   coordinates as `&[[f32; 8]]` without copying; [`vectors_from_arrow`]
//!   copies them into a `Vec<Gf8>` checked by a [`Policy`] in the same
//!   fused pass the fory decoder uses.
//! - Besides `FixedSizeList<Float32, 8>`, import reads `List<Float32>` and
//!   `LargeList<Float32>` whose rows all hold 8 values (what DuckDB's
//!   `FLOAT[]` and Parquet files without an Arrow schema give). A null row,
//!   a null coordinate, a row of 7 or 9 values, another value type or
//!   offsets that lie are a [`CodecError`] naming the row, never a panic.
//!
//! ```
//! use hydron_codec::{arrow, Policy};
//! use hydron_core::{Gf8, E8_ROOTS};
//!
//! let array = arrow::vectors_to_arrow(E8_ROOTS.to_vec());
//! assert_eq!(arrow_array::Array::len(&array), 240);
//! let back = arrow::vectors_from_arrow(&array, Policy::Strict)?;
//! assert_eq!(back, E8_ROOTS);
//! # Ok::<(), hydron_codec::CodecError>(())
//! ```

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::Float32Type;
use arrow_array::{
    Array, ArrayRef, FixedSizeListArray, Float32Array, OffsetSizeTrait, RecordBatch, UInt8Array,
};
use arrow_buffer::{NullBuffer, ScalarBuffer};
use arrow_schema::{DataType, Field, FieldRef, Schema, SchemaRef};
use hydron_core::{E8Root, Gf8};

use crate::{CodecError, Policy};

/// The field metadata key that marks a hydron column; its value is
/// [`GF8_TYPE`] or [`E8_CODE_TYPE`].
pub const HYDRON_TYPE_KEY: &str = "hydron.type";
/// [`HYDRON_TYPE_KEY`]'s value on a column of [`Gf8`] vectors.
pub const GF8_TYPE: &str = "gf8";
/// [`HYDRON_TYPE_KEY`]'s value on a column of E8 root codes.
pub const E8_CODE_TYPE: &str = "e8-code";
/// The name hydron gives a column of vectors.
pub const VECTOR_COLUMN: &str = "vector";
/// The name hydron gives a column of E8 root codes.
pub const CODE_COLUMN: &str = "code";
/// The name of the list item field (Arrow's default).
const ITEM: &str = "item";

/// What a vector column must hold, for [`CodecError::WrongColumnType`].
const VECTOR_EXPECTED: &str =
    "a fixed-size list of 8 float32 (or a list of float32 with 8 values per row)";
/// What a code column must hold.
const CODE_EXPECTED: &str = "uint8 E8 root codes";

/// The Arrow type of a vector column: `FixedSizeList<Float32, 8>`, items
/// not nullable.
///
/// ```
/// use arrow_schema::DataType;
/// let t = hydron_codec::arrow::vector_data_type();
/// assert!(matches!(t, DataType::FixedSizeList(ref item, 8) if item.data_type() == &DataType::Float32));
/// ```
#[must_use]
pub fn vector_data_type() -> DataType {
    DataType::FixedSizeList(item_field(), 8)
}

fn item_field() -> FieldRef {
    Arc::new(Field::new(ITEM, DataType::Float32, false))
}

fn marked(field: Field, value: &str) -> Field {
    field.with_metadata(HashMap::from([(
        HYDRON_TYPE_KEY.to_string(),
        value.to_string(),
    )]))
}

/// A non-nullable field of vectors named `name`, marked with
/// [`HYDRON_TYPE_KEY`] = [`GF8_TYPE`].
///
/// ```
/// let field = hydron_codec::arrow::vector_field("embedding");
/// assert_eq!(field.metadata()["hydron.type"], "gf8");
/// assert!(!field.is_nullable());
/// ```
#[must_use]
pub fn vector_field(name: &str) -> Field {
    marked(Field::new(name, vector_data_type(), false), GF8_TYPE)
}

/// A non-nullable `UInt8` field of E8 root codes named `name`, marked with
/// [`HYDRON_TYPE_KEY`] = [`E8_CODE_TYPE`].
///
/// ```
/// let field = hydron_codec::arrow::code_field("code");
/// assert_eq!(field.data_type(), &arrow_schema::DataType::UInt8);
/// ```
#[must_use]
pub fn code_field(name: &str) -> Field {
    marked(Field::new(name, DataType::UInt8, false), E8_CODE_TYPE)
}

/// The schema of a hydron vector table: one column, [`VECTOR_COLUMN`].
///
/// ```
/// let schema = hydron_codec::arrow::vector_schema();
/// assert_eq!(schema.field(0).name(), "vector");
/// ```
#[must_use]
pub fn vector_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![vector_field(VECTOR_COLUMN)]))
}

/// The schema of a hydron codes table: one column, [`CODE_COLUMN`].
///
/// ```
/// let schema = hydron_codec::arrow::code_schema();
/// assert_eq!(schema.field(0).name(), "code");
/// ```
#[must_use]
pub fn code_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![code_field(CODE_COLUMN)]))
}

/// The vectors as an Arrow array, without copying: the `Vec`'s allocation
/// becomes the array's float buffer.
///
/// ```
/// use arrow_array::Array;
/// use hydron_core::Gf8;
///
/// let v = vec![Gf8::ZERO; 3];
/// let array = hydron_codec::arrow::vectors_to_arrow(v);
/// assert_eq!((array.len(), array.value_length()), (3, 8));
/// ```
#[must_use]
pub fn vectors_to_arrow(vectors: Vec<Gf8>) -> FixedSizeListArray {
    let floats = flatten(Gf8::vec_into_arrays(vectors));
    let values = Float32Array::new(ScalarBuffer::from(floats), None);
    FixedSizeListArray::new(item_field(), 8, Arc::new(values), None)
}

/// `Vec<[f32; 8]>` as `Vec<f32>` over the same allocation.
fn flatten(arrays: Vec<[f32; 8]>) -> Vec<f32> {
    // `[f32; 8]` and `f32` have the same alignment, and lengths and
    // capacities in `[f32; 8]` are whole numbers of `f32`, so the cast
    // cannot fail; the copy is only a fallback for the type system.
    bytemuck::allocation::try_cast_vec(arrays)
        .unwrap_or_else(|(_, arrays)| arrays.into_iter().flatten().collect())
}

/// The codes as an Arrow `UInt8Array`, without copying.
///
/// ```
/// use arrow_array::Array;
/// use hydron_core::E8Root;
///
/// let codes = vec![E8Root::new(7)?, E8Root::new(239)?];
/// let array = hydron_codec::arrow::codes_to_arrow(codes);
/// assert_eq!(array.values().as_ref(), &[7, 239]);
/// # Ok::<(), hydron_core::Gf8Error>(())
/// ```
#[must_use]
pub fn codes_to_arrow(codes: Vec<E8Root>) -> UInt8Array {
    let bytes: Vec<u8> = bytemuck::allocation::try_cast_vec(codes)
        .unwrap_or_else(|(_, codes)| codes.into_iter().map(E8Root::code).collect());
    UInt8Array::new(ScalarBuffer::from(bytes), None)
}

/// The vectors as a one-column [`RecordBatch`] of [`vector_schema`], without
/// copying.
///
/// ```
/// let batch = hydron_codec::arrow::vectors_to_record_batch(hydron_core::E8_ROOTS.to_vec());
/// assert_eq!(batch.num_rows(), 240);
/// assert_eq!(batch.schema().field(0).metadata()["hydron.type"], "gf8");
/// ```
#[must_use]
pub fn vectors_to_record_batch(vectors: Vec<Gf8>) -> RecordBatch {
    let array: ArrayRef = Arc::new(vectors_to_arrow(vectors));
    RecordBatch::try_new(vector_schema(), vec![array])
        .expect("the array has the schema's one non-null column type")
}

/// The codes as a one-column [`RecordBatch`] of [`code_schema`], without
/// copying.
///
/// ```
/// use hydron_core::E8Root;
/// let batch = hydron_codec::arrow::codes_to_record_batch(vec![E8Root::new(3)?]);
/// assert_eq!(batch.num_rows(), 1);
/// # Ok::<(), hydron_core::Gf8Error>(())
/// ```
#[must_use]
pub fn codes_to_record_batch(codes: Vec<E8Root>) -> RecordBatch {
    let array: ArrayRef = Arc::new(codes_to_arrow(codes));
    RecordBatch::try_new(code_schema(), vec![array])
        .expect("the array has the schema's one non-null column type")
}

/// The coordinates of a vector column, read in place (no copy, no check of
/// the values themselves: pass them to [`Gf8::slice_from_arrays`] or use
/// [`vectors_from_arrow`]).
///
/// `array` is a `FixedSizeList` of size 8, or a `List` or `LargeList` whose
/// rows all hold 8 values, of non-null `Float32`. Errors name the row
/// (counted from 0 in `array`).
///
/// ```
/// use std::sync::Arc;
/// use arrow_array::{types::Float32Type, ListArray};
/// use hydron_codec::{arrow, CodecError};
///
/// let list = ListArray::from_iter_primitive::<Float32Type, _, _>([
///     Some(vec![Some(1.0f32), Some(0.0), Some(0.0), Some(0.0), Some(0.0), Some(0.0), Some(0.0), Some(0.0)]),
///     Some(vec![Some(1.0f32); 7]),
/// ]);
/// let err = arrow::vector_values(&list).unwrap_err();
/// assert_eq!(err.to_string(), "row 1 has 7 values; a vector has 8");
/// assert_eq!(arrow::vector_values(&list.slice(0, 1))?[0][0], 1.0);
/// # Ok::<(), CodecError>(())
/// ```
pub fn vector_values(array: &dyn Array) -> Result<&[[f32; 8]], CodecError> {
    vector_values_at(array, "", 0)
}

/// [`vector_values`] for a column named `column` whose first row is row
/// `first_row` of the data (for errors).
pub(crate) fn vector_values_at<'a>(
    array: &'a dyn Array,
    column: &str,
    first_row: u64,
) -> Result<&'a [[f32; 8]], CodecError> {
    let wrong_type = || CodecError::WrongColumnType {
        column: column.to_string(),
        found: array.data_type().to_string(),
        expected: VECTOR_EXPECTED,
        columns: String::new(),
    };
    if let Some(nulls) = array.logical_nulls().filter(|n| n.null_count() > 0) {
        return Err(null_row(&nulls, first_row));
    }
    let (values, start) = match array.data_type() {
        DataType::FixedSizeList(_, 8) => {
            let list = array.as_fixed_size_list();
            (list.values(), 0)
        }
        DataType::List(_) => list_values(array.as_list::<i32>(), first_row)?,
        DataType::LargeList(_) => list_values(array.as_list::<i64>(), first_row)?,
        _ => return Err(wrong_type()),
    };
    let Some(floats) = values.as_primitive_opt::<Float32Type>() else {
        return Err(wrong_type());
    };
    let n = array.len();
    let end = n
        .checked_mul(8)
        .and_then(|len| start.checked_add(len))
        .filter(|&end| end <= floats.len())
        .ok_or_else(|| CodecError::BadOffsets {
            row: first_row,
            detail: format!(
                "{n} rows of 8 values from value {start} need more than the {} values there",
                floats.len()
            ),
        })?;
    if let Some(nulls) = floats.logical_nulls().filter(|n| n.null_count() > 0) {
        if let Some(k) = (start..end).find(|&k| nulls.is_null(k)) {
            let within = k - start;
            return Err(CodecError::NullValue {
                row: first_row + (within / 8) as u64,
                coordinate: Some((within % 8) as u8),
            });
        }
    }
    let floats: &[f32] = &floats.values()[start..end];
    Ok(floats.as_chunks::<8>().0)
}

/// The first null row, as an error.
fn null_row(nulls: &NullBuffer, first_row: u64) -> CodecError {
    let row = nulls.iter().position(|valid| !valid).unwrap_or_default();
    CodecError::NullValue {
        row: first_row + row as u64,
        coordinate: None,
    }
}

/// The values of a list whose rows all hold 8 values, and the index of the
/// first one; checks every offset, naming the first row whose offsets are
/// wrong: below zero, decreasing, past the values, or not 8 apart.
fn list_values<O: OffsetSizeTrait>(
    list: &arrow_array::GenericListArray<O>,
    first_row: u64,
) -> Result<(&ArrayRef, usize), CodecError> {
    let offsets = list.value_offsets();
    let values_len = list.values().len();
    let bad = |row: usize, detail: String| CodecError::BadOffsets {
        row: first_row + row as u64,
        detail,
    };
    let mut previous = offsets.first().copied().unwrap_or_default();
    if previous < O::zero() {
        return Err(bad(
            0,
            format!("the first offset {previous:?} is below zero"),
        ));
    }
    for (row, &next) in offsets.iter().skip(1).enumerate() {
        if next < previous {
            return Err(bad(row, format!("offset {next:?} is before {previous:?}")));
        }
        if next.as_usize() > values_len {
            return Err(bad(
                row,
                format!("the row ends at value {next:?}, past the {values_len} values"),
            ));
        }
        let length = next.as_usize() as i64 - previous.as_usize() as i64;
        if length != 8 {
            return Err(CodecError::WrongRowLength {
                row: first_row + row as u64,
                length,
            });
        }
        previous = next;
    }
    let start = offsets.first().map_or(0, |o| o.as_usize());
    Ok((list.values(), start))
}

/// Checks the offsets of a `List` or `LargeList` column (`Ok` for any other
/// type) as [`vector_values`] reads them, naming the row (counted from
/// `first_row`): for data imported through the C data interface, before
/// arrow-rs's `validate_full`, whose error names no row. The offsets and
/// the values' length are read as the array declares them; nothing else
/// of the layout is trusted.
///
/// ```
/// use std::sync::Arc;
/// use arrow_array::{types::Float32Type, ListArray};
/// use hydron_codec::{arrow, CodecError};
///
/// let list = ListArray::from_iter_primitive::<Float32Type, _, _>([Some(vec![Some(0.5f32); 7])]);
/// let err = arrow::check_offsets(&list, 40).unwrap_err();
/// assert!(matches!(err, CodecError::WrongRowLength { row: 40, length: 7 }));
/// # Ok::<(), CodecError>(())
/// ```
pub fn check_offsets(array: &dyn Array, first_row: u64) -> Result<(), CodecError> {
    match array.data_type() {
        DataType::List(_) => list_values(array.as_list::<i32>(), first_row).map(drop),
        DataType::LargeList(_) => list_values(array.as_list::<i64>(), first_row).map(drop),
        _ => Ok(()),
    }
}

/// The vectors of an Arrow column (as [`vector_values`] reads them),
/// copied into a `Vec<Gf8>` and checked by `policy` in one pass. Errors
/// name the row.
///
/// ```
/// use hydron_codec::{arrow, CodecError, Policy};
/// use hydron_core::Gf8;
///
/// let array = arrow::vectors_to_arrow(vec![Gf8::new_unchecked([2.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0])]);
/// let err = arrow::vectors_from_arrow(&array, Policy::Strict).unwrap_err();
/// assert!(matches!(err, CodecError::InvalidVector { index: 0, .. }));
/// assert_eq!(arrow::vectors_from_arrow(&array, Policy::Renormalize)?[0][0], 1.0);
/// # Ok::<(), CodecError>(())
/// ```
pub fn vectors_from_arrow(array: &dyn Array, policy: Policy) -> Result<Vec<Gf8>, CodecError> {
    let mut out = Vec::new();
    append_vectors(array, policy, &mut out, "", 0)?;
    Ok(out)
}

/// Appends the vectors of `array` (column `column`, whose first row is row
/// `first_row` of the data) to `out`, checked by `policy`; on error `out`
/// is left as it was. For data in several arrays (the chunks of a column),
/// with errors that count rows from the start of the whole column.
///
/// ```
/// use hydron_codec::{arrow, CodecError, Policy};
/// use hydron_core::Gf8;
///
/// let chunk = arrow::vectors_to_arrow(vec![Gf8::ZERO; 4]);
/// let mut out = Vec::new();
/// arrow::append_vectors(&chunk, Policy::Strict, &mut out, "vector", 0)?;
/// arrow::append_vectors(&chunk, Policy::Strict, &mut out, "vector", 4)?;
/// assert_eq!(out.len(), 8);
/// # Ok::<(), CodecError>(())
/// ```
pub fn append_vectors(
    array: &dyn Array,
    policy: Policy,
    out: &mut Vec<Gf8>,
    column: &str,
    first_row: u64,
) -> Result<(), CodecError> {
    let arrays = vector_values_at(array, column, first_row)?;
    append_arrays(arrays, policy, out, first_row)
}

/// Appends `arrays` (rows from `first_row` on) to `out`, checked by
/// `policy` in one fused pass; on error `out` is left as it was.
pub(crate) fn append_arrays(
    arrays: &[[f32; 8]],
    policy: Policy,
    out: &mut Vec<Gf8>,
    first_row: u64,
) -> Result<(), CodecError> {
    let at_row = |e: CodecError| match e {
        CodecError::InvalidVector { index, error } => CodecError::InvalidVector {
            index: first_row + index,
            error,
        },
        e => e,
    };
    #[cfg(target_endian = "little")]
    crate::payload::decode_payload_into(bytemuck::cast_slice(arrays), policy, out)
        .map_err(at_row)?;
    #[cfg(not(target_endian = "little"))]
    out.extend(policy.apply(arrays.to_vec()).map_err(at_row)?);
    Ok(())
}

/// The E8 root codes of a `UInt8` column, checked (every code below 240,
/// no nulls). Errors name the row.
///
/// ```
/// use arrow_array::UInt8Array;
/// use hydron_codec::arrow;
///
/// let err = arrow::codes_from_arrow(&UInt8Array::from(vec![1, 240])).unwrap_err();
/// assert_eq!(err.to_string(), "vector 1: E8 root code 240 is out of range (0..240)");
/// assert_eq!(arrow::codes_from_arrow(&UInt8Array::from(vec![5]))?[0].code(), 5);
/// # Ok::<(), hydron_codec::CodecError>(())
/// ```
pub fn codes_from_arrow(array: &dyn Array) -> Result<Vec<E8Root>, CodecError> {
    codes_from_arrow_at(array, "", 0)
}

/// [`codes_from_arrow`] for column `column`, whose first row is row
/// `first_row` of the data (for errors), as [`append_vectors`] counts.
///
/// ```
/// use arrow_array::UInt8Array;
/// use hydron_codec::arrow;
///
/// let err = arrow::codes_from_arrow_at(&UInt8Array::from(vec![1, 240]), "code", 100).unwrap_err();
/// assert_eq!(err.to_string(), "vector 101: E8 root code 240 is out of range (0..240)");
/// ```
pub fn codes_from_arrow_at(
    array: &dyn Array,
    column: &str,
    first_row: u64,
) -> Result<Vec<E8Root>, CodecError> {
    let Some(codes) = array.as_primitive_opt::<arrow_array::types::UInt8Type>() else {
        return Err(CodecError::WrongColumnType {
            column: column.to_string(),
            found: array.data_type().to_string(),
            expected: CODE_EXPECTED,
            columns: String::new(),
        });
    };
    if let Some(nulls) = codes.logical_nulls().filter(|n| n.null_count() > 0) {
        return Err(null_row(&nulls, first_row));
    }
    crate::payload::to_roots(codes.values()).map_err(|e| match e {
        CodecError::InvalidVector { index, error } => CodecError::InvalidVector {
            index: first_row + index,
            error,
        },
        e => e,
    })
}

/// The index of the vector column in `schema`: the first field marked
/// [`HYDRON_TYPE_KEY`] = [`GF8_TYPE`]; else the field named
/// [`VECTOR_COLUMN`]; else the only field whose type is a list of floats
/// (of any width, so that a float64 column gets a clear type error).
///
/// ```
/// use arrow_schema::{DataType, Field, Schema};
/// use hydron_codec::arrow;
///
/// let schema = Schema::new(vec![Field::new("id", DataType::Int64, false), arrow::vector_field("emb")]);
/// assert_eq!(arrow::find_vector_column(&schema)?, 1);
/// let err = arrow::find_vector_column(&Schema::new(vec![Field::new("id", DataType::Int64, false)])).unwrap_err();
/// assert_eq!(err.to_string(), "no vector column: the columns are id (Int64)");
/// # Ok::<(), hydron_codec::CodecError>(())
/// ```
pub fn find_vector_column(schema: &Schema) -> Result<usize, CodecError> {
    find_column(schema, GF8_TYPE, VECTOR_COLUMN, "vector", |t| match t {
        DataType::FixedSizeList(item, _) | DataType::List(item) | DataType::LargeList(item) => {
            item.data_type().is_floating()
        }
        _ => false,
    })
}

/// The index of the code column in `schema`, found as
/// [`find_vector_column`] finds vectors (the only integer column, last).
///
/// ```
/// let schema = hydron_codec::arrow::code_schema();
/// assert_eq!(hydron_codec::arrow::find_code_column(&schema)?, 0);
/// # Ok::<(), hydron_codec::CodecError>(())
/// ```
pub fn find_code_column(schema: &Schema) -> Result<usize, CodecError> {
    find_column(
        schema,
        E8_CODE_TYPE,
        CODE_COLUMN,
        "code",
        DataType::is_integer,
    )
}

fn find_column(
    schema: &Schema,
    mark: &str,
    name: &'static str,
    what: &'static str,
    fits: impl Fn(&DataType) -> bool,
) -> Result<usize, CodecError> {
    let fields = schema.fields();
    let ambiguous = |candidates: usize| CodecError::AmbiguousColumn {
        what,
        name,
        candidates,
        columns: list_columns(schema),
    };
    // Each rule picks a column only if exactly one column meets it: two
    // marked columns, or two of the same name, are as ambiguous as two
    // unnamed candidates.
    let marked: Vec<usize> = (0..fields.len())
        .filter(|&i| {
            fields[i]
                .metadata()
                .get(HYDRON_TYPE_KEY)
                .map(String::as_str)
                == Some(mark)
        })
        .collect();
    let named: Vec<usize> = (0..fields.len())
        .filter(|&i| fields[i].name() == name)
        .collect();
    let typed: Vec<usize> = (0..fields.len())
        .filter(|&i| fits(fields[i].data_type()))
        .collect();
    for found in [marked, named, typed] {
        match found[..] {
            [] => {}
            [only] => return Ok(only),
            _ => return Err(ambiguous(found.len())),
        }
    }
    Err(CodecError::MissingColumn {
        what,
        reason: if fields.is_empty() {
            "there are no columns".to_string()
        } else {
            format!("the columns are {}", list_columns(schema))
        },
    })
}

/// The index of the column named `name` in `schema`, which should hold
/// `what` (`"vector"` or `"code"`, for the error): a
/// [`CodecError::MissingColumn`] listing every column with its type if no
/// column, or more than one, has that name.
///
/// ```
/// use arrow_schema::{DataType, Field, Schema};
/// use hydron_codec::arrow;
///
/// let schema = Schema::new(vec![Field::new("id", DataType::Int64, false), arrow::vector_field("emb")]);
/// assert_eq!(arrow::find_named_column(&schema, "emb", "vector")?, 1);
/// let err = arrow::find_named_column(&schema, "x", "vector").unwrap_err();
/// assert!(err.to_string().starts_with("no vector column: there is no column named \"x\"; the columns are id (Int64), emb ("));
/// # Ok::<(), hydron_codec::CodecError>(())
/// ```
pub fn find_named_column(
    schema: &Schema,
    name: &str,
    what: &'static str,
) -> Result<usize, CodecError> {
    let fields = schema.fields();
    let named: Vec<usize> = (0..fields.len())
        .filter(|&i| fields[i].name() == name)
        .collect();
    let reason = match named[..] {
        [only] => return Ok(only),
        [] if fields.is_empty() => {
            format!("there is no column named {name:?}: there are no columns")
        }
        [] => format!(
            "there is no column named {name:?}; the columns are {}",
            list_columns(schema)
        ),
        _ => format!(
            "{} columns are named {name:?}, so the name chooses none; the columns are {}",
            named.len(),
            list_columns(schema)
        ),
    };
    Err(CodecError::MissingColumn { what, reason })
}

/// Every column of `schema` with its type: `id (Int64), vector (...)`.
pub(crate) fn list_columns(schema: &Schema) -> String {
    let listed: Vec<String> = schema
        .fields()
        .iter()
        .map(|f| format!("{} ({})", f.name(), f.data_type()))
        .collect();
    listed.join(", ")
}

/// The vectors of a [`RecordBatch`]'s vector column (found by
/// [`find_vector_column`]), checked by `policy`.
///
/// ```
/// use hydron_codec::{arrow, Policy};
/// let batch = arrow::vectors_to_record_batch(hydron_core::E8_ROOTS.to_vec());
/// assert_eq!(arrow::vectors_from_record_batch(&batch, Policy::Strict)?.len(), 240);
/// # Ok::<(), hydron_codec::CodecError>(())
/// ```
pub fn vectors_from_record_batch(
    batch: &RecordBatch,
    policy: Policy,
) -> Result<Vec<Gf8>, CodecError> {
    let schema = batch.schema();
    let index = find_vector_column(&schema)?;
    let mut out = Vec::new();
    append_vectors(
        batch.column(index),
        policy,
        &mut out,
        schema.field(index).name(),
        0,
    )?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::types::{Float64Type, Int32Type};
    use arrow_array::{LargeListArray, ListArray};
    use arrow_buffer::OffsetBuffer;

    fn unit(i: usize) -> [f32; 8] {
        let mut v = [0.0; 8];
        v[i % 8] = if i.is_multiple_of(2) { 1.0 } else { -1.0 };
        v
    }

    fn list_of(rows: &[Vec<f32>]) -> ListArray {
        ListArray::from_iter_primitive::<Float32Type, _, _>(
            rows.iter()
                .map(|r| Some(r.iter().map(|&x| Some(x)).collect::<Vec<_>>())),
        )
    }

    #[test]
    fn export_is_zero_copy() {
        let vectors: Vec<Gf8> = (0..100).map(|i| Gf8::new_unchecked(unit(i))).collect();
        let ptr = vectors.as_ptr().cast::<f32>();
        let array = vectors_to_arrow(vectors);
        let values = array.values().as_primitive::<Float32Type>();
        assert_eq!(values.values().as_ptr(), ptr);
        let codes: Vec<E8Root> = (0..240).map(|c| E8Root::new(c).unwrap()).collect();
        let ptr = codes.as_ptr().cast::<u8>();
        assert_eq!(codes_to_arrow(codes).values().as_ptr(), ptr);
    }

    #[test]
    fn import_reads_in_place_and_round_trips_slices() {
        let vectors: Vec<Gf8> = (0..50).map(|i| Gf8::new_unchecked(unit(i))).collect();
        let array = vectors_to_arrow(vectors.clone());
        let view = vector_values(&array).unwrap();
        let floats = array.values().as_primitive::<Float32Type>();
        assert_eq!(view.as_ptr().cast::<f32>(), floats.values().as_ptr());
        let sliced = array.slice(10, 5);
        assert_eq!(
            vectors_from_arrow(&sliced, Policy::Strict).unwrap(),
            vectors[10..15]
        );
    }

    #[test]
    fn lists_of_eight_are_vectors_and_other_lengths_name_the_row() {
        let rows: Vec<Vec<f32>> = (0..4).map(|i| unit(i).to_vec()).collect();
        let list = list_of(&rows);
        let expected: Vec<Gf8> = (0..4).map(|i| Gf8::new_unchecked(unit(i))).collect();
        assert_eq!(vectors_from_arrow(&list, Policy::Strict).unwrap(), expected);
        // A sliced list starts at a non-zero offset.
        assert_eq!(
            vectors_from_arrow(&list.slice(2, 2), Policy::Strict).unwrap(),
            expected[2..]
        );
        let large = LargeListArray::from_iter_primitive::<Float32Type, _, _>(
            rows.iter()
                .map(|r| Some(r.iter().map(|&x| Some(x)).collect::<Vec<_>>())),
        );
        assert_eq!(
            vectors_from_arrow(&large, Policy::Strict).unwrap(),
            expected
        );
        for bad_len in [7, 9, 0] {
            let mut rows = rows.clone();
            rows[2] = vec![0.0; bad_len];
            let err = vectors_from_arrow(&list_of(&rows), Policy::Strict).unwrap_err();
            assert_eq!(
                err.to_string(),
                format!("row 2 has {bad_len} values; a vector has 8")
            );
        }
    }

    #[test]
    fn nulls_are_errors_naming_the_row_and_coordinate() {
        let mut rows: Vec<Option<Vec<Option<f32>>>> = (0..3)
            .map(|i| Some(unit(i).iter().map(|&x| Some(x)).collect()))
            .collect();
        rows[1] = None;
        let list = ListArray::from_iter_primitive::<Float32Type, _, _>(rows.clone());
        let err = vectors_from_arrow(&list, Policy::Strict).unwrap_err();
        assert_eq!(err.to_string(), "row 1: the row is null");
        rows[1] = Some(vec![Some(0.0); 8]);
        rows[2].as_mut().unwrap()[5] = None;
        let list = ListArray::from_iter_primitive::<Float32Type, _, _>(rows);
        let err = vectors_from_arrow(&list, Policy::Strict).unwrap_err();
        assert_eq!(err.to_string(), "row 2: coordinate 5 is null");

        // A fixed-size list with a null child value.
        let mut values = vec![Some(0.0f32); 16];
        values[11] = None;
        let child = Float32Array::from(values);
        let item = Arc::new(Field::new(ITEM, DataType::Float32, true));
        let fsl = FixedSizeListArray::new(item, 8, Arc::new(child), None);
        let err = vectors_from_arrow(&fsl, Policy::Strict).unwrap_err();
        assert!(matches!(
            err,
            CodecError::NullValue {
                row: 1,
                coordinate: Some(3)
            }
        ));
    }

    #[test]
    fn other_types_are_type_errors() {
        let f64s = ListArray::from_iter_primitive::<Float64Type, _, _>([Some(vec![Some(1.0); 8])]);
        let err = vectors_from_arrow(&f64s, Policy::Strict).unwrap_err();
        assert!(
            err.to_string().contains("has type List(")
                && err.to_string().ends_with(VECTOR_EXPECTED),
            "{err}"
        );
        let ints = ListArray::from_iter_primitive::<Int32Type, _, _>([Some(vec![Some(1); 8])]);
        assert!(matches!(
            vectors_from_arrow(&ints, Policy::Strict),
            Err(CodecError::WrongColumnType { .. })
        ));
        let fsl9 = FixedSizeListArray::new(
            item_field(),
            9,
            Arc::new(Float32Array::from(vec![0.0f32; 9])),
            None,
        );
        assert!(matches!(
            vectors_from_arrow(&fsl9, Policy::Strict),
            Err(CodecError::WrongColumnType { .. })
        ));
        assert!(matches!(
            vectors_from_arrow(&UInt8Array::from(vec![1u8]), Policy::Strict),
            Err(CodecError::WrongColumnType { .. })
        ));
        assert!(matches!(
            codes_from_arrow(&Float32Array::from(vec![1.0f32])),
            Err(CodecError::WrongColumnType { .. })
        ));
    }

    #[test]
    fn offsets_that_lie_are_errors_not_panics() {
        // Offsets past the values: built unchecked, as an FFI import could
        // hand over.
        let values = Arc::new(Float32Array::from(vec![0.0f32; 16]));
        let offsets = OffsetBuffer::new(ScalarBuffer::from(vec![0i32, 8, 16, 24]));
        let data = arrow_data::ArrayData::builder(DataType::List(Arc::new(Field::new(
            ITEM,
            DataType::Float32,
            true,
        ))))
        .len(3)
        .add_buffer(offsets.into_inner().into_inner())
        .add_child_data(values.to_data());
        // SAFETY (test): the layout is deliberately invalid; only hydron's
        // checks read it, never arrow's unchecked accessors.
        let data = unsafe { data.build_unchecked() };
        let list = ListArray::from(data);
        let err = vectors_from_arrow(&list, Policy::Strict).unwrap_err();
        assert!(
            matches!(err, CodecError::BadOffsets { row: 2, .. }),
            "{err}"
        );
    }

    #[test]
    fn codes_are_checked() {
        let codes = UInt8Array::from(vec![Some(1), None]);
        assert_eq!(
            codes_from_arrow(&codes).unwrap_err().to_string(),
            "row 1: the row is null"
        );
    }

    #[test]
    fn columns_are_found_by_mark_then_name_then_type() {
        let plain = Field::new(
            "v",
            DataType::List(Arc::new(Field::new(ITEM, DataType::Float32, true))),
            true,
        );
        let id = Field::new("id", DataType::Int64, false);
        assert_eq!(
            find_vector_column(&Schema::new(vec![id.clone(), plain.clone()])).unwrap(),
            1
        );
        let named = Field::new(VECTOR_COLUMN, DataType::Float64, true);
        assert_eq!(
            find_vector_column(&Schema::new(vec![plain.clone(), named])).unwrap(),
            1
        );
        let err = find_vector_column(&Schema::new(vec![plain.clone(), plain.with_name("w")]))
            .unwrap_err();
        assert!(matches!(
            err,
            CodecError::AmbiguousColumn { candidates: 2, .. }
        ));
        assert!(err.to_string().starts_with(
            "which vector column? 2 columns could be it and none is the only one named \"vector\""
        ));
        let err = find_vector_column(&Schema::empty()).unwrap_err();
        assert_eq!(err.to_string(), "no vector column: there are no columns");
    }

    #[test]
    fn two_columns_of_one_name_or_mark_are_ambiguous() {
        // Unmarked: as other tools write it.
        let vector = |name: &str| vector_field(name).with_metadata(Default::default());
        let twice = Schema::new(vec![vector(VECTOR_COLUMN), vector(VECTOR_COLUMN)]);
        let err = find_vector_column(&twice).unwrap_err();
        assert!(
            matches!(err, CodecError::AmbiguousColumn { candidates: 2, .. }),
            "{err}"
        );
        // Both are listed, with their types.
        assert_eq!(err.to_string().matches(": vector (").count(), 1, "{err}");
        assert_eq!(err.to_string().matches("vector (").count(), 2, "{err}");
        let marked = |name: &str| {
            vector(name).with_metadata([(HYDRON_TYPE_KEY.to_string(), GF8_TYPE.to_string())].into())
        };
        let err = find_vector_column(&Schema::new(vec![marked("a"), marked("b")])).unwrap_err();
        assert!(
            matches!(err, CodecError::AmbiguousColumn { candidates: 2, .. }),
            "{err}"
        );
        // One mark still wins over a name, and one name over the types.
        let one = Schema::new(vec![vector(VECTOR_COLUMN), marked("b"), vector("c")]);
        assert_eq!(find_vector_column(&one).unwrap(), 1);
        let err = find_named_column(&twice, VECTOR_COLUMN, "vector").unwrap_err();
        assert!(matches!(err, CodecError::MissingColumn { .. }), "{err}");
        assert!(
            err.to_string().contains("2 columns are named \"vector\""),
            "{err}"
        );
        assert_eq!(find_named_column(&one, "c", "vector").unwrap(), 2);
        let err = find_named_column(&Schema::empty(), "c", "vector").unwrap_err();
        assert!(err.to_string().ends_with("there are no columns"), "{err}");
    }
}
