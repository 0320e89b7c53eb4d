"""bank_model: how many lanes of a warp queue on one shared-memory bank, by layout.

CUDA histogram `fast` counts in lane-striped rows (src/histogram/cuda/sinks.cuh, StripedRows):
lane l adds to row r of column l mod C, at word place(r)·row_words + l mod C. A warp's 32 adds of
one value slot take as long as the bank most of them fall on. This model draws random warps of
values, places each value's row as the even rule does (floor((x - lo) / width) + 1, row 0 below
the range) and prints, for each layout, the expected number of lanes on the busiest bank:

  in order       place(r) = r, row_words = C;
  permuted       place(r) = r ^ ((r >> shift) & mask), mask = 32 / C - 1, shift the larger of
                 log2(32 / C) and the gap between crowded rows (crowded_row_gap_log2);
  padded         place(r) = r, row_words = C + 1 (an odd stride).

C need not be a power of two (in order and padded then; lanes l mod C share a column).

bfloat16 and float16 values in [0, 1) are rounded to nearest from uniform float32 values, as the
bench's input is. It models bank conflicts alone: the permutation's two instructions a value, which
bound the kernel where it is issue-bound, are not in it (tuning record
histogram-bfloat16-row-order has the timings beside it).

  python3 bench/tuning/bank_model.py --dtype bfloat16 --bins 4096 --columns 8
"""

import argparse

import numpy as np


def rounded(u, dtype):
    """Uniform float32 values in [0, 1) rounded to the nearest value of `dtype`, as float64."""
    if dtype == "float16":
        return u.astype(np.float16).astype(np.float64)
    bits = u.view(np.uint32).astype(np.uint64)
    top = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16  # round to nearest even
    return (top << 16).astype(np.uint32).view(np.float32).astype(np.float64)


def busiest_bank(words):
    """The mean over warps (rows of `words`) of the most lanes on one of the 32 banks."""
    banks = words % 32
    counts = np.zeros((words.shape[0], 32), dtype=np.int64)
    np.add.at(counts, (np.arange(words.shape[0])[:, None], banks), 1)
    return counts.max(axis=1).mean()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dtype", choices=["bfloat16", "float16"], default="bfloat16")
    parser.add_argument("--bins", type=int, default=4096)
    parser.add_argument("--columns", type=int, default=8, choices=range(1, 33), metavar="1-32")
    parser.add_argument("--warps", type=int, default=100000)
    args = parser.parse_args()

    rng = np.random.default_rng(1)
    values = rounded(rng.random((args.warps, 32), dtype=np.float32), args.dtype)
    rows = np.minimum(np.floor(values * args.bins).astype(np.int64), args.bins - 1) + 1
    columns = np.arange(32)[None, :] % args.columns
    turn = (32 // args.columns).bit_length() - 1
    mantissa = 7 if args.dtype == "bfloat16" else 10
    gap = max(0, int(np.floor(np.log2(2.0 ** (-1 - mantissa) * args.bins))))
    mask = (1 << turn) - 1
    layouts = {"in order": rows * args.columns + columns}
    if 32 % args.columns == 0:  # a turn of the banks is whole rows
        layouts["permuted"] = (rows ^ ((rows >> max(turn, gap)) & mask)) * args.columns + columns
    layouts["padded"] = rows * (args.columns + 1) + columns
    print(f"{args.dtype} in [0, 1), {args.bins} bins, {args.columns} columns "
          f"(crowded rows 2^{gap} apart): most lanes on one bank, mean of {args.warps} warps")
    for name, words in layouts.items():
        print(f"  {name:9s} {busiest_bank(words):.2f}")


if __name__ == "__main__":
    main()
