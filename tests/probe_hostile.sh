#!/usr/bin/env bash
# Hostile and careless inputs, one class of the hardening issue each (docs/reliability.md): every
# case must end within 20 s under an 8 GB address-space limit, exit 0, 1 or 2 (never a crash or
# an internal error), print no NaN or infinity, and — where the case says so — refuse with a
# message naming what was wrong, or leave files untouched.
#   tests/probe_hostile.sh [BINARY]        (default build/bin/infraplan; ctest runs it)
# PROBE_TIMEOUT (seconds, default 20) and PROBE_VMEM_KB (default 8000000) can be raised for
# sanitizer builds, whose shadow memory needs a larger address space.
set -u
bin=${1:-${INFRAPLAN:-build/bin/infraplan}}
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
limit_s=${PROBE_TIMEOUT:-20}
vmem_kb=${PROBE_VMEM_KB:-8000000}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
cases=0

# probe EXPECT NEEDLE -- ARGS...: EXPECT is the exit code wanted (0, 1, 2, or "any" for 0/1/2);
# NEEDLE must appear in stdout+stderr (empty: no check).
probe() {
  local want=$1 needle=$2
  shift 3
  cases=$((cases + 1))
  local out rc t0 t1
  t0=$(date +%s.%N)
  out=$( (ulimit -v "$vmem_kb"; timeout -s KILL "$limit_s" "$bin" "$@") 2>&1)
  rc=$?
  t1=$(date +%s.%N)
  local secs
  secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.1f", b-a}')
  local what="infraplan $(printf '%q ' "$@" | cut -c1-160)"
  if [ "$rc" -gt 2 ]; then
    echo "FAIL ($secs s): $what -> exit $rc"; echo "$out" | tail -5; fails=$((fails + 1)); return
  fi
  if [ "$want" != any ] && [ "$rc" != "$want" ]; then
    echo "FAIL ($secs s): $what -> exit $rc, expected $want"; echo "$out" | tail -5; fails=$((fails + 1)); return
  fi
  if grep -qiE '(^|[^a-z_])-?(nan|inf|infinity)([^a-z_]|$)' <<<"$out"; then
    echo "FAIL ($secs s): $what -> NaN or infinity in the output"; grep -iE 'nan|inf' <<<"$out" | head -3
    fails=$((fails + 1)); return
  fi
  if [ -n "$needle" ] && ! grep -qF -- "$needle" <<<"$out"; then
    echo "FAIL ($secs s): $what -> output lacks: $needle"; echo "$out" | tail -3; fails=$((fails + 1)); return
  fi
  echo "ok ($secs s, exit $rc): $what"
}

# check DESCRIPTION COMMAND...: a shell condition that must hold (files untouched and the like).
check() {
  local what=$1
  shift
  cases=$((cases + 1))
  if "$@"; then echo "ok: $what"; else echo "FAIL: $what"; fails=$((fails + 1)); fi
}

# scenario NAME JSON: writes $tmp/NAME.json
scenario() { printf '%s\n' "$2" > "$tmp/$1.json"; }
serve_base='"model": "llama3-8b", "cluster": "dgx-h100"'

# ---- 1. memory corruption from a valid setting: PD + static batching runs correctly ----
python3 - "$tmp/pd_static.json" <<'EOF'
import json, sys
s = json.load(open("scenarios/serve_pd_disaggregated.json"))
s["serving"]["batching"] = "static"
json.dump(s, open(sys.argv[1], "w"))
EOF
probe 0 "requests 648" -- simulate serve --scenario "$tmp/pd_static.json"
scenario pd_small "{$serve_base, \"serving\": {\"batching\": \"static\", \"max_num_seqs\": 4,
  \"disaggregation\": {\"prefill_instances\": 1, \"decode_instances\": 1}},
  \"workload\": {\"requests\": 40, \"arrival\": {\"rate_per_s\": 100}, \"prompt_tokens\": 300, \"output_tokens\": 20}}"
probe 0 "requests 40" -- simulate serve --scenario "$tmp/pd_small.json"

# ---- 2. integer truncation: values that do not fit are refused, never wrapped ----
scenario replicas "{$serve_base, \"serving\": {\"replicas\": 2147483648}}"
probe 2 "serving.replicas=2147483648" -- simulate serve --scenario "$tmp/replicas.json"
scenario shared "{$serve_base, \"serving\": {}, \"workload\": {\"requests\": 5, \"prefix\": {\"shared_tokens\": 9223372036854775807}}}"
probe 2 "shared_tokens" -- simulate serve --scenario "$tmp/shared.json"
scenario zero '{"model": "llama3-8b", "cluster": "dgx-h100", "training": {"zero": 4294967295}}'
probe 2 "training.zero=4294967295" -- simulate train --scenario "$tmp/zero.json"
scenario tp '{"model": "llama3-8b", "cluster": "dgx-h100", "training": {"tp": 4294967304}}'
probe 2 "training.tp=4294967304" -- simulate train --scenario "$tmp/tp.json"
scenario quant "{$serve_base, \"serving\": {\"weights\": \"int4\", \"quant_group\": 4294967295}}"
probe 2 "serving.quant_group" -- memory serve --scenario "$tmp/quant.json"
probe 2 "--gpus" -- plan serve --model llama3-8b --gpu h100-sxm5-80gb --gpus 4294967297 --isl 512 --osl 128 --ttft-ms 500 --tpot-ms 50
printf '{"model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32, "head_dim": 9223372036854775807, "vocab_size": 32000, "intermediate_size": 11008}\n' > "$tmp/hf_head_dim.json"
probe 2 "head_dim" -- models show "$tmp/hf_head_dim.json"
scenario seed_big '{"model": "llama3-8b", "cluster": "dgx-h100", "seed": 18446744073709551615, "training": {}}'
probe 2 "seed" -- simulate train --scenario "$tmp/seed_big.json"

# ---- 3. deep nesting is refused before anything recurses on it ----
python3 -c 'import sys; sys.stdout.write("{\"model\": \"llama3-8b\", \"cluster\": \"dgx-h100\", \"workload\": " + "[" * 90000 + "]" * 90000 + "}")' > "$tmp/deep.json"
probe 2 "nesting deeper than" -- simulate serve --scenario "$tmp/deep.json"

# ---- 4. hangs: idle time, huge times and sizes end fast (answered or refused) ----
printf 'arrival_time_s,prompt_tokens,output_tokens\n1e300,100,10\n' > "$tmp/t_1e300.csv"
printf 'arrival_time_s,prompt_tokens,output_tokens\ninf,100,10\n' > "$tmp/t_inf.csv"
printf 'arrival_time_s,prompt_tokens,output_tokens\n0,100,10\n999999999,100,10\n' > "$tmp/t_far.csv"
for t in t_1e300 t_inf; do
  scenario "$t" "{$serve_base, \"serving\": {}, \"workload\": {\"trace\": \"$t.csv\"}}"
  probe 2 "arrival_time_s" -- simulate serve --scenario "$tmp/$t.json"
done
scenario t_far "{$serve_base, \"serving\": {}, \"workload\": {\"trace\": \"t_far.csv\"}}"
probe 0 "requests 2" -- simulate serve --scenario "$tmp/t_far.json"
scenario start30 "{$serve_base, \"serving\": {}, \"workload\": {\"requests\": 10, \"arrival\": {\"start_s\": 1e30}}}"
probe 2 "start_s" -- simulate serve --scenario "$tmp/start30.json"
scenario start15 "{$serve_base, \"serving\": {}, \"workload\": {\"requests\": 10, \"arrival\": {\"start_s\": 1e15}}}"
probe 2 "start_s" -- simulate serve --scenario "$tmp/start15.json"
scenario rate "{$serve_base, \"serving\": {}, \"workload\": {\"requests\": 10, \"arrival\": {\"rate_per_s\": 1e-300}}}"
probe 2 "rate_per_s" -- simulate serve --scenario "$tmp/rate.json"
scenario host "{$serve_base, \"serving\": {\"host_overhead_us\": 1e30}, \"workload\": {\"requests\": 10}}"
probe 2 "host_overhead_us" -- simulate serve --scenario "$tmp/host.json"
# Precision: the same 10 requests starting at 0 and at 10^9 s take the same time.
for s in 0 9e8; do
  scenario "start_$s" "{$serve_base, \"seed\": 3, \"serving\": {}, \"workload\": {\"requests\": 10, \"arrival\": {\"rate_per_s\": 20, \"start_s\": $s}}}"
  "$bin" simulate serve --scenario "$tmp/start_$s.json" --json > "$tmp/start_$s.out" 2>&1
done
check "start_s 9e8 gives the answer of start_s 0" python3 - "$tmp/start_0.out" "$tmp/start_9e8.out" <<'EOF'
import json, sys
a, b = (json.load(open(p))["metrics"] for p in sys.argv[1:3])
ok = all(abs(a[k]["p50"] - b[k]["p50"]) <= 1e-3 * max(1.0, abs(a[k]["p50"])) for k in ("ttft_ms", "e2e_ms"))
sys.exit(0 if ok and abs(a["duration_s"] - b["duration_s"]) < 1e-3 else 1)
EOF
scenario seq '{"model": "llama3-8b", "cluster": "dgx-h100", "training": {"seq_len": 9223372036854775807}}'
probe 2 "training.seq_len" -- simulate train --scenario "$tmp/seq.json"
probe 2 "--seq" -- cost --gpu h200-sxm-141gb --op attention_prefill --seq 9223372036854775807
probe 0 "predicted time" -- cost --gpu h200-sxm-141gb --op attention_prefill --seq 16777216
printf '{"name": "deep", "hidden": 4096, "layers": 9223372036854775807, "heads": 32, "ffn_hidden": 11008, "vocab": 32000}\n' > "$tmp/layers.json"
probe 2 "layers" -- models show "$tmp/layers.json"
printf '{"name": "deep", "hidden": 4096, "layers": 4096, "heads": 32, "ffn_hidden": 11008, "vocab": 32000}\n' > "$tmp/layers_max.json"
probe 0 "parameters" -- models show "$tmp/layers_max.json"

# ---- 5. unbounded or blocking reads: regular files only, size checked first ----
probe 2 "character device" -- simulate serve --scenario /dev/zero
probe 2 "character device" -- simulate train --scenario /dev/urandom
probe 2 "character device" -- cost --gpu h100-sxm5-80gb --op launch --profile /dev/zero
probe 2 "character device" -- comm --cluster dgx-h100 --profile /dev/urandom
scenario trace_dev "{$serve_base, \"serving\": {}, \"workload\": {\"trace\": \"/dev/zero\"}}"
probe 2 "character device" -- simulate serve --scenario "$tmp/trace_dev.json"
mkfifo "$tmp/fifo"
probe 2 "FIFO" -- simulate serve --scenario "$tmp/fifo"
probe 2 "directory" -- simulate serve --scenario "$tmp"
probe 2 "directory" -- models show "$tmp"
head -c 70000000 /dev/zero | tr '\0' ' ' > "$tmp/huge.json"
probe 2 "limit" -- simulate train --scenario "$tmp/huge.json"

# ---- 6. output files: no symlink following, no device, no overwriting inputs, all or nothing ----
cp scenarios/serve_trace_replay.json "$tmp/replay.json"
cp -r scenarios/traces "$tmp/"
echo precious > "$tmp/victim"
ln -s "$tmp/victim" "$tmp/out.json.tmp-infraplan"
probe 0 "" -- simulate serve --scenario "$tmp/replay.json" --trace "$tmp/out.json"
check "a symlink planted at the old temporary name is not followed" grep -qx precious "$tmp/victim"
probe 2 "character device" -- simulate serve --scenario "$tmp/replay.json" --trace /dev/null
check "/dev/null is still a device" test -c /dev/null
cp "$tmp/replay.json" "$tmp/replay.orig"
probe 2 "is the input" -- simulate serve --scenario "$tmp/replay.json" --trace "$tmp/replay.json"
probe 2 "is the input" -- simulate serve --scenario "$tmp/replay.json" --requests "$tmp/traces/serve_sample.csv"
check "the scenario is unchanged" cmp -s "$tmp/replay.json" "$tmp/replay.orig"
echo old > "$tmp/good.json"
probe 2 "does not exist" -- simulate serve --scenario "$tmp/replay.json" --trace "$tmp/good.json" --requests "$tmp/nodir/x.csv"
check "nothing written when one output cannot be" grep -qx old "$tmp/good.json"
probe 2 "directory" -- simulate serve --scenario "$tmp/replay.json" --trace "$tmp"
long=$(printf 'x%.0s' $(seq 1 250)).json
probe 0 "" -- simulate serve --scenario "$tmp/replay.json" --requests "$tmp/$long"
check "a 255-byte file name is written" test -s "$tmp/$long"
probe 2 "also the output of" -- simulate serve --scenario "$tmp/replay.json" --trace "$tmp/a.json" --requests "$tmp/./a.json"

# ---- 7. scale: answered by fast paths or refused, never minutes or gigabytes ----
probe 2 "--global-batch" -- plan train --model llama3-8b --cluster dgx-h100:8 --seq 4096 --global-batch 2147483648
probe 2 "nodes" -- hardware show dgx-h100:1250000
probe 0 "131072 GPUs" -- hardware show dgx-h100:16384
scenario replicas6 "{\"model\": \"llama3-8b\", \"cluster\": {\"preset\": \"dgx-h100\", \"nodes\": 125000}, \"serving\": {\"replicas\": 1000000}}"
probe 2 "" -- simulate serve --scenario "$tmp/replicas6.json"
scenario replicas_many "{\"model\": \"llama3-8b\", \"cluster\": {\"preset\": \"dgx-h100\", \"nodes\": 1024}, \"serving\": {\"replicas\": 8192}, \"workload\": {\"requests\": 100}}"
probe 2 "engine instances" -- simulate serve --scenario "$tmp/replicas_many.json"
scenario gpus7 '{"model": "llama3-8b", "cluster": {"preset": "dgx-h100", "nodes": 1250000}, "training": {}}'
probe 2 "nodes" -- simulate train --scenario "$tmp/gpus7.json"
probe 2 "nodes" -- comm --cluster dgx-h100:1250000
probe 2 "nodes" -- plan train --model llama3-8b --cluster dgx-h100:1250000 --seq 4096 --global-batch 1024
scenario gpus_max '{"model": "llama3-70b", "cluster": {"preset": "dgx-h100", "nodes": 16384}, "training": {"tp": 8, "pp": 8, "seq_len": 8192, "global_batch": 4096}}'
probe any "" -- simulate train --scenario "$tmp/gpus_max.json"
probe any "" -- simulate train --scenario "$tmp/gpus_max.json" --estimate
probe 0 "all_reduce" -- comm --cluster dgx-h100:16384 --op all_reduce --bytes 1GiB --group world
# plan train at the 131072-GPU limit takes ~21 s (docs/reliability.md, "Results"); 8192 GPUs ~9 s.
probe any "" -- plan train --model llama3-70b --cluster dgx-h100:1024 --seq 8192 --global-batch 16384
scenario mb_many '{"model": "llama3-8b", "cluster": "dgx-h100", "training": {"tp": 8, "seq_len": 4096, "global_batch": 16777216}}'
probe any "" -- simulate train --scenario "$tmp/mb_many.json"
scenario requests_max "{$serve_base, \"serving\": {}, \"workload\": {\"requests\": 1000001}}"
probe 2 "requests" -- simulate serve --scenario "$tmp/requests_max.json"

# ---- 8. NaN and infinity never reach a result ----
printf 'arrival_time_s,prompt_tokens,output_tokens\nnan,100,10\n' > "$tmp/t_nan.csv"
printf 'arrival_time_s,prompt_tokens,output_tokens\n0,0x1p3,10\n' > "$tmp/t_hex.csv"
printf 'arrival_time_s,prompt_tokens,output_tokens\n0,inf,10\n' > "$tmp/t_inf2.csv"
for t in t_nan t_hex t_inf2; do
  scenario "$t" "{$serve_base, \"serving\": {}, \"workload\": {\"trace\": \"$t.csv\"}}"
  probe 2 "" -- simulate serve --scenario "$tmp/$t.json"
done
probe 2 "--bytes" -- comm --cluster dgx-h100 --bytes 1e308TiB
probe 2 "--bytes" -- cost --gpu h100-sxm5-80gb --op memory --bytes 1e400
probe 2 "4294967296 is invalid" -- cost --gpu h100-sxm5-80gb --op attention_decode --context 4294967296 --batch 4294967296
probe 0 "cached tokens" -- cost --gpu h100-sxm5-80gb --op attention_decode --context 16777216 --batch 16777216
scenario turns "{$serve_base, \"serving\": {}, \"workload\": {\"requests\": 10, \"sessions\": {\"turns\": 2147483648}}}"
probe 2 "turns" -- simulate serve --scenario "$tmp/turns.json"
scenario turns_ok "{$serve_base, \"serving\": {}, \"workload\": {\"requests\": 10, \"sessions\": {\"turns\": 1000000}}}"
probe 0 "requests 10" -- simulate serve --scenario "$tmp/turns_ok.json"

# ---- 9. wrong input refused, not silently accepted ----
scenario neg_shared "{$serve_base, \"serving\": {}, \"workload\": {\"requests\": 5, \"prefix\": {\"shared_tokens\": -5}}}"
probe 2 "shared_tokens" -- simulate serve --scenario "$tmp/neg_shared.json"
printf 'arrival_time_s,prompt_tokens,output_tokens,promt_group\n0,100,10,1\n' > "$tmp/t_col.csv"
scenario t_col "{$serve_base, \"serving\": {}, \"workload\": {\"trace\": \"t_col.csv\"}}"
probe 2 "promt_group" -- simulate serve --scenario "$tmp/t_col.json"
printf '{"arrival_time_s": 0, "prompt_tokens": 100, "output_tokens": 10, "promt_group": 1}\n' > "$tmp/t_col.jsonl"
scenario t_coljl "{$serve_base, \"serving\": {}, \"workload\": {\"trace\": \"t_col.jsonl\"}}"
probe 2 "promt_group" -- simulate serve --scenario "$tmp/t_coljl.json"
scenario both "{$serve_base, \"serving\": {}, \"workload\": {\"trace\": \"traces/serve_sample.csv\", \"requests\": 5000}}"
cp -r scenarios/traces "$tmp/" 2>/dev/null
probe 2 "workload.requests" -- simulate serve --scenario "$tmp/both.json"
scenario dup '{"model": "llama3-8b", "cluster": "dgx-h100", "training": {"tp": 2, "tp": 8}}'
probe 2 "duplicate key 'training.tp'" -- simulate train --scenario "$tmp/dup.json"
printf '{"model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32, "vocab_size": 32000, "intermediate_size": 11008, "hidden_act": "relu"}\n' > "$tmp/relu.json"
probe 2 "hidden_act='relu'" -- models show "$tmp/relu.json"
printf '{"model_type": "opt", "hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12, "vocab_size": 50272, "intermediate_size": 3072, "activation_function": "relu"}\n' > "$tmp/opt.json"
probe 0 "relu FFN" -- models show "$tmp/opt.json"
probe 2 "--bytes" -- comm --cluster dgx-h100 --bytes 1.5.5
probe 2 "--bytes" -- cost --gpu h100-sxm5-80gb --op memory --bytes 1.5.5GiB
probe 2 "--tp" -- plan serve --model llama3-8b --gpu h100-sxm5-80gb --gpus 8 --isl 512 --osl 128 --ttft-ms 500 --tpot-ms 50 --tp 4abc
probe 2 "--seq" -- models show llama3-8b --seq 4abc
probe 2 "--top" -- plan train --model llama3-8b --cluster dgx-h100 --seq 4096 --global-batch 64 --top 4abc
probe 2 "unexpected argument" -- simulate serve --scenario scenarios/serve_trace_replay.json extra
probe 2 "unexpected argument" -- models show llama3-8b gpt2-124m
probe 2 "more than once" -- simulate serve --scenario scenarios/serve_trace_replay.json --scenario scenarios/serve_prefix_cache.json
probe 2 "does not apply" -- cost --gpu h100-sxm5-80gb --op memory --bytes 1GiB --m 5
probe 2 "--estimate" -- simulate train --scenario scenarios/train_gpt2_124m_1xh200.json --estimate --mode exact
probe 2 "needs --draft" -- plan serve --model llama3-8b --gpu h100-sxm5-80gb --gpus 8 --isl 512 --osl 128 --ttft-ms 500 --tpot-ms 50 --acceptance 0.5
scenario null_tp '{"model": "llama3-8b", "cluster": "dgx-h100", "training": {"tp": null}}'
probe 2 "training.tp: null" -- simulate train --scenario "$tmp/null_tp.json"
scenario trailing '{"model": "llama3-8b", "cluster": "dgx-h100", "training": {}} garbage'
probe 2 "malformed JSON" -- simulate train --scenario "$tmp/trailing.json"

echo "probe_hostile: $cases cases, $fails failed"
[ "$fails" -eq 0 ]
