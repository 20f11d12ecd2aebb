//! [`Input`]: any file hydron reads, found from its content and read
//! chunk by chunk.
//!
//! Every input is opened once and read once, through one buffered
//! [`Stream`]: the form is found by peeking into the same buffer the
//! decoder then reads, so standard input (`-` or `/dev/stdin`), pipes,
//! FIFOs and process substitution work exactly like files. Leading
//! whitespace of any length is skipped for detection and handed to the
//! decoder as the same number of lines and columns, so line numbers in
//! errors stay right.
//!
//! The hydron container (either form) and plain JSON Lines are streamed in
//! constant memory. Plain JSON arrays and plain fory messages have no
//! streaming decoder in hydron-codec, so they are read whole, growing the
//! buffer as bytes arrive, up to `--max-input-bytes`; an `E8Codes`
//! message is kept as its codes (one byte per vector) and expanded to
//! vectors one chunk at a time.
//!
//! Parquet (found from its `PAR1` magic) needs random access: a regular
//! file is read by path, row group by row group, in flat memory; a pipe,
//! FIFO or standard input is read whole, up to `--max-input-bytes`, and
//! decoded from memory the same way. A file whose only column is E8 codes
//! (`code`, `UInt8`) is read as the roots it names, like `E8Codes`.
//!
//! Lattice codes (a fory `LatticeCodes` message, or Parquet with the
//! `hydron.quant.*` footer keys) are found from the content the same way,
//! from a path or a stream, and checked whole when opened (`lattice`):
//! `inspect` and `validate` report them, and Gf8 codes are read as the
//! vectors they decode to.
//!
//! A directory is a Parquet data set: its `.parquet` files, read one
//! after another as one input (hydron-codec's `DatasetReader`).
//!
//! Detection and the buffered reader are in `sniff`; Parquet's opening is
//! in `parquet`, data sets' in `dataset`, lattice codes' in `lattice`.

mod dataset;
mod lattice;
mod parquet;
mod sniff;

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use hydron_codec::file::{FileReader, Format};
use hydron_codec::json::JsonLinesReader;
use hydron_codec::parquet::{DatasetReader, ParquetReader};
use hydron_codec::quant::LatticeCodes;
use hydron_codec::{fory, json, CodecError, Policy};
use hydron_core::{E8Root, Gf8};

use self::dataset::open_dataset;
pub use self::dataset::PartInfo;
use self::parquet::open_parquet;
pub use self::parquet::ParquetInfo;
use self::sniff::{detect, overlong, Counted, DetectError, LineGuard, Sniffed, Stream, BUFFER_LEN};
use crate::error::{Class, CliError, Place};
use crate::interrupt;

/// Vectors per chunk for inputs that have no chunks of their own: 2 MiB of
/// coordinates, the container's default.
pub const CHUNK: usize = 65_536;

/// What a file holds, as found from its first bytes.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Kind {
    /// A hydron container (chunked, checksummed).
    Container(Format),
    /// A plain JSON array of vectors, `[[x0, …, x7], …]`.
    JsonArray,
    /// Plain JSON Lines, one `[x0, …, x7]` per line.
    JsonLines,
    /// One fory `Gf8Batch` message.
    ForyBatch,
    /// One fory `E8Codes` message (read as the roots it names).
    ForyCodes,
    /// One fory `Gf8` message.
    ForyGf8,
    /// A Parquet file with a vector column.
    Parquet,
    /// A Parquet file with an E8 code column (read as the roots it names).
    ParquetCodes,
    /// One fory `LatticeCodes` message.
    LatticeCodes,
    /// Lattice codes in Parquet (a `FixedSizeBinary` column `code`).
    ParquetLatticeCodes,
}

impl Kind {
    /// A description for people.
    #[must_use]
    pub fn describe(self) -> String {
        match self {
            Kind::Container(f) => format!("hydron container, {f}"),
            Kind::JsonArray => "plain JSON array".into(),
            Kind::JsonLines => "plain JSON Lines".into(),
            Kind::ForyBatch => "fory Gf8Batch message".into(),
            Kind::ForyCodes => "fory E8Codes message (E8 root codes)".into(),
            Kind::ForyGf8 => "fory Gf8 message (one vector)".into(),
            Kind::Parquet => "Parquet, vector column".into(),
            Kind::ParquetCodes => "Parquet, E8 code column (E8 root codes)".into(),
            Kind::LatticeCodes => "lattice codes, one fory LatticeCodes message".into(),
            Kind::ParquetLatticeCodes => {
                "lattice codes, Parquet (FixedSizeBinary column `code`)".into()
            }
        }
    }

    /// A stable name for `--json` output.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Kind::Container(Format::Fory) => "container-fory",
            Kind::Container(Format::JsonLines) => "container-jsonl",
            Kind::Container(_) => "container",
            Kind::JsonArray => "json",
            Kind::JsonLines => "jsonl",
            Kind::ForyBatch => "fory-batch",
            Kind::ForyCodes => "fory-codes",
            Kind::ForyGf8 => "fory-gf8",
            Kind::Parquet => "parquet",
            Kind::ParquetCodes => "parquet-codes",
            Kind::LatticeCodes => "lattice-codes",
            Kind::ParquetLatticeCodes => "parquet-lattice-codes",
        }
    }

    /// Whether the form carries checksums (Parquet: the CRC-32 of each row
    /// group's values that hydron writes in the footer, and page checksums
    /// where a writer stored them; checked when present).
    #[inline]
    #[must_use]
    pub fn has_checksums(self) -> bool {
        matches!(
            self,
            Kind::Container(_) | Kind::Parquet | Kind::ParquetCodes | Kind::ParquetLatticeCodes
        )
    }

    /// Whether the form is Parquet.
    #[inline]
    #[must_use]
    pub fn is_parquet(self) -> bool {
        matches!(
            self,
            Kind::Parquet | Kind::ParquetCodes | Kind::ParquetLatticeCodes
        )
    }

    /// Whether the form is lattice codes (either form).
    #[inline]
    #[must_use]
    pub fn is_lattice(self) -> bool {
        matches!(self, Kind::LatticeCodes | Kind::ParquetLatticeCodes)
    }
}

/// Where a chunk handed out by [`Input::read_chunk`] sits in the file.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Chunk {
    /// Index of the chunk's first vector in the file.
    pub first: u64,
    /// Index of the chunk (container chunks are the file's own; Parquet
    /// is read a row group, or at most [`CHUNK`] rows, at a time; other
    /// forms are cut into chunks of [`CHUNK`] vectors).
    pub index: u64,
    /// How many vectors it holds.
    pub len: usize,
}

enum Source {
    Container(Box<FileReader>),
    Lines {
        reader: Box<JsonLinesReader<Stream>>,
        /// The line of each vector of the current chunk.
        lines: Vec<u64>,
        /// An error met after some vectors of a chunk: those are handed
        /// out first (each line stands alone, so they count as read), the
        /// error at the next call.
        pending: Option<CliError>,
    },
    Memory {
        vectors: Vec<Gf8>,
        next: usize,
    },
    /// An `E8Codes` message: one byte per vector, expanded per chunk.
    Codes {
        codes: Vec<E8Root>,
        next: usize,
    },
    /// A Parquet file, read batch by batch (a code column is expanded to
    /// vectors per batch, through `codes`).
    Parquet {
        reader: Box<ParquetReader>,
        codes: Option<Vec<E8Root>>,
    },
    /// A directory of Parquet files, read file by file and batch by batch
    /// (codes expanded as for one file).
    Dataset {
        reader: Box<DatasetReader>,
        codes: Option<Vec<E8Root>>,
    },
    /// Lattice codes, checked whole; Gf8 codes are read as vectors from
    /// vector `next` on.
    Lattice {
        codes: LatticeCodes,
        next: u64,
    },
    /// The form is known but its data is not valid: the error is reported
    /// by the first [`Input::read_chunk`].
    Failed(Option<CliError>),
}

/// An open input file.
pub struct Input {
    path: PathBuf,
    /// Which regular file it is, if it is one.
    id: Option<FileId>,
    /// The files of a data set, and which files they are.
    parts: Vec<(PathBuf, FileId)>,
    kind: Kind,
    /// The size of a regular file.
    size: Option<u64>,
    /// Bytes read so far.
    read: Arc<AtomicU64>,
    source: Source,
    vectors: u64,
    chunks: u64,
}

impl Input {
    /// Opens `path` (`-` is standard input), finds its form and reads its
    /// header (whole forms are read, at most `limit` bytes, and decoded
    /// here), applying `policy` to every vector. `column` names the column
    /// of a Parquet input to read (a usage error for any other form).
    pub fn open(
        path: &Path,
        policy: Policy,
        limit: u64,
        column: Option<&str>,
    ) -> Result<Input, CliError> {
        let io_error = |e: &io::Error| CliError::io(path, e);
        if path.as_os_str() != "-" && std::fs::metadata(path).is_ok_and(|m| m.is_dir()) {
            let (kind, source, parts) = open_dataset(path, policy, column)?;
            return Ok(Input {
                path: path.to_path_buf(),
                id: None,
                parts,
                kind,
                size: None,
                read: Arc::default(),
                source,
                vectors: 0,
                chunks: 0,
            });
        }
        let (raw, size, id) = open_raw(path).map_err(|e| io_error(&e))?;
        let read = Arc::new(AtomicU64::new(0));
        let counted = Counted {
            inner: raw,
            count: Arc::clone(&read),
        };
        let (sniffed, stream) = detect(BufReader::with_capacity(BUFFER_LEN, counted), limit)
            .map_err(|e| match e {
                DetectError::Io(e) => io_error(&e),
                DetectError::TooLarge => too_large(path, limit),
            })?;
        if column.is_some() && sniffed != Sniffed::Parquet {
            return Err(CliError::new(
                Class::Usage,
                format!(
                    "{}: --column chooses a column of a Parquet input, and this input is not \
                     Parquet",
                    path.display()
                ),
            ));
        }
        let codec = |e: CodecError| CliError::codec(path, &e);
        let (kind, source) = match sniffed {
            Sniffed::Container => {
                let reader = open_container(path, stream, policy).map_err(codec)?;
                (
                    Kind::Container(reader.format()),
                    Source::Container(Box::new(reader)),
                )
            }
            Sniffed::JsonLines => {
                let mut stream = stream;
                stream.guard = Some(LineGuard::default());
                (
                    Kind::JsonLines,
                    Source::Lines {
                        reader: Box::new(JsonLinesReader::new(stream, policy)),
                        lines: Vec::new(),
                        pending: None,
                    },
                )
            }
            Sniffed::JsonArray => {
                let data = read_whole(path, stream, limit, size)?;
                let source = match json::from_slice(&data, policy) {
                    Ok(vectors) => Source::Memory { vectors, next: 0 },
                    Err(e) => Source::Failed(Some(codec(e))),
                };
                (Kind::JsonArray, source)
            }
            Sniffed::Parquet => open_parquet(path, stream, policy, limit, size, column)?,
            Sniffed::Fory if lattice::is_message(stream.peeked()) => {
                lattice::open_message(path, stream, limit, size)?
            }
            Sniffed::Fory => {
                // The framing is fixed and within the bytes detection
                // looked at: a stream that is not one of hydron's messages
                // (`/dev/zero`, at byte 2) is refused before it is read
                // whole. (Any other error there may be the cut.)
                if let Err(ForyError::NotOurs(e)) = decode_fory(stream.peeked(), policy) {
                    return Err(not_ours(path, &e));
                }
                let data = read_whole(path, stream, limit, size)?;
                match decode_fory(&data, policy) {
                    Ok((kind, source)) => (kind, source),
                    Err(ForyError::Decode(kind, e)) => (kind, Source::Failed(Some(codec(e)))),
                    Err(ForyError::NotOurs(e)) => return Err(not_ours(path, &e)),
                }
            }
        };
        Ok(Input {
            path: path.to_path_buf(),
            id,
            parts: Vec::new(),
            kind,
            size,
            read,
            source,
            vectors: 0,
            chunks: 0,
        })
    }

    /// The input's path as given and which regular file it is, for
    /// [`crate::output::Sink::create_apart_from`]; `None` unless it is a
    /// regular file.
    #[must_use]
    pub fn identity(&self) -> Option<(&Path, FileId)> {
        self.id.map(|id| (self.path.as_path(), id))
    }

    /// The regular files read: the input's [`identity`](Self::identity),
    /// or each file of a data set.
    #[must_use]
    pub fn identities(&self) -> Vec<(&Path, FileId)> {
        let parts = self.parts.iter().map(|(p, id)| (p.as_path(), *id));
        self.identity().into_iter().chain(parts).collect()
    }

    /// The files of a data set (`None` for any other input).
    #[must_use]
    pub fn dataset_parts(&self) -> Option<Vec<PartInfo>> {
        match &self.source {
            Source::Dataset { reader, .. } => Some(dataset::parts(reader)),
            _ => None,
        }
    }

    /// The file of a data set the last chunk came from, and the data
    /// set's row of that file's first row.
    fn last_part(&self) -> Option<(&Path, u64)> {
        match &self.source {
            Source::Dataset { reader, .. } => {
                let (part, first_row) = reader.last_part()?;
                Some((reader.parts()[part].path(), first_row))
            }
            _ => None,
        }
    }

    /// The file of a data set that vector `i` of `chunk` is in, and its
    /// row there (`None` for other inputs).
    #[must_use]
    pub fn file_of(&self, chunk: &Chunk, i: usize) -> Option<(&Path, u64)> {
        let (path, first_row) = self.last_part()?;
        Some((path, (chunk.first + i as u64).saturating_sub(first_row)))
    }

    /// The form of the file.
    #[inline]
    #[must_use]
    pub fn kind(&self) -> Kind {
        self.kind
    }

    /// The size of the file in bytes: of a regular file, its size; of a
    /// pipe or device, the bytes read so far; of a data set, the sizes of
    /// its files.
    #[must_use]
    pub fn bytes(&self) -> u64 {
        if let Source::Dataset { reader, .. } = &self.source {
            return reader.parts().iter().map(|p| p.bytes()).sum();
        }
        self.size
            .unwrap_or_else(|| self.read.load(Ordering::Relaxed))
    }

    /// A container's version and chunk size (the most vectors a chunk
    /// holds), from its header.
    #[must_use]
    pub fn container_header(&self) -> Option<(u16, u32)> {
        match &self.source {
            Source::Container(r) => Some((r.version(), r.chunk_vectors())),
            _ => None,
        }
    }

    /// What a Parquet file's footer says: the vectors (rows) it claims,
    /// its row groups, and the name and Arrow type of the column read.
    #[must_use]
    pub fn parquet_info(&self) -> Option<ParquetInfo> {
        match &self.source {
            Source::Parquet { reader, .. } => Some(ParquetInfo {
                claimed_vectors: reader.claimed_vectors(),
                row_groups: reader.row_groups() as u64,
                column: reader.column_name().to_owned(),
                column_type: reader.column_type().to_string(),
                hydron_checksums: reader.has_checksums(),
            }),
            Source::Dataset { reader, .. } => Some(ParquetInfo {
                claimed_vectors: reader.claimed_vectors(),
                row_groups: reader.row_groups() as u64,
                column: reader.column_name().to_owned(),
                column_type: reader.column_type().to_string(),
                hydron_checksums: reader.has_checksums(),
            }),
            _ => None,
        }
    }

    /// The line a command prints on standard error about the Parquet
    /// column it reads (`None` for other forms):
    /// `a.parquet: reading column "vector" (TYPE) as vectors`.
    #[must_use]
    pub fn column_note(&self) -> Option<String> {
        let info = self.parquet_info()?;
        let what = if self.kind == Kind::ParquetCodes {
            "E8 root codes"
        } else {
            "vectors"
        };
        let files = match &self.source {
            Source::Dataset { reader, .. } => match reader.parts().len() {
                1 => " from 1 file".to_owned(),
                n => format!(" from {n} files"),
            },
            _ => String::new(),
        };
        Some(format!(
            "{}: reading column {:?} ({}) as {what}{files}",
            self.path.display(),
            info.column,
            info.column_type
        ))
    }

    /// How many vectors the file holds, if known before reading it all.
    #[must_use]
    pub fn expected_vectors(&self) -> Option<u64> {
        match &self.source {
            Source::Container(r) => r.expected_vectors(),
            Source::Parquet { reader, .. } => Some(reader.claimed_vectors()),
            Source::Dataset { reader, .. } => Some(reader.claimed_vectors()),
            Source::Lines { .. } | Source::Failed(_) => None,
            Source::Memory { vectors, .. } => Some(vectors.len() as u64),
            Source::Codes { codes, .. } => Some(codes.len() as u64),
            Source::Lattice { codes, .. } => Some(codes.count()),
        }
    }

    /// The codes of a lattice-code input, checked whole (or why they are
    /// not valid), taken out of the input; `None` for any other input, or
    /// once taken.
    pub fn take_lattice(&mut self) -> Option<Result<LatticeCodes, CliError>> {
        if !self.kind.is_lattice() {
            return None;
        }
        match std::mem::replace(&mut self.source, Source::Failed(None)) {
            Source::Lattice { codes, .. } => Some(Ok(codes)),
            Source::Failed(Some(e)) => Some(Err(e)),
            other => {
                self.source = other;
                None
            }
        }
    }

    /// Vectors handed out so far.
    #[inline]
    #[must_use]
    pub fn vectors_read(&self) -> u64 {
        self.vectors
    }

    /// Chunks handed out so far.
    #[inline]
    #[must_use]
    pub fn chunks_read(&self) -> u64 {
        self.chunks
    }

    /// Replaces `out` with the next chunk; `None` at the end (for a
    /// container, after its trailer and every checksum were checked).
    pub fn read_chunk(&mut self, out: &mut Vec<Gf8>) -> Result<Option<Chunk>, CliError> {
        out.clear();
        let path = &self.path;
        match &mut self.source {
            Source::Container(reader) => {
                reader
                    .read_chunk(out)
                    .map_err(|e| CliError::codec(path, &e))?;
            }
            Source::Lines {
                reader,
                lines,
                pending,
            } => {
                if let Some(error) = pending.take() {
                    return Err(error);
                }
                lines.clear();
                while out.len() < CHUNK {
                    let Some(item) = reader.next() else { break };
                    match item {
                        Ok(vector) => out.push(vector),
                        Err(e) => {
                            let error = CliError::codec(path, &overlong(e));
                            if out.is_empty() {
                                return Err(error);
                            }
                            *pending = Some(error);
                            break;
                        }
                    }
                    // The line just read is the vector's (blank lines are
                    // skipped before it).
                    lines.push(reader.line());
                }
            }
            Source::Memory { vectors, next } => {
                let end = vectors.len().min(*next + CHUNK);
                out.extend_from_slice(&vectors[*next..end]);
                *next = end;
            }
            Source::Codes { codes, next } => {
                let end = codes.len().min(*next + CHUNK);
                out.extend(codes[*next..end].iter().map(|r| r.to_gf8()));
                *next = end;
            }
            Source::Lattice { codes, next } => lattice::read_chunk(path, codes, next, out)?,
            Source::Parquet { reader, codes } => read_parquet_chunk(
                path,
                &mut **reader,
                codes.as_mut(),
                out,
                ParquetReader::read_chunk,
                ParquetReader::read_codes_chunk,
            )?,
            Source::Dataset { reader, codes } => read_parquet_chunk(
                path,
                &mut **reader,
                codes.as_mut(),
                out,
                DatasetReader::read_chunk,
                DatasetReader::read_codes_chunk,
            )?,
            Source::Failed(error) => {
                if let Some(e) = error.take() {
                    return Err(e);
                }
            }
        }
        if out.is_empty() {
            return Ok(None);
        }
        let chunk = Chunk {
            first: self.vectors,
            index: self.chunks,
            len: out.len(),
        };
        self.vectors += out.len() as u64;
        self.chunks += 1;
        Ok(Some(chunk))
    }

    /// Where vector `i` of `chunk` is, for messages.
    #[must_use]
    pub fn place(&self, chunk: &Chunk, i: usize) -> Place {
        let vector = chunk.first + i as u64;
        let mut place = Place {
            vector: Some(vector),
            ..Place::default()
        };
        match self.kind {
            Kind::Container(format) => {
                place.chunk = Some(chunk.index);
                place.index_in_chunk = Some(i as u64);
                if format == Format::JsonLines {
                    // Line 1 is the header; each earlier chunk added a
                    // checksum line after its vectors.
                    place.line = Some(2 + vector + chunk.index);
                }
            }
            Kind::JsonLines => place.line = self.line_of(i),
            _ => {}
        }
        if let Some((_, row)) = self.file_of(chunk, i) {
            place.row = Some(row);
        }
        place
    }

    /// The line of vector `i` of the current chunk of a JSON Lines file.
    fn line_of(&self, i: usize) -> Option<u64> {
        match &self.source {
            Source::Lines { lines, .. } => lines.get(i).copied(),
            _ => None,
        }
    }
}

/// Appends the next chunk of a Parquet `reader` (one file or a data set)
/// to `out`: vectors (`read_vectors`), or, with a `codes` buffer, E8 codes
/// (`read_codes`) as the roots they name.
fn read_parquet_chunk<R>(
    path: &Path,
    reader: &mut R,
    codes: Option<&mut Vec<E8Root>>,
    out: &mut Vec<Gf8>,
    read_vectors: fn(&mut R, &mut Vec<Gf8>) -> Result<usize, CodecError>,
    read_codes: fn(&mut R, &mut Vec<E8Root>) -> Result<usize, CodecError>,
) -> Result<(), CliError> {
    let codec = |e: CodecError| CliError::codec(path, &e);
    match codes {
        None => {
            read_vectors(reader, out).map_err(codec)?;
        }
        Some(codes) => {
            codes.clear();
            read_codes(reader, codes).map_err(codec)?;
            out.extend(codes.iter().map(|r| r.to_gf8()));
        }
    }
    Ok(())
}

/// An opened input: the reader and, for a regular file, its size and
/// [`FileId`].
type RawInput = (Box<dyn Read + Send>, Option<u64>, Option<FileId>);

/// Opens `path` once (`-` is standard input); returns the reader and, for
/// a regular file, its size and identity. Opening a FIFO waits for a writer (a signal
/// still ends the process, see [`crate::interrupt`]).
fn open_raw(path: &Path) -> io::Result<RawInput> {
    let file = if path.as_os_str() == "-" {
        #[cfg(unix)]
        {
            use std::os::fd::AsFd;
            File::from(io::stdin().as_fd().try_clone_to_owned()?)
        }
        #[cfg(not(unix))]
        {
            return Ok((Box::new(io::stdin()), None, None));
        }
    } else {
        File::open(path)?
    };
    let meta = file.metadata()?;
    if meta.is_dir() {
        return Err(io::Error::new(
            io::ErrorKind::IsADirectory,
            "is a directory",
        ));
    }
    let size = meta.is_file().then_some(meta.len());
    Ok((Box::new(file), size, file_id(&meta)))
}

/// Which regular file an open file is (device and inode), to tell an
/// output that is the input itself; `None` for anything else, and off
/// unix.
pub type FileId = (u64, u64);

/// The [`FileId`] of an open file's metadata.
pub fn file_id(meta: &std::fs::Metadata) -> Option<FileId> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        meta.is_file().then(|| (meta.dev(), meta.ino()))
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        None
    }
}

/// The container reader over the stream (its errors name `path`).
fn open_container(path: &Path, stream: Stream, policy: Policy) -> Result<FileReader, CodecError> {
    FileReader::from_reader_named(stream, path, policy)
}

/// The error for a fory message of none of hydron's types.
fn not_ours(path: &Path, e: &CodecError) -> CliError {
    CliError {
        class: Class::Format,
        message: format!(
            "{}: not a hydron fory message (Gf8Batch, E8Codes or Gf8): {e}",
            path.display()
        ),
        place: Box::new(Place::of(e)),
    }
}

/// The error for an input larger than `limit`.
fn too_large(path: &Path, limit: u64) -> CliError {
    CliError::new(
        Class::TooLarge,
        format!(
            "{}: larger than {limit} bytes, the most read whole (plain JSON arrays, fory messages, \
             Parquet from a pipe); raise it with --max-input-bytes, or convert to a hydron \
             container, which is streamed (or give Parquet as a regular file)",
            path.display()
        ),
    )
}

/// Reads the rest of `stream`, at most `limit` bytes, growing the buffer as
/// bytes arrive (nothing is reserved from a size the input claims). A
/// regular file whose `size` is over the limit is refused before reading.
fn read_whole(
    path: &Path,
    mut stream: Stream,
    limit: u64,
    size: Option<u64>,
) -> Result<Vec<u8>, CliError> {
    if size.is_some_and(|n| n > limit) {
        return Err(too_large(path, limit));
    }
    let mut data = Vec::new();
    loop {
        interrupt::check()?;
        let buf = stream.fill_buf().map_err(|e| CliError::io(path, &e))?;
        if buf.is_empty() {
            return Ok(data);
        }
        if (data.len() + buf.len()) as u64 > limit {
            return Err(too_large(path, limit));
        }
        data.try_reserve(buf.len()).map_err(|e| {
            CliError::new(
                Class::TooLarge,
                format!(
                    "{}: cannot hold {} bytes in memory ({e}); plain JSON arrays, fory \
                     messages and Parquet from a pipe are read whole: convert to a hydron \
                     container, which is streamed",
                    path.display(),
                    data.len() + buf.len()
                ),
            )
        })?;
        data.extend_from_slice(buf);
        let n = buf.len();
        stream.consume(n);
    }
}

enum ForyError {
    /// A message of one of hydron's types, but broken or invalid.
    Decode(Kind, CodecError),
    /// Not a message of one of hydron's types.
    NotOurs(CodecError),
}

/// Decodes one fory message of any of hydron's three types; an `E8Codes`
/// message is kept as codes.
fn decode_fory(data: &[u8], policy: Policy) -> Result<(Kind, Source), ForyError> {
    let framing = |e: &CodecError| {
        matches!(
            e,
            CodecError::WrongHeader { .. } | CodecError::WrongTypeId { .. }
        )
    };
    let first = match fory::decode_batch(data, policy) {
        Ok(vectors) => return Ok((Kind::ForyBatch, Source::Memory { vectors, next: 0 })),
        Err(e) if framing(&e) => e,
        Err(e) => return Err(ForyError::Decode(Kind::ForyBatch, e)),
    };
    match fory::decode_codes(data) {
        Ok(codes) => return Ok((Kind::ForyCodes, Source::Codes { codes, next: 0 })),
        Err(e) if framing(&e) => {}
        Err(e) => return Err(ForyError::Decode(Kind::ForyCodes, e)),
    }
    match fory::decode_gf8(data, policy) {
        Ok(v) => Ok((
            Kind::ForyGf8,
            Source::Memory {
                vectors: vec![v],
                next: 0,
            },
        )),
        Err(e) if framing(&e) => Err(ForyError::NotOurs(first)),
        Err(e) => Err(ForyError::Decode(Kind::ForyGf8, e)),
    }
}

#[cfg(test)]
mod tests {
    use super::sniff::FORY_HEAD_LEN;
    use super::*;

    #[test]
    fn fory_messages_of_each_type_are_recognized() {
        let v = Gf8::from_scalar(1.0).unwrap();
        let vectors = |source: Source| match source {
            Source::Memory { vectors, .. } => vectors,
            Source::Codes { codes, .. } => codes.iter().map(|r| r.to_gf8()).collect(),
            _ => panic!("not decoded"),
        };
        let (kind, out) = decode_fory(&fory::encode_batch(&[v, Gf8::ZERO]), Policy::Strict)
            .ok()
            .unwrap();
        assert_eq!((kind, vectors(out)), (Kind::ForyBatch, vec![v, Gf8::ZERO]));
        let root = E8Root::new(200).unwrap();
        let (kind, out) = decode_fory(&fory::encode_codes(&[root]), Policy::Strict)
            .ok()
            .unwrap();
        assert_eq!((kind, vectors(out)), (Kind::ForyCodes, vec![root.to_gf8()]));
        let (kind, out) = decode_fory(&fory::encode_gf8(v), Policy::Strict)
            .ok()
            .unwrap();
        assert_eq!((kind, vectors(out)), (Kind::ForyGf8, vec![v]));
        let mut other = fory::encode_batch(&[v]);
        other[1] ^= 0x40;
        assert!(matches!(
            decode_fory(&other, Policy::Strict),
            Err(ForyError::NotOurs(_))
        ));
        let cut = &fory::encode_codes(&[root; 10])[..25];
        assert!(matches!(
            decode_fory(cut, Policy::Strict),
            Err(ForyError::Decode(
                Kind::ForyCodes,
                CodecError::UnexpectedEnd { .. }
            ))
        ));
    }

    #[test]
    fn the_fory_head_holds_every_messages_framing() {
        let v = Gf8::from_scalar(1.0).unwrap();
        let root = E8Root::new(7).unwrap();
        let messages = [
            fory::encode_batch(&[v; 100]),
            fory::encode_codes(&[root; 100]),
            fory::encode_gf8(v),
        ];
        assert!(fory::encode_batch(&[]).len() <= FORY_HEAD_LEN);
        assert!(fory::encode_codes(&[]).len() <= FORY_HEAD_LEN);
        // No cut of a real message is taken for another type's.
        for message in &messages {
            for cut in 0..=FORY_HEAD_LEN.min(message.len()) {
                assert!(
                    !matches!(
                        decode_fory(&message[..cut], Policy::Strict),
                        Err(ForyError::NotOurs(_))
                    ),
                    "{cut}"
                );
            }
        }
        // Detection keeps the head, from a pipe giving 3 bytes at a time.
        let counted = Counted {
            inner: Box::new(io::repeat(0)),
            count: Arc::default(),
        };
        let Ok((Sniffed::Fory, stream)) = detect(BufReader::with_capacity(3, counted), 1 << 20)
        else {
            panic!("zeros look like a fory message");
        };
        assert_eq!(stream.peeked(), [0; FORY_HEAD_LEN]);
        let Err(ForyError::NotOurs(e)) = decode_fory(stream.peeked(), Policy::Strict) else {
            panic!("zeros are not hydron's");
        };
        assert_eq!(Place::of(&e).offset, Some(2));
    }

    #[test]
    fn codes_are_expanded_one_chunk_at_a_time() {
        let n = 2 * CHUNK + 5;
        let roots: Vec<E8Root> = (0..n)
            .map(|i| E8Root::new((i % 240) as u8).unwrap())
            .collect();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.bin");
        std::fs::write(&path, fory::encode_codes(&roots)).unwrap();
        let mut input = Input::open(&path, Policy::Strict, 1 << 30, None).unwrap();
        assert_eq!(input.kind(), Kind::ForyCodes);
        let Source::Codes { codes, .. } = &input.source else {
            panic!("codes are kept as codes");
        };
        assert_eq!(codes.len(), n);
        let mut buf = Vec::new();
        let mut lens = Vec::new();
        while let Some(chunk) = input.read_chunk(&mut buf).unwrap() {
            assert!(buf.capacity() < 2 * CHUNK, "one chunk of vectors at a time");
            assert_eq!(buf[0], roots[chunk.first as usize].to_gf8());
            lens.push(chunk.len);
        }
        assert_eq!(lens, [CHUNK, CHUNK, 5]);
    }

    #[test]
    fn whole_reads_stop_at_the_limit() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.json");
        let row = "[1,0,0,0,0,0,0,0]";
        std::fs::write(&path, format!("[{}]", [row; 100].join(","))).unwrap();
        let e = Input::open(&path, Policy::Strict, 1000, None)
            .err()
            .unwrap();
        assert_eq!(e.class, Class::TooLarge);
        assert!(e.message.contains("--max-input-bytes"), "{}", e.message);
        let mut input = Input::open(&path, Policy::Strict, 10_000, None).unwrap();
        let mut buf = Vec::new();
        assert_eq!(input.read_chunk(&mut buf).unwrap().unwrap().len, 100);
        assert_eq!(input.bytes(), 1801);
    }
}
