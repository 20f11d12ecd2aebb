//! The text form: JSON Lines with a header line, a checksum line after
//! every chunk and an end line. The exact text is in `docs/format.md`.
//!
//! Every checksum line holds the CRC-32 of all bytes of the file before
//! it, header included, and every control line must be byte-for-byte the
//! canonical line the reader expects; so a flipped bit anywhere (in a
//! number, a bracket, a newline, a count, a checksum) is detected.

use std::io::{self, BufRead, Write};

use hydron_core::Gf8;

use super::{bit_distance, near, FileOptions, Section, TEXT_MAGIC, VERSION};
use crate::json::{check_finite, json_error, parse_row, write_row, Cursor, LineEnd};
use crate::{CodecError, Policy};

/// The longest line accepted, as for [`crate::json::JsonLinesReader`]. No
/// line hydron writes comes near it (a vector line is at most about 130
/// bytes), so a longer one is damage, and reading stops at the cap.
const MAX_LINE: usize = crate::json::MAX_LINE_LEN;

/// The shortest vector line, `[0,0,0,0,0,0,0,0]\n`: bounds the vector count
/// a file of a given size can hold.
const MIN_VECTOR_LINE: u64 = 18;

/// Vectors formatted per `write_all` (about 400 KiB of text).
const WRITE_BATCH: usize = 4096;

/// `,"crc32":"XXXXXXXX"}` closes the header line: its CRC covers the
/// bytes of the line before it.
const HEADER_CRC_LEN: usize = 20;

pub(crate) fn header_line(chunk_vectors: u32) -> String {
    let body = format!(
        "{{\"format\":\"hydron-gf8-jsonl\",\"version\":{VERSION},\"chunk_vectors\":{chunk_vectors}"
    );
    let crc = crc32fast::hash(body.as_bytes());
    format!("{body},\"crc32\":\"{crc:08x}\"}}\n")
}

pub(crate) fn chunk_line(index: u64, vectors: u64, crc: u32) -> String {
    format!("{{\"chunk\":{index},\"vectors\":{vectors},\"crc32\":\"{crc:08x}\"}}\n")
}

pub(crate) fn end_line(chunks: u64, vectors: u64, crc: u32) -> String {
    format!("{{\"end\":true,\"chunks\":{chunks},\"vectors\":{vectors},\"crc32\":\"{crc:08x}\"}}\n")
}

/// Writes the text form to `W`.
pub(crate) struct Encoder<W: Write> {
    writer: W,
    /// CRC-32 of everything written so far.
    crc: crc32fast::Hasher,
    chunk_vectors: u64,
    in_chunk: u64,
    chunks: u64,
    /// Vectors in closed chunks.
    vectors: u64,
    text: Vec<u8>,
}

impl<W: Write> Encoder<W> {
    pub(crate) fn new(writer: W, options: FileOptions) -> io::Result<Encoder<W>> {
        let mut e = Encoder {
            writer,
            crc: crc32fast::Hasher::new(),
            chunk_vectors: options.chunk_vectors().into(),
            in_chunk: 0,
            chunks: 0,
            vectors: 0,
            text: Vec::new(),
        };
        let header = header_line(options.chunk_vectors());
        e.put(header.as_bytes())?;
        Ok(e)
    }

    /// Writes `bytes` and adds them to the running CRC.
    #[inline]
    fn put(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.crc.update(bytes);
        self.writer.write_all(bytes)
    }

    /// Writes vectors; a non-finite coordinate (possible only through
    /// `Gf8::new_unchecked`) is an error, as JSON cannot hold it.
    pub(crate) fn write(&mut self, mut vectors: &[Gf8]) -> Result<(), CodecError> {
        while !vectors.is_empty() {
            let room = (self.chunk_vectors - self.in_chunk) as usize;
            let take = vectors.len().min(room).min(WRITE_BATCH);
            let (piece, rest) = vectors.split_at(take);
            check_finite(piece, self.vectors + self.in_chunk)?;
            let mut text = std::mem::take(&mut self.text);
            text.clear();
            for v in piece {
                write_row(&mut text, v);
                text.push(b'\n');
            }
            let written = self.put(&text);
            self.text = text;
            written.map_err(CodecError::Io)?;
            self.in_chunk += take as u64;
            if self.in_chunk == self.chunk_vectors {
                self.close_chunk().map_err(CodecError::Io)?;
            }
            vectors = rest;
        }
        Ok(())
    }

    fn close_chunk(&mut self) -> io::Result<()> {
        let line = chunk_line(self.chunks, self.in_chunk, self.crc.clone().finalize());
        self.put(line.as_bytes())?;
        self.chunks += 1;
        self.vectors += self.in_chunk;
        self.in_chunk = 0;
        Ok(())
    }

    #[inline]
    pub(crate) fn vectors(&self) -> u64 {
        self.vectors + self.in_chunk
    }

    pub(crate) fn finish(mut self) -> io::Result<W> {
        if self.in_chunk > 0 {
            self.close_chunk()?;
        }
        let line = end_line(self.chunks, self.vectors, self.crc.clone().finalize());
        self.put(line.as_bytes())?;
        self.writer.flush()?;
        Ok(self.writer)
    }
}

/// Reads the text form from `R`, one chunk at a time, checking everything.
/// The length of the data is not needed: data that ends before the end line
/// is truncation, and the data must end right after it.
pub(crate) struct Decoder<R: BufRead> {
    reader: R,
    offset: u64,
    /// 1-based number of the last line read.
    line_no: u64,
    crc: crc32fast::Hasher,
    policy: Policy,
    chunk_vectors: u64,
    chunks: u64,
    vectors: u64,
    line: Vec<u8>,
    done: bool,
    expected: Option<u64>,
}

/// One line as read: how it ended, where it started, its line number, and
/// the CRC of everything before it.
struct Line {
    end: LineEnd,
    start: u64,
    number: u64,
    crc_before: u32,
}

impl<R: BufRead> Decoder<R> {
    /// Reads and checks the header line; `expected` is the vector count the
    /// end line of a regular file announces, a hint only.
    pub(crate) fn new(
        reader: R,
        policy: Policy,
        expected: Option<u64>,
    ) -> Result<Decoder<R>, CodecError> {
        let mut d = Decoder {
            reader,
            offset: 0,
            line_no: 0,
            crc: crc32fast::Hasher::new(),
            policy,
            chunk_vectors: 0,
            chunks: 0,
            vectors: 0,
            line: Vec::new(),
            done: false,
            expected,
        };
        let line = d.next_line()?;
        d.chunk_vectors = match line.end {
            LineEnd::Newline => parse_header(&d.line)?.into(),
            LineEnd::Eof => {
                return Err(CodecError::UnknownFormat {
                    reason: "it is empty".into(),
                })
            }
            LineEnd::Unterminated
                if TEXT_MAGIC.starts_with(&d.line) || d.line.starts_with(TEXT_MAGIC) =>
            {
                return Err(CodecError::Truncated {
                    offset: d.offset,
                    section: Section::Header,
                })
            }
            LineEnd::TooLong => {
                return Err(CodecError::Corrupt {
                    section: Section::Header,
                    offset: 0,
                    detail: format!("the header line is longer than {MAX_LINE} bytes"),
                })
            }
            LineEnd::Unterminated => {
                return Err(CodecError::UnknownFormat {
                    reason: "it starts with '{' but its first line is not a hydron header".into(),
                })
            }
        };
        Ok(d)
    }

    #[inline]
    pub(crate) fn expected_vectors(&self) -> Option<u64> {
        self.expected
    }

    #[inline]
    pub(crate) fn chunk_vectors(&self) -> u32 {
        // Checked against MAX_CHUNK_VECTORS when the header was read.
        self.chunk_vectors as u32
    }

    /// Reads the next line into `self.line`, updating offset, line number
    /// and CRC.
    fn next_line(&mut self) -> Result<Line, CodecError> {
        let crc_before = self.crc.clone().finalize();
        let start = self.offset;
        self.line.clear();
        let (end, consumed) =
            read_line_capped(&mut self.reader, &mut self.line, MAX_LINE, &mut self.crc)
                .map_err(CodecError::Io)?;
        self.offset += consumed;
        if end != LineEnd::Eof {
            self.line_no += 1;
        }
        Ok(Line {
            end,
            start,
            number: self.line_no,
            crc_before,
        })
    }

    /// Appends the next chunk's vectors to `out` and returns how many;
    /// `Ok(0)` once the end line has been read and checked.
    ///
    /// A bad vector line (bad JSON, a vector the policy rejects) does not
    /// stop the reading at once: the rest of the chunk is read to its
    /// checksum line, so that damage is reported as corruption, and an
    /// error that was really written is reported as itself.
    pub(crate) fn read_chunk(&mut self, out: &mut Vec<Gf8>) -> Result<usize, CodecError> {
        if self.done {
            return Ok(0);
        }
        let before = out.len();
        let result = self.read_chunk_inner(out);
        if result.is_err() {
            out.truncate(before);
        }
        result
    }

    fn read_chunk_inner(&mut self, out: &mut Vec<Gf8>) -> Result<usize, CodecError> {
        let k = self.chunks;
        let chunk_start = self.offset;
        let mut n: u64 = 0;
        let mut deferred: Option<CodecError> = None;
        loop {
            let line = self.next_line()?;
            match line.end {
                LineEnd::Newline => {}
                LineEnd::Eof | LineEnd::Unterminated => {
                    // A bad line and no checksum line after it is damage; a
                    // vector the policy rejects is not, so then the missing
                    // end is reported as the truncation it is.
                    let damage =
                        deferred.filter(|e| !matches!(e, CodecError::InvalidVectorOnLine { .. }));
                    if let Some(first) = damage {
                        return Err(CodecError::Corrupt {
                            section: Section::Chunk(k),
                            offset: chunk_start,
                            detail: format!(
                                "no checksum line before the data ends; first bad line: {first}"
                            ),
                        });
                    }
                    if n == 0 && line.end == LineEnd::Unterminated {
                        let end = end_line(self.chunks, self.vectors, line.crc_before);
                        if self.line.len() == end.len()
                            && bit_distance(&self.line, end.as_bytes()) <= 2
                        {
                            return Err(CodecError::Corrupt {
                                section: Section::Trailer,
                                offset: line.start,
                                detail: format!(
                                    "line {}: the end line is damaged and has no newline",
                                    line.number
                                ),
                            });
                        }
                    }
                    let section = if n > 0 || self.line.starts_with(b"{\"chunk\"") {
                        Section::Chunk(k)
                    } else {
                        Section::Trailer
                    };
                    return Err(CodecError::Truncated {
                        offset: self.offset,
                        section,
                    });
                }
                LineEnd::TooLong => {
                    // Reading stopped at the cap: the rest of the line is
                    // not read (it may never end), so this is final.
                    return Err(CodecError::Corrupt {
                        section: Section::Chunk(k),
                        offset: line.start,
                        detail: format!(
                            "line {} is longer than {MAX_LINE} bytes (no line of a hydron file is)",
                            line.number
                        ),
                    });
                }
            }
            if n == 0 {
                // After a whole chunk: the end line, or a vector line.
                let end = end_line(self.chunks, self.vectors, line.crc_before);
                let end = &end.as_bytes()[..end.len() - 1];
                if self.line == end {
                    return self.at_end().map(|()| 0);
                }
                let near_end = self.line.len() == end.len() && bit_distance(&self.line, end) <= 2;
                if near_end || self.line.first() == Some(&b'{') {
                    return Err(CodecError::Corrupt {
                        section: if near_end {
                            Section::Trailer
                        } else {
                            Section::Chunk(k)
                        },
                        offset: line.start,
                        detail: format!(
                            "line {}: {}",
                            line.number,
                            explain_mismatch(
                                &self.line,
                                k,
                                0,
                                self.chunks,
                                self.vectors,
                                line.crc_before
                            )
                        ),
                    });
                }
            } else if self.line.first() == Some(&b'{') {
                return self.close_chunk(&line, n, k, chunk_start, deferred);
            }
            n += 1;
            self.check_count(n, k, chunk_start)?;
            if deferred.is_some() {
                continue;
            }
            let cursor = Cursor::default();
            match parse_row(&self.line, &cursor) {
                Ok(coords) => match self.policy.apply_one(coords) {
                    Ok(v) => {
                        // The line was read: room for one more vector.
                        super::reserve_read(out, 1, self.expected)?;
                        out.push(v);
                    }
                    Err(error) => {
                        deferred = Some(CodecError::InvalidVectorOnLine {
                            line: line.number,
                            index: self.vectors + n - 1,
                            error,
                        });
                    }
                },
                Err(e) => deferred = Some(json_error(e, &cursor, &self.line, Some(line.number))),
            }
        }
    }

    /// A chunk may not have more lines than the header allows.
    fn check_count(&self, n: u64, k: u64, chunk_start: u64) -> Result<(), CodecError> {
        if n > self.chunk_vectors {
            return Err(CodecError::Corrupt {
                section: Section::Chunk(k),
                offset: chunk_start,
                detail: format!(
                    "more than {} vector lines without a checksum line (line {})",
                    self.chunk_vectors, self.line_no
                ),
            });
        }
        Ok(())
    }

    /// Checks the checksum line that ends chunk `k` of `n` vectors.
    fn close_chunk(
        &mut self,
        line: &Line,
        n: u64,
        k: u64,
        chunk_start: u64,
        deferred: Option<CodecError>,
    ) -> Result<usize, CodecError> {
        let expected = chunk_line(k, n, line.crc_before);
        if self.line != expected.as_bytes()[..expected.len() - 1] {
            return Err(CodecError::Corrupt {
                section: Section::Chunk(k),
                offset: chunk_start,
                detail: format!(
                    "line {}: {}",
                    line.number,
                    explain_mismatch(
                        &self.line,
                        k,
                        n,
                        self.chunks,
                        self.vectors + n,
                        line.crc_before
                    )
                ),
            });
        }
        if let Some(error) = deferred {
            return Err(error);
        }
        self.chunks += 1;
        self.vectors += n;
        Ok(n as usize)
    }

    /// After the end line: nothing may follow it.
    fn at_end(&mut self) -> Result<(), CodecError> {
        let at = self.offset;
        if let Some(extra) = super::count_rest(&mut self.reader).map_err(CodecError::Io)? {
            return Err(CodecError::Corrupt {
                section: Section::Trailer,
                offset: at,
                detail: format!("{extra} unexpected bytes after the end line"),
            });
        }
        self.done = true;
        Ok(())
    }
}

/// Reads one line into `buf` (without its `\n`), adding every byte read to
/// `crc`, and stops as soon as the line is longer than `limit`: at most
/// `limit + 1` bytes are read for it then, whatever follows. Returns how the
/// line ended and how many bytes were read.
fn read_line_capped<R: BufRead>(
    reader: &mut R,
    buf: &mut Vec<u8>,
    limit: usize,
    crc: &mut crc32fast::Hasher,
) -> io::Result<(LineEnd, u64)> {
    let mut consumed = 0u64;
    loop {
        let available = match reader.fill_buf() {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if available.is_empty() {
            let end = if consumed == 0 {
                LineEnd::Eof
            } else {
                LineEnd::Unterminated
            };
            return Ok((end, consumed));
        }
        // `buf` never holds more than `limit` bytes, so one more content
        // byte than `room` proves the line too long.
        let room = limit - buf.len();
        let window = &available[..available.len().min(room + 1)];
        let (take, content, newline) = match window.iter().position(|&b| b == b'\n') {
            Some(i) => (i + 1, i, true),
            None => (window.len(), window.len(), false),
        };
        crc.update(&available[..take]);
        let too_long = content > room;
        if !too_long {
            buf.extend_from_slice(&available[..content]);
        }
        reader.consume(take);
        consumed += take as u64;
        if too_long {
            return Ok((LineEnd::TooLong, consumed));
        }
        if newline {
            return Ok((LineEnd::Newline, consumed));
        }
    }
}

/// How many bits differ between two slices of the same length.
/// Says why a control line is not the one expected: chunk `k` of `n`
/// vectors, or the end line after `chunks` chunks and `vectors` vectors;
/// `crc` is the CRC of the bytes before it.
fn explain_mismatch(line: &[u8], k: u64, n: u64, chunks: u64, vectors: u64, crc: u32) -> String {
    let Ok(serde_json::Value::Object(map)) = serde_json::from_slice::<serde_json::Value>(line)
    else {
        return "not a valid checksum or end line".into();
    };
    let computed = format!("{crc:08x}");
    if let Some(stored) = map.get("crc32").and_then(|v| v.as_str()) {
        if stored != computed {
            return format!("checksum mismatch (stored {stored}, computed {computed})");
        }
    }
    let get = |key: &str| map.get(key).and_then(serde_json::Value::as_u64);
    if map.contains_key("chunk") {
        if n == 0 {
            return "a checksum line with no vector lines before it".into();
        }
        if get("chunk") != Some(k) {
            return format!("the line says chunk {:?}, expected chunk {k}", map["chunk"]);
        }
        if get("vectors") != Some(n) {
            return format!(
                "the line counts {:?} vectors, {n} vector lines precede it",
                map.get("vectors")
            );
        }
    } else if map.contains_key("end") {
        if n > 0 {
            return format!("the end line follows {n} vectors without a checksum line");
        }
        if get("chunks") != Some(chunks) || get("vectors") != Some(vectors) {
            return format!(
                "the end line counts {:?} chunks and {:?} vectors, the file holds {chunks} and {vectors}",
                map.get("chunks"),
                map.get("vectors")
            );
        }
    }
    "the line is not in canonical form".into()
}

/// Parses and checks the header line; returns its chunk size.
///
/// The line's own CRC is checked before its version, so a damaged version
/// number is reported as damage; every version ends its header line with
/// the same `,"crc32":"XXXXXXXX"}`.
fn parse_header(line: &[u8]) -> Result<u32, CodecError> {
    let corrupt = |detail: String| CodecError::Corrupt {
        section: Section::Header,
        offset: 0,
        detail,
    };
    if !line.starts_with(TEXT_MAGIC) {
        return Err(if near(line, TEXT_MAGIC) {
            corrupt("the header line is damaged".into())
        } else {
            CodecError::UnknownFormat {
                reason: "it starts with '{' but its first line is not a hydron header".into(),
            }
        });
    }
    let split = line
        .len()
        .checked_sub(HEADER_CRC_LEN)
        .filter(|&at| at >= TEXT_MAGIC.len())
        .ok_or_else(|| corrupt("the header line is too short".into()))?;
    let (body, end) = line.split_at(split);
    let stored = end
        .strip_prefix(b",\"crc32\":\"")
        .and_then(|e| e.strip_suffix(b"\"}"))
        .and_then(parse_hex)
        .ok_or_else(|| corrupt("the header line does not end with its checksum".into()))?;
    let computed = crc32fast::hash(body);
    if stored != computed {
        return Err(corrupt(format!(
            "checksum mismatch (stored {stored:08x}, computed {computed:08x})"
        )));
    }
    let (version, rest) = leading_number(&body[TEXT_MAGIC.len()..])
        .ok_or_else(|| corrupt("the version is not a number".into()))?;
    if version != u64::from(VERSION) {
        return Err(CodecError::UnsupportedVersion {
            found: u32::try_from(version).unwrap_or(u32::MAX),
            supported: VERSION.into(),
        });
    }
    let (chunk_vectors, _) = rest
        .strip_prefix(b",\"chunk_vectors\":")
        .and_then(leading_number)
        .ok_or_else(|| corrupt("the header line is not canonical".into()))?;
    let chunk_vectors = u32::try_from(chunk_vectors)
        .ok()
        .filter(|n| (1..=FileOptions::MAX_CHUNK_VECTORS).contains(n))
        .ok_or_else(|| corrupt(format!("chunk size {chunk_vectors} is out of range")))?;
    let expected = header_line(chunk_vectors);
    if line != &expected.as_bytes()[..expected.len() - 1] {
        return Err(corrupt("the header line is not canonical".into()));
    }
    Ok(chunk_vectors)
}

/// Exactly 8 lowercase hex digits.
fn parse_hex(s: &[u8]) -> Option<u32> {
    if s.len() != 8 || !s.iter().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
        return None;
    }
    u32::from_str_radix(std::str::from_utf8(s).ok()?, 16).ok()
}

/// A decimal number of at most 19 digits at the start of `s`, and the rest.
fn leading_number(s: &[u8]) -> Option<(u64, &[u8])> {
    let digits = s.iter().take_while(|b| b.is_ascii_digit()).count();
    if digits == 0 || digits > 19 {
        return None;
    }
    let n = std::str::from_utf8(&s[..digits]).ok()?.parse().ok()?;
    Some((n, &s[digits..]))
}

/// The vector count of the end line at the end of `tail`, if it is
/// possible for a file of `len` bytes. A hint for progress and for how far
/// outputs grow at once, never for an allocation.
pub(crate) fn expected_from_tail(tail: &[u8], len: u64) -> Option<u64> {
    let body = tail.strip_suffix(b"\n")?;
    let last = &body[body.iter().rposition(|&b| b == b'\n')? + 1..];
    let rest = last.strip_prefix(b"{\"end\":true,\"chunks\":")?;
    let (_, rest) = leading_number(rest)?;
    let (vectors, _) = leading_number(rest.strip_prefix(b",\"vectors\":")?)?;
    (vectors <= len / MIN_VECTOR_LINE).then_some(vectors)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leading_numbers() {
        assert_eq!(leading_number(b"12,x"), Some((12, &b",x"[..])));
        assert_eq!(leading_number(b"x"), None);
        assert_eq!(leading_number(b"99999999999999999999"), None);
    }

    #[test]
    fn lines_are_read_only_up_to_the_cap() {
        let mut data = b"ab\n".to_vec();
        data.extend_from_slice(&[b'x'; 100]);
        data.extend_from_slice(b"\ncd");
        // A tiny buffer makes lines span several fill_buf calls.
        let mut r = io::BufReader::with_capacity(3, &data[..]);
        let mut crc = crc32fast::Hasher::new();
        let mut buf = Vec::new();
        let mut read = |buf: &mut Vec<u8>| {
            buf.clear();
            read_line_capped(&mut r, buf, 10, &mut crc).unwrap()
        };
        assert_eq!(read(&mut buf), (LineEnd::Newline, 3));
        assert_eq!(buf, b"ab");
        // 11 bytes read of the 100-byte line, then it stops.
        assert_eq!(read(&mut buf), (LineEnd::TooLong, 11));
        let mut exact = Vec::new();
        let mut r = io::BufReader::with_capacity(4, &b"0123456789\nz"[..]);
        let mut crc = crc32fast::Hasher::new();
        assert_eq!(
            read_line_capped(&mut r, &mut exact, 10, &mut crc).unwrap(),
            (LineEnd::Newline, 11)
        );
        assert_eq!(exact, b"0123456789");
        exact.clear();
        assert_eq!(
            read_line_capped(&mut r, &mut exact, 10, &mut crc).unwrap(),
            (LineEnd::Unterminated, 1)
        );
        exact.clear();
        assert_eq!(
            read_line_capped(&mut r, &mut exact, 10, &mut crc).unwrap(),
            (LineEnd::Eof, 0)
        );
        assert_eq!(crc.finalize(), crc32fast::hash(b"0123456789\nz"));
    }

    #[test]
    fn writer_refuses_non_finite_vectors() {
        let mut e = Encoder::new(Vec::new(), FileOptions::new()).unwrap();
        e.write(&[Gf8::ZERO]).unwrap();
        let bad = Gf8::new_unchecked([0.0, 0.0, f32::INFINITY, 0.0, 0.0, 0.0, 0.0, 0.0]);
        let err = e.write(&[bad]).unwrap_err();
        assert_eq!(err.to_string(), "vector 1: coordinate 2 is infinite (inf)");
    }

    #[test]
    fn header_parsing() {
        assert_eq!(
            parse_header(header_line(7).trim_end().as_bytes()).unwrap(),
            7
        );
        let with_crc = |body: &str| {
            let crc = crc32fast::hash(body.as_bytes());
            format!("{body},\"crc32\":\"{crc:08x}\"}}")
        };
        let v2 = with_crc(r#"{"format":"hydron-gf8-jsonl","version":2,"chunk_vectors":7"#);
        assert!(matches!(
            parse_header(v2.as_bytes()),
            Err(CodecError::UnsupportedVersion {
                found: 2,
                supported: 1
            })
        ));
        let spaced = with_crc(r#"{"format":"hydron-gf8-jsonl","version":1, "chunk_vectors":7"#);
        assert!(matches!(
            parse_header(spaced.as_bytes()),
            Err(CodecError::Corrupt { .. })
        ));
        let zero = with_crc(r#"{"format":"hydron-gf8-jsonl","version":1,"chunk_vectors":0"#);
        assert!(matches!(
            parse_header(zero.as_bytes()),
            Err(CodecError::Corrupt { .. })
        ));
        let mut flipped = header_line(7).trim_end().to_string().into_bytes();
        flipped[TEXT_MAGIC.len()] = b'3'; // the version digit
        let err = parse_header(&flipped).unwrap_err();
        assert!(err.to_string().contains("checksum mismatch"), "{err}");
        assert!(matches!(
            parse_header(b"{\"a\":1}"),
            Err(CodecError::UnknownFormat { .. })
        ));
        assert_eq!(parse_hex(b"00c0ffee"), Some(0xc0ffee));
        assert_eq!(parse_hex(b"00C0FFEE"), None);
        assert_eq!(parse_hex(b"+0c0ffee"), None);
    }
}
