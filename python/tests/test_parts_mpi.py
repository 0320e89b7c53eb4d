"""parpat.Parts over an mpi4py communicator: one rank in this process (MPI.COMM_SELF), and 2
and 3 processes under mpirun (mpi_parts_check.py, whose every rank checks numpy's answers and the
errors of a call that differs between ranks). Skipped by name without mpi4py or mpirun."""
import os
import re
import shutil
import subprocess
import sys
import time

import numpy as np
import pytest

import parpat

mpi4py = pytest.importorskip("mpi4py", reason="mpi4py is not installed")
SEED = int(os.environ.get("PARPAT_SEED", np.random.SeedSequence().entropy % 2**32))


def test_one_rank_in_this_process():
    from mpi4py import MPI
    x = np.random.default_rng(SEED).standard_normal((50, 3)).astype(np.float32)
    parts = parpat.Parts(x, comm=MPI.COMM_SELF)
    np.testing.assert_array_equal(parpat.argmin(parts, axis=0), np.argmin(x, axis=0))
    np.testing.assert_array_equal(parpat.histogram(parts, bins=9)[0], np.histogram(x, 9)[0])
    with pytest.raises(ValueError, match="one part"):
        parpat.Parts([x, x], comm=MPI.COMM_SELF)


class _Stalled:
    """A communicator of 2 ranks whose other rank never arrives."""

    class _Never:
        def Test(self):
            return False

    def Get_rank(self):
        return 0

    def Get_size(self):
        return 2

    def Iallgather(self, *args):
        return self._Never()


def test_a_rank_that_never_arrives_costs_only_the_time_limit(monkeypatch):
    monkeypatch.setenv("PARPAT_COLLECTIVE_TIMEOUT_S", "0.2")
    start = time.monotonic()
    with pytest.raises(RuntimeError, match="waited more than 0.2 s"):
        parpat.sum(parpat.Parts(np.ones(10, np.float32), comm=_Stalled()))
    assert time.monotonic() - start < 10


@pytest.mark.skipif(shutil.which("mpirun") is None, reason="mpirun is not installed")
@pytest.mark.parametrize("ranks", [2, 3])
def test_ranks_under_mpirun(ranks):
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1", PARPAT_COLLECTIVE_TIMEOUT_S="60")
    script = os.path.join(os.path.dirname(__file__), "mpi_parts_check.py")
    done = subprocess.run(["mpirun", "-n", str(ranks), sys.executable, script, str(SEED)],
                          env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    # Each rank's "ok R" (mpirun may interleave the ranks' lines).
    passed = sorted(int(r) for r in re.findall(r"ok (\d+)", done.stdout))
    assert passed == list(range(ranks)), done.stdout + done.stderr
