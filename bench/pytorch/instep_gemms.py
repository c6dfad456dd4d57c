"""GEMMs inside a training step vs the same GEMMs alone (calibration: fit configurations only).
For each fit configuration of bench/pytorch/llama_corpus.py: steps under the profiler (record_shapes)
give every mm kernel's in-step duration with its aten shapes/strides; nvidia-smi samples the SM clock
and power during steps; then each distinct shape is replayed alone in a CUDA graph (inputs rotated),
also with the clock sampled. Output: JSON with per-shape in-step median, alone median, clocks."""
import json, os, sys, time, statistics, collections
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch
import llama_corpus as lc
from smi_sampler import SmiSampler

OUT = os.environ.get("OUT", "/tmp")
FIT = [c for c in lc.CONFIGS if c[6] == "fit" and c[0] != "compile"]
# Probes: the layers of 7-8B models in a 4-layer model (not corpus rows): the kernels a large
# GPU-bound step runs, at the power such a step draws, without looking at a validation row.
lc.MODELS["llama2-7b-4l"] = (4096, 4, 32, 32, 11008, 32000, False, False)
lc.MODELS["llama3-8b-4l"] = (4096, 4, 32, 8, 14336, 128256, False, False)
PROBES = [("plain", "llama2-7b-4l", "pure", False, 1, 2048, "probe", True),
          ("plain", "llama3-8b-4l", "pure", False, 2, 4096, "probe", True)]
if "--probes" in sys.argv:
    FIT = PROBES

def clock_of(smi, t0, t1):
    """Median SM clock and board power of the samples in [t0, t1] (the keys the data files use)."""
    w = smi.summary(t0, t1, center=statistics.median)
    return w and {"samples": w["samples"], "sm_mhz_median": w["sm_mhz"], "power_w_median": w["power_w"]}


def instep(cfg, smi):
    impl, name, precision, ckpt, mb, seq, split, _ = cfg
    dev = torch.device("cuda")
    model, opt, step = lc.training_step(impl, name, precision, ckpt, mb, seq, dev, 2026)
    for _ in range(5): step()
    torch.cuda.synchronize()
    t0 = time.time()
    for _ in range(30): step()
    torch.cuda.synchronize(); t1 = time.time()
    clock = clock_of(smi, t0 + 0.3, t1)
    from torch.profiler import profile, ProfilerActivity
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], record_shapes=True) as prof:
        for _ in range(3): step()
        torch.cuda.synchronize()
    step_s = lc.timed_steps(step, 10)
    path = f"/tmp/tr_{name}_{precision}.json"; prof.export_chrome_trace(path)
    ev = json.load(open(path))["traceEvents"]
    if "--probes" in sys.argv:
        import gzip, shutil
        with open(path, "rb") as fi, gzip.open(os.path.join(OUT, f"trace_{name}.json.gz"), "wb") as fo:
            shutil.copyfileobj(fi, fo)
    ks = sorted((e["ts"], e["ts"] + e["dur"], e["name"]) for e in ev if e.get("cat") == "kernel")
    busy, end = 0.0, -1.0
    for a, b, _ in ks:
        if b > end:
            busy += b - max(a, end); end = b
    cats = collections.defaultdict(float)
    for a, b, n in ks:
        key = ("gemm" if ("nvjet" in n or "gemm" in n.lower() or "cutlass" in n.lower()) else
               "attention" if ("sdpa" in n or "flash" in n or "fmha" in n) else
               "optimizer" if "multi_tensor" in n else "other")
        cats[key] += b - a
    span = (ks[-1][1] - ks[0][0]) if ks else 0
    smi_extra = {"step_ms_median": 1e3 * statistics.median(step_s), "trace_steps": 3,
                 "kernel_span_us": span, "kernel_busy_us": busy, "kernel_us_by_kind": dict(cats)}
    del model, opt, step; torch.cuda.empty_cache()
    # kernel -> launch (runtime or driver API, by correlation id) -> aten op (by External id)
    cpu = {e["args"]["External id"]: e for e in ev
           if e.get("cat") == "cpu_op" and e["name"] in ("aten::mm", "aten::addmm", "aten::bmm")}
    rt = {e["args"]["correlation"]: e for e in ev
          if e.get("cat") in ("cuda_runtime", "cuda_driver") and "correlation" in e.get("args", {})}
    kern = [e for e in ev if e.get("cat") == "kernel"]
    out = collections.defaultdict(list)
    for k in kern:
        r = rt.get(k["args"].get("correlation"))
        if r is None: continue
        c = cpu.get(r["args"].get("External id"))
        if c is None: continue
        a = c["args"]; dims = a["Input Dims"]; strides = a["Input Strides"]
        if c["name"] == "aten::addmm": dims, strides = dims[1:3], strides[1:3]
        if c["name"] == "aten::bmm": continue
        key = json.dumps([dims[0], strides[0], dims[1], strides[1], k["name"]])
        out[key].append(k["dur"])
    clock = dict(clock or {}, **smi_extra)
    return clock, out

def alone(dims_a, str_a, dims_b, str_b, smi):
    dev = "cuda"; n = 8
    def mk(d, s):
        size = 1 + sum((x - 1) * y for x, y in zip(d, s))
        return [torch.randn(size, device=dev, dtype=torch.bfloat16).as_strided(d, s) for _ in range(n)]
    A, B = mk(dims_a, str_a), mk(dims_b, str_b)
    g = torch.cuda.CUDAGraph(); s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        for i in range(n): torch.mm(A[i], B[i])
        torch.cuda.synchronize()
        with torch.cuda.graph(g):
            for r in range(5):
                for i in range(n): torch.mm(A[i], B[i])
    times = []
    t0 = time.time()
    for _ in range(12):
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record(); g.replay(); e1.record(); e1.synchronize()
        times.append(e0.elapsed_time(e1) * 1e3 / (5 * n))
    t1 = time.time()
    return statistics.median(times[2:]), clock_of(smi, t0, t1)

smi = SmiSampler(50); time.sleep(1)
res = {"date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "torch": torch.__version__, "configs": []}
for cfg in FIT:
    clock, ks = instep(cfg, smi)
    rows = []
    for key, durs in ks.items():
        da, sa, db, sb, kname = json.loads(key)
        t_alone, clk = alone(da, sa, db, sb, smi)
        rows.append({"a": da, "a_strides": sa, "b": db, "b_strides": sb, "kernel": kname, "n_in_step": len(durs),
                     "in_step_us_median": statistics.median(durs), "alone_us_median": t_alone, "alone_clock": clk})
    res["configs"].append({"config": list(cfg), "step_clock": clock, "gemms": rows})
    print(cfg, clock, len(rows), flush=True)
    for r in sorted(rows, key=lambda r: -r["in_step_us_median"] * r["n_in_step"])[:8]:
        print("   ", r["a"], r["b"], r["kernel"][-20:], "in-step %.1f alone %.1f ratio %.3f" % (r["in_step_us_median"], r["alone_us_median"], r["in_step_us_median"] / r["alone_us_median"]), r["alone_clock"], flush=True)
json.dump(res, open(os.path.join(OUT, "instep_gemms.json"), "w"), indent=1)
smi.close()
