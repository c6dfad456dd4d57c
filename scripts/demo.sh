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
if [ -x "$here/scripts/demo-plan.sh" ]; then
  "$here/scripts/demo-plan.sh" "$ip"
fi
