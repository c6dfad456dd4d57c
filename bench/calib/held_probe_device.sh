#!/usr/bin/env bash
# Run from a folder holding probe_common.sh (bench/calib/), llama_exact.json
# (bench/calib/llama_gemm_shapes.py --tokens 256,512,1024,2048,4096,8192) and
# bench/pytorch/gemm_layouts.py. One machine start: the LLaMA-shape GEMMs through PyTorch with the
# usual ~2 ms per shape, then each shape held 60 ms (--hold-ms 60, the second half kept) in the listed
# and in a shuffled order, then ~2 ms again (docs/accuracy.md, "A GEMM benchmark that holds each
# shape").
source "$(dirname "$0")/probe_common.sh"
step torch_short; PYTHONUNBUFFERED=1 timeout 90 python3 gemm_layouts.py --shapes llama_exact.json --out "$OUT/torch_short.json" > /dev/null
step torch_held; PYTHONUNBUFFERED=1 timeout 240 python3 gemm_layouts.py --shapes llama_exact.json --out "$OUT/torch_held.json" --hold-ms 60 > /dev/null
step torch_held_shuffled; PYTHONUNBUFFERED=1 timeout 240 python3 gemm_layouts.py --shapes llama_exact.json --out "$OUT/torch_held_shuffled.json" --hold-ms 60 --order shuffled > /dev/null
step torch_short_b; PYTHONUNBUFFERED=1 timeout 90 python3 gemm_layouts.py --shapes llama_exact.json --out "$OUT/torch_short_b.json" > /dev/null
probe_end
