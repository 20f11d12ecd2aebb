"""Stored lattice codes (docs/format.md section 7): the LatticeCodes fory
message that stock pyfory reads and writes (the program of section 7.1,
python/examples/stock_pyfory_lattice.py), its Parquet form that pyarrow,
Polars and DuckDB read, and files pyarrow and pyfory write that hydron
reads, checked.

hydron's side is the ``hydron`` tool (``$HYDRON_CLI``: ``quantize --bits
16|32`` writes codes, ``inspect --json`` reads and checks them) and, where
the module has them, ``hydron.save``/``hydron.load``."""

import io
import json
import os
import re
import runpy
import subprocess
import sys
import threading

import numpy as np
import pytest

import hydron

from conftest import PYTHON_DIR, REPO, hydron_cli as cli, missing, needs, require, unit_vectors

pa = require("pyarrow")
pq = require("pyarrow.parquet")
pl = require("polars")
duckdb = require("duckdb")

EXAMPLE = PYTHON_DIR / "examples" / "stock_pyfory_lattice.py"
sp = runpy.run_path(str(EXAMPLE))

#: What pyfory 1.7.7 writes for LatticeCodes(dim=8, bits=2, seed=7,
#: rotation=True, scale_mode=0, count=2, codes=[0, 1, 2, 3], scales=[1.5,
#: 2.5]): the bytes docs/format.md 7.1 gives, and the unit test
#: encode_writes_what_pyfory_writes in hydron-codec/src/quant/message.rs.
GOLDEN = bytes.fromhex(
    "01ff1c0034f012aa2f3dc62bc8e3124c0d89d46cc0480d488418440b0d0c5401c5d304d0e680"
    "48090513905809c8405936c70c804c3089c324804c3748405924"
    "0200000000000000" "0700000000000000" "08000000" "01" "02" "00"
    "04" "00010203" "08" "0000c03f00002040")


def hydron_cli(*args: str, code: int = 0) -> subprocess.CompletedProcess:
    done = subprocess.run([cli(), *args], capture_output=True, text=True)
    assert done.returncode == code, done.stderr
    return done


def inspect(path) -> dict:
    out = subprocess.run([cli(), "inspect", str(path), "--json"], capture_output=True, text=True)
    return json.loads(out.stdout)


def vectors_file(tmp_path, n: int = 50):
    """A plain JSON array of n unit vectors (a form the tool reads)."""
    v = unit_vectors(n)
    path = tmp_path / "v.json"
    path.write_text(json.dumps(v.tolist()))
    return path, v


def test_format_md_shows_the_tested_program_verbatim():
    doc = (REPO / "docs" / "format.md").read_text()
    section = doc.split("### 7.1", 1)[1].split("\n### ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    assert EXAMPLE.read_text() in blocks, "docs/format.md 7.1 differs from " \
        "examples/stock_pyfory_lattice.py"


def test_stock_pyfory_writes_and_reads_the_documented_bytes():
    fory = sp["make_fory"]()
    c = sp["LatticeCodes"](8, 2, 7, True, 0, 2, np.arange(4, dtype=np.uint8),
                           np.array([1.5, 2.5], np.float32))
    assert fory.serialize(c) == GOLDEN
    back = fory.deserialize(GOLDEN)
    assert (back.dim, back.bits, back.seed, back.rotation, back.scale_mode, back.count) == \
        (8, 2, 7, True, 0, 2)
    assert back.codes.tolist() == [0, 1, 2, 3] and back.scales.tolist() == [1.5, 2.5]
    doc = (REPO / "docs" / "format.md").read_text().split("### 7.1", 1)[1]
    # The example bytes of 7.1, after the 64-byte framing.
    assert "02 00 00 00 00 00 00 00  07 00 00 00 00 00 00 00  08 00 00 00  01 02 00\n04 00 01 " \
           "02 03  08 00 00 c0 3f 00 00 20 40" in doc
    assert " ".join(f"{b:02x}" for b in GOLDEN[4:12]) in doc


@pytest.mark.parametrize("bits", ["16", "32"])
def test_stock_pyfory_reads_what_hydron_writes(tmp_path, bits):
    src, v = vectors_file(tmp_path, 30)
    out = tmp_path / "c.fory"
    hydron_cli("quantize", str(src), str(out), "--bits", bits)
    c = sp["make_fory"]().deserialize(out.read_bytes())
    assert (c.dim, c.bits, c.seed, c.rotation, c.scale_mode, c.count) == \
        (8, int(bits) // 8, 0, False, 2, 30)
    assert c.codes.shape == (30 * int(bits) // 8,) and c.scales.shape == (0,)
    # The program of 7.1 runs on it.
    run = subprocess.run([sys.executable, str(EXAMPLE), str(out)], capture_output=True,
                         text=True, check=True)
    assert run.stdout.split()[-2:] == ["(30,", f"{int(bits) // 8})"]


def test_hydron_reads_what_stock_pyfory_writes(tmp_path):
    fory = sp["make_fory"]()
    rng = np.random.default_rng(5)
    codes = rng.integers(0, 256, size=7 * 6, dtype=np.uint8)  # dim 20: 3 blocks, 6 bytes
    scales = rng.random(7, dtype=np.float32)
    path = tmp_path / "p.fory"
    path.write_bytes(fory.serialize(sp["LatticeCodes"](20, 2, 123, True, 0, 7, codes, scales)))
    j = inspect(path)
    assert j["complete"], j
    assert (j["format"], j["dim"], j["bits"], j["code_size"], j["seed"], j["rotation"],
            j["scale_mode"], j["count"]) == \
        ("lattice-codes", 20, 2, 6, 123, True, "per-vector", 7)


def test_hydron_refuses_a_pyfory_message_whose_count_disagrees(tmp_path):
    fory = sp["make_fory"]()
    path = tmp_path / "bad.fory"
    # count 3, but 4 bytes of 2-byte codes: 2 vectors. pyfory writes it without a word.
    path.write_bytes(fory.serialize(sp["LatticeCodes"](
        8, 2, 0, False, 1, 3, np.zeros(4, np.uint8), np.zeros(0, np.float32))))
    done = hydron_cli("inspect", str(path), code=5)
    assert "byte offset 64" in done.stderr and "the count says 3 vectors" in done.stderr
    # A NaN scale is named by its row.
    path.write_bytes(fory.serialize(sp["LatticeCodes"](
        8, 2, 0, False, 0, 2, np.zeros(4, np.uint8), np.array([1, np.nan], np.float32))))
    done = hydron_cli("inspect", str(path), code=5)
    assert "row 1" in done.stderr and "scale NaN" in done.stderr


@pytest.mark.parametrize("bits", ["16", "32"])
def test_pyarrow_polars_and_duckdb_read_hydron_parquet(tmp_path, bits):
    src, _ = vectors_file(tmp_path, 40)
    out = tmp_path / "c.parquet"
    hydron_cli("quantize", str(src), str(out), "--bits", bits, "--to", "parquet")
    size = int(bits) // 8
    fory_out = tmp_path / "c.fory"
    hydron_cli("quantize", str(src), str(fory_out), "--bits", bits)
    expected = sp["make_fory"]().deserialize(fory_out.read_bytes()).codes.tobytes()

    table = pq.read_table(out)
    assert table.schema.field("code").type == pa.binary(size)
    assert table.column_names == ["code"]  # no scale column in direction mode
    assert b"".join(table.column("code").to_pylist()) == expected
    meta = pq.read_metadata(out).metadata
    assert {k: meta[k] for k in meta if k.startswith(b"hydron.quant.")} == {
        b"hydron.quant.dim": b"8", b"hydron.quant.bits": str(size).encode(),
        b"hydron.quant.seed": b"0", b"hydron.quant.rotation": b"false",
        b"hydron.quant.scale": b"direction", b"hydron.quant.count": b"40"}

    df = pl.read_parquet(out)
    assert df.schema["code"] == pl.Binary
    assert b"".join(df["code"].to_list()) == expected

    rows = duckdb.sql(f"SELECT code, typeof(code) AS t FROM read_parquet('{out}')").fetchall()
    assert {t for _, t in rows} == {"BLOB"}
    assert b"".join(bytes(c) for c, _ in rows) == expected


def test_hydron_reads_parquet_that_pyarrow_writes(tmp_path):
    rng = np.random.default_rng(9)
    n, size = 25, 4  # dim 12: 2 blocks of 16 bits
    codes = rng.integers(0, 256, size=(n, size), dtype=np.uint8)
    scales = rng.random(n, dtype=np.float32)
    table = pa.table({
        "code": pa.FixedSizeBinaryArray.from_buffers(
            pa.binary(size), n, [None, pa.py_buffer(codes.tobytes())]),
        "scale": pa.array(scales),
    })
    table = table.replace_schema_metadata({
        "hydron.quant.dim": "12", "hydron.quant.bits": "2", "hydron.quant.seed": "99",
        "hydron.quant.rotation": "true", "hydron.quant.scale": "per-vector",
        "hydron.quant.count": str(n)})
    path = tmp_path / "pa.parquet"
    pq.write_table(table, path, row_group_size=10)
    j = inspect(path)
    assert j["complete"], j
    assert (j["format"], j["dim"], j["bits"], j["seed"], j["rotation"], j["scale_mode"],
            j["count"]) == ("parquet-lattice-codes", 12, 2, 99, True, "per-vector", n)

    # A count that disagrees with the rows, and a missing scale column.
    bad = table.replace_schema_metadata({**table.schema.metadata, b"hydron.quant.count": b"26"})
    pq.write_table(bad, path)
    assert "says 26 vectors; the file holds 25 rows" in hydron_cli("inspect", str(path),
                                                                   code=5).stderr
    pq.write_table(table.drop_columns(["scale"]), path)
    assert 'no column named "scale"' in hydron_cli("inspect", str(path), code=5).stderr
    # A negative scale: its row.
    scales[17] = -1.0
    pq.write_table(table.set_column(1, "scale", pa.array(scales)), path)
    assert "row 17" in hydron_cli("inspect", str(path), code=5).stderr


# hydron.save / hydron.load of LatticeCodes (the Python module).


def quantized(dim=20, bits=2, scale="vector", n=30, rotate=None):
    q = hydron.LatticeQuantizer(dim, bits=bits, seed=5, rotate=rotate, scale=scale)
    x = np.random.default_rng(dim + bits).standard_normal((n, dim)).astype(np.float32)
    return q, q.encode(x)


def same(a, b):
    assert (a.dim, a.bits, a.seed, a.rotate, a.scale, len(a)) == \
        (b.dim, b.bits, b.seed, b.rotate, b.scale, len(b))
    assert (a.codes == b.codes).all()
    assert (a.scales is None) == (b.scales is None)
    if a.scales is not None:
        assert (a.scales.view(np.uint32) == b.scales.view(np.uint32)).all()


@pytest.mark.parametrize("name", ["c.fory", "c.parquet", "c.PQ", "c.bin"])
@pytest.mark.parametrize("bits,scale", [(2, "vector"), (2, "unit"), (2, "direction"),
                                        (4, "vector"), (4, "unit"), (4, "direction")])
def test_save_and_load_round_trip(tmp_path, name, bits, scale):
    if name != "c.fory" and name != "c.bin" and "parquet" not in hydron.FEATURES:
        pytest.skip("a build without Parquet")
    q, c = quantized(bits=bits, scale=scale)
    path = tmp_path / name
    hydron.save(path, c)
    is_parquet = name.lower().endswith((".parquet", ".pq"))
    assert path.read_bytes()[:4] == (b"PAR1" if is_parquet else b"\x01\xff\x1c\x00")
    assert hydron.is_lattice_codes(path)
    back = hydron.load(path)
    same(back, c)
    assert (q.decode(back) == q.decode(c)).all()
    assert os.listdir(tmp_path) == [name]  # no temporary file left behind


@needs("parquet")
def test_explicit_format_and_what_saves_refuse(tmp_path):
    _, c = quantized()
    path = tmp_path / "codes.data"
    hydron.save_lattice_codes(path, c, "parquet")
    assert path.read_bytes()[:4] == b"PAR1"
    same(hydron.load_lattice_codes(path), c)
    with pytest.raises(ValueError, match="format"):
        hydron.save(path, c, "jsonl")
    with pytest.raises(TypeError, match="policy"):
        hydron.save(path, c, policy="trusted")
    with pytest.raises(TypeError, match="LatticeCodes"):
        hydron.save_lattice_codes(path, np.zeros((2, 4), np.uint8))
    # Vectors still save and load as before.
    hydron.save(tmp_path / "v.hyd", hydron.E8_ROOTS)
    assert not hydron.is_lattice_codes(tmp_path / "v.hyd")
    assert (hydron.load(tmp_path / "v.hyd") == hydron.E8_ROOTS).all()


def test_stock_pyfory_reads_hydron_save_and_hydron_loads_pyfory(tmp_path):
    _, c = quantized(dim=12, n=9)
    path = tmp_path / "c.fory"
    hydron.save(path, c)
    fory = sp["make_fory"]()
    m = fory.deserialize(path.read_bytes())
    assert (m.dim, m.bits, m.seed, m.rotation, m.scale_mode, m.count) == (12, 2, 5, True, 0, 9)
    assert (m.codes.reshape(9, 4) == c.codes).all() and (m.scales == c.scales).all()
    path.write_bytes(fory.serialize(m))
    same(hydron.load(path), c)


def test_a_message_that_disagrees_is_a_corrupt_error_with_offset_and_row(tmp_path):
    _, c = quantized(dim=8, n=3)
    path = tmp_path / "c.fory"
    hydron.save(path, c)
    data = bytearray(path.read_bytes())
    data[64] = 4  # count 4, codes for 3
    path.write_bytes(bytes(data))
    with pytest.raises(hydron.CorruptError, match="the count says 4 vectors") as e:
        hydron.load(path)
    assert (e.value.offset, e.value.row) == (64, None)
    data[64] = 3
    data[-4:] = np.float32(-1).tobytes()  # the last scale negative
    path.write_bytes(bytes(data))
    with pytest.raises(hydron.CorruptError, match="scale -1") as e:
        hydron.load(path)
    assert (e.value.offset, e.value.row) == (len(data) - 4, 2)
    path.write_bytes(bytes(data[:80]))
    with pytest.raises(hydron.HydronError):
        hydron.load_lattice_codes(path)


def test_gf8_codes_load_as_unit_vectors(tmp_path):
    src, v = vectors_file(tmp_path, 30)
    out = tmp_path / "c.fory"
    hydron_cli("quantize", str(src), str(out), "--bits", "32")
    u = hydron.load(out)
    assert u.shape == (30, 8) and u.dtype == np.float32
    assert np.allclose(np.linalg.norm(u, axis=1), 1, atol=1e-6)
    nonzero = np.linalg.norm(v, axis=1) > 0  # (unit_vectors has a zero vector)
    cos = np.clip((u * v).sum(axis=1)[nonzero], -1, 1)
    assert np.arccos(cos).mean() < 0.1  # 32-bit codes: about 0.078 rad


@pytest.mark.parametrize("bits", [2, 4])
def test_direction_codes_of_dim_8_without_rotation_load_as_gf8_vectors(tmp_path, bits):
    # Those are Gf8 codes (docs/format.md 7.3): hydron.load gives their unit
    # vectors, what the quantizer decodes; any other direction codes load as
    # LatticeCodes.
    q, c = quantized(dim=8, bits=bits, scale="direction", rotate=False)
    hydron.save(tmp_path / "g.fory", c)
    u = hydron.load(tmp_path / "g.fory")
    assert isinstance(u, np.ndarray) and u.shape == (30, 8)
    if bits == 2:
        assert (u == q.decode(c)).all()
    else:
        assert np.allclose(u, q.decode(c), atol=1e-6)
    q, c = quantized(dim=8, bits=bits, scale="direction", rotate=True)
    hydron.save(tmp_path / "r.fory", c)
    back = hydron.load(tmp_path / "r.fory")
    assert isinstance(back, hydron.LatticeCodes)
    same(back, c)
    m = sp["make_fory"]().deserialize((tmp_path / "r.fory").read_bytes())
    assert (m.dim, m.rotation, m.scale_mode) == (8, True, 2)


@needs("parquet")
def test_hydron_load_reads_parquet_that_pyarrow_writes(tmp_path):
    rng = np.random.default_rng(4)
    n, size = 13, 4  # dim 16 at 2 bits
    codes = rng.integers(0, 256, size=(n, size), dtype=np.uint8)
    table = pa.table({"code": pa.FixedSizeBinaryArray.from_buffers(
        pa.binary(size), n, [None, pa.py_buffer(codes.tobytes())])})
    table = table.replace_schema_metadata({
        "hydron.quant.dim": "16", "hydron.quant.bits": "2", "hydron.quant.seed": "4",
        "hydron.quant.rotation": "false", "hydron.quant.scale": "unit",
        "hydron.quant.count": str(n)})
    path = tmp_path / "pa.parquet"
    pq.write_table(table, path, row_group_size=5, compression="zstd")
    c = hydron.load(path)
    assert (c.dim, c.bits, c.seed, c.rotate, c.scale, len(c)) == (16, 2, 4, False, "unit", n)
    assert (c.codes == codes).all() and c.scales is None
    q = hydron.LatticeQuantizer(16, seed=4, rotate=False, scale="unit")
    assert q.decode(c).shape == (n, 16)
    # pyarrow's own file of vectors still loads as vectors.
    v = unit_vectors(6)
    vectors = pa.FixedSizeListArray.from_arrays(pa.array(v.reshape(-1)), 8)
    pq.write_table(pa.table({"vector": vectors}), tmp_path / "v.parquet")
    assert not hydron.is_lattice_codes(tmp_path / "v.parquet")
    assert (hydron.load(tmp_path / "v.parquet") == v).all()


# hydron.load of a binary file object: lattice codes told from the content,
# read once.


class ReadOnly:
    """A binary file object with ``read`` only (no ``read1``)."""

    def __init__(self, data: bytes):
        self._f = io.BytesIO(data)

    def read(self, n: int = -1) -> bytes:
        return self._f.read(n)


def piped(data: bytes):
    """The read end of a pipe that another thread fills with ``data``."""
    r, w = os.pipe()

    def fill():
        with os.fdopen(w, "wb") as f:
            f.write(data)

    threading.Thread(target=fill, daemon=True).start()
    return os.fdopen(r, "rb")


def file_objects(path):
    data = path.read_bytes()
    return {
        "open": lambda: open(path, "rb"),
        "BytesIO": lambda: io.BytesIO(data),
        "read only": lambda: ReadOnly(data),
        "pipe": lambda: piped(data),
    }


@pytest.mark.parametrize("how", ["open", "BytesIO", "read only", "pipe"])
@pytest.mark.parametrize("name", ["c.fory", pytest.param("c.parquet", marks=needs("parquet"))])
def test_load_of_a_file_object_holding_codes_gives_lattice_codes(tmp_path, name, how):
    _, c = quantized(dim=20, n=25)
    path = tmp_path / name
    hydron.save(path, c)
    f = file_objects(path)[how]()
    try:
        back = hydron.load(f)
    finally:
        if hasattr(f, "close"):
            f.close()
    assert isinstance(back, hydron.LatticeCodes)
    same(back, c)
    same(back, hydron.load(path))
    # load_lattice_codes takes a file object too.
    same(hydron.load_lattice_codes(file_objects(path)[how]()), c)
    # Gf8 codes: their unit vectors, as from the path.
    q, g = quantized(dim=8, bits=4, scale="direction", rotate=False)
    hydron.save(path, g)
    u = hydron.load(file_objects(path)[how]())
    assert isinstance(u, np.ndarray) and (u == hydron.load(path)).all()


@pytest.mark.parametrize("name", ["c.fory", pytest.param("c.parquet", marks=needs("parquet"))])
def test_a_file_object_of_codes_refuses_policy_and_text_mode(tmp_path, name):
    _, c = quantized()
    path = tmp_path / name
    hydron.save(path, c)
    with open(path, "rb") as f, pytest.raises(TypeError, match="policy"):
        hydron.load(f, policy="trusted")
    with open(path, "r", encoding="latin-1") as f, pytest.raises(TypeError, match="binary"):
        hydron.load(f)
    with pytest.raises(TypeError, match="binary"):
        hydron.load_lattice_codes(io.StringIO("x"))
    with pytest.raises(ValueError):
        hydron.load(io.BytesIO(path.read_bytes()), policy="sloppy")


def test_file_objects_of_vectors_still_load_as_vectors(tmp_path):
    path = tmp_path / "v.hyd"
    hydron.save(path, hydron.E8_ROOTS)
    for f in file_objects(path).values():
        v = f()
        assert (hydron.load(v) == hydron.E8_ROOTS).all()
    with pytest.raises(hydron.FormatError):
        hydron.load(io.BytesIO(b"\x00" * 100))
    with pytest.raises(TypeError, match="loads"):
        hydron.load(b"bytes")


@needs("parquet")
def test_parquet_file_objects_of_vectors_still_load_as_vectors(tmp_path):
    path = tmp_path / "v.parquet"
    hydron.save(path, hydron.E8_ROOTS)
    for f in file_objects(path).values():
        assert (hydron.load(f()) == hydron.E8_ROOTS).all()


def test_a_damaged_message_from_a_file_object_names_the_offset(tmp_path):
    _, c = quantized(dim=8, n=3)
    path = tmp_path / "c.fory"
    hydron.save(path, c)
    data = bytearray(path.read_bytes())
    data[64] = 4  # count 4, codes for 3
    with pytest.raises(hydron.CorruptError, match="the count says 4 vectors") as e:
        hydron.load(io.BytesIO(bytes(data)))
    assert (e.value.offset, e.value.row) == (64, None)
    with pytest.raises(hydron.TruncatedError) as e:
        hydron.load(io.BytesIO(bytes(data[:90])))
    assert e.value.offset == 88


@needs("parquet")
def test_malformed_footer_parameters_are_reported_as_codes_by_path_and_file_object(tmp_path):
    n, size = 3, 4
    code = pa.FixedSizeBinaryArray.from_buffers(pa.binary(size), n, [None, pa.py_buffer(bytes(12))])
    table = pa.table({"code": code}).replace_schema_metadata({
        "hydron.quant.dim": "16", "hydron.quant.bits": "3", "hydron.quant.seed": "0",
        "hydron.quant.rotation": "false", "hydron.quant.scale": "unit",
        "hydron.quant.count": str(n)})
    path = tmp_path / "bad.parquet"
    pq.write_table(table, path)
    assert hydron.is_lattice_codes(path)
    for source in (path, io.BytesIO(path.read_bytes())):
        with pytest.raises(hydron.CorruptError, match="3 bits per coordinate"):
            hydron.load(source)


# hydron.load of the path of a FIFO or a device: lattice codes told from the
# content, the FIFO opened once (opening it twice would hang).


def fed_fifo(tmp_path, data: bytes, name: str = "codes.fifo"):
    """A new FIFO at tmp_path/name that a thread fills with ``data``."""
    if not hasattr(os, "mkfifo"):
        missing("os.mkfifo (FIFOs)")
    path = tmp_path / name
    os.mkfifo(path)

    def fill():
        try:
            with open(path, "wb") as f:
                f.write(data)
        except OSError:
            pass  # the reader closed the FIFO early

    threading.Thread(target=fill, daemon=True).start()
    return path


def within(seconds: float, call):
    """``call()``'s result (or its exception, raised again), failing if it
    takes more than ``seconds`` (a hang)."""
    done: list = []

    def run():
        try:
            done.append(("ok", call()))
        except BaseException as e:  # noqa: BLE001 - raised again below
            done.append(("error", e))

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(seconds)
    assert done, f"no answer within {seconds} s (a hang)"
    kind, value = done[0]
    if kind == "error":
        raise value
    return value


@pytest.mark.parametrize("name", ["c.fory", pytest.param("c.parquet", marks=needs("parquet"))])
def test_load_of_a_fifo_holding_codes_gives_lattice_codes(tmp_path, name):
    _, c = quantized(dim=20, n=25)
    path = tmp_path / name
    hydron.save(path, c)
    fifo = fed_fifo(tmp_path, path.read_bytes())
    back = within(20, lambda: hydron.load(fifo))
    assert isinstance(back, hydron.LatticeCodes)
    same(back, c)
    # Gf8 codes: their unit vectors, as from a regular file.
    _, g = quantized(dim=8, bits=4, scale="direction", rotate=False)
    hydron.save(path, g)
    fifo = fed_fifo(tmp_path, path.read_bytes(), "gf8.fifo")
    u = within(20, lambda: hydron.load(fifo))
    assert isinstance(u, np.ndarray) and (u == hydron.load(path)).all()
    # policy= is for vectors.
    fifo = fed_fifo(tmp_path, path.read_bytes(), "policy.fifo")
    with pytest.raises(TypeError, match="policy"):
        within(20, lambda: hydron.load(fifo, policy="trusted"))


@pytest.mark.parametrize("name", ["v.hyd", pytest.param("v.parquet", marks=needs("parquet"))])
def test_load_of_a_fifo_holding_vectors_gives_vectors(tmp_path, name):
    path = tmp_path / name
    hydron.save(path, hydron.E8_ROOTS)
    fifo = fed_fifo(tmp_path, path.read_bytes())
    assert (within(20, lambda: hydron.load(fifo)) == hydron.E8_ROOTS).all()


def test_a_fifo_of_damaged_codes_or_zeros_is_a_typed_error_naming_it(tmp_path):
    _, c = quantized(dim=8, n=3)
    path = tmp_path / "c.fory"
    hydron.save(path, c)
    data = bytearray(path.read_bytes())
    data[64] = 4  # count 4, codes for 3
    fifo = fed_fifo(tmp_path, bytes(data))
    with pytest.raises(hydron.CorruptError, match="the count says 4 vectors") as e:
        within(20, lambda: hydron.load(fifo))
    assert str(fifo) in str(e.value) and e.value.offset == 64
    fifo = fed_fifo(tmp_path, bytes(data[:90]), "cut.fifo")
    with pytest.raises(hydron.TruncatedError, match=re.escape(str(fifo))):
        within(20, lambda: hydron.load(fifo))
    if os.path.exists("/dev/zero"):
        with pytest.raises(hydron.FormatError, match="/dev/zero"):
            within(20, lambda: hydron.load("/dev/zero"))
