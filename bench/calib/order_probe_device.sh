#!/usr/bin/env bash
# Run from a folder holding probe_common.sh (bench/calib/), infraplan-calibrate, llama_exact.json
# (bench/calib/llama_gemm_shapes.py --tokens 256,512,1024,2048,4096,8192) and
# bench/pytorch/gemm_layouts.py. One machine start: the exact token counts through PyTorch and through
# the calibrator in listed and shuffled order, alternated, then PyTorch once more in a shuffled order
# (docs/accuracy.md, "Does the calibrator's order decide the tail?").
source "$(dirname "$0")/probe_common.sh"
step torch_a; PYTHONUNBUFFERED=1 timeout 60 python3 gemm_layouts.py --shapes llama_exact.json --out "$OUT/torch_a.json" > /dev/null
step listed_a; timeout 60 ./infraplan-calibrate layouts --out "$OUT/listed_a.json" --shapes llama_exact.json --api cublas --no-grid --order listed 2>&1 | tail -1
step shuffled_a; timeout 60 ./infraplan-calibrate layouts --out "$OUT/shuffled_a.json" --shapes llama_exact.json --api cublas --no-grid --order shuffled 2>&1 | tail -1
step torch_b; PYTHONUNBUFFERED=1 timeout 60 python3 gemm_layouts.py --shapes llama_exact.json --out "$OUT/torch_b.json" > /dev/null
step listed_b; timeout 60 ./infraplan-calibrate layouts --out "$OUT/listed_b.json" --shapes llama_exact.json --api cublas --no-grid --order listed 2>&1 | tail -1
step torch_shuffled; PYTHONUNBUFFERED=1 timeout 60 python3 gemm_layouts.py --shapes llama_exact.json --out "$OUT/torch_shuffled.json" --order shuffled > /dev/null
probe_end
