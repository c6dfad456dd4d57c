#!/usr/bin/env python3
"""cuBLAS's memsets in eager training steps, read off PyTorch profiler traces, into a profile's
framework.memsets (docs/accuracy.md, "What the step's GPU does between kernels").

cuBLAS zeroes a small workspace (a `gpu_memset` event) right before some of its GEMM kernels (on the
H200 the `nvjet …coopA` ones). The profile's GEMM tables were timed as CUDA-graph replays of the
same cuBLAS calls, so they hold the memset and a graph's kernel boundary; an eager step pays more:
the kernels around a memset wait longer for their predecessor than replayed ones do. Per trace:

  per_gemm  memsets directly followed by a GEMM kernel / GEMM kernels of the step
  seconds   median over those memsets of (idle before it + idle after it), less the median idle
            between two consecutive kernels of the step (what the GEMM alone would have had), less
            the profile's graph kernel boundary (ceilings.graph_kernel_us, already in the tables)

and the profile gets the median of the traces' values. Attention needs no entry: its tables were
timed on eagerly issued calls, memsets included.

    python3 bench/calib/memsets_to_profile.py PROFILE.json TRACE.json.gz [TRACE ...] [--dry-run]
"""
import argparse
import gzip
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from profile_io import read_profile, write_profile  # noqa: E402


def is_gemm(name):
    n = name.lower()
    return n.startswith("nvjet") or "gemm" in n or "cutlass" in n


def trace_memsets(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        d = json.load(f)
    ev = [e for e in d.get("traceEvents", [])
          if e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memset", "gpu_memcpy")]
    if not ev:
        sys.exit(f"{path}: no GPU events (kernel, gpu_memset, gpu_memcpy) in traceEvents")
    ev.sort(key=lambda e: e["ts"])
    gemms = sum(1 for e in ev if e["cat"] == "kernel" and is_gemm(e["name"]))
    before_gemm, around, between = 0, [], []
    for i in range(1, len(ev) - 1):
        e, prev, nxt = ev[i], ev[i - 1], ev[i + 1]
        if e["cat"] == "gpu_memset":
            if nxt["cat"] == "kernel" and is_gemm(nxt["name"]):
                before_gemm += 1
                around.append((e["ts"] - (prev["ts"] + prev["dur"])) + (nxt["ts"] - (e["ts"] + e["dur"])))
        elif e["cat"] == "kernel" and prev["cat"] == "kernel":
            between.append(e["ts"] - (prev["ts"] + prev["dur"]))
    if gemms == 0 or not around or not between:
        sys.exit(f"{path}: no GEMM kernels with a memset before them")
    return {"trace": os.path.basename(path), "gemm_kernels": gemms, "memsets_before_gemm": before_gemm,
            "per_gemm": before_gemm / gemms, "idle_around_memset_us": statistics.median(around),
            "idle_between_kernels_us": statistics.median(between)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("profile")
    ap.add_argument("traces", nargs="+")
    ap.add_argument("--dry-run", action="store_true")
    a = ap.parse_args()
    prof = read_profile(a.profile)
    graph_us = prof.get("ceilings", {}).get("graph_kernel_us")
    if graph_us is None:
        sys.exit(f"{a.profile}: ceilings.graph_kernel_us missing (a full calibration writes it)")
    rows = [trace_memsets(t) for t in a.traces]
    for r in rows:
        r["eager_us"] = r["idle_around_memset_us"] - r["idle_between_kernels_us"] - graph_us
        print(f"{r['trace']}: {r['memsets_before_gemm']} memsets before {r['gemm_kernels']} GEMM kernels "
              f"({r['per_gemm']:.3f} per GEMM), idle around a memset {r['idle_around_memset_us']:.2f} µs, "
              f"between kernels {r['idle_between_kernels_us']:.2f} µs -> {r['eager_us']:.2f} µs each")
    per_gemm = statistics.median(r["per_gemm"] for r in rows)
    eager_us = max(0.0, statistics.median(r["eager_us"] for r in rows))
    section = {"per_gemm": round(per_gemm, 4), "seconds": round(eager_us * 1e-6, 9),
               "source": "profiler traces of eager and compiled steps: " + ", ".join(r["trace"] for r in rows),
               "method": "bench/calib/memsets_to_profile.py: memsets directly before a GEMM kernel per GEMM "
                         "kernel; each one's idle before and after it less the step's median idle between "
                         "two kernels and the graph boundary the GEMM tables hold; median over the traces",
               "traces": rows}
    print(f"framework.memsets: {section['per_gemm']} per GEMM call, {eager_us:.2f} µs each")
    if a.dry_run:
        return
    prof.setdefault("framework", {})["memsets"] = section
    write_profile(a.profile, prof)


if __name__ == "__main__":
    main()
