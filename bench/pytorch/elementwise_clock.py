"""How much of each eager memory-bound kernel's time follows the SM clock (calibration; no corpus row).

The framework tables (`calibrate_framework.py`: casts, adds, norms, RoPE, GQA expansion, SwiGLU,
transposes, log-softmax, ...) and the fused AdamW table (`optimizer_step.py`) are timed on a light
GPU, near the top clock. Inside a heavy step the board's power limiter lowers the clock (700 W cap
on the H200), and a kernel that is not purely bandwidth-bound (strided copies, fp32 math per
element, several passes) slows with it. Without touching the GPU's settings this script times each
op in two states: as the table times it (calibrate_framework.time_call: calls queued behind a spin,
~10 ms in all) and right after a bf16 8192³ GEMM loop of 0.1 or 0.5 s has pulled the clock down to
the cap's (no idle gap between; six calls, inputs rotated past L2). A spin kernel of known cycles
(torch.cuda._sleep, CUDA events) queued right behind the calls reads the clock of each state.

Per op: t_table, f_table, t_hot, f_hot (medians) and the clock share
    phi = (t_hot / t_table - 1) / (f_table / f_hot - 1)
of the model t(f) = t_table · ((1 − phi) + phi · f_table / f).

    python3 bench/pytorch/elementwise_clock.py [--out FILE] [--elements N] [--reps 3] [--rest-s 0.3] [--only a,b]
"""
import argparse, json, os, statistics, sys, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch
import calibrate_framework as cf

SPIN = 100_000  # cycles; ~50 µs at the top clock


def clock_after():
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    a.record(); torch.cuda._sleep(SPIN); b.record(); b.synchronize()
    return SPIN / (a.elapsed_time(b) * 1e3)  # cycles per µs = MHz


def heat(seconds, ga, gb):
    t0 = time.time()
    while time.time() - t0 < seconds:
        for _ in range(8): torch.mm(ga, gb)
        torch.cuda.synchronize()


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
        table, hot = [], []
        for r in range(args.reps):
            time.sleep(args.rest_s)
            t = cf.time_call(clock, call, 1e-4, 0.01, 15)
            table.append((t, clock_after()))
            for h in (0.1, 0.5):
                heat(h, ga, gb)
                evs = []
                for i in range(6):
                    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                    a.record(); call(i); b.record(); evs.append((a, b))
                f = clock_after()
                hot.append((statistics.median(a.elapsed_time(b) / 1e3 for a, b in evs[1:]), f))
        tt, ft = statistics.median(x[0] for x in table), statistics.median(x[1] for x in table)
        th, fh = statistics.median(x[0] for x in hot), statistics.median(x[1] for x in hot)
        phi = (th / tt - 1) / (ft / fh - 1) if ft > fh * 1.02 else None
        rows[name] = {"elements": size, "table": table, "hot": hot, "t_table_s": tt, "f_table_mhz": ft,
                      "t_hot_s": th, "f_hot_mhz": fh, "clock_share": phi}
        print(f"{name:24s} table {tt * 1e6:9.1f} us @ {ft:5.0f} MHz   hot {th * 1e6:9.1f} us @ {fh:5.0f} MHz   "
              f"phi {phi if phi is None else round(phi, 2)}   ({time.time() - t_start:.0f} s)", flush=True)
        del call; torch.cuda.empty_cache()
    json.dump({"what": __doc__.split("\n")[0], "command": "python3 bench/pytorch/elementwise_clock.py",
               "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "torch": torch.__version__,
               "gpu": torch.cuda.get_device_name(), "ops": rows}, open(args.out, "w"), indent=1)


if __name__ == "__main__":
    main()
