#!/usr/bin/env bash
# The mini-engine's GPU checks and measurements in one run (docs/serving.md, "Accuracy"): the GPU
# tests, step timings of LLaMA-2-7B- and LLaMA-3-8B-shaped models, and bench serve on every
# scenarios/bench_*.json. Run from a folder holding bin/ (infraplan-bench, engine_gpu_tests, infraplan),
# lib/ (shared libraries the binaries need where the GPU machine lacks them) and scenarios/.
# Results go to $OUT (default ./out): a log and one tarball of JSON/CSV files. SKIP_TESTS=1,
# MODELS=" " (no step timings) and SCENARIOS="a.json b.json" narrow the run.
set -u
cd "$(dirname "$0")"
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
res=$(mktemp -d)
[ -f lib.tgz ] && [ ! -d lib ] && tar xzf lib.tgz
export LD_LIBRARY_PATH=$PWD/lib:${LD_LIBRARY_PATH:-}
log="$OUT/run.log"
stage() { echo "=== $* ($(date -u +%H:%M:%S))" | tee -a "$log"; }

stage "device"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw,memory.used \
  --format=csv 2>&1 | tee -a "$log"
if [ -z "${SKIP_TESTS:-}" ]; then
  stage "GPU tests"
  timeout 240 bin/engine_gpu_tests 2>&1 | tee "$res/gpu_tests.txt" | grep -E "^\[|engine vs reference|Failure|error" | tee -a "$log"
fi
for m in ${MODELS:-llama2-7b llama3-8b}; do
  stage "step $m"
  timeout 150 bin/infraplan-bench step --model "$m" --batches ${BATCHES:-1,8,64,128} --context 1024 \
    --prefill 8192 --json-out "$res/step_$m.json" 2>&1 | tee -a "$log"
done
# With bin/infraplan present every scenario goes through `infraplan validate serve` (the prediction
# and infraplan-bench serve on the same requests, --out keeps both and the comparison); without it,
# infraplan-bench serve alone.
for s in ${SCENARIOS:-scenarios/bench_*.json}; do
  n=$(basename "$s" .json)
  stage "serve $n"
  if [ -x bin/infraplan ]; then
    timeout 150 bin/infraplan validate serve --scenario "$s" --out "$res/validate_$n.json" 2>&1 | tee -a "$log"
  else
    timeout 150 bin/infraplan-bench serve --scenario "$s" --json-out "$res/serve_$n.json" \
      --requests "$res/serve_$n.csv" 2>&1 | tee -a "$log"
  fi
done
tar czf "$OUT/results.tgz" -C "$res" .
stage "done"
