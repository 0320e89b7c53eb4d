#!/usr/bin/env python3
"""numpy baseline for `parpat bench` on the CPU.

Reads a JSON file {"pattern": ..., "cases": [...]} written by parpat, builds the same inputs
(same generator, same seeds), times numpy on each case (median of repeated runs) and prints
{"times_ms": [...]} with one entry per case. Like parpat's own timing, consecutive runs read
different copies of the input ("copies" of them, together at least 4x the cache), so neither side
is timed on data left in the cache by the run before.
"""
import json
import sys
import time

import numpy as np

DTYPES = {"bool": np.bool_, "int8": np.int8, "uint8": np.uint8, "int16": np.int16,
          "uint16": np.uint16, "int32": np.int32, "uint32": np.uint32, "int64": np.int64,
          "uint64": np.uint64, "float16": np.float16, "float32": np.float32, "float64": np.float64}
FLOATS = ("float16", "float32", "float64")


def splitmix(n, seed):
    mask = (1 << 64) - 1
    state = (seed * 0x9E3779B97F4A7C15 + 1) & mask
    idx = np.arange(1, n + 1, dtype=np.uint64)
    with np.errstate(over="ignore"):
        z = np.uint64(state) + idx * np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def integers(above, low, dtype):
    """low + above (uint64 distances above low) as `dtype`."""
    return (above.astype(np.int64) + low).astype(DTYPES[dtype])


def make(dtype, n, seed, mod=100, low=0):
    z = splitmix(n, seed)
    if dtype in FLOATS:
        return ((z >> np.uint64(11)).astype(np.float64) * 2.0 ** -53).astype(DTYPES[dtype])
    return integers(z % np.uint64(mod), low, dtype)


def make_distribution(c):
    """The inputs of bench/histogram_bench.cpp: uniform, all-equal or normal (the mean of four
    uniform streams); integers in [low, low + mod)."""
    dtype, n, seed, mod = c["dtype"], c["n"], c["seed"], c.get("mod", 100)
    low = c.get("low", 0)
    dist = c.get("dist", "uniform")
    floating = dtype in FLOATS
    if dist == "all-equal":
        if floating:
            return np.full(n, 0.5).astype(DTYPES[dtype])
        return integers(np.full(n, mod // 2, dtype=np.uint64), low, dtype)
    if dist == "normal":
        if floating:
            total = sum(make(dtype, n, seed + k, mod).astype(np.float64) for k in range(4))
            return (total / 4).astype(DTYPES[dtype])
        total = sum(splitmix(n, seed + k) % np.uint64(mod) for k in range(4))
        return integers(total // np.uint64(4), low, dtype)
    return make(dtype, n, seed, mod, low)


def median_ms(fn, x, reps, copies):
    inputs = [x] + [x.copy() for _ in range(max(copies, 1) - 1)]
    fn(inputs[-1])
    times = []
    for k in range(reps):
        data = inputs[k % len(inputs)]
        t0 = time.perf_counter()
        fn(data)
        times.append((time.perf_counter() - t0) * 1e3)
    times.sort()
    return times[len(times) // 2]


def reduce_case(c):
    x = make(c["dtype"], c["rows"] * c["cols"], c["seed"])
    if c.get("axis", "all") != "all":
        x = x.reshape(c["rows"], c["cols"])
    axis = {"all": None, "rows": 1, "cols": 0}[c.get("axis", "all")]
    fn = getattr(np, c["op"])
    return median_ms(lambda data: fn(data, axis=axis), x, c.get("reps", 20), c.get("copies", 1))


def histogram_case(c):
    kind = c.get("kind", "counts")
    if kind == "weighted":  # numpy.histogram(x, weights=w): float32 values and weights in [0, 1)
        x, w = make("float32", c["n"], c["seed"]), make("float32", c["n"], c["seed"] + 1)
        return median_ms(lambda data: np.histogram(data, bins=c["bins"], range=(0.0, 1.0),
                                                   weights=w), x, c.get("reps", 5), 1)
    if kind == "joint":  # numpy.histogram2d of float32 (x, y) pairs in [0, 1)^2
        xy = make("float32", 2 * c["n"], c["seed"]).reshape(c["n"], 2)
        x, y = xy[:, 0].copy(), xy[:, 1].copy()
        return median_ms(lambda data: np.histogram2d(data, y, bins=c["bins"],
                                                     range=[(0.0, 1.0), (0.0, 1.0)]),
                         x, c.get("reps", 5), 1)
    x = make_distribution(c)
    return median_ms(lambda data: np.histogram(data, bins=c["bins"], range=tuple(c["range"])),
                     x, c.get("reps", 10), c.get("copies", 1))


def main():
    with open(sys.argv[1]) as f:
        job = json.load(f)
    run = {"reduce": reduce_case, "histogram": histogram_case}[job["pattern"]]
    # null for a dtype numpy has no type for (bfloat16) or a case numpy refuses (its error on
    # stderr): the other cases keep their times
    times = []
    for c in job["cases"]:
        try:
            times.append(run(c) if c.get("dtype", "float32") in DTYPES else None)
        except Exception as e:  # noqa: BLE001 - any numpy failure leaves this case without a time
            print(f"numpy baseline: {c}: {e}", file=sys.stderr)
            times.append(None)
    print(json.dumps({"times_ms": times}))


if __name__ == "__main__":
    main()
