"""parpat's mean, var, std, nan-ops, count_nonzero, any and all against numpy on every target."""

import warnings

import numpy as np
import pytest

import parpat
from conftest import host

STATISTICS = ["mean", "var", "std", "nanmean", "nanvar", "nanstd"]
NAN_OPS = ["nansum", "nanprod", "nanmin", "nanmax", "nanargmin", "nanargmax"]


def numpy_answer(op, x, **kw):
    """numpy's answer, the statistics, sums and products computed in float64 and rounded to
    numpy's result type (numpy's own float32 ones are less accurate than parpat's float64
    accumulation)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        if op in STATISTICS or (op in ("nansum", "nanprod") and x.dtype.kind == "f"):
            want = getattr(np, op)(x.astype(np.float64), **kw)
            return np.asarray(want).astype(x.dtype if x.dtype.kind == "f" else np.float64)
        return np.asarray(getattr(np, op)(x, **kw))


def warns(call):
    """call()'s answer and whether it gave a RuntimeWarning."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        answer = call()
    return answer, any(issubclass(w.category, RuntimeWarning) for w in caught)


def check_warned(target, op, x, **kw):
    """parpat's answer against numpy's, and a RuntimeWarning exactly where numpy gives one (on
    CuPy and torch arrays, whose answers the nan-ops do not wait for, never where numpy gives
    none)."""
    got, warned = warns(lambda: getattr(parpat, op)(target.put(x), **kw, **target.kw()))
    check(got, numpy_answer(op, x, **kw), op)
    numpy_warned = warns(lambda: getattr(np, op)(x, **kw))[1]
    if target.framework == "numpy" or op in ("mean", "var", "std"):
        assert warned == numpy_warned, (op, x.shape, kw)
    else:
        assert warned <= numpy_warned, (op, x.shape, kw)


def check(ours, want, op):
    ours = np.asarray(host(ours))
    assert ours.shape == want.shape, (ours.shape, want.shape)
    assert ours.dtype == want.dtype, (ours.dtype, want.dtype)
    if want.dtype.kind != "f":
        np.testing.assert_array_equal(ours, want)
        return
    np.testing.assert_array_equal(np.isnan(ours), np.isnan(want))
    # Both sides round: float32 results from float64 agree to an ulp or two; float64 ones to
    # the accuracy of numpy's own (pairwise, two-pass) float64 arithmetic.
    rtol = 4 * np.finfo(np.float32).eps if want.dtype == np.float32 else 1e-11
    np.testing.assert_allclose(ours[~np.isnan(ours)], want[~np.isnan(want)], rtol=rtol)


def sprinkled(rng, shape, dtype):
    x = (rng.standard_normal(shape) * 3 + 10).astype(dtype)
    x[rng.random(shape) < 0.05] = np.nan
    return x


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_nan_ops_and_statistics_along_every_axis(target, rng, dtype):
    x = sprinkled(rng, (41, 67), dtype)
    x[:, 5] = np.nan  # a column of NaN only (nanmin gives NaN there)
    for op in STATISTICS + NAN_OPS + ["count_nonzero", "any", "all"]:
        for axis in (None, 0, 1):
            if op.startswith("nanarg") and axis == 0:
                with pytest.raises(ValueError, match="All-NaN"):
                    getattr(parpat, op)(target.put(x), axis=0, **target.kw())
                continue
            if op == "nanprod":
                x_op = np.where(np.isnan(x), x, 1 + (x - 10) / 300).astype(dtype)
            else:
                x_op = x
            check_warned(target, op, x_op, axis=axis)


@pytest.mark.parametrize("dtype", ["uint8", "int32", "int64", "float32"])
def test_statistics_of_1d_data_with_ddof_and_keepdims(target, rng, dtype):
    if dtype == "float32":
        x = (rng.standard_normal(5000) + 1000).astype(dtype)  # a large mean: stability matters
    else:
        x = rng.integers(0, 200, 5000).astype(dtype)
    for op in ("mean", "var", "std", "count_nonzero"):
        got = getattr(parpat, op)(target.put(x), keepdims=True, **target.kw())
        check(got, numpy_answer(op, x, keepdims=True), op)
    for ddof in (1, 2.5, 4999, 4999.5, 5000, 6000):  # numpy warns from ddof 5000 on
        for op in ("var", "std", "nanvar"):
            check_warned(target, op, x, ddof=ddof)


def test_edge_inputs_follow_numpy(target):
    empty = np.zeros(0, dtype=np.float32)
    for op in ("mean", "var", "nanmean", "nanstd", "nansum", "nanprod", "count_nonzero", "any",
               "all"):
        check_warned(target, op, empty)
    for op in ("nanmin", "nanmax", "nanargmin", "nanargmax"):
        with pytest.raises(ValueError):
            getattr(parpat, op)(target.put(empty), **target.kw())
    nans = np.full(7, np.nan, dtype=np.float64)
    for op in ("nanmin", "nanmax", "nanmean", "nanvar", "nansum"):
        check_warned(target, op, nans)
    some_nans = np.array([[np.nan, 1.0, np.nan], [np.nan, np.nan, np.nan]])
    for op in ("nanmin", "nanmax", "nanmean", "nanstd", "nansum"):
        check_warned(target, op, some_nans)  # a number in all: no warning
        check_warned(target, op, some_nans, axis=1)  # warns: the second row
        check_warned(target, op, some_nans, axis=0)  # warns: the first and last columns
    for op in ("nanargmin", "nanargmax"):
        with pytest.raises(ValueError, match="All-NaN"):
            getattr(parpat, op)(target.put(nans), **target.kw())
    infs = np.array([1.0, np.inf, 2.0], dtype=np.float64)
    for op in ("mean", "var", "nanmean"):
        check(getattr(parpat, op)(target.put(infs), **target.kw()), numpy_answer(op, infs), op)
    ints = np.array([0, 3, 0, -2], dtype=np.int32)
    check(parpat.count_nonzero(target.put(ints), **target.kw()),
          numpy_answer("count_nonzero", ints), "count_nonzero")
    check(parpat.nanargmax(target.put(ints), **target.kw()), numpy_answer("nanargmax", ints),
          "nanargmax")


def test_negative_ddof_is_refused():
    with pytest.raises(ValueError, match="ddof"):
        parpat.var(np.arange(10, dtype=np.float32), ddof=-1)


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint16", "int64", "float32", "float64"])
def test_any_and_all_find_the_one_element(target, rng, dtype):
    """Zeros with one non-zero element (NaN for floats), ones with one zero: along every axis,
    with keepdims, the answer hinges on that element."""
    for shape in ((1,), (1000,), (37, 129)):
        where = tuple(int(rng.integers(0, n)) for n in shape)
        zeros = np.zeros(shape, dtype=dtype)
        ones = np.ones(shape, dtype=dtype)
        zeros[where] = np.nan if zeros.dtype.kind == "f" else 1
        ones[where] = 0
        for axis in [None] + list(range(len(shape))):
            for op, x in (("any", zeros), ("any", np.zeros(shape, dtype=dtype)), ("all", ones),
                          ("all", np.ones(shape, dtype=dtype))):
                got = getattr(parpat, op)(target.put(x), axis=axis, keepdims=True, **target.kw())
                check(got, numpy_answer(op, x, axis=axis, keepdims=True), op)
