#!/usr/bin/env python3
"""Measured step times of one model at other micro-batches, sequence lengths and checkpointing than
its traced configuration, with the corpus's own step (bench/pytorch/llama_corpus.py measure()): the
data `infraplan calibrate --from-trace` is checked against. Each configuration runs in this one
process, as in the corpus. Defaults: plain llama-0.4b, AMP bf16, traced at mb 4, seq 2048, no
checkpointing (CONFIGS); --configs MB:SEQ[:ckpt],... gives another list, its first entry the
traced one.

    python3 bench/pytorch/trace_sweep.py --out OUT.json [--model NAME | --dims H,L,HEADS,KV,FFN,VOCAB]
        [--impl plain|compile|hf] [--precision amp|pure] [--configs 2:2048,1:2048,2:2048:ckpt,...]
        [--budget-s 75] [--trace-dir DIR]

--dims builds a model of those dimensions (untied embeddings, no QKV bias) named "custom", for
calibration runs on shapes outside the corpus. Under --impl compile every configuration compiles
afresh (torch._dynamo.reset() before it): static shapes, as a job that trains one shape.

With --trace-dir, the first (traced) configuration also writes its torch.profiler trace there
(llama_corpus.py's trace: record_shapes, one step after one warm-up step, gzip'd), so that the
trace and the measured steps come from one machine start.
"""
import argparse
import datetime
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import llama_corpus  # noqa: E402
import torch  # noqa: E402

# (micro_batch, seq_len, checkpointing); the traced configuration first (run-to-run check).
CONFIGS = [(4, 2048, False), (1, 2048, False), (2, 2048, False), (8, 2048, False), (4, 1024, False),
           (2, 4096, False), (1, 8192, False), (4, 2048, True), (2, 4096, True), (8, 2048, True),
           (1, 4096, True), (8, 1024, False)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--budget-s", type=float, default=75)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--trace-dir", default="", help="also write a profiler trace of the first configuration")
    ap.add_argument("--model", default="llama-0.4b", choices=sorted(llama_corpus.MODELS))
    ap.add_argument("--precision", default="amp", choices=["amp", "pure"])
    ap.add_argument("--configs", default="", help="MB:SEQ[:ckpt],... (the first one traced); default CONFIGS")
    ap.add_argument("--impl", default="plain", choices=["plain", "compile", "hf"])
    ap.add_argument("--dims", default="", help="H,LAYERS,HEADS,KV_HEADS,FFN,VOCAB of a model outside the corpus")
    args = ap.parse_args()
    if args.dims:
        f = args.dims.split(",")
        if len(f) != 6 or not all(x.isdigit() and int(x) > 0 for x in f):
            sys.exit(f"--dims: '{args.dims}' is not six positive integers H,LAYERS,HEADS,KV_HEADS,FFN,VOCAB")
        h, layers, heads, kv, ffn, vocab = (int(x) for x in f)
        if h % heads or heads % kv or (h // heads) % 2:
            sys.exit("--dims: HEADS must divide H into an even head width, and KV_HEADS must divide HEADS")
        llama_corpus.MODELS["custom"] = (h, layers, heads, kv, ffn, vocab, False, False)
        args.model = "custom"
    configs = CONFIGS
    if args.configs:
        configs = []
        for item in args.configs.split(","):
            f = item.split(":")
            if (len(f) not in (2, 3) or (len(f) == 3 and f[2] != "ckpt") or not f[0].isdigit() or not f[1].isdigit()
                    or int(f[0]) < 1 or int(f[1]) < 1):
                sys.exit(f"--configs: '{item}' is not MB:SEQ or MB:SEQ:ckpt with positive integers")
            configs.append((int(f[0]), int(f[1]), len(f) == 3))
    label = "AMP bf16" if args.precision == "amp" else "pure bf16"
    out = {"what": f"{args.impl} {args.model} {label} steps at other micro-batches, sequence lengths and checkpointing "
                   "(bench/pytorch/llama_corpus.py measure())",
           "command": "python3 bench/pytorch/trace_sweep.py " + " ".join(sys.argv[1:]),
           "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
           "gpu": torch.cuda.get_device_name(0), "torch_version": torch.__version__, "configs": []}
    if args.dims:
        out["dims"] = args.dims
    if args.trace_dir:
        os.makedirs(args.trace_dir, exist_ok=True)
    t0 = time.time()
    for mb, seq, ckpt in configs:
        if time.time() - t0 > args.budget_s:
            print("budget reached", flush=True)
            break
        first = not out["configs"]
        if args.impl == "compile":
            torch._dynamo.reset()
        cfg = (args.impl, args.model, args.precision, ckpt, mb, seq, "validation", bool(args.trace_dir) and first)
        try:
            r = llama_corpus.measure(cfg, args, args.trace_dir if first else "")
        except torch.cuda.OutOfMemoryError:
            r = {"micro_batch": mb, "seq_len": seq, "checkpointing": ckpt, "oom": True}
            torch.cuda.empty_cache()
        out["configs"].append(r)
        print(mb, seq, ckpt, r.get("step_seconds_median"), r.get("step_seconds_min"), r.get("step_seconds_max"),
              f"[{time.time() - t0:.0f}s]", flush=True)
        with open(args.out, "w") as f:
            json.dump(out, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
