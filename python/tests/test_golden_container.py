"""The golden bytes of the binary file container, which the Rust test
``hydron-codec/tests/file_golden.rs`` pins, written again by an independent
implementation of docs/format.md §3.2 in plain Python (tests/oracle): two
writers from one spec, byte for byte, and hydron reads both."""

import re
from pathlib import Path

import numpy as np

import hydron
import oracle

GOLDEN_RS = Path(__file__).resolve().parents[2] / "hydron-codec" / "tests" / "file_golden.rs"


def golden_binary() -> bytes:
    source = GOLDEN_RS.read_text()
    block = source[source.index("const BINARY") : source.index("];", source.index("const BINARY"))]
    rows = re.findall(r'"([0-9a-f ]+)"', block)
    return bytes.fromhex("".join(rows))


def example() -> np.ndarray:
    v = np.zeros((3, 8), np.float32)
    v[0, 0] = 1.0
    v[1, 1] = np.float32(-0.6)
    v[1, 7] = np.float32(0.8)
    return v


def test_the_oracle_writes_the_golden_bytes() -> None:
    golden = golden_binary()
    assert len(golden) == 240
    assert oracle.write_container(example(), chunk_vectors=2) == golden


def test_the_oracle_reads_what_it_writes_and_hydron_reads_both() -> None:
    v = hydron.normalize(np.random.default_rng(7).standard_normal((1000, 8)).astype(np.float32))
    data = oracle.write_container(v, chunk_vectors=300)
    out, sizes = oracle.container(data)
    assert sizes == [300, 300, 300, 100]
    assert (out.view(np.uint32) == v.view(np.uint32)).all()
    assert (hydron.loads(data).view(np.uint32) == v.view(np.uint32)).all()
    assert hydron.dumps(v, chunk_vectors=300) == data
