# Sourced by the device probes (order_probe_device.sh, hold_probe_device.sh, held_probe_device.sh):
# output under $OUT (default ./out), the console also in $OUT/log.txt, the GPU named, nvidia-smi's
# clock, power and temperature every PROBE_SMI_MS (default 200) ms in $OUT/smi.csv until probe_end,
# and `step NAME` stamping when each part starts.
set -u
OUT=${OUT:-out}; mkdir -p "$OUT"
exec > >(tee "$OUT/log.txt") 2>&1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.sm,power.limit,temperature.gpu --format=csv
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_event_reasons.active --format=csv \
  -lms "${PROBE_SMI_MS:-200}" > "$OUT/smi.csv" &
PROBE_SMI_PID=$!
PROBE_T0=$(date +%s)
step() { echo "[probe] $1 start at $(( $(date +%s) - PROBE_T0 )) s"; }
probe_end() { step done; kill "$PROBE_SMI_PID"; wait "$PROBE_SMI_PID" 2>/dev/null; }
