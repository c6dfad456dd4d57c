#!/usr/bin/env python3
"""Host time of a torch.compile step against the launches it issues: the tiny-shape block chain the
calibration measures (calibrate_framework.py --llama-block-impls compile) and the same module at
real widths (llama-0.4b's dimensions, short sequences so that the GPU waits on the host). Per
configuration: host µs per compiled forward and backward call (wall time until the call returns,
median of 15, no profiler) and the launches each call issues (cudaLaunchKernel / cuLaunchKernel /
memset / memcpy runtime calls counted in one profiled pass), so that host time per launch can be
compared between the calibration's shapes and a real model's.

    python3 bench/pytorch/compiled_host_launches.py --out launches.json
"""
import argparse
import datetime
import json
import statistics
import sys
import time

import torch

import llama_corpus

LAUNCH_CALLS = ("cudaLaunchKernel", "cuLaunchKernel", "cudaLaunchKernelExC", "cuLaunchKernelEx",
                "cudaMemsetAsync", "cudaMemcpyAsync")


def measure(name, dims, layers, mb, seq, precision, dev):
    h, heads, kv, ffn, vocab = dims
    llama_corpus.MODELS[name] = (h, layers, heads, kv, ffn, vocab, False, False)
    torch._dynamo.reset()
    torch.manual_seed(0)
    model, fwd = llama_corpus.build("compile", name, precision, False, seq, dev)
    idx = torch.randint(0, vocab, (mb, seq), device=dev)
    amp = precision == "amp"
    box = {}

    def f():
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=amp):
            box["loss"] = fwd(idx, idx)

    def b():
        box["loss"].backward()

    for _ in range(4):
        f()
        b()
    torch.cuda.synchronize()
    tf, tb = [], []
    for _ in range(15):
        for p in model.parameters():
            p.grad = None
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        f()
        t1 = time.perf_counter()
        torch.cuda.synchronize()
        t2 = time.perf_counter()
        b()
        t3 = time.perf_counter()
        torch.cuda.synchronize()
        tf.append(t1 - t0)
        tb.append(t3 - t2)
    counts = {}
    for phase, fn in (("forward", f), ("backward", b)):
        if phase == "forward":
            for p in model.parameters():
                p.grad = None
        torch.cuda.synchronize()
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU,
                                                torch.profiler.ProfilerActivity.CUDA]) as prof:
            fn()
            torch.cuda.synchronize()
        n = gpu = 0
        for e in prof.events():
            if e.name in LAUNCH_CALLS:
                n += 1
            if e.device_type == torch.autograd.DeviceType.CUDA:
                gpu += 1
        counts[phase] = n
        counts[phase + "_gpu_activities"] = gpu
    row = {"name": name, "layers": layers, "micro_batch": mb, "seq_len": seq, "precision": precision,
           "dims": dict(zip(("hidden", "heads", "kv_heads", "ffn", "vocab"), dims)),
           "host_us": {"forward": 1e6 * statistics.median(tf), "backward": 1e6 * statistics.median(tb)},
           "launches": counts}
    row["host_us_per_launch"] = {k: row["host_us"][k] / max(1, counts[k]) for k in ("forward", "backward")}
    print(f"{name:10s} L={layers:2d} {precision} mb={mb} s={seq}: host fwd {row['host_us']['forward']:8.0f} us "
          f"({counts['forward']} launches, {row['host_us_per_launch']['forward']:.1f} us each), bwd "
          f"{row['host_us']['backward']:8.0f} us ({counts['backward']} launches, "
          f"{row['host_us_per_launch']['backward']:.1f} us each); GPU activities {counts['forward_gpu_activities']} / "
          f"{counts['backward_gpu_activities']}", flush=True)
    return row


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    if not torch.cuda.is_available():
        sys.exit("needs a CUDA GPU")
    dev = torch.device("cuda")
    tiny = (64, 4, 2, 128, 256)  # calibrate_framework.py's tiny-host block
    real = (1024, 16, 4, 2816, 32000)  # llama-0.4b's widths
    out = {"what": "host time and launches of compiled LLaMA steps (bench/pytorch/compiled_host_launches.py)",
           "command": "python3 bench/pytorch/compiled_host_launches.py " + " ".join(sys.argv[1:]),
           "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
           "gpu": torch.cuda.get_device_name(0), "torch_version": torch.__version__, "rows": []}
    for precision in ("amp", "pure"):
        for name, dims, layers, mb, seq in (("tiny", tiny, 4, 1, 16), ("tiny", tiny, 12, 1, 16),
                                            ("real", real, 4, 1, 256), ("real", real, 12, 1, 256)):
            out["rows"].append(measure(name, dims, layers, mb, seq, precision, dev))
            with open(args.out, "w") as fh:
                json.dump(out, fh, indent=1)
                fh.write("\n")


if __name__ == "__main__":
    main()
