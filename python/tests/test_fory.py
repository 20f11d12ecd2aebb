"""Fory messages: round trips, the policy, and bad input (every error is a
HydronError naming what and where; nothing else escapes)."""

import numpy as np
import pytest

import hydron
from hydron import (FormatError, HydronError, InvalidVectorError, TruncatedError)

from conftest import bits, unit_vectors

PREFIX = bytes.fromhex("01ff1c00091059dbcf8d665cc1e1124c37540ba124")


def test_round_trip_keeps_every_bit():
    v = unit_vectors(300)
    out = hydron.decode_batch(hydron.encode_batch(v))
    assert (bits(out) == bits(v)).all()
    for row in v[:10]:
        assert (bits(hydron.decode_gf8(hydron.encode_gf8(row))) == bits(row)).all()


def test_codes_round_trip_and_roots():
    codes = np.arange(240, dtype=np.uint8)
    assert (hydron.decode_codes(hydron.encode_codes(codes)) == codes).all()
    roots = hydron.codes_to_vectors(codes)
    norms = np.sqrt((roots.astype(np.float64) ** 2).sum(axis=1))
    assert np.allclose(norms, 1, atol=1e-6)
    # Codes 0..112: two coordinates ±1/√2; 112..240: all ±1/√8, even minus signs.
    assert ((roots[:112] != 0).sum(axis=1) == 2).all()
    assert ((roots[112:] < 0).sum(axis=1) % 2 == 0).all()
    assert len({r.tobytes() for r in roots}) == 240


def test_strict_error_names_vector_and_coordinate():
    v = unit_vectors(10)
    v[6, 5] = np.nan
    msg = hydron.encode_batch(v, policy="trusted")
    with pytest.raises(InvalidVectorError) as e:
        hydron.decode_batch(msg)
    assert (e.value.index, e.value.coordinate) == (6, 5)
    assert str(e.value) == "vector 6: coordinate 5 is NaN"
    v[6, 5] = -np.inf
    with pytest.raises(InvalidVectorError, match=r"vector 6: coordinate 5 is infinite \(-inf\)"):
        hydron.decode_batch(hydron.encode_batch(v, policy="trusted"), policy="renormalize")


def test_strict_norm_rule_matches_the_float32_tolerance():
    base = np.zeros((1, 8), np.float32)
    base[0, 0] = 1
    ok = base.copy()
    ok[0, 0] = np.float32(np.sqrt(1 + 1.9e-5))
    bad = base.copy()
    bad[0, 0] = np.float32(np.sqrt(1 + 2.2e-5))
    hydron.decode_batch(hydron.encode_batch(ok))
    with pytest.raises(InvalidVectorError, match=r"vector 0: norm is 1.00001.*expected 1") as e:
        hydron.decode_batch(hydron.encode_batch(bad, policy="trusted"))
    assert e.value.norm == pytest.approx(1.000011, abs=1e-6) and e.value.coordinate is None
    tiny = base * np.float32(1e-30)
    with pytest.raises(InvalidVectorError, match="norm is 1.000000e-30"):
        hydron.decode_batch(hydron.encode_batch(tiny, policy="trusted"))


def test_renormalize_and_trusted():
    v = np.zeros((3, 8), np.float32)
    v[0, :2] = [3, 4]
    v[1, 7] = 1e-30
    msg = hydron.encode_batch(v, policy="trusted")
    out = hydron.decode_batch(msg, policy="renormalize")
    assert out[0, :2].tolist() == [np.float32(0.6), np.float32(0.8)]
    assert out[1, 7] == 1 and not out[2].any()
    assert (hydron.decode_batch(msg, policy=hydron.Policy.TRUSTED) == v).all()
    with pytest.raises(ValueError, match="unknown policy"):
        hydron.decode_batch(msg, policy="lenient")


def test_encoding_checks_by_default():
    v = np.full((2, 8), 0.5, np.float32)  # norm √2
    with pytest.raises(InvalidVectorError, match="vector 0: norm is 1.4142135"):
        hydron.encode_batch(v)
    with pytest.raises(InvalidVectorError, match="E8 root code 240"):
        hydron.encode_codes([1, 240])
    with pytest.raises(ValueError, match=r"shape \(N, 8\) or \(8,\), got \(2, 7\)"):
        hydron.encode_batch(np.zeros((2, 7), np.float32))


def test_truncation_at_every_byte_is_truncated():
    msg = hydron.encode_batch(unit_vectors(5))
    for cut in range(len(msg)):
        with pytest.raises(TruncatedError):
            hydron.decode_batch(msg[:cut])
    codes = hydron.encode_codes([5, 6, 7])
    for cut in range(len(codes)):
        with pytest.raises(TruncatedError):
            hydron.decode_codes(codes[:cut])
    single = hydron.encode_gf8(unit_vectors(1)[0])
    for cut in range(len(single)):
        with pytest.raises(TruncatedError):
            hydron.decode_gf8(single[:cut])


def test_trailing_bytes_are_an_error():
    msg = hydron.encode_batch(unit_vectors(2))
    with pytest.raises(FormatError, match="1 trailing bytes after the end of the message at byte offset 86"):
        hydron.decode_batch(msg + b"\0")
    with pytest.raises(FormatError, match="trailing"):
        hydron.decode_gf8(hydron.encode_gf8(unit_vectors(1)[0]) + b"xx")


def test_wrong_header_type_id_and_kind():
    msg = bytearray(hydron.encode_batch(unit_vectors(1)))
    with pytest.raises(FormatError, match="byte offset 0: found 0x89") as e:
        hydron.decode_batch(b"\x89PNG" + bytes(msg[4:]))
    assert e.value.offset == 0
    bad = bytearray(msg)
    bad[13] = 0xE2  # type id 2402
    with pytest.raises(FormatError, match=r"byte offset 13: fory user type id 2402, expected 2401 \(Gf8Batch\)"):
        hydron.decode_batch(bytes(bad))
    with pytest.raises(FormatError, match=r"type id 2402, expected 2401 \(Gf8Batch\)"):
        hydron.decode_batch(hydron.encode_codes([1]))
    with pytest.raises(FormatError, match=r"type id 2401, expected 2402 \(E8Codes\)"):
        hydron.decode_codes(bytes(msg))
    # A native-mode header byte (0x00) is accepted, anything else is not.
    msg[0] = 0
    hydron.decode_batch(bytes(msg))
    msg[0] = 2
    with pytest.raises(FormatError, match="byte offset 0"):
        hydron.decode_batch(bytes(msg))


@pytest.mark.parametrize("varint, error", [
    (b"\xe0\xff\xff\xff\x0f", TruncatedError),        # 2^32 - 32 bytes claimed, none there
    (b"\x80\x80\x80\x80\x10", FormatError),           # does not fit in 32 bits
    (b"\x80\x80\x80\x80\x80\x08", FormatError),       # 6 bytes (fory reads 2^40 as 0)
    (b"\xa0\x00", FormatError),                       # 32, not in its shortest form
    (b"\x21", FormatError),                           # 33: not whole floats
    (b"\x24", FormatError),                           # 36: not whole vectors
])
def test_bad_length_prefixes(varint, error):
    with pytest.raises(error):
        hydron.decode_batch(PREFIX + varint + bytes(32))


def test_oversized_length_does_not_allocate():
    # A 4 GiB claim in a tiny message: rejected before any allocation (a
    # MemoryError or a slow test would show otherwise).
    with pytest.raises(TruncatedError, match="needs 4294967264 bytes, only 0 remain"):
        hydron.decode_batch(PREFIX + b"\xe0\xff\xff\xff\x0f")
    codes_prefix = hydron.encode_codes([])[:-1]
    with pytest.raises(TruncatedError, match="needs 4294967295 bytes"):
        hydron.decode_codes(codes_prefix + b"\xff\xff\xff\xff\x0f")


def test_code_out_of_range_names_its_index():
    msg = bytearray(hydron.encode_codes([3, 4, 5]))
    msg[-2] = 250
    with pytest.raises(InvalidVectorError, match="vector 1: E8 root code 250 is out of range") as e:
        hydron.decode_codes(bytes(msg))
    assert (e.value.index, e.value.code) == (1, 250)


def test_random_damage_never_escapes_as_another_exception():
    rng = np.random.default_rng(3)
    msgs = [hydron.encode_batch(unit_vectors(3)), hydron.encode_codes([1, 2, 3]),
            hydron.encode_gf8(unit_vectors(1)[0])]
    decoders = [hydron.decode_batch, hydron.decode_codes, hydron.decode_gf8]
    for _ in range(3000):
        msg = bytearray(msgs[rng.integers(3)])
        for _ in range(rng.integers(1, 4)):
            msg[rng.integers(len(msg))] = rng.integers(256)
        if rng.integers(4) == 0:
            msg = msg[:rng.integers(len(msg) + 1)]
        for decode in decoders:
            try:
                decode(bytes(msg))
            except HydronError:
                pass


def test_non_bytes_input_is_a_type_error():
    with pytest.raises(TypeError, match="bytes-like"):
        hydron.decode_batch("not bytes")


def test_an_invalid_vector_in_a_message_has_its_byte_offset():
    for n in [5, 200]:  # one-byte and two-byte length prefixes
        v = unit_vectors(n)
        v[3, 2] = np.nan
        msg = hydron.encode_batch(v, policy="trusted")
        with pytest.raises(InvalidVectorError, match="vector 3: coordinate 2 is NaN") as e:
            hydron.decode_batch(msg)
        at = e.value.offset
        assert (e.value.index, e.value.coordinate) == (3, 2)
        assert np.isnan(np.frombuffer(msg, "<f4", count=8, offset=at)[2])
        assert at == len(msg) - 32 * (n - 3)
