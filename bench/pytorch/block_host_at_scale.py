#!/usr/bin/env python3
"""Host seconds per LLaMA block at a real width, against the tiny-shape block calibration.

`calibrate_framework.py --llama-blocks-only` measures the host cost of one block on tiny shapes
(hidden 64, 16 tokens), a new model per call and one warm-up. This script measures the same
blocks (llama_corpus.py's plain block and transformers' decoder layer, AMP and pure bf16, with and
without non-reentrant checkpointing per block) at llama-0.4b's width (hidden 1024, 16 heads / 4 KV,
FFN 2816), with the model kept across its steps: for L layers, the host seconds until the forward
call and the backward call return (the GPU light enough that it never holds the host back: one
sequence of S tokens), median over steps after warm-up, and the slope over L. The same is run at
the calibration's tiny width with the model kept, so that a difference can be told apart into
width and method.

    python3 bench/pytorch/block_host_at_scale.py --out OUT.json [--layers 4,8,16] [--seqs 256,1024]

With --steps-at MB:SEQ[,MB:SEQ...], whole training steps instead (llama_corpus.training_step: zero_grad,
forward, backward, fused AdamW; no synchronisation inside a step), the host seconds until each pass
returned, for llama-0.4b's width at those micro-batches and lengths: the host cost per block as a
step meets it, at a GPU load from idle to busy.
"""
import argparse
import json
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import llama_corpus  # noqa: E402


def slope(xs, ys):
    mx, my = statistics.mean(xs), statistics.mean(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx
    return b, my - b * mx


def host_per_pass(impl, dims, layers, precision, ckpt, seq, warm, steps):
    h, heads, kv, ffn, vocab = dims
    llama_corpus.MODELS["probe"] = (h, layers, heads, kv, ffn, vocab, False, False)
    dev = torch.device("cuda")
    torch.manual_seed(1)
    model, fwd = llama_corpus.build(impl, "probe", precision, ckpt, seq, dev)
    idx = torch.randint(0, vocab, (1, seq), device=dev)
    amp = precision == "amp"
    tf, tb = [], []
    for i in range(warm + steps):
        for p in model.parameters():
            p.grad = None
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=amp):
            loss = fwd(idx, idx)
        t1 = time.perf_counter()
        loss.backward()
        t2 = time.perf_counter()
        torch.cuda.synchronize()
        if i >= warm:
            tf.append(t1 - t0)
            tb.append(t2 - t1)
    del model
    torch.cuda.empty_cache()
    return statistics.median(tf), statistics.median(tb)


def step_host(impl, layers, precision, ckpt, mb, seq, warm, steps):
    llama_corpus.MODELS["probe"] = (1024, layers, 16, 4, 2816, 32000, False, False)
    dev = torch.device("cuda")
    model, opt, _ = llama_corpus.training_step(impl, "probe", precision, ckpt, mb, seq, dev, 2026)
    idx = torch.randint(0, 32000, (mb, seq), device=dev)
    amp = precision == "amp"
    fwd_call = (lambda: model(idx, idx)) if impl == "plain" else (lambda: model(input_ids=idx, labels=idx).loss)
    tf, tb, to, tstep = [], [], [], []
    for i in range(warm + steps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=amp):
            loss = fwd_call()
        t1 = time.perf_counter()
        loss.backward()
        t2 = time.perf_counter()
        opt.step()
        t3 = time.perf_counter()
        b.record()
        b.synchronize()
        if i >= warm:
            tf.append(t1 - t0), tb.append(t2 - t1), to.append(t3 - t2), tstep.append(a.elapsed_time(b) / 1e3)
    del model, opt
    torch.cuda.empty_cache()
    return [statistics.median(x) for x in (tf, tb, to, tstep)]


def steps_mode(args, res):
    layers = [int(x) for x in args.layers.split(",")]
    names = {"plain": "pytorch-eager", "hf": "transformers"}
    for impl in args.impls.split(","):
        for precision in ("amp", "pure"):
            for ckpt in (False, True):
                for ms in args.steps_at.split(","):
                    mb, seq = (int(x) for x in ms.split(":"))
                    pts = [step_host(impl, n, precision, ckpt, mb, seq, args.warmup, args.steps) for n in layers]
                    key = f"{names[impl]}/{'amp-bf16' if precision == 'amp' else 'bf16-pure'}/" \
                          f"{'checkpointed' if ckpt else 'plain'}"
                    bf, _ = slope(layers, [p[0] * 1e6 for p in pts])
                    bb, _ = slope(layers, [p[1] * 1e6 for p in pts])
                    res["rows"].append({"key": key, "mode": "steps", "micro_batch": mb, "seq": seq, "layers": layers,
                                        "forward_us_per_block": bf, "backward_us_per_block": bb,
                                        "host_forward_us": [p[0] * 1e6 for p in pts],
                                        "host_backward_us": [p[1] * 1e6 for p in pts],
                                        "host_optimizer_us": [p[2] * 1e6 for p in pts],
                                        "step_us": [p[3] * 1e6 for p in pts]})
                    print(f"{key:42s} steps mb={mb} s={seq:5d} fwd {bf:7.1f} us/block  bwd {bb:7.1f} us/block  "
                          f"host/step {[round(p[0] * 1e3 + p[1] * 1e3 + p[2] * 1e3, 1) for p in pts]} ms  "
                          f"step {[round(p[3] * 1e3, 1) for p in pts]} ms", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--layers", default="4,8,16")
    ap.add_argument("--seqs", default="256,1024")
    ap.add_argument("--impls", default="plain,hf")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--steps", type=int, default=9)
    ap.add_argument("--steps-at", default="", help="MB:SEQ list: whole training steps (see above)")
    args = ap.parse_args()
    layers = [int(x) for x in args.layers.split(",")]
    widths = {"real": ((1024, 16, 4, 2816, 32000), [int(s) for s in args.seqs.split(",")]),
              "tiny": ((64, 4, 2, 128, 256), [16])}
    names = {"plain": "pytorch-eager", "hf": "transformers"}
    res = {"what": "host microseconds per LLaMA block at a real width and at the calibration's tiny width "
                   "(bench/pytorch/block_host_at_scale.py)",
           "command": " ".join(sys.argv), "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
           "gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "rows": []}
    if args.steps_at:
        steps_mode(args, res)
        with open(args.out, "w") as f:
            json.dump(res, f, indent=1)
        return
    for impl in args.impls.split(","):
        for precision in ("amp", "pure"):
            for ckpt in (False, True):
                for wname, (dims, seqs) in widths.items():
                    for seq in seqs:
                        pts = [host_per_pass(impl, dims, n, precision, ckpt, seq, args.warmup, args.steps)
                               for n in layers]
                        bf, af = slope(layers, [p[0] * 1e6 for p in pts])
                        bb, ab = slope(layers, [p[1] * 1e6 for p in pts])
                        key = f"{names[impl]}/{'amp-bf16' if precision == 'amp' else 'bf16-pure'}/" \
                              f"{'checkpointed' if ckpt else 'plain'}"
                        row = {"key": key, "width": wname, "hidden": dims[0], "seq": seq, "layers": layers,
                               "forward_us_per_block": bf, "forward_intercept_us": af,
                               "backward_us_per_block": bb, "backward_intercept_us": ab,
                               "forward_us": [p[0] * 1e6 for p in pts], "backward_us": [p[1] * 1e6 for p in pts]}
                        res["rows"].append(row)
                        print(f"{key:42s} {wname:4s} s={seq:5d} fwd {bf:7.1f} us/block  bwd {bb:7.1f} us/block",
                              flush=True)
    with open(args.out, "w") as f:
        json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
