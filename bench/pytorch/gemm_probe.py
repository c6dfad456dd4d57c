#!/usr/bin/env python3
"""PyTorch's bf16 GEMM times for the shapes of `infraplan-calibrate gemm-probe` (Y = X·Wᵀ as
nn.Linear computes it, without and with bias), timed like the calibration harness: CUDA events
around back-to-back calls of ≥ 200 µs, median, inputs rotated past L2.

    python3 bench/pytorch/gemm_probe.py --out OUT.json
"""
import argparse
import json
import statistics

import torch
import torch.nn.functional as F

SHAPES = [(8192, 6144, 2048), (8192, 2048, 2048), (8192, 8192, 2048), (8192, 2048, 8192), (16384, 2304, 768),
          (16384, 768, 768), (16384, 3072, 768), (16384, 768, 3072), (2048, 2048, 2048), (4096, 4096, 4096),
          (8192, 8192, 8192), (8192, 50257, 2048), (8192, 50304, 2048), (4096, 11008, 4096), (1024, 4096, 4096)]


def time_call(fn, copies):
    for i in range(3):
        fn(i % copies)
    torch.cuda.synchronize()
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    a.record()
    fn(0)
    b.record()
    b.synchronize()
    batch = max(1, min(256, int(0.2 / max(a.elapsed_time(b), 1e-3))))
    out, i = [], 0
    for _ in range(15):
        a.record()
        for _ in range(batch):
            fn(i % copies)
            i += 1
        b.record()
        b.synchronize()
        out.append(a.elapsed_time(b) / batch / 1e3)
    return statistics.median(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    dev = torch.device("cuda")
    rows = []
    for m, n, k in SHAPES:
        per = (m * k + n * k + m * n) * 2
        copies = max(1, min(16, int(3 * 60e6 / per) + 1))
        xs = [torch.randn(m, k, device=dev, dtype=torch.bfloat16) for _ in range(copies)]
        ws = [torch.randn(n, k, device=dev, dtype=torch.bfloat16) for _ in range(copies)]
        bs = [torch.randn(n, device=dev, dtype=torch.bfloat16) for _ in range(copies)]
        t_mm = time_call(lambda i: F.linear(xs[i], ws[i]), copies)
        t_bias = time_call(lambda i: F.linear(xs[i], ws[i], bs[i]), copies)
        f = 2.0 * m * n * k
        rows.append({"m": m, "n": n, "k": k, "linear_seconds": t_mm, "linear_bias_seconds": t_bias})
        print(f"{m}x{n}x{k}: linear {f/t_mm/1e12:.1f} TFLOP/s, with bias {f/t_bias/1e12:.1f}", flush=True)
        del xs, ws, bs
        torch.cuda.empty_cache()
    with open(args.out, "w") as fh:
        json.dump({"what": "torch F.linear bf16 times (bench/pytorch/gemm_probe.py)", "torch": torch.__version__,
                   "shapes": rows}, fh, indent=1)
        fh.write("\n")


if __name__ == "__main__":
    main()
