#!/usr/bin/env python3
"""The GEMMs of a shapes file (bench/calib/llama_gemm_shapes.py) through PyTorch in the three
layouts of a linear layer's training step, timed from CUDA-graph replays with rotated inputs:

  tn  forward          F.linear(x[m,k], w[n,k])           (Y = X·Wᵀ)
  nn  input gradient   torch.mm(dy[m,k], w[k,n])          (autograd's grad_output.mm(weight))
  nt  weight gradient  torch.mm(dy[k,m].t(), x[k,n])      (autograd's grad_output.t().mm(input))

With --kernels it also records which cuBLAS kernels PyTorch launches for each layout (torch.profiler,
explicit calls and a real F.linear forward + backward), and the preferred BLAS backend. With
--spread it times PyTorch SDPA (forward, backward) and device copies at points of the profile's
tables, for the run-to-run / machine-to-machine spread of those kinds.

    python3 bench/pytorch/gemm_layouts.py --shapes shapes.json --out torch_gemms.json [--kernels] [--spread]
        [--order listed|shuffled] [--seed N] [--hold-ms MS] [--fill randn|uniform]

The shapes run in the file's order unless --order shuffled: a shape's time depends on the clock the
board holds it at, which depends on what ran before it (docs/accuracy.md, "Does the order decide
the tail?"). --fill uniform draws the operands uniform in ±1, as the calibrator does, instead of
torch.randn's normal values: a GEMM's power, so its clock under the power limit, depends on its data
(docs/accuracy.md, "Does the operands' distribution move the clock?"). A held shape records the
median SM clock read (NVML) after each kept sample when nvidia-ml-py is installed; a shape timed
for ~2 ms records one reading after its last sample (clock_mhz_after).
"""
import argparse
import json
import math
import random
import statistics
import time

import torch
import torch.nn.functional as F

L2_BYTES = 60e6


def draw(rows, cols, dev, dtype, fill):
    if fill == "uniform":
        return torch.rand(rows, cols, device=dev, dtype=torch.float32).mul_(2).sub_(1).to(dtype)
    return torch.randn(rows, cols, device=dev, dtype=dtype)


def operands(layout, m, n, k, dev, dtype, fill="randn"):
    if layout == "tn":
        return draw(m, k, dev, dtype, fill), draw(n, k, dev, dtype, fill)
    if layout == "nn":
        return draw(m, k, dev, dtype, fill), draw(k, n, dev, dtype, fill)
    return draw(k, m, dev, dtype, fill), draw(k, n, dev, dtype, fill)


def clock_reader():
    """A function returning the SM clock in MHz (NVML), or None without nvidia-ml-py."""
    try:
        import pynvml
        pynvml.nvmlInit()
        h = pynvml.nvmlDeviceGetHandleByIndex(torch.cuda.current_device())
        return lambda: pynvml.nvmlDeviceGetClockInfo(h, pynvml.NVML_CLOCK_SM)
    except Exception:  # noqa: BLE001 - no NVML: no clock column
        return None


def call(layout):
    if layout == "tn":
        return lambda a, b: F.linear(a, b)
    if layout == "nn":
        return lambda a, b: torch.mm(a, b)
    return lambda a, b: torch.mm(a.t(), b)


LEAD_IN_CYCLES = 60000  # torch.cuda._sleep before each sample: ~30 µs at 1980 MHz


def graph_time(fn, copies, est_seconds, hold_ms=0.0, clock=None):
    """Median seconds per call over replays of a graph of max(copies, ~100 µs of calls) calls; each
    sample starts behind a ~30 µs spin kernel, so the host's graph launch is not idle GPU time in it.
    With hold_ms > 0 the shape is replayed until hold_ms of GPU time and the median is taken over the
    second half of the samples: the shape held until the board's power limiter has settled on it.
    Returns (seconds, duty, clock_mhz): duty is, for a held shape, the share of the second half's wall
    time its graphs took (the spin and the host's gaps are the rest), None otherwise; clock_mhz the
    median of `clock()` read after each sample of the second half (held shapes with a reader)."""
    calls = max(copies, min(128, int(math.ceil(100e-6 / max(est_seconds, 1e-6)))))
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for i in range(2):
            fn(i % copies)
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for i in range(calls):
            fn(i % copies)
    g.replay()
    torch.cuda.synchronize()
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    out, graph_ms, ends, clocks, total = [], [], [], [], 0.0
    for it in range(30 if hold_ms <= 0 else 1000000):
        torch.cuda._sleep(LEAD_IN_CYCLES)
        a.record()
        g.replay()
        b.record()
        b.synchronize()
        ends.append(time.perf_counter())
        if clock is not None and hold_ms > 0:
            clocks.append(clock())
        ms = a.elapsed_time(b)
        out.append(ms / calls / 1e3)
        graph_ms.append(ms)
        total += ms
        if it >= 4 and total > max(2.0, hold_ms):
            break
    del g
    if hold_ms <= 0:
        # One reading after the shape's last sample: the clock it was left at (NVML's is a sampled value).
        return statistics.median(out), None, (clock() if clock is not None else None)
    h = len(out) // 2
    duty = sum(graph_ms[h + 1:]) / 1e3 / (ends[-1] - ends[h]) if len(out) - h >= 2 else None
    mhz = statistics.median(clocks[h:]) if clocks[h:] else None
    return statistics.median(out[h:]), duty, mhz


def time_shapes(shapes, dev, dtype, hold_ms=0.0, fill="randn"):
    rows = []
    clock = clock_reader()
    t0 = time.time()
    for i, sh in enumerate(shapes):
        layout, m, n, k = sh["layout"], sh["m"], sh["n"], sh["k"]
        per = (m * k + n * k + m * n) * 2
        copies = max(1, min(16, int(3 * L2_BYTES / per) + 1))
        ops = [operands(layout, m, n, k, dev, dtype, fill) for _ in range(copies)]
        f = call(layout)
        est = max(2.0 * m * n * k / 600e12, per / 3.5e12, 3e-6)
        t, duty, mhz = graph_time(lambda j: f(*ops[j]), copies, est, hold_ms, clock)
        r = {kk: sh[kk] for kk in ("dtype", "layout", "m", "n", "k", "tokens", "linear") if kk in sh}
        r["seconds"] = t
        if duty is not None:
            r["hold_duty"] = round(duty, 4)
        if mhz is not None:
            r["clock_mhz" if hold_ms > 0 else "clock_mhz_after"] = mhz
        rows.append(r)
        del ops
        if i % 200 == 199:
            print(f"  {i + 1}/{len(shapes)} shapes, {time.time() - t0:.1f} s", flush=True)
    return rows


def kernels_of(fn):
    """The names of the CUDA kernels (and memsets) one call of fn launches, after one warm-up call."""
    from torch.profiler import ProfilerActivity, profile
    fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as p:
        fn()
        torch.cuda.synchronize()
    return sorted({e.name for e in p.events() if e.device_type == torch.autograd.DeviceType.CUDA})


def kernel_names(dev, dtype):
    """cuBLAS kernels PyTorch launches per layout: explicit calls and autograd's backward."""
    out = {"preferred_blas_library": str(torch.backends.cuda.preferred_blas_library())}
    T, out_f, in_f = 4096, 14336, 4096
    x = torch.randn(T, in_f, device=dev, dtype=dtype, requires_grad=True)
    w = torch.randn(out_f, in_f, device=dev, dtype=dtype, requires_grad=True)
    dy = torch.randn(T, out_f, device=dev, dtype=dtype)

    names = kernels_of
    with torch.no_grad():
        out["explicit"] = {
            "tn F.linear(x, w)": names(lambda: F.linear(x, w)),
            "nn torch.mm(dy, w)": names(lambda: torch.mm(dy, w)),
            "nt torch.mm(dy.t(), x)": names(lambda: torch.mm(dy.t(), x)),
        }
    y = F.linear(x, w)
    out["autograd"] = {"forward F.linear": names(lambda: F.linear(x, w)),
                       "backward (dX and dW)": names(lambda: torch.autograd.grad(y, (x, w), dy, retain_graph=True))}
    out["shape"] = {"tokens": T, "out": out_f, "in": in_f}
    return out


def eager_time(fn, calls=10):
    """Median seconds per call over events around single calls (kernels of ≥ 0.1 ms)."""
    for _ in range(2):
        fn()
    torch.cuda.synchronize()
    ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(calls)]
    for a, b in ev:
        torch.cuda._sleep(LEAD_IN_CYCLES)
        a.record()
        fn()
        b.record()
    torch.cuda.synchronize()
    return statistics.median(a.elapsed_time(b) / 1e3 for a, b in ev)


def spread_points(dev):
    """SDPA forward / backward at points of the profile's torch-sdpa table, and device copies."""
    rows = []
    for d, S, b in ((128, 1024, 8), (128, 4096, 2), (128, 2048, 4), (64, 4096, 4), (128, 8192, 1)):
        h = 32
        q, k, v = (torch.randn(b, h, S, d, device=dev, dtype=torch.bfloat16, requires_grad=True) for _ in range(3))
        go = torch.randn(b, h, S, d, device=dev, dtype=torch.bfloat16)

        def fwd():
            return F.scaled_dot_product_attention(q, k, v, is_causal=True)

        o = fwd()
        tf = eager_time(fwd)
        tb = eager_time(lambda: torch.autograd.grad(o, (q, k, v), go, retain_graph=True))
        rows.append({"kind": "attention_prefill", "head_dim": d, "seq_len": S, "batch": b, "heads": h,
                     "causal": True, "seconds": tf, "backward_seconds": tb})
    for mib in (64, 256, 1024):
        n = mib * 2**20 // 2
        src = torch.randn(n, device=dev, dtype=torch.bfloat16)
        dst = torch.empty_like(src)
        t = eager_time(lambda: dst.copy_(src), 20)
        rows.append({"kind": "memory_bound", "bytes": 2.0 * n * 2, "seconds": t})
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--shapes", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--tokens", help="only shapes whose token count is in this comma-separated list")
    ap.add_argument("--kernels", action="store_true")
    ap.add_argument("--spread", action="store_true")
    ap.add_argument("--order", choices=("listed", "shuffled"), default="listed",
                    help="time the shapes in the file's order (default) or shuffled with --seed")
    ap.add_argument("--seed", type=int, default=20261206, help="the shuffle's seed (--order shuffled)")
    ap.add_argument("--hold-ms", type=float, default=0.0,
                    help="hold each shape this long (GPU ms) and keep the second half of its samples "
                         "(default 0: ~2 ms per shape, every sample)")
    ap.add_argument("--fill", choices=("randn", "uniform"), default="randn",
                    help="operand values: torch.randn (default) or uniform in ±1 (the calibrator's)")
    a = ap.parse_args()
    dev = torch.device("cuda")
    torch.manual_seed(0)
    with open(a.shapes) as f:
        shapes = json.load(f)["gemm_shapes"]
    if a.tokens:
        keep = {int(x) for x in a.tokens.split(",")}
        shapes = [s for s in shapes if s.get("tokens") in keep]
    if a.order == "shuffled":
        random.Random(a.seed).shuffle(shapes)
    res = {"what": "PyTorch GEMM times in the tn / nn / nt layouts (bench/pytorch/gemm_layouts.py), CUDA-graph "
                   "replays, inputs rotated past L2, median",
           "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "torch": torch.__version__,
           "cuda": torch.version.cuda, "device": torch.cuda.get_device_name(0),
           "uuid": str(getattr(torch.cuda.get_device_properties(0), "uuid", "")),
           "order": a.order if a.order == "listed" else "shuffled (seed %d)" % a.seed, "fill": a.fill}
    t0 = time.time()
    if a.kernels:
        res["kernels"] = kernel_names(dev, torch.bfloat16)
        print(json.dumps(res["kernels"], indent=1), flush=True)
    if a.spread:
        res["spread_points"] = spread_points(dev)
    if not 0 <= a.hold_ms <= 10000:
        raise SystemExit("gemm_layouts.py: --hold-ms must be in [0, 10000]")
    res["hold_ms"] = a.hold_ms
    if a.hold_ms > 0:
        res["hold_duty_is"] = ("per shape: the share of the kept samples' wall time spent in its GEMM graphs "
                               "(the 30 us spin before each sample and the host's gaps are the rest)")
    res["shapes"] = time_shapes(shapes, dev, torch.bfloat16, a.hold_ms, a.fill)
    res["run_seconds"] = time.time() - t0
    with open(a.out, "w") as f:
        json.dump(res, f, indent=1)
        f.write("\n")
    print(f"{len(res['shapes'])} shapes timed in {res['run_seconds']:.1f} s -> {a.out}", flush=True)


if __name__ == "__main__":
    main()
