"""parpat.pairwise against a float64 numpy reference, on every target."""

import numpy as np
import pytest

import parpat
from conftest import host


def reference(a, b, kernel, h=1.0):
    a64, b64 = a.astype(np.float64)[:, None], b.astype(np.float64)[None, :]
    if kernel == "product":
        return (a64 * b64).sum(axis=1)
    return np.exp(-((a64 - b64) ** 2) / (2 * h * h)).sum(axis=1)


@pytest.mark.parametrize("kernel", ["product", "gaussian"])
def test_kernels(target, rng, kernel):
    a = rng.standard_normal(300).astype(np.float32)
    b = rng.standard_normal(700).astype(np.float32)
    c = parpat.pairwise(target.put(a), target.put(b), kernel=kernel, h=0.7, **target.kw())
    c = host(c)
    assert c.dtype == np.float32 and c.shape == (300,)
    want = reference(a, b, kernel, 0.7)
    scale = reference(np.abs(a), np.abs(b), "product") if kernel == "product" else len(b)
    np.testing.assert_allclose(c, want, atol=1e-5 * np.max(scale))


def test_steps_are_read_without_copy_true(target, rng):
    """Steps of a and b (and, where C does not follow a's order, a reversed b) are read through
    dense copies on the device; a reversed a needs copy=True."""
    a = rng.standard_normal(900).astype(np.float32)
    b = rng.standard_normal(1400).astype(np.float32)
    c = parpat.pairwise(target.put(a)[::3], target.put(b)[::2], kernel="gaussian", h=0.7,
                        **target.kw())
    np.testing.assert_allclose(host(c), reference(a[::3], b[::2], "gaussian", 0.7), rtol=1e-5)
    if target.framework in ("numpy", "cupy"):
        c = parpat.pairwise(target.put(a), target.put(b)[::-1], kernel="gaussian", h=0.7,
                            **target.kw())
        np.testing.assert_allclose(host(c), reference(a, b, "gaussian", 0.7), rtol=1e-5)
        with pytest.raises(ValueError, match="copy=True"):
            parpat.pairwise(target.put(a)[::-1], target.put(b), **target.kw())


def test_expression_on_gpu_backends(target, rng):
    if not target.gpu:
        pytest.skip("run-time expressions are compiled for GPU backends (OpenCL, CUDA)")
    a = rng.standard_normal(100).astype(np.float32)
    b = rng.standard_normal(50).astype(np.float32)
    c = host(parpat.pairwise(target.put(a), target.put(b), expr="a*b + 1.0f", **target.kw()))
    np.testing.assert_allclose(c, reference(a, b, "product") + len(b), rtol=1e-4, atol=1e-3)


def test_bad_pairwise_arguments():
    a = np.ones(4, dtype=np.float32)
    with pytest.raises(TypeError):
        parpat.pairwise(a.astype(np.float64), a)
    with pytest.raises(ValueError):
        parpat.pairwise(a, a, kernel="cosine")
    with pytest.raises(ValueError):
        parpat.pairwise(a, a, kernel="gaussian", h=0)
    with pytest.raises(ValueError):
        parpat.pairwise(a.reshape(2, 2), a)
    assert host(parpat.pairwise(a, np.zeros(0, dtype=np.float32))).tolist() == [0, 0, 0, 0]
