"""parpat.histogramdd and parpat.histogram2d against numpy, on every target."""

import inspect

import numpy as np
import pytest

import parpat
from conftest import host

DTYPES = ["float32", "float64", "int32", "uint8", "int64", "bool"]


def reference(sample, *args, **kwargs):
    """numpy.histogramdd, float32 coordinates taken as float64: parpat compares every coordinate
    with float64 edges, as numpy 1 does (numpy 2 makes float32 edges from float32 data without
    a range)."""
    def wide(a):
        a = np.asarray(a)
        return a.astype(np.float64) if a.dtype == np.float32 else a

    sample = wide(sample) if isinstance(sample, np.ndarray) else [wide(c) for c in sample]
    return np.histogramdd(sample, *args, **kwargs)


def put(target, sample, form):
    """An (N, D) table as the target's table, or as a list of its D contiguous columns."""
    if form == "table":
        return target.put(sample)
    return [target.put(np.ascontiguousarray(sample[:, j])) for j in range(sample.shape[1])]


def check(got, want, weighted=False):
    hist, edges = host(got[0]), [host(e) for e in got[1]]
    want_hist, want_edges = want
    assert hist.dtype == np.float64 and hist.shape == want_hist.shape
    if weighted:
        np.testing.assert_allclose(hist, want_hist, rtol=1e-12, atol=0)
    else:
        assert np.array_equal(hist, want_hist, equal_nan=True)
    assert len(edges) == len(want_edges)
    for e, w in zip(edges, want_edges):
        assert e.dtype == np.float64 and np.array_equal(e, w)


def samples(rng, dtype, n, dims):
    """Random samples of `dtype`, many of them on the edges of the bins the tests use."""
    if dtype == "bool":
        return rng.integers(0, 2, (n, dims)).astype(bool)
    if dtype == "uint8":
        return rng.integers(0, 60, (n, dims)).astype(np.uint8)
    if np.dtype(dtype).kind == "i":
        return rng.integers(-60, 60, (n, dims)).astype(dtype)
    x = rng.standard_normal((n, dims)) * 2
    x[::7] = np.round(x[::7] * 2) / 2  # on the edges of 4 or 8 bins over (-2, 2) and more
    return x.astype(dtype)


def ranges_of(dtype, dims):
    lo, hi = {"bool": (0, 1), "uint8": (5, 45)}.get(dtype, (-2, 2) if dtype[0] == "f" else
                                                        (-40, 20))
    return [(lo, hi + d) for d in range(dims)]


@pytest.mark.parametrize("form", ["table", "list"])
@pytest.mark.parametrize("dims", [1, 2, 3, 5])
@pytest.mark.parametrize("dtype", DTYPES)
def test_counts_equal_numpy(target, rng, dtype, dims, form):
    x = samples(rng, dtype, 3001, dims)
    for bins in (4, [3, 8, 1, 5, 2][:dims]):
        for r in (None, ranges_of(dtype, dims)):
            got = parpat.histogramdd(put(target, x, form), bins=bins, range=r, **target.kw())
            check(got, reference(x, bins=bins, range=r))


def test_one_dimensional_samples(target, rng):
    x = rng.standard_normal(2000)
    check(parpat.histogramdd(target.put(x), bins=7, **target.kw()), np.histogramdd(x, bins=7))
    scalars = [0.5, 1.5, 1.5, 3.0]  # a sequence of scalars is one coordinate, as in numpy
    check(parpat.histogramdd(scalars, bins=3), np.histogramdd(scalars, bins=3))
    check(parpat.histogramdd(np.float64(5.0), bins=2), np.histogramdd(np.float64(5.0), bins=2))


def test_edge_arrays_and_mixed_bins(target, rng):
    x = np.round(rng.standard_normal((4000, 3)) * 4) / 4  # many values on the edges below
    edges = [np.array([-3.0, -1.0, -0.25, 0.0, 0.5, 2.0]), np.linspace(-2, 2, 17),
             np.array([-1, 0, 1, 5])]
    for form in ("table", "list"):
        for bins, r in ((edges, None), ([edges[0], 5, edges[2]], [None, (-1, 1), (9, 9)]),
                        ([6, edges[1], 3], None)):
            got = parpat.histogramdd(put(target, x, form), bins=bins, range=r, **target.kw())
            check(got, np.histogramdd(x, bins=bins, range=r))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_edges_nan_and_inf_with_a_range(target, dtype):
    x = np.array([[0, 0], [1, 1], [-1, -1], [0.5, -0.5], [np.nan, 0], [0, np.nan], [np.inf, 0],
                  [0, -np.inf], [1, 0.25], [-1, 1], [1.0000001, 0], [-0.9999999, 0.75]],
                 dtype=dtype)
    for form in ("table", "list"):
        got = parpat.histogramdd(put(target, x, form), bins=4, range=[(-1, 1), (-1, 1)],
                                 **target.kw())
        check(got, reference(x, bins=4, range=[(-1, 1), (-1, 1)]))
        assert host(got[0]).sum() == 7  # NaN, inf and the samples beyond 1 are in no bin


def test_empty_and_constant_samples(target):
    for dims in (1, 2, 3):
        empty = np.zeros((0, dims), dtype=np.float32)
        for form in ("table", "list"):
            for r in (None, [(-1, 2)] * dims):
                got = parpat.histogramdd(put(target, empty, form), bins=3, range=r,
                                         weights=target.put(np.zeros(0)), **target.kw())
                check(got, reference(empty, bins=3, range=r, weights=np.zeros(0)))
    same = np.full((50, 2), 3, dtype=np.int32)
    check(parpat.histogramdd(target.put(same), bins=4, **target.kw()),
          np.histogramdd(same, bins=4))
    check(parpat.histogramdd(target.put(same), bins=4, range=[(3, 3), (0, 5)], **target.kw()),
          np.histogramdd(same, bins=4, range=[(3, 3), (0, 5)]))


def test_density_equals_numpy(target, rng):
    x = rng.standard_normal((5000, 3))
    uneven = np.sort(rng.uniform(-2, 2, 9))
    for bins, r in ((6, None), ([uneven, 4, 7], [None, (-1, 3), None])):
        got = parpat.histogramdd(target.put(x), bins=bins, range=r, density=True, **target.kw())
        check(got, np.histogramdd(x, bins=bins, range=r, density=True))
    w = rng.random(x.shape[0])
    got = parpat.histogramdd(target.put(x), bins=5, density=True, weights=target.put(w),
                             **target.kw())
    check(got, np.histogramdd(x, bins=5, density=True, weights=w), weighted=True)
    with np.errstate(invalid="ignore"):  # no sample in a bin: numpy's 0 / 0, NaN everywhere
        got = parpat.histogramdd(target.put(x), bins=3, range=[(5, 6)] * 3, density=True,
                                 **target.kw())
    assert np.isnan(host(got[0])).all()


@pytest.mark.parametrize("wtype", ["float32", "float64", "int64"])
@pytest.mark.parametrize("form", ["table", "list"])
def test_weighted_sums_equal_numpy(target, rng, wtype, form):
    x = rng.standard_normal((6007, 2)).astype(np.float32)
    w = (rng.random(x.shape[0]) * 10).astype(wtype)
    for bins, r in ((10, None), ([7, np.linspace(-1, 1, 5)], [(-3, 3), None])):
        got = parpat.histogramdd(put(target, x, form), bins=bins, range=r,
                                 weights=target.put(w), **target.kw())
        check(got, reference(x, bins=bins, range=r, weights=w), weighted=True)
    if target.framework == "numpy":  # numpy's weights of any kind are summed as float64
        listed = parpat.histogramdd(put(target, x, form), bins=5,
                                    weights=list(range(x.shape[0])), **target.kw())
        check(listed, reference(x, bins=5, weights=np.arange(x.shape[0])), weighted=True)


def test_coordinates_of_different_dtypes_take_numpys_common_type(target, rng):
    a = rng.standard_normal(3000).astype(np.float32)
    b = rng.integers(-3, 3, 3000).astype(np.int32)
    c = rng.integers(0, 2, 3000).astype(bool)
    got = parpat.histogramdd([target.put(a), target.put(b), target.put(c)], bins=4, **target.kw())
    check(got, np.histogramdd([a, b, c], bins=4))  # numpy stacks them as float64


def test_fortran_order_is_read_in_place_and_strided_samples_through_a_copy(target, rng):
    x = np.asfortranarray(rng.standard_normal((3000, 3)))
    check(parpat.histogramdd(target.put(x), bins=5, **target.kw()), np.histogramdd(x, bins=5))
    table = rng.standard_normal((3000, 6))
    weights = rng.random(6000)
    on = target.put(table)
    check(parpat.histogramdd(on[:, ::2], bins=5, **target.kw()),
          np.histogramdd(table[:, ::2], bins=5))
    # Columns of a wider table as coordinate arrays, weights of a step: numpy.histogram2d's
    # everyday call.
    got = parpat.histogram2d(on[:, 0], on[:, 3], bins=4, weights=target.put(weights)[::2],
                             **target.kw())
    want = np.histogram2d(table[:, 0], table[:, 3], bins=4, weights=weights[::2])
    np.testing.assert_allclose(host(got[0]), want[0], rtol=1e-12)
    for g, w in zip(got[1:], want[1:]):
        np.testing.assert_array_equal(host(g), w)
    if target.framework in ("numpy", "cupy"):
        with pytest.raises(ValueError, match="copy=True"):
            parpat.histogramdd(on[::-1, :2], bins=5, **target.kw())
        check(parpat.histogramdd(on[::-1, :2], bins=5, copy=True, **target.kw()),
              np.histogramdd(table[::-1, :2], bins=5))


def test_columns_of_one_table_are_read_as_the_table(target, rng):
    # pts[:, 0], pts[:, 1], ... go to the library as the table (its rows following on, or with
    # gaps); columns in another order, or not the first ones, stay coordinate arrays.
    for width in (2, 3, 5):
        table = rng.standard_normal((4001, width)).astype(np.float32)
        weights = rng.random(4001)
        on = target.put(table)
        for columns in ([0, 1], [1, 0], [1, 2], list(range(width))):
            if max(columns) >= width:
                continue
            got = parpat.histogramdd([on[:, j] for j in columns], bins=6, **target.kw())
            check(got, reference([table[:, j] for j in columns], bins=6))
            got = parpat.histogramdd([on[:, j] for j in columns], bins=6,
                                     weights=target.put(weights), **target.kw())
            check(got, reference([table[:, j] for j in columns], bins=6, weights=weights),
                  weighted=True)
        got = parpat.histogram2d(on[:, 0], on[:, 1], bins=[5, 7], range=[(-2, 2), (-1, 3)],
                                 **target.kw())
        want = np.histogram2d(table[:, 0].astype(np.float64), table[:, 1].astype(np.float64),
                              bins=[5, 7], range=[(-2, 2), (-1, 3)])
        np.testing.assert_array_equal(host(got[0]), want[0])
    from parpat._histogramdd import _coordinates
    table = np.zeros((10, 3), np.float32)
    assert _coordinates([table[:, 0], table[:, 1]], False)[1:3] == (True, [3, 1])
    assert _coordinates([table[:, 0], table[:, 1], table[:, 2]], False)[1:3] == (True, [])
    assert _coordinates([table[:, 1], table[:, 0]], False)[1:3] == (False, [3, 3])


def test_histogram2d_signature_and_results(target, rng):
    names = ["x", "y", "bins", "range", "density", "weights"]
    ours = inspect.signature(parpat.histogram2d).parameters
    theirs = inspect.signature(np.histogram2d).parameters
    assert list(ours)[:6] == names
    assert [ours[n].default for n in names] == [theirs[n].default for n in names]
    x = rng.standard_normal(4000)
    y = (rng.standard_normal(4000) * 3).astype(np.float32)
    w = rng.random(4000)
    xedges, yedges = np.linspace(-2, 2, 9), np.array([-5.0, -1, 0, 2, 6])
    for bins in (5, [4, 6], xedges, [xedges, yedges], [xedges, 3]):
        for r in (None, [(-1, 1), (-4, 4)]):
            got = parpat.histogram2d(target.put(x), target.put(y), bins=bins, range=r,
                                     **target.kw())
            want = np.histogram2d(x, y, bins=bins, range=r)
            assert len(got) == 3
            check((got[0], got[1:]), (want[0], want[1:]))
    got = parpat.histogram2d(target.put(x), target.put(y), bins=6, density=True,
                             weights=target.put(w), **target.kw())
    want = np.histogram2d(x, y, bins=6, density=True, weights=w)
    check((got[0], got[1:]), (want[0], want[1:]), weighted=True)
    lists = parpat.histogram2d([0, 1, 2, 2], [1.5, 1, 0, 2], bins=2)
    want = np.histogram2d([0, 1, 2, 2], [1.5, 1, 0, 2], bins=2)
    check((lists[0], lists[1:]), (want[0], want[1:]))


BAD_CALLS = [  # (sample, keyword arguments, error, match): numpy raises the same error
    (np.zeros((5, 2)), {"bins": 0}, ValueError, "must be positive"),
    (np.zeros((5, 2)), {"bins": [3, -1]}, ValueError, "must be positive"),
    (np.zeros((5, 2)), {"bins": 2.5}, TypeError, "must be an integer"),
    (np.zeros((5, 2)), {"bins": [3, 3, 3]}, ValueError, "dimension of bins must be equal"),
    (np.zeros(5), {"bins": [0.0, 1.0, 2.0]}, ValueError, "dimension of bins must be equal"),
    (np.zeros((5, 2)), {"bins": [[0, 2, 1], 3]}, ValueError, "monotonically increasing"),
    (np.zeros((5, 2)), {"bins": [3, [[0, 1]]]}, ValueError, "scalar or 1d array"),
    (np.zeros((5, 2)), {"range": [(0, 1)]}, ValueError, "one entry per dimension"),
    (np.zeros((5, 2)), {"range": [(2, 1), None]}, ValueError, "max must be larger than min"),
    (np.zeros((5, 2)), {"range": [None, (0, np.inf)]}, ValueError, "not finite"),
    (np.zeros((5, 2)), {"range": [(np.nan, 1), None]}, ValueError, "not finite"),
    (np.array([[np.nan, 0.0]]), {}, ValueError, "not finite"),
    (np.zeros((5, 2)), {"weights": np.ones(4)}, ValueError, "one value per sample"),
    (np.zeros((2, 2, 2)), {}, ValueError, r"an \(N, D\) array"),
]


@pytest.mark.parametrize("sample, kwargs, error, match", BAD_CALLS)
def test_errors_follow_numpy(target, sample, kwargs, error, match):
    with pytest.raises(error):
        np.histogramdd(sample, **kwargs)
    kwargs = {k: target.put(v) if k == "weights" else v for k, v in kwargs.items()}
    with pytest.raises(error, match=match):
        parpat.histogramdd(target.put(sample), **kwargs, **target.kw())


def test_errors_of_parpat_alone(target):
    x = target.put(np.zeros((5, 2)))
    with pytest.raises(ValueError, match="strictly increasing"):  # numpy allows empty bins
        parpat.histogramdd(x, bins=[[0, 1, 1, 2], 3], **target.kw())
    with pytest.raises(ValueError, match="finite"):  # numpy allows infinite edges
        parpat.histogramdd(x, bins=[[-np.inf, 0, np.inf], 3], **target.kw())
    with pytest.raises(ValueError, match="two edges"):  # numpy: a dimension of no bins
        parpat.histogramdd(x, bins=[[0.5], 3], **target.kw())
    with pytest.raises(ValueError, match="8"):
        parpat.histogramdd(target.put(np.zeros((5, 9))), bins=2, **target.kw())
    with pytest.raises(ValueError, match="one length"):
        parpat.histogramdd([target.put(np.zeros(5)), target.put(np.zeros(4))], **target.kw())
    with pytest.raises(ValueError, match="same length"):
        parpat.histogram2d(target.put(np.zeros(5)), target.put(np.zeros(4)), **target.kw())
    with pytest.raises(TypeError, match="dtype"):
        parpat.histogramdd(np.zeros((5, 2), dtype=np.float16))
