"""hydron.LatticeQuantizer and hydron.LatticeCodes: encode, decode and search
against numpy oracles, the input rules, the errors, and the GIL.

Typed for ``mypy --strict`` against the stubs (hydron/_hydron.pyi)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import Callable
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hydron
from hydron import InvalidVectorError, LatticeCodes, LatticeQuantizer

from conftest import seen_during

F32 = npt.NDArray[np.float32]
Metric = Literal["l2", "ip"]


def gaussian(n: int, dim: int, seed: int = 0) -> F32:
    return np.random.default_rng(seed).standard_normal((n, dim), dtype=np.float32)


def nmse(x: F32, y: F32) -> float:
    return float(((x.astype(np.float64) - y) ** 2).sum() / (x.astype(np.float64) ** 2).sum())


# ---------------------------------------------------------------- parameters


def test_parameters() -> None:
    q = LatticeQuantizer(384)
    assert (q.dim, q.bits, q.seed, q.rotate, q.scale, q.code_size) == (384, 2, 0, True, "vector", 96)
    assert LatticeQuantizer(8).rotate is False
    assert LatticeQuantizer(9).rotate is True
    assert LatticeQuantizer(9, rotate=False).rotate is False
    assert LatticeQuantizer(3, rotate=True).rotate is True
    assert LatticeQuantizer(20, 2, 5).code_size == 6
    q = LatticeQuantizer(50, seed=3, scale="unit")
    assert repr(q) == 'hydron.LatticeQuantizer(dim=50, bits=2, seed=3, rotate=True, scale="unit")'


def test_bad_parameters() -> None:
    with pytest.raises(hydron.HydronError, match="dimension"):
        LatticeQuantizer(0)
    with pytest.raises(hydron.HydronError, match="3 bits per coordinate"):
        LatticeQuantizer(8, bits=3)
    with pytest.raises(ValueError, match="scale"):
        LatticeQuantizer(8, scale="none")  # type: ignore[arg-type]
    with pytest.raises(OverflowError):
        LatticeQuantizer(-1)


# ---------------------------------------------------------------- encode / decode


def test_round_trip_of_gaussian_vectors() -> None:
    x = gaussian(2000, 384)
    q = LatticeQuantizer(384, seed=1)
    codes = q.encode(x)
    assert codes.codes.shape == (2000, 96) and codes.codes.dtype == np.uint8
    assert codes.scales is not None and codes.scales.shape == (2000,)
    assert codes.scales.dtype == np.float32
    assert (len(codes), codes.dim, codes.bits, codes.seed, codes.rotate, codes.scale) == (
        2000, 384, 2, 1, True, "vector")
    y = q.decode(codes)
    assert y.shape == (2000, 384) and y.dtype == np.float32
    # The goal at 2 bits on Gaussian data: NMSE <= 0.092.
    assert nmse(x, y) <= 0.092


def test_unit_mode_stores_no_scales() -> None:
    x = gaussian(100, 40)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    q = LatticeQuantizer(40, scale="unit")
    codes = q.encode(x)
    assert codes.scales is None and codes.scale == "unit"
    assert nmse(x, q.decode(codes)) < 0.15
    # The same codes as per-vector mode would give unit vectors, without scales.
    per_vector = LatticeQuantizer(40).encode(x)
    assert per_vector.scales is not None
    assert np.allclose(per_vector.scales, per_vector.scales[0], rtol=1e-5)


@pytest.mark.parametrize("bits", [2, 4])
def test_direction_mode_decodes_unit_vectors(bits: int) -> None:
    x = gaussian(300, 50, seed=4)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    q = LatticeQuantizer(50, bits, seed=3, scale="direction")
    assert repr(q) == (f'hydron.LatticeQuantizer(dim=50, bits={bits}, seed=3, rotate=True, '
                       'scale="direction")')
    codes = q.encode(x)
    assert codes.scales is None and codes.scale == "direction"
    unit = LatticeQuantizer(50, bits, seed=3, scale="unit")
    u = unit.encode(x)
    assert np.array_equal(codes.codes, u.codes)  # encoded as unit mode
    y = q.decode(codes)
    assert np.allclose(np.linalg.norm(y.astype(np.float64), axis=1), 1, atol=1e-6)
    # unit mode's vectors, normalized
    yu = unit.decode(u).astype(np.float64)
    assert np.allclose(y, yu / np.linalg.norm(yu, axis=1, keepdims=True), atol=1e-6)
    assert nmse(x, y) < (0.15 if bits == 2 else 0.02)


@pytest.mark.parametrize("metric", ["l2", "ip"])
@pytest.mark.parametrize("bits", [2, 4])
def test_direction_search_equals_brute_force_over_decode(metric: Metric, bits: int) -> None:
    # dim a multiple of 8: the search measures decode's (unit) vectors.
    x = gaussian(2000, 56, seed=5)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    q = LatticeQuantizer(56, bits, seed=6, scale="direction")
    codes = q.encode(x)
    check_search(q, codes, gaussian(13, 56, seed=7), 10, metric)


def test_inputs_are_converted_as_numpy_does() -> None:
    q = LatticeQuantizer(12, seed=2)
    x = gaussian(5, 12)
    want = q.encode(x)

    class Wrapped:
        def __array__(self, dtype: Any = None, copy: Any = None) -> F32:
            return x

    for given_x in (x.astype(np.float64), x.tolist(), Wrapped(), np.asfortranarray(x),
                    np.repeat(x, 2, axis=0)[::2]):
        got = q.encode(given_x)
        assert np.array_equal(got.codes, want.codes)
        assert want.scales is not None and got.scales is not None
        assert np.array_equal(got.scales, want.scales)
    half = x.astype(np.float16)
    assert np.array_equal(q.encode(half).codes, q.encode(half.astype(np.float32)).codes)
    one = q.encode(x[3])
    assert one.codes.shape == (1, q.code_size)
    assert np.array_equal(one.codes[0], want.codes[3])
    assert np.array_equal(q.encode(np.zeros((0, 12))).codes, np.zeros((0, 2 * 2), np.uint8))


def test_encode_errors_name_the_place() -> None:
    q = LatticeQuantizer(10)
    x = gaussian(4, 10)
    x[2, 7] = np.nan
    with pytest.raises(InvalidVectorError) as e:
        q.encode(x)
    assert (e.value.index, e.value.coordinate) == (2, 7)
    assert "vector 2, coordinate 7 is NaN" in str(e.value)
    x[2, 7] = 0
    x[1, 0] = -np.inf
    with pytest.raises(InvalidVectorError) as e:
        q.encode(x)
    assert (e.value.index, e.value.coordinate) == (1, 0)
    big = x.astype(np.float64)
    big[1, 0] = 0
    big[3, 9] = 1e300
    with pytest.raises(InvalidVectorError) as e:
        q.encode(big)
    assert (e.value.index, e.value.coordinate) == (3, 9)
    with pytest.raises(ValueError, match=r"expected shape \(N, 10\) or \(10,\), got \(4, 8\)"):
        q.encode(np.zeros((4, 8)))
    with pytest.raises(TypeError):
        q.encode(np.array([["a"] * 10]))
    with pytest.raises(TypeError, match="masked"):
        q.encode(np.ma.masked_array(gaussian(2, 10)))


# ---------------------------------------------------------------- LatticeCodes


def test_codes_are_constructible_from_arrays() -> None:
    q = LatticeQuantizer(20, seed=9, rotate=False)
    x = gaussian(30, 20)
    c = q.encode(x)
    assert c.scales is not None
    again = LatticeCodes(c.codes, c.scales.astype(np.float64), dim=20, seed=9, rotate=False)
    assert np.array_equal(q.decode(again), q.decode(c))
    assert again.codes is c.codes  # kept, not copied
    assert repr(again) == ('hydron.LatticeCodes(<30 vectors>, dim=20, bits=2, seed=9, '
                           'rotate=False, scale="vector")')
    assert again.quantizer.decode(again).shape == (30, 20)
    unit = LatticeCodes(c.codes, None, dim=20, seed=9, rotate=False)
    assert unit.scale == "unit" and unit.scales is None


def test_codes_are_checked() -> None:
    q = LatticeQuantizer(16)
    c = q.encode(gaussian(3, 16))
    assert c.scales is not None
    with pytest.raises(TypeError, match="uint8"):
        LatticeCodes(c.codes.astype(np.int64), c.scales, dim=16)
    with pytest.raises(ValueError, match=r"expected shape \(N, 4\)"):
        LatticeCodes(c.codes[:, :3], c.scales, dim=16)
    with pytest.raises(ValueError, match="scales"):
        LatticeCodes(c.codes, c.scales[:2], dim=16)
    bad = c.scales.copy()
    bad[1] = -1
    with pytest.raises(InvalidVectorError) as e:
        LatticeCodes(c.codes, bad, dim=16)
    assert e.value.index == 1
    # Codes of other parameters are refused by a quantizer.
    other = LatticeCodes(c.codes, c.scales, dim=16, seed=1)
    with pytest.raises(ValueError, match="other parameters"):
        q.decode(other)
    with pytest.raises(ValueError, match="other parameters"):
        q.search(other, gaussian(1, 16), 1)


def test_codes_take_a_scale_mode() -> None:
    q = LatticeQuantizer(24, seed=2, scale="direction")
    c = q.encode(gaussian(10, 24))
    again = LatticeCodes(c.codes, None, dim=24, seed=2, scale="direction")
    assert (again.scale, again.scales) == ("direction", None)
    assert np.array_equal(q.decode(again), q.decode(c))
    # Without scale=, no scales means unit mode: another quantizer's codes.
    with pytest.raises(ValueError, match="other parameters"):
        q.decode(LatticeCodes(c.codes, None, dim=24, seed=2))
    with pytest.raises(ValueError, match="stores no scales"):
        LatticeCodes(c.codes, np.ones(10, np.float32), dim=24, seed=2, scale="direction")
    with pytest.raises(ValueError, match="needs one scale per vector"):
        LatticeCodes(c.codes, None, dim=24, seed=2, scale="vector")
    with pytest.raises(ValueError, match="scale"):
        LatticeCodes(c.codes, None, dim=24, scale="sideways")  # type: ignore[arg-type]


# ---------------------------------------------------------------- search


def brute_force(x: F32, queries: F32, metric: Metric) -> npt.NDArray[np.float64]:
    """Distances of every query to every (decoded) vector, in float64."""
    a, b = queries.astype(np.float64), x.astype(np.float64)
    if metric == "ip":
        return np.asarray(a @ b.T, dtype=np.float64)
    return np.asarray((a * a).sum(1)[:, None] - 2 * a @ b.T + (b * b).sum(1)[None, :],
                      dtype=np.float64)


def check_search(q: LatticeQuantizer, codes: LatticeCodes, queries: F32, k: int,
                 metric: Metric) -> None:
    """``search`` against brute force over ``decode``'s vectors: distances
    within float32 rounding, ranks in order, and nothing left out that is
    better than the last kept by more than that."""
    decoded = q.decode(codes)
    d, ids = q.search(codes, queries, k, metric=metric)
    n = len(codes)
    assert d.shape == ids.shape == (len(queries), min(k, n))
    assert d.dtype == np.float32 and ids.dtype == np.int64
    exact = brute_force(decoded, queries, metric)
    scale = ((queries.astype(np.float64) ** 2).sum(1)[:, None]
             + (decoded.astype(np.float64) ** 2).sum(1)[None, :])
    tol = 1e-5 * scale + 1e-6
    for i in range(len(queries)):
        got = exact[i, ids[i]]
        assert np.all(np.abs(got - d[i]) <= tol[i, ids[i]])
        sign = 1 if metric == "l2" else -1
        assert np.all(np.diff(sign * d[i]) >= 0)
        assert len(set(ids[i].tolist())) == len(ids[i])
        if n > k:
            rest = np.setdiff1d(np.arange(n), ids[i])
            bar = sign * exact[i, ids[i][-1]]
            assert np.all(sign * exact[i, rest] >= bar - 2 * tol[i].max())


@pytest.mark.parametrize("metric", ["l2", "ip"])
def test_search_equals_brute_force_over_decode(metric: Metric) -> None:
    q = LatticeQuantizer(64, seed=4)
    x = gaussian(3000, 64, seed=1) * np.linspace(0.1, 3, 3000, dtype=np.float32)[:, None]
    codes = q.encode(x)
    check_search(q, codes, gaussian(17, 64, seed=2), 10, metric)


def test_search_finds_the_vectors_themselves() -> None:
    q = LatticeQuantizer(96, seed=8)
    x = gaussian(5000, 96)
    codes = q.encode(x)
    d, ids = q.search(codes, x[:50], 1)
    assert ids[:, 0].tolist() == list(range(50))
    d1, ids1 = q.search(codes, x[7], 4)
    assert d1.shape == ids1.shape == (4,)
    assert ids1[0] == 7
    d2, ids2 = q.search(codes, x[:3].tolist(), 5000 + 10)
    assert ids2.shape == (3, 5000)  # k > N gives N
    assert sorted(ids2[0].tolist()) == list(range(5000))


def test_ties_go_to_the_smaller_id() -> None:
    q = LatticeQuantizer(16, seed=1)
    base = gaussian(1, 16, seed=3)
    x = np.repeat(base, 9, axis=0)
    codes = q.encode(x)
    for metric in ("l2", "ip"):
        d, ids = q.search(codes, gaussian(2, 16), 4, metric=metric)
        assert ids.tolist() == [[0, 1, 2, 3]] * 2
        assert np.all(d == d[:, :1])


def test_search_errors() -> None:
    q = LatticeQuantizer(10)
    codes = q.encode(gaussian(5, 10))
    queries = gaussian(3, 10)
    with pytest.raises(hydron.HydronError, match="k must be at least 1"):
        q.search(codes, queries, 0)
    with pytest.raises(ValueError, match="metric"):
        q.search(codes, queries, 1, metric="cosine")  # type: ignore[arg-type]
    queries[2, 4] = np.nan
    with pytest.raises(InvalidVectorError) as e:
        q.search(codes, queries, 1)
    assert (e.value.index, e.value.coordinate) == (2, 4)
    assert "query 2, coordinate 4 is NaN" in str(e.value)
    with pytest.raises(ValueError, match="expected shape"):
        q.search(codes, np.zeros((1, 11)), 1)
    with pytest.raises(OverflowError):
        q.search(codes, gaussian(1, 10), -1)


def test_four_bits_pass_through() -> None:
    q = LatticeQuantizer(384, bits=4, seed=2)
    assert (q.bits, q.code_size) == (4, 192)
    x = gaussian(500, 384)
    codes = q.encode(x)
    assert codes.codes.shape == (500, 192) and codes.bits == 4
    assert nmse(x, q.decode(codes)) < 0.01
    assert codes.scales is not None
    again = LatticeCodes(codes.codes, codes.scales, dim=384, bits=4, seed=2)
    assert np.array_equal(q.decode(again), q.decode(codes))
    for metric in ("l2", "ip"):
        check_search(q, codes, gaussian(9, 384, seed=5), 10, metric)
    d, ids = q.search(codes, x[:20], 1)
    assert ids[:, 0].tolist() == list(range(20))


# ---------------------------------------------------------------- properties


@settings(max_examples=60, deadline=None)
@given(dim=st.integers(1, 100), n=st.integers(1, 40), seed=st.integers(0, 2**64 - 1),
       log_scale=st.floats(-20, 20), rotate=st.sampled_from([None, True, False]),
       unit=st.booleans())
def test_decode_encode_error_is_bounded(dim: int, n: int, seed: int, log_scale: float,
                                        rotate: bool | None, unit: bool) -> None:
    """Gaussian vectors of any scale: the NMSE is near the codebook's 0.091
    (rotated, or whole-block data), never above 0.2 with per-vector scales;
    in unit mode, on unit vectors."""
    x = gaussian(n, dim, seed % 2**32) * np.float32(2.0 ** log_scale)
    if unit:
        x = (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)
    q = LatticeQuantizer(dim, seed=seed, rotate=rotate, scale="unit" if unit else "vector")
    y = q.decode(q.encode(x))
    assert y.shape == x.shape and np.isfinite(y).all()
    bound = 0.25 if dim * n < 64 else 0.2
    assert nmse(x, y) <= bound


@settings(max_examples=40, deadline=None)
@given(dim=st.integers(1, 60), n=st.integers(1, 200), nq=st.integers(1, 12),
       k=st.integers(1, 30), seed=st.integers(0, 2**32 - 1), metric=st.sampled_from(["l2", "ip"]),
       rotate=st.sampled_from([None, False]))
def test_search_equals_brute_force_property(dim: int, n: int, nq: int, k: int, seed: int,
                                            metric: Metric, rotate: bool | None) -> None:
    """Whole blocks (``dim`` rounded up to a multiple of 8), where L2 is the
    distance to ``decode``'s vectors; the inner product for any ``dim``."""
    if metric == "l2":
        dim = 8 * -(-dim // 8)
    q = LatticeQuantizer(dim, seed=seed, rotate=rotate)
    codes = q.encode(gaussian(n, dim, seed))
    check_search(q, codes, gaussian(nq, dim, seed + 1), k, metric)


# ---------------------------------------------------------------- GIL


def test_every_call_releases_the_gil() -> None:
    q = LatticeQuantizer(384)
    x = gaussian(3000, 384)
    codes = q.encode(x)
    calls: dict[str, Callable[[], object]] = {
        "encode": lambda: q.encode(x),
        "decode": lambda: q.decode(codes),
        "search": lambda: q.search(codes, x[:64], 10),
    }
    for name, call in calls.items():
        assert seen_during(call) == {"in_call": True, "done": False}, name


# ---------------------------------------------------------------- fork

FORK_SCENARIO = textwrap.dedent("""
    import os, sys
    import numpy as np
    import hydron

    q = hydron.LatticeQuantizer(384, seed=3)
    x = np.random.default_rng(0).standard_normal((20_000, 384), dtype=np.float32)
    codes = q.encode(x)  # 960,000 blocks: split across the pool
    queries = x[:64]
    want = q.search(codes, queries, 10)  # 61M block-queries: split
    pid = os.fork()
    if pid == 0:
        again = q.encode(x[:5000])
        got = q.search(codes, queries, 10)
        same = (np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])
                and np.array_equal(again.codes, codes.codes[:5000]))
        os._exit(0 if same else 1)
    _, status = os.waitpid(pid, 0)
    sys.exit(os.waitstatus_to_exitcode(status))
""")


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")
def test_a_forked_child_searches_with_the_parents_results() -> None:
    """After the parent used the thread pool, a forked child's encode and
    search run (on a pool of its own) and give the parent's results; a hang
    kills the scenario's process group and fails."""
    proc = subprocess.Popen([sys.executable, "-c", FORK_SCENARIO], start_new_session=True)
    try:
        assert proc.wait(timeout=300) == 0
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        pytest.fail("the forked child hung")
