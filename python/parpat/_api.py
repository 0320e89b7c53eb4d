"""The functions of the parpat package, numpy's names, arguments and answers, run by the C++
library on the device that holds the data (or the one named by `device=`): devices, the layouts
of arrays, histograms, bincount and pairwise (the reductions are in _reductions.py)."""

from __future__ import annotations

import math
import operator
from typing import Any, Optional, Tuple

import numpy as np

from . import _frameworks as fw
from . import _parpat
from ._parts import Parts

_BINCOUNT_DTYPES = ("bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64",
                    "uint64")
_REDUCE_DTYPES = _BINCOUNT_DTYPES + ("float16", "bfloat16", "float32", "float64")
_HISTOGRAM_DTYPES = _REDUCE_DTYPES
_devices = {}


# Devices -------------------------------------------------------------------------------------

def devices() -> list:
    """Every device parpat can run on, as `parpat info` lists them: dicts with backend, index,
    name, vendor, version, architecture, compute_units, global_memory and more."""
    return _parpat.devices()


def _open(backend: str, index: int) -> _parpat.Device:
    key = (backend, index)
    dev = _devices.get(key)
    if dev is None:
        dev = _devices[key] = _parpat.Device.open(backend, index)
    return dev


def _parse_device(device) -> Tuple[str, int]:
    if isinstance(device, _parpat.Device):
        return device.backend, device.index
    if not isinstance(device, str):
        raise TypeError(f"device must be a string such as 'cuda:0', 'opencl:1' or 'cpu', not "
                        f"{type(device).__name__}")
    backend, _, index = device.partition(":")
    if backend not in ("cpu", "cuda", "opencl"):
        raise ValueError(f"unknown device {device!r}: use 'cpu', 'cuda[:I]' or 'opencl[:I]'")
    try:
        return backend, int(index) if index else 0
    except ValueError:
        raise ValueError(f"unknown device {device!r}: the index must be an integer") from None


def _device_of(d: fw.Described, device) -> _parpat.Device:
    """The device a call runs on: the one holding device memory (a different one named is an
    error), for host memory the one named, else the CPU."""
    if d.host:
        return _open(*_parse_device(device)) if device is not None else _open("cpu", 0)
    if device is not None and _parse_device(device) != ("cuda", d.cuda_device):
        raise ValueError(f"the array is on cuda:{d.cuda_device}, not on {device}: parpat does "
                         "not move device arrays")
    return _open("cuda", d.cuda_device)


# Arrays --------------------------------------------------------------------------------------

def _prepare(x, copy: bool, what: str, dtypes, described: Optional[fw.Described] = None,
             any_strides: bool = False) -> Tuple[Any, fw.Described]:
    """`x` described (`described`, when the caller has it already), with its layout checked: 1-D
    or N-D contiguous (C order), or 2-D rows of contiguous elements (`any_strides`: any layout).
    Other layouts (and big-endian data) are refused, or copied when copy=True."""
    x = fw.native_order(x, copy)
    d = described if described is not None and not copy else fw.describe(x)
    if d.dtype not in dtypes:
        raise TypeError(f"parpat.{what} does not take dtype {d.dtype} (it takes "
                        f"{', '.join(dtypes)})")
    if not any_strides and not _row_layout(d):
        if not copy:
            raise ValueError(f"parpat.{what} takes contiguous rows; this array's strides "
                             f"{d.strides} (in elements) need a copy: pass copy=True")
        x = fw.contiguous_copy(d.array, d)
        d = fw.describe(x)
    return x, d


def _row_layout(d: fw.Described) -> bool:
    if math.prod(d.shape) <= 1:
        return True
    if len(d.shape) != 2:  # axes of length 1 may have any stride
        c_order = fw._c_strides(d.shape)
        return all(n == 1 or s == c for n, s, c in zip(d.shape, d.strides, c_order))
    rows, cols = d.shape
    return (cols == 1 or d.strides[1] == 1) and (rows == 1 or d.strides[0] >= cols)


Layout = Tuple[list, list]  # the shape and element strides the library reads (strides []: dense)


def _flat(x, copy: bool, what: str, dtypes, any_order: bool = False
          ) -> Tuple[Any, fw.Described, Layout]:
    """`x` taken flat (as numpy.histogram ravels it), with the layout the library reads it in:
    contiguous data of any shape as n dense values; with `any_order`, a permuted view of such data
    (x.T) too, in its memory's order; any other view with its element strides, which the library
    reads through a dense copy on the device. Negative strides (numpy, CuPy) are read as the view
    with those axes reversed when `any_order` (the order does not matter), else need copy=True."""
    x = fw.native_order(x, copy)
    d = fw.describe(x)
    if d.dtype not in dtypes:
        raise TypeError(f"parpat.{what} does not take dtype {d.dtype} (it takes "
                        f"{', '.join(dtypes)})")
    n = math.prod(d.shape)
    if n <= 1 or d.strides == fw._c_strides(d.shape) or (any_order and
                                                         _c_permutation(d) is not None):
        return x, d, ([n], [])  # read as the n values from d.ptr on
    flips = _flipped_axes(d)
    if flips and any_order and d.kind in _PERMUTABLE:
        d = _reversed_axes(d, flips)
    elif flips:
        if not copy:
            raise ValueError(f"parpat.{what} reads negative strides only where the values' order "
                             f"does not matter; this array's strides {d.strides} (in elements) "
                             "need a copy: pass copy=True")
        x = fw.contiguous_copy(d.array, d)
        return x, fw.describe(x), ([n], [])
    return x, d, (list(d.shape), list(d.strides))


def _flipped_axes(d: fw.Described) -> Tuple[int, ...]:
    """The axes of `d` with a negative stride (numpy, CuPy)."""
    return tuple(a for a, (n, s) in enumerate(zip(d.shape, d.strides)) if n > 1 and s < 0)


def _reversed_axes(d: fw.Described, flips: Tuple[int, ...]) -> fw.Described:
    """`d` with the axes `flips` (of negative stride) reversed: the same elements, positive
    strides, its address that of the lowest element."""
    strides = tuple(-s if a in flips else s for a, s in enumerate(d.strides))
    return d._replace(ptr=d.ptr - _flipped_bytes(d, flips), strides=strides)


def _flipped_bytes(d: fw.Described, flips: Tuple[int, ...]) -> int:
    """How far the first element of a view lies above its lowest one (`flips`: the axes of
    negative stride, of numpy and CuPy arrays)."""
    return sum((d.shape[a] - 1) * abs(d.strides[a]) for a in flips) * d.array.itemsize


# Frameworks whose negative strides parpat reads (and whose permuted views' answers it
# transposes).
_PERMUTABLE = ("numpy", "torch", "cupy")


def _step(layout: Layout) -> int:
    """The element step of a 1-D array's layout (_flat)."""
    return layout[1][0] if layout[1] else 1


def _parts_alone(device, stream, copy: bool) -> None:
    if device is not None or stream is not None or copy:
        raise ValueError("with parpat.Parts, each part runs where it lives (or on the device "
                         "named for it in Parts(arrays, devices)): device, stream and copy do "
                         "not apply")


def _c_permutation(d: fw.Described) -> Optional[Tuple[int, ...]]:
    """For a view whose axes are those of a C-contiguous array in another order (x.T,
    numpy.moveaxis, torch's permute): the view's axes in that array's order, else None. Axes of
    length 1 take any stride; they go last."""
    if len(d.shape) < 2 or d.dtype not in _REDUCE_DTYPES:
        return None
    spread = sorted((a for a in range(len(d.shape)) if d.shape[a] != 1),
                    key=lambda a: -d.strides[a])
    expected = 1
    for a in reversed(spread):
        if d.strides[a] != expected:
            return None
        expected *= d.shape[a]
    return tuple(spread) + tuple(a for a in range(len(d.shape)) if d.shape[a] == 1)


# Histograms ----------------------------------------------------------------------------------

def _bins_spec(bins, range) -> Tuple[str, int, bool, float, float, list]:
    if isinstance(bins, str):
        raise ValueError("parpat.histogram takes an integer or an array of edges for bins "
                         f"(numpy's estimator {bins!r} is not supported)")
    if np.ndim(bins) == 0:
        try:
            count = operator.index(bins)
        except TypeError:
            raise TypeError("`bins` must be an integer, a string, or an array") from None
        if count < 1:
            raise ValueError("`bins` must be positive, when an integer")
        if range is None:
            return "even", count, False, 0.0, 0.0, []
        lo, hi = (float(v) for v in range)
        if lo > hi:
            raise ValueError("max must be larger than min in range parameter.")
        if not (math.isfinite(lo) and math.isfinite(hi)):
            raise ValueError(f"supplied range of [{lo}, {hi}] is not finite")
        if lo == hi:
            lo, hi = lo - 0.5, hi + 0.5
        return "even", count, True, lo, hi, []
    edges = np.asarray(fw.to_host(bins) if not isinstance(bins, (list, tuple)) else bins,
                       dtype=np.float64)
    if edges.ndim != 1:
        raise ValueError("`bins` must be 1d, when an array")
    if np.any(edges[:-1] > edges[1:]):
        raise ValueError("`bins` must increase monotonically, when an array")
    return "edges", len(edges) - 1, True, 0.0, 0.0, edges.tolist()


_EDGES: dict = {}  # (count, lo, hi) -> numpy's edges of those even bins (never handed out)


def _even_edges(count: int, lo: float, hi: float) -> np.ndarray:
    key = (count, lo, hi)
    edges = _EDGES.get(key)
    if edges is None:
        if len(_EDGES) >= 64:
            _EDGES.clear()
        edges = _EDGES[key] = _parpat.edges(count, lo, hi)
    return edges


_WEIGHT_DTYPES = ("float32", "float64")


def _weights(weights, d: fw.Described, copy: bool, what: str
             ) -> Tuple[Any, fw.Described, Layout]:
    """`weights` for the values `d`: float32 or float64 (numpy host data of another dtype is
    converted to float64, the type numpy sums weights in), of d's shape and on d's device, with
    the layout the library reads them in (_flat)."""
    if isinstance(weights, (list, tuple)) or (isinstance(weights, np.ndarray) and
                                              weights.dtype.name not in _WEIGHT_DTYPES):
        weights = np.asarray(weights, dtype=np.float64)
    weights, dw, layout = _flat(weights, copy, what + " weights", _WEIGHT_DTYPES)
    if tuple(dw.shape) != tuple(d.shape):
        raise ValueError("weights should have the same shape as a.")
    if dw.host != d.host or (not d.host and dw.cuda_device != d.cuda_device):
        raise ValueError("the weights must be on the values' device")
    return weights, dw, layout


def _weighted_into(dev, d: fw.Described, layout: Layout, dw: fw.Described, w_layout: Layout,
                   count: int, lo: float, hi: float, edges: list, variant: str, handle: int):
    """The bins + 3 float64 sums of the weights, in the input's framework."""
    sums, sums_ptr = fw.empty(d, d.array, (count + 3,), "float64")
    _parpat.weighted_histogram(dev, d.ptr, d.host, d.dtype, *layout, dw.ptr, dw.host, dw.dtype,
                               *w_layout, count, lo, hi, edges, sums_ptr, d.host, False, variant,
                               handle)
    return sums


def histogram(x, bins=10, range=None, density=False, weights=None, *, outliers=False, device=None,
              stream=None, copy=False, variant=""):
    """Histogram of a data set, as numpy.histogram, with 64-bit counts.

    Parameters
    ----------
    x : array_like
        The data, taken flat: bool, any integer dtype, float16, bfloat16, float32 or float64,
        from numpy, CuPy, torch, JAX or any DLPack / CUDA-array-interface producer. Device
        arrays are read in place, and so are views of one step (``x[::s]``) on every
        device; other views that are neither contiguous nor permuted (slices, broadcasts) are read
        through a dense copy made on their device. Every value is binned as a float64, as numpy
        does (64-bit integers rounded to the nearest float64).
    bins : int or sequence of scalars, optional
        An integer: that many equal-width bins over the range (numpy's edges,
        ``linspace(lo, hi, bins + 1)``). An array: the bin edges, increasing, so that bin i
        holds edges[i] <= v < edges[i + 1] and the last bin also holds v == edges[-1].
    range : (float, float), optional
        The lower and upper edge of the bins for an integer `bins`. Default: the data's minimum
        and maximum (found on the device first; [v - 0.5, v + 0.5] when they are equal, [0, 1]
        for empty data). Values outside the range are not counted in the bins.
    density : bool, optional
        Return numpy's probability density instead of the counts: count / bin width / the
        bins' total, float64, equal to numpy.histogram(..., density=True) bit for bit (NaN in
        every bin when no value fell in one). The call then waits for the device.
    weights : array_like, optional
        One weight per value, of x's shape and on x's device (any layout of non-negative
        strides): each bin then holds the sum of its values' weights, added in float64 (as
        numpy does), returned as float32 for float32 weights and float64 otherwise. float32 or
        float64; numpy data of another dtype is converted to float64 first. On a GPU the sums
        are added by atomics in no fixed order, so their last bits may differ from numpy's.
    outliers : bool, optional
        Also return the counts that no bin holds: values below the first edge, values above
        the last edge, and NaNs, as a 3-element uint64 array.
    device, stream, copy, variant
        As for parpat.sum.

    Returns
    -------
    counts : array of uint64, or of float64 with density=True
        The number of values in each bin (numpy.histogram returns int64; parpat's counts never
        overflow below 2**64 values), or their density.
    edges : array of float64
        The bins + 1 edges, as numpy.histogram returns them.
    outliers : array of uint64, only with outliers=True
        [below the first edge, above the last edge, NaN] (with weights: their weights' sums).

    Counts and edges come back in the input's framework, on its device for device input.
    Every value is compared with the float64 edges, as numpy.histogram does for float64 data
    (for float32 data numpy 2 makes float32 edges, which can move a value lying within a float32
    rounding of an edge to the neighbouring bin).
    """
    if isinstance(x, Parts):
        _parts_alone(device, stream, copy)
        if weights is not None:
            raise ValueError("parpat.histogram takes no weights with parpat.Parts")
        return x._histogram(bins, range, density, outliers, variant)
    # Counts do not depend on the values' order: a permuted or reversed view is counted in
    # place, unless its weights must be matched value by value.
    x, d, layout = _flat(x, copy, "histogram", _HISTOGRAM_DTYPES, any_order=weights is None)
    kind, count, has_range, lo, hi, edges = _bins_spec(bins, range)
    dev = _device_of(d, device)
    handle = fw.stream_handle(stream, d)
    count, lo, hi, edges = _parpat.resolve_bins(dev, d.ptr, d.host, d.dtype, *layout, kind, count,
                                                has_range, lo, hi, edges, handle)
    if weights is not None:
        weights, dw, w_layout = _weights(weights, d, copy, "histogram")
        all_counts = _weighted_into(dev, d, layout, dw, w_layout, count, lo, hi, edges, variant,
                                    handle)
        if dw.dtype == "float32" and not density:
            all_counts = all_counts.to(fw.torch_dtype("float32")) if fw.is_torch(all_counts) \
                else all_counts.astype("float32")
    else:
        all_counts, counts_ptr = fw.empty(d, d.array, (count + 3,), "uint64")
        _parpat.histogram(dev, d.ptr, d.host, d.dtype, *layout, count, lo, hi, edges, counts_ptr,
                          d.host, False, variant, handle)
    edge_values = np.asarray(edges, dtype=np.float64) if edges else _even_edges(count, lo, hi)
    bins_out = all_counts[:count]
    if density:
        counts_host = fw.to_host(bins_out)
        bins_out = fw.from_host(d, counts_host.astype(np.float64) / np.diff(edge_values) /
                                np.float64(counts_host.sum()))
    result = (bins_out, fw.from_host(d, edge_values))
    return result + (all_counts[count:],) if outliers else result


def bincount(x, weights=None, minlength=0, *, device=None, stream=None, copy=False, variant=""):
    """Number of occurrences of each value in an array of non-negative integers, as
    numpy.bincount: a result of max(x) + 1 counts, or `minlength` if that is larger. x is 1-D
    bool or of any integer dtype; a negative value raises ValueError, and so does a largest
    value of 2**26 or more. The counts are uint64, in the input's framework and on its device.
    With `weights` (one per value, as for parpat.histogram) each entry is instead the float64
    sum of the weights of that value. The result's length depends on the data, so the call
    waits for the device."""
    minlength = operator.index(minlength)
    if minlength < 0:
        raise ValueError("'minlength' must not be negative")
    if np.ndim(x) != 1:
        raise ValueError("object too deep for desired array" if np.ndim(x) > 1 else
                         "object of too small depth for desired array")
    x, d, layout = _flat(x, copy, "bincount", _BINCOUNT_DTYPES, any_order=weights is None)
    n = d.shape[0]
    if weights is not None:
        weights, dw, w_layout = _weights(weights, d, copy, "bincount")
    result_dtype = "uint64" if weights is None else "float64"
    if n == 0:
        return fw.concatenate(d, fw.empty(d, d.array, (0,), result_dtype)[0], minlength)
    dev = _device_of(d, device)
    handle = fw.stream_handle(stream, d)
    count, lo, hi, _ = _parpat.resolve_bins(dev, d.ptr, d.host, d.dtype, *layout, "per_value",
                                            0, False, 0.0, 0.0, [], handle)
    if weights is None:
        all_counts, counts_ptr = fw.empty(d, d.array, (count + 3,), "uint64")
        _parpat.histogram(dev, d.ptr, d.host, d.dtype, *layout, count, lo, hi, [], counts_ptr,
                          d.host, False, variant, handle)
        # The values present: the bins with a count (the same with weights, whose sums can be 0).
        present = all_counts
    else:
        all_counts = _weighted_into(dev, d, layout, dw, w_layout, count, lo, hi, [], variant,
                                    handle)
        present, present_ptr = fw.empty(d, d.array, (count + 3,), "uint64")
        _parpat.histogram(dev, d.ptr, d.host, d.dtype, *layout, count, lo, hi, [], present_ptr,
                          d.host, False, variant, handle)
    host = fw.to_host(present)
    if host[count] > 0:
        raise ValueError("'list' argument must have no negative elements")
    nonzero = np.flatnonzero(host[:count])
    length = int(nonzero[-1]) + 1 if nonzero.size else 0
    counts = all_counts[:length]
    return fw.concatenate(d, counts, minlength - length) if minlength > length else counts


# Pairwise ------------------------------------------------------------------------------------

def pairwise(a, b, kernel="product", h=None, expr=None, *, device=None, stream=None, copy=False,
             variant=""):
    """C[i] = sum over j of f(a[i], b[j]) for 1-D float32 arrays a and b.

    kernel : 'product' gives a[i] * b[j]; 'gaussian' exp(-(a[i] - b[j])**2 / (2 h**2)) with
        bandwidth h (default 1.0).
    expr : a C expression in `a` and `b` (e.g. ``"a * b + sinf(a - b)"``), compiled at run time
        for the GPU (not on the CPU backend); it replaces `kernel`.

    Returns C (float32, len(a)) in a's framework and on its device. a and b must be on the same
    device; device, stream, copy and variant as for parpat.sum.
    """
    if kernel not in ("product", "gaussian") and expr is None:
        raise ValueError(f"unknown pairwise kernel {kernel!r}: use 'product' or 'gaussian', or "
                         "expr=")
    if np.ndim(a) != 1 or np.ndim(b) != 1:
        raise ValueError("parpat.pairwise takes 1-D arrays a and b")
    # C[i] belongs to a[i]; b is summed over, in any order.
    a, da, a_layout = _flat(a, copy, "pairwise", ("float32",))
    b, db, b_layout = _flat(b, copy, "pairwise", ("float32",), any_order=True)
    if da.host != db.host or da.cuda_device != db.cuda_device:
        raise ValueError("parpat.pairwise: a and b must be on the same device")
    if h is not None and not (float(h) > 0 and math.isfinite(float(h))):
        raise ValueError(f"the bandwidth h must be positive and finite (got {h})")
    dev = _device_of(da, device)
    c, c_ptr = fw.empty(da, da.array, (da.shape[0],), "float32")
    if da.shape[0]:
        _parpat.pairwise(dev, da.ptr, da.host, da.shape[0], _step(a_layout), db.ptr, db.host,
                         db.shape[0], _step(b_layout), c_ptr, da.host, kernel,
                         1.0 if h is None else float(h), expr or "", variant,
                         fw.stream_handle(stream, da))
    return c
