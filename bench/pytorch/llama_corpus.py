#!/usr/bin/env python3
"""Validation corpus: training steps of LLaMA-architecture models on one GPU, as people run them.

Three implementations of the same architecture (RMSNorm, rotary positions, GQA, SwiGLU, untied or
tied embeddings, optional QKV bias as in Qwen2):
  plain    - a plain PyTorch module: F.rms_norm, rotary positions applied elementwise
             (rotate-half), K/V heads repeated to the query heads before
             F.scaled_dot_product_attention, logits upcast to fp32 for F.cross_entropy;
  hf       - Hugging Face transformers (LlamaForCausalLM / Qwen2ForCausalLM) built from a config
             with random initialisation, SDPA attention, the library's own loss;
  compile  - the plain module under torch.compile (Inductor).
Step: AMP bf16 (fp32 parameters and AdamW states, torch.autocast) or pure bf16 (parameters and
states bf16), fused AdamW; activation checkpointing per block on or off.

Per configuration: median step time over timed steps (CUDA events around each step, warm-up
excluded), min/max, torch.cuda.max_memory_allocated over the warm-up and timed steps, the model's
dimensions. With --trace-dir, the configurations marked `trace` also write a torch.profiler
Chrome trace (record_shapes=True) of one step (gzip'd).

    python3 bench/pytorch/llama_corpus.py --out corpus.json [--trace-dir DIR] [--budget-s 420]
        [--only NAME,NAME] [--quick] [--eighth --attention flash|cudnn] [--tenth]
"""
import argparse
import contextlib
import datetime
import gc
import gzip
import json
import os
import shutil
import statistics
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

# name: hidden, layers, heads, kv_heads, ffn, vocab, tied, qkv_bias
MODELS = {
    "llama-0.4b": (1024, 24, 16, 4, 2816, 32000, False, False),
    "tinyllama-1.1b": (2048, 22, 32, 4, 5632, 32000, False, False),
    "qwen2.5-0.5b": (896, 24, 14, 2, 4864, 151936, True, True),
    "qwen2.5-1.5b": (1536, 28, 12, 2, 8960, 151936, True, True),
    "llama3.2-1b": (2048, 16, 32, 8, 8192, 128256, True, False),
    "llama3.2-3b": (3072, 28, 24, 8, 8192, 128256, True, False),
    "llama2-7b": (4096, 32, 32, 32, 11008, 32000, False, False),
    "llama3-8b": (4096, 32, 32, 8, 14336, 128256, False, False),
    "mistral-7b": (4096, 32, 32, 8, 14336, 32768, False, False),
    # Only in the fifth batch: head width 64 (SmolLM, SmolLM2), Qwen2.5-3B, Yi-6B, DeepSeek-LLM-7B.
    "smollm-360m": (960, 32, 15, 5, 2560, 49152, True, False),
    "smollm2-1.7b": (2048, 24, 32, 32, 8192, 49152, True, False),
    "qwen2.5-3b": (2048, 36, 16, 2, 11008, 151936, True, True),
    "yi-6b": (4096, 32, 32, 4, 11008, 64000, False, False),
    "deepseek-7b": (4096, 30, 32, 32, 11008, 102400, False, False),
    # Only in the sixth batch: head width 80 (H2O-Danube-1.8B), InternLM2-1.8B, MiniCPM-2B (40 layers,
    # MHA of 36 heads, an odd vocabulary of 122,753), Qwen2.5-7B (7 query heads per KV head, qkv bias).
    "danube-1.8b": (2560, 24, 32, 8, 6912, 32000, False, False),
    "internlm2-1.8b": (2048, 24, 16, 8, 8192, 92544, False, False),
    "minicpm-2b": (2304, 40, 36, 36, 5760, 122753, True, False),
    "qwen2.5-7b": (3584, 28, 28, 4, 18944, 152064, False, True),
    # Only in the seventh batch: Phi-3-mini's shape (3.8B, 32 layers of MHA at hidden 3072, vocabulary
    # 32,064), Yi-1.5-9B's (48 layers, 4 KV groups), CodeLlama-7B's (LLaMA-2-7B with the vocabulary
    # 32,016: an LM head not a multiple of 64) and DeepSeek-Coder-1.3B's (MHA, FFN 5,504, vocabulary 32,256).
    "phi3-mini": (3072, 32, 32, 32, 8192, 32064, False, False),
    "yi-9b": (4096, 48, 32, 4, 11008, 64000, False, False),
    "codellama-7b": (4096, 32, 32, 32, 11008, 32016, False, False),
    "deepseek-coder-1.3b": (2048, 24, 16, 16, 5504, 32256, False, False),
    # Only in the tenth batch: Granite-3-2B's shape (40 layers, an odd vocabulary of 49,155, tied),
    # StableLM-2-1.6B's (MHA at head width 64, vocabulary 100,352), OLMo-1B's (16 layers of MHA at
    # head width 128, tied) and LLaMA-2-13B's (hidden 5,120, 40 layers: the largest model of the corpus).
    "granite3-2b": (2048, 40, 32, 8, 8192, 49155, True, False),
    "stablelm2-1.6b": (2048, 24, 32, 32, 5632, 100352, False, False),
    "olmo-1b": (2048, 16, 16, 16, 8192, 50304, True, False),
    "llama2-13b": (5120, 40, 40, 40, 13824, 32000, False, False),
}

# (impl, model, precision, checkpointing, micro_batch, seq_len, split, trace)
# split: "fit" rows may be looked at when calibrating; "validation" rows may not.
CONFIGS = [
    ("plain", "llama-0.4b", "amp", False, 4, 2048, "fit", True),
    ("plain", "llama-0.4b", "amp", True, 4, 2048, "fit", True),
    ("plain", "llama-0.4b", "pure", False, 8, 2048, "fit", True),
    ("plain", "llama-0.4b", "amp", False, 1, 8192, "validation", False),
    ("plain", "llama-0.4b", "pure", True, 2, 4096, "validation", False),
    ("plain", "tinyllama-1.1b", "amp", False, 2, 2048, "validation", False),
    ("plain", "tinyllama-1.1b", "amp", True, 4, 4096, "validation", False),
    ("plain", "tinyllama-1.1b", "pure", False, 4, 2048, "validation", False),
    ("plain", "llama3.2-1b", "amp", False, 2, 2048, "validation", False),
    ("plain", "llama3.2-1b", "pure", True, 4, 4096, "validation", False),
    ("plain", "qwen2.5-0.5b", "amp", False, 4, 2048, "fit", False),
    ("plain", "qwen2.5-0.5b", "pure", True, 8, 2048, "validation", False),
    ("plain", "llama3.2-3b", "amp", True, 2, 4096, "validation", False),
    ("plain", "llama3.2-3b", "pure", False, 1, 4096, "validation", False),
    ("plain", "llama2-7b", "pure", True, 1, 4096, "validation", False),
    ("plain", "llama2-7b", "pure", False, 1, 2048, "validation", False),
    ("plain", "llama3-8b", "pure", True, 2, 4096, "validation", False),
    ("plain", "llama3-8b", "pure", True, 1, 8192, "validation", False),
    ("hf", "llama-0.4b", "amp", False, 4, 2048, "fit", True),
    ("hf", "qwen2.5-0.5b", "amp", False, 4, 2048, "validation", False),
    ("hf", "qwen2.5-0.5b", "amp", True, 8, 2048, "validation", False),
    ("hf", "qwen2.5-1.5b", "amp", False, 2, 4096, "validation", False),
    ("hf", "qwen2.5-1.5b", "pure", True, 4, 4096, "validation", False),
    ("hf", "tinyllama-1.1b", "amp", False, 4, 1024, "validation", False),
    ("hf", "tinyllama-1.1b", "amp", True, 4, 2048, "validation", False),
    ("hf", "llama3.2-1b", "amp", False, 2, 2048, "validation", False),
    ("hf", "mistral-7b", "pure", True, 1, 4096, "validation", False),
    ("compile", "llama-0.4b", "amp", False, 4, 2048, "fit", True),
    ("compile", "llama-0.4b", "pure", False, 8, 2048, "validation", False),
    ("compile", "llama3.2-1b", "amp", False, 2, 2048, "validation", False),
]

# A second batch (--extra): short sequences and small micro-batches, where the host's dispatch of
# eager kernels decides the step, and more model/precision/checkpointing combinations.
CONFIGS_EXTRA = [
    ("plain", "llama-0.4b", "amp", False, 1, 1024, "validation", False),
    ("plain", "llama-0.4b", "pure", True, 1, 1024, "validation", False),
    ("plain", "qwen2.5-0.5b", "amp", True, 2, 1024, "validation", False),
    ("plain", "tinyllama-1.1b", "amp", True, 1, 2048, "validation", False),
    ("plain", "qwen2.5-1.5b", "pure", False, 2, 4096, "validation", False),
    ("plain", "mistral-7b", "pure", False, 1, 1024, "validation", False),
    ("hf", "qwen2.5-0.5b", "pure", False, 2, 1024, "validation", False),
    ("hf", "llama3.2-1b", "pure", True, 2, 2048, "validation", False),
    ("hf", "llama-0.4b", "amp", True, 2, 4096, "validation", False),
    ("compile", "tinyllama-1.1b", "amp", False, 2, 2048, "validation", False),
]

# A third batch (--unseen), measured after the model of every framework was complete, on another
# machine start: combinations no earlier batch has, across sizes, precisions, checkpointing and
# sequence lengths, and compiled steps with checkpointing. Validation only.
CONFIGS_UNSEEN = [
    ("plain", "llama3.2-3b", "amp", False, 1, 2048, "validation", False),
    ("plain", "mistral-7b", "pure", True, 2, 4096, "validation", False),
    ("plain", "llama3-8b", "pure", False, 1, 2048, "validation", False),
    ("plain", "qwen2.5-1.5b", "amp", True, 4, 2048, "validation", False),
    ("plain", "tinyllama-1.1b", "pure", True, 2, 8192, "validation", False),
    ("plain", "llama-0.4b", "amp", False, 8, 1024, "validation", False),
    ("plain", "llama2-7b", "amp", True, 1, 4096, "validation", False),
    ("plain", "llama3.2-1b", "amp", False, 1, 8192, "validation", False),
    ("hf", "llama3.2-3b", "pure", False, 1, 4096, "validation", False),
    ("hf", "tinyllama-1.1b", "pure", False, 2, 4096, "validation", False),
    ("hf", "qwen2.5-0.5b", "amp", False, 2, 8192, "validation", False),
    ("compile", "llama-0.4b", "amp", True, 4, 2048, "validation", False),
    ("compile", "qwen2.5-0.5b", "pure", True, 4, 4096, "validation", False),
]

# A fourth batch (--fourth), measured after the host's per-op issue and RoPE on strided inputs
# were in the model (2026-12-03), on another machine start, predicted by the committed model
# before it ran: combinations no earlier batch has. Validation only.
CONFIGS_FOURTH = [
    ("plain", "llama-0.4b", "pure", False, 4, 1024, "validation", False),
    ("plain", "tinyllama-1.1b", "amp", False, 1, 4096, "validation", False),
    ("plain", "qwen2.5-0.5b", "amp", False, 2, 4096, "validation", False),
    ("plain", "llama3.2-1b", "pure", False, 2, 4096, "validation", False),
    ("plain", "llama3.2-3b", "pure", True, 1, 8192, "validation", False),
    ("plain", "llama2-7b", "pure", False, 2, 2048, "validation", False),
    ("plain", "mistral-7b", "pure", False, 1, 4096, "validation", False),
    ("plain", "qwen2.5-1.5b", "amp", False, 1, 8192, "validation", False),
    ("plain", "llama3-8b", "pure", False, 1, 4096, "validation", False),
    ("hf", "llama-0.4b", "pure", False, 4, 2048, "validation", False),
    ("hf", "llama3.2-1b", "amp", True, 4, 4096, "validation", False),
    ("hf", "llama2-7b", "pure", True, 1, 4096, "validation", False),
    ("compile", "llama3.2-1b", "pure", False, 2, 4096, "validation", False),
]

# A fifth batch (--fifth), predicted by the committed model before it ran (2026-12-03), after the
# fourth start of the block host calibration was merged: five model shapes no earlier batch has
# (head width 64 with GQA and with MHA, Qwen2.5-3B, Yi-6B, DeepSeek-LLM-7B) in every framework, and
# combinations of checkpointing, micro-batch and sequence length no earlier batch has. Validation only.
CONFIGS_FIFTH = [
    ("plain", "smollm-360m", "amp", False, 8, 2048, "validation", False),
    ("plain", "smollm2-1.7b", "pure", True, 4, 2048, "validation", False),
    ("plain", "qwen2.5-3b", "amp", False, 1, 4096, "validation", False),
    ("plain", "yi-6b", "pure", False, 1, 4096, "validation", False),
    ("plain", "deepseek-7b", "pure", True, 2, 2048, "validation", False),
    ("plain", "tinyllama-1.1b", "amp", True, 8, 1024, "validation", False),
    ("plain", "llama3.2-1b", "amp", True, 1, 8192, "validation", False),
    ("hf", "smollm2-1.7b", "amp", False, 2, 2048, "validation", False),
    ("hf", "qwen2.5-3b", "pure", True, 2, 4096, "validation", False),
    ("hf", "llama-0.4b", "amp", False, 8, 1024, "validation", False),
    ("hf", "yi-6b", "pure", False, 1, 2048, "validation", False),
    ("compile", "smollm-360m", "pure", False, 4, 2048, "validation", False),
    ("compile", "yi-6b", "pure", True, 1, 4096, "validation", False),
]

# A sixth batch (--sixth), predicted by the committed model before it ran, with the 80% interval the
# profile's validation record gives each prediction (2026-12-04): four model shapes no earlier batch
# has (head width 80, an odd vocabulary, 40 layers, Qwen2.5-7B), a 16k-token sequence, and unseen
# combinations. Validation only.
CONFIGS_SIXTH = [
    ("plain", "danube-1.8b", "amp", False, 2, 2048, "validation", False),
    ("plain", "danube-1.8b", "pure", True, 2, 4096, "validation", False),
    ("plain", "internlm2-1.8b", "amp", False, 4, 2048, "validation", False),
    ("plain", "minicpm-2b", "pure", True, 2, 4096, "validation", False),
    ("plain", "qwen2.5-7b", "pure", True, 1, 4096, "validation", False),
    ("plain", "llama3.2-1b", "amp", True, 1, 16384, "validation", False),
    ("plain", "llama-0.4b", "pure", False, 2, 8192, "validation", False),
    ("hf", "internlm2-1.8b", "pure", True, 4, 2048, "validation", False),
    ("hf", "minicpm-2b", "amp", False, 1, 4096, "validation", False),
    ("hf", "qwen2.5-7b", "pure", True, 1, 2048, "validation", False),
    ("hf", "danube-1.8b", "amp", True, 2, 2048, "validation", False),
    ("compile", "internlm2-1.8b", "amp", False, 2, 2048, "validation", False),
    ("compile", "danube-1.8b", "pure", True, 1, 4096, "validation", False),
]

# A seventh batch (--seventh), predicted by the committed model (eager kernels at the tables' clock,
# 2026-12-04) with its 80% intervals before it ran: four model shapes no batch had.
CONFIGS_SEVENTH = [
    ("plain", "phi3-mini", "pure", False, 1, 4096, "validation", False),
    ("plain", "phi3-mini", "amp", True, 2, 2048, "validation", False),
    ("plain", "yi-9b", "pure", True, 1, 4096, "validation", False),
    ("plain", "codellama-7b", "pure", False, 1, 2048, "validation", False),
    ("plain", "deepseek-coder-1.3b", "amp", False, 4, 2048, "validation", False),
    ("plain", "deepseek-coder-1.3b", "pure", True, 4, 4096, "validation", False),
    ("plain", "qwen2.5-3b", "pure", False, 2, 4096, "validation", False),
    ("hf", "phi3-mini", "pure", True, 2, 4096, "validation", False),
    ("hf", "yi-9b", "pure", True, 1, 2048, "validation", False),
    ("hf", "deepseek-coder-1.3b", "amp", False, 2, 2048, "validation", False),
    ("hf", "codellama-7b", "pure", True, 1, 4096, "validation", False),
    ("compile", "phi3-mini", "pure", False, 1, 2048, "validation", False),
    ("compile", "deepseek-coder-1.3b", "amp", True, 4, 2048, "validation", False),
]

# Eighth batch: long sequences, where attention is a large share of the step; run once per
# attention implementation (--attention flash, --attention cudnn). Validation only.
CONFIGS_EIGHTH = [
    ("plain", "llama-0.4b", "pure", True, 1, 16384, "validation", False),
    ("plain", "llama-0.4b", "amp", False, 2, 8192, "validation", False),
    ("plain", "tinyllama-1.1b", "pure", True, 1, 32768, "validation", False),
    ("plain", "llama3.2-1b", "amp", True, 1, 16384, "validation", False),
    ("plain", "qwen2.5-1.5b", "pure", False, 1, 8192, "validation", False),
    ("plain", "llama2-7b", "pure", True, 1, 16384, "validation", False),
]

# Ninth batch: long sequences with grouped-query attention (K/V repeated before SDPA), predicted on
# both attention kernels and committed before it runs. Validation only.
CONFIGS_NINTH = [
    ("plain", "mistral-7b", "pure", True, 1, 16384, "validation", False),
    ("plain", "qwen2.5-0.5b", "amp", True, 1, 32768, "validation", False),
    ("plain", "llama3.2-3b", "pure", False, 1, 8192, "validation", False),
    ("plain", "qwen2.5-1.5b", "amp", True, 2, 16384, "validation", False),
    ("plain", "llama-0.4b", "pure", False, 4, 4096, "validation", False),
    ("plain", "llama3-8b", "pure", True, 1, 16384, "validation", False),
]


# Tenth batch: four model shapes no batch had, in every framework, predicted with the committed
# profile and its intervals before it ran (2026-12-05). Validation only.
CONFIGS_TENTH = [
    ("plain", "granite3-2b", "amp", False, 2, 2048, "validation", False),
    ("plain", "stablelm2-1.6b", "pure", True, 4, 4096, "validation", False),
    ("plain", "olmo-1b", "amp", True, 8, 2048, "validation", False),
    ("plain", "llama2-13b", "pure", True, 1, 2048, "validation", False),
    ("plain", "llama3.2-3b", "amp", False, 2, 2048, "validation", False),
    ("hf", "stablelm2-1.6b", "amp", False, 2, 4096, "validation", False),
    ("hf", "olmo-1b", "pure", False, 4, 2048, "validation", False),
    ("hf", "granite3-2b", "pure", True, 2, 4096, "validation", False),
    ("compile", "granite3-2b", "pure", True, 2, 4096, "validation", False),
    ("compile", "stablelm2-1.6b", "amp", False, 2, 2048, "validation", False),
]

# --sac: op-level selective checkpointing (checkpointing "op"), as torchtitan's policy runs it: each
# block under torch.utils.checkpoint with a policy that saves the outputs of the block's matmuls but
# every second one and of SDPA, recomputing everything else. Models without projection biases (so
# that every projection is an aten.mm); eager frameworks only. Validation only, predicted before
# any run (docs/data/h200_llama_corpus_sac_predicted.json).
CONFIGS_SAC = [
    ("plain", "llama3.2-1b", "amp", "op", 4, 2048, "validation", False),
    ("plain", "tinyllama-1.1b", "pure", "op", 4, 4096, "validation", False),
    ("plain", "llama3-8b", "pure", "op", 1, 4096, "validation", False),
    ("plain", "llama-0.4b", "amp", "op", 8, 2048, "validation", False),
    ("hf", "llama3.2-1b", "pure", "op", 4, 2048, "validation", False),
    ("hf", "tinyllama-1.1b", "amp", "op", 2, 4096, "validation", False),
    ("hf", "mistral-7b", "pure", "op", 1, 4096, "validation", False),
]


def sac_context():
    """Context functions for torch.utils.checkpoint's op-level policy: matmul outputs saved but every
    second one (counted separately in the forward and in the recomputation), SDPA's outputs saved,
    every other op recomputed."""
    from torch.utils.checkpoint import CheckpointPolicy, create_selective_checkpoint_contexts

    aten = torch.ops.aten
    save = {aten.mm.default, aten._scaled_dot_product_flash_attention.default,
            aten._scaled_dot_product_efficient_attention.default,
            aten._scaled_dot_product_cudnn_attention.default}
    count = {"forward": 0, "recompute": 0}

    def policy(ctx, func, *args, **kwargs):
        mode = "recompute" if ctx.is_recompute else "forward"
        if func == aten.mm.default:
            count[mode] += 1
        keep = func in save and not (func == aten.mm.default and count[mode] % 2 == 0)
        return CheckpointPolicy.MUST_SAVE if keep else CheckpointPolicy.PREFER_RECOMPUTE

    return create_selective_checkpoint_contexts(policy)


def rope_tables(seq, head_dim, dev, dtype, base=10000.0):
    """cos/sin tables in the parameters' dtype (fp32 under autocast, bf16 in pure bf16)."""
    inv = 1.0 / (base ** (torch.arange(0, head_dim, 2, device=dev, dtype=torch.float32) / head_dim))
    f = torch.outer(torch.arange(seq, device=dev, dtype=torch.float32), inv)
    emb = torch.cat((f, f), dim=-1)
    return emb.cos().to(dtype), emb.sin().to(dtype)


def rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


class Block(nn.Module):
    def __init__(self, h, heads, kv_heads, ffn, qkv_bias):
        super().__init__()
        self.heads, self.kv_heads, self.d = heads, kv_heads, h // heads
        self.n1 = nn.Parameter(torch.ones(h))
        self.n2 = nn.Parameter(torch.ones(h))
        self.q = nn.Linear(h, heads * self.d, bias=qkv_bias)
        self.k = nn.Linear(h, kv_heads * self.d, bias=qkv_bias)
        self.v = nn.Linear(h, kv_heads * self.d, bias=qkv_bias)
        self.o = nn.Linear(heads * self.d, h, bias=False)
        self.gate = nn.Linear(h, ffn, bias=False)
        self.up = nn.Linear(h, ffn, bias=False)
        self.down = nn.Linear(ffn, h, bias=False)

    def forward(self, x, cos, sin):
        b, s, h = x.shape
        y = F.rms_norm(x, (h,), self.n1, 1e-5)
        q = self.q(y).view(b, s, self.heads, self.d).transpose(1, 2)
        k = self.k(y).view(b, s, self.kv_heads, self.d).transpose(1, 2)
        v = self.v(y).view(b, s, self.kv_heads, self.d).transpose(1, 2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        rep = self.heads // self.kv_heads
        if rep > 1:
            k = k[:, :, None].expand(b, self.kv_heads, rep, s, self.d).reshape(b, self.heads, s, self.d)
            v = v[:, :, None].expand(b, self.kv_heads, rep, s, self.d).reshape(b, self.heads, s, self.d)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.o(a.transpose(1, 2).reshape(b, s, h))
        y = F.rms_norm(x, (h,), self.n2, 1e-5)
        return x + self.down(F.silu(self.gate(y)) * self.up(y))


class PlainLlama(nn.Module):
    def __init__(self, h, layers, heads, kv_heads, ffn, vocab, tied, qkv_bias, seq, ckpt):
        super().__init__()
        self.ckpt = ckpt
        self.emb = nn.Embedding(vocab, h)
        self.blocks = nn.ModuleList(Block(h, heads, kv_heads, ffn, qkv_bias) for _ in range(layers))
        self.norm = nn.Parameter(torch.ones(h))
        self.head = nn.Linear(h, vocab, bias=False)
        if tied:
            self.head.weight = self.emb.weight
        for m in self.modules():
            if isinstance(m, (nn.Linear, nn.Embedding)):
                nn.init.normal_(m.weight, std=0.02)
        self.seq, self.d = seq, h // heads

    def forward(self, idx, tgt):
        cos, sin = rope_tables(idx.shape[1], self.d, idx.device, self.emb.weight.dtype)
        x = self.emb(idx)
        for blk in self.blocks:
            if self.ckpt == "op":
                x = checkpoint(blk, x, cos, sin, use_reentrant=False, context_fn=sac_context)
            else:
                x = checkpoint(blk, x, cos, sin, use_reentrant=False) if self.ckpt else blk(x, cos, sin)
        h = x.shape[-1]
        logits = self.head(F.rms_norm(x, (h,), self.norm, 1e-5))
        return F.cross_entropy(logits.float().view(-1, logits.shape[-1]), tgt.view(-1))


def build(impl, name, precision, ckpt, seq, dev):
    h, layers, heads, kv, ffn, vocab, tied, qkv_bias = MODELS[name]
    if impl in ("plain", "compile"):
        with torch.device(dev):
            m = PlainLlama(h, layers, heads, kv, ffn, vocab, tied, qkv_bias, seq, ckpt)
        if precision == "pure":
            m = m.to(torch.bfloat16)
        if impl == "compile":
            fwd = torch.compile(m)
            return m, (lambda idx, tgt: fwd(idx, tgt))
        return m, (lambda idx, tgt: m(idx, tgt))
    import transformers

    common = dict(hidden_size=h, num_hidden_layers=layers, num_attention_heads=heads, num_key_value_heads=kv,
                  intermediate_size=ffn, vocab_size=vocab, tie_word_embeddings=tied,
                  max_position_embeddings=max(seq, 4096), rms_norm_eps=1e-5)
    if name.startswith("qwen"):
        cfg = transformers.Qwen2Config(**common)
        cls = transformers.Qwen2ForCausalLM
    elif name.startswith("mistral"):
        cfg = transformers.MistralConfig(**common, sliding_window=None)
        cls = transformers.MistralForCausalLM
    else:
        cfg = transformers.LlamaConfig(**common)
        cls = transformers.LlamaForCausalLM
    cfg._attn_implementation = "sdpa"
    with torch.device(dev):
        m = cls(cfg)
    if precision == "pure":
        m = m.to(torch.bfloat16)
    if ckpt:
        kwargs = {"use_reentrant": False}
        if ckpt == "op":
            kwargs["context_fn"] = sac_context
        m.gradient_checkpointing_enable(gradient_checkpointing_kwargs=kwargs)
    m.config.use_cache = False
    m.train()
    return m, (lambda idx, tgt: m(input_ids=idx, labels=tgt).loss)


def timed_steps(step, n, host=None):
    """Seconds of each of n steps (CUDA events around each); `host` collects the host seconds
    until step() returned (its dispatch, when the GPU does not hold the host back)."""
    out = []
    for _ in range(n):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        t0 = time.perf_counter()
        step()
        if host is not None:
            host.append(time.perf_counter() - t0)
        b.record()
        b.synchronize()
        out.append(a.elapsed_time(b) / 1e3)
    return out


def training_step(impl, name, precision, ckpt, mb, seq, dev, seed):
    """A model of MODELS built for `impl`, fused AdamW and random tokens (seeded): returns (model, opt,
    step), step() running one training step (zero_grad, forward under autocast for amp, backward,
    optimizer) and returning the loss."""
    torch.manual_seed(seed)
    model, fwd = build(impl, name, precision, ckpt, seq, dev)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-5, fused=True)
    vocab = MODELS[name][5]
    g = torch.Generator(device=dev).manual_seed(seed)
    idx = torch.randint(0, vocab, (mb, seq), device=dev, generator=g)
    tgt = torch.randint(0, vocab, (mb, seq), device=dev, generator=g)
    amp = precision == "amp"

    def step():
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=amp):
            loss = fwd(idx, tgt)
        loss.backward()
        opt.step()
        return loss

    return model, opt, step


def measure(cfg, args, trace_dir):
    impl, name, precision, ckpt, mb, seq, split, want_trace = cfg
    dev = torch.device("cuda")
    gc.collect()
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()
    base = torch.cuda.memory_allocated()
    t_build = time.time()
    model, opt, step = training_step(impl, name, precision, ckpt, mb, seq, dev, args.seed)
    params = sum(p.numel() for p in model.parameters())

    warm = args.warmup + (2 if impl == "compile" else 0)
    for _ in range(warm):
        step()
    torch.cuda.synchronize()
    setup_s = time.time() - t_build
    host = []
    times = timed_steps(step, args.steps, host)
    peak = torch.cuda.max_memory_allocated() - base
    trace_file = None
    if trace_dir and want_trace:
        from torch.profiler import ProfilerActivity, profile, schedule

        tag = f"{impl}_{name}_{precision}_{'sac' if ckpt == 'op' else 'ckpt' if ckpt else 'nockpt'}_mb{mb}_s{seq}"
        path = os.path.join(trace_dir, tag + ".json")
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], record_shapes=True,
                     schedule=schedule(wait=0, warmup=1, active=1, repeat=1)) as prof:
            for _ in range(2):
                step()
                prof.step()
        torch.cuda.synchronize()
        prof.export_chrome_trace(path)
        with open(path, "rb") as fi, gzip.open(path + ".gz", "wb", compresslevel=9) as fo:
            shutil.copyfileobj(fi, fo)
        os.remove(path)
        trace_file = tag + ".json.gz"
    h, layers, heads, kv, ffn, vocab, tied, qkv_bias = MODELS[name]
    res = {
        "impl": impl,
        "framework": "torch-compile" if impl == "compile" else "pytorch-eager",
        "model": name,
        "dims": {"hidden": h, "layers": layers, "heads": heads, "kv_heads": kv, "ffn": ffn, "vocab": vocab,
                 "tied_embeddings": tied, "qkv_bias": qkv_bias, "norm": "rmsnorm", "mlp": "swiglu",
                 "positions": "rope"},
        "params": params,
        "precision": "amp-bf16" if precision == "amp" else "bf16-pure",
        "checkpointing": "selective_op" if ckpt == "op" else "every_block" if ckpt else "none",
        "micro_batch": mb,
        "seq_len": seq,
        "split": split,
        "warmup_steps": warm,
        "timed_steps": args.steps,
        "step_seconds_median": statistics.median(times),
        "step_seconds_min": min(times),
        "step_seconds_max": max(times),
        "host_seconds_median": statistics.median(host),
        "max_memory_allocated_bytes": peak,
        "setup_seconds": setup_s,
        "trace": trace_file,
    }
    del step, model, opt
    gc.collect()
    torch.cuda.empty_cache()
    return res


def attention_backend(name):
    """The SDPA backend every step runs under: the library's own choice, or one forced."""
    if name == "default":
        return contextlib.nullcontext()
    from torch.nn.attention import SDPBackend, sdpa_kernel

    return sdpa_kernel([{"flash": SDPBackend.FLASH_ATTENTION, "cudnn": SDPBackend.CUDNN_ATTENTION}[name]])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--trace-dir", default="")
    ap.add_argument("--budget-s", type=float, default=420)
    ap.add_argument("--only", default="", help="comma-separated impl:model filters")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--steps", type=int, default=8)
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--precision", default="", help="only configs of this precision (amp or pure)")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--extra", action="store_true", help="the second batch of configurations (CONFIGS_EXTRA)")
    ap.add_argument("--unseen", action="store_true", help="the third batch of configurations (CONFIGS_UNSEEN)")
    ap.add_argument("--fourth", action="store_true", help="the fourth batch of configurations (CONFIGS_FOURTH)")
    ap.add_argument("--fifth", action="store_true", help="the fifth batch of configurations (CONFIGS_FIFTH)")
    ap.add_argument("--sixth", action="store_true", help="the sixth batch of configurations (CONFIGS_SIXTH)")
    ap.add_argument("--seventh", action="store_true", help="the seventh batch of configurations (CONFIGS_SEVENTH)")
    ap.add_argument("--eighth", action="store_true", help="the eighth batch of configurations (CONFIGS_EIGHTH)")
    ap.add_argument("--ninth", action="store_true", help="the ninth batch of configurations (CONFIGS_NINTH)")
    ap.add_argument("--tenth", action="store_true", help="the tenth batch of configurations (CONFIGS_TENTH)")
    ap.add_argument("--sac", action="store_true",
                    help="op-level selective checkpointing, torchtitan's policy (CONFIGS_SAC)")
    ap.add_argument("--attention", default="default", choices=["default", "flash", "cudnn"],
                    help="SDPA backend for every step: the library's choice, or forced (sdpa_kernel)")
    args = ap.parse_args()
    if (args.extra + args.unseen + args.fourth + args.fifth + args.sixth + args.seventh + args.eighth + args.ninth
            + args.tenth + args.sac > 1):
        sys.exit("--extra, --unseen, --fourth, --fifth, --sixth, --seventh, --eighth, --ninth, --tenth and --sac "
                 "select different batches; give one")
    configs = (CONFIGS_EXTRA if args.extra else CONFIGS_UNSEEN if args.unseen else
               CONFIGS_FOURTH if args.fourth else CONFIGS_FIFTH if args.fifth else
               CONFIGS_SIXTH if args.sixth else CONFIGS_SEVENTH if args.seventh else
               CONFIGS_EIGHTH if args.eighth else CONFIGS_NINTH if args.ninth else
               CONFIGS_TENTH if args.tenth else CONFIGS_SAC if args.sac else CONFIGS)
    if args.only:
        keep = set(args.only.split(","))
        configs = [c for c in configs if f"{c[0]}:{c[1]}" in keep or c[1] in keep]
    if args.precision:
        configs = [c for c in configs if c[2] == args.precision]
    if args.quick:
        configs = configs[:2]
        args.warmup, args.steps = 1, 2
    if args.trace_dir:
        os.makedirs(args.trace_dir, exist_ok=True)
    import transformers

    out = {
        "what": "LLaMA-architecture training steps on one GPU (plain PyTorch, Hugging Face transformers, "
                "torch.compile); validation corpus of the training simulator",
        "command": "python3 bench/pytorch/llama_corpus.py " + " ".join(sys.argv[1:]),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "gpu": torch.cuda.get_device_name(0),
        "gpu_memory_bytes": torch.cuda.get_device_properties(0).total_memory,
        "torch_version": torch.__version__,
        "transformers_version": transformers.__version__,
        "cuda_version": torch.version.cuda,
        "seed": args.seed,
        "configs": [],
    }
    t0 = time.time()
    for cfg in configs:
        if time.time() - t0 > args.budget_s:
            print("budget reached; stopping", flush=True)
            break
        try:
            with attention_backend(args.attention):
                r = measure(cfg, args, args.trace_dir)
            r["attention"] = args.attention
            # When the timed steps ended (Unix seconds): aligns the configuration with clock and
            # power samples taken beside the run (nvidia-smi), timed window = steps x median before it.
            r["timed_end_unix"] = round(time.time(), 3)
        except torch.cuda.OutOfMemoryError:
            r = {"impl": cfg[0], "model": cfg[1], "precision": cfg[2], "micro_batch": cfg[4], "seq_len": cfg[5],
                 "oom": True}
            gc.collect()
            torch.cuda.empty_cache()
        except Exception as e:  # keep going: one broken config must not lose the rest
            r = {"impl": cfg[0], "model": cfg[1], "error": repr(e)[:400]}
            gc.collect()
            torch.cuda.empty_cache()
        out["configs"].append(r)
        if "step_seconds_median" in r:
            print(f"{r['impl']:7s} {r['model']:15s} {r['precision']:9s} ck={r['checkpointing'][:5]:5s} "
                  f"mb={r['micro_batch']:2d} s={r['seq_len']:5d} step {r['step_seconds_median']*1e3:8.1f} ms "
                  f"(min {r['step_seconds_min']*1e3:.1f} max {r['step_seconds_max']*1e3:.1f}) "
                  f"peak {r['max_memory_allocated_bytes']/2**30:6.2f} GiB setup {r['setup_seconds']:.0f}s "
                  f"[{time.time()-t0:.0f}s]", flush=True)
        else:
            print("FAILED", r, flush=True)
        with open(args.out, "w") as f:
            json.dump(out, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
