#!/usr/bin/env python3
"""Board power and SM clock while one kernel kind is held for a few seconds: a bf16 GEMM and PyTorch
SDPA (causal, forward and forward + backward), with their achieved TFLOP/s, so that the draw per
TFLOP/s of attention can be set beside the GEMM's (the power law of docs/calibration.md is
calibrated on GEMMs and copies only). Run nvidia-smi beside it; this script prints the UTC window of
every phase and its rate.

    nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw --format=csv,noheader -lms 100 > smi.csv &
    python3 bench/pytorch/held_power.py --out phases.json [--hold-s 4]
"""
import argparse
import datetime
import json
import sys
import time

import torch
import torch.nn.functional as F


def now():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%H:%M:%S.%f")[:-3]


def hold(label, fn, flops, seconds):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    start, t0, calls = now(), time.time(), 0
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    a.record()
    while time.time() - t0 < seconds:
        for _ in range(8):
            fn()
        calls += 8
        torch.cuda.synchronize()
    b.record()
    b.synchronize()
    gpu_s = a.elapsed_time(b) * 1e-3
    row = {"phase": label, "start_utc": start, "end_utc": now(), "calls": calls,
           "tflops": flops * calls / gpu_s / 1e12}
    print(f"{label:34s} {row['start_utc']} – {row['end_utc']}  {row['tflops']:.0f} TFLOP/s", flush=True)
    time.sleep(1.5)  # idle between phases, for the samples' edges
    return row


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--hold-s", type=float, default=4.0)
    args = ap.parse_args()
    if not 0.5 <= args.hold_s <= 60:
        sys.exit("--hold-s must lie in [0.5, 60]")
    dev, dt = "cuda", torch.bfloat16
    n = 8192
    x, w = torch.randn(n, n, device=dev, dtype=dt), torch.randn(n, n, device=dev, dtype=dt)
    phases = [hold("gemm bf16 8192^3", lambda: torch.mm(x, w), 2.0 * n ** 3, args.hold_s)]
    del x, w
    bsz, s, h, d = 4, 4096, 32, 128
    q, k, v = (torch.randn(bsz, h, s, d, device=dev, dtype=dt, requires_grad=True) for _ in range(3))
    fwd_flops = 4.0 * bsz * h * s * s * d / 2  # causal
    phases.append(hold("sdpa causal fwd 4x32x4096x128", lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True),
                       fwd_flops, args.hold_s))
    g = torch.randn(bsz, h, s, d, device=dev, dtype=dt)

    def fwd_bwd():
        o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        o.backward(g)
    phases.append(hold("sdpa causal fwd+bwd 4x32x4096x128", fwd_bwd, 3.5 * fwd_flops, args.hold_s))
    out = {"what": "board power while one kernel kind is held (bench/pytorch/held_power.py); power and clock from nvidia-smi beside it",
           "command": "python3 bench/pytorch/held_power.py " + " ".join(sys.argv[1:]),
           "gpu": torch.cuda.get_device_name(0), "torch_version": torch.__version__, "phases": phases}
    with open(args.out, "w") as f:
        json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
