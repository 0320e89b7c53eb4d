#!/usr/bin/env python3
"""Collects the ranks stage's runs (ranks-K-MODE.log of scripts/gpu-suite.sh, one JSON answer
each) into ranks.json: per command, one row per way of running it, with the answer's digest so
the report can say whether every way gave the same answer."""
import glob
import hashlib
import json
import os
import re
import sys

COMMANDS = {"1": "reduce --op sum", "2": "reduce --op argmax",
            "3": "histogram --bins 1024 --range -4 4", "4": "histogram --bins 65536 --range -4 4"}


def main(folder, out):
    runs = []
    for path in sorted(glob.glob(os.path.join(folder, "ranks-*.log"))):
        m = re.match(r"ranks-(\d+)-(.+)\.log$", os.path.basename(path))
        if not m:
            continue
        try:
            answer = json.load(open(path))
        except ValueError:
            continue
        digest = {k: answer.get(k) for k in ("result", "index", "counts", "underflow", "overflow")}
        runs.append({"command": COMMANDS.get(m.group(1), m.group(1)), "mode": m.group(2),
                     "ranks": answer.get("ranks", 1), "engine": answer.get("engine", ""),
                     "backend": answer["backend"], "wall_ms": answer["wall_ms"],
                     "time_ms": answer["time_ms"], "startup_ms": answer["startup_ms"],
                     "answer": hashlib.sha1(json.dumps(digest, sort_keys=True).encode()).hexdigest()[:12]})
    json.dump({"runs": runs}, open(out, "w"), indent=1)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
