"""How much of each eager memory-bound kernel's time follows the SM clock (calibration; no corpus row).

The framework tables (`calibrate_framework.py`: casts, adds, norms, RoPE, GQA expansion, SwiGLU,
transposes, log-softmax, ...) and the fused AdamW table (`optimizer_step.py`) are timed on a light
GPU, at the top clock. Inside a heavy step the board's power limiter lowers the clock (700 W cap
on the H200), and a kernel that is not purely bandwidth-bound (strided copies, fp32 math per
element, several passes) slows with it. Without touching the GPU's settings this script times each
op in two states, both paced by the GPU (the host has queued every call before the GPU reaches
them):
  top  after rest_s of idle, behind a spin that lets the clock ramp up and hides the host's issue;
  hot  right behind a queue of bf16 8192³ GEMMs that follows 0.3 s of them (the clock at the cap's).
A spin kernel of known cycles (torch.cuda._sleep, CUDA events) right before and right after the
timed calls reads the clock of each state. (Until 2026-12-04 the hot state issued its calls after
a synchronisation, so that composite ops — a dozen kernels through autograd — were timed at the
host's pace there, and the top state read its clock after an idle gap.)

Per op: t_top, f_top, t_hot, f_hot (medians) and the clock share
    phi = (t_hot / t_top - 1) / (f_top / f_hot - 1)
of the model t(f) = t_top · ((1 − phi) + phi · f_top / f).

    python3 bench/pytorch/elementwise_clock.py [--out FILE] [--elements N] [--reps 3] [--rest-s 0.3] [--only a,b]
"""
import argparse, json, os, statistics, sys, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch
import calibrate_framework as cf

SPIN = 100_000  # cycles; ~50 µs at the top clock


def meter():
    """Queues a spin of SPIN cycles between two events; mhz(meter) reads the clock it ran at."""
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    a.record(); torch.cuda._sleep(SPIN); b.record()
    return a, b


def mhz(m):
    return SPIN / (m[0].elapsed_time(m[1]) * 1e3)  # cycles per µs = MHz


def heat(seconds, ga, gb):
    t0 = time.time()
    while time.time() - t0 < seconds:
        for _ in range(8): torch.mm(ga, gb)
        torch.cuda.synchronize()


def timed_batch(call, calls, lead):
    """Seconds per call of `calls` back-to-back calls queued behind lead() and a clock meter, and
    the clock before and after them (MHz)."""
    lead()
    m0 = meter()
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    a.record()
    for i in range(calls):
        call(i)
    b.record()
    m1 = meter()
    m1[1].synchronize()
    return a.elapsed_time(b) * 1e-3 / calls, mhz(m0), mhz(m1)


def adamw_case(dtype, params, dev):
    """fused AdamW over LLaMA-block-like tensors of `params` elements in all (two copies for rotation)."""
    shapes = [(4096, 4096)] * 4 + [(14336, 4096)] * 3
    per = sum(a * b for a, b in shapes)
    sets = []
    for _ in range(2):
        ps = []
        while sum(p.numel() for p in ps) < params / 2:
            for s in shapes: ps.append(torch.randn(*s, device=dev, dtype=dtype))
        gs = [torch.randn_like(p) for p in ps]
        ms = [torch.zeros_like(p) for p in ps]; vs = [torch.zeros_like(p) for p in ps]
        st = [torch.tensor(1.0, device=dev) for _ in ps]
        sets.append((ps, gs, ms, vs, st))

    def call(i):
        ps, gs, ms, vs, st = sets[i % 2]
        torch._fused_adamw_(ps, gs, ms, vs, [], st, lr=1e-5, beta1=0.9, beta2=0.95, weight_decay=0.1, eps=1e-8,
                            amsgrad=False, maximize=False)
    return call, sum(p.numel() for p in sets[0][0])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(os.environ.get("OUT", "/tmp"), "elementwise_clock.json"))
    ap.add_argument("--elements", type=int, default=1 << 26)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--rest-s", type=float, default=0.3, help="idle seconds before each table-state timing")
    ap.add_argument("--only", default="", help="comma-separated ops (framework table names, fused_adamw_fp32/bf16)")
    args = ap.parse_args()
    dev = torch.device("cuda")
    gen = torch.Generator(device=dev).manual_seed(2026)
    clock = cf.Clock(dev)
    rotate = 3 * cf.l2_bytes()
    ga, gb = (torch.randn(8192, 8192, device=dev, dtype=torch.bfloat16) for _ in range(2))
    cases = {}
    for name in cf.ELEMENTWISE_OPS:
        cases[name] = ("elementwise", name)
    cases["fused_adamw_fp32"] = ("adamw", torch.float32)
    cases["fused_adamw_bf16"] = ("adamw", torch.bfloat16)
    if args.only:
        keep = args.only.split(",")
        unknown = [k for k in keep if k not in cases]
        if unknown:
            sys.exit(f"--only: unknown ops {unknown}; valid: {sorted(cases)}")
        cases = {k: v for k, v in cases.items() if k in keep}
    if not 0 <= args.rest_s <= 60:
        sys.exit("--rest-s must lie in [0, 60]")
    rows = {}
    t_start = time.time()
    for name, (kind, what) in cases.items():
        if kind == "elementwise":
            fns = []
            while True:
                fn, nbytes = cf.elementwise_case(name, args.elements, dev, gen)
                fns.append(fn)
                if len(fns) * nbytes >= rotate or len(fns) >= 8: break
            call = lambda i, fns=fns: fns[i % len(fns)]()
            size = args.elements
        else:
            call, size = adamw_case(what, 5e8, dev)
        call(0); call(1)
        host = cf.host_seconds_per_call(clock, call)
        probe, _, _ = timed_batch(call, 2, lambda: torch.cuda._sleep(int(2e9 * (2e-3 + 4 * host))))
        calls = max(1, min(16, int(5e-4 / max(probe, 1e-7)) + 1, int(6e-3 / max(host, 1e-7))))
        top, hot = [], []
        for r in range(args.reps):
            clock.sync()
            time.sleep(args.rest_s)
            t, f0, f1 = timed_batch(call, calls, lambda: torch.cuda._sleep(int(2e9 * (2e-3 + 1.5 * calls * host))))
            top.append((t, (f0 + f1) / 2))
            heat(0.3, ga, gb)
            t, f0, f1 = timed_batch(call, calls, lambda: [torch.mm(ga, gb) for _ in range(6)])
            hot.append((t, (f0 + f1) / 2))
        table = top
        tt, ft = statistics.median(x[0] for x in table), statistics.median(x[1] for x in table)
        th, fh = statistics.median(x[0] for x in hot), statistics.median(x[1] for x in hot)
        phi = (th / tt - 1) / (ft / fh - 1) if ft > fh * 1.02 else None
        rows[name] = {"elements": size, "calls": calls, "host_s_per_call": host, "top": table, "hot": hot,
                      "t_top_s": tt, "f_top_mhz": ft, "t_hot_s": th, "f_hot_mhz": fh, "clock_share": phi}
        print(f"{name:24s} top {tt * 1e6:9.1f} us @ {ft:5.0f} MHz   hot {th * 1e6:9.1f} us @ {fh:5.0f} MHz   "
              f"phi {phi if phi is None else round(phi, 2)}   ({time.time() - t_start:.0f} s)", flush=True)
        del call; torch.cuda.empty_cache()
    json.dump({"what": __doc__.split("\n")[0], "command": " ".join(["python3"] + sys.argv),
               "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "torch": torch.__version__,
               "gpu": torch.cuda.get_device_name(), "ops": rows}, open(args.out, "w"), indent=1)


if __name__ == "__main__":
    main()
