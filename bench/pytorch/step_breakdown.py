"""GPU time of one training step by kernel, for probe configurations (calibration; no corpus row).

Each probe (a model of bench/pytorch/llama_corpus.py at a micro-batch or depth the corpus does not
have) runs warm-up steps, then 20 timed steps with the SM clock read after each (a spin kernel of
known cycles, torch.cuda._sleep, timed with CUDA events, queued right behind the step), then three
single steps under the profiler, each between device synchronisations so that the trace holds
exactly one step's kernels (with `--save-traces DIR` the middle one is kept: kernels and the host's
launch calls, correlated). Output per probe: step time (median), clock (median), kernel busy time
and span of each profiled step, and per kernel name its GPU µs and count (median step of the three).

    python3 bench/pytorch/step_breakdown.py [--out FILE]
"""
import argparse, collections, json, os, statistics, sys, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch
import llama_corpus as lc

lc.MODELS["llama3-8b-4l"] = (4096, 4, 32, 8, 14336, 128256, False, False)
# (impl, model, precision, checkpointing, micro-batch, seq)
PROBES = [("plain", "llama-0.4b", "pure", False, 6, 2048),
          ("plain", "tinyllama-1.1b", "amp", False, 3, 2048),
          ("plain", "llama3.2-3b", "pure", False, 2, 2048),
          ("hf", "qwen2.5-0.5b", "amp", False, 3, 2048),
          ("plain", "llama3-8b-4l", "pure", False, 2, 4096)]
# --compiled: the same kind of probes under torch.compile (none of them a corpus row)
PROBES_COMPILED = [("compile", "llama-0.4b", "pure", False, 6, 2048),
                   ("compile", "tinyllama-1.1b", "amp", False, 3, 2048)]
SPIN = 100_000
SAVE_TRACES = ""  # --save-traces DIR: the second profiled step of each probe, gzipped (kernels and launches)


def clock_after():
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    a.record(); torch.cuda._sleep(SPIN); b.record(); b.synchronize()
    return SPIN / (a.elapsed_time(b) * 1e3)


def probe(cfg):
    impl, name, precision, ckpt, mb, seq = cfg
    dev = torch.device("cuda")
    model, opt, step = lc.training_step(impl, name, precision, ckpt, mb, seq, dev, 2026)

    for _ in range(7 if impl == "compile" else 5): step()
    torch.cuda.synchronize()
    steps, clocks = [], []
    for _ in range(20):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record(); step(); b.record()
        clocks.append(clock_after())
        steps.append(a.elapsed_time(b) / 1e3)
    from torch.profiler import profile, ProfilerActivity
    per_step = []
    for i in range(3):
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            step(); torch.cuda.synchronize()
        path = f"/tmp/sb_{name}_{i}.json"; prof.export_chrome_trace(path)
        if SAVE_TRACES and i == 1:
            import gzip, shutil
            with open(path, "rb") as fi, gzip.open(os.path.join(SAVE_TRACES, f"step_{impl}_{name}_{precision}_mb{mb}_s{seq}.json.gz"), "wb") as fo:
                shutil.copyfileobj(fi, fo)
        ev = [e for e in json.load(open(path))["traceEvents"] if e.get("cat") == "kernel"]
        ev.sort(key=lambda e: e["ts"])
        busy, end = 0.0, -1.0
        for e in ev:
            a, b = e["ts"], e["ts"] + e["dur"]
            if b > end: busy += b - max(a, end); end = b
        by = collections.defaultdict(lambda: [0.0, 0])
        for e in ev:
            by[e["name"]][0] += e["dur"]; by[e["name"]][1] += 1
        per_step.append({"busy_us": busy, "span_us": ev[-1]["ts"] + ev[-1]["dur"] - ev[0]["ts"], "kernels": dict(by)})
    mid = sorted(per_step, key=lambda s: s["busy_us"])[1]
    del model, opt, step; torch.cuda.empty_cache()
    return {"config": list(cfg), "step_ms_median": 1e3 * statistics.median(steps),
            "clock_mhz_median": statistics.median(clocks), "busy_ms": [s["busy_us"] / 1e3 for s in per_step],
            "span_ms": [s["span_us"] / 1e3 for s in per_step],
            "kernels": {k: {"us": v[0], "count": v[1]} for k, v in sorted(mid["kernels"].items(), key=lambda kv: -kv[1][0])}}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(os.environ.get("OUT", "/tmp"), "step_breakdown.json"))
    ap.add_argument("--only", default="", help="comma-separated model names")
    ap.add_argument("--compiled", action="store_true", help="the torch.compile probes (PROBES_COMPILED)")
    ap.add_argument("--save-traces", default="", help="directory for each probe's profiled step (gzipped trace)")
    args = ap.parse_args()
    global SAVE_TRACES
    SAVE_TRACES = args.save_traces
    keep = set(filter(None, args.only.split(",")))
    res = {"what": __doc__.split("\n")[0], "command": "python3 bench/pytorch/step_breakdown.py " + " ".join(sys.argv[1:]),
           "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "torch": torch.__version__,
           "gpu": torch.cuda.get_device_name(), "probes": []}
    for cfg in PROBES_COMPILED if args.compiled else PROBES:
        if keep and cfg[1] not in keep: continue
        r = probe(cfg)
        res["probes"].append(r)
        print(cfg, f"step {r['step_ms_median']:.1f} ms clock {r['clock_mhz_median']:.0f} MHz busy "
              + " ".join(f"{b:.1f}" for b in r["busy_ms"]), flush=True)
        json.dump(res, open(args.out, "w"), indent=1)


if __name__ == "__main__":
    main()
