#!/usr/bin/env python3
"""The GPU's idle time between dependent PyTorch kernels issued eagerly while the host runs ahead:
the time a training step loses at every kernel boundary beyond the kernels' own durations.

A chain of N dependent kernels of one kind (bf16 elementwise add, RMSNorm, a GEMM) is queued behind
a long spin kernel, so that the host has issued every launch before the GPU reaches the first one;
the chain's time (CUDA events around it) minus its kernels' summed durations (torch.profiler, the
same chain) is the idle time, divided by the N − 1 boundaries. The same chain replayed from a CUDA
graph gives the graph's gap for comparison. Median of several repeats per kind and size.

    python3 bench/pytorch/kernel_gap.py --out OUT.json [--chain 400] [--repeats 5]
"""
import argparse
import datetime
import json
import statistics
import sys

import torch
import torch.nn.functional as F


def kinds(dev):
    """(label, make operands, one dependent step) per kind; sizes chosen for ~5–200 µs kernels."""
    out = []
    for n in (1 << 20, 1 << 23, 1 << 26):
        def make(n=n):
            return [torch.randn(n, device=dev, dtype=torch.bfloat16), torch.randn(n, device=dev, dtype=torch.bfloat16)]
        out.append((f"add bf16 {n} elements", make, lambda x, y: torch.add(x, y, out=x)))
    for rows in (4096, 32768):
        def make(rows=rows):
            return [torch.randn(rows, 4096, device=dev, dtype=torch.bfloat16),
                    torch.ones(4096, device=dev, dtype=torch.bfloat16)]
        out.append((f"rms_norm bf16 {rows}x4096", make, lambda x, w: x.copy_(F.rms_norm(x, (4096,), w))))
    for m in (1024, 4096):
        def make(m=m):
            return [torch.randn(m, 4096, device=dev, dtype=torch.bfloat16) * 0.01,
                    torch.randn(4096, 4096, device=dev, dtype=torch.bfloat16) * 0.01]
        out.append((f"gemm bf16 {m}x4096x4096", make, lambda x, w: x.copy_(torch.mm(x, w))))
    return out


def chain_seconds(step, ops, n, lead_cycles):
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize()
    torch.cuda._sleep(lead_cycles)
    a.record()
    for _ in range(n):
        step(*ops)
    b.record()
    b.synchronize()
    return a.elapsed_time(b) * 1e-3


def kernel_seconds(step, ops, n):
    """Summed GPU durations of the chain's kernels and their count (torch.profiler)."""
    from torch.profiler import ProfilerActivity, profile
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(n):
            step(*ops)
        torch.cuda.synchronize()
    total, count = 0.0, 0
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA:
            total += e.device_time * 1e-6
            count += 1
    return total, count


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--chain", type=int, default=400)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    if args.chain < 10 or args.repeats < 1:
        sys.exit("--chain must be at least 10 and --repeats at least 1")
    dev = "cuda"
    res = {"what": "GPU idle per boundary between dependent eager PyTorch kernels, host ahead (bench/pytorch/kernel_gap.py)",
           "command": "python3 bench/pytorch/kernel_gap.py " + " ".join(sys.argv[1:]),
           "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
           "gpu": torch.cuda.get_device_name(0), "torch_version": torch.__version__, "chain": args.chain, "kinds": []}
    n = args.chain
    for label, make, step in kinds(dev):
        ops = make()
        for _ in range(20):
            step(*ops)
        ksum, kcount = kernel_seconds(step, ops, n)
        per_kernel = ksum / max(kcount, 1)
        lead = int(2e9 * min(0.2, max(0.002, 20e-6 * n)))  # the host issues n launches while it spins
        eager = statistics.median(chain_seconds(step, ops, n, lead) for _ in range(args.repeats))
        g = torch.cuda.CUDAGraph()
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            step(*ops)
        torch.cuda.current_stream().wait_stream(s)
        torch.cuda.synchronize()
        with torch.cuda.graph(g):
            for _ in range(n):
                step(*ops)
        graph_t = []
        for _ in range(args.repeats):
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            torch.cuda._sleep(lead)
            a.record()
            g.replay()
            b.record()
            b.synchronize()
            graph_t.append(a.elapsed_time(b) * 1e-3)
        graph = statistics.median(graph_t)
        del g
        row = {"kind": label, "kernels": kcount, "kernel_us": per_kernel * 1e6,
               "eager_chain_s": eager, "graph_chain_s": graph,
               "eager_gap_us": (eager - ksum) / max(kcount - 1, 1) * 1e6,
               "graph_gap_us": (graph - ksum) / max(kcount - 1, 1) * 1e6}
        print(f"{label:28s} {kcount:5d} kernels of {row['kernel_us']:8.2f} us: eager gap {row['eager_gap_us']:6.2f} us, "
              f"graph gap {row['graph_gap_us']:6.2f} us", flush=True)
        res["kinds"].append(row)
    with open(args.out, "w") as f:
        json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
