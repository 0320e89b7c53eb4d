"""The tables and plots that make_benchmarks.py builds its sections from: loading results,
formatting times, the fastest variant per case, markdown tables and SVG plots."""

import glob
import json
import math
import os
import re

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
        floor_path = os.path.join(folder, "histogram-opencl-floor.json")
        self.histogram_opencl_floor = load(floor_path) if os.path.exists(floor_path) else None
        self.local_memory = self._local_memory(os.path.join(folder, "local-memory"))
        # bench-io.json, bench-io-opencl.json, bench-io-16g.json, ...: one section each
        self.io = sorted((load(p) for p in glob.glob(os.path.join(folder, "bench-io*.json"))),
                         key=lambda d: (d.get("io_mib", 0), d.get("backend") != "cuda"))

    @staticmethod
    def _rows(path):
        return load(path)["rows"] if os.path.exists(path) else []

    @staticmethod
    def _local_memory(folder):
        """local-memory/: CUDA `fast` by default (cuda.json), held to 48 KiB of shared memory
        (cuda-48kib*.json) and NVIDIA OpenCL (opencl.json), one call, with its meta and info."""
        if not os.path.isdir(folder):
            return None
        runs = {os.path.basename(p)[:-len(".json")]: load(p)["rows"]
                for p in glob.glob(os.path.join(folder, "*.json"))
                if os.path.basename(p) not in ("meta.json", "info.json")}
        return {"runs": runs, "meta": load(os.path.join(folder, "meta.json")),
                "info": load(os.path.join(folder, "info.json"))["devices"]}

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
