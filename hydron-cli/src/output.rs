//! [`Sink`]: an output, written chunk by chunk.
//!
//! A regular file (or a new path) is written to a hidden temporary file next
//! to it (hydron-codec's [`TempFile`], the library's own, whose registry
//! lets a signal remove it) and renamed over it only when complete, after
//! everything that can fail has happened: [`Sink::finish`] completes and
//! flushes the data, the caller prints its report, then [`Done::commit`]
//! renames. Dropping a sink or a [`Done`] removes the temporary file and
//! leaves the target as it was.
//!
//! A character device such as `/dev/null`, a FIFO, a socket, an open file
//! named through `/dev` or `/proc` (`/dev/stdout`, `/dev/fd/3`) and `-`
//! (standard output) are written to directly, as it goes, and never
//! replaced; the rule is hydron-codec's [`Destination`], the library's.
//!
//! Parquet is written the same way, through hydron-codec's
//! [`ParquetEncoder`]: to the temporary file for a regular file (what
//! `ParquetWriter` does, with the rename after the report), straight to standard output or a
//! FIFO otherwise (Parquet needs no seeking to write).

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use clap::ValueEnum;
use hydron_codec::destination::{Destination, DirectFile};
use hydron_codec::file::{Encoder, FileOptions, Format};
use hydron_codec::parquet::{ParquetEncoder, ParquetOptions};
use hydron_codec::save::TempFile;
use hydron_codec::{fory, json, quant, CodecError};
use hydron_core::quant::QuantCodes;
use hydron_core::{batch, E8Root, Gf8, Gf8Error};

use crate::error::{Class, CliError, SameFile, SameFileHow};
use crate::input::{file_id, FileId};

/// The write buffer.
const BUFFER_LEN: usize = 1 << 16;

/// The forms hydron writes.
#[derive(Clone, Copy, PartialEq, Eq, Debug, ValueEnum)]
pub enum OutFormat {
    /// hydron container, binary: fory batches in checksummed chunks.
    Fory,
    /// hydron container, text: JSON Lines with checksum lines.
    Jsonl,
    /// A plain JSON array `[[x0,…,x7],…]` (no checksums).
    Json,
    /// E8 root codes, one byte per vector, as one fory `E8Codes` message.
    Codes,
    /// One plain fory `Gf8Batch` message (no container, no checksums): what
    /// stock pyfory reads with `fory.deserialize(data)`.
    Batch,
    /// Parquet, one column `vector` (8 float32 a row), in row groups with
    /// a CRC-32 of each in the footer: what pyarrow, Polars and DuckDB read.
    Parquet,
    /// E8 root codes as Parquet, one `UInt8` column `code`.
    ParquetCodes,
}

impl OutFormat {
    /// A description for people.
    #[must_use]
    pub fn describe(self) -> &'static str {
        match self {
            OutFormat::Fory => "hydron container, fory binary",
            OutFormat::Jsonl => "hydron container, JSON Lines",
            OutFormat::Json => "plain JSON array",
            OutFormat::Codes => "fory E8Codes message (E8 root codes)",
            OutFormat::Batch => "fory Gf8Batch message",
            OutFormat::Parquet => "Parquet, vector column",
            OutFormat::ParquetCodes => "Parquet, E8 code column (E8 root codes)",
        }
    }

    /// Whether the form holds E8 root codes rather than vectors.
    #[inline]
    #[must_use]
    pub fn is_codes(self) -> bool {
        matches!(self, OutFormat::Codes | OutFormat::ParquetCodes)
    }
}

/// How an output is laid out, where its form has a choice.
#[derive(Clone, Copy, Debug, Default)]
pub struct Layout {
    /// Vectors per chunk of a container.
    pub chunk_vectors: Option<u32>,
    /// Compression and row group size of Parquet.
    pub parquet: ParquetOptions,
}

/// The output file, counting the bytes written to it.
struct Written {
    file: File,
    bytes: u64,
}

impl Write for Written {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.file.write(buf)?;
        self.bytes += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

type Out = BufWriter<Written>;

enum Inner {
    Container(Encoder<Out>),
    Json {
        out: Out,
        row: Vec<u8>,
    },
    /// The codes are held (one byte per vector) until the end: the message
    /// starts with their count.
    Codes {
        out: Out,
        codes: Vec<u8>,
    },
    /// Likewise the vectors of a plain batch message (32 bytes each): the
    /// message starts with their byte length.
    Batch {
        out: Out,
        vectors: Vec<Gf8>,
    },
    /// Parquet of vectors or of codes, a row group held at a time.
    Parquet(Box<ParquetEncoder<Out>>),
    /// 16- or 32-bit codes of Gf8 vectors, held until the end: one fory
    /// `LatticeCodes` message, or Parquet (`parquet` set).
    Gf8Codes {
        out: Out,
        bits: u8,
        parquet: Option<ParquetOptions>,
        codes: Vec<u8>,
    },
}

/// Where the bytes go.
enum Place {
    /// A temporary file, renamed over the target when done.
    Temp(TempFile),
    /// The target itself (standard output, a device, a FIFO, a socket).
    Direct {
        /// Whether it is this process's standard output.
        stdout: bool,
    },
}

/// An output being written.
pub struct Sink {
    target: PathBuf,
    place: Place,
    /// `None` once a write failed.
    inner: Option<Inner>,
    /// Whether the form holds codes (vectors are written as their
    /// nearest roots).
    codes: bool,
    vectors: u64,
}

/// An output completely written and flushed, not yet in place.
pub struct Done {
    temp: Option<TempFile>,
    size: u64,
    vectors: u64,
    stdout: bool,
}

impl Done {
    /// The size of the output in bytes.
    #[inline]
    #[must_use]
    pub fn size(&self) -> u64 {
        self.size
    }

    /// The vectors written.
    #[inline]
    #[must_use]
    pub fn vectors(&self) -> u64 {
        self.vectors
    }

    /// Whether the output is this process's standard output (reports then
    /// go to standard error).
    #[inline]
    #[must_use]
    pub fn is_stdout(&self) -> bool {
        self.stdout
    }

    /// Moves a temporary file into place (nothing to do for a direct
    /// output).
    pub fn commit(self) -> Result<(), CliError> {
        if let Some(temp) = self.temp {
            let dest = temp.dest().to_path_buf();
            temp.persist().map_err(|e| CliError::io(&dest, &e))?;
            // Best effort: the data itself is already on disk.
            let _ = TempFile::sync_dir(&dest);
        }
        Ok(())
    }
}

/// The error for `total` vectors in a form that holds a bounded count (one
/// fory `Gf8Batch` or `E8Codes` message); `None` within the bound, and for
/// every other form. A command that knows its count checks it before it
/// starts.
pub fn over_capacity(target: &Path, format: OutFormat, total: u64) -> Option<CliError> {
    let (limit, bytes_each, what) = match format {
        OutFormat::Batch => (fory::MAX_BATCH_LEN as u64, 32, "a Gf8Batch message"),
        OutFormat::Codes => (fory::MAX_CODES_LEN as u64, 1, "an E8Codes message"),
        _ => return None,
    };
    (total > limit).then(|| {
        CliError::codec(
            target,
            &CodecError::TooLarge {
                length: total.saturating_mul(bytes_each),
                limit: limit * bytes_each,
                what,
            },
        )
    })
}

/// The regular files a command reads: each one's path as given (for the
/// message) and its identity.
pub type Inputs<'a> = &'a [(&'a Path, FileId)];

/// The identity of an open file, if it is a regular file.
fn id_of(file: &File) -> Option<FileId> {
    file.metadata().ok().as_ref().and_then(file_id)
}

/// Refuses an output that is one of `inputs`: `id` is the identity of the
/// file the output would replace or write to (`None` for anything but a
/// regular file). Checked before anything is created, written or
/// truncated.
fn refuse_inputs(
    output: &Path,
    id: Option<FileId>,
    inputs: Inputs<'_>,
    how: SameFileHow,
) -> Result<(), CliError> {
    let Some(id) = id else { return Ok(()) };
    match inputs.iter().find(|(_, input)| *input == id) {
        Some((input, _)) => Err(SameFile {
            output: output.to_path_buf(),
            input: input.to_path_buf(),
            how,
        }
        .into()),
        None => Ok(()),
    }
}

impl Sink {
    /// Starts writing `path` in `format`, laid out as `layout` says.
    pub fn create(path: &Path, format: OutFormat, layout: Layout) -> Result<Sink, CliError> {
        Sink::create_apart_from(path, format, layout, &[])
    }

    /// [`Sink::create`] for a command that reads the regular files
    /// `inputs`: an output that is one of them is refused with
    /// [`SameFile`] (exit 2) before anything is created or written, as
    /// `cp` refuses "are the same file". That is an output path naming an
    /// input (itself, through symbolic links or as another hard link: the
    /// same device and inode), which the output would replace, and an
    /// output written directly (standard output, `/dev/stdout`) that is an
    /// input, which would read back what is written, as `cat` refuses.
    pub fn create_apart_from(
        path: &Path,
        format: OutFormat,
        layout: Layout,
        inputs: Inputs<'_>,
    ) -> Result<Sink, CliError> {
        let (out, place) = open(path, inputs)?;
        let mut options = FileOptions::new();
        if let Some(n) = layout.chunk_vectors {
            options = options.with_chunk_vectors(n);
        }
        let container = |out, f| {
            Encoder::new(out, f, options)
                .map(Inner::Container)
                .map_err(|e| CliError::codec(path, &e))
        };
        let inner = match format {
            OutFormat::Fory => container(out, Format::Fory)?,
            OutFormat::Jsonl => container(out, Format::JsonLines)?,
            OutFormat::Json => {
                let mut out = out;
                out.write_all(b"[").map_err(|e| CliError::io(path, &e))?;
                Inner::Json {
                    out,
                    row: Vec::new(),
                }
            }
            OutFormat::Codes => Inner::Codes {
                out,
                codes: Vec::new(),
            },
            OutFormat::Batch => Inner::Batch {
                out,
                vectors: Vec::new(),
            },
            OutFormat::Parquet => ParquetEncoder::new(out, layout.parquet)
                .map(|e| Inner::Parquet(Box::new(e)))
                .map_err(|e| CliError::codec(path, &e))?,
            OutFormat::ParquetCodes => ParquetEncoder::new_codes(out, layout.parquet)
                .map(|e| Inner::Parquet(Box::new(e)))
                .map_err(|e| CliError::codec(path, &e))?,
        };
        Ok(Sink {
            target: path.to_path_buf(),
            place,
            inner: Some(inner),
            codes: format.is_codes(),
            vectors: 0,
        })
    }

    /// Starts writing the 16- or 32-bit codes of [`Gf8`] vectors (`bits`
    /// 2 or 4 per coordinate) to `path`, apart from `inputs` as
    /// [`Sink::create_apart_from`]: one fory `LatticeCodes` message, or
    /// Parquet with `parquet` options. The codes are held (2 or 4 bytes a
    /// vector) until the end.
    pub fn create_gf8_codes(
        path: &Path,
        bits: u8,
        parquet: Option<ParquetOptions>,
        inputs: Inputs<'_>,
    ) -> Result<Sink, CliError> {
        let (out, place) = open(path, inputs)?;
        Ok(Sink {
            target: path.to_path_buf(),
            place,
            inner: Some(Inner::Gf8Codes {
                out,
                bits,
                parquet,
                codes: Vec::new(),
            }),
            codes: true,
            vectors: 0,
        })
    }

    /// Appends the code bytes of `n` vectors (a sink made by
    /// [`Sink::create_gf8_codes`]).
    pub fn write_gf8_codes(&mut self, bytes: &[u8], n: usize) -> Result<(), CliError> {
        let target = &self.target;
        match self.inner.as_mut() {
            Some(Inner::Gf8Codes { codes, .. }) => {
                let total = codes.len() + bytes.len();
                if let Err(e) = codes.try_reserve(bytes.len()) {
                    self.inner = None;
                    return Err(too_large_to_hold(target, total, "code bytes", &e));
                }
                codes.extend_from_slice(bytes);
                self.vectors += n as u64;
                Ok(())
            }
            Some(_) => unreachable!("only a Gf8 codes sink takes Gf8 codes"),
            None => Err(spent(target)),
        }
    }
}

/// Opens where the data for `path` goes (see [`Sink::create_apart_from`]).
fn open(path: &Path, inputs: Inputs<'_>) -> Result<(Out, Place), CliError> {
    let destination = if path.as_os_str() == "-" {
        None
    } else {
        Some(Destination::of(path).map_err(|e| CliError::io(path, &e))?)
    };
    let (file, place) = match destination {
        Some(Destination::Replace {
            path: dest,
            existing,
        }) => {
            let id = existing.as_ref().and_then(file_id);
            refuse_inputs(path, id, inputs, SameFileHow::Replaced)?;
            let (temp, file) = TempFile::create(&dest).map_err(|e| CliError::io(path, &e))?;
            (file, Place::Temp(temp))
        }
        None => {
            #[cfg(unix)]
            let file = {
                use std::os::fd::AsFd;
                io::stdout()
                    .as_fd()
                    .try_clone_to_owned()
                    .map(File::from)
                    .map_err(|e| CliError::io(path, &e))?
            };
            #[cfg(not(unix))]
            let file = return Err(CliError::new(
                Class::Io,
                "`-` (standard output) as an output is supported on unix only",
            ));
            refuse_inputs(path, id_of(&file), inputs, SameFileHow::Direct)?;
            (file, Place::Direct { stdout: true })
        }
        Some(Destination::Direct) => {
            // Waits for a reader if it is a FIFO; `/dev/stdout` is
            // written through the inherited descriptor.
            let direct = DirectFile::open(path).map_err(|e| CliError::io(path, &e))?;
            refuse_inputs(path, id_of(direct.file()), inputs, SameFileHow::Direct)?;
            let stdout = direct.is_stdout();
            let file = direct.into_file().map_err(|e| CliError::io(path, &e))?;
            (file, Place::Direct { stdout })
        }
    };
    let out = BufWriter::with_capacity(BUFFER_LEN, Written { file, bytes: 0 });
    Ok((out, place))
}

impl Sink {
    /// Whether the output is this process's standard output (reports then
    /// go to standard error).
    #[inline]
    #[must_use]
    pub fn is_stdout(&self) -> bool {
        matches!(self.place, Place::Direct { stdout: true })
    }

    /// Appends vectors (for the codes form, their nearest E8 roots).
    pub fn write(&mut self, vectors: &[Gf8]) -> Result<(), CliError> {
        if self.codes {
            let roots = batch::nearest_roots(vectors);
            return self.write_roots(&roots);
        }
        let result = self.write_vectors(vectors);
        if result.is_err() {
            // Spent: nothing more is written, and the output is not kept.
            self.inner = None;
        }
        result
    }

    fn write_vectors(&mut self, vectors: &[Gf8]) -> Result<(), CliError> {
        let target = &self.target;
        let first = self.vectors;
        match self.inner.as_mut().ok_or_else(|| spent(target))? {
            Inner::Container(w) => w.write(vectors).map_err(|e| CliError::codec(target, &e))?,
            Inner::Json { out, row } => {
                row.clear();
                for (i, v) in vectors.iter().enumerate() {
                    // JSON has no NaN or infinity (only `Policy::Trusted`
                    // inputs can hold them).
                    if let Err(error @ (Gf8Error::NotANumber { .. } | Gf8Error::Infinite { .. })) =
                        Gf8::check(v.as_array())
                    {
                        return Err(CliError::codec(
                            target,
                            &CodecError::InvalidVector {
                                index: first + i as u64,
                                error,
                            },
                        ));
                    }
                    if first > 0 || i > 0 {
                        row.push(b',');
                    }
                    row.extend_from_slice(&json::gf8_to_vec(*v));
                }
                out.write_all(row).map_err(|e| CliError::io(target, &e))?;
            }
            Inner::Batch { vectors: held, .. } => {
                let total = held.len() + vectors.len();
                if let Some(e) = over_capacity(target, OutFormat::Batch, total as u64) {
                    return Err(e);
                }
                held.try_reserve(vectors.len())
                    .map_err(|e| too_large_to_hold(target, total, "vectors", &e))?;
                held.extend_from_slice(vectors);
            }
            Inner::Parquet(e) => e.write(vectors).map_err(|e| CliError::codec(target, &e))?,
            Inner::Codes { .. } => unreachable!("codes are written by write_roots"),
            Inner::Gf8Codes { .. } => unreachable!("Gf8 codes are written by write_gf8_codes"),
        }
        self.vectors += vectors.len() as u64;
        Ok(())
    }

    /// Appends E8 root codes (codes form only; other forms write the roots
    /// as vectors).
    pub fn write_roots(&mut self, roots: &[E8Root]) -> Result<(), CliError> {
        let target = &self.target;
        match self.inner.as_mut() {
            Some(Inner::Codes { codes, .. }) => {
                let total = codes.len() + roots.len();
                if let Some(e) = over_capacity(target, OutFormat::Codes, total as u64) {
                    self.inner = None;
                    return Err(e);
                }
                if let Err(e) = codes.try_reserve(roots.len()) {
                    self.inner = None;
                    return Err(too_large_to_hold(target, total, "codes", &e));
                }
                codes.extend(roots.iter().map(|r| r.code()));
                self.vectors += roots.len() as u64;
                Ok(())
            }
            Some(Inner::Parquet(e)) if self.codes => {
                if let Err(e) = e.write_codes(roots) {
                    self.inner = None;
                    return Err(CliError::codec(target, &e));
                }
                self.vectors += roots.len() as u64;
                Ok(())
            }
            Some(_) => {
                let vectors: Vec<Gf8> = roots.iter().map(|r| r.to_gf8()).collect();
                self.write(&vectors)
            }
            None => Err(spent(target)),
        }
    }

    /// Completes the data and flushes it (to disk, for a temporary file);
    /// the output is not in place until [`Done::commit`].
    pub fn finish(mut self) -> Result<Done, CliError> {
        let target = std::mem::take(&mut self.target);
        let io = |e: io::Error| CliError::io(&target, &e);
        let inner = self.inner.take().ok_or_else(|| spent(&target))?;
        let out = match inner {
            Inner::Container(w) => w.finish().map_err(|e| CliError::codec(&target, &e))?,
            Inner::Json { mut out, .. } => {
                out.write_all(b"]").map_err(io)?;
                out
            }
            Inner::Codes { mut out, codes } => {
                let head = message_head(fory::encode_codes(&[]), codes.len() as u64);
                out.write_all(&head).map_err(io)?;
                out.write_all(&codes).map_err(io)?;
                out
            }
            Inner::Batch { mut out, vectors } => {
                let head = message_head(fory::encode_batch(&[]), vectors.len() as u64 * 32);
                out.write_all(&head).map_err(io)?;
                let mut bytes = Vec::with_capacity(BUFFER_LEN);
                for part in Gf8::slice_as_arrays(&vectors).chunks(BUFFER_LEN / 32) {
                    bytes.clear();
                    bytes.extend(part.as_flattened().iter().flat_map(|x| x.to_le_bytes()));
                    out.write_all(&bytes).map_err(io)?;
                }
                out
            }
            Inner::Parquet(e) => e.finish().map_err(|e| CliError::codec(&target, &e))?,
            Inner::Gf8Codes {
                mut out,
                bits,
                parquet,
                codes,
            } => {
                let codec = |e: CodecError| CliError::codec(&target, &e);
                let params = quant::CodesParams::gf8(bits).map_err(codec)?;
                let stored = quant::LatticeCodes::new(
                    params,
                    QuantCodes {
                        codes,
                        scales: Vec::new(),
                    },
                )
                .map_err(codec)?;
                let bytes = match parquet {
                    Some(options) => quant::parquet_to_bytes(&stored, options),
                    None => quant::encode(&stored),
                }
                .map_err(codec)?;
                out.write_all(&bytes).map_err(io)?;
                out
            }
        };
        let out = out.into_inner().map_err(|e| io(e.into_error()))?;
        let stdout = self.is_stdout();
        let place = std::mem::replace(&mut self.place, Place::Direct { stdout: false });
        let temp = match place {
            Place::Temp(temp) => {
                out.file.sync_all().map_err(io)?;
                Some(temp)
            }
            Place::Direct { .. } => None,
        };
        Ok(Done {
            temp,
            size: out.bytes,
            vectors: self.vectors,
            stdout,
        })
    }
}

/// The error for an output that must be held in memory and cannot be.
fn too_large_to_hold(
    target: &Path,
    total: usize,
    what: &str,
    e: &std::collections::TryReserveError,
) -> CliError {
    CliError::new(
        Class::TooLarge,
        format!(
            "{}: cannot hold {total} {what} in memory: {e}",
            target.display()
        ),
    )
}

fn spent(target: &Path) -> CliError {
    CliError::new(
        Class::Io,
        format!(
            "{}: an earlier write failed, so the output was not completed",
            target.display()
        ),
    )
}

/// The bytes of an `E8Codes` message before its `n` codes: the fory
/// framing (what the codec writes before the codes of an empty message)
/// and the count as a varuint32. `n` is at most [`fory::MAX_CODES_LEN`].
fn message_head(empty_message: Vec<u8>, mut n: u64) -> Vec<u8> {
    let mut head = empty_message;
    // The empty message ends with its length, 0, in one byte.
    head.pop();
    loop {
        let byte = (n & 0x7f) as u8;
        n >>= 7;
        if n == 0 {
            head.push(byte);
            return head;
        }
        head.push(byte | 0x80);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_json_is_what_the_library_writes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.json");
        let vs: Vec<Gf8> = hydron_core::E8_ROOTS[..5].to_vec();
        let mut sink = Sink::create(&path, OutFormat::Json, Layout::default()).unwrap();
        sink.write(&vs[..2]).unwrap();
        sink.write(&[]).unwrap();
        sink.write(&vs[2..]).unwrap();
        let done = sink.finish().unwrap();
        assert!(!path.exists(), "not in place before commit");
        done.commit().unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), json::to_vec(&vs));
    }

    #[test]
    fn abandoned_sinks_leave_nothing() {
        let dir = tempfile::tempdir().unwrap();
        for format in [
            OutFormat::Fory,
            OutFormat::Jsonl,
            OutFormat::Json,
            OutFormat::Codes,
            OutFormat::Parquet,
            OutFormat::ParquetCodes,
        ] {
            let path = dir.path().join("x.out");
            let mut sink = Sink::create(&path, format, Layout::default()).unwrap();
            sink.write(&[Gf8::ZERO]).unwrap();
            drop(sink);
            assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
            let mut sink = Sink::create(&path, format, Layout::default()).unwrap();
            sink.write(&[Gf8::ZERO]).unwrap();
            drop(sink.finish().unwrap());
            assert_eq!(
                std::fs::read_dir(dir.path()).unwrap().count(),
                0,
                "{format:?}"
            );
        }
    }

    #[test]
    fn codes_are_the_nearest_roots() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.bin");
        let v = Gf8::normalize([1.0, 0.9, 0.1, 0.0, 0.0, 0.0, 0.0, -0.1]).unwrap();
        let mut sink = Sink::create(&path, OutFormat::Codes, Layout::default()).unwrap();
        sink.write(&[v, -v]).unwrap();
        let done = sink.finish().unwrap();
        assert_eq!(
            (done.vectors(), done.size(), done.is_stdout()),
            (2, 24, false)
        );
        done.commit().unwrap();
        let codes = fory::decode_codes(&std::fs::read(&path).unwrap()).unwrap();
        assert_eq!(codes, [v.nearest_root(), (-v).nearest_root()]);
    }

    #[test]
    fn the_codes_head_is_the_codecs_framing() {
        for n in [0usize, 1, 127, 128, 300, 16_384, 70_000] {
            let roots = vec![E8Root::new(7).unwrap(); n];
            let mut bytes = message_head(fory::encode_codes(&[]), n as u64);
            bytes.extend(roots.iter().map(|r| r.code()));
            assert_eq!(bytes, fory::encode_codes(&roots), "{n}");
        }
    }

    #[test]
    fn batch_output_is_the_codecs_message() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("b.fory");
        for n in [0usize, 1, 3, 5000] {
            let vs: Vec<Gf8> = hydron_core::E8_ROOTS
                .iter()
                .copied()
                .cycle()
                .take(n)
                .collect();
            let mut sink = Sink::create(&path, OutFormat::Batch, Layout::default()).unwrap();
            sink.write(&vs[..n / 2]).unwrap();
            sink.write(&vs[n / 2..]).unwrap();
            sink.finish().unwrap().commit().unwrap();
            assert_eq!(
                std::fs::read(&path).unwrap(),
                fory::encode_batch(&vs),
                "{n}"
            );
        }
    }
}
