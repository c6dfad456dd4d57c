#!/usr/bin/env python3
"""Where a PyTorch training step of bench/pytorch/train_step.py spends GPU time (diagnosis data for
the training simulator; nothing here is fitted to it).

For each config: the step time without the profiler (CUDA events, median), then a torch.profiler
trace of a few steps (CPU ops with input shapes, CUDA kernels). From the trace, per step:
- GPU busy time (union of kernel, memcpy and memset intervals) against the step's wall time, so
  host-bound steps show as idle GPU;
- kernel time by kernel name, and by the innermost ATen op that launched it with that op's input
  shapes (GEMMs appear as aten::mm / aten::addmm with [M, K] × [K, N]);
- the number of kernels launched.

    python3 bench/pytorch/profile_step.py --out OUT.json [--configs gpt2-124m:4:0,gpt2-1.3b:8:1]
"""
import argparse
import collections
import datetime
import json
import os
import statistics
import sys
import tempfile

import torch
from torch.profiler import ProfilerActivity, profile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import train_step  # noqa: E402  (the model and step under study)

DEFAULT_CONFIGS = ("gpt2-124m:4:0,gpt2-124m:4:1,gpt2-124m:16:0,gpt2-350m:16:1,gpt2-760m:8:0,"
                   "gpt2-1.3b:8:0,gpt2-1.3b:16:1")


def union_length(intervals):
    total, end = 0.0, None
    start = None
    for s, e in sorted(intervals):
        if end is None or s > end:
            if end is not None:
                total += end - start
            start, end = s, e
        else:
            end = max(end, e)
    if end is not None:
        total += end - start
    return total


def analyse(trace, steps):
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    gpu = [e for e in events if e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
    ops = {}
    for e in events:
        if e.get("ph") == "X" and e.get("cat") == "cpu_op":
            ext = e.get("args", {}).get("External id")
            if ext is not None:
                ops[ext] = e
    if not gpu:
        return {"error": "no GPU events in the trace"}
    t0 = min(e["ts"] for e in gpu)
    t1 = max(e["ts"] + e["dur"] for e in gpu)
    busy = union_length([(e["ts"], e["ts"] + e["dur"]) for e in gpu])
    by_kernel = collections.defaultdict(lambda: [0, 0.0])
    by_op = collections.defaultdict(lambda: {"count": 0, "us": 0.0, "kernels": collections.Counter()})
    for e in gpu:
        k = by_kernel[e["name"][:160]]
        k[0] += 1
        k[1] += e["dur"]
        op = ops.get(e.get("args", {}).get("External id"))
        if op is not None:
            dims = op.get("args", {}).get("Input Dims")
            key = op["name"] + " " + json.dumps(dims, separators=(",", ":"))
        else:
            key = "(no op) " + e.get("cat", "")
        r = by_op[key]
        r["count"] += 1
        r["us"] += e["dur"]
        r["kernels"][e["name"][:80]] += 1
    kernels = sorted(({"name": n, "count": c / steps, "us_per_step": us / steps}
                      for n, (c, us) in by_kernel.items()), key=lambda r: -r["us_per_step"])
    by_op_rows = sorted(({"op": k, "launches_per_step": v["count"] / steps, "us_per_step": v["us"] / steps,
                          "kernels": dict(v["kernels"].most_common(3))} for k, v in by_op.items()),
                        key=lambda r: -r["us_per_step"])
    return {
        "profiled_steps": steps,
        "gpu_span_us_per_step": (t1 - t0) / steps,
        "gpu_busy_us_per_step": busy / steps,
        "kernel_sum_us_per_step": sum(e["dur"] for e in gpu) / steps,
        "gpu_events_per_step": len(gpu) / steps,
        "kernels": kernels[:80],
        "by_op": by_op_rows[:250],
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--configs", default=DEFAULT_CONFIGS, help="model:micro_batch:checkpointing(0/1),...")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--profiled-steps", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1234)
    args = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = True
    out = {
        "what": "torch.profiler breakdown of bench/pytorch/train_step.py steps",
        "command": "python3 bench/pytorch/profile_step.py " + " ".join(sys.argv[1:]),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "gpu": torch.cuda.get_device_name(0),
        "torch_version": torch.__version__,
        "cuda_version": torch.version.cuda,
        "configs": [],
    }
    for spec in args.configs.split(","):
        name, mb, ck = spec.split(":")
        mb, ck = int(mb), ck == "1"
        step, keep = train_step.make_step(name, mb, ck, args.seed)
        for _ in range(args.warmup):
            step()
        torch.cuda.synchronize()
        plain, _ = train_step.timed_steps(step, args.steps)
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], record_shapes=True) as prof:
            for _ in range(args.profiled_steps):
                step()
            torch.cuda.synchronize()
        with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
            path = f.name
        prof.export_chrome_trace(path)
        with open(path) as f:
            trace = json.load(f)
        os.unlink(path)
        res = {"model": name, "micro_batch": mb, "checkpointing": "every_block" if ck else "none",
               "step_seconds_median": statistics.median(plain), "step_seconds_min": min(plain),
               "step_seconds_max": max(plain)}
        res.update(analyse(trace, args.profiled_steps))
        out["configs"].append(res)
        print(f"{name:10s} mb={mb:3d} ckpt={'on ' if ck else 'off'} step {res['step_seconds_median']*1e3:8.1f} ms "
              f"gpu busy {res.get('gpu_busy_us_per_step', 0)/1e3:8.1f} ms "
              f"kernels {res.get('gpu_events_per_step', 0):7.0f}/step", flush=True)
        del step, keep, prof, trace
        torch.cuda.empty_cache()
        with open(args.out, "w") as f:
            json.dump(out, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
