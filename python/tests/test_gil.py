"""The native calls release the GIL while Rust works on the arrays.

Deterministic: with a switch interval of 10 s, the interpreter never takes
the GIL from a running thread on its own, so the main thread can run while
the worker is inside a hydron call only if that call released the GIL."""

import sys
import threading

import numpy as np
import pytest

import hydron

from conftest import unit_vectors

BIG = np.tile(unit_vectors(1024), (1024, 1))  # 1M vectors: milliseconds of work

CALLS = {
    "nearest_roots": lambda: hydron.nearest_roots(BIG),
    "normalize": lambda: hydron.normalize(BIG),
    "validate": lambda: hydron.validate(BIG),
    "encode_batch": lambda: hydron.encode_batch(BIG),
}


@pytest.mark.parametrize("name", CALLS)
def test_the_gil_is_released_during_the_call(name):
    state = {"in_call": False, "done": False}
    started = threading.Event()

    def worker():
        started.set()
        state["in_call"] = True
        CALLS[name]()
        state["done"] = True

    old = sys.getswitchinterval()
    sys.setswitchinterval(10.0)
    try:
        t = threading.Thread(target=worker)
        t.start()          # waits for `started`; the worker keeps the GIL until it releases it
        seen = dict(state)  # the main thread runs again: the worker must be inside the call
        t.join()
    finally:
        sys.setswitchinterval(old)
    assert seen == {"in_call": True, "done": False}, seen
    assert state["done"]
