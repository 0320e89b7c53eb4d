#!/usr/bin/env python3
"""Collects the ranks stage's runs (ranks-K-MODE.log of scripts/gpu-suite.sh, one JSON answer
each) into ranks.json: per command, one row per way of running it, with the answer's digest so
the report can say whether every way gave the same answer. A pairwise run's answer is its C
(ranks-K-MODE.npy), the same answer when it is within 1e-4 of the one-rank C (the largest
difference over the largest |C|)."""
import glob
import hashlib
import json
import os
import re
import sys

COMMANDS = {"1": "reduce --op sum", "2": "reduce --op argmax",
            "3": "histogram --bins 1024 --range -4 4", "4": "histogram --bins 65536 --range -4 4",
            "5": "pairwise --kernel gaussian --h 0.1 (2^21 × 2^15)",
            "6": "pairwise --kernel product --brute-force (2^21 × 2^15)"}
TOLERANCE = 1e-4


def pairwise_answer(folder, k, mode):
    """'within 1e-4 of one rank', or how far it is, or 'no C' when a run wrote none."""
    import numpy as np
    try:
        one = np.load(os.path.join(folder, f"ranks-{k}-cuda.npy")).astype(np.float64)
        got = np.load(os.path.join(folder, f"ranks-{k}-{mode}.npy")).astype(np.float64)
    except (OSError, ValueError):
        return "no C"
    if got.shape != one.shape:
        return "another shape"
    err = float(np.max(np.abs(got - one), initial=0) / max(np.max(np.abs(one), initial=0), 1e-30))
    return f"within {TOLERANCE:g} of one rank" if err <= TOLERANCE else f"{err:.2g} from one rank"


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
        if answer.get("pattern") == "pairwise":
            digest = pairwise_answer(folder, m.group(1), m.group(2))
        runs.append({"command": COMMANDS.get(m.group(1), m.group(1)), "mode": m.group(2),
                     "ranks": answer.get("ranks", 1), "engine": answer.get("engine", ""),
                     "split": answer.get("split", ""),
                     "backend": answer["backend"], "wall_ms": answer["wall_ms"],
                     "time_ms": answer["time_ms"], "startup_ms": answer["startup_ms"],
                     "answer": hashlib.sha1(json.dumps(digest, sort_keys=True).encode()).hexdigest()[:12]})
    json.dump({"runs": runs}, open(out, "w"), indent=1)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
