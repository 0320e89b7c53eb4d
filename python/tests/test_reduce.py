"""parpat's reductions against numpy on random and edge inputs, on every target."""

import numpy as np
import pytest

import parpat
from conftest import host

DTYPES = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
          "float32", "float64"]
OPS = ["sum", "prod", "min", "max", "argmin", "argmax"]


def data(rng, dtype, shape, op):
    if np.dtype(dtype).kind == "f":
        if op == "prod":
            return rng.uniform(0.9, 1.1, shape).astype(dtype)
        return rng.standard_normal(shape).astype(dtype)
    if dtype == "bool":
        return rng.random(shape) < 0.5
    info = np.iinfo(dtype)
    if op in ("min", "max", "argmin", "argmax"):
        lo, hi = info.min, info.max  # the extremes, ties among them likely for narrow types
    else:
        lo, hi = max(info.min, -1000), min(info.max, 1000)
    return rng.integers(lo, hi, shape, dtype=dtype, endpoint=True)


def check(ours, want, x, op):
    ours = host(ours)
    assert ours.shape == np.shape(want)
    if op.startswith("arg"):
        assert ours.dtype == np.int64
    else:
        assert ours.dtype == np.asarray(want).dtype, (ours.dtype, np.asarray(want).dtype)
    if np.asarray(want).dtype.kind == "f" and np.any(np.isnan(want)):
        np.testing.assert_array_equal(np.isnan(ours), np.isnan(want))
        np.testing.assert_array_equal(ours[~np.isnan(ours)], np.asarray(want)[~np.isnan(want)])
    elif np.asarray(want).dtype.kind == "f" and op in ("sum", "prod"):
        # A sum's error grows with the magnitudes summed; a product's with the number of factors
        # (each multiplication, ours and numpy's sequential one, rounds once).
        eps = np.finfo(x.dtype).eps
        if op == "sum":
            tol = 16 * eps * np.maximum(np.sum(np.abs(x.astype(np.float64))), 1)
        else:
            tol = 2 * x.size * eps * np.maximum(np.abs(want), 1)
        assert np.all(np.abs(ours.astype(np.float64) - want) <= tol), (ours, want)
    else:
        np.testing.assert_array_equal(ours, want)


@pytest.mark.parametrize("dtype", DTYPES)
def test_every_op_on_1d_data(target, rng, dtype):
    for op in OPS:
        x = data(rng, dtype, 1000 + int(rng.integers(0, 64)), op)
        got = getattr(parpat, op)(target.put(x), **target.kw())
        check(got, getattr(np, op)(x), x, op)


@pytest.mark.parametrize("dtype", ["int32", "uint8", "float32", "float64"])
def test_axes_and_keepdims_of_2d_data(target, rng, dtype):
    x = data(rng, dtype, (37, 53), "sum")
    for op in OPS:
        for axis in (None, 0, 1, -1, -2):
            for keepdims in (False, True):
                got = getattr(parpat, op)(target.put(x), axis=axis, keepdims=keepdims,
                                          **target.kw())
                check(got, getattr(np, op)(x, axis=axis, keepdims=keepdims), x, op)
    check(parpat.sum(target.put(x), axis=(0, 1), **target.kw()), np.sum(x, axis=(0, 1)), x, "sum")


def test_rows_with_a_stride_are_read_in_place(target, rng):
    wide = rng.standard_normal((40, 70)).astype(np.float32)
    x = target.put(wide)[:, 5:50]  # rows 70 elements apart
    for axis in (None, 0, 1):
        check(parpat.sum(x, axis=axis, **target.kw()), np.sum(wide[:, 5:50], axis=axis),
              wide[:, 5:50], "sum")
        check(parpat.argmax(x, axis=axis, **target.kw()), np.argmax(wide[:, 5:50], axis=axis),
              wide[:, 5:50], "argmax")


def test_steps_are_read_in_place_or_copied(target, rng):
    x = rng.standard_normal(1000).astype(np.float32)
    for copy in (False, True):
        check(parpat.sum(target.put(x)[::2], copy=copy, **target.kw()), np.sum(x[::2]), x[::2],
              "sum")
    t = rng.standard_normal((30, 20)).astype(np.float32)
    check(parpat.min(target.put(t).T, axis=1, copy=True, **target.kw()), np.min(t.T, axis=1),
          t.T, "min")
    if target.framework != "torch":  # torch has no negative strides
        with pytest.raises(ValueError, match="copy=True"):
            parpat.argmax(target.put(x)[::-3], **target.kw())
        check(parpat.argmax(target.put(x)[::-3], copy=True, **target.kw()),
              np.argmax(x[::-3]), x[::-3], "argmax")


def test_nan_ties_and_extremes(target):
    x = np.array([3, 1, np.nan, 1, np.nan, 7], dtype=np.float32)
    for op in OPS:
        check(getattr(parpat, op)(target.put(x), **target.kw()), getattr(np, op)(x), x, op)
    ties = np.array([5, 2, 9, 2, 9], dtype=np.int32)
    assert host(parpat.argmin(target.put(ties), **target.kw())) == 1
    assert host(parpat.argmax(target.put(ties), **target.kw())) == 2
    big = np.array([np.iinfo(np.int64).max, 1, 1], dtype=np.int64)
    check(parpat.sum(target.put(big), **target.kw()), np.sum(big), big, "sum")  # wraps
    zeros = np.array([0.0, -0.0], dtype=np.float64)
    assert host(parpat.max(target.put(zeros), **target.kw())) == 0.0
    inf = np.array([-np.inf, 1, np.inf], dtype=np.float64)
    check(parpat.sum(target.put(inf), **target.kw()), np.sum(inf), inf, "sum")


def test_empty_input_follows_numpy(target):
    e = np.zeros(0, dtype=np.float32)
    check(parpat.sum(target.put(e), **target.kw()), np.sum(e), e, "sum")
    check(parpat.prod(target.put(e), **target.kw()), np.prod(e), e, "prod")
    for op in ("min", "max", "argmin", "argmax"):
        with pytest.raises(ValueError):
            getattr(parpat, op)(target.put(e), **target.kw())
    rows = np.zeros((0, 4), dtype=np.int32)
    check(parpat.sum(target.put(rows), axis=0, **target.kw()), np.sum(rows, axis=0), rows, "sum")
    check(parpat.max(target.put(rows), axis=1, **target.kw()), np.max(rows, axis=1), rows, "max")
    with pytest.raises(ValueError):
        parpat.max(target.put(rows), axis=0, **target.kw())


def test_scalars_and_lists_go_through_numpy():
    assert parpat.sum([1, 2, 3]) == 6
    assert parpat.max(np.float32(2.5)) == np.float32(2.5)
    assert isinstance(parpat.sum(np.arange(10, dtype=np.int32)), np.int64)


def test_bad_arguments_are_refused_before_any_launch():
    x = np.arange(10, dtype=np.float32)
    with pytest.raises(TypeError, match="dtype"):
        parpat.sum(np.zeros(3, dtype=np.complex64))
    with pytest.raises((ValueError, IndexError)):
        parpat.sum(x, axis=1)
    with pytest.raises(TypeError):
        parpat.argmax(x.reshape(2, 5), axis=(0, 1))
    with pytest.raises(ValueError, match="unknown device"):
        parpat.sum(x, device="tpu:0")
    with pytest.raises(ValueError):
        parpat.sum(x, device="cpu:7")
    with pytest.raises(ValueError):
        parpat.sum(x, variant="no-such-variant")
    with pytest.raises(TypeError, match="little-endian.*copy=True"):
        parpat.sum(x.astype(">f4"))


def test_big_endian_arrays_are_byte_swapped_with_copy(rng):
    """copy=True takes big-endian numpy arrays as a byte-swapped copy, in every function; the
    second call (a cached plan for the signature) reads the new copy too."""
    x = rng.standard_normal((40, 30))
    big = x.astype(">f8")
    for _ in range(2):
        np.testing.assert_allclose(parpat.sum(big, axis=0, copy=True), np.sum(x, axis=0))
    assert parpat.argmax(big, copy=True) == np.argmax(x)
    ints = rng.integers(0, 50, 1000)
    np.testing.assert_array_equal(parpat.bincount(ints.astype(">i4"), copy=True),
                                  np.bincount(ints))
    counts, edges = parpat.histogram(big, 8, weights=x.astype(">f4"), copy=True)
    want, want_edges = np.histogram(x, 8, weights=x.astype(np.float32))
    np.testing.assert_allclose(counts, want, rtol=1e-6)
    np.testing.assert_array_equal(edges, want_edges)
    pairs = x[:, :2].copy()
    h, _ = parpat.histogramdd(pairs.astype(">f8"), bins=4, weights=x[:, 2].astype(">f8"),
                              copy=True)
    np.testing.assert_allclose(h, np.histogramdd(pairs, bins=4, weights=x[:, 2])[0])


def test_repeated_calls_read_each_array(target, rng):
    """A call signature seen before (its plan cached) still reads the array it is given: fresh
    data of the same shape, the same array changed in place, and a view with other strides."""
    x = rng.standard_normal((64, 48)).astype(np.float32)
    for _ in range(3):
        fresh = rng.standard_normal((64, 48)).astype(np.float32)
        for op in ("sum", "argmax"):
            check(getattr(parpat, op)(target.put(fresh), axis=1, **target.kw()),
                  getattr(np, op)(fresh, axis=1), fresh, op)
    t = target.put(x)
    first = host(parpat.max(t, **target.kw()))
    t[3, 5] = 100.0
    assert host(parpat.max(t, **target.kw())) == 100.0 != first
    strided = t[::2]
    want = np.asarray(host(strided)).sum(axis=0)
    check(parpat.sum(strided, axis=0, **target.kw()), want, np.asarray(host(strided)), "sum")


def test_threads_share_call_signatures(target):
    """Threads calling with one signature at once each get their own plan and their answer."""
    import concurrent.futures

    def work(seed):
        rng = np.random.default_rng(seed)
        wrong = 0
        for _ in range(20):
            x = rng.integers(-1000, 1000, 5000, dtype=np.int64)
            wrong += int(host(parpat.sum(target.put(x), **target.kw()))) != int(x.sum())
        return wrong

    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        assert list(pool.map(work, range(4))) == [0, 0, 0, 0]
