#!/usr/bin/env bash
# End-to-end checks of capacity planning at scale: goodput and cost in simulate/plan train, cost in
# plan serve, uneven and zero-bubble pipeline schedules, HSDP, and their input errors.
# Run by ctest with INFRAPLAN set to the binary; from the repository root.
source "$(dirname "$0")/cli_test_lib.sh"

llama3=scenarios/train_llama3_405b_16k_h100.json
# Goodput and cost in simulate train (estimate and simulation), with the price override.
"$bin" simulate train --scenario "$llama3" --estimate --json >"$tmp/est.json"
json_check "$tmp/est.json" "d['goodput']['checkpoint_interval_s'] > 0 and 0 < d['goodput']['useful_fraction'] < 1"
json_check "$tmp/est.json" "d['goodput']['days_to_train_with_failures'] > d['goodput']['days_to_train']"
json_check "$tmp/est.json" "d['cost']['usd_total'] > 0 and d['cost']['usd_per_million_tokens'] > 0"
json_check "$tmp/est.json" "d['goodput']['train_tokens'] == 15.6e12 and d['training']['pp_layers'][0] == 7"
json_check "$tmp/est.json" "0.3 < d['mfu'] < 0.7"
"$bin" simulate train --scenario scenarios/train_llama2_70b_64xh100.json --json --price-per-gpu-hour 3 >"$tmp/sim.json"
json_check "$tmp/sim.json" "d['cost']['price_per_gpu_hour'] == 3 and d['cost']['price_source'] == '--price-per-gpu-hour'"
json_check "$tmp/sim.json" "abs(d['cost']['usd_total'] - 3 * d['goodput']['gpu_hours_with_failures']) < 1e-6 * d['cost']['usd_total']"
json_check "$tmp/sim.json" "d['goodput']['monte_carlo']['runs'] >= 10 and d['goodput']['monte_carlo']['seed'] == 1"
expect 0 "checkpoint interval (Young/Daly)" -- simulate train --scenario scenarios/train_llama2_70b_64xh100.json
# Same input, same bytes (the Monte Carlo is seeded).
"$bin" simulate train --scenario scenarios/train_llama2_70b_64xh100.json --json >"$tmp/sim2.json"
"$bin" simulate train --scenario scenarios/train_llama2_70b_64xh100.json --json >"$tmp/sim3.json"
if ! cmp -s "$tmp/sim2.json" "$tmp/sim3.json"; then echo "FAIL: simulate train output differs between runs"; fails=$((fails + 1)); fi

# Schedules: zero-bubble, DualPipe, uneven stages.
for sched in zb-h1 dualpipe; do
  printf '{"model": "llama2-7b", "cluster": "dgx-h100", "training": {"tp": 2, "pp": 4, "global_batch": 16, "pp_schedule": "%s"}}' "$sched" >"$tmp/$sched.json"
  expect 0 "\"pp_schedule\": \"$sched\"" -- simulate train --scenario "$tmp/$sched.json" --json
done
printf '{"model": "llama2-7b", "cluster": "dgx-h100", "training": {"tp": 2, "pp": 4, "global_batch": 16, "pp_layers": [6, 9, 9, 8]}}' >"$tmp/uneven.json"
expect 0 '"pp_layers": [' -- simulate train --scenario "$tmp/uneven.json" --json

# Planning: goodput and cost per candidate, HSDP searched, the interval recommended.
"$bin" plan train --model llama2-7b --cluster dgx-h100:4 --seq 4096 --global-batch 64 --top 3 --json --roofline >"$tmp/plan.json"
json_check "$tmp/plan.json" "d['goodput']['checkpoint_interval_s'] > 0 and d['cost']['usd_total'] > 0"
json_check "$tmp/plan.json" "all('goodput' in c and 'cost' in c and 'dp_shard' in c for c in d['candidates'])"
json_check "$tmp/plan.json" "any(a['dp_shard'] < a['dp'] for a in d['candidates'] + d['alternatives'])"
expect 0 "checkpoint every" -- plan train --model llama2-7b --cluster dgx-h100:4 --seq 4096 --global-batch 64 --top 2 --roofline --tokens 1e12 --price-per-gpu-hour 2
expect 0 "days w/ fail." -- plan train --model llama2-7b --cluster dgx-h100:4 --seq 4096 --global-batch 64 --top 2 --roofline
"$bin" plan serve --model llama3-8b --gpu h100-sxm5-80gb --gpus 2 --isl 200 --osl 50 --ttft-ms 2000 --tpot-ms 100 --tp 1 --no-disaggregation --probe-requests 40 --price-per-gpu-hour 2 --json --roofline >"$tmp/serve.json"
json_check "$tmp/serve.json" "d['cost']['usd_per_hour'] == 4 and d['cost']['usd_per_million_output_tokens'] > 0"
json_check "$tmp/serve.json" "abs(d['cost']['usd_per_million_output_tokens'] - 4 / (d['candidates'][0]['output_tokens_per_s'] * 3600 / 1e6)) < 1e-9 * d['cost']['usd_per_million_output_tokens']"

# Bad input: the field, the value and what would be valid; exit 2.
printf '{"model": "llama2-7b", "cluster": "dgx-h100", "training": {"tp": 2, "pp": 4, "global_batch": 16, "pp_layers": [8, 8, 8, 7]}}' >"$tmp/sum.json"
expect 2 "training.pp_layers=[8, 8, 8, 7] sums to 31 but llama2-7b has 32 layers" -- simulate train --scenario "$tmp/sum.json"
printf '{"model": "llama2-7b", "cluster": "dgx-h100", "training": {"tp": 2, "pp": 4, "global_batch": 6, "pp_schedule": "dualpipe"}}' >"$tmp/dp6.json"
expect 2 "needs an even number of micro-batches >= 2×pp=8" -- simulate train --scenario "$tmp/dp6.json"
printf '{"model": "llama2-7b", "cluster": "dgx-h100", "training": {"pp_schedule": "zero-bubble"}}' >"$tmp/zb.json"
expect 2 "zb-h1, dualpipe" -- simulate train --scenario "$tmp/zb.json"
printf '{"model": "llama2-7b", "cluster": {"preset": "dgx-h100", "reliability": {"gpu_mtbf_hours": -5}}, "training": {}}' >"$tmp/rel.json"
expect 2 "cluster.reliability.gpu_mtbf_hours=-5 is invalid: must be > 0" -- simulate train --scenario "$tmp/rel.json"
printf '{"model": "llama2-7b", "cluster": {"preset": "dgx-h100", "storage": {"checkpoint_write_GBs": 10}}, "training": {}}' >"$tmp/st.json"
expect 2 "checkpoint_write_GBps" -- simulate train --scenario "$tmp/st.json"
printf '{"model": "llama2-7b", "cluster": "dgx-h100:2", "training": {"tp": 8, "zero": 0, "dp_shard": 1}}' >"$tmp/hsdp.json"
expect 2 "training.dp_shard=1 < dp=2" -- simulate train --scenario "$tmp/hsdp.json"
expect 2 "--price-per-gpu-hour" -- simulate train --scenario scenarios/train_llama2_70b_64xh100.json --price-per-gpu-hour -1

if [ "$fails" -ne 0 ]; then echo "$fails capacity CLI check(s) failed"; exit 1; fi
echo "all capacity CLI checks passed"
