"""Validation of decoded vectors, as Rust's ``hydron_codec::Policy``.

A valid vector has 8 finite float32 coordinates and unit norm, or is exactly
zero: accepted iff the squared norm, summed in float32 in hydron-core's fixed
pairwise order, is within ``2e-5`` of 1, or all coordinates are zero. The
arithmetic is the same float32 arithmetic as Rust's, so both sides accept
and reject exactly the same vectors, and renormalize to the same bits.
"""

from __future__ import annotations

import enum
import math

import numpy as np

from .errors import InvalidVectorError

__all__ = ["Policy", "NORM_TOLERANCE", "apply_policy", "check_vectors", "renormalize"]

#: The norm tolerance: a vector is unit iff ``| |x|^2 - 1 | <= 2 * NORM_TOLERANCE``.
NORM_TOLERANCE = np.float32(1e-5)
_NORM_SQ_TOLERANCE = np.float32(2.0) * NORM_TOLERANCE
_ONE = np.float32(1.0)
_TINY = np.finfo(np.float32).tiny  # smallest positive normal float32


class Policy(str, enum.Enum):
    """What a decoder does with each decoded vector.

    ``STRICT`` (the default): every vector must be finite and of unit norm,
    or exactly zero; anything else raises :class:`InvalidVectorError` naming
    the vector and the coordinate (NaN, infinity) or the norm.

    ``RENORMALIZE``: finite vectors that are not unit are scaled onto the
    sphere (valid ones are kept bit for bit); NaN and infinity still raise.

    ``TRUSTED``: no check at all. Only for data you wrote or checked.

    Functions also accept the strings ``"strict"``, ``"renormalize"``,
    ``"trusted"``.
    """

    STRICT = "strict"
    RENORMALIZE = "renormalize"
    TRUSTED = "trusted"

    @classmethod
    def of(cls, value: "Policy | str") -> "Policy":
        """The policy named by ``value`` (a ``Policy`` or its name)."""
        try:
            return cls(value.lower() if isinstance(value, str) else value)
        except ValueError:
            raise ValueError(
                f"unknown policy {value!r}: expected 'strict', 'renormalize' or 'trusted'"
            ) from None


def _norm_sq(v: np.ndarray) -> np.ndarray:
    """Squared norms of the rows of a (N, 8) float32 array, summed in
    hydron-core's order: ((p0+p4)+(p2+p6)) + ((p1+p5)+(p3+p7))."""
    with np.errstate(over="ignore", invalid="ignore"):
        p = v * v
        return ((p[:, 0] + p[:, 4]) + (p[:, 2] + p[:, 6])) + ((p[:, 1] + p[:, 5]) + (p[:, 3] + p[:, 7]))


def _bad_rows(v: np.ndarray) -> np.ndarray:
    """Indexes of the rows that are not valid vectors, in order."""
    with np.errstate(over="ignore", invalid="ignore"):
        ok = np.abs(_norm_sq(v) - _ONE) <= _NORM_SQ_TOLERANCE
    bad = np.flatnonzero(~ok)
    if bad.size:
        # Rows whose squared norm is off may still be exactly zero.
        bad = bad[np.any(v[bad] != 0, axis=1)]
    return bad


def _seq_sum_sq(xs: list) -> float:
    total = 0.0
    for x in xs:
        total += x * x
    return total


def _readable(x: float) -> str:
    if x == 0.0 or 1e-4 <= abs(x) < 1e7:
        return f"{float(np.float32(x)):.8g}"
    return f"{x:.6e}"


def _row_error(row: np.ndarray, index: int) -> InvalidVectorError:
    """The error for one invalid row, as Rust's ``Gf8Error``."""
    for c, x in enumerate(row.tolist()):
        if x != x:
            return InvalidVectorError(index, f"coordinate {c} is NaN", coordinate=c)
        if x in (float("inf"), float("-inf")):
            return InvalidVectorError(index, f"coordinate {c} is infinite ({x})", coordinate=c)
    norm = math.sqrt(_seq_sum_sq(row.tolist()))
    return InvalidVectorError(
        index, f"norm is {_readable(norm)}, expected 1 (within 1e-05) or exactly 0", norm=norm)


def check_vectors(vectors: np.ndarray, *, first_index: int = 0) -> None:
    """Raises :class:`InvalidVectorError` for the first row of the (N, 8)
    float32 array that is not a valid vector; its index is counted from
    ``first_index``.

    >>> import numpy as np
    >>> check_vectors(np.array([[0.6, 0.8, 0, 0, 0, 0, 0, 0]], dtype=np.float32))
    >>> check_vectors(np.array([[0, 0, 0, np.nan, 0, 0, 0, 0]], dtype=np.float32))
    Traceback (most recent call last):
    hydron.errors.InvalidVectorError: vector 0: coordinate 3 is NaN
    """
    bad = _bad_rows(vectors)
    if bad.size:
        raise _row_error(vectors[bad[0]], first_index + int(bad[0]))


def renormalize(vectors: np.ndarray, *, first_index: int = 0) -> np.ndarray:
    """Scales every finite non-unit row onto the unit sphere, in place, as
    Rust's ``Gf8::normalize`` does (same float32 arithmetic, same bits);
    valid rows are untouched. A NaN or infinite coordinate raises
    :class:`InvalidVectorError`. Returns ``vectors``."""
    bad = _bad_rows(vectors)
    if not bad.size:
        return vectors
    rows = vectors[bad]
    finite = np.all(np.isfinite(rows), axis=1)
    if not finite.all():
        i = int(np.flatnonzero(~finite)[0])
        raise _row_error(rows[i], first_index + int(bad[i]))
    ns = _norm_sq(rows)
    fast = np.isfinite(ns) & (ns >= _TINY)
    out = np.empty_like(rows)
    with np.errstate(over="ignore", under="ignore"):
        inv = _ONE / np.sqrt(ns[fast])
        out[fast] = rows[fast] * inv[:, None]
    slow = np.flatnonzero(~fast)
    for i in slow.tolist():
        # Rust's slow path: scale by the largest magnitude in float64.
        # (Sequential float64 sum, as Rust's `Iterator::sum`.)
        r = rows[i].tolist()
        m = max(abs(x) for x in r)
        if m == 0.0:
            out[i] = 0.0
            continue
        s = [x / m for x in r]
        norm = math.sqrt(_seq_sum_sq(s))
        out[i] = np.array([x / norm for x in s], dtype=np.float64).astype(np.float32)
    vectors[bad] = out
    return vectors


def apply_policy(vectors: np.ndarray, policy: "Policy | str" = Policy.STRICT, *,
                 first_index: int = 0) -> np.ndarray:
    """Applies ``policy`` to a (N, 8) float32 array (in place for
    ``RENORMALIZE``) and returns it; errors name the vector, counted from
    ``first_index``."""
    policy = Policy.of(policy)
    if policy is Policy.STRICT:
        check_vectors(vectors, first_index=first_index)
    elif policy is Policy.RENORMALIZE:
        renormalize(vectors, first_index=first_index)
    return vectors
