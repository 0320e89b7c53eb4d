"""Where the tests run: numpy arrays on every backend parpat has here (the CPU, each OpenCL
device, each CUDA device through a copy), and CuPy and torch arrays on CUDA when those
frameworks and a GPU are present. Each target turns a numpy array into its input."""

import os

import numpy as np
import pytest

import parpat


def _targets():
    found = [("numpy", "cpu")]
    for d in parpat.devices():
        if d["backend"] in ("opencl", "cuda"):
            found.append(("numpy", f"{d['backend']}:{d['index']}"))
    if any(d["backend"] == "cuda" for d in parpat.devices()):
        for framework in ("cupy", "torch"):
            try:
                __import__(framework)
                found.append((framework, "cuda:0"))
            except ImportError:
                pass
    return found


TARGETS = _targets()


class Target:
    """A framework and a device: `put` makes the input, `kw` the device argument."""

    def __init__(self, framework, device):
        self.framework, self.device = framework, device

    def __repr__(self):
        return f"{self.framework}@{self.device}"

    @property
    def gpu(self):
        return self.device != "cpu"

    def put(self, a):
        a = np.asarray(a)
        if self.framework == "cupy":
            import cupy
            return cupy.asarray(a)
        if self.framework == "torch":
            import torch
            return torch.from_numpy(a.copy()).to("cuda:0")
        return a

    def kw(self):
        return {"device": self.device} if self.framework == "numpy" else {}


@pytest.fixture(params=TARGETS, ids=[f"{f}@{d}" for f, d in TARGETS])
def target(request):
    return Target(*request.param)


@pytest.fixture
def rng():
    seed = int(os.environ.get("PARPAT_SEED", np.random.SeedSequence().entropy % 2**32))
    print(f"seed {seed} (set PARPAT_SEED to repeat)")
    return np.random.default_rng(seed)


def host(a):
    """A result as numpy, whatever framework it came in."""
    if isinstance(a, (np.ndarray, np.generic)):
        return np.asarray(a)
    if hasattr(a, "get"):
        return a.get()
    return a.cpu().numpy()
