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
  histogram-opencl-floor.json  bench/floor/histogram_opencl_floor --json (optional): the same
                             partition of rows into buckets through OpenCL
  python-floor.json          bench/floor/python_call_floor.py --json (optional): what one call
                             returning a torch tensor cannot go below
  local-memory/              cuda.json, cuda-48kib*.json, opencl.json, meta.json, info.json
                             (optional): parpat bench histogram on CUDA by default, CUDA held to
                             48 KiB of shared memory (histogram.fast.shared_kib=48) and NVIDIA
                             OpenCL, in one call: which OpenCL gaps the local memory decides
  bench-io*.json             parpat bench io --json (optional, one section each): the CLI end to end on files
  previous/                  the same bench files from the previous build, measured in the same
                             call (optional: the regression check)
Plots go to bench/results/plots/<machine>-<pattern>.svg.

usage: make_benchmarks.py [--results bench/results] [--out BENCHMARKS.md] [--no-plots]
"""
import argparse
import glob
import math
import os
import sys

from report_sections import (barrier_ratio_summary, barrier_tables, cpu_against_numpy,
                             histogram_floor, io_section, opencl_local_memory, python_section,
                             ranks_section, scaling_section)
from report_tables import (PATTERNS, Machine, best_per_case, case_shape, fmt_us, geomean, key,
                           leading_number, plot, table)


TWIN_OPS = {"max": "min", "nanvar": "var", "count_nonzero": "sum"}
# Dtypes whose rows repeat a partner's: left out where every case of theirs was measured beside
# the partner's and is within TWIN_DTYPE_GAP of it (otherwise all of their rows stay).
TWIN_DTYPES = {"uint32": "int32", "uint64": "int64", "int8": "uint8", "bool": "uint8",
               "int16": "uint16", "bfloat16": "float16"}
TWIN_DTYPE_GAP = 0.05


def fold_twins(fast):
    """The rows without the twins of TWIN_OPS whose partner was measured on the same case, and
    without the dtypes of TWIN_DTYPES that repeat their partner's rows; for each folded twin
    (`op` or dtype) the largest |time(twin) / time(partner) − 1| and its partner."""
    by_case = {(r["dtype"], r["op"], case_shape(r)): r for r in fast}
    kept, spread = [], {}
    for r in fast:
        partner = by_case.get((r["dtype"], TWIN_OPS.get(r["op"]), case_shape(r)))
        if partner is None or partner["time_ms"] <= 0 or not r.get("verified", False):
            kept.append(r)
            continue
        gap = abs(r["time_ms"] / partner["time_ms"] - 1)
        twin = f"`{r['op']}`"
        spread[twin] = (max(spread.get(twin, (0,))[0], gap), f"`{TWIN_OPS[r['op']]}`")
    for twin, partner in TWIN_DTYPES.items():
        rows = [r for r in kept if r["dtype"] == twin]
        pairs = [(r, by_case.get((partner, r["op"], case_shape(r)))) for r in rows]
        if not rows or any(p is None or p["time_ms"] <= 0 or not r.get("verified", False)
                           for r, p in pairs):
            continue
        gap = max(abs(r["time_ms"] / p["time_ms"] - 1) for r, p in pairs)
        if gap <= TWIN_DTYPE_GAP:
            kept = [r for r in kept if r["dtype"] != twin]
            spread[f"the {twin} rows"] = (gap, partner + "'s")
    return kept, spread


def fold_twin_summaries(per_dtype):
    """The OpenCL / CUDA lines of the dtypes (ratio_summary rows by dtype) without the twins of
    TWIN_DTYPES whose geometric mean is within TWIN_DTYPE_GAP of their partner's; and a phrase
    for each twin left out."""
    folded, left_out = [], set()
    for twin, partner in TWIN_DTYPES.items():
        if twin in per_dtype and partner in per_dtype:
            gap = abs(float(per_dtype[twin][2]) / float(per_dtype[partner][2]) - 1)
            if gap <= TWIN_DTYPE_GAP:
                left_out.add(twin)
                folded.append(f"the {twin} line, its geometric mean within {max(1, math.ceil(gap * 100))} % "
                              f"of {partner}'s")
    return [s for dtype, s in per_dtype.items() if dtype not in left_out], folded


def headline_cell(r, with_peak):
    """µs, the speed-up over the baseline of the same run and, where asked, the % of the peak."""
    if r is None:
        return ""
    cell = fmt_us(r["time_ms"])
    if r.get("baseline_ms", 0) > 0:
        cell += f" ({r['baseline_ms'] / r['time_ms']:.2f}×)"
    if r.get("pct_peak", 0) > 0 and with_peak:
        cell += f" {r['pct_peak']:.0f} %"
    if not r.get("verified", False):
        cell += " NOT VERIFIED"
    return cell


def one_size_grid(grid, size):
    """Rows measured at one size only: one line per dtype, one column per op."""
    dtypes, ops = [], []
    for dtype, op, _ in grid:
        dtypes += [dtype] if dtype not in dtypes else []
        ops += [op] if op not in ops else []
    lines = [[dtype] + [headline_cell(grid.get((dtype, op, ""), {}).get(size), True) for op in ops]
             for dtype in dtypes]
    return table([f"dtype, {size}"] + ops, lines)


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
    baselines = sorted({r["baseline"] for r in fast if r.get("baseline")})
    has_rest = any(k[2] for k in grid)
    if len(columns) == 1 and not has_rest:
        body = one_size_grid(grid, columns[0])
    else:
        lines = []
        for (dtype, op, rest), by_column in grid.items():
            last = max(by_column, key=lambda c: (by_column[c].get("bytes", 0), columns.index(c)))
            lines.append([dtype, op] + ([rest] if has_rest else []) +
                         [headline_cell(by_column.get(c), c == last) for c in columns])
        header = ["dtype", "op / data"] + (["size"] if has_rest else []) + columns
        body = table(header, lines)
    if spread:
        # Whole percent, rounded up: "within 0 %" would read as identical.
        body += ["", "Not shown: " + "; ".join(
            f"{twin}, within {max(1, math.ceil(gap * 100))} % of {partner} on every case"
            for twin, (gap, partner) in sorted(spread.items())) + " (all rows are in the JSON)."]
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


PROVENANCE = "README.md"  # in the results folder: every build and command behind the tables


def measured_line(m, provenance):
    """A section's first words: its date and main build; where rows come from other builds or
    calls, a link to the page that lists them (`provenance`, relative to the document)."""
    commit = m.meta.get("commit", "?")
    build = commit.split(" ")[0]
    more = commit != build or len(m.meta.get("commands", [])) > 1
    return (f"Measured {m.meta.get('date', '?')}, build {build}" +
            (f" (other rows' builds and every command: [{m.name}]({provenance}#{m.name}))"
             if more else ""))


def provenance_page(machines):
    """bench/results/README.md: per machine, every build its rows come from and every command that
    wrote them, a line each."""
    lines = ["# How the tables of BENCHMARKS.md were measured", "",
             "Written by `bench/report/make_benchmarks.py` from each folder's `meta.json` "
             "(`commit`, `commands`).", ""]
    for m in machines:
        if not m.meta:
            continue
        name = m.meta.get("devices") or m.gpu().get("name", m.name)
        lines += [f'<a id="{m.name}"></a>', "", f"## `{m.name}/`: {name}", "",
                  f"Builds: {m.meta.get('commit', '?')}.", ""]
        lines += [f"- {c}" for c in m.meta.get("commands", [])] + [""]
    return lines


def machine_section(m, plots_dir, out_path, provenance, scaling_before=False):
    if m.scaling and not m.bench:
        lead = measured_line(m, provenance) + "."
        lines = [f"## {m.meta.get('devices', m.name)}", ""]
        lines += scaling_section(m.scaling, lead, brief=scaling_before) + [""]
        if m.ranks:
            lines += ranks_section(m.ranks, max(r["ranks"] for r in m.scaling)) + [""]
        return lines
    gpu = m.gpu()
    lines = [f"## {gpu.get('name', m.name)}", ""]
    lines.append(f"{measured_line(m, provenance)}, {gpu.get('version', '')}. Peaks measured in "
                 f"the same call: read {gpu.get('read_gbps', 0):.0f} GB/s, FP32 FMA "
                 f"{gpu.get('fma_gflops', 0) / 1e3:.1f} TFLOPS, empty launch "
                 f"{gpu.get('launch_us', 0):.2f} µs.")
    lines.append("")
    # meta.json's "tables_elsewhere" names the patterns (and "python") whose table another
    # machine's section shows for later builds (a line here says where; the rows stay in the JSON).
    elsewhere = m.meta.get("tables_elsewhere", {})

    def shown_elsewhere(heading, key, file_name, count):
        json_path = os.path.relpath(os.path.join(m.folder, file_name),
                                    os.path.dirname(os.path.abspath(out_path)))
        return [heading, "", f"Shown for later builds in {elsewhere[key]}; this machine's "
                f"rows ({count}): [{file_name}]({json_path}).", ""]

    for pattern in PATTERNS:
        rows = m.bench.get((pattern, "cuda"))
        if not rows:
            continue
        if pattern in elsewhere:
            lines += shown_elsewhere(f"### {pattern}, CUDA `fast`", pattern,
                                     f"bench-{pattern}-cuda.json", len(rows))
            continue
        # "dtypes_elsewhere": {pattern: {"dtypes": [...], "where": "..."}} leaves out the rows of
        # those dtypes, which another machine's section shows for later builds.
        left_out = m.meta.get("dtypes_elsewhere", {}).get(pattern, {})
        dtypes_out = set(left_out.get("dtypes", []))
        body, baselines = headline([r for r in rows if r["dtype"] not in dtypes_out], pattern)
        lines += [f"### {pattern}, CUDA `fast`", "",
                  "µs per call (speed-up over " + (", ".join(baselines) or "the baseline") +
                  " in the same run; % of the measured peak at the largest size):", ""]
        lines += body + [""]
        if dtypes_out:
            lines += [f"Not shown: the rows of {', '.join(left_out['dtypes'])} (shown for later "
                      f"builds in {left_out['where']}; all rows are in the JSON).", ""]
        if pattern == "histogram" and m.histogram_floor:
            lines += histogram_floor(m.histogram_floor, m.histogram_opencl_floor) + [""]
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
    summaries, folded = [], []
    for pattern in PATTERNS:
        cu, cl = m.bench.get((pattern, "cuda")), m.bench.get((pattern, "opencl"))
        if cu and cl:
            cl_fast = [r for r in cl if r["variant"] == "fast"]
            cu_fast = [r for r in cu if r["variant"] == "fast"]
            s = ratio_summary(cl_fast, cu_fast, pattern)
            if s:
                summaries.append(s)
            if pattern == "histogram":  # a line per dtype: each has its own rules and layouts
                per_dtype = {}
                for dtype in dict.fromkeys(r["dtype"] for r in cl_fast):
                    s = ratio_summary([r for r in cl_fast if r["dtype"] == dtype], cu_fast,
                                      f"histogram {dtype}")
                    if s:
                        per_dtype[dtype] = s
                kept, folded = fold_twin_summaries(per_dtype)
                summaries += kept
    if summaries:
        lines += ["### NVIDIA OpenCL against CUDA (`fast`, time OpenCL / CUDA)", ""]
        lines += table(["pattern", "cases", "geometric mean", "cases ≥ 100 µs", "best case", "worst case"],
                       summaries)
        lines += [""]
        if folded:
            lines += ["Not shown: " + "; ".join(folded) + " (all rows are in the JSON).", ""]
        if m.local_memory:
            lines += opencl_local_memory(m.local_memory) + [""]
    lines += cpu_against_numpy(m)
    for backend, doc in m.barrier.items():
        lines += [f"### Grid barrier, {backend}: µs per barrier, blocks of 128 (× cg in the same run)", ""]
        lines += barrier_tables(doc) + [""]
    if m.io:
        lines += io_section(m.io, m) + [""]
    if m.python and "python" in elsewhere:
        lines += shown_elsewhere("### Python (`python -m parpat.bench`)", "python",
                                 "bench-python.json", len(m.python.get("rows", [])))
    elif m.python:
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
check). `bench/results/README.md` lists every build and command behind these tables. What was
tried and not kept is in the git history and in `bench/tuning/`."""


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
    provenance_path = os.path.join(args.results, PROVENANCE)
    provenance = os.path.relpath(provenance_path, os.path.dirname(os.path.abspath(args.out)))
    lines = ["# parpat benchmarks", "", METHOD, ""]
    for k, m in enumerate(machines):
        scaling_before = any(o.scaling and not o.bench for o in machines[:k])
        lines += machine_section(m, plots_dir, args.out, provenance, scaling_before)
    lines += REPRODUCE.splitlines() + [""]
    with open(args.out, "w") as f:
        f.write("\n".join(lines))
    with open(provenance_path, "w") as f:
        f.write("\n".join(provenance_page(machines)))
    print(f"wrote {args.out}: {len(lines)} lines from {len(machines)} machine(s), and "
          f"{provenance_path}")


if __name__ == "__main__":
    main()
