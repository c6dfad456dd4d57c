#!/usr/bin/env bash
# End-to-end checks of the infraplan CLI: outputs, exit codes and error messages for bad input.
# Run by ctest with INFRAPLAN set to the binary; from the repository root.
source "$(dirname "$0")/cli_test_lib.sh"

expect 0 "llama2-7b" -- models
expect 0 '"total": 6738415616' -- models show llama2-7b --json
expect 0 "h200-sxm-141gb" -- hardware
expect 0 "bisection 1600 GB/s" -- hardware show dgx-h100:8
expect 0 '"peak_flops"' -- hardware show b200-sxm-180gb --json
expect 1 "does not fit by" -- memory train --scenario scenarios/memory_llama2_7b_one_a100.json
expect 0 "fits (" -- memory train --scenario scenarios/memory_llama2_7b_zero3_dgx_a100.json
expect 0 '"fits": true' -- memory train --scenario scenarios/memory_llama3_70b_dgx_h100x8.json --json
expect 0 '"name": "kv_cache"' -- memory serve --scenario scenarios/memory_llama2_70b_2xa100.json --batch 16 --context 4096 --json
# Without flags memory serve sizes the KV pool for the scenario's own workload, as simulate serve runs it.
expect 0 "the pool holds 203 sequences of the mean length" -- memory serve --scenario scenarios/serve_goodput_slo.json
expect 0 '"kv_capacity_blocks": 28556' -- memory serve --scenario scenarios/serve_goodput_slo.json --json
expect 0 '"sizing": "workload"' -- memory serve --scenario scenarios/serve_goodput_slo.json --json
expect 1 "does not fit by" -- memory serve --scenario scenarios/serve_goodput_slo.json --batch 256 --context 8192
cat > "$tmp/long.json" <<'EOF2'
{"model": "llama3-70b", "cluster": {"preset": "dgx-h100", "nodes": 1}, "serving": {"tp": 2},
 "workload": {"requests": 3, "prompt_tokens": 60000, "output_tokens": 100}}
EOF2
expect 1 "does not fit: the longest request (60100 tokens) exceeds the KV pool" -- memory serve --scenario "$tmp/long.json"
expect 2 "request 0 needs 60100 tokens of KV but a replica instance can admit 26912 tokens" -- simulate serve --scenario "$tmp/long.json"
# Engine presets, admission and closed-loop workloads from the CLI.
cat > "$tmp/closed.json" <<'EOF2'
{"model": "llama2-7b", "cluster": "dgx-h200", "serving": {"engine": "vllm", "admission": "reserve"},
 "workload": {"requests": 20, "arrival": {"type": "closed", "concurrency": 4}, "prompt_tokens": 128, "output_tokens": 32}}
EOF2
expect 0 '"concurrency": 4' -- simulate serve --scenario "$tmp/closed.json" --json
expect 0 '"admission": "reserve"' -- simulate serve --scenario "$tmp/closed.json" --json
# A GPU whose profile is derived from the H200's says so, with what the published rows found; the
# measured H200 does not.
sed 's/"dgx-h200"/"dgx-h100"/' "$tmp/closed.json" > "$tmp/closed_h100.json"
expect 0 'read latencies as lower bounds' -- simulate serve --scenario "$tmp/closed_h100.json"
expect 0 '"warnings": [' -- simulate serve --scenario "$tmp/closed_h100.json" --json
expect 0 'the profile is derived from the measured' -- simulate train --scenario scenarios/train_llama2_70b_64xh100.json --estimate
expect 0 'report written' -- report --scenario "$tmp/closed_h100.json" --out "$tmp/closed_h100.html"
if ! grep -q 'the profile is derived from the measured' "$tmp/closed_h100.html"; then
  echo "FAIL: the serving report of a derived profile lacks its caveat"; fails=$((fails + 1)); fi
expect 0 'the profile is derived from the measured' -- plan serve --model llama3-8b --gpu h100-sxm5-80gb --gpus 1 --isl 100 --osl 10 --ttft-ms 1000 --tpot-ms 50
if "$bin" simulate serve --scenario "$tmp/closed.json" --json | grep -q '"warnings"'; then
  echo "FAIL: a serving run on the measured H200 profile carries a derived-profile warning"; fails=$((fails + 1)); fi
# The validated error of the model: an 80% interval next to the point prediction where the profile
# records one (H200: whole training steps, GEMMs at the reference clock), none at another clock.
expect 0 '"iteration_time_interval_s"' -- simulate train --scenario scenarios/train_llama3_8b_1xh200_pytorch.json --json
expect 0 'iteration_time_interval_s (80%)' -- simulate train --scenario scenarios/train_llama3_8b_1xh200_pytorch.json
expect 0 '"seconds_interval"' -- cost --gpu h200-sxm-141gb --op gemm --m 4096 --n 4096 --k 4096 --layout nt --json
expect 0 '"tpot_interval_ms"' -- simulate serve --scenario scenarios/bench_llama3_8b_h200_closed16.json --json
expect 0 '80% interval (ms)' -- simulate serve --scenario scenarios/bench_llama3_8b_h200_closed16.json
if "$bin" simulate serve --scenario scenarios/bench_llama3_8b_h200_closed16.json --clock tables --json | grep -q interval_ms; then
  echo "FAIL: a serving run off the validated clock setting still carries the interval"; fails=$((fails + 1)); fi
if "$bin" simulate train --scenario scenarios/train_llama3_8b_1xh200_pytorch.json --estimate --json | grep -q iteration_time_interval_s; then
  echo "FAIL: the closed-form estimate carries the simulation's validated interval"; fails=$((fails + 1)); fi
if "$bin" cost --gpu h200-sxm-141gb --op gemm --m 4096 --n 4096 --k 4096 --clock-mhz 1980 --json | grep -q seconds_interval; then
  echo "FAIL: a GEMM at another clock still carries the reference clock's interval"; fails=$((fails + 1)); fi
# The power limiter: on by default where the profile has a power law, --clock picks, bad names refused.
expect 0 '"requests"' -- simulate serve --scenario "$tmp/closed.json" --trace "$tmp/clocked_trace.json" --json
grep -q '"clock_mhz"' "$tmp/clocked_trace.json" || { echo "FAIL: simulate serve trace lacks the steps' clock"; fails=$((fails + 1)); }
expect 0 '"requests"' -- simulate serve --scenario "$tmp/closed.json" --clock tables --trace "$tmp/tables_trace.json" --json
if grep -q '"clock_mhz"' "$tmp/tables_trace.json"; then echo "FAIL: --clock tables still reports a limiter clock"; fails=$((fails + 1)); fi
expect 2 "unknown --clock 'warm' valid: tables, sustained" -- simulate serve --scenario "$tmp/closed.json" --clock warm
sed 's/"dgx-h200"/"dgx-a100-80gb"/' "$tmp/closed.json" > "$tmp/a100.json"
expect 2 "--clock sustained needs a profile with a power section" -- simulate serve --scenario "$tmp/a100.json" --clock sustained
sed 's/"vllm"/"vllm-v9"/' "$tmp/closed.json" > "$tmp/bad_engine.json"
expect 2 "serving.engine='vllm-v9' is not a known engine; valid: infraplan, vllm, tensorrt-llm, sglang" -- simulate serve --scenario "$tmp/bad_engine.json"
sed 's/"concurrency": 4/"concurrency": 4, "rate_per_s": 2/' "$tmp/closed.json" > "$tmp/bad_closed.json"
expect 2 "workload.arrival.rate_per_s does not apply to a closed loop" -- simulate serve --scenario "$tmp/bad_closed.json"

expect 0 "algorithm" -- comm --cluster dgx-h100 --op all_reduce --bytes 2GB --group world
expect 0 '"bottleneck"' -- comm --scenario scenarios/memory_llama3_70b_dgx_h100x8.json --op all_reduce --bytes 1GiB --group tp --json
expect 0 "nic" -- comm --scenario scenarios/memory_llama3_70b_dgx_h100x8.json --op all_reduce --bytes 1GiB --group dp

expect 0 "recommendation: tp=" -- plan train --model llama2-7b --cluster dgx-h100 --seq 4096 --global-batch 64 --top 3 --explain --roofline
expect 0 '"rejected"' -- plan train --model llama2-7b --cluster dgx-h100 --seq 4096 --global-batch 64 --top 2 --json --roofline
expect 0 'the profile is derived from the measured' -- plan train --model llama2-7b --cluster dgx-h100:1 --seq 2048 --global-batch 16 --top 1

expect 0 "measured" -- cost --gpu h200-sxm-141gb --op gemm --m 4096 --n 4096 --k 4096
expect 0 '"source": "roofline"' -- cost --gpu h100-sxm5-80gb --op gemm --m 4096 --n 4096 --k 4096 --roofline --json
expect 0 "attention_decode" -- cost --gpu h200-sxm-141gb --op attention_decode --context 4096 --batch 64
expect 0 "GB/s" -- cost --gpu h200-sxm-141gb --op memory --bytes 1GiB
expect 0 "the table refers to" -- cost --gpu h200-sxm-141gb --op gemm --m 4096 --n 4096 --k 4096 --clock-mhz 1500

expect 0 "iteration_time_s" -- simulate train --scenario scenarios/train_gpt2_124m_1xh200.json
# The GEMM shapes a run asks for, for infraplan calibrate --shapes: GPT-2's 15 distinct (format, layout,
# m, n, k): the forward (tn), input-gradient (nn) and weight-gradient (nt) GEMMs of its four
# projections and its LM head.
"$bin" simulate train --scenario scenarios/train_gpt2_124m_1xh200.json --gemm-shapes-out "$tmp/shapes.json" >/dev/null 2>&1
if ! python3 -c "import json,sys; a=json.load(open(sys.argv[1]))['gemm_shapes']; assert len(a)==15 and a[0]['n']==50257 and all(e['dtype']=='bf16' and e['calls']>0 and e['layout'] in ('tn','nn','nt') for e in a)" "$tmp/shapes.json" 2>/dev/null; then
  echo "FAIL: simulate train --gemm-shapes-out did not write GPT-2's GEMM shapes"; fails=$((fails + 1)); fi
"$bin" simulate serve --scenario scenarios/serve_prefix_cache.json --gemm-shapes-out "$tmp/serve_shapes.json" >/dev/null 2>&1
if ! python3 -c "import json,sys; a=json.load(open(sys.argv[1]))['gemm_shapes']; assert len(a)>1" "$tmp/serve_shapes.json" 2>/dev/null; then
  echo "FAIL: simulate serve --gemm-shapes-out wrote no GEMM shapes"; fails=$((fails + 1)); fi
expect 2 "cannot write" -- simulate train --scenario scenarios/train_gpt2_124m_1xh200.json --gemm-shapes-out "$tmp/no-such-dir/s.json"
expect 0 '"peak_bytes"' -- simulate train --scenario scenarios/train_llama2_70b_64xh100.json --json
expect 0 "TTFT" -- simulate serve --scenario scenarios/serve_prefix_cache.json
expect 0 '"goodput_rps"' -- simulate serve --scenario scenarios/serve_goodput_slo.json --json
"$bin" simulate train --scenario scenarios/train_gpt2_124m_1xh200.json --trace "$tmp/trace.json" >/dev/null 2>&1
if ! python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['traceEvents']" "$tmp/trace.json" 2>/dev/null; then
  echo "FAIL: simulate train --trace did not write a Chrome trace"; fails=$((fails + 1)); fi
"$bin" simulate serve --scenario scenarios/serve_prefix_cache.json --requests "$tmp/req.csv" >/dev/null 2>&1
if ! head -1 "$tmp/req.csv" | grep -q "ttft"; then echo "FAIL: simulate serve --requests wrote no CSV"; fails=$((fails + 1)); fi

# Bad input: clear error, non-zero exit.
expect 2 "no 'training' object" -- simulate train --scenario scenarios/serve_prefix_cache.json
expect 2 "needs --k" -- cost --gpu h200-sxm-141gb --op gemm --m 1 --n 1
expect 2 "unknown --op 'gemv'" -- cost --gpu h200-sxm-141gb --op gemv
expect 2 "clock-mhz" -- cost --gpu h200-sxm-141gb --op gemm --m 64 --n 64 --k 64 --clock-mhz 50
expect 2 "has none" -- cost --gpu a100-sxm4-80gb --op gemm --m 64 --n 64 --k 64 --clock-mhz 1200
expect 0 "the table refers to" -- cost --gpu h100-sxm5-80gb --op gemm --m 4096 --n 4096 --k 4096 --clock-mhz 1500
expect 0 "run back to back on its own" -- cost --gpu h200-sxm-141gb --op gemm --m 4096 --n 4096 --k 4096 --clock held
expect 0 '"clock_mhz": 1980' -- cost --gpu h200-sxm-141gb --op gemm --m 4096 --n 4096 --k 4096 --clock top --json
expect 2 "valid: reference, top, held" -- cost --gpu h200-sxm-141gb --op gemm --m 64 --n 64 --k 64 --clock hot
expect 2 "give one of them" -- cost --gpu h200-sxm-141gb --op gemm --m 64 --n 64 --k 64 --clock held --clock-mhz 1500
# A shape the H100 profile timed held (tables.gemm_held_rows) is answered as measured there; off its
# rows, or with --duty, the power law's clock answers.
expect 0 "timed it held 40 ms back to back" -- cost --gpu h100-sxm5-80gb --op gemm --m 4096 --n 14336 --k 4096 --clock held
expect 0 "run back to back on its own" -- cost --gpu h100-sxm5-80gb --op gemm --m 3000 --n 5000 --k 6000 --clock held
expect 0 "run 50.0% of the time" -- cost --gpu h100-sxm5-80gb --op gemm --m 4096 --n 14336 --k 4096 --clock held --duty 0.5
expect 0 "run 77.0% of the time" -- cost --gpu h200-sxm-141gb --op gemm --m 1024 --n 4096 --k 4096 --clock held --duty 0.77
expect 2 "applies to --clock held only" -- cost --gpu h200-sxm-141gb --op gemm --m 64 --n 64 --k 64 --duty 0.5
expect 2 "must be in [0.001, 1]" -- cost --gpu h200-sxm-141gb --op gemm --m 64 --n 64 --k 64 --clock held --duty 1.5
expect 2 "has none" -- cost --gpu a100-sxm4-80gb --op gemm --m 64 --n 64 --k 64 --clock held
expect 2 "applies to --op gemm only" -- cost --gpu h200-sxm-141gb --op memory --bytes 1GiB --clock top
# training.attention_kernel / cost --attention-kernel: the FlashAttention-2 tables on Hopper, the
# default ones (said in the detail) on the A100; an unknown kernel is refused with the choices.
expect 0 "flash2 prefill table d128" -- cost --gpu h200-sxm-141gb --op attention_prefill --seq 8192 --attention-kernel flash2
expect 0 "flash2 not measured" -- cost --gpu a100-sxm4-80gb --op attention_prefill --seq 8192 --attention-kernel flash2
expect 2 "valid choices are default, flash2" -- cost --gpu h200-sxm-141gb --op attention_prefill --seq 8192 --attention-kernel fa3
expect 2 "does not apply to --op gemm" -- cost --gpu h200-sxm-141gb --op gemm --m 64 --n 64 --k 64 --attention-kernel flash2
cat > "$tmp/flash2.json" <<'JSON'
{"model": "llama2-7b", "cluster": {"preset": "dgx-a100-80gb", "nodes": 1},
 "training": {"seq_len": 8192, "tp": 8, "global_batch": 4, "attention_kernel": "flash2"}}
JSON
expect 0 "attention_kernel=flash2: the profile a100-sxm4-80gb has no tables of that kernel" -- simulate train --scenario "$tmp/flash2.json"
cat > "$tmp/flash2_bad.json" <<'JSON'
{"model": "llama2-7b", "cluster": {"preset": "dgx-h200", "nodes": 1},
 "training": {"seq_len": 8192, "tp": 8, "attention_kernel": "flash2", "flash_attention": false}}
JSON
expect 2 "training.flash_attention=false" -- simulate train --scenario "$tmp/flash2_bad.json"
# plan train --scenario keeps the job's software (framework, attention kernel) while it searches layouts.
cat > "$tmp/plan_flash2.json" <<'JSON'
{"model": "llama3-8b", "cluster": {"preset": "dgx-h200", "nodes": 1},
 "training": {"seq_len": 16384, "global_batch": 16, "framework": "transformers", "attention_kernel": "flash2"}}
JSON
expect 0 "software: framework transformers, attention kernel flash2" -- plan train --scenario "$tmp/plan_flash2.json" --top 1
expect 0 '"attention_kernel": "flash2"' -- plan train --scenario "$tmp/plan_flash2.json" --top 1 --json
expect 2 "needs a profile with a power section" -- simulate train --scenario scenarios/train_gpt3_175b_1024xa100.json --clock sustained
expect 2 "valid: tables, sustained" -- simulate train --scenario scenarios/train_llama3_8b_1xh200_pytorch.json --clock fast
expect 0 "SM clock" -- simulate train --scenario scenarios/train_llama3_8b_1xh200_pytorch.json --clock sustained
expect 2 "valid: tables, sustained" -- plan train --model llama3-8b --cluster dgx-h100:1 --seq 2048 --global-batch 16 --clock warm
expect 2 "needs a profile with a power section" -- plan train --model llama3-8b --cluster dgx-a100-80gb:1 --seq 2048 --global-batch 16 --clock sustained
expect 2 "applies to --op gemm only" -- cost --gpu h200-sxm-141gb --op launch --clock-mhz 1500
expect 2 "a100-sxm4-80gb has no tensor-core support for fp8" -- cost --gpu a100-sxm4-80gb --op gemm --m 64 --n 64 --k 64 --dtype fp8 --roofline
expect 2 "give exactly one of --gpus N or --rate R" -- plan serve --model llama3-8b --gpu h100-sxm5-80gb --isl 100 --osl 10 --ttft-ms 100 --tpot-ms 10
expect 2 "serving.weights=fp8 is not supported on a100-sxm4-80gb" -- plan serve --model llama2-70b --gpu a100-sxm4-80gb --gpus 2 --quant fp8 --isl 100 --osl 10 --ttft-ms 100 --tpot-ms 10
expect 2 "--global-batch is required" -- plan train --model llama2-7b --cluster dgx-h100 --seq 4096
expect 2 "unknown plan mode 'trian'" -- plan trian
expect 2 "all_reduce" -- comm --cluster dgx-h100 --op all_gatherr --bytes 1GiB --group world
expect 2 "bytes" -- comm --cluster dgx-h100 --op all_reduce --bytes -1GiB --group world
expect 2 "did you mean 'llama2-7b' or 'llama3-70b' or 'llama3-8b'?" -- models show llama3-7b
expect 2 "unknown command 'modles'" -- modles
expect 2 "unknown option '--jsn'" -- models --jsn
printf '{"model": "llama2-7b", "cluster": "dgx-h100",\n "training": {"tp": 8,}\n}\n' >"$tmp/malformed.json"
expect 2 "malformed.json:2:" -- memory train --scenario "$tmp/malformed.json"
printf '{"model": "llama2-7b", "cluster": "dgx-h100", "training": {"tp": 3}}' >"$tmp/tp3.json"
expect 2 "training.tp=3 does not divide heads=32; try 1, 2, 4, 8, 16, 32" -- memory train --scenario "$tmp/tp3.json"
# A failed run leaves no half-written output behind.
"$bin" simulate train --scenario "$tmp/tp3.json" --trace "$tmp/never.json" >/dev/null 2>&1
if [ -e "$tmp/never.json" ]; then echo "FAIL: a failed run wrote its trace"; fails=$((fails + 1)); fi
printf '{"model": "llama2-7b", "cluster": "dgx-h100", "training": {"seq_len": -4096}}' >"$tmp/neg.json"
expect 2 "training.seq_len=-4096 is invalid" -- memory train --scenario "$tmp/neg.json"
printf '{"model": {"preset": "llama2-7b", "hidden": -1}, "cluster": "dgx-h100", "training": {}}' >"$tmp/negh.json"
expect 2 "hidden=-1 is invalid" -- memory train --scenario "$tmp/negh.json"
printf '{"model": "llama2-70b", "cluster": "dgx-a100-80gb", "serving": {"tp": 2, "weights": "fp8"}}' >"$tmp/fp8.json"
expect 2 "serving.weights=fp8 is not supported on a100-sxm4-80gb" -- memory serve --scenario "$tmp/fp8.json"
expect 2 "--batch=-3 is invalid" -- memory serve --scenario scenarios/memory_llama2_70b_2xa100.json --batch -3
expect 2 "cannot open file" -- memory train --scenario "$tmp/missing.json"
expect 2 "unknown cluster 'dgx-h1000'" -- hardware show dgx-h1000

# Reports: from a scenario and from a saved --json result; bad input leaves no file behind.
expect 0 "report written to $tmp/mem.html" -- report --scenario scenarios/memory_llama2_7b_one_a100.json --out "$tmp/mem.html"
if ! grep -q '<section id="memory">' "$tmp/mem.html" 2>/dev/null; then echo "FAIL: report --scenario wrote no memory section"; fails=$((fails + 1)); fi
"$bin" simulate train --scenario scenarios/train_gpt2_124m_1xh200.json --json >"$tmp/train.json" 2>/dev/null
expect 0 "Markdown" -- report --from "$tmp/train.json" --out "$tmp/train.md"
if ! grep -q "^## Training: one iteration" "$tmp/train.md" 2>/dev/null; then echo "FAIL: report --format md"; fails=$((fails + 1)); fi
ls "$tmp" | grep -q "tmp-infraplan" && { echo "FAIL: a report left its temporary file"; fails=$((fails + 1)); }
# Every number the page shows equals the CLI's --json number at the key the page names.
"$bin" memory train --scenario scenarios/memory_llama3_70b_dgx_h100x8.json --json >"$tmp/mem.json" 2>/dev/null
for r in train mem; do
  "$bin" report --from "$tmp/$r.json" --out "$tmp/$r-from.html" >/dev/null 2>&1
  if ! python3 - "$tmp/$r.json" "$tmp/$r-from.html" <<'PY'; then echo "FAIL: report --from $r.json shows a number that is not the JSON's"; fails=$((fails + 1)); fi
import json, re, sys
doc = json.load(open(sys.argv[1]))
page = open(sys.argv[2]).read()
spans = re.findall(r'<span class="v" data-result="([0-9]+)" data-key="([^"]*)" data-value="([^"]*)">', page)
assert len(spans) >= 8, "only %d traced numbers" % len(spans)
for result, key, value in spans:
    assert result == "0", result
    node = doc
    for part in key.split("/")[1:]:
        part = part.replace("~1", "/").replace("~0", "~")
        node = node[int(part)] if isinstance(node, list) else node[part]
    assert float(value) == float(node), "%s: page %s, JSON %r" % (key, value, node)
PY
done
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); d['result_kind']='simulate-dance'; json.dump(d,open(sys.argv[2],'w'))" "$tmp/train.json" "$tmp/dance.json"
expect 2 "unknown result_kind 'simulate-dance'" -- report --from "$tmp/dance.json" --out "$tmp/dance.html"
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); d['result_version']=99; json.dump(d,open(sys.argv[2],'w'))" "$tmp/train.json" "$tmp/v99.json"
expect 2 "result_version 99" -- report --from "$tmp/v99.json" --out "$tmp/v99.html"
expect 2 "cannot open file" -- report --from "$tmp/nothing.json" --out "$tmp/nothing.html"
expect 2 "cannot write" -- report --from "$tmp/train.json" --out "$tmp/no-such-dir/r.html"
expect 2 "unknown --format 'pdf'" -- report --from "$tmp/train.json" --format pdf
expect 2 "give exactly one of --scenario" -- report --out "$tmp/x.html"
for f in dance.html v99.html nothing.html no-such-dir x.html; do
  if [ -e "$tmp/$f" ]; then echo "FAIL: a failed report wrote $f"; fails=$((fails + 1)); fi
done

# The mini-engine on a GPU: without one (CI), bench and validate say so and exit 4; validate
# compares against a given measured report (here the prediction itself: every error 0).
expect 4 "GPU" -- bench serve --scenario scenarios/bench_llama2_7b_h200_single.json
expect 4 "GPU" -- validate serve --scenario scenarios/bench_llama2_7b_h200_single.json
"$bin" simulate serve --scenario scenarios/bench_llama2_7b_h200_single.json --json >"$tmp/pred.json" 2>/dev/null
expect 0 "tpot_ms.p50" -- validate serve --scenario scenarios/bench_llama2_7b_h200_single.json --measured "$tmp/pred.json"
if "$bin" validate serve --scenario scenarios/bench_llama2_7b_h200_single.json --measured "$tmp/pred.json" |
  grep -E "^ *(ttft|tpot|itl|e2e)" | grep -vqF "+0.0%"; then
  echo "FAIL: validate against its own prediction reports a non-zero error"; fails=$((fails + 1)); fi
printf '{"not": "a report"}' >"$tmp/bad_measured.json"
expect 2 "no 'metrics' object" -- validate serve --scenario scenarios/bench_llama2_7b_h200_single.json --measured "$tmp/bad_measured.json"
# Cluster profiles: a single-GPU profile and a comm sweep merged (the refit runs), then named by a
# scenario's cluster and by comm --cluster; merge and calibrate cluster refuse bad input.
expect 0 "refitted collective model" -- calibrate merge --out "$tmp/cluster.json" hardware/profiles/h200-sxm-141gb.json docs/data/h200x2_nccl.json
expect 0 '"gpus_per_node": 2' -- calibrate merge --out "$tmp/cluster2.json" --json hardware/profiles/h200-sxm-141gb.json docs/data/h200x2_nccl.json
expect 0 "1 node(s) x 2 h200-sxm-141gb" -- calibrate merge --out "$tmp/cluster3.json" hardware/profiles/h200-sxm-141gb.json docs/data/h200x2_nccl.json
expect 0 "busbw" -- comm --cluster "$tmp/cluster.json" --op all_gather --bytes 4GiB --group world
printf '{"model": "gpt2-124m", "cluster": {"profile": "%s", "nodes": 2}, "training": {"seq_len": 1024, "micro_batch": 4, "global_batch": 16, "precision": "amp-bf16", "dp_buckets": "copy"}}' "$tmp/cluster.json" >"$tmp/ddp.json"
expect 0 "cluster profile $tmp/cluster.json" -- simulate train --scenario "$tmp/ddp.json"
expect 0 '"dp_buckets": "copy"' -- simulate train --scenario "$tmp/ddp.json" --json
expect 0 "ddp_grad_buckets" -- memory train --scenario "$tmp/ddp.json"
printf '{"model": "gpt2-124m", "cluster": {"profile": "%s", "preset": "dgx-h100"}, "training": {}}' "$tmp/cluster.json" >"$tmp/both.json"
expect 2 "give either a cluster profile or" -- memory train --scenario "$tmp/both.json"
printf '{"model": "gpt2-124m", "cluster": "dgx-h200", "training": {"zero": 1, "dp_buckets": "copy"}}' >"$tmp/zc.json"
expect 2 "training.dp_buckets=copy is PyTorch DDP's bucket copy (zero 0)" -- memory train --scenario "$tmp/zc.json"
expect 2 "are both profiles of h200-sxm-141gb" -- calibrate merge --out "$tmp/x.json" hardware/profiles/h200-sxm-141gb.json hardware/profiles/h200-sxm-141gb.json
expect 2 "does not say which GPU it measured" -- calibrate merge --out "$tmp/x.json" docs/data/h200x2_nccl.json
if [ -e "$tmp/x.json" ]; then echo "FAIL: a refused merge wrote its output"; fails=$((fails + 1)); fi
expect 0 "srun --mpi=pmix -N 2 --ntasks-per-node=8 --gpus-per-task=1" -- calibrate cluster --launcher slurm --nodes 2 --gpus-per-node 8 --out "$tmp/c.json" --dry-run
expect 0 "communication sweeps ~" -- calibrate cluster --launcher slurm --nodes 2 --gpus-per-node 8 --out "$tmp/c.json" --dry-run --quick
expect 0 "--map-by ppr:4:node --host a:4,b:4" -- calibrate cluster --launcher mpirun --hosts a,b --nodes 2 --gpus-per-node 4 --out "$tmp/c.json" --dry-run
expect 2 "--launcher=pbs is invalid; valid: slurm, mpirun" -- calibrate cluster --launcher pbs --out "$tmp/c.json"
expect 2 "needs --hosts or --hostfile" -- calibrate cluster --launcher mpirun --nodes 2 --out "$tmp/c.json"

# Determinism: same input, same bytes.
a=$("$bin" memory train --scenario scenarios/memory_llama3_70b_dgx_h100x8.json --json)
b=$("$bin" memory train --scenario scenarios/memory_llama3_70b_dgx_h100x8.json --json)
if [ "$a" != "$b" ]; then echo "FAIL: memory train output differs between runs"; fails=$((fails + 1)); fi

# calibrate --from-trace: a profile from a torch.profiler trace (no GPU), used by a scenario.
fx=profiler_trace/testdata/synthetic_llama_step.json
expect 0 "gemm" -- calibrate --from-trace "$fx" --out "$tmp/from_trace.json"
expect 0 '"framework": "pytorch-eager"' -- calibrate --from-trace "$fx" --out "$tmp/from_trace.json" --gpu h200-sxm-141gb --json
gzip -c "$fx" > "$tmp/step.json.gz"
expect 0 "attention" -- calibrate --from-trace "$tmp/step.json.gz" --out "$tmp/from_gz.json"
cat > "$tmp/with_profile.json" <<EOF
{"model": "llama2-7b", "cluster": {"gpu": "h200-sxm-141gb", "gpus_per_node": 1}, "profile": "from_trace.json",
 "training": {"seq_len": 2048, "micro_batch": 1, "precision": "amp-bf16", "recompute": "full"}}
EOF
expect 0 "iteration_time_s" -- simulate train --scenario "$tmp/with_profile.json"
# A scenario that names no framework runs the one its traced profile names.
expect 0 "torch-compile" -- calibrate --from-trace "$fx" --out "$tmp/compiled.json" --framework torch-compile
cat > "$tmp/with_compiled.json" <<EOF
{"model": "llama2-7b", "cluster": {"gpu": "h200-sxm-141gb", "gpus_per_node": 1}, "profile": "compiled.json",
 "training": {"seq_len": 2048, "micro_batch": 1, "precision": "amp-bf16", "recompute": "full"}}
EOF
expect 0 "torch-compile" -- simulate train --scenario "$tmp/with_compiled.json"
expect 2 "NVIDIA H200" -- calibrate --from-trace "$fx" --out "$tmp/wrong_gpu.json" --gpu h100-sxm5-80gb
if [ -e "$tmp/wrong_gpu.json" ]; then echo "FAIL: a refused trace wrote a profile"; fails=$((fails + 1)); fi
head -c 20000 "$fx" > "$tmp/cut.json"
expect 2 "malformed JSON" -- calibrate --from-trace "$tmp/cut.json" --out "$tmp/cut_profile.json"
echo '{"traceEvents": []}' > "$tmp/empty_trace.json"
expect 2 "no GPU kernels" -- calibrate --from-trace "$tmp/empty_trace.json" --out "$tmp/empty_profile.json" --gpu h200-sxm-141gb
expect 2 "no such file" -- calibrate --from-trace "$tmp/none.json" --out "$tmp/none_profile.json"
expect 2 "not a regular file" -- calibrate --from-trace "$tmp" --out "$tmp/dir_profile.json"
: > "$tmp/zero.json"
expect 2 "is empty" -- calibrate --from-trace "$tmp/zero.json" --out "$tmp/zero_profile.json"
expect 2 "--framework" -- calibrate --from-trace "$fx" --out "$tmp/fw.json" --framework jax
expect 2 "--out" -- calibrate --from-trace "$fx"

if [ "$fails" -ne 0 ]; then echo "$fails CLI check(s) failed"; exit 1; fi
echo "all CLI checks passed"
