//! Sizes at fory's limits: a message over fory's default 128 MiB graph
//! limit decodes, and data beyond fory's 32-bit lengths is an encode error,
//! never a silent truncation.
#![cfg(feature = "fory-messages")]

use hydron_codec::fory::{self as hfory, MAX_BATCH_LEN, MAX_CODES_LEN};
use hydron_codec::{CodecError, Policy};
use hydron_core::{E8Root, Gf8};

/// A vector of `n` all-zero values without touching their memory: the pages
/// of a zeroed allocation are mapped lazily, so 4 GiB costs nothing until
/// read.
///
/// # Safety
///
/// The all-zero bit pattern must be a valid `T`.
unsafe fn zeroed_vec<T>(n: usize) -> Vec<T> {
    let layout = std::alloc::Layout::array::<T>(n).unwrap();
    // SAFETY: the layout has a non-zero size (n > 0 in every use here).
    let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
    assert!(
        !ptr.is_null(),
        "allocation of {} bytes failed",
        layout.size()
    );
    // SAFETY: the allocation was made with the layout of `n` `T`s by the
    // global allocator, and every element is initialized to all-zero bytes,
    // a valid `T` by the caller's promise.
    unsafe { Vec::from_raw_parts(ptr.cast::<T>(), n, n) }
}

#[test]
#[cfg(target_pointer_width = "64")]
fn more_than_fory_can_describe_is_an_encode_error() {
    // SAFETY: all-zero bytes are `Gf8::ZERO`.
    let too_many: Vec<Gf8> = unsafe { zeroed_vec(MAX_BATCH_LEN + 1) };
    let err = hfory::try_encode_batch(&too_many).unwrap_err();
    assert_eq!(
        err.to_string(),
        "cannot encode 4294967296 bytes: a fory float32 array (32-bit byte length) holds at most 4294967264 bytes"
    );
    let mut buf = vec![7];
    assert!(hfory::try_encode_batch_into(&too_many, &mut buf).is_err());
    assert_eq!(buf, [7], "the buffer is left unchanged");
    let panicked = std::panic::catch_unwind(|| hfory::encode_batch(&too_many)).is_err();
    assert!(panicked, "encode_batch documents a panic, not a truncation");
    drop(too_many);

    // SAFETY: `E8Root` is a transparent `u8`, and 0 is a valid code.
    let too_many: Vec<E8Root> = unsafe { zeroed_vec(MAX_CODES_LEN + 1) };
    let err = hfory::try_encode_codes(&too_many).unwrap_err();
    assert!(
        matches!(
            err,
            CodecError::TooLarge {
                length: 4_294_967_296,
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn a_valid_batch_over_128_mib_decodes() {
    // 129 MiB of coordinates.
    let n = (129 << 20) / 32;
    let v = vec![Gf8::from_scalar(-1.0).unwrap(); n];
    let bytes = hfory::encode_batch(&v);
    assert!(bytes.len() > 128 << 20);
    assert_eq!(
        hfory::decode_batch(&bytes, Policy::Strict).unwrap().len(),
        n
    );

    // Through generic fory too: `Gf8Batch` reads its array itself (backed
    // by input bytes), so even fory's default configuration reads it.
    #[cfg(feature = "fory")]
    {
        let mut stock = fory::Fory::default();
        hfory::register(&mut stock).unwrap();
        let batch = stock.deserialize::<hfory::Gf8Batch>(&bytes).unwrap();
        assert_eq!(batch.0.len(), n);

        // A list of `Gf8` values (a `Vec<Gf8>` field) counts against fory's
        // 128 MiB graph-memory gate: the default configuration refuses it,
        // hydron's configuration raises the gate.
        let list = stock.serialize(&v).unwrap();
        let err = stock.deserialize::<Vec<Gf8>>(&list).unwrap_err();
        assert!(err.to_string().contains("memory"), "{err}");
        let fory = hfory::xlang_fory().unwrap();
        assert_eq!(fory.deserialize::<Vec<Gf8>>(&list).unwrap(), v);
    }
}
