#!/usr/bin/env python3
"""Sweeps the CUDA grid-barrier tuning knobs (src/barrier/tuning.hpp, `barrier.*`) in one run:
for each setting, `parpat barrier` with PARPAT_TUNING set measures `flip`, `hierarchical` and
cooperative groups' `cg` in the same process (latency at 1-16 blocks per SM x blocks of 128 and
256, the 2048-item stencil at groups of 1024, 64 and 32) and this prints every time as a ratio
to `cg` of the same run (targets: latency <= 0.75, stencil <= 0.80), then the best setting for
each point. All raw JSON goes to --out.

usage: barrier_sweep.py PARPAT [--out sweep.json] [--steps 100000] [--only A|B]
                          [--methods flip,hierarchical,cg]
"""
import argparse
import json
import os
import subprocess
import sys

# (name, PARPAT_TUNING); the empty setting is the policies' defaults.
SETTINGS = [
    ("defaults", ""),
    ("atoms everywhere", "barrier.flip.red_arrivals_max=0"),
    ("reds everywhere", "barrier.flip.red_arrivals_max=1000000"),
    ("block arrivals for small blocks", "barrier.flip.warp_arrivals_block_max=0"),
    ("warp arrivals everywhere", "barrier.flip.warp_arrivals_block_max=1024"),
    ("one level everywhere", "barrier.flip.one_level_max=1000000"),
    ("two levels above 200", "barrier.flip.one_level_max=200"),
    ("sub-words of 16", "barrier.flip.subword_blocks=16"),
    ("sub-words of 64", "barrier.flip.subword_blocks=64"),
    ("check every 64 polls", "barrier.flip.poll_check_every=64"),
    ("check every 16384 polls", "barrier.flip.poll_check_every=16384"),
    ("sleep 32 ns between polls everywhere", "barrier.flip.poll_sleep_from=0"),
    ("sleep 200 ns between polls everywhere",
     "barrier.flip.poll_sleep_ns=200,barrier.flip.poll_sleep_from=0"),
    ("no release lines", "barrier.flip.release_lines_from=1000000"),
    ("release lines everywhere", "barrier.flip.release_lines_from=0"),
    ("one release line everywhere", "barrier.flip.release_lines_from=0,barrier.flip.release_lines=1"),
    ("8 release lines everywhere", "barrier.flip.release_lines_from=0,barrier.flip.release_lines=8"),
    ("release lines everywhere, one level",
     "barrier.flip.release_lines_from=0,barrier.flip.one_level_max=1000000"),
    ("one level everywhere, atoms",
     "barrier.flip.one_level_max=1000000,barrier.flip.red_arrivals_max=0"),
    ("sub-words above 600", "barrier.flip.one_level_max=600"),
    ("one level up to 1100 arrivals", "barrier.flip.one_level_max=1100"),
    ("no sleep between polls", "barrier.flip.poll_sleep_ns=0"),
    ("sleep 16 ns from 1000 arrivals", "barrier.flip.poll_sleep_ns=16"),
    ("sleep 64 ns from 1000 arrivals", "barrier.flip.poll_sleep_ns=64"),
    ("sleep 32 ns from 500 arrivals", "barrier.flip.poll_sleep_from=500"),
    ("sleep 32 ns from 2000 arrivals", "barrier.flip.poll_sleep_from=2000"),
    ("one level everywhere, reds",
     "barrier.flip.one_level_max=1000000,barrier.flip.red_arrivals_max=1000000"),
    ("clusters of 2", "barrier.hierarchical.cluster=2"),
    ("clusters of 4", "barrier.hierarchical.cluster=4"),
    ("clusters of 16", "barrier.hierarchical.cluster=16"),
    ("no poll delay", "barrier.flip.poll_delay_from=1000000"),
    ("poll delay 600 cycles", "barrier.flip.poll_delay_cycles=600"),
    ("poll delay 1200 cycles", "barrier.flip.poll_delay_cycles=1200"),
    ("poll delay from 500 arrivals", "barrier.flip.poll_delay_from=500"),
    ("poll delay 200 cycles everywhere",
     "barrier.flip.poll_delay_from=0,barrier.flip.poll_delay_cycles=200"),
    ("poll delay 600 cycles from 500 arrivals",
     "barrier.flip.poll_delay_from=500,barrier.flip.poll_delay_cycles=600"),
    ("poll delay, no sleeps", "barrier.flip.poll_sleep_from=1000000"),
    ("no table", "barrier.flip.table_from=1000000"),
    ("table from 200 arrivals", "barrier.flip.table_from=200"),
    ("table, rows from 100 arrivals", "barrier.flip.table_rows_from=100"),
    ("table, rows from 200 arrivals", "barrier.flip.table_rows_from=200"),
    ("table, rows from 500 arrivals", "barrier.flip.table_rows_from=500"),
    ("table, rows of 264 arrivals", "barrier.flip.arrivals_per_row=264"),
    ("table, at most 4 rows", "barrier.flip.table_rows_max=4"),
    ("table, 2 columns", "barrier.flip.table_columns=2"),
    ("table, 8 columns", "barrier.flip.table_columns=8"),
    ("table, columns of 132 arrivals", "barrier.flip.arrivals_per_column=132"),
    ("table, 4 columns everywhere", "barrier.flip.arrivals_per_column=1000000"),
    ("table, up to 16 columns", "barrier.flip.table_columns_max=16"),
    ("table, 8 lines apart", "barrier.flip.table_stride_lines=8"),
    ("table, no delay", "barrier.flip.table_poll_delay=0"),
    ("table, delay 100", "barrier.flip.table_poll_delay=100"),
    ("table, delay 200", "barrier.flip.table_poll_delay=200"),
    ("table, delay 300", "barrier.flip.table_poll_delay=300"),
]


def run(parpat, tuning, steps, methods):
    env = dict(os.environ)
    env["PARPAT_TUNING"] = tuning
    cmd = [parpat, "barrier", "--backend", "cuda", "--method", methods,
           "--steps", str(steps), "--json"]
    p = subprocess.run(cmd, env=env, capture_output=True, text=True)
    lines = [l for l in p.stdout.splitlines() if l.startswith("{")]
    if not lines:
        return None, p.stderr.strip()
    return json.loads(lines[-1]), p.stderr.strip() if p.returncode else ""


def ratios(result):
    """{(kind, method, point): time / cg's time at the same point}."""
    out = {}
    lat = {}
    for r in result.get("latency", []):
        if "us_per_barrier" in r:
            lat[(r["method"], r["group_size"], r["groups_per_unit"])] = r["us_per_barrier"]
    for (m, g, per), t in lat.items():
        cg = lat.get(("cg", g, per))
        if m != "cg" and cg:
            out[("latency", m, f"{g}x{per}/SM")] = t / cg
    st = {(r["method"], r["group_size"]): r["time_ms"] for r in result.get("stencil", [])
          if "time_ms" in r and r.get("correct")}
    for (m, g), t in st.items():
        cg = st.get(("cg", g))
        if m != "cg" and cg:
            out[("stencil", m, f"group {g}")] = t / cg
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("parpat")
    ap.add_argument("--out", default="barrier-sweep.json")
    ap.add_argument("--steps", type=int, default=100000)
    ap.add_argument("--only", default=None,
                    help="run the settings whose name contains one of these ('|'-separated)")
    ap.add_argument("--methods", default="flip,hierarchical,cg",
                    help="the methods each setting measures (cg must be one)")
    args = ap.parse_args()
    raw = []
    best = {}
    for name, tuning in SETTINGS:
        if args.only and not any(part in name for part in args.only.split("|")):
            continue
        result, error = run(args.parpat, tuning, args.steps, args.methods)
        raw.append({"setting": name, "tuning": tuning, "result": result, "error": error})
        print(f"\n## {name}  (PARPAT_TUNING={tuning!r})" + (f"  ERROR: {error}" if error else ""))
        if result is None:
            continue
        for key, ratio in sorted(ratios(result).items()):
            kind, method, point = key
            target = 0.75 if kind == "latency" else 0.80
            mark = "met" if ratio <= target else ""
            print(f"{kind:8} {method:13} {point:14} {ratio:6.3f} x cg  {mark}")
            if key not in best or ratio < best[key][0]:
                best[key] = (ratio, name)
        sys.stdout.flush()
    print("\n## best setting per point (ratio to cg of the same run)")
    for key, (ratio, name) in sorted(best.items()):
        kind, method, point = key
        print(f"{kind:8} {method:13} {point:14} {ratio:6.3f}  {name}")
    json.dump(raw, open(args.out, "w"), indent=1)


if __name__ == "__main__":
    main()
