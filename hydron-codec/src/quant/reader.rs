//! Reading one `LatticeCodes` message from a stream (a regular file, a
//! pipe, a FIFO, standard input, `/dev/zero`) without trusting it: the
//! bytes are read only as far as the message's own lengths reach, each
//! length checked against a limit before it is read and the buffer grown
//! only as bytes arrive, so a message that claims gigabytes and an endless
//! stream both end in a typed error, not in exhausted memory or a hang.
//!
//! The reading is driven by [`decode`] itself: what it reports as missing
//! ([`CodecError::UnexpectedEnd`]: the fixed fields, a length, an array) is
//! what is read next; any other error is final as soon as the bytes that
//! show it have arrived (the framing of `/dev/zero` fails at byte 2).

use std::io::{self, Read};
use std::path::Path;

use super::message::decode;
use super::LatticeCodes;
use crate::save::in_file;
use crate::CodecError;

/// The most bytes a valid `LatticeCodes` message can take: the framing
/// (64 bytes), the fixed fields (23), and two arrays of at most
/// 2^32 − 1 bytes, each after a length of at most 5 bytes. Longer input
/// is not one message.
///
/// ```
/// assert_eq!(hydron_codec::quant::MAX_MESSAGE_BYTES, 64 + 23 + 2 * (5 + u64::from(u32::MAX)));
/// ```
pub const MAX_MESSAGE_BYTES: u64 = 64 + 23 + 2 * (5 + u32::MAX as u64);

/// Bytes read first: the framing, the fixed fields and the codes' length,
/// enough to refuse most inputs that are not a message.
const HEAD_LEN: u64 = 64 + 23 + 5;

/// Bytes read at a time.
const PIECE: usize = 1 << 16;

/// Reads one `LatticeCodes` message from `reader` and decodes it
/// ([`decode`]), reading at most `limit` bytes.
///
/// The reader is read once, in order, as far as the message's lengths
/// reach and then to its end (there must be nothing after the message).
/// Memory grows with the bytes that arrived, never with a length the
/// message claims; a claimed length that would take the input past
/// `limit` is refused before it is read.
///
/// # Errors
/// As [`decode`] (a stream that ends early is
/// [`CodecError::UnexpectedEnd`]; bytes after the message are
/// [`CodecError::TrailingBytes`] counting them all); I/O errors as
/// [`CodecError::Io`] (of kind `OutOfMemory` for a message that memory
/// cannot hold); [`CodecError::ReadLimit`] for an input longer than
/// `limit` (or than [`MAX_MESSAGE_BYTES`]), or a length claiming more.
///
/// ```
/// use hydron_codec::{quant, CodecError};
/// use hydron_codec::quant::LatticeCodes;
/// let c = LatticeCodes::from_gf8(&hydron_core::E8_ROOTS, 2)?;
/// let bytes = quant::encode(&c)?;
/// assert_eq!(quant::from_reader(&bytes[..], 1 << 20)?, c);
/// // An endless stream of zeros is refused from its first bytes.
/// let err = quant::from_reader(std::io::repeat(0), 1 << 20).unwrap_err();
/// assert!(matches!(err, CodecError::WrongHeader { offset: 2, .. }), "{err}");
/// # Ok::<(), CodecError>(())
/// ```
pub fn from_reader(reader: impl Read, limit: u64) -> Result<LatticeCodes, CodecError> {
    read_message(reader, limit, None)
}

/// [`from_reader`] for an input of `len` bytes (a regular file): a length
/// claiming more than the input holds is [`CodecError::UnexpectedEnd`]
/// without reading on, and bytes after the message are counted from
/// `len` without reading them.
///
/// # Errors
/// As [`from_reader`].
///
/// ```
/// use hydron_codec::{quant, CodecError};
/// use hydron_codec::quant::LatticeCodes;
/// let mut bytes = quant::encode(&LatticeCodes::from_gf8(&hydron_core::E8_ROOTS, 2)?)?;
/// let len = bytes.len() as u64;
/// assert!(quant::from_reader_len(&bytes[..], 1 << 20, len).is_ok());
/// bytes[87..90].copy_from_slice(&[0xfe, 0xff, 0x7f]); // codes claiming 2 MiB
/// let err = quant::from_reader_len(&bytes[..], 1 << 30, len).unwrap_err();
/// assert!(matches!(err, CodecError::UnexpectedEnd { offset: 90, needed: 2_097_150, .. }), "{err}");
/// # Ok::<(), CodecError>(())
/// ```
pub fn from_reader_len(
    reader: impl Read,
    limit: u64,
    len: u64,
) -> Result<LatticeCodes, CodecError> {
    read_message(reader, limit, Some(len))
}

/// Loads stored codes from a file holding one fory message: opened once
/// and read as [`from_reader`] reads (a FIFO or a device too), the trailing
/// bytes of a regular file counted from its size without reading them.
///
/// # Errors
/// As [`from_reader`] (with the limit [`MAX_MESSAGE_BYTES`]), wrapped in
/// [`CodecError::InFile`] with the path.
pub(super) fn load(path: &Path) -> Result<LatticeCodes, CodecError> {
    let opened = std::fs::File::open(path).and_then(|f| Ok((f.metadata()?, f)));
    let (meta, file) = opened.map_err(|e| in_file(path, CodecError::Io(e)))?;
    let size = meta.is_file().then_some(meta.len());
    read_message(file, MAX_MESSAGE_BYTES, size).map_err(|e| in_file(path, e))
}

/// [`from_reader`]; `size` is the input's length where it is known (a
/// regular file), so that bytes after the message need not be read to be
/// counted.
fn read_message(
    mut reader: impl Read,
    limit: u64,
    size: Option<u64>,
) -> Result<LatticeCodes, CodecError> {
    let limit = limit.min(MAX_MESSAGE_BYTES);
    let mut data = Vec::new();
    let mut target = HEAD_LEN;
    loop {
        let ended = fill(&mut reader, &mut data, target, limit)?;
        let missing = match decode(&data) {
            Ok(codes) => {
                let after = count_rest(&mut reader, data.len() as u64, limit, size)?;
                if after > 0 {
                    return Err(CodecError::TrailingBytes {
                        offset: data.len() as u64,
                        count: after,
                    });
                }
                return Ok(codes);
            }
            Err(CodecError::TrailingBytes { offset, count }) => {
                // Read past the message's end with its head: count the rest.
                let after = count_rest(&mut reader, data.len() as u64, limit, size)?;
                return Err(CodecError::TrailingBytes {
                    offset,
                    count: count + after,
                });
            }
            Err(CodecError::UnexpectedEnd {
                offset,
                what,
                needed,
                ..
            }) if !ended => {
                if let Some(size) = size.filter(|&s| offset.saturating_add(needed) > s) {
                    // A regular file shorter than the claim: cut short,
                    // as reading it whole would show, without reading.
                    return Err(CodecError::UnexpectedEnd {
                        offset,
                        what,
                        needed,
                        available: size.saturating_sub(offset),
                    });
                }
                // A length (at most 5 bytes) or an array: read it whole.
                offset.saturating_add(needed.max(5))
            }
            Err(e) => return Err(e),
        };
        debug_assert!(missing > data.len() as u64);
        target = missing;
    }
}

/// Reads into `data` until it holds `target` bytes or the input ends
/// (true when it ended). A target beyond `limit` is refused before
/// reading; the buffer grows at most to twice the bytes already read.
fn fill(
    reader: &mut impl Read,
    data: &mut Vec<u8>,
    target: u64,
    limit: u64,
) -> Result<bool, CodecError> {
    if target > limit {
        return Err(too_large(target, limit));
    }
    // Cannot truncate: target <= limit <= MAX_MESSAGE_BYTES, and a target
    // beyond the address space fails to reserve below.
    let target = usize::try_from(target).unwrap_or(usize::MAX);
    while data.len() < target {
        let len = data.len();
        if len == data.capacity() {
            let grown = target.min(len.saturating_mul(2).max(PIECE));
            data.try_reserve_exact(grown - len).map_err(|e| {
                CodecError::Io(io::Error::new(
                    io::ErrorKind::OutOfMemory,
                    format!(
                        "cannot hold {grown} bytes of a LatticeCodes message in memory \
                         ({len} read): {e}"
                    ),
                ))
            })?;
        }
        let room = data.capacity().min(target) - len;
        data.resize(len + room.min(PIECE), 0);
        match reader.read(&mut data[len..]) {
            Ok(0) => {
                data.truncate(len);
                return Ok(true);
            }
            Ok(n) => data.truncate(len + n),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => data.truncate(len),
            Err(e) => {
                data.truncate(len);
                return Err(CodecError::Io(e));
            }
        }
    }
    Ok(false)
}

/// The bytes after the first `read` ones: from `size` if known, else read
/// (and dropped) to the end, refusing an input longer than `limit`.
fn count_rest(
    reader: &mut impl Read,
    read: u64,
    limit: u64,
    size: Option<u64>,
) -> Result<u64, CodecError> {
    if let Some(size) = size {
        return Ok(size.saturating_sub(read));
    }
    let mut piece = [0u8; 4096];
    let mut rest = 0u64;
    loop {
        match reader.read(&mut piece) {
            Ok(0) => return Ok(rest),
            Ok(n) => rest += n as u64,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(CodecError::Io(e)),
        }
        if read + rest > limit {
            return Err(too_large(read + rest, limit));
        }
    }
}

fn too_large(needed: u64, limit: u64) -> CodecError {
    CodecError::ReadLimit {
        needed,
        limit,
        what: "a LatticeCodes message read from a stream",
    }
}

#[cfg(test)]
mod tests {
    use super::super::{encode, CodesParams, CodesScale};
    use super::*;
    use hydron_core::quant::QuantCodes;

    fn sample(n: usize) -> LatticeCodes {
        let p = CodesParams::new(12, 2, 3, true, CodesScale::PerVector).unwrap();
        LatticeCodes::new(
            p,
            QuantCodes {
                codes: (0..4 * n).map(|i| i as u8).collect(),
                scales: (0..n).map(|i| i as f32).collect(),
            },
        )
        .unwrap()
    }

    /// A reader that hands out at most 3 bytes a call and counts them.
    struct Trickle<R> {
        inner: R,
        read: u64,
    }

    impl<R: Read> Read for Trickle<R> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = buf.len().min(3);
            let n = self.inner.read(&mut buf[..n])?;
            self.read += n as u64;
            Ok(n)
        }
    }

    #[test]
    fn messages_read_from_a_trickle_equal_decode() {
        for n in [0, 1, 5, 20_000] {
            let c = sample(n);
            let bytes = encode(&c).unwrap();
            let mut r = Trickle {
                inner: &bytes[..],
                read: 0,
            };
            assert_eq!(read_message(&mut r, 1 << 30, None).unwrap(), c, "{n}");
            assert_eq!(r.read, bytes.len() as u64);
            // Every cut: the error decode gives.
            for cut in [0, 1, 20, 64, 80, 87, 88, bytes.len() - 1] {
                let cut = cut.min(bytes.len().saturating_sub(1));
                let expected = decode(&bytes[..cut]).unwrap_err().to_string();
                let got = from_reader(&bytes[..cut], 1 << 30).unwrap_err();
                assert_eq!(got.to_string(), expected, "{n} {cut}");
            }
        }
    }

    #[test]
    fn trailing_bytes_are_all_counted() {
        // sample(0) is 89 bytes: its end is inside the head.
        for (vectors, extra) in [0, 9]
            .into_iter()
            .flat_map(|v| [1usize, 3, 10, 100_000].map(|e| (v, e)))
        {
            let mut bytes = encode(&sample(vectors)).unwrap();
            let end = bytes.len() as u64;
            bytes.resize(bytes.len() + extra, 7);
            let err = from_reader(&bytes[..], 1 << 30).unwrap_err();
            assert!(
                matches!(err, CodecError::TrailingBytes { offset, count } if offset == end && count == extra as u64),
                "{err}"
            );
        }
    }

    #[test]
    fn a_huge_claim_is_refused_before_reading_it() {
        // The codes' length says 4 GiB - 2 bytes; the stream is endless.
        let mut head = encode(&sample(1)).unwrap()[..87].to_vec();
        head[64..72].copy_from_slice(&(u32::MAX as u64 / 4).to_le_bytes());
        head.extend_from_slice(&[0xfc, 0xff, 0xff, 0xff, 0x0f]);
        let mut r = Trickle {
            inner: head.as_slice().chain(io::repeat(0)),
            read: 0,
        };
        let err = read_message(&mut r, 1 << 30, None).unwrap_err();
        assert!(
            matches!(err, CodecError::ReadLimit { needed, limit: 1_073_741_824, .. } if needed == 92 + 4_294_967_292),
            "{err}"
        );
        assert_eq!(r.read, HEAD_LEN, "only the head was read");
        // Under a larger limit the bytes are read as they come, and an
        // input that ends early is cut short where it ends.
        let mut r = Trickle {
            inner: head.as_slice().chain(io::repeat(0).take(1000)),
            read: 0,
        };
        let err = read_message(&mut r, u64::MAX, None).unwrap_err();
        assert!(
            matches!(
                err,
                CodecError::UnexpectedEnd {
                    offset: 92,
                    available: 1000,
                    ..
                }
            ),
            "{err}"
        );
    }

    #[test]
    fn the_buffer_grows_only_with_the_bytes_that_arrived() {
        let mut data = Vec::new();
        let ended = fill(&mut &[1u8; 1000][..], &mut data, 1 << 40, u64::MAX).unwrap();
        assert!(ended);
        assert_eq!(data.len(), 1000);
        assert!(data.capacity() <= 2 * PIECE, "{}", data.capacity());
        let mut data = Vec::new();
        let err = fill(&mut io::repeat(0), &mut data, 1 << 20, 1000).unwrap_err();
        assert!(matches!(err, CodecError::ReadLimit { .. }), "{err}");
        assert!(data.is_empty());
    }

    #[test]
    fn an_endless_stream_after_a_message_stops_at_the_limit() {
        let bytes = encode(&sample(2)).unwrap();
        let err = from_reader(bytes.as_slice().chain(io::repeat(0)), 1 << 20).unwrap_err();
        assert!(
            matches!(
                err,
                CodecError::ReadLimit {
                    limit: 1_048_576,
                    ..
                }
            ),
            "{err}"
        );
    }

    #[test]
    fn a_regular_file_counts_its_trailing_bytes_from_its_size() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.fory");
        let mut bytes = encode(&sample(3)).unwrap();
        let end = bytes.len() as u64;
        bytes.extend_from_slice(&[1, 2, 3]);
        std::fs::write(&path, &bytes).unwrap();
        let err = load(&path).unwrap_err();
        assert!(err.to_string().contains("3 trailing bytes"), "{err}");
        assert!(err.to_string().contains(&format!("offset {end}")), "{err}");
        // A file shorter than its message's claim (4 GiB of codes) is
        // not read past the head.
        let mut head = encode(&sample(1)).unwrap()[..87].to_vec();
        head.extend_from_slice(&[0xfc, 0xff, 0xff, 0xff, 0x0f]);
        let file = std::fs::File::create(&path).unwrap();
        std::io::Write::write_all(&mut &file, &head).unwrap();
        file.set_len(head.len() as u64 + 10).unwrap();
        let mut r = Trickle {
            inner: std::fs::File::open(&path).unwrap(),
            read: 0,
        };
        let err = read_message(&mut r, MAX_MESSAGE_BYTES, Some(102)).unwrap_err();
        assert!(
            matches!(
                err,
                CodecError::UnexpectedEnd {
                    offset: 92,
                    needed: 4_294_967_292,
                    available: 10,
                    ..
                }
            ),
            "{err}"
        );
        assert_eq!(r.read, HEAD_LEN, "only the head was read");
        assert!(matches!(load(&path), Err(CodecError::InFile { .. })));
    }
}
