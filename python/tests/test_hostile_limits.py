"""Hostile files under a 2 GiB address-space limit, as in a container
(`ulimit -v 2097152`).

A crafted Parquet footer: it claims 2^31 - 1 children for one schema
element (hydron-codec/tests/regressions), which once made the parquet crate
reserve 17 GB and abort the interpreter. Now it is a CorruptError naming
the footer, and the process lives on.

Lattice codes (docs/format.md section 7) that lie, through ``hydron.load``
(a path and a file object), ``hydron.load_lattice_codes`` and ``hydron
inspect``: Parquet whose footer claims 2^40 rows, a page of 2^30 bytes, or
2^20 rows of 1 MiB codes (which once made the parquet crate reserve 64 GiB
and abort); fory messages claiming 2^60 vectors or 4 GiB of codes;
``/dev/zero`` (which ``load_lattice_codes`` once read without end); and
FIFOs (which it once opened twice, hanging) fed codes, zeros, or a message
head followed by zeros without end. Each is a typed error (or, for a FIFO
of good codes, the codes) within a timeout, never a MemoryError, a crash
or a hang."""

import json
import os
import stat
import struct
import subprocess
import sys
import tempfile
import textwrap
import threading
from pathlib import Path

import numpy as np

import hydron

from conftest import hydron_cli as cli, missing, needs_parquet

CRAFTED = (
    Path(__file__).resolve().parents[2]
    / "hydron-codec"
    / "tests"
    / "regressions"
    / "parquet_decode-num-children-2-pow-31-minus-1"
)

CHILD = textwrap.dedent(
    """
    import resource, sys
    limit = 2 * 1024 ** 3
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    import hydron
    data = open(sys.argv[1], "rb").read()
    for read in (lambda: hydron.load_parquet(sys.argv[1]), lambda: hydron.loads(data)):
        try:
            read()
        except hydron.CorruptError as e:
            assert "footer" in str(e), e
        else:
            raise SystemExit("no error")
    print("refused")
    """
)


@needs_parquet
def test_a_crafted_footer_is_refused_under_a_2_gib_address_space_limit() -> None:
    run = subprocess.run(
        [sys.executable, "-c", CHILD, str(CRAFTED)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, (run.returncode, run.stderr[-2000:])
    assert run.stdout.strip() == "refused"


# Lattice codes.

LIMIT_KIB = 2097152

#: The child: each way of loading PATH under the limit, as JSON
#: {call: [exception class or "ok", message or result type]}. A FEED
#: ("file:F", "zeros", "head:F" for F's bytes then zeros without end) is
#: written into PATH, a FIFO, by a thread, once per call.
CODES_CHILD = textwrap.dedent(
    """
    import json, resource, sys, threading
    limit = 2 * 1024 ** 3
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    import hydron
    path, feed = sys.argv[1], sys.argv[2]

    def write(w):
        if feed.startswith(("file:", "head:")):
            with open(feed[5:], "rb") as f:
                w.write(f.read())
        if feed == "zeros" or feed.startswith("head:"):
            block = bytes(1 << 16)
            while True:
                w.write(block)

    def feeder():
        def run():
            try:
                with open(path, "wb") as w:
                    write(w)
            except OSError:
                pass  # the reader closed the FIFO
        thread = threading.Thread(target=run, daemon=True)
        if feed:
            thread.start()
        return thread

    def from_file_object():
        with open(path, "rb") as f:
            return hydron.load(f)

    calls = {
        "load": lambda: hydron.load(path),
        "load_lattice_codes": lambda: hydron.load_lattice_codes(path),
        "file_object": from_file_object,
    }
    out = {}
    for name, call in calls.items():
        thread = feeder()
        try:
            out[name] = ["ok", type(call()).__name__]
        except BaseException as e:  # MemoryError too: the test fails on it
            out[name] = [type(e).__name__, str(e)]
        if feed:
            # The reader closed the FIFO: the writer ends (a broken pipe)
            # before the next call opens it again.
            thread.join(30)
            assert not thread.is_alive(), name
    print(json.dumps(out))
    """
)


def feed_fifo(path: Path, feed: str) -> threading.Thread:
    """Writes FEED (as the child does) into the FIFO at path, in a thread."""
    def run() -> None:
        try:
            with open(path, "wb") as w:
                if feed.startswith(("file:", "head:")):
                    w.write(Path(feed[5:]).read_bytes())
                if feed == "zeros" or feed.startswith("head:"):
                    while True:
                        w.write(bytes(1 << 16))
        except OSError:
            pass
    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t


def under_limit(path: Path, feed: str = "") -> dict:
    run = subprocess.run([sys.executable, "-c", CODES_CHILD, str(path), feed],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, (run.returncode, run.stderr[-3000:])
    return json.loads(run.stdout)


def inspect_under_limit(path: Path, feed: str = "") -> subprocess.CompletedProcess:
    thread = feed_fifo(path, feed) if feed else None
    script = f'ulimit -v {LIMIT_KIB} && exec "$0" inspect "$1"'
    run = subprocess.run(["bash", "-c", script, cli(), str(path)], capture_output=True,
                         text=True, timeout=120)
    if thread is not None:
        thread.join(30)  # the tool closed the FIFO: the writer ends
        assert not thread.is_alive()
    return run


def varint(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def codes_parquet(path: Path, dim: int, rows: int, count: int, dictionary: bool = True,
                  compression: str = "zstd") -> None:
    """Unit-scale lattice codes at 2 bits in Parquet, as pyarrow writes
    them: ROWS zero codes, the footer's count key saying COUNT."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    size = -(-dim // 8) * 2
    code = pa.FixedSizeBinaryArray.from_buffers(pa.binary(size), rows,
                                                [None, pa.py_buffer(bytes(rows * size))])
    table = pa.table({"code": code}).replace_schema_metadata({
        "hydron.quant.dim": str(dim), "hydron.quant.bits": "2", "hydron.quant.seed": "0",
        "hydron.quant.rotation": "false", "hydron.quant.scale": "unit",
        "hydron.quant.count": str(count)})
    pq.write_table(table, path, compression=compression, use_dictionary=dictionary)


def with_row_counts(path: Path, rows: int) -> None:
    """The file's and the row group's row counts, written as 5, set to rows
    (Thrift compact i64s after a field delta of 1: 0x16, zigzag(5) = 0x0a;
    the column's value count, also 5, sits between them and stays)."""
    data = path.read_bytes()
    n = len(data)
    (length,) = struct.unpack("<I", data[n - 8:n - 4])
    start = n - 8 - length
    footer = data[start:n - 8]
    found = [i for i in range(len(footer) - 1) if footer[i:i + 2] == b"\x16\x0a"]
    assert len(found) == 3, found
    new = b"\x16" + varint(rows << 1)
    footer = (footer[:found[0]] + new + footer[found[0] + 2:found[2]] + new
              + footer[found[2] + 2:])
    path.write_bytes(data[:start] + footer + struct.pack("<I", len(footer)) + b"PAR1")


def with_huge_page(path: Path) -> None:
    """The first page header (at byte 4) claims 2^30 bytes uncompressed
    (a Thrift zigzag i32: the varint of 2^31)."""
    data = path.read_bytes()
    assert data[4:7] == b"\x15\x00\x15", data[:12].hex()  # a data page, then its size
    end = 7
    while data[end] & 0x80:
        end += 1
    path.write_bytes(data[:7] + varint(1 << 31) + data[end + 1:])


def message_head(count: int, claim: int) -> bytes:
    """A LatticeCodes message (dim 8, 2 bits, unit scale) up to its codes:
    COUNT vectors, codes claiming CLAIM bytes."""
    one = hydron.LatticeCodes(np.zeros((1, 2), np.uint8), None, dim=8, bits=2, seed=0,
                              rotate=False, scale="unit")
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "c.fory"
        hydron.save(path, one)
        head = bytearray(path.read_bytes()[:87])
    head[64:72] = struct.pack("<Q", count)
    return bytes(head) + varint(claim)


def check(found: dict, expected: dict) -> None:
    """Each call's [class, fragments...] as expected (MemoryError never)."""
    for call, (cls, *fragments) in expected.items():
        got_cls, message = found[call]
        assert got_cls == cls, (call, found[call])
        for fragment in fragments:
            assert fragment in message, (call, fragment, message)


def check_cli(run: subprocess.CompletedProcess, code: int, *fragments: str) -> None:
    assert run.returncode == code, (run.returncode, run.stderr[-2000:])
    assert "panicked" not in run.stderr and "memory allocation" not in run.stderr, run.stderr
    for fragment in fragments:
        assert fragment in run.stderr, (fragment, run.stderr)


@needs_parquet
def test_lattice_parquet_claiming_2_pow_40_rows(tmp_path) -> None:
    path = tmp_path / "rows.parquet"
    codes_parquet(path, dim=16, rows=5, count=1 << 40)
    with_row_counts(path, 1 << 40)
    said = "the row group claims 1099511627776 rows, its pages hold 5"
    check(under_limit(path), {"load": ["CorruptError", said, "row group 0"],
                              "load_lattice_codes": ["CorruptError", said],
                              "file_object": ["CorruptError", said]})
    check_cli(inspect_under_limit(path), 5, said, str(path))


@needs_parquet
def test_lattice_parquet_of_wide_codes_claiming_2_pow_20_rows(tmp_path) -> None:
    # 1 MiB codes (dimension 2^22): the parquet crate reserved a batch of
    # 65536 of them (64 GiB) from the claim, and the process aborted.
    path = tmp_path / "wide.parquet"
    codes_parquet(path, dim=1 << 22, rows=5, count=1 << 20)
    with_row_counts(path, 1 << 20)
    said = "the row group claims 1048576 rows, its pages hold 5"
    check(under_limit(path), {"load": ["CorruptError", said],
                              "load_lattice_codes": ["CorruptError", said],
                              "file_object": ["CorruptError", said]})
    check_cli(inspect_under_limit(path), 5, said)


@needs_parquet
def test_lattice_parquet_with_a_page_claiming_2_pow_30_bytes(tmp_path) -> None:
    path = tmp_path / "page.parquet"
    codes_parquet(path, dim=16, rows=5, count=5, dictionary=False, compression="none")
    with_huge_page(path)
    said = "byte offset 4: a page claims 1073741824 bytes uncompressed"
    check(under_limit(path), {"load": ["CorruptError", said],
                              "load_lattice_codes": ["CorruptError", said],
                              "file_object": ["CorruptError", said]})
    check_cli(inspect_under_limit(path), 5, said)


def test_lattice_messages_claiming_2_pow_60_vectors_or_4_gib_of_codes(tmp_path) -> None:
    count = tmp_path / "count.fory"
    count.write_bytes(message_head(1 << 60, 2) + b"\x00\x00" + b"\x00")
    said = "byte offset 64", "the count says 1152921504606846976 vectors"
    check(under_limit(count), {call: ["CorruptError", *said]
                               for call in ("load", "load_lattice_codes", "file_object")})
    check_cli(inspect_under_limit(count), 5, *said)
    claim = tmp_path / "claim.fory"
    claim.write_bytes(message_head(1 << 31, (1 << 32) - 2) + bytes(1000))
    said = "byte offset 92 needs 4294967294 bytes, only 1000 remain"
    check(under_limit(claim), {"load": ["TruncatedError", said],
                               "load_lattice_codes": ["TruncatedError", said],
                               # Past the 1 GiB read from a stream: refused unread.
                               "file_object": ["HydronError", "more than the 1073741824 read at most"]})
    check_cli(inspect_under_limit(claim), 5, said)


def test_dev_zero_as_a_codes_file(tmp_path) -> None:
    zero = Path("/dev/zero")
    if not zero.exists():
        missing("/dev/zero")
    check(under_limit(zero), {"load": ["FormatError"],
                              "load_lattice_codes": ["FormatError", "/dev/zero: byte offset 2"],
                              "file_object": ["FormatError"]})
    check_cli(inspect_under_limit(zero), 4, "byte offset 2")


def fifo(tmp_path: Path) -> Path:
    if not hasattr(os, "mkfifo"):
        missing("os.mkfifo (FIFOs)")
    path = tmp_path / "codes.fifo"
    os.mkfifo(path)
    assert stat.S_ISFIFO(path.stat().st_mode)
    return path


def test_fifos_fed_codes_zeros_or_a_lying_head(tmp_path) -> None:
    good = tmp_path / "good.fory"
    c = hydron.LatticeQuantizer(20, seed=1).encode(
        np.random.default_rng(1).standard_normal((9, 20)).astype(np.float32))
    hydron.save(good, c)
    head = tmp_path / "head.fory"
    head.write_bytes(message_head(1 << 31, (1 << 32) - 2))
    path = fifo(tmp_path)
    # Good codes: read once (load_lattice_codes once opened a FIFO twice
    # and hung), hydron.load's path included.
    check(under_limit(path, f"file:{good}"), {"load": ["ok", "LatticeCodes"],
                                             "load_lattice_codes": ["ok", "LatticeCodes"],
                                             "file_object": ["ok", "LatticeCodes"]})
    run = inspect_under_limit(path, f"file:{good}")
    assert run.returncode == 0 and "count:      9 vectors" in run.stdout, run
    # Zeros without end: refused from the first bytes.
    check(under_limit(path, "zeros"), {"load": ["FormatError"],
                                       "load_lattice_codes": ["FormatError", "byte offset 2"],
                                       "file_object": ["FormatError"]})
    check_cli(inspect_under_limit(path, "zeros"), 4, "byte offset 2")
    # A head claiming 4 GiB of codes, then zeros without end: refused after
    # the head, before the claim is read.
    check(under_limit(path, f"head:{head}"),
          {"load": ["HydronError", "more than the 1073741824 read at most"],
           "load_lattice_codes": ["HydronError", "more than the 1073741824 read at most"],
           "file_object": ["HydronError", "more than the 1073741824 read at most"]})
    check_cli(inspect_under_limit(path, f"head:{head}"), 6, "--max-input-bytes")
