//! The `hydron` binary on Parquet footers crafted to make the parquet
//! crate allocate from a claim, run under an address-space limit as a
//! small container or a `ulimit -v` shell would run it: the tool must
//! refuse the file with its typed error and exit code, not die of an
//! allocation failure (SIGABRT, exit 134 from a shell).

#![cfg(unix)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The binary under test: this build's, or `HYDRON_TEST_BIN` (to show
/// that an older build fails these tests).
fn bin() -> PathBuf {
    std::env::var_os("HYDRON_TEST_BIN")
        .map_or_else(|| env!("CARGO_BIN_EXE_hydron").into(), PathBuf::from)
}

/// A file of `hydron-codec/tests/regressions/`.
fn regression(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../hydron-codec/tests/regressions")
        .join(name)
}

/// Runs `hydron ARGS` from `sh` under `ulimit -v KIB` (virtual memory, so
/// an allocation past it fails at once whatever the machine's memory).
fn under_limit(kib: u64, args: &[&Path]) -> Output {
    let mut script = format!("ulimit -v {kib} || exit 99; exec \"$0\"");
    for i in 1..=args.len() {
        script.push_str(&format!(" \"${i}\""));
    }
    let output = Command::new("sh")
        .arg("-c")
        .arg(script)
        .arg(bin())
        .args(args)
        .output()
        .unwrap();
    assert_ne!(output.status.code(), Some(99), "ulimit -v failed");
    output
}

/// The standard error of `hydron validate path` under a 2 GiB `ulimit -v`,
/// which must end in exit 5 (a damaged file: a malformed footer).
fn validate_damaged_under_2_gib(path: &Path) -> String {
    let output = under_limit(2 << 20, &[Path::new("validate"), path]);
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(
        output.status.code(),
        Some(5),
        "{:?}\n{stderr}",
        output.status
    );
    stderr
}

/// A pyarrow file of 4 vectors whose `vector` group claims 2^31 - 1
/// children: the parquet crate reserved 16 GiB for them before reading
/// one, and the tool died of SIGABRT under 2 GiB.
#[test]
fn a_schema_claiming_2_pow_31_children_is_a_typed_error_under_a_2_gib_limit() {
    let bomb = regression("parquet_decode-num-children-2-pow-31-minus-1");
    let stderr = validate_damaged_under_2_gib(&bomb);
    assert!(
        stderr.contains(
            "Parquet: malformed footer: the file metadata is malformed: schema element 1 \
             claims 2147483647 children, more than the 2 schema elements left for them \
             (at byte 28 of the footer)"
        ),
        "{stderr}"
    );
    assert!(!stderr.contains("memory allocation"), "{stderr}");
}

/// A Thrift compact varint.
fn varint(mut n: u64, out: &mut Vec<u8>) {
    while n >= 0x80 {
        out.push((n as u8) | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}

/// A Parquet file of a footer alone whose schema is a chain of `depth`
/// required groups (`g`, one child each) under the root, ending in a
/// `FLOAT` leaf; 8 bytes a level.
fn nested_schema_file(depth: usize) -> Vec<u8> {
    let mut footer = vec![0x15, 0x04, 0x19, 0xfc]; // version 2; schema: a list
    varint(depth as u64 + 2, &mut footer);
    footer.extend([0x48, 0x01, b'r', 0x15, 0x02, 0x00]); // root: name, 1 child
    for _ in 0..depth {
        // repetition REQUIRED, name "g", 1 child
        footer.extend([0x35, 0x00, 0x18, 0x01, b'g', 0x15, 0x02, 0x00]);
    }
    // type FLOAT, repetition REQUIRED, name "x"
    footer.extend([0x15, 0x08, 0x25, 0x00, 0x18, 0x01, b'x', 0x00]);
    footer.extend([0x16, 0x00, 0x19, 0x0c, 0x00]); // 0 rows, no row groups
    let mut file = b"PAR1".to_vec();
    file.extend(&footer);
    file.extend((footer.len() as u32).to_le_bytes());
    file.extend(b"PAR1");
    file
}

/// A schema nested 200,000 deep: the parquet crate builds the tree by
/// recursion, and the tool died of a stack overflow (SIGABRT).
#[test]
fn a_schema_nested_200_000_deep_is_a_typed_error_not_a_stack_overflow() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("deep.parquet");
    std::fs::write(&path, nested_schema_file(200_000)).unwrap();
    let stderr = validate_damaged_under_2_gib(&path);
    assert!(
        stderr.contains(
            "malformed footer: the file metadata is malformed: the schema is nested more \
             than 100 levels deep, counting the root (element 100, at byte "
        ),
        "{stderr}"
    );
}
