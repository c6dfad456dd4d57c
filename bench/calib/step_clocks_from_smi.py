#!/usr/bin/env python3
"""Adds to each configuration of a corpus run (bench/pytorch/llama_corpus.py --out) the SM clock and
board power sampled beside it (nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,...
--format=csv,noheader -lms 100, timestamps in UTC): mean, min and max over the timed steps, the window
[timed_end_unix - steps x median step, timed_end_unix].

  bench/calib/step_clocks_from_smi.py CORPUS.json SMI.csv[.gz] STEPS
"""
import datetime
import gzip
import json
import statistics
import sys


def main(argv):
    if len(argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    corpus_path, smi_path, steps = argv[1], argv[2], int(argv[3])
    opener = gzip.open if smi_path.endswith(".gz") else open
    samples = []
    with opener(smi_path, "rt") as f:
        for line in f:
            p = [x.strip() for x in line.split(",")]
            try:
                t = datetime.datetime.strptime(p[0], "%Y/%m/%d %H:%M:%S.%f").replace(
                    tzinfo=datetime.timezone.utc).timestamp()
                samples.append((t, float(p[1].split()[0]), float(p[3].split()[0])))
            except (ValueError, IndexError):
                continue
    corpus = json.load(open(corpus_path))
    for r in corpus["configs"]:
        if "timed_end_unix" not in r or "step_seconds_median" not in r:
            continue
        end = r["timed_end_unix"]
        start = end - steps * r["step_seconds_median"]
        w = [s for s in samples if start <= s[0] <= end]
        if len(w) < 3:
            continue
        r["sm_clock_mhz"] = {"mean": round(statistics.mean(s[1] for s in w), 1), "min": min(s[1] for s in w),
                             "max": max(s[1] for s in w), "samples": len(w)}
        r["power_w_mean"] = round(statistics.mean(s[2] for s in w), 1)
    corpus["clock_source"] = ("nvidia-smi every 100 ms beside the run (" + smi_path.split("/")[-1] +
                              "), averaged over each configuration's timed steps")
    with open(corpus_path, "w") as f:
        json.dump(corpus, f, indent=1)
        f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
