//! The file container on streams of unknown length (pipes, FIFOs, readers
//! that return a few bytes at a time), and saves to targets that are not
//! plain files (FIFOs, devices, symbolic links, names near the length limit).
#![cfg(any(feature = "fory-messages", feature = "json"))]

mod common;

use std::io::{self, BufReader, Read, Write};
use std::path::Path;

use hydron_codec::file::{self, Encoder, FileOptions, FileReader, FileWriter, Section};
use hydron_codec::{CodecError, Policy};
use hydron_core::Gf8;
use proptest::prelude::*;

use common::{files_in, formats, inner, opts, some_vectors};

/// A reader with no length that returns 1 to 7 bytes per `read`, in a
/// fixed irregular pattern, like a slow pipe.
struct Dribble {
    data: Vec<u8>,
    at: usize,
    calls: usize,
}

impl Dribble {
    fn new(data: &[u8]) -> Dribble {
        Dribble {
            data: data.to_vec(),
            at: 0,
            calls: 0,
        }
    }
}

impl Read for Dribble {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.calls += 1;
        // Every 5th call is interrupted, as a signal would.
        if self.calls.is_multiple_of(5) {
            return Err(io::ErrorKind::Interrupted.into());
        }
        let n = (self.calls * 5 + 3) % 7 + 1;
        let n = n.min(buf.len()).min(self.data.len() - self.at);
        buf[..n].copy_from_slice(&self.data[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

/// Reads everything from a dribbling stream of `bytes`.
fn read_dribbled(bytes: &[u8]) -> Result<Vec<Gf8>, CodecError> {
    let mut r = FileReader::from_reader(BufReader::new(Dribble::new(bytes)), Policy::Trusted)?;
    assert_eq!(r.expected_vectors(), None);
    assert_eq!(r.path(), None);
    let mut out = Vec::new();
    while r.read_chunk(&mut out)? > 0 {}
    Ok(out)
}

#[test]
fn both_forms_decode_from_a_dribbling_reader_of_unknown_length() {
    for format in formats() {
        for chunk in [1, 2, 7, 1000] {
            for n in [0, 1, 5, 23] {
                let v = some_vectors(n);
                let bytes = file::to_vec(&v, format, opts(chunk)).unwrap();
                let r =
                    FileReader::from_reader(BufReader::new(Dribble::new(&bytes)), Policy::Strict)
                        .unwrap();
                assert_eq!(r.format(), format);
                assert_eq!(r.chunk_vectors(), chunk);
                assert_eq!(r.version(), file::VERSION);
                let back: Vec<Gf8> = r.collect::<Result<_, _>>().unwrap();
                assert_eq!(back, v, "{format}, chunk {chunk}, {n} vectors");
            }
        }
    }
}

#[test]
fn every_truncation_of_a_dribbling_stream_is_truncation_at_its_length() {
    let v = some_vectors(5);
    for format in formats() {
        let bytes = file::to_vec(&v, format, opts(2)).unwrap();
        assert!(matches!(
            read_dribbled(&[]),
            Err(CodecError::UnknownFormat { .. })
        ));
        for n in 1..bytes.len() {
            match read_dribbled(&bytes[..n]) {
                Err(CodecError::Truncated { offset, section }) => {
                    assert_eq!(offset, n as u64, "{format}: cut at {n}");
                    // The same section as for the whole slice in memory.
                    match file::from_slice(&bytes[..n], Policy::Trusted) {
                        Err(CodecError::Truncated { section: s, .. }) => {
                            assert_eq!(section, s, "{format}: cut at {n}")
                        }
                        other => panic!("{format}: cut at {n}: {other:?}"),
                    }
                }
                other => panic!("{format}: cut at {n}: {other:?}"),
            }
        }
        assert_eq!(read_dribbled(&bytes).unwrap(), v);
    }
}

#[test]
fn a_dribbling_stream_reports_every_flipped_bit_as_memory_does() {
    let v = some_vectors(4);
    for format in formats() {
        let bytes = file::to_vec(&v, format, opts(3)).unwrap();
        for i in 0..bytes.len() {
            for bit in 0..8 {
                let mut bad = bytes.clone();
                bad[i] ^= 1 << bit;
                let streamed = read_dribbled(&bad).unwrap_err().to_string();
                let whole = file::from_slice(&bad, Policy::Trusted)
                    .unwrap_err()
                    .to_string();
                assert_eq!(streamed, whole, "{format}: byte {i} bit {bit}");
            }
        }
    }
}

#[test]
fn bytes_after_the_trailer_of_a_stream_are_counted() {
    for format in formats() {
        let bytes = file::to_vec(&some_vectors(3), format, opts(2)).unwrap();
        for (extra, shown) in [(1usize, "1"), (1000, "1000"), (70_000, "more than 65536")] {
            let mut long = bytes.clone();
            long.resize(bytes.len() + extra, b'\n');
            let err = read_dribbled(&long).unwrap_err();
            assert!(
                matches!(
                    err,
                    CodecError::Corrupt {
                        section: Section::Trailer,
                        ..
                    }
                ),
                "{err}"
            );
            assert!(
                err.to_string()
                    .contains(&format!(": {shown} unexpected bytes after the ")),
                "{err}"
            );
            match err {
                CodecError::Corrupt { offset, .. } => assert_eq!(offset, bytes.len() as u64),
                _ => unreachable!(),
            }
        }
    }
}

#[test]
fn named_streams_name_themselves_in_every_error() {
    for format in formats() {
        let bytes = file::to_vec(&some_vectors(3), format, opts(2)).unwrap();
        let cut = bytes[..bytes.len() - 1].to_vec();
        let mut r =
            FileReader::from_reader_named(io::Cursor::new(cut), "<stdin>", Policy::Strict).unwrap();
        assert_eq!(r.path(), Some(Path::new("<stdin>")));
        let err = r.find_map(Result::err).unwrap();
        assert_eq!(
            err.to_string(),
            format!(
                "<stdin>: truncated: the data ends at byte offset {}, in the trailer",
                bytes.len() - 1
            )
        );
        let err =
            FileReader::from_reader_named(&b"{\"a\":1}\n"[..], "-", Policy::Strict).unwrap_err();
        assert!(err.to_string().starts_with("-: not a hydron file"), "{err}");
    }
}

#[test]
fn the_encoder_streams_to_any_writer_and_is_spent_after_an_error() {
    /// Accepts `room` bytes, then fails.
    struct Full {
        room: usize,
        got: Vec<u8>,
    }
    impl Write for Full {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            if self.room == 0 {
                return Err(io::Error::other("disk full"));
            }
            let n = buf.len().min(self.room);
            self.room -= n;
            self.got.extend_from_slice(&buf[..n]);
            Ok(n)
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }
    let v = some_vectors(10);
    for format in formats() {
        let mut e = Encoder::new(Vec::new(), format, opts(4)).unwrap();
        assert_eq!(e.format(), format);
        for piece in v.chunks(3) {
            e.write(piece).unwrap();
        }
        assert_eq!(e.vectors(), 10);
        let bytes = e.finish().unwrap();
        assert_eq!(bytes, file::to_vec(&v, format, opts(4)).unwrap());

        let full = Full {
            room: 100,
            got: Vec::new(),
        };
        let mut e = Encoder::new(full, format, opts(4)).unwrap();
        let err = e.write(&v).unwrap_err();
        assert!(err.to_string().contains("disk full"), "{err}");
        assert!(e.write(&v[..1]).is_err());
        assert!(e.finish().is_err());
    }
}

#[cfg(unix)]
#[test]
fn both_forms_decode_from_a_real_pipe_written_in_odd_pieces() {
    let v = some_vectors(50);
    for format in formats() {
        let bytes = file::to_vec(&v, format, opts(7)).unwrap();
        for cut in [bytes.len(), bytes.len() - 5, 30] {
            let (reader, mut writer) = io::pipe().unwrap();
            let data = bytes[..cut].to_vec();
            let feeder = std::thread::spawn(move || {
                for (i, piece) in data.chunks(13).enumerate() {
                    writer.write_all(piece).unwrap();
                    if i % 10 == 0 {
                        std::thread::yield_now();
                    }
                }
                // Dropping the writer is the end of the stream.
            });
            let result = FileReader::from_reader(BufReader::new(reader), Policy::Strict)
                .and_then(|r| r.collect::<Result<Vec<Gf8>, _>>());
            feeder.join().unwrap();
            if cut == bytes.len() {
                assert_eq!(result.unwrap(), v);
            } else {
                match result {
                    Err(CodecError::Truncated { offset, .. }) => assert_eq!(offset, cut as u64),
                    other => panic!("{format}: cut at {cut}: {other:?}"),
                }
            }
        }
    }
}

/// Makes a FIFO at `path` with the system's `mkfifo`.
#[cfg(unix)]
fn mkfifo(path: &Path) {
    let status = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("mkfifo runs");
    assert!(status.success(), "mkfifo {}", path.display());
}

#[cfg(unix)]
fn is_fifo(path: &Path) -> bool {
    use std::os::unix::fs::FileTypeExt;
    std::fs::symlink_metadata(path)
        .map(|m| m.file_type().is_fifo())
        .unwrap_or(false)
}

#[cfg(unix)]
#[test]
fn open_reads_a_fifo() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("in.fifo");
    mkfifo(&fifo);
    let v = some_vectors(20);
    for format in formats() {
        let bytes = file::to_vec(&v, format, opts(3)).unwrap();
        let path = fifo.clone();
        let feeder = std::thread::spawn(move || {
            let mut f = std::fs::OpenOptions::new().write(true).open(path).unwrap();
            for piece in bytes.chunks(5) {
                f.write_all(piece).unwrap();
            }
        });
        let r = FileReader::open(&fifo, Policy::Strict).unwrap();
        assert_eq!(r.expected_vectors(), None); // a FIFO has no size
        let back: Vec<Gf8> = r.collect::<Result<_, _>>().unwrap();
        feeder.join().unwrap();
        assert_eq!(back, v);
    }
}

#[cfg(unix)]
#[test]
fn saving_to_a_fifo_streams_into_it_and_keeps_it() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("out.fifo");
    mkfifo(&fifo);
    let v = some_vectors(1000);
    for format in formats() {
        let path = fifo.clone();
        let drain = std::thread::spawn(move || {
            let mut got = Vec::new();
            std::fs::File::open(path)
                .unwrap()
                .read_to_end(&mut got)
                .unwrap();
            got
        });
        // Durable: fsync would fail on a FIFO, so it is skipped there.
        let mut w =
            FileWriter::create(&fifo, format, FileOptions::new().with_chunk_vectors(64)).unwrap();
        w.write(&v).unwrap();
        w.finish().unwrap();
        // Checked before joining: if the FIFO had been replaced, the
        // reader would wait for ever.
        assert!(is_fifo(&fifo), "{format}: the FIFO was replaced");
        assert_eq!(files_in(dir.path()), ["out.fifo"]);
        let got = drain.join().unwrap();
        assert_eq!(
            got,
            file::to_vec(&v, format, FileOptions::new().with_chunk_vectors(64)).unwrap()
        );
    }
}

#[cfg(unix)]
#[test]
fn saving_to_a_character_device_writes_through_it() {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    // Never the real /dev/null by its name: a broken save run as root
    // would replace it. As root, a device node made here (a copy of
    // /dev/null, major 1 minor 3; making one needs CAP_MKNOD, so failing to
    // is a failure). Otherwise a link to /dev/null, which such a save
    // cannot replace without root (it fails to make its temporary file in
    // /dev), so the test still catches it.
    let dir = tempfile::tempdir().unwrap();
    let probe = dir.path().join("probe");
    std::fs::write(&probe, b"").unwrap();
    let root = std::fs::metadata(&probe).unwrap().uid() == 0;
    std::fs::remove_file(&probe).unwrap();
    let (dev, name) = if root {
        let dev = dir.path().join("null");
        let made = std::process::Command::new("mknod")
            .arg(&dev)
            .args(["c", "1", "3"])
            .status()
            .is_ok_and(|s| s.success());
        assert!(made, "mknod {dev:?} c 1 3 as root");
        (dev, "null")
    } else {
        let link = dir.path().join("null-link");
        std::os::unix::fs::symlink("/dev/null", &link).unwrap();
        (link, "null-link")
    };
    for format in formats() {
        file::save(&dev, &some_vectors(100), format).unwrap();
        let kind = std::fs::metadata(&dev).unwrap().file_type();
        assert!(kind.is_char_device(), "{format}: the device was replaced");
        assert_eq!(
            std::fs::symlink_metadata(&dev)
                .unwrap()
                .file_type()
                .is_symlink(),
            !root,
            "{format}: the link was replaced"
        );
        assert_eq!(files_in(dir.path()), [name]);
    }
}

#[cfg(unix)]
#[test]
fn a_replaced_file_keeps_its_permissions() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("private.hyd");
    for format in formats() {
        for mode in [0o600, 0o640, 0o444] {
            file::save(&path, &some_vectors(2), format).unwrap();
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
            file::save(&path, &some_vectors(3), format).unwrap();
            let now = std::fs::metadata(&path).unwrap().permissions().mode() & 0o7777;
            assert_eq!(now, mode, "{format:?}");
            assert_eq!(file::load(&path, Policy::Strict).unwrap(), some_vectors(3));
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        }
    }
    assert_eq!(files_in(dir.path()), ["private.hyd"]);
}

#[cfg(unix)]
#[test]
fn saving_through_a_symlink_replaces_the_file_it_points_to() {
    let root = tempfile::tempdir().unwrap();
    let data = root.path().join("data");
    let links = root.path().join("links");
    std::fs::create_dir(&data).unwrap();
    std::fs::create_dir(&links).unwrap();
    let real = data.join("real.hyd");
    let format = formats()[0];
    file::save(&real, &some_vectors(2), format).unwrap();
    // links/b -> links/a -> ../data/real.hyd (relative, in another directory)
    std::os::unix::fs::symlink("../data/real.hyd", links.join("a")).unwrap();
    std::os::unix::fs::symlink(links.join("a"), links.join("b")).unwrap();

    file::save(links.join("b"), &some_vectors(7), format).unwrap();
    for link in ["a", "b"] {
        let meta = std::fs::symlink_metadata(links.join(link)).unwrap();
        assert!(meta.file_type().is_symlink(), "{link} is still a link");
    }
    assert_eq!(
        std::fs::read_link(links.join("a")).unwrap(),
        Path::new("../data/real.hyd")
    );
    assert_eq!(file::load(&real, Policy::Strict).unwrap(), some_vectors(7));
    // The temporary file was made beside the real file, and is gone.
    assert_eq!(files_in(&data), ["real.hyd"]);
    assert_eq!(files_in(&links), ["a", "b"]);

    // A link to a file that does not exist yet creates it.
    std::os::unix::fs::symlink("../data/new.hyd", links.join("c")).unwrap();
    file::save(links.join("c"), &some_vectors(1), format).unwrap();
    assert_eq!(
        file::load(data.join("new.hyd"), Policy::Strict).unwrap(),
        some_vectors(1)
    );
    assert!(std::fs::symlink_metadata(links.join("c"))
        .unwrap()
        .file_type()
        .is_symlink());
}

#[test]
fn names_near_the_length_limit_save_and_their_temp_names_fit() {
    let dir = tempfile::tempdir().unwrap();
    for (len, format) in [250usize, 255]
        .into_iter()
        .zip(formats().into_iter().cycle())
    {
        let name = format!("{}.hyd", "n".repeat(len - 4));
        let path = dir.path().join(&name);
        let mut w = FileWriter::create(&path, format, opts(2)).unwrap();
        w.write(&some_vectors(3)).unwrap();
        // The temporary file exists now, and its name fits.
        let names = files_in(dir.path());
        assert_eq!(names.len(), 1);
        assert!(names[0].len() <= 255, "{}", names[0].len());
        assert!(names[0].starts_with(".nnnn") && names[0].ends_with(".tmp"));
        w.finish().unwrap();
        assert_eq!(file::load(&path, Policy::Strict).unwrap(), some_vectors(3));
        std::fs::remove_file(&path).unwrap();
    }
    // Multi-byte characters are cut whole.
    let name = "é".repeat(127);
    let path = dir.path().join(&name);
    file::save(&path, &some_vectors(1), formats()[0]).unwrap();
    assert_eq!(files_in(dir.path()), [name]);
}

#[test]
fn saving_over_odd_targets_is_refused_before_writing() {
    let dir = tempfile::tempdir().unwrap();
    let err = FileWriter::create(dir.path(), formats()[0], opts(2)).unwrap_err();
    match inner(&err) {
        CodecError::Io(e) => assert_eq!(e.kind(), io::ErrorKind::IsADirectory),
        other => panic!("{other:?}"),
    }
    assert!(files_in(dir.path()).is_empty());
}

/// A reader that returns pieces of the sizes given (cycling), with no
/// length.
struct Pieces {
    data: Vec<u8>,
    at: usize,
    sizes: Vec<usize>,
    call: usize,
}

impl Read for Pieces {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let size = self.sizes[self.call % self.sizes.len()];
        self.call += 1;
        let n = size.min(buf.len()).min(self.data.len() - self.at);
        buf[..n].copy_from_slice(&self.data[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// Whatever the damage and however the stream is cut into reads, a
    /// stream decodes to exactly what the same bytes in memory decode to
    /// (the same vectors, or the same error).
    #[test]
    fn streams_decode_exactly_as_memory_does(
        n in 0usize..20,
        chunk in 1u32..6,
        sizes in prop::collection::vec(1usize..40, 1..6),
        buffer in 1usize..64,
        edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>(), 0u8..4), 0..3),
        format_index in 0usize..2,
    ) {
        let formats = formats();
        let format = formats[format_index % formats.len()];
        let mut bytes = file::to_vec(&some_vectors(n), format, opts(chunk)).unwrap();
        for (at, byte, kind) in edits {
            if bytes.is_empty() {
                break;
            }
            let i = at.index(bytes.len());
            match kind {
                0 => bytes[i] = byte,
                1 => bytes.insert(i, byte),
                2 => {
                    bytes.remove(i);
                }
                _ => bytes.truncate(i),
            }
        }
        let whole = file::from_slice(&bytes, Policy::Trusted).map_err(|e| e.to_string());
        let reader = BufReader::with_capacity(
            buffer,
            Pieces { data: bytes.clone(), at: 0, sizes, call: 0 },
        );
        let streamed = FileReader::from_reader(reader, Policy::Trusted)
            .and_then(|r| r.collect::<Result<Vec<Gf8>, _>>())
            .map_err(|e| e.to_string());
        prop_assert_eq!(streamed, whole);
    }
}
