"""hydron for Python against plain numpy, stock pyfory and Rust itself, in
one run: every figure is a median of several runs, every comparison a ratio.

    python/.venv/bin/python python/bench.py              # 1,048,576 vectors
    python/.venv/bin/python python/bench.py --n 100000 --runs 3   # a smoke run
    python/.venv/bin/python python/bench.py --n 1000 --per-call   # the fixed cost of a call

Needs the extension built into the venv (bash python/run-tests.sh, or
`maturin develop --release` in python/) and cargo: the Rust figures come
from `cargo run --release -p hydron-py --example baseline` on the same file
in the same run (hydron-py/examples/baseline.rs), so the "vs Rust" ratios
compare like with like on this machine.

Compared:
- nearest_roots: hydron vs the best plain-numpy way (a (n, 240) matmul with
  E8_ROOTS.T and argmax, in blocks of 65,536 rows to bound memory) vs the
  Rust batch kernels (batch::nearest_roots on vectors already checked, and
  batch::nearest_roots_checked, which checks raw arrays in the same pass as
  hydron.nearest_roots does);
- loading a binary file into numpy: hydron.load vs stock
  pyfory.deserialize of the same batch as one message (+ reshape) vs Rust's
  validated file::load;
- normalize and validate vs the numpy one-liners;
- files and bytes vs numpy (--io: only these): save(durable=False) vs
  np.save, load vs np.load, dumps and encode_batch vs v.tobytes(), each
  pair timed in turns;
- geodesic_distance (row by row, and one vector against all rows) vs
  np.arccos(np.clip(np.einsum(...), -1, 1)), and slerp (row by row with a
  t per row, one vector against all rows with one t) vs the numpy slerp
  formula;
- the fixed cost of a call on one vector (--per-call: only that).
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import runpy
import statistics
import subprocess
import tempfile
import time
import timeit

import numpy as np

import hydron

HERE = pathlib.Path(__file__).resolve().parent


def median_time(f, runs: int) -> float:
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def per_call(f, number: int = 20000, repeat: int = 7) -> float:
    return statistics.median(timeit.repeat(f, number=number, repeat=repeat)) / number


def fmt(seconds: float) -> str:
    if seconds >= 1e-3:
        return f"{seconds * 1e3:9.2f} ms"
    if seconds >= 1e-6:
        return f"{seconds * 1e6:9.2f} µs"
    return f"{seconds * 1e9:9.1f} ns"


def numpy_nearest_roots(v: np.ndarray) -> np.ndarray:
    roots_t = np.ascontiguousarray(hydron.E8_ROOTS.T)
    out = np.empty(len(v), np.uint8)
    for i in range(0, len(v), 65536):
        out[i:i + 65536] = np.argmax(v[i:i + 65536] @ roots_t, axis=1)
    return out


def numpy_normalize(v: np.ndarray) -> np.ndarray:
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def numpy_validate(v: np.ndarray) -> bool:
    return bool(np.isfinite(v).all()) and bool(
        (np.abs(np.einsum("ij,ij->i", v, v) - 1) <= 2e-5).all())


def numpy_geodesic(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.arccos(np.clip(np.einsum("ij,ij->i", a, b), -1, 1))


def numpy_geodesic_to(q: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.arccos(np.clip(np.einsum("j,ij->i", q, b), -1, 1))


def numpy_slerp(a: np.ndarray, b: np.ndarray, t) -> np.ndarray:
    """The textbook formula; ``a`` may be one vector, ``t`` a number or one
    per row."""
    theta = numpy_geodesic_to(a, b) if a.ndim == 1 else numpy_geodesic(a, b)
    t = np.asarray(t, np.float32)
    return ((np.sin((1 - t) * theta)[:, None] * a + np.sin(t * theta)[:, None] * b)
            / np.sin(theta)[:, None])


def kernel_rows(v: np.ndarray, runs: int) -> list:
    """geodesic_distance and slerp against their numpy one-liners, each pair
    timed in turns (``paired_medians``): rows of (what, hydron, numpy,
    numpy's name)."""
    w = hydron.normalize(np.random.default_rng(1).standard_normal(v.shape).astype(np.float32))
    q = v[0].copy()
    t = np.random.default_rng(2).random(len(v)).astype(np.float32)
    np.testing.assert_allclose(hydron.geodesic_distance(v, w), numpy_geodesic(v, w), atol=1e-3)
    np.testing.assert_allclose(hydron.slerp(q, w, 0.3), numpy_slerp(q, w, 0.3), atol=1e-3)
    rows = []
    for what, mine, theirs, name in [
            ("geodesic_distance", lambda: hydron.geodesic_distance(v, w),
             lambda: numpy_geodesic(v, w), "numpy arccos(clip(einsum))"),
            ("geodesic_distance (1 vs N)", lambda: hydron.geodesic_distance(q, w),
             lambda: numpy_geodesic_to(q, w), "numpy arccos(clip(einsum))"),
            ("slerp (t per row)", lambda: hydron.slerp(v, w, t),
             lambda: numpy_slerp(v, w, t), "numpy slerp formula"),
            ("slerp (1 vs N, one t)", lambda: hydron.slerp(q, w, 0.3),
             lambda: numpy_slerp(q, w, 0.3), "numpy slerp formula")]:
        mine(), theirs()  # warm: first-call costs, page cache
        t_mine, t_theirs = paired_medians(mine, theirs, runs)
        rows.append((what, t_mine, t_theirs, name))
    return rows


def rust_baseline(n: int, path: str, runs: int) -> dict | None:
    cmd = ["cargo", "run", "--quiet", "--release", "-p", "hydron-py", "--example", "baseline",
           "--", str(n), path, str(runs)]
    try:
        done = subprocess.run(cmd, cwd=HERE.parent, capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError) as e:
        print(f"(Rust baseline unavailable: {e})")
        return None
    return json.loads(done.stdout.strip().splitlines()[-1])


def paired_medians(f, g, runs: int) -> tuple[float, float]:
    """The median times of ``f`` and ``g``, run in turns, so that both see
    the same state of the machine (its page cache, its other work)."""
    tf, tg = [], []
    for _ in range(runs):
        for fn, times in ((f, tf), (g, tg)):
            t = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t)
    return statistics.median(tf), statistics.median(tg)


def io_rows(v: np.ndarray, tmp: str, runs: int) -> list[tuple[str, float, float, str]]:
    """Files and bytes against numpy's own: save (not durable: neither is
    np.save) vs np.save, load vs np.load, dumps and encode_batch vs
    v.tobytes(). hydron writes atomically (a temporary file renamed over
    the target) with a CRC-32 per chunk and checks every vector; numpy
    truncates the file in place and checks nothing."""
    hyd, npy = os.path.join(tmp, "io.hyd"), os.path.join(tmp, "io.npy")
    rows = []
    t_save, t_np_save = paired_medians(lambda: hydron.save(hyd, v, durable=False),
                                       lambda: np.save(npy, v), runs)
    rows.append(("save(durable=False)", t_save, t_np_save, "np.save (same array)"))
    t_load, t_np_load = paired_medians(lambda: hydron.load(hyd), lambda: np.load(npy), runs)
    rows.append(("load (strict)", t_load, t_np_load, "np.load (.npy of the same array)"))
    t_dumps, t_tobytes = paired_medians(lambda: hydron.dumps(v), v.tobytes, runs)
    rows.append(("dumps (binary container)", t_dumps, t_tobytes, "v.tobytes()"))
    t_batch, t_tobytes = paired_medians(lambda: hydron.encode_batch(v), v.tobytes, runs)
    rows.append(("encode_batch", t_batch, t_tobytes, "v.tobytes()"))
    return rows


def print_io(rows: list[tuple[str, float, float, str]]) -> None:
    print(f"{'files and bytes vs numpy':28} {'hydron':>12} {'numpy':>12}  {'ratio':>8}  "
          "numpy call (ratio: numpy time / hydron time)")
    for what, mine, other, name in rows:
        print(f"{what:28} {fmt(mine)} {fmt(other)}  {other / mine:7.2f}x  {name}")


def fixed_costs(v: np.ndarray) -> None:
    """The fixed cost of a call on one vector (and on 63, the most that keep
    the GIL), against a Python no-op and numpy's own smallest calls."""
    one = v[:1].copy()
    vec = v[0].copy()
    small = v[:63].copy()
    message = hydron.encode_gf8(vec)
    print("fixed cost of a call (median per call):")
    for what, f in [("a Python no-op function", lambda: None),
                    ("numpy: np.empty(1, uint8)", lambda: np.empty(1, np.uint8)),
                    ("numpy: (1 x 8).copy()", lambda: one.copy()),
                    ("hydron.nearest_roots(1 x 8)", lambda: hydron.nearest_roots(one)),
                    ("hydron.nearest_roots(63 x 8)", lambda: hydron.nearest_roots(small)),
                    ("hydron.normalize(1 x 8)", lambda: hydron.normalize(one)),
                    ("hydron.validate(1 x 8)", lambda: hydron.validate(one)),
                    ("hydron.dot(8, 8)", lambda: hydron.dot(vec, vec)),
                    ("hydron.encode_gf8(8)", lambda: hydron.encode_gf8(vec)),
                    ("hydron.decode_gf8(message)", lambda: hydron.decode_gf8(message)),
                    ("numpy_nearest_roots(1 x 8)", lambda: numpy_nearest_roots(one))]:
        print(f"  {what:30} {fmt(per_call(f))}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=1 << 20, help="vectors (default 1048576)")
    ap.add_argument("--runs", type=int, default=7, help="runs per median (default 7)")
    ap.add_argument("--per-call", action="store_true", help="only the fixed cost of a call")
    ap.add_argument("--io", action="store_true",
                    help="only save/load/dumps/encode_batch against numpy")
    args = ap.parse_args()
    n, runs = args.n, args.runs

    rng = np.random.default_rng(0)
    raw = rng.standard_normal((n, 8)).astype(np.float32)
    v = hydron.normalize(raw)
    if args.per_call:
        fixed_costs(v)
        return
    if args.io:
        with tempfile.TemporaryDirectory() as tmp:
            rows = io_rows(v, tmp, runs)
        print(f"hydron {hydron.__version__}, numpy {np.__version__}, {n} vectors, "
              f"median of {runs} runs in turns")
        print_io(rows)
        return

    stock = runpy.run_path(str(HERE / "examples" / "stock_pyfory.py"))
    fory = stock["make_fory"]()
    message = hydron.encode_batch(v)

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "points.hyd")
        hydron.save(path, v)
        message_path = os.path.join(tmp, "points.msg")
        with open(message_path, "wb") as f:
            f.write(message)

        def pyfory_from_file():
            with open(message_path, "rb") as f:
                return fory.deserialize(f.read()).values.reshape(-1, 8)

        rust = rust_baseline(n, path, runs)

        rows = []  # (what, hydron, other, other name)
        # numpy's matmul runs last: OpenBLAS's threads keep spinning for a
        # while after a call, and would take the cores from hydron's pool
        # in the timings after it (see python/README.md, "All cores").
        t_roots = median_time(lambda: hydron.nearest_roots(v), runs)
        t_roots_t = median_time(lambda: hydron.nearest_roots(v, trusted=True), runs)
        t_load = median_time(lambda: hydron.load(path), runs)
        t_pyfory = median_time(lambda: fory.deserialize(message).values.reshape(-1, 8), runs)
        rows.append(("load (binary file, strict)", t_load, t_pyfory,
                     "stock pyfory.deserialize(message bytes in memory)"))
        t_pyfory_file = median_time(pyfory_from_file, runs)
        rows.append(("load (binary file, strict)", t_load, t_pyfory_file,
                     "stock pyfory.deserialize(open(message file).read())"))
        t_decode = median_time(lambda: hydron.decode_batch(message), runs)
        rows.append(("decode_batch (strict)", t_decode, t_pyfory,
                     "stock pyfory.deserialize(message bytes in memory)"))
        t_norm = median_time(lambda: hydron.normalize(raw), runs)
        t_np_norm = median_time(lambda: numpy_normalize(raw), runs)
        rows.append(("normalize", t_norm, t_np_norm, "numpy v / norm"))
        t_val = median_time(lambda: hydron.validate(v), runs)
        t_np_val = median_time(lambda: numpy_validate(v), runs)
        rows.append(("validate", t_val, t_np_val, "numpy isfinite + norm"))
        rows += kernel_rows(v, runs)
        io = io_rows(v, tmp, runs)
        t_np_roots = median_time(lambda: numpy_nearest_roots(v), max(3, runs // 2))
        rows[:0] = [("nearest_roots", t_roots, t_np_roots, "numpy matmul+argmax"),
                    ("nearest_roots(trusted=True)", t_roots_t, t_np_roots, "numpy matmul+argmax")]
        assert (hydron.nearest_roots(v) == numpy_nearest_roots(v)).all()

    print(f"hydron {hydron.__version__}, backend {hydron.backend()}, numpy {np.__version__}, "
          f"{n} vectors, median of {runs} runs (os.cpu_count() = {os.cpu_count()})")
    print()
    print(f"{'':28} {'hydron':>12} {'compared with':>12}  {'speed-up':>8}  baseline")
    for what, mine, other, name in rows:
        print(f"{what:28} {fmt(mine)} {fmt(other)}  {other / mine:7.1f}x  {name}")
    print()
    print_io(io)
    if rust:
        print()
        print(f"{'vs Rust (same file, same run)':28} {'Python':>12} {'Rust':>12}  {'ratio':>8}  "
              "Rust call (per vector)")
        for what, mine, key in [("nearest_roots", t_roots, "nearest_roots"),
                                ("nearest_roots", t_roots, "nearest_roots_checked"),
                                ("nearest_roots(trusted=True)", t_roots_t, "nearest_roots"),
                                ("load (binary file, strict)", t_load, "load"),
                                ("normalize", t_norm, "normalize"),
                                ("validate", t_val, "validate")]:
            print(f"{what:28} {fmt(mine)} {fmt(rust[key])}  {mine / rust[key]:7.2f}x  "
                  f"{key} ({fmt(mine / n).strip()} vs {fmt(rust[key] / n).strip()})")

    print()
    fixed_costs(v)

if __name__ == "__main__":
    main()
