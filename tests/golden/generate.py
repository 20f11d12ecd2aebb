"""Writes the golden fory messages in this directory with pyfory 1.7.7.

    python -m venv venv && venv/bin/pip install pyfory==1.7.7 numpy
    venv/bin/python tests/golden/generate.py

Rust must encode the same inputs to exactly these bytes and decode them
(hydron-codec/tests/fory_golden.rs), which proves the wire form is the one
pyfory reads and writes in xlang mode. The inputs are listed in README.md.
"""

import pathlib
import runpy

import numpy as np
import pyfory

HERE = pathlib.Path(__file__).parent

# The types and the Gf8 serializer are those of the documented stock-pyfory
# program (docs/format.md 2.6), so the goldens pin exactly what it writes.
_EXAMPLE = runpy.run_path(str(HERE.parent.parent / "python" / "examples" / "stock_pyfory.py"))
Gf8, Gf8Batch, E8Codes, Gf8Serializer = (
    _EXAMPLE[name] for name in ("Gf8", "Gf8Batch", "E8Codes", "Gf8Serializer")
)

GF8_TYPE_ID = 2400
GF8_BATCH_TYPE_ID = 2401
E8_CODES_TYPE_ID = 2402


def make_fory(compatible):
    fory = pyfory.Fory(xlang=True, compatible=compatible)
    fory.register_type(Gf8, type_id=GF8_TYPE_ID, serializer=Gf8Serializer(fory.type_resolver, Gf8))
    fory.register_type(Gf8Batch, type_id=GF8_BATCH_TYPE_ID)
    fory.register_type(E8Codes, type_id=E8_CODES_TYPE_ID)
    return fory


BATCH = [
    [1, 0, 0, 0, 0, 0, 0, 0],
    [0, 0.6, 0.8, 0, 0, 0, 0, 0],
    [0.5, -0.5, 0.5, -0.5, 0, 0, 0, 0],
    [0, 0, 0, 0, 0, 0, 0, 0],
]
CODES = [0, 1, 111, 112, 239]


def main():
    values = np.asarray(BATCH, dtype="<f4").reshape(-1)
    codes = np.asarray(CODES, dtype=np.uint8)
    files = {}
    for compatible, suffix in [(True, ""), (False, "_schema")]:
        fory = make_fory(compatible)
        files[f"gf8_batch{suffix}.bin"] = fory.serialize(Gf8Batch(values))
        files[f"gf8_batch_empty{suffix}.bin"] = fory.serialize(Gf8Batch(np.zeros(0, dtype="<f4")))
        files[f"e8_codes{suffix}.bin"] = fory.serialize(E8Codes(codes))
        if compatible:  # an EXT value has the same bytes in both modes
            files["gf8_single.bin"] = fory.serialize(Gf8(BATCH[1]))
    for name, data in files.items():
        (HERE / name).write_bytes(data)
        print(f"{name:28} {len(data):4} bytes  {data.hex(' ')}")
    # Check that pyfory reads its own messages back (and so the Rust ones,
    # which are byte-identical).
    fory = make_fory(True)
    back = fory.deserialize(files["gf8_batch.bin"])
    assert np.array_equal(back.values, values)
    assert list(fory.deserialize(files["e8_codes.bin"]).codes) == CODES


if __name__ == "__main__":
    main()
