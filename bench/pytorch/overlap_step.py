#!/usr/bin/env python3
"""How much of a gradient all-reduce a backward pass really hides: calibration data for the
compute/communication overlap of data parallelism (DDP, FSDP), measured on one node.

Per rank, on the GPT-2-shaped models of train_step.py (AMP bf16 autocast), median of `--steps`:
  backward   the backward pass alone (loss.backward(), CUDA events on the compute stream)
  allreduce  an all-reduce of one flat fp32 buffer of the model's gradient bytes alone, on a side
             stream (NCCL, in 25 MiB chunks as DDP's buckets)
  both       the same all-reduce started on the side stream as the backward starts: the span until
             both are done, and each stream's own time inside it
From these: the backward's slow-down while NCCL runs beside it (compute_slowdown), the
all-reduce's slow-down while the backward runs (comm_slowdown), and the share of the shorter one
that was hidden (overlap = (backward + allreduce - both) / min(backward, allreduce)). With one
rank NCCL moves nothing between GPUs: run with 2 or more.

    torchrun --nproc_per_node=2 bench/pytorch/overlap_step.py --out overlap.json
"""
import argparse
import datetime
import json
import os
import statistics
import sys

import torch
import torch.distributed as dist

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import train_step  # noqa: E402

BUCKET_BYTES = 25 * 2**20


def events():
    return torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)


def measure(name, mb, steps, seed):
    step, (model, opt, idx, tgt) = train_step.make_step(name, mb, False, seed)
    params = sum(p.numel() for p in model.parameters())
    flat = torch.ones(params, dtype=torch.float32, device="cuda")
    chunks = list(flat.split(BUCKET_BYTES // 4))
    side = torch.cuda.Stream()

    def forward():
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            return model(idx, tgt)

    def allreduce():
        for c in chunks:
            dist.all_reduce(c)

    out = {"backward": [], "allreduce": [], "both": [], "backward_in_both": [], "allreduce_in_both": []}
    for i in range(steps + 2):
        loss = forward()
        torch.cuda.synchronize()
        dist.barrier()
        a, b = events()
        a.record()
        loss.backward()
        b.record()
        torch.cuda.synchronize()
        dist.barrier()
        c, d = events()
        with torch.cuda.stream(side):
            c.record(side)
            allreduce()
            d.record(side)
        torch.cuda.synchronize()
        loss = forward()
        torch.cuda.synchronize()
        dist.barrier()
        e, f = events()
        g, h = events()
        e.record()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            g.record(side)
            allreduce()
            h.record(side)
        loss.backward()
        f.record()
        torch.cuda.synchronize()
        if i < 2:
            continue  # warm-up
        bwd, ar = a.elapsed_time(b) / 1e3, c.elapsed_time(d) / 1e3
        out["backward"].append(bwd)
        out["allreduce"].append(ar)
        out["backward_in_both"].append(e.elapsed_time(f) / 1e3)
        out["allreduce_in_both"].append(g.elapsed_time(h) / 1e3)
        out["both"].append(max(e.elapsed_time(f), e.elapsed_time(h)) / 1e3)
    med = {k: statistics.median(v) for k, v in out.items()}
    hidden = med["backward"] + med["allreduce"] - med["both"]
    return {
        "model": name,
        "micro_batch": mb,
        "params": params,
        "allreduce_bytes": params * 4,
        "seconds_median": med,
        "compute_slowdown": med["backward_in_both"] / med["backward"],
        "comm_slowdown": med["allreduce_in_both"] / med["allreduce"],
        "overlap": hidden / min(med["backward"], med["allreduce"]),
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--models", default="gpt2-350m,gpt2-1.3b")
    ap.add_argument("--micro-batch", type=int, default=4)
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--seed", type=int, default=1234)
    args = ap.parse_args()
    os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    res = [measure(n, args.micro_batch, args.steps, args.seed) for n in args.models.split(",")]
    if dist.get_rank() == 0:
        with open(args.out, "w") as f:
            json.dump({"what": "backward vs a concurrent gradient all-reduce (calibration data for the overlap of "
                               "data parallelism)",
                       "command": "torchrun --nproc_per_node=%d bench/pytorch/overlap_step.py %s"
                                  % (dist.get_world_size(), " ".join(sys.argv[1:])),
                       "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%MZ"),
                       "gpu": torch.cuda.get_device_name(local_rank), "gpus": dist.get_world_size(),
                       "torch_version": torch.__version__, "configs": res}, f, indent=1)
            f.write("\n")
        for r in res:
            print(f"{r['model']:10s} mb={r['micro_batch']} backward {r['seconds_median']['backward']*1e3:7.1f} ms "
                  f"all-reduce {r['seconds_median']['allreduce']*1e3:7.1f} ms both {r['seconds_median']['both']*1e3:7.1f} ms "
                  f"compute x{r['compute_slowdown']:.2f} comm x{r['comm_slowdown']:.2f} overlap {r['overlap']:.2f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
