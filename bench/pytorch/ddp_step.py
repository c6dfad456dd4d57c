#!/usr/bin/env python3
"""Data-parallel training steps of GPT-2-shaped models with PyTorch DistributedDataParallel
(NCCL) on the GPUs of one machine: validation data for the training simulator's DP path.

The model and step are train_step.py's (AMP bf16 autocast, fused AdamW, tied embeddings); each
rank runs micro-batch `mb` on its own random batch, DDP all-reduces the gradients in buckets
during the backward (default 25 MiB buckets). Rank 0 records the median step time (CUDA events
after warm-up); every rank's torch.cuda.max_memory_allocated is kept.

    torchrun --nproc_per_node=2 bench/pytorch/ddp_step.py --out docs/data/h200x2_pytorch_ddp.json
"""
import argparse
import datetime
import json
import os
import statistics
import sys
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import train_step  # noqa: E402  (the model, its step and its FLOP count)


def measure(name, mb, warmup, steps, seed, rank, local_rank, plain=False):
    wrap = None if plain else (lambda m: DDP(m, device_ids=[local_rank]))
    step, state = train_step.make_step(name, mb, False, seed, wrap=wrap, batch_seed=seed + 1000 * rank)
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    for _ in range(warmup):
        step()
    torch.cuda.synchronize()
    dist.barrier()
    times, _ = train_step.timed_steps(step, steps)
    peak = torch.tensor([float(torch.cuda.max_memory_allocated())], device="cuda")
    peaks = [torch.zeros_like(peak) for _ in range(dist.get_world_size())]
    dist.all_gather(peaks, peak)
    layers, h, heads = train_step.MODELS[name]
    res = {
        "model": name,
        "dims": {"hidden": h, "layers": layers, "heads": heads, "vocab": train_step.VOCAB, "seq": train_step.SEQ,
                 "ffn": 4 * h, "tied_embeddings": True, "positions": "learned", "norm": "layernorm-pre",
                 "mlp": "gelu"},
        "micro_batch": mb,
        "data_parallel": dist.get_world_size(),
        "checkpointing": "none",
        "precision": "amp-bf16 autocast, fp32 master params, fused AdamW",
        "ddp": "none: the plain step in the same process (--also-plain)" if plain else
               "DistributedDataParallel, NCCL, default 25 MiB buckets",
        "warmup_steps": warmup,
        "timed_steps": steps,
        "step_seconds_median": statistics.median(times),
        "step_seconds_min": min(times),
        "step_seconds_max": max(times),
        "max_memory_allocated_bytes_per_rank": [int(x.item()) for x in peaks],
    }
    del step, state
    torch.cuda.empty_cache()
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--models", default=",".join(train_step.MODELS))
    ap.add_argument("--micro-batches", default="4,8")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--also-plain", action="store_true",
                    help="also time each config without DDP in the same process (with one rank: what DDP's "
                         "bucket copies and hooks cost without any inter-GPU traffic)")
    args = ap.parse_args()
    os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    torch.backends.cuda.matmul.allow_tf32 = True
    results = []
    out = {
        "what": "GPT-2-shaped data-parallel training steps (DDP) in plain PyTorch (validation data for the "
                "training simulator)",
        "command": "torchrun --nproc_per_node=%d bench/pytorch/ddp_step.py %s" % (dist.get_world_size(),
                                                                               " ".join(sys.argv[1:])),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "gpu": torch.cuda.get_device_name(local_rank),
        "gpus": dist.get_world_size(),
        "torch_version": torch.__version__,
        "cuda_version": torch.version.cuda,
        "nccl_version": ".".join(str(x) for x in torch.cuda.nccl.version()),
        "env": {"NCCL_NVLS_ENABLE": os.environ.get("NCCL_NVLS_ENABLE")},
        "seed": args.seed,
        "configs": results,
    }
    t0 = time.time()
    for name in args.models.split(","):
        for mb in (int(x) for x in args.micro_batches.split(",")):
            runs = [measure(name, mb, args.warmup, args.steps, args.seed, rank, local_rank)]
            if args.also_plain:
                runs.append(measure(name, mb, args.warmup, args.steps, args.seed, rank, local_rank, plain=True))
            results.extend(runs)
            r = runs[-1]
            if rank == 0:
                for r in runs:
                    print(f"{name:10s} mb={mb:3d} dp={r['data_parallel']} {r['ddp'][:24]:24s} step "
                          f"{r['step_seconds_median']*1e3:8.1f} ms peak "
                          f"{max(r['max_memory_allocated_bytes_per_rank'])/2**30:6.1f} GiB ({time.time()-t0:.0f}s)",
                          flush=True)
                with open(args.out, "w") as f:  # after every config: a run cut short keeps what it measured
                    json.dump(out, f, indent=1)
                    f.write("\n")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
