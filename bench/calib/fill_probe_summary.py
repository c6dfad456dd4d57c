#!/usr/bin/env python3
"""Summary of bench/calib/fill_probe_device.sh: how much slower (or faster) the same GEMMs run with
uniform ±1 operands than with normal ones, per timing kind and kernel-time band, and how the
calibrator compares with PyTorch under each distribution.

    python3 bench/calib/fill_probe_summary.py RUN_DIR [--json OUT.json]

RUN_DIR holds short_{randn,uniform}_{a,b}.json, held_{randn,uniform}_{a,b}.json (PyTorch) and
cal_{uniform,normal}_{a,b}.json (infraplan-calibrate layouts). A shape's time under one
distribution is the geometric mean of its two runs (A-B-B-A sequence); kernels under 10 µs are left
out, as in the accuracy tables.
"""
import argparse
import json
import math
import os
import statistics

from profile_io import write_json

BANDS = ((10e-6, 100e-6, "10-100 us"), (100e-6, 1e-3, "0.1-1 ms"), (1e-3, 1.0, "> 1 ms"))


def key(r):
    return (r["layout"], int(r["m"]), int(r["n"]), int(r["k"]))


def load(path, field="seconds"):
    with open(path) as f:
        d = json.load(f)
    out = {}
    for r in d["shapes"]:
        if r.get("api", "cublas") != "cublas" or r.get(field) is None or r[field] <= 0:
            continue
        out[key(r)] = r
    return out


def clock_of(r):
    """A row's SM clock: PyTorch's held median, or the mean of the calibrator's before / after."""
    c = r.get("clock_mhz")
    if isinstance(c, list) and c and isinstance(c[0], list) and len(c[0]) == 2:
        return (c[0][0] + c[0][1]) / 2
    return c if isinstance(c, (int, float)) else None


def geo(run_dir, stem, fill):
    a = load(os.path.join(run_dir, f"{stem}_{fill}_a.json"))
    b = load(os.path.join(run_dir, f"{stem}_{fill}_b.json"))
    out = {}
    for k in a.keys() & b.keys():
        t = math.sqrt(a[k]["seconds"] * b[k]["seconds"])
        c = [clock_of(x) for x in (a[k], b[k])]
        clk = math.sqrt(c[0] * c[1]) if all(isinstance(x, (int, float)) for x in c) else None
        out[k] = {"seconds": t, "clock_mhz": clk, "repeat": b[k]["seconds"] / a[k]["seconds"] - 1}
    return out


def pct(xs, q):
    xs = sorted(xs)
    if not xs:
        return float("nan")
    i = min(len(xs) - 1, max(0, int(round(q * (len(xs) - 1)))))
    return xs[i]


def ratios(num, den):
    """Ratio num/den − 1 of the shapes both have, grouped by the kernel-time band of den's time."""
    rows = {}
    for k in num.keys() & den.keys():
        t = den[k]["seconds"]
        band = next((name for lo, hi, name in BANDS if lo <= t < hi), None)
        if band is None:
            continue
        rows.setdefault(band, []).append(num[k]["seconds"] / den[k]["seconds"] - 1)
        rows.setdefault("all", []).append(num[k]["seconds"] / den[k]["seconds"] - 1)
    return {b: {"n": len(v), "median": statistics.median(v), "p10": pct(v, 0.1), "p90": pct(v, 0.9)}
            for b, v in rows.items()}


def capped_clock(stem, uniform, normal, out):
    """What the power law needs: the clock a power-capped GEMM settles at with normal operands over
    the clock with uniform ones (shapes of >= 0.1 ms below the top clock under both), and whether the
    cycles per GEMM (time x clock) moved at all."""
    top = max(max(v["clock_mhz"] or 0 for v in d.values()) for d in (uniform, normal))
    both = [k for k in uniform.keys() & normal.keys()
            if uniform[k]["clock_mhz"] and normal[k]["clock_mhz"] and normal[k]["seconds"] >= 100e-6]
    cyc = [uniform[k]["seconds"] * uniform[k]["clock_mhz"] / (normal[k]["seconds"] * normal[k]["clock_mhz"]) - 1
           for k in both]
    capped = [normal[k]["clock_mhz"] / uniform[k]["clock_mhz"] for k in both
              if max(normal[k]["clock_mhz"], uniform[k]["clock_mhz"]) < top - 40]
    if cyc:
        print(f"  cycles per GEMM (time x clock) uniform / normal − 1, >= 0.1 ms: median "
              f"{100 * statistics.median(cyc):+.2f}%, p10 {100 * pct(cyc, 0.1):+.2f}%, p90 {100 * pct(cyc, 0.9):+.2f}%")
    if capped:
        r = statistics.median(capped)
        out[f"{stem}_capped_clock_normal_over_uniform"] = {"n": len(capped), "median": r, "p10": pct(capped, 0.1),
                                                           "p90": pct(capped, 0.9), "top_clock_mhz": top}
        print(f"  power-capped GEMMs (>= 0.1 ms, both below {top - 40:.0f} MHz): clock normal / uniform "
              f"median {r:.4f} (p10 {pct(capped, 0.1):.4f}, p90 {pct(capped, 0.9):.4f}) over {len(capped)}")


def show(title, res):
    print(title)
    for band in [b for _, _, b in BANDS] + ["all"]:
        if band in res:
            r = res[band]
            print(f"  {band:>10}: n {r['n']:4d}  median {100 * r['median']:+6.2f}%  "
                  f"p10 {100 * r['p10']:+6.2f}%  p90 {100 * r['p90']:+6.2f}%")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("run_dir")
    ap.add_argument("--json")
    a = ap.parse_args()
    out = {}
    runs = {}
    for stem, fills in (("short", ("randn", "uniform")), ("held", ("randn", "uniform")),
                        ("cal", ("normal", "uniform"))):
        try:
            runs[stem] = {f: geo(a.run_dir, stem, f) for f in fills}
        except FileNotFoundError as e:
            print(f"{stem}: missing ({e.filename})")
            continue
        normal, uniform = (runs[stem][f] for f in fills)
        res = ratios(uniform, normal)
        out[f"{stem}_uniform_over_normal"] = res
        show(f"{stem}: uniform / normal − 1 (same shapes, same order)", res)
        rep = [v["repeat"] for v in normal.values() if v["seconds"] >= 10e-6]
        print(f"  repeat of the same fill (b / a − 1): median {100 * statistics.median(rep):+.2f}%, "
              f"|.| p90 {100 * pct([abs(x) for x in rep], 0.9):.2f}%")
        clk = [(uniform[k]["clock_mhz"], normal[k]["clock_mhz"]) for k in uniform.keys() & normal.keys()
               if uniform[k]["clock_mhz"] and normal[k]["clock_mhz"]]
        if clk:
            dc = [u / n - 1 for u, n in clk]
            out[f"{stem}_clock_uniform_over_normal"] = {"n": len(dc), "median": statistics.median(dc)}
            print(f"  SM clock uniform / normal − 1: median {100 * statistics.median(dc):+.2f}% over {len(dc)}")
            capped_clock(stem, uniform, normal, out)
    if "cal" in runs and "short" in runs:
        for cf, tf in (("uniform", "uniform"), ("normal", "randn"), ("uniform", "randn")):
            res = ratios(runs["cal"][cf], runs["short"][tf])
            out[f"calibrator_{cf}_over_pytorch_{tf}"] = res
            show(f"calibrator ({cf}) / PyTorch ({tf}) − 1, listed order", res)
    if a.json:
        write_json(a.json, out)


if __name__ == "__main__":
    main()
