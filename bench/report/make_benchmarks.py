#!/usr/bin/env python3
"""Writes BENCHMARKS.md from the JSON that the GPU suite keeps in bench/results/.

Each folder bench/results/<machine>/ holds one device call of scripts/gpu-suite.sh:
  meta.json                  {"date", "commit", "commands": [...]}
  info.json                  parpat info --measure --json (the read and FMA peaks)
  io-info.json               the same, from the call that wrote bench-io*.json (optional; the
                             streaming floor beside the io tables)
  bench-<pattern>-<backend>.json   parpat bench PATTERN --backend B --variant fast --json
  quick.json                 parpat bench --quick --json (every variant, a few cases)
  barrier-<backend>.json     parpat barrier --json (optional)
  bench-python.json          python -m parpat.bench --json (optional): the package beside numpy,
                             CuPy and torch
  histogram-floor.json       bench/floor/histogram_floor --json (optional): the counter-update
                             rates that bound histograms with many bins
  python-floor.json          bench/floor/python_call_floor.py --json (optional): what one call
                             returning a torch tensor cannot go below
  bench-io*.json             parpat bench io --json (optional, one section each): the CLI end to end on files
  previous/                  the same bench files from the previous build, measured in the same
                             call (optional: the regression check)
Plots go to bench/results/plots/<machine>-<pattern>.svg.

usage: make_benchmarks.py [--results bench/results] [--out BENCHMARKS.md] [--no-plots]
"""
import argparse
import glob
import json
import math
import os
import re
import sys

PATTERNS = ["reduce", "histogram", "pairwise"]


def load(path):
    with open(path) as f:
        return json.load(f)


def size_of(token):
    """'2^20' -> 1048576; '1000' -> 1000; anything else -> None."""
    m = re.fullmatch(r"2\^(\d+)", token.strip())
    if m:
        return 2 ** int(m.group(1))
    return int(token) if token.strip().isdigit() else None


def split_shape(shape):
    """Splits a bench shape into (case, size): the last token that is a size is the x axis.
    'reduce 2^20' -> ('', '2^20'); '1024 bins, 2^28' -> ('1024 bins', '2^28');
    '16384×16384 rows' stays whole ('16384×16384 rows', None)."""
    parts = [p.strip() for p in shape.split(",")]
    if size_of(parts[-1]) is not None:
        return ", ".join(parts[:-1]), parts[-1]
    return shape, None


def fmt_us(ms):
    us = ms * 1e3
    return f"{us:.1f}" if us >= 10 else f"{us:.2f}"


def geomean(xs):
    xs = [x for x in xs if x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def case_shape(r):
    """The shape without a swept parameter (pairwise's tpb=...)."""
    return re.sub(r"\s*tpb=\d+", "", r["shape"])


def key(r):
    return (r["pattern"], r["variant"], r["dtype"], r["op"], case_shape(r))


def best_per_case(rows):
    """Benches that sweep a parameter (pairwise's tpb=...) give several rows per case; keep
    the fastest, as a user running the default would tune to it."""
    best = {}
    for r in rows:
        k = key(r)
        if k not in best or r["time_ms"] < best[k]["time_ms"]:
            best[k] = r
    return list(best.values())


class Machine:
    def __init__(self, folder):
        self.folder = folder
        self.name = os.path.basename(folder.rstrip("/"))
        meta_path = os.path.join(folder, "meta.json")
        self.meta = load(meta_path) if os.path.exists(meta_path) else {}
        info_path = os.path.join(folder, "info.json")
        info = load(info_path) if os.path.exists(info_path) else {}
        self.info = info.get("devices", [])
        # The io stage may come from another call than the bench tables: its own info beside it.
        io_info_path = os.path.join(folder, "io-info.json")
        self.io_info = load(io_info_path) if os.path.exists(io_info_path) else info
        self.bench = self._benches(folder)
        self.previous = self._benches(os.path.join(folder, "previous"))
        self.quick = self._rows(os.path.join(folder, "quick.json"))
        self.barrier = self._barriers(folder)
        self.previous_barrier = self._barriers(os.path.join(folder, "previous"))
        python_path = os.path.join(folder, "bench-python.json")
        self.python = load(python_path) if os.path.exists(python_path) else None
        scaling_path = os.path.join(folder, "scaling.json")
        self.scaling = load(scaling_path) if os.path.exists(scaling_path) else []
        ranks_path = os.path.join(folder, "ranks.json")
        self.ranks = load(ranks_path)["runs"] if os.path.exists(ranks_path) else []
        floor_path = os.path.join(folder, "python-floor.json")
        self.python_floor = load(floor_path) if os.path.exists(floor_path) else None
        floor_path = os.path.join(folder, "histogram-floor.json")
        self.histogram_floor = load(floor_path) if os.path.exists(floor_path) else None
        # bench-io.json, bench-io-opencl.json, bench-io-16g.json, ...: one section each
        self.io = sorted((load(p) for p in glob.glob(os.path.join(folder, "bench-io*.json"))),
                         key=lambda d: (d.get("io_mib", 0), d.get("backend") != "cuda"))

    @staticmethod
    def _rows(path):
        return load(path)["rows"] if os.path.exists(path) else []

    @staticmethod
    def _benches(folder):
        found = {}
        for path in sorted(glob.glob(os.path.join(folder, "bench-*-*.json"))):
            _, pattern, backend = os.path.basename(path)[:-len(".json")].split("-", 2)
            found[(pattern, backend)] = load(path)["rows"]
        return found

    @staticmethod
    def _barriers(folder):
        found = {}
        for path in sorted(glob.glob(os.path.join(folder, "barrier-*.json"))):
            found[os.path.basename(path)[len("barrier-"):-len(".json")]] = load(path)
        return found

    def gpu(self):
        for d in self.info:
            if d["backend"] == "cuda":
                return d
        return self.info[0] if self.info else {"name": self.name}


def table(header, rows):
    out = ["| " + " | ".join(header) + " |",
           "|" + "|".join("---" if i == 0 else "---:" for i in range(len(header))) + "|"]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return out


def leading_number(text):
    m = re.match(r"\s*(\d+)(?:\^(\d+))?(?:\s|$)", text)
    if not m:
        return float("inf")
    return int(m.group(1)) ** int(m.group(2)) if m.group(2) else int(m.group(1))


# Ops whose times track another op's: their rows are folded into a sentence with the largest
# difference measured, so the tables show one row per distinct cost.
TWIN_OPS = {"max": "min", "nanvar": "var"}


def fold_twins(fast):
    """The rows without the twins of TWIN_OPS whose partner was measured on the same case, and
    for each folded twin the largest |time(twin) / time(partner) − 1|."""
    by_case = {(r["dtype"], r["op"], case_shape(r)): r for r in fast}
    kept, spread = [], {}
    for r in fast:
        partner = by_case.get((r["dtype"], TWIN_OPS.get(r["op"]), case_shape(r)))
        if partner is None or partner["time_ms"] <= 0 or not r.get("verified", False):
            kept.append(r)
            continue
        gap = abs(r["time_ms"] / partner["time_ms"] - 1)
        spread[r["op"]] = max(spread.get(r["op"], 0), gap)
    return kept, spread


def headline(rows, pattern):
    """The `fast` rows of a pattern as a grid: a shape of several parts ("1024 bins, 2^28") takes
    its first part as the column and the rest into the row; a one-part shape ("2^20") is the
    column itself. Cells: µs, the speed-up over the baseline of the same run, and at the last
    column the % of the measured peak."""
    fast, spread = fold_twins(
        best_per_case([r for r in rows if r["variant"] == "fast" and r["pattern"] == pattern]))
    grid, columns = {}, []
    for r in fast:
        parts = [p.strip() for p in case_shape(r).split(",")]
        column, rest = parts[0], ", ".join(parts[1:])
        if column not in columns:
            columns.append(column)
        grid.setdefault((r["dtype"], r["op"], rest), {})[column] = r
    columns.sort(key=leading_number)
    lines = []
    for (dtype, op, rest), by_column in grid.items():
        cells = []
        last = max(by_column, key=lambda c: (by_column[c].get("bytes", 0), columns.index(c)))
        for c in columns:
            r = by_column.get(c)
            if r is None:
                cells.append("")
                continue
            cell = fmt_us(r["time_ms"])
            if r.get("baseline_ms", 0) > 0:
                cell += f" ({r['baseline_ms'] / r['time_ms']:.2f}×)"
            if r.get("pct_peak", 0) > 0 and c == last:
                cell += f" {r['pct_peak']:.0f} %"
            if not r.get("verified", False):
                cell += " NOT VERIFIED"
            cells.append(cell)
        lines.append([dtype, op] + ([rest] if any(k[2] for k in grid) else []) + cells)
    baselines = sorted({r["baseline"] for r in fast if r.get("baseline")})
    header = ["dtype", "op / data"] + (["size"] if any(k[2] for k in grid) else []) + columns
    body = table(header, lines)
    if spread:
        body += ["", "Not shown: " + "; ".join(
            f"`{op}`, within {gap * 100:.0f} % of `{TWIN_OPS[op]}` on every case" for op, gap in
            sorted(spread.items())) + " (all rows are in the JSON)."]
    return body, baselines


def every_variant(rows, pattern):
    """The quick sweep: one row per case, one column per variant, time in µs (✗: not verified)."""
    rows = best_per_case([r for r in rows if r["pattern"] == pattern])
    cases, variants = [], []
    cell = {}
    for r in rows:
        c = f"{r['dtype']} {r['op']} {case_shape(r)}"
        if c not in cases:
            cases.append(c)
        if r["variant"] not in variants:
            variants.append(r["variant"])
        cell[(r["variant"], c)] = fmt_us(r["time_ms"]) + ("" if r.get("verified") else " ✗")
    return table(["case"] + variants, [[c] + [cell.get((v, c), "") for v in variants] for c in cases])


def ratio_summary(a_rows, b_rows, label, long_ms=0.1):
    """Geometric mean and extremes of time(a) / time(b) over the rows both have, and the
    geometric mean over the rows of at least `long_ms` (past the launch floor)."""
    b = {key(r): r for r in best_per_case(b_rows)}
    pairs = [(r, b[key(r)]) for r in best_per_case(a_rows) if key(r) in b]
    pairs = [(x, y) for x, y in pairs if x["time_ms"] > 0 and y["time_ms"] > 0]
    if not pairs:
        return None
    ratios = [x["time_ms"] / y["time_ms"] for x, y in pairs]
    worst = max(range(len(pairs)), key=lambda i: ratios[i])
    best = min(range(len(pairs)), key=lambda i: ratios[i])
    describe = lambda i: (f"{pairs[i][0]['dtype']} {pairs[i][0]['op']} {case_shape(pairs[i][0])} "
                          f"{ratios[i]:.3f}")
    long = [x for x, (p, q) in zip(ratios, pairs) if q["time_ms"] >= long_ms]
    return [label, len(pairs), f"{geomean(ratios):.3f}",
            f"{geomean(long):.3f} ({len(long)})" if long else "—", describe(best), describe(worst)]


def barrier_ratio_summary(new, old, label):
    """Geometric mean and extremes of µs per barrier of this build / the previous one, over the
    latency points (method, groups, group size) of the spinning methods both measured without a
    failure (`relaunch` times host launches, not a barrier)."""
    key = lambda r: (r["method"], r["groups"], r["group_size"])
    ok = lambda doc: {key(r): r for r in doc.get("latency", []) if r["method"] != "relaunch"
                      and not r["barrier_failed"] and r["us_per_barrier"] > 0}
    a, b = ok(new), ok(old)
    pairs = [(a[k], b[k]) for k in a if k in b]
    if not pairs:
        return None
    ratios = [x["us_per_barrier"] / y["us_per_barrier"] for x, y in pairs]
    describe = lambda i: (f"{pairs[i][0]['method']} {pairs[i][0]['groups']}×"
                          f"{pairs[i][0]['group_size']} {ratios[i]:.3f}")
    worst = max(range(len(pairs)), key=lambda i: ratios[i])
    best = min(range(len(pairs)), key=lambda i: ratios[i])
    return [label, len(pairs), f"{geomean(ratios):.3f}", "—", describe(best), describe(worst)]


def barrier_tables(doc):
    lat = [r for r in doc.get("latency", []) if r.get("group_size") == 128]
    methods = list(dict.fromkeys(r["method"] for r in lat))
    per_unit = sorted({r["groups_per_unit"] for r in lat})
    cg = {r["groups_per_unit"]: r["us_per_barrier"] for r in lat if r["method"] == "cg"}
    rows = []
    for m in methods:
        cells = []
        for u in per_unit:
            r = next((x for x in lat if x["method"] == m and x["groups_per_unit"] == u), None)
            if r is None:
                cells.append("")
            elif r["barrier_failed"]:
                cells.append("failed")
            else:
                ratio = f" ({r['us_per_barrier'] / cg[u]:.2f}×)" if cg.get(u) else ""
                cells.append(f"{r['us_per_barrier']:.2f}{ratio}")
        rows.append([m] + cells)
    out = table(["method"] + [f"{u} per SM" for u in per_unit], rows)
    sten = doc.get("stencil", [])
    if sten:
        sizes = sorted({r["group_size"] for r in sten}, reverse=True)
        rows = []
        for m in dict.fromkeys(r["method"] for r in sten):
            cells = []
            for g in sizes:
                r = next((x for x in sten if x["method"] == m and x["group_size"] == g), None)
                ok = r and r.get("correct") and not r.get("barrier_failed")
                cells.append("" if r is None else f"{r['time_ms']:.1f}" + ("" if ok else " ✗"))
            rows.append([m] + cells)
        out += ["", "Classic stencil, ms for the whole run (✗: wrong or a spin gave up):", ""]
        out += table(["method"] + [f"groups of {g}" for g in sizes], rows)
    return out


def io_floor(doc, m):
    """The streaming floor of `info --measure` in the same call: min(host → device, N readers)."""
    host = m.io_info.get("host", {})
    reads = host.get("page_cache_read_gbps_n")
    device = next((d for d in m.io_info.get("devices", []) if d.get("backend") == doc.get("backend")
                   and d.get("name") == doc.get("device") and d.get("h2d_pinned_gbps")), None)
    if not reads or not device:
        return ""
    h2d = device["h2d_pinned_gbps"]
    return (f" `parpat info --measure` in the same call: host → device from staging {h2d:.1f} GB/s, "
            f"page-cache reads {reads:.1f} GB/s by {host.get('threads', '?')} threads; the "
            f"streaming floor min(both) is {min(h2d, reads):.1f} GB/s.")


def cat_range(rates):
    low, high = f"{min(rates):.1f}", f"{max(rates):.1f}"
    return low if low == high else f"{low}–{high}"


def io_section(docs, m):
    """`parpat bench io`: whole processes on page-cached .npy files beside numpy, every run of
    every backend and file size in one table."""
    def ms(v):
        return "—" if not v else f"{v:.0f}" if v >= 100 else f"{v:.1f}"

    def gbps(v):
        return f"{v:.2f}" if v else "—"

    rows = []
    for doc in docs:
        for r in doc.get("rows", []):
            file = r.get("file", "")
            kib = r.get("chunk_kib", 0)
            if kib:
                file += f", chunks ≤ {kib // 1024} MiB" if kib % 1024 == 0 else f", chunks ≤ {kib} KiB"
            wall = ms(r.get("wall_ms"))
            if r.get("status", "ok") != "ok":
                wall += f" ✗ {r['status']}"
            ratio = r.get("numpy_over_parpat")
            chunks = r.get("chunks")
            kernel = r.get("time_ms")
            rows.append([doc.get("backend", "?"), r.get("pattern", "?"), file,
                         "" if chunks is None else int(chunks), wall, ms(r.get("startup_ms")),
                         "—" if kernel is None else f"{kernel:.1f}", gbps(r.get("stream_GBps")),
                         gbps(r.get("transfer_GBps")), ms(r.get("numpy_ms")),
                         ms(r.get("numpy_wall_ms")), f"{ratio:.2f}" if ratio else "—"])
    dates = ", ".join(sorted({d.get("date", "?") for d in docs}))
    devices = ", ".join(dict.fromkeys(d.get("device_label", d.get("device", "?")) for d in docs))
    numpy = sorted({d["numpy"] for d in docs if d.get("numpy")})
    cats = [d["cat"]["GBps"] for d in docs if d.get("cat", {}).get("GBps")]
    floors = [io_floor(d, m) for d in docs]
    lines = ["### End to end: files (`parpat bench io`, float32 .npy)", "",
             f"Measured {dates} on {devices}: wall ms of whole processes, median of "
             f"{docs[0].get('runs', 3)} after a warm-up, files page-cached"
             + (f", beside numpy {', '.join(numpy)} (np.load + the op, in Python and as a whole "
                "process) in the same run where shown" if numpy else "")
             + ". Kernel: the device time of the command's kernels. Stream GB/s: file bytes / "
             "(wall − wall on the 1 KiB file)"
             + (f"; `cat` reads the files at {cat_range(cats)} GB/s." if cats else ".")
             + next((f for f in floors if f), ""), ""]
    return lines + table(["backend", "command", "file", "chunks", "wall", "start-up", "kernel",
                          "stream GB/s", "transfer GB/s", "numpy in Python", "numpy wall",
                          "numpy wall / parpat"], rows)


RANK_MODES = [("cuda", "CUDA, 1 rank"), ("cuda-devices", "CUDA `--devices`, 2 ranks"),
              ("cuda-mpi2", "CUDA `mpirun -n 2`"), ("cpu", "CPU, 1 rank"),
              ("cpu-devices", "CPU `--devices cpu,cpu`"), ("cpu-mpi2", "CPU `mpirun -n 2`"),
              ("cpu-mpi4", "CPU `mpirun -n 4`")]


def ranks_section(runs, gpus):
    """The ranks stage: each command alone and over ranks, whole processes (ms), same answers."""
    commands = list(dict.fromkeys(r["command"] for r in runs))
    by = {(r["command"], r["mode"]): r for r in runs}
    modes = [(k, label) for k, label in RANK_MODES if any((c, k) in by for c in commands)]
    rows = []
    for c in commands:
        cells = [f"`{c}`"]
        for k, _ in modes:
            r = by.get((c, k))
            cells.append(f"{r['wall_ms']:.0f} / {r['time_ms']:.2f}" if r else "—")
        same = len({r["answer"] for r in runs if r["command"] == c}) == 1
        cells.append("yes" if same else "**no**")
        rows.append(cells)
    lines = ["### Ranks: one command over several ranks (`scripts/gpu-suite.sh ranks`)", "",
             "A page-cached 1 GiB float32 .npy (2^28 normal values), each way of running a "
             "command in its own process: wall ms of the whole process / ms of the device work "
             "of rank 0's share. The last column says whether every way gave the same answer "
             "(sums, indices and every count)."]
    if gpus < 2:
        lines.append("This machine has one GPU: its two CUDA ranks share it, so these rows "
                     "measure what the ranks cost (an MPI job's start-up is about 0.25 s), not "
                     "scaling.")
    lines.append("")
    lines += table(["command"] + [label for _, label in modes] + ["same answer"], rows)
    return lines


def python_section(doc, floor=None):
    """`python -m parpat.bench`: parpat beside numpy, CuPy and torch in one process."""
    versions = ", ".join(f"{k} {v}" for k, v in doc.get("versions", {}).items())
    lines = ["### Python (`python -m parpat.bench`)", "",
             f"Measured {doc.get('date', '?')} on "
             f"{', '.join(d['name'] for d in doc.get('devices', []))}; {versions}. Device "
             "time: CUDA events around the call queued behind a sleeping kernel (host time "
             "does not show); wall: the call and waiting for its answer; median of "
             f"{doc.get('reps', '?')}. Host overhead: the wall time per call in a loop (as "
             "the case says) minus the device time of one call.", ""]
    return lines + python_rows(doc.get("rows", [])) + python_floor(floor)


def histogram_floor(floor):
    """The counter-update rates under histograms with many bins, one update per value."""
    def line(p):
        where = p["counters"] + (f", clusters of {p['cluster']}" if p["cluster"] else "")
        return (f"{where} over {p['bins']} bins {p['g_updates_per_s']:.0f} G/s "
                f"(≤ {4 * p['g_updates_per_s']:.0f} GB/s of 4-byte values)")
    probes = floor["probes"]
    return ["The most counter updates per second, whatever the input (`bench/floor/histogram_floor`: "
            "a resident grid, one update per value, no input read): "
            + "; ".join(line(p) for p in probes) + "."]


def python_floor(floor):
    """The floor under one small call: allocating the torch result plus the launch itself."""
    if not floor:
        return []
    us = floor["us_per_call"]
    return ["", f"Floor of a small call on this machine (`bench/floor/python_call_floor.py`, "
            f"µs per call in a loop, same process): allocating the result (`new_empty`) "
            f"{us['new_empty']:.2f} + the bound launch {us['launch']:.2f} = **{us['floor']:.2f} "
            f"µs**; the signature lookup {us['signature']:.2f}; `torch.sum` {us['torch.sum']:.2f} "
            f"and `parpat.sum` {us['parpat.sum']:.2f} in the same loop."]


def python_rows(rows):
    """One row per case: parpat's times, the other libraries' beside them, and parpat's
    speed-up over the baseline the bench compared it with."""
    def text(ms):
        return "" if ms is None else f"{ms * 1e3:.2f} µs" if ms < 1 else f"{ms:.3f} ms"

    def times(r):
        return f"{text(r.get('ms')) or '—'} / {text(r.get('wall_ms')) or '—'}{r.get('note', '')}"

    def speedup(base, ours):
        return "" if base is None or ours is None or ours <= 0 else f"{base / ours:.2f}×"

    cases = {}
    for r in rows:
        cases.setdefault(r["case"], []).append(r)
    out = []
    for case, found in cases.items():
        ours = [r for r in found if r["library"].startswith("parpat")]
        others = [r for r in found if not r["library"].startswith("parpat")]
        mine = ours[0] if ours else {}
        speed = ", ".join(x for x in (speedup(mine.get("baseline_ms"), mine.get("ms")),
                                      speedup(mine.get("baseline_wall_ms"), mine.get("wall_ms")))
                          if x)
        out.append([case, times(mine) if mine else "",
                    "; ".join(f"{r['library']} {times(r)}" for r in others), speed])
    return table(["case", "parpat: device / wall", "others: device / wall",
                  "parpat's speed-up (device, wall)"], out)


def plot(machine, pattern, rows, peak_gbps, out_dir):
    """Throughput against size of every `fast` case with its baseline and the read peak."""
    import matplotlib
    matplotlib.use("svg")
    import matplotlib.pyplot as plt

    series = {}
    for r in best_per_case([r for r in rows if r["variant"] == "fast"]):
        case, size = split_shape(r["shape"])
        if size is None or r.get("gbps", 0) <= 0:
            continue
        label = f"{r['dtype']} {r['op']} {case}".strip()
        s = series.setdefault(label, {"x": [], "y": [], "base": []})
        s["x"].append(size_of(size))
        s["y"].append(r["gbps"])
        s["base"].append(r["gbps"] * r["baseline_ms"] / r["time_ms"] if r.get("baseline_ms") else None)
    series = {k: v for k, v in series.items() if len(v["x"]) > 1}
    if not series:
        return None
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for i, (label, s) in enumerate(sorted(series.items())[:10]):
        order = sorted(range(len(s["x"])), key=lambda j: s["x"][j])
        xs = [s["x"][j] for j in order]
        line, = ax.plot(xs, [s["y"][j] for j in order], marker="o", ms=3, label=label)
        base = [(s["x"][j], s["base"][j]) for j in order if s["base"][j]]
        if base:
            ax.plot(*zip(*base), ls="--", color=line.get_color(), lw=0.8)
    if peak_gbps:
        ax.axhline(peak_gbps, color="black", lw=1, ls=":", label=f"read peak {peak_gbps:.0f} GB/s")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("elements")
    ax.set_ylabel("GB/s")
    ax.set_title(f"{pattern} `fast` on {machine.gpu().get('name', machine.name)} "
                 "(dashed: the baseline in the same run)")
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, f"{machine.name}-{pattern}.svg")
    fig.savefig(path, metadata={"Date": None})
    plt.close(fig)
    return path


def scaling_section(rows, lead=None, brief=False):
    """bench/scaling/ranks_scaling: resident data over the GPUs of one host against one GPU.
    With `lead` (the machine's line), the section opens with it instead of a heading; `brief`
    refers to an earlier section's description instead of repeating it."""
    probes = ("all-reduce", "download")
    cases = list(dict.fromkeys(r["case"] for r in rows if not r["case"].startswith(probes)))
    side = "parts at once"
    engines = list(dict.fromkeys(r["engine"] for r in rows if r["ranks"] > 1 and r["engine"] != side
                                 and not r["case"].startswith(probes)))
    by = {(r["case"], r["engine"]): r for r in rows}
    with_side = any(r["engine"] == side for r in rows)
    body = []
    for c in cases:
        cells = [c] + [f"{by[(c, e)]['median_ms']:.2f}" if (c, e) in by else "—"
                       for e in ["one device", "rank 0's part"] + ([side] if with_side else [])]
        for e in engines:
            r = by.get((c, e))
            cells.append(f"{r['median_ms']:.2f} ({r['speedup']:.2f}×)" if r else "—")
        body.append(cells)
    ranks = max(r["ranks"] for r in rows)
    heading = f"Resident data over {ranks} GPUs of one host (`ranks_scaling`, ms per call)"
    text = ("Each rank holds its share of one array on its own GPU; whole calls (agreements, "
             "per-call plans and the collective included), median of 15 or more, against the plain call "
             "on the whole array on one GPU (× in brackets). Rank 0's part alone is the same call "
             "on one GPU for that rank's share only; parts at once runs every rank's plain call on its "
             "own GPU at the same time, with no collective: the differences between these and the "
             "ranks' time show what working side by side and what the distribution cost. Rows "
             "marked “plans” make their plans once (`Reducer` / `Histogrammer` / `Pairwise` on one GPU, "
             "`RankReducer` / `RankHistogrammer` / `RankPairwise` over the ranks) and time each run "
             "with its result's download into host memory kept across calls (page-locked for "
             "pairwise's C), as a loop over batches calls them. Sum and histograms: "
             "2^31 float32 values in [−4, 4); pairwise: gaussian and the all-pairs product, "
             "2^21 × 2^15, split x.")
    if brief:
        text = "Cases and columns as in the first such table above."
    lines = [f"### {heading}", "", text, ""] if lead is None else [f"{lead} {heading}. {text}", ""]
    lines += table(["case", "one GPU", "rank 0's part alone"] + (["parts at once"] if with_side else []) +
                   [f"{ranks} GPUs over {e}" for e in engines], body)
    reduce_rows = [r for r in rows if r["case"].startswith("all-reduce")]
    if reduce_rows:
        lines += ["", "The collective alone, the counts of a 65536-bin histogram (65539 uint64, "
                  "512 KiB), rank 0's wall time per call (µs): " +
                  "; ".join(f"{r['case'][len('all-reduce 65539 uint64 '):].strip('()')} memory "
                            f"over {r['engine']} {r['median_ms'] * 1e3:.0f}" for r in reduce_rows) +
                  "."]
    download_rows = [r for r in rows if r["case"].startswith("download")]
    if download_rows:
        lines += ["", "Results coming to the host, every GPU at once (pageable memory, µs): " +
                  "; ".join(f"{r['case'][len('download '):]} into a {r['engine']} "
                            f"{r['median_ms'] * 1e3:.0f}" for r in download_rows) +
                  ". A call that returns a new vector pays for its fresh pages too."]
    return lines


def cpu_against_numpy(m):
    """The host CPU's `parallel` rows that numpy was timed beside (bench-<pattern>-cpu.json): one
    line per pattern and dtype (histograms: and data), each case's parpat time and × numpy."""
    rows = [r for pattern in PATTERNS for r in m.bench.get((pattern, "cpu"), [])
            if r.get("baseline") == "numpy" and r.get("time_ms") and r.get("baseline_ms")]
    if not rows:
        return []
    groups = {}
    for r in rows:
        reduce = r["pattern"] == "reduce"
        group = (r["pattern"], r["dtype"], r["shape"] if reduce else r["op"])
        case = r["op"] if reduce else r["shape"]
        groups.setdefault(group, []).append(
            f"{case} {fmt_us(r['time_ms'])} µs ({r['baseline_ms'] / r['time_ms']:.1f}×)")
    body = [[pattern, dtype, what, "; ".join(cases)] for (pattern, dtype, what), cases in groups.items()]
    return ([f"### CPU of the same machine ({rows[0]['device']}), `parallel` against numpy in the "
             "same run", "", "parpat's time per case (× numpy):", ""] +
            table(["pattern", "dtype", "size / data", "cases"], body) + [""])


def machine_section(m, plots_dir, out_path, scaling_before=False):
    if m.scaling and not m.bench:
        lead = (f"Measured {m.meta.get('date', '?')}, build {m.meta.get('commit', '?')}: " +
                "; ".join(m.meta.get("commands", [])) + ".")
        lines = [f"## {m.meta.get('devices', m.name)}", ""]
        lines += scaling_section(m.scaling, lead, brief=scaling_before) + [""]
        if m.ranks:
            lines += ranks_section(m.ranks, max(r["ranks"] for r in m.scaling)) + [""]
        return lines
    gpu = m.gpu()
    lines = [f"## {gpu.get('name', m.name)}", ""]
    lines.append(f"Measured {m.meta.get('date', '?')}, build {m.meta.get('commit', '?')}, "
                 f"{gpu.get('version', '')}. Peaks measured in the same call: read "
                 f"{gpu.get('read_gbps', 0):.0f} GB/s, FP32 FMA {gpu.get('fma_gflops', 0) / 1e3:.1f} "
                 f"TFLOPS, empty launch {gpu.get('launch_us', 0):.2f} µs.")
    if m.meta.get("commands"):
        lines.append("Runs: " + "; ".join(m.meta["commands"]) + ".")
    lines.append("")
    for pattern in PATTERNS:
        rows = m.bench.get((pattern, "cuda"))
        if not rows:
            continue
        body, baselines = headline(rows, pattern)
        lines += [f"### {pattern}, CUDA `fast`", "",
                  "µs per call (speed-up over " + (", ".join(baselines) or "the baseline") +
                  " in the same run; % of the measured peak at the largest size):", ""]
        lines += body + [""]
        if pattern == "histogram" and m.histogram_floor:
            lines += histogram_floor(m.histogram_floor) + [""]
        if plots_dir:
            path = plot(m, pattern, rows, gpu.get("read_gbps") if pattern != "pairwise" else None,
                        plots_dir)
            if path:
                rel = os.path.relpath(path, os.path.dirname(os.path.abspath(out_path)))
                lines += [f"![{pattern} on {gpu.get('name', m.name)}]({rel})", ""]
    if m.quick:
        lines += ["### Every variant (`parpat bench --quick`, µs)", ""]
        for pattern in PATTERNS:
            if any(r["pattern"] == pattern for r in m.quick):
                lines += [f"{pattern}:", ""] + every_variant(m.quick, pattern) + [""]
    summaries = []
    for pattern in PATTERNS:
        cu, cl = m.bench.get((pattern, "cuda")), m.bench.get((pattern, "opencl"))
        if cu and cl:
            cl_fast = [r for r in cl if r["variant"] == "fast"]
            cu_fast = [r for r in cu if r["variant"] == "fast"]
            s = ratio_summary(cl_fast, cu_fast, pattern)
            if s:
                summaries.append(s)
            if pattern == "histogram":  # a line per dtype: each has its own rules and layouts
                for dtype in dict.fromkeys(r["dtype"] for r in cl_fast):
                    s = ratio_summary([r for r in cl_fast if r["dtype"] == dtype], cu_fast,
                                      f"histogram {dtype}")
                    if s:
                        summaries.append(s)
    if summaries:
        lines += ["### NVIDIA OpenCL against CUDA (`fast`, time OpenCL / CUDA)", ""]
        lines += table(["pattern", "cases", "geometric mean", "cases ≥ 100 µs", "best case", "worst case"],
                       summaries)
        lines += [""]
    lines += cpu_against_numpy(m)
    for backend, doc in m.barrier.items():
        lines += [f"### Grid barrier, {backend}: µs per barrier, blocks of 128 (× cg in the same run)", ""]
        lines += barrier_tables(doc) + [""]
    if m.io:
        lines += io_section(m.io, m) + [""]
    if m.python:
        lines += python_section(m.python, m.python_floor) + [""]
    if m.ranks:
        gpus = sum(1 for d in m.info if d["backend"] == "cuda")
        lines += ranks_section(m.ranks, gpus) + [""]
    if m.previous or m.previous_barrier:
        regress = []
        for (pattern, backend), rows in sorted(m.bench.items()):
            old = m.previous.get((pattern, backend))
            if old:
                s = ratio_summary([r for r in rows if r["variant"] == "fast"],
                                  [r for r in old if r["variant"] == "fast"], f"{pattern} {backend}")
                if s:
                    regress.append(s)
        for backend, doc in sorted(m.barrier.items()):
            if backend in m.previous_barrier:
                against = m.meta.get("previous_barrier")
                label = f"barrier {backend}" + (f" (against {against})" if against else "")
                s = barrier_ratio_summary(doc, m.previous_barrier[backend], label)
                if s:
                    regress.append(s)
        if regress:
            previous = m.meta.get("previous", "the previous build")
            lines += ["### Regression check: this build against the previous one, same call",
                      "", f"Time of this build / time of {previous} (below 1: faster). Cases under "
                      "100 µs are launch-bound (NVIDIA OpenCL's launches vary by ±15 % or more "
                      "between calls); the column of longer cases measures the kernels.", ""]
            lines += table(["pattern", "cases", "geometric mean", "cases ≥ 100 µs", "best case", "worst case"],
                       regress)
            lines += [""]
    return lines


METHOD = """\
Every number below comes from JSON that `parpat` wrote on the GPU machine, kept in
`bench/results/`, and this page is generated from it (`bench/report/make_benchmarks.py`).
Method: device time between events, after warm-up, median of at least 20 runs, inputs at
least 4× the L2 cache (buffers rotated for small sizes; launches shorter than a few µs are
timed as CUDA graph replays, the baseline by the same method). Baselines run in the same
process on the same inputs: CUB `DeviceReduce` / `DeviceHistogram`, cooperative groups'
`grid.sync`. GB/s counts the bytes a pattern must read and write once; % of peak is against
the read bandwidth and FP32 FMA rate that `parpat info --measure` measured in the same call.
Every result is verified against the CPU reference before it is reported."""

REPRODUCE = """\
## Reproduce

```sh
scripts/setup.sh                                   # build (CUDA for sm_90, OpenCL, CPU)
OUT=out scripts/gpu-suite.sh info bench quick barrier   # on the GPU machine: JSON into out/
python3 bench/report/make_benchmarks.py            # after copying out/ to bench/results/<machine>/
```

The GPU suite also runs the tests and compute-sanitizer (`scripts/gpu-suite.sh tests sanitize`).
`BIN_PREVIOUS=folder` makes its bench stage run a previous build in the same call (the regression
check). What was tried and not kept is in the git history and in `bench/tuning/`."""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--results", default="bench/results")
    ap.add_argument("--out", default="BENCHMARKS.md")
    ap.add_argument("--no-plots", action="store_true")
    args = ap.parse_args()
    folders = sorted(d for d in glob.glob(os.path.join(args.results, "*"))
                     if os.path.isdir(d) and os.path.basename(d) != "plots")
    machines = [Machine(f) for f in folders]
    if not machines:
        sys.exit(f"no results under {args.results}")
    plots_dir = None if args.no_plots else os.path.join(args.results, "plots")
    lines = ["# parpat benchmarks", "", METHOD, ""]
    for k, m in enumerate(machines):
        scaling_before = any(o.scaling and not o.bench for o in machines[:k])
        lines += machine_section(m, plots_dir, args.out, scaling_before)
    lines += REPRODUCE.splitlines() + [""]
    with open(args.out, "w") as f:
        f.write("\n".join(lines))
    print(f"wrote {args.out}: {len(lines)} lines from {len(machines)} machine(s)")


if __name__ == "__main__":
    main()
