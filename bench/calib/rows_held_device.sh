#!/usr/bin/env bash
# Run from a folder holding probe_common.sh (bench/calib/), infraplan-calibrate, llama_rows.json and
# llama_exact.json (bench/calib/llama_gemm_shapes.py) and bench/pytorch/gemm_layouts.py. One machine
# start: the calibrator's workload rows timed as the H200 profile's were (layouts.json, shuffled
# order, cuBLAS), then the LLaMA-shape GEMMs through PyTorch at ~2 ms per shape and held 60 ms per
# shape, listed order (docs/accuracy.md, "The held answer with the start's own rows").
source "$(dirname "$0")/probe_common.sh"
step rows; timeout 110 ./infraplan-calibrate layouts --out "$OUT/layouts.json" --shapes llama_rows.json --api cublas > "$OUT/rows_log.txt" 2>&1; echo "rows rc=$?"
step torch_short; PYTHONUNBUFFERED=1 timeout 90 python3 gemm_layouts.py --shapes llama_exact.json --out "$OUT/torch_short.json" --spread > /dev/null
step torch_held; PYTHONUNBUFFERED=1 timeout 240 python3 gemm_layouts.py --shapes llama_exact.json --out "$OUT/torch_held.json" --hold-ms 60 > /dev/null
probe_end
