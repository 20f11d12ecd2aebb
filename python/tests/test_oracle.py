"""The native module agrees with the independent reading of the spec in
tests/oracle (binary messages and files), on golden and random data."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hydron

import oracle
from conftest import GOLDEN, bits, unit_vectors


@pytest.mark.parametrize("name", ["gf8_batch.bin", "gf8_batch_schema.bin", "gf8_batch_empty.bin",
                                  "gf8_batch_empty_schema.bin"])
def test_golden_batches(name):
    data = (GOLDEN / name).read_bytes()
    assert (bits(oracle.batch(data)) == bits(hydron.decode_batch(data))).all()


def test_golden_codes():
    for name in ["e8_codes.bin", "e8_codes_schema.bin"]:
        data = (GOLDEN / name).read_bytes()
        assert (oracle.codes(data) == hydron.decode_codes(data)).all()


@settings(max_examples=30, deadline=None)
@given(n=st.integers(0, 300), chunk=st.integers(1, 70), seed=st.integers(0, 2**32 - 1))
def test_random_messages_and_files(n, chunk, seed):
    v = unit_vectors(n, seed=seed)
    msg = hydron.encode_batch(v)
    assert (bits(oracle.batch(msg)) == bits(v)).all()
    c = np.random.default_rng(seed).integers(0, 240, n).astype(np.uint8)
    assert (oracle.codes(hydron.encode_codes(c)) == c).all()
    data = hydron.dumps(v, "fory", chunk_vectors=chunk)
    out, sizes = oracle.container(data)
    assert (bits(out) == bits(v)).all()
    assert sizes == [min(chunk, n - i) for i in range(0, n, chunk)]
