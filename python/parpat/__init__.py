"""parpat: reductions, histograms and pairwise map-reduce with numpy's semantics, on CUDA, OpenCL
and the CPU.

Functions take numpy arrays (run on the CPU backend, or copied to ``device="cuda:0"`` /
``"opencl:1"``) and CuPy, torch and JAX GPU arrays (read in place on their own GPU, enqueued on
the framework's current stream, results returned in the same framework without waiting)::

    import parpat, torch
    x = torch.rand(1 << 28, device="cuda")
    counts, edges = parpat.histogram(x, bins=1024, range=(0, 1))
    total = parpat.sum(x)
"""

import atexit as _atexit

from . import _parpat
from ._api import bincount, devices, histogram, pairwise
from ._reductions import (all, any, argmax, argmin, clear, count_nonzero, max, mean, min,
                          nanargmax, nanargmin, nanmax, nanmean, nanmin, nanprod, nanstd, nansum,
                          nanvar, prod, std, sum, var)
from ._histogramdd import histogram2d, histogramdd
from ._parts import Parts

Device = _parpat.Device
__version__ = "0.1.0"
__all__ = ["Device", "Parts", "all", "any", "argmax", "argmin", "bincount", "count_nonzero", "devices",
           "histogram", "histogram2d", "histogramdd",
           "max", "mean", "min", "nanargmax", "nanargmin", "nanmax", "nanmean", "nanmin",
           "nanprod", "nanstd", "nansum", "nanvar", "pairwise", "prod", "std", "sum", "var"]

# Plans hold device memory: free them while the device runtimes are still up.
_atexit.register(clear)
