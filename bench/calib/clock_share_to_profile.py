#!/usr/bin/env python3
"""Writes the clock shares of bench/pytorch/elementwise_clock.py runs into a profile's
framework.clock_share: for each op the median over the runs of
    phi = (t_hot / t_top - 1) / (f_top / f_hot - 1),
clamped to [0, 1] (a share below 0 is a kernel that did not slow, within noise). Ops the profile's
framework.elementwise table does not have are left out, except fused_adamw_fp32 / fused_adamw_bf16.

    python3 bench/calib/clock_share_to_profile.py PROFILE.json RUN.json [RUN2.json ...]
"""
import json
import statistics
import sys

from profile_io import read_profile, write_profile

ADAMW = ("fused_adamw_fp32", "fused_adamw_bf16")


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    profile_path, runs = sys.argv[1], sys.argv[2:]
    profile = read_profile(profile_path)
    fw = profile.get("framework")
    if not fw or "elementwise" not in fw:
        sys.exit(f"{profile_path}: no framework.elementwise table to attach clock shares to")
    known = set(fw["elementwise"]["ops"]) | set(ADAMW)
    shares, sources = {}, []
    for path in runs:
        with open(path) as f:
            run = json.load(f)
        if "f_top_mhz" not in next(iter(run["ops"].values()), {}):
            sys.exit(f"{path}: not a run of the GPU-paced elementwise_clock.py (no f_top_mhz)")
        sources.append(f"{path} ({run['date']}, {run['command']})")
        for op, r in run["ops"].items():
            if op in known and r.get("clock_share") is not None:
                shares.setdefault(op, []).append(r["clock_share"])
    if not shares:
        sys.exit("no clock shares in the runs for ops of this profile")
    fw["clock_share"] = {
        "source": "; ".join(sources),
        "method": "phi of t(f) = t_top ((1 - phi) + phi f_top / f): each op timed at the top clock and right "
                  "behind a queue of 8192^3 bf16 GEMMs at the power cap, both GPU-paced, clocks read by a spin "
                  "kernel of known cycles before and after; median over runs, clamped to [0, 1]",
        "ops": {op: round(min(1.0, max(0.0, statistics.median(v))), 3) for op, v in sorted(shares.items())}}
    write_profile(profile_path, profile)
    print(f"{profile_path}: framework.clock_share.ops = {len(shares)} ops")


if __name__ == "__main__":
    main()
