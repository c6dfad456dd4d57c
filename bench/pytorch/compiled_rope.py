#!/usr/bin/env python3
"""GPU time of rotary positions under torch.compile (Inductor), forward and backward, per rotated
element: the calibration of the `compiled_rope_{amp,pure}_{fwd,bwd}` types of the profile's
framework.elementwise table (strategies/compiled_ops.cpp).

What is timed is the attention input of the corpus's plain LLaMA block (bench/pytorch/llama_corpus.py):
the rotary tables computed in the forward (rope_tables), q and k rotated (rotate-half), K and V
repeated to the query heads, under torch.compile. Inductor fuses the tables into the rotation and
recomputes the angles (pow, reciprocal, cos, sin in fp32) for every element it writes, so the
kernels are bound by that arithmetic, not by their bytes. AMP: q, k, v arrive in bf16 from the
autocast GEMMs, the tables are fp32 (fp32 parameters) and SDPA's autocast casts the results back
to bf16; pure bf16: everything bf16.

Shapes are calibration shapes (head widths 64 and 128, 1-8 query heads per KV head, 1k-64k
tokens), none of them a corpus model's. Per shape: forward (the compiled function) and backward
(autograd through its compiled backward) timed with CUDA events around each call after warm-up,
median of --repeats, inputs rotated over several sets larger than L2; a GPU sleep before each
pair lets the host queue both passes, so the times are the kernels' and not the host's.

    python3 bench/pytorch/compiled_rope.py --out OUT.json [--repeats 30] [--quick]
    python3 bench/pytorch/compiled_rope.py --table-from OUT.json --out OUT.json   # table only

The output is an --elementwise-only calibration (merge_framework.py adds its four rows to the
profile). What sets the time (measured, see docs/calibration.md): the forward writes q and k as
SDPA takes them (k repeated to the query heads) and recomputes the angles for every element it
writes, so its rows run over forward elements = tokens x head width x (query heads + the K heads
SDPA receives); the backward rotates the gradients back once per KV head, over rotated elements =
tokens x head width x (query + KV heads). The measured points are resampled (log-log, proportional
beyond the largest) onto the profile's element axis; the held-out shapes get the table's answer
beside their measurement.
"""
import argparse
import datetime
import json
import math
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
try:  # --table-from rebuilds the table on a machine without PyTorch
    import torch  # noqa: E402
    from llama_corpus import rope_tables, rotate_half  # noqa: E402
except ImportError:
    torch = None

# (tokens, query heads, kv heads, head width). GRID: one shape per element count of the profile's
# framework.elementwise axis (tokens x (heads + kv heads) x width = 2^18 ... 2^28 rotated elements);
# HOLDOUT: other head widths and query heads per KV head, to check the table's answer off its shapes.
ELEMENTS = [262144, 1048576, 4194304, 16777216, 67108864, 268435456]
GRID = [(1024, 3, 1, 64), (1024, 6, 2, 128), (2048, 28, 4, 64), (8192, 12, 4, 128), (16384, 28, 4, 128),
        (65536, 16, 16, 128)]
HOLDOUT = [(8192, 8, 8, 128), (16384, 16, 2, 64), (4096, 40, 5, 128), (32768, 12, 4, 128)]


def attention_inputs(q, k, v, s, heads, kv, d, tables_dtype, out_dtype):
    b = q.shape[0] // s
    cos, sin = rope_tables(s, d, q.device, tables_dtype)
    q = q.view(b, s, heads, d).transpose(1, 2)
    k = k.view(b, s, kv, d).transpose(1, 2)
    v = v.view(b, s, kv, d).transpose(1, 2)
    q = q * cos + rotate_half(q) * sin
    k = k * cos + rotate_half(k) * sin
    rep = heads // kv
    if rep > 1:
        k = k[:, :, None].expand(b, kv, rep, s, d).reshape(b, heads, s, d)
        v = v[:, :, None].expand(b, kv, rep, s, d).reshape(b, heads, s, d)
    return q.to(out_dtype), k.to(out_dtype), v.to(out_dtype)


def measure(shape, precision, repeats, dev):
    tokens, heads, kv, d = shape
    s = min(tokens, 4096)
    tables = torch.float32 if precision == "amp" else torch.bfloat16
    fn = torch.compile(lambda q, k, v: attention_inputs(q, k, v, s, heads, kv, d, tables, torch.bfloat16))
    sets = []
    per_set = tokens * (heads + 2 * kv) * d * 2 * 3  # inputs + outputs (x rep) + grads, roughly
    n_sets = max(2, min(8, int(3 * 60e6 // per_set) + 1))
    g = torch.Generator(device=dev).manual_seed(7)
    for _ in range(n_sets):
        q = torch.randn(tokens, heads * d, device=dev, dtype=torch.bfloat16, generator=g).requires_grad_()
        k = torch.randn(tokens, kv * d, device=dev, dtype=torch.bfloat16, generator=g).requires_grad_()
        v = torch.randn(tokens, kv * d, device=dev, dtype=torch.bfloat16, generator=g).requires_grad_()
        grads = [torch.randn(tokens // s, heads, s, d, device=dev, dtype=torch.bfloat16, generator=g)
                 for _ in range(3)]
        sets.append((q, k, v, grads))
    for i in range(3):  # compile and warm up
        q, k, v, gr = sets[i % n_sets]
        torch.autograd.backward(fn(q, k, v), gr)
    torch.cuda.synchronize()
    fwd, bwd = [], []
    for i in range(repeats):
        q, k, v, gr = sets[i % n_sets]
        e = [torch.cuda.Event(enable_timing=True) for _ in range(3)]
        torch.cuda._sleep(5_000_000)  # ~2.5 ms: the host queues both passes before the GPU reaches them
        e[0].record()
        out = fn(q, k, v)
        e[1].record()
        torch.autograd.backward(out, gr)
        e[2].record()
        e[2].synchronize()
        fwd.append(e[0].elapsed_time(e[1]) / 1e3)
        bwd.append(e[1].elapsed_time(e[2]) / 1e3)
        q.grad = k.grad = v.grad = None
    rotated = tokens * (heads + kv) * d
    return {"tokens": tokens, "heads": heads, "kv_heads": kv, "head_dim": d, "seq": s, "precision": precision,
            "rotated_elements": rotated, "forward_s": statistics.median(fwd), "backward_s": statistics.median(bwd),
            "forward_ps_per_element": statistics.median(fwd) / rotated * 1e12,
            "backward_ps_per_element": statistics.median(bwd) / rotated * 1e12}


def table_seconds(elements, xs, ys):
    """The profile's reading of a row (hardware/framework_costs.cpp eager_op_seconds): log-log
    between points, the first point's time below them, proportional beyond the last."""
    pts = sorted(zip(xs, ys))
    xs, ys = [a for a, _ in pts], [b for _, b in pts]
    if elements <= xs[0]:
        return ys[0]
    if elements >= xs[-1]:
        return ys[-1] * elements / xs[-1]
    for i in range(1, len(xs)):
        if elements <= xs[i]:
            w = (math.log(elements) - math.log(xs[i - 1])) / (math.log(xs[i]) - math.log(xs[i - 1]))
            return math.exp((1 - w) * math.log(ys[i - 1]) + w * math.log(ys[i]))


def forward_elements(p):
    """q and k as SDPA receives them (k repeated to the query heads when there are fewer)."""
    k_heads = p["heads"] if p["heads"] > p["kv_heads"] else p["kv_heads"]
    return p["tokens"] * p["head_dim"] * (p["heads"] + k_heads)


def backward_elements(p):
    """Rotated elements: q and k at their own head counts."""
    return p["tokens"] * p["head_dim"] * (p["heads"] + p["kv_heads"])


def build_table(out):
    """framework.elementwise rows from the measured points; the held-out shapes get the table's
    answer (and its error) beside their measurement."""
    ops = {}
    for precision in ("amp", "pure"):
        pts = [p for p in out["points"] if p["precision"] == precision]
        for pas, xfn in (("forward", forward_elements), ("backward", backward_elements)):
            name = f"compiled_rope_{precision}_{'fwd' if pas == 'forward' else 'bwd'}"
            xs, ys = [xfn(p) for p in pts], [p[f"{pas}_s"] for p in pts]
            row = [table_seconds(e, xs, ys) for e in ELEMENTS]
            ops[name] = {"width": "head width x heads",
                         "what": f"torch.compile rotary positions, {pas} ({precision}; angles recomputed per element, "
                                 "K/V repeated to the query heads), over "
                                 + ("tokens x head width x (query heads + K heads as SDPA takes them)"
                                    if pas == "forward" else "tokens x head width x (query + KV heads)"),
                         "seconds": row}
            for h in out["holdout"]:
                if h["precision"] == precision:
                    h[f"{pas}_table_s"] = table_seconds(xfn(h), ELEMENTS, row)
                    h[f"{pas}_error"] = h[f"{pas}_table_s"] / h[f"{pas}_s"] - 1
    out["elementwise"] = {"elements": ELEMENTS, "ops": ops}
    for h in out["holdout"]:
        print(f"holdout {h['precision']} T={h['tokens']} heads={h['heads']}/{h['kv_heads']} d={h['head_dim']}: "
              f"table vs measured fwd {h['forward_error']:+.1%}, bwd {h['backward_error']:+.1%}", flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--repeats", type=int, default=30)
    ap.add_argument("--quick", action="store_true", help="two small shapes (tests the script)")
    ap.add_argument("--table-from", default="", help="rebuild the table of an earlier run's points (no GPU)")
    args = ap.parse_args()
    if args.repeats < 3:
        sys.exit("--repeats must be at least 3")
    if args.table_from:
        out = json.load(open(args.table_from))
        if out.get("quick") or len(out.get("points", [])) != 2 * len(GRID):
            sys.exit(f"{args.table_from}: not a full run ({2 * len(GRID)} points needed)")
        build_table(out)
        with open(args.out, "w") as f:
            json.dump(out, f, indent=1)
            f.write("\n")
        return
    if torch is None:
        sys.exit("measuring needs PyTorch with a GPU")
    dev = torch.device("cuda")
    grid = GRID[:2] if args.quick else GRID
    holdout = [] if args.quick else HOLDOUT
    out = {"what": "torch.compile rotary positions (tables recomputed per element), GPU time per rotated element",
           "command": "python3 bench/pytorch/compiled_rope.py " + " ".join(sys.argv[1:]),
           "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
           "gpu": torch.cuda.get_device_name(0), "torch_version": torch.__version__, "quick": args.quick,
           "partial": "elementwise-only", "points": [], "holdout": []}

    def save():
        with open(args.out, "w") as f:
            json.dump(out, f, indent=1)
            f.write("\n")

    for precision in ("amp", "pure"):
        for kind, shapes in (("points", grid), ("holdout", holdout)):
            for shape in shapes:
                torch._dynamo.reset()
                r = measure(shape, precision, args.repeats, dev)
                out[kind].append(r)
                print(f"{kind:7s} {precision} T={r['tokens']:6d} heads={r['heads']:3d}/{r['kv_heads']} "
                      f"d={r['head_dim']} fwd {r['forward_s'] * 1e6:8.1f} us ({r['forward_ps_per_element']:.2f} ps/el)"
                      f" bwd {r['backward_s'] * 1e6:8.1f} us ({r['backward_ps_per_element']:.2f} ps/el)", flush=True)
                save()
    if args.quick:
        return
    build_table(out)
    save()


if __name__ == "__main__":
    main()
