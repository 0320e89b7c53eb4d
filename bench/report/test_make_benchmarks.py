#!/usr/bin/env python3
"""Checks make_benchmarks.py on a synthetic results folder with known numbers: the speed-ups,
the OpenCL / CUDA and regression ratios it prints (the histogram's a line per dtype too), the
histogram floor's update rates and traffic, the OpenCL cases that NVIDIA's local memory decides,
the end-to-end files section (absent without bench-io.json, rendered with it), the CPU's rows
beside numpy, rows of one size as a line per dtype, a dtype whose rows repeat another's, a table
another machine's section shows, a machine with only scaling.json, and the length of the
document. Exits 1 on a mismatch (run by CTest)."""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def row(pattern, variant, dtype, op, shape, ms, baseline_ms=None, backend="cuda"):
    r = {"pattern": pattern, "backend": backend, "device": "Test GPU", "variant": variant,
         "dtype": dtype, "op": op, "shape": shape, "time_ms": ms, "bytes": 4e9 * ms / 1e3,
         "gbps": 4000.0, "pct_peak": 80.0, "verified": True}
    if baseline_ms:
        r.update(baseline="cub", baseline_ms=baseline_ms, speedup=baseline_ms / ms)
    return r


def io_row(pattern, file, file_bytes, wall_ms, chunks, chunk_kib=0, numpy_wall_ms=None,
           status="ok"):
    r = {"pattern": pattern, "file": file, "file_bytes": file_bytes, "chunk_kib": chunk_kib,
         "wall_ms": wall_ms, "startup_ms": 300.0, "time_ms": 1.0, "read_GBps": 20.0,
         "transfer_GBps": 25.0, "chunks": chunks, "passes": 1, "status": status, "runs": 3}
    if file_bytes > 1024:
        r["stream_GBps"] = file_bytes / (wall_ms - 400.0) / 1e6
    if numpy_wall_ms:
        r.update(numpy_wall_ms=numpy_wall_ms, numpy_ms=numpy_wall_ms - 150,
                 numpy_over_parpat=numpy_wall_ms / wall_ms)
    return r


def write(path, doc):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump(doc, f)


def machine(tmp, folder, gpu, date, commit, command):
    """A machine's results folder with its meta.json and info.json (one CUDA device)."""
    m = os.path.join(tmp, "results", folder)
    write(os.path.join(m, "meta.json"), {"date": date, "commit": commit, "commands": [command]})
    write(os.path.join(m, "info.json"), {"devices": [
        {"backend": "cuda", "name": gpu, "version": "sm_90", "read_gbps": 5000.0,
         "fma_gflops": 60000.0, "launch_us": 3.0}]})
    return m


def main():
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        m = machine(tmp, "gpu", "Test GPU", "2026-01-02", "abc1234", "scripts/gpu-suite.sh bench")
        cuda = [row("reduce", "fast", "float32", "sum", "2^20", 0.004, 0.005),
                row("reduce", "fast", "float32", "sum", "2^28", 0.400, 0.400),
                row("reduce", "fast", "float32", "count_nonzero", "2^28", 0.440)]
        write(os.path.join(m, "bench-reduce-cuda.json"), {"rows": cuda})
        write(os.path.join(m, "bench-reduce-opencl.json"), {"rows": [
            row("reduce", "fast", "float32", "sum", "2^20", 0.008, backend="opencl"),
            row("reduce", "fast", "float32", "sum", "2^28", 0.440, backend="opencl")]})
        write(os.path.join(m, "bench-histogram-cuda.json"), {"rows": [
            row("histogram", "fast", "int16", "uniform", "256 bins, 2^29", 0.300, 0.500),
            # bfloat16's rows are 10 % off float16's (kept), its OpenCL / CUDA within 4 % (folded).
            row("histogram", "fast", "float16", "uniform", "256 bins, 2^29", 0.300),
            row("histogram", "fast", "bfloat16", "uniform", "256 bins, 2^29", 0.330),
            row("histogram", "fast", "float32", "uniform", "256 bins, 2^28", 0.250, 0.300),
            # uint32 repeats int32 (2 % at most): left out; uint64 is 20 % off int64 once: kept.
            row("histogram", "fast", "int32", "uniform", "256 bins, 2^28", 0.200, 0.300),
            row("histogram", "fast", "int32", "uniform", "65536 bins, 2^28", 0.400, 0.800),
            row("histogram", "fast", "uint32", "uniform", "256 bins, 2^28", 0.204, 0.300),
            row("histogram", "fast", "uint32", "uniform", "65536 bins, 2^28", 0.396, 0.800),
            row("histogram", "fast", "int64", "uniform", "256 bins, 2^27", 0.300, 0.300),
            row("histogram", "fast", "uint64", "uniform", "256 bins, 2^27", 0.360, 0.300)]})
        write(os.path.join(m, "bench-histogram-opencl.json"), {"rows": [
            row("histogram", "fast", "int16", "uniform", "256 bins, 2^29", 0.360, backend="opencl"),
            row("histogram", "fast", "float16", "uniform", "256 bins, 2^29", 0.360, backend="opencl"),
            row("histogram", "fast", "bfloat16", "uniform", "256 bins, 2^29", 0.4092,
                backend="opencl"),
            row("histogram", "fast", "float32", "uniform", "256 bins, 2^28", 0.250,
                backend="opencl")]})
        write(os.path.join(m, "histogram-floor.json"), {
            "device": "Test GPU", "updates": 1 << 30,
            "probes": [{"counters": "global u64", "bins": 1048576, "cluster": 0, "blocks": 264,
                        "us": 10000.0, "g_updates_per_s": 100.0, "checked": True}],
            "traffic_values": 1 << 28,
            "traffic": [{"step": "read values (4 B)", "bytes_per_value": 4, "us": 250.0,
                         "gb_per_s": 4295.0, "checked": True},
                        {"step": "read rows (2 B)", "bytes_per_value": 2, "us": 130.0,
                         "gb_per_s": 4130.0, "checked": True},
                        {"step": "partition into 64 buckets, column atomics",
                         "bytes_per_value": 6, "us": 540.0, "gb_per_s": 2980.0, "checked": True}],
            "rows_through_memory_gb_per_s": 2044.4, "rows_kept_in_l2_gb_per_s": 2180.1,
            "rows_partitioned_gb_per_s": 1600.2})
        write(os.path.join(m, "histogram-opencl-floor.json"), {
            "device": "Test GPU", "platform": "Test OpenCL", "ptx": True, "n": 1 << 28,
            "probes": [{"probe": "partition, resident", "us": 430.0, "gb_per_s": 2497.0,
                        "checked": True},
                       {"probe": "rows read back", "us": 126.0, "gb_per_s": 8521.0,
                        "checked": True}],
            "rows_partitioned_gb_per_s": 1931.1})
        write(os.path.join(m, "previous", "bench-reduce-cuda.json"), {"rows": [
            row("reduce", "fast", "float32", "sum", "2^20", 0.004),
            row("reduce", "fast", "float32", "sum", "2^28", 0.500)]})
        write(os.path.join(m, "bench-python.json"), {"date": "2026-01-02", "reps": 20, "rows": [
            {"case": "sum float32 2^28", "library": "torch.sum", "ms": 0.5, "wall_ms": 0.6},
            {"case": "sum float32 2^28", "library": "cupy.sum", "ms": 0.55, "wall_ms": 0.7},
            {"case": "sum float32 2^28", "library": "parpat.sum", "ms": 0.4, "wall_ms": 0.5,
             "baseline_ms": 0.5, "baseline_wall_ms": 0.6},
            {"case": "bincount", "library": "torch.bincount", "wall_ms": 2.0},
            {"case": "bincount", "library": "parpat.bincount", "wall_ms": 1.0,
             "baseline_wall_ms": 2.0}]})
        cpu = [row("reduce", "parallel", "float32", op, "2^24", ms, backend="cpu")
               for op, ms in (("sum", 0.25), ("argmax", 0.0001))]
        cpu.append(row("histogram", "parallel", "float32", "uniform, float32 weights",
                       "256 bins, 2^24", 8.0, backend="cpu"))
        cpu.append(row("histogram", "parallel", "float32", "uniform, float32 weights",
                       "65536 bins, 2^24", 4.0, backend="cpu"))
        cpu.append(row("histogram", "parallel", "float32", "normal", "256 bins, 2^24", 2.0,
                       backend="cpu"))
        for r, numpy_ms in zip(cpu, (5.0, 0.0012, 128.0, 64.0, 32.0)):
            r.update(baseline="numpy", baseline_ms=numpy_ms, speedup=numpy_ms / r["time_ms"])
        write(os.path.join(m, "bench-reduce-cpu.json"), {"rows": cpu[:2]})
        write(os.path.join(m, "bench-histogram-cpu.json"), {"rows": cpu[2:]})
        lm = os.path.join(m, "local-memory")
        write(os.path.join(lm, "meta.json"), {"commit": "abc1234"})
        write(os.path.join(lm, "info.json"), {"devices": [
            {"backend": "cuda", "local_memory": 227 << 10},
            {"backend": "opencl", "local_memory": 48 << 10}]})
        shapes = ("65536 bins, 2^28", "1048576 bins, 2^28", "256 bins, 2^28")
        for name, times in (("cuda", (0.4, 1.0, 0.3)), ("cuda-48kib", (2.0, 3.0, 0.3)),
                            ("cuda-48kib-rows8192", (None, 1.2, None)),
                            ("opencl", (1.0, 3.0, 0.33))):
            write(os.path.join(lm, name + ".json"), {"rows": [
                row("histogram", "fast", "float32", "uniform", shape, ms,
                    backend="opencl" if name == "opencl" else "cuda")
                for shape, ms in zip(shapes, times) if ms]})
        out = os.path.join(tmp, "B.md")

        def generate():
            subprocess.run([sys.executable, os.path.join(HERE, "make_benchmarks.py"), "--results",
                            os.path.join(tmp, "results"), "--out", out, "--no-plots"], check=True)
            return open(out).read()

        if "End to end" in generate():
            failures.append("an end-to-end section without bench-io.json")
        gib = 1 << 30
        write(os.path.join(m, "bench-io.json"), {
            "bench": "io", "backend": "cuda", "device": "Test GPU", "device_label": "cuda:0 Test GPU",
            "date": "2026-01-03", "io_mib": 1024, "runs": 3, "numpy": "1.26.4",
            "cat": {"wall_ms": 100.0, "GBps": gib / 100.0 / 1e6},
            "rows": [io_row("histogram", "1 KiB", 1024, 400.0, 1, numpy_wall_ms=200.0),
                     io_row("histogram", "1024 MiB", gib, 600.0, 16, numpy_wall_ms=1500.0),
                     io_row("histogram", "1024 MiB", gib, 650.0, 8, chunk_kib=131072,
                            status="mismatch")]})
        write(os.path.join(m, "bench-io-large.json"), {
            "bench": "io", "backend": "cuda", "device": "Test GPU", "date": "2026-01-03",
            "io_mib": 4096, "rows": [io_row("histogram", "1 KiB", 1024, 432.0, 1),
                     io_row("histogram", "4096 MiB", 4 * gib, 900.0, 64)]})
        two = os.path.join(tmp, "results", "gpu-pair")
        write(os.path.join(two, "meta.json"), {"date": "2026-01-04", "commit": "def5678",
                                                "devices": "Two Test GPUs", "commands": ["x"]})

        def scaling_row(case, engine, ranks, ms, **extra):
            return dict(case=case, engine=engine, ranks=ranks, median_ms=ms, **extra)
        write(os.path.join(two, "scaling.json"), [
            scaling_row("sum float32", "one device", 1, 4.0),
            scaling_row("sum float32", "rank 0's part", 1, 2.1),
            scaling_row("sum float32", "parts at once", 2, 2.2),
            scaling_row("sum float32", "nccl", 2, 2.5, speedup=1.6),
            scaling_row("all-reduce 65539 uint64 (device)", "nccl", 2, 0.05),
            scaling_row("all-reduce 65539 uint64 (device)", "torch", 2, 0.03),
            scaling_row("download 512 KiB", "kept vector", 2, 0.08)])
        one = machine(tmp, "gpu-one-size", "Other GPU", "2026-01-05", "fed4321", "y")
        write(os.path.join(one, "bench-reduce-cuda.json"), {"rows": [
            row("reduce", "fast", "int16", "sum", "2^28", 0.0555, 0.100),
            row("reduce", "fast", "int8", "sum", "2^28", 0.064, 0.100),
            row("reduce", "fast", "int8", "argmin", "2^28", 0.150),
            row("reduce", "fast", "float32", "var", "2^28", 0.250)]})
        # A table that another machine's section shows: a line pointing there and to the JSON.
        meta = json.load(open(os.path.join(one, "meta.json")))
        meta["tables_elsewhere"] = {"histogram": "the Test GPU section",
                                    "python": "the Test GPU section"}
        meta["dtypes_elsewhere"] = {"reduce": {"dtypes": ["int16"], "where": "the Test GPU section"},
                                    "cpu histogram": {"dtypes": ["int32"],
                                                      "where": "the Test GPU section"}}
        write(os.path.join(one, "meta.json"), meta)
        cpu_rows = [row("histogram", "parallel", dtype, "uniform", "256 bins, 2^24", ms,
                        backend="cpu") for dtype, ms in (("int32", 3.333), ("uint8", 1.0))]
        for r in cpu_rows:
            r.update(baseline="numpy", baseline_ms=100.0, speedup=100.0 / r["time_ms"])
        write(os.path.join(one, "bench-histogram-cpu.json"), {"rows": cpu_rows})
        write(os.path.join(one, "bench-histogram-cuda.json"), {"rows": [
            row("histogram", "fast", "uint8", "uniform", "256 bins, 2^30", 0.777, 0.900)]})
        write(os.path.join(one, "bench-python.json"), {"rows": [
            {"case": "sum float32 2^28", "library": "parpat.sum", "ms": 0.4242, "wall_ms": 0.5}]})
        text = generate()
        if "777.0" in text:
            failures.append("a table shown elsewhere: its rows are still in the document")
        if "55.5" in text:
            failures.append("rows of a dtype shown elsewhere: still in the document")
        if "3333.0" in text:
            failures.append("CPU rows of a dtype shown elsewhere: still in the document")
        if "424.20" in text:
            failures.append("a Python table shown elsewhere: its rows are still in the document")
        expect = {
            "a table shown elsewhere: where, and the JSON of its rows":
                "Shown for later builds in the Test GPU section; this machine's rows (1): "
                "[bench-histogram-cuda.json](",
            "rows of a dtype shown elsewhere: a line says which and where":
                "Not shown: the rows of int16 (shown for later builds in the Test GPU section; "
                "all rows are in the JSON).",
            "CPU rows of a dtype shown elsewhere: a line says which and where":
                "Not shown: the histogram rows of int32 (shown for later builds in the Test GPU "
                "section; all rows are in the JSON).",
            "CPU rows of the other dtypes stay": "| histogram | uint8 | 2^24 | uniform: 256 bins "
                "1000.0 µs (100.0×) |",
            "a Python table shown elsewhere: where, and the JSON of its rows":
                "Shown for later builds in the Test GPU section; this machine's rows (1): "
                "[bench-python.json](",
            "rows of one size: a column per op": "| dtype, 2^28 | sum | argmin | var |\n",
            "rows of one size: a line per dtype, blank where not measured":
                "| int8 | 64.0 (1.56×) 80 % | 150.0 80 % |  |\n",
            "scaling section heading": "## Two Test GPUs",
            "scaling row: one GPU, part alone, parts at once, ranks with the speed-up":
                "| sum float32 | 4.00 | 2.10 | 2.20 | 2.50 (1.60×) |",
            "Python: one row a case, the other libraries beside parpat":
                "| sum float32 2^28 | 400.00 µs / 500.00 µs | torch.sum 500.00 µs / 600.00 µs; "
                "cupy.sum 550.00 µs / 700.00 µs | 1.25×, 1.20× |",
            "Python: a wall time alone keeps its column": "| bincount | — / 1.000 ms | "
                "torch.bincount — / 2.000 ms | 2.00× |",
            "the all-reduce alone in µs, its baseline beside it":
                "device memory over nccl 50; device memory over torch 30.",
            "the probes' engines are not columns of the table":
                "| case | one GPU | rank 0's part alone | parts at once | 2 GPUs over nccl |\n",
            "the download probe": "512 KiB into a kept vector 80.",
            "speed-up over CUB at 2^20": "4.00 (1.25×)",
            "time and % of peak at 2^28": "400.0 (1.00×) 80 %",
            "OpenCL / CUDA geometric mean over both sizes": f"| {(2.0 * 1.1) ** 0.5:.3f} |",
            "OpenCL / CUDA over the case of at least 100 µs": "| 1.100 (1) |",
            "regression ratio of the large case": "| 0.800 (1) |",
            "OpenCL / CUDA histogram, a line per dtype":
                "| histogram int16 | 1 | 1.200 | 1.200 (1) |",
            "device, date and build": "Measured 2026-01-02, build abc1234",
            "a dtype that repeats its partner's rows: a line says which, how close":
                "Not shown: the uint32 rows, within 2 % of int32's on every case (all rows are in "
                "the JSON).",
            "a dtype further from its partner keeps its rows": "| uint64 | uniform | 2^27 |",

            "histogram floor: the update rate and the 4-byte input it allows":
                "global u64 over 1048576 bins 100 G/s (≤ 400 GB/s of 4-byte values).",
            "histogram floor: the traffic steps and the two ceilings of sorted rows":
                "(same probe, 2^28 4-byte values): read values (4 B) 250 µs; read rows (2 B) 130 µs; "
                "partition into 64 buckets, column atomics 540 µs. Rows through device memory allow "
                "at most 2044 GB/s of 4-byte values; rows kept in the L2 chunk by chunk at most "
                "2180 GB/s; rows partitioned into 64 buckets as the sort does (no rule), then "
                "read back, at most 1600 GB/s.",
            "histogram floor: the same partition through OpenCL":
                "The same partition through OpenCL (platform “Test OpenCL”, "
                "`bench/floor/histogram_opencl_floor`, "
                "the PTX of the library's OpenCL kernels there; 2^28 4-byte values): partition, "
                "resident 430 µs; rows read back 126 µs. Rows partitioned, then read back, at most "
                "1931 GB/s of 4-byte values.",
            "end-to-end heading": "### End to end: files (`parpat bench io`, float32 .npy)",
            "end-to-end row: wall, start-up, kernel, stream GB/s, numpy in Python and whole, ratio":
                "| cuda | histogram | 1024 MiB | 16 | 600 | 300 | 1.0 | 5.37 | 25.00 | 1350 | 1500 | 2.50 |",
            "end-to-end start-up floor row": "| histogram | 1 KiB | 1 | 400 | 300 | 1.0 | — |",
            "end-to-end capped row, its mismatch marked":
                "| histogram | 1024 MiB, chunks ≤ 128 MiB | 8 | 650 ✗ mismatch |",
            "end-to-end cat rate": "`cat` reads the files at 10.7 GB/s",
            "OpenCL over 1.25× CUDA: the local memory of each, the cases it decides":
                "gives a group 48 KiB of local memory, a CUDA block 227 KiB. CUDA's own kernels "
                "held to 48 KiB",
            "OpenCL over 1.25× CUDA: the held CUDA's faster run decides":
                "1 of the 2 cases run on OpenCL no slower than on CUDA held to 48 KiB (OpenCL / "
                "CUDA held: 0.50–0.50)",
            "OpenCL over 1.25× CUDA: a case the local memory does not decide":
                "The other 1 are not bound by it (OpenCL / CUDA, OpenCL / CUDA held to 48 KiB): "
                "float32 uniform 1048576 bins, 2^28 3.00, 2.50.",
            "CPU against numpy: a reduce line a dtype, its ops with time and ratio":
                "| reduce | float32 | 2^24 | sum 250.0 µs (20.0×); argmax 0.10 µs (12.0×) |",
            "CPU against numpy: a histogram line a dtype and size, each data's cases after it":
                "| histogram | float32 | 2^24 | uniform, float32 weights: 256 bins 8000.0 µs (16.0×), "
                "65536 bins 4000.0 µs (16.0×); normal: 256 bins 2000.0 µs (16.0×) |",
            "OpenCL / CUDA: a twin dtype's line within 5 % of its partner's, left out":
                "Not shown: the bfloat16 line, its geometric mean within 4 % of float16's (all rows "
                "are in the JSON).",
            "a twin op folded": "`count_nonzero`, within 10 % of `sum` on every case",
            "end-to-end: the start-up file of a second call is not shown again":
                "| cuda | histogram | 4096 MiB | 64 |",
        }
        if "| 1 KiB | 1 | 432 |" in text:
            failures.append("end-to-end: the start-up file of a second call shown again")
        if "| uint32 |" in text or "| histogram bfloat16 |" in text:
            failures.append("a dtype that repeats its partner's rows: still in the document")
        for what, needle in expect.items():
            if needle not in text:
                failures.append(f"{what}: '{needle}' not in the document")
        # The builds and commands, a line each, on a page of their own that the document links.
        provenance = open(os.path.join(tmp, "results", "README.md")).read()
        needle = "## `gpu/`: Test GPU\n\nBuilds: abc1234.\n\n- scripts/gpu-suite.sh bench\n"
        if needle not in provenance:
            failures.append(f"the builds and commands: '{needle}' not in results/README.md")
        if len(text.splitlines()) > 300:
            failures.append(f"the document has {len(text.splitlines())} lines (at most 300)")
    for f in failures:
        print("FAILED:", f)
    print(f"{len(expect) + 4 - len(failures)} passed, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
