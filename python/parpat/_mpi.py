"""The collectives of an mpi4py communicator as parpat's C++ layer calls them (a
parpat::Communicator carried out in Python): non-blocking MPI calls polled until they finish or
a time limit passes, so that a rank that stopped never leaves the others waiting for ever."""
import os
import time
from typing import Optional

import numpy as np


def collective_timeout_s() -> float:
    """How long a rank waits for the others in one collective: PARPAT_COLLECTIVE_TIMEOUT_S, as
    for the command line (default 600)."""
    return float(os.environ.get("PARPAT_COLLECTIVE_TIMEOUT_S", "600"))


class MpiAdapter:
    """rank, size, engine, all_gather(bytes) -> bytes and all_reduce_sum(uint64 array, in
    place) over `comm`, an mpi4py communicator."""

    engine = "mpi"

    def __init__(self, comm, timeout_s: Optional[float] = None):
        from mpi4py import MPI
        self._mpi, self._comm = MPI, comm
        self._timeout_s = collective_timeout_s() if timeout_s is None else timeout_s
        self.rank, self.size = comm.Get_rank(), comm.Get_size()

    def _wait(self, request, what: str) -> None:
        deadline = time.monotonic() + self._timeout_s
        while not request.Test():
            if time.monotonic() > deadline:
                raise TimeoutError(f"rank {self.rank}: {what} waited more than "
                                   f"{self._timeout_s:g} s for the other ranks")
            time.sleep(20e-6)

    def all_gather(self, data: bytes) -> bytes:
        send = np.frombuffer(data, dtype=np.uint8)
        out = np.empty(len(data) * self.size, dtype=np.uint8)
        self._wait(self._comm.Iallgather([send, self._mpi.BYTE], [out, self._mpi.BYTE]),
                   "MPI_Iallgather")
        return out.tobytes()

    def all_reduce_sum(self, values: np.ndarray) -> None:
        self._wait(self._comm.Iallreduce(self._mpi.IN_PLACE, [values, self._mpi.UINT64_T],
                                         op=self._mpi.SUM), "MPI_Iallreduce")
