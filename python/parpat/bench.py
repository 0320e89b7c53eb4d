"""python -m parpat.bench: parpat beside numpy, CuPy and torch (whichever are installed) on the
same arrays in the same process, printed as a markdown table (and written as JSON with --json).

Device cases are timed with CUDA events around the whole call on the framework's current stream
(median of --reps after a warm-up); cases whose answer's size depends on the data (bincount)
and host cases are timed by the wall clock, waiting for the answer. The host-overhead case runs
each library's sum 10^4 times on a 1024-element tensor and reports the wall time per call minus
the device time of its kernels (measured with the calls queued behind a sleeping kernel)."""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time

import numpy as np

import parpat


def wall_ms(fn, reps, sync=lambda: None):
    fn()
    sync()
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        fn()
        sync()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def event_ms(torch, fn, reps):
    """Median device time of fn() between two events on the current stream (host work inside
    the call included where it delays the second event)."""
    fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        begin.record()
        fn()
        end.record()
        end.synchronize()
        times.append(begin.elapsed_time(end))
    return statistics.median(times)


def overhead_us(torch, fn, calls=10_000):
    """(wall µs per call in a loop of `calls`, the same minus the kernel's device time)."""
    for _ in range(100):
        fn()
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    torch.cuda.synchronize()
    per_call = (time.perf_counter() - start) / calls * 1e6
    kernel = device_us(torch, fn)
    return per_call, per_call - kernel, kernel


def device_us(torch, fn, batch=100):
    """The device time of one call: `batch` calls enqueued behind a sleeping kernel (so that
    the host's time cannot show between the events), timed by events around them."""
    times = []
    for _ in range(5):
        begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda._sleep(50_000_000)  # about 25 ms: longer than enqueueing the batch
        begin.record()
        for _ in range(batch):
            fn()
        end.record()
        end.synchronize()
        times.append(begin.elapsed_time(end) * 1e3 / batch)
    return min(times)


class Table:
    def __init__(self):
        self.rows = []

    def add(self, case, library, ms, baseline=None, note=""):
        print(f"  {case}: {library} {ms:.4f} ms", file=sys.stderr, flush=True)
        self.rows.append({"case": case, "library": library, "ms": ms, "baseline": baseline,
                          "note": note})

    def markdown(self):
        lines = ["| case | library | time | parpat's speed-up |", "|---|---|---:|---:|"]
        for r in self.rows:
            speed = ("" if r["baseline"] is None or r["ms"] <= 0
                     else f"{r['baseline'] / r['ms']:.2f}×")
            unit = f"{r['ms'] * 1e3:.2f} µs" if r["ms"] < 1 else f"{r['ms']:.3f} ms"
            lines.append(f"| {r['case']} | {r['library']} | {unit}{r['note']} | {speed} |")
        return "\n".join(lines)


def gpu_cases(table, reps):
    try:
        import torch
    except ImportError:
        print("torch not installed: GPU cases left out", file=sys.stderr)
        return
    if not torch.cuda.is_available():
        print("no CUDA device: GPU cases left out", file=sys.stderr)
        return
    try:
        import cupy
    except ImportError:
        cupy = None

    small = torch.rand(1024, device="cuda")
    case = "host overhead, sum of 1024 float32 (µs per call − kernel)"
    torch_over = None
    for library, fn in [("torch.sum", lambda: torch.sum(small)),
                        ("parpat.sum", lambda: parpat.sum(small))]:
        per_call, over, kernel = overhead_us(torch, fn)
        table.add(case, library, over / 1e3, baseline=torch_over,
                  note=f" ({per_call:.2f} µs per call, kernel {kernel:.2f} µs)")
        torch_over = over / 1e3

    n = 1 << 28
    x = torch.rand(n, device="cuda")
    ours = event_ms(torch, lambda: parpat.histogram(x, bins=1024, range=(0, 1)), reps)
    histc = event_ms(torch, lambda: torch.histc(x, bins=1024, min=0, max=1), reps)
    table.add("histogram float32 2^28, 1024 bins", "torch.histc", histc)
    if cupy is not None:
        xc = cupy.from_dlpack(x)
        cp = event_ms(torch, lambda: cupy.histogram(xc, bins=1024, range=(0, 1)), reps)
        table.add("histogram float32 2^28, 1024 bins", "cupy.histogram", cp)
    table.add("histogram float32 2^28, 1024 bins", "parpat.histogram", ours, baseline=histc)

    sums = {"torch.sum": event_ms(torch, lambda: torch.sum(x), reps)}
    if cupy is not None:
        sums["cupy.sum"] = event_ms(torch, lambda: cupy.sum(xc), reps)
    for library, ms in sums.items():
        table.add("sum float32 2^28", library, ms)
    table.add("sum float32 2^28", "parpat.sum", event_ms(torch, lambda: parpat.sum(x), reps),
              baseline=sums["torch.sum"])
    del x

    b = torch.randint(0, 256, (1 << 30,), dtype=torch.uint8, device="cuda")
    sync = torch.cuda.synchronize
    theirs = wall_ms(lambda: torch.bincount(b), reps, sync)
    table.add("bincount uint8 1 GiB (wall, answer on the host side known)", "torch.bincount", theirs)
    table.add("bincount uint8 1 GiB (wall, answer on the host side known)", "parpat.bincount",
              wall_ms(lambda: parpat.bincount(b), reps, sync), baseline=theirs)


def host_cases(table, reps):
    rng = np.random.default_rng(1)
    x = rng.random(1 << 26, dtype=np.float32)
    base = wall_ms(lambda: np.sum(x), reps)
    table.add("numpy float32 2^26 on the CPU backend: sum", "numpy.sum", base)
    table.add("numpy float32 2^26 on the CPU backend: sum", "parpat.sum",
              wall_ms(lambda: parpat.sum(x), reps), baseline=base)
    base = wall_ms(lambda: np.histogram(x, bins=1024, range=(0, 1)), max(reps // 4, 3))
    table.add("numpy float32 2^26 on the CPU backend: histogram, 1024 bins", "numpy.histogram",
              base)
    table.add("numpy float32 2^26 on the CPU backend: histogram, 1024 bins", "parpat.histogram",
              wall_ms(lambda: parpat.histogram(x, bins=1024, range=(0, 1)), reps), baseline=base)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m parpat.bench", description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=20, help="timed repetitions per case")
    ap.add_argument("--json", help="also write the rows and the machine as JSON here")
    ap.add_argument("--no-gpu", action="store_true", help="host cases only")
    args = ap.parse_args(argv)
    table = Table()
    if not args.no_gpu:
        gpu_cases(table, args.reps)
    host_cases(table, args.reps)
    versions = {"python": platform.python_version(), "numpy": np.__version__}
    for name in ("torch", "cupy"):
        if name in sys.modules:
            versions[name] = sys.modules[name].__version__
    devices = [d for d in parpat.devices() if d["backend"] in ("cuda", "cpu")]
    print(f"parpat.bench on {', '.join(d['name'] for d in devices)}; "
          + ", ".join(f"{k} {v}" for k, v in versions.items()))
    print()
    print(table.markdown())
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"bench": "python", "date": time.strftime("%Y-%m-%d"),
                       "devices": devices, "versions": versions, "reps": args.reps,
                       "rows": table.rows}, f, indent=1)


if __name__ == "__main__":
    main()
