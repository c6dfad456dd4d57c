#!/usr/bin/env python3
"""Prints the prefill tables of docs/serving.md "Prefill of the held-out shapes, kernel by kernel" from
the stored measurements (docs/data/engine/prefill_shapes/start2): the engine's eager prefill of 512
tokens per kernel group against the cost model's GEMM times at its reference clock, and the pure and
mixed prefill steps of the `single` scenarios against the simulator's step model. With --gemms DIR:
one row per prefill{TOKENS}_{MODEL}.json there (the four GEMM groups, shapes from the file's model).

  python3 bench/engine/prefill_shapes_table.py [DIR] [--gemms DIR] [--infraplan build/bin/infraplan]
"""
import csv
import json
import os
import statistics
import subprocess
import sys

SCENARIOS = {  # model stem of the step files -> its `single` serving scenario
    "llama2-7b": "bench_llama2_7b_h200_single",
    "llama3-8b": "bench_llama3_8b_h200_single",
    "llama2-13b": "bench_llama2_13b_h200_single",
    "llama_phi3_medium_shape": "bench_phi3_medium_shape_h200_single",
}


def cost_us(exe, m, n, k):
    out = subprocess.run([exe, "cost", "--gpu", "h200-sxm-141gb", "--op", "gemm", "--m", str(m), "--n", str(n),
                          "--k", str(k), "--json"], check=True, capture_output=True, text=True).stdout
    return json.loads(out)["seconds"] * 1e6


def layer_shapes(model, tokens):
    h, hd = model["hidden"], model["head_dim"]
    qkv = (model["heads"] + 2 * model["kv_heads"]) * hd
    return {"gemm_qkv": (tokens, qkv, h), "gemm_o": (tokens, h, model["heads"] * hd),
            "gemm_gate_up": (tokens, 2 * model["ffn"], h), "gemm_down": (tokens, h, model["ffn"])}


def gemm_table(exe, d):
    print("| shape | tokens | qkv | o | gate-up | down | four GEMMs, measured / model |")
    print("|---|---|---|---|---|---|---|")
    ratios = []
    for f in sorted(os.listdir(d), key=lambda f: (f.split("_", 1)[-1], len(f), f)):
        if not (f.startswith("prefill") and f.endswith(".json")):
            continue
        j = json.load(open(os.path.join(d, f)))
        run = j["runs"][0]["prefill"]
        per = {k["kernel"]: k["seconds"] * 1e6 / k["count"] for k in run["kernels"]}
        cells, meas, model = [], 0.0, 0.0
        for name, shape in layer_shapes(j["model"], run["tokens"]).items():
            p = cost_us(exe, *shape)
            cells.append(f"{per[name] / p:.3f}")
            meas += per[name]
            model += p
        ratios.append(meas / model)
        stem = f[len("prefill"):-len(".json")].split("_", 1)[1]
        print(f"| {stem} | {run['tokens']} | " + " | ".join(cells) + f" | {meas / model:.3f} |")
    r = sorted(ratios)
    print(f"\n{len(r)} prefills: measured / model median {statistics.median(r):.3f}, range {r[0]:.3f} … {r[-1]:.3f}")


def main(argv):
    exe = "build/bin/infraplan"
    if "--infraplan" in argv:
        i = argv.index("--infraplan")
        exe = argv[i + 1]
        del argv[i:i + 2]
    if "--gemms" in argv:
        i = argv.index("--gemms")
        gemm_table(exe, argv[i + 1])
        return 0
    d = argv[1] if len(argv) > 1 else "docs/data/engine/prefill_shapes/start2"
    print("| model | qkv | o | gate-up | down | four GEMMs, measured / model |")
    print("|---|---|---|---|---|---|")
    for stem in SCENARIOS:
        j = json.load(open(os.path.join(d, f"prefill512_{stem}.json")))
        run = j["runs"][0]["prefill"]
        per = {k["kernel"]: k["seconds"] * 1e6 / k["count"] for k in run["kernels"]}
        cells, meas, model = [], 0.0, 0.0
        for name, s in layer_shapes(j["model"], run["tokens"]).items():
            p = cost_us(exe, *s)
            cells.append(f"{per[name]:.1f} / {p:.1f} µs")
            meas += per[name]
            model += p
        print(f"| {stem} | " + " | ".join(cells) + f" | {meas / model:.3f} |")
    print()
    print("| model | first prefill (after start) | later prefill steps, median | step model | measured / model |")
    print("|---|---|---|---|---|")
    for stem, sc in SCENARIOS.items():
        rows = list(csv.DictReader(open(os.path.join(d, f"steps_{sc}.csv"))))
        pre = [r for r in rows if int(r["prefill_seqs"]) > 0]
        later = [float(r["gpu_us"]) for r in pre[1:]]
        model = statistics.median(float(r["predicted_gpu_us"]) for r in pre[1:])
        kind = "mixed with one decode" if any(int(r["seqs"]) > 1 for r in pre[1:]) else "alone"
        med = statistics.median(later)
        print(f"| {stem} | {float(pre[0]['gpu_us']) / 1e3:.2f} ms | {med / 1e3:.2f} ms ({kind}, {len(later)}) | "
              f"{model / 1e3:.2f} ms | {med / model:.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
