"""JSON numbers: shortest float32 spelling as serde_json writes it, and
exact decimal-to-float32 reading (no double rounding)."""

from decimal import Decimal, getcontext
from fractions import Fraction

import numpy as np
import pytest

from hydron.json import format_f32, format_row, parse_row, rows_to_f32

from conftest import bits


@pytest.mark.parametrize("value, text", [
    (0.0, "0.0"), (-0.0, "-0.0"), (1.0, "1.0"), (-0.6, "-0.6"), (0.70710677, "0.70710677"),
    (1e-45, "1e-45"), (3.4028235e38, "3.4028235e+38"), (1e16, "1e+16"), (1.5e16, "1.5e+16"),
    (123456789.0, "123456790.0"), (1e12, "1000000000000.0"), (1e13, "1e+13"),
    (1e-6, "0.000001"), (1.234e-5, "0.00001234"), (1e-7, "1e-7"), (1.234e-7, "1.234e-7"),
    (1.17549435e-38, "1.1754944e-38"), (12.5, "12.5"), (16777216.0, "16777216.0"),
])
def test_format_matches_serde_json(value, text):
    """Spellings checked against serde_json 1.0.154 (the version in Cargo.lock)."""
    assert format_f32(value) == text


def test_format_refuses_non_finite():
    with pytest.raises(ValueError, match="non-finite"):
        format_f32(np.nan)


def _read(texts):
    rows = [parse_row(t) for t in texts]
    return rows_to_f32(np.array(rows), lambda r: texts[r])


def test_every_spelling_reads_back_to_the_same_bits():
    rng = np.random.default_rng(11)
    raw = rng.integers(0, 2**32, size=(4000, 8), dtype=np.uint64).astype(np.uint32)
    values = raw.view(np.float32)
    values[~np.isfinite(values)] = 0
    texts = [format_row(row).encode() for row in values]
    assert (bits(_read(texts)) == bits(values)).all()


def test_midpoints_round_once_to_nearest_even():
    """Decimals exactly at, just below and just above the midpoint between
    two float32 values, where going through float64 would round twice."""
    getcontext().prec = 200
    rng = np.random.default_rng(5)
    for raw in rng.integers(1, 0x7F7FFFFF, size=300):
        lo = np.array([raw], np.uint32).view(np.float32)[0]
        hi = np.nextafter(lo, np.float32(np.inf))
        mid = (Fraction(float(lo)) + Fraction(float(hi))) / 2
        even = lo if raw % 2 == 0 else hi
        eps = mid / 10**40
        for d, want in [(mid, even), (mid - eps, lo), (mid + eps, hi)]:
            text = str(Decimal(d.numerator) / Decimal(d.denominator)).encode()
            row = b"[" + text + b",0,0,0,0,0,0,0]"
            assert bits(_read([row])[0, 0]) == bits(want), text


def test_range_limits():
    top = "340282356779733661637539395458142568448"  # 2^128 - 2^103: rounds up, out of range
    below = "340282356779733661637539395458142568447"
    cases = {top: np.inf, below: np.float32(3.4028235e38), "1e39": np.inf, "-1e39": -np.inf,
             "7e-46": 0.0, "8e-46": np.float32(1e-45), "-0": -0.0, "1e-99999": 0.0}
    for text, want in cases.items():
        got = _read([b"[" + text.encode() + b",0,0,0,0,0,0,0]"])[0, 0]
        assert bits(got) == bits(np.float32(want)), text


@pytest.mark.parametrize("text", [
    b"[1,2,3,4,5,6,7]", b"[1,2,3,4,5,6,7,8,9]", b"[01,0,0,0,0,0,0,0]", b"[+1,0,0,0,0,0,0,0]",
    b"[.5,0,0,0,0,0,0,0]", b"[1.,0,0,0,0,0,0,0]", b"[inf,0,0,0,0,0,0,0]", b"[null,0,0,0,0,0,0,0]",
    b'["1",0,0,0,0,0,0,0]', b"[1,0,0,0,0,0,0,0],", b"[1 0,0,0,0,0,0,0]", b"", b"[",
    b"[1_0,0,0,0,0,0,0,0]", b"[\xff,0,0,0,0,0,0,0]",
])
def test_not_json_arrays_of_8_numbers(text):
    with pytest.raises(ValueError, match="JSON error at line 4, column"):
        parse_row(text, line=4)
