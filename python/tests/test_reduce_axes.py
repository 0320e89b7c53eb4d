"""N-D arrays and numpy's axis argument (None, an int, negative ints, tuples, keepdims) for
every reduction, against numpy, on every target; numpy's errors for bad axes."""

import itertools

import numpy as np
import pytest

import parpat
from conftest import host

OPS = ["sum", "prod", "min", "max", "argmin", "argmax", "mean", "var", "std", "nansum",
       "nanprod", "nanmin", "nanmax", "nanargmin", "nanargmax", "nanmean", "nanvar", "nanstd",
       "count_nonzero", "any", "all"]
SHAPES = [(7,), (3, 5), (2, 3, 4), (3, 1, 5), (2, 3, 4, 5), (4, 1, 1, 3)]


def axis_forms(ndim):
    """None, every axis and its negative, every tuple of two or more axes (in descending order,
    the last negative) and the empty tuple."""
    forms = [None, ()]
    for a in range(ndim):
        forms += [a, a - ndim]
    for k in range(2, ndim + 1):
        for combo in itertools.combinations(range(ndim), k):
            forms.append(tuple(reversed(combo[1:])) + (combo[0] - ndim,))
    return forms


def numpy_reduce(op, x, axis, keepdims):
    if op == "count_nonzero":
        return np.asarray(np.count_nonzero(x, axis=axis, keepdims=keepdims), dtype=np.int64)
    return getattr(np, op)(x, axis=axis, keepdims=keepdims)


def check(ours, want, x, op):
    ours, want = host(ours), np.asarray(want)
    assert ours.shape == want.shape, (ours.shape, want.shape)
    assert ours.dtype == (np.int64 if "arg" in op else want.dtype), (ours.dtype, want.dtype)
    if want.dtype.kind == "f":
        # float32 sums, means and variances of a few values in [-1, 1): within a few ulps of
        # numpy's (both round the same float64-accurate value, or sum pairwise)
        np.testing.assert_allclose(ours, want, rtol=2e-5, atol=2e-6, equal_nan=True)
    else:
        np.testing.assert_array_equal(ours, want)


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_every_op_and_axis_form(target, rng, shape):
    x = rng.uniform(-1, 1, shape).astype(np.float32)
    near_one = rng.uniform(0.99, 1.01, shape).astype(np.float32)
    for op in OPS:
        data = near_one if "prod" in op else x
        for axis in axis_forms(len(shape)):
            if "arg" in op and isinstance(axis, tuple):
                continue
            for keepdims in (False, True):
                got = getattr(parpat, op)(target.put(data), axis=axis, keepdims=keepdims,
                                          **target.kw())
                check(got, numpy_reduce(op, data, axis, keepdims), data, op)


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int16", "int32", "int64", "float64"])
def test_dtypes_with_interleaved_axes(target, rng, dtype):
    shape = (3, 4, 5, 2)
    x = (rng.random(shape) < 0.5 if dtype == "bool"
         else rng.integers(-5, 6, shape).astype(dtype) if dtype != "float64"
         else rng.standard_normal(shape))
    if dtype == "uint8":
        x = rng.integers(0, 6, shape).astype(dtype)
    for op in ("sum", "prod", "max", "argmin", "mean", "var", "count_nonzero", "all"):
        for axis in ((0, 2), (1, 3), (-1, 0, 2), 1, -2):
            if "arg" in op and isinstance(axis, tuple):
                continue
            check(getattr(parpat, op)(target.put(x), axis=axis, **target.kw()),
                  numpy_reduce(op, x, axis, False), x, op)


def test_nan_along_axes(target, rng):
    x = rng.standard_normal((4, 3, 5))
    x[rng.random(x.shape) < 0.25] = np.nan
    x[0], x[:, 0] = 1.0, 1.0  # no reduction along axis 0 or 1 sees NaN alone
    for op in ("max", "argmin", "nansum", "nanmin", "nanargmax", "nanmean", "nanstd"):
        for axis in ((0, 1), 0, -2):
            if "arg" in op and isinstance(axis, tuple):
                continue
            check(getattr(parpat, op)(target.put(x), axis=axis, **target.kw()),
                  numpy_reduce(op, x, axis, False), x, op)
    all_nan = np.full((2, 3, 2), np.nan)
    with pytest.raises(ValueError, match="All-NaN"):
        parpat.nanargmax(target.put(all_nan), axis=1, **target.kw())


def test_empty_axes_follow_numpy(target):
    x = np.zeros((2, 0, 3), dtype=np.float32)
    for axis in (None, 1, (0, 1), (1, 2), ()):
        check(parpat.sum(target.put(x), axis=axis, **target.kw()), np.sum(x, axis=axis), x,
              "sum")
        check(parpat.mean(target.put(x), axis=axis, keepdims=True, **target.kw()),
              np.full(np.sum(x, axis=axis, keepdims=True).shape, np.nan, np.float32), x, "mean")
    for axis in (0, 2, (0, 2)):  # nothing left to reduce into: an empty answer, no error
        check(parpat.max(target.put(x), axis=axis, **target.kw()), np.max(x, axis=axis), x,
              "max")
    for axis in (None, 1, (1, 2)):
        with pytest.raises(ValueError):
            parpat.min(target.put(x), axis=axis, **target.kw())
    with pytest.raises(ValueError):
        parpat.argmax(target.put(x), axis=1, **target.kw())


def broadcast(a, shape):
    """a broadcast to `shape`, a view (stride 0 along the new axes)."""
    if hasattr(a, "expand"):
        return a.expand(*shape)
    return (np if isinstance(a, np.ndarray) else __import__("cupy")).broadcast_to(a, shape)


def test_strided_views_are_read_in_place(target, rng):
    """Rows with gaps, steps, slices of a middle axis, broadcasts and (numpy, CuPy) negative
    steps are reduced without copy=True, for every op and axis form. An arg op whose index counts
    along an axis of negative stride (or over every axis of such a view) needs copy=True."""
    cube = rng.uniform(-1, 1, (5, 6, 7)).astype(np.float32)
    near_one = rng.uniform(0.99, 1.01, (5, 6, 7)).astype(np.float32)
    views = {"rows": lambda a: a[1, :, 2:5], "middle": lambda a: a[:, 1:4],
             "steps": lambda a: a[::2, :, ::3], "broadcast": lambda a: broadcast(a[2], (4, 6, 7))}
    if target.framework != "torch":  # torch has no negative strides
        views["reversed"] = lambda a: a[::-1, :, ::-2]
    for name, make in views.items():
        for op in OPS:
            data = near_one if "prod" in op else cube
            view, want = make(target.put(data)), make(data)
            for axis in axis_forms(want.ndim):
                if "arg" in op and isinstance(axis, tuple):
                    continue
                if "arg" in op and name == "reversed" and axis in (None, 0, 2, -1, -3):
                    with pytest.raises(ValueError, match="copy=True"):
                        getattr(parpat, op)(view, axis=axis, **target.kw())
                    check(getattr(parpat, op)(view, axis=axis, copy=True, **target.kw()),
                          numpy_reduce(op, want, axis, False), want, op)
                    continue
                for keepdims in (False, True):
                    got = getattr(parpat, op)(view, axis=axis, keepdims=keepdims, **target.kw())
                    check(got, numpy_reduce(op, want, axis, keepdims), want, op)


def permuted(a, order):
    """a's axes in `order` (numpy's transpose, torch's permute), a view."""
    return a.permute(order) if hasattr(a, "permute") else a.transpose(order)


def test_permuted_views_are_read_in_place(target, rng):
    """x.T, moveaxis, permute: views of a C-contiguous array with its axes in another order are
    reduced in place, for every op and axis form, the answer in the view's axis order; an arg op
    over every axis (a flat index in the view's order) reads the view as any strided one. A
    histogram counts such a view in place unless weights must follow it value by value."""
    cube = rng.uniform(-1, 1, (3, 4, 5)).astype(np.float32)
    near_one = rng.uniform(0.99, 1.01, (3, 4, 5)).astype(np.float32)
    for order in ((2, 0, 1), (1, 2, 0), (2, 1, 0), (0, 2, 1)):
        for op in OPS:
            data = near_one if "prod" in op else cube
            view, want = permuted(target.put(data), order), data.transpose(order)
            for axis in axis_forms(3):
                if "arg" in op and (axis is None or isinstance(axis, tuple)):
                    continue
                for keepdims in (False, True):
                    got = getattr(parpat, op)(view, axis=axis, keepdims=keepdims, **target.kw())
                    check(got, numpy_reduce(op, want, axis, keepdims), want, op)
    view = permuted(target.put(cube), (2, 0, 1))
    for copy in (False, True):
        check(parpat.argmax(view, copy=copy, **target.kw()), np.argmax(cube.transpose(2, 0, 1)),
              cube, "argmax")
    counts, _ = parpat.histogram(view, 7, range=(-1, 1), **target.kw())
    np.testing.assert_array_equal(host(counts), np.histogram(cube, 7, range=(-1, 1))[0])
    # With weights, values and weights go through dense copies in the view's order.
    weights = permuted(target.put(cube), (2, 0, 1))
    sums, _ = parpat.histogram(view, 7, range=(-1, 1), weights=weights, **target.kw())
    np.testing.assert_allclose(host(sums), np.histogram(cube, 7, range=(-1, 1), weights=cube)[0],
                               rtol=1e-12, atol=1e-12)


def test_bad_axes_raise_numpys_errors():
    axis_error = getattr(np, "exceptions", np).AxisError  # np.AxisError before numpy 1.25
    x = np.zeros((2, 3, 4), dtype=np.float32)
    for axis in (3, -4, (0, 3)):
        with pytest.raises(axis_error, match="out of bounds"):
            parpat.sum(x, axis=axis)
    with pytest.raises(axis_error):
        parpat.argmax(x, axis=5)
    for axis in ((0, 0), (1, -2)):
        with pytest.raises(ValueError, match="duplicate value in 'axis'"):
            parpat.sum(x, axis=axis)
    for axis in ((0, 1), (0,)):
        with pytest.raises(TypeError, match="cannot be interpreted as an integer"):
            parpat.argmax(x, axis=axis)
    with pytest.raises(TypeError):
        parpat.sum(x, axis=1.0)
    with pytest.raises(TypeError):
        parpat.sum(x, axis=[0, 1])
