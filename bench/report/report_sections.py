"""The optional sections of BENCHMARKS.md (make_benchmarks.py): the grid barrier, the CLI end to
end on files, ranks, the Python package, scaling over sizes and the CPU beside numpy."""

from report_tables import PATTERNS, case_shape, fmt_us, geomean, key, table


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

    rows, startups = [], set()
    for doc in docs:
        for r in doc.get("rows", []):
            file = r.get("file", "")
            if r.get("file_bytes", 0) <= 1024:  # the start-up file: once a backend and command
                seen = (doc.get("backend"), r.get("pattern"), file)
                if seen in startups:
                    continue
                startups.add(seen)
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
             "(wall − wall on the 1 KiB file of the same call, shown once)"
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


def histogram_floor(floor, opencl_floor=None):
    """The counter-update rates under histograms with many bins, one update per value; the
    traffic of sorting rows into buckets, on CUDA and (`opencl_floor`) through OpenCL."""
    def line(p):
        where = p["counters"] + (f", clusters of {p['cluster']}" if p["cluster"] else "")
        return (f"{where} over {p['bins']} bins {p['g_updates_per_s']:.0f} G/s "
                f"(≤ {4 * p['g_updates_per_s']:.0f} GB/s of 4-byte values)")
    probes = floor["probes"]
    lines = ["The most counter updates per second, whatever the input (`bench/floor/histogram_floor`: "
             "a resident grid, one update per value, no input read): "
             + "; ".join(line(p) for p in probes) + "."]
    if "traffic" in floor:
        steps = "; ".join(f"{t['step']} {t['us']:.0f} µs" for t in floor["traffic"])
        lines += ["", "The traffic of sorting rows into buckets, with none of its work (same probe, "
                  f"2^{floor['traffic_values'].bit_length() - 1} 4-byte values): {steps}. Rows "
                  f"through device memory allow at most {floor['rows_through_memory_gb_per_s']:.0f} "
                  "GB/s of 4-byte values; rows kept in the L2 chunk by chunk at most "
                  f"{floor['rows_kept_in_l2_gb_per_s']:.0f} GB/s"
                  + (f"; rows partitioned into 64 buckets as the sort does (no rule), then read back, at most "
                     f"{floor['rows_partitioned_gb_per_s']:.0f} GB/s"
                     if "rows_partitioned_gb_per_s" in floor else "") + "."]
    if opencl_floor:
        steps = "; ".join(f"{p['probe']} {p['us']:.0f} µs" for p in opencl_floor["probes"])
        how = "the PTX of the library's OpenCL kernels there" if opencl_floor["ptx"] else "OpenCL C"
        lines += ["", f"The same partition through OpenCL (platform “{opencl_floor['platform']}”, "
                  f"`bench/floor/histogram_opencl_floor`, {how}; "
                  f"2^{opencl_floor['n'].bit_length() - 1} 4-byte values): {steps}. Rows "
                  "partitioned, then read back, at most "
                  f"{opencl_floor['rows_partitioned_gb_per_s']:.0f} GB/s of 4-byte values."
                  + (" The 16-bit lines count the same bytes as 16-bit values, a row a value, as "
                     "`fast` counts int16 and uint16 at 65536 bins in 48 KiB of local memory: two "
                     "ranges of 8-bit fields (no carries, no flush), or one range of 5-bit fields "
                     "(every carry settled, every row flushed) on 2, 4 or 8 groups a compute unit."
                     if any(p["probe"].startswith("16-bit") for p in opencl_floor["probes"])
                     else "")]
    return lines


def opencl_local_memory(lm, over=1.25):
    """The OpenCL cases over `over` × CUDA, split by what CUDA's own kernels do held to the local
    memory NVIDIA's OpenCL gives a group (the faster of its 48 KiB runs), all from one call."""
    runs = lm["runs"]
    local = {b["backend"]: b["local_memory"] for b in lm["info"]}
    held = {}
    for name, rows in runs.items():
        if name.startswith("cuda-"):
            for r in rows:
                held[key(r)] = min(held.get(key(r), r["time_ms"]), r["time_ms"])
    opencl = {key(r): r["time_ms"] for r in runs["opencl"]}
    bound, other = [], []
    for r in runs["cuda"]:
        k = key(r)
        if k not in opencl or k not in held or opencl[k] <= over * r["time_ms"]:
            continue
        case = (f"{r['dtype']} {r['op']} {case_shape(r)}", opencl[k] / r["time_ms"],
                opencl[k] / held[k])
        (bound if case[2] <= 1.0 else other).append(case)
    if not bound and not other:
        return []
    kib = lambda b: f"{local.get(b, 0) // 1024} KiB"
    lines = [f"Where OpenCL takes over {over}× CUDA's time (a call of its own, build "
             f"{lm['meta'].get('commit', '?')}, `local-memory/`): NVIDIA's OpenCL gives a group "
             f"{kib('opencl')} of local memory, a CUDA block {kib('cuda')}. CUDA's own kernels held "
             "to 48 KiB (`PARPAT_TUNING=histogram.fast.shared_kib=48`; at 2^20 bins also with "
             "`histogram.fast.bucket_rows=8192`, so that its buckets fit; the faster) show what "
             f"that memory allows. {len(bound)} of the {len(bound) + len(other)} cases run on "
             "OpenCL no slower than on CUDA held to 48 KiB"]
    if bound:
        lines[0] += (f" (OpenCL / CUDA held: {min(c[2] for c in bound):.2f}–"
                     f"{max(c[2] for c in bound):.2f}): the local memory decides them")
    lines[0] += "."
    if other:
        lines[0] += (f" The other {len(other)} are not bound by it (OpenCL / CUDA, OpenCL / CUDA "
                     "held to 48 KiB): " +
                     "; ".join(f"{c[0]} {c[1]:.2f}, {c[2]:.2f}" for c in other) + ".")
    return lines


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
    line per pattern, dtype and size, each case's parpat time and × numpy (histograms: a data's
    cases after its name).
    meta.json's "dtypes_elsewhere" {"cpu <pattern>": {"dtypes": [...], "where": "..."}} leaves out
    the rows of those dtypes, which another machine's section shows for later builds."""
    left_out = {pattern: m.meta.get("dtypes_elsewhere", {}).get(f"cpu {pattern}", {})
                for pattern in PATTERNS}
    rows = [r for pattern in PATTERNS for r in m.bench.get((pattern, "cpu"), [])
            if r.get("baseline") == "numpy" and r.get("time_ms") and r.get("baseline_ms")
            and r["dtype"] not in left_out[pattern].get("dtypes", [])]
    if not rows:
        return []
    notes = [f"Not shown: the {pattern} rows of {', '.join(out['dtypes'])} (shown for later builds "
             f"in {out['where']}; all rows are in the JSON)." for pattern, out in left_out.items()
             if out.get("dtypes")]
    groups = {}
    for r in rows:  # reduce: a line per dtype and size; histogram: per dtype, its data in turn
        reduce = r["pattern"] == "reduce"
        bins, _, size = r["shape"].rpartition(", ")
        group = (r["pattern"], r["dtype"], r["shape"] if reduce else size)
        data = groups.setdefault(group, {}).setdefault("" if reduce else r["op"], [])
        data.append(f"{r['op'] if reduce else bins} {fmt_us(r['time_ms'])} µs "
                    f"({r['baseline_ms'] / r['time_ms']:.1f}×)")
    body = [[pattern, dtype, size, "; ".join(f"{op}: " + ", ".join(cases) if op else "; ".join(cases)
                                             for op, cases in by_op.items())]
            for (pattern, dtype, size), by_op in groups.items()]
    return ([f"### CPU of the same machine ({rows[0]['device']}), `parallel` against numpy in the "
             "same run", "", "parpat's time per case (× numpy):", ""] +
            table(["pattern", "dtype", "size", "cases"], body) + [""] +
            (notes + [""] if notes else []))
