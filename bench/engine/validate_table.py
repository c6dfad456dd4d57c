#!/usr/bin/env python3
"""Errors of the serving simulator against the mini-engine's measured runs, every bench scenario.

    bench/engine/validate_table.py [--measured-dir DIR] [--prefix PREFIX] [--models M,..] [--loads L,..]
                                   [INFRAPLAN ...]

For each scenarios/bench_<model>_h200_<load>.json it runs `INFRAPLAN validate serve --scenario S
--measured DIR/<PREFIX>bench_<model>_h200_<load>.json --json` (one column per binary given, default
build/bin/infraplan) and prints TTFT p50, TPOT p50 and output tok/s errors as a markdown table, then
how many rows meet 10% / 5% / 5%.
"""
import argparse
import json
import os
import subprocess

MODELS = ("llama2_7b", "llama3_8b")
LOADS = ("single", "closed1", "load", "prefix", "closed16", "closed_prefix", "closed64", "saturate", "throughput",
         "throughput_fp8")
METRICS = (("ttft_ms.p50", 0.10), ("tpot_ms.p50", 0.05), ("output_tokens_per_s", 0.05))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--measured-dir", default="docs/data/engine")
    ap.add_argument("--prefix", default="h200_validate_")
    ap.add_argument("--models", default=",".join(MODELS), help="comma-separated, e.g. llama2_13b")
    ap.add_argument("--loads", default=",".join(LOADS), help="comma-separated workload names")
    ap.add_argument("binaries", nargs="*", default=["build/bin/infraplan"])
    a = ap.parse_args()
    met = {b: [0] * len(METRICS) for b in a.binaries}
    print("| model | load | " + " | ".join(f"{os.path.basename(os.path.dirname(os.path.dirname(b))) or b}: "
                                           "TTFT p50 / TPOT p50 / tok/s" for b in a.binaries) + " |")
    print("|---|---|" + "---|" * len(a.binaries))
    for m in a.models.split(","):
        for load in a.loads.split(","):
            measured = os.path.join(a.measured_dir, f"{a.prefix}bench_{m}_h200_{load}.json")
            if not os.path.exists(measured):
                continue
            cells = []
            for b in a.binaries:
                out = subprocess.run([b, "validate", "serve", "--scenario", f"scenarios/bench_{m}_h200_{load}.json",
                                      "--measured", measured, "--json"], capture_output=True, text=True, check=True)
                c = json.loads(out.stdout)["comparison"]
                errs = [c[k]["error"] for k, _ in METRICS]
                for i, (e, (_, lim)) in enumerate(zip(errs, METRICS)):
                    met[b][i] += abs(e) <= lim
                cells.append(" / ".join(f"{100 * e:+.1f}%" for e in errs))
            print(f"| {m} | {load} | " + " | ".join(cells) + " |")
    for b in a.binaries:
        print(f"{b}: within 10% TTFT p50 {met[b][0]}, within 5% TPOT p50 {met[b][1]}, within 5% tok/s {met[b][2]}")


if __name__ == "__main__":
    main()
