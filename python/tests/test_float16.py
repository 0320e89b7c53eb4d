"""float16 against numpy on every target: every reduction and the histogram.

Where the result is a rounding of an accumulation (sum, prod, mean, var, std and their nan
forms), parpat accumulates in float64 and rounds once, so it must be numpy's answer for the
float64 values rounded to float16, or one float16 step from it: at least numpy's accuracy. numpy's
own float16 answer is no oracle there, as numpy rounds to float16 along the way: a sum along axis
0 after every row, a 1-D sum after every block of 8192, and var and std square the deviations in
float16, which overflow to inf past 65504. The result's dtype is numpy's. Every other result (min,
max, the arg ops, count_nonzero, any, all) must be numpy's own.
"""

import numpy as np
import pytest

import parpat
from conftest import host

ROUNDED = ["sum", "prod", "mean", "var", "std", "nansum", "nanprod", "nanmean", "nanvar",
           "nanstd"]
EXACT = ["min", "max", "argmin", "argmax", "nanmin", "nanmax", "nanargmin", "nanargmax",
         "count_nonzero", "any", "all"]


def steps_apart(a, b):
    """Distance in float16 steps (inf is one step above the largest finite value)."""
    def position(v):
        bits = np.asarray(v, dtype=np.float16).view(np.uint16).astype(np.int64)
        return np.where(bits & 0x8000, -(bits & 0x7FFF), bits)
    return np.abs(position(a) - position(b))


def data(rng, n, op, specials):
    x = rng.uniform(0.95, 1.05, n) if "prod" in op else rng.standard_normal(n) * 100
    x = x.astype(np.float16)
    if specials:
        picks = rng.integers(0, n, 6)
        x[picks] = np.array([np.nan, -0.0, 0.0, 2.0**-24, -(2.0**-23), 65504], np.float16)
    return x


def expected(op, x, **kw):
    """numpy's answer to `op` of float16 `x`; for the rounded ops, of x's float64 values, rounded
    once to numpy's result dtype."""
    with np.errstate(all="ignore"):
        want = np.asarray(getattr(np, op)(x, **kw))
        if op in ROUNDED:
            want = np.asarray(getattr(np, op)(x.astype(np.float64), **kw)).astype(want.dtype)
    return want


def check(ours, want, op):
    ours, want = host(ours), np.asarray(want)
    assert ours.shape == want.shape
    assert ours.dtype == (np.int64 if "arg" in op else want.dtype), (ours.dtype, want.dtype)
    if want.dtype == np.float16:
        assert np.array_equal(np.isnan(ours), np.isnan(want)), (ours, want)
        keep = ~np.isnan(want)
        if op in ROUNDED:
            assert np.all(steps_apart(ours[keep], want[keep]) <= 1), (ours, want)
        else:
            np.testing.assert_array_equal(ours[keep], want[keep])
    else:
        np.testing.assert_array_equal(ours, want)


@pytest.mark.parametrize("op", ROUNDED + EXACT)
@pytest.mark.parametrize("specials", [False, True])
def test_every_op_against_numpy(target, rng, op, specials):
    for n in (1, 7, 1000, 70001):
        x = data(rng, n, op, specials)
        if op.startswith("nanarg") and np.all(np.isnan(x)):
            continue
        check(getattr(parpat, op)(target.put(x), **target.kw()), expected(op, x), op)


@pytest.mark.parametrize("op", ["sum", "max", "argmin", "mean", "nanstd"])
def test_axes_of_2d_data(target, rng, op):
    x = data(rng, 37 * 53, op, False).reshape(37, 53)
    for axis in (None, 0, 1):
        check(getattr(parpat, op)(target.put(x), axis=axis, **target.kw()),
              expected(op, x, axis=axis), op)


def test_sums_beyond_the_largest_value_are_inf(target):
    x = np.full(4, 65504, np.float16)
    assert np.isinf(np.sum(x))  # numpy's float32 accumulation, cast: inf
    assert np.isposinf(host(parpat.sum(target.put(x), **target.kw())))
    assert host(parpat.mean(target.put(x), **target.kw())) == np.float16(65504)


def test_histogram_is_numpys_of_the_float64_values(target, rng):
    x = (rng.standard_normal(100003) * 3).astype(np.float16)
    x[::97] = np.nan
    x[::89] = np.inf
    for bins, rng_ in ((10, (-4, 4)), (1000, (-1.5, 2.5)), (7, (0, 1))):
        counts, edges = parpat.histogram(target.put(x), bins=bins, range=rng_, **target.kw())
        want, want_edges = np.histogram(x.astype(np.float64), bins=bins, range=rng_)
        np.testing.assert_array_equal(host(counts), want)
        np.testing.assert_array_equal(host(edges), want_edges)
    edges = np.array([-3, -0.5, 0, 0.25, 1, 2.5])
    counts, _ = parpat.histogram(target.put(x), bins=edges, **target.kw())
    np.testing.assert_array_equal(host(counts), np.histogram(x.astype(np.float64), bins=edges)[0])


def test_bfloat16_through_ml_dtypes(target, rng):
    ml_dtypes = pytest.importorskip("ml_dtypes")
    if target.gpu:
        pytest.skip("host arrays only")
    x = rng.standard_normal(1001).astype(ml_dtypes.bfloat16)
    got = host(parpat.sum(target.put(x), **target.kw()))
    assert got.dtype == ml_dtypes.bfloat16
    assert got == np.sum(x.astype(np.float64)).astype(ml_dtypes.bfloat16)
    assert host(parpat.argmax(target.put(x), **target.kw())) == np.argmax(x.astype(np.float32))
