"""parpat's reductions: sum, min, max, the arg ops, mean, var, std, the nan-ops, count_nonzero,
any and all, with numpy's axis, keepdims and ddof, numpy's errors and warnings, and a cache of
call signatures so that a call in a loop only allocates its result and launches. The module
defines sum, min, max, any and all as numpy does, so Python's own are reached as builtins.*."""

from __future__ import annotations

import builtins
import math
import operator
import warnings
from typing import Optional, Tuple

import numpy as np

from . import _frameworks as fw
from . import _parpat
from ._api import (_REDUCE_DTYPES, _c_permutation, _device_of, _parts_alone, _prepare,
                   _row_layout, _row_stride)
from ._parts import Parts

def _axis(axis, ndim: int, op: str) -> Optional[Tuple[int, ...]]:
    """numpy's axis argument as None (every axis) or the reduced axes, non-negative and sorted;
    numpy's errors for an axis out of range, a repeated one and a tuple for an arg op. A 0-d
    array takes axis 0 and -1, as in numpy."""
    if axis is None:
        return None
    n = builtins.max(ndim, 1)
    if isinstance(axis, tuple):
        if "arg" in op:
            raise TypeError("'tuple' object cannot be interpreted as an integer")
        axes = tuple(sorted(_axis(a, ndim, op)[0] for a in axis))
        if len(set(axes)) != len(axes):
            raise ValueError("duplicate value in 'axis'")
        return axes
    a = operator.index(axis)
    if not -n <= a < n:
        raise getattr(np, "exceptions", np).AxisError(a, ndim)  # np.AxisError before numpy 1.25
    return (a % n,)


# Reductions by call signature (op, arguments, the array's framework, dtype, shape, strides and
# device): a function that allocates the result and launches, so that a call in a loop costs a
# dict lookup, an allocation and a launch. Bounded: cleared when full.
_RUNNERS: dict = {}
_MAX_RUNNERS = 256


def _reduce(op: str, x, axis, keepdims: bool, device, stream, copy: bool, variant: str,
            ddof: float = 0.0):
    if isinstance(x, Parts):
        _parts_alone(device, stream, copy)
        return x._reduce(op, axis, keepdims, ddof, variant)
    sig = fw.signature(x)
    key = None
    if sig is not None:
        key = (op, axis, keepdims, device, variant, ddof, sig)
        try:
            runner = _RUNNERS.get(key)
        except TypeError:  # an unhashable axis or device: nothing cached
            key = runner = None
        if runner is not None:
            return runner(x, None, stream)
    prepared, d, perm = _prepare_reduce(x, copy, op, axis)
    runner = _reduce_runner(op, d, axis, keepdims, device, variant, ddof, stream, perm)
    if key is not None and prepared is x:  # (a copied input has another signature)
        if len(_RUNNERS) >= _MAX_RUNNERS:
            _RUNNERS.clear()
        _RUNNERS[key] = runner
    return runner(prepared, d.ptr, stream)


def _prepare_reduce(x, copy: bool, op: str, axis):
    """_prepare for a reduction, which also reads a permuted view (x.T, moveaxis) in place: the
    array, its description (for a permuted view, that of the C-contiguous array under it) and
    the permutation (None for other layouts)."""
    if copy:
        return _prepare(x, True, op, _REDUCE_DTYPES) + (None,)
    d = fw.describe(x)
    perm = _c_permutation(d) if d.kind in _PERMUTABLE and not _row_layout(d) else None
    if perm is None or ("arg" in op and axis is None):  # a flat index counts in the view's order
        return _prepare(x, False, op, _REDUCE_DTYPES, d) + (None,)
    shape = tuple(d.shape[a] for a in perm)
    return x, d._replace(shape=shape, strides=fw._c_strides(shape)), perm


# Frameworks whose results parpat can transpose (a permuted view's answer, in the view's order).
_PERMUTABLE = ("numpy", "torch", "cupy")


def _reduce_runner(op: str, d: fw.Described, axis, keepdims: bool, device, variant: str,
                   ddof: float, stream, perm: Optional[Tuple[int, ...]] = None):
    """The reduction of arrays like `d` as a function runner(x, ptr, stream) -> result (ptr:
    the data's address, or None to read it from x, a numpy, torch or CuPy array). With `perm`,
    the arrays are views with axes perm[0], perm[1], ... of `d` (C-contiguous): `axis` counts
    in the view, and the answer comes in the view's axis order."""
    ndim = len(d.shape)
    shape = list(d.shape) if ndim else [1]
    axes = _axis(axis, ndim, op)
    order = None  # the transpose that puts the answer's axes in the view's order
    if perm is not None:
        view_axes = range(ndim) if axes is None else axes
        axes = None if axes is None else tuple(sorted(perm.index(a) for a in axes))
        kept = [perm[p] for p in range(ndim) if keepdims or perm[p] not in view_axes]
        order = tuple(kept.index(a) for a in sorted(kept))
        if order == tuple(range(len(order))):
            order = None
    reduced_axes = range(len(shape)) if axes is None else axes
    out_shape = tuple(1 if i in reduced_axes else n for i, n in enumerate(d.shape)
                      if keepdims or i not in reduced_axes)
    reduced = math.prod(shape[i] for i in reduced_axes)
    if reduced == 0 and op in _NO_IDENTITY and math.prod(out_shape) > 0:
        raise ValueError(f"parpat.{op} of an empty sequence: {op} has no identity")
    if ddof < 0:
        raise ValueError(f"ddof must be non-negative, not {ddof}")
    dev = _device_of(d, device)
    out_dtype = "int64" if "arg" in op else _parpat.result_dtype(d.dtype, op)
    where = fw.Where(d.kind, d.host, d.cuda_device)
    if math.prod(out_shape) == 0:
        if order is not None:
            out_shape = tuple(out_shape[i] for i in order)
        return lambda x, ptr, stream: fw.empty(where, x, out_shape, out_dtype)[0]
    checks = _numpy_checks(op, reduced, ddof, where.host)
    checked = checks if order is None else lambda run: checks(_transposed(run, order))
    run = _parpat.ReduceCall(dev, d.host, d.dtype, shape, _row_stride(d), op,
                             None if axes is None else list(axes), variant, ddof,
                             fw.stream_handle(stream, where)).run
    if where.kind == "torch" and not where.host:
        # The common case, kept short: a torch tensor on its GPU and torch's current stream.
        torch_dtype, current = fw.torch_dtype(out_dtype), fw.torch_current_stream(where)

        def run_torch(x, ptr, stream):
            out = x.new_empty(out_shape, dtype=torch_dtype)
            run(x.data_ptr() if ptr is None else ptr, out.data_ptr(),
                current() if stream is None else fw.stream_handle(stream, where))
            return out

        return checked(run_torch)
    scalar = d.host and out_shape == ()

    def run_any(x, ptr, stream):
        out, out_ptr = fw.empty(where, x, out_shape, out_dtype)
        run(fw.data_pointer(x, where.kind) if ptr is None else ptr, out_ptr,
            fw.stream_handle(stream, where))
        return out[()] if scalar else out

    return checked(run_any)


def _transposed(run, order: Tuple[int, ...]):
    """run's answer with its axes in `order` (a view of it)."""
    def transposed(x, ptr, stream):
        out = run(x, ptr, stream)
        return out.permute(order) if fw.is_torch(out) else out.transpose(order)
    return transposed


# numpy's RuntimeWarning for a NaN-ignoring answer that is NaN: a slice with no number (or, for
# nanvar and nanstd, no more numbers than ddof).
_NAN_RESULT_WARNINGS = {"nanmin": "All-NaN slice encountered",
                        "nanmax": "All-NaN slice encountered",
                        "nanmean": "Mean of empty slice",
                        "nanvar": "Degrees of freedom <= 0 for slice.",
                        "nanstd": "Degrees of freedom <= 0 for slice."}


def _numpy_checks(op: str, reduced: int, ddof: float, host: bool):
    """What numpy adds to a reduction's answer, as a wrapper of its runner: the error of
    nanargmin / nanargmax where a slice is all NaN, and numpy's RuntimeWarning where the answer is
    NaN or inf by numpy's rules (a mean of no values, a variance of at most ddof values, a nan-op
    over a slice without numbers). A nan-op's answer is looked at for NaN only on the host (`host`:
    numpy input): device answers are not waited for."""
    if op.startswith("nanarg"):
        def found(run):
            def checked(x, ptr, stream):
                out = run(x, ptr, stream)
                if bool((out == _NOT_FOUND).any()):
                    raise ValueError("All-NaN slice encountered")
                return out
            return checked
        return found
    if op in ("var", "std", "nanvar", "nanstd") and ddof >= reduced:
        always = "Degrees of freedom <= 0 for slice"
    elif op in ("mean", "nanmean") and reduced == 0:
        always = "Mean of empty slice."
    else:
        always = None
    on_nan = _NAN_RESULT_WARNINGS.get(op) if host else None
    if always is None and on_nan is None:
        return lambda run: run

    def warned(run):
        def checked(x, ptr, stream):
            out = run(x, ptr, stream)
            if always is not None or bool((out != out).any()):
                # stacklevel 4: this call, _reduce, the parpat function, its caller.
                warnings.warn(always or on_nan, RuntimeWarning, stacklevel=4)
            return out
        return checked
    return warned


def clear() -> None:
    """Drops the cached calls and plans (they hold device memory)."""
    _RUNNERS.clear()
    _parpat.clear_plans()


_REDUCE_DOC = """{summary}

    Parameters
    ----------
    x : array_like
        A numpy, CuPy, torch or JAX array of any number of dimensions (or anything exposing
        DLPack or the CUDA array interface) of bool, int8, uint8, int16, uint16, int32, uint32,
        int64, uint64, float16, bfloat16, float32 or float64, in C order, or a view that only
        reorders a C-contiguous array's axes (x.T). Device arrays are read in place on their
        own GPU; the rows of a 2-D array may be strided.
    axis : None, int or tuple of ints, optional
        As in numpy: None reduces everything{axis_note}. Axes that interleave with kept ones
        (axis=(0, 2) of a 3-D array) gather the input into a device copy first.
    keepdims : bool, optional
        Keep the reduced axes as axes of length one, as numpy does.{ddof_note}
    device : str, optional
        For host (numpy) input: 'cpu' (the default), 'cuda[:I]' or 'opencl[:I]', to which the
        data is copied. Device arrays run on their own device.
    stream : int or stream object, optional
        For device arrays: the CUDA stream to enqueue on (default: the framework's current
        stream). The call does not wait for the device.
    copy : bool, optional
        Copy an array whose layout parpat cannot read in place, or a big-endian numpy array
        (byte-swapped), rather than refuse it.
    variant : str, optional
        One of the library's variants (`parpat list reduce`); default the backend's best.

    Returns
    -------
    {returns}
"""


_NO_IDENTITY = ("min", "max", "argmin", "argmax", "nanmin", "nanmax", "nanargmin", "nanargmax")
_NOT_FOUND = np.iinfo(np.int64).max  # the index a nan-arg op leaves for an all-NaN reduction

# name: (summary, returns, takes ddof)
_REDUCTIONS = {
    "sum": ("Sum of array elements, as numpy.sum: integer sums widen to int64 (signed) or "
            "uint64 (unsigned) and wrap; float sums keep the input's type.",
            "The sum: a numpy scalar for host input and axis=None, else an array in the input's "
            "framework on its device (0-d for axis=None).", False),
    "prod": ("Product of array elements, as numpy.prod (integer products widen to 64 bits and "
             "wrap).", "The product, shaped and placed as for parpat.sum.", False),
    "min": ("Minimum of array elements, as numpy.min: a NaN anywhere makes the minimum NaN; an "
            "empty reduction raises ValueError.", "The minimum, in the input's dtype.", False),
    "max": ("Maximum of array elements, as numpy.max: a NaN anywhere makes the maximum NaN; an "
            "empty reduction raises ValueError.", "The maximum, in the input's dtype.", False),
    "argmin": ("Index of the first minimum, as numpy.argmin (the first NaN if there is one; for "
               "axis=None the index into the flattened array).", "int64 indices.", False),
    "argmax": ("Index of the first maximum, as numpy.argmax (the first NaN if there is one; for "
               "axis=None the index into the flattened array).", "int64 indices.", False),
    "mean": ("Arithmetic mean, as numpy.mean, accumulated in float64 in one pass; an empty "
             "reduction gives NaN.",
             "float64 for integer input, else the input's float type.", False),
    "var": ("Variance, as numpy.var: the squared deviations from the mean divided by "
            "N - ddof, in one pass with a numerically stable merge of float64 partials (Chan's "
            "update); N - ddof <= 0 gives inf (NaN when every element is equal).",
            "float64 for integer input, else the input's float type.", True),
    "std": ("Standard deviation, as numpy.std: the square root of parpat.var.",
            "float64 for integer input, else the input's float type.", True),
    "nansum": ("Sum treating NaN as zero, as numpy.nansum.", "As for parpat.sum.", False),
    "nanprod": ("Product treating NaN as one, as numpy.nanprod.", "As for parpat.prod.", False),
    "nanmin": ("Minimum ignoring NaN, as numpy.nanmin: an all-NaN reduction gives NaN.",
               "The minimum, in the input's dtype.", False),
    "nanmax": ("Maximum ignoring NaN, as numpy.nanmax: an all-NaN reduction gives NaN.",
               "The maximum, in the input's dtype.", False),
    "nanargmin": ("Index of the first minimum ignoring NaN, as numpy.nanargmin: an all-NaN "
                  "reduction raises ValueError (this waits for the device).", "int64 indices.",
                  False),
    "nanargmax": ("Index of the first maximum ignoring NaN, as numpy.nanargmax: an all-NaN "
                  "reduction raises ValueError (this waits for the device).", "int64 indices.",
                  False),
    "nanmean": ("Mean of the non-NaN elements, as numpy.nanmean (NaN when there are none).",
                "As for parpat.mean.", False),
    "nanvar": ("Variance of the non-NaN elements, as numpy.nanvar: NaN when N - ddof <= 0.",
               "As for parpat.var.", True),
    "nanstd": ("Standard deviation of the non-NaN elements, as numpy.nanstd.",
               "As for parpat.var.", True),
    "count_nonzero": ("Number of non-zero elements, as numpy.count_nonzero (NaN counts).",
                      "int64 counts.", False),
    "any": ("Whether any element is non-zero, as numpy.any (NaN counts as true); an empty "
            "reduction gives False.", "bool.", False),
    "all": ("Whether every element is non-zero, as numpy.all (NaN counts as true); an empty "
            "reduction gives True.", "bool.", False),
}


def _reduction(op: str, summary: str, returns: str, takes_ddof: bool):
    """parpat.<op>: numpy's signature (ddof keyword-only) and the package's own keywords."""
    if takes_ddof:
        def f(x, axis=None, keepdims=False, *, ddof=0, device=None, stream=None, copy=False,
              variant=""):
            return _reduce(op, x, axis, keepdims, device, stream, copy, variant, float(ddof))
    else:
        def f(x, axis=None, keepdims=False, *, device=None, stream=None, copy=False,
              variant=""):
            return _reduce(op, x, axis, keepdims, device, stream, copy, variant)
    f.__name__ = f.__qualname__ = op
    f.__doc__ = _REDUCE_DOC.format(
        summary=summary, returns=returns,
        axis_note=(", an integer axis reduces that axis, the index counting along it (the "
                   "arg ops take no tuple)" if "arg" in op else
                   ", an integer or a tuple those axes (negative ones count from the end)"),
        ddof_note=("\n    ddof : float, optional\n        Delta degrees of freedom: divide by "
                   "N - ddof (default 0)." if takes_ddof else ""))
    return f


for _name, _spec in _REDUCTIONS.items():
    globals()[_name] = _reduction(_name, *_spec)
