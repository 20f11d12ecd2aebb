"""The file container: both forms, round trips, streaming, atomic saves, and
damage (every flipped bit is corruption of the right section, every cut is
truncation)."""

import io
import os
import struct
import zlib

import numpy as np
import pytest

import hydron
from hydron import (CorruptError, FeatureNotBuiltError, FormatError, HydronError,
                    InvalidVectorError, Section, TruncatedError, UnsupportedVersionError)

from conftest import bits, missing, needs_parquet, unit_vectors

FORMS = ["fory", "jsonl"]
THREE = np.array([[1, 0, 0, 0, 0, 0, 0, 0], [0, -0.6, 0, 0, 0, 0, 0, 0.8], [0] * 8], np.float32)


def test_documented_examples_are_byte_exact():
    """The two examples of docs/format.md section 3."""
    data = hydron.dumps(THREE, "fory", chunk_vectors=2)
    assert len(data) == 240
    assert data[:20].hex() == "894859440d0a1a0a0100000002000000a5da2723"
    assert data[0x82:0x86].hex() == "7f4e1f36" and data[0xD4:0xD8].hex() == "8cbfd064"
    assert data[-24:].hex() == "5441494c020000000000000003000000000000003f50138d"
    text = hydron.dumps(THREE, "jsonl", chunk_vectors=2).decode()
    assert text == (
        '{"format":"hydron-gf8-jsonl","version":1,"chunk_vectors":2,"crc32":"1139cd86"}\n'
        "[1.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0]\n"
        "[0.0,-0.6,0.0,0.0,0.0,0.0,0.0,0.8]\n"
        '{"chunk":0,"vectors":2,"crc32":"1cee75c6"}\n'
        "[0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0]\n"
        '{"chunk":1,"vectors":1,"crc32":"7563ae29"}\n'
        '{"end":true,"chunks":2,"vectors":3,"crc32":"d10dffca"}\n')


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("n, chunk", [(0, 5), (1, 1), (10, 3), (10, 10), (257, 64)])
def test_round_trip(tmp_path, form, n, chunk):
    v = unit_vectors(n) if n else np.zeros((0, 8), np.float32)
    path = tmp_path / f"v.{form}"
    hydron.save(path, v, form, chunk_vectors=chunk)
    out = hydron.load(path)
    assert out.shape == (n, 8) and (bits(out) == bits(v)).all()
    assert hydron.detect_format(path) == form
    sizes = [len(c) for c in hydron.iter_chunks(str(path))]
    assert sizes == [chunk] * (n // chunk) + ([n % chunk] if n % chunk else [])
    assert os.listdir(tmp_path) == [path.name]  # no temporary file left


@pytest.mark.parametrize("form", FORMS)
def test_writer_cuts_chunks_whatever_the_write_sizes(tmp_path, form):
    v = unit_vectors(23)
    with hydron.FileWriter(tmp_path / "w", form, chunk_vectors=7) as w:
        for a, b in [(0, 3), (3, 4), (4, 19), (19, 23)]:
            w.write(v[a:b])
        assert w.vectors == 23
    assert (tmp_path / "w").read_bytes() == hydron.dumps(v, form, chunk_vectors=7)


def test_failed_or_abandoned_save_leaves_the_old_file(tmp_path):
    path = tmp_path / "keep.hyd"
    hydron.save(path, THREE)
    old = path.read_bytes()
    bad = unit_vectors(4)
    bad[2, 1] = np.nan
    with pytest.raises(InvalidVectorError, match="vector 2: coordinate 1 is NaN"):
        hydron.save(path, bad)
    with pytest.raises(RuntimeError):
        with hydron.FileWriter(path, "jsonl") as w:
            w.write(unit_vectors(3))
            raise RuntimeError("stop")
    w = hydron.FileWriter(path)
    w.write(unit_vectors(3))
    w.close()
    assert path.read_bytes() == old
    assert os.listdir(tmp_path) == ["keep.hyd"]
    with pytest.raises(HydronError, match="closed"):
        w.write(unit_vectors(1))


def test_a_refused_write_leaves_the_writer_open(tmp_path):
    path = tmp_path / "w.hyd"
    bad = unit_vectors(5)
    bad[3] *= 2
    with hydron.FileWriter(path) as w:
        w.write(unit_vectors(100))
        for refused, error in [(unit_vectors(5).astype(np.complex64), TypeError),
                               (np.zeros((5, 7), np.float32), ValueError),
                               (bad, InvalidVectorError)]:
            with pytest.raises(error):
                w.write(refused)
        w.write(unit_vectors(3))
    assert (bits(hydron.load(path)) ==
            bits(np.concatenate([unit_vectors(100), unit_vectors(3)]))).all()


def test_leaving_a_with_block_after_a_failed_write_raises(tmp_path):
    path = tmp_path / "w.jsonl"
    hydron.save(path, THREE, "jsonl")
    old = path.read_bytes()
    inf = unit_vectors(4)
    inf[1, 2] = np.inf
    with pytest.raises(HydronError, match="nothing was saved: an earlier write failed"):
        with hydron.FileWriter(path, "jsonl", policy="trusted") as w:
            w.write(unit_vectors(10))
            # The text form refuses it while writing (vectors are counted
            # across writes): the writer is spent.
            with pytest.raises(InvalidVectorError, match="vector 11: coordinate 2 is infinite"):
                w.write(inf)
    assert path.read_bytes() == old
    assert os.listdir(tmp_path) == [path.name]
    with pytest.raises(HydronError, match="earlier write failed"):
        w.write(unit_vectors(1))
    w.abort()                  # handled: a later exit is quiet
    w.__exit__(None)


def test_a_writer_keeps_its_directory_when_the_process_changes_its_own(tmp_path, monkeypatch):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    monkeypatch.chdir(tmp_path / "a")
    w = hydron.FileWriter("out.hyd")
    w.write(unit_vectors(7))
    monkeypatch.chdir(tmp_path / "b")
    w.finish()
    assert (bits(hydron.load(tmp_path / "a" / "out.hyd")) == bits(unit_vectors(7))).all()
    assert os.listdir(tmp_path / "a") == ["out.hyd"] and os.listdir(tmp_path / "b") == []
    monkeypatch.chdir(tmp_path / "a")
    w = hydron.FileWriter("gone.hyd")
    monkeypatch.chdir(tmp_path / "b")
    w.abort()                  # removes its temporary file in a/, not b/
    assert os.listdir(tmp_path / "a") == ["out.hyd"]


SHARED_BY_THREADS = """
import sys, threading, numpy as np, hydron
path, parquet = sys.argv[1], sys.argv[2]
v = np.tile(hydron.E8_ROOTS, (20, 1))
w = hydron.FileWriter(path + ".hyd", durable=False, chunk_vectors=1000)
ts = [threading.Thread(target=lambda: [w.write(v) for _ in range(50)]) for _ in range(2)]
[t.start() for t in ts]; [t.join() for t in ts]
w.finish()
hydron.save_parquet(parquet, hydron.load(path + ".hyd"), row_group_vectors=1000)
counts = []
for it in (hydron.iter_chunks(path + ".hyd"), hydron.iter_parquet(parquet)):
    got = []
    ts = [threading.Thread(target=lambda: got.extend(len(c) for c in it)) for _ in range(2)]
    [t.start() for t in ts]; [t.join() for t in ts]
    counts.append(sum(got))
w2 = hydron.FileWriter(path + ".2.hyd", durable=False)
closer = threading.Thread(target=w2.close)
writer = threading.Thread(target=lambda: [w2.write(v) for _ in range(3)])
writer.start(); closer.start(); writer.join(); closer.join()
print(w.vectors, *counts)
"""


@needs_parquet
def test_writers_and_iterators_shared_by_threads_take_turns(tmp_path):
    """Two threads on one FileWriter, chunk iterator or Parquet iterator:
    each call waits for the other without holding the GIL (it deadlocked
    when a thread held the object's lock while it had released the GIL).
    In a subprocess with a timeout, so that a deadlock fails the test."""
    import subprocess
    import sys
    done = subprocess.run([sys.executable, "-c", SHARED_BY_THREADS, str(tmp_path / "t"),
                           str(tmp_path / "t.parquet")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    n = 2 * 50 * 240 * 20
    assert done.stdout.split() == [str(n)] * 3


SAVE_TO_STDOUT = """
import sys, hydron
v = hydron.E8_ROOTS
print("start", flush=True)
hydron.save("/dev/stdout", v, format=sys.argv[1])
with hydron.FileWriter("/dev/stdout", format=sys.argv[1]) as w:
    w.write(v[:7])
hydron.save_parquet("/dev/stdout", v[:3])
print("end", flush=True)
"""


@needs_parquet
@pytest.mark.parametrize("form", ["fory", "jsonl"])
def test_saving_to_dev_stdout_writes_to_the_stream(tmp_path, form):
    """`/dev/stdout` is the open stream, not a place: into a pipe the data
    goes through (it failed: the link led to `pipe:[N]`), and with
    `>> log` it follows what is there, with later prints after it (the
    log was replaced, losing both)."""
    if not os.path.exists("/proc/self/fd"):
        missing("no /proc/self/fd: /dev/stdout is not the open stream here")
    import subprocess
    import sys
    piped = subprocess.run([sys.executable, "-c", SAVE_TO_STDOUT, form],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    assert piped.returncode == 0, piped.stderr
    log = tmp_path / "log"
    log.write_bytes(b"before\n")
    with open(log, "ab") as append:
        done = subprocess.run([sys.executable, "-c", SAVE_TO_STDOUT, form],
                              stdout=append, stderr=subprocess.PIPE, timeout=120)
    assert done.returncode == 0, done.stderr
    data = log.read_bytes()
    assert data == b"before\n" + piped.stdout
    first = hydron.dumps(hydron.E8_ROOTS, format=form)
    second = hydron.dumps(hydron.E8_ROOTS[:7], format=form)
    assert data.startswith(b"before\nstart\n" + first + second)
    parquet = data[len(b"before\nstart\n") + len(first) + len(second):-len(b"end\n")]
    assert data.endswith(b"end\n")
    assert (bits(hydron.load_parquet(io.BytesIO(parquet))) == bits(hydron.E8_ROOTS[:3])).all()
    assert os.listdir(tmp_path) == ["log"]


class _Raising(io.RawIOBase):
    """A binary file object whose read raises ``error`` after the head."""

    def __init__(self, head: bytes, error: BaseException):
        self.head, self.error = head, error

    def readable(self):
        return True

    def readinto(self, b):
        if self.head:
            n = min(len(b), len(self.head))
            b[:n], self.head = self.head[:n], self.head[n:]
            return n
        raise self.error


def test_a_file_objects_own_exception_is_raised_as_it_was(tmp_path):
    data = hydron.dumps(unit_vectors(5000))
    for error in [KeyboardInterrupt(), OSError(5, "Input/output error"), ValueError("mine")]:
        for read in (hydron.load, lambda f: list(hydron.iter_chunks(f))):
            with pytest.raises(type(error)) as e:
                read(_Raising(data[:1000], error))
            assert e.value is error or e.value.args == error.args
            if isinstance(error, OSError):
                assert e.value.errno == 5
    text = tmp_path / "v.jsonl"
    hydron.save(text, THREE, "jsonl")
    with open(text) as f, pytest.raises(TypeError, match=r"open the file in binary mode \('rb'\)"):
        hydron.load(f)


def test_text_form_refuses_non_finite_even_when_trusted():
    v = unit_vectors(3)
    v[1, 4] = np.inf
    with pytest.raises(InvalidVectorError, match="vector 1: coordinate 4 is infinite"):
        hydron.dumps(v, "jsonl", policy="trusted")


def test_chunk_size_is_checked():
    with pytest.raises(ValueError, match="chunk_vectors"):
        hydron.dumps(THREE, chunk_vectors=0)
    with pytest.raises(ValueError, match="chunk_vectors"):
        hydron.dumps(THREE, chunk_vectors=(1 << 20) + 1)


def _section_of_byte(data: bytes, offset: int) -> Section:
    """Which section holds byte ``offset`` of a binary file."""
    if offset < 20:
        return Section.HEADER
    at, k = 20, 0
    while data[at:at + 4] == b"CHNK":
        end = at + 28 + struct.unpack_from("<I", data, at + 16)[0]
        if offset < end:
            return Section.chunk(k)
        at, k = end, k + 1
    return Section.TRAILER


def _section_of_line(data: bytes, offset: int) -> Section:
    """Which section holds byte ``offset`` of a text file."""
    lines = data.split(b"\n")
    at, k = 0, 0
    for i, line in enumerate(lines):
        end = at + len(line) + 1
        if i == 0 and offset < end:
            return Section.HEADER
        if line.startswith(b'{"end"'):
            return Section.TRAILER
        if offset < end:
            return Section.chunk(k)
        if line.startswith(b'{"chunk"'):
            k += 1
        at = end
    raise AssertionError(offset)


@pytest.mark.parametrize("form", FORMS)
def test_every_flipped_bit_is_corruption_of_its_section(form):
    v = unit_vectors(5)
    data = hydron.dumps(v, form, chunk_vectors=2)
    section_of = _section_of_byte if form == "fory" else _section_of_line
    for offset in range(len(data)):
        for bit in range(8):
            damaged = bytearray(data)
            damaged[offset] ^= 1 << bit
            with pytest.raises(CorruptError) as e:
                hydron.loads(bytes(damaged))
            assert e.value.section == section_of(data, offset), (offset, bit, str(e.value))


@pytest.mark.parametrize("form", FORMS)
def test_every_cut_is_truncation(form):
    data = hydron.dumps(unit_vectors(5), form, chunk_vectors=2)
    with pytest.raises(FormatError, match="empty"):
        hydron.loads(data[:0])
    for cut in range(1, len(data)):
        with pytest.raises(TruncatedError) as e:
            hydron.loads(data[:cut])
        assert e.value.offset == cut


@pytest.mark.parametrize("form", FORMS)
def test_trailing_bytes_are_corruption_of_the_trailer(form):
    data = hydron.dumps(unit_vectors(3), form)
    with pytest.raises(CorruptError, match="3 unexpected bytes after the") as e:
        hydron.loads(data + b"abc")
    assert e.value.section == Section.TRAILER


def test_foreign_data_is_a_format_error():
    with pytest.raises(FormatError, match=r"starts with 89 50 4e 47 .* \(a PNG image\)"):
        hydron.loads(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR")
    with pytest.raises(FormatError, match="plain JSON array"):
        hydron.loads(b"[[1,0,0,0,0,0,0,0]]")
    with pytest.raises(FormatError, match="not a hydron file: it starts with 01 ff 1c"):
        hydron.loads(hydron.encode_batch(THREE))
    with pytest.raises(FormatError, match="not a hydron header"):
        hydron.loads(b'{"format":"other"}\n')


def _rewrite_header(data: bytes, **fields) -> bytes:
    """A binary file with header fields changed and a valid header CRC."""
    version, flags, chunk = struct.unpack_from("<HHI", data, 8)
    version = fields.get("version", version)
    flags = fields.get("flags", flags)
    chunk = fields.get("chunk", chunk)
    head = data[:8] + struct.pack("<HHI", version, flags, chunk)
    return head + struct.pack("<I", zlib.crc32(head)) + data[20:]


def test_header_fields_with_valid_checksums():
    data = hydron.dumps(THREE)
    with pytest.raises(UnsupportedVersionError, match="version 2"):
        hydron.loads(_rewrite_header(data, version=2))
    with pytest.raises(CorruptError, match="reserved flags"):
        hydron.loads(_rewrite_header(data, flags=1))
    with pytest.raises(CorruptError, match="chunk size 4294967295 is outside"):
        hydron.loads(_rewrite_header(data, chunk=2**32 - 1))
    text = hydron.dumps(THREE, "jsonl").replace(b'"version":1,', b'"version":2,', 1)
    body = text.split(b',"crc32"')[0]
    text = body + b',"crc32":"%08x"}' % zlib.crc32(body) + text[text.index(b"\n"):]
    with pytest.raises(UnsupportedVersionError):
        hydron.loads(text)


def _rewrite_frame(data: bytes, count: int, payload_len: int) -> bytes:
    """The first chunk frame with new count and length and a valid CRC."""
    frame = data[20:32] + struct.pack("<II", count, payload_len)
    return data[:20] + frame + struct.pack("<I", zlib.crc32(frame)) + data[44:]


def test_oversized_lengths_in_frames():
    data = hydron.dumps(unit_vectors(4), chunk_vectors=4)
    with pytest.raises(CorruptError, match="vector count 5 is outside 1..=4"):
        hydron.loads(_rewrite_frame(data, 5, 5 * 32 + 22))
    with pytest.raises(CorruptError, match="payload length 4294967295 does not fit 4 vectors"):
        hydron.loads(_rewrite_frame(data, 4, 2**32 - 1))
    # A length that fits the count but not the file: truncation, no allocation.
    big = _rewrite_header(data, chunk=1 << 20)
    with pytest.raises(TruncatedError) as e:
        hydron.loads(_rewrite_frame(big, 1 << 20, 32 << 20))
    assert e.value.section == Section.chunk(0)


def test_payload_with_valid_crc_but_wrong_count():
    data = hydron.dumps(unit_vectors(2), chunk_vectors=2)
    payload = hydron.encode_batch(unit_vectors(3))
    frame = b"CHNK" + struct.pack("<QII", 0, 2, len(payload))
    frame += struct.pack("<I", zlib.crc32(frame))
    chunk = frame + payload + struct.pack("<I", zlib.crc32(frame + payload))
    with pytest.raises(CorruptError, match="the payload holds 3 vectors, the frame says 2"):
        hydron.loads(data[:20] + chunk + data[-24:])


@pytest.mark.parametrize("form", FORMS)
def test_invalid_vector_is_named_by_its_index_in_the_file(form):
    v = unit_vectors(10)
    v[7, 2] = 2.0
    data = hydron.dumps(v, form, chunk_vectors=3, policy="trusted")
    with pytest.raises(InvalidVectorError) as e:
        hydron.loads(data)
    assert e.value.index == 7 and e.value.norm is not None
    if form == "jsonl":
        assert e.value.line == 11  # header, 3 + 1, 3 + 1, then the 2nd vector of chunk 2
        assert str(e.value).startswith("line 11 (vector 7): norm is")
    out = hydron.loads(data, policy="renormalize")
    assert out[7].tolist() != v[7].tolist() and abs(np.linalg.norm(out[7]) - 1) < 1e-6
    assert (bits(hydron.loads(data, policy="trusted")) == bits(v)).all()


def test_nan_in_a_binary_file_names_index_and_coordinate(tmp_path):
    v = unit_vectors(9)
    v[8, 6] = np.nan
    path = tmp_path / "nan.hyd"
    hydron.save(path, v, chunk_vectors=4, policy="trusted")
    with pytest.raises(InvalidVectorError, match=r"nan.hyd: vector 8: coordinate 6 is NaN") as e:
        hydron.load(path)
    assert (e.value.index, e.value.coordinate) == (8, 6)


class _Stream(io.RawIOBase):
    """A non-seekable stream handing out a few bytes at a time."""

    def __init__(self, data: bytes):
        self.data = data
        self.at = 0

    def readable(self):
        return True

    def readinto(self, b):
        n = min(len(b), 7, len(self.data) - self.at)
        b[:n] = self.data[self.at:self.at + n]
        self.at += n
        return n


@pytest.mark.parametrize("form", FORMS)
def test_reading_from_a_non_seekable_file_object(form):
    """A file object is streamed, chunk by chunk, as a path is."""
    v = unit_vectors(50)
    data = hydron.dumps(v, form, chunk_vectors=16)
    chunks = list(hydron.iter_chunks(io.BufferedReader(_Stream(data))))
    assert [len(c) for c in chunks] == [16, 16, 16, 2]
    assert (bits(np.concatenate(chunks)) == bits(v)).all()
    assert (bits(hydron.load(io.BufferedReader(_Stream(data)))) == bits(v)).all()
    for cut in [len(data) // 2, len(data) - 1]:
        with pytest.raises(TruncatedError):
            list(hydron.iter_chunks(io.BufferedReader(_Stream(data[:cut]))))
    with pytest.raises(CorruptError, match="unexpected bytes"):
        list(hydron.iter_chunks(io.BufferedReader(_Stream(data + b"\n"))))


@pytest.mark.parametrize("form", FORMS)
def test_streaming_from_a_path(tmp_path, form):
    v = unit_vectors(50)
    path = tmp_path / "s.hyd"
    hydron.save(path, v, form, chunk_vectors=16)
    chunks = list(hydron.iter_chunks(path))
    assert [len(c) for c in chunks] == [16, 16, 16, 2]
    assert all(c.flags.writeable and c.dtype == np.float32 for c in chunks)
    assert (bits(np.concatenate(chunks)) == bits(v)).all()


def test_streaming_yields_chunks_before_the_end_is_checked(tmp_path):
    data = hydron.dumps(unit_vectors(6), chunk_vectors=2)
    damaged = data[:-1] + bytes([data[-1] ^ 1])
    path = tmp_path / "d.hyd"
    path.write_bytes(damaged)
    it = hydron.iter_chunks(path)
    assert len(next(it)) == 2
    with pytest.raises(CorruptError) as e:
        list(it)
    assert e.value.section == Section.TRAILER


def test_text_errors_have_lines_and_columns():
    good = hydron.dumps(THREE, "jsonl", chunk_vectors=3)

    def with_line(line: bytes) -> bytes:
        """The file with vector line 2 replaced and checksums recomputed."""
        lines = good.split(b"\n")
        rows = [lines[1], line, lines[3]]
        head = lines[0] + b"\n"
        body = b"".join(r + b"\n" for r in rows)
        crc = zlib.crc32(head + body)
        chunk = b'{"chunk":0,"vectors":3,"crc32":"%08x"}\n' % crc
        end = b'{"end":true,"chunks":1,"vectors":3,"crc32":"%08x"}\n' % zlib.crc32(
            head + body + chunk)
        return head + body + chunk + end

    # Any JSON spelling is read, to the nearest float32.
    out = hydron.loads(with_line(b" [ 0 , -0.6e0,0,0,0,0,0, 0.80000001 ]\r"))
    assert (bits(out[1]) == bits(THREE[1])).all()
    cases = [
        (b"[0,-0.6,0,0,0,0,0]", r"line 3, column \d+: invalid length 7"),
        (b"[0,-0.6,0,0,0,0,0,0.8,0]", "line 3, column .*invalid length 9"),
        (b"[0,NaN,0,0,0,0,0,0.8]", "line 3, column 4: coordinate 1: expected value "
                                   r"\(JSON has no NaN"),
        (b"[0,-0.6,0,0,0,0,0,1e39]", "line 3, column 22: coordinate 7: number out of range"),
        (b"", "line 3, column 0: EOF"),
        (b"[0,-0.6,0,0,0,0,0,0.8] x", "line 3, column 24: trailing characters"),
    ]
    for line, message in cases:
        with pytest.raises(FormatError, match=message) as e:
            hydron.loads(with_line(line))
        assert e.value.line == 3
    # No line of a hydron file is longer than 4096 bytes: such a line is
    # damage, reported as soon as the reader has seen 4097 bytes of it.
    too_long = b"[0,0" + b"0" * 5000 + b",0,0,0,0,0,0,1]"
    with pytest.raises(CorruptError, match="line 3 is longer than 4096 bytes"):
        hydron.loads(with_line(too_long))
    # 4096 bytes is still fine.
    padded = b"[0,-0.6,0,0,0,0,0,0.8]"
    padded = padded[:1] + b" " * (4096 - len(padded)) + padded[1:]
    assert len(hydron.loads(with_line(padded))) == 3
    # Without its checksum line, a bad line is damage; a vector the policy
    # rejects is what the writer wrote, and the missing end is truncation.
    cut = with_line(b"[0,0,0,0,0,0,0,x]").split(b'{"chunk"')[0]
    with pytest.raises(CorruptError, match="no checksum line before the data ends"):
        hydron.loads(cut)
    cut = with_line(b"[0,0,0,0,0,0,0,2]").split(b'{"chunk"')[0]
    with pytest.raises(TruncatedError):
        hydron.loads(cut)
    with pytest.raises(InvalidVectorError, match="line 3 .vector 1.: norm is 2"):
        hydron.loads(with_line(b"[0,0,0,0,0,0,0,2]"))


def test_deeply_nested_control_line_is_corruption_not_a_crash():
    lines = hydron.dumps(THREE, "jsonl").split(b"\n")
    bad = b"\n".join(lines[:4] + [b'{"a":' + b"[" * 4000]) + b"\n"
    with pytest.raises(CorruptError, match="not a valid checksum or end line"):
        hydron.loads(bad)


def _damage(rng, data: bytes) -> bytes:
    """Random damage: overwritten, inserted, deleted or duplicated bytes."""
    d = bytearray(data)
    for _ in range(rng.integers(1, 5)):
        at = int(rng.integers(len(d) + 1))
        op = rng.integers(5)
        if op == 0 and at < len(d):
            d[at] = rng.integers(256)
        elif op == 1:
            d[at:at] = bytes(rng.integers(0, 256, rng.integers(1, 9), dtype=np.uint8))
        elif op == 2:
            del d[at:at + int(rng.integers(1, 9))]
        elif op == 3:
            d[at:at] = d[max(0, at - 40):at]
        else:
            d[at:at] = rng.choice([b"\n", b"{", b"[", b"]", b",", b"-", b"e9", b'"', b"\r"])
    return bytes(d)


@pytest.mark.parametrize("form", FORMS)
def test_random_damage_raises_only_hydron_errors(form):
    data = hydron.dumps(unit_vectors(9), form, chunk_vectors=4)
    rng = np.random.default_rng(17)
    for _ in range(1500):
        damaged = _damage(rng, data)
        try:
            hydron.loads(damaged)
        except HydronError:
            continue
        # Accepted only if the damage left the bytes as they were.
        assert damaged == data


_LOAD_IN_CHILD = """
import sys, hashlib, hydron
try:
    a = hydron.load(sys.argv[1], policy=sys.argv[2])
    print("ok", a.shape, hashlib.sha256(a.tobytes()).hexdigest())
except hydron.HydronError as e:
    print(type(e).__name__, e)
"""


def _load_in_child(path, policy, threads):
    import subprocess
    import sys
    env = dict(os.environ)
    if threads is None:
        env.pop("RAYON_NUM_THREADS", None)
    else:
        env["RAYON_NUM_THREADS"] = str(threads)
    done = subprocess.run([sys.executable, "-c", _LOAD_IN_CHILD, str(path), policy],
                          env=env, capture_output=True, text=True, check=True)
    return done.stdout


def test_large_files_load_the_same_across_cores_and_on_one_thread(tmp_path):
    """hydron.load reads a binary file of 4 MiB of vectors or more across
    every core; with RAYON_NUM_THREADS=1 it reads it on one thread. Same
    array, same errors, whatever is wrong with the file."""
    v = unit_vectors(150_001, seed=5)
    v[999] *= 2  # not unit: refused when strict, fixed when renormalizing
    path = tmp_path / "big.hyd"
    hydron.save(path, v, policy="trusted")
    good = path.read_bytes()
    bad_crc = bytearray(good)
    bad_crc[3_000_000] ^= 0x10
    cases = {"good": good, "flipped": bytes(bad_crc), "cut": good[:-100]}
    for what, data in cases.items():
        path.write_bytes(data)
        for policy in ["strict", "renormalize", "trusted"]:
            all_cores = _load_in_child(path, policy, None)
            one = _load_in_child(path, policy, 1)
            assert all_cores == one, (what, policy)
            expected_ok = what == "good" and policy != "strict"
            assert all_cores.startswith("ok") == expected_ok, (what, policy, all_cores)
    path.write_bytes(good)
    assert (hydron.load(path, policy="trusted") == v).all()


def test_file_objects_that_are_not_hydron_data_are_refused_after_their_first_bytes():
    """A file object is read as a stream: /dev/zero, random bytes or any
    never-ending pipe is refused by its first bytes, never read on."""
    for device in ["/dev/zero", "/dev/urandom"]:
        with open(device, "rb") as f:
            with pytest.raises(FormatError, match="not a hydron file: it starts with"):
                hydron.load(f)
        with open(device, "rb") as f:
            with pytest.raises(FormatError, match="not a hydron file: it starts with"):
                hydron.iter_chunks(f)
        if "parquet" in hydron.FEATURES:
            with open(device, "rb") as f:
                with pytest.raises(FormatError):
                    hydron.load_parquet(f)


class _EndlessParquet:
    """A file object that starts like Parquet and never ends."""

    def __init__(self):
        self.sent = 0

    def read(self, n=-1):
        if self.sent == 0:
            self.sent = 4
            return b"PAR1"
        self.sent += n
        return bytes(n)


@needs_parquet
def test_a_parquet_stream_is_read_whole_only_up_to_1_gib():
    for load in [hydron.load, hydron.load_parquet, hydron.load_codes_parquet]:
        endless = _EndlessParquet()
        with pytest.raises(HydronError, match="more than 1073741824 bytes") as caught:
            load(endless)
        assert caught.value.offset == 1 << 30
        assert endless.sent <= (1 << 30) + (2 << 20)


def test_a_pipe_is_decoded_as_it_arrives(tmp_path):
    """iter_chunks on a pipe yields the first chunk while the writer still
    holds the rest back (it would wait for ever if the pipe were read whole
    first), and load gives the whole batch."""
    import threading
    v = unit_vectors(10, seed=3)
    data = hydron.dumps(v, chunk_vectors=4)
    first_chunk_end = 20 + 24 + (len(data) - 20 - 24 - 3 * 28) // 3 + 4  # roughly: past chunk 0
    got_first = threading.Event()
    waited_in_vain = []

    def write(w):
        with os.fdopen(w, "wb") as out:
            out.write(data[:first_chunk_end + 100])
            out.flush()
            if not got_first.wait(10):
                waited_in_vain.append(True)
            out.write(data[first_chunk_end + 100:])

    r, w = os.pipe()
    writer = threading.Thread(target=write, args=(w,))
    writer.start()
    with os.fdopen(r, "rb") as f:
        chunks = hydron.iter_chunks(f)
        first = next(chunks)
        got_first.set()
        rest = list(chunks)
    writer.join()
    assert not waited_in_vain, "the first chunk came only after the whole pipe"
    assert (np.concatenate([first, *rest]) == v).all()
    assert len(first) == 4

    r, w = os.pipe()
    got_first.set()
    writer = threading.Thread(target=write, args=(w,))
    writer.start()
    with os.fdopen(r, "rb") as f:
        assert (hydron.load(f) == v).all()
    writer.join()


def test_a_parquet_name_gets_parquet_unless_a_container_format_is_asked(tmp_path):
    if "parquet" in hydron.FEATURES:  # (tests/test_parquet_writer.py has the rest)
        with hydron.FileWriter(tmp_path / "p.parquet") as w:
            w.write(THREE)
        assert hydron.detect_format(tmp_path / "p.parquet") == hydron.Format.PARQUET
        os.remove(tmp_path / "p.parquet")
    else:  # (tests/test_features.py has the rest)
        with pytest.raises(FeatureNotBuiltError, match="writing Parquet"):
            hydron.FileWriter(tmp_path / "g.parquet")
    assert os.listdir(tmp_path) == []
    with hydron.FileWriter(tmp_path / "g.parquet", "fory") as w:  # asked for: a container
        w.write(THREE)
    assert (bits(hydron.load(tmp_path / "g.parquet")) == bits(THREE)).all()  # by content
    for save in (lambda: hydron.save(tmp_path / "big.parquet", THREE, chunk_vectors=2_000_000),
                 lambda: hydron.dumps(THREE, "parquet", chunk_vectors=0)):
        with pytest.raises(ValueError, match="chunk_vectors"):
            save()


class _FailingPath:
    """An ``os.PathLike`` whose ``__fspath__`` raises."""

    def __fspath__(self):
        raise ValueError("no path today")


@pytest.mark.parametrize("call", [
    lambda p: hydron.load(p), lambda p: hydron.iter_chunks(p), lambda p: hydron.detect_format(p),
    pytest.param(lambda p: hydron.load_parquet(p), marks=needs_parquet),
    pytest.param(lambda p: hydron.iter_parquet(p), marks=needs_parquet),
    lambda p: hydron.save(p, hydron.E8_ROOTS), lambda p: hydron.FileWriter(p),
    pytest.param(lambda p: hydron.save_parquet(p, hydron.E8_ROOTS), marks=needs_parquet),
])
def test_an_exception_from_fspath_is_raised_as_it_was(call):
    # (It was hidden behind "expected a path, a file object or bytes".)
    with pytest.raises(ValueError, match="no path today"):
        call(_FailingPath())


def test_an_unfinished_writer_warns_when_collected(tmp_path):
    """As Python's own files do when collected unclosed: the vectors are
    lost (the temporary file is removed), and a ResourceWarning says so."""
    import gc
    import warnings

    w = hydron.FileWriter(tmp_path / "w.hyd")
    w.write(unit_vectors(3))
    with pytest.warns(ResourceWarning, match=r"w\.hyd.* was never finished: 3 vectors written "
                                             r"and discarded, nothing saved"):
        del w
        gc.collect()
    assert os.listdir(tmp_path) == []
    with pytest.warns(ResourceWarning, match="0 vectors"):
        hydron.FileWriter(tmp_path / "unused.jsonl")
        gc.collect()
    # Finished, aborted, closed or failed writers are collected quietly.
    inf = unit_vectors(2)
    inf[1, 1] = np.inf
    endings = [lambda w: w.finish(), lambda w: w.abort(), lambda w: w.close(),
               lambda w: w.__exit__(None), lambda w: pytest.raises(InvalidVectorError, w.write, inf)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for i, end in enumerate(endings):
            w = hydron.FileWriter(tmp_path / f"q{i}.jsonl", policy="trusted")
            w.write(unit_vectors(2))
            end(w)
            del w
            gc.collect()


def test_save_and_writers_pick_the_form_from_the_suffix(tmp_path):
    for name, form in [("a.jsonl", "jsonl"), ("b.JSONL", "jsonl"), ("c.hyd", "fory"),
                       ("d", "fory"), ("e.bin", "fory")]:
        hydron.save(tmp_path / name, THREE)
        assert hydron.detect_format(tmp_path / name).value == form, name
        assert (bits(hydron.load(tmp_path / name)) == bits(THREE)).all()
        with hydron.FileWriter(tmp_path / f"w-{name}") as w:
            w.write(THREE)
        assert hydron.detect_format(tmp_path / f"w-{name}").value == form, name
    for make in (lambda p: hydron.save(p, THREE), lambda p: hydron.FileWriter(p)):
        with pytest.raises(ValueError, match=r"a\.json: hydron files are not plain JSON.*encode_json"):
            make(tmp_path / "a.json")
    hydron.save(tmp_path / "x.json", THREE, "jsonl")         # asked for by name: written
    assert hydron.detect_format(tmp_path / "x.json").value == "jsonl"
    assert not (tmp_path / "a.json").exists()


def test_a_text_mode_file_object_is_a_type_error(tmp_path):
    """Not the UnicodeDecodeError of reading binary bytes as text."""
    path = tmp_path / "v.hyd"
    hydron.save(path, unit_vectors(50))
    calls = [hydron.load, lambda f: hydron.iter_chunks(f)]
    if "parquet" in hydron.FEATURES:
        calls.append(hydron.load_parquet)
    for call in calls:
        with open(path) as f, pytest.raises(TypeError, match=r"got a text-mode one \(TextIOWrapper\)"
                                                            r": open the file in binary mode"):
            call(f)
        with pytest.raises(TypeError, match="text-mode"):
            call(io.StringIO("[0, 0, 0, 0, 0, 0, 0, 0]\n"))
