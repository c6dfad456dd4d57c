#!/usr/bin/env python3
"""What a training step keeps for backward, per LLaMA block and for the loss: plain PyTorch (eager)
against the same module under torch.compile (Inductor), AMP bf16 and pure bf16, on a
calibration-shaped model (no corpus model). Per configuration the script records

  - the memory the forward leaves allocated (torch.cuda.memory_allocated after the loss, minus
    before the forward), at two depths: the slope over the blocks is the bytes one block keeps,
    the intercept what the embedding, the final norm, the LM head and the loss keep;
  - every tensor saved for backward (torch.autograd.graph.saved_tensors_hooks, which also sees the
    tensors AOTAutograd's compiled function saves), deduplicated by storage, parameters left out,
    as (shape, dtype, bytes) — which tensors make up those bytes;
  - the peak during backward above the forward's end (what the loss's backward and the first
    gradients add).

    python3 bench/pytorch/saved_activations.py --out saved.json [--quick]
"""
import argparse
import datetime
import gc
import json
import sys

import torch

import llama_corpus

# hidden, heads, kv_heads, ffn, vocab: a calibration shape (no corpus model has it)
SHAPE = (1536, 12, 4, 4096, 50000)


def one(impl, precision, layers, mb, seq, dev, ckpt=False):
    h, heads, kv, ffn, vocab = SHAPE
    llama_corpus.MODELS["calib-act"] = (h, layers, heads, kv, ffn, vocab, False, False)
    torch.manual_seed(1)
    model, fwd = llama_corpus.build(impl, "calib-act", precision, ckpt, seq, dev)
    params = {p.untyped_storage().data_ptr() for p in model.parameters()}
    idx = torch.randint(0, vocab, (mb, seq), device=dev)
    tgt = torch.randint(0, vocab, (mb, seq), device=dev)
    amp = precision == "amp"

    marks = {}

    def step(record=None):
        ctx = torch.autocast("cuda", dtype=torch.bfloat16) if amp else torch.autocast("cuda", enabled=False)
        if record is None:
            with ctx:
                loss = fwd(idx, tgt)
                torch.cuda.synchronize()
                marks["in_autocast"] = torch.cuda.memory_allocated()  # autocast's weight-cast cache alive
            return loss

        def pack(t):
            s = t.untyped_storage()
            record.append((tuple(t.shape), str(t.dtype).replace("torch.", ""), s.data_ptr(), s.nbytes()))
            return t

        with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t), ctx:
            loss = fwd(idx, tgt)
        return loss

    for _ in range(3):  # warm-up (compiles the graphs under torch.compile)
        step().backward()
        for p in model.parameters():
            p.grad = None
    torch.cuda.synchronize()
    gc.collect()
    m0 = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    loss = step()
    torch.cuda.synchronize()
    m1 = torch.cuda.memory_allocated()
    peak_fwd = torch.cuda.max_memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    loss.backward()
    torch.cuda.synchronize()
    peak = torch.cuda.max_memory_allocated()
    m2 = torch.cuda.memory_allocated()
    del loss
    for p in model.parameters():
        p.grad = None
    # The listing runs as a pass of its own, so that the hooks cannot change what was measured.
    saved, listing_error = [], None
    try:
        step(saved).backward()
    except Exception as e:  # e.g. a compiled graph that refuses saved-tensor hooks
        saved, listing_error = [], repr(e)[:300]
    seen, tensors = set(), []
    for shape, dtype, ptr, nbytes in saved:
        if ptr in params or ptr in seen or ptr == 0:
            continue
        seen.add(ptr)
        tensors.append({"shape": list(shape), "dtype": dtype, "bytes": nbytes})
    del model, fwd
    gc.collect()
    torch.cuda.empty_cache()
    return {"impl": impl, "precision": precision, "checkpointing": ckpt, "layers": layers, "micro_batch": mb,
            "seq_len": seq, "forward_kept_bytes": m1 - m0, "forward_kept_in_autocast_bytes": marks["in_autocast"] - m0,
            "forward_peak_bytes": peak_fwd - m0, "backward_peak_above_forward_bytes": peak - m1,
            "step_peak_bytes": max(peak_fwd, peak) - m0, "after_backward_bytes": m2 - m0,
            "saved_tensors": tensors, "saved_bytes": sum(t["bytes"] for t in tensors),
            "listing_error": listing_error}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--quick", action="store_true", help="tiny sequence (to test the script)")
    ap.add_argument("--impls", default="plain,compile", help="of plain, hf, compile")
    ap.add_argument("--checkpointing", default="off", help="off, on or both (activation checkpointing per block)")
    args = ap.parse_args()
    impls = args.impls.split(",")
    if any(i not in ("plain", "hf", "compile") for i in impls):
        sys.exit(f"--impls: {args.impls}; valid: plain, hf, compile")
    ckpts = {"off": [False], "on": [True], "both": [False, True]}.get(args.checkpointing)
    if ckpts is None:
        sys.exit(f"--checkpointing: {args.checkpointing}; valid: off, on, both")
    if not torch.cuda.is_available():
        sys.exit("needs a CUDA GPU")
    dev = torch.device("cuda")
    mb, seq = (1, 128) if args.quick else (2, 2048)
    depths = (2, 6)
    out = {"what": "memory kept for backward per LLaMA block and by the loss, eager vs torch.compile "
                   "(bench/pytorch/saved_activations.py)",
           "command": "python3 bench/pytorch/saved_activations.py " + " ".join(sys.argv[1:]),
           "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
           "gpu": torch.cuda.get_device_name(0), "torch_version": torch.__version__,
           "shape": dict(zip(("hidden", "heads", "kv_heads", "ffn", "vocab"), SHAPE)),
           "micro_batch": mb, "seq_len": seq, "runs": [], "summary": []}
    for impl, ckpt, precision in [(i, c, p) for i in impls for c in ckpts for p in ("amp", "pure")]:
        rows = [one(impl, precision, n, mb, seq, dev, ckpt) for n in depths]
        out["runs"] += rows
        a, b = rows
        per_block = (b["forward_kept_bytes"] - a["forward_kept_bytes"]) / (depths[1] - depths[0])
        rest = a["forward_kept_bytes"] - depths[0] * per_block
        slope = {k: (b[k] - a[k]) / (depths[1] - depths[0]) for k in
                 ("forward_kept_in_autocast_bytes", "forward_peak_bytes", "step_peak_bytes", "after_backward_bytes")}
        s = {"impl": impl, "precision": precision, "checkpointing": ckpt, "tokens": mb * seq,
             "per_block_slopes_bytes": slope,
             "at_depth": {k: b[k] for k in ("forward_kept_bytes", "forward_kept_in_autocast_bytes", "forward_peak_bytes",
                                             "backward_peak_above_forward_bytes", "step_peak_bytes", "after_backward_bytes")},
             "per_block_bytes": per_block, "per_block_bytes_per_token": per_block / (mb * seq),
             "outside_blocks_bytes": rest, "outside_blocks_bytes_per_token": rest / (mb * seq),
             "backward_peak_above_forward_bytes": b["backward_peak_above_forward_bytes"]}
        out["summary"].append(s)
        print(f"{impl:8s} {precision:5s} ckpt={int(ckpt)} per block {per_block / 2**20:8.1f} MiB "
              f"({s['per_block_bytes_per_token']:.0f} B/token), outside blocks {rest / 2**20:8.1f} MiB "
              f"({s['outside_blocks_bytes_per_token']:.0f} B/token), backward peak +"
              f"{s['backward_peak_above_forward_bytes'] / 2**20:.1f} MiB", flush=True)
        print("    depth 6 MiB: " + ", ".join(f"{k} {v / 2**20:.1f}" for k, v in s["at_depth"].items()) +
              " | slopes MiB: " + ", ".join(f"{k} {v / 2**20:.1f}" for k, v in slope.items()), flush=True)
        with open(args.out, "w") as f:
            json.dump(out, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
