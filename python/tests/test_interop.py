"""Python and Rust read each other's bytes, through hydron's wheel and
through stock pyfory alone (python/examples/stock_pyfory.py).

- ``test_python_reads_what_rust_wrote``: decodes every file the Rust example
  ``examples/interop_write.rs`` wrote (``HYDRON_RUST_DIR``), compares the
  values bit for bit with its ``.f32``/``.u8`` expectations, and checks that
  Python encodes the same values to the same bytes.
- ``test_python_writes_for_rust``: writes the same kinds of files
  (``HYDRON_PY_DIR``) for ``tests/python_interop.rs`` to decode with
  ``Policy::Strict`` and compare bit for bit.
"""

import runpy
import struct

import numpy as np
import pytest

import hydron

from conftest import PYTHON_DIR, bits, unit_vectors

stock = runpy.run_path(str(PYTHON_DIR / "examples" / "stock_pyfory.py"))


def _f32(path):
    return np.fromfile(path, dtype="<f4").reshape(-1, 8)


def _chunk_vectors(data: bytes) -> int:
    if data.startswith(b"\x89HYD"):
        return struct.unpack_from("<I", data, 12)[0]
    return int(data.split(b'"chunk_vectors":')[1].split(b",")[0])


def test_python_reads_what_rust_wrote(rust_dir):
    entries = [line.split(" ", 1) for line in (rust_dir / "MANIFEST.txt").read_text().splitlines()]
    seen = set()
    for kind, name in entries:
        if kind == "batch":
            data = (rust_dir / f"{name}.bin").read_bytes()
            out = hydron.decode_batch(data)
            assert (bits(out) == bits(_f32(rust_dir / f"{name}.f32"))).all(), name
            assert hydron.encode_batch(out) == data, name
            # Stock pyfory reads Rust's message too, and writes the same bytes.
            values = stock["make_fory"]().deserialize(data).values
            assert (bits(values.reshape(-1, 8)) == bits(out)).all(), name
            assert stock["make_fory"]().serialize(stock["Gf8Batch"](values)) == data, name
        elif kind == "gf8":
            data = (rust_dir / f"{name}.bin").read_bytes()
            out = hydron.decode_gf8(data)
            assert (bits(out) == bits(_f32(rust_dir / f"{name}.f32")[0])).all(), name
            assert hydron.encode_gf8(out) == data, name
        elif kind == "codes":
            data = (rust_dir / f"{name}.bin").read_bytes()
            codes = hydron.decode_codes(data)
            assert (codes == np.fromfile(rust_dir / f"{name}.u8", dtype=np.uint8)).all()
            assert hydron.encode_codes(codes) == data
            assert (stock["make_fory"]().deserialize(data).codes == codes).all()
        elif kind == "file":
            path = rust_dir / f"{name}.hyd"
            data = path.read_bytes()
            want = _f32(rust_dir / f"{name}.f32")
            out = hydron.load(path)
            assert out.shape == want.shape and (bits(out) == bits(want)).all(), name
            chunks = list(hydron.iter_chunks(path))
            cv = _chunk_vectors(data)
            assert [len(c) for c in chunks] == [min(cv, len(want) - i)
                                                for i in range(0, len(want), cv)], name
            form = hydron.detect_format(path)
            assert hydron.dumps(out, form, chunk_vectors=cv) == data, f"{name}: other bytes"
        elif kind == "roots":
            assert (bits(hydron.E8_ROOTS) == bits(_f32(rust_dir / f"{name}.f32"))).all()
        elif kind == "renormalize":
            raw = _f32(rust_dir / f"{name}_in.f32").copy()
            out = hydron.apply_policy(raw, "renormalize")
            assert (bits(out) == bits(_f32(rust_dir / f"{name}_out.f32"))).all()
        else:
            pytest.fail(f"MANIFEST.txt: unknown kind {kind!r}")
        seen.add(kind)
    assert seen == {"batch", "gf8", "codes", "file", "roots", "renormalize"}


def test_rust_files_with_damage_are_rejected(rust_dir):
    data = (rust_dir / "file_fory.hyd").read_bytes()
    for offset in range(0, len(data), 997):
        damaged = bytearray(data)
        damaged[offset] ^= 0x10
        with pytest.raises(hydron.CorruptError):
            hydron.loads(bytes(damaged))
    text = (rust_dir / "file_jsonl.hyd").read_bytes()
    with pytest.raises(hydron.TruncatedError):
        hydron.loads(text[:-1000])


def test_python_writes_for_rust(py_dir):
    manifest = []

    def f32(name, values):
        np.ascontiguousarray(values, dtype="<f4").tofile(py_dir / f"{name}.f32")

    vectors = unit_vectors(1000, seed=2024)
    for n in [0, 1, 7, 1000]:
        (py_dir / f"batch_{n}.bin").write_bytes(hydron.encode_batch(vectors[:n]))
        f32(f"batch_{n}", vectors[:n])
        manifest.append(f"batch batch_{n}")

    # Stock pyfory writes batches for Rust to read (as "batch" entries).
    fory = stock["make_fory"]()
    for n in [0, 3, 1000]:
        flat = np.ascontiguousarray(vectors[:n]).reshape(-1)
        (py_dir / f"pyfory_batch_{n}.bin").write_bytes(fory.serialize(stock["Gf8Batch"](flat)))
        f32(f"pyfory_batch_{n}", vectors[:n])
        manifest.append(f"batch pyfory_batch_{n}")

    (py_dir / "gf8_single.bin").write_bytes(hydron.encode_gf8(vectors[3]))
    f32("gf8_single", vectors[3:4])
    manifest.append("gf8 gf8_single")

    codes = np.concatenate([np.arange(240), np.random.default_rng(1).integers(0, 240, 500)])
    (py_dir / "codes.bin").write_bytes(hydron.encode_codes(codes))
    codes.astype(np.uint8).tofile(py_dir / "codes.u8")
    manifest.append("codes codes")

    for name, form, chunk, data in [
        ("file_fory", "fory", 64, vectors),
        ("file_jsonl", "jsonl", 100, vectors),
        ("file_fory_single", "fory", 1, vectors[:7]),
        ("empty_fory", "fory", 1000, vectors[:0]),
        ("empty_jsonl", "jsonl", 1000, vectors[:0]),
    ]:
        with hydron.FileWriter(py_dir / f"{name}.hyd", form, chunk_vectors=chunk) as w:
            for i in range(0, len(data), 37):
                w.write(data[i:i + 37])
        f32(name, data)
        manifest.append(f"file {name}")

    # Damage and invalid vectors Rust must reject as well.
    good = hydron.dumps(vectors[:50], "fory", chunk_vectors=16)
    flipped = bytearray(good)
    flipped[len(good) // 2] ^= 0x04
    (py_dir / "corrupt_bit.hyd").write_bytes(bytes(flipped))
    (py_dir / "corrupt_cut.hyd").write_bytes(hydron.dumps(vectors[:50], "jsonl")[:-30])
    manifest += ["corrupt corrupt_bit", "corrupt corrupt_cut"]
    bad = vectors[:20].copy()
    bad[13, 2] = np.nan
    hydron.save(py_dir / "invalid_nan.hyd", bad, "fory", chunk_vectors=8, policy="trusted")
    bad[13, 2] = 0.5
    hydron.save(py_dir / "invalid_norm.hyd", bad, "jsonl", chunk_vectors=8, policy="trusted")
    manifest += ["invalid invalid_nan", "invalid invalid_norm"]

    (py_dir / "MANIFEST.txt").write_text("\n".join(manifest) + "\n")
    # What Python wrote, Python reads.
    for line in manifest:
        kind, name = line.split()
        if kind == "file":
            assert (bits(hydron.load(py_dir / f"{name}.hyd")) == bits(_f32(py_dir / f"{name}.f32"))).all()
