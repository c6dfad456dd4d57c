#!/usr/bin/env python3
"""Attention points for the board's power law: PyTorch SDPA (causal; forward, and forward + backward as
a training step runs it) held back to back under the power limit, in the format of the profile's
"power.points" (docs/calibration.md, "Sustained clock under the power limit"), so that the law can
give attention its own draw per FLOP (FlashAttention's softmax work runs on the FMA and SFU pipes,
which its matmul FLOPs do not count).

Per workload, as infraplan-calibrate --only power measures its own points:
  burst      after --rest-s of idle, a ~2 ms spin (the host queues ahead), then three units timed with
             CUDA events; the median of five such samples (the GPU at its top clock);
  sustained  the unit run back to back for --hold-s seconds; over the second half: seconds per unit
             (CUDA events), SM clock and board power (nvidia-smi every 100 ms, run by this script).
A bf16 GEMM 8192^3 is held first as this machine start's reference against the profile's own point.

    python3 bench/pytorch/attention_power.py --out attention_power.json [--hold-s 3] [--rest-s 0.5]

Merge the fit points into a profile with bench/calib/attention_power_to_profile.py.
"""
import argparse
import datetime
import json
import os
import statistics
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from smi_sampler import SmiSampler  # noqa: E402

# (label, pass, batch, heads, seq, head_dim, role): "fit" points may set the law's attention term,
# "holdout" points only check it.
WORKLOADS = [
    ("fwd+bwd", 4, 32, 4096, 128, "fit"),
    ("fwd", 8, 32, 4096, 128, "fit"),
    ("fwd+bwd", 8, 32, 4096, 64, "fit"),
    ("fwd", 2, 32, 8192, 128, "holdout"),
    ("fwd+bwd", 16, 32, 1024, 128, "holdout"),
    ("fwd", 16, 32, 4096, 64, "holdout"),
]


def burst_seconds(fn, rest_s):
    out = []
    for _ in range(5):
        torch.cuda.synchronize()
        time.sleep(rest_s / 5)
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        # A ~2 ms spin ahead of the timed units: the host has queued all three before the GPU
        # reaches them (a forward + backward is tens of eager kernels; with a short lead the host's
        # issue, not the GPU, would set a small unit's time).
        torch.cuda._sleep(4_000_000)
        a.record()
        for _ in range(3):
            fn()
        b.record()
        b.synchronize()
        out.append(a.elapsed_time(b) * 1e-3 / 3)
    return statistics.median(out)


def held(fn, hold_s, smi):
    """Seconds per unit, clock, power over the second half of a hold of hold_s seconds."""
    t_start = time.time()
    half = None
    calls = 0
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    while True:
        for _ in range(4):
            fn()
        torch.cuda.synchronize()
        now = time.time()
        if half is None and now - t_start >= hold_s / 2:
            half = now
            a.record()
            calls = 0
        elif half is not None:
            calls += 4
        if now - t_start >= hold_s:
            break
    b.record()
    b.synchronize()
    t_end = time.time()
    seconds = a.elapsed_time(b) * 1e-3 / max(calls, 1)
    w = smi.summary(half, t_end, min_samples=3)
    if w is None:
        raise RuntimeError("fewer than 3 nvidia-smi samples in the held window")
    return {"seconds": seconds, "units": calls, "clock_mhz": w["sm_mhz"], "nvml_clock_mhz": w["sm_mhz"],
            "power_w": w["power_w"], "temperature_c": w["temperature_c"], "samples": w["samples"]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--hold-s", type=float, default=3.0)
    ap.add_argument("--rest-s", type=float, default=0.5)
    args = ap.parse_args()
    if not 1.0 <= args.hold_s <= 30:
        sys.exit("--hold-s must lie in [1, 30]")
    if not 0.1 <= args.rest_s <= 10:
        sys.exit("--rest-s must lie in [0.1, 10]")
    dev, dt = "cuda", torch.bfloat16
    smi = SmiSampler(100)
    time.sleep(1.0)
    points = []
    try:
        n = 8192
        x, w = torch.randn(n, n, device=dev, dtype=dt), torch.randn(n, n, device=dev, dtype=dt)
        fn = lambda: torch.mm(x, w)  # noqa: E731
        fn()
        ref = {"kind": "gemm", "role": "reference", "dtype": "bf16", "m": n, "n": n, "k": n, "layout": "nn",
               "flops": 2.0 * n ** 3, "bytes": 2.0 * 3 * n * n,
               "burst": {"seconds": burst_seconds(fn, args.rest_s)}, "sustained": held(fn, args.hold_s, smi)}
        points.append(ref)
        print(f"gemm 8192^3: burst {ref['burst']['seconds']*1e3:.3f} ms, held {ref['sustained']['clock_mhz']:.0f} MHz "
              f"{ref['sustained']['power_w']:.0f} W", flush=True)
        del x, w
        for passes, bsz, h, s, d, role in WORKLOADS:
            q, k, v = (torch.randn(bsz, h, s, d, device=dev, dtype=dt, requires_grad=True) for _ in range(3))
            g = torch.randn(bsz, h, s, d, device=dev, dtype=dt)
            fwd_flops = 4.0 * bsz * h * s * s * d / 2  # QKᵀ and PV under the causal mask
            io = 2.0 * 4 * bsz * h * s * d  # q, k, v read, o written (bf16)
            if passes == "fwd":
                def fn():
                    with torch.no_grad():
                        F.scaled_dot_product_attention(q, k, v, is_causal=True)
                flops, nbytes = fwd_flops, io
            else:
                def fn():
                    o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
                    torch.autograd.grad(o, (q, k, v), g)
                # backward: dV, dP, dQ, dK and the recomputed scores: 2.5 x the forward's matmuls
                flops, nbytes = 3.5 * fwd_flops, io + 2.0 * 7 * bsz * h * s * d
            for _ in range(3):
                fn()
            torch.cuda.synchronize()
            p = {"kind": "attention", "role": role, "dtype": "bf16", "kernel": "torch-sdpa", "pass": passes,
                 "batch": bsz, "heads": h, "seq_len": s, "head_dim": d, "causal": True,
                 "flops": flops, "bytes": nbytes, "burst": {"seconds": burst_seconds(fn, args.rest_s)},
                 "sustained": held(fn, args.hold_s, smi)}
            points.append(p)
            print(f"sdpa {passes:7s} {bsz}x{h}x{s}x{d} ({role}): burst {p['burst']['seconds']*1e3:.3f} ms "
                  f"({flops/p['burst']['seconds']*1e-12:.0f} TFLOP/s), held {p['sustained']['clock_mhz']:.0f} MHz "
                  f"{p['sustained']['power_w']:.0f} W ({flops/p['sustained']['seconds']*1e-12:.0f} TFLOP/s)", flush=True)
            del q, k, v, g
            torch.cuda.empty_cache()
    finally:
        smi.close()
    out = {"what": "PyTorch SDPA held under the board power limit, as power-law points (bench/pytorch/attention_power.py)",
           "command": "python3 bench/pytorch/attention_power.py " + " ".join(sys.argv[1:]),
           "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
           "gpu": torch.cuda.get_device_name(0), "torch_version": torch.__version__,
           "sdpa_backends": {"flash": torch.backends.cuda.flash_sdp_enabled(),
                             "cudnn": torch.backends.cuda.cudnn_sdp_enabled()},
           "hold_s": args.hold_s, "rest_s": args.rest_s, "points": points}
    with open(args.out, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
