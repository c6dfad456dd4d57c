#!/usr/bin/env bash
# The mini-engine's fp8 KV cache checks and measurements on one GPU (docs/serving.md, "fp8 KV
# cache"): every GPU test; `infraplan-bench step` for LLaMA-2-7B with bf16 and fp8 KV, each with bf16
# and fp8 weights (decode batches 1, 8, 64, 256 at context 1024, one 8,192-token prefill chunk; a
# batch whose KV does not fit is left out and reported); `infraplan validate serve` of the fp8-KV
# scenarios and their bf16-KV originals; a per-kernel breakdown of a LLaMA-2-7B decode step at batch
# 64 with bf16 and fp8 KV. Run from a folder holding bin/ (infraplan, infraplan-bench,
# engine_gpu_tests; or bin.tgz), optionally lib/ (shared libraries the GPU machine lacks) and
# scenarios/. Results go to $OUT (default ./out): run.log, gpu_tests.txt and results.tgz (every JSON
# report, updated after each stage). fp8_run_common.sh (next to this script) does the set-up.
GPU_TESTS_TIMEOUT=${GPU_TESTS_TIMEOUT:-240}
source "$(dirname "$0")/fp8_run_common.sh"
grep -E "^\[ +(OK|FAILED|PASSED|SKIPPED) |^\[(engine|fp8)|Failure" "$OUT/gpu_tests.txt" | tee -a "$log"
for w in bf16 fp8; do
  for kv in fp8 bf16; do
    stage "step llama2-7b weights $w kv $kv"
    timeout 150 bin/infraplan-bench step --model llama2-7b --weights "$w" --kv-dtype "$kv" \
      --batches ${BATCHES:-1,8,64,256} --context 1024 --prefill 8192 \
      --json-out "$res/step_llama2-7b_w${w}_kv$kv.json" 2>&1 | tee -a "$log"
  done
done
for s in ${SCENARIOS:-bench_llama2_7b_h200_single_fp8kv bench_llama2_7b_h200_single bench_llama2_7b_h200_throughput_fp8kv bench_llama2_7b_h200_throughput bench_llama3_8b_h200_throughput_fp8kv bench_llama3_8b_h200_throughput_fp8}; do
  stage "validate serve $s"
  timeout 120 bin/infraplan validate serve --scenario "scenarios/$s.json" --out "$res/validate_$s.json" 2>&1 | tee -a "$log"
done
for kv in fp8 bf16; do
  stage "kernels llama2-7b kv $kv"
  timeout 90 bin/infraplan-bench step --model llama2-7b --kv-dtype "$kv" --batches 64 --context 1024 --prefill 0 \
    --reps 10 --kernels --json-out "$res/kernels_llama2-7b_kv$kv.json" > "$res/kernels_llama2-7b_kv$kv.txt" 2>&1
  echo "rc $?" | tee -a "$log"
done
fp8_run_end
