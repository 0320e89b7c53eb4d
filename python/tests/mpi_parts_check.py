"""Run by test_parts_mpi.py under mpirun: every rank holds its part of one array (rows of
unequal lengths, rank 1 of 3 none) and parpat.Parts(part, comm=MPI.COMM_WORLD) must give numpy's
answer for the whole array on every rank; a call that differs on one rank must raise the same
error on every rank. Prints "ok" and exits 0 on each rank that passed."""
import sys

import numpy as np
from mpi4py import MPI

import parpat

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
seed = int(sys.argv[1])
whole = np.random.default_rng(seed).standard_normal((101, 7)).astype(np.float32)
whole[3, 2] = np.nan
cuts = np.linspace(0, 101, size + 1).astype(int)
if size == 3:
    cuts[2] = cuts[1]  # rank 1 holds no rows
part = parpat.Parts(whole[cuts[rank]:cuts[rank + 1]], comm=comm)
device_rows = np.random.default_rng(seed + 1).integers(0, 50, (64, 3)).astype(np.int32)
int_part = parpat.Parts(device_rows[cuts[rank] * 64 // 101:cuts[rank + 1] * 64 // 101],
                        comm=comm)


def check(got, want, what):
    if not np.array_equal(np.asarray(got), np.asarray(want), equal_nan=True):
        raise AssertionError(f"rank {rank}: {what}: {got} != {want}")


check(parpat.nanargmax(part), np.nanargmax(whole), "nanargmax")
check(parpat.max(part, axis=0), np.max(whole, axis=0), "max axis 0")
check(parpat.sum(int_part, axis=1), np.sum(device_rows, axis=1), "int sum axis 1")
check(parpat.count_nonzero(int_part), np.count_nonzero(device_rows), "count_nonzero")
total = parpat.nansum(part)
if abs(total - np.nansum(whole.astype(np.float64))) > 1e-5 * np.abs(whole[~np.isnan(whole)]).sum():
    raise AssertionError(f"rank {rank}: nansum {total}")
check(parpat.histogram(part, bins=32, range=(-3, 3))[0], np.histogram(whole[~np.isnan(whole)],
                                                                      32, (-3, 3))[0],
      "histogram")
check(parpat.histogram(int_part, bins=7)[0], np.histogram(device_rows, 7)[0], "range from ranks")
try:
    parpat.histogram(part, bins=10 + (rank == 1), range=(0, 1))
    raise AssertionError(f"rank {rank}: a call that differs on rank 1 did not raise")
except ValueError as e:
    if "rank 1 was given another call than rank 0" not in str(e):
        raise
print(f"ok {rank}", flush=True)
