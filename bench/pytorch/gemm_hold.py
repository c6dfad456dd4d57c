#!/usr/bin/env python3
"""GEMMs held alone: each shape after --rest-s of idle, replayed back to back for --hold-s (CUDA graphs
of ~20 ms, inputs rotated past L2), through PyTorch in the layouts of bench/pytorch/gemm_layouts.py.
Records every replay's time and host wall-clock, so a run of nvidia-smi beside it gives the clock and
power of each phase. Per shape: the first replay (burst, after rest) and the median of the second
half of the hold (held), seconds per GEMM.

Answers whether a shape that a benchmark runs late in a long run (after seconds of heavy GEMMs) is
slower there than held alone after rest: if so, the board's state carries over between shapes.

    python3 bench/pytorch/gemm_hold.py --shapes tn:1024x64128x4096,nn:256x8192x128256 --out hold.json
"""
import argparse
import json
import math
import statistics
import sys
import time

import torch

from gemm_layouts import L2_BYTES, call, operands  # the same operands and calls as the sweep


def parse_shapes(text):
    out = []
    for item in text.split(","):
        try:
            layout, dims = item.split(":")
            m, n, k = (int(x) for x in dims.lower().split("x"))
        except ValueError:
            sys.exit("gemm_hold.py: --shapes: expected LAYOUT:MxNxK[,...], got '%s'" % item)
        if layout not in ("tn", "nn", "nt") or min(m, n, k) < 1:
            sys.exit("gemm_hold.py: --shapes: layout must be tn, nn or nt and sizes positive ('%s')" % item)
        out.append((layout, m, n, k))
    return out


def hold(layout, m, n, k, dev, rest_s, hold_s):
    per = (m * k + n * k + m * n) * 2
    copies = max(1, min(16, int(3 * L2_BYTES / per) + 1))
    ops = [operands(layout, m, n, k, dev, torch.bfloat16) for _ in range(copies)]
    f = call(layout)
    est = max(2.0 * m * n * k / 600e12, per / 3.5e12, 3e-6)
    calls = max(copies, int(math.ceil(20e-3 / est)))
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for i in range(2):
            f(*ops[i % copies])
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for i in range(calls):
            f(*ops[i % copies])
    torch.cuda.synchronize()
    time.sleep(rest_s)
    start = time.time()
    events, walls = [], []
    while time.time() - start < hold_s:
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        g.replay()
        b.record()
        events.append((a, b))
        walls.append(time.time() - start)
        if len(events) > 2:
            events[-3][1].synchronize()  # at most ~3 replays in flight
    torch.cuda.synchronize()
    secs = [a.elapsed_time(b) / 1e3 / calls for a, b in events]
    half = secs[len(secs) // 2:]
    del g, ops
    return {"layout": layout, "m": m, "n": n, "k": k, "calls_per_replay": calls, "start_unix": start,
            "burst_seconds": secs[0], "held_seconds": statistics.median(half), "replays": len(secs),
            "replay_seconds": secs, "replay_wall_s": walls}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--shapes", required=True, help="LAYOUT:MxNxK,... (layout tn, nn or nt)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--rest-s", type=float, default=1.0)
    ap.add_argument("--hold-s", type=float, default=3.0)
    a = ap.parse_args()
    if not (0 <= a.rest_s <= 60 and 0.1 <= a.hold_s <= 60):
        sys.exit("gemm_hold.py: --rest-s must be in [0, 60] and --hold-s in [0.1, 60]")
    shapes = parse_shapes(a.shapes)
    dev = torch.device("cuda")
    torch.manual_seed(0)
    res = {"what": "GEMMs held alone after rest (bench/pytorch/gemm_hold.py)", "torch": torch.__version__,
           "device": torch.cuda.get_device_name(0),
           "uuid": str(getattr(torch.cuda.get_device_properties(0), "uuid", "")),
           "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "rest_s": a.rest_s, "hold_s": a.hold_s,
           "shapes": []}
    for sh in shapes:
        r = hold(*sh, dev, a.rest_s, a.hold_s)
        print("%s %dx%dx%d burst %.1f us held %.1f us (%d replays)" % (sh[0], sh[1], sh[2], sh[3],
              1e6 * r["burst_seconds"], 1e6 * r["held_seconds"], r["replays"]), flush=True)
        res["shapes"].append(r)
    with open(a.out, "w") as f:
        json.dump(res, f)
        f.write("\n")


if __name__ == "__main__":
    main()
