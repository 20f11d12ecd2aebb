"""Stock pyfory, without hydron's wheel, is a first-class way in: the
complete program of docs/format.md section 2.6 (python/examples/
stock_pyfory.py) reads and writes the same bytes as hydron, and the rules a
stock-pyfory user meets are as the docs say."""

import pathlib
import re
import runpy
import subprocess
import sys

import numpy as np
import pytest

import hydron

from conftest import GOLDEN, PYTHON_DIR, REPO, bits, unit_vectors

EXAMPLE = PYTHON_DIR / "examples" / "stock_pyfory.py"
sp = runpy.run_path(str(EXAMPLE))


def test_format_md_shows_the_tested_program_verbatim():
    doc = (REPO / "docs" / "format.md").read_text()
    section = doc.split("### 2.6", 1)[1].split("\n### ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    assert EXAMPLE.read_text() in blocks, "docs/format.md 2.6 differs from examples/stock_pyfory.py"


def test_the_program_runs_on_a_batch(tmp_path):
    path = tmp_path / "batch.bin"
    path.write_bytes(hydron.encode_batch(unit_vectors(5)))
    out = subprocess.run([sys.executable, str(EXAMPLE), str(path)], capture_output=True,
                         text=True, check=True)
    assert out.stdout.strip() == "(5, 8) float32"


def test_stock_pyfory_and_hydron_write_the_same_bytes():
    fory = sp["make_fory"]()
    v = unit_vectors(100)
    assert fory.serialize(sp["Gf8Batch"](v.reshape(-1))) == hydron.encode_batch(v)
    assert fory.serialize(sp["E8Codes"](np.array([0, 5, 239], np.uint8))) == \
        hydron.encode_codes([0, 5, 239])
    assert fory.serialize(sp["Gf8"](v[3])) == hydron.encode_gf8(v[3])
    golden = np.array([[1, 0, 0, 0, 0, 0, 0, 0], [0, 0.6, 0.8, 0, 0, 0, 0, 0],
                       [0.5, -0.5, 0.5, -0.5, 0, 0, 0, 0], [0] * 8], np.float32)
    assert fory.serialize(sp["Gf8Batch"](golden.reshape(-1))) == \
        (GOLDEN / "gf8_batch.bin").read_bytes()


def test_stock_pyfory_reads_what_hydron_writes():
    fory = sp["make_fory"]()
    v = unit_vectors(64)
    batch = fory.deserialize(hydron.encode_batch(v))
    assert batch.values.shape == (64 * 8,)  # flat: reshape(-1, 8)
    assert (bits(batch.values.reshape(-1, 8)) == bits(v)).all()
    assert not batch.values.flags.writeable  # a read-only view of the message
    codes = fory.deserialize(hydron.encode_codes([1, 2, 239])).codes
    assert codes.tolist() == [1, 2, 239] and not codes.flags.writeable
    assert (bits(fory.deserialize(hydron.encode_gf8(v[1])).coords) == bits(v[1])).all()


def test_the_rules_format_md_states():
    fory = sp["make_fory"]()
    v = unit_vectors(4)
    with pytest.raises(TypeError, match="Expected 1D ndarray dtype float32"):
        fory.serialize(sp["Gf8Batch"](v))  # (N, 8): refused
    with pytest.raises(TypeError, match="dtype=float64"):
        fory.serialize(sp["Gf8Batch"](v.reshape(-1).astype(np.float64)))
    with pytest.raises(AttributeError):
        fory.serialize(sp["Gf8Batch"]())  # values=None does not serialize


def test_a_container_file_is_not_a_plain_message(tmp_path):
    fory = sp["make_fory"]()
    with pytest.raises(ValueError, match="Unsupported root header bitmap 0x89"):
        fory.deserialize(hydron.dumps(unit_vectors(3)))


def test_format_md_code_order_program_gives_e8_roots():
    doc = (REPO / "docs" / "format.md").read_text()
    section = doc.split("### 2.5", 1)[1].split("\n### ", 1)[0]
    (block,) = re.findall(r"```python\n(.*?)```", section, re.S)
    namespace: dict = {}
    exec(block, namespace)
    assert (bits(namespace["e8_roots"]()) == bits(hydron.E8_ROOTS)).all()


def _fory(**kw):
    """The section 2.6 Fory with other settings."""
    import pyfory
    fory = pyfory.Fory(xlang=True, **kw)
    fory.register_type(sp["Gf8"], type_id=2400,
                       serializer=sp["Gf8Serializer"](fory.type_resolver, sp["Gf8"]))
    fory.register_type(sp["Gf8Batch"], type_id=2401)
    fory.register_type(sp["E8Codes"], type_id=2402)
    return fory


def test_pyfory_with_ref_tracking_writes_what_hydron_reads():
    """format.md 2.2 and 2.8: ref=True changes only the root flag (0x00)."""
    fory = _fory(ref=True)
    v = unit_vectors(50)
    batch = fory.serialize(sp["Gf8Batch"](v.reshape(-1)))
    assert batch[1] == 0x00 and batch[2:] == hydron.encode_batch(v)[2:]
    assert (bits(hydron.decode_batch(batch)) == bits(v)).all()
    codes = fory.serialize(sp["E8Codes"](np.array([0, 5, 239], np.uint8)))
    assert hydron.decode_codes(codes).tolist() == [0, 5, 239]
    assert (bits(hydron.decode_gf8(fory.serialize(sp["Gf8"](v[7])))) == bits(v[7])).all()
    # And it reads hydron's messages.
    assert (bits(fory.deserialize(hydron.encode_batch(v)).values.reshape(-1, 8)) == bits(v)).all()


def test_the_schema_consistent_form_needs_a_schema_consistent_pyfory():
    """format.md 2.8: a compatible=False pyfory reads (and writes) the
    schema-consistent form; hydron reads both."""
    fory = _fory(compatible=False)
    v = unit_vectors(9)
    schema = fory.serialize(sp["Gf8Batch"](v.reshape(-1)))
    assert schema[2] == 0x1b  # STRUCT, not COMPATIBLE_STRUCT
    assert (bits(hydron.decode_batch(schema)) == bits(v)).all()
    golden = (GOLDEN / "gf8_batch_schema.bin").read_bytes()
    assert (bits(fory.deserialize(golden).values.reshape(-1, 8)) ==
            bits(hydron.decode_batch(golden))).all()
