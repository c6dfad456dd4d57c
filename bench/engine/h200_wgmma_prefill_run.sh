#!/usr/bin/env bash
# The engine with the wgmma paged prefill (its default on the H200): GPU tests, the attention
# kernels as a step launches them (for the profile), the 8,192-token prefill, and every bench
# scenario (reference LLaMA-2-7B / LLaMA-3-8B runs, LLaMA-2-13B, the held-out shapes).
set -u
cd "$(dirname "$0")"
[ -d lib ] || tar xzf lib.tgz
export LD_LIBRARY_PATH=$PWD/lib:${LD_LIBRARY_PATH:-}
res=$(mktemp -d)
nvidia-smi --query-gpu=name,serial,driver_version,clocks.sm,temperature.gpu,power.draw,power.limit --format=csv > $res/device.txt
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw --format=csv -lms 100 > $res/smi.csv &
smi=$!
echo "=== engine_gpu_tests $(date -u +%H:%M:%S)" >> $res/run.log
timeout 200 bin/engine_gpu_tests > $res/engine_gpu_tests.txt 2>&1; echo "rc=$?" >> $res/run.log
for m in llama2-7b llama3-8b; do
  echo "=== attention $m $(date -u +%H:%M:%S)" >> $res/run.log
  timeout 120 bin/infraplan-bench attention --model $m --json-out $res/attention_$m.json > $res/attention_$m.txt 2>&1; echo "rc=$?" >> $res/run.log
  for k in wgmma mma; do
    echo "=== step prefill 8192 $m $k $(date -u +%H:%M:%S)" >> $res/run.log
    timeout 120 bin/infraplan-bench step --model $m --batches 1 --prefill 8192 --reps 10 --kernels --heuristic-only \
      --prefill-kernel $k --json-out $res/step_${m}_p8192_$k.json > $res/step_${m}_p8192_$k.txt 2>&1; echo "rc=$?" >> $res/run.log
  done
done
S=${SCENARIOS:-../../scenarios}
for s in $S/bench_llama2_7b_h200_*.json $S/bench_llama3_8b_h200_*.json $S/bench_llama2_13b_h200_*.json \
         $S/bench_phi3_medium_shape_h200_*.json $S/bench_codellama_34b_shape_h200_*.json; do
  n=$(basename $s .json)
  echo "=== serve $n $(date -u +%H:%M:%S)" >> $res/run.log
  timeout 100 bin/infraplan-bench serve --scenario $s --json-out $res/$n.json --steps $res/steps_$n.csv >> $res/run.log 2>&1
  echo "rc=$?" >> $res/run.log
done
echo "=== done $(date -u +%H:%M:%S)" >> $res/run.log
kill $smi
tar czf $OUT/results.tgz -C $res .
grep -E "^===|rc=[1-9]" $res/run.log | tail -50; tail -3 $res/engine_gpu_tests.txt
grep -h "^prefill 8192" $res/step_*.txt
