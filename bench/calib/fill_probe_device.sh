#!/usr/bin/env bash
# Run from a folder holding probe_common.sh (bench/calib/), infraplan-calibrate, gemm_layouts.py
# (bench/pytorch/) and llama_exact.json (bench/calib/llama_gemm_shapes.py --tokens
# 256,512,1024,2048,4096,8192). One machine start: does the operands' distribution move a GEMM's
# time? The same LLaMA-shape GEMMs with normal (torch.randn) and with uniform ±1 operands (the
# calibrator's), each pair in A-B-B-A sequence so that drift and what ran before cancel:
#   short  PyTorch graph replays, ~2 ms per shape, every shape in listed order;
#   held   PyTorch held 30 ms per shape (2,048 and 8,192 tokens), the SM clock read per shape;
#   cal    the calibrator (cublasGemmEx, listed order, no grid) with --fill uniform / normal.
# docs/accuracy.md, "Does the operands' distribution move the clock?"; summary:
# bench/calib/fill_probe_summary.py.
# With SNAPSHOT=FILE.tgz set, OUT is packed into FILE after every run (what a cut-short call keeps).
source "$(dirname "$0")/probe_common.sh"
snapshot() { [ -n "${SNAPSHOT:-}" ] && tar czf "$SNAPSHOT" -C "$(dirname "$OUT")" "$(basename "$OUT")"; return 0; }
torch_run() {  # NAME FILL [extra gemm_layouts.py arguments]
  local name=$1 fill=$2; shift 2
  step "$name"
  PYTHONUNBUFFERED=1 timeout 90 python3 gemm_layouts.py --shapes llama_exact.json --fill "$fill" \
    --out "$OUT/$name.json" "$@" > /dev/null || echo "$name rc=$?"
  snapshot
}
cal_run() {  # NAME FILL
  step "$1"
  timeout 90 ./infraplan-calibrate layouts --out "$OUT/$1.json" --shapes llama_exact.json --api cublas \
    --no-grid --order listed --fill "$2" >> "$OUT/cal_log.txt" 2>&1 || echo "$1 rc=$?"
  snapshot
}
torch_run short_randn_a randn
torch_run short_uniform_a uniform
torch_run short_uniform_b uniform
torch_run short_randn_b randn
torch_run held_randn_a randn --tokens 2048,8192 --hold-ms 30
torch_run held_uniform_a uniform --tokens 2048,8192 --hold-ms 30
torch_run held_uniform_b uniform --tokens 2048,8192 --hold-ms 30
torch_run held_randn_b randn --tokens 2048,8192 --hold-ms 30
cal_run cal_uniform_a uniform
cal_run cal_normal_a normal
cal_run cal_normal_b normal
cal_run cal_uniform_b uniform
probe_end
snapshot
