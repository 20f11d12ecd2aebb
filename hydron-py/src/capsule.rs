//! The Arrow PyCapsule interface both ways, on arrow-rs's own C data and
//! C stream structs: [`ArrowArray`] and [`ArrowTable`] hand hydron's Arrow
//! data to any Arrow library without a copy (`__arrow_c_array__`,
//! `__arrow_c_stream__`), and [`import`] reads what any of them exports.
//!
//! This is the whole of what hydron needs from the interface. A crate that
//! wraps it (pyo3-arrow) also casts to a consumer's requested schema, which
//! brings in arrow-cast, arrow-ord and chrono-tz: more than half of the
//! module's clean build. The interface lets a producer ignore a requested
//! schema, and hydron does: its data has one layout.

use std::ffi::{c_char, CStr};
use std::panic::AssertUnwindSafe;

use arrow_array::ffi::{from_ffi, from_ffi_and_data_type, FFI_ArrowArray, FFI_ArrowSchema};
use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use arrow_array::{
    make_array, Array, ArrayRef, FixedSizeListArray, Float32Array, RecordBatch,
    RecordBatchIterator, UInt8Array,
};
use arrow_schema::{ArrowError, DataType, Field, FieldRef, SchemaRef};
use hydron_codec::CodecError;
use numpy::ndarray::{ArrayView1, ArrayView2};
use numpy::{PyArray1, PyArray2};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyTuple};

use crate::errors::codec_error;

const SCHEMA_CAPSULE: &CStr = c"arrow_schema";
const ARRAY_CAPSULE: &CStr = c"arrow_array";
const STREAM_CAPSULE: &CStr = c"arrow_array_stream";

/// An Arrow array exported by hydron (``to_arrow``, ``codes_to_arrow``).
///
/// It implements the Arrow PyCapsule interface (``__arrow_c_array__``,
/// ``__arrow_c_schema__``): ``pyarrow.array(a)``, ``polars.Series(a)`` and
/// ``nanoarrow.Array(a)`` take it without a copy, as often as asked.
///
/// Examples
/// --------
/// >>> import hydron
/// >>> a = hydron.to_arrow(hydron.E8_ROOTS)
/// >>> len(a)
/// 240
/// >>> a
/// hydron.ArrowArray(FixedSizeList(8 x non-null Float32), 240 rows)
#[pyclass(module = "hydron", name = "ArrowArray", frozen)]
pub struct ArrowArray {
    array: ArrayRef,
    field: FieldRef,
}

impl ArrowArray {
    /// `array`, described by `field` (its name, type and metadata).
    pub fn new(array: ArrayRef, field: FieldRef) -> Self {
        Self { array, field }
    }
}

#[pymethods]
impl ArrowArray {
    /// The array's field as an ``arrow_schema`` capsule.
    fn __arrow_c_schema__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyCapsule>> {
        schema_capsule(py, FFI_ArrowSchema::try_from(self.field.as_ref()))
    }

    /// The field and the array as ``(arrow_schema, arrow_array)`` capsules,
    /// sharing the array's memory. ``requested_schema`` is ignored, as the
    /// interface allows: the data has one layout.
    #[pyo3(signature = (requested_schema = None))]
    fn __arrow_c_array__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let _ = requested_schema;
        let schema = self.__arrow_c_schema__(py)?;
        let array = PyCapsule::new_with_value(
            py,
            FFI_ArrowArray::new(&self.array.to_data()),
            ARRAY_CAPSULE,
        )?;
        PyTuple::new(py, [schema, array])
    }

    fn __len__(&self) -> usize {
        self.array.len()
    }

    /// The data as a read-only numpy array sharing its memory: ``(N, 8)``
    /// float32 for vectors, ``(N,)`` uint8 for codes (``np.asarray(a)``).
    /// ``dtype`` converts (a copy); ``copy=True`` always copies,
    /// ``copy=False`` refuses to.
    #[pyo3(signature = (dtype = None, copy = None))]
    fn __array__<'py>(
        slf: &Bound<'py, Self>,
        dtype: Option<&Bound<'py, PyAny>>,
        copy: Option<bool>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = slf.py();
        let view = numpy_view(slf)?;
        view.call_method1("setflags", (false,))?;
        let converts = match dtype {
            Some(d) => !view
                .getattr("dtype")?
                .eq(py.import("numpy")?.getattr("dtype")?.call1((d,))?)?,
            None => false,
        };
        if copy == Some(false) && converts {
            return Err(PyValueError::new_err(
                "ArrowArray.__array__: copy=False, but the dtype asked for needs a copy",
            ));
        }
        match (dtype, copy) {
            (Some(d), _) if converts => view.call_method1("astype", (d,)),
            (_, Some(true)) => view.call_method0("copy"),
            _ => Ok(view),
        }
    }

    fn __repr__(&self) -> String {
        format!(
            "hydron.ArrowArray({}, {} rows)",
            self.field.data_type(),
            self.array.len()
        )
    }
}

/// A numpy array over the memory of `slf`'s Arrow data (kept alive by
/// `slf`): `(N, 8)` float32 for a vector column, `(N,)` uint8 for codes.
fn numpy_view<'py>(slf: &Bound<'py, ArrowArray>) -> PyResult<Bound<'py, PyAny>> {
    let array = &slf.get().array;
    let container = slf.clone().into_any();
    if let Some(list) = array.as_any().downcast_ref::<FixedSizeListArray>() {
        let values = list.values().as_any().downcast_ref::<Float32Array>();
        if let (Some(values), 8) = (values, list.value_length()) {
            let start = 8 * list.offset();
            let floats = &values.values()[start..start + 8 * list.len()];
            let view = ArrayView2::from_shape((list.len(), 8), floats)
                .map_err(|e| PyValueError::new_err(e.to_string()))?;
            // SAFETY: `floats` is memory of `slf`'s Arrow array, which is
            // immutable and lives as long as `slf`; numpy keeps `container`
            // (`slf`) alive for as long as the new array exists.
            return Ok(unsafe { PyArray2::borrow_from_array(&view, container) }.into_any());
        }
    }
    if let Some(codes) = array.as_any().downcast_ref::<UInt8Array>() {
        let view = ArrayView1::from(&codes.values()[..]);
        // SAFETY: as above, for the bytes of the code array.
        return Ok(unsafe { PyArray1::borrow_from_array(&view, container) }.into_any());
    }
    Err(PyTypeError::new_err(format!(
        "ArrowArray.__array__: no numpy form for {}",
        array.data_type()
    )))
}

/// An Arrow table exported by hydron (``to_arrow_table``).
///
/// It implements ``__arrow_c_stream__`` (and ``__arrow_c_schema__``):
/// ``pyarrow.table(t)``, ``polars.DataFrame(t)`` and DuckDB
/// (``duckdb.sql("SELECT ... FROM t")``) read it without a copy, as often as
/// asked.
///
/// Examples
/// --------
/// >>> import hydron
/// >>> t = hydron.to_arrow_table(hydron.E8_ROOTS)
/// >>> len(t)
/// 240
#[pyclass(module = "hydron", name = "ArrowTable", frozen)]
pub struct ArrowTable {
    batches: Vec<RecordBatch>,
    schema: SchemaRef,
}

impl ArrowTable {
    /// The record batches `batches`, each of schema `schema`.
    pub fn new(batches: Vec<RecordBatch>, schema: SchemaRef) -> Self {
        Self { batches, schema }
    }

    fn rows(&self) -> usize {
        self.batches.iter().map(RecordBatch::num_rows).sum()
    }
}

#[pymethods]
impl ArrowTable {
    /// The table's schema as an ``arrow_schema`` capsule.
    fn __arrow_c_schema__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyCapsule>> {
        schema_capsule(py, FFI_ArrowSchema::try_from(self.schema.as_ref()))
    }

    /// The record batches as an ``arrow_array_stream`` capsule, sharing their
    /// memory. ``requested_schema`` is ignored, as the interface allows.
    #[pyo3(signature = (requested_schema = None))]
    fn __arrow_c_stream__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        let _ = requested_schema;
        let batches = RecordBatchIterator::new(
            self.batches.clone().into_iter().map(Ok),
            self.schema.clone(),
        );
        let stream = FFI_ArrowArrayStream::new(Box::new(batches));
        PyCapsule::new_with_value(py, stream, STREAM_CAPSULE)
    }

    fn __len__(&self) -> usize {
        self.rows()
    }

    fn __repr__(&self) -> String {
        let columns: Vec<String> = self
            .schema
            .fields()
            .iter()
            .map(|f| format!("{}: {}", f.name(), f.data_type()))
            .collect();
        format!(
            "hydron.ArrowTable({}; {} rows)",
            columns.join(", "),
            self.rows()
        )
    }
}

fn schema_capsule(
    py: Python<'_>,
    schema: Result<FFI_ArrowSchema, ArrowError>,
) -> PyResult<Bound<'_, PyCapsule>> {
    let schema = schema.map_err(|e| arrow_error(py, e))?;
    PyCapsule::new_with_value(py, schema, SCHEMA_CAPSULE)
}

fn arrow_error(py: Python<'_>, error: ArrowError) -> PyErr {
    codec_error(py, CodecError::Arrow(error))
}

fn interface_error(py: Python<'_>, what: String) -> PyErr {
    arrow_error(py, ArrowError::CDataInterface(what))
}

/// The Arrow data `source` exports (an array through `__arrow_c_array__`,
/// else a stream through `__arrow_c_stream__`), as its chunks and its
/// field. A stream of record batches gives struct chunks. The chunks are
/// what the producer declared them to be: check them (`validate_full`)
/// before reading values.
pub fn import(py: Python<'_>, source: &Bound<'_, PyAny>) -> PyResult<(Vec<ArrayRef>, Field)> {
    if source.hasattr(intern!(py, "__arrow_c_array__"))? {
        let capsules = source.call_method0(intern!(py, "__arrow_c_array__"))?;
        let (schema, array) = capsules
            .extract::<(Bound<'_, PyCapsule>, Bound<'_, PyCapsule>)>()
            .map_err(|_| {
                PyTypeError::new_err(
                    "__arrow_c_array__ returned something other than a pair of capsules",
                )
            })?;
        let (array, field) = import_array(py, &schema, &array)?;
        Ok((vec![array], field))
    } else if source.hasattr(intern!(py, "__arrow_c_stream__"))? {
        let capsule = source
            .call_method0(intern!(py, "__arrow_c_stream__"))?
            .cast_into::<PyCapsule>()
            .map_err(|_| PyTypeError::new_err("__arrow_c_stream__ returned no capsule"))?;
        import_stream(py, &capsule)
    } else {
        Err(PyTypeError::new_err(format!(
            "expected Arrow data (an object with __arrow_c_array__ or __arrow_c_stream__: \
             a pyarrow Array, ChunkedArray, RecordBatch or Table, a Polars Series or \
             DataFrame, …), got {} (for numpy arrays use the functions that take them)",
            source.get_type().name()?
        )))
    }
}

fn import_array(
    py: Python<'_>,
    schema: &Bound<'_, PyCapsule>,
    array: &Bound<'_, PyCapsule>,
) -> PyResult<(ArrayRef, Field)> {
    let schema = schema
        .pointer_checked(Some(SCHEMA_CAPSULE))?
        .cast::<FFI_ArrowSchema>();
    let array = array
        .pointer_checked(Some(ARRAY_CAPSULE))?
        .cast::<FFI_ArrowArray>();
    // SAFETY: a capsule named "arrow_schema" holds an ArrowSchema struct
    // (the PyCapsule interface), alive for as long as the capsule, which
    // outlives this call; it is only read.
    let schema = unsafe { schema.as_ref() };
    // SAFETY: a capsule named "arrow_array" holds an ArrowArray struct.
    // `from_raw` moves it out and leaves a released struct in the capsule,
    // so the capsule's destructor does not release the data a second time.
    let array = unsafe { FFI_ArrowArray::from_raw(array.as_ptr()) };
    if array.is_released() {
        return Err(interface_error(
            py,
            "the arrow_array capsule was already consumed".into(),
        ));
    }
    let field = Field::try_from(schema).map_err(|e| arrow_error(py, e))?;
    // SAFETY: `array` and `schema` come from the same `__arrow_c_array__`
    // call, as the interface pairs them.
    let array = checked_import(py, array, field.data_type(), |array| {
        unsafe { from_ffi(array, schema) }.map(make_array)
    })?;
    Ok((array, field))
}

/// The array arrow-rs imports from `array` with `import`, or an error.
/// A producer can hand over data that is not what it declared (a stream
/// whose batches do not match its schema, which pyarrow's
/// `RecordBatchReader.from_batches` does not check). The buffers and
/// children are counted against the declared type first, for the types
/// hydron reads; arrow-rs asserts (panics) rather than errs on some other
/// mismatches (and on null child pointers), and such a panic is caught. Either is a `FormatError`
/// naming the declared type.
fn checked_import(
    py: Python<'_>,
    array: FFI_ArrowArray,
    declared: &DataType,
    import: impl FnOnce(FFI_ArrowArray) -> Result<ArrayRef, ArrowError>,
) -> PyResult<ArrayRef> {
    let mismatch = |why: String| {
        interface_error(
            py,
            format!("the Arrow data does not match its declared type {declared}: {why}"),
        )
    };
    let checked = std::panic::catch_unwind(AssertUnwindSafe(|| {
        layout_matches(&array, declared, "the array")?;
        Ok(import(array))
    }));
    match checked {
        Ok(Ok(Ok(array))) => Ok(array),
        // arrow-rs refuses some columns other producers export (Polars'
        // all-null columns): say that every column is imported.
        Ok(Ok(Err(e))) if matches!(declared, DataType::Struct(f) if f.len() > 1) => {
            Err(arrow_error(
                py,
                ArrowError::CDataInterface(format!(
                    "{e}; hydron imports every column of a table: pass only the vector \
                     column (df.select(\"vector\"), table.select([\"vector\"]))"
                )),
            ))
        }
        Ok(Ok(Err(e))) => Err(arrow_error(py, e)),
        Ok(Err(why)) => Err(mismatch(why)),
        Err(panic) => Err(mismatch(
            panic
                .downcast_ref::<&str>()
                .map(|s| (*s).to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "no message".into()),
        )),
    }
}

/// Checks that `array` has as many buffers and children as `declared`
/// needs, and so on down its children, for the types hydron reads
/// (structs, lists and fixed-size lists, and fixed-width numbers); other
/// types are left to arrow-rs. `at` names the level, for the message.
fn layout_matches(array: &FFI_ArrowArray, declared: &DataType, at: &str) -> Result<(), String> {
    let children: Vec<&DataType> = match declared {
        DataType::Struct(fields) => fields.iter().map(|f| f.data_type()).collect(),
        DataType::FixedSizeList(item, _) | DataType::List(item) | DataType::LargeList(item) => {
            vec![item.data_type()]
        }
        t if t.is_primitive() => Vec::new(),
        _ => return Ok(()),
    };
    let buffers = match declared {
        DataType::Struct(_) | DataType::FixedSizeList(..) => 1, // validity
        DataType::List(_) | DataType::LargeList(_) => 2,        // validity, offsets
        _ => 2,                                                 // validity, values
    };
    if array.num_buffers() != buffers || array.num_children() != children.len() {
        return Err(format!(
            "{at} has {} buffers and {} children, where {declared} has {buffers} and {}",
            array.num_buffers(),
            array.num_children(),
            children.len()
        ));
    }
    for (i, child) in children.into_iter().enumerate() {
        layout_matches(array.child(i), child, &format!("child {i} of {at}"))?;
    }
    Ok(())
}

/// Every array of an `arrow_array_stream` capsule (a stream of arrays of
/// any type, such as a chunked array's, or of record batches), released
/// when read to the end or on the first error.
fn import_stream(
    py: Python<'_>,
    capsule: &Bound<'_, PyCapsule>,
) -> PyResult<(Vec<ArrayRef>, Field)> {
    let raw = capsule
        .pointer_checked(Some(STREAM_CAPSULE))?
        .cast::<FFI_ArrowArrayStream>();
    // SAFETY: a capsule named "arrow_array_stream" holds an ArrowArrayStream
    // struct; `from_raw` moves it out and leaves a released one behind. Our
    // copy is released when it drops.
    let mut stream = unsafe { FFI_ArrowArrayStream::from_raw(raw.as_ptr()) };
    let (Some(_), Some(get_schema), Some(get_next)) =
        (stream.release, stream.get_schema, stream.get_next)
    else {
        return Err(interface_error(
            py,
            "the arrow_array_stream capsule was already consumed".into(),
        ));
    };
    let mut schema = FFI_ArrowSchema::empty();
    // SAFETY: the stream is live (not released) and `schema` is an empty
    // struct for the producer to fill, as the C stream interface defines.
    if unsafe { get_schema(&mut stream, &mut schema) } != 0 {
        return Err(stream_error(py, &mut stream, "schema"));
    }
    let field = Field::try_from(&schema).map_err(|e| arrow_error(py, e))?;
    let mut chunks = Vec::new();
    loop {
        let mut array = FFI_ArrowArray::empty();
        // SAFETY: as for `get_schema`; a released `array` marks the end.
        if unsafe { get_next(&mut stream, &mut array) } != 0 {
            return Err(stream_error(py, &mut stream, "array"));
        }
        if array.is_released() {
            return Ok((chunks, field));
        }
        let declared = field.data_type();
        // SAFETY: every array of a stream has the stream's type (a
        // producer that breaks this is caught where arrow-rs checks).
        chunks.push(checked_import(py, array, declared, |array| {
            unsafe { from_ffi_and_data_type(array, declared.clone()) }.map(make_array)
        })?);
    }
}

/// The producer's own message for a failed `get_schema` / `get_next`.
fn stream_error(py: Python<'_>, stream: &mut FFI_ArrowArrayStream, what: &str) -> PyErr {
    let message = stream
        .get_last_error
        // SAFETY: the stream is live; the string it returns (if any) stays
        // valid until the next call on the stream, and is copied at once.
        .map(|last_error| unsafe { last_error(stream) })
        .filter(|text: &*const c_char| !text.is_null())
        // SAFETY: a non-null last error is a NUL-terminated string.
        .map(|text| {
            unsafe { CStr::from_ptr(text) }
                .to_string_lossy()
                .into_owned()
        })
        .unwrap_or_else(|| "no message".into());
    interface_error(
        py,
        format!("the Arrow stream failed to give its {what}: {message}"),
    )
}
