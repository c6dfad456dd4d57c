#!/usr/bin/env python3
"""GEMMs whose activation operand the kernel before them has just written (as in a training step:
the norm writes x, then q/k/v read it; the previous backward kernel writes dy, then dgrad and wgrad
read it) against the same GEMMs with every operand rotated past L2 (as the calibration grids and
bench/pytorch/gemm_layouts.py time them). Calibration; no corpus row.

Per shape three CUDA graphs, replayed in alternation so that all three see the same clock state:
  warm      R × [producer writes A in place (A.mul_(1)), GEMM(A, B_i)]   B rotated over copies
  cold      R × [producer writes P (same size, same work), GEMM(A_j, B_i)]  A and B rotated
  producer  R × [producer writes P]
GEMM time = (graph − producer) / R. Operand A is the activation side of each layout: x[m,k] for the
forward (tn), dy[m,k] for the input gradient (nn), dy[k,m] for the weight gradient (nt).

    python3 bench/pytorch/gemm_l2_warmth.py --out FILE [--rounds 15]
"""
import argparse
import datetime
import json
import statistics

import torch
import torch.nn.functional as F

L2_BYTES = 60e6
# (label, layout, m, n, k): the linear layers of three corpus models' blocks at the token counts of
# probes that are not corpus rows (Llama-3.2-3B at 2 × 2048, llama-0.4b at 6 × 2048, Llama-3-8B at
# 1 × 2048), forward (tn), input gradient (nn, m = T, n = in, k = out), weight gradient (nt, m = out,
# n = in, k = T).
SHAPES = [
    ("3b q/o", "tn", 4096, 3072, 3072), ("3b kv", "tn", 4096, 1024, 3072), ("3b gate", "tn", 4096, 8192, 3072),
    ("3b down", "tn", 4096, 3072, 8192),
    ("3b q dgrad", "nn", 4096, 3072, 3072), ("3b gate dgrad", "nn", 4096, 3072, 8192),
    ("3b down dgrad", "nn", 4096, 8192, 3072),
    ("3b q wgrad", "nt", 3072, 3072, 4096), ("3b gate wgrad", "nt", 8192, 3072, 4096),
    ("3b down wgrad", "nt", 3072, 8192, 4096),
    ("0.4b q/o", "tn", 12288, 1024, 1024), ("0.4b gate", "tn", 12288, 2816, 1024), ("0.4b down", "tn", 12288, 1024, 2816),
    ("0.4b gate dgrad", "nn", 12288, 1024, 2816), ("0.4b gate wgrad", "nt", 2816, 1024, 12288),
    ("8b q/o", "tn", 2048, 4096, 4096), ("8b gate", "tn", 2048, 14336, 4096), ("8b down", "tn", 2048, 4096, 14336),
    ("8b gate dgrad", "nn", 2048, 4096, 14336), ("8b gate wgrad", "nt", 14336, 4096, 2048),
]


def a_shape(layout, m, n, k):
    return (k, m) if layout == "nt" else (m, k)


def b_shape(layout, m, n, k):
    return (n, k) if layout == "tn" else (k, n)


def gemm(layout, a, b):
    if layout == "tn":
        return F.linear(a, b)
    if layout == "nn":
        return torch.mm(a, b)
    return torch.mm(a.t(), b)


def capture(body):
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        body()
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        body()
    torch.cuda.synchronize()
    return g


def replay_seconds(g):
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda._sleep(60000)  # the host's graph launch is not idle GPU time in the sample
    a.record()
    g.replay()
    b.record()
    b.synchronize()
    return a.elapsed_time(b) * 1e-3


def measure(layout, m, n, k, rounds, dev):
    dt = torch.bfloat16
    sa, sb = a_shape(layout, m, n, k), b_shape(layout, m, n, k)
    bytes_a, bytes_b = 2 * sa[0] * sa[1], 2 * sb[0] * sb[1]
    ca = max(2, int(2 * L2_BYTES // bytes_a) + 1)
    cb = max(2, int(2 * L2_BYTES // bytes_b) + 1)
    A = [torch.randn(*sa, device=dev, dtype=dt) for _ in range(ca)]
    B = [torch.randn(*sb, device=dev, dtype=dt) for _ in range(cb)]
    P = torch.randn(*sa, device=dev, dtype=dt)
    R = max(ca, cb, 8)

    def warm():
        for i in range(R):
            A[0].mul_(1.0)
            gemm(layout, A[0], B[i % cb])

    def cold():
        for i in range(R):
            P.mul_(1.0)
            gemm(layout, A[(i % (ca - 1)) + 1], B[i % cb])

    def producer():
        for _ in range(R):
            P.mul_(1.0)

    gw, gc, gp = capture(warm), capture(cold), capture(producer)
    for g in (gw, gc, gp):
        replay_seconds(g)
    tw, tc, tp = [], [], []
    for _ in range(rounds):
        tw.append(replay_seconds(gw))
        tc.append(replay_seconds(gc))
        tp.append(replay_seconds(gp))
    w, c, p = statistics.median(tw), statistics.median(tc), statistics.median(tp)
    del gw, gc, gp, A, B, P
    torch.cuda.empty_cache()
    return {"warm_s": (w - p) / R, "cold_s": (c - p) / R, "producer_s": p / R, "calls": R,
            "a_bytes": bytes_a, "b_bytes": bytes_b}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--rounds", type=int, default=15)
    args = ap.parse_args()
    if not 3 <= args.rounds <= 200:
        ap.error("--rounds must be in [3, 200]")
    dev = torch.device("cuda")
    rows = []
    for label, layout, m, n, k in SHAPES:
        r = measure(layout, m, n, k, args.rounds, dev)
        r.update({"label": label, "layout": layout, "m": m, "n": n, "k": k})
        rows.append(r)
        print(f"{label:16s} {layout} {m}x{n}x{k}: warm {1e6 * r['warm_s']:8.1f} us  cold {1e6 * r['cold_s']:8.1f} us  "
              f"warm/cold {r['warm_s'] / r['cold_s']:.3f}", flush=True)
    out = {"what": "GEMMs with the activation operand just written by the kernel before (warm L2) vs rotated "
                   "past L2 (cold), bf16, CUDA-graph replays in alternation, median",
           "command": "python3 bench/pytorch/gemm_l2_warmth.py --out FILE --rounds %d" % args.rounds,
           "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
           "torch": torch.__version__, "gpu": torch.cuda.get_device_name(), "rows": rows}
    with open(args.out, "w") as f:
        json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
