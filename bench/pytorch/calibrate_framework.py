#!/usr/bin/env python3
"""Framework calibration for PyTorch eager training on one GPU: what the training model needs
beyond the raw-CUDA kernel profile (infraplan-calibrate).

(a) attention_sdpa: F.scaled_dot_product_attention (bf16, causal, the library's default backend,
    q/k/v as strided views of a packed [b, s, 3, heads, d] projection, as a GPT block makes them)
    forward and backward times over seq_len × batch per head_dim, in the schema of the profile's
    tables.attention_prefill (plus backward_seconds), held-out shapes off the grid, and fit points
    (lengths off multiples of 64, their own random stream) from which the cost model fits the
    attention block size.
    GPU time: a sample is `batch` back-to-back calls queued behind a GPU sleep (so host dispatch
    does not show), CUDA events, median of the samples; inputs rotated over copies covering
    ≥ 3 × L2; random inputs (never zeros).
(b) elementwise: GPU time of the eager kernels an autocast training step runs besides GEMMs and
    attention (dtype casts, fp32 LayerNorm forward/backward, mixed-dtype residual adds, GELU, bias
    gradients, cat, fills, fp32 log-softmax) over an element-count axis.
(c) framework: host-side cost of eager dispatch. Chains of N ops on tiny tensors (the GPU waits
    on the host), wall time per chain, microseconds per op from the least-squares slope over N:
    elementwise ops without and with autograd, module-level ops (LayerNorm → Linear → GELU →
    Linear → residual add, under bf16 autocast with autograd, forward and backward), the same
    blocks under non-reentrant activation checkpointing, and a fused AdamW step over P tiny
    parameter tensors (µs per tensor from the slope over P, plus the fixed part).

    python3 bench/pytorch/calibrate_framework.py --out OUT.json [--quick] [--budget-s 300]

--quick: a few small shapes (also runs on a CPU build of PyTorch, to test the script).
"""
import argparse
import datetime
import json
import math
import random
import statistics
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

SEQ_AXIS = [256, 512, 768, 1024, 1536, 2048, 3072, 4096, 8192, 16384]
BATCH_AXIS = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]
HEAD_DIMS = [128, 64, 96]
HEADS = 32
MAX_TOKENS = 262144  # batch × seq_len per measured cell (256k)
L2_FALLBACK_BYTES = 60 << 20


class Clock:
    """GPU time with CUDA events (CPU builds: wall time), host time with perf_counter."""

    def __init__(self, dev):
        self.dev = dev
        self.cuda = dev.type == "cuda"

    def sync(self):
        if self.cuda:
            torch.cuda.synchronize()

    def gpu_samples(self, call, batch, samples, sleep_s):
        """Median seconds per call of `batch` back-to-back calls; call(i) issues call i."""
        out = []
        n = 0
        for _ in range(samples):
            self.sync()
            if self.cuda:
                # Keep the GPU busy while the host queues the batch: host dispatch stays hidden.
                torch.cuda._sleep(int(sleep_s * 2.0e9))
                a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                a.record()
                for _ in range(batch):
                    call(n)
                    n += 1
                b.record()
                b.synchronize()
                out.append(a.elapsed_time(b) / 1e3 / batch)
            else:
                t0 = time.perf_counter()
                for _ in range(batch):
                    call(n)
                    n += 1
                out.append((time.perf_counter() - t0) / batch)
        return statistics.median(out)

    def wall(self, fn):
        """Host wall seconds of fn() with the device drained before and after."""
        self.sync()
        t0 = time.perf_counter()
        fn()
        self.sync()
        return time.perf_counter() - t0


def l2_bytes():
    try:
        return int(torch.cuda.get_device_properties(0).L2_cache_size) or L2_FALLBACK_BYTES
    except Exception:
        return L2_FALLBACK_BYTES


def sdpa_backend_name(q, k, v):
    try:
        choice = int(torch._fused_sdp_choice(q, k, v, None, 0.0, True))
        return {0: "math", 1: "flash", 2: "efficient", 3: "cudnn"}.get(choice, str(choice))
    except Exception as e:  # private API: record why it was not available
        return "unknown (" + type(e).__name__ + ")"


class AttentionCase:
    """Inputs for one (batch, seq_len, heads, head_dim) shape, rotated over enough copies."""

    def __init__(self, dev, dtype, b, s, heads, d, gen, rotate_bytes):
        qkv_bytes = b * s * 3 * heads * d * torch.finfo(dtype).bits // 8
        per_copy = qkv_bytes * 5 // 3  # q, k, v, dout, out
        self.copies = max(1, min(16, math.ceil(rotate_bytes / per_copy)))
        self.sets = []
        for _ in range(self.copies):
            qkv = torch.randn(b, s, 3, heads, d, device=dev, dtype=dtype, generator=gen)
            q, k, v = (t.transpose(1, 2).detach().requires_grad_(True) for t in qkv.unbind(2))
            # dout in the layout a GPT block hands back ([b, s, heads, d] transposed), as out has.
            dout = torch.randn(b, s, heads, d, device=dev, dtype=dtype, generator=gen).transpose(1, 2)
            self.sets.append([q, k, v, dout, None])

    def forward(self, i):
        q, k, v, _, _ = self.sets[i % self.copies]
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)

    def prepare_backward(self):
        for st in self.sets:
            st[4] = F.scaled_dot_product_attention(st[0], st[1], st[2], is_causal=True)

    def backward(self, i):
        q, k, v, dout, out = self.sets[i % self.copies]
        torch.autograd.grad(out, (q, k, v), dout, retain_graph=True)


def host_seconds_per_call(clock, call, n=6):
    """Host seconds to issue one call, measured while the GPU sleeps (nothing waits on it)."""
    if not clock.cuda:
        return 0.0
    clock.sync()
    torch.cuda._sleep(int(0.1 * 2.0e9))  # ~50-100 ms: longer than n calls take to issue
    t0 = time.perf_counter()
    for i in range(n):
        call(i)
    t = (time.perf_counter() - t0) / n
    clock.sync()
    return t


def time_call(clock, call, min_sample_s, target_s, max_samples):
    """GPU seconds per call: probe once, then batch so a sample is ≥ min_sample_s. The GPU sleeps
    while the host queues the batch, for longer than the host takes to queue it (measured per
    call first: a composite backward through autograd.grad issues a dozen kernels and can take
    several hundred µs of host time), so the sample holds GPU time, not the host's pace."""
    call(0)
    call(1)
    host = host_seconds_per_call(clock, call)
    probe = clock.gpu_samples(call, 1, 1, max(1e-4, 2 * host))
    batch = max(1, min(32, math.ceil(min_sample_s / max(probe, 1e-7))))
    samples = max(3, min(max_samples, int(target_s / max(probe * batch, 1e-7))))
    return clock.gpu_samples(call, batch, samples, sleep_s=batch * max(1.5e-4, 1.5 * host) + 5e-5)


def measure_attention(clock, dev, dtype, b, s, heads, d, gen, rotate_bytes, quick):
    case = AttentionCase(dev, dtype, b, s, heads, d, gen, rotate_bytes)
    min_s, tgt, mx = (2e-5, 2e-3, 3) if quick else (1e-4, 0.03, 15)
    fwd = time_call(clock, case.forward, min_s, tgt, mx)
    case.prepare_backward()
    bwd = time_call(clock, case.backward, min_s, tgt, mx)
    backend = sdpa_backend_name(*case.sets[0][:3])
    del case
    return fwd, bwd, backend


def causal_flops(b, s, heads, d):
    return 4.0 * b * heads * s * (s + 1) / 2 * d


def attention_tables(clock, dev, args, out, save, t_start):
    dtype = torch.bfloat16 if clock.cuda else torch.float32
    rotate = 3 * l2_bytes() if clock.cuda else 1 << 20
    gen = torch.Generator(device=dev).manual_seed(args.seed + 1)
    seqs = [128, 256] if args.quick else SEQ_AXIS
    batches = [1, 2] if args.quick else BATCH_AXIS
    dims = [64] if args.quick else HEAD_DIMS
    heads = 4 if args.quick else HEADS
    max_tokens = 512 if args.quick else MAX_TOKENS
    sec = out["attention_sdpa"]
    for d in dims:
        table = {"kernel": "torch-sdpa", "causal": True, "head_dim": d, "heads": heads, "kv_heads": heads,
                 "dtype": str(dtype).replace("torch.", ""), "seq_len": seqs, "batch": batches,
                 "seconds": [[None] * len(batches) for _ in seqs],
                 "backward_seconds": [[None] * len(batches) for _ in seqs]}
        sec["tables"].append(table)
        for i, s in enumerate(seqs):
            for j, b in enumerate(batches):
                if b * s > max_tokens:
                    break
                if time.time() - t_start > args.budget_s:
                    sec["notes"].append(f"time budget reached at d{d} S{s} b{b}: rest not measured")
                    save()
                    return False
                f, bw, backend = measure_attention(clock, dev, dtype, b, s, heads, d, gen, rotate, args.quick)
                table["seconds"][i][j], table["backward_seconds"][i][j] = f, bw
                sec["backend"][f"d{d}"] = backend
                fl = causal_flops(b, s, heads, d)
                print(f"sdpa d{d:3d} S{s:6d} b{b:5d}: fwd {f*1e3:9.3f} ms {fl/f/1e12:6.1f} TFLOP/s, "
                      f"bwd {bw*1e3:9.3f} ms ({bw/f:4.2f}x) [{backend}] ({time.time()-t_start:.0f}s)", flush=True)
            save()
    return True


def holdout_shapes(args):
    """Off-grid shapes from their own random stream (log-uniform seq_len and tokens), plus a few
    with other head counts (the tables' batch axis is scaled by heads / 32)."""
    if args.quick:
        return [(64, 4, 3, 192)]
    rng = random.Random(args.seed + 7)
    shapes = []
    while len(shapes) < 18:
        d = rng.choice(HEAD_DIMS)
        s = int(round(math.exp(rng.uniform(math.log(320), math.log(14000))) / 8) * 8)
        tokens = math.exp(rng.uniform(math.log(4096), math.log(200000)))
        b = max(1, int(round(tokens / s)))
        if s in SEQ_AXIS or (b in BATCH_AXIS and b > 1 and rng.random() < 0.5):
            continue
        shapes.append((d, HEADS, b, s))
    shapes += [(64, 12, 6, 1024), (64, 16, 12, 1024), (96, 16, 6, 1024), (64, 32, 10, 1024),
               (128, 8, 5, 3000), (64, 20, 3, 5000)]
    return shapes


def fit_shapes(args):
    """Fit points for the cost model's attention block size: sequence lengths off the table's axis
    and off multiples of 64 (a stream of their own, never the held-out one)."""
    if args.quick:
        return [(64, 32, 2, 200)]
    rng = random.Random(args.seed + 13)
    shapes = []
    while len(shapes) < 24:
        d = rng.choice(HEAD_DIMS)
        s = int(round(math.exp(rng.uniform(math.log(300), math.log(12000)))))
        tokens = math.exp(rng.uniform(math.log(4096), math.log(200000)))
        b = max(1, int(round(tokens / s)))
        if s % 64 == 0:
            continue
        shapes.append((d, HEADS, b, s))
    return shapes


def attention_points(clock, dev, args, out, save, t_start, key, shapes, seed_offset):
    dtype = torch.bfloat16 if clock.cuda else torch.float32
    rotate = 3 * l2_bytes() if clock.cuda else 1 << 20
    gen = torch.Generator(device=dev).manual_seed(args.seed + seed_offset)
    for d, h, b, s in shapes:
        if time.time() - t_start > args.budget_s:
            out["attention_sdpa"]["notes"].append(f"time budget reached in the {key} shapes")
            break
        f, bw, backend = measure_attention(clock, dev, dtype, b, s, h, d, gen, rotate, args.quick)
        out["attention_sdpa"][key].append({"head_dim": d, "heads": h, "kv_heads": h, "batch": b, "seq_len": s,
                                           "causal": True, "seconds": f, "backward_seconds": bw})
        print(f"{key} d{d} h{h} S{s} b{b}: fwd {f*1e3:.3f} ms bwd {bw*1e3:.3f} ms [{backend}]", flush=True)
    save()


def attention_holdout(clock, dev, args, out, save, t_start):
    attention_points(clock, dev, args, out, save, t_start, "holdout", holdout_shapes(args), 2)


# ---------------------------------------------------------------------------------------------
# Eager elementwise / normalisation / reduction kernels (GPU time per call by element count)

# name: (row width, what one call does). Elements = rows × width of the op's main tensor
# (the output of cat3; the [rows, vocab] logits for the log-softmax ops).
ELEMENTWISE_OPS = {
    "cast_f32_bf16": (2048, "x.to(bfloat16) of an fp32 tensor (autocast input / weight casts)"),
    "cast_bf16_f32": (2048, "x.float() of a bf16 tensor (gradients back to fp32)"),
    "add_f32_bf16": (2048, "fp32 + bf16 -> fp32 (autocast residual add)"),
    "add_inplace_f32": (2048, "fp32.add_(fp32) (gradient accumulation)"),
    "add_bf16": (2048, "bf16 + bf16 -> bf16"),
    "layer_norm_f32_fwd": (2048, "F.layer_norm on fp32 (autocast runs it in fp32), weight and bias"),
    "layer_norm_f32_bwd": (2048, "aten.native_layer_norm_backward on fp32, input + weight + bias grads"),
    "gelu_bf16_fwd": (8192, "F.gelu(approximate='tanh') on bf16"),
    "gelu_bf16_bwd": (8192, "aten.gelu_backward(approximate='tanh') on bf16"),
    "bias_grad_bf16": (2048, "g.sum(0) of a bf16 [rows, width] gradient (bias gradient)"),
    "cat3_bf16": (6144, "torch.cat of three bf16 [rows, width/3] tensors along the last dim"),
    "fill_f32": (2048, "zero fill of an fp32 tensor"),
    "log_softmax_f32_fwd": (50257, "log_softmax over the last dim of fp32 [rows, vocab]"),
    "log_softmax_f32_bwd": (50257, "aten._log_softmax_backward_data on fp32 [rows, vocab]"),
    # LLaMA-architecture blocks in eager mode. Composite entries time the whole kernel sequence of
    # one module-level expression (forward under autograd, or its backward through autograd.grad);
    # elements = rows x width of the main input (rope: b x heads x s x head_dim of q).
    "rms_norm_f32_fwd": (2048, "F.rms_norm on fp32 with an fp32 weight (autocast keeps it fp32)"),
    "rms_norm_f32_bwd": (2048, "backward of F.rms_norm on fp32: input and weight gradients"),
    "rms_norm_bf16_fwd": (2048, "F.rms_norm on bf16 with a bf16 weight (pure bf16)"),
    "rms_norm_bf16_bwd": (2048, "backward of F.rms_norm on bf16"),
    "rms_norm_hf_f32_fwd": (2048, "transformers' RMSNorm on fp32: pow, mean, rsqrt, two muls"),
    "rms_norm_hf_f32_bwd": (2048, "backward of transformers' RMSNorm on fp32"),
    "rms_norm_hf_bf16_fwd": (2048, "transformers' RMSNorm on bf16: up-cast, pow, mean, rsqrt, mul, down-cast, mul"),
    "rms_norm_hf_bf16_bwd": (2048, "backward of transformers' RMSNorm on bf16"),
    "rope_amp_fwd": (64, "q*cos + rotate_half(q)*sin, q bf16 [b, heads, s, 64] (a transposed view of [b, s, heads, 64]), cos/sin fp32 [s, 64] -> fp32"),
    "rope_amp_bwd": (64, "backward of rope_amp_fwd (fp32 gradient in, bf16 gradient out)"),
    "rope_bf16_fwd": (64, "q*cos + rotate_half(q)*sin, all bf16, q a transposed view as above"),
    "rope_bf16_bwd": (64, "backward of rope_bf16_fwd"),
    "gqa_expand_f32": (64, "k[:, :, None].expand(..., rep=4, ...).reshape of fp32 k after RoPE, in the projection's layout (elements: output)"),
    "gqa_expand_f32_bwd": (64, "backward of gqa_expand_f32: sum over the repeat dim (elements: output gradient)"),
    "gqa_expand_bf16": (64, "the same expansion of bf16 v, a transposed view of the projection's output (elements: output)"),
    "gqa_expand_bf16_bwd": (64, "backward of gqa_expand_bf16 (elements: output gradient)"),
    "swiglu_bf16_fwd": (8192, "silu(gate) * up on bf16 (two kernels); elements = rows x ffn"),
    "swiglu_bf16_bwd": (8192, "backward of silu(gate) * up on bf16 (two muls, silu_backward)"),
    "transpose_copy_bf16": (64, "contiguous copy of a bf16 [b, heads, s, d] transposed to [b, s, heads, d]"),
    "add_f32": (2048, "fp32 + fp32 -> fp32 (new tensor)"),
    "embedding_bwd_f32": (2048, "embedding_dense_backward into an fp32 [32000, width] table; elements = tokens x width"),
}
ELEMENT_AXIS = [1 << 18, 1 << 20, 1 << 22, 1 << 24, 1 << 26, 1 << 28]


def elementwise_case(name, elements, dev, gen):
    width = ELEMENTWISE_OPS[name][0]
    rows = max(1, elements // width)
    f32, b16 = torch.float32, torch.bfloat16

    def r(dtype, shape=(rows, width)):
        return torch.randn(*shape, device=dev, dtype=dtype, generator=gen)

    if name == "cast_f32_bf16":
        x = r(f32)
        return lambda: x.to(b16), x.numel() * 4
    if name == "cast_bf16_f32":
        x = r(b16)
        return lambda: x.float(), x.numel() * 2
    if name == "add_f32_bf16":
        a, b = r(f32), r(b16)
        return lambda: a + b, a.numel() * 6
    if name == "add_inplace_f32":
        a, b = r(f32), r(f32)
        return lambda: a.add_(b), a.numel() * 8
    if name == "add_bf16":
        a, b = r(b16), r(b16)
        return lambda: a + b, a.numel() * 4
    if name.startswith("layer_norm"):
        x, w, bias = r(f32), r(f32, (width,)), r(f32, (width,))
        if name.endswith("fwd"):
            return lambda: F.layer_norm(x, (width,), w, bias), x.numel() * 4
        out, mean, rstd = torch.ops.aten.native_layer_norm(x, [width], w, bias, 1e-5)
        g = r(f32)
        return (lambda: torch.ops.aten.native_layer_norm_backward(g, x, [width], mean, rstd, w, bias,
                                                                  [True, True, True]), x.numel() * 8)
    if name.startswith("gelu"):
        x = r(b16)
        if name.endswith("fwd"):
            return lambda: F.gelu(x, approximate="tanh"), x.numel() * 2
        g = r(b16)
        return lambda: torch.ops.aten.gelu_backward(g, x, approximate="tanh"), x.numel() * 4
    if name == "bias_grad_bf16":
        g = r(b16)
        return lambda: g.sum(0), g.numel() * 2
    if name == "cat3_bf16":
        parts = [r(b16, (rows, width // 3)) for _ in range(3)]
        return lambda: torch.cat(parts, dim=-1), rows * width * 2
    if name == "fill_f32":
        x = r(f32)
        return lambda: x.zero_(), x.numel() * 4
    if name == "log_softmax_f32_fwd":
        x = r(f32)
        return lambda: torch.log_softmax(x, dim=-1), x.numel() * 4
    if name == "log_softmax_f32_bwd":
        x = r(f32)
        out = torch.log_softmax(x, dim=-1)
        g = r(f32)
        return lambda: torch.ops.aten._log_softmax_backward_data(g, out, -1, f32), x.numel() * 8
    if name.startswith(("rms_norm", "rope", "gqa", "swiglu")):
        return composite_case(name, rows, width, dev, r)
    if name == "transpose_copy_bf16":
        b, s = max(1, rows // (16 * 2048)), 2048 if rows >= 16 * 2048 else max(1, rows // 16)
        x = r(b16, (b, 16, s, width))
        return lambda: x.transpose(1, 2).contiguous(), x.numel() * 4
    if name == "add_f32":
        a, b = r(f32), r(f32)
        return lambda: a + b, a.numel() * 12
    if name == "embedding_bwd_f32":
        g = r(f32)
        idx = torch.randint(0, 32000, (rows,), device=dev, generator=gen)
        return (lambda: torch.ops.aten.embedding_dense_backward(g, idx, 32000, -1, False)), g.numel() * 8
    raise KeyError(name)


def hf_rms_norm(x, w):
    """transformers' LlamaRMSNorm.forward (v5): fp32 statistics, scale, back to the input dtype."""
    dt = x.dtype
    y = x.to(torch.float32)
    var = y.pow(2).mean(-1, keepdim=True)
    y = y * torch.rsqrt(var + 1e-5)
    return w * y.to(dt)


def rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


def composite_case(name, rows, width, dev, r):
    """Forward under autograd, or backward through autograd.grad (graph kept), of one expression."""
    f32, b16 = torch.float32, torch.bfloat16
    dt = b16 if "bf16" in name or name.startswith("swiglu") else f32
    if name.startswith("rms_norm"):
        x = r(dt).requires_grad_(True)
        w = r(dt, (width,)).requires_grad_(True)
        fn = (lambda: hf_rms_norm(x, w)) if "_hf_" in name else (lambda: F.rms_norm(x, (width,), w, 1e-5))
        ins, nbytes = (x, w), x.numel() * x.element_size() * 2
    elif name.startswith("rope"):
        # q as the frameworks have it: the projection's [b, s, heads, d] output seen as
        # [b, heads, s, d] (a transposed view, not contiguous), so the kernels run strided.
        b, s = max(1, rows // (16 * 2048)), 2048 if rows >= 16 * 2048 else max(1, rows // 16)
        q = r(b16, (b, s, 16, width)).requires_grad_(True)
        cdt = f32 if name.startswith("rope_amp") else b16
        cos, sin = r(cdt, (s, width)), r(cdt, (s, width))
        fn = lambda: q.transpose(1, 2) * cos + rotate_half(q.transpose(1, 2)) * sin
        ins, nbytes = (q,), q.numel() * 2 * 3
    elif name.startswith("gqa"):
        # K after RoPE (fp32 under autocast) or V as the frameworks have them: in the layout of the
        # projection's [b, s, kv_heads, d] output, seen as [b, kv_heads, s, d].
        rep = 4
        b, s = max(1, rows // (16 * 2048)), 2048 if rows >= 16 * 2048 else max(1, rows // 16)
        dt = f32 if "f32" in name else b16
        kv = r(b16, (b, s, 16 // rep, width)).transpose(1, 2)
        if dt == f32:
            cos, sin = r(f32, (s, width)), r(f32, (s, width))
            kv = kv * cos + rotate_half(kv) * sin
        kv = kv.detach().requires_grad_(True)
        fn = lambda: kv[:, :, None].expand(b, 16 // rep, rep, s, width).reshape(b, 16, s, width)
        ins, nbytes = (kv,), kv.numel() * kv.element_size() * (1 + rep)
    else:  # swiglu
        g, u = r(b16).requires_grad_(True), r(b16).requires_grad_(True)
        fn = lambda: F.silu(g) * u
        ins, nbytes = (g, u), g.numel() * 6
    if name.endswith("_bwd"):
        out = fn()
        grad = torch.randn(out.shape, device=out.device, dtype=out.dtype)
        if name.startswith("gqa"):
            return (lambda: torch.autograd.grad(out, ins, grad, retain_graph=True)), nbytes
        return (lambda: torch.autograd.grad(out, ins, grad, retain_graph=True)), nbytes * 2
    return fn, nbytes


def elementwise_tables(clock, dev, args, out, save, t_start):
    """Per op: GPU seconds per call over the element axis (inputs rotated past L2 by copies)."""
    gen = torch.Generator(device=dev).manual_seed(args.seed + 5)
    rotate = 3 * l2_bytes() if clock.cuda else 1 << 20
    axis = [1 << 12, 1 << 14] if args.quick else ELEMENT_AXIS
    sec = {"elements": axis, "ops": {}, "method": (
        "GPU time per call (CUDA events around back-to-back calls queued behind a GPU sleep, median), "
        "inputs rotated over copies covering >= 3 x L2; elements = rows x width of the op's main tensor")}
    out["elementwise"] = sec
    for name, (width, what) in ELEMENTWISE_OPS.items():
        row = []
        try:
            measure_elementwise_row(clock, dev, args, name, axis, row, gen, rotate, t_start)
        except Exception as e:  # one broken case must not lose the others
            print(f"elementwise {name}: failed: {e!r}", flush=True)
            row = [None] * len(axis)
        sec["ops"][name] = {"width": width, "what": what, "seconds": row}
        print(f"elementwise {name:22s} " + " ".join("-" if t is None else f"{t*1e6:.1f}" for t in row) + " us",
              flush=True)
        if clock.cuda:
            torch.cuda.empty_cache()
    save()


def measure_elementwise_row(clock, dev, args, name, axis, row, gen, rotate, t_start):
    """Appends to `row` the GPU seconds per call of op `name` at each element count of `axis`."""
    for n in axis:
        if time.time() - t_start > args.budget_s:
            row.append(None)
            continue
        cases, inbytes = [], 1
        while True:
            fn, inbytes = elementwise_case(name, n, dev, gen)
            cases.append(fn)
            if len(cases) * inbytes >= rotate or len(cases) >= 8:
                break
        t = time_call(clock, lambda i: cases[i % len(cases)](), 1e-4 if not args.quick else 2e-5,
                      0.01 if not args.quick else 1e-3, 15 if not args.quick else 3)
        row.append(t)
        del cases


# ---------------------------------------------------------------------------------------------
# Host dispatch


def slope(xs, ys):
    """Least-squares slope and intercept of ys over xs."""
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    k = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx
    return k, my - k * mx


def chain(clock, run, ns, reps):
    """run(n) → (phase seconds dict) for a chain of n; returns per-phase slope (s/unit),
    intercept and the medians per n."""
    rows = {}
    for n in ns:
        run(n)  # warm-up (allocator, autograd, autocast caches)
        per = {}
        for _ in range(reps):
            for k, v in run(n).items():
                per.setdefault(k, []).append(v)
        rows[n] = {k: statistics.median(v) for k, v in per.items()}
    res = {}
    for k in rows[ns[0]]:
        s, c = slope(ns, [rows[n][k] for n in ns])
        res[k] = {"us_per_unit": s * 1e6, "intercept_us": c * 1e6,
                  "median_us": {str(n): rows[n][k] * 1e6 for n in ns}}
    return res


class MiniLayer(nn.Module):
    """Five module-level ops, GPT-block style, on tiny shapes: LayerNorm, Linear, GELU, Linear,
    residual add."""

    def __init__(self, h):
        super().__init__()
        self.ln = nn.LayerNorm(h)
        self.fc = nn.Linear(h, 4 * h)
        self.out = nn.Linear(4 * h, h)

    def forward(self, x):
        return x + self.out(F.gelu(self.fc(self.ln(x)), approximate="tanh"))


OPS_PER_MINI_LAYER = 5


def llama_block_dispatch(clock, dev, args):
    """Host µs per LLaMA block (forward, backward) on tiny shapes, where the GPU waits on the host:
    the corpus's plain block (bench/pytorch/llama_corpus.py: F.rms_norm, separate Q/K/V and
    gate/up projections, elementwise RoPE, K/V repeated for GQA) and transformers' decoder layer
    (LlamaForCausalLM with N layers), under autocast or in pure bf16, with and without
    non-reentrant activation checkpointing per block, and (eager only) under torchtitan's op-level
    selective checkpointing (llama_corpus.sac_context: its policy runs on every op of the forward and
    of the recomputation). Slope over the number of blocks."""
    import llama_corpus
    ns = [2, 4] if args.quick else [2, 4, 8, 12]
    reps = 3 if args.quick else 7
    autocast_dev = "cuda" if clock.cuda else "cpu"
    out = {}
    h, heads, kv, ffn, vocab, seq = 64, 4, 2, 128, 256, 16
    llama_corpus.MODELS["tiny-host"] = (h, max(ns), heads, kv, ffn, vocab, False, False)
    names = {"plain": "pytorch-eager", "hf": "transformers", "compile": "torch-compile"}
    for impl in args.llama_block_impls.split(","):
        for precision in ("amp", "pure"):
            for ckpt in (False, True, "op") if impl != "compile" else (False, True):
                key = f"{names[impl]}/{'amp-bf16' if precision == 'amp' else 'bf16-pure'}/" \
                      f"{'selective-op' if ckpt == 'op' else 'checkpointed' if ckpt else 'plain'}"

                built = {}  # torch.compile: one model (one compile) per depth, reused by the repeats

                def run(n, impl=impl, precision=precision, ckpt=ckpt, built=built):
                    first = n not in built
                    if first:
                        llama_corpus.MODELS["tiny-host"] = (h, n, heads, kv, ffn, vocab, False, False)
                        if impl == "compile":
                            built.clear()
                            torch._dynamo.reset()  # a fresh compile of this depth (static shapes)
                        model, fwd = llama_corpus.build(impl, "tiny-host", precision, ckpt, seq, dev)
                        idx = torch.randint(0, vocab, (1, seq), device=dev)
                        if impl == "compile":
                            built[n] = (model, fwd, idx)
                    else:
                        model, fwd, idx = built[n]
                    box = {}

                    def f():
                        with torch.autocast(autocast_dev, dtype=torch.bfloat16, enabled=precision == "amp"):
                            box["loss"] = fwd(idx, idx)

                    # Warm-up of a new model (compile, autocast cache, autograd); eager models are new
                    # on every call.
                    for _ in range(0 if not first else 3 if impl == "compile" else 1):
                        f()
                        box["loss"].backward()
                    for p in model.parameters():
                        p.grad = None
                    tf = clock.wall(f)
                    tb = clock.wall(lambda: box["loss"].backward())
                    return {"forward": tf, "backward": tb}

                try:
                    r = chain(clock, run, ns, reps)
                    out[key] = {"forward_us": max(0.0, r["forward"]["us_per_unit"]),
                                "backward_us": max(0.0, r["backward"]["us_per_unit"]), "chain": r}
                    print(f"llama block host {key:45s} fwd {out[key]['forward_us']:7.1f} us "
                          f"bwd {out[key]['backward_us']:7.1f} us", flush=True)
                except Exception as e:  # one failing variant must not lose the rest
                    print(f"llama block host {key}: failed: {e!r}", flush=True)
    return out


def framework_dispatch(clock, dev, args):
    torch.manual_seed(args.seed)
    ns = [8, 16, 32] if args.quick else [25, 50, 100, 200]
    reps = 3 if args.quick else 7
    res = {}
    autocast_dev = "cuda" if clock.cuda else "cpu"
    x0 = torch.randn(1024, device=dev) + 2.0

    def elementwise_nograd(n):
        def f():
            y = x0
            with torch.no_grad():
                for _ in range(n):
                    y = y * 1.0001
        return {"forward": clock.wall(f)}

    res["elementwise_nograd"] = chain(clock, elementwise_nograd, ns, reps)

    def elementwise_autograd(n):
        leaf = x0.clone().requires_grad_(True)
        box = {}

        def f():
            y = leaf
            for _ in range(n):
                y = y * 1.0001
            box["loss"] = y.sum()

        tf = clock.wall(f)
        tb = clock.wall(lambda: box["loss"].backward())
        return {"forward": tf, "backward": tb}

    res["elementwise_autograd"] = chain(clock, elementwise_autograd, ns, reps)

    h = 64
    layers_max = max(ns) // 4
    nl = [max(2, n // 4) for n in ns]
    stack = nn.ModuleList(MiniLayer(h) for _ in range(layers_max)).to(dev)
    xin = torch.randn(2, 16, h, device=dev)

    def blocks(ckpt):
        def run(n):
            box = {}

            def f():
                y = xin
                with torch.autocast(autocast_dev, dtype=torch.bfloat16):
                    for blk in stack[:n]:
                        y = checkpoint(blk, y, use_reentrant=False) if ckpt else blk(y)
                box["loss"] = y.float().sum()

            tf = clock.wall(f)
            tb = clock.wall(lambda: box["loss"].backward())
            for p in stack.parameters():
                p.grad = None
            return {"forward": tf, "backward": tb}
        return run

    res["mini_layers_autocast"] = chain(clock, blocks(False), nl, reps)
    res["mini_layers_autocast_checkpointed"] = chain(clock, blocks(True), nl, reps)

    # One module type at a time (shape-preserving), autocast + autograd.
    lin = nn.ModuleList(nn.Linear(h, h) for _ in range(max(ns))).to(dev)
    lns = nn.ModuleList(nn.LayerNorm(h) for _ in range(max(ns))).to(dev)
    kinds = {
        "linear": lambda y, i: lin[i](y),
        "layernorm": lambda y, i: lns[i](y),
        "gelu": lambda y, i: F.gelu(y, approximate="tanh"),
        "add": lambda y, i: y + xin,
        "sdpa": lambda y, i: F.scaled_dot_product_attention(y.view(2, 16, 2, 32).transpose(1, 2),
                                                            y.view(2, 16, 2, 32).transpose(1, 2),
                                                            y.view(2, 16, 2, 32).transpose(1, 2),
                                                            is_causal=True).transpose(1, 2).reshape(2, 16, h),
    }
    per_module = {}
    for name, op in kinds.items():
        def run(n, op=op):
            box = {}
            leaf = xin.clone().requires_grad_(True)

            def f():
                y = leaf
                with torch.autocast(autocast_dev, dtype=torch.bfloat16):
                    for i in range(n):
                        y = op(y, i)
                box["loss"] = y.float().sum()

            tf = clock.wall(f)
            tb = clock.wall(lambda: box["loss"].backward())
            for p in list(lin.parameters()) + list(lns.parameters()):
                p.grad = None
            return {"forward": tf, "backward": tb}
        r = chain(clock, run, ns, reps)
        per_module[name] = {"forward_us": r["forward"]["us_per_unit"], "backward_us": r["backward"]["us_per_unit"]}
    res["per_module"] = per_module

    # Fused AdamW over P tiny tensors (the step alone; zero_grad(set_to_none) separately).
    def adam(p_count):
        params = [torch.randn(64, device=dev, requires_grad=True) for _ in range(p_count)]
        for p in params:
            p.grad = torch.randn_like(p)
        opt = torch.optim.AdamW(params, lr=1e-4, fused=clock.cuda)
        opt.step()

        def z():
            opt.zero_grad(set_to_none=True)
        t_step = clock.wall(opt.step)
        t_zero = clock.wall(z)
        return {"step": t_step, "zero_grad": t_zero}

    pcs = [16, 32, 64] if args.quick else [50, 100, 200, 400, 800]
    res["fused_adamw"] = chain(clock, adam, pcs, reps)
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--quick", action="store_true", help="tiny shapes (works on a CPU build, to test the script)")
    ap.add_argument("--seed", type=int, default=4321)
    ap.add_argument("--budget-s", type=float, default=300.0, help="stop measuring new attention shapes after this")
    ap.add_argument("--skip-attention", action="store_true")
    ap.add_argument("--skip-elementwise", action="store_true")
    ap.add_argument("--llama-block-impls", default="plain,hf",
                    help="with --llama-blocks-only: implementations to measure, of plain, hf, compile")
    ap.add_argument("--llama-blocks-only", action="store_true",
                    help="measure only the LLaMA block host costs (llama_block_dispatch)")
    ap.add_argument("--elementwise-only", default="",
                    help="comma-separated elementwise ops: measure only these (no dispatch chains, no attention)")
    args = ap.parse_args()
    bad = [i for i in args.llama_block_impls.split(",") if i not in ("plain", "hf", "compile")]
    if bad:
        sys.exit(f"--llama-block-impls: unknown {bad}; valid: plain, hf, compile")
    t_start = time.time()
    cuda = torch.cuda.is_available()
    dev = torch.device("cuda" if cuda else "cpu")
    clock = Clock(dev)
    out = {
        "schema": "infraplan-framework-calibration/1",
        "what": "PyTorch eager host dispatch and SDPA attention forward/backward (bench/pytorch/calibrate_framework.py)",
        "command": "python3 bench/pytorch/calibrate_framework.py " + " ".join(sys.argv[1:]),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "gpu": torch.cuda.get_device_name(0) if cuda else "cpu",
        "seed": args.seed,
        "quick": args.quick,
        "framework": {"name": "pytorch-eager", "torch_version": torch.__version__,
                      "cuda_version": torch.version.cuda,
                      "cudnn_version": torch.backends.cudnn.version() if cuda else None},
        "attention_sdpa": {"tables": [], "holdout": [], "fit_points": [], "backend": {}, "notes": []},
    }

    def save():
        out["run_seconds"] = time.time() - t_start
        with open(args.out, "w") as f:
            json.dump(out, f, indent=1)
            f.write("\n")

    fw = out["framework"]
    if args.llama_blocks_only:
        out["partial"] = "llama-blocks-only"
        out["llama_block_host_us"] = llama_block_dispatch(clock, dev, args)
        save()
        print(f"done in {time.time()-t_start:.0f}s -> {args.out}", flush=True)
        return
    if args.elementwise_only:
        keep = args.elementwise_only.split(",")
        unknown = [k for k in keep if k not in ELEMENTWISE_OPS]
        if unknown:
            sys.exit(f"--elementwise-only: unknown ops {unknown}; valid: {sorted(ELEMENTWISE_OPS)}")
        for k in list(ELEMENTWISE_OPS):
            if k not in keep:
                del ELEMENTWISE_OPS[k]
        out["partial"] = "elementwise-only"
        elementwise_tables(clock, dev, args, out, save, t_start)
        save()
        print(f"done in {time.time()-t_start:.0f}s -> {args.out}", flush=True)
        return
    disp = framework_dispatch(clock, dev, args)
    ml, mc = disp["mini_layers_autocast"], disp["mini_layers_autocast_checkpointed"]
    fw["op_dispatch_us_forward"] = ml["forward"]["us_per_unit"] / OPS_PER_MINI_LAYER
    fw["op_dispatch_us_backward"] = ml["backward"]["us_per_unit"] / OPS_PER_MINI_LAYER
    # Checkpointed block: its forward runs without saving, its backward re-runs the forward.
    fw["checkpoint_us_forward_per_block"] = mc["forward"]["us_per_unit"] - ml["forward"]["us_per_unit"]
    fw["checkpoint_us_backward_per_block"] = (mc["backward"]["us_per_unit"] - ml["backward"]["us_per_unit"]
                                              - ml["forward"]["us_per_unit"])
    fw["optimizer_us_per_tensor"] = disp["fused_adamw"]["step"]["us_per_unit"] + \
        disp["fused_adamw"]["zero_grad"]["us_per_unit"]
    fw["optimizer_us_fixed"] = disp["fused_adamw"]["step"]["intercept_us"] + \
        disp["fused_adamw"]["zero_grad"]["intercept_us"]
    fw["aten_op_us_nograd"] = disp["elementwise_nograd"]["forward"]["us_per_unit"]
    fw["aten_op_us_autograd_forward"] = disp["elementwise_autograd"]["forward"]["us_per_unit"]
    fw["aten_op_us_autograd_backward"] = disp["elementwise_autograd"]["backward"]["us_per_unit"]
    fw["ops_per_mini_layer"] = OPS_PER_MINI_LAYER
    fw["method"] = ("host wall time of chains of N ops on tiny tensors (GPU idle, host-bound), slope over N; "
                    "op_dispatch_us_* per module-level op (LayerNorm, Linear, GELU, Linear, add) under bf16 "
                    "autocast with autograd; optimizer per parameter tensor: fused AdamW step + zero_grad")
    fw["chains"] = disp
    print("framework: " + json.dumps({k: v for k, v in fw.items() if k != "chains"}), flush=True)
    save()
    if not args.skip_attention:
        # Held-out shapes first (few, and they decide the reported accuracy), then the tables.
        attention_holdout(clock, dev, args, out, save, t_start)
        attention_points(clock, dev, args, out, save, t_start, "fit_points", fit_shapes(args), 3)
    if not args.skip_elementwise:
        elementwise_tables(clock, dev, args, out, save, t_start)
    if not args.skip_attention:
        attention_tables(clock, dev, args, out, save, t_start)
    save()
    print(f"done in {time.time()-t_start:.0f}s -> {args.out}", flush=True)


if __name__ == "__main__":
    main()
