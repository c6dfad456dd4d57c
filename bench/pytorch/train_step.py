#!/usr/bin/env python3
"""Training-step measurements of GPT-2-shaped models in plain PyTorch (validation data for the
training simulator; nothing here is tuned to it).

Model: learned positions, pre-LN blocks, causal self-attention (F.scaled_dot_product_attention),
GELU MLP of 4h, tied input/output embeddings. Step: AMP bf16 autocast forward, backward, fused
AdamW on fp32 master parameters (plain PyTorch: parameters and optimizer state stay fp32).
Activation checkpointing, when on, wraps every block (torch.utils.checkpoint, non-reentrant).

For each config it records the model dimensions, micro-batch, checkpointing, the median step time
(CUDA events, warm-up steps excluded) and torch.cuda.max_memory_allocated.

    python3 bench/pytorch/train_step.py --out docs/data/h200_pytorch_train.json [--quick]
"""
import argparse
import datetime
import json
import math
import statistics
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

MODELS = {
    # name: (layers, hidden, heads)
    "gpt2-124m": (12, 768, 12),
    "gpt2-350m": (24, 1024, 16),
    "gpt2-760m": (24, 1536, 16),
    "gpt2-1.3b": (24, 2048, 32),
}
VOCAB = 50257
SEQ = 1024


class Block(nn.Module):
    def __init__(self, h, heads):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(h)
        self.qkv = nn.Linear(h, 3 * h)
        self.proj = nn.Linear(h, h)
        self.ln2 = nn.LayerNorm(h)
        self.fc = nn.Linear(h, 4 * h)
        self.out = nn.Linear(4 * h, h)

    def forward(self, x):
        b, s, h = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(h, dim=2)
        q, k, v = (t.view(b, s, self.heads, h // self.heads).transpose(1, 2) for t in (q, k, v))
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(a.transpose(1, 2).reshape(b, s, h))
        return x + self.out(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))


class GPT(nn.Module):
    def __init__(self, layers, h, heads, vocab=VOCAB, seq=SEQ, ckpt=False):
        super().__init__()
        self.ckpt = ckpt
        self.wte = nn.Embedding(vocab, h)
        self.wpe = nn.Embedding(seq, h)
        self.blocks = nn.ModuleList(Block(h, heads) for _ in range(layers))
        self.ln_f = nn.LayerNorm(h)
        self.head = nn.Linear(h, vocab, bias=False)
        self.head.weight = self.wte.weight  # tied
        for m in self.modules():
            if isinstance(m, (nn.Linear, nn.Embedding)):
                nn.init.normal_(m.weight, std=0.02)

    def forward(self, idx, targets):
        pos = torch.arange(idx.shape[1], device=idx.device)
        x = self.wte(idx) + self.wpe(pos)
        for blk in self.blocks:
            x = checkpoint(blk, x, use_reentrant=False) if self.ckpt else blk(x)
        logits = self.head(self.ln_f(x))
        return F.cross_entropy(logits.float().view(-1, logits.shape[-1]), targets.view(-1))


def make_step(name, mb, ckpt, seed, wrap=None, batch_seed=None):
    """One training step of model `name` (AMP bf16 autocast, fused AdamW) on a fixed random batch:
    returns step() and (model, optimizer, inputs, targets). `wrap` turns the model into what the
    step runs (e.g. DistributedDataParallel); `batch_seed` draws the batch from another stream
    (one per data-parallel rank)."""
    layers, h, heads = MODELS[name]
    torch.manual_seed(seed)
    dev = torch.device("cuda")
    model = GPT(layers, h, heads, ckpt=ckpt).to(dev)
    if wrap is not None:
        model = wrap(model)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    g = torch.Generator(device=dev).manual_seed(seed if batch_seed is None else batch_seed)
    idx = torch.randint(0, VOCAB, (mb, SEQ), device=dev, generator=g)
    tgt = torch.randint(0, VOCAB, (mb, SEQ), device=dev, generator=g)

    def step():
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(idx, tgt)
        loss.backward()
        opt.step()
        return loss

    return step, (model, opt, idx, tgt)


def timed_steps(step, n):
    """Seconds of each of n calls of step() (CUDA events around each), and the last call's result."""
    out, last = [], None
    for _ in range(n):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        last = step()
        b.record()
        b.synchronize()
        out.append(a.elapsed_time(b) / 1e3)
    return out, last


def measure(name, mb, ckpt, warmup, steps, seed):
    layers, h, heads = MODELS[name]
    step, state = make_step(name, mb, ckpt, seed)
    model = state[0]
    params = sum(p.numel() for p in model.parameters())
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()

    for _ in range(warmup):
        step()
    torch.cuda.synchronize()
    times, loss = timed_steps(step, steps)
    med = statistics.median(times)
    peak = torch.cuda.max_memory_allocated()
    tokens = mb * SEQ
    # Model FLOPs per step: 6·N·T for the dense part (N without position embeddings) plus
    # causal attention 6·layers·T·S·h (QKᵀ and PV, forward 2 + backward 4, half masked).
    n_dense = params - SEQ * h
    flops = 6.0 * n_dense * tokens + 6.0 * layers * tokens * SEQ * h
    res = {
        "model": name,
        "params": params,
        "dims": {"hidden": h, "layers": layers, "heads": heads, "vocab": VOCAB, "seq": SEQ, "ffn": 4 * h,
                 "tied_embeddings": True, "positions": "learned", "norm": "layernorm-pre", "mlp": "gelu"},
        "micro_batch": mb,
        "checkpointing": "every_block" if ckpt else "none",
        "precision": "amp-bf16 autocast, fp32 master params, fused AdamW",
        "attention": "F.scaled_dot_product_attention(is_causal=True)",
        "warmup_steps": warmup,
        "timed_steps": steps,
        "step_seconds_median": med,
        "step_seconds_min": min(times),
        "step_seconds_max": max(times),
        "max_memory_allocated_bytes": peak,
        "tokens_per_second": tokens / med,
        "model_flops_per_step": flops,
        "achieved_TFLOPs": flops / med / 1e12,
        "final_loss": float(loss.item()),
    }
    del step, state, model, loss  # the step's tensors, before the allocator's cache is emptied
    torch.cuda.empty_cache()
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--quick", action="store_true", help="two small configs, few steps")
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--micro-batches", default="4,8,16")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--seed", type=int, default=1234)
    args = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = True
    configs = []
    if args.quick:
        configs = [("gpt2-124m", 8, False), ("gpt2-124m", 8, True)]
        args.warmup, args.steps = 2, 4
    else:
        for name in args.models.split(","):
            for mb in (int(x) for x in args.micro_batches.split(",")):
                for ck in (False, True):
                    configs.append((name, mb, ck))
    results = []
    t0 = time.time()
    out = {
        "what": "GPT-2-shaped training steps in plain PyTorch (validation data for the training simulator)",
        "command": "python3 bench/pytorch/train_step.py " + " ".join(sys.argv[1:]),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "gpu": torch.cuda.get_device_name(0),
        "gpu_memory_bytes": torch.cuda.get_device_properties(0).total_memory,
        "torch_version": torch.__version__,
        "cuda_version": torch.version.cuda,
        "cudnn_version": torch.backends.cudnn.version(),
        "seed": args.seed,
        "configs": results,
    }
    for name, mb, ck in configs:
        try:
            r = measure(name, mb, ck, args.warmup, args.steps, args.seed)
        except torch.cuda.OutOfMemoryError:
            r = {"model": name, "micro_batch": mb, "checkpointing": "every_block" if ck else "none", "oom": True}
            torch.cuda.empty_cache()
        results.append(r)
        if "step_seconds_median" in r:
            print(f"{name:10s} mb={mb:3d} ckpt={'on ' if ck else 'off'} step {r['step_seconds_median']*1e3:8.1f} ms "
                  f"peak {r['max_memory_allocated_bytes']/2**30:6.1f} GiB {r['achieved_TFLOPs']:6.1f} TFLOP/s "
                  f"({time.time()-t0:.0f}s)", flush=True)
        else:
            print(f"{name:10s} mb={mb:3d} ckpt={'on ' if ck else 'off'} OOM", flush=True)
        # Written after every config, so a run cut short keeps what it measured.
        with open(args.out, "w") as f:
            json.dump(out, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
