"""Device arrays of CuPy, torch and JAX: read in place, answered in the same framework and on
the same device, ordered on the caller's stream without waiting for the device. Skipped where
there is no CUDA device or no such framework."""

import subprocess
import sys
import time

import numpy as np
import pytest

import parpat
from conftest import host

HAS_CUDA = any(d["backend"] == "cuda" for d in parpat.devices())
needs_cuda = pytest.mark.skipif(not HAS_CUDA, reason="no CUDA device")


def framework(name):
    if not HAS_CUDA:
        pytest.skip("no CUDA device")
    return pytest.importorskip(name)


@needs_cuda
def test_torch_results_stay_on_the_device_in_torch():
    torch = framework("torch")
    x = torch.rand(1 << 20, device="cuda")
    s = parpat.sum(x)
    assert isinstance(s, torch.Tensor) and s.is_cuda and s.shape == ()
    np.testing.assert_allclose(s.item(), x.double().sum().item(), rtol=1e-5)
    counts, edges = parpat.histogram(x, bins=64, range=(0, 1))
    assert counts.is_cuda and counts.dtype == torch.uint64 and edges.dtype == torch.float64
    want, _ = np.histogram(x.cpu().numpy(), bins=64, range=(0, 1))
    np.testing.assert_array_equal(host(counts), want)
    i = parpat.argmax(x.view(1024, 1024), axis=1)
    np.testing.assert_array_equal(host(i), x.view(1024, 1024).argmax(dim=1).cpu().numpy())


@needs_cuda
def test_cupy_results_stay_on_the_device_in_cupy():
    cupy = framework("cupy")
    x = cupy.random.random(1 << 20, dtype=cupy.float32)
    s = parpat.max(x)
    assert isinstance(s, cupy.ndarray) and s.shape == ()
    assert float(s) == float(x.max())
    b = parpat.bincount((x * 100).astype(cupy.int32))
    np.testing.assert_array_equal(b.get(), np.bincount((x * 100).astype(cupy.int32).get()))


@needs_cuda
def test_jax_arrays_through_dlpack():
    jax = framework("jax")
    if not any(d.platform == "gpu" for d in jax.devices()):
        pytest.skip("JAX has no GPU here")
    x = jax.numpy.arange(1000, dtype=jax.numpy.float32)
    assert float(host_any(parpat.sum(x))) == 499500.0


def host_any(a):
    return a.get() if hasattr(a, "get") else a.cpu().numpy() if hasattr(a, "cpu") else a


@needs_cuda
def test_work_is_ordered_on_a_side_stream_without_waiting():
    torch = framework("torch")
    side = torch.cuda.Stream()
    x = torch.zeros(1 << 24, device="cuda")
    with torch.cuda.stream(side):  # the first calls build the plans (CUDA may load kernels then)
        parpat.sum(x)
        parpat.histogram(x, bins=4, range=(0, 2))
    torch.cuda.synchronize()
    with torch.cuda.stream(side):
        torch.cuda._sleep(200_000_000)  # keeps the side stream busy for a while
        x.fill_(1.0)  # written after the sleep, on the side stream
        start = time.perf_counter()
        s = parpat.sum(x)  # the side stream is torch's current one
        summed = time.perf_counter() - start
        counts, edges = parpat.histogram(x, bins=4, range=(0, 2))
        returned = time.perf_counter() - start
        done = s.item()  # waits for the side stream
        waited = time.perf_counter() - start
    assert done == float(1 << 24)
    assert host(counts).tolist() == [0, 0, 1 << 24, 0]
    assert host(edges).tolist() == [0.0, 0.5, 1.0, 1.5, 2.0]
    # The calls did not wait for the device.
    assert returned < waited / 2, dict(sum=summed, histogram=returned - summed, waited=waited)


@needs_cuda
def test_explicit_stream_argument():
    cupy = framework("cupy")
    stream = cupy.cuda.Stream(non_blocking=True)
    with stream:
        x = cupy.arange(1 << 16, dtype=cupy.int32)
    s = parpat.sum(x, stream=stream)
    stream.synchronize()
    assert int(s) == (1 << 16) * ((1 << 16) - 1) // 2


@needs_cuda
def test_device_arrays_are_not_moved():
    torch = framework("torch")
    x = torch.ones(10, device="cuda")
    with pytest.raises(ValueError, match="does not move"):
        parpat.sum(x, device="cpu")
    assert parpat.sum(x[::2]).item() == 5  # a step is read where it lives


@pytest.mark.parametrize("name", ["torch", "cupy"])
def test_frameworks_import_after_parpat(name):
    """parpat exports nothing of its static libraries that could bind in a later import."""
    pytest.importorskip(name)
    done = subprocess.run([sys.executable, "-c", f"import parpat, {name}; print('imported')"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and "imported" in done.stdout, done.stderr[-2000:]
