#!/usr/bin/env python3
"""Attention tables per implementation: F.scaled_dot_product_attention forced onto one backend at a
time (torch.nn.attention.sdpa_kernel), forward and backward, over the grid of the profile's
attention tables, extended to 65,536 tokens per sequence.

  flash  - PyTorch's FlashAttention backend: the FlashAttention-2 kernels (Tri Dao's library,
           vendored), which run on Hopper without its warpgroup MMA and tensor-memory loads; what
           trainers on the `flash-attn` package (attn_impl: flash, attn_implementation =
           "flash_attention_2") run on an H100/H200
  cudnn  - cuDNN's fused attention, SDPA's own choice on Hopper (the profile's default tables)

Same methodology as calibrate_framework.py's attention tables (whose helpers it uses): a sample is
`batch` back-to-back calls queued behind a GPU sleep, CUDA events, median of the samples, inputs
rotated over copies covering >= 3 x L2, random inputs; causal, bf16, 32 heads. Per backend: tables
for head widths 64, 96 and 128, held-out shapes off the grid, and the fit points the cost model
fits its attention block size from (the same shape streams as calibrate_framework.py).

    python3 bench/pytorch/attention_backends.py --out OUT.json [--backends flash,cudnn] [--budget-s 300]
        [--head-dims 128,64,96] [--no-points] [--quick]
"""
import argparse
import datetime
import json
import os
import sys
import time

import torch
from torch.nn.attention import SDPBackend, sdpa_kernel

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import calibrate_framework as cf  # noqa: E402

BACKENDS = {"flash": SDPBackend.FLASH_ATTENTION, "cudnn": SDPBackend.CUDNN_ATTENTION,
            "efficient": SDPBackend.EFFICIENT_ATTENTION}
KERNEL_NAMES = {"flash": "torch-sdpa-flash", "cudnn": "torch-sdpa-cudnn", "efficient": "torch-sdpa-efficient"}
SEQ_AXIS = cf.SEQ_AXIS + [32768, 65536]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--backends", default="flash,cudnn")
    ap.add_argument("--budget-s", type=float, default=300.0, help="stop measuring new shapes after this")
    ap.add_argument("--seed", type=int, default=4321)
    ap.add_argument("--head-dims", default="", help="tables only for these head widths (default: 128,64,96)")
    ap.add_argument("--no-points", action="store_true", help="tables only: no held-out shapes, no fit points")
    ap.add_argument("--quick", action="store_true", help="tiny shapes (to test the script)")
    args = ap.parse_args()
    all_dims = list(cf.HEAD_DIMS)
    table_dims = [int(x) for x in args.head_dims.split(",") if x] or all_dims
    names = [b for b in args.backends.split(",") if b]
    for b in names:
        if b not in BACKENDS:
            sys.exit(f"--backends: unknown backend '{b}' (valid: {', '.join(BACKENDS)})")
    dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    clock = cf.Clock(dev)
    cf.SEQ_AXIS = [128, 256] if args.quick else SEQ_AXIS
    props = torch.cuda.get_device_properties(0) if clock.cuda else None
    out = {
        "what": "SDPA attention forward/backward per backend (bench/pytorch/attention_backends.py)",
        "command": "python3 bench/pytorch/attention_backends.py " + " ".join(sys.argv[1:]),
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "device": {"name": props.name if props else "cpu",
                   "uuid": str(getattr(props, "uuid", "")) if props else ""},
        "versions": {"torch": torch.__version__, "cuda": torch.version.cuda,
                     "cudnn_version": torch.backends.cudnn.version() if clock.cuda else None},
        "backends": {},
    }

    def save():
        with open(args.out, "w") as f:
            json.dump(out, f, indent=1)

    t_start = time.time()
    for name in names:
        # One budget share per backend, so that a slow first backend does not starve the others.
        share = args.budget_s * (names.index(name) + 1) / len(names)
        args_b = argparse.Namespace(**vars(args))
        args_b.budget_s = share
        sec = {"tables": [], "holdout": [], "fit_points": [], "backend": {}, "notes": []}
        out["backends"][name] = sec
        holder = {"attention_sdpa": sec}
        with sdpa_kernel([BACKENDS[name]]):
            cf.HEAD_DIMS = table_dims
            ok = cf.attention_tables(clock, dev, args_b, holder, save, t_start)
            cf.HEAD_DIMS = all_dims  # the held-out and fit shape streams draw from every width
            for t in sec["tables"]:
                t["kernel"] = KERNEL_NAMES[name]
            if ok and not args.no_points:
                cf.attention_points(clock, dev, args_b, holder, save, t_start, "holdout", cf.holdout_shapes(args_b), 2)
                cf.attention_points(clock, dev, args_b, holder, save, t_start, "fit_points", cf.fit_shapes(args_b), 3)
        save()
    print(f"done in {time.time() - t_start:.0f}s -> {args.out}", flush=True)


if __name__ == "__main__":
    main()
