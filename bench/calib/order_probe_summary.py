#!/usr/bin/env python3
"""Summarises one start of bench/calib/order_probe_device.sh: the same GEMM shapes through PyTorch
(twice) and through infraplan-calibrate in listed order (twice) and in shuffled order, one machine
start; and PyTorch once more in a shuffled order where the start has it (torch_shuffled.json). Prints, for each pair of runs, log(t_b / t_a) over the shapes both timed (kernels >= 10 us):
signed median, median |.| and 90th percentile of |.|, overall and by kernel time; then the shuffled
run referred to the listed run's clock reading shape by shape, t · (clock_shuffled / clock_listed)^β,
for a few β.

    python3 bench/calib/order_probe_summary.py docs/data/calib/h100_order_probe
"""
import json
import math
import os
import statistics
import sys

RUNS = ("torch_a", "torch_b", "listed_a", "listed_b", "shuffled_a")
BANDS = ((10e-6, 1.0, "all >= 10 us"), (10e-6, 100e-6, "10-100 us"), (100e-6, 1e-3, "0.1-1 ms"), (1e-3, 1.0, ">= 1 ms"))


def load(folder, name):
    path = os.path.join(folder, name + ".json")
    try:
        doc = json.load(open(path))
    except (OSError, ValueError) as e:
        sys.exit("order_probe_summary.py: %s: %s" % (path, e))
    out = {}
    for i, e in enumerate(doc.get("shapes", [])):
        try:
            key = (e["layout"], int(e["m"]), int(e["n"]), int(e["k"]))
            t = float(e["seconds"])
            clk = 0.5 * (e["clock_mhz"][0][0] + e["clock_mhz"][0][1]) if "clock_mhz" in e else None
        except (KeyError, TypeError, ValueError, IndexError):
            sys.exit("order_probe_summary.py: %s: shapes[%d] lacks layout, m, n, k or seconds" % (path, i))
        if not (t > 0 and math.isfinite(t)):
            sys.exit("order_probe_summary.py: %s: shapes[%d].seconds: expected a positive time" % (path, i))
        out[key] = (t, clk)
    if not out:
        sys.exit("order_probe_summary.py: %s: no shapes" % path)
    return out


def stats(v):
    a = sorted(abs(x) for x in v)
    return statistics.median(v), a[len(a) // 2], a[int(0.9 * (len(a) - 1))]


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    runs = {n: load(sys.argv[1], n) for n in RUNS}
    pairs = [("torch_a", "torch_b"), ("listed_a", "listed_b"), ("torch_a", "listed_a"), ("torch_b", "listed_b"),
             ("torch_a", "shuffled_a"), ("listed_a", "shuffled_a")]
    if os.path.exists(os.path.join(sys.argv[1], "torch_shuffled.json")):
        runs["torch_shuffled"] = load(sys.argv[1], "torch_shuffled")
        pairs += [("torch_a", "torch_shuffled"), ("torch_b", "torch_shuffled")]
    print("%-22s %-12s %5s %8s %8s %8s" % ("pair", "kernels", "n", "signed", "med|.|", "p90|.|"))
    for a, b in pairs:
        for lo, hi, label in BANDS:
            v = [math.log(runs[b][k][0] / t) for k, (t, _) in runs[a].items() if k in runs[b] and lo <= t < hi]
            if v:
                s, m, p = stats(v)
                print("%-22s %-12s %5d %+7.1f%% %7.1f%% %7.1f%%" % (a + " / " + b, label, len(v), 100 * s, 100 * m, 100 * p))
    print("\nshuffled_a referred to listed_a's clock shape by shape, against listed_a")
    for beta in (0.0, 0.5, 0.66, 0.76, 1.0):
        for lo, hi, label in BANDS:
            v = []
            for k, (t, c) in runs["shuffled_a"].items():
                if k in runs["listed_a"] and lo <= t < hi and c and runs["listed_a"][k][1]:
                    tl, cl = runs["listed_a"][k]
                    v.append(math.log(tl / (t * (c / cl) ** beta)))
            if v:
                s, m, p = stats(v)
                print("beta %.2f %-12s %5d %+7.1f%% %7.1f%% %7.1f%%" % (beta, label, len(v), 100 * s, 100 * m, 100 * p))
    for n in ("listed_a", "listed_b", "shuffled_a"):
        c = sorted(v[1] for v in runs[n].values() if v[1])
        print("%s clock reading p10 / p50 / p90: %.0f / %.0f / %.0f MHz" % (n, c[len(c) // 10], c[len(c) // 2], c[9 * len(c) // 10]))


if __name__ == "__main__":
    main()
