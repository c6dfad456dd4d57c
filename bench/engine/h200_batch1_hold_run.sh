#!/usr/bin/env bash
# Batch-1 decode held back to back for 2 s and for 20 s: step time against SM clock, memory clock
# and memory temperature (is the closed-loop slowdown at 1,980 MHz a memory-side effect?).
set -u
cd "$(dirname "$0")"
[ -d lib ] || tar xzf lib.tgz
export LD_LIBRARY_PATH=$PWD/lib:${LD_LIBRARY_PATH:-}
res=$(mktemp -d)
nvidia-smi --query-gpu=name,serial,driver_version,clocks.sm,clocks.mem,temperature.gpu,temperature.memory,power.draw --format=csv > $res/device.txt
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,temperature.gpu,temperature.memory,power.draw,clocks_event_reasons.active --format=csv -lms 100 > $res/smi.csv &
smi=$!
for h in 2 20; do
  echo "=== hold $h $(date -u +%H:%M:%S.%N)" >> $res/run.log
  timeout 100 bin/infraplan-bench step --model llama3-8b --batches 1 --context 512 --prefill 0 --reps 10 --heuristic-only \
    --hold $h --json-out $res/hold${h}_llama3-8b_b1.json >> $res/run.log 2>&1; echo "rc=$?" >> $res/run.log
done
echo "=== done $(date -u +%H:%M:%S.%N)" >> $res/run.log
kill $smi
tar czf $OUT/results.tgz -C $res .
grep -A4 "decode held" $res/run.log; cat $res/device.txt
awk -F, 'NR>1 && NR%10==0 {print $1,$2,$3,$4,$5,$6,$7}' $res/smi.csv | tail -40
