# Sourced by h200_fp8_run.sh and h200_fp8kv_run.sh (kept next to them): output under $OUT (default
# ./out), bin.tgz / lib.tgz unpacked, the libraries found, `stage NAME` stamping each part in run.log
# and refreshing results.tgz from the results folder $res, the GPU named and nvidia-smi's clock,
# power and temperature every 250 ms in smi.csv (stopped by fp8_run_end), then every GPU test
# (timeout GPU_TESTS_TIMEOUT s, default 240) into gpu_tests.txt with its exit status in run.log.
set -u
cd "$(dirname "$0")"
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
res=$(mktemp -d)
[ -f bin.tgz ] && { rm -rf bin; tar xzf bin.tgz; }
[ -f lib.tgz ] && [ ! -d lib ] && tar xzf lib.tgz
export LD_LIBRARY_PATH=$PWD/lib:/usr/local/cuda/targets/x86_64-linux/lib:${LD_LIBRARY_PATH:-}
export CUBLASLT_LOG_LEVEL=${CUBLASLT_LOG_LEVEL:-1}  # cuBLASLt prints the reason of any failing call
log="$OUT/run.log"
stage() {
  tar czf "$OUT/results.tgz" -C "$res" .
  echo "=== $* ($(date -u '+%F %T') UTC)" | tee -a "$log"
}
fp8_run_end() {
  kill "$smi"
  stage "done"
}

stage "device"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw,power.limit,memory.used \
  --format=csv 2>&1 | tee -a "$log"
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu --format=csv,noheader -lms 250 > "$res/smi.csv" 2>&1 &
smi=$!
stage "GPU tests"
timeout "${GPU_TESTS_TIMEOUT:-240}" bin/engine_gpu_tests > "$OUT/gpu_tests.txt" 2>&1
echo "rc $?" | tee -a "$log"
