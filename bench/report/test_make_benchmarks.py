#!/usr/bin/env python3
"""Checks make_benchmarks.py on a synthetic results folder with known numbers: the speed-ups,
the OpenCL / CUDA and regression ratios it prints, and the length of the document. Exits 1 on a
mismatch (run by CTest)."""
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


def write(path, doc):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump(doc, f)


def main():
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        m = os.path.join(tmp, "results", "gpu")
        write(os.path.join(m, "meta.json"), {"date": "2026-01-02", "commit": "abc1234",
                                              "commands": ["scripts/gpu-suite.sh bench"]})
        write(os.path.join(m, "info.json"), {"devices": [
            {"backend": "cuda", "name": "Test GPU", "version": "sm_90", "read_gbps": 5000.0,
             "fma_gflops": 60000.0, "launch_us": 3.0}]})
        cuda = [row("reduce", "fast", "float32", "sum", "2^20", 0.004, 0.005),
                row("reduce", "fast", "float32", "sum", "2^28", 0.400, 0.400)]
        write(os.path.join(m, "bench-reduce-cuda.json"), {"rows": cuda})
        write(os.path.join(m, "bench-reduce-opencl.json"), {"rows": [
            row("reduce", "fast", "float32", "sum", "2^20", 0.008, backend="opencl"),
            row("reduce", "fast", "float32", "sum", "2^28", 0.440, backend="opencl")]})
        write(os.path.join(m, "previous", "bench-reduce-cuda.json"), {"rows": [
            row("reduce", "fast", "float32", "sum", "2^20", 0.004),
            row("reduce", "fast", "float32", "sum", "2^28", 0.500)]})
        out = os.path.join(tmp, "B.md")
        subprocess.run([sys.executable, os.path.join(HERE, "make_benchmarks.py"), "--results",
                        os.path.join(tmp, "results"), "--out", out, "--no-plots"], check=True)
        text = open(out).read()
        expect = {
            "speed-up over CUB at 2^20": "4.00 (1.25×)",
            "time and % of peak at 2^28": "400.0 (1.00×) 80 %",
            "OpenCL / CUDA geometric mean over both sizes": f"| {(2.0 * 1.1) ** 0.5:.3f} |",
            "OpenCL / CUDA over the case of at least 100 µs": "| 1.100 (1) |",
            "regression ratio of the large case": "| 0.800 (1) |",
            "device, date and build": "Measured 2026-01-02, build abc1234",
        }
        for what, needle in expect.items():
            if needle not in text:
                failures.append(f"{what}: '{needle}' not in the document")
        if len(text.splitlines()) > 300:
            failures.append(f"the document has {len(text.splitlines())} lines (at most 300)")
    for f in failures:
        print("FAILED:", f)
    print(f"{len(expect) + 1 - len(failures)} passed, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
