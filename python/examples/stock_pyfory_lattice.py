"""Read and write hydron's LatticeCodes fory message with stock pyfory alone
(no hydron wheel): docs/format.md section 7.1, tested by
python/tests/test_quant_io.py.

Usage: python stock_pyfory_lattice.py CODES_MESSAGE_FILE
"""

import sys
from dataclasses import dataclass

import numpy as np
import pyfory


@dataclass
class LatticeCodes:
    """The codes of ``count`` vectors and the parameters that decode them."""

    dim: pyfory.FixedUInt32 = 0
    bits: pyfory.UInt8 = 0  # per coordinate: 2 (16-bit block codes) or 4 (32-bit)
    seed: pyfory.FixedUInt64 = 0
    rotation: bool = False
    scale_mode: pyfory.UInt8 = 0  # 0 per-vector, 1 unit, 2 direction (decoded to norm 1)
    count: pyfory.FixedUInt64 = 0
    codes: pyfory.NDArray[pyfory.UInt8] = None  # count * code_size bytes
    scales: pyfory.NDArray[pyfory.Float32] = None  # count scales (per-vector), else empty


def make_fory() -> pyfory.Fory:
    """An xlang Fory with LatticeCodes under its id."""
    fory = pyfory.Fory(xlang=True)  # compatible=True is the default
    fory.register_type(LatticeCodes, type_id=2403)
    return fory


def code_size(c: LatticeCodes) -> int:
    """Bytes of code per vector: one 16- or 32-bit code per 8-dim block."""
    return (c.dim + 7) // 8 * c.bits


if __name__ == "__main__":
    fory = make_fory()
    with open(sys.argv[1], "rb") as f:
        c = fory.deserialize(f.read())
    codes = c.codes.reshape(c.count, code_size(c))  # (N, code_size) uint8, read-only
    print(c.dim, c.bits, c.seed, c.rotation, c.scale_mode, codes.shape)
    # Writing: flat uint8 codes, flat float32 scales (np.zeros(0, np.float32) if none).
    message = fory.serialize(LatticeCodes(c.dim, c.bits, c.seed, c.rotation, c.scale_mode,
                                          c.count, np.ascontiguousarray(c.codes).reshape(-1),
                                          np.ascontiguousarray(c.scales, np.float32)))
    assert message[:3] == b"\x01\xff\x1c"
