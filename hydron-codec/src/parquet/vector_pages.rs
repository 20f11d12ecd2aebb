//! The vector column's pages, written by hydron: it encodes and compresses
//! them and builds their offset index; the parquet crate frames them (page
//! headers, column chunk and row group metadata, the footer), and its
//! Arrow writer is not used for vectors.
//!
//! A row of the vector column is a list of exactly 8 non-null floats
//! (`docs/format.md` §5.1: `required group vector (LIST) { repeated group
//! list { required float item } }`, so the maximum repetition and
//! definition levels are both 1), so a data page of `n` rows is always:
//!
//! - repetition levels `0,1,1,1,1,1,1,1` per row: one bit-packed run of
//!   `n` groups, each the byte `0xfe` (bit width 1, least significant bit
//!   first);
//! - definition levels all 1: one RLE run of `8n` ones (a few bytes);
//! - the values: the rows' float32 coordinates, little-endian (`PLAIN`).
//!
//! Both level streams are v1 `RLE` streams with their 4-byte length in
//! front. The Arrow writer computes the same levels value by value and
//! encodes them; this writes them from the row count, and copies the
//! floats once, so a file written either way reads back the same in every
//! reader (pyarrow, Polars and DuckDB in `python/tests/test_parquet.py`).

use std::io::Write;
use std::sync::Arc;

use bytes::Bytes;
use parquet::arrow::ArrowSchemaConverter;
use parquet::basic::{Compression, Encoding, PageType};
use parquet::column::page::{CompressedPage, Page, PageWriter};
use parquet::column::writer::ColumnCloseResult;
use parquet::errors::ParquetError;
use parquet::file::metadata::{
    ColumnChunkMetaData, KeyValue, OffsetIndexBuilder, PageEncodingStats,
};
use parquet::file::properties::WriterProperties;
use parquet::file::writer::{SerializedFileWriter, SerializedPageWriter, TrackedWrite};
use parquet::schema::types::ColumnDescPtr;

/// Rows per data page at most: what arrow-rs's writer puts in a page by
/// default (its row count limit, 20,000), 625 KiB of floats.
const PAGE_VECTORS: usize = 20_000;

/// The repetition levels of one row as a bit-packed group of 8 (bit
/// width 1): 0 for the first value, 1 for the seven others.
const ROW_REPETITION_LEVELS: u8 = 0xfe;

/// Writes the vector column of a Parquet file, page by page: it holds the
/// rows of one page not yet written (at most [`PAGE_VECTORS`]) and the
/// compressed pages of the row group being written.
pub(super) struct VectorPages<W: Write + Send> {
    file: SerializedFileWriter<W>,
    column: ColumnDescPtr,
    compression: Compression,
    codec: PageCodec,
    row_group_vectors: usize,
    /// The row group being written: its pages so far.
    group: Group,
    /// Rows gathered for the next page (fewer than a page, and than what
    /// the row group has room for).
    page: Vec<[f32; 8]>,
    /// A page's uncompressed bytes (reused).
    encoded: Vec<u8>,
}

/// The pages of a row group, and what its column chunk's metadata and
/// offset index need of them.
struct Group {
    chunk: TrackedWrite<Vec<u8>>,
    offsets: OffsetIndexBuilder,
    rows: usize,
    compressed: u64,
    uncompressed: u64,
    pages: i32,
}

impl Group {
    /// An empty row group whose pages go into `buffer` (cleared; its
    /// memory is the last row group's, so its pages are already mapped).
    fn new(mut buffer: Vec<u8>) -> Group {
        buffer.clear();
        Group {
            chunk: TrackedWrite::new(buffer),
            offsets: OffsetIndexBuilder::new(),
            rows: 0,
            compressed: 0,
            uncompressed: 0,
            pages: 0,
        }
    }
}

impl<W: Write + Send> VectorPages<W> {
    /// A file of `schema` (the Arrow vector schema, stored in the footer's
    /// `ARROW:schema` as the Arrow writer stores it) written to `writer`
    /// with `properties`, cut into row groups of `row_group_vectors`.
    pub(super) fn new(
        writer: W,
        schema: &arrow_schema::Schema,
        mut properties: WriterProperties,
        row_group_vectors: usize,
    ) -> Result<VectorPages<W>, ParquetError> {
        let descr = ArrowSchemaConverter::new()
            .with_coerce_types(properties.coerce_types())
            .convert(schema)?;
        parquet::arrow::add_encoded_arrow_schema_to_metadata(schema, &mut properties);
        let compression = properties.compression(&descr.column(0).path().clone());
        let codec = PageCodec::new(compression)?;
        let column = descr.column(0);
        let file =
            SerializedFileWriter::new(writer, descr.root_schema_ptr(), Arc::new(properties))?;
        Ok(VectorPages {
            file,
            column,
            compression,
            codec,
            row_group_vectors: row_group_vectors.max(1),
            group: Group::new(Vec::new()),
            page: Vec::new(),
            encoded: Vec::new(),
        })
    }

    /// Writes `rows`: whole pages straight from the slice, the rest
    /// gathered until a page is full; a row group is closed when full.
    pub(super) fn write(&mut self, mut rows: &[[f32; 8]]) -> Result<(), ParquetError> {
        while !rows.is_empty() {
            // What the next page may still take: up to a page, and up to
            // the row group's end.
            let room = (PAGE_VECTORS - self.page.len())
                .min(self.row_group_vectors - self.group.rows - self.page.len());
            let (now, rest) = rows.split_at(rows.len().min(room));
            rows = rest;
            if now.len() < room {
                self.page.extend_from_slice(now);
                break;
            }
            if self.page.is_empty() {
                self.write_page(now)?;
            } else {
                let mut page = std::mem::take(&mut self.page);
                page.extend_from_slice(now);
                self.write_page(&page)?;
                page.clear();
                self.page = page;
            }
            if self.group.rows == self.row_group_vectors {
                self.close_group()?;
            }
        }
        Ok(())
    }

    /// Writes the last page and row group, `metadata` and the footer, and
    /// returns the writer.
    pub(super) fn finish(mut self, metadata: KeyValue) -> Result<W, ParquetError> {
        if !self.page.is_empty() {
            let page = std::mem::take(&mut self.page);
            self.write_page(&page)?;
        }
        if self.group.rows > 0 {
            self.close_group()?;
        }
        self.file.append_key_value_metadata(metadata);
        self.file.into_inner()
    }

    /// One data page of `rows` (at least one), encoded, compressed and
    /// added to the row group's pages.
    fn write_page(&mut self, rows: &[[f32; 8]]) -> Result<(), ParquetError> {
        encode_page(rows, &mut self.encoded);
        let uncompressed_len = self.encoded.len();
        let buf = self.codec.compress(&mut self.encoded)?;
        let page = Page::DataPage {
            buf: Bytes::from(buf),
            num_values: u32::try_from(rows.len() * 8).expect("20,000 rows of 8"),
            encoding: Encoding::PLAIN,
            def_level_encoding: Encoding::RLE,
            rep_level_encoding: Encoding::RLE,
            statistics: None,
        };
        let group = &mut self.group;
        let spec = SerializedPageWriter::new(&mut group.chunk)
            .write_page(CompressedPage::new(page, uncompressed_len))?;
        group
            .offsets
            .append_offset_and_size(spec.offset as i64, spec.compressed_size as i32);
        group.offsets.append_row_count(rows.len() as i64);
        group.rows += rows.len();
        group.compressed += spec.compressed_size as u64;
        group.uncompressed += spec.uncompressed_size as u64;
        group.pages += 1;
        Ok(())
    }

    /// Hands the row group's pages to the file writer with the column
    /// chunk's metadata and offset index, and starts the next.
    fn close_group(&mut self) -> Result<(), ParquetError> {
        let group = std::mem::replace(&mut self.group, Group::new(Vec::new()));
        let bytes = Bytes::from(group.chunk.into_inner()?);
        let metadata = ColumnChunkMetaData::builder(Arc::clone(&self.column))
            .set_compression(self.compression)
            .set_encodings(vec![Encoding::PLAIN, Encoding::RLE])
            .set_page_encoding_stats(vec![PageEncodingStats {
                page_type: PageType::DATA_PAGE,
                encoding: Encoding::PLAIN,
                count: group.pages,
            }])
            .set_num_values(group.rows as i64 * 8)
            .set_total_compressed_size(group.compressed as i64)
            .set_total_uncompressed_size(group.uncompressed as i64)
            .set_data_page_offset(0)
            .build()?;
        let close = ColumnCloseResult {
            bytes_written: group.compressed,
            rows_written: group.rows as u64,
            metadata,
            bloom_filter: None,
            column_index: None,
            offset_index: Some(group.offsets.build()),
        };
        let mut row_group = self.file.next_row_group()?;
        row_group.append_column(&bytes, close)?;
        row_group.close()?;
        // The next row group's pages go into this one's memory (a copy
        // only if the crate kept a reference to it).
        self.group = Group::new(Vec::from(bytes));
        Ok(())
    }
}

/// A page compressor: the codec of the file, as the parquet crate's own
/// (`parquet::compression`, parquet 59) compresses a page.
enum PageCodec {
    Uncompressed,
    Snappy(Box<snap::raw::Encoder>),
    Gzip(u32),
    Lz4Raw,
    Zstd(zstd::bulk::Compressor<'static>),
}

impl PageCodec {
    /// The compressor of `compression`; an error for a codec hydron does
    /// not write.
    fn new(compression: Compression) -> Result<PageCodec, ParquetError> {
        Ok(match compression {
            Compression::UNCOMPRESSED => PageCodec::Uncompressed,
            Compression::SNAPPY => PageCodec::Snappy(Box::new(snap::raw::Encoder::new())),
            Compression::GZIP(level) => PageCodec::Gzip(level.compression_level()),
            Compression::LZ4_RAW => PageCodec::Lz4Raw,
            Compression::ZSTD(level) => PageCodec::Zstd(
                zstd::bulk::Compressor::new(level.compression_level())
                    .map_err(|e| ParquetError::External(Box::new(e)))?,
            ),
            other => {
                return Err(ParquetError::NYI(format!(
                    "hydron does not write {other} pages"
                )))
            }
        })
    }

    /// `page`, compressed; uncompressed, `page`'s own buffer (taken, so
    /// not copied).
    fn compress(&mut self, page: &mut Vec<u8>) -> Result<Vec<u8>, ParquetError> {
        let external = |e: std::io::Error| ParquetError::External(Box::new(e));
        Ok(match self {
            PageCodec::Uncompressed => std::mem::take(page),
            PageCodec::Snappy(encoder) => encoder
                .compress_vec(page)
                .map_err(|e| ParquetError::External(Box::new(e)))?,
            PageCodec::Gzip(level) => {
                let mut gzip =
                    flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::new(*level));
                gzip.write_all(page).map_err(external)?;
                gzip.finish().map_err(external)?
            }
            PageCodec::Lz4Raw => lz4_flex::block::compress(page),
            PageCodec::Zstd(compressor) => compressor.compress(page).map_err(external)?,
        })
    }
}

/// The uncompressed v1 data page of `rows` into `out`: the repetition
/// levels, the definition levels (each an RLE/bit-packed hybrid stream
/// after its 4-byte length), then the floats.
fn encode_page(rows: &[[f32; 8]], out: &mut Vec<u8>) {
    out.clear();
    // Two 4-byte lengths, two varint headers of at most 10 bytes, the RLE
    // value, a byte of repetition levels and 32 bytes of floats per row.
    out.reserve(8 + 21 + 33 * rows.len());
    let n = rows.len() as u64;
    let mut run = Vec::new();
    // One bit-packed run of n groups of 8 levels.
    uleb128((n << 1) | 1, &mut run);
    let repetition_len = run.len() + rows.len();
    out.extend((repetition_len as u32).to_le_bytes());
    out.extend(&run);
    out.resize(out.len() + rows.len(), ROW_REPETITION_LEVELS);
    // One RLE run of 8n ones.
    run.clear();
    uleb128((8 * n) << 1, &mut run);
    run.push(1);
    out.extend((run.len() as u32).to_le_bytes());
    out.extend(&run);
    out.extend_from_slice(bytemuck::cast_slice(rows));
}

/// `value` as an unsigned LEB128 varint, appended to `out`.
fn uleb128(mut value: u64, out: &mut Vec<u8>) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parquet::fast::{self, Outcome};
    use crate::parquet::source::Source;
    use crate::parquet::{ParquetEncoder, ParquetOptions};
    use crate::Policy;

    /// hydron's reader reads hydron's files by its fast path (levels
    /// checked in place, floats copied once), every row group of them.
    #[test]
    fn hydron_reads_these_pages_by_its_fast_path() {
        let vectors = vec![hydron_core::Gf8::ZERO; 45_001];
        let options = ParquetOptions::new().with_row_group_vectors(41_000);
        let mut e = ParquetEncoder::new(Vec::new(), options).unwrap();
        e.write(&vectors).unwrap();
        let bytes = Bytes::from(e.finish().unwrap());
        let metadata = parquet::file::metadata::ParquetMetaDataReader::new()
            .parse_and_finish(&bytes)
            .unwrap();
        let source = Source::Bytes(bytes);
        for group in 0..2 {
            assert!(fast::eligible(&metadata, 0));
            let chunk = fast::ColumnChunk {
                source: &source,
                metadata: &metadata,
                group,
                leaf: 0,
                first_row: 0,
                max_page_bytes: 1 << 20,
            };
            let mut out = Vec::new();
            let outcome = fast::read_group(&chunk, Policy::Trusted, &mut out).unwrap();
            assert!(
                matches!(outcome, Outcome::Done { invalid: None, .. }),
                "{group}"
            );
            assert_eq!(out.len(), [41_000, 4_001][group]);
        }
    }

    #[test]
    fn a_page_is_its_levels_then_its_floats() {
        let rows = [[1.0f32; 8], [2.0; 8], [-0.0; 8]];
        let mut page = Vec::new();
        encode_page(&rows, &mut page);
        // Repetition levels: 4 bytes of length, the header of a bit-packed
        // run of 3 groups ((3 << 1) | 1), a byte per row.
        assert_eq!(page[..8], [4, 0, 0, 0, 0x07, 0xfe, 0xfe, 0xfe]);
        // Definition levels: an RLE run of 24 ones (24 << 1 = 48).
        assert_eq!(page[8..14], [2, 0, 0, 0, 48, 1]);
        assert_eq!(&page[14..], bytemuck::cast_slice::<_, u8>(&rows));
    }
}
