"""JSON and JSON Lines messages (docs/format.md section 1) through the Rust
codec: exact float32 round trips, and errors that say where."""

import numpy as np
import pytest

import hydron
from hydron import FormatError, InvalidVectorError

from conftest import bits, unit_vectors


def test_json_round_trip_is_bit_exact():
    v = unit_vectors(200)
    text = hydron.encode_json(v)
    assert isinstance(text, bytes) and text.startswith(b"[[0.0,0.0,")
    assert (bits(hydron.decode_json(text)) == bits(v)).all()
    assert (bits(hydron.decode_json(text.decode())) == bits(v)).all()  # str works too
    assert hydron.decode_json(b"[]").shape == (0, 8)
    assert hydron.encode_json(np.zeros((0, 8), np.float32)) == b"[]"


def test_jsonl_round_trip_is_bit_exact():
    v = unit_vectors(50)
    text = hydron.encode_jsonl(v)
    assert text.count(b"\n") == 50
    assert (bits(hydron.decode_jsonl(text)) == bits(v)).all()
    assert (bits(hydron.decode_jsonl(bytearray(text))) == bits(v)).all()


def test_json_errors_name_line_and_column():
    with pytest.raises(FormatError, match="line 1, column 5: vector 0, coordinate 1: expected value") as e:
        hydron.decode_json(b"[[0,NaN,0,0,0,0,0,1]]")
    assert (e.value.line, e.value.column) == (1, 5)
    with pytest.raises(FormatError, match="invalid length 7"):
        hydron.decode_json(b"[[1,0,0,0,0,0,0]]")
    with pytest.raises(InvalidVectorError, match="vector 1: norm is 2") as e:
        hydron.decode_json(b"[[1,0,0,0,0,0,0,0],[2,0,0,0,0,0,0,0]]")
    assert e.value.index == 1
    out = hydron.decode_json(b"[[2,0,0,0,0,0,0,0]]", policy="renormalize")
    assert out.tolist() == [[1, 0, 0, 0, 0, 0, 0, 0]]


def test_jsonl_errors_name_the_line():
    text = b"[1,0,0,0,0,0,0,0]\n[0,1,0,0,0,0,0,0]\n[0,0,3,0,0,0,0,0]\n"
    with pytest.raises(InvalidVectorError, match="line 3 \\(vector 2\\): norm is 3") as e:
        hydron.decode_jsonl(text)
    assert (e.value.line, e.value.index) == (3, 2)
    with pytest.raises(FormatError, match="line 2") as e:
        hydron.decode_jsonl(b"[1,0,0,0,0,0,0,0]\n[0,1,0\n")
    assert e.value.line == 2


def test_encoders_check_by_policy():
    v = unit_vectors(3)
    v[1, 2] = np.inf
    for encode in (hydron.encode_json, hydron.encode_jsonl):
        with pytest.raises(InvalidVectorError, match="vector 1: coordinate 2 is infinite"):
            encode(v)
    with pytest.raises(TypeError, match="bytes-like"):
        hydron.decode_jsonl(12)


@pytest.mark.parametrize("encode", [hydron.encode_json, hydron.encode_jsonl])
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_trusted_non_finite_vectors_are_refused_not_written_as_null(encode, bad):
    # JSON has no NaN or infinity; with policy="trusted" they reached the
    # writer, which wrote `null` and returned text no reader accepts.
    v = np.zeros((3, 8), np.float32)
    v[2, 5] = bad
    with pytest.raises(InvalidVectorError) as e:
        encode(v, policy="trusted")
    assert (e.value.index, e.value.coordinate) == (2, 5)
    v[2, 5] = 3.0                      # finite but not unit: trusted writes it
    assert (bits(hydron.loads(hydron.dumps(v, "jsonl", policy="trusted"),
                              policy="trusted")) == bits(v)).all()
    assert (bits(hydron.decode_jsonl(hydron.encode_jsonl(v, policy="trusted"),
                                     policy="trusted")) == bits(v)).all()
