"""parpat.histogram and parpat.bincount against numpy, on every target."""

import warnings

import numpy as np
import pytest

import parpat
from conftest import host


def check(result, x, bins, range=None):
    # parpat compares every value with float64 edges: numpy.histogram of the data as float64
    # (numpy 2 makes float32 edges for float32 data, which moves values within a float32
    # rounding of an edge).
    counts, edges = result
    want_counts, want_edges = np.histogram(np.asarray(x, dtype=np.float64), bins=bins,
                                           range=range)
    assert host(counts).dtype == np.uint64 and host(edges).dtype == np.float64
    np.testing.assert_array_equal(host(counts), want_counts)
    np.testing.assert_array_equal(host(edges), want_edges)


INTEGERS = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"]


@pytest.mark.parametrize("dtype", INTEGERS + ["float32", "float64"])
def test_random_data_with_and_without_a_range(target, rng, dtype):
    if np.dtype(dtype).kind == "f":
        x = rng.standard_normal(5000).astype(dtype)
        ranges = [None, (-1.5, 2.0)]
    elif dtype == "bool":
        x = rng.integers(0, 2, 5000).astype(bool)
        ranges = [None, (0, 1), (0.5, 3)]
    else:
        info = np.iinfo(dtype)
        x = rng.integers(max(info.min, -100000), min(info.max, 100000), 5000, dtype=dtype,
                         endpoint=True)
        ranges = [None, (10, 200), (-50.5, 70)]
    for bins in (1, 10, 1024):
        for r in ranges:
            check(parpat.histogram(target.put(x), bins=bins, range=r, **target.kw()), x, bins, r)


@pytest.mark.parametrize("dtype", INTEGERS)
def test_integer_extremes_and_edges_equal_numpy(target, rng, dtype):
    """The dtype's extremes, values on the edges and around them, against numpy.histogram of
    the data itself (64-bit values beyond 2**53 round to the nearest float64 first)."""
    info = np.iinfo(dtype) if dtype != "bool" else None
    lo, hi = (0, 1) if info is None else (int(info.min), int(info.max))
    pool = [lo, hi, 0, 1]
    if info is not None and info.bits == 64:
        pool += [2**53 + 1, 2**62 - 1, 2**62 + 1, hi - 1, lo + 1]
    base = np.array(pool, dtype=dtype)
    x = np.concatenate([base, rng.choice(base, 3000)])
    for bins, r in ((4, (float(lo), float(hi))), (4, None), (10, (-40.0, 60.0)), (3, (0.0, 1.0))):
        counts, edges = parpat.histogram(target.put(x), bins=bins, range=r, **target.kw())
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # numpy converts bool to uint8
            want_counts, want_edges = np.histogram(x, bins=bins, range=r)
        np.testing.assert_array_equal(host(counts), want_counts)
        np.testing.assert_array_equal(host(edges), want_edges)


def test_explicit_edges_and_the_edge_rules(target, rng):
    x = np.array([0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, -1.0, 4.0], dtype=np.float32)
    for bins in ([0, 1, 2, 3], [0.0, 0.5, 2.5, 3.0], np.array([-1.0, 4.0])):
        check(parpat.histogram(target.put(x), bins=bins, **target.kw()), x, bins)
    y = rng.standard_normal(3000)
    edges = np.sort(rng.uniform(-2, 2, 17))
    check(parpat.histogram(target.put(y), bins=edges, **target.kw()), y, edges)


def test_outliers_count_what_no_bin_holds(target):
    x = np.array([-5, 0.1, 0.2, np.nan, 7, np.inf, -np.inf, 0.9], dtype=np.float64)
    counts, edges, outliers = parpat.histogram(target.put(x), bins=4, range=(0, 1),
                                               outliers=True, **target.kw())
    np.testing.assert_array_equal(host(counts), [2, 0, 0, 1])
    np.testing.assert_array_equal(host(outliers), [2, 2, 1])  # below, above, NaN


def test_edge_cases_follow_numpy(target):
    empty = np.zeros(0, dtype=np.float32)
    check(parpat.histogram(target.put(empty), bins=5, **target.kw()), empty, 5)
    same = np.full(100, 3.0, dtype=np.float64)
    check(parpat.histogram(target.put(same), bins=4, **target.kw()), same, 4)
    check(parpat.histogram(target.put(same), bins=4, range=(3, 3), **target.kw()), same, 4, (3, 3))
    grid = np.zeros((30, 40), dtype=np.float32)
    check(parpat.histogram(target.put(grid), bins=3, range=(-1, 1), **target.kw()), grid, 3,
          (-1, 1))
    with pytest.raises(ValueError):  # numpy: autodetected range of [nan, nan] is not finite
        parpat.histogram(target.put(np.array([np.nan, 1.0])), bins=3, **target.kw())


def test_bad_bins_and_ranges_are_refused():
    x = np.arange(10, dtype=np.float32)
    for bins, range, error in [(0, None, ValueError), (-3, None, ValueError),
                               ("auto", None, ValueError), (2.5, None, TypeError),
                               (10, (2, 1), ValueError), (10, (0, np.inf), ValueError),
                               ([0, 2, 1], None, ValueError), ([[0, 1]], None, ValueError)]:
        with pytest.raises(error):
            parpat.histogram(x, bins=bins, range=range)
    with pytest.raises(TypeError, match="dtype"):
        parpat.histogram(np.zeros(4, dtype=np.complex64))


@pytest.mark.parametrize("dtype", INTEGERS)
def test_bincount(target, rng, dtype):
    x = rng.integers(0, 2 if dtype == "bool" else 120, 4000).astype(dtype)
    for minlength in (0, 5, 300):
        got = host(parpat.bincount(target.put(x), minlength=minlength, **target.kw()))
        np.testing.assert_array_equal(got, np.bincount(x.astype(np.int64), minlength=minlength))
        assert got.dtype == np.uint64
    small = np.array([3, 3, 1], dtype=dtype)
    np.testing.assert_array_equal(host(parpat.bincount(target.put(small), **target.kw())),
                                  np.bincount(small.astype(np.int64)))


def test_bincount_edge_cases(target):
    empty = np.zeros(0, dtype=np.int32)
    np.testing.assert_array_equal(host(parpat.bincount(target.put(empty), minlength=4,
                                                       **target.kw())), [0, 0, 0, 0])
    with pytest.raises(ValueError, match="negative"):
        parpat.bincount(target.put(np.array([1, -2, 3], dtype=np.int32)), **target.kw())
    with pytest.raises(ValueError):
        parpat.bincount(target.put(np.zeros((2, 2), dtype=np.int32)), **target.kw())
    with pytest.raises(ValueError):
        parpat.bincount(np.zeros(3, dtype=np.int32), minlength=-1)
    with pytest.raises(TypeError):
        parpat.bincount(np.zeros(3, dtype=np.float32))
    for dtype in ("int8", "int16", "int64"):
        with pytest.raises(ValueError, match="negative"):
            parpat.bincount(target.put(np.array([5, -1], dtype=dtype)), **target.kw())
    with pytest.raises(ValueError, match="2\\^26"):
        parpat.bincount(target.put(np.array([2**40], dtype=np.uint64)), **target.kw())


def test_returned_edges_are_the_callers_own(target):
    """Edges are cached between calls; changing the ones returned changes nothing later."""
    x = np.arange(10.0)
    _, edges = parpat.histogram(target.put(x), bins=4, **target.kw())
    edges[0] = 99.0
    _, again = parpat.histogram(target.put(x), bins=4, **target.kw())
    np.testing.assert_array_equal(host(again), np.histogram(x, bins=4)[1])


def test_density_equals_numpy_bit_for_bit(target, rng):
    x = rng.standard_normal(4000)
    uneven = np.sort(rng.uniform(-2, 2, 9))
    for bins, r in ((10, None), (64, (-1.0, 3.0)), (uneven, None)):
        got, edges = parpat.histogram(target.put(x), bins=bins, range=r, density=True,
                                      **target.kw())
        want, want_edges = np.histogram(x, bins=bins, range=r, density=True)
        assert host(got).dtype == np.float64
        np.testing.assert_array_equal(host(got), want)
        np.testing.assert_array_equal(host(edges), want_edges)
        assert abs(float(np.sum(host(got) * np.diff(host(edges)))) - 1) < 1e-12
    # No value in any bin: numpy's 0 / 0 gives NaN everywhere; outliers stay counts.
    far = np.full(5, 9.0)
    with np.errstate(invalid="ignore"):
        got, _, outliers = parpat.histogram(target.put(far), bins=3, range=(0, 1), density=True,
                                            outliers=True, **target.kw())
    assert np.isnan(host(got)).all()
    np.testing.assert_array_equal(host(outliers), [0, 5, 0])


def _near(got, want, magnitude, counts, float32=False):
    """Sums added in float64 in any order: within k·2**-52 of the sum of the k weights'
    magnitudes (and, for a float32 result, within its rounding)."""
    bound = counts * 2.0**-52 * magnitude + (2.0**-24 * np.abs(want) if float32 else 0)
    assert np.all(np.abs(host(got).astype(np.float64) - want) <= bound)


@pytest.mark.parametrize("dtype", ["uint8", "int16", "int32", "float32", "float64"])
@pytest.mark.parametrize("wtype", ["float32", "float64"])
def test_weighted_histogram_equals_numpy(target, rng, dtype, wtype):
    x = (rng.standard_normal(20011) * 40).astype(dtype) if np.dtype(dtype).kind == "f" else \
        rng.integers(0, 200, 20011).astype(dtype)
    w = rng.uniform(-1, 1, x.size).astype(wtype)
    for bins, r in ((10, None), (1000, (0, 150)), ([-5.0, 0.0, 3.5, 99.0], None)):
        sums, edges = parpat.histogram(target.put(x), bins=bins, range=r,
                                       weights=target.put(w), **target.kw())
        x64 = x.astype(np.float64)
        want, want_edges = np.histogram(x64, bins=bins, range=r, weights=w.astype(np.float64))
        magnitude, _ = np.histogram(x64, bins=bins, range=r, weights=np.abs(w.astype(np.float64)))
        counts, _ = np.histogram(x64, bins=bins, range=r)
        assert host(sums).dtype == np.dtype(wtype)
        np.testing.assert_array_equal(host(edges), want_edges)
        _near(sums, want, magnitude, counts, float32=wtype == "float32")


def test_weighted_density_and_outliers(target, rng):
    x = rng.standard_normal(5003)
    w = rng.random(x.size)
    got, _ = parpat.histogram(target.put(x), bins=7, range=(-1, 1), density=True,
                              weights=target.put(w), **target.kw())
    want, _ = np.histogram(x, bins=7, range=(-1, 1), density=True, weights=w)
    np.testing.assert_allclose(host(got), want, rtol=1e-12)
    _, _, outliers = parpat.histogram(target.put(x), bins=3, range=(-1, 1), weights=target.put(w),
                                      outliers=True, **target.kw())
    np.testing.assert_allclose(host(outliers)[:2], [w[x < -1].sum(), w[x > 1].sum()], rtol=1e-12)


def test_weighted_bincount_equals_numpy(target, rng):
    x = rng.integers(0, 300, 40009).astype(np.int32)
    w = rng.random(x.size)
    for minlength in (0, 500):
        got = parpat.bincount(target.put(x), target.put(w), minlength=minlength, **target.kw())
        want = np.bincount(x, weights=w, minlength=minlength)
        assert host(got).dtype == np.float64 and host(got).shape == want.shape
        np.testing.assert_allclose(host(got), want, rtol=1e-11)
    # numpy's other weight dtypes are summed as float64, from host data.
    if target.framework == "numpy":
        ints = rng.integers(0, 5, x.size)
        got = parpat.bincount(target.put(x), ints, **target.kw())
        np.testing.assert_array_equal(host(got), np.bincount(x, weights=ints))


def test_bad_weights_are_refused(target):
    x = target.put(np.arange(10, dtype=np.float32))
    with pytest.raises(ValueError, match="same shape"):
        parpat.histogram(x, weights=target.put(np.ones(9)), **target.kw())
    with pytest.raises(ValueError, match="negative"):
        parpat.bincount(target.put(np.array([1, -1], np.int32)), target.put(np.ones(2)),
                        **target.kw())


def test_views_are_counted_without_copy_true(target, rng):
    """Steps, columns, slices of a middle axis and broadcasts are counted (through a dense copy
    on the device), their weights may be views too, and so is bincount's input. Negative
    strides are counted as they are where the order does not matter; with weights they need
    copy=True."""
    base = rng.standard_normal((60, 40, 6))
    weights = rng.random((120, 40, 6))
    put = target.put(base)
    for view in (lambda a: a[::3], lambda a: a[:, ::2, 1], lambda a: a[:, 5:30:4, :2],
                 lambda a: a.reshape(-1)[1::7]):
        x = view(base)
        check(parpat.histogram(view(put), bins=16, **target.kw()), x, 16)
        w = view(weights[::2])
        sums, _ = parpat.histogram(view(put), bins=16, weights=view(target.put(weights)[::2]),
                                   **target.kw())
        want, _ = np.histogram(x, bins=16, weights=w)
        np.testing.assert_allclose(host(sums), want, rtol=1e-11, atol=1e-11)
    ints = rng.integers(0, 50, 3001).astype(np.int32)
    np.testing.assert_array_equal(host(parpat.bincount(target.put(ints)[::3], **target.kw())),
                                  np.bincount(ints[::3]))
    if target.framework in ("numpy", "cupy"):
        check(parpat.histogram(put[::-2, ::3], bins=16, **target.kw()), base[::-2, ::3], 16)
        with pytest.raises(ValueError, match="copy=True"):
            parpat.histogram(put[::-2], bins=16, weights=target.put(weights[:30]),
                             **target.kw())
