"""The baseline of ranks_scaling's all-reduce row: torch.distributed over NCCL, one process per
GPU, all-reducing the counts of a 65536-bin histogram (65539 int64, 512 KiB) in GPU memory.
Each call is timed on rank 0 from the call to the end of a torch.cuda.synchronize(), as
ranks_scaling times its own (median of --repeat after a warm-up). The rows are appended to
--json (a JSON array, ranks_scaling's rows) when given.

    python torch_all_reduce.py [--gpus 2] [--repeat 150] [--json scaling.json]
"""
import argparse
import datetime
import json
import os
import socket
import statistics
import sys
import time

# Never NVLink multicast, here or in the ranks.
os.environ.update(NCCL_NVLS_ENABLE="0", NVSHMEM_DISABLE_NVLS="1",
                  TORCH_SYMM_MEM_DISABLE_MULTICAST="1")

SLOTS = 65539


def rank_main(rank, gpus, port, repeat, answer):
    import torch
    import torch.distributed as dist
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=gpus, timeout=datetime.timedelta(seconds=60))
    counts = torch.ones(SLOTS, dtype=torch.int64, device=f"cuda:{rank}")
    dist.all_reduce(counts)
    ok = bool((counts == gpus).all().item())
    ms = []  # the timed calls' sums wrap around; only the first was checked
    for k in range(20 + repeat):
        start = time.perf_counter()
        dist.all_reduce(counts)
        torch.cuda.synchronize()
        if k >= 20:
            ms.append((time.perf_counter() - start) * 1e3)
    dist.destroy_process_group()
    if rank == 0:
        answer.put((statistics.median(ms), ok, torch.__version__,
                    ".".join(map(str, torch.cuda.nccl.version()))))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gpus", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=150)
    parser.add_argument("--json")
    args = parser.parse_args()
    import torch.multiprocessing as mp
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    ctx = mp.get_context("spawn")
    answer = ctx.Queue()
    ranks = [ctx.Process(target=rank_main, args=(r, args.gpus, port, args.repeat, answer))
             for r in range(args.gpus)]
    for p in ranks:
        p.start()
    deadline = time.monotonic() + 180
    for p in ranks:
        p.join(max(0.0, deadline - time.monotonic()))
    stuck = [p for p in ranks if p.is_alive()]
    for p in stuck:
        p.terminate()
    if stuck or any(p.exitcode != 0 for p in ranks) or answer.empty():
        print("torch_all_reduce: a rank failed or took over 180 s", file=sys.stderr)
        return 2
    median_ms, ok, torch_version, nccl_version = answer.get()
    if not ok:
        print("torch_all_reduce: wrong sums", file=sys.stderr)
        return 2
    row = {"case": "all-reduce 65539 uint64 (device)", "engine": f"torch {torch_version} "
           f"(NCCL {nccl_version}, a process per GPU)", "ranks": args.gpus,
           "devices": f"{args.gpus} GPUs", "median_ms": median_ms, "bytes": SLOTS * 8.0}
    print(f"all-reduce 65539 int64, torch.distributed over {args.gpus} GPUs: "
          f"{median_ms * 1e3:.1f} µs")
    if args.json:
        with open(args.json) as f:
            rows = json.load(f)
        rows.append(row)
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
