"""parpat.histogramdd and parpat.histogram2d: numpy's joint histograms, counted by the C++
library on the device that holds the samples (or the one named by `device=`)."""

from __future__ import annotations

import builtins
import operator
from typing import Any, List, NamedTuple

import numpy as np

from . import _frameworks as fw
from . import _parpat
from ._api import _HISTOGRAM_DTYPES, _WEIGHT_DTYPES, _device_of, _flat, _step

# The library's joint histogram takes every histogram dtype but the 16-bit floats.
_JOINT_DTYPES = tuple(t for t in _HISTOGRAM_DTYPES if t not in ("float16", "bfloat16"))


class _Samples(NamedTuple):
    """The samples as the C++ layer takes them."""

    ptrs: List[int]  # the (N, D) table's data, or each coordinate array's
    table: bool
    strides: List[int]  # the table's two element strides, or each array's step ([]: dense)
    n: int
    dims: int
    dtype: str
    where: fw.Described  # the first array: where the data is, and results go
    arrays: List[Any]  # the arrays behind ptrs, kept alive for the call


def _astype(d: fw.Described, dtype: str):
    """d's array converted to `dtype` (numpy's common type of the coordinates, or float64
    weights), in its own framework on its device."""
    if d.host:
        return np.asarray(d.array, dtype=dtype)
    if d.kind == "torch":
        return d.array.to(fw.torch_dtype(dtype))
    if d.kind == "cupy":
        return d.array.astype(dtype)
    raise TypeError(f"parpat cannot convert this {d.dtype} device array to {dtype}: pass "
                    f"{dtype} data")


def _samples(sample, copy: bool) -> _Samples:
    """numpy.histogramdd's two forms of samples: an array with a shape is an (N, D) table (1-D:
    D = 1), anything else a sequence of D coordinate arrays of N values (or of N scalars: D =
    1)."""
    if not hasattr(sample, "shape"):
        items = list(sample)
        if builtins.all(np.ndim(c) == 0 for c in items):
            items = [np.asarray(items)]
        return _coordinates(items, copy)
    d = fw.describe(fw.native_order(sample, copy))
    if len(d.shape) < 2:
        return _coordinates([d.array.reshape(-1)], copy)
    if len(d.shape) > 2:
        raise ValueError(f"parpat.histogramdd takes an (N, D) array of samples, not one of "
                         f"shape {tuple(d.shape)}")
    if d.dtype not in _JOINT_DTYPES:
        raise TypeError(f"parpat.histogramdd does not take dtype {d.dtype} (it takes "
                        f"{', '.join(_JOINT_DTYPES)})")
    (n, dims), (row, col) = d.shape, d.strides
    if (dims <= 1 or col == 1) and (n <= 1 or row == dims):
        return _Samples([d.ptr], True, [], n, dims, d.dtype, d, [d.array])
    if n <= 1 or row == 1:  # Fortran order: each column is a coordinate array, read in place
        step = col * np.dtype(d.dtype).itemsize
        return _Samples([d.ptr + j * step for j in builtins.range(dims)], False, [], n, dims,
                        d.dtype, d, [d.array])
    if row >= 0 and col >= 0:  # a view of a table (columns, steps): through a dense copy
        return _Samples([d.ptr], True, [row, col], n, dims, d.dtype, d, [d.array])
    if not copy:
        raise ValueError(f"parpat.histogramdd reads samples of non-negative strides; this "
                         f"array's strides {d.strides} (in elements) need a copy: pass copy=True")
    return _samples(fw.contiguous_copy(d.array, d), False)


def _coordinates(items, copy: bool) -> _Samples:
    """D coordinate arrays, converted to their common dtype as numpy stacks them;
    consecutive columns of one table, in order, as that table."""
    ds = [fw.describe(fw.native_order(c, copy)) for c in items]
    first = ds[0]
    for d in ds:
        if len(d.shape) != 1:
            raise ValueError(f"parpat.histogramdd takes 1-D coordinate arrays, not one of shape "
                             f"{tuple(d.shape)}")
        if d.shape != first.shape:
            raise ValueError(f"the coordinate arrays must have one length, got "
                             f"{first.shape[0]} and {d.shape[0]}")
        if d.host != first.host or d.cuda_device != first.cuda_device:
            raise ValueError("the coordinate arrays must be on one device")
    dtype = np.result_type(*(np.dtype(d.dtype) for d in ds)).name
    if dtype not in _JOINT_DTYPES:
        raise TypeError(f"parpat.histogramdd does not take dtype {dtype} (it takes "
                        f"{', '.join(_JOINT_DTYPES)})")
    arrays, ds, layouts = zip(*(_flat(d.array if d.dtype == dtype else _astype(d, dtype), copy,
                                      "histogramdd", _JOINT_DTYPES) for d in ds))
    steps = [_step(layout) for layout in layouts]
    n, dims = first.shape[0], len(ds)
    # The columns 0, 1, ... of one table (pts[:, 0], pts[:, 1]) are that table: read in place
    # where its rows follow on, else with one gather rather than one a column.
    itemsize = np.dtype(dtype).itemsize
    if (dims > 1 and n > 1 and steps[0] >= dims and builtins.all(s == steps[0] for s in steps)
            and builtins.all(d.ptr == ds[0].ptr + k * itemsize for k, d in enumerate(ds))):
        strides = [] if steps[0] == dims else [steps[0], 1]
        return _Samples([ds[0].ptr], True, strides, n, dims, dtype, ds[0], list(arrays))
    return _Samples([d.ptr for d in ds], False, steps, n, dims, dtype, ds[0], list(arrays))


def _bins_specs(bins, range, dims: int) -> list:
    """Each dimension's bins by numpy.histogramdd's rules, as (count, has_range, lo, hi,
    edges)."""
    try:
        if len(bins) != dims:
            raise ValueError("The dimension of bins must be equal to the dimension of the sample "
                             "x.")
    except TypeError:  # one scalar for every dimension
        bins = [bins] * dims
    if range is None:
        range = (None,) * dims
    elif len(range) != dims:
        raise ValueError("range argument must have one entry per dimension")
    return [_dimension_bins(i, b, r) for i, (b, r) in enumerate(zip(bins, range))]


def _dimension_bins(i: int, bins, range) -> tuple:
    if np.ndim(bins) == 0:
        if bins < 1:
            raise ValueError(f"`bins[{i}]` must be positive, when an integer")
        lo = hi = 0.0
        if range is not None:
            lo, hi = range
            if lo > hi:
                raise ValueError("max must be larger than min in range parameter.")
            if not (np.isfinite(lo) and np.isfinite(hi)):
                raise ValueError(f"supplied range of [{lo}, {hi}] is not finite")
            lo, hi = float(lo), float(hi)
            if lo == hi:
                lo, hi = lo - 0.5, hi + 0.5
        try:
            count = operator.index(bins)
        except TypeError:
            raise TypeError(f"`bins[{i}]` must be an integer, when a scalar") from None
        return count, range is not None, lo, hi, []
    if np.ndim(bins) != 1:
        raise ValueError(f"`bins[{i}]` must be a scalar or 1d array")
    edges = np.asarray(fw.to_host(bins) if fw.is_torch(bins) or fw.is_cupy(bins) else bins,
                       dtype=np.float64)
    if np.any(edges[:-1] > edges[1:]):
        raise ValueError(f"`bins[{i}]` must be monotonically increasing, when an array")
    if np.any(edges[:-1] == edges[1:]):
        raise ValueError(f"`bins[{i}]` must be strictly increasing in parpat: numpy allows equal "
                         "consecutive edges (bins of zero width), parpat does not")
    if edges.size < 2:
        raise ValueError(f"`bins[{i}]` needs at least two edges, when an array")
    return edges.size - 1, True, 0.0, 0.0, edges.tolist()


def _weights(weights, s: _Samples, copy: bool):
    """float32 or float64 weights of the samples, one per sample on their device (other dtypes
    are converted to float64, the type numpy sums weights in)."""
    dw = fw.describe(fw.native_order(weights, copy))
    if dw.dtype not in _WEIGHT_DTYPES:
        dw = fw.describe(_astype(dw, "float64"))
    if len(dw.shape) != 1:
        raise ValueError(f"the weights must hold one value per sample ({s.n}), got shape "
                         f"{tuple(dw.shape)}")
    weights, dw, layout = _flat(dw.array, copy, "histogramdd weights", _WEIGHT_DTYPES)
    if tuple(dw.shape) != (s.n,):
        raise ValueError(f"the weights must hold one value per sample ({s.n}), got shape "
                         f"{tuple(dw.shape)}")
    if dw.host != s.where.host or dw.cuda_device != s.where.cuda_device:
        raise ValueError("the weights must be on the samples' device")
    return weights, dw, _step(layout)


def histogramdd(sample, bins=10, range=None, density=None, weights=None, *, device=None,
                stream=None, copy=False, variant=""):
    """Multidimensional histogram of some data, as numpy.histogramdd.

    Parameters
    ----------
    sample : (N, D) array, or sequence of D 1-D arrays of N values
        The samples: an (N, D) array (C order, or Fortran order whose columns are read in
        place; a 1-D array is D = 1), or D coordinate arrays (numpy, CuPy, torch or JAX, on one
        device), converted to their common dtype as numpy stacks them. Consecutive columns of
        one table given in order (``pts[:, 0], pts[:, 1]``) are read as that table; other views
        (columns of a wider table, steps) are read through a dense copy made on their device;
        negative strides need copy=True. bool, any integer dtype,
        float32 or float64; at most 8 dimensions. Every coordinate is compared with the float64
        edges as a float64, as numpy does (for float32 data without a range numpy 2 makes
        float32 edges, which can move a value within a float32 rounding of an edge to the
        neighbouring bin).
    bins : int, sequence of ints, or sequence of arrays, optional
        Per dimension (or one int for all): a number of equal-width bins, or the bin edges.
        Edges must be finite and strictly increasing, at least two (numpy also allows equal
        consecutive edges, infinite ones and a single edge; parpat raises ValueError).
    range : sequence of (lo, hi) or None, optional
        Per dimension: the outer edges of an int's bins; None (the default) takes the data's
        minimum and maximum. A sample outside the bins of any dimension, or with a NaN
        coordinate, is counted in no bin.
    density : bool, optional
        Return numpy's probability density: each bin's count / its volume / the total, in
        numpy's order of operations (equal to numpy's bit for bit for counts).
    weights : (N,) array_like, optional
        One weight per sample, on the samples' device: each bin then holds the float64 sum of
        its samples' weights. float32 or float64; other dtypes are converted to float64. On a
        GPU the sums are added in no fixed order, so their last bits may differ from numpy's.
    device, stream, copy, variant
        As for parpat.histogram. Where every dimension has its range (or edges) and density is
        off, the counting runs on the caller's stream like parpat.histogram's; otherwise the
        call waits for the caller's stream (the range comes from the data) and for its answer.

    Returns
    -------
    H : ndarray of float64
        The histogram, of shape (bins of dimension 0, ..., bins of dimension D - 1).
    edges : list of D float64 arrays
        Each dimension's edges (numpy.linspace's values for a number of bins; numpy returns
        explicit edges in their own dtype).

    H and edges come back in the samples' framework, on their device for device input.
    """
    s = _samples(sample, copy)
    specs = _bins_specs(bins, range, s.dims)
    dev = _device_of(s.where, device)
    w_ptr, w_host, w_dtype, w_step = 0, s.where.host, "", 1
    if weights is not None:
        weights, dw, w_step = _weights(weights, s, copy)
        w_ptr, w_host, w_dtype = dw.ptr, dw.host, dw.dtype
    handle = fw.stream_handle(stream, s.where)
    if not density and builtins.all(spec[1] or spec[4] for spec in specs):
        # Every dimension's range known: a plan counts into the caller's framework on its
        # stream, as parpat.histogram does.
        shape = tuple(spec[0] for spec in specs)
        out, out_ptr = fw.empty(s.where, s.arrays[0], (int(np.prod(shape)) + 1,),
                                "float64" if w_dtype else "int64")
        edges = _parpat.histogramdd_into(dev, s.ptrs, s.where.host, s.dtype, s.n, s.table,
                                         s.strides, specs, w_ptr, w_host, w_dtype, w_step,
                                         out_ptr, s.where.host, variant, handle)
        hist = out[:-1].reshape(shape)
        if not w_dtype:  # numpy returns counts as float64
            hist = hist.to(fw.torch_dtype("float64")) if fw.is_torch(hist) else \
                hist.astype(np.float64)
        if s.where.host:
            return hist, edges
        return hist, [fw.from_host(s.where, e) for e in edges]
    values, edges = _parpat.histogramdd(dev, s.ptrs, s.where.host, s.dtype, s.n, s.table,
                                        s.strides, specs, w_ptr, w_host, w_dtype, w_step, variant,
                                        handle)
    shape = tuple(e.size - 1 for e in edges)
    hist = values.astype(np.float64, copy=False).reshape(shape)
    if density:  # numpy's steps, in its order
        total = hist.sum()
        for i, e in enumerate(edges):
            widths = np.ones(len(shape), int)
            widths[i] = shape[i]
            hist = hist / np.diff(e).reshape(widths)
        hist /= total
    if s.where.host:
        return hist, edges
    return fw.from_host(s.where, hist), [fw.from_host(s.where, e) for e in edges]


def histogram2d(x, y, bins=10, range=None, density=None, weights=None, *, device=None,
                stream=None, copy=False, variant=""):
    """Bi-dimensional histogram of two data samples, as numpy.histogram2d.

    Parameters
    ----------
    x, y : array_like, shape (N,)
        The samples' x and y coordinates (as the coordinate arrays of parpat.histogramdd).
    bins : int, [int, int], array or [array, array], optional
        The number of bins or the edges, for both dimensions or for each.
    range, density, weights, device, stream, copy, variant
        As for parpat.histogramdd, for two dimensions.

    Returns
    -------
    H : ndarray of float64, shape (nx, ny)
        The histogram: x along the first dimension, y along the second.
    xedges, yedges : ndarray of float64
        The edges of the x and the y bins.
    """
    if len(x) != len(y):
        raise ValueError("x and y must have the same length.")
    try:
        n = len(bins)
    except TypeError:
        n = 1
    if n != 1 and n != 2:
        bins = [bins, bins]
    hist, edges = histogramdd([x, y], bins, range, density, weights, device=device,
                              stream=stream, copy=copy, variant=variant)
    return hist, edges[0], edges[1]
