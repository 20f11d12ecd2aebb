//! 1 TiB sparse files with a valid header and a trailer that claims a huge
//! vector count: `load` must fail at once, without allocating for the
//! claim and without reading the terabyte. On unix the check also runs in a
//! child process under a 2 GiB address-space limit (`ulimit -v`), where an
//! allocation from the claim would abort it.
#![cfg(any(feature = "fory-messages", feature = "json"))]

mod common;

use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use hydron_codec::file::{self, FileOptions, FileReader, Format, Section};
use hydron_codec::{CodecError, Policy};

use common::{formats, precondition};

const TIB: u64 = 1 << 40;

/// Where the child process makes its files (the parent's temporary
/// directory, so that it is removed even if the child dies).
const DIR_VAR: &str = "HYDRON_SPARSE_TEST_DIR";

/// A `TIB`-byte file: the header of an empty file of `format`, a hole, and
/// (if `trailer`) at the end a trailer claiming `claim` vectors (binary:
/// with a valid CRC). `None` if the file system has no sparse files (a
/// [`precondition`]: a failure under `HYDRON_REQUIRE_ALL=1`).
fn sparse_file(dir: &Path, format: Format, trailer: bool) -> Option<(PathBuf, u64)> {
    let empty = file::to_vec(&[], format, FileOptions::new()).unwrap();
    let (head, end, claim) = match format {
        #[cfg(feature = "fory-messages")]
        Format::Fory => {
            let claim = TIB / 32;
            let mut t = b"TAIL".to_vec();
            t.extend_from_slice(&1u64.to_le_bytes());
            t.extend_from_slice(&claim.to_le_bytes());
            let crc = crc32fast::hash(&t);
            t.extend_from_slice(&crc.to_le_bytes());
            (empty[..20].to_vec(), t, claim)
        }
        #[cfg(feature = "json")]
        Format::JsonLines => {
            let header_len = empty.iter().position(|&b| b == b'\n').unwrap() + 1;
            let claim = TIB / 18;
            let end = format!(
                "\n{{\"end\":true,\"chunks\":1,\"vectors\":{claim},\"crc32\":\"00000000\"}}\n"
            );
            (empty[..header_len].to_vec(), end.into_bytes(), claim)
        }
        other => panic!("no sparse file for {other}"),
    };
    let path = dir.join(format!("sparse-{format}"));
    let mut f = std::fs::File::create(&path).unwrap();
    f.write_all(&head).unwrap();
    if let Err(e) = f.set_len(TIB) {
        precondition(
            false,
            &format!("a file system with sparse files (a 1 TiB file in {dir:?}: {e})"),
        );
        return None;
    }
    if !trailer {
        return Some((path, claim));
    }
    f.seek(SeekFrom::Start(TIB - end.len() as u64)).unwrap();
    f.write_all(&end).unwrap();
    Some((path, claim))
}

/// Loads each sparse file: a quick error in chunk 0, whatever the claim.
/// Without a trailer, the text form's first "line" is a terabyte of zeros:
/// it must not be read to its end.
fn sparse_loads_fail_fast(dir: &Path) {
    for (format, trailer) in formats().into_iter().flat_map(|f| [(f, true), (f, false)]) {
        let Some((path, claim)) = sparse_file(dir, format, trailer) else {
            return;
        };
        // The claim is seen (it fits the file's size) ...
        let r = FileReader::open(&path, Policy::Strict).unwrap();
        assert_eq!(r.expected_vectors(), trailer.then_some(claim), "{format}");
        drop(r);
        // ... but nothing is allocated for it, and the hole is not read.
        let start = Instant::now();
        let err = file::load(&path, Policy::Strict).unwrap_err();
        let took = start.elapsed();
        match err {
            CodecError::InFile { error, .. } => assert!(
                matches!(
                    *error,
                    CodecError::Corrupt {
                        section: Section::Chunk(0),
                        ..
                    }
                ),
                "{format}: {error}"
            ),
            other => panic!("{format}: {other}"),
        }
        eprintln!("{format}: sparse 1 TiB file (trailer: {trailer}) refused in {took:?}");
        // A second is plenty; 5 allows for a loaded machine.
        assert!(took < Duration::from_secs(5), "{format}: took {took:?}");
        std::fs::remove_file(&path).unwrap();
    }
}

#[test]
fn sparse_files_with_huge_claims_fail_fast() {
    let dir = tempfile::tempdir().unwrap();
    sparse_loads_fail_fast(dir.path());
}

/// Run by [`sparse_files_fail_under_a_small_address_space_limit`] in a
/// child process with the limit set; without it, the same check unlimited.
#[test]
#[ignore = "run by sparse_files_fail_under_a_small_address_space_limit in a limited child"]
fn sparse_child() {
    match std::env::var_os(DIR_VAR) {
        Some(dir) => sparse_loads_fail_fast(Path::new(&dir)),
        None => sparse_files_with_huge_claims_fail_fast(),
    }
}

#[cfg(unix)]
#[test]
fn sparse_files_fail_under_a_small_address_space_limit() {
    let dir = tempfile::tempdir().unwrap();
    let exe = std::env::current_exe().unwrap();
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg(r#"ulimit -v 2097152 && exec "$0" "$@""#)
        .arg(&exe)
        .args(["sparse_child", "--exact", "--ignored", "--test-threads=1"])
        .env(DIR_VAR, dir.path())
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "child failed ({}):\n{text}",
        out.status
    );
    assert!(text.contains("1 passed"), "{text}");
    if let Some(line) = text
        .lines()
        .find(|l| l.starts_with("SKIPPED (precondition)"))
    {
        precondition(false, &format!("in the child: {line}"));
    }
}
