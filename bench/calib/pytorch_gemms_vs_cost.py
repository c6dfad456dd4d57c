#!/usr/bin/env python3
"""A GEMM run of bench/pytorch/gemm_layouts.py against a GPU's cost model: every bf16 shape of at
least 10 µs predicted with `infraplan cost --op gemm` (its layout, the GPU's embedded profile or
--profile) and |predicted / measured − 1| summarised by layout and by kernel time (median, p90,
signed median). Used for GPUs whose runs have no test of their own (the H100 against its derived
profile, docs/accuracy.md "One H100").

    python3 bench/calib/pytorch_gemms_vs_cost.py docs/data/h100_pytorch_gemm_layouts_run1.json \\
        --gpu h100-sxm5-80gb [--infraplan build/bin/infraplan] [--profile P.json]
"""
import argparse
import json
import statistics
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor


def predict(args, r):
    cmd = [args.infraplan, "cost", "--gpu", args.gpu, "--op", "gemm", "--m", str(r["m"]), "--n", str(r["n"]),
           "--k", str(r["k"]), "--layout", r["layout"], "--dtype", r["dtype"], "--json"]
    if args.profile:
        cmd += ["--profile", args.profile]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"infraplan cost failed for {r['m']}x{r['n']}x{r['k']} {r['layout']}: {out.stderr.strip()}")
    return json.loads(out.stdout)["seconds"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("run", help="gemm_layouts.py output")
    ap.add_argument("--gpu", required=True, help="GPU catalog name (infraplan cost --gpu)")
    ap.add_argument("--infraplan", default="build/bin/infraplan")
    ap.add_argument("--profile", default="")
    ap.add_argument("--min-us", type=float, default=10.0)
    args = ap.parse_args()
    rows = [r for r in json.load(open(args.run))["shapes"] if r["seconds"] >= args.min_us * 1e-6]
    if not rows:
        sys.exit(f"{args.run}: no shape of at least {args.min_us} us")
    with ThreadPoolExecutor(4) as ex:
        preds = list(ex.map(lambda r: predict(args, r), rows))
    groups = {}
    for r, p in zip(rows, preds):
        e = p / r["seconds"] - 1
        t = r["seconds"]
        band = "10-100 us" if t < 1e-4 else "0.1-1 ms" if t < 1e-3 else "> 1 ms"
        for g in (r["layout"].upper(), band):
            groups.setdefault(g, []).append(e)
    print("| group | kernels | median abs error | p90 | signed median |\n|---|---|---|---|---|")
    for g, es in groups.items():
        a = sorted(abs(x) for x in es)
        print(f"| {g} | {len(es)} | {100 * statistics.median(a):.1f}% | {100 * a[int(0.9 * (len(a) - 1))]:.1f}% | "
              f"{100 * statistics.median(es):+.1f}% |")


if __name__ == "__main__":
    main()
