"""parpat.Parts: one array as parts on several devices (every device here, mixed, and CuPy or
torch parts on a GPU when present) gives numpy's answer for the concatenated array: integers,
indices and counts exactly, floats within the accuracy contract; parts that numpy.concatenate
would refuse, and arguments that do not apply, raise numpy's errors."""
import os

import numpy as np
import pytest

import parpat

SEED = int(os.environ.get("PARPAT_SEED", np.random.SeedSequence().entropy % 2**32))
DEVICES = ["cpu"] + [f"{d['backend']}:{d['index']}" for d in parpat.devices()
                     if d["backend"] != "cpu"]


def split(whole, lengths):
    """`whole` cut along axis 0 into parts of `lengths` (a 0 is an empty part)."""
    return np.split(whole, np.cumsum(lengths)[:-1])


def spread(parts):
    """The parts over this machine's devices in turn."""
    return parpat.Parts(parts, [DEVICES[k % len(DEVICES)] for k in range(len(parts))])


def data(dtype, shape, rng):
    if np.dtype(dtype).kind == "f":
        x = rng.uniform(-1, 1, size=shape).astype(dtype)
        x.flat[5::97] = np.nan
        return x
    return rng.integers(-100 if np.dtype(dtype).kind == "i" else 0, 101, size=shape).astype(dtype)


@pytest.mark.parametrize("dtype", ["int16", "uint32", "float32", "float64"])
@pytest.mark.parametrize("shape,lengths", [((1025,), (300, 0, 725)), ((9, 33), (2, 7)),
                                           ((5, 4, 3), (1, 1, 0, 3))])
def test_reductions_of_parts_are_those_of_the_whole(dtype, shape, lengths):
    rng = np.random.default_rng(SEED)
    whole = data(dtype, shape, rng)
    parts = spread(split(whole, lengths))
    axes = [None, 0, -1] + ([(1, 2)] if len(shape) == 3 else [])
    for op in ("sum", "max", "argmin", "nanmax", "mean", "var", "count_nonzero"):
        for axis in axes:
            if op.startswith("arg") and isinstance(axis, tuple):
                continue
            want = getattr(np, op)(whole, axis=axis)
            got = getattr(parpat, op)(parts, axis=axis)
            where = f"{op} axis={axis} of {dtype} {shape} in parts {lengths}, seed {SEED}"
            assert np.shape(got) == np.shape(want), where
            if op in ("sum", "mean", "var") and np.dtype(dtype).kind == "f":
                n = whole.size // max(np.size(want), 1)
                tol = 1e-6 * max(1.0, np.log2(max(n, 2)))
                scale = np.maximum(np.abs(want), n if op != "mean" else 1)
                assert np.all((np.abs(got - want) <= tol * scale) | (np.isnan(got) &
                                                                      np.isnan(want))), where
            elif op in ("mean", "var"):
                np.testing.assert_allclose(got, want, rtol=1e-12, err_msg=where)
            else:
                np.testing.assert_array_equal(got, want, err_msg=where)


def test_keepdims_and_the_same_bits_for_the_same_parts():
    rng = np.random.default_rng(SEED + 1)
    whole = rng.standard_normal((40, 6)).astype(np.float32)
    parts = spread(split(whole, (13, 27)))
    got = parpat.sum(parts, axis=0, keepdims=True)
    assert got.shape == (1, 6)
    assert np.array_equal(got, parpat.sum(parts, axis=0, keepdims=True))


@pytest.mark.parametrize("dtype", ["uint8", "int32", "float32"])
def test_histogram_of_parts_is_that_of_the_whole(dtype):
    rng = np.random.default_rng(SEED + 2)
    whole = data(dtype, (3001,), rng)
    parts = spread(split(whole, (1000, 0, 2001)))
    finite = whole[~np.isnan(whole)] if whole.dtype.kind == "f" else whole
    for bins, rng_ in [(64, (-0.5, 0.5)), ([-100, -0.25, 0, 60, 250], None)] + (
            [(37, None)] if whole.dtype.kind != "f" else []):
        want, want_edges = np.histogram(finite, bins=bins, range=rng_)
        got, edges = parpat.histogram(parts, bins=bins, range=rng_)
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(edges, want_edges)
    density, _ = parpat.histogram(parts, bins=64, range=(-0.5, 0.5), density=True)
    np.testing.assert_array_equal(density, np.histogram(finite, 64, (-0.5, 0.5), density=True)[0])


def test_gpu_parts_in_place():
    frameworks = []
    for name in ("cupy", "torch"):
        try:
            frameworks.append(__import__(name))
        except ImportError:
            pass
    if not any(d["backend"] == "cuda" for d in parpat.devices()) or not frameworks:
        pytest.skip("no CUDA device with CuPy or torch here")
    gpus = sum(d["backend"] == "cuda" for d in parpat.devices())
    whole = np.random.default_rng(SEED + 3).standard_normal(100003).astype(np.float32)

    def on_gpu(fwk, part, k):  # part k on GPU k mod gpus: over NCCL when there are several
        if fwk.__name__ == "cupy":
            with fwk.cuda.Device(k % gpus):
                return fwk.asarray(part)
        return fwk.from_numpy(part).to(f"cuda:{k % gpus}")

    for fwk in frameworks:
        parts = [on_gpu(fwk, p, k) for k, p in enumerate(split(whole, (50000, 50003)))]
        assert parpat.argmax(parpat.Parts(parts)) == np.argmax(whole)
        np.testing.assert_allclose(parpat.sum(parpat.Parts(parts)), whole.sum(dtype=np.float64),
                                   rtol=0, atol=1e-6 * np.abs(whole).sum(dtype=np.float64))
        # 1024 bins are added through the host, 65536 (512 KiB of counts) on the GPUs.
        for bins in (1024, 65536):
            counts, _ = parpat.histogram(parpat.Parts(parts), bins=bins, range=(-4, 4))
            np.testing.assert_array_equal(counts, np.histogram(whole, bins, (-4, 4))[0])


def test_parts_that_do_not_fit_raise_numpys_errors():
    a = np.zeros((4, 3), np.float32)
    with pytest.raises(ValueError, match="along dimension 1"):
        parpat.sum(parpat.Parts([a, np.zeros((4, 2), np.float32)]))
    with pytest.raises(TypeError, match="one dtype"):
        parpat.sum(parpat.Parts([a, np.zeros((4, 3), np.float64)]))
    with pytest.raises(ValueError, match="at least one array"):
        parpat.Parts([])
    with pytest.raises(ValueError, match="one device per array"):
        parpat.Parts([a, a], ["cpu"])
    with pytest.raises(ValueError, match="no weights"):
        parpat.histogram(parpat.Parts([a]), weights=a)
    with pytest.raises(ValueError, match="do not apply"):
        parpat.sum(parpat.Parts([a]), device="cpu")
    with pytest.raises(ValueError, match="interleave"):
        parpat.sum(parpat.Parts([np.zeros((2, 3, 4))] * 2), axis=(0, 2))
    with pytest.raises(ValueError):
        parpat.max(parpat.Parts([np.zeros((0, 3)), np.zeros((0, 3))]))
