"""Property test: for random batches, the Python module gives what the Rust
command-line tool (a separate program over the same crates) gives:
quantization codes, renormalization bits, and the JSON text.

The tool is ``$HYDRON_CLI`` (python/run-tests.sh builds it); without it the
test is skipped, unless ``HYDRON_REQUIRE_INTEROP=1``."""

import os
import pathlib
import subprocess

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import hydron

from conftest import bits, missing


def cli() -> str:
    path = os.environ.get("HYDRON_CLI")
    if not path:
        if os.environ.get("HYDRON_REQUIRE_INTEROP") == "1":
            pytest.fail("HYDRON_CLI is not set (HYDRON_REQUIRE_INTEROP=1)")
        missing("HYDRON_CLI is not set: run python/run-tests.sh")
    return path


def run(*args: str) -> None:
    done = subprocess.run([cli(), *args], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


finite = st.floats(min_value=-1e6, max_value=1e6, width=32, allow_subnormal=True)
batches = arrays(np.float32, st.tuples(st.integers(1, 40), st.just(8)), elements=finite)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(raw=batches)
def test_python_equals_the_rust_cli(tmp_path: pathlib.Path, raw: np.ndarray):
    # Renormalize: the CLI's `convert --renormalize` on a trusted file.
    src = tmp_path / "raw.hyd"
    hydron.save(src, raw, policy="trusted", durable=False)
    out = tmp_path / "unit.hyd"
    run("convert", str(src), str(out), "--to", "fory", "--renormalize")
    mine = hydron.normalize(raw, policy="renormalize")
    assert (bits(hydron.load(out)) == bits(mine)).all()

    # Quantize: the CLI's codes message.
    codes = tmp_path / "unit.codes"
    run("quantize", str(out), str(codes))
    assert (hydron.decode_codes(codes.read_bytes()) == hydron.nearest_roots(mine)).all()

    # JSON: the CLI's plain array is hydron.encode_json's text, read back bit for bit.
    text = tmp_path / "unit.json"
    run("convert", str(out), str(text), "--to", "json")
    assert text.read_bytes() == hydron.encode_json(mine)
    assert (bits(hydron.decode_json(text.read_bytes())) == bits(mine)).all()


def test_stock_pyfory_reads_the_clis_plain_batch_message(tmp_path: pathlib.Path):
    """`hydron convert FILE OUT --to batch` writes the message stock pyfory
    reads (docs/format.md 2.6), bit for bit; a container does not."""
    import runpy
    import sys

    example = pathlib.Path(__file__).parent.parent / "examples" / "stock_pyfory.py"
    sp = runpy.run_path(str(example))
    src, out = tmp_path / "points.hyd", tmp_path / "points.fory"
    run("gen", "1000", str(src), "--seed", "7")
    run("convert", str(src), str(out), "--to", "batch")
    batch = sp["make_fory"]().deserialize(out.read_bytes())
    assert (bits(batch.values.reshape(-1, 8)) == bits(hydron.load(src))).all()
    done = subprocess.run([sys.executable, str(example), str(out)], capture_output=True,
                          text=True, check=True)
    assert done.stdout.strip() == "(1000, 8) float32"
