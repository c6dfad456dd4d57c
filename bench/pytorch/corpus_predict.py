#!/usr/bin/env python3
"""Predicted vs measured for a training corpus (bench/pytorch/llama_corpus.py output): each row
becomes a scenario (one GPU of the kind the corpus ran on: an H200, H100 or A100 preset; the row's
model dimensions, precision, framework, checkpointing, micro-batch and sequence length),
`infraplan simulate train --json` predicts it, and the table prints step time and peak memory
errors by split (fit / validation).

    python3 bench/pytorch/corpus_predict.py docs/data/h200_llama_corpus.json [--infraplan build/bin/infraplan]
        [--split validation] [--profile P.json] [--clock tables|sustained] [--preset dgx-h100]

Before a batch runs, its predictions alone (the configuration lists of llama_corpus.py, read without
importing torch), so that they can be committed before any measurement exists:

    python3 bench/pytorch/corpus_predict.py --batch CONFIGS_FIFTH [--attention flash] [--json PREDICTED.json]

Memory: the ledger's peak minus the CUDA context and NCCL buffers (max_memory_allocated counts
neither)."""
import argparse
import ast
import json
import os
import subprocess
import sys
import tempfile


# llama_corpus.py's checkpointing values as the scenario's training.recompute.
RECOMPUTE = {"none": "none", "every_block": "full", "selective_op": "selective-op"}

PRESETS = {"NVIDIA H200": "dgx-h200", "NVIDIA H100 80GB HBM3": "dgx-h100", "NVIDIA A100-SXM4-80GB": "dgx-a100"}


def preset_of(gpu_name, given=""):
    """The cluster preset of the GPU a corpus was measured on (its `gpu` field), or `given`."""
    if given:
        return given
    if gpu_name not in PRESETS:
        sys.exit(f"corpus measured on '{gpu_name}': no cluster preset known for it; pass --preset "
                 + "|".join(sorted(set(PRESETS.values()))))
    return PRESETS[gpu_name]


def scenario_of(row, profile, preset="dgx-h200"):
    d = row["dims"]
    impl = row["impl"]
    fw = {"plain": "pytorch-eager", "hf": "transformers", "compile": "torch-compile"}[impl]
    model = {"name": row["model"], "hidden": d["hidden"], "layers": d["layers"], "heads": d["heads"],
             "kv_heads": d["kv_heads"], "ffn_hidden": d["ffn"], "vocab": d["vocab"],
             "tied_embeddings": d["tied_embeddings"], "qkv_bias": d["qkv_bias"], "ffn_type": "swiglu",
             "norm": "rmsnorm", "position": "rope", "max_seq": max(4096, row["seq_len"])}
    sc = {"name": f"{impl}-{row['model']}", "model": model,
          "cluster": {"preset": preset, "nodes": 1, "gpus_per_node": 1},
          "training": {"seq_len": row["seq_len"], "micro_batch": row["micro_batch"], "global_batch": row["micro_batch"],
                       "precision": row["precision"], "framework": fw,
                       "recompute": RECOMPUTE[row["checkpointing"]]}}
    if row.get("attention", "default") == "flash":  # llama_corpus.py --attention flash
        sc["training"]["attention_kernel"] = "flash2"
    if profile:
        sc["profile"] = os.path.abspath(profile)
    return sc


def predict(infraplan, sc, clock="tables"):
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(sc, f)
        path = f.name
    try:
        out = subprocess.run([infraplan, "simulate", "train", "--scenario", path, "--json", "--clock", clock], capture_output=True,
                             text=True)
    finally:
        os.unlink(path)
    if out.returncode != 0:
        raise RuntimeError(out.stderr.strip())
    r = json.loads(out.stdout)
    res = r.get("result", r)
    lines = {l["name"]: l["bytes"] for l in res["memory"]["lines"]} if "lines" in res.get("memory", {}) else {}
    mem = res["peak_bytes"] - lines.get("cuda_context", 0) - lines.get("nccl_buffers", 0)
    return res["iteration_time_s"], mem, res


def batch_rows(name, attention="default"):
    """The rows llama_corpus.py would measure for its configuration list `name` (CONFIGS_FIFTH, ...),
    with the model dimensions it records, parsed from the script's source."""
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "llama_corpus.py")
    lists = {}
    for node in ast.parse(open(src).read()).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            if node.targets[0].id == "MODELS" or node.targets[0].id.startswith("CONFIGS"):
                lists[node.targets[0].id] = ast.literal_eval(node.value)
    if name not in lists or name == "MODELS":
        sys.exit(f"--batch: no configuration list '{name}' in {src}; choose one of "
                 + ", ".join(sorted(k for k in lists if k != "MODELS")))
    rows = []
    for impl, model, precision, ckpt, mb, seq, split, _ in lists[name]:
        h, layers, heads, kv, ffn, vocab, tied, qkv_bias = lists["MODELS"][model]
        rows.append({"impl": impl, "model": model, "split": split, "micro_batch": mb, "seq_len": seq,
                     "attention": attention,
                     "precision": "amp-bf16" if precision == "amp" else "bf16-pure",
                     "checkpointing": "selective_op" if ckpt == "op" else "every_block" if ckpt else "none",
                     "dims": {"hidden": h, "layers": layers, "heads": heads, "kv_heads": kv, "ffn": ffn,
                              "vocab": vocab, "tied_embeddings": tied, "qkv_bias": qkv_bias}})
    return rows


def predict_batch(args):
    out, rows = [], batch_rows(args.batch, args.attention)
    print("| impl | model | precision | ckpt | mb | seq | predicted step | 80% interval | predicted memory |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        t, m, res = predict(args.infraplan, scenario_of(r, args.profile, args.preset or "dgx-h200"), args.clock)
        iv = res.get("iteration_time_interval_s")
        out.append(dict(r, predicted_step_s=t, predicted_memory_bytes=m,
                        **({"predicted_step_interval_s": iv} if iv else {})))
        ivs = f"{iv[0]*1e3:.1f} … {iv[1]*1e3:.1f} ms" if iv else "-"
        print(f"| {r['impl']} | {r['model']} | {r['precision']} | {r['checkpointing']} | {r['micro_batch']} | "
              f"{r['seq_len']} | {t*1e3:.1f} ms | {ivs} | {m/2**30:.2f} GiB |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"batch": args.batch, "attention": args.attention, "clock": args.clock, "rows": out}, f,
                      indent=1)
            f.write("\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("corpus", nargs="*")
    ap.add_argument("--batch", default="", help="predict a configuration list of llama_corpus.py (no data)")
    ap.add_argument("--infraplan", default="build/bin/infraplan")
    ap.add_argument("--split", default="")
    ap.add_argument("--profile", default="")
    ap.add_argument("--json", default="", help="write the rows with predictions here")
    ap.add_argument("--attention", default="default", choices=["default", "flash", "cudnn"],
                    help="--batch: the SDPA backend the batch will run with (llama_corpus.py --attention)")
    ap.add_argument("--preset", default="",
                    help="cluster preset of the GPU (default: from the corpus's gpu field; --batch: dgx-h200)")
    ap.add_argument("--clock", default="tables", choices=["tables", "sustained"],
                    help="infraplan simulate train --clock (default tables)")
    args = ap.parse_args()
    if args.batch:
        predict_batch(args)
        return
    if not args.corpus:
        sys.exit("give corpus JSON files, or --batch NAME")
    rows = []
    for c in args.corpus:
        corpus = json.load(open(c))
        preset = preset_of(corpus.get("gpu", "NVIDIA H200"), args.preset)
        rows += [(r, preset) for r in corpus["configs"] if "step_seconds_median" in r]
    out = []
    print("| impl | model | precision | ckpt | mb | seq | split | measured | predicted | error | mem meas | mem pred | error |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    errs = {}
    for r, preset in rows:
        if args.split and r["split"] != args.split:
            continue
        try:
            t, m, _ = predict(args.infraplan, scenario_of(r, args.profile, preset), args.clock)
        except RuntimeError as e:
            print(f"| {r['impl']} | {r['model']} | ERROR {e} |")
            continue
        et = (t - r["step_seconds_median"]) / r["step_seconds_median"]
        em = (m - r["max_memory_allocated_bytes"]) / r["max_memory_allocated_bytes"]
        errs.setdefault((r["split"], r["impl"]), []).append((et, em))
        out.append(dict(r, predicted_step_s=t, predicted_memory_bytes=m))
        print(f"| {r['impl']} | {r['model']} | {r['precision']} | {r['checkpointing']} | {r['micro_batch']} | "
              f"{r['seq_len']} | {r['split']} | {r['step_seconds_median']*1e3:.1f} ms | {t*1e3:.1f} ms | {100*et:+.1f}% | "
              f"{r['max_memory_allocated_bytes']/2**30:.2f} GiB | {m/2**30:.2f} GiB | {100*em:+.1f}% |")
    for k, v in sorted(errs.items()):
        n = len(v)
        print(f"{k[0]:10s} {k[1]:8s} n={n:2d} step mean |e| {100*sum(abs(a) for a,_ in v)/n:5.1f}% "
              f"max {100*max(abs(a) for a,_ in v):5.1f}% | memory mean {100*sum(abs(b) for _,b in v)/n:5.1f}% "
              f"max {100*max(abs(b) for _,b in v):5.1f}%")
    if args.json:
        json.dump(out, open(args.json, "w"), indent=1)


if __name__ == "__main__":
    main()
