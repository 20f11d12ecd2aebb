//! Properties of the fory decoders on arbitrary input: they return a value
//! or a typed error, never panic, never allocate more than the input can
//! justify, and never accept an invalid vector under `Policy::Strict`.
//! (Under `fory`, generic fory reads and writes the same bytes.)
#![cfg(feature = "fory-messages")]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use hydron_codec::fory as hfory;
#[cfg(feature = "fory")]
use hydron_codec::fory::{E8Codes, Gf8Batch};
use hydron_codec::{CodecError, Policy};
use hydron_core::{E8Root, Gf8};
use proptest::prelude::*;

/// The system allocator, recording the largest single allocation made by
/// the current thread while [`largest_allocation`] watches.
struct Watch;

thread_local! {
    static WATCHING: Cell<bool> = const { Cell::new(false) };
    static LARGEST: Cell<usize> = const { Cell::new(0) };
}

// SAFETY: every call is forwarded unchanged to `System`; the bookkeeping
// only touches const-initialized thread-locals, which never allocate.
unsafe impl GlobalAlloc for Watch {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        // SAFETY: the caller upholds `GlobalAlloc::alloc`'s contract.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        // SAFETY: as above.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note(new_size);
        // SAFETY: as above.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Watch = Watch;

fn note(size: usize) {
    // `try_with`: thread-locals may already be gone while a thread exits.
    let _ = WATCHING.try_with(|w| {
        if w.get() {
            let _ = LARGEST.try_with(|l| l.set(l.get().max(size)));
        }
    });
}

/// Runs `f` and returns its result with the largest allocation it made.
fn largest_allocation<T>(f: impl FnOnce() -> T) -> (T, usize) {
    LARGEST.with(|l| l.set(0));
    WATCHING.with(|w| w.set(true));
    let out = f();
    WATCHING.with(|w| w.set(false));
    (out, LARGEST.with(Cell::get))
}

/// Every decoder on `input`: each returns Ok or a typed error, allocates at
/// most about the input's size, and Strict results are valid.
fn check_all_decoders(input: &[u8]) {
    // Error values own at most a short message; data allocations must be
    // backed by input bytes one for one.
    let limit = input.len() + 256;
    for policy in [Policy::Strict, Policy::Renormalize, Policy::Trusted] {
        let (result, largest) = largest_allocation(|| hfory::decode_batch(input, policy));
        assert!(
            largest <= limit,
            "decode_batch allocated {largest} for {} bytes",
            input.len()
        );
        match result {
            Ok(v) => {
                assert!(32 * v.len() <= input.len());
                if policy != Policy::Trusted {
                    assert!(hydron_core::batch::validate(Gf8::slice_as_arrays(&v)).is_ok());
                }
            }
            Err(e) => assert_typed(&e),
        }
        let before = vec![Gf8::ZERO; 2];
        let mut out = before.clone();
        let (result, largest) =
            largest_allocation(|| hfory::decode_batch_into(input, policy, &mut out));
        assert!(
            largest <= limit + 64,
            "decode_batch_into allocated {largest}"
        );
        match result {
            Ok(()) => assert_eq!(out[..2], before[..]),
            Err(e) => {
                assert_typed(&e);
                assert_eq!(out, before, "out changed on error");
            }
        }
        let (result, largest) = largest_allocation(|| hfory::decode_gf8(input, policy));
        assert!(largest <= limit, "decode_gf8 allocated {largest}");
        match result {
            Ok(v) if policy != Policy::Trusted => assert!(Gf8::check(v.as_array()).is_ok()),
            Ok(_) => {}
            Err(e) => assert_typed(&e),
        }
    }
    let (result, largest) = largest_allocation(|| hfory::decode_codes(input));
    assert!(largest <= limit, "decode_codes allocated {largest}");
    match result {
        Ok(codes) => assert!(codes.len() <= input.len()),
        Err(e) => assert_typed(&e),
    }
}

/// The error is one of the documented decoding causes, and its message is
/// a sentence with a location in it.
fn assert_typed(e: &CodecError) {
    let located = match e {
        CodecError::InvalidVector { .. } => e.to_string().starts_with("vector "),
        CodecError::UnexpectedEnd { .. }
        | CodecError::TrailingBytes { .. }
        | CodecError::WrongHeader { .. }
        | CodecError::WrongTypeId { .. }
        | CodecError::BadLength { .. }
        | CodecError::BadVarint { .. } => e.to_string().contains("byte offset"),
        other => panic!("unexpected error kind from a fory decoder: {other:?}"),
    };
    assert!(located, "message without a location: {e}");
}

fn gf8() -> impl Strategy<Value = Gf8> {
    prop_oneof![
        Just(Gf8::ZERO),
        prop::array::uniform8(-1.0f32..1.0).prop_filter_map("zero", |c| {
            Gf8::normalize(c).ok().filter(|g| !g.is_zero())
        }),
    ]
}

fn roots() -> impl Strategy<Value = Vec<E8Root>> {
    prop::collection::vec(0u8..240, 0..300)
        .prop_map(|c| c.into_iter().map(|c| E8Root::new(c).unwrap()).collect())
}

/// A valid message of any kind.
fn valid_message() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        prop::collection::vec(gf8(), 0..40).prop_map(|v| hfory::encode_batch(&v)),
        gf8().prop_map(hfory::encode_gf8),
        roots().prop_map(|r| hfory::encode_codes(&r)),
    ]
}

#[derive(Debug, Clone)]
enum Mutation {
    Set(prop::sample::Index, u8),
    Flip(prop::sample::Index, u8),
    Truncate(prop::sample::Index),
    Insert(prop::sample::Index, Vec<u8>),
    Remove(prop::sample::Index),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<prop::sample::Index>(), any::<u8>()).prop_map(|(i, b)| Mutation::Set(i, b)),
        (any::<prop::sample::Index>(), 0u8..8).prop_map(|(i, b)| Mutation::Flip(i, b)),
        any::<prop::sample::Index>().prop_map(Mutation::Truncate),
        (
            any::<prop::sample::Index>(),
            prop::collection::vec(any::<u8>(), 1..6)
        )
            .prop_map(|(i, b)| Mutation::Insert(i, b)),
        any::<prop::sample::Index>().prop_map(Mutation::Remove),
    ]
}

fn mutate(bytes: &mut Vec<u8>, m: &Mutation) {
    if bytes.is_empty() {
        return;
    }
    match m {
        Mutation::Set(i, b) => {
            let i = i.index(bytes.len());
            bytes[i] = *b;
        }
        Mutation::Flip(i, bit) => {
            let i = i.index(bytes.len());
            bytes[i] ^= 1 << bit;
        }
        Mutation::Truncate(i) => bytes.truncate(i.index(bytes.len())),
        Mutation::Insert(i, b) => {
            let i = i.index(bytes.len() + 1);
            bytes.splice(i..i, b.iter().copied());
        }
        Mutation::Remove(i) => {
            bytes.remove(i.index(bytes.len()));
        }
    }
}

#[test]
fn the_allocation_watch_sees_allocations() {
    let (v, largest) = largest_allocation(|| vec![1u8; 100_000]);
    assert_eq!(v.len(), 100_000);
    assert!(largest >= 100_000);
    let (_, largest) = largest_allocation(|| 1 + 1);
    assert_eq!(largest, 0);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn random_bytes_never_panic(input in prop::collection::vec(any::<u8>(), 0..200)) {
        check_all_decoders(&input);
    }

    #[test]
    fn random_bytes_after_a_valid_header_never_panic(
        header in prop::sample::select(vec![0usize, 1, 2]),
        tail in prop::collection::vec(any::<u8>(), 0..200),
    ) {
        // Start from each message's real framing, so that the length and
        // data checks are reached, not just the header check.
        let mut input = match header {
            0 => hfory::encode_batch(&[]),
            1 => hfory::encode_codes(&[]),
            _ => hfory::encode_gf8(Gf8::ZERO)[..5].to_vec(),
        };
        if header < 2 {
            input.pop(); // the length varint
        }
        input.extend_from_slice(&tail);
        check_all_decoders(&input);
    }

    #[test]
    fn mutated_valid_messages_never_panic(
        message in valid_message(),
        mutations in prop::collection::vec(mutation(), 1..4),
    ) {
        let mut bytes = message;
        for m in &mutations {
            mutate(&mut bytes, m);
        }
        check_all_decoders(&bytes);
    }

    #[test]
    fn batches_round_trip_bit_for_bit(v in prop::collection::vec(gf8(), 0..100)) {
        let bytes = hfory::encode_batch(&v);
        prop_assert_eq!(bytes.len(), 21 + if 32 * v.len() < 128 { 1 } else { 2 } + 32 * v.len());
        for policy in [Policy::Strict, Policy::Renormalize, Policy::Trusted] {
            let back = hfory::decode_batch(&bytes, policy).unwrap();
            prop_assert_eq!(
                bytemuck::cast_slice::<Gf8, u32>(&back),
                bytemuck::cast_slice::<Gf8, u32>(&v)
            );
        }
        // fory itself reads and writes the same bytes.
        #[cfg(feature = "fory")]
        {
            let fory = hfory::xlang_fory().unwrap();
            prop_assert_eq!(&fory.serialize(&Gf8Batch(v.clone())).unwrap(), &bytes);
            prop_assert_eq!(fory.deserialize::<Gf8Batch>(&bytes).unwrap(), Gf8Batch(v.clone()));
        }
    }

    #[test]
    fn singles_and_codes_round_trip(v in gf8(), r in roots()) {
        let bytes = hfory::encode_gf8(v);
        prop_assert_eq!(hfory::decode_gf8(&bytes, Policy::Strict).unwrap().to_array().map(f32::to_bits), v.to_array().map(f32::to_bits));
        let bytes = hfory::encode_codes(&r);
        prop_assert_eq!(&hfory::decode_codes(&bytes).unwrap(), &r);
        #[cfg(feature = "fory")]
        {
            let fory = hfory::xlang_fory().unwrap();
            prop_assert_eq!(fory.serialize(&E8Codes(r.clone())).unwrap(), bytes);
        }
    }

    #[test]
    fn strict_rejects_exactly_the_invalid_vectors(
        v in prop::collection::vec(gf8(), 1..50),
        at in any::<prop::sample::Index>(),
        coords in prop::array::uniform8(prop_oneof![any::<f32>(), -2.0f32..2.0]),
    ) {
        let i = at.index(v.len());
        let mut bytes = hfory::encode_batch(&v);
        let start = bytes.len() - 32 * (v.len() - i);
        for (k, x) in coords.iter().enumerate() {
            bytes[start + 4 * k..start + 4 * k + 4].copy_from_slice(&x.to_le_bytes());
        }
        match (Gf8::check(&coords), hfory::decode_batch(&bytes, Policy::Strict)) {
            (Ok(()), Ok(back)) => prop_assert_eq!(back[i].to_array().map(f32::to_bits), coords.map(f32::to_bits)),
            (Err(want), Err(CodecError::InvalidVector { index, error })) => {
                prop_assert_eq!(index, i as u64);
                prop_assert_eq!(error, want);
            }
            (want, got) => prop_assert!(false, "check says {:?}, decode says {:?}", want, got),
        }
    }
}
