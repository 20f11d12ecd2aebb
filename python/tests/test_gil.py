"""The native calls release the GIL while Rust works on the arrays, unless
the input is tiny (under 64 vectors or 2 KiB of message), where releasing
it would cost more than the work.

Deterministic: with a switch interval of 10 s, the interpreter never takes
the GIL from a running thread on its own, so the main thread can run while
the worker is inside a hydron call only if that call released the GIL."""

import numpy as np
import pytest

import hydron

from conftest import seen_during, unit_vectors

BIG = np.tile(unit_vectors(1024), (1024, 1))  # 1M vectors: milliseconds of work

BIG_MESSAGE = hydron.encode_batch(BIG)
SMALL = unit_vectors(63)


def calls(v: np.ndarray, message: bytes) -> dict:
    w = np.ascontiguousarray(v[::-1])
    return {
        "nearest_roots": lambda: hydron.nearest_roots(v),
        "normalize": lambda: hydron.normalize(v),
        "validate": lambda: hydron.validate(v),
        "nearest_lattice_points": lambda: hydron.nearest_lattice_points(v),
        "dot": lambda: hydron.dot(v, v),
        "slerp": lambda: hydron.slerp(v, w, 0.25),
        "encode_batch": lambda: hydron.encode_batch(v),
        "decode_batch": lambda: hydron.decode_batch(message),
    }


CALLS = calls(BIG, BIG_MESSAGE)
SMALL_CALLS = calls(SMALL, hydron.encode_batch(SMALL))


@pytest.mark.parametrize("name", CALLS)
def test_the_gil_is_released_during_the_call(name):
    assert seen_during(CALLS[name]) == {"in_call": True, "done": False}


@pytest.mark.parametrize("name", SMALL_CALLS)
def test_tiny_calls_keep_the_gil(name):
    # 63 vectors: the worker runs the call to the end before the main
    # thread runs again.
    assert seen_during(SMALL_CALLS[name]) == {"in_call": True, "done": True}
