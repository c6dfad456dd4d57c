#!/usr/bin/env bash
# Run from a folder holding probe_common.sh (bench/calib/) and infraplan-calibrate. One machine start:
# the calibrator's own power probe (`--only power`, every workload held 3 s) with uniform ±1 and with
# normal GEMM operands, in U-N-N-U sequence so that drift and warming cancel. What it answers: the
# clock a power-capped GEMM keeps with normal operands over uniform ones, on the probe's own
# workloads (docs/accuracy.md, "Does the operands' distribution move the clock?"); summary:
# bench/calib/power_fill_summary.py. With SNAPSHOT=FILE.tgz, OUT is packed after every run.
source "$(dirname "$0")/probe_common.sh"
snapshot() { [ -n "${SNAPSHOT:-}" ] && tar czf "$SNAPSHOT" -C "$(dirname "$OUT")" "$(basename "$OUT")"; return 0; }
power_run() {  # NAME FILL
  step "$1"
  timeout 170 ./infraplan-calibrate --only power --fill "$2" > "$OUT/$1.json" 2>> "$OUT/power_log.txt" ||
    echo "$1 rc=$?"
  snapshot
}
power_run power_uniform_a uniform
power_run power_normal_a normal
power_run power_normal_b normal
power_run power_uniform_b uniform
probe_end
snapshot
