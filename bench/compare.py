#!/usr/bin/env python3
"""Joins two `parpat bench --json` files on (pattern, variant, dtype, op, shape) and prints a
markdown table of their times and the ratio, e.g. OpenCL against CUDA on the same GPU.

usage: compare.py A.json B.json [--variant fast] [--pattern reduce]
"""
import argparse
import json


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--variant", default=None)
    ap.add_argument("--pattern", default=None)
    args = ap.parse_args()
    a, b = (json.load(open(p)) for p in (args.a, args.b))
    key = lambda r: (r["pattern"], r["variant"], r["dtype"], r["op"], r["shape"])
    rows_b = {key(r): r for r in b["rows"]}
    print(f"| pattern | variant | dtype | op | shape | {a['backend']} (µs) | {b['backend']} (µs) "
          f"| {a['backend']} / {b['backend']} |")
    print("|---|---|---|---|---|---:|---:|---:|")
    for r in a["rows"]:
        other = rows_b.get(key(r))
        if other is None or r["time_ms"] <= 0 or other["time_ms"] <= 0:
            continue
        if args.variant and r["variant"] != args.variant:
            continue
        if args.pattern and r["pattern"] != args.pattern:
            continue
        print(f"| {r['pattern']} | {r['variant']} | {r['dtype']} | {r['op']} | {r['shape']} "
              f"| {r['time_ms'] * 1e3:.2f} | {other['time_ms'] * 1e3:.2f} "
              f"| {r['time_ms'] / other['time_ms']:.2f} |")


if __name__ == "__main__":
    main()
