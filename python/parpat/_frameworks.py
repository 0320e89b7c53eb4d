"""Arrays of numpy, CuPy, torch, JAX and any DLPack or CUDA-array-interface producer, described
for the C++ layer (pointer, dtype, shape, strides, where), and results made in the caller's
framework: numpy on the host, the input's own framework on its device."""

from __future__ import annotations

import sys
from typing import Any, NamedTuple, Optional, Tuple

import numpy as np

from . import _parpat

# DLPack type codes (kDLInt, kDLUInt, kDLFloat, kDLBfloat) and bit widths to numpy names.
_DLPACK_CODES = {0: "int", 1: "uint", 2: "float", 4: "bfloat"}
_KDL_CPU, _KDL_CUDA, _KDL_CUDA_HOST, _KDL_CUDA_MANAGED = 1, 2, 3, 13


class Where(NamedTuple):
    """Where an array's memory is, which decides where results go and on which stream."""

    kind: str  # "numpy", "torch", "cupy" or "dlpack"
    host: bool
    cuda_device: int  # the CUDA ordinal of device memory, -1 on the host


class Described(NamedTuple):
    """One array as the C++ layer takes it (with the fields of a Where)."""

    ptr: int
    dtype: str  # numpy's name
    shape: Tuple[int, ...]
    strides: Tuple[int, ...]  # in elements
    host: bool
    cuda_device: int  # the CUDA ordinal of device memory, -1 on the host
    kind: str  # "numpy", "torch", "cupy" or "dlpack"
    array: Any  # the object whose memory this is (kept alive for the call)


def _torch():
    return sys.modules.get("torch")


def _cupy():
    return sys.modules.get("cupy")


def is_torch(x) -> bool:
    torch = _torch()
    return torch is not None and isinstance(x, torch.Tensor)


def is_cupy(x) -> bool:
    cupy = _cupy()
    return cupy is not None and isinstance(x, cupy.ndarray)


def native_order(x, copy: bool):
    """A big-endian numpy array byte-swapped into a copy when copy=True; anything else as it is
    (describe refuses big-endian data)."""
    if copy and isinstance(x, np.ndarray) and x.dtype.byteorder == ">":
        return x.astype(x.dtype.newbyteorder("="))
    return x


def describe(x) -> Described:
    """The memory of `x`; anything that is not an array of a known framework goes through
    numpy.asarray (lists, scalars), as numpy's own functions take it."""
    if isinstance(x, np.ndarray):
        return _numpy(x)
    if is_torch(x):
        return _torch_tensor(x)
    if is_cupy(x):
        return Described(x.data.ptr, x.dtype.name, tuple(x.shape),
                         _elements(x.strides, x.itemsize), False, x.device.id, "cupy", x)
    if hasattr(x, "__cuda_array_interface__"):
        return _cuda_array_interface(x)
    if hasattr(x, "__dlpack__") and not isinstance(x, np.generic):
        return _dlpack(x)
    return _numpy(np.asarray(x))


_NUMPY_NAMES = {}  # numpy dtype -> its name (dtype.name is slow to compute per call)


def signature(x) -> Optional[tuple]:
    """What decides how parpat handles an array of numpy, torch or CuPy (its framework, dtype,
    shape, strides and device, not its data), for the package's cache of calls; None for other
    kinds of array."""
    kind = type(x)
    if kind is np.ndarray:
        return (kind, x.dtype, x.shape, x.strides)
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(x, torch.Tensor):
        return (kind, x.dtype, x.shape, x.stride(), x.get_device())
    if is_cupy(x):
        return (kind, x.dtype, x.shape, x.strides, x.device.id)
    return None


def data_pointer(x, kind: str) -> int:
    """The address of the data of a numpy, torch or CuPy array."""
    if kind == "torch":
        return x.data_ptr()
    if kind == "numpy":
        return x.__array_interface__["data"][0]
    return x.data.ptr


def _numpy(x: np.ndarray) -> Described:
    name = _NUMPY_NAMES.get(x.dtype)
    if name is None:
        if x.dtype.byteorder == ">":
            raise TypeError(f"parpat reads little-endian data (got {x.dtype.str}): pass copy=True "
                            "for a byte-swapped copy")
        name = _NUMPY_NAMES[x.dtype] = x.dtype.name
    return Described(x.__array_interface__["data"][0], name, x.shape,
                     _elements(x.strides, x.itemsize), True, -1, "numpy", x)


_TORCH_NAMES = {}  # torch dtype <-> numpy's name
_TORCH_DTYPES = {}


def _torch_tensor(x) -> Described:
    name = _TORCH_NAMES.get(x.dtype)
    if name is None:
        name = str(x.dtype).replace("torch.", "")
        _TORCH_NAMES[x.dtype] = name
    if x.is_cuda:
        return Described(x.data_ptr(), name, tuple(x.shape), tuple(x.stride()), False,
                         x.get_device(), "torch", x)
    if x.device.type != "cpu":
        raise ValueError(f"parpat takes torch tensors on the CPU or a CUDA device, not {x.device}")
    return Described(x.data_ptr(), name, tuple(x.shape), tuple(x.stride()), True, -1, "torch", x)


def _cuda_array_interface(x) -> Described:
    cai = x.__cuda_array_interface__
    dtype = np.dtype(cai["typestr"])
    if dtype.byteorder == ">":
        raise TypeError(f"parpat reads little-endian data (got {dtype.str})")
    shape = tuple(cai["shape"])
    strides = cai.get("strides")
    strides = (_elements(strides, dtype.itemsize) if strides is not None
               else _c_strides(shape))
    ptr = cai["data"][0] or 0
    device = _pointer_device(ptr)
    return Described(ptr, dtype.name, shape, strides, False, device, "dlpack", x)


def _dlpack(x) -> Described:
    if hasattr(x, "block_until_ready"):  # JAX dispatches asynchronously
        x.block_until_ready()
    ptr, code, bits, shape, strides, dev_type, dev_id = _parpat.dlpack_describe(x)
    if code not in _DLPACK_CODES:
        raise TypeError(f"parpat does not read DLPack type code {code} ({bits} bits)")
    name = f"{_DLPACK_CODES[code]}{bits}"
    if dev_type in (_KDL_CPU, _KDL_CUDA_HOST):
        return Described(ptr, name, tuple(shape), tuple(strides), True, -1, "dlpack", x)
    if dev_type in (_KDL_CUDA, _KDL_CUDA_MANAGED):
        return Described(ptr, name, tuple(shape), tuple(strides), False, dev_id, "dlpack", x)
    raise ValueError(f"parpat takes host or CUDA memory, not DLPack device type {dev_type}")


def _pointer_device(ptr: int) -> int:
    cupy = _cupy()
    if cupy is not None and ptr:
        return cupy.cuda.runtime.pointerGetAttributes(ptr).device
    return 0


def _elements(strides, itemsize) -> Tuple[int, ...]:
    if any(s % itemsize for s in strides):
        raise ValueError("parpat takes strides that are whole elements")
    return tuple(s // itemsize for s in strides)


def _c_strides(shape) -> Tuple[int, ...]:
    strides, step = [], 1
    for e in reversed(shape):
        strides.append(step)
        step *= e
    return tuple(reversed(strides))


def contiguous_copy(x, d: Described):
    """A C-contiguous copy of `x` in its own framework (copy=True)."""
    if d.kind == "torch":
        return x.contiguous()
    if d.kind == "cupy":
        return _cupy().ascontiguousarray(x)
    if d.host:
        return np.ascontiguousarray(np.asarray(x))
    raise ValueError("parpat cannot copy this strided array: pass a contiguous one")


# Results -------------------------------------------------------------------------------------

def _ml_dtypes():
    try:
        import ml_dtypes
    except ImportError as e:
        raise TypeError("bfloat16 results on the host need the ml_dtypes package") from e
    return ml_dtypes


def empty(d: Where, like, shape, dtype: str):
    """An uninitialised array for a result of input `like`, and its pointer: numpy for host
    input, else the input's framework on its device (for plain DLPack producers, CuPy or torch
    when present)."""
    if d.host:
        # numpy names bfloat16 once ml_dtypes is imported, which every producer of host
        # bfloat16 arrays (ml_dtypes itself, JAX) has done.
        a = np.empty(shape, dtype=_ml_dtypes().bfloat16 if dtype == "bfloat16" else dtype)
        return a, a.__array_interface__["data"][0]
    if d.kind == "torch":
        a = like.new_empty(shape, dtype=torch_dtype(dtype))
        return a, a.data_ptr()
    cupy = _cupy()
    if cupy is not None:
        with cupy.cuda.Device(d.cuda_device):
            a = cupy.empty(shape, dtype=dtype)
        return a, a.data.ptr
    torch = _torch()
    if torch is not None:
        a = torch.empty(shape, dtype=torch_dtype(dtype), device=f"cuda:{d.cuda_device}")
        return a, a.data_ptr()
    raise RuntimeError("parpat needs CuPy or torch to hold results on a GPU")


def torch_dtype(name: str):
    dtype = _TORCH_DTYPES.get(name)
    if dtype is None:
        dtype = _TORCH_DTYPES[name] = getattr(_torch(), name)
    return dtype


def from_host(d: Described, values: np.ndarray):
    """A copy of host values (edges) as an array of the input's framework and device."""
    if d.host:
        return values.copy()
    if d.kind == "torch":
        return _pinned_to_torch(values, d.array.device)
    cupy = _cupy()
    if cupy is not None:
        with cupy.cuda.Device(d.cuda_device):
            return cupy.asarray(values)  # staged through pinned memory, without waiting
    return _pinned_to_torch(values, f"cuda:{d.cuda_device}")


def _pinned_to_torch(values: np.ndarray, device):
    """A copy on the current stream that does not wait for it: from pageable memory torch
    would wait for the stream to drain. torch keeps the pinned block until the copy is done."""
    return _torch().from_numpy(values).pin_memory().to(device, non_blocking=True)


def concatenate(d: Described, a, zeros: int):
    """`a` followed by `zeros` zeros, in `a`'s framework."""
    if isinstance(a, np.ndarray):
        return np.concatenate([a, np.zeros(zeros, dtype=a.dtype)])
    if is_torch(a):
        return _torch().cat([a, _torch().zeros(zeros, dtype=a.dtype, device=a.device)])
    cupy = _cupy()
    return cupy.concatenate([a, cupy.zeros(zeros, dtype=a.dtype)])


def to_host(a) -> np.ndarray:
    if isinstance(a, np.ndarray):
        return a
    if is_torch(a):
        return a.cpu().numpy()
    return a.get()


# Streams -------------------------------------------------------------------------------------

def stream_handle(stream: Optional[Any], d: Where) -> int:
    """The CUDA stream a call on device memory goes to: `stream` (an integer handle, a torch or
    CuPy stream, or any object with __cuda_stream__), else the framework's current stream.
    Stream 0, the frameworks' default, is the legacy default stream."""
    if stream is None:
        if d.host:
            return 0
        if d.kind == "torch":
            handle = _torch()._C._cuda_getCurrentRawStream(d.cuda_device)
        elif _cupy() is not None:
            handle = _cupy().cuda.get_current_stream(d.cuda_device).ptr
        else:
            handle = 0
    elif isinstance(stream, int):
        handle = stream
    elif hasattr(stream, "__cuda_stream__"):
        handle = int(stream.__cuda_stream__()[1])
    elif hasattr(stream, "cuda_stream"):  # torch.cuda.Stream
        handle = int(stream.cuda_stream)
    elif hasattr(stream, "ptr"):  # cupy.cuda.Stream
        handle = int(stream.ptr)
    else:
        raise TypeError(f"stream must be an integer handle or a CUDA stream object, not "
                        f"{type(stream).__name__}")
    return handle or (0 if d.host else CUDA_STREAM_LEGACY)


def torch_current_stream(d: Where):
    """A function giving torch's current stream on d's device as stream_handle would."""
    current, device = _torch()._C._cuda_getCurrentRawStream, d.cuda_device
    return lambda: current(device) or CUDA_STREAM_LEGACY


# The legacy default stream, which frameworks call stream 0 (parpat's own stream does not wait
# for it).
CUDA_STREAM_LEGACY = 1
