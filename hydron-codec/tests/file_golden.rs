//! Golden bytes of the file container, byte for byte as `docs/format.md`
//! spells them out. The binary bytes are also written by an independent
//! implementation of that document in plain Python (`write_container` in
//! `python/tests/oracle`, zlib.crc32 and struct.pack), which
//! `python/tests/test_golden_container.py` checks against `BINARY` below.
//! If this test fails, the format changed, and so must its version.
#![cfg(any(feature = "fory-messages", feature = "json"))]

use hydron_codec::file::{self, FileOptions, Format};
use hydron_codec::Policy;
use hydron_core::Gf8;

/// Three vectors, written with chunks of 2: two chunks.
fn example() -> Vec<Gf8> {
    vec![
        Gf8::try_new([1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]).unwrap(),
        Gf8::try_new([0.0, -0.6, 0.0, 0.0, 0.0, 0.0, 0.0, 0.8]).unwrap(),
        Gf8::ZERO,
    ]
}

fn options() -> FileOptions {
    FileOptions::new().with_chunk_vectors(2)
}

#[cfg(feature = "fory-messages")]
const BINARY: &[&str] = &[
    "89 48 59 44 0d 0a 1a 0a 01 00 00 00 02 00 00 00",
    "a5 da 27 23 43 48 4e 4b 00 00 00 00 00 00 00 00",
    "02 00 00 00 56 00 00 00 f8 c3 02 36 01 ff 1c 00",
    "09 10 59 db cf 8d 66 5c c1 e1 12 4c 37 54 0b a1",
    "24 40 00 00 80 3f 00 00 00 00 00 00 00 00 00 00",
    "00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00",
    "00 00 00 00 00 00 9a 99 19 bf 00 00 00 00 00 00",
    "00 00 00 00 00 00 00 00 00 00 00 00 00 00 cd cc",
    "4c 3f 7f 4e 1f 36 43 48 4e 4b 01 00 00 00 00 00",
    "00 00 01 00 00 00 36 00 00 00 89 a2 c3 2d 01 ff",
    "1c 00 09 10 59 db cf 8d 66 5c c1 e1 12 4c 37 54",
    "0b a1 24 20 00 00 00 00 00 00 00 00 00 00 00 00",
    "00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00",
    "00 00 00 00 8c bf d0 64 54 41 49 4c 02 00 00 00",
    "00 00 00 00 03 00 00 00 00 00 00 00 3f 50 13 8d",
];

#[cfg(feature = "fory-messages")]
#[test]
fn binary_bytes_are_golden() {
    let golden: Vec<u8> = BINARY
        .iter()
        .flat_map(|row| row.split(' '))
        .map(|b| u8::from_str_radix(b, 16).unwrap())
        .collect();
    assert_eq!(golden.len(), 240);
    let bytes = file::to_vec(&example(), Format::Fory, options()).unwrap();
    assert_eq!(bytes, golden);
    assert_eq!(
        file::from_slice(&golden, Policy::Strict).unwrap(),
        example()
    );
}

#[cfg(feature = "json")]
const TEXT: &str = r#"{"format":"hydron-gf8-jsonl","version":1,"chunk_vectors":2,"crc32":"1139cd86"}
[1.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0]
[0.0,-0.6,0.0,0.0,0.0,0.0,0.0,0.8]
{"chunk":0,"vectors":2,"crc32":"1cee75c6"}
[0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0]
{"chunk":1,"vectors":1,"crc32":"7563ae29"}
{"end":true,"chunks":2,"vectors":3,"crc32":"d10dffca"}
"#;

#[cfg(feature = "json")]
#[test]
fn text_bytes_are_golden() {
    let bytes = file::to_vec(&example(), Format::JsonLines, options()).unwrap();
    assert_eq!(String::from_utf8(bytes).unwrap(), TEXT);
    assert_eq!(
        file::from_slice(TEXT.as_bytes(), Policy::Strict).unwrap(),
        example()
    );
}
