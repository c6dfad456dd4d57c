#!/usr/bin/env bash
# Run from a folder holding probe_common.sh (bench/calib/), infraplan-calibrate, llama_rows.json and
# llama_exact.json (bench/calib/llama_gemm_shapes.py) and bench/pytorch/gemm_layouts.py. One machine
# start: the calibrator's workload rows held 40 ms per shape (listed order, the clock read on the GPU
# between launches of the shape; layouts_held.json), the LLaMA-shape GEMMs through PyTorch held 40 ms
# per shape, then the rows as the profiles' rows are timed (shuffled, ~1.5 ms per shape, seed 7;
# layouts.json) and the PyTorch sweep at ~2 ms per shape (docs/accuracy.md, "Rows timed held").
source "$(dirname "$0")/probe_common.sh"
step rows_held; timeout 280 ./infraplan-calibrate layouts --out "$OUT/layouts_held.json" --shapes llama_rows.json --api cublas --no-grid --order listed --hold-ms 40 > "$OUT/rows_held_log.txt" 2>&1; echo "rows held rc=$?"
step torch_held; PYTHONUNBUFFERED=1 timeout 130 python3 gemm_layouts.py --shapes llama_exact.json --out "$OUT/torch_held.json" --hold-ms 40 > /dev/null; echo "held rc=$?"
step rows; timeout 120 ./infraplan-calibrate layouts --out "$OUT/layouts.json" --shapes llama_rows.json --api cublas --seed 7 > "$OUT/rows_log.txt" 2>&1; echo "rows rc=$?"
step torch_short; PYTHONUNBUFFERED=1 timeout 90 python3 gemm_layouts.py --shapes llama_exact.json --out "$OUT/torch_short.json" > /dev/null; echo "short rc=$?"
probe_end
