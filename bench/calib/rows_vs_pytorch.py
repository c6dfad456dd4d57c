#!/usr/bin/env python3
"""The calibrator's GEMM rows against PyTorch's graph replays of the same shapes on the same machine
start (bench/calib/run_layouts_device.sh with KERNELS=1 writes both): each row's time referred from
its own clock readings to a target clock, t · (clock / target)^beta, against PyTorch's time, by
kernel duration. With the target at the top clock it shows which kernels the PyTorch harness ran
there (docs/accuracy.md, "GEMMs through PyTorch in three layouts").

    python3 bench/calib/rows_vs_pytorch.py docs/data/calib/h200_gemm_layouts_run4.json \\
        docs/data/h200_pytorch_gemm_layouts_run4.json [--target-mhz 1980] [--betas 0,0.5,0.7,1]
"""
import argparse
import json
import statistics


def quantile(xs, p):
    xs = sorted(xs)
    i = (len(xs) - 1) * p
    lo = int(i)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (i - lo)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("rows")
    ap.add_argument("pytorch")
    ap.add_argument("--target-mhz", type=float, default=1980.0)
    ap.add_argument("--betas", default="0,0.5,0.7,1")
    ap.add_argument("--min-us", type=float, default=10.0)
    args = ap.parse_args()
    cal = {}
    for s in json.load(open(args.rows))["shapes"]:
        clocks = [x for pair in s.get("clock_mhz", []) for x in pair]
        if s["dtype"] == "bf16" and clocks:
            cal[(s["layout"], s["m"], s["n"], s["k"])] = (s["seconds"], statistics.median(clocks))
    pairs = []
    for s in json.load(open(args.pytorch))["shapes"]:
        key = (s["layout"], s["m"], s["n"], s["k"])
        if key in cal and s["seconds"] >= args.min_us * 1e-6:
            pairs.append((s["seconds"],) + cal[key])
    print(f"{len(pairs)} shapes in both; row clock readings p10 / p50 / p90 "
          f"{quantile([p[2] for p in pairs], .1):.0f} / {quantile([p[2] for p in pairs], .5):.0f} / "
          f"{quantile([p[2] for p in pairs], .9):.0f} MHz")
    bins = ((10e-6, 100e-6), (100e-6, 300e-6), (300e-6, 1e-3), (1e-3, 1.0))
    for beta in (float(b) for b in args.betas.split(",")):
        for lo, hi in bins:
            e = [t * (clk / args.target_mhz) ** beta / pt - 1 for pt, t, clk in pairs if lo <= pt < hi]
            if not e:
                continue
            a = [abs(x) for x in e]
            print(f"beta {beta:.1f}  {lo * 1e6:6.0f}-{hi * 1e6:<7.0f} us  n={len(e):4d}  |row at {args.target_mhz:.0f} MHz "
                  f"/ pytorch - 1| median {100 * quantile(a, .5):4.1f}%  p90 {100 * quantile(a, .9):4.1f}%  "
                  f"signed median {100 * quantile(e, .5):+5.1f}%")


if __name__ == "__main__":
    main()
