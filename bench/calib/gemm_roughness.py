#!/usr/bin/env python3
"""How rough is a profile's measured GEMM surface, and does a denser grid help?

  python3 bench/calib/gemm_roughness.py hardware/profiles/h200-sxm-141gb.json

1. Leave-one-out at double spacing: every grid cell with an odd n and k index predicted from its
   four (n, k) neighbours two steps apart (trilinear in log time, cells referred to the median
   cell clock with the exponents given by --beta), cells >= 10 us.
2. The held-out transformer-shaped GEMMs (n, k multiples of 64) predicted by plain log-trilinear
   interpolation of the full grid, of the grid with every other n and k dropped (octave spacing)
   and with every other m, n and k dropped.

Plain interpolation only (no tile quanta, off-grid factor or misalignment ratios): it measures
the data, not the cost model.
"""
import argparse
import bisect
import json
import math

FORMATS = ["bf16", "fp16", "tf32", "fp8", "int8"]


def pct(errs, q):
    e = sorted(errs)
    return e[min(int(round(q * (len(e) - 1))), len(e) - 1)]


def summary(errs):
    if not errs:
        return "n=0"
    return "n=%4d median %5.1f%%  p90 %5.1f%%  max %5.1f%%" % (
        len(errs), 100 * pct(errs, 0.5), 100 * pct(errs, 0.9), 100 * max(errs))


def locate(axis, x):
    x = min(max(x, axis[0]), axis[-1])
    i1 = min(max(bisect.bisect_right(axis, x), 1), len(axis) - 1)
    i0 = i1 - 1
    w = (math.log(x) - math.log(axis[i0])) / (math.log(axis[i1]) - math.log(axis[i0]))
    return i0, i1, min(max(w, 0.0), 1.0)


class Grid:
    def __init__(self, table, ref, beta, keep_m=None, keep_n=None, keep_k=None):
        im = [i for i in range(len(table["m"])) if keep_m is None or keep_m(i)]
        jn = [j for j in range(len(table["n"])) if keep_n is None or keep_n(j)]
        lk = [l for l in range(len(table["k"])) if keep_k is None or keep_k(l)]
        self.m = [table["m"][i] for i in im]
        self.n = [table["n"][j] for j in jn]
        self.k = [table["k"][l] for l in lk]
        before, after = table.get("clock_mhz_before"), table.get("clock_mhz_after")
        self.t = {}
        for a, i in enumerate(im):
            for b, j in enumerate(jn):
                for c, l in enumerate(lk):
                    s = table["seconds"][i][j][l]
                    if s is None:
                        continue
                    if before and after and before[i][j][l] and after[i][j][l]:
                        s *= (0.5 * (before[i][j][l] + after[i][j][l]) / ref) ** beta
                    self.t[a, b, c] = s

    def predict(self, m, n, k):
        pm, pn, pk = locate(self.m, m), locate(self.n, n), locate(self.k, k)
        acc = 0.0
        for a in (0, 1):
            for b in (0, 1):
                for c in (0, 1):
                    w = (pm[2] if a else 1 - pm[2]) * (pn[2] if b else 1 - pn[2]) * (pk[2] if c else 1 - pk[2])
                    if w <= 0:
                        continue
                    v = self.t.get((pm[a], pn[b], pk[c]))
                    if v is None:
                        return None
                    acc += w * math.log(v)
        return math.exp(acc)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("profile")
    ap.add_argument("--beta", default="bf16=0.5,fp16=0.5,tf32=0.5,fp8=0.75,int8=0.75",
                    help="clock exponent per format (the cost model's fitted values)")
    args = ap.parse_args()
    beta = {kv.split("=")[0]: float(kv.split("=")[1]) for kv in args.beta.split(",")}
    p = json.load(open(args.profile))
    tables = p["tables"]["gemm"]
    clocks = []
    for t in tables.values():
        if "clock_mhz_before" in t:
            for pl_b, pl_a in zip(t["clock_mhz_before"], t["clock_mhz_after"]):
                for r_b, r_a in zip(pl_b, pl_a):
                    clocks += [0.5 * (x + y) for x, y in zip(r_b, r_a) if x and y]
    clocks.sort()
    ref = clocks[len(clocks) // 2] if clocks else 1.0
    print("profile %s (%s), reference clock %.0f MHz" % (args.profile, p.get("date", "?"), ref))

    print("\n1. leave-one-out at double spacing (n, k), cells >= 10 us")
    every = []
    for f in FORMATS:
        if f not in tables:
            continue
        g = Grid(tables[f], ref, beta.get(f, 0.0))
        errs = []
        for i in range(len(g.m)):
            for j in range(1, len(g.n) - 1, 2):
                for l in range(1, len(g.k) - 1, 2):
                    t = g.t.get((i, j, l))
                    if t is None or t < 10e-6:
                        continue
                    wn = math.log(g.n[j] / g.n[j - 1]) / math.log(g.n[j + 1] / g.n[j - 1])
                    wk = math.log(g.k[l] / g.k[l - 1]) / math.log(g.k[l + 1] / g.k[l - 1])
                    corners = [((j - 1, l - 1), (1 - wn) * (1 - wk)), ((j - 1, l + 1), (1 - wn) * wk),
                               ((j + 1, l - 1), wn * (1 - wk)), ((j + 1, l + 1), wn * wk)]
                    if any(g.t.get((i, b, c)) is None for (b, c), _ in corners):
                        continue
                    pred = math.exp(sum(w * math.log(g.t[i, b, c]) for (b, c), w in corners))
                    errs.append(abs(pred - t) / t)
        print("  %-5s %s" % (f, summary(errs)))
        every += errs
    print("  all   %s" % summary(every))

    print("\n2. held-out transformer-shaped GEMMs (>= 10 us), plain interpolation, by grid density")
    held = p.get("holdout", {}).get("gemm", [])
    for name, km, kn in [("half-octave grid (as measured)", None, None),
                         ("n, k at octaves", None, lambda x: x % 2 == 0),
                         ("m, n, k at octaves", lambda x: x % 2 == 0, lambda x: x % 2 == 0)]:
        errs = []
        for f in FORMATS:
            if f not in tables:
                continue
            g = Grid(tables[f], ref, beta.get(f, 0.0), km, kn, kn)
            for h in held:
                if h["dtype"] != f or h["n"] % 64 or h["k"] % 64:
                    continue
                reps = h.get("repeats") or [h["seconds"]]
                clk = h.get("clock_mhz") or []
                v = sorted(r * ((0.5 * (c[0] + c[1]) / ref) ** beta.get(f, 0.0) if c else 1.0)
                           for r, c in zip(reps, clk + [None] * (len(reps) - len(clk))))
                t = v[len(v) // 2]
                if t < 10e-6 or not (g.m[0] <= h["m"] <= g.m[-1] and g.n[0] <= h["n"] <= g.n[-1]
                                     and g.k[0] <= h["k"] <= g.k[-1]):
                    continue
                pred = g.predict(h["m"], h["n"], h["k"])
                if pred is not None:
                    errs.append(abs(pred - t) / t)
        print("  %-32s %s" % (name, summary(errs)))


if __name__ == "__main__":
    main()
