"""Read and write hydron's fory messages with stock pyfory alone (no hydron
wheel): docs/format.md section 2.6, tested by python/tests/test_pyfory.py.

Usage: python stock_pyfory.py BATCH_MESSAGE_FILE
"""

import sys
from dataclasses import dataclass

import numpy as np
import pyfory
from pyfory.serializer import Serializer


@dataclass
class Gf8Batch:
    """A batch: ``values`` holds the 8·N float32 coordinates, flat."""

    values: pyfory.NDArray[pyfory.Float32] = None


@dataclass
class E8Codes:
    """E8 root codes: one uint8 (0..240) per vector."""

    codes: pyfory.NDArray[pyfory.UInt8] = None


class Gf8:
    """One vector: its 8 float32 coordinates."""

    def __init__(self, coords):
        self.coords = np.asarray(coords, dtype="<f4")


class Gf8Serializer(Serializer):
    """A Gf8 is a fory extension type: the 32 bytes of its coordinates."""

    def write(self, ctx, value):
        ctx.write_bytes(np.ascontiguousarray(value.coords, dtype="<f4").tobytes())

    def read(self, ctx):
        return Gf8(np.frombuffer(ctx.read_bytes(32), dtype="<f4"))


def make_fory() -> pyfory.Fory:
    """An xlang Fory with hydron's three types under their ids."""
    fory = pyfory.Fory(xlang=True)  # compatible=True is the default
    fory.register_type(Gf8, type_id=2400, serializer=Gf8Serializer(fory.type_resolver, Gf8))
    fory.register_type(Gf8Batch, type_id=2401)
    fory.register_type(E8Codes, type_id=2402)
    return fory


if __name__ == "__main__":
    fory = make_fory()
    with open(sys.argv[1], "rb") as f:
        batch = fory.deserialize(f.read())
    vectors = batch.values.reshape(-1, 8)  # (N, 8) float32, read-only
    print(vectors.shape, vectors.dtype)
    # Writing: a flat float32 array (an (N, 8) or float64 array is a TypeError).
    message = fory.serialize(Gf8Batch(np.ascontiguousarray(vectors, dtype=np.float32).reshape(-1)))
    assert message[:3] == b"\x01\xff\x1c"
