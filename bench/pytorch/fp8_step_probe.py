"""An fp8 training step of LLaMA-shaped layers on one GPU, next to the same step in bf16: what the
fp8 GEMMs cost inside a step and what the recipe's own kernels (amax, cast, transpose) add.

The fp8 recipe is written here with PyTorch ops, the way Transformer Engine lays out its data
(per-tensor current scaling, e4m3 everywhere): every linear layer casts its input to fp8 and keeps a
transposed fp8 copy for the weight gradient, casts its output gradient to fp8 with a transposed copy,
and runs three fp8 GEMMs through torch._scaled_mm (forward with fast accumulation, the two gradients
without, as Transformer Engine's recipe does); the weights are cast (and transposed) once per step.
PyTorch does cast and transpose as separate kernels where Transformer Engine fuses them, so the
recipe's kernels here are an upper bound of Transformer Engine's; the GEMMs are the same cuBLASLt
calls.

Per mode: step time (CUDA events, median of the timed steps), the SM clock and board power during
them (nvidia-smi), and one step under the profiler: GPU time by kernel class (gemm, attention, fp8
casts and transposes, reductions, other), every GEMM kernel's time in launch order.

  python3 bench/pytorch/fp8_step_probe.py [--layers 4] [--seq 4096] [--model llama2-7b] [--out F]
"""
import argparse
import collections
import json
import os
import re
import statistics
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from smi_sampler import SmiSampler  # noqa: E402

SHAPES = {  # hidden, heads, kv heads, ffn
    "llama2-7b": (4096, 32, 32, 11008),
    "llama3-8b": (4096, 32, 8, 14336),
    "llama2-13b": (5120, 40, 40, 13824),
}
E4M3 = torch.float8_e4m3fn
E4M3_MAX = 448.0


def to_fp8(x):
    """Per-tensor current scaling: (fp8 tensor, fp32 inverse scale)."""
    amax = x.abs().amax().float().clamp(min=1e-12)
    scale = E4M3_MAX / amax
    return (x.float() * scale).to(E4M3), (1.0 / scale).reshape(())


def mm8(a8, a_inv, b8_colmajor, b_inv, fast):
    return torch._scaled_mm(a8, b8_colmajor, scale_a=a_inv, scale_b=b_inv, out_dtype=torch.bfloat16,
                            use_fast_accum=fast)


class Fp8Linear(torch.autograd.Function):
    """y = x·Wᵀ with fp8 GEMMs; `wc` holds the weight's fp8 copies of this step (w8 row-major [out,in]
    and its transpose), made once per step."""

    @staticmethod
    def forward(ctx, x, w, wc):
        x2 = x.reshape(-1, x.shape[-1])
        x8, x_inv = to_fp8(x2)
        xt8 = x8.t().contiguous()  # [in, T]: the weight gradient's column-major operand
        y = mm8(x8, x_inv, wc["w8"].t(), wc["inv"], True)  # w8.t(): column-major [in, out]
        ctx.save_for_backward(xt8, x_inv)
        ctx.wc, ctx.shape = wc, x.shape
        return y.reshape(*x.shape[:-1], y.shape[-1])

    @staticmethod
    def backward(ctx, dy):
        xt8, x_inv = ctx.saved_tensors
        wc = ctx.wc
        dy2 = dy.reshape(-1, dy.shape[-1])
        dy8, dy_inv = to_fp8(dy2)
        dyt8 = dy8.t().contiguous()  # [out, T]
        dx = mm8(dy8, dy_inv, wc["wt8"].t(), wc["inv"], False)  # W as column-major [out, in]
        dw = mm8(dyt8, dy_inv, xt8.t(), x_inv, False)  # [out, T] x [T, in] (xt8.t(): column-major)
        return dx.reshape(ctx.shape), dw, None


class Layer(torch.nn.Module):
    def __init__(self, h, heads, kv, ffn, fp8):
        super().__init__()
        self.h, self.heads, self.kv, self.hd, self.fp8 = h, heads, kv, h // heads, fp8
        mk = lambda o, i: torch.nn.Parameter(torch.randn(o, i, device="cuda", dtype=torch.bfloat16) * i ** -0.5)
        self.wqkv = mk((heads + 2 * kv) * self.hd, h)
        self.wo = mk(h, h)
        self.wgu = mk(2 * ffn, h)
        self.wd = mk(h, ffn)
        self.n1 = torch.nn.Parameter(torch.ones(h, device="cuda", dtype=torch.bfloat16))
        self.n2 = torch.nn.Parameter(torch.ones(h, device="cuda", dtype=torch.bfloat16))
        self.casts = {}

    def cast_weights(self):
        """Once per step, as Transformer Engine does with its first micro-batch: fp8 copies."""
        for name in ("wqkv", "wo", "wgu", "wd"):
            w8, inv = to_fp8(getattr(self, name).detach())
            self.casts[name] = {"w8": w8, "wt8": w8.t().contiguous(), "inv": inv}

    def lin(self, x, name):
        w = getattr(self, name)
        return Fp8Linear.apply(x, w, self.casts[name]) if self.fp8 else F.linear(x, w)

    def forward(self, x):
        b, s, _ = x.shape
        y = F.rms_norm(x, (self.h,), self.n1)
        qkv = self.lin(y, "wqkv")
        q, k, v = qkv.split([self.heads * self.hd, self.kv * self.hd, self.kv * self.hd], dim=-1)
        q = q.view(b, s, self.heads, self.hd).transpose(1, 2)
        k = k.view(b, s, self.kv, self.hd).transpose(1, 2)
        v = v.view(b, s, self.kv, self.hd).transpose(1, 2)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=self.kv != self.heads)
        x = x + self.lin(a.transpose(1, 2).reshape(b, s, self.h), "wo")
        y = F.rms_norm(x, (self.h,), self.n2)
        g, u = self.lin(y, "wgu").chunk(2, dim=-1)
        return x + self.lin(F.silu(g) * u, "wd")


KERNEL_CLASSES = [  # first match wins: cuDNN's attention kernels carry "sm90_" in their names too
    ("attention", re.compile(r"flash|fmha|attention|sdpa", re.I)),
    ("gemm", re.compile(r"gemm|xmma|cutlass|nvjet|sm90_|cublas", re.I)),
    ("fp8 cast / transpose", re.compile(r"Float8", re.I)),
    ("reduction (amax, loss)", re.compile(r"reduce_kernel", re.I)),
]


def kernel_class(name):
    for c, rx in KERNEL_CLASSES:
        if rx.search(name):
            return c
    return "other"


def profiled_kernels(step):
    """One step under the profiler: (GPU µs by class, [(kernel name, µs)] in launch order)."""
    from torch.profiler import profile, ProfilerActivity
    import tempfile
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        step()
        torch.cuda.synchronize()
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        prof.export_chrome_trace(f.name)
        ev = json.load(open(f.name))["traceEvents"]
    ks = sorted((e["ts"], e["name"], e["dur"]) for e in ev if e.get("cat") == "kernel" and "dur" in e)
    by_class = collections.Counter()
    for _, name, dur in ks:
        by_class[kernel_class(name)] += dur
    return by_class, [(n, d) for _, n, d in ks]


def run_mode(fp8, args, smi):
    h, heads, kv, ffn = SHAPES[args.model]
    torch.manual_seed(2026)
    layers = torch.nn.ModuleList([Layer(h, heads, kv, ffn, fp8) for _ in range(args.layers)])
    x0 = torch.randn(1, args.seq, h, device="cuda", dtype=torch.bfloat16, requires_grad=True)

    def step():
        for p in layers.parameters():
            p.grad = None
        if fp8:
            for l in layers:
                l.cast_weights()
        x = x0
        for l in layers:
            x = l(x)
        x.float().pow(2).mean().backward()

    for _ in range(args.warmup):
        step()
    torch.cuda.synchronize()
    times = []
    t0 = time.time()
    for _ in range(args.steps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        step()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
    t1 = time.time()
    clock = smi.summary(t0 + 0.2, t1, center=statistics.median)
    by_class, kernels = profiled_kernels(step)
    top = collections.Counter()
    for n, d in kernels:
        top[n[:160]] += d
    return {
        "fp8": fp8,
        "step_ms_median": statistics.median(times),
        "step_ms": times,
        "clock": clock,
        "kernel_us_by_class": dict(by_class),
        "gemm_kernels_us": [d for n, d in kernels if kernel_class(n) == "gemm"],
        "top_kernels_us": top.most_common(25),
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="llama2-7b", choices=sorted(SHAPES))
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--seq", type=int, default=4096)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--out", default=os.path.join(os.environ.get("OUT", "/tmp"), "fp8_step_probe.json"))
    args = ap.parse_args()
    smi = SmiSampler(50)
    try:
        res = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "model": args.model,
               "layers": args.layers, "seq": args.seq, "modes": []}
        for fp8 in (False, True, False, True):
            r = run_mode(fp8, args, smi)
            res["modes"].append(r)
            print(f"{'fp8 ' if fp8 else 'bf16'} step {r['step_ms_median']:.2f} ms, clock {r['clock']}, "
                  f"kernels {json.dumps({k: round(v / 1e3, 2) for k, v in r['kernel_us_by_class'].items()})} ms",
                  flush=True)
            time.sleep(1.0)
    finally:
        smi.close()
    json.dump(res, open(args.out, "w"), indent=1)


if __name__ == "__main__":
    main()
