//! Integration tests for the file container (`hydron_codec::file`): round
//! trips, chunking, every flipped bit and every truncation detected, wrong
//! formats refused, atomic saves.
#![cfg(any(feature = "fory-messages", feature = "json"))]

mod common;

use std::path::Path;

use hydron_codec::file::{self, FileReader, FileWriter, Format, Section};
use hydron_codec::{CodecError, Policy};
use hydron_core::{Gf8, E8_ROOTS};
use proptest::prelude::*;

use common::{files_in, formats, inner, opts, some_vectors};

fn bits(v: &[Gf8]) -> Vec<[u32; 8]> {
    v.iter().map(|g| g.to_array().map(f32::to_bits)).collect()
}

#[test]
fn round_trips_through_disk_in_every_form_and_chunk_size() {
    let dir = tempfile::tempdir().unwrap();
    for format in formats() {
        for n in [0, 1, 2, 6, 7, 8, 50] {
            for chunk in [1, 2, 7, 64] {
                let v = some_vectors(n);
                let path = dir.path().join(format!("{format}-{n}-{chunk}"));
                let mut w = FileWriter::create(&path, format, opts(chunk)).unwrap();
                // Writes of awkward sizes: 0, 1, 3, then the rest.
                let (a, rest) = v.split_at(n.min(1));
                let (b, c) = rest.split_at(rest.len().min(3));
                for piece in [&[][..], a, b, c] {
                    w.write(piece).unwrap();
                }
                assert_eq!(w.vectors(), n as u64);
                w.finish().unwrap();
                let back = file::load(&path, Policy::Strict).unwrap();
                assert_eq!(bits(&back), bits(&v), "{format} n={n} chunk={chunk}");
                // The same bytes as in memory.
                assert_eq!(
                    std::fs::read(&path).unwrap(),
                    file::to_vec(&v, format, opts(chunk)).unwrap()
                );
                // Chunk sizes seen by the reader.
                let mut r = FileReader::open(&path, Policy::Strict).unwrap();
                assert_eq!(r.format(), format);
                assert_eq!(r.expected_vectors(), Some(n as u64));
                let mut sizes = Vec::new();
                let mut buf = Vec::new();
                loop {
                    buf.clear();
                    match r.read_chunk(&mut buf).unwrap() {
                        0 => break,
                        k => sizes.push(k),
                    }
                }
                let chunk = chunk as usize;
                let mut want = vec![chunk; n / chunk];
                if n % chunk != 0 {
                    want.push(n % chunk);
                }
                assert_eq!(sizes, want, "{format} n={n} chunk={chunk}");
                // Done means done.
                assert_eq!(r.read_chunk(&mut buf).unwrap(), 0);
            }
        }
    }
}

#[test]
fn iteration_and_read_chunk_can_be_mixed() {
    let dir = tempfile::tempdir().unwrap();
    for format in formats() {
        let path = dir.path().join(format!("{format}"));
        let v = some_vectors(10);
        let mut w = FileWriter::create(&path, format, opts(4)).unwrap();
        w.write(&v).unwrap();
        w.finish().unwrap();
        let mut r = FileReader::open(&path, Policy::Strict).unwrap();
        assert_eq!(r.next().unwrap().unwrap(), v[0]);
        let mut out = Vec::new();
        assert_eq!(r.read_chunk(&mut out).unwrap(), 3); // the rest of chunk 0
        assert_eq!(r.read_chunk(&mut out).unwrap(), 4);
        assert_eq!(out, v[1..8]);
        let rest: Vec<Gf8> = r.collect::<Result<_, _>>().unwrap();
        assert_eq!(rest, v[8..]);
    }
}

#[test]
fn policies_apply_with_indices_across_chunks() {
    let mut v = some_vectors(9);
    v[6] = Gf8::new_unchecked([0.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0, 0.0]);
    for format in formats() {
        let bytes = file::to_vec(&v, format, opts(4)).unwrap();
        let err = file::from_slice(&bytes, Policy::Strict).unwrap_err();
        match (&err, format) {
            #[cfg(feature = "fory-messages")]
            (CodecError::InvalidVector { index: 6, .. }, Format::Fory) => {}
            #[cfg(feature = "json")]
            (
                CodecError::InvalidVectorOnLine {
                    index: 6, line: 9, ..
                },
                Format::JsonLines,
            ) => {}
            _ => panic!("{format}: {err}"),
        }
        let fixed = file::from_slice(&bytes, Policy::Renormalize).unwrap();
        assert_eq!(fixed[6][3], 1.0);
        let kept = file::from_slice(&bytes, Policy::Trusted).unwrap();
        assert_eq!(kept[6][3], 2.0);
    }
}

/// Byte ranges of each section of a binary file: header, chunks, trailer.
#[cfg(feature = "fory-messages")]
fn binary_sections(bytes: &[u8]) -> Vec<(std::ops::Range<usize>, Section)> {
    let mut out = vec![(0..20, Section::Header)];
    let mut at = 20;
    let mut k = 0;
    while &bytes[at..at + 4] == b"CHNK" {
        let len = u32::from_le_bytes(bytes[at + 16..at + 20].try_into().unwrap()) as usize;
        out.push((at..at + 28 + len, Section::Chunk(k)));
        at += 28 + len;
        k += 1;
    }
    out.push((at..bytes.len(), Section::Trailer));
    assert_eq!(at + 24, bytes.len());
    out
}

#[cfg(feature = "fory-messages")]
#[test]
fn binary_every_flipped_bit_is_corruption_in_the_right_section() {
    let v = some_vectors(5);
    let bytes = file::to_vec(&v, Format::Fory, opts(2)).unwrap();
    let sections = binary_sections(&bytes);
    assert_eq!(sections.len(), 5); // header, 3 chunks, trailer
    for i in 0..bytes.len() {
        let want = sections.iter().find(|(r, _)| r.contains(&i)).unwrap().1;
        for bit in 0..8 {
            let mut bad = bytes.clone();
            bad[i] ^= 1 << bit;
            match file::from_slice(&bad, Policy::Trusted) {
                Err(CodecError::Corrupt { section, .. }) => {
                    assert_eq!(section, want, "byte {i} bit {bit}")
                }
                other => panic!("byte {i} bit {bit}: {other:?}"),
            }
        }
    }
}

#[cfg(feature = "fory-messages")]
#[test]
fn binary_errors_name_chunk_and_offset() {
    let v = some_vectors(5);
    let mut bytes = file::to_vec(&v, Format::Fory, opts(2)).unwrap();
    let sections = binary_sections(&bytes);
    let chunk1 = sections[2].0.clone();
    bytes[chunk1.start + 40] ^= 4; // inside chunk 1's payload
    let err = file::from_slice(&bytes, Policy::Strict).unwrap_err();
    let text = err.to_string();
    assert!(
        text.starts_with(&format!(
            "corrupt chunk 1 at byte offset {}: checksum mismatch (stored ",
            chunk1.start
        )),
        "{text}"
    );
}

/// The section of each byte of a text file: the header line, the lines of
/// chunk k (its vector lines and checksum line), the end line.
#[cfg(feature = "json")]
fn text_sections(bytes: &[u8]) -> Vec<Section> {
    let mut out = Vec::new();
    let mut k = 0;
    for (i, line) in bytes.split_inclusive(|&b| b == b'\n').enumerate() {
        let section = if i == 0 {
            Section::Header
        } else if line.starts_with(b"{\"end\"") {
            Section::Trailer
        } else {
            Section::Chunk(k)
        };
        if line.starts_with(b"{\"chunk\"") {
            k += 1;
        }
        out.extend(std::iter::repeat_n(section, line.len()));
    }
    out
}

#[cfg(feature = "json")]
#[test]
fn text_every_flipped_bit_is_corruption_in_the_right_section() {
    let v = some_vectors(5);
    let bytes = file::to_vec(&v, Format::JsonLines, opts(2)).unwrap();
    let sections = text_sections(&bytes);
    let mut misplaced = Vec::new();
    assert_eq!(sections.len(), bytes.len());
    assert_eq!(sections.last(), Some(&Section::Trailer));
    assert!(sections.contains(&Section::Chunk(2)));
    for i in 0..bytes.len() {
        for bit in 0..8 {
            let mut bad = bytes.clone();
            bad[i] ^= 1 << bit;
            match file::from_slice(&bad, Policy::Trusted) {
                Err(CodecError::Corrupt { section, .. }) => {
                    if section != sections[i] {
                        misplaced.push((i, bit, section));
                    }
                }
                other => panic!("byte {i} bit {bit} ({:?}): {other:?}", bytes[i] as char),
            }
        }
    }
    assert!(misplaced.is_empty(), "{misplaced:?}");
}

#[cfg(feature = "json")]
#[test]
fn text_damage_inside_a_number_is_corruption_of_its_chunk() {
    let v = some_vectors(5);
    let bytes = file::to_vec(&v, Format::JsonLines, opts(2)).unwrap();
    let text = String::from_utf8(bytes.clone()).unwrap();
    // Change one digit on the 4th vector line (chunk 1) to another digit:
    // still valid JSON, still a plausible number.
    let line_start: usize = text.split_inclusive('\n').take(4).map(str::len).sum();
    let at = line_start
        + text[line_start..]
            .find(|c: char| c.is_ascii_digit() && c != '0')
            .unwrap();
    let mut bad = bytes.clone();
    bad[at] = if bad[at] == b'9' { b'8' } else { bad[at] + 1 };
    let err = file::from_slice(&bad, Policy::Trusted).unwrap_err();
    assert!(
        matches!(
            err,
            CodecError::Corrupt {
                section: Section::Chunk(1),
                ..
            }
        ),
        "{err}"
    );
    assert!(
        err.to_string().contains("line 7: checksum mismatch"),
        "{err}"
    );
}

#[test]
fn every_truncation_is_detected_as_truncation() {
    let v = some_vectors(5);
    for format in formats() {
        let bytes = file::to_vec(&v, format, opts(2)).unwrap();
        assert!(matches!(
            file::from_slice(&[], Policy::Strict),
            Err(CodecError::UnknownFormat { .. })
        ));
        for n in 1..bytes.len() {
            match file::from_slice(&bytes[..n], Policy::Trusted) {
                Err(CodecError::Truncated { offset, .. }) => assert_eq!(offset, n as u64),
                other => panic!("{format}: cut at {n}: {other:?}"),
            }
        }
        assert_eq!(file::from_slice(&bytes, Policy::Strict).unwrap(), v);
    }
}

#[test]
fn truncated_files_on_disk_name_path_offset_and_section() {
    let dir = tempfile::tempdir().unwrap();
    for format in formats() {
        let path = dir.path().join(format!("cut-{format}"));
        let full = file::to_vec(&some_vectors(5), format, opts(2)).unwrap();
        std::fs::write(&path, &full[..full.len() - 3]).unwrap();
        let err = file::load(&path, Policy::Strict).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "{}: truncated: the data ends at byte offset {}, in the trailer",
                path.display(),
                full.len() - 3
            )
        );
        // Streaming reads the chunks that are whole, then fails: never a
        // short read that looks complete.
        let mut r = FileReader::open(&path, Policy::Strict).unwrap();
        assert_eq!(r.expected_vectors(), None);
        let got: Vec<_> = r.by_ref().collect();
        assert_eq!(got.len(), 6);
        assert!(got[..5].iter().all(Result::is_ok));
        assert!(matches!(
            inner(got[5].as_ref().unwrap_err()),
            CodecError::Truncated { .. }
        ));
        assert!(r.next().is_none());
        assert!(r.read_chunk(&mut Vec::new()).is_err());
    }
}

#[cfg(feature = "json")]
#[test]
fn text_truncation_after_a_rejected_vector_is_still_truncation() {
    let mut v = some_vectors(5);
    v[1] = Gf8::new_unchecked([0.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0, 0.0]);
    let bytes = file::to_vec(&v, Format::JsonLines, opts(4)).unwrap();
    // Inside the 4th vector line: in chunk 0, after vector 1.
    let cut = bytes
        .split_inclusive(|&b| b == b'\n')
        .take(4)
        .map(<[u8]>::len)
        .sum::<usize>()
        + 5;
    let err = file::from_slice(&bytes[..cut], Policy::Strict).unwrap_err();
    assert!(
        matches!(
            err,
            CodecError::Truncated {
                section: Section::Chunk(0),
                ..
            }
        ),
        "{err}"
    );
    // A syntax error with no checksum line after it is damage.
    let mut bad = bytes[..cut].to_vec();
    let second_line = bad.iter().position(|&b| b == b'\n').unwrap() + 1;
    bad[second_line + 1] = b'x';
    let err = file::from_slice(&bad, Policy::Strict).unwrap_err();
    assert!(
        matches!(
            err,
            CodecError::Corrupt {
                section: Section::Chunk(0),
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn extra_bytes_after_the_end_are_corruption() {
    for format in formats() {
        let mut bytes = file::to_vec(&some_vectors(3), format, opts(2)).unwrap();
        bytes.push(b'\n');
        let err = file::from_slice(&bytes, Policy::Strict).unwrap_err();
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
                .ends_with("1 unexpected bytes after the trailer")
                || err
                    .to_string()
                    .ends_with("1 unexpected bytes after the end line"),
            "{err}"
        );
    }
}

#[test]
fn other_formats_are_refused_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let mut cases: Vec<(&str, Vec<u8>, &str)> = vec![
        ("empty", vec![], "not a hydron file: it is empty"),
        (
            "png",
            b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec(),
            "(a PNG image)",
        ),
        (
            "text",
            b"hello world\n".to_vec(),
            "not a hydron file: it starts with 68 65 6c 6c 6f 20 77 6f",
        ),
        (
            "object",
            b"{\"a\": 1}\n".to_vec(),
            "its first line is not a hydron header",
        ),
        (
            "bom",
            b"\xef\xbb\xbf[1,0,0,0,0,0,0,0]\n".to_vec(),
            "it starts with ef bb bf 5b 31 2c 30 2c (a UTF-8 byte order mark",
        ),
    ];
    #[cfg(feature = "json")]
    cases.push((
        "array",
        hydron_codec::json::to_vec(&[Gf8::ZERO]),
        "(a plain JSON array of vectors? read it with a JSON decoder: \
         hydron_codec::json::from_slice, or hydron.decode_json in Python)",
    ));
    cases.push((
        "lines",
        b"[1,0,0,0,0,0,0,0]\n".to_vec(),
        "(plain JSON Lines, one vector a line? read them with a JSON Lines decoder: \
         hydron_codec::json::JsonLinesReader, or hydron.decode_jsonl in Python)",
    ));
    #[cfg(feature = "fory-messages")]
    cases.push((
        "fory",
        hydron_codec::fory::encode_batch(&[Gf8::ZERO]),
        "not a hydron file: it starts with ",
    ));
    for (name, bytes, want) in cases {
        let path = dir.path().join(name);
        std::fs::write(&path, &bytes).unwrap();
        let err = file::load(&path, Policy::Strict).unwrap_err();
        let text = err.to_string();
        assert!(text.starts_with(&format!("{}: ", path.display())), "{text}");
        assert!(text.contains(want), "{name}: {text}");
        assert!(
            matches!(inner(&err), CodecError::UnknownFormat { .. }),
            "{name}: {text}"
        );
    }
    // Random bytes, many times: always an error, never a panic.
    let mut x = 0x1234_5678_9abc_def0u64;
    for len in 0..300 {
        let bytes: Vec<u8> = (0..len)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect();
        assert!(file::from_slice(&bytes, Policy::Strict).is_err());
    }
}

#[test]
fn unsupported_versions_are_named() {
    #[cfg(feature = "fory-messages")]
    {
        let mut bytes = file::to_vec(&[], Format::Fory, opts(2)).unwrap();
        bytes[8] = 2;
        // Keep the header checksum valid, as a real version-2 writer would.
        let crc = crc32fast::hash(&bytes[..16]);
        bytes[16..20].copy_from_slice(&crc.to_le_bytes());
        let err = file::from_slice(&bytes, Policy::Strict).unwrap_err();
        assert_eq!(
            err.to_string(),
            "unsupported hydron file version 2 (this build reads version 1)"
        );
    }
    #[cfg(feature = "json")]
    {
        // A future header: new fields, but the same closing checksum.
        let body = "{\"format\":\"hydron-gf8-jsonl\",\"version\":12,\"whatever\":true";
        let text = format!(
            "{body},\"crc32\":\"{:08x}\"}}\n",
            crc32fast::hash(body.as_bytes())
        );
        let err = file::from_slice(text.as_bytes(), Policy::Strict).unwrap_err();
        assert_eq!(
            err.to_string(),
            "unsupported hydron file version 12 (this build reads version 1)"
        );
    }
}

#[test]
fn a_form_whose_feature_is_off_is_named() {
    #[cfg(not(feature = "fory-messages"))]
    {
        let mut bytes = b"\x89HYD\r\n\x1a\n".to_vec();
        bytes.extend_from_slice(&[0; 36]);
        let err = file::from_slice(&bytes, Policy::Strict).unwrap_err();
        assert_eq!(
            err.to_string(),
            "the file is in the fory binary form, which needs hydron-codec's `fory-messages` feature"
        );
    }
    #[cfg(not(feature = "json"))]
    {
        let text = b"{\"format\":\"hydron-gf8-jsonl\",\"version\":1,\"chunk_vectors\":1}\n";
        let err = file::from_slice(text, Policy::Strict).unwrap_err();
        assert!(
            matches!(
                err,
                CodecError::FormatDisabled {
                    feature: "json",
                    ..
                }
            ),
            "{err}"
        );
    }
}

#[test]
fn a_writer_dropped_without_finish_leaves_the_old_file_and_no_temp() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("data.hyd");
    for format in formats() {
        let old = some_vectors(3);
        file::save(&path, &old, format).unwrap();
        let before = std::fs::read(&path).unwrap();
        {
            let mut w = FileWriter::create(&path, format, opts(2)).unwrap();
            w.write(&some_vectors(10)).unwrap();
            assert_eq!(files_in(dir.path()).len(), 2); // target + temp
        }
        assert_eq!(std::fs::read(&path).unwrap(), before);
        assert_eq!(files_in(dir.path()), ["data.hyd"]);
    }
}

/// A save from a data source that fails halfway: the caller's `?` drops
/// the writer.
fn save_from_source(
    path: &Path,
    format: Format,
    source: impl Iterator<Item = Result<Vec<Gf8>, String>>,
) -> Result<(), String> {
    let mut w = FileWriter::create(path, format, opts(2)).map_err(|e| e.to_string())?;
    for batch in source {
        w.write(&batch?).map_err(|e| e.to_string())?;
    }
    w.finish().map_err(|e| e.to_string())
}

#[test]
fn a_failing_data_source_leaves_the_old_file_intact() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("data.hyd");
    for format in formats() {
        file::save(&path, &some_vectors(4), format).unwrap();
        let before = std::fs::read(&path).unwrap();
        let source = vec![
            Ok(some_vectors(3)),
            Ok(some_vectors(5)),
            Err("sensor unplugged".to_string()),
        ];
        assert_eq!(
            save_from_source(&path, format, source.into_iter()),
            Err("sensor unplugged".into())
        );
        assert_eq!(std::fs::read(&path).unwrap(), before);
        assert_eq!(files_in(dir.path()), ["data.hyd"]);
        // And a good source replaces it.
        save_from_source(&path, format, vec![Ok(some_vectors(7))].into_iter()).unwrap();
        assert_eq!(file::load(&path, Policy::Strict).unwrap(), some_vectors(7));
        assert_eq!(files_in(dir.path()), ["data.hyd"]);
    }
}

#[cfg(feature = "json")]
#[test]
fn a_failed_write_spends_the_writer_and_keeps_the_old_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("data.jsonl");
    file::save(&path, &some_vectors(2), Format::JsonLines).unwrap();
    let mut w = FileWriter::create(&path, Format::JsonLines, opts(2)).unwrap();
    w.write(&some_vectors(3)).unwrap();
    let nan = Gf8::new_unchecked([f32::NAN; 8]);
    let err = w.write(&[nan]).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("{}: vector 3: coordinate 0 is NaN", path.display())
    );
    assert!(w.write(&some_vectors(1)).is_err());
    let err = w.finish().unwrap_err();
    assert!(
        err.to_string()
            .contains("an earlier write failed, so the file was not saved"),
        "{err}"
    );
    assert_eq!(file::load(&path, Policy::Strict).unwrap(), some_vectors(2));
    assert_eq!(files_in(dir.path()), ["data.jsonl"]);
}

#[test]
fn saving_over_a_directory_fails_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("sub");
    std::fs::create_dir(&target).unwrap();
    std::fs::write(target.join("keep"), b"x").unwrap();
    let err = file::save(&target, &some_vectors(2), formats()[0]).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "{}: I/O error: is a directory, not a file it can replace",
            target.display()
        )
    );
    match inner(&err) {
        CodecError::Io(e) => assert_eq!(e.kind(), std::io::ErrorKind::IsADirectory),
        other => panic!("{other:?}"),
    }
    assert_eq!(files_in(dir.path()), ["sub"]);
    assert_eq!(files_in(&target), ["keep"]);
}

/// A save to `/proc/self/fd/N` (what `/dev/stdout` and `/dev/fd/N` lead
/// to) writes to the open file: a pipe gets the data, and a regular file
/// holds exactly the new data, with nothing renamed over it.
#[cfg(target_os = "linux")]
#[test]
fn saving_to_an_open_descriptor_writes_through_it() {
    use std::io::Read;
    use std::os::fd::AsRawFd;
    let vs = some_vectors(3000);
    for format in formats() {
        let (mut reader, writer) = std::io::pipe().unwrap();
        let path = format!("/proc/self/fd/{}", writer.as_raw_fd());
        let drain = std::thread::spawn(move || {
            let mut bytes = Vec::new();
            reader.read_to_end(&mut bytes).unwrap();
            bytes
        });
        file::save(&path, &vs, format).unwrap();
        drop(writer);
        let bytes = drain.join().unwrap();
        assert_eq!(
            file::from_slice(&bytes, Policy::Strict).unwrap(),
            vs,
            "{format:?}"
        );
    }

    // A regular file held open (read-write, no truncation) that was
    // longer than the save: emptied first, so no old bytes remain; the
    // same inode, so the holder sees the data.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("held.hyd");
    std::fs::write(&path, vec![b'x'; 1 << 20]).unwrap();
    let mut held = std::fs::File::options()
        .read(true)
        .write(true)
        .open(&path)
        .unwrap();
    let through = format!("/proc/self/fd/{}", held.as_raw_fd());
    file::save(&through, &vs, formats()[0]).unwrap();
    let mut bytes = Vec::new();
    held.read_to_end(&mut bytes).unwrap();
    assert_eq!(file::from_slice(&bytes, Policy::Strict).unwrap(), vs);
    assert_eq!(std::fs::read(&path).unwrap(), bytes);
    assert_eq!(files_in(dir.path()), ["held.hyd"]);
}

#[test]
fn durable_saves_work_and_overwrite() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("roots.hyd");
    for format in formats() {
        file::save(&path, &E8_ROOTS, format).unwrap();
        assert_eq!(file::load(&path, Policy::Strict).unwrap(), E8_ROOTS);
        file::save(&path, &E8_ROOTS[..10], format).unwrap();
        assert_eq!(file::load(&path, Policy::Strict).unwrap(), E8_ROOTS[..10]);
    }
    // A relative path in the current directory also works (temp file in ".").
    let cwd = std::env::current_dir().unwrap();
    std::env::set_current_dir(dir.path()).unwrap();
    let result = file::save("relative.hyd", &E8_ROOTS[..3], formats()[0]);
    std::env::set_current_dir(cwd).unwrap();
    result.unwrap();
    assert_eq!(
        file::load(dir.path().join("relative.hyd"), Policy::Strict).unwrap(),
        E8_ROOTS[..3]
    );
}

#[test]
fn missing_files_name_the_path() {
    let err = file::load("/definitely/not/here.hyd", Policy::Strict).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("/definitely/not/here.hyd: I/O error: No such file"),
        "{err}"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn any_write_pattern_round_trips(
        n in 0usize..40,
        chunk in 1u32..9,
        cuts in prop::collection::vec(0usize..40, 0..5),
        format_index in 0usize..2,
    ) {
        let formats = formats();
        let format = formats[format_index % formats.len()];
        let v = some_vectors(n);
        let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c.min(n)).collect();
        cuts.sort_unstable();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.hyd");
        let mut w = FileWriter::create(&path, format, opts(chunk)).unwrap();
        let mut at = 0;
        for c in cuts.into_iter().chain([n]) {
            w.write(&v[at..c]).unwrap();
            at = c;
        }
        w.finish().unwrap();
        prop_assert_eq!(file::load(&path, Policy::Strict).unwrap(), v);
    }

    #[test]
    fn random_damage_never_panics_and_never_passes_silently(
        n in 1usize..12,
        edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>(), 0u8..3), 1..4),
        format_index in 0usize..2,
    ) {
        let formats = formats();
        let format = formats[format_index % formats.len()];
        let v = some_vectors(n);
        let good = file::to_vec(&v, format, opts(3)).unwrap();
        let mut bad = good.clone();
        for (at, byte, kind) in edits {
            if bad.is_empty() { break; }
            let i = at.index(bad.len());
            match kind {
                0 => bad[i] = byte,
                1 => bad.insert(i, byte),
                _ => { bad.remove(i); }
            }
        }
        let result = file::from_slice(&bad, Policy::Trusted);
        if bad != good {
            prop_assert!(result.is_err(), "damage went unnoticed");
        }
    }
}
