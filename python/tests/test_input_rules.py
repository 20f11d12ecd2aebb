"""numpy's input rules (README, "The numpy rules"): conversion as
``np.asarray(x, dtype=np.float32)`` with overflow named, a single ``(8,)``
vector giving the single result's shape, broadcasting, an array ``t`` in
``slerp``, ``out=``, and ``nearest_roots`` of any finite vector; with
hypothesis properties against numpy's own conversion and ``normalize``."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import hydron
from hydron import InvalidVectorError

from conftest import bits, missing, require, unit_vectors

V = unit_vectors(40)
W = unit_vectors(40, seed=9)


def same(a, b) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    return bool((bits(a) == bits(b)).all()) if a.dtype == np.float32 else bool((a == b).all())


# ------------------------------------------------------------------ conversion

@pytest.mark.parametrize("call", [
    hydron.normalize, hydron.validate, hydron.nearest_roots, hydron.nearest_lattice_points,
    hydron.encode_batch, lambda v: hydron.dot(v, v), lambda v: hydron.slerp(v, v, 0.5),
])
@pytest.mark.parametrize("shape", [(3, 8), (8,)])
def test_a_finite_value_beyond_float32_is_named(call, shape):
    x = np.zeros(shape)
    x[..., 0] = 1.0
    big = (2, 5) if len(shape) == 2 else (5,)
    x[big] = -1e39
    with pytest.raises(InvalidVectorError, match=r"vector (2|0): coordinate 5 is -1e\+?39, "
                                                 r"beyond float32's range") as e:
        call(x)
    assert (e.value.index, e.value.coordinate) == ((2, 5) if len(shape) == 2 else (0, 5))
    # Just below float32's largest value rounds to it: not an overflow.
    x[big] = float(np.finfo(np.float32).max)
    hydron.nearest_lattice_points(np.zeros(shape))  # (no error for ordinary values)
    assert hydron.normalize(x).dtype == np.float32


def test_infinity_and_nan_in_float64_are_reported_as_in_float32():
    x = np.array(V[:3], np.float64)
    x[1, 4] = np.inf
    with pytest.raises(InvalidVectorError, match="vector 1: coordinate 4 is infinite"):
        hydron.validate(x)
    x[1, 4] = np.nan
    with pytest.raises(InvalidVectorError, match="vector 1: coordinate 4 is NaN"):
        hydron.normalize(x)


@settings(max_examples=60, deadline=None)
@given(hnp.arrays(np.float64, st.sampled_from([(8,), (1, 8), (5, 8)]),
                  elements=st.floats(-1e30, 1e30, allow_nan=False)))
def test_conversion_is_numpys(x):
    converted = np.asarray(x, dtype=np.float32)
    assert same(hydron.normalize(x), hydron.normalize(converted))
    assert same(hydron.nearest_lattice_points(x / 1e25), hydron.nearest_lattice_points(
        np.asarray(x / 1e25, dtype=np.float32)))
    assert same(hydron.nearest_roots(x), hydron.nearest_roots(converted))


def test_a_pandas_frame_and_an_arrow_array_are_read_as_their_vectors():
    pd = require("pandas")
    assert same(hydron.normalize(pd.DataFrame(V * 2)), hydron.normalize(V * 2))
    if "arrow" in hydron.FEATURES:
        assert same(hydron.nearest_roots(hydron.to_arrow(V)), hydron.nearest_roots(V))


def test_masked_arrays_are_refused_everywhere():
    m = np.ma.masked_array(V, mask=np.zeros(V.shape, bool))
    for call in (lambda: hydron.normalize(m), lambda: hydron.dot(V[0], m),
                 lambda: hydron.codes_to_vectors(np.ma.masked_array([1, 2], mask=[0, 1])),
                 lambda: hydron.spherical_mean(V[:2], np.ma.masked_array([1.0, 2.0])),
                 lambda: hydron.slerp(V, W, np.ma.masked_array(np.zeros(40))),
                 lambda: hydron.normalize(V, out=np.ma.masked_array(np.empty_like(V)))):
        with pytest.raises(TypeError, match="masked arrays are not accepted"):
            call()


# ------------------------------------------------------------------ one vector

def test_one_vector_gives_one_result_everywhere():
    v, raw = V[5], V[5] * 3
    assert same(hydron.normalize(raw), hydron.normalize(raw[None])[0])
    hydron.validate(v)
    code = hydron.nearest_roots(v)
    assert isinstance(code, np.uint8) and code == hydron.nearest_roots(V)[5]
    assert same(hydron.nearest_lattice_points(raw), hydron.nearest_lattice_points(raw[None])[0])
    assert same(hydron.codes_to_vectors(code), hydron.E8_ROOTS[code])
    assert isinstance(hydron.dot(v, W[5]), np.float32)
    assert isinstance(hydron.geodesic_distance(v, W[5]), np.float32)
    assert hydron.slerp(v, W[5], 0.3).shape == (8,)
    assert np.allclose(hydron.spherical_mean(v), v, atol=1e-6)
    assert hydron.decode_batch(hydron.encode_batch(v)).shape == (1, 8)
    assert same(hydron.normalize(v, policy="strict"), v)


# ------------------------------------------------------------------ broadcasting

@pytest.mark.parametrize("f", [hydron.dot, hydron.geodesic_distance])
def test_one_vector_or_row_broadcasts_against_many(f):
    rows = f(np.repeat(V[:1], 40, axis=0), W)
    for one in (V[0], V[:1]):
        assert same(f(one, W), rows) and same(f(W, one), f(W, np.repeat(V[:1], 40, axis=0)))
    assert f(V[:1], W[:1]).shape == (1,) and f(V[0], W[:1]).shape == (1,)
    assert np.ndim(f(V[0], W[0])) == 0
    with pytest.raises(ValueError, match="40 and 3 rows do not broadcast"):
        f(V, W[:3])


def test_slerp_broadcasts_and_takes_an_array_t():
    ts = np.linspace(-0.5, 1.5, 40)
    each = np.array([hydron.slerp(V[i], W[i], t) for i, t in enumerate(ts)])
    assert same(hydron.slerp(V, W, ts), each)
    assert same(hydron.slerp(V, W, ts.tolist()), each)
    one_a = np.array([hydron.slerp(V[0], W[i], t) for i, t in enumerate(ts)])
    assert same(hydron.slerp(V[:1], W, ts), one_a) and same(hydron.slerp(V[0], W, ts), one_a)
    path = hydron.slerp(V[0], W[0], ts)
    assert path.shape == (40, 8) and same(path[7], hydron.slerp(V[0], W[0], ts[7]))
    assert same(hydron.slerp(V, W, [0.25]), hydron.slerp(V, W, 0.25))
    # t is clamped to [0, 1], as Gf8::slerp clamps it (no extrapolation).
    assert same(hydron.slerp(V, W, [-0.5] * 20 + [1.5] * 20), np.concatenate([V[:20], W[20:]]))
    with pytest.raises(ValueError, match="40, 40 and 3 rows do not broadcast"):
        hydron.slerp(V, W, ts[:3])
    with pytest.raises(ValueError, match=r"expected finite numbers .* at t\[2\]"):
        hydron.slerp(V[:3], W[:3], [0, 1, np.nan])
    with pytest.raises(ValueError, match="finite"):
        hydron.slerp(V, W, 1e39)
    with pytest.raises(ValueError, match="one-dimensional"):
        hydron.slerp(V, W, np.zeros((40, 1)))


# ------------------------------------------------------------------ out=

OUT_CALLS = {
    "normalize": (lambda x, **kw: hydron.normalize(x * 2, **kw), np.float32, (40, 8)),
    "nearest_roots": (lambda x, **kw: hydron.nearest_roots(x * 2, **kw), np.uint8, (40,)),
    "nearest_lattice_points": (lambda x, **kw: hydron.nearest_lattice_points(x * 3, **kw),
                               np.int32, (40, 8)),
    "dot": (lambda x, **kw: hydron.dot(x[0], W, **kw), np.float32, (40,)),
    "geodesic_distance": (lambda x, **kw: hydron.geodesic_distance(x, W, **kw), np.float32,
                          (40,)),
}


@pytest.mark.parametrize("name", OUT_CALLS)
def test_out_is_written_in_place_and_checked(name):
    call, dtype, shape = OUT_CALLS[name]
    want = call(V)
    out = np.full(shape, 7, dtype)
    assert call(V, out=out) is out and same(out, want)
    for bad, error, message in [
        (np.empty(shape, np.float64 if dtype != np.float64 else np.float32), TypeError,
         "out: expected dtype"),
        (list(np.empty(shape, dtype)), TypeError, "out: expected a numpy array"),
        (np.empty((41,) + shape[1:], dtype), ValueError, r"out: expected shape \(40"),
        (np.empty((80,) + shape[1:], dtype)[::2], ValueError, "C-contiguous"),
        (np.empty(shape, dtype).T if len(shape) == 2 else np.empty(shape, dtype)[::-1],
         ValueError, "out: expected"),
    ]:
        with pytest.raises(error, match=message):
            call(V, out=bad)
    read_only = np.empty(shape, dtype)
    read_only.setflags(write=False)
    with pytest.raises(ValueError, match="not writable"):
        call(V, out=read_only)


def test_out_for_one_vector_and_overlap():
    out = np.empty((), np.uint8)
    assert hydron.nearest_roots(V[3], out=out) is out and out == hydron.nearest_roots(V[3])
    out8 = np.empty(8, np.float32)
    assert same(hydron.normalize(V[3] * 2, out=out8), hydron.normalize(V[3] * 2))
    v = V.copy()
    with pytest.raises(ValueError, match="shares memory with the input"):
        hydron.normalize(v, out=v)
    with pytest.raises(ValueError, match="not with a policy"):
        hydron.normalize(v, policy="renormalize", out=np.empty_like(v))


NO_ALLOCATION = """
import resource, sys, numpy as np, hydron
n = 2_000_000
# Made in float32 (no larger temporary), and never freed: the peak is what
# is held, so a new result of 8 MiB or more would raise it.
v = np.random.default_rng(0).random((n, 8), dtype=np.float32) - np.float32(0.5)
outs = {"normalize": np.empty((n, 8), np.float32), "lattice": np.empty((n, 8), np.int32),
        "dot": np.empty(n, np.float32)}
for a in outs.values():
    a.fill(0)
calls = {"normalize": lambda o: hydron.normalize(v, out=o),
         "lattice": lambda o: hydron.nearest_lattice_points(v, out=o),
         "dot": lambda o: hydron.dot(v, v, out=o)}
u = hydron.normalize(v)
calls["dot"] = lambda o: hydron.dot(u, u, out=o)
for name, call in calls.items():
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    call(outs[name])
    grew = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    print(name, grew)
    assert grew < 4 * 1024, (name, grew)  # KiB: the results are 8 to 64 MiB
"""


def test_out_allocates_no_result():
    """The peak memory does not grow by the size of the result (8 to 64
    MiB here) when it is written into ``out``."""
    if sys.platform != "linux":
        missing("ru_maxrss in KiB is Linux's")
    run = subprocess.run([sys.executable, "-c", NO_ALLOCATION], capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr


# ------------------------------------------------------------------ nearest_roots of any finite vector

def test_nearest_roots_of_any_finite_vector():
    raw = np.random.default_rng(3).standard_normal((100_000, 8)).astype(np.float32)
    raw[::7] *= 1e-20
    raw[::11] *= 1e20
    raw[5] = 0.0
    raw[6] = -0.0
    codes = hydron.nearest_roots(raw)
    nonzero = np.ones(len(raw), bool)
    nonzero[[5, 6]] = False
    assert (codes == hydron.nearest_roots(hydron.normalize(raw)))[nonzero].all()
    # The zero vector keeps its documented codes (normalize makes -0.0 +0.0).
    assert codes[5] == 0 and codes[6] == 3
    # Unit vectors are quantized as they are (the checked kernel's codes).
    u = hydron.normalize(raw)
    assert (hydron.nearest_roots(u) == hydron.nearest_roots(u, strict=True)).all()
    # A late non-unit vector, after many unit ones, and across blocks.
    mixed = u.copy()
    mixed[70_000:] *= 5
    assert (hydron.nearest_roots(mixed) == hydron.nearest_roots(u)).all()
    mixed[90_001, 2] = np.inf
    with pytest.raises(InvalidVectorError, match="vector 90001: coordinate 2 is infinite"):
        hydron.nearest_roots(mixed)
    with pytest.raises(InvalidVectorError, match="vector 70000: norm"):
        hydron.nearest_roots(mixed, strict=True)


def _is_unit_or_zero(x: np.ndarray) -> bool:
    try:
        hydron.validate(x)
        return True
    except InvalidVectorError:
        return False


@settings(max_examples=300, deadline=None)
@given(hnp.arrays(np.float32, (8,), elements=st.floats(-2.0**100, 2.0**100, width=32)))
def test_nearest_roots_of_a_raw_vector_is_that_of_its_normalization(x):
    if _is_unit_or_zero(x):
        assert hydron.nearest_roots(x) == hydron.nearest_roots(x, strict=True)
    else:
        assert hydron.nearest_roots(x) == hydron.nearest_roots(hydron.normalize(x))


@settings(max_examples=100, deadline=None)
@given(hnp.arrays(np.float32, st.tuples(st.integers(0, 300), st.just(8)),
                  elements=st.floats(-2.0**20, 2.0**20, width=32)))
def test_nearest_roots_of_raw_batches_match_one_by_one(x):
    codes = hydron.nearest_roots(x)
    assert codes.shape == (len(x),)
    for i in range(0, len(x), 37):
        assert codes[i] == hydron.nearest_roots(x[i])
