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
from ._api import (_PERMUTABLE, _REDUCE_DTYPES, _c_permutation, _device_of, _flipped_axes,
                   _flipped_bytes, _parts_alone, _prepare, _reversed_axes, _row_layout)
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
    prepared, d, perm, flips = _prepare_reduce(x, copy, op, axis)
    runner = _reduce_runner(op, d, axis, keepdims, device, variant, ddof, stream, perm, flips)
    if key is not None and prepared is x:  # (a copied input has another signature)
        if len(_RUNNERS) >= _MAX_RUNNERS:
            _RUNNERS.clear()
        _RUNNERS[key] = runner
    return runner(prepared, d.ptr, stream)


def _prepare_reduce(x, copy: bool, op: str, axis):
    """_prepare for a reduction, which reads any view in place: the array, its description, the
    permutation and the flipped axes (None when there are none).
    - A permuted view (x.T, moveaxis) is described as the C-contiguous array under it, with the
      permutation that gives the view's axes.
    - Negative strides (x[::-1]) are described as the view with those axes reversed (positive
      strides from the lowest address); the flipped axes are the view's. An arg op whose index
      counts along a flipped axis needs copy=True: its first extreme would be the last.
    - Other strides (a step, a slice of a middle axis, a broadcast) are described as they are; the
      library reads such views in place, or gathers them on the device."""
    if copy:
        return _prepare(x, True, op, _REDUCE_DTYPES) + (None, None)
    d = fw.describe(x)
    if _row_layout(d):
        return _prepare(x, False, op, _REDUCE_DTYPES, d) + (None, None)
    perm = _c_permutation(d) if d.kind in _PERMUTABLE else None
    if perm is not None and not ("arg" in op and axis is None):  # a flat index: the view's order
        shape = tuple(d.shape[a] for a in perm)
        return x, d._replace(shape=shape, strides=fw._c_strides(shape)), perm, None
    x, d = _prepare(x, False, op, _REDUCE_DTYPES, d, any_strides=True)
    flips = _flipped_axes(d)
    if not flips:
        return x, d, None, None
    if d.kind not in _PERMUTABLE:
        raise ValueError(f"parpat.{op} reads negative strides of numpy and CuPy arrays; this "
                         "array needs a copy: pass copy=True")
    if "arg" in op and (axis is None or _axis(axis, len(d.shape), op)[0] in flips):
        raise ValueError(f"parpat.{op} along an axis of negative stride needs a copy (its index "
                         "counts in the view's order): pass copy=True")
    return x, _reversed_axes(d, flips), None, flips


def _reduce_runner(op: str, d: fw.Described, axis, keepdims: bool, device, variant: str,
                   ddof: float, stream, perm: Optional[Tuple[int, ...]] = None,
                   flips: Optional[Tuple[int, ...]] = None):
    """The reduction of arrays like `d` as a function runner(x, ptr, stream) -> result (ptr:
    the address of d's data, or None to read it from x, a numpy, torch or CuPy array). With
    `perm`, the arrays are views with axes perm[0], perm[1], ... of `d` (C-contiguous): `axis`
    counts in the view, and the answer comes in the view's axis order. With `flips`, the arrays
    are `d` with those axes reversed (_reversed_axes), and so is the answer along those it
    keeps."""
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
    kept = [a for a in range(ndim) if keepdims or a not in reduced_axes]
    back = None  # the index that reverses the kept axes of negative stride
    if flips and builtins.any(a in flips for a in kept):
        back = tuple(slice(None, None, -1) if a in flips else slice(None) for a in kept)

    def checked(run):
        if order is not None:
            run = _transposed(run, order)
        elif back is not None:
            run = _indexed(run, back)
        return checks(run)

    strides = [0 if n == 1 else s for n, s in zip(d.shape, d.strides)] if ndim else [1]
    run = _parpat.ReduceCall(dev, d.host, d.dtype, shape, strides, op,
                             None if axes is None else list(axes), variant, ddof,
                             fw.stream_handle(stream, where)).run
    low = _flipped_bytes(d, flips) if flips else 0  # the view's address above d's
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
        run(fw.data_pointer(x, where.kind) - low if ptr is None else ptr, out_ptr,
            fw.stream_handle(stream, where))
        return out[()] if scalar else out

    return checked(run_any)


def _indexed(run, index: tuple):
    """run's answer indexed by `index` (a view of it: the axes a flipped input keeps, reversed)."""
    def indexed(x, ptr, stream):
        return run(x, ptr, stream)[index]
    return indexed


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
        int64, uint64, float16, bfloat16, float32 or float64, in any layout: C order, a view
        that reorders a C-contiguous array's axes (x.T), steps, slices, broadcasts, negative
        steps (numpy, CuPy). Device arrays are read in place on their own GPU, CUDA reading
        steps of up to two merged axes in place too; other views are gathered there into a
        dense copy.
    axis : None, int or tuple of ints, optional
        As in numpy: None reduces everything{axis_note}. Axes that interleave with kept ones
        (axis=(0, 2) of a 3-D array) gather the input into a device copy first. An arg op whose
        index counts along an axis of negative stride needs copy=True.
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
