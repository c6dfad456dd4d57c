#!/usr/bin/env bash
# One machine start's GEMM-layout measurements (docs/calibration.md, "GEMM layouts"), run from a
# folder holding infraplan-calibrate, the two shapes files of bench/calib/llama_gemm_shapes.py
# (llama_rows.json: rows over 256 … 8192 tokens; llama_exact.json: 256, 512, … 8192 tokens) and
# bench/pytorch/gemm_layouts.py. Writes into $OUT:
#   layouts.json        infraplan-calibrate layouts: checks, bf16 sub-grid (tn/nn/nt), rows via cublas
#                       (LEGACY=1: also timed with the pre-2026-12-01 harness, interleaved)
#   layouts_lt.json     the exact token counts through cuBLASLt (first heuristic, 32 MiB), no sub-grid
#   torch.json          the exact token counts through PyTorch (+ kernel names with KERNELS=1, + spread points)
#   smi.csv             nvidia-smi clocks / power every 200 ms during the run
#   log.txt             everything printed
set -u
OUT=${OUT:-out}
mkdir -p "$OUT"
exec > >(tee "$OUT/log.txt") 2>&1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.sm,power.limit,temperature.gpu --format=csv
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active \
  --format=csv -lms 200 > "$OUT/smi.csv" &
SMI=$!
t0=$(date +%s)
timeout 75 ./infraplan-calibrate layouts --out "$OUT/layouts.json" --shapes llama_rows.json --api cublas ${LEGACY:+--legacy-too}
echo "[run] layouts rc=$? at $(( $(date +%s) - t0 )) s"
PYTHONUNBUFFERED=1 timeout 50 python3 gemm_layouts.py --shapes llama_exact.json --out "$OUT/torch.json" \
  --spread ${KERNELS:+--kernels}
echo "[run] torch rc=$? at $(( $(date +%s) - t0 )) s"
timeout 20 ./infraplan-calibrate layouts --out "$OUT/layouts_lt.json" --shapes llama_exact.json --api cublaslt --no-grid
echo "[run] layouts_lt rc=$? at $(( $(date +%s) - t0 )) s"
kill "$SMI" 2>/dev/null
wait "$SMI" 2>/dev/null
nvidia-smi --query-gpu=clocks.sm,power.draw,temperature.gpu --format=csv
