#!/usr/bin/env bash
# Is a decode step slower under sustained load? bench step at 30 and at 1500 repetitions, with
# the SM/memory clocks, power and temperature sampled every 100 ms, then one serving scenario.
set -u
cd "$(dirname "$0")"
OUT=${OUT:-$PWD/out}; mkdir -p "$OUT"
[ -d lib ] || tar xzf lib.tgz; export LD_LIBRARY_PATH=$PWD/lib:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active --format=csv,noheader -lms 100 > "$OUT/smi.csv" 2>&1 &
smi=$!
for reps in 30 1500 30; do
  echo "=== step reps $reps $(date -u +%T.%N)"
  timeout 120 bin/infraplan-bench step --model llama3-8b --batches 1 --context 1024 --prefill 0 --reps $reps --json-out "$OUT/step_$reps.json" 2>&1 | tail -3
done
echo "=== serve single $(date -u +%T.%N)"
timeout 120 bin/infraplan-bench serve --scenario scenarios/bench_llama3_8b_h200_single.json --steps "$OUT/single_steps.csv" --json-out "$OUT/single.json" 2>&1 | tail -3
echo "=== end $(date -u +%T.%N)"
kill $smi
