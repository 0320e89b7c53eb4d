#!/usr/bin/env python3
"""The cost of reduce, histogram and pairwise on P ranks, as README's "A model beyond these
machines" shows it: each rank's device work on its share (from one GPU's measured rates in
bench/results/<gpu>/), plus the collective that combines the shares (from the link speeds
below, which are stated, not measured here). Prints the markdown table.

    python3 bench/report/ranks_model.py [bench/results/h100]

The model, for P ranks of G GPUs per node:
  reduce     n·s / (P · read rate)          + all-gather of P accumulators (latency only)
  histogram  n·s / (P · histogram rate)     + all-reduce of (bins + 3) uint64
  pairwise   X·Y / (P · pairs rate)         + all-gather of C, 4·X bytes (split x)
An all-reduce of M bytes costs 2·(P−1)/P · M / β + 2·log2(P)·α, an all-gather of M bytes in all
(P−1)/P · M / β + log2(P)·α, with the slowest link's β and α: NVLink inside a node, the network
between nodes.
"""
import json
import math
import os
import sys

# Links (per GPU, one direction), as their makers state them and NCCL reaches them.
NVLINK_GBPS = 450e9 * 0.8   # NVLink 4 through NVSwitch, 900 GB/s both ways; NCCL's bus rate ~80 %
NVLINK_ALPHA_S = 10e-6      # a small NCCL collective inside a node
NETWORK_GBPS = 50e9 * 0.8   # InfiniBand NDR, 400 Gb/s, one NIC per GPU
NETWORK_ALPHA_S = 5e-6      # one step between nodes
GPUS_PER_NODE = 8


def best_ms(rows, **match):
    times = [r["time_ms"] for r in rows
             if all(str(r.get(k, "")).startswith(v) for k, v in match.items())]
    if not times:
        raise SystemExit(f"no row with {match}")
    return min(times)


def rates(folder):
    """Per-GPU rates of the `fast` variants, from the CUDA benchmark JSON."""
    red = json.load(open(os.path.join(folder, "bench-reduce-cuda.json")))["rows"]
    hist = json.load(open(os.path.join(folder, "bench-histogram-cuda.json")))["rows"]
    pair = json.load(open(os.path.join(folder, "bench-pairwise-cuda.json")))
    n = 2**28 * 4
    return {
        "device": pair["device"],
        "read": n / (best_ms(red, variant="fast", dtype="float32", op="sum", shape="2^28") / 1e3),
        "hist1024": n / (best_ms(hist, variant="fast", dtype="float32", op="uniform",
                                 shape="1024 bins, 2^28") / 1e3),
        "hist65536": n / (best_ms(hist, variant="fast", dtype="float32", op="uniform",
                                  shape="65536 bins, 2^28") / 1e3),
        "gaussian": 2**34 / (best_ms(pair["rows"], variant="fast", op="gaussian",
                                     shape="2^20\u00d72^14") / 1e3),
    }


def link(p):
    """β and α of the slowest link among p ranks."""
    return (NVLINK_GBPS, NVLINK_ALPHA_S) if p <= GPUS_PER_NODE else (NETWORK_GBPS, NETWORK_ALPHA_S)


def all_reduce_s(p, m):
    if p == 1:
        return 0.0
    beta, alpha = link(p)
    return 2 * (p - 1) / p * m / beta + 2 * math.log2(p) * alpha


def all_gather_s(p, m):
    if p == 1:
        return 0.0
    beta, alpha = link(p)
    return (p - 1) / p * m / beta + math.log2(p) * alpha


def duration(seconds):
    ms = seconds * 1e3
    return f"{ms:,.0f} ms" if ms >= 100 else f"{ms:.2f} ms" if ms >= 1 else f"{ms * 1e3:.0f} µs"


def main(folder):
    r = rates(folder)
    problems = [
        ("sum of 2^34 float32 (64 GiB)", lambda p: 2**34 * 4 / (p * r["read"]),
         lambda p: all_gather_s(p, 64 * p)),
        ("histogram of 2^34 float32, 1024 bins", lambda p: 2**34 * 4 / (p * r["hist1024"]),
         lambda p: all_reduce_s(p, 8 * 1027)),
        ("histogram of 2^34 float32, 65536 bins", lambda p: 2**34 * 4 / (p * r["hist65536"]),
         lambda p: all_reduce_s(p, 8 * 65539)),
        ("pairwise gaussian 2^24 × 2^20", lambda p: 2**44 / (p * r["gaussian"]),
         lambda p: all_gather_s(p, 4 * 2**24)),
    ]
    ranks = [1, 2, GPUS_PER_NODE, GPUS_PER_NODE * 64]
    print(f"Per GPU ({r['device']}, measured): reduce {r['read'] / 1e12:.2f} TB/s, histogram "
          f"{r['hist1024'] / 1e12:.2f} / {r['hist65536'] / 1e12:.2f} TB/s at 1024 / 65536 bins, "
          f"gaussian {r['gaussian'] / 1e12:.2f}e12 pairs/s. Links (stated): NVLink "
          f"{NVLINK_GBPS / 1e9:.0f} GB/s and {NVLINK_ALPHA_S * 1e6:.0f} µs a collective inside a "
          f"node of {GPUS_PER_NODE}, network {NETWORK_GBPS / 1e9:.0f} GB/s per GPU and "
          f"{NETWORK_ALPHA_S * 1e6:.0f} µs a step between nodes.\n")
    header = ["problem"] + [f"{p} GPU{'s' if p > 1 else ''}" for p in ranks]
    print("| " + " | ".join(header) + " |")
    print("|---" + "|---:" * len(ranks) + "|")
    for name, work, collective in problems:
        one = work(1)
        cells = []
        for p in ranks:
            t = work(p) + collective(p)
            cells.append(f"{duration(t)} ({one / t:.3g}×, {collective(p) / t:.0%} collective)"
                         if p > 1 else duration(t))
        print(f"| {name} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "bench/results/h100")
