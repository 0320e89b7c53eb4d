"""Type stubs of parpat._parpat, the C++ layer under the parpat package (call parpat's
functions, not these)."""

from typing import Any, List, Optional, Sequence, Tuple

class Device:
    @staticmethod
    def open(backend: str, index: int = 0) -> Device: ...
    @property
    def label(self) -> str: ...
    @property
    def backend(self) -> str: ...
    @property
    def index(self) -> int: ...
    @property
    def info(self) -> dict: ...
    def synchronize(self, stream: int = 0) -> None: ...

def devices() -> List[dict]: ...
def backends_built() -> List[str]: ...
def result_dtype(dtype: str, op: str) -> str: ...
def clear_plans() -> None: ...
class ReduceCall:
    def __init__(self, device: Device, host: bool, dtype: str, shape: Sequence[int],
                 strides: Sequence[int], op: str, axes: Optional[Sequence[int]], variant: str,
                 ddof: float, first_stream: int) -> None: ...
    def run(self, in_ptr: int, out_ptr: int, stream: int) -> None: ...

def resolve_bins(device: Device, ptr: int, host: bool, dtype: str, shape: Sequence[int],
                 strides: Sequence[int], kind: str, count: int, has_range: bool, lo: float,
                 hi: float, edges: Sequence[float],
                 stream: int) -> Tuple[int, float, float, List[float]]: ...
def edges(count: int, lo: float, hi: float) -> Any: ...  # a float64 numpy array
# Arrays come as a shape and element strides (strides empty: C order), or 1-D with a step.
def histogram(device: Device, ptr: int, host: bool, dtype: str, shape: Sequence[int],
              strides: Sequence[int], count: int, lo: float, hi: float, edges: Sequence[float],
              out: int, out_host: bool, accumulate: bool, variant: str, stream: int) -> None: ...
def weighted_histogram(device: Device, ptr: int, host: bool, dtype: str, shape: Sequence[int],
                       strides: Sequence[int], weights: int, weights_host: bool,
                       weights_dtype: str, weights_shape: Sequence[int],
                       weights_strides: Sequence[int], count: int, lo: float, hi: float,
                       edges: Sequence[float], out: int, out_host: bool, accumulate: bool,
                       variant: str, stream: int) -> None: ...
def histogramdd(device: Device, coordinates: Sequence[int], host: bool, dtype: str, n: int,
                table: bool, strides: Sequence[int],
                bins: Sequence[Tuple[int, bool, float, float, Sequence[float]]], weights: int,
                weights_host: bool, weights_dtype: str, weights_step: int, variant: str,
                stream: int) -> Tuple[Any, List[Any]]: ...  # (counts or sums, [edges]): numpy
def histogramdd_into(device: Device, coordinates: Sequence[int], host: bool, dtype: str, n: int,
                     table: bool, strides: Sequence[int],
                     bins: Sequence[Tuple[int, bool, float, float, Sequence[float]]],
                     weights: int, weights_host: bool, weights_dtype: str, weights_step: int,
                     out: int, out_host: bool, variant: str, stream: int) -> List[Any]: ...
def pairwise(device: Device, a: int, a_host: bool, x: int, a_step: int, b: int, b_host: bool,
             y: int, b_step: int, c: int, c_host: bool, kernel: str, h: float, expression: str,
             variant: str, stream: int) -> None: ...
def reduce_parts(devices: Sequence[Device], pointers: Sequence[int], host: Sequence[bool],
                 streams: Sequence[int], dtype: str, shapes: Sequence[Sequence[int]], op: str,
                 axes: Any, keepdims: bool, ddof: float,
                 variant: str) -> Tuple[List[Any], Any, List[int]]: ...  # values, indices, shape
def histogram_parts(devices: Sequence[Device], pointers: Sequence[int], host: Sequence[bool],
                    streams: Sequence[int], dtype: str, shapes: Sequence[Sequence[int]],
                    kind: str, count: int, has_range: bool, lo: float, hi: float,
                    edges: Sequence[float], variant: str) -> Tuple[Any, Any, Any]: ...
def dlpack_describe(a: Any) -> Tuple[int, int, int, List[int], List[int], int, int]: ...
