#!/usr/bin/env python3
"""Does Python's garbage collector set the host pace of a host-bound training step? One
configuration (default: plain llama-0.4b, AMP, checkpointed, micro-batch 4, 2,048 tokens), its
host seconds per step (llama_corpus.training_step, no synchronisation inside a step) in a fresh
process state, after many models were built and dropped in the same process, and with the
collector disabled while the steps run.

    python3 bench/pytorch/host_gc_probe.py --out OUT.json
"""
import argparse
import gc
import json
import statistics
import sys
import os
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import llama_corpus  # noqa: E402


def run(cfg, steps, warm):
    impl, name, precision, ckpt, mb, seq = cfg
    model, opt, step = llama_corpus.training_step(impl, name, precision, ckpt, mb, seq, torch.device("cuda"), 2026)
    for _ in range(warm):
        step()
    torch.cuda.synchronize()
    host = []
    total = llama_corpus.timed_steps(step, steps, host)  # as the corpus times its steps
    del model, opt, step
    torch.cuda.empty_cache()
    return {"host_ms": [x * 1e3 for x in host], "step_ms": [x * 1e3 for x in total],
            "host_ms_median": statistics.median(host) * 1e3, "step_ms_median": statistics.median(total) * 1e3,
            "gc_counts": list(gc.get_count()), "gc_objects": len(gc.get_objects())}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--config", default="plain,llama-0.4b,amp,1,4,2048")
    ap.add_argument("--steps", type=int, default=15)
    ap.add_argument("--warmup", type=int, default=3)
    args = ap.parse_args()
    c = args.config.split(",")
    cfg = (c[0], c[1], c[2], c[3] == "1", int(c[4]), int(c[5]))
    res = {"what": "host seconds per step of one host-bound configuration under three process states "
                   "(bench/pytorch/host_gc_probe.py)", "command": " ".join(sys.argv),
           "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "gpu": torch.cuda.get_device_name(),
           "config": args.config, "states": {}}
    order = [("fresh", None), ("gc_disabled", "disable"), ("fresh_again", None), ("after_garbage", "garbage"),
             ("after_garbage_gc_disabled", "garbage+disable")]
    kept = []
    for name, how in order:
        if how and "garbage" in how and not kept:
            # what a calibration loop leaves behind: many small models built and kept referenced
            for _ in range(40):
                kept.append(torch.nn.ModuleList(torch.nn.Linear(64, 64) for _ in range(50)))
        gc.collect()
        if how and "disable" in how:
            gc.disable()
        r = run(cfg, args.steps, args.warmup)
        gc.enable()
        res["states"][name] = r
        print(f"{name:28s} host {r['host_ms_median']:7.1f} ms  step {r['step_ms_median']:7.1f} ms  "
              f"objects {r['gc_objects']}", flush=True)
    with open(args.out, "w") as f:
        json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
