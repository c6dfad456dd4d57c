#!/usr/bin/env bash
# Builds infraplan and runs its main job on the embedded defaults: what a new user sees first.
# On a fresh Debian 12 machine it first installs the packages it needs (scripts/setup-deps.sh).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
build=${BUILD_DIR:-build}
jobs=${JOBS:-$(nproc 2>/dev/null || echo 2)}

scripts/setup-deps.sh >/dev/null
if [ -d /usr/local/cuda/bin ] && ! command -v nvcc >/dev/null 2>&1; then
  export PATH="/usr/local/cuda/bin:$PATH"
fi
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo ${CMAKE_ARGS:-} >/dev/null
cmake --build "$build" -j "$jobs" --target infraplan >/dev/null
ip="$build/bin/infraplan"

section() { printf '\n\033[1m== %s ==\033[0m\n\n' "$1"; }
run() { printf '$ infraplan %s\n' "$*"; "$ip" "$@" || true; }

section "1. Will LLaMA-2-7B train on one 80 GB GPU?"
run memory train --scenario scenarios/memory_llama2_7b_one_a100.json
section "2. ...and with ZeRO-3 over one DGX A100?"
run memory train --scenario scenarios/memory_llama2_7b_zero3_dgx_a100.json
section "3. LLaMA-3-70B on 64 H100s (TP8 x PP4 x DP2): memory per GPU"
run memory train --scenario scenarios/memory_llama3_70b_dgx_h100x8.json
section "4. 70B serving on 2xA100-80GB in fp16: how much KV cache is left?"
run memory serve --scenario scenarios/memory_llama2_70b_2xa100.json --batch 16 --context 4096
section "5. The best way to train LLaMA-3-70B on 64 H100s (15T tokens)"
run plan train --scenario scenarios/plan_llama3_70b_64xh100.json --tokens 15e12 --top 5 --explain
section "6. How many H100s to serve LLaMA-3-8B at 20 requests/s (2000 in, 500 out) within TTFT 1 s and TPOT 50 ms?"
run plan serve --model llama3-8b --gpu h100-sxm5-80gb --rate 20 --isl 2000 --osl 500 --ttft-ms 1000 --tpot-ms 50 --tp 1,2,4
section "7. A report to hand on: the 70B training run as one self-contained HTML page"
case "$build" in /*) out_dir=$build ;; *) out_dir=$here/$build ;; esac
report="$out_dir/llama2-70b-report.html"
run report --scenario scenarios/train_llama2_70b_64xh100.json --out "$report"
echo
echo "Open it in a browser (it needs no network): $report"
