"""python -m parpat.bench: parpat beside numpy, CuPy and torch (whichever are installed) on the
same arrays in the same process, printed as a markdown table (and written as JSON with --json).

Device cases report the device time (CUDA events around the call on the framework's current
stream, the call queued behind a sleeping kernel so that host time does not show) and the wall
time of a call that waits for its answer, each the median of --reps after a warm-up; bincount
(whose answer's length depends on the data) and host cases report the wall time. The
host-overhead case runs each library's sum on a 1024-element tensor in loops of 2000 calls and
reports the median wall time per call minus the device time of its kernels (measured with the calls queued behind a sleeping kernel).
parpat.histogram2d, given its range, counts on the caller's stream as the other calls do. The
histogram2d cases also check that parpat's counts equal the baseline's exactly."""

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


def device_ms(torch, fn, reps):
    """Median device time of fn() between two events, the call enqueued behind a sleeping
    kernel so that the host's time before the launch does not show."""
    fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda._sleep(2_000_000)  # about 1 ms, longer than any call's host work
        begin.record()
        fn()
        end.record()
        end.synchronize()
        times.append(begin.elapsed_time(end))
    return statistics.median(times)


def overhead_us(torch, fn, calls=2_000, rounds=7):
    """(wall µs per call in a loop of `calls`, the same minus the kernel's device time): the
    median of `rounds` loops, so that one slow loop (another process on the host) does not
    decide it."""
    for _ in range(100):
        fn()
    loops = []
    for _ in range(rounds):
        torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        torch.cuda.synchronize()
        loops.append((time.perf_counter() - start) / calls * 1e6)
    per_call = statistics.median(loops)
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

    def add(self, case, library, ms=None, wall_ms=None, baseline=None, note=""):
        """A row: device time `ms` and/or wall time per call `wall_ms`; `baseline` is the
        row the speed-ups are taken against."""
        print(f"  {case}: {library} device {ms} ms, wall {wall_ms} ms", file=sys.stderr,
              flush=True)
        row = {"case": case, "library": library, "ms": ms, "wall_ms": wall_ms, "note": note}
        if baseline is not None:
            row["baseline_ms"], row["baseline_wall_ms"] = baseline["ms"], baseline["wall_ms"]
        self.rows.append(row)
        return row

    def markdown(self):
        return "\n".join(markdown_rows(self.rows))


def _time_text(ms):
    if ms is None:
        return ""
    return f"{ms * 1e3:.2f} µs" if ms < 1 else f"{ms:.3f} ms"


def _speedup(base, ours):
    return "" if base is None or ours is None or ours <= 0 else f"{base / ours:.2f}×"


def markdown_rows(rows):
    """The table of `rows`."""
    lines = ["| case | library | device time | wall per call | parpat's speed-up (device, wall) |",
             "|---|---|---:|---:|---:|"]
    for r in rows:
        speed = ", ".join(x for x in (_speedup(r.get("baseline_ms"), r["ms"]),
                                      _speedup(r.get("baseline_wall_ms"), r["wall_ms"])) if x)
        lines.append(f"| {r['case']} | {r['library']} | {_time_text(r['ms'])} | "
                     f"{_time_text(r['wall_ms'])}{r['note']} | {speed} |")
    return lines


HIST2D_RANGE = [(0, 1), (0, 1)]


def same_counts(case, ours, theirs, baseline):
    """Refuses a result of parpat's that differs from the baseline library's."""
    to_numpy = (lambda a: a.cpu().numpy() if hasattr(a, "cpu") else
                a.get() if hasattr(a, "get") else np.asarray(a))
    if not np.array_equal(to_numpy(ours), to_numpy(theirs)):
        raise SystemExit(f"{case}: parpat's counts differ from {baseline}'s")


def gpu_cases(table, reps, pairs):
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
    sync = torch.cuda.synchronize

    small = torch.rand(1024, device="cuda")
    case = "host overhead: sum of 1024 float32, loops of 2000 calls (median of 7)"
    base = None
    for library, fn in [("torch.sum", lambda: torch.sum(small)),
                        ("parpat.sum", lambda: parpat.sum(small))]:
        per_call, over, kernel = overhead_us(torch, fn)
        row = table.add(case, library, kernel / 1e3, per_call / 1e3, baseline=base,
                        note=f" (overhead {over:.2f} µs)")
        base = base or row

    def compare(case, calls):
        """calls: (library, fn), the baseline first: device and wall time of each."""
        base = None
        for library, fn in calls:
            row = table.add(case, library, device_ms(torch, fn, reps), wall_ms(fn, reps, sync),
                            baseline=base if library.startswith("parpat") else None)
            base = base or row

    x = torch.rand(1 << 28, device="cuda")
    xc = cupy.from_dlpack(x) if cupy is not None else None
    compare("histogram float32 2^28, 1024 bins",
            [("torch.histc", lambda: torch.histc(x, bins=1024, min=0, max=1))]
            + ([("cupy.histogram", lambda: cupy.histogram(xc, bins=1024, range=(0, 1)))]
               if cupy is not None else [])
            + [("parpat.histogram", lambda: parpat.histogram(x, bins=1024, range=(0, 1)))])
    # A view of one step: `fast` reads it in place.
    steps, xc_steps = x[::2], xc[::2] if cupy is not None else None
    compare("histogram float32 x[::2] of 2^28, 1024 bins",
            [("torch.histc", lambda: torch.histc(steps, bins=1024, min=0, max=1))]
            + ([("cupy.histogram", lambda: cupy.histogram(xc_steps, bins=1024, range=(0, 1)))]
               if cupy is not None else [])
            + [("parpat.histogram", lambda: parpat.histogram(steps, bins=1024, range=(0, 1)))])
    del steps, xc_steps
    w = torch.rand(1 << 28, device="cuda")
    wc = cupy.from_dlpack(w) if cupy is not None else None
    compare("weighted histogram float32 2^28, float32 weights, 1024 bins",
            ([("cupy.histogram", lambda: cupy.histogram(xc, bins=1024, range=(0, 1), weights=wc))]
             if cupy is not None else [])
            + [("parpat.histogram",
                lambda: parpat.histogram(x, bins=1024, range=(0, 1), weights=w))])
    del w, wc
    compare("sum float32 2^28",
            [("torch.sum", lambda: torch.sum(x))]
            + ([("cupy.sum", lambda: cupy.sum(xc))] if cupy is not None else [])
            + [("parpat.sum", lambda: parpat.sum(x))])
    compare("var float32 2^28",
            [("torch.var", lambda: torch.var(x, correction=0))]
            + ([("cupy.var", lambda: cupy.var(xc))] if cupy is not None else [])
            + [("parpat.var", lambda: parpat.var(x))])
    compare("nanmean float32 2^28",
            [("torch.nanmean", lambda: torch.nanmean(x))]
            + ([("cupy.nanmean", lambda: cupy.nanmean(xc))] if cupy is not None else [])
            + [("parpat.nanmean", lambda: parpat.nanmean(x))])
    # Views read without a copy: a step, a step of the innermost axis along either axis (each
    # read in place), negative steps (CuPy; read as the array under them).
    steps, xc_steps = x[::2], xc[::2] if cupy is not None else None
    compare("sum float32 x[::2] of 2^28",
            [("torch.sum", lambda: torch.sum(steps))]
            + ([("cupy.sum", lambda: cupy.sum(xc_steps))] if cupy is not None else [])
            + [("parpat.sum", lambda: parpat.sum(steps))])
    cols, xc_cols = x.view(1 << 14, 1 << 14)[:, ::2], None
    if cupy is not None:
        xc_cols = xc.reshape(1 << 14, 1 << 14)[:, ::2]
    compare("sum float32 axis 1 of x[:, ::2], x of 2^14 × 2^14",
            [("torch.sum", lambda: torch.sum(cols, dim=1))]
            + ([("cupy.sum", lambda: cupy.sum(xc_cols, axis=1))] if cupy is not None else [])
            + [("parpat.sum", lambda: parpat.sum(cols, axis=1))])
    compare("sum float32 axis 0 of x[:, ::2], x of 2^14 × 2^14",
            [("torch.sum", lambda: torch.sum(cols, dim=0))]
            + ([("cupy.sum", lambda: cupy.sum(xc_cols, axis=0))] if cupy is not None else [])
            + [("parpat.sum", lambda: parpat.sum(cols, axis=0))])
    if cupy is not None:
        backwards = xc[::-1]
        compare("sum float32 x[::-1] of 2^28 (CuPy)",
                [("cupy.sum", lambda: cupy.sum(backwards)),
                 ("parpat.sum", lambda: parpat.sum(backwards))])
        del backwards
    del x, xc, steps, xc_steps, cols, xc_cols

    def histogram2d_case(case, x, y):
        if cupy is not None:
            xc, yc = cupy.from_dlpack(x), cupy.from_dlpack(y)
        compare(case,
                ([("cupy.histogram2d",
                   lambda: cupy.histogram2d(xc, yc, bins=256, range=HIST2D_RANGE))]
                 if cupy is not None else [])
                + [("parpat.histogram2d",
                    lambda: parpat.histogram2d(x, y, bins=256, range=HIST2D_RANGE))])
        if cupy is not None:
            same_counts(case, parpat.histogram2d(x, y, bins=256, range=HIST2D_RANGE)[0],
                        cupy.histogram2d(xc, yc, bins=256, range=HIST2D_RANGE)[0],
                        "cupy.histogram2d")

    xy = torch.rand((2, 1 << pairs), device="cuda")
    histogram2d_case(f"histogram2d float32 2^{pairs} (x, y) pairs, 256 × 256 bins", xy[0], xy[1])
    del xy
    pts = torch.rand((1 << pairs, 2), device="cuda")
    histogram2d_case(f"histogram2d float32 columns pts[:, 0], pts[:, 1] of a 2^{pairs} × 2 "
                     "table, 256 × 256 bins", pts[:, 0], pts[:, 1])
    del pts

    b = torch.randint(0, 256, (1 << 30,), dtype=torch.uint8, device="cuda")
    case = "bincount uint8 1 GiB (the answer's length known on the host)"
    row = table.add(case, "torch.bincount", wall_ms=wall_ms(lambda: torch.bincount(b), reps, sync))
    table.add(case, "parpat.bincount", wall_ms=wall_ms(lambda: parpat.bincount(b), reps, sync),
              baseline=row)


def host_cases(table, reps, pairs):
    rng = np.random.default_rng(1)
    x = rng.random(1 << 26, dtype=np.float32)
    case = "numpy float32 2^26 on the CPU backend: sum"
    row = table.add(case, "numpy.sum", wall_ms=wall_ms(lambda: np.sum(x), reps))
    table.add(case, "parpat.sum", wall_ms=wall_ms(lambda: parpat.sum(x), reps), baseline=row)
    for op in ("var", "nanmean"):
        case = f"numpy float32 2^26 on the CPU backend: {op}"
        row = table.add(case, f"numpy.{op}", wall_ms=wall_ms(lambda: getattr(np, op)(x), reps))
        table.add(case, f"parpat.{op}", wall_ms=wall_ms(lambda: getattr(parpat, op)(x), reps),
                  baseline=row)
    case = "numpy float32 2^26 on the CPU backend: histogram, 1024 bins"
    row = table.add(case, "numpy.histogram",
                    wall_ms=wall_ms(lambda: np.histogram(x, bins=1024, range=(0, 1)),
                                    max(reps // 4, 3)))
    table.add(case, "parpat.histogram",
              wall_ms=wall_ms(lambda: parpat.histogram(x, bins=1024, range=(0, 1)), reps),
              baseline=row)
    w = rng.random(x.size, dtype=np.float32)
    case = "numpy float32 2^26 on the CPU backend: histogram, 1024 bins, float32 weights"
    row = table.add(case, "numpy.histogram",
                    wall_ms=wall_ms(lambda: np.histogram(x, bins=1024, range=(0, 1), weights=w),
                                    max(reps // 4, 3)))
    table.add(case, "parpat.histogram",
              wall_ms=wall_ms(lambda: parpat.histogram(x, bins=1024, range=(0, 1), weights=w),
                              reps),
              baseline=row)
    del w
    pairs = min(pairs, 26)
    x, y = rng.random((2, 1 << pairs), dtype=np.float32)
    case = f"numpy float32 2^{pairs} (x, y) pairs on the CPU backend: histogram2d, 256 × 256 bins"
    row = table.add(case, "numpy.histogram2d",
                    wall_ms=wall_ms(lambda: np.histogram2d(x, y, bins=256, range=HIST2D_RANGE),
                                    max(reps // 4, 3)))
    table.add(case, "parpat.histogram2d",
              wall_ms=wall_ms(lambda: parpat.histogram2d(x, y, bins=256, range=HIST2D_RANGE),
                              reps),
              baseline=row)
    same_counts(case, parpat.histogram2d(x, y, bins=256, range=HIST2D_RANGE)[0],
                np.histogram2d(x, y, bins=256, range=HIST2D_RANGE)[0], "numpy.histogram2d")


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m parpat.bench", description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=20, help="timed repetitions per case")
    ap.add_argument("--json", help="also write the rows and the machine as JSON here")
    ap.add_argument("--no-gpu", action="store_true", help="host cases only")
    ap.add_argument("--pairs", type=int, default=27,
                    help="log2 of the (x, y) pairs of the histogram2d cases (default 27; the "
                         "host case takes at most 26, as the other host cases)")
    args = ap.parse_args(argv)
    table = Table()
    if not args.no_gpu:
        gpu_cases(table, args.reps, args.pairs)
    host_cases(table, args.reps, args.pairs)
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
