#!/usr/bin/env bash
# The "Small-batch step time" table of docs/serving.md: LLaMA-2-7B on one H200 (embedded measured
# profile), 128-token prompts, 256-token outputs, a closed loop of N clients, each engine preset and
# the infraplan engine with a plain PyTorch model's kernel list; TPOT p50 (ms) and output tok/s.
#   bench/serving/small_batch_table.sh [path/to/infraplan]
set -euo pipefail
ip=${1:-build/bin/infraplan}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
row() {  # row LABEL ENGINE_JSON
  local label=$1 engine=$2 out="| $1 |"
  for n in 1 16 64 100; do
    cat > "$work/s.json" <<JSON
{"name": "small_batch", "model": "llama2-7b", "cluster": {"preset": "dgx-h200", "gpus_per_node": 1},
 "seed": 7, "serving": $engine,
 "workload": {"requests": $((n < 8 ? 32 : 4 * n)), "arrival": {"type": "closed", "concurrency": $n},
              "prompt_tokens": 128, "output_tokens": 256}}
JSON
    out+=$("$ip" simulate serve --scenario "$work/s.json" --json |
      python3 -c 'import json,sys; m=json.load(sys.stdin)["metrics"]; print(" %.2f ms, %s tok/s |" % (m["tpot_ms"]["p50"], format(round(m["output_tokens_per_s"]), ",")), end="")')
  done
  echo "$out"
}
echo "| engine | N = 1 | N = 16 | N = 64 | N = 100 |"
echo "|---|---|---|---|---|"
for e in infraplan vllm tensorrt-llm sglang; do
  row "\`$e\`" "{\"tp\": 1, \"max_num_seqs\": 256, \"engine\": \"$e\"}"
done
row "plain PyTorch kernels, graph" '{"tp": 1, "max_num_seqs": 256, "engine": "infraplan", "host_overhead_us": 0, "host_us_per_seq": 0, "kernels": {"norms": 12, "residual_in_norm": false, "qkv_gemms": 3, "rope": 10, "kv_write": 2, "gate_up_gemms": 2, "activation": 2}}'
