//! [`Input`]: any file hydron reads, found from its content and read
//! chunk by chunk.
//!
//! The hydron container (either form) and plain JSON Lines are streamed in
//! constant memory. Plain JSON arrays and plain fory messages have no
//! streaming decoder in hydron-codec, so they are read whole and then
//! handed out in chunks.

use std::fs::File;
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};

use hydron_codec::file::{self, FileReader, Format};
use hydron_codec::json::JsonLinesReader;
use hydron_codec::{fory, json, CodecError, Policy};
use hydron_core::{E8Root, Gf8};

use crate::error::{Class, CliError, Place};

/// Vectors per chunk for inputs that have no chunks of their own: 2 MiB of
/// coordinates, the container's default.
pub const CHUNK: usize = 65_536;

/// Bytes read from the start of a file to find its form.
const HEAD_LEN: usize = 64;

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
        }
    }

    /// Whether the form carries checksums.
    #[inline]
    #[must_use]
    pub fn has_checksums(self) -> bool {
        matches!(self, Kind::Container(_))
    }
}

/// Where a chunk handed out by [`Input::read_chunk`] sits in the file.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Chunk {
    /// Index of the chunk's first vector in the file.
    pub first: u64,
    /// Index of the chunk (container chunks are the file's own; other
    /// forms are cut into chunks of [`CHUNK`] vectors).
    pub index: u64,
    /// How many vectors it holds.
    pub len: usize,
}

enum Source {
    Container(Box<FileReader>),
    Lines {
        reader: JsonLinesReader<BufReader<File>>,
        /// The line of each vector of the current chunk.
        lines: Vec<u64>,
    },
    Memory {
        vectors: Vec<Gf8>,
        next: usize,
    },
}

/// An open input file.
pub struct Input {
    path: PathBuf,
    kind: Kind,
    bytes: u64,
    source: Source,
    vectors: u64,
    chunks: u64,
}

impl Input {
    /// Opens `path`, finds its form and reads its header (whole forms are
    /// read and decoded here), applying `policy` to every vector.
    pub fn open(path: &Path, policy: Policy) -> Result<Input, CliError> {
        let mut file = File::open(path).map_err(|e| CliError::io(path, &e))?;
        let bytes = file.metadata().map_err(|e| CliError::io(path, &e))?.len();
        let mut head = Vec::with_capacity(HEAD_LEN);
        (&mut file)
            .take(HEAD_LEN as u64)
            .read_to_end(&mut head)
            .map_err(|e| CliError::io(path, &e))?;
        let codec = |e: CodecError| CliError::codec(path, &e);
        let (kind, source) = match sniff(&head) {
            Sniffed::Container => {
                drop(file);
                let reader = FileReader::open(path, policy).map_err(codec)?;
                (
                    Kind::Container(reader.format()),
                    Source::Container(Box::new(reader)),
                )
            }
            Sniffed::JsonLines => {
                drop(file);
                let file = File::open(path).map_err(|e| CliError::io(path, &e))?;
                let reader = JsonLinesReader::new(BufReader::with_capacity(1 << 16, file), policy);
                (
                    Kind::JsonLines,
                    Source::Lines {
                        reader,
                        lines: Vec::new(),
                    },
                )
            }
            Sniffed::JsonArray => {
                let data = read_rest(file, head, bytes).map_err(|e| CliError::io(path, &e))?;
                let vectors = json::from_slice(&data, policy).map_err(codec)?;
                (Kind::JsonArray, Source::Memory { vectors, next: 0 })
            }
            Sniffed::Fory => {
                let data = read_rest(file, head, bytes).map_err(|e| CliError::io(path, &e))?;
                let (kind, vectors) = decode_fory(&data, policy).map_err(|e| match e {
                    ForyError::Decode(e) => codec(e),
                    ForyError::NotOurs(e) => CliError {
                        class: Class::Format,
                        message: format!(
                            "{}: not a hydron fory message (Gf8Batch, E8Codes or Gf8): {e}",
                            path.display()
                        ),
                        place: Box::new(Place::of(&e)),
                    },
                })?;
                (kind, Source::Memory { vectors, next: 0 })
            }
        };
        Ok(Input {
            path: path.to_path_buf(),
            kind,
            bytes,
            source,
            vectors: 0,
            chunks: 0,
        })
    }

    /// The form of the file.
    #[inline]
    #[must_use]
    pub fn kind(&self) -> Kind {
        self.kind
    }

    /// The size of the file in bytes.
    #[inline]
    #[must_use]
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// How many vectors the file holds, if known before reading it all.
    #[must_use]
    pub fn expected_vectors(&self) -> Option<u64> {
        match &self.source {
            Source::Container(r) => r.expected_vectors(),
            Source::Lines { .. } => None,
            Source::Memory { vectors, .. } => Some(vectors.len() as u64),
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
            Source::Lines { reader, lines } => {
                lines.clear();
                while out.len() < CHUNK {
                    let Some(item) = reader.next() else { break };
                    out.push(item.map_err(|e| CliError::codec(path, &e))?);
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

/// The form found from the first bytes.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Sniffed {
    Container,
    JsonArray,
    JsonLines,
    Fory,
}

/// Finds the form from the first bytes. Anything that is not clearly plain
/// JSON or a fory message goes to the container reader, which explains
/// what it found (empty, damaged magic, another file type).
fn sniff(head: &[u8]) -> Sniffed {
    if file::looks_like_container(head) {
        return Sniffed::Container;
    }
    let text = head.iter().position(|b| !b" \t\r\n".contains(b));
    match text.map(|i| (head[i], &head[i + 1..])) {
        Some((b'[', rest)) => {
            match rest.iter().find(|b| !b" \t\r\n".contains(b)) {
                // `[[` or `[]`: an array of vectors; otherwise a first row.
                Some(b'[' | b']') | None => Sniffed::JsonArray,
                Some(_) => Sniffed::JsonLines,
            }
        }
        _ if matches!(head.first(), Some(0x00 | 0x01)) => Sniffed::Fory,
        _ => Sniffed::Container,
    }
}

/// Reads the rest of a file after `head`.
fn read_rest(mut file: File, mut head: Vec<u8>, len: u64) -> std::io::Result<Vec<u8>> {
    // The length is a hint only (the file may change); read_to_end checks.
    head.reserve(usize::try_from(len).unwrap_or(0).saturating_sub(head.len()));
    file.read_to_end(&mut head)?;
    Ok(head)
}

enum ForyError {
    /// A message of one of hydron's types, but broken or invalid.
    Decode(CodecError),
    /// Not a message of one of hydron's types.
    NotOurs(CodecError),
}

/// Decodes one fory message of any of hydron's three types.
fn decode_fory(data: &[u8], policy: Policy) -> Result<(Kind, Vec<Gf8>), ForyError> {
    let framing = |e: &CodecError| {
        matches!(
            e,
            CodecError::WrongHeader { .. } | CodecError::WrongTypeId { .. }
        )
    };
    let first = match fory::decode_batch(data, policy) {
        Ok(v) => return Ok((Kind::ForyBatch, v)),
        Err(e) if framing(&e) => e,
        Err(e) => return Err(ForyError::Decode(e)),
    };
    match fory::decode_codes(data) {
        Ok(codes) => {
            let vectors = codes.into_iter().map(E8Root::to_gf8).collect();
            return Ok((Kind::ForyCodes, vectors));
        }
        Err(e) if framing(&e) => {}
        Err(e) => return Err(ForyError::Decode(e)),
    }
    match fory::decode_gf8(data, policy) {
        Ok(v) => Ok((Kind::ForyGf8, vec![v])),
        Err(e) if framing(&e) => Err(ForyError::NotOurs(first)),
        Err(e) => Err(ForyError::Decode(e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sniffing() {
        assert_eq!(sniff(&file::MAGIC), Sniffed::Container);
        assert_eq!(sniff(file::TEXT_MAGIC), Sniffed::Container);
        let mut flipped = file::MAGIC;
        flipped[0] = 0x01; // two bits off: damage, not a fory message
        assert_eq!(sniff(&flipped), Sniffed::Container);
        assert_eq!(sniff(b" [[1,0,0,0,0,0,0,0]]"), Sniffed::JsonArray);
        assert_eq!(sniff(b"[\n  [1,0,0"), Sniffed::JsonArray);
        assert_eq!(sniff(b"[]"), Sniffed::JsonArray);
        assert_eq!(sniff(b"[1,0,0,0,0,0,0,0]\n"), Sniffed::JsonLines);
        assert_eq!(sniff(b"\n[-0.5, 0.5"), Sniffed::JsonLines);
        assert_eq!(sniff(&[0x01, 0xff, 27]), Sniffed::Fory);
        assert_eq!(sniff(&[0x00]), Sniffed::Fory);
        assert_eq!(sniff(b""), Sniffed::Container);
        assert_eq!(sniff(b"PK\x03\x04"), Sniffed::Container);
    }

    #[test]
    fn fory_messages_of_each_type_are_recognized() {
        let v = Gf8::from_scalar(1.0).unwrap();
        let (kind, out) = decode_fory(&fory::encode_batch(&[v, Gf8::ZERO]), Policy::Strict)
            .ok()
            .unwrap();
        assert_eq!((kind, out), (Kind::ForyBatch, vec![v, Gf8::ZERO]));
        let root = E8Root::new(200).unwrap();
        let (kind, out) = decode_fory(&fory::encode_codes(&[root]), Policy::Strict)
            .ok()
            .unwrap();
        assert_eq!((kind, out), (Kind::ForyCodes, vec![root.to_gf8()]));
        let (kind, out) = decode_fory(&fory::encode_gf8(v), Policy::Strict)
            .ok()
            .unwrap();
        assert_eq!((kind, out), (Kind::ForyGf8, vec![v]));
        let mut other = fory::encode_batch(&[v]);
        other[1] ^= 0x40;
        assert!(matches!(
            decode_fory(&other, Policy::Strict),
            Err(ForyError::NotOurs(_))
        ));
        let cut = &fory::encode_codes(&[root; 10])[..25];
        assert!(matches!(
            decode_fory(cut, Policy::Strict),
            Err(ForyError::Decode(CodecError::UnexpectedEnd { .. }))
        ));
    }
}
