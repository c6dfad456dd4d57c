"""Calibration: the GPU time of torch's fused AdamW step (torch.optim.AdamW(fused=True)) per
parameter, for fp32 parameters/gradients/states (AMP training) and bf16 ones (pure bf16), over
parameter sets shaped like LLaMA blocks (square and MLP matrices, norms) of 0.25-2 G parameters.
CUDA events around step(), warm-up, median of 20. Output JSON: seconds and ns per parameter per set."""
import argparse, json, statistics, time
import torch

def param_set(total, h, ffn, dtype):
    shapes = []
    n = 0
    while n < total:
        for s in [(h, h)] * 4 + [(ffn, h), (ffn, h), (h, ffn), (h,), (h,)]:
            shapes.append(s)
            n += torch.Size(s).numel()
    ps = [torch.nn.Parameter(torch.randn(s, device="cuda", dtype=dtype) * 0.02) for s in shapes]
    for p in ps:
        p.grad = torch.randn_like(p) * 1e-3
    return ps, n

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    rows = []
    for dtype, name in [(torch.float32, "fp32"), (torch.bfloat16, "bf16")]:
        for total, h, ffn in [(250e6, 2048, 5632), (500e6, 2048, 8192), (1e9, 4096, 11008), (2e9, 4096, 14336)]:
            ps, n = param_set(total, h, ffn, dtype)
            opt = torch.optim.AdamW(ps, lr=1e-5, fused=True)
            for _ in range(3):
                opt.step()
            torch.cuda.synchronize()
            ts = []
            for _ in range(20):
                e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                e0.record(); opt.step(); e1.record(); e1.synchronize()
                ts.append(e0.elapsed_time(e1) / 1e3)
            med = statistics.median(ts)
            bytes_per_param = 7 * (4 if dtype == torch.float32 else 2)  # read p, g, m, v; write p, m, v
            rows.append({"dtype": name, "params": n, "tensors": len(ps), "hidden": h, "ffn": ffn,
                         "seconds_median": med, "ns_per_param": 1e9 * med / n,
                         "GBps_of_7_accesses": bytes_per_param * n / med / 1e9})
            print(rows[-1], flush=True)
            del opt, ps
            torch.cuda.empty_cache()
    json.dump({"what": "torch fused AdamW step on the GPU per parameter (calibration)", "torch": torch.__version__,
               "gpu": torch.cuda.get_device_name(), "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
               "command": "python3 bench/pytorch/optimizer_step.py --out FILE", "rows": rows},
              open(a.out, "w"), indent=1)

if __name__ == "__main__":
    main()
