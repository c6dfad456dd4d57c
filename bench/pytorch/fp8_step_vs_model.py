#!/usr/bin/env python3
"""The GEMMs of bench/pytorch/fp8_step_probe.py's steps against the cost model at the clock each step
ran at: every GEMM kernel of the profiled step, in launch order, mapped to its layer GEMM (forward,
input gradient, weight gradient) and priced with `infraplan cost` (fp8: all three as TN, the layout
the recipe's transposed copies give them; bf16: TN, NN, NT as autograd runs them).

  python3 bench/pytorch/fp8_step_vs_model.py docs/data/fp8/fp8_step_probe_llama2-7b.json [...]
"""
import collections
import json
import subprocess
import sys

SHAPES = {"llama2-7b": (4096, 32, 32, 11008), "llama3-8b": (4096, 32, 8, 14336), "llama2-13b": (5120, 40, 40, 13824)}


def cost_us(exe, m, n, k, dtype, layout, mhz):
    out = subprocess.run([exe, "cost", "--gpu", "h200-sxm-141gb", "--op", "gemm", "--m", str(m), "--n", str(n), "--k",
                          str(k), "--dtype", dtype, "--layout", layout, "--clock-mhz", str(mhz), "--json"],
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out)["seconds"] * 1e6


def main(argv):
    exe = "build/bin/infraplan"
    print("| model | mode | SM clock | forward | input gradient | weight gradient | all GEMMs, measured / model | step |")
    print("|---|---|---|---|---|---|---|---|")
    for path in argv[1:]:
        d = json.load(open(path))
        h, heads, kv, ffn = SHAPES[d["model"]]
        T, L = d["seq"], d["layers"]
        W = {"qkv": ((heads + 2 * kv) * (h // heads), h), "o": (h, h), "gu": (2 * ffn, h), "down": (h, ffn)}
        order = [("fwd", n) for _ in range(L) for n in ("qkv", "o", "gu", "down")]
        order += [(k, n) for _ in range(L) for n in ("down", "gu", "o", "qkv") for k in ("dgrad", "wgrad")]
        for mode in d["modes"]:
            ks, fp8, mhz = mode["gemm_kernels_us"], mode["fp8"], mode["clock"]["sm_mhz"]
            if len(ks) != len(order):
                raise SystemExit(f"{path}: {len(ks)} GEMM kernels in the profiled step, expected {len(order)}")
            dtype = "fp8" if fp8 else "bf16"
            agg = collections.defaultdict(lambda: [0.0, 0.0])
            for (kind, n), us in zip(order, ks):
                out, inp = W[n]
                if kind == "fwd":
                    shape, layout = (T, out, inp), "tn"
                elif kind == "dgrad":
                    shape, layout = (T, inp, out), "tn" if fp8 else "nn"
                else:
                    shape, layout = (out, inp, T), "tn" if fp8 else "nt"
                agg[kind][0] += us
                agg[kind][1] += cost_us(exe, *shape, dtype, layout, mhz)
            m = sum(v[0] for v in agg.values())
            p = sum(v[1] for v in agg.values())
            cells = " | ".join(f"{agg[k][0] / agg[k][1]:.3f}" for k in ("fwd", "dgrad", "wgrad"))
            print(f"| {d['model']} × {L} layers, {T} tokens | {dtype} | {mhz:.0f} MHz | {cells} | "
                  f"{m / 1e3:.2f} / {p / 1e3:.2f} ms = {m / p:.3f} | {mode['step_ms_median']:.2f} ms |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
