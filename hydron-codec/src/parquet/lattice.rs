//! Stored lattice codes ([`crate::quant::LatticeCodes`]) as Parquet: a
//! `FixedSizeBinary(code_size)` column `code`, a `Float32` column `scale`
//! (only with per-vector scales), the parameters in the file's key-value
//! metadata (`docs/format.md` §7.2). Read with the same guards as vector
//! files: the footer walked before the parquet crate reads it, every page
//! header checked, nothing sized from a claimed count.

use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use arrow_array::{Array, ArrayRef, FixedSizeBinaryArray, Float32Array, RecordBatch};
use arrow_buffer::Buffer;
use arrow_schema::{DataType, Field, Schema};
use hydron_core::quant::QuantCodes;
use parquet::arrow::arrow_reader::{ArrowReaderMetadata, ParquetRecordBatchReaderBuilder};
use parquet::arrow::ArrowWriter;
use parquet::basic::{GzipLevel, ZstdLevel};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;

use super::reader::{guarded, open_file};
use super::source::Source;
use super::CHECKSUM_KEY;
use super::{footer, pages, parquet_error, Compression, ParquetOptions, ParquetReadOptions};
use crate::quant::{bad, CodesParams, CodesScale, LatticeCodes};
use crate::save::{in_file, SaveTarget};
use crate::CodecError;

/// Footer key: the dimension, decimal.
pub const DIM_KEY: &str = "hydron.quant.dim";
/// Footer key: bits per coordinate, `2` or `4`.
pub const BITS_KEY: &str = "hydron.quant.bits";
/// Footer key: the rotation's seed, decimal (`0..2^64`).
pub const SEED_KEY: &str = "hydron.quant.seed";
/// Footer key: `true` or `false`.
pub const ROTATION_KEY: &str = "hydron.quant.rotation";
/// Footer key: `per-vector`, `unit` or `direction`.
pub const SCALE_KEY: &str = "hydron.quant.scale";
/// Footer key: the number of vectors, decimal; must equal the rows.
pub const COUNT_KEY: &str = "hydron.quant.count";
/// The code column.
const CODE: &str = "code";
/// The scale column.
const SCALE: &str = "scale";
/// Rows per decoded batch, at most.
const BATCH_ROWS: usize = 1 << 16;
/// Code bytes per decoded batch, at most (unless one code is larger): the
/// parquet crate reserves a batch's bytes before it reads a page, from the
/// batch size and the column's width, so wide codes get smaller batches.
const BATCH_BYTES: usize = 4 << 20;

/// The Parquet file of `codes`, in memory.
///
/// # Errors
/// A compression level out of range, or a failure inside the parquet
/// crate.
///
/// ```
/// use hydron_codec::parquet::ParquetOptions;
/// use hydron_codec::quant::{self, CodesParams, LatticeCodes};
/// use hydron_core::quant::QuantCodes;
/// let c = LatticeCodes::new(CodesParams::gf8(2)?, QuantCodes { codes: vec![1, 2, 3, 4], scales: vec![] })?;
/// let bytes = quant::parquet_to_bytes(&c, ParquetOptions::new())?;
/// assert_eq!(quant::parquet_from_bytes(bytes)?, c);
/// # Ok::<(), hydron_codec::CodecError>(())
/// ```
pub fn parquet_to_bytes(
    codes: &LatticeCodes,
    options: ParquetOptions,
) -> Result<Vec<u8>, CodecError> {
    write(Vec::new(), codes, options)
}

/// Saves `codes` as Parquet at `path`, atomically (a temporary file
/// renamed over the target, as every hydron save).
///
/// # Errors
/// As [`parquet_to_bytes`], and I/O errors naming the path.
///
/// ```
/// use hydron_codec::parquet::ParquetOptions;
/// use hydron_codec::quant::{self, CodesParams, CodesScale, LatticeCodes};
/// use hydron_core::quant::QuantCodes;
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("codes.parquet");
/// let p = CodesParams::new(9, 2, 5, true, CodesScale::PerVector)?;
/// let c = LatticeCodes::new(p, QuantCodes { codes: vec![0; 8], scales: vec![1.0, 0.5] })?;
/// quant::save_parquet(&path, &c, ParquetOptions::new())?;
/// assert_eq!(quant::load_parquet(&path)?, c);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn save_parquet(
    path: impl AsRef<Path>,
    codes: &LatticeCodes,
    options: ParquetOptions,
) -> Result<(), CodecError> {
    let path = path.as_ref();
    let (mut target, file) = SaveTarget::create(path, options.is_durable())?;
    let file = write(file, codes, options).map_err(|e| target.in_file(e))?;
    target.commit(file).map_err(|e| target.in_file(e))
}

/// Loads stored codes from a Parquet file at `path`.
///
/// # Errors
/// [`CodecError::BadCodes`] for parameters that are missing, malformed or
/// disagree with the columns (naming the key, the column or the row),
/// and the errors of any Parquet read ([`CodecError::Parquet`],
/// [`CodecError::PageTooLarge`], [`CodecError::ChecksumMismatch`]),
/// wrapped in [`CodecError::InFile`].
pub fn load_parquet(path: impl AsRef<Path>) -> Result<LatticeCodes, CodecError> {
    let path = path.as_ref();
    let source = open_file(path).map_err(|e| in_file(path, CodecError::Io(e)))?;
    read(&source).map_err(|e| in_file(path, e))
}

/// The parameters and count of a Parquet file of lattice codes, from its
/// footer alone (checked as [`load_parquet`] checks it); `None` for a
/// Parquet file without the key [`DIM_KEY`] (a file of vectors, say).
///
/// # Errors
/// A malformed footer or malformed parameters, as [`load_parquet`].
///
/// ```
/// use hydron_codec::parquet::ParquetOptions;
/// use hydron_codec::quant::{self, LatticeCodes};
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("c.parquet");
/// quant::save_parquet(&path, &LatticeCodes::from_gf8(&hydron_core::E8_ROOTS, 2)?, ParquetOptions::new())?;
/// let (params, count) = quant::parquet_params(&path)?.unwrap();
/// assert_eq!((params.bits(), count), (2, 240));
/// let vectors = dir.path().join("v.parquet");
/// hydron_codec::parquet::save(&vectors, &hydron_core::E8_ROOTS, ParquetOptions::new())?;
/// assert!(quant::parquet_params(&vectors)?.is_none());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn parquet_params(path: impl AsRef<Path>) -> Result<Option<(CodesParams, u64)>, CodecError> {
    let path = path.as_ref();
    let source = open_file(path).map_err(|e| in_file(path, CodecError::Io(e)))?;
    params_in(&source).map_err(|e| in_file(path, e))
}

/// [`parquet_params`] of a whole Parquet file in memory (read from a pipe,
/// say): `None` for Parquet without the key [`DIM_KEY`].
///
/// # Errors
/// As [`parquet_params`], without the path.
///
/// ```
/// use hydron_codec::parquet::ParquetOptions;
/// use hydron_codec::quant::{self, LatticeCodes};
/// let c = LatticeCodes::from_gf8(&hydron_core::E8_ROOTS, 4)?;
/// let bytes = quant::parquet_to_bytes(&c, ParquetOptions::new())?;
/// let (params, count) = quant::parquet_params_from_bytes(bytes)?.unwrap();
/// assert_eq!((params.bits(), count), (4, 240));
/// let mut e = hydron_codec::parquet::ParquetEncoder::new(Vec::new(), ParquetOptions::new())?;
/// e.write(&hydron_core::E8_ROOTS)?;
/// assert!(quant::parquet_params_from_bytes(e.finish()?)?.is_none());
/// # Ok::<(), hydron_codec::CodecError>(())
/// ```
pub fn parquet_params_from_bytes(
    bytes: impl Into<bytes::Bytes>,
) -> Result<Option<(CodesParams, u64)>, CodecError> {
    params_in(&Source::Bytes(bytes.into()))
}

/// The footer's key-value metadata (none: empty).
fn key_values(
    metadata: &parquet::arrow::arrow_reader::ArrowReaderMetadata,
) -> Vec<parquet::file::metadata::KeyValue> {
    metadata
        .metadata()
        .file_metadata()
        .key_value_metadata()
        .cloned()
        .unwrap_or_default()
}

/// The parameters and count in `source`'s footer, if it has [`DIM_KEY`].
fn params_in(source: &Source) -> Result<Option<(CodesParams, u64)>, CodecError> {
    footer::check_len(source, ParquetReadOptions::DEFAULT_MAX_PAGE_BYTES)?;
    let metadata = footer::load(source)?;
    let kv = key_values(&metadata);
    if !kv.iter().any(|e| e.key == DIM_KEY) {
        return Ok(None);
    }
    params_of(&kv).map(Some)
}

/// Loads stored codes from a whole Parquet file in memory.
///
/// # Errors
/// As [`load_parquet`], without the path.
pub fn parquet_from_bytes(bytes: impl Into<bytes::Bytes>) -> Result<LatticeCodes, CodecError> {
    read(&Source::Bytes(bytes.into()))
}

fn properties(
    params: &CodesParams,
    count: u64,
    options: ParquetOptions,
) -> Result<WriterProperties, CodecError> {
    let compression = match options.compression() {
        Compression::Uncompressed => parquet::basic::Compression::UNCOMPRESSED,
        Compression::Snappy => parquet::basic::Compression::SNAPPY,
        Compression::Zstd(level) => {
            parquet::basic::Compression::ZSTD(ZstdLevel::try_new(level).map_err(parquet_error)?)
        }
        Compression::Lz4 => parquet::basic::Compression::LZ4_RAW,
        Compression::Gzip(level) => {
            parquet::basic::Compression::GZIP(GzipLevel::try_new(level).map_err(parquet_error)?)
        }
    };
    let kv = |k: &str, v: String| KeyValue::new(k.to_string(), v);
    Ok(WriterProperties::builder()
        .set_compression(compression)
        .set_dictionary_enabled(false)
        .set_max_row_group_row_count(Some(options.row_group_vectors()))
        .set_created_by(format!("hydron {}", env!("CARGO_PKG_VERSION")))
        .set_key_value_metadata(Some(vec![
            kv("hydron.version", "1".into()),
            kv(DIM_KEY, params.dim().to_string()),
            kv(BITS_KEY, params.bits().to_string()),
            kv(SEED_KEY, params.seed().to_string()),
            kv(ROTATION_KEY, params.rotation().to_string()),
            kv(SCALE_KEY, params.scale().name().to_string()),
            kv(COUNT_KEY, count.to_string()),
        ]))
        .build())
}

/// The Arrow schema of `params`' codes; an error for a code size above
/// `i32::MAX` bytes (Arrow's limit for `FixedSizeBinary`, which a
/// dimension near 2^32 at 4 bits reaches).
fn schema(params: &CodesParams) -> Result<Arc<Schema>, CodecError> {
    let size = i32::try_from(params.code_size()).map_err(|_| CodecError::TooLarge {
        length: params.code_size() as u64,
        limit: i32::MAX as u64,
        what: "an Arrow FixedSizeBinary value (the code of one vector)",
    })?;
    let code = Field::new(CODE, DataType::FixedSizeBinary(size), false)
        .with_metadata([("hydron.type".to_string(), "lattice-code".to_string())].into());
    let mut fields = vec![code];
    if params.has_scales() {
        fields.push(Field::new(SCALE, DataType::Float32, false));
    }
    Ok(Arc::new(Schema::new(fields)))
}

fn write<W: Write + Send>(
    out: W,
    codes: &LatticeCodes,
    options: ParquetOptions,
) -> Result<W, CodecError> {
    let params = codes.params();
    let schema = schema(params)?;
    let mut writer = ArrowWriter::try_new(
        out,
        Arc::clone(&schema),
        Some(properties(params, codes.count(), options)?),
    )
    .map_err(parquet_error)?;
    let size = params.code_size();
    let per_group = options.row_group_vectors().max(1);
    let QuantCodes {
        codes: bytes,
        scales,
    } = codes.codes();
    let mut sums = Vec::new();
    for (g, group) in bytes.chunks(per_group * size).enumerate() {
        let rows = group.len() / size;
        let mut hasher = crc32fast::Hasher::new();
        hasher.update(group);
        let code = FixedSizeBinaryArray::try_new(size as i32, Buffer::from(group.to_vec()), None)?;
        let mut columns: Vec<ArrayRef> = vec![Arc::new(code)];
        if params.has_scales() {
            let s = &scales[g * per_group..g * per_group + rows];
            for v in s {
                hasher.update(&v.to_le_bytes());
            }
            columns.push(Arc::new(Float32Array::from(s.to_vec())));
        }
        sums.push(format!("{:08x}", hasher.finalize()));
        let batch = RecordBatch::try_new(Arc::clone(&schema), columns)?;
        writer.write(&batch).map_err(parquet_error)?;
        writer.flush().map_err(parquet_error)?;
    }
    writer.append_key_value_metadata(KeyValue::new(CHECKSUM_KEY.to_string(), sums.join(",")));
    writer.into_inner().map_err(parquet_error)
}

/// The value of footer key `key`, or an error naming it.
fn value<'a>(kv: &'a [KeyValue], key: &str) -> Result<&'a str, CodecError> {
    let mut found = kv.iter().filter(|e| e.key == key);
    let first = found.next();
    if found.next().is_some() {
        return Err(bad(
            None,
            None,
            format!("the footer holds the key {key} twice"),
        ));
    }
    first.and_then(|e| e.value.as_deref()).ok_or_else(|| {
        bad(
            None,
            None,
            format!("the footer has no {key} key: not a file of lattice codes"),
        )
    })
}

fn parse<T: std::str::FromStr>(kv: &[KeyValue], key: &str, what: &str) -> Result<T, CodecError> {
    let text = value(kv, key)?;
    text.parse().map_err(|_| {
        bad(
            None,
            None,
            format!("the footer key {key} is {text:?}, not {what}"),
        )
    })
}

/// The parameters and count a footer's key-value metadata gives.
fn params_of(kv: &[KeyValue]) -> Result<(CodesParams, u64), CodecError> {
    let dim: u32 = parse(kv, DIM_KEY, "a dimension (1..2^32)")?;
    let bits: u8 = parse(kv, BITS_KEY, "a number of bits (2 or 4)")?;
    let seed: u64 = parse(kv, SEED_KEY, "a seed (0..2^64)")?;
    let rotation: bool = parse(kv, ROTATION_KEY, "true or false")?;
    let scale_text = value(kv, SCALE_KEY)?;
    let scale = CodesScale::from_name(scale_text).ok_or_else(|| {
        bad(
            None,
            None,
            format!(
                "the footer key {SCALE_KEY} is {scale_text:?}, not per-vector, unit or direction"
            ),
        )
    })?;
    let count: u64 = parse(kv, COUNT_KEY, "a count of vectors")?;
    let params = CodesParams::new(dim, bits, seed, rotation, scale).map_err(|e| match e {
        CodecError::BadCodes { detail, .. } => {
            bad(None, None, format!("footer parameters: {detail}"))
        }
        e => e,
    })?;
    Ok((params, count))
}

/// The index of the only column named `name`, if any.
fn column(schema: &Schema, name: &str) -> Result<Option<usize>, CodecError> {
    let found: Vec<usize> = (0..schema.fields().len())
        .filter(|&i| schema.field(i).name() == name)
        .collect();
    match found[..] {
        [] => Ok(None),
        [i] => Ok(Some(i)),
        _ => Err(bad(
            None,
            None,
            format!("{} columns are named {name:?}", found.len()),
        )),
    }
}

fn read(source: &Source) -> Result<LatticeCodes, CodecError> {
    read_with(source, ParquetReadOptions::DEFAULT_MAX_PAGE_BYTES)
}

/// [`read`], reading no page larger than `limit` bytes uncompressed.
fn read_with(source: &Source, limit: u64) -> Result<LatticeCodes, CodecError> {
    footer::check_len(source, limit)?;
    let metadata = footer::load(source)?;
    footer::check_row_counts(&metadata)?;
    let checksums = footer::read_checksums(&metadata)?;
    let kv = key_values(&metadata);
    let (params, count) = params_of(&kv)?;
    let rows = metadata.metadata().file_metadata().num_rows() as u64;
    if rows != count {
        return Err(bad(
            None,
            None,
            format!("the footer key {COUNT_KEY} says {count} vectors; the file holds {rows} rows"),
        ));
    }
    let schema = Arc::clone(metadata.schema());
    let size = params.code_size();
    let code = column(&schema, CODE)?
        .ok_or_else(|| bad(None, None, format!("no column named {CODE:?}")))?;
    match schema.field(code).data_type() {
        DataType::FixedSizeBinary(n) if usize::try_from(*n) == Ok(size) => {}
        other => {
            return Err(bad(
                None,
                None,
                format!(
                    "column {CODE:?} is {other}; {} codes at {} bits per coordinate of dimension {} are \
                     FixedSizeBinary({size})",
                    params.scale().name(),
                    params.bits(),
                    params.dim()
                ),
            ))
        }
    }
    let scale = column(&schema, SCALE)?;
    match (scale, params.has_scales()) {
        (Some(i), true) if schema.field(i).data_type() == &DataType::Float32 => {}
        (Some(i), true) => {
            return Err(bad(
                None,
                None,
                format!(
                    "column {SCALE:?} is {}, not Float32",
                    schema.field(i).data_type()
                ),
            ))
        }
        (None, true) => {
            return Err(bad(
                None,
                None,
                format!("per-vector scale mode, but no column named {SCALE:?}"),
            ))
        }
        (Some(_), false) => {
            return Err(bad(
                None,
                None,
                format!(
                    "{} scale mode stores no scales, but there is a {SCALE:?} column",
                    params.scale().name()
                ),
            ))
        }
        (None, false) => {}
    }
    if size as u64 > limit && rows > 0 {
        // Every code is one value of one page, and no page above the limit
        // is read: refused before the reader reserves a batch of them.
        return Err(bad(
            None,
            None,
            format!(
                "column {CODE:?} holds codes of {size} bytes (dimension {} at {} bits per \
                 coordinate), wider than the largest page read ({limit} bytes): no page this \
                 reader accepts can hold one",
                params.dim(),
                params.bits()
            ),
        ));
    }
    // The reader reserves a whole batch of codes up front (rows times the
    // width, the rows taken from the footer's claim): at most BATCH_BYTES,
    // or one code.
    let batch_rows = (BATCH_BYTES / size.max(1)).clamp(1, BATCH_ROWS);
    let wanted: Vec<usize> = std::iter::once(code).chain(scale).collect();
    let mut out = QuantCodes::default();
    for group in 0..metadata.metadata().num_row_groups() {
        check_pages(source, &metadata, group, &wanted, limit)?;
        let scales_before = out.scales.len();
        let codes_before = out.codes.len();
        let first_row = (codes_before / size) as u64;
        let mask = parquet::arrow::ProjectionMask::roots(
            metadata.metadata().file_metadata().schema_descr(),
            wanted.iter().copied(),
        );
        let mut reader = guarded(Some(group), || {
            ParquetRecordBatchReaderBuilder::new_with_metadata(source.clone(), metadata.clone())
                .with_projection(mask)
                .with_row_groups(vec![group])
                .with_batch_size(batch_rows)
                .build()
        })?;
        loop {
            let next = guarded(Some(group), || {
                reader
                    .next()
                    .transpose()
                    .map_err(parquet::errors::ParquetError::from)
            })?;
            let Some(batch) = next else { break };
            let row0 = (out.codes.len() / size) as u64;
            append(&batch, &params, row0, &mut out)?;
        }
        let got = (out.codes.len() - codes_before) / size;
        let claimed = metadata.metadata().row_group(group).num_rows() as u64;
        if got as u64 != claimed {
            return Err(CodecError::Parquet {
                row_group: Some(group),
                error: parquet::errors::ParquetError::General(format!(
                    "the row group claims {claimed} rows, its pages hold {got}"
                )),
            });
        }
        if let Some(sums) = &checksums {
            let mut hasher = crc32fast::Hasher::new();
            hasher.update(&out.codes[codes_before..]);
            for v in &out.scales[scales_before..] {
                hasher.update(&v.to_le_bytes());
            }
            let found = hasher.finalize();
            if found != sums[group] {
                return Err(CodecError::ChecksumMismatch {
                    row_group: group,
                    expected: sums[group],
                    found,
                });
            }
        }
        // Scales are judged after the checksum, so damage reads as damage.
        if let Some((i, v)) = out.scales[scales_before..]
            .iter()
            .enumerate()
            .find(|(_, s)| !(s.is_finite() && **s >= 0.0))
        {
            return Err(bad(
                None,
                Some(first_row + i as u64),
                format!("scale {v} is not a finite non-negative number"),
            ));
        }
    }
    LatticeCodes::new(params, out)
}

/// Every page of the columns read in row group `group` must lie in its
/// chunk, in the file, and claim at most `limit` bytes uncompressed.
fn check_pages(
    source: &Source,
    metadata: &ArrowReaderMetadata,
    group: usize,
    roots: &[usize],
    limit: u64,
) -> Result<(), CodecError> {
    let meta = metadata.metadata();
    let descr = meta.file_metadata().schema_descr();
    let row_group = meta.row_group(group);
    for leaf in 0..descr.num_columns() {
        if !roots.contains(&descr.get_column_root_idx(leaf)) {
            continue;
        }
        let chunk = row_group.column(leaf);
        let start = chunk
            .dictionary_page_offset()
            .unwrap_or_else(|| chunk.data_page_offset());
        let checked =
            pages::check_chunk(source, start, chunk.compressed_size(), limit).map_err(|error| {
                CodecError::Parquet {
                    row_group: Some(group),
                    error,
                }
            })?;
        if let Err(too_large) = checked {
            return Err(CodecError::PageTooLarge {
                row_group: group,
                offset: too_large.offset,
                claimed: too_large.claimed,
                limit,
            });
        }
    }
    Ok(())
}

/// Appends a batch's codes and scales (rows from `row0`), refusing nulls.
fn append(
    batch: &RecordBatch,
    params: &CodesParams,
    row0: u64,
    out: &mut QuantCodes,
) -> Result<(), CodecError> {
    let null_row = |a: &dyn Array| {
        (0..a.len())
            .find(|&i| a.is_null(i))
            .map(|i| row0 + i as u64)
    };
    let codes = batch
        .column(0)
        .as_any()
        .downcast_ref::<FixedSizeBinaryArray>()
        .ok_or_else(|| {
            bad(
                None,
                Some(row0),
                "the code column is not FixedSizeBinary".into(),
            )
        })?;
    if let Some(row) = null_row(codes) {
        return Err(bad(None, Some(row), "the code is null".into()));
    }
    if usize::try_from(codes.value_length()) != Ok(params.code_size()) {
        return Err(bad(
            None,
            Some(row0),
            format!(
                "codes of {} bytes, expected {}",
                codes.value_length(),
                params.code_size()
            ),
        ));
    }
    let start = codes.offset() * params.code_size();
    let bytes = &codes.value_data()[start..start + codes.len() * params.code_size()];
    out.codes.extend_from_slice(bytes);
    if params.has_scales() {
        let scales = batch
            .column(1)
            .as_any()
            .downcast_ref::<Float32Array>()
            .ok_or_else(|| bad(None, Some(row0), "the scale column is not Float32".into()))?;
        if let Some(row) = null_row(scales) {
            return Err(bad(None, Some(row), "the scale is null".into()));
        }
        out.scales.extend_from_slice(scales.values());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(n: usize, scale: CodesScale) -> LatticeCodes {
        let params = CodesParams::new(20, 2, 3, true, scale).unwrap();
        let codes = (0..n * params.code_size()).map(|i| (i * 7) as u8).collect();
        let scales = if params.has_scales() {
            (0..n).map(|i| i as f32 * 0.5).collect()
        } else {
            vec![]
        };
        LatticeCodes::new(params, QuantCodes { codes, scales }).unwrap()
    }

    /// A file with these key-value pairs and columns, written by the
    /// parquet crate alone (as another tool would).
    fn crafted(kv: &[(&str, &str)], columns: Vec<(&str, ArrayRef)>) -> Vec<u8> {
        let fields: Vec<Field> = columns
            .iter()
            .map(|(n, a)| Field::new(*n, a.data_type().clone(), true))
            .collect();
        let schema = Arc::new(Schema::new(fields));
        let props = WriterProperties::builder()
            .set_key_value_metadata(Some(
                kv.iter()
                    .map(|(k, v)| KeyValue::new(k.to_string(), v.to_string()))
                    .collect(),
            ))
            .build();
        let mut w = ArrowWriter::try_new(Vec::new(), Arc::clone(&schema), Some(props)).unwrap();
        let batch =
            RecordBatch::try_new(schema, columns.into_iter().map(|(_, a)| a).collect()).unwrap();
        w.write(&batch).unwrap();
        w.into_inner().unwrap()
    }

    const GF8_KV: [(&str, &str); 6] = [
        (DIM_KEY, "8"),
        (BITS_KEY, "2"),
        (SEED_KEY, "0"),
        (ROTATION_KEY, "false"),
        (SCALE_KEY, "direction"),
        (COUNT_KEY, "2"),
    ];

    fn two_codes(size: i32) -> ArrayRef {
        let data = vec![1u8; 2 * size as usize];
        Arc::new(FixedSizeBinaryArray::try_new(size, Buffer::from(data), None).unwrap())
    }

    #[test]
    fn round_trips_in_row_groups_with_and_without_scales() {
        for scale in [
            CodesScale::PerVector,
            CodesScale::Unit,
            CodesScale::Direction,
        ] {
            let c = sample(10, scale);
            let options = ParquetOptions::new().with_row_group_vectors(3);
            let bytes = parquet_to_bytes(&c, options).unwrap();
            assert_eq!(parquet_from_bytes(bytes.clone()).unwrap(), c);
            let meta = parquet::file::reader::FileReader::metadata(
                &parquet::file::serialized_reader::SerializedFileReader::new(bytes::Bytes::from(
                    bytes,
                ))
                .unwrap(),
            )
            .clone();
            assert_eq!(meta.num_row_groups(), 4);
            let columns = meta.file_metadata().schema_descr().num_columns();
            assert_eq!(columns, if scale == CodesScale::PerVector { 2 } else { 1 });
        }
        let empty = sample(0, CodesScale::PerVector);
        let bytes = parquet_to_bytes(&empty, ParquetOptions::new()).unwrap();
        assert_eq!(parquet_from_bytes(bytes).unwrap(), empty);
    }

    #[test]
    fn a_file_written_by_another_tool_reads() {
        let bytes = crafted(&GF8_KV, vec![(CODE, two_codes(2))]);
        let c = parquet_from_bytes(bytes).unwrap();
        assert_eq!(c.codes().codes, vec![1; 4]);
        assert_eq!(c.params(), &CodesParams::gf8(2).unwrap());
    }

    #[test]
    fn parameters_that_disagree_with_the_columns_are_errors() {
        let err = |kv: &[(&str, &str)], columns: Vec<(&str, ArrayRef)>| {
            parquet_from_bytes(crafted(kv, columns))
                .unwrap_err()
                .to_string()
        };
        let with = |key: &str, value: &'static str| {
            let mut kv = GF8_KV.to_vec();
            for e in &mut kv {
                if e.0 == key {
                    e.1 = value;
                }
            }
            kv
        };
        let e = err(&with(COUNT_KEY, "3"), vec![(CODE, two_codes(2))]);
        assert!(e.contains("says 3 vectors; the file holds 2 rows"), "{e}");
        let e = err(&with(BITS_KEY, "4"), vec![(CODE, two_codes(2))]);
        assert!(e.contains("FixedSizeBinary(4)"), "{e}");
        let e = err(&with(SCALE_KEY, "sideways"), vec![(CODE, two_codes(2))]);
        assert!(e.contains("hydron.quant.scale is \"sideways\""), "{e}");
        let e = err(&GF8_KV[..5], vec![(CODE, two_codes(2))]);
        assert!(e.contains("no hydron.quant.count key"), "{e}");
        let e = err(&with(SCALE_KEY, "per-vector"), vec![(CODE, two_codes(2))]);
        assert!(e.contains("no column named \"scale\""), "{e}");
        let scale: ArrayRef = Arc::new(Float32Array::from(vec![1.0, 2.0]));
        let e = err(&GF8_KV, vec![(CODE, two_codes(2)), (SCALE, scale)]);
        assert!(e.contains("stores no scales"), "{e}");
    }

    #[test]
    fn a_bad_or_null_scale_names_its_row() {
        let kv = [
            (DIM_KEY, "8"),
            (BITS_KEY, "2"),
            (SEED_KEY, "0"),
            (ROTATION_KEY, "false"),
            (SCALE_KEY, "per-vector"),
            (COUNT_KEY, "2"),
        ];
        let nan: ArrayRef = Arc::new(Float32Array::from(vec![1.0, f32::NAN]));
        let e =
            parquet_from_bytes(crafted(&kv, vec![(CODE, two_codes(2)), (SCALE, nan)])).unwrap_err();
        assert!(
            matches!(e, CodecError::BadCodes { row: Some(1), .. }),
            "{e}"
        );
        let null: ArrayRef = Arc::new(Float32Array::from(vec![None, Some(1.0)]));
        let e = parquet_from_bytes(crafted(&kv, vec![(CODE, two_codes(2)), (SCALE, null)]))
            .unwrap_err();
        assert!(
            matches!(e, CodecError::BadCodes { row: Some(0), .. }),
            "{e}"
        );
    }

    #[test]
    fn a_changed_code_is_a_checksum_mismatch() {
        let c = sample(4, CodesScale::Unit);
        let mut bytes = parquet_to_bytes(
            &c,
            ParquetOptions::new().with_compression(Compression::Uncompressed),
        )
        .unwrap();
        // The codes are written plainly: find the first code row and flip a bit.
        let at = bytes
            .windows(6)
            .position(|w| w == &c.codes().codes[6..12])
            .unwrap();
        bytes[at] ^= 1;
        let e = parquet_from_bytes(bytes).unwrap_err();
        assert!(
            matches!(e, CodecError::ChecksumMismatch { row_group: 0, .. }),
            "{e}"
        );
    }

    /// `bytes` with the file's and the row group's row counts, written as
    /// 5, set to `rows`. In the Thrift compact footer each is an i64 after
    /// a field delta of 1 (`0x16`), zigzag 5 being `0x0a`; the column's
    /// value count (also 5) sits between them and stays. The footer is
    /// rebuilt with the new varints and its length fixed.
    fn with_row_counts(bytes: &[u8], rows: i64) -> Vec<u8> {
        let n = bytes.len();
        let footer_len = u32::from_le_bytes(bytes[n - 8..n - 4].try_into().unwrap()) as usize;
        let start = n - 8 - footer_len;
        let footer = &bytes[start..n - 8];
        let found: Vec<usize> = (0..footer.len() - 1)
            .filter(|&i| footer[i..i + 2] == [0x16, 0x0a])
            .collect();
        assert_eq!(found.len(), 3, "the file's count, the values, the group's");
        let mut zigzag = ((rows << 1) ^ (rows >> 63)) as u64;
        let mut varint = vec![0x16];
        while zigzag >= 0x80 {
            varint.push((zigzag as u8) | 0x80);
            zigzag >>= 7;
        }
        varint.push(zigzag as u8);
        let (first, last) = (found[0], found[2]);
        let mut new = footer[..first].to_vec();
        new.extend_from_slice(&varint);
        new.extend_from_slice(&footer[first + 2..last]);
        new.extend_from_slice(&varint);
        new.extend_from_slice(&footer[last + 2..]);
        let mut out = bytes[..start].to_vec();
        out.extend_from_slice(&new);
        out.extend_from_slice(&(new.len() as u32).to_le_bytes());
        out.extend_from_slice(b"PAR1");
        out
    }

    #[test]
    fn wide_codes_under_a_footer_claiming_many_rows_reserve_one_batch_of_bytes() {
        // Codes of 1 MiB (dimension 2^22 at 2 bits), 5 rows, but the footer
        // and the count key claim 2^20: the parquet crate reserved a batch
        // of 65,536 codes from that claim, 64 GiB, and the process aborted.
        let size = 1 << 20;
        let rows = 1i64 << 20;
        let data = vec![0u8; 5 * size as usize];
        let code: ArrayRef =
            Arc::new(FixedSizeBinaryArray::try_new(size, Buffer::from(data), None).unwrap());
        let kv = [
            (DIM_KEY, "4194304"),
            (BITS_KEY, "2"),
            (SEED_KEY, "0"),
            (ROTATION_KEY, "false"),
            (SCALE_KEY, "unit"),
            (COUNT_KEY, "1048576"),
        ];
        let bytes = with_row_counts(&crafted(&kv, vec![(CODE, code)]), rows);
        let e = parquet_from_bytes(bytes).unwrap_err();
        assert!(
            e.to_string()
                .contains("the row group claims 1048576 rows, its pages hold 5"),
            "{e}"
        );
        // The same 5 codes, truthfully counted, read back.
        let params = CodesParams::new(1 << 22, 2, 0, false, CodesScale::Unit).unwrap();
        let c = LatticeCodes::new(
            params,
            QuantCodes {
                codes: vec![0; 5 * size as usize],
                scales: vec![],
            },
        )
        .unwrap();
        let bytes = parquet_to_bytes(&c, ParquetOptions::new()).unwrap();
        assert_eq!(parquet_from_bytes(bytes).unwrap(), c);
    }

    #[test]
    fn codes_wider_than_a_page_are_refused_before_reading() {
        // 2 MiB codes (dimension 2^23 at 2 bits) under a 1 MiB page limit
        // (64 MiB codes under the default one): no page the reader accepts
        // holds one, so none is read, nor a batch of them reserved.
        let params = CodesParams::new(1 << 23, 2, 0, false, CodesScale::Unit).unwrap();
        let c = LatticeCodes::new(
            params,
            QuantCodes {
                codes: vec![0; 2 << 20],
                scales: vec![],
            },
        )
        .unwrap();
        let bytes = bytes::Bytes::from(parquet_to_bytes(&c, ParquetOptions::new()).unwrap());
        let err = read_with(&Source::Bytes(bytes.clone()), 1 << 20).unwrap_err();
        assert!(
            matches!(&err, CodecError::BadCodes { .. })
                && err.to_string().contains(
                    "holds codes of 2097152 bytes (dimension 8388608 at 2 bits per \
                     coordinate), wider than the largest page read (1048576 bytes)"
                ),
            "{err}"
        );
        assert_eq!(read_with(&Source::Bytes(bytes), 4 << 20).unwrap(), c);
        // No rows: nothing to read, nothing refused.
        let none = LatticeCodes::new(params, QuantCodes::default()).unwrap();
        let bytes = bytes::Bytes::from(parquet_to_bytes(&none, ParquetOptions::new()).unwrap());
        assert_eq!(read_with(&Source::Bytes(bytes), 1 << 20).unwrap(), none);
    }

    #[test]
    fn a_code_too_wide_for_arrow_is_an_error_not_a_panic() {
        let params = CodesParams::new(u32::MAX, 4, 0, false, CodesScale::Unit).unwrap();
        let c = LatticeCodes::new(params, QuantCodes::default()).unwrap();
        let e = parquet_to_bytes(&c, ParquetOptions::new()).unwrap_err();
        assert!(
            matches!(
                e,
                CodecError::TooLarge {
                    length: 2_147_483_648,
                    ..
                }
            ),
            "{e}"
        );
        // The fory message holds it.
        #[cfg(feature = "fory-messages")]
        assert_eq!(
            crate::quant::decode(&crate::quant::encode(&c).unwrap()).unwrap(),
            c
        );
    }

    #[test]
    fn every_cut_is_an_error_not_a_panic() {
        let bytes =
            parquet_to_bytes(&sample(5, CodesScale::PerVector), ParquetOptions::new()).unwrap();
        for n in 0..bytes.len() {
            assert!(parquet_from_bytes(bytes[..n].to_vec()).is_err(), "{n}");
        }
    }
}
