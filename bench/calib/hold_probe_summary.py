#!/usr/bin/env python3
"""Summarises one start of bench/calib/hold_probe_device.sh: each shape held alone after rest
(bench/pytorch/gemm_hold.py) against the same shape in the listed-order PyTorch run of that start,
with the clock, power and temperature nvidia-smi read in the second half of the hold.

    python3 bench/calib/hold_probe_summary.py docs/data/calib/h100_gemm_hold
"""
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "pytorch"))
from smi_sampler import read_csv, window  # noqa: E402


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    d = sys.argv[1]
    try:
        hold = json.load(open(os.path.join(d, "hold.json")))
        listed = json.load(open(os.path.join(d, "torch_listed.json")))
        smi = read_csv(os.path.join(d, "smi.csv"))
    except (OSError, ValueError) as e:
        sys.exit("hold_probe_summary.py: %s: %s" % (d, e))
    times = {(s["layout"], s["m"], s["n"], s["k"]): s["seconds"] for s in listed["shapes"]}
    print("%-22s %8s %8s %8s %12s %12s %8s %6s %5s" % ("shape", "burst", "held", "listed", "held/burst",
                                                      "held/listed", "MHz", "W", "C"))
    for s in hold["shapes"]:
        key = (s["layout"], s["m"], s["n"], s["k"])
        t0 = s["start_unix"]
        w = window(smi, t0 + hold["hold_s"] / 2, t0 + hold["hold_s"])
        clk = statistics.median(x[1] for x in w) if w else float("nan")
        watts = statistics.mean(x[2] for x in w) if w else float("nan")
        temp = max(x[3] for x in w) if w else float("nan")
        lt = times.get(key)
        print("%-22s %8.1f %8.1f %8s %12.3f %12s %8.0f %6.0f %5.0f" % (
            "%s %dx%dx%d" % key, 1e6 * s["burst_seconds"], 1e6 * s["held_seconds"],
            "%.1f" % (1e6 * lt) if lt else "-", s["held_seconds"] / s["burst_seconds"],
            "%.3f" % (s["held_seconds"] / lt) if lt else "-", clk, watts, temp))


if __name__ == "__main__":
    main()
