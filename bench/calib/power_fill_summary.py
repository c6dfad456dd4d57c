#!/usr/bin/env python3
"""Summary of bench/calib/power_fill_device.sh: per workload of the power probe, the sustained clock
and board power with normal GEMM operands against uniform ones (each the geometric mean of its two
runs, U-N-N-U), and the median clock ratio over the GEMMs the limit caps.

    python3 bench/calib/power_fill_summary.py RUN_DIR [--json OUT.json]
"""
import argparse
import json
import math
import os
import statistics

from profile_io import write_json


def points(path):
    with open(path) as f:
        d = json.load(f)
    d = d.get("power", d)
    out = {}
    for p in d["points"]:
        key = " ".join(str(p.get(k, "")) for k in ("kind", "dtype", "m", "n", "k", "layout", "mix_with",
                                                    "gemm_share", "period_s", "copy_bytes"))
        out[key] = p
    return d, out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("run_dir")
    ap.add_argument("--json")
    a = ap.parse_args()
    runs = {}
    for n in ("power_uniform_a", "power_uniform_b", "power_normal_a", "power_normal_b"):
        sec, pts = points(os.path.join(a.run_dir, n + ".json"))
        runs[n] = pts
    top = sec["max_clock_mhz"]
    g = lambda p, q, f: math.sqrt(f(p) * f(q))
    clk = lambda p: p["sustained"]["clock_mhz"]
    pw = lambda p: p["sustained"]["power_w"]
    rows, capped = [], []
    print(f"{'workload':52s} {'uniform':>9s} {'normal':>9s} {'ratio':>7s} {'W unif':>7s} {'W norm':>7s}")
    for key in runs["power_uniform_a"]:
        if not all(key in r for r in runs.values()):
            continue
        u = [runs["power_uniform_a"][key], runs["power_uniform_b"][key]]
        n = [runs["power_normal_a"][key], runs["power_normal_b"][key]]
        cu, cn = g(*u, clk), g(*n, clk)
        row = {"workload": key, "role": u[0].get("role"), "uniform_mhz": cu, "normal_mhz": cn,
               "clock_ratio": cn / cu, "uniform_w": g(*u, pw), "normal_w": g(*n, pw),
               "repeat_uniform": clk(u[1]) / clk(u[0]) - 1, "repeat_normal": clk(n[1]) / clk(n[0]) - 1}
        rows.append(row)
        print(f"{key:52s} {cu:9.0f} {cn:9.0f} {cn / cu:7.4f} {row['uniform_w']:7.0f} {row['normal_w']:7.0f}")
        if u[0]["kind"] == "gemm" and max(cu, cn) < top - 40:
            capped.append(cn / cu)
    out = {"top_clock_mhz": top, "workloads": rows}
    if capped:
        out["capped_gemm_clock_ratio"] = {"n": len(capped), "median": statistics.median(capped),
                                          "min": min(capped), "max": max(capped)}
        print(f"capped GEMMs: clock normal / uniform median {statistics.median(capped):.4f} "
              f"(min {min(capped):.4f}, max {max(capped):.4f}) over {len(capped)}")
    rep = [abs(r[k]) for r in rows for k in ("repeat_uniform", "repeat_normal")]
    print(f"repeat of the same fill: |b / a − 1| median {100 * statistics.median(rep):.2f}%, max {100 * max(rep):.2f}%")
    if a.json:
        write_json(a.json, out)


if __name__ == "__main__":
    main()
