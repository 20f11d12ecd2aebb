"""The geometry functions on numpy arrays: results against plain-numpy
references, and every kind of bad input (NaN, wrong shape, wrong dtype,
non-contiguous, zero rows, read-only)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hydron
from hydron import HydronError, InvalidVectorError

from conftest import bits, unit_vectors


def raw(n: int, seed: int = 1) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((n, 8)).astype(np.float32)


# ------------------------------------------------------------------ normalize / validate


def test_normalize_matches_numpy():
    v = raw(1000)
    v[5] = 0
    out = hydron.normalize(v)
    with np.errstate(invalid="ignore"):
        want = v / np.linalg.norm(v, axis=1, keepdims=True)
    want[5] = 0
    assert out.dtype == np.float32 and out.shape == (1000, 8)
    np.testing.assert_allclose(out, want, rtol=0, atol=3e-7)
    assert (bits(out[5]) == 0).all()
    hydron.validate(out)


def test_normalize_handles_extreme_scales():
    v = np.zeros((2, 8), np.float32)
    v[0, [2, 7]] = 3e38          # squares overflow float32
    v[1, 0] = 1e-42              # a subnormal
    out = hydron.normalize(v)
    np.testing.assert_allclose(out[0, [2, 7]], [2 ** -0.5] * 2, rtol=1e-6)
    assert out[1, 0] == 1.0


def test_normalize_policies():
    v = unit_vectors(10)
    v[3] *= 2
    with pytest.raises(InvalidVectorError, match="vector 3: norm is 2") as e:
        hydron.normalize(v, policy="strict")
    assert e.value.index == 3 and e.value.norm == pytest.approx(2, rel=1e-5)
    r = hydron.normalize(v, policy=hydron.Policy.RENORMALIZE)
    keep = np.arange(10) != 3
    assert (bits(r[keep]) == bits(v[keep])).all()  # valid vectors kept bit for bit
    assert abs(np.linalg.norm(r[3]) - 1) < 1e-6
    assert (bits(hydron.normalize(v, policy="trusted")) == bits(v)).all()
    assert (bits(hydron.apply_policy(v, "renormalize")) == bits(r)).all()
    with pytest.raises(ValueError, match="unknown policy 'lenient'"):
        hydron.normalize(v, policy="lenient")


@pytest.mark.parametrize("value, what", [(np.nan, "NaN"), (np.inf, "infinite"),
                                         (-np.inf, "infinite")])
def test_non_finite_coordinates_name_vector_and_coordinate(value, what):
    v = unit_vectors(20)
    v[13, 6] = value
    for f in (hydron.normalize, hydron.validate, hydron.nearest_lattice_points):
        with pytest.raises(InvalidVectorError, match=f"vector 13: coordinate 6 is {what}") as e:
            f(v)
        assert (e.value.index, e.value.coordinate) == (13, 6)
        assert isinstance(e.value, HydronError) and isinstance(e.value, ValueError)


def test_validate():
    v = unit_vectors(100)
    assert hydron.validate(v) is None
    v[42] *= 1.001
    with pytest.raises(InvalidVectorError, match="vector 42: norm is 1.001") as e:
        hydron.validate(v)
    assert e.value.index == 42 and e.value.coordinate is None
    # The tolerance: |‖x‖² − 1| ≤ 2e-5.
    edge = np.zeros((2, 8), np.float32)
    edge[0, 0] = np.sqrt(np.float32(1 + 1.9e-5))
    edge[1, 0] = np.sqrt(np.float32(1 + 2.2e-5))
    hydron.validate(edge[:1])
    with pytest.raises(InvalidVectorError):
        hydron.validate(edge)


# ------------------------------------------------------------------ E8


def test_e8_roots():
    r = hydron.E8_ROOTS
    assert r.shape == (240, 8) and r.dtype == np.float32 and not r.flags.writeable
    np.testing.assert_allclose(np.linalg.norm(r, axis=1), 1, rtol=1e-6)
    g = (r.astype(np.float64) @ r.T.astype(np.float64))
    assert len(np.unique(np.round(g, 5))) == 5  # inner products 1, ±1/2, 0, -1


def test_nearest_roots_matches_brute_force():
    v = hydron.normalize(raw(20000, seed=3))
    want = np.argmax(v @ hydron.E8_ROOTS.T, axis=1)
    codes = hydron.nearest_roots(v)
    assert codes.dtype == np.uint8 and codes.shape == (20000,)
    assert (codes == want).all()
    assert (hydron.nearest_roots(hydron.E8_ROOTS) == np.arange(240)).all()
    assert hydron.nearest_roots(np.zeros((1, 8), np.float32)).tolist() == [0]


def test_nearest_roots_checks_finiteness_strict_checks_norms_trusted_nothing():
    v = raw(4)
    assert (hydron.nearest_roots(v) == hydron.nearest_roots(hydron.normalize(v))).all()
    with pytest.raises(InvalidVectorError, match="vector 0: norm"):
        hydron.nearest_roots(v, strict=True)
    v[2, 1] = np.nan
    with pytest.raises(InvalidVectorError, match="vector 2: coordinate 1 is NaN"):
        hydron.nearest_roots(v)
    assert hydron.nearest_roots(v, trusted=True).shape == (4,)  # meaningless, harmless
    with pytest.raises(ValueError, match="strict and trusted"):
        hydron.nearest_roots(v, strict=True, trusted=True)


@pytest.mark.parametrize("bad", [1023, 1024, 40000, 99999])
def test_nearest_roots_reports_the_first_bad_vector_of_a_large_batch(bad):
    # The check runs block by block (and across threads) with the
    # quantization: the first bad vector is reported wherever it lies.
    v = hydron.normalize(raw(100000, seed=5))
    v[bad, 6] = np.inf
    if bad + 1 < len(v):
        v[-1, 0] = np.nan  # a later bad vector is not the one reported
    with pytest.raises(InvalidVectorError, match=f"vector {bad}: coordinate 6") as e:
        hydron.nearest_roots(v)
    assert (e.value.index, e.value.coordinate) == (bad, 6)


def test_codes_to_vectors():
    codes = np.array([0, 17, 239, 112], np.uint8)
    assert (bits(hydron.codes_to_vectors(codes)) == bits(hydron.E8_ROOTS[codes])).all()
    assert (bits(hydron.codes_to_vectors([5, 6])) == bits(hydron.E8_ROOTS[[5, 6]])).all()
    assert hydron.codes_to_vectors(np.zeros(0, np.int64)).shape == (0, 8)
    for bad, code in [([1, 240], 240), (np.array([3, -1]), -1)]:
        with pytest.raises(InvalidVectorError, match=f"vector 1: E8 root code {code} is out") as e:
            hydron.codes_to_vectors(bad)
        assert (e.value.index, e.value.code) == (1, code)
    with pytest.raises(TypeError, match="integer codes"):
        hydron.codes_to_vectors(np.array([1.5]))
    with pytest.raises(ValueError, match="one-dimensional"):
        hydron.codes_to_vectors(np.zeros((2, 2), np.uint8))


def lattice_reference(x: np.ndarray) -> np.ndarray:
    """Conway–Sloane in float64: the nearer of the nearest D8 point and the
    nearest D8 + 1/2 point; returns doubled coordinates."""
    def d8(y):
        f = np.round(y)
        odd = (f.sum(axis=1) % 2) != 0
        err = y - f
        k = np.argmax(np.abs(err), axis=1)
        rows = np.flatnonzero(odd)
        f[rows, k[rows]] += np.where(err[rows, k[rows]] > 0, 1, -1)
        return f
    x = x.astype(np.float64)
    a = d8(x)
    b = d8(x - 0.5) + 0.5
    use_b = ((x - b) ** 2).sum(1) < ((x - a) ** 2).sum(1)
    return np.where(use_b[:, None], b, a) * 2


def test_nearest_lattice_points_matches_reference():
    x = raw(5000, seed=9) * 3
    out = hydron.nearest_lattice_points(x)
    assert out.dtype == np.int32 and out.shape == (5000, 8)
    assert (out == lattice_reference(x)).all()
    half = out % 2 != 0  # all or none half-integers
    assert (half.all(1) | ~half.any(1)).all()
    with pytest.raises(InvalidVectorError, match="vector 1: coordinate 3 .* outside the lattice"):
        hydron.nearest_lattice_points(np.array([[0] * 8, [0, 0, 0, 1e9, 0, 0, 0, 0]], np.float32))


# ------------------------------------------------------------------ sphere


def test_dot_row_wise_and_one_against_many():
    a, b = unit_vectors(300, seed=1), unit_vectors(300, seed=2)
    rows = hydron.dot(a, b)
    assert rows.dtype == np.float32 and rows.shape == (300,)
    np.testing.assert_allclose(rows, (a * b).sum(1), atol=1e-6)
    many = hydron.dot(a[7], b)
    np.testing.assert_allclose(many, b @ a[7], atol=1e-6)
    assert (bits(hydron.dot(b, a[7])) == bits(many)).all()
    one = hydron.dot(a[1], b[1])
    assert isinstance(one, np.float32) and one == pytest.approx(float(rows[1]), abs=1e-6)
    with pytest.raises(ValueError, match="same number of rows"):
        hydron.dot(a, b[:10])


def test_geodesic_distance():
    a, b = unit_vectors(200, seed=4)[4:], unit_vectors(200, seed=5)[4:]
    d = hydron.geodesic_distance(a, b)
    want = np.arccos(np.clip((a.astype(np.float64) * b).sum(1), -1, 1))
    np.testing.assert_allclose(d, want, atol=2e-4)
    assert hydron.geodesic_distance(a[0], a[0]) == pytest.approx(0, abs=1e-3)
    assert hydron.geodesic_distance(a[0], -a[0]) == pytest.approx(np.pi, abs=1e-3)
    np.testing.assert_allclose(hydron.geodesic_distance(a[0], b), want_one := np.arccos(
        np.clip(b.astype(np.float64) @ a[0], -1, 1)), atol=2e-4)
    assert want_one.shape == (196,)


def test_slerp():
    a, b = unit_vectors(50, seed=6)[4:], unit_vectors(50, seed=7)[4:]
    np.testing.assert_allclose(hydron.slerp(a, b, 0.0), a, atol=1e-6)
    np.testing.assert_allclose(hydron.slerp(a, b, 1.0), b, atol=1e-6)
    mid = hydron.slerp(a, b, 0.5)
    hydron.validate(mid)
    np.testing.assert_allclose(hydron.geodesic_distance(a, mid), hydron.geodesic_distance(mid, b),
                               atol=1e-4)
    one = hydron.slerp(a[0], b[0], 0.25)
    assert one.shape == (8,)
    assert (bits(one) == bits(hydron.slerp(a[:1], b[:1], 0.25)[0])).all()
    with pytest.raises(ValueError, match="finite"):
        hydron.slerp(a, b, float("nan"))


def _stable_angles(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """2·atan2(|â − b̂|, |â + b̂|) in float64: the angle Gf8 computes."""
    a = a.astype(np.float64)
    b = b.astype(np.float64)
    a = a / np.linalg.norm(a, axis=-1, keepdims=True)
    b = b / np.linalg.norm(b, axis=-1, keepdims=True)
    return 2 * np.arctan2(np.linalg.norm(a - b, axis=-1), np.linalg.norm(a + b, axis=-1))


def test_sphere_kernels_in_bulk_and_broadcast():
    # Past the kernels' thread split (16,384 and 8,192 rows) and not a
    # multiple of the SIMD width: the batch kernels against float64, and
    # one vector against many the same bits as that vector repeated.
    n = 40_003
    a, b = unit_vectors(n + 4, seed=11)[4:], unit_vectors(n + 4, seed=12)[4:]
    b[:100] = a[:100]
    b[100:200] = -a[100:200]
    d = hydron.geodesic_distance(a, b)
    assert d.dtype == np.float32 and d.shape == (n,)
    want = _stable_angles(a, b)
    ulp = np.spacing(want.astype(np.float32)).astype(np.float64)
    # float32 arithmetic more than about 1e-3 rad from 0 and π (within 5
    # ulp), float64 closer (1 ulp).
    narrow = (want > 9e-4) & (want < np.pi - 9e-4)
    assert (np.abs(d - want) <= np.where(narrow, 5, 1) * ulp).all()
    assert np.abs(d - want).mean() <= ulp.mean()
    assert (d[:100] == 0).all() and (d[100:200] == np.float32(np.pi)).all()
    q = a[7]
    one = hydron.geodesic_distance(q, b)
    assert (bits(one) == bits(hydron.geodesic_distance(np.tile(q, (n, 1)), b))).all()
    assert (bits(hydron.geodesic_distance(b, q[None, :])) == bits(one)).all()
    out = np.empty(n, np.float32)
    assert hydron.geodesic_distance(q, b, out=out) is out
    assert (bits(out) == bits(one)).all()

    t = np.random.default_rng(13).random(n).astype(np.float32)
    t[:10] = 0
    t[10:20] = 1
    v = hydron.slerp(a, b, t)
    assert v.shape == (n, 8) and v.dtype == np.float32
    hydron.validate(v)
    assert (bits(v[:10]) == bits(a[:10])).all() and (bits(v[10:20]) == bits(b[10:20])).all()
    # Along the great circle: at t·θ from a and (1 − t)·θ from b (away
    # from opposite pairs, where every half circle is a shortest path).
    theta = want[200:]
    np.testing.assert_allclose(_stable_angles(a, v)[200:], t[200:] * theta, atol=2e-6)
    np.testing.assert_allclose(_stable_angles(v, b)[200:], (1 - t[200:]) * theta, atol=2e-6)
    scalar_t = hydron.slerp(a, b, 0.25)
    assert (bits(scalar_t) == bits(hydron.slerp(a, b, np.full(n, 0.25, np.float32)))).all()
    from_q = hydron.slerp(q, b, t)
    assert (bits(from_q) == bits(hydron.slerp(np.tile(q, (n, 1)), b, t))).all()
    path = hydron.slerp(a[0], b[0], t)
    assert path.shape == (n, 8)
    assert (bits(path[:3]) == bits(np.stack([hydron.slerp(a[0], b[0], x) for x in t[:3]]))).all()


def test_geodesic_distance_checks_a_then_b_in_its_pass():
    # The vectors are checked in the kernel's own pass; the errors are
    # those of checking a, then b, and come before shape and out= errors.
    n = 20_000
    a, b = unit_vectors(n + 4, seed=14)[4:], unit_vectors(n + 4, seed=15)[4:]
    bad_a, bad_b = a.copy(), b.copy()
    bad_a[15_000, 2] = np.nan
    bad_b[9, 0] = 3.0
    with pytest.raises(InvalidVectorError) as e:
        hydron.geodesic_distance(bad_a, bad_b)
    assert e.value.index == 15_000 and e.value.coordinate == 2
    with pytest.raises(InvalidVectorError) as e:
        hydron.geodesic_distance(a, bad_b)
    assert e.value.index == 9
    with pytest.raises(InvalidVectorError) as e:
        hydron.geodesic_distance(bad_b[:10], a[:7])
    assert e.value.index == 9
    with pytest.raises(ValueError, match="broadcast"):
        hydron.geodesic_distance(a[:10], a[:7])
    with pytest.raises(InvalidVectorError):
        hydron.geodesic_distance(bad_a, b, out=np.empty(3, np.float32))
    with pytest.raises(InvalidVectorError) as e:
        hydron.geodesic_distance(np.full(8, 2, np.float32), b)
    assert e.value.index == 0


def test_spherical_mean():
    rng = np.random.default_rng(8)
    center = hydron.normalize(raw(1, seed=10))[0]
    pts = hydron.normalize(center + 0.05 * rng.standard_normal((50, 8)).astype(np.float32))
    m = hydron.spherical_mean(pts)
    assert m.shape == (8,) and m.dtype == np.float32
    euclid = pts.astype(np.float64).mean(0)
    assert hydron.geodesic_distance(m, (euclid / np.linalg.norm(euclid)).astype(np.float32)) < 1e-3
    w = np.zeros(50)
    w[3] = 1
    np.testing.assert_allclose(hydron.spherical_mean(pts, w), pts[3], atol=1e-5)
    with pytest.raises(HydronError, match="empty set"):
        hydron.spherical_mean(np.zeros((0, 8), np.float32))
    with pytest.raises(ValueError, match="one weight per point"):
        hydron.spherical_mean(pts, [1.0])
    w[5] = -1
    with pytest.raises(InvalidVectorError, match="weight 5 is -1") as e:
        hydron.spherical_mean(pts, w)
    assert e.value.index == 5


def test_weights_keep_their_ratios_beyond_float32s_range():
    p = hydron.E8_ROOTS[[0, 1]]
    want = hydron.spherical_mean(p, [1, 3])
    # Scaled by powers of two, which is exact: the same mean, bit for bit.
    for scale in (2.0 ** -160, 2.0 ** -140, 2.0 ** 200, 2.0 ** 1000):
        got = hydron.spherical_mean(p, np.array([1, 3], np.float64) * scale)
        assert (bits(got) == bits(want)).all(), scale
    assert (bits(hydron.spherical_mean(p, [1e-50, 1e-50])) ==
            bits(hydron.spherical_mean(p, [1, 1]))).all()
    assert (bits(hydron.spherical_mean(p, [0, 1e300])) == bits(p[1])).all()
    with pytest.raises(InvalidVectorError, match="weight 1 is inf"):
        hydron.spherical_mean(p, [1, np.inf])
    with pytest.raises(InvalidVectorError, match="weight 0 is -1"):
        hydron.spherical_mean(p, [-1, 1e300])


def test_subnormal_float64_weights_keep_their_ratios():
    # The scale that brings them to 1 (about 2^1072) is not a float64 on
    # its own: it is applied in two factors.
    p = hydron.E8_ROOTS[[0, 1]]
    got = hydron.spherical_mean(p, np.array([1, 3], np.float64) * 5e-324)
    assert (bits(got) == bits(hydron.spherical_mean(p, [1, 3]))).all()


@pytest.mark.parametrize("bad, error, text", [
    (1.0, ValueError, r"shape \(2,\), got shape \(\)"),
    ([[1, 2]], ValueError, r"got shape \(1, 2\)"),
    (np.array(["1", "2"]), TypeError, "expected real numbers, got dtype <U1"),
    ([1, 2j], TypeError, "expected real numbers, got dtype complex128"),
    ([1, 2, 3], ValueError, r"one weight per point \(2\), got 3"),
])
def test_weights_that_are_not_one_real_number_per_point(bad, error, text):
    with pytest.raises(error, match=text):
        hydron.spherical_mean(hydron.E8_ROOTS[[0, 1]], bad)


def test_codes_out_of_range_are_named_without_wrapping():
    for codes, shown in [(np.array([3, 2**64 - 1], np.uint64), 2**64 - 1),
                         (np.array([3, -1], np.int64), -1),
                         (np.array([3, 240], np.uint16), 240)]:
        with pytest.raises(InvalidVectorError, match=f"E8 root code {shown} is out of range") as e:
            hydron.codes_to_vectors(codes)
        assert e.value.index == 1 and e.value.code == shown


# ------------------------------------------------------------------ bad input, every function

ONE = unit_vectors(1)[0]
VECTOR_FUNCTIONS = {
    "normalize": hydron.normalize,
    "validate": hydron.validate,
    "nearest_roots": hydron.nearest_roots,
    "nearest_lattice_points": hydron.nearest_lattice_points,
    "dot": lambda v: hydron.dot(ONE, v),
    "geodesic_distance": lambda v: hydron.geodesic_distance(v, ONE),
    "slerp": lambda v: hydron.slerp(v, ONE, 0.3),
    "spherical_mean": hydron.spherical_mean,
    "encode_batch": hydron.encode_batch,
    "encode_json": hydron.encode_json,
    "encode_jsonl": hydron.encode_jsonl,
    "dumps": hydron.dumps,
}


def _same_result(got, want) -> bool:
    if isinstance(want, np.ndarray):
        return got.dtype == want.dtype and got.shape == want.shape and (
            (bits(got) == bits(want)).all() if want.dtype == np.float32 else (got == want).all())
    return type(got) is type(want) and (got == want or (got != got and want != want))


def _outcome(f, x):
    """``("ok", result)``, or ``("error", class, message)``."""
    try:
        return ("ok", f(x))
    except Exception as e:  # noqa: BLE001 (compared, not hidden)
        return ("error", type(e), str(e))


class _ArrayLike:
    """An object numpy converts through ``__array__`` (as a pandas frame or
    a torch tensor)."""

    def __init__(self, a):
        self.a = a

    def __array__(self, dtype=None, copy=None):
        return self.a if dtype is None else self.a.astype(dtype)


@pytest.mark.parametrize("name", VECTOR_FUNCTIONS)
def test_other_real_numbers_are_converted_as_numpy_converts_them(name):
    f = VECTOR_FUNCTIONS[name]
    v = unit_vectors(4)
    wide = v.astype(np.float64)
    for other in [wide, v.astype(np.float16), v.astype(">f4"), wide.tolist(), _ArrayLike(wide),
                  np.zeros((4, 8), np.int32), np.zeros((4, 8), bool)]:
        want = _outcome(f, np.asarray(other, dtype=np.float32))
        got = _outcome(f, other)
        assert got[0] == want[0] and (
            _same_result(got[1], want[1]) if got[0] == "ok" else got[1:] == want[1:]), other


@pytest.mark.parametrize("name", VECTOR_FUNCTIONS)
def test_what_is_not_real_numbers_is_a_type_error(name):
    f = VECTOR_FUNCTIONS[name]
    v = unit_vectors(4)
    for bad, shown in [(v.astype(np.complex64), "complex64"), (v.astype(str), "<U"),
                       (np.array([[object()] * 8] * 4), "object")]:
        with pytest.raises(TypeError, match=f"expected real numbers .*dtype {shown}"):
            f(bad)
    with pytest.raises(TypeError, match="masked arrays are not accepted"):
        f(np.ma.masked_array(v, mask=np.zeros(v.shape, bool)))


@pytest.mark.parametrize("name", VECTOR_FUNCTIONS)
def test_wrong_shape_is_a_value_error(name):
    f = VECTOR_FUNCTIONS[name]
    for shape in [(4, 7), (4, 9), (2, 4, 8), (32,)]:
        with pytest.raises(ValueError, match=r"expected shape \(N, 8\) or \(8,\), got"):
            f(np.zeros(shape, np.float32))


@pytest.mark.parametrize("name", VECTOR_FUNCTIONS)
def test_non_contiguous_and_read_only_input(name):
    f = VECTOR_FUNCTIONS[name]
    big = unit_vectors(40)
    strided = big[::3]
    fortran = np.asfortranarray(big[:13])
    assert not strided.flags.c_contiguous and not fortran.flags.c_contiguous
    for v in (strided, fortran):
        same = f(np.ascontiguousarray(v))
        got = f(v)
        if isinstance(same, np.ndarray):
            assert (bits(got) == bits(same)).all() if got.dtype == np.float32 else \
                (got == same).all()
        else:
            assert got == same
    ro = unit_vectors(9)
    before = ro.copy()
    ro.setflags(write=False)
    f(ro)
    assert (bits(ro) == bits(before)).all()


def _field(v: np.ndarray, pad: str) -> np.ndarray:
    """``v`` as the vector field of a structured array whose rows start
    with a ``pad`` field: a packed ``u1`` gives 33-byte rows (unaligned
    floats), ``u4`` gives 36-byte rows."""
    s = np.zeros(len(v), dtype=np.dtype([("tag", pad), ("v", "<f4", (8,))]))
    s["v"] = v
    return s["v"]


def _unaligned(v: np.ndarray) -> np.ndarray:
    """A C-contiguous float32 copy of ``v`` one byte off alignment."""
    buf = bytearray(v.nbytes + 1)
    out = np.frombuffer(memoryview(buf)[1:], dtype=np.float32).reshape(v.shape)
    out[...] = v
    return out


def _column_strided(v: np.ndarray) -> np.ndarray:
    wide = np.zeros((len(v), 16), np.float32)
    wide[:, ::2] = v
    return wide[:, ::2]


# Every way numpy can lay out float32 vectors: each must read the vectors
# the array shows, never the bytes at the wrong offsets.
LAYOUTS = {
    "packed struct field (33-byte rows, unaligned)": lambda v: _field(v, "u1"),
    "struct field (36-byte rows)": lambda v: _field(v, "<u4"),
    "unaligned C order": _unaligned,
    "reversed rows": lambda v: np.ascontiguousarray(v[::-1])[::-1],
    "every other column": _column_strided,
    "broadcast row (stride 0)": lambda v: np.broadcast_to(v[3], v.shape),
    "byte strides (36, 4) over a buffer": lambda v: np.lib.stride_tricks.as_strided(
        np.frombuffer(np.pad(np.ascontiguousarray(v), ((0, 0), (0, 1))).tobytes(),
                      np.float32), shape=v.shape, strides=(36, 4)),
}


@settings(max_examples=200, deadline=None)
@given(rows=st.integers(0, 12), col_stride=st.sampled_from([4, 5, 8, 12]),
       extra=st.integers(0, 40), offset=st.integers(0, 7), seed=st.integers(0, 2**32 - 1))
def test_any_byte_layout_reads_the_vectors_it_shows(rows, col_stride, extra, offset, seed):
    """Vectors at any byte offset, with any row and column strides (not
    multiples of 4, unaligned): the same results as their C-ordered copy."""
    row_stride = 7 * col_stride + 4 + extra
    buf = np.zeros(offset + rows * row_stride + 64, np.uint8)
    # Bytes offset..offset+4 as a float32, strided over the rest of buf.
    view = np.lib.stride_tricks.as_strided(
        buf[offset:offset + 4].view(np.float32),
        shape=(rows, 8), strides=(row_stride, col_stride), writeable=True)
    view[...] = raw(rows, seed)
    want = np.ascontiguousarray(view)
    assert (bits(hydron.normalize(view)) == bits(hydron.normalize(want))).all()
    unit = hydron.normalize(want)
    view[...] = unit
    assert (hydron.nearest_roots(view) == hydron.nearest_roots(unit)).all()
    assert (hydron.nearest_lattice_points(view) == hydron.nearest_lattice_points(unit)).all()


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("name", VECTOR_FUNCTIONS)
def test_every_numpy_layout_reads_the_vectors_it_shows(name, layout):
    f = VECTOR_FUNCTIONS[name]
    v = LAYOUTS[layout](unit_vectors(13))
    want = np.ascontiguousarray(v)
    assert (bits(v) == bits(want)).all()  # numpy sees the same vectors
    got, same = f(v), f(want)
    if isinstance(same, np.ndarray):
        assert got.dtype == same.dtype and got.shape == same.shape
        assert (bits(got) == bits(same)).all() if got.dtype == np.float32 else \
            (got == same).all()
    else:
        assert got == same


@pytest.mark.parametrize("layout", LAYOUTS)
def test_every_numpy_layout_of_one_vector(layout):
    v = unit_vectors(13)
    one = LAYOUTS[layout](v)[5]
    want = np.ascontiguousarray(one)
    assert (bits(one) == bits(want)).all()
    assert hydron.encode_gf8(one) == hydron.encode_gf8(want)
    assert (hydron.dot(one, v) == hydron.dot(want, v)).all()
    assert hydron.geodesic_distance(v, one).tolist() == \
        hydron.geodesic_distance(v, want).tolist()


@pytest.mark.parametrize("layout", LAYOUTS)
def test_every_numpy_layout_saves_and_exports_the_vectors_it_shows(layout, tmp_path):
    import pyarrow as pa

    v = LAYOUTS[layout](unit_vectors(13))
    want = np.ascontiguousarray(v)
    for fmt in ("fory", "jsonl", "parquet"):
        if fmt in ("fory", "jsonl") or fmt in hydron.FEATURES:
            path = tmp_path / f"v.{fmt}"
            hydron.save(path, v, format=fmt)
            assert (bits(hydron.load(path)) == bits(want)).all(), fmt
    with hydron.FileWriter(tmp_path / "w.hyd") as w:
        w.write(v)
    assert (bits(hydron.load(tmp_path / "w.hyd")) == bits(want)).all()
    if "arrow" in hydron.FEATURES:
        col = pa.array(hydron.to_arrow(v))
        assert (bits(col.flatten().to_numpy().reshape(-1, 8)) == bits(want)).all()


@pytest.mark.parametrize("name", VECTOR_FUNCTIONS)
def test_zero_rows(name):
    f = VECTOR_FUNCTIONS[name]
    empty = np.zeros((0, 8), np.float32)
    if name == "spherical_mean":
        with pytest.raises(HydronError, match="empty"):
            f(empty)
        return
    out = f(empty)
    if isinstance(out, np.ndarray):
        assert len(out) == 0


def test_results_are_new_writable_arrays():
    v = unit_vectors(16)
    v.setflags(write=False)
    for out in [hydron.normalize(v), hydron.nearest_roots(v), hydron.nearest_lattice_points(v),
                hydron.dot(v[0], v), hydron.geodesic_distance(v, v), hydron.slerp(v, v, 0.5),
                hydron.codes_to_vectors([1, 2]), hydron.decode_batch(hydron.encode_batch(v))]:
        assert out.flags.writeable and out.flags.c_contiguous
        assert not np.shares_memory(out, v)
        out[...] = 0


def test_backend_is_named():
    assert hydron.backend() in {"scalar", "portable", "avx2+fma"}
