#!/usr/bin/env python3
"""The GEMMs of LLaMA-architecture linear layers in the three layouts of a training step, as a shapes
file for `infraplan-calibrate layouts --shapes` / `--shapes` (rows over the token axis) and for
bench/pytorch/gemm_layouts.py (the same shapes through PyTorch).

For a linear layer with `out` output and `inn` input features over T tokens (row-major, PyTorch):
  tn  forward          Y  = X·Wᵀ        m = T,   n = out, k = inn
  nn  input gradient   dX = dY·W        m = T,   n = inn, k = out
  nt  weight gradient  dW = dYᵀ·X       m = out, n = inn, k = T
Models (Hugging Face configurations): LLaMA-3 8B and 70B, Qwen2.5-7B, Mistral-7B; tensor
parallelism 1, 2, 4, 8 (column-parallel q, k, v, fused qkv, gate, up, fused gate-up and the LM head
split their outputs, row-parallel o and down their inputs).

    python3 bench/calib/llama_gemm_shapes.py --out shapes.json [--tokens 256,512,...]
"""
import argparse
import json

MODELS = {  # hidden, kv heads × head_dim, ffn hidden, vocabulary
    "llama3-8b": (4096, 8 * 128, 14336, 128256),
    "llama3-70b": (8192, 8 * 128, 28672, 128256),
    "qwen2.5-7b": (3584, 4 * 128, 18944, 152064),
    "mistral-7b": (4096, 8 * 128, 14336, 32000),
}
TPS = (1, 2, 4, 8)
# Token points of the rows: the calibration grid's m values from 256 to 8192 (half octaves).
ROW_TOKENS = (256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192)
HEAD_TOKENS = (256, 512, 1024, 2048, 4096, 8192)


def linears(h, kv, ffn, vocab, tp):
    """(name, out, in) of one layer's linears and the LM head at tensor parallelism tp."""
    return [("q", h // tp, h), ("k", kv // tp, h), ("qkv", (h + 2 * kv) // tp, h), ("o", h, h // tp),
            ("up", ffn // tp, h), ("gate_up", 2 * ffn // tp, h), ("down", h, ffn // tp),
            ("lm_head", vocab // tp, h)]


def gemm(layout, tokens, out, inn):
    if layout == "tn":
        return tokens, out, inn
    if layout == "nn":
        return tokens, inn, out
    return out, inn, tokens


def all_linears():
    """{(out, in): [(model, tp, name), ...]} over every model and tp."""
    seen = {}
    for model, (h, kv, ffn, vocab) in MODELS.items():
        for tp in TPS:
            for name, out, inn in linears(h, kv, ffn, vocab, tp):
                seen.setdefault((out, inn), []).append((model, tp, name))
    return seen


def shapes(tokens=None):
    rows = []
    for (out, inn), users in sorted(all_linears().items()):
        head = all(u[2] == "lm_head" for u in users)
        pts = tokens or (HEAD_TOKENS if head else ROW_TOKENS)
        for layout in ("tn", "nn", "nt"):
            for t in pts:
                m, n, k = gemm(layout, t, out, inn)
                rows.append({"dtype": "bf16", "layout": layout, "m": m, "n": n, "k": k, "tokens": t,
                             "linear": {"out": out, "in": inn}, "used_by": [f"{a} tp{b} {c}" for a, b, c in users]})
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--tokens", help="comma-separated token counts (default: the row points)")
    a = ap.parse_args()
    toks = tuple(int(x) for x in a.tokens.split(",")) if a.tokens else None
    rows = shapes(toks)
    with open(a.out, "w") as f:
        json.dump({"what": "bf16 GEMMs of LLaMA-architecture linears in the tn / nn / nt layouts "
                           "(bench/calib/llama_gemm_shapes.py)", "gemm_shapes": rows}, f, indent=1)
        f.write("\n")
    print(f"{len(rows)} shapes written to {a.out}")


if __name__ == "__main__":
    main()
