#!/usr/bin/env python3
"""Writes the rows of `infraplan-calibrate layouts --hold-ms MS` runs into a profile as
tables.gemm_held_rows: each listed shape replayed until the board's power limiter settled on it, its
time as measured at the clock it held. The cost model answers `infraplan cost --op gemm ... --clock
held` from them where a row covers the shape (no clock scaling: the row already ran held); the
reference-clock answer keeps tables.gemm_rows. Nothing else in the profile changes.

Rows run along the token axis of their layout (m for tn / nn with fixed n, k; k for nt with fixed
m, n), as tables.gemm_rows. With several runs (machine starts) a point's seconds are the median of
their times, each start's time and clock pair kept as a repeat.

    python3 bench/calib/held_rows_to_profile.py --profile hardware/profiles/h100-sxm5-80gb.json \\
        --runs docs/data/calib/h100_rows_held_listed/layouts_held.json --out PROFILE.json
"""
import argparse
import json
import statistics
import sys

from profile_io import read_profile, write_profile


def held_rows(runs):
    holds = {r.get("hold_ms") for r in runs}
    if len(holds) != 1 or not holds.pop():
        raise SystemExit("held_rows_to_profile.py: every run must be timed with the same --hold-ms "
                         "(got %s)" % sorted(str(r.get("hold_ms")) for r in runs))
    hold_ms = runs[0]["hold_ms"]
    pts = {}
    for r in runs:
        for e in r.get("shapes", []):
            if e["api"] != "cublas" or e.get("timing", "graph") != "graph" or not e["seconds"] > 0:
                continue
            pts.setdefault((e["dtype"], e["layout"], e["m"], e["n"], e["k"]), []).append(
                (e["seconds"], e["clock_mhz"][0]))
    rows = {}
    for (dt, layout, m, n, k), v in pts.items():
        fixed = (m, n) if layout == "nt" else (n, k)
        rows.setdefault((dt, layout) + fixed, []).append((k if layout == "nt" else m, v))
    out = []
    for (dt, layout, f0, f1), p in sorted(rows.items()):
        if len(p) < 2:
            continue
        p.sort()
        axis = "k" if layout == "nt" else "m"
        entry = {"dtype": dt, "layout": layout, "api": "cublas", "timing": "graph", "hold_ms": hold_ms}
        entry.update({"m": f0, "n": f1} if layout == "nt" else {"n": f0, "k": f1})
        entry["points"] = [{axis: tok, "seconds": float("%.6g" % statistics.median(t for t, _ in v)),
                            "repeats": [float("%.6g" % t) for t, _ in v], "clock_mhz": [c for _, c in v]}
                           for tok, v in p]
        out.append(entry)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--profile", required=True)
    ap.add_argument("--runs", nargs="+", required=True, help="infraplan-calibrate layouts --hold-ms runs")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    prof = read_profile(a.profile)
    runs = [json.load(open(p)) for p in a.runs]
    rows = held_rows(runs)
    if not rows:
        raise SystemExit("held_rows_to_profile.py: the runs hold no cuBLAS graph-timed rows of two or more points")
    prof["tables"]["gemm_held_rows"] = rows
    prof["gemm_held_rows_source"] = "bench/calib/held_rows_to_profile.py --runs " + " ".join(
        "%s (%s %s %s)" % (f, r["date"], r["device"]["name"], r["device"].get("uuid", "")[:8])
        for f, r in zip(a.runs, runs))
    write_profile(a.out, prof)
    print("%d held rows, %d points -> %s" % (len(rows), sum(len(r["points"]) for r in rows), a.out), file=sys.stderr)


if __name__ == "__main__":
    main()
