"""JSON numbers and vector lines, as hydron's Rust codec writes and reads
them (``docs/format.md``, section 1).

- :func:`format_f32` writes the shortest decimal that reads back to the same
  float32, spelled exactly as Rust's serde_json does (``1.0``, ``-0.6``,
  ``0.70710677``, ``1e-45``, ``3.4028235e+38``), so Python and Rust write
  byte-identical text files.
- :func:`parse_rows` reads numbers by rounding their exact decimal value once
  to the nearest float32 (ties to even), not via float64 and then float32
  (which can be off by one ulp when the float64 lands on a float32 midpoint;
  those rare cases are redone exactly). A number beyond the float32 range
  is an error, never an infinity.
"""

from __future__ import annotations

import re
from fractions import Fraction

import numpy as np

from .errors import FormatError, HydronError

__all__ = ["format_f32", "format_row", "parse_row", "rows_to_f32", "overflow_error"]

_WS = rb"[ \t\n\r]*"
_NUM = rb"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?"
_NUM_RE = re.compile(_NUM)
_ROW_RE = re.compile(
    _WS + rb"\[" + rb",".join([_WS + b"(" + _NUM + b")" + _WS] * 8) + rb"\]" + _WS)
_WS_RE = re.compile(_WS)

_F32_MAX = float(np.finfo(np.float32).max)
# The midpoint between f32::MAX and 2^128: values at or above it round to infinity.
_OVERFLOW_AT = 2.0**128 - 2.0**103


def format_f32(x) -> str:
    """The shortest decimal spelling of a finite float32 that reads back to
    the same bits, as serde_json writes it.

    >>> [format_f32(v) for v in (1.0, -0.6, 0.1, 1e-7, 1e13, 3.4028235e38, -0.0)]
    ['1.0', '-0.6', '0.1', '1e-7', '1e+13', '3.4028235e+38', '-0.0']
    """
    x = np.float32(x)
    if not np.isfinite(x):
        raise HydronError(f"JSON cannot hold the non-finite number {x}")
    if x == 0:
        return "-0.0" if np.signbit(x) else "0.0"
    s = np.format_float_scientific(x, unique=True, trim="-")
    sign = ""
    if s[0] == "-":
        sign, s = "-", s[1:]
    mantissa, exp = s.split("e")
    e = int(exp)
    digits = mantissa.replace(".", "")
    n = len(digits)
    if -7 < e < 13:
        if e < 0:
            return f"{sign}0.{'0' * (-e - 1)}{digits}"
        if n <= e + 1:
            return f"{sign}{digits}{'0' * (e + 1 - n)}.0"
        return f"{sign}{digits[:e + 1]}.{digits[e + 1:]}"
    m = digits if n == 1 else f"{digits[0]}.{digits[1:]}"
    return f"{sign}{m}e{'+' if e >= 0 else '-'}{abs(e)}"


def format_row(row) -> str:
    """One vector as compact JSON, ``[x0,...,x7]``, no newline.

    >>> format_row([0, -0.6, 0, 0, 0, 0, 0, 0.8])
    '[0.0,-0.6,0.0,0.0,0.0,0.0,0.0,0.8]'
    """
    return "[" + ",".join(format_f32(x) for x in np.asarray(row, dtype=np.float32)) + "]"


def _json_error(line: int | None, column: int, message: str) -> FormatError:
    where = f"line {line}, column {column}" if line is not None else f"column {column}"
    return FormatError(f"JSON error at {where}: {message}", line=line, column=column)


def _diagnose(text: bytes, line: int | None, vector: int | None) -> FormatError:
    """Why ``text`` is not an array of 8 JSON numbers (the slow path)."""
    prefix = f"vector {vector}, " if vector is not None else ""

    def err(pos: int, message: str) -> FormatError:
        return _json_error(line, pos + 1, message)

    pos = _WS_RE.match(text).end()
    if pos == len(text):
        return err(pos, f"{prefix.rstrip(', ')}: EOF while parsing a value"
                   if prefix else "EOF while parsing a value")
    if text[pos:pos + 1] != b"[":
        return err(pos, f"{prefix}expected an array of 8 numbers")
    pos += 1
    for c in range(8):
        pos = _WS_RE.match(text, pos).end()
        if text[pos:pos + 1] == b"]":
            return err(pos, f"{prefix}invalid length {c}, expected an array of 8 numbers")
        m = _NUM_RE.match(text, pos)
        if not m:
            word = re.match(rb"[A-Za-z]+", text[pos:])
            hint = ""
            if word and word.group() in (b"NaN", b"nan", b"Infinity", b"inf", b"Inf"):
                hint = " (JSON has no NaN or Infinity)"
            what = "EOF while parsing a value" if pos == len(text) else "expected a number"
            return err(pos, f"{prefix}coordinate {c}: {what}{hint}")
        pos = _WS_RE.match(text, m.end()).end()
        sep = text[pos:pos + 1]
        if c < 7:
            if sep == b"]":
                return err(pos, f"{prefix}invalid length {c + 1}, expected an array of 8 numbers")
            if sep != b",":
                return err(pos, f"{prefix}coordinate {c}: expected ',' or ']'")
            pos += 1
    if sep == b",":
        return err(pos, f"{prefix}invalid length 9 or more, expected an array of 8 numbers")
    if sep != b"]":
        return err(pos, f"{prefix}expected ']'")
    pos = _WS_RE.match(text, pos + 1).end()
    return err(pos, "trailing characters")


def parse_row(text: bytes, *, line: int | None = None, vector: int | None = None) -> list[float]:
    """Parses one JSON array of exactly 8 numbers; returns them as Python
    floats (float64, not yet rounded to float32: use :func:`rows_to_f32`).

    Raises :class:`FormatError` with the line (if given) and column.

    >>> parse_row(b' [1, 0, -0, 0.5e0, 0, 0, 0, 0] ')
    [1.0, 0.0, -0.0, 0.5, 0.0, 0.0, 0.0, 0.0]
    """
    m = _ROW_RE.fullmatch(text)
    if m is None:
        raise _diagnose(text, line, vector)
    return [float(g) for g in m.groups()]


def _exact_to_f32(text: bytes) -> float | None:
    """The float32 nearest to the decimal ``text`` (ties to even), exactly;
    None if it rounds beyond the float32 range."""
    a = Fraction(text.decode("ascii"))
    negative = text.startswith(b"-")
    a = abs(a)
    with np.errstate(over="ignore"):
        c = np.float32(float(a))  # within one float32 step of the answer
    lo = c if np.isfinite(c) else np.float32(_F32_MAX)
    if Fraction(float(lo)) > a:
        lo = np.nextafter(lo, np.float32(0))
    with np.errstate(over="ignore"):
        hi = np.nextafter(lo, np.float32(np.inf))
    hi_value = Fraction(float(hi)) if np.isfinite(hi) else Fraction(2**128)
    mid = (Fraction(float(lo)) + hi_value) / 2
    if a < mid or (a == mid and not int(lo.view(np.uint32)) & 1):
        result = float(lo)
    elif np.isfinite(hi):
        result = float(hi)
    else:
        return None
    return -result if negative else result


def rows_to_f32(values: np.ndarray, texts) -> np.ndarray:
    """Rounds parsed rows (an (N, 8) float64 array from :func:`parse_row`)
    to float32 exactly as a direct decimal-to-float32 conversion would;
    numbers beyond the float32 range become infinities (which the caller
    reports as errors).

    ``texts(i)`` must return the JSON text of row ``i``; it is called only
    for the rare rows whose float64 value lies exactly halfway between two
    float32 values, where rounding twice could be off by one ulp.

    >>> bool(rows_to_f32(np.array([[0.1] * 8]), None)[0, 0] == np.float32(0.1))
    True
    """
    with np.errstate(over="ignore"):
        out = values.astype(np.float32)
    back = out.astype(np.float64)
    inexact = back != values
    if inexact.any():
        rows, cols = np.nonzero(inexact)
        x = values[rows, cols]
        near = out[rows, cols]
        # The float32 on the other side of x, and the midpoint between them
        # (2^128 stands in for infinity: the rounding boundary of f32::MAX).
        away = np.where(x > back[rows, cols], np.float32(np.inf), np.float32(-np.inf))
        with np.errstate(over="ignore"):
            other = np.nextafter(near, away.astype(np.float32)).astype(np.float64)
        a = np.where(np.isinf(near), np.copysign(2.0**128, x), near.astype(np.float64))
        b = np.where(np.isinf(other), np.copysign(2.0**128, x), other)
        tie = x == (a + b) / 2
        for r, c in zip(rows[tie].tolist(), cols[tie].tolist()):
            m = _ROW_RE.fullmatch(texts(r))
            exact = _exact_to_f32(m.group(c + 1))
            out[r, c] = np.copysign(np.inf, values[r, c]) if exact is None else exact
    return out


def overflow_error(text: bytes, coordinate: int, *, line: int | None,
                   vector: int | None) -> FormatError:
    """The error for coordinate ``coordinate`` of the row ``text``, a number
    beyond the float32 range."""
    m = _ROW_RE.fullmatch(text)
    prefix = f"vector {vector}, " if vector is not None else ""
    return _json_error(line, m.end(coordinate + 1),
                       f"{prefix}coordinate {coordinate}: number out of range")
