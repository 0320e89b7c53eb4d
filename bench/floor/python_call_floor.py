"""python_call_floor: the floor under one parpat call from Python on a torch CUDA tensor.

A reduction returned as a torch tensor costs at least the tensor's allocation (torch's
dispatcher and caching allocator) and a kernel launch; this probe times those parts alone,
beside torch.sum and parpat.sum on the same 1024-element tensor, in one process:

  torch.sum           torch's whole call: dispatch, allocation, launch;
  parpat.sum          parpat's whole call (a cached call signature);
  new_empty           x.new_empty((), dtype=float32): the allocation parpat's call makes;
  signature           parpat's key of the call (framework, dtype, shape, strides, device);
  launch              parpat's C++ call alone on fixed pointers: plan lookup and the launch;
  floor               new_empty + launch: what any Python call that returns a new torch tensor
                      from a parpat kernel pays before its own Python;
  device              the device time of one parpat.sum, queued behind a sleeping kernel.

Each is the mean of 20000 calls after a warm-up (the device keeps up: the kernels are shorter
than the calls). Prints JSON; `--json FILE` also writes it."""

import argparse
import json
import platform
import timeit

import torch

import parpat
from parpat import _api
from parpat import _frameworks as fw

CALLS = 20_000


def per_call_us(fn):
    fn()
    torch.cuda.synchronize()
    seconds = timeit.timeit(fn, number=CALLS)
    torch.cuda.synchronize()
    return seconds / CALLS * 1e6


def device_us(fn, batch=100):
    begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda._sleep(50_000_000)
    begin.record()
    for _ in range(batch):
        fn()
    end.record()
    end.synchronize()
    return begin.elapsed_time(end) * 1e3 / batch


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json", help="also write the result here")
    args = ap.parse_args()
    x = torch.rand(1024, device="cuda")
    parpat.sum(x)
    call = _api._parpat.ReduceCall(_api._open("cuda", x.get_device()), False, "float32", [1024],
                                   0, "sum", "all", "", 0.0, 1)
    out = x.new_empty(())
    ptr, out_ptr = x.data_ptr(), out.data_ptr()
    current = fw.torch_current_stream(fw.Where("torch", False, x.get_device()))
    stream = current()
    us = {
        "torch.sum": per_call_us(lambda: torch.sum(x)),
        "parpat.sum": per_call_us(lambda: parpat.sum(x)),
        "new_empty": per_call_us(lambda: x.new_empty((), dtype=torch.float32)),
        "signature": per_call_us(lambda: fw.signature(x)),
        "launch": per_call_us(lambda: call.run(ptr, out_ptr, stream)),
        "device": device_us(lambda: parpat.sum(x)),
    }
    us["floor"] = us["new_empty"] + us["launch"]
    result = {"probe": "python_call_floor", "device": torch.cuda.get_device_name(),
              "python": platform.python_version(), "torch": torch.__version__,
              "us_per_call": {k: round(v, 3) for k, v in us.items()}}
    print(json.dumps(result, indent=1))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
