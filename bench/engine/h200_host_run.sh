#!/usr/bin/env bash
# Launch-gap ceilings (three runs), the host-time calibration scenario (graphs on, then eager),
# then every bench scenario through validate serve (h200_run.sh without tests and step timings).
set -u
cd "$(dirname "$0")"
OUT=${OUT:-$PWD/out}; mkdir -p "$OUT"
tar xzf lib.tgz; export LD_LIBRARY_PATH=$PWD/lib:${LD_LIBRARY_PATH:-}
for i in ${LAUNCH_RUNS:-1 2 3}; do echo "=== launch $i $(date -u +%T)"; timeout 60 bin/infraplan-calibrate --only launch > "$OUT/launch_$i.txt" 2>&1; tail -12 "$OUT/launch_$i.txt"; done
echo "=== calib host $(date -u +%T)"
timeout 150 bin/infraplan-bench serve --scenario scenarios/calib_host_llama2_7b_h200.json --json-out "$OUT/calib_host.json" --steps "$OUT/calib_host_steps.csv" --requests "$OUT/calib_host_requests.csv" 2>&1 | tail -8
echo "=== calib host eager $(date -u +%T)"
timeout 150 bin/infraplan-bench serve --scenario scenarios/calib_host_llama2_7b_h200.json --no-graphs --json-out "$OUT/calib_host_eager.json" --steps "$OUT/calib_host_eager_steps.csv" 2>&1 | tail -8
SKIP_TESTS=1 MODELS=" " OUT="$OUT" ./h200_run.sh > /dev/null 2>&1
grep -h "===" "$OUT/run.log" | tail -3
echo "=== done $(date -u +%T)"
