#!/usr/bin/env bash
# The ASan + UBSan suite inside a time box, for CI: builds the sanitizer configuration of
# scripts/test.sh --sanitize (clang, Debug at -O1, -fno-sanitize-recover=all, libFuzzer coverage)
# target by target in a fixed order and runs every test that was built, two at a time, until the
# deadline; then, with the time left, builds the libFuzzer targets and runs each on its seed corpus
# (scripts/fuzz.sh, up to FUZZ_SECONDS = 120 s per target, at least 20 s or not at all).
#   scripts/sanitize-boxed.sh DEADLINE_EPOCH_SECONDS      BUILD_DIR=build-sanitize by default
# Any sanitizer report, failed test, test that outlives its own 1,800 s limit or fuzz finding fails
# the script.
# Tests still running at the deadline, and tests or targets the box did not reach, are listed as
# not reached (the script then still exits 0): the box bounds the time, never the verdict on what
# ran. docs/reliability.md gives the timings.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
if [ $# -ne 1 ] || ! [[ "$1" =~ ^[0-9]+$ ]]; then
  echo "usage: scripts/sanitize-boxed.sh DEADLINE (seconds since the epoch, e.g. \$(( \$(date +%s) + 3600 )))" >&2
  exit 2
fi
deadline=$1
build=${BUILD_DIR:-build-sanitize}
jobs=${JOBS:-$(nproc 2>/dev/null || echo 2)}
per_test_limit=1800
left() { echo $(( deadline - $(date +%s) )); }
say() { echo "sanitize-boxed: $*"; }

if [ "$(left)" -le 60 ]; then
  say "no time left in the box ($(left) s): nothing built or run"
  exit 0
fi

cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Debug \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  "-DCMAKE_CXX_FLAGS_DEBUG=-O1 -gline-tables-only" \
  -DINFRAPLAN_SANITIZE=ON -DINFRAPLAN_FUZZ=ON -DINFRAPLAN_WERROR=OFF \
  -DINFRAPLAN_WITH_GUI=OFF -DINFRAPLAN_WITH_CUDA=OFF -DINFRAPLAN_BUILD_BENCH=OFF >/dev/null

# Order: the programs the script tests drive first (the CLI, hostile-input and multi-process
# calibration tests), then the suites from the input layers inward, the long simulations last.
targets=(infraplan infraplan-calibrate-mpi common_tests model_tests fuzz_regression_tests strategies_tests hardware_tests
         collectives_tests report_tests profiler_trace_tests calib_cluster_tests calib_kernels_tests
         engine_host_tests planner_tests simulator_tests training_sim_tests)
all=$(ninja -C "$build" -t targets all 2>/dev/null | sed -n 's/^\([A-Za-z0-9_-]*\): phony$/\1/p')
built=()
not_built=()
for t in "${targets[@]}"; do
  if ! grep -qx "$t" <<<"$all"; then continue; fi  # not in this configuration (e.g. no MPI)
  if [ "$(left)" -le 60 ]; then not_built+=("$t"); continue; fi
  if timeout --kill-after=30 "$(( $(left) - 30 ))" cmake --build "$build" -j "$jobs" --target "$t" >"$build/build-$t.log" 2>&1; then
    built+=("$t")
  else
    rc=$?
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
      not_built+=("$t")
    else
      tail -40 "$build/build-$t.log"
      say "building $t failed"
      exit 1
    fi
  fi
done
say "built ${#built[@]} targets (${built[*]}), $(left) s left"
[ ${#not_built[@]} -gt 0 ] && say "not built within the box: ${not_built[*]}"

if [ "$(left)" -le 60 ]; then
  say "no time left to run tests"
  exit 0
fi

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:detect_stack_use_after_return=1}
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$here/scripts/lsan.supp:print_suppressions=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
stop=$(date -d "@$(( deadline - 15 ))" +%H:%M:%S)
log="$build/ctest-boxed.log"
set +e
# Tests of targets not built are named <target>_NOT_BUILT by gtest_discover_tests; the CLI scripts
# need the infraplan binary, built first.
ctest --test-dir "$build" -j "$jobs" --timeout "$per_test_limit" --stop-time "$stop" \
  --output-on-failure -E '_NOT_BUILT' 2>&1 | tee "$log"
set -e
total=$(sed -n 's/.* tests failed out of \([0-9]*\)$/\1/p; s/^100% tests passed, 0 tests failed out of \([0-9]*\)$/\1/p' "$log" | tail -1)
stopped=0
grep -q "The stop time has been passed" "$log" && stopped=1
failed=0
box=0
while IFS= read -r line; do
  # "   12 - Suite.Name (Failed)" / "(Timeout)" / "(SEGFAULT)" / "(Subprocess aborted)" ...
  name=$(sed -n 's/^[[:space:]]*[0-9]* - \(.*\) (\(.*\))$/\1/p' <<<"$line")
  why=$(sed -n 's/^[[:space:]]*[0-9]* - \(.*\) (\(.*\))$/\2/p' <<<"$line")
  [ -z "$name" ] && continue
  if [ "$why" = "Timeout" ] && [ "$stopped" = 1 ]; then
    # Cut by the box unless it ran its whole own limit.
    secs=$(grep -F ": $name " "$log" | sed -n 's/.*\*\*\*Timeout *\([0-9.]*\) sec.*/\1/p' | tail -1)
    if [ -n "$secs" ] && [ "${secs%.*}" -lt "$per_test_limit" ]; then box=$((box + 1)); continue; fi
  fi
  failed=$((failed + 1))
  say "FAILED: $name ($why)"
done < <(sed -n '/The following tests FAILED:/,$p' "$log")
say "ran ${total:-0} tests; $failed failed; $box cut by the box$([ "$stopped" = 1 ] && echo "; the box ended before the rest started")"
[ "$failed" -eq 0 ] || exit 1

# Timed mutation fuzzing with what is left: the five targets' build (one small source each, then a
# link) and FUZZ_SECONDS per target (default 120), shortened to fit; under 20 s each it is skipped.
fuzzers=(fuzz_scenario fuzz_hf_config fuzz_profile fuzz_trace fuzz_cli_args)
if [ "$(left)" -le 300 ]; then
  say "no time left to fuzz ($(left) s): fuzz targets not run"
  exit 0
fi
set +e
timeout --kill-after=30 "$(( $(left) - 200 ))" cmake --build "$build" -j "$jobs" --target "${fuzzers[@]}" \
  >"$build/build-fuzz.log" 2>&1
rc=$?
set -e
if [ "$rc" -ne 0 ]; then
  if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then say "fuzz targets not built within the box"; exit 0; fi
  tail -40 "$build/build-fuzz.log"
  say "building the fuzz targets failed"
  exit 1
fi
each=$(( ($(left) - 60) / ${#fuzzers[@]} - 10 ))
[ "$each" -gt "${FUZZ_SECONDS:-120}" ] && each=${FUZZ_SECONDS:-120}
if [ "$each" -lt 20 ]; then
  say "fuzz targets built, $(left) s left: under 20 s per target, not run"
  exit 0
fi
say "fuzzing each of ${#fuzzers[@]} targets for $each s"
FUZZ_BUILD="$build" scripts/fuzz.sh "$each" "${fuzzers[@]}"
say "fuzzing: no finding"

