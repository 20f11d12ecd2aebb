"""Python's encoder reproduces the golden fory messages (written by pyfory
1.7.7, checked against Rust by hydron-codec/tests/fory_golden.rs) byte for
byte, and decodes them, both modes."""

import numpy as np
import pytest

import hydron

from conftest import GOLDEN, bits

BATCH = np.array([
    [1, 0, 0, 0, 0, 0, 0, 0],
    [0, 0.6, 0.8, 0, 0, 0, 0, 0],
    [0.5, -0.5, 0.5, -0.5, 0, 0, 0, 0],
    [0, 0, 0, 0, 0, 0, 0, 0],
], dtype=np.float32)
CODES = [0, 1, 111, 112, 239]


def golden(name: str) -> bytes:
    return (GOLDEN / name).read_bytes()


def test_encoding_the_golden_inputs_gives_the_golden_bytes():
    assert hydron.encode_batch(BATCH) == golden("gf8_batch.bin")
    assert hydron.encode_batch(np.zeros((0, 8), np.float32)) == golden("gf8_batch_empty.bin")
    assert hydron.encode_gf8(BATCH[1]) == golden("gf8_single.bin")
    assert hydron.encode_codes(CODES) == golden("e8_codes.bin")


@pytest.mark.parametrize("name", ["gf8_batch.bin", "gf8_batch_schema.bin"])
def test_decoding_golden_batches(name):
    out = hydron.decode_batch(golden(name))
    assert out.dtype == np.float32 and out.shape == (4, 8)
    assert (bits(out) == bits(BATCH)).all()
    assert out.flags.writeable and out.flags.c_contiguous  # a new array, not a view
    out[0, 0] = 2.0
    assert hydron.decode_batch(golden(name))[0, 0] == 1.0


@pytest.mark.parametrize("name", ["gf8_batch_empty.bin", "gf8_batch_empty_schema.bin"])
def test_decoding_golden_empty_batches(name):
    assert hydron.decode_batch(golden(name)).shape == (0, 8)


def test_decoding_golden_single_and_codes():
    assert (bits(hydron.decode_gf8(golden("gf8_single.bin"))) == bits(BATCH[1])).all()
    for name in ["e8_codes.bin", "e8_codes_schema.bin"]:
        codes = hydron.decode_codes(golden(name))
        assert codes.dtype == np.uint8 and codes.tolist() == CODES


def test_hand_layout_equals_pyfory_for_many_sizes():
    """The framing of docs/format.md, built by hand, is what pyfory writes,
    across every width of the length varint."""
    prefix = bytes.fromhex("01ff1c00091059dbcf8d665cc1e1124c37540ba124")
    for n in [0, 1, 3, 4, 5, 511, 512, 65535, 65536]:
        v = np.zeros((n, 8), np.float32)
        v[:, n % 8] = 1
        length, varint = 32 * n, b""
        while True:
            byte = length & 0x7F
            length >>= 7
            varint += bytes([byte | (0x80 if length else 0)])
            if not length:
                break
        assert hydron.encode_batch(v) == prefix + varint + v.tobytes(), n
