//! JSON Lines: one vector `[x0, …, x7]` per line, for streams.

use std::io::{self, BufRead, Write};

use hydron_core::Gf8;

use super::de::{json_error, parse_row, Cursor};
use super::ser::{check_finite, write_row};
use crate::{CodecError, Policy};

/// The longest line [`JsonLinesReader`] accepts, in bytes, newline
/// excluded. A vector written here takes about 100 bytes; 4 KiB leaves room
/// for other writers' spacing and long decimals while keeping memory
/// bounded on hostile input.
pub const MAX_LINE_LEN: usize = 4096;

/// Writes vectors as JSON Lines: each vector `[x0,…,x7]` then `\n`.
///
/// Each [`write`](JsonLinesWriter::write) is one `write_all` on the inner
/// writer; wrap files and sockets in a [`std::io::BufWriter`].
///
/// ```
/// use hydron_codec::json::JsonLinesWriter;
/// use hydron_core::Gf8;
///
/// let mut w = JsonLinesWriter::new(Vec::new());
/// w.write(&Gf8::ZERO)?;
/// w.write_all(&[Gf8::try_new([1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0])?])?;
/// let text = w.finish()?;
/// assert_eq!(
///     text,
///     b"[0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0]\n[1.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0]\n"
/// );
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct JsonLinesWriter<W: Write> {
    writer: W,
    line: Vec<u8>,
    /// Vectors written so far (the index of the next one, for errors).
    written: u64,
}

/// How many vectors [`JsonLinesWriter::write_all`] formats before each
/// `write_all` on the inner writer (about 100 KiB of text).
const BATCH: usize = 1024;

impl<W: Write> JsonLinesWriter<W> {
    /// A writer that writes lines to `writer`.
    ///
    /// ```
    /// use hydron_codec::json::JsonLinesWriter;
    /// let w = JsonLinesWriter::new(std::io::sink());
    /// # drop(w);
    /// ```
    #[inline]
    #[must_use]
    pub fn new(writer: W) -> JsonLinesWriter<W> {
        JsonLinesWriter {
            writer,
            line: Vec::with_capacity(128),
            written: 0,
        }
    }

    /// Writes one vector and its newline.
    ///
    /// ```
    /// use hydron_codec::json::JsonLinesWriter;
    /// use hydron_core::Gf8;
    /// let mut w = JsonLinesWriter::new(Vec::new());
    /// w.write(&Gf8::ZERO)?;
    /// assert_eq!(w.finish()?.len(), 34);
    /// # Ok::<(), hydron_codec::CodecError>(())
    /// ```
    pub fn write(&mut self, vector: &Gf8) -> Result<(), CodecError> {
        self.write_all(core::slice::from_ref(vector))
    }

    /// Writes every vector, one per line.
    ///
    /// Errors: I/O errors; a vector holding NaN or an infinity (made with
    /// `Gf8::new_unchecked`; JSON has no such numbers) is
    /// [`CodecError::InvalidVector`], numbered from the writer's first
    /// vector, and nothing of this call is written.
    ///
    /// ```
    /// use hydron_codec::json::JsonLinesWriter;
    /// use hydron_core::Gf8;
    /// let mut w = JsonLinesWriter::new(Vec::new());
    /// w.write_all(&[Gf8::ZERO; 3])?;
    /// assert_eq!(w.finish()?.iter().filter(|&&b| b == b'\n').count(), 3);
    /// # Ok::<(), hydron_codec::CodecError>(())
    /// ```
    pub fn write_all(&mut self, vectors: &[Gf8]) -> Result<(), CodecError> {
        check_finite(vectors, self.written)?;
        for batch in vectors.chunks(BATCH) {
            self.line.clear();
            for v in batch {
                write_row(&mut self.line, v);
                self.line.push(b'\n');
            }
            self.writer.write_all(&self.line).map_err(CodecError::Io)?;
            self.written += batch.len() as u64;
        }
        Ok(())
    }

    /// Flushes the inner writer.
    ///
    /// ```
    /// use hydron_codec::json::JsonLinesWriter;
    /// let mut w = JsonLinesWriter::new(std::io::sink());
    /// w.flush()?;
    /// # Ok::<(), hydron_codec::CodecError>(())
    /// ```
    #[inline]
    pub fn flush(&mut self) -> Result<(), CodecError> {
        self.writer.flush().map_err(CodecError::Io)
    }

    /// Flushes and returns the inner writer.
    ///
    /// ```
    /// use hydron_codec::json::JsonLinesWriter;
    /// let out: Vec<u8> = JsonLinesWriter::new(Vec::new()).finish()?;
    /// assert!(out.is_empty());
    /// # Ok::<(), hydron_codec::CodecError>(())
    /// ```
    pub fn finish(mut self) -> Result<W, CodecError> {
        self.flush()?;
        Ok(self.writer)
    }
}

/// Reads JSON Lines, one vector per line, as an iterator of
/// `Result<Gf8, CodecError>`.
///
/// - Lines end with `\n` (a `\r` before it is ignored); the last line may
///   lack it.
/// - Blank lines (nothing but spaces, tabs, `\r`) are skipped; they still
///   count for line numbers, which are 1-based.
/// - A line longer than [`MAX_LINE_LEN`] bytes is skipped without being
///   held in memory, and reported as [`CodecError::LineTooLong`].
/// - Bad JSON on a line is [`CodecError::Json`] with that line's number; a
///   vector that breaks the [`Policy`] is
///   [`CodecError::InvalidVectorOnLine`]. After either, iteration goes on
///   with the next line, so a caller may skip bad lines.
/// - An I/O error is returned once and ends the iteration.
///
/// Vector indices count every non-blank line, good or bad.
///
/// ```
/// use hydron_codec::json::JsonLinesReader;
/// use hydron_codec::{CodecError, Policy};
///
/// let text = "[0,0,0,0,0,0,0,1]\n\n[0,0,0,0,0,0,0,2]\n[0,0,0,0,0,0,1,0]";
/// let mut r = JsonLinesReader::new(text.as_bytes(), Policy::Strict);
/// assert_eq!(r.next().unwrap()?[7], 1.0);
/// let err = r.next().unwrap().unwrap_err();
/// assert_eq!(err.to_string(), "line 3 (vector 1): norm is 2, expected 1 (within 0.00001) or exactly 0");
/// assert_eq!(r.next().unwrap()?[6], 1.0);
/// assert!(r.next().is_none());
/// # Ok::<(), CodecError>(())
/// ```
#[derive(Debug)]
pub struct JsonLinesReader<R: BufRead> {
    reader: R,
    policy: Policy,
    line_no: u64,
    index: u64,
    line: Vec<u8>,
    done: bool,
}

impl<R: BufRead> JsonLinesReader<R> {
    /// A reader of `reader`'s lines that applies `policy` to each vector.
    ///
    /// ```
    /// use hydron_codec::{json::JsonLinesReader, Policy};
    /// let r = JsonLinesReader::new(&b""[..], Policy::Strict);
    /// assert_eq!(r.count(), 0);
    /// ```
    #[inline]
    #[must_use]
    pub fn new(reader: R, policy: Policy) -> JsonLinesReader<R> {
        JsonLinesReader {
            reader,
            policy,
            line_no: 0,
            index: 0,
            line: Vec::new(),
            done: false,
        }
    }

    /// The 1-based number of the last line read (0 before the first).
    ///
    /// ```
    /// use hydron_codec::{json::JsonLinesReader, Policy};
    /// let mut r = JsonLinesReader::new(&b"\n[0,0,0,0,0,0,0,0]\n"[..], Policy::Strict);
    /// r.next();
    /// assert_eq!(r.line(), 2);
    /// ```
    #[inline]
    #[must_use]
    pub fn line(&self) -> u64 {
        self.line_no
    }

    /// Returns the inner reader.
    ///
    /// ```
    /// use hydron_codec::{json::JsonLinesReader, Policy};
    /// let r = JsonLinesReader::new(&b"rest"[..], Policy::Strict);
    /// assert_eq!(r.into_inner(), b"rest");
    /// ```
    #[inline]
    #[must_use]
    pub fn into_inner(self) -> R {
        self.reader
    }
}

impl<R: BufRead> Iterator for JsonLinesReader<R> {
    type Item = Result<Gf8, CodecError>;

    fn next(&mut self) -> Option<Result<Gf8, CodecError>> {
        if self.done {
            return None;
        }
        loop {
            self.line.clear();
            let end = match read_capped_line(&mut self.reader, &mut self.line, MAX_LINE_LEN, |_| {})
            {
                Ok((end, _)) => end,
                Err(e) => {
                    self.done = true;
                    return Some(Err(CodecError::Io(e)));
                }
            };
            let line = self.line_no + 1;
            match end {
                LineEnd::Eof => {
                    self.done = true;
                    return None;
                }
                LineEnd::TooLong => {
                    self.line_no = line;
                    self.index += 1;
                    return Some(Err(CodecError::LineTooLong {
                        line,
                        limit: MAX_LINE_LEN,
                    }));
                }
                LineEnd::Newline | LineEnd::Unterminated => self.line_no = line,
            }
            if self.line.iter().all(|b| matches!(b, b' ' | b'\t' | b'\r')) {
                continue;
            }
            let index = self.index;
            self.index += 1;
            let cursor = Cursor::default();
            let result = match parse_row(&self.line, &cursor) {
                Ok(coords) => self
                    .policy
                    .apply_one(coords)
                    .map_err(|error| CodecError::InvalidVectorOnLine { line, index, error }),
                Err(e) => Err(json_error(e, &cursor, &self.line, Some(line))),
            };
            return Some(result);
        }
    }
}

/// How [`read_capped_line`] stopped.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum LineEnd {
    /// No byte was left.
    Eof,
    /// The line ended with `\n`.
    Newline,
    /// The data ended before a `\n`.
    Unterminated,
    /// The line was longer than the limit; it was consumed (up to and
    /// including its `\n`, if any) but not stored.
    TooLong,
}

/// Reads one line into `buf` (without its `\n`), storing at most `limit`
/// bytes. Every consumed byte, newline included, is passed to `seen` (for
/// checksums). Returns how the line ended and how many bytes were consumed.
pub(crate) fn read_capped_line<R: BufRead + ?Sized>(
    reader: &mut R,
    buf: &mut Vec<u8>,
    limit: usize,
    mut seen: impl FnMut(&[u8]),
) -> io::Result<(LineEnd, u64)> {
    let mut consumed = 0u64;
    let mut too_long = false;
    loop {
        let available = match reader.fill_buf() {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if available.is_empty() {
            // No `\n` follows: the byte held over the limit counts.
            let end = match (consumed, too_long || buf.len() > limit) {
                (0, _) => LineEnd::Eof,
                (_, true) => LineEnd::TooLong,
                (_, false) => LineEnd::Unterminated,
            };
            if end == LineEnd::TooLong {
                buf.clear();
            }
            return Ok((end, consumed));
        }
        let (take, content, newline) = match available.iter().position(|&b| b == b'\n') {
            Some(i) => (i + 1, i, true),
            None => (available.len(), available.len(), false),
        };
        seen(&available[..take]);
        // One byte over the limit is held for a `\r` before the `\n`,
        // which is not part of the line's length.
        if !too_long {
            if buf.len() + content > limit + 1 {
                too_long = true;
                buf.clear();
            } else {
                buf.extend_from_slice(&available[..content]);
            }
        }
        reader.consume(take);
        consumed += take as u64;
        if newline {
            let crlf_at_limit = buf.len() == limit + 1 && buf.last() == Some(&b'\r');
            let end = if too_long || (buf.len() > limit && !crlf_at_limit) {
                LineEnd::TooLong
            } else {
                LineEnd::Newline
            };
            if end == LineEnd::TooLong {
                buf.clear();
            }
            return Ok((end, consumed));
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_writer_refuses_non_finite_vectors_naming_them_across_calls() {
        let mut w = JsonLinesWriter::new(Vec::new());
        w.write_all(&[Gf8::ZERO; 3]).unwrap();
        let bad = Gf8::new_unchecked([0.0, 0.0, 0.0, 0.0, 0.0, f32::NEG_INFINITY, 0.0, 0.0]);
        let err = w.write_all(&[Gf8::ZERO, bad]).unwrap_err();
        assert_eq!(err.to_string(), "vector 4: coordinate 5 is infinite (-inf)");
        let nan = Gf8::new_unchecked([f32::NAN; 8]);
        assert!(matches!(
            w.write(&nan),
            Err(CodecError::InvalidVector { index: 3, .. })
        ));
        // Nothing of a refused call was written.
        assert_eq!(
            w.finish().unwrap().iter().filter(|&&b| b == b'\n').count(),
            3
        );
    }

    use super::*;

    #[test]
    fn capped_line_reader_stops_storing_at_the_limit_and_resyncs() {
        let mut text = vec![b'x'; 10];
        text.extend_from_slice(b"\nab\ncd");
        // A tiny BufReader buffer makes lines span several fill_buf calls.
        let mut r = io::BufReader::with_capacity(3, &text[..]);
        let mut buf = Vec::new();
        let mut seen = 0;
        let (end, n) = read_capped_line(&mut r, &mut buf, 4, |b| seen += b.len()).unwrap();
        assert_eq!((end, n, seen), (LineEnd::TooLong, 11, 11));
        assert!(buf.is_empty());
        let (end, n) = read_capped_line(&mut r, &mut buf, 4, |_| {}).unwrap();
        assert_eq!((end, n, &buf[..]), (LineEnd::Newline, 3, &b"ab"[..]));
        buf.clear();
        let (end, n) = read_capped_line(&mut r, &mut buf, 4, |_| {}).unwrap();
        assert_eq!((end, n, &buf[..]), (LineEnd::Unterminated, 2, &b"cd"[..]));
        let (end, n) = read_capped_line(&mut r, &mut buf, 4, |_| {}).unwrap();
        assert_eq!((end, n), (LineEnd::Eof, 0));
    }

    #[test]
    fn a_line_of_exactly_the_limit_is_accepted() {
        let mut r = io::BufReader::with_capacity(2, &b"abcd\n"[..]);
        let mut buf = Vec::new();
        let (end, _) = read_capped_line(&mut r, &mut buf, 4, |_| {}).unwrap();
        assert_eq!((end, &buf[..]), (LineEnd::Newline, &b"abcd"[..]));
    }

    #[test]
    fn a_carriage_return_before_the_newline_is_not_counted() {
        let read = |text: &[u8]| {
            let mut r = io::BufReader::with_capacity(2, text);
            let mut buf = Vec::new();
            let (end, _) = read_capped_line(&mut r, &mut buf, 4, |_| {}).unwrap();
            (end, buf)
        };
        assert_eq!(read(b"abcd\r\n"), (LineEnd::Newline, b"abcd\r".to_vec()));
        assert_eq!(read(b"abc\r\r\n"), (LineEnd::Newline, b"abc\r\r".to_vec()));
        assert_eq!(read(b"abcde\n"), (LineEnd::TooLong, Vec::new()));
        assert_eq!(read(b"abcd\rx\n"), (LineEnd::TooLong, Vec::new()));
        assert_eq!(read(b"abcd\r\r\n"), (LineEnd::TooLong, Vec::new()));
        // No newline after it: the `\r` is part of the line.
        assert_eq!(read(b"abcd\r"), (LineEnd::TooLong, Vec::new()));
        assert_eq!(read(b"abcde"), (LineEnd::TooLong, Vec::new()));
    }

    #[test]
    fn reader_reports_line_numbers_and_recovers() {
        let long = "[".to_string() + &" ".repeat(MAX_LINE_LEN) + "]";
        let text = format!("[0,0,0,0,0,0,0,1]\r\n{long}\n  \n[0,0,0,0,0,0,0\n[0,0,0,0,0,0,1,0]\n");
        let got: Vec<_> = JsonLinesReader::new(text.as_bytes(), Policy::Strict).collect();
        assert_eq!(got.len(), 4);
        assert_eq!(got[0].as_ref().unwrap()[7], 1.0);
        assert_eq!(
            got[1].as_ref().unwrap_err().to_string(),
            format!("line 2 is longer than {MAX_LINE_LEN} bytes")
        );
        assert_eq!(
            got[2].as_ref().unwrap_err().to_string(),
            "JSON error at line 4, column 14: coordinate 7: EOF while parsing a list"
        );
        assert_eq!(got[3].as_ref().unwrap()[6], 1.0);
    }

    #[test]
    fn io_errors_end_the_iteration() {
        struct Failing;
        impl io::Read for Failing {
            fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
                Err(io::Error::other("disk on fire"))
            }
        }
        let mut r = JsonLinesReader::new(io::BufReader::new(Failing), Policy::Strict);
        assert!(matches!(r.next(), Some(Err(CodecError::Io(_)))));
        assert!(r.next().is_none());
    }
}
