#!/usr/bin/env bash
# The mini-engine's fp8 (W8A8) checks and measurements on one GPU (docs/serving.md, "fp8 weights
# (W8A8)"): the GPU tests; `infraplan-bench step` for LLaMA-2-7B and LLaMA-3-8B shapes with fp8 and
# bf16 weights (decode batches 1, 8, 32, 64, 128 at context 1024, one 8,192-token prefill chunk);
# `infraplan validate serve` of the fp8 scenarios and their bf16 originals; a per-kernel breakdown
# of LLaMA-2-7B decode steps at batch 1 and 64 in both formats. Run from a folder holding bin/
# (infraplan, infraplan-bench, engine_gpu_tests; optionally engine_gpu_tests_base, the GPU tests of
# an earlier build, whose bf16 logits digests the new build must reproduce), lib/ (shared libraries
# the GPU machine lacks; or bin.tgz / lib.tgz) and scenarios/. Results go to $OUT (default ./out):
# run.log, gpu_tests.txt and results.tgz (every JSON report, updated after each stage).
GPU_TESTS_TIMEOUT=${GPU_TESTS_TIMEOUT:-150}
source "$(dirname "$0")/fp8_run_common.sh"
grep -E "^\[ +(OK|FAILED|PASSED|SKIPPED) |engine.*vs.*reference|Failure" "$OUT/gpu_tests.txt" | tee -a "$log"
if [ -x bin/engine_gpu_tests_base ]; then
  stage "GPU tests of the earlier build (bf16 logits digests)"
  timeout 60 bin/engine_gpu_tests_base --gtest_filter='*MatchesReference*' > "$res/gpu_tests_base.txt" 2>&1
  echo "rc $?" | tee -a "$log"
  grep "engine vs reference" "$res/gpu_tests_base.txt" | tee -a "$log"
fi
for m in llama2-7b llama3-8b; do
  for w in fp8 bf16; do
    stage "step $m $w"
    timeout 120 bin/infraplan-bench step --model "$m" --weights "$w" --batches ${BATCHES:-1,8,32,64,128} \
      --context 1024 --prefill 8192 --json-out "$res/step_${m}_$w.json" 2>&1 | tee -a "$log"
  done
done
for s in ${SCENARIOS:-bench_llama2_7b_h200_single_fp8 bench_llama3_8b_h200_throughput_fp8 bench_llama2_7b_h200_single bench_llama3_8b_h200_throughput}; do
  stage "validate serve $s"
  timeout 120 bin/infraplan validate serve --scenario "scenarios/$s.json" --out "$res/validate_$s.json" 2>&1 | tee -a "$log"
done
for w in fp8 bf16; do
  stage "kernels llama2-7b $w"
  timeout 90 bin/infraplan-bench step --model llama2-7b --weights "$w" --batches 1,64 --context 1024 --prefill 0 \
    --reps 10 --kernels --json-out "$res/kernels_llama2-7b_$w.json" > "$res/kernels_llama2-7b_$w.txt" 2>&1
  echo "rc $?" | tee -a "$log"
done
fp8_run_end
