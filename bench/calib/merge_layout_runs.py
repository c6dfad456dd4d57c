#!/usr/bin/env python3
"""Merges GEMM-layout calibration runs from several machine starts into a profile.

Inputs: `infraplan-calibrate layouts` run files (one per machine start: the bf16 layout sub-grid
and the listed shapes through cuBLAS; a run timed with --legacy-too also has every TN cell and shape
timed with the harness the profile's grid was taken with), and, for the spread of attention and
memory-bound kernels, the `bench/pytorch/gemm_layouts.py --spread` files of the same calls.
Writes into the profile:

  tables.gemm.bf16.layouts  NN / TN and NT / TN ratios over the sub-grid, median over the runs
  tables.gemm.bf16.rows_clock_exponent
                            with --rows-clock-exponent measured: the exponent the rows' clock
                            readings are referred with, measured from the same listed shape timed
                            the same way (harness, cuBLAS) on two machine starts at different clocks:
                            the least-squares slope of log(t_j / t_i) on log(clock_i / clock_j), each
                            pair of runs' own offset taken out (kernels >= 10 us)
  fleet.gemm.scale.bf16     the machines' median GEMM level against the model: each machine's median
                            over the sub-grid's TN cells of (its time, timed as the profile's grid
                            was) / (the model's prediction); the profile's own cells count as one machine
  fleet.gemm.timing         the harness correction: graph-timed / legacy-timed, same machine, same
                            listed shapes in one shuffled order, by the legacy time (median per half
                            decade with at least 100 pairs)
  tables.gemm_rows          the listed shapes as rows along their token axis (m for tn / nn, k for nt):
                            the graph-timed seconds of each run that has them, each a repeat of the
                            point with its clock reading (the model refers each to the reference clock
                            and takes their median), scaled to the machines' median by the same
                            point's legacy times on every machine (referred) where runs have them
  spread                    {gemm, attention, memory: {low, high, samples}, method}: 10th and 90th
                            percentiles of every measurement's deviation from the median over the
                            machines that timed it the same way (graph-timed rows of three or more
                            starts: as measured; of two without legacy times: referred to the
                            reference clock first)

`--rows-from RUN…` takes the rows from other runs than the sub-grid (a run timed with `--hold-ms`, which
times no sub-grid). Only calibration data goes in; the PyTorch GEMM times of the same calls are validation data and are
not read (their spread points, SDPA and copies, are).

    python3 bench/calib/merge_layout_runs.py --profile hardware/profiles/h200-sxm-141gb.json \\
        --runs run1.json run2.json --spread torch1.json torch2.json \\
        --reference-clock-mhz 1758.5 --clock-exponent 0.5 --out PROFILE.json --summary SUMMARY.json
"""
import argparse
import json
import math
import statistics

from profile_io import read_profile, write_profile

MIN_SECONDS = 10e-6  # launch-bound kernels are left out of the machine scale and the spread


def percentile(v, q):
    v = sorted(v)
    x = q * (len(v) - 1)
    lo, hi = math.floor(x), math.ceil(x)
    return v[lo] + (v[hi] - v[lo]) * (x - lo)


def deviations(values):
    med = statistics.median(values)
    return [v / med - 1 for v in values]


def cells(grid):
    for i, m in enumerate(grid["m"]):
        for j, n in enumerate(grid["n"]):
            for l, k in enumerate(grid["k"]):
                yield i, j, l, m, n, k


def measure_clock_exponent(runs):
    """The rows' clock exponent: t ∝ clock^−β over the listed shapes timed the same way on two runs."""
    def timed(r, how):
        out = {}
        for e in r.get("shapes", []):
            t, c = e.get("repeats", [e["seconds"]])[0], e["clock_mhz"][0]  # the first pass, with its reading
            if e["api"] == "cublas" and e.get("timing", "legacy") == how and t >= MIN_SECONDS and c[0] and c[1]:
                out[(e["dtype"], e["layout"], e["m"], e["n"], e["k"])] = (t, 0.5 * (c[0] + c[1]))
        return out
    sxy = sxx = 0.0
    used, groups = 0, []
    for how in ("graph", "legacy"):
        per_run = [timed(r, how) for r in runs]
        for i in range(len(runs)):
            for j in range(i + 1, len(runs)):
                common = [k for k in per_run[i] if k in per_run[j]]
                if len(common) < 100:
                    continue
                xs = [math.log(per_run[i][k][1] / per_run[j][k][1]) for k in common]
                ys = [math.log(per_run[j][k][0] / per_run[i][k][0]) for k in common]
                mx, my = statistics.mean(xs), statistics.mean(ys)
                gx = sum((x - mx) ** 2 for x in xs)
                gxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys))
                sxx += gx
                sxy += gxy
                used += len(common)
                groups.append({"runs": [runs[i]["date"], runs[j]["date"]], "timing": how, "pairs": len(common),
                               "slope": round(gxy / gx, 3) if gx > 0 else None,
                               "offset": round(my - (gxy / gx) * mx, 4) if gx > 0 else None})
    if used < 100 or not sxx > 0:
        raise SystemExit("merge_layout_runs.py: --rows-clock-exponent measured needs one listed shape set timed the "
                         "same way on two runs (at least 100 shapes >= 10 us); got %d" % used)
    beta = min(2.0, max(0.0, sxy / sxx))
    return {"value": round(beta, 2), "pairs": used, "groups": groups,
            "method": ("time ∝ clock^−β: least-squares slope of log(t_j / t_i) on log(clock_i / clock_j) over the "
                       "listed shapes >= 10 us timed the same way (harness, cuBLAS) on two machine starts, each "
                       "pair of runs' own offset taken out (bench/calib/merge_layout_runs.py)")}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--profile", required=True)
    ap.add_argument("--runs", nargs="+", required=True)
    ap.add_argument("--rows-from", nargs="+", default=None,
                    help="take the rows (and the rows' clock exponent) from these runs instead of --runs, "
                         "e.g. a run timed with --hold-ms; the sub-grid, machine scale and harness "
                         "correction still come from --runs")
    ap.add_argument("--spread", nargs="*", default=[])
    ap.add_argument("--reference-clock-mhz", type=float, required=True,
                    help="the model's reference clock (infraplan cost --op gemm ... --json: detail)")
    ap.add_argument("--clock-exponent", type=float, required=True,
                    help="the model's fitted bf16 clock exponent (infraplan cost ... --clock-mhz F)")
    ap.add_argument("--rows-clock-exponent", choices=["measured"], default=None,
                    help="measured: from the runs' same rows at different clocks, written into the profile "
                         "(default: the rows take --clock-exponent, as the model then refers them)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--summary", required=True)
    a = ap.parse_args()
    prof = read_profile(a.profile)
    runs = [json.load(open(p)) for p in a.runs]
    row_runs = [json.load(open(p)) for p in a.rows_from] if a.rows_from else runs
    spreads = [json.load(open(p)) for p in a.spread]
    tab = prof["tables"]["gemm"]["bf16"]
    # The exponent the rows are referred with, here and by the model: measured and recorded, or the grid's.
    tab.pop("rows_clock_exponent", None)
    rows_beta = a.clock_exponent
    if a.rows_clock_exponent == "measured":
        tab["rows_clock_exponent"] = measure_clock_exponent(row_runs)
        rows_beta = tab["rows_clock_exponent"]["value"]
    idx = lambda m, n, k: (tab["m"].index(m), tab["n"].index(n), tab["k"].index(k))

    def model(m, n, k):
        """The model's prediction at a grid cell: the cell referred to the reference clock."""
        i, j, l = idx(m, n, k)
        t = tab["seconds"][i][j][l]
        # A derived profile has no clock readings: its cells are already at the reference clock.
        b = tab["clock_mhz_before"][i][j][l] if "clock_mhz_before" in tab else None
        f = tab["clock_mhz_after"][i][j][l] if "clock_mhz_after" in tab else None
        if not t:
            return None
        return t * ((0.5 * (b + f)) / a.reference_clock_mhz) ** a.clock_exponent if b and f else t

    def timing(section):
        return section.get("timing", "legacy")  # runs before the timing field were legacy-timed

    summary = {"what": "GEMM layout runs merged by bench/calib/merge_layout_runs.py", "profile": a.profile,
               "reference_clock_mhz": a.reference_clock_mhz, "clock_exponent_bf16": a.clock_exponent,
               "rows_clock_exponent_bf16": rows_beta,
               "runs": [{"file": f, "date": r["date"], "device": r["device"], "command": r["command"]}
                        for f, r in zip(a.runs, runs)]}
    if a.rows_from:
        summary["rows_from"] = [{"file": f, "date": r["date"], "device": r["device"], "command": r["command"]}
                                for f, r in zip(a.rows_from, row_runs)]

    # 1. Layout ratios: median over the runs, cell by cell.
    g0 = runs[0]["grid"]["bf16"]
    for r in runs[1:]:
        assert all(r["grid"]["bf16"][x] == g0[x] for x in ("m", "n", "k")), "runs with different sub-grids"
    lay = {"m": g0["m"], "n": g0["n"], "k": g0["k"]}
    for name in ("nn", "nt"):
        def cell(i, j, l):
            v = [r["grid"]["bf16"][name]["ratio"][i][j][l] for r in runs]
            v = [x for x in v if x is not None]
            return round(statistics.median(v), 5) if v else None
        lay[name] = {"ratio": [[[cell(i, j, l) for l in range(len(g0["k"]))] for j in range(len(g0["n"]))]
                               for i in range(len(g0["m"]))]}
    lay["runs"] = len(runs)
    lay["rule"] = ("t(layout) / t(tn) of the same cell, the three layouts timed back to back (cuBLASLt first "
                   "heuristic, 64 MiB workspace); median over the runs (infraplan-calibrate layouts, "
                   "bench/calib/merge_layout_runs.py)")
    tab["layouts"] = lay

    # 2. Legacy-timed TN cells of every machine: the machine scale against the model.
    legacy_cells = []  # per run: {(m, n, k): seconds}
    for r in runs:
        g = r["grid"]["bf16"]
        src = g["tn"] if timing(g) == "legacy" else g.get("tn_legacy")
        legacy_cells.append({} if src is None else
                            {(m, n, k): src["seconds"][i][j][l] for i, j, l, m, n, k in cells(g) if src["seconds"][i][j][l]})
    machines = []
    own = [tab["seconds"][idx(m, n, k)[0]][idx(m, n, k)[1]][idx(m, n, k)[2]] / model(m, n, k)
           for _, _, _, m, n, k in cells(g0) if model(m, n, k) and model(m, n, k) >= MIN_SECONDS]
    machines.append({"what": "the profile's own grid (as measured / referred)", "cells": len(own),
                     "median_ratio": round(statistics.median(own), 4)})
    for r, lc in zip(runs, legacy_cells):
        v = [t / model(*key) for key, t in lc.items() if model(*key) and model(*key) >= MIN_SECONDS]
        if v:
            machines.append({"what": "run " + r["date"], "uuid": r["device"].get("uuid", ""), "cells": len(v),
                             "median_ratio": round(statistics.median(v), 4), "p10": round(percentile(v, 0.1), 4),
                             "p90": round(percentile(v, 0.9), 4)})
    scale = statistics.median([x["median_ratio"] for x in machines])

    # 3. Harness correction: graph / legacy of the same listed shapes on the same machine, the two
    # timings of every shape interleaved in one shuffled order (the sub-grid's pairs are left out:
    # there the legacy timing always followed the cell's three graph timings, a fixed order that
    # mixes the GPU's clock history into the ratio). Median per half decade of the legacy time,
    # for bins of at least 100 pairs; the model clamps beyond the last.
    pairs = []
    for r in runs:
        byshape = {}
        for e in r.get("shapes", []):
            byshape.setdefault((e["api"], e["layout"], e["m"], e["n"], e["k"]), {})[e.get("timing", "legacy")] = e["seconds"]
        for v in byshape.values():
            if "graph" in v and "legacy" in v:
                pairs.append((v["legacy"], v["graph"] / v["legacy"]))
    bins = {}
    for lg, ratio in pairs:
        bins.setdefault(math.floor(2 * math.log10(lg)), []).append(ratio)
    t_axis, r_axis = [], []
    for b in sorted(bins):
        if len(bins[b]) >= 100:
            t_axis.append(float("%.3g" % 10 ** ((b + 0.5) / 2)))
            r_axis.append(round(statistics.median(bins[b]), 4))
    prof["fleet"] = {"gemm": {
        "scale": {"bf16": round(scale, 4)},
        "machines": machines,
        "method": ("scale: median over the machines of each one's median (over the bf16 TN sub-grid cells >= 10 us, "
                   "timed as the profile's grid was) of its time / the model's prediction; timing: the graph-timed "
                   "/ legacy-timed ratio of the same shapes on the same machine (interleaved), median per half "
                   "decade of the legacy time, interpolated in log time. Both multiply every GEMM the model "
                   "predicts from its tables (not exact shapes or rows, which are measurements)")}}
    if t_axis:  # runs without legacy-timed shapes have no harness correction to record
        prof["fleet"]["gemm"]["timing"] = {"seconds": t_axis, "ratio": r_axis, "pairs": len(pairs),
                                           "bins": [len(bins[b]) for b in sorted(bins) if len(bins[b]) >= 100]}
    summary["fleet"] = prof["fleet"]

    # 4. Rows: graph-timed cuBLAS (PyTorch's default path) times, at the machines' median.
    graph_pts, legacy_pts = [dict() for _ in row_runs], [dict() for _ in row_runs]
    for ri, r in enumerate(row_runs):
        for e in r.get("shapes", []):
            if e["api"] != "cublas":
                continue
            key = (e["dtype"], e["layout"], e["m"], e["n"], e["k"])
            (graph_pts if e.get("timing", "legacy") == "graph" else legacy_pts)[ri][key] = e

    def referred_time(seconds, clock_pair):
        """As the model refers a measurement: to the reference clock by its own clock reading."""
        return seconds * (0.5 * (clock_pair[0] + clock_pair[1]) / a.reference_clock_mhz) ** rows_beta

    def referred(e):
        return referred_time(e["seconds"], e["clock_mhz"][0])

    rows, gemm_dev = {}, []
    for key in set().union(*[set(gp) for gp in graph_pts]):
        lg = [lp[key] for lp in legacy_pts if key in lp]
        # A graph-timed value is scaled to the machines' median by the same shape's legacy times on
        # every machine (each referred to the reference clock); it keeps its own clock reading, by
        # which the model refers it.
        adj = []
        for gp, lp in zip(graph_pts, legacy_pts):
            if key not in gp:
                continue
            f = statistics.median([referred(x) for x in lg]) / referred(lp[key]) if key in lp else 1.0
            adj.append((gp[key]["seconds"] * f, gp[key]["clock_mhz"][0]))
        # Every machine's value is a repeat of the point with its own clock reading: the model refers
        # each to the reference clock and takes their median (graph-timed runs without legacy times
        # have nothing else to bring them to one level).
        adj.sort(key=lambda x: referred_time(*x))
        dt, layout, m, n, k = key
        fixed = (m, n) if layout == "nt" else (n, k)
        rows.setdefault((dt, layout) + fixed, []).append((k if layout == "nt" else m, adj))
        v = [x["seconds"] for x in lg]
        raw = [gp[key]["seconds"] for gp in graph_pts if key in gp]
        if len(raw) >= 3 and min(raw) >= MIN_SECONDS:
            # Three or more starts timed the shape graph-timed: their times as measured, each at the
            # clock its start held (what a user's machine may differ by; the legacy pair alone would
            # halve two machines' difference).
            gemm_dev += deviations(raw)
        elif len(v) > 1 and min(v) >= MIN_SECONDS:
            gemm_dev += deviations(v)
        elif not lg and len(adj) > 1 and min(t for t, _ in adj) >= MIN_SECONDS:
            # Graph-timed only: the starts' times referred to one clock, as the model compares them.
            gemm_dev += deviations([referred_time(t, c) for t, c in adj])
    new_rows = []
    for (dt, layout, f0, f1), pts in sorted(rows.items()):
        pts.sort()
        if len(pts) < 2:
            continue
        axis = "k" if layout == "nt" else "m"
        entry = {"dtype": dt, "layout": layout, "api": "cublas", "timing": "graph"}
        entry.update({"m": f0, "n": f1} if layout == "nt" else {"n": f0, "k": f1})
        entry["points"] = [{axis: tok, "seconds": float("%.6g" % adj[len(adj) // 2][0]),
                            "repeats": [float("%.6g" % t) for t, _ in adj], "clock_mhz": [c for _, c in adj]}
                           for tok, adj in pts]
        new_rows.append(entry)
    old = [r for r in prof["tables"].get("gemm_rows", [])
           if not any(r.get("dtype") == e["dtype"] and r.get("layout", "tn") == e["layout"] and
                      all(r.get(x) == e.get(x) for x in ("m", "n", "k") if x in e) for e in new_rows)]
    prof["tables"]["gemm_rows"] = old + new_rows
    summary["rows"] = {"count": len(new_rows), "points": sum(len(r["points"]) for r in new_rows)}

    # 5. Spread: GEMM cells timed the same way on several machines (the profile's included).
    for key in set().union(*[set(lc) for lc in legacy_cells]):
        i, j, l = idx(*key)
        v = [lc[key] for lc in legacy_cells if key in lc] + [tab["seconds"][i][j][l]]
        v = [x for x in v if x]
        if len(v) > 1 and min(v) >= MIN_SECONDS:
            gemm_dev += deviations(v)
    att_dev, mem_dev = [], []
    if spreads:
        pre = {t["head_dim"]: t for t in prof["tables"]["attention_prefill"]}
        pts = {}
        for s in spreads:
            for e in s.get("spread_points", []):
                if e["kind"] == "attention_prefill":
                    for which in ("seconds", "backward_seconds"):
                        pts.setdefault(("att", e["head_dim"], e["seq_len"], e["batch"], which), []).append(e[which])
                else:
                    pts.setdefault(("mem", e["bytes"]), []).append(e["seconds"])
        for key, v in pts.items():
            if key[0] == "att":
                _, d, S, b, which = key
                t = pre[d]
                if which in t and t[which][t["seq_len"].index(S)][t["batch"].index(b)]:
                    v = v + [t[which][t["seq_len"].index(S)][t["batch"].index(b)]]
                att_dev += deviations(v)
            else:
                mem_dev += deviations(v)

    def band(dev, what):
        if len(dev) < 4:
            return None
        return {"low": round(min(0.0, percentile(dev, 0.1)), 4), "high": round(max(0.0, percentile(dev, 0.9)), 4),
                "samples": len(dev), "what": what}

    sp = {"method": ("10th / 90th percentile of each measurement's deviation from the median over the machines that "
                     f"timed it the same way: the profile's run and {len(runs)} runs on separate machine starts "
                     f"({', '.join(r['date'] for r in runs)}); bench/calib/merge_layout_runs.py")}
    for kind, dev, what in (("gemm", gemm_dev, "bf16 TN sub-grid cells and cuBLAS workload rows, >= 10 us (rows: graph-timed as "
                                     "measured, where three or more starts timed them)"),
                            ("attention", att_dev, "PyTorch SDPA forward and backward at table points"),
                            ("memory", mem_dev, "device copies 64 MiB - 1 GiB, run to run")):
        b = band(dev, what)
        if b:
            sp[kind] = b
    prof["spread"] = sp
    summary["spread"] = sp
    write_profile(a.out, prof)
    with open(a.summary, "w") as f:
        json.dump(summary, f, indent=1, ensure_ascii=False)
        f.write("\n")
    print(json.dumps({"fleet": prof["fleet"]["gemm"], "spread": sp, "rows": summary["rows"]}, indent=1))


if __name__ == "__main__":
    main()
