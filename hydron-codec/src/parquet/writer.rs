//! [`ParquetEncoder`]: vectors or codes as Parquet to any [`Write`];
//! [`ParquetWriter`]: the same to a file, saved atomically.

use std::fs::File;
use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::SchemaRef;
use hydron_core::{E8Root, Gf8};
use parquet::arrow::ArrowWriter;
use parquet::basic::{GzipLevel, ZstdLevel};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::schema::types::ColumnPath;

use super::vector_pages::VectorPages;
use super::{parquet_error, Compression, ParquetOptions, CHECKSUM_KEY};
use crate::arrow::{self as harrow, CODE_COLUMN, VECTOR_COLUMN};
use crate::save::{spent, SaveTarget};
use crate::CodecError;

/// Codes copied into one Arrow batch at a time by
/// [`ParquetEncoder::write_codes`] (2 MiB).
const COPY_CODES: usize = 1 << 21;

/// What a file holds.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    Vectors,
    Codes,
}

/// Writes vectors (or codes) as a Parquet file to any [`Write`] + [`Send`]
/// (a `Vec<u8>`, standard output, a socket), row group by row group: it
/// holds at most about one row group, encoded (for vectors, its compressed
/// pages and the rows of one page not yet encoded, at most 20,000
/// vectors). Nothing is atomic here;
/// [`ParquetWriter`] adds the temporary file and the rename.
///
/// ```
/// use hydron_codec::parquet::{self, ParquetEncoder, ParquetOptions};
/// use hydron_codec::Policy;
/// use hydron_core::E8_ROOTS;
///
/// let mut e = ParquetEncoder::new(Vec::new(), ParquetOptions::new().with_row_group_vectors(100))?;
/// e.write(&E8_ROOTS[..150])?;
/// e.write(&E8_ROOTS[150..])?;
/// assert_eq!(e.vectors(), 240);
/// let bytes = e.finish()?;
/// assert_eq!(parquet::from_bytes(bytes, Policy::Strict)?, E8_ROOTS);
/// # Ok::<(), hydron_codec::CodecError>(())
/// ```
pub struct ParquetEncoder<W: Write + Send> {
    writer: Sink<W>,
    kind: Kind,
    rows: u64,
    checksums: Checksums,
}

/// What writes the file: hydron's own pages for vectors
/// ([`VectorPages`]), the parquet crate's Arrow writer for codes (with
/// their schema).
enum Sink<W: Write + Send> {
    Vectors(VectorPages<W>),
    Codes(ArrowWriter<W>, SchemaRef),
}

/// The CRC-32 of each row group's values, as written: stored in the
/// footer under [`CHECKSUM_KEY`] so that hydron's reader finds any value
/// changed after writing (arrow-rs writes no page checksums).
#[derive(Debug)]
struct Checksums {
    row_group_vectors: u64,
    /// Rows hashed into `current`.
    in_group: u64,
    current: crc32fast::Hasher,
    done: Vec<u32>,
}

impl Checksums {
    /// Hashes `bytes`, the values of `rows` rows, cutting row groups where
    /// the writer does.
    fn update(&mut self, mut bytes: &[u8], mut rows: u64) {
        let per_row = (bytes.len() as u64).checked_div(rows).unwrap_or(0);
        while rows > 0 {
            let take = rows.min(self.row_group_vectors - self.in_group);
            let (head, tail) = bytes.split_at((take * per_row) as usize);
            self.current.update(head);
            self.in_group += take;
            rows -= take;
            bytes = tail;
            if self.in_group == self.row_group_vectors {
                self.close_group();
            }
        }
    }

    fn close_group(&mut self) {
        let hasher = std::mem::take(&mut self.current);
        self.done.push(hasher.finalize());
        self.in_group = 0;
    }

    /// The footer value: each row group's CRC-32, in hex, comma-separated.
    fn finish(mut self) -> String {
        if self.in_group > 0 {
            self.close_group();
        }
        let hex: Vec<String> = self.done.iter().map(|c| format!("{c:08x}")).collect();
        hex.join(",")
    }
}

impl<W: Write + Send> std::fmt::Debug for ParquetEncoder<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ParquetEncoder")
            .field("kind", &self.kind)
            .field("rows", &self.rows)
            .finish_non_exhaustive()
    }
}

impl<W: Write + Send> ParquetEncoder<W> {
    /// A vector file (column `vector`) written to `writer`.
    ///
    /// ```
    /// use hydron_codec::parquet::{ParquetEncoder, ParquetOptions};
    /// let e = ParquetEncoder::new(Vec::new(), ParquetOptions::new())?;
    /// assert!(e.finish()?.starts_with(b"PAR1"));
    /// # Ok::<(), hydron_codec::CodecError>(())
    /// ```
    pub fn new(writer: W, options: ParquetOptions) -> Result<ParquetEncoder<W>, CodecError> {
        ParquetEncoder::with_kind(writer, options, Kind::Vectors)
    }

    /// A codes file (column `code`) written to `writer`.
    ///
    /// ```
    /// use hydron_codec::parquet::{ParquetEncoder, ParquetOptions};
    /// use hydron_core::E8Root;
    /// let mut e = ParquetEncoder::new_codes(Vec::new(), ParquetOptions::new())?;
    /// e.write_codes(&[E8Root::new(1)?])?;
    /// assert!(e.finish()?.ends_with(b"PAR1"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn new_codes(writer: W, options: ParquetOptions) -> Result<ParquetEncoder<W>, CodecError> {
        ParquetEncoder::with_kind(writer, options, Kind::Codes)
    }

    fn with_kind(
        writer: W,
        options: ParquetOptions,
        kind: Kind,
    ) -> Result<ParquetEncoder<W>, CodecError> {
        let schema = match kind {
            Kind::Vectors => harrow::vector_schema(),
            Kind::Codes => harrow::code_schema(),
        };
        let properties = properties(options, kind)?;
        let writer = match kind {
            Kind::Vectors => Sink::Vectors(
                VectorPages::new(writer, &schema, properties, options.row_group_vectors())
                    .map_err(parquet_error)?,
            ),
            Kind::Codes => Sink::Codes(
                ArrowWriter::try_new(writer, Arc::clone(&schema), Some(properties))
                    .map_err(parquet_error)?,
                schema,
            ),
        };
        Ok(ParquetEncoder {
            writer,
            kind,
            rows: 0,
            checksums: Checksums {
                row_group_vectors: options.row_group_vectors() as u64,
                in_group: 0,
                current: crc32fast::Hasher::new(),
                done: Vec::new(),
            },
        })
    }

    /// Writes vectors: whole row groups straight from the slice, the rest
    /// copied until a row group is full.
    ///
    /// ```
    /// use hydron_codec::parquet::{ParquetEncoder, ParquetOptions};
    /// use hydron_core::E8Root;
    /// let mut e = ParquetEncoder::new_codes(Vec::new(), ParquetOptions::new())?;
    /// assert!(e.write(&[hydron_core::Gf8::ZERO]).is_err()); // a codes file
    /// # Ok::<(), hydron_codec::CodecError>(())
    /// ```
    pub fn write(&mut self, vectors: &[Gf8]) -> Result<(), CodecError> {
        self.expect(Kind::Vectors)?;
        let Sink::Vectors(pages) = &mut self.writer else {
            unreachable!("a vector file writes vectors");
        };
        let rows = Gf8::slice_as_arrays(vectors);
        self.checksums
            .update(bytemuck::cast_slice(rows), vectors.len() as u64);
        pages.write(rows).map_err(parquet_error)?;
        self.rows += vectors.len() as u64;
        Ok(())
    }

    /// Writes vectors it takes ownership of (as `write` does).
    ///
    /// ```
    /// use hydron_codec::parquet::{ParquetEncoder, ParquetOptions};
    /// let mut e = ParquetEncoder::new(Vec::new(), ParquetOptions::new())?;
    /// e.write_vec(hydron_core::E8_ROOTS.to_vec())?;
    /// assert_eq!(e.vectors(), 240);
    /// # Ok::<(), hydron_codec::CodecError>(())
    /// ```
    pub fn write_vec(&mut self, vectors: Vec<Gf8>) -> Result<(), CodecError> {
        self.write(&vectors)
    }

    /// Writes E8 root codes (to a file made by `new_codes`).
    ///
    /// ```
    /// use hydron_codec::parquet::{ParquetEncoder, ParquetOptions};
    /// use hydron_core::E8Root;
    /// let mut e = ParquetEncoder::new(Vec::new(), ParquetOptions::new())?;
    /// assert!(e.write_codes(&[E8Root::new(0)?]).is_err()); // a vector file
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn write_codes(&mut self, codes: &[E8Root]) -> Result<(), CodecError> {
        self.expect(Kind::Codes)?;
        for piece in codes.chunks(COPY_CODES) {
            self.checksums
                .update(bytemuck::cast_slice(piece), piece.len() as u64);
            self.write_array(Arc::new(harrow::codes_to_arrow(piece.to_vec())))?;
        }
        Ok(())
    }

    /// How many vectors (or codes) have been written.
    ///
    /// ```
    /// use hydron_codec::parquet::{ParquetEncoder, ParquetOptions};
    /// let e = ParquetEncoder::new(Vec::new(), ParquetOptions::new())?;
    /// assert_eq!(e.vectors(), 0);
    /// # Ok::<(), hydron_codec::CodecError>(())
    /// ```
    #[must_use]
    pub fn vectors(&self) -> u64 {
        self.rows
    }

    /// Writes the last row group and the footer, and returns the writer.
    ///
    /// ```
    /// use hydron_codec::parquet::{ParquetEncoder, ParquetOptions};
    /// let bytes = ParquetEncoder::new(Vec::new(), ParquetOptions::new())?.finish()?;
    /// assert!(bytes.starts_with(b"PAR1") && bytes.ends_with(b"PAR1"));
    /// # Ok::<(), hydron_codec::CodecError>(())
    /// ```
    pub fn finish(self) -> Result<W, CodecError> {
        let checksums = KeyValue::new(CHECKSUM_KEY.to_string(), self.checksums.finish());
        match self.writer {
            Sink::Vectors(pages) => pages.finish(checksums),
            Sink::Codes(mut writer, _) => {
                writer.append_key_value_metadata(checksums);
                writer.into_inner()
            }
        }
        .map_err(parquet_error)
    }

    fn expect(&self, kind: Kind) -> Result<(), CodecError> {
        if self.kind == kind {
            return Ok(());
        }
        let (wrote, file) = match kind {
            Kind::Vectors => ("vectors", "codes"),
            Kind::Codes => ("codes", "vectors"),
        };
        Err(CodecError::Io(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("cannot write {wrote} to a Parquet file of {file}"),
        )))
    }

    fn write_array(&mut self, array: ArrayRef) -> Result<(), CodecError> {
        let Sink::Codes(writer, schema) = &mut self.writer else {
            unreachable!("a codes file writes codes");
        };
        let rows = array.len() as u64;
        let batch = RecordBatch::try_new(Arc::clone(schema), vec![array])?;
        writer.write(&batch).map_err(parquet_error)?;
        self.rows += rows;
        Ok(())
    }
}

/// The writer properties for `options`: the codec, the row group size,
/// plain encoding without dictionary for the floats (random coordinates
/// never repeat), no statistics for them (min and max of coordinates
/// prune nothing), and chunk statistics for codes (so engines can skip row
/// groups by code range).
fn properties(options: ParquetOptions, kind: Kind) -> Result<WriterProperties, CodecError> {
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
    let builder = WriterProperties::builder()
        .set_compression(compression)
        .set_max_row_group_row_count(Some(options.row_group_vectors()))
        .set_created_by(format!(
            "hydron {} (parquet-rs {})",
            env!("CARGO_PKG_VERSION"),
            parquet::file::properties::DEFAULT_CREATED_BY
                .rsplit(' ')
                .next()
                .unwrap_or("")
        ))
        .set_key_value_metadata(Some(vec![KeyValue::new(
            "hydron.version".to_string(),
            "1".to_string(),
        )]));
    let builder = match kind {
        Kind::Vectors => {
            let floats = ColumnPath::new(vec![
                VECTOR_COLUMN.to_string(),
                "list".to_string(),
                "item".to_string(),
            ]);
            builder
                .set_column_dictionary_enabled(floats.clone(), false)
                .set_column_statistics_enabled(floats, EnabledStatistics::None)
        }
        Kind::Codes => builder.set_column_statistics_enabled(
            ColumnPath::new(vec![CODE_COLUMN.to_string()]),
            EnabledStatistics::Chunk,
        ),
    };
    Ok(builder.build())
}

/// Writes a Parquet file of vectors (or codes) row group by row group and
/// replaces the target atomically on [`finish`](ParquetWriter::finish),
/// exactly as [`crate::file::FileWriter`] does: a regular file or a new
/// path is written to a hidden temporary file renamed over it at the end;
/// a FIFO or a character device is written directly; a directory or a
/// block device is refused. Dropped without `finish`, nothing is left.
///
/// ```
/// use hydron_codec::parquet::{self, ParquetOptions, ParquetWriter};
/// use hydron_codec::Policy;
/// use hydron_core::Gf8;
///
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("stream.parquet");
/// let mut w = ParquetWriter::create(&path, ParquetOptions::new().with_row_group_vectors(2))?;
/// for _ in 0..5 {
///     w.write(&[Gf8::ZERO])?;
/// }
/// assert!(!path.exists()); // nothing is visible before finish
/// w.finish()?;
/// assert_eq!(parquet::load(&path, Policy::Strict)?.len(), 5);
///
/// let mut w = ParquetWriter::create(&path, ParquetOptions::new())?;
/// w.write(&[Gf8::ZERO; 100])?;
/// drop(w); // abandoned: the old file stays, the temporary file goes
/// assert_eq!(parquet::load(&path, Policy::Strict)?.len(), 5);
/// assert_eq!(std::fs::read_dir(dir.path())?.count(), 1);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct ParquetWriter {
    /// `None` once a write failed. Declared before `target`, so the file is
    /// closed before the temporary file is removed on drop.
    encoder: Option<ParquetEncoder<File>>,
    target: SaveTarget,
}

impl ParquetWriter {
    /// Starts a vector file at `path` (see [`ParquetWriter`] for what
    /// happens to what is there).
    ///
    /// ```
    /// use hydron_codec::parquet::{ParquetOptions, ParquetWriter};
    /// let dir = tempfile::tempdir()?;
    /// let err = ParquetWriter::create(dir.path(), ParquetOptions::new()).unwrap_err();
    /// assert!(err.to_string().ends_with("is a directory, not a file it can replace"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn create(
        path: impl AsRef<Path>,
        options: ParquetOptions,
    ) -> Result<ParquetWriter, CodecError> {
        ParquetWriter::start(path.as_ref(), options, Kind::Vectors)
    }

    /// Starts a codes file at `path`.
    ///
    /// ```
    /// use hydron_codec::parquet::{ParquetOptions, ParquetWriter};
    /// let dir = tempfile::tempdir()?;
    /// let w = ParquetWriter::create_codes(dir.path().join("c.parquet"), ParquetOptions::new())?;
    /// w.finish()?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn create_codes(
        path: impl AsRef<Path>,
        options: ParquetOptions,
    ) -> Result<ParquetWriter, CodecError> {
        ParquetWriter::start(path.as_ref(), options, Kind::Codes)
    }

    fn start(
        path: &Path,
        options: ParquetOptions,
        kind: Kind,
    ) -> Result<ParquetWriter, CodecError> {
        let (target, file) = SaveTarget::create(path, options.is_durable())?;
        let encoder =
            ParquetEncoder::with_kind(file, options, kind).map_err(|e| target.in_file(e))?;
        Ok(ParquetWriter {
            encoder: Some(encoder),
            target,
        })
    }

    /// Writes vectors. After an error the writer is spent: later writes
    /// and `finish` fail, and the target is left as it was.
    ///
    /// ```
    /// use hydron_codec::parquet::{ParquetOptions, ParquetWriter};
    /// let dir = tempfile::tempdir()?;
    /// let mut w = ParquetWriter::create(dir.path().join("v.parquet"), ParquetOptions::new())?;
    /// w.write(&hydron_core::E8_ROOTS)?;
    /// assert_eq!(w.vectors(), 240);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn write(&mut self, vectors: &[Gf8]) -> Result<(), CodecError> {
        self.with_encoder(|e| e.write(vectors))
    }

    /// Writes vectors it takes ownership of (as `write` does).
    ///
    /// ```
    /// use hydron_codec::parquet::{ParquetOptions, ParquetWriter};
    /// let dir = tempfile::tempdir()?;
    /// let mut w = ParquetWriter::create(dir.path().join("v.parquet"), ParquetOptions::new())?;
    /// w.write_vec(hydron_core::E8_ROOTS.to_vec())?;
    /// w.finish()?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn write_vec(&mut self, vectors: Vec<Gf8>) -> Result<(), CodecError> {
        self.with_encoder(|e| e.write_vec(vectors))
    }

    /// Writes E8 root codes (to a file started by `create_codes`).
    ///
    /// ```
    /// use hydron_codec::parquet::{ParquetOptions, ParquetWriter};
    /// use hydron_core::E8Root;
    /// let dir = tempfile::tempdir()?;
    /// let mut w = ParquetWriter::create_codes(dir.path().join("c.parquet"), ParquetOptions::new())?;
    /// w.write_codes(&[E8Root::new(4)?; 10])?;
    /// assert_eq!(w.vectors(), 10);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn write_codes(&mut self, codes: &[E8Root]) -> Result<(), CodecError> {
        self.with_encoder(|e| e.write_codes(codes))
    }

    /// How many vectors (or codes) have been written.
    ///
    /// ```
    /// use hydron_codec::parquet::{ParquetOptions, ParquetWriter};
    /// let dir = tempfile::tempdir()?;
    /// let w = ParquetWriter::create(dir.path().join("v.parquet"), ParquetOptions::new())?;
    /// assert_eq!(w.vectors(), 0);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn vectors(&self) -> u64 {
        self.encoder.as_ref().map_or(0, ParquetEncoder::vectors)
    }

    /// Writes the last row group and the footer, flushes to disk and
    /// renames the temporary file over the target.
    ///
    /// ```
    /// use hydron_codec::parquet::{ParquetOptions, ParquetWriter};
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("empty.parquet");
    /// ParquetWriter::create(&path, ParquetOptions::new())?.finish()?;
    /// assert!(path.exists());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn finish(mut self) -> Result<(), CodecError> {
        let result = self.commit();
        result.map_err(|e| self.target.in_file(e))
    }

    fn commit(&mut self) -> Result<(), CodecError> {
        let encoder = self.encoder.take().ok_or_else(spent)?;
        let file = encoder.finish()?;
        self.target.commit(file)
    }

    fn with_encoder(
        &mut self,
        write: impl FnOnce(&mut ParquetEncoder<File>) -> Result<(), CodecError>,
    ) -> Result<(), CodecError> {
        let Some(encoder) = self.encoder.as_mut() else {
            return Err(self.target.in_file(spent()));
        };
        if let Err(e) = write(encoder) {
            self.encoder = None;
            return Err(self.target.in_file(e));
        }
        Ok(())
    }
}
