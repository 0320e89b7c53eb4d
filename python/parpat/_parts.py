"""parpat.Parts: one array given as parts on several devices, which the reductions and
parpat.histogram take like an array. Each part is reduced or counted where it lives, one thread
per part, and the parts' partial results are combined in order (parpat/distributed.hpp in the C++
library), so the answer is the whole array's."""
import numpy as np

from . import _frameworks as fw
from . import _parpat


class Parts:
    """One array given as parts, stacked along axis 0 in order (as numpy.concatenate would stack
    them, without making the copy): each part stays on its own device.

    Parameters
    ----------
    arrays : sequence of arrays
        The parts: numpy, CuPy, torch, JAX or DLPack arrays of one dtype, at least 1-D, C order,
        whose shapes agree except along axis 0 (a part may be empty). Device arrays are read in
        place on their GPU, after the framework's current stream has produced them.
    devices : sequence of str, optional
        Where each host (numpy) part is reduced: ``"cpu"``, ``"cuda:1"``, ``"opencl:0"``
        (default: the CPU). A device part runs on its own GPU.
    comm : mpi4py communicator, optional
        The array is spread over the processes of `comm`: `arrays` is this process's one part
        (an array, or a list of one), and the parts of ranks 0, 1, ... make the whole. Every
        rank must make the same call; every rank gets the answer. A rank waits at most
        PARPAT_COLLECTIVE_TIMEOUT_S (600) seconds for the others, then raises.

    The reductions (parpat.sum, parpat.argmax, ...) take numpy's axis and keepdims over the whole
    array, except axes that interleave with kept ones; parpat.histogram takes bins and range
    (no weights). Results are numpy arrays on the host: float sums add the parts' partial sums
    in float64, in order, so the same parts give the same bits; arg indices count in the whole.
    """

    def __init__(self, arrays, devices=None, comm=None):
        self.comm = None
        if comm is not None:
            from ._mpi import MpiAdapter
            self.comm = MpiAdapter(comm)
            if not isinstance(arrays, (list, tuple)):
                arrays = [arrays]
            if len(arrays) != 1:
                raise ValueError(f"Parts with a communicator takes this process's one part, not "
                                 f"{len(arrays)}")
        self.arrays = list(arrays)
        if not self.arrays:
            raise ValueError("Parts needs at least one array")
        self.devices = None if devices is None else list(devices)
        if self.devices is not None and len(self.devices) != len(self.arrays):
            raise ValueError(f"Parts got {len(self.arrays)} arrays and {len(self.devices)} "
                             "devices: give one device per array")

    def __len__(self) -> int:
        return len(self.arrays)

    def _described(self, what: str, dtypes) -> dict:
        """The parts as the C++ layer takes them, checked as numpy.concatenate checks them."""
        from . import _api
        described = [_api._prepare(x, False, what, dtypes)[1] for x in self.arrays]
        first = described[0]
        for k, d in enumerate(described):
            if d.dtype != first.dtype:
                raise TypeError(f"the parts must have one dtype: part 0 is {first.dtype}, part "
                                f"{k} is {d.dtype}")
            if len(d.shape) == 0 or len(d.shape) != len(first.shape):
                raise ValueError(f"the parts must be at least 1-D and of one number of "
                                 f"dimensions: part 0 has {len(first.shape)}, part {k} has "
                                 f"{len(d.shape)}")
            for axis in range(1, len(d.shape)):
                if d.shape[axis] != first.shape[axis]:
                    raise ValueError(
                        "all the input array dimensions except for the concatenation axis must "
                        f"match exactly, but along dimension {axis}, the array at index 0 has "
                        f"size {first.shape[axis]} and the array at index {k} has size "
                        f"{d.shape[axis]}")
        devices = self.devices or [None] * len(described)
        return dict(devices=[_api._device_of(d, dev) for d, dev in zip(described, devices)],
                    pointers=[d.ptr for d in described], host=[d.host for d in described],
                    streams=[fw.stream_handle(None, d) for d in described], dtype=first.dtype,
                    shapes=[list(d.shape) for d in described])

    def _reduce(self, op: str, axis, keepdims: bool, ddof: float, variant: str):
        from . import _api, _reductions
        parts = self._described(op, _api._REDUCE_DTYPES)
        ndim = len(parts["shapes"][0])
        axes = _reductions._axis(axis, ndim, op)
        if ddof < 0:
            raise ValueError(f"ddof must be non-negative, not {ddof}")
        values, indices, shape = _parpat.reduce_parts(
            **parts, op=op, axes=None if axes is None else list(axes), keepdims=keepdims,
            ddof=ddof, variant=variant, comm=self.comm)
        if "arg" in op:
            out = np.asarray(indices, dtype=np.int64).reshape(shape)
        else:
            out = np.array(values, dtype=_parpat.result_dtype(parts["dtype"], op)).reshape(shape)
        return out[()] if out.ndim == 0 else out

    def _histogram(self, bins, range, density: bool, outliers: bool, variant: str):
        from . import _api
        parts = self._described("histogram", _api._HISTOGRAM_DTYPES)
        kind, count, has_range, lo, hi, edges = _api._bins_spec(bins, range)
        counts, edge_values, outside = _parpat.histogram_parts(
            **parts, kind=kind, count=count, has_range=has_range, lo=lo, hi=hi, edges=edges,
            variant=variant, comm=self.comm)
        if density:
            counts = counts.astype(np.float64) / np.diff(edge_values) / np.float64(counts.sum())
        return (counts, edge_values, outside) if outliers else (counts, edge_values)

