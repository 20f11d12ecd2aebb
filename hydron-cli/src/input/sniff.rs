//! Finding an input's form from its first bytes ([`detect`]), and
//! [`Stream`], the one buffered reader every input is read through: the
//! bytes detection looked at are handed to the decoder, nothing is lost.
//!
//! Leading whitespace of any length is skipped for detection and handed to
//! the decoder as the same number of lines and columns, so line numbers in
//! errors stay right. A fory message (a leading `0x00` or `0x01`) keeps its
//! first [`FORY_HEAD_LEN`] bytes in view, so its fixed framing can be
//! checked before it is read whole.

use std::io::{self, BufRead, BufReader, Read};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use hydron_codec::file;
use hydron_codec::{fory, json, parquet, CodecError};

/// The read buffer.
pub(super) const BUFFER_LEN: usize = 1 << 16;

/// Bytes looked at from the start to recognize a container.
const MAGIC_LEN: usize = if file::TEXT_MAGIC.len() > file::MAGIC.len() {
    file::TEXT_MAGIC.len()
} else {
    file::MAGIC.len()
};

/// Bytes looked at from the start of a fory message before it is read
/// whole: at least its fixed framing (bitmap, reference flag, type id and,
/// for the compatible structs, the type meta: 21 bytes for `Gf8Batch`;
/// see docs/format.md), so that a stream that is not one of hydron's
/// messages (`/dev/zero`) is refused from these bytes alone.
pub(super) const FORY_HEAD_LEN: usize = 64;
const _: () = assert!(fory::GF8_MESSAGE_LEN <= FORY_HEAD_LEN);

/// The raw bytes of an input, counted as they are read.
pub(super) struct Counted {
    pub(super) inner: Box<dyn Read + Send>,
    pub(super) count: Arc<AtomicU64>,
}

impl Read for Counted {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

/// Blank bytes handed out for skipped leading whitespace.
static NEWLINES: [u8; 256] = [b'\n'; 256];
static SPACES: [u8; 256] = [b' '; 256];

/// The one buffered reader of an input: first the leading whitespace that
/// detection skipped (as that many line breaks, then that many spaces on
/// the first line with text: the same lines and columns), then the bytes
/// detection looked at, then the rest of the input, straight from the
/// read buffer.
pub(super) struct Stream {
    newlines: u64,
    spaces: u64,
    head: Vec<u8>,
    pos: usize,
    inner: BufReader<Counted>,
    /// For plain JSON Lines: stops a line that is too long as it passes.
    pub(super) guard: Option<LineGuard>,
}

/// Watches the lines passing through a [`Stream`]: JSON Lines readers skip
/// a line that is too long to its end before reporting it, which on a
/// terabyte without a newline (a sparse file) would take hours. The guard
/// fails the read as soon as the line is too long.
#[derive(Default)]
pub(super) struct LineGuard {
    /// Line breaks passed.
    lines: u64,
    /// Bytes passed since the last line break.
    run: usize,
}

/// The error the guard gives, inside an [`io::Error`].
#[derive(Debug)]
pub(super) struct Overlong {
    line: u64,
}

impl std::fmt::Display for Overlong {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "line {} is longer than {} bytes",
            self.line,
            json::MAX_LINE_LEN
        )
    }
}

impl std::error::Error for Overlong {}

impl LineGuard {
    fn pass(&mut self, bytes: &[u8]) {
        match bytes.iter().rposition(|&b| b == b'\n') {
            Some(last) => {
                self.lines += bytes.iter().filter(|&&b| b == b'\n').count() as u64;
                self.run = bytes.len() - last - 1;
            }
            None => self.run = self.run.saturating_add(bytes.len()),
        }
    }

    fn check(&self) -> io::Result<()> {
        // Room for a `\r` before the line break.
        if self.run > json::MAX_LINE_LEN + 1 {
            Err(io::Error::new(
                io::ErrorKind::InvalidData,
                Overlong {
                    line: self.lines + 1,
                },
            ))
        } else {
            Ok(())
        }
    }
}

impl Stream {
    /// The rest of the input after [`BUFFER_LEN`]-sized reads; `head`
    /// holds bytes already taken from `inner`.
    fn new(newlines: u64, spaces: u64, head: Vec<u8>, inner: BufReader<Counted>) -> Stream {
        Stream {
            newlines,
            spaces,
            head,
            pos: 0,
            inner,
            guard: None,
        }
    }
}

impl Stream {
    /// The bytes detection looked at and that are not consumed yet (for a
    /// fory message, its first [`FORY_HEAD_LEN`] bytes or all of a shorter
    /// input).
    pub(super) fn peeked(&self) -> &[u8] {
        &self.head[self.pos..]
    }
}

impl BufRead for Stream {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        if let Some(guard) = &self.guard {
            guard.check()?;
        }
        if self.newlines > 0 {
            return Ok(&NEWLINES[..clamp(self.newlines, NEWLINES.len())]);
        }
        if self.spaces > 0 {
            return Ok(&SPACES[..clamp(self.spaces, SPACES.len())]);
        }
        if self.pos < self.head.len() {
            return Ok(&self.head[self.pos..]);
        }
        self.inner.fill_buf()
    }

    fn consume(&mut self, amount: usize) {
        if let Some(guard) = &mut self.guard {
            let passed = if self.newlines > 0 {
                &NEWLINES[..amount.min(NEWLINES.len())]
            } else if self.spaces > 0 {
                &SPACES[..amount.min(SPACES.len())]
            } else if self.pos < self.head.len() {
                &self.head[self.pos..self.head.len().min(self.pos + amount)]
            } else {
                let buffer = self.inner.buffer();
                &buffer[..amount.min(buffer.len())]
            };
            guard.pass(passed);
        }
        if self.newlines > 0 {
            self.newlines -= (amount as u64).min(self.newlines);
        } else if self.spaces > 0 {
            self.spaces -= (amount as u64).min(self.spaces);
        } else if self.pos < self.head.len() {
            self.pos = (self.pos + amount).min(self.head.len());
            if self.pos == self.head.len() {
                self.head = Vec::new();
                self.pos = 0;
            }
        } else {
            self.inner.consume(amount);
        }
    }
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.guard.is_none() && self.newlines == 0 && self.spaces == 0 && self.head.is_empty() {
            // Large reads (container chunks) bypass the buffer when it is
            // empty: no extra copy.
            return self.inner.read(buf);
        }
        let available = self.fill_buf()?;
        let n = available.len().min(buf.len());
        buf[..n].copy_from_slice(&available[..n]);
        self.consume(n);
        Ok(n)
    }
}

/// `n` as a length of at most `max`.
fn clamp(n: u64, max: usize) -> usize {
    usize::try_from(n).map_or(max, |n| n.min(max))
}

/// Whether `b` is JSON whitespace.
#[inline]
fn blank(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n')
}

/// Appends bytes from `r` to `head` until it holds `len` bytes or the
/// input ends.
fn take_up_to(r: &mut impl BufRead, head: &mut Vec<u8>, len: usize) -> io::Result<()> {
    while head.len() < len {
        let buf = r.fill_buf()?;
        if buf.is_empty() {
            break;
        }
        let n = buf.len().min(len - head.len());
        head.extend_from_slice(&buf[..n]);
        r.consume(n);
    }
    Ok(())
}

/// Finds the form of the input in `r` and returns it with the stream to
/// decode it from (nothing read is lost). `limit` bounds the bytes kept
/// for the look-ahead after a leading `[`.
pub(super) fn detect(
    mut r: BufReader<Counted>,
    limit: u64,
) -> Result<(Sniffed, Stream), DetectError> {
    let mut head = Vec::with_capacity(MAGIC_LEN);
    take_up_to(&mut r, &mut head, MAGIC_LEN).map_err(DetectError::Io)?;
    if head.is_empty() || file::looks_like_container(&head) {
        // The container reader explains what it found (empty, damaged).
        return Ok((Sniffed::Container, Stream::new(0, 0, head, r)));
    }
    if parquet::looks_like_parquet(&head) {
        return Ok((Sniffed::Parquet, Stream::new(0, 0, head, r)));
    }
    if matches!(head[0], 0x00 | 0x01) {
        take_up_to(&mut r, &mut head, FORY_HEAD_LEN).map_err(DetectError::Io)?;
        return Ok((Sniffed::Fory, Stream::new(0, 0, head, r)));
    }
    // Skip the leading whitespace, counting lines and the columns of the
    // last line, in the head first and then straight from the buffer.
    let (mut newlines, mut spaces) = (0u64, 0u64);
    let mut count = |bytes: &[u8]| {
        for &b in bytes {
            if b == b'\n' {
                newlines += 1;
                spaces = 0;
            } else {
                spaces += 1;
            }
        }
    };
    let skipped = head.iter().take_while(|&&b| blank(b)).count();
    count(&head[..skipped]);
    head.drain(..skipped);
    if head.is_empty() {
        loop {
            let buf = r.fill_buf().map_err(DetectError::Io)?;
            if buf.is_empty() {
                break;
            }
            let n = buf.iter().take_while(|&&b| blank(b)).count();
            count(&buf[..n]);
            let done = n < buf.len();
            r.consume(n);
            if done {
                break;
            }
        }
        take_up_to(&mut r, &mut head, 1).map_err(DetectError::Io)?;
    }
    let sniffed = match head.first() {
        // Only whitespace: the container reader explains.
        None => Sniffed::Container,
        Some(b'[') => {
            // `[[` or `[]`: an array of vectors; otherwise a first row.
            let mut at = 1;
            loop {
                if let Some(&b) = head[at..].iter().find(|&&b| !blank(b)) {
                    break if matches!(b, b'[' | b']') {
                        Sniffed::JsonArray
                    } else {
                        Sniffed::JsonLines
                    };
                }
                at = head.len();
                if head.len() as u64 >= limit {
                    return Err(DetectError::TooLarge);
                }
                let before = head.len();
                take_up_to(&mut r, &mut head, before + BUFFER_LEN).map_err(DetectError::Io)?;
                if head.len() == before {
                    break Sniffed::JsonArray;
                }
            }
        }
        Some(_) => Sniffed::Container,
    };
    let (newlines, spaces) = if sniffed == Sniffed::Container {
        // The container reader sees what was there: whitespace is not a
        // container's start, and it says so.
        (0, newlines + spaces)
    } else {
        (newlines, spaces)
    };
    Ok((sniffed, Stream::new(newlines, spaces, head, r)))
}

pub(super) enum DetectError {
    Io(io::Error),
    TooLarge,
}

/// The form found from the first bytes.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Sniffed {
    Container,
    JsonArray,
    JsonLines,
    Fory,
    Parquet,
}

/// The guard's error as the reader's own [`CodecError::LineTooLong`].
pub(super) fn overlong(error: CodecError) -> CodecError {
    if let CodecError::Io(e) = &error {
        if let Some(o) = e.get_ref().and_then(|i| i.downcast_ref::<Overlong>()) {
            return CodecError::LineTooLong {
                line: o.line,
                limit: json::MAX_LINE_LEN,
            };
        }
    }
    error
}

#[cfg(test)]
mod tests {
    use super::*;
    use hydron_codec::json::JsonLinesReader;
    use hydron_codec::Policy;

    /// The form found in `bytes` and everything the decoder would read.
    fn sniff(bytes: &[u8]) -> (Sniffed, Vec<u8>) {
        sniff_in(bytes, 1 << 20)
    }

    fn sniff_in(bytes: &[u8], limit: u64) -> (Sniffed, Vec<u8>) {
        let counted = Counted {
            inner: Box::new(io::Cursor::new(bytes.to_vec())),
            count: Arc::default(),
        };
        // A tiny buffer, as a pipe delivering a few bytes at a time.
        let (sniffed, mut stream) = match detect(BufReader::with_capacity(3, counted), limit) {
            Ok(found) => found,
            Err(DetectError::Io(e)) => panic!("{e}"),
            Err(DetectError::TooLarge) => panic!("too large"),
        };
        let mut rest = Vec::new();
        stream.read_to_end(&mut rest).unwrap();
        (sniffed, rest)
    }

    #[test]
    fn sniffing() {
        assert_eq!(sniff(&file::MAGIC).0, Sniffed::Container);
        assert_eq!(sniff(file::TEXT_MAGIC).0, Sniffed::Container);
        let mut flipped = file::MAGIC;
        flipped[0] = 0x01; // two bits off: damage, not a fory message
        assert_eq!(sniff(&flipped).0, Sniffed::Container);
        assert_eq!(sniff(b" [[1,0,0,0,0,0,0,0]]").0, Sniffed::JsonArray);
        assert_eq!(sniff(b"[\n  [1,0,0").0, Sniffed::JsonArray);
        assert_eq!(sniff(b"[]").0, Sniffed::JsonArray);
        assert_eq!(sniff(b"[").0, Sniffed::JsonArray);
        assert_eq!(sniff(b"[1,0,0,0,0,0,0,0]\n").0, Sniffed::JsonLines);
        assert_eq!(sniff(b"\n[-0.5, 0.5").0, Sniffed::JsonLines);
        assert_eq!(sniff(&[0x01, 0xff, 27]).0, Sniffed::Fory);
        assert_eq!(sniff(&[0x00]).0, Sniffed::Fory);
        assert_eq!(sniff(b"").0, Sniffed::Container);
        assert_eq!(sniff(b"  \n ").0, Sniffed::Container);
        assert_eq!(sniff(b"PK\x03\x04").0, Sniffed::Container);
        assert_eq!(sniff(b"PAR1").0, Sniffed::Parquet);
        assert_eq!(sniff(b"PAR1\x15\x04\x15").0, Sniffed::Parquet);
        // Too short to be Parquet: the container reader explains.
        assert_eq!(sniff(b"PAR").0, Sniffed::Container);
    }

    #[test]
    fn nothing_read_for_detection_is_lost() {
        let row = b"[1,0,0,0,0,0,0,0]\n";
        for data in [
            file::MAGIC.to_vec(),
            file::TEXT_MAGIC.to_vec(),
            b"[[1,0,0,0,0,0,0,0]]".to_vec(),
            row.repeat(1000),
            [0x01, 0xff, 0x1c, 0x00].to_vec(),
            b"PK\x03\x04".to_vec(),
            b"PAR1\x15\x04\x15\x80".to_vec(),
        ] {
            assert_eq!(sniff(&data).1, data);
        }
    }

    #[test]
    fn long_leading_whitespace_is_skipped_keeping_lines_and_columns() {
        let row = b"[1,0,0,0,0,0,0,0]\n";
        let mut data = b"\r\n".repeat(700);
        data.extend_from_slice(b"\t  ");
        data.extend_from_slice(row);
        let (sniffed, seen) = sniff(&data);
        assert_eq!(sniffed, Sniffed::JsonLines);
        // Every line break kept, the last line's blanks as spaces.
        let mut expect = b"\n".repeat(700);
        expect.extend_from_slice(b"   ");
        expect.extend_from_slice(row);
        assert_eq!(seen, expect);
        let mut data = b" ".repeat(7000);
        data.extend_from_slice(b"[ \n\n [1,0,0,0,0,0,0,0]]");
        let (sniffed, seen) = sniff(&data);
        assert_eq!((sniffed, seen), (Sniffed::JsonArray, data));
    }

    #[test]
    fn look_ahead_after_a_bracket_is_bounded() {
        let mut data = b"[".to_vec();
        data.extend_from_slice(&b" ".repeat(1 << 20));
        data.push(b'[');
        let counted = Counted {
            inner: Box::new(io::Cursor::new(data)),
            count: Arc::default(),
        };
        assert!(matches!(
            detect(BufReader::new(counted), 1000),
            Err(DetectError::TooLarge)
        ));
    }

    #[test]
    fn a_line_too_long_is_stopped_as_it_passes() {
        let mut data = b"[1,0,0,0,0,0,0,0]\n\n[".to_vec();
        data.extend_from_slice(&vec![b'0'; 10 * json::MAX_LINE_LEN]);
        let counted = Counted {
            inner: Box::new(io::Cursor::new(data)),
            count: Arc::default(),
        };
        let (sniffed, mut stream) = match detect(BufReader::with_capacity(64, counted), 100) {
            Ok(found) => found,
            Err(_) => panic!("detection failed"),
        };
        assert_eq!(sniffed, Sniffed::JsonLines);
        stream.guard = Some(LineGuard::default());
        let mut reader = JsonLinesReader::new(stream, Policy::Strict);
        assert!(reader.next().unwrap().is_ok());
        let e = overlong(reader.next().unwrap().unwrap_err());
        assert!(matches!(e, CodecError::LineTooLong { line: 3, .. }), "{e}");
        let read = reader.into_inner().inner.into_inner().count;
        assert!(read.load(Ordering::Relaxed) < 3 * json::MAX_LINE_LEN as u64);
    }
}
