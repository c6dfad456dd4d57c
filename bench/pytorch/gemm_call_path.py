#!/usr/bin/env python3
"""Does PyTorch run a GEMM shape the way the calibrator's cublasGemmEx call does?

For each shape of a list, on one GPU and in alternation (so both paths see the same clock state):
  torch    the layout's PyTorch call (F.linear / torch.mm, as bench/pytorch/gemm_layouts.py)
  gemmex   cublasGemmEx called directly (ctypes) on the same operands and stream, CUBLAS_GEMM_DEFAULT,
           32 MiB workspace, default math mode (the calibrator's call, calib_kernels/cublas_gemmex.cpp)
  gemmex_strict  the same with CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION
each timed as gemm_layouts.py times a shape (CUDA-graph replays of >= ~100 us of calls behind a
~30 us spin, inputs rotated past L2, median), and the kernels each path launches (torch.profiler).
    python3 bench/pytorch/gemm_call_path.py --shapes shapes.json --out call_path.json
shapes.json: [{"layout": "tn"|"nn"|"nt", "m": M, "n": N, "k": K}, ...] (m = tokens for tn / nn).
"""
import argparse
import ctypes
import glob
import json
import os
import statistics
import time

import torch

from gemm_layouts import L2_BYTES, call, graph_time, kernels_of, operands

CUBLAS_OP_N, CUBLAS_OP_T = 0, 1
CUDA_R_16BF = 14
CUBLAS_COMPUTE_32F = 68
CUBLAS_GEMM_DEFAULT = -1
CUBLAS_DEFAULT_MATH = 0
CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION = 16


def load_cublas():
    names = ["libcublas.so.13", "libcublas.so.12", "libcublas.so"]
    roots = [os.path.dirname(torch.__file__)] + glob.glob(os.path.join(os.path.dirname(torch.__file__), "..", "nvidia", "**", "lib"), recursive=True)
    for n in names:
        try:
            return ctypes.CDLL(n), n
        except OSError:
            pass
        for r in roots:
            for p in glob.glob(os.path.join(r, n)):
                return ctypes.CDLL(p), p
    raise SystemExit("libcublas not found")


class GemmEx:
    def __init__(self, lib, stream, math_mode):
        self.lib = lib
        self.h = ctypes.c_void_p()
        assert lib.cublasCreate_v2(ctypes.byref(self.h)) == 0
        assert lib.cublasSetStream_v2(self.h, ctypes.c_void_p(stream)) == 0
        self.ws = torch.empty(32 << 20, dtype=torch.uint8, device="cuda")
        assert lib.cublasSetWorkspace_v2(self.h, ctypes.c_void_p(self.ws.data_ptr()), ctypes.c_size_t(32 << 20)) == 0
        assert lib.cublasSetMathMode(self.h, math_mode) == 0
        self.alpha, self.beta = ctypes.c_float(1.0), ctypes.c_float(0.0)

    def rebind(self, stream):
        assert self.lib.cublasSetStream_v2(self.h, ctypes.c_void_p(stream)) == 0

    def fn(self, layout, m, n, k):
        """Y[m, n] (row-major) for the layout's operands, as column-major cuBLAS sees it."""
        lib, h = self.lib, self.h

        def run(a, b, y):
            if layout == "tn":    # Y = X·Wᵀ: C(n×m) = Wᵀ-view(T) · X-view(N)
                args = (CUBLAS_OP_T, CUBLAS_OP_N, n, m, k, b, k, a, k)
            elif layout == "nn":  # Y = dY·W: C(n×m) = W-view(N) · dY-view(N)
                args = (CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, b, n, a, k)
            else:                 # Y = dYᵀ·X with dY[k, m], X[k, n]: C(n×m) = X-view(N) · dY-view(T)
                args = (CUBLAS_OP_N, CUBLAS_OP_T, n, m, k, b, n, a, m)
            ta, tb, mm, nn_, kk, A, lda, B, ldb = args
            rc = lib.cublasGemmEx(h, ta, tb, mm, nn_, kk, ctypes.byref(self.alpha),
                                  ctypes.c_void_p(A.data_ptr()), CUDA_R_16BF, lda,
                                  ctypes.c_void_p(B.data_ptr()), CUDA_R_16BF, ldb, ctypes.byref(self.beta),
                                  ctypes.c_void_p(y.data_ptr()), CUDA_R_16BF, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT)
            if rc != 0:
                raise RuntimeError(f"cublasGemmEx {layout} {m}x{n}x{k}: status {rc}")
        return run


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--shapes", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--rounds", type=int, default=3, help="alternations of the paths per shape")
    a = ap.parse_args()
    shapes = json.load(open(a.shapes))
    if not isinstance(shapes, list):
        raise SystemExit(f"{a.shapes}: a list of shapes expected")
    for i, sh in enumerate(shapes):
        if sh.get("layout") not in ("tn", "nn", "nt"):
            raise SystemExit(f"{a.shapes}: shape {i}: layout {sh.get('layout')!r}, expected tn, nn or nt")
        for d in ("m", "n", "k"):
            if not isinstance(sh.get(d), int) or not 1 <= sh[d] <= 1 << 20:
                raise SystemExit(f"{a.shapes}: shape {i}: {d} {sh.get(d)!r}, expected an integer in 1..1048576")
    lib, libname = load_cublas()
    dev, dt = "cuda", torch.bfloat16
    t0 = time.time()
    rows = []
    for sh in shapes:
        layout, m, n, k = sh["layout"], sh["m"], sh["n"], sh["k"]
        per = (m * k + n * k + m * n) * 2
        copies = max(1, min(16, int(3 * L2_BYTES / per) + 1))
        ops = [operands(layout, m, n, k, dev, dt) for _ in range(copies)]
        outs = [torch.empty(m, n, device=dev, dtype=dt) for _ in range(copies)]
        f = call(layout)
        est = max(2.0 * m * n * k / 600e12, per / 3.5e12, 3e-6)
        paths = {}
        # graph_time captures on its own side stream: the handles follow the current stream at call time
        for name, mode in (("gemmex", CUBLAS_DEFAULT_MATH), ("gemmex_strict", CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION)):
            g = GemmEx(lib, torch.cuda.current_stream().cuda_stream, mode)
            run = g.fn(layout, m, n, k)

            def bound(j, g=g, run=run):
                g.rebind(torch.cuda.current_stream().cuda_stream)
                a_, b_ = ops[j]
                run(a_, b_, outs[j])
            paths[name] = (bound, g)
        times = {"torch": [], "gemmex": [], "gemmex_strict": []}
        for _ in range(a.rounds):
            times["torch"].append(graph_time(lambda j: f(*ops[j]), copies, est)[0])
            for name, (bound, _) in paths.items():
                times[name].append(graph_time(bound, copies, est)[0])
        # correctness of the direct call against PyTorch's
        ref = f(*ops[0])
        paths["gemmex"][0](0)
        torch.cuda.synchronize()
        err = float((outs[0].float() - ref.float()).abs().max() / ref.float().abs().max().clamp_min(1e-6))
        r = {"layout": layout, "m": m, "n": n, "k": k,
             "seconds": {p: statistics.median(v) for p, v in times.items()},
             "rounds": times, "gemmex_max_rel_err": err,
             "kernels": {"torch": kernels_of(lambda: f(*ops[0])),
                         "gemmex": kernels_of(lambda: paths["gemmex"][0](0)),
                         "gemmex_strict": kernels_of(lambda: paths["gemmex_strict"][0](0))}}
        if "torch_vs_calib" in sh:
            r["torch_vs_calib"] = sh["torch_vs_calib"]
        rows.append(r)
        s = r["seconds"]
        print(f"{layout} {m}x{n}x{k}: torch {s['torch']*1e6:.1f} us, gemmex {s['gemmex']*1e6:.1f}, strict {s['gemmex_strict']*1e6:.1f}, "
              f"same kernels {r['kernels']['torch'] == r['kernels']['gemmex']}, err {err:.1e}", flush=True)
        del ops, outs
    out = {"what": "one GEMM shape through PyTorch's call and through cublasGemmEx called directly, alternated (bench/pytorch/gemm_call_path.py)",
           "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "torch": torch.__version__, "cuda": torch.version.cuda,
           "cublas": libname, "device": torch.cuda.get_device_name(),
           "uuid": str(torch.cuda.get_device_properties(0).uuid),
           "allow_bf16_reduced_precision_reduction": torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction,
           "preferred_blas_library": str(torch.backends.cuda.preferred_blas_library()),
           "rows": rows, "run_seconds": time.time() - t0}
    json.dump(out, open(a.out, "w"), indent=1)


if __name__ == "__main__":
    main()
