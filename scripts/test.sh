#!/usr/bin/env bash
# Builds infraplan and runs every test (ctest). On a fresh Debian 12 machine it first installs
# the packages it needs (scripts/setup-deps.sh). GPU tests skip themselves when no GPU is present.
#   scripts/test.sh                 # build in ./build and run all tests
#   BUILD_DIR=out scripts/test.sh
#   scripts/test.sh --sanitize      # clang with ASan + UBSan in ./build-sanitize (no GUI, bench or
#                                   # CUDA targets), every test, then each libFuzzer target for
#                                   # FUZZ_SECONDS (default 60) on its seed corpus
#   scripts/test.sh --tsan          # clang with ThreadSanitizer in ./build-tsan: the threaded
#                                   # planner's tests (planner_tests)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
jobs=${JOBS:-$(nproc 2>/dev/null || echo 2)}

sanitize=0
tsan=0
for arg in "$@"; do
  case "$arg" in
    --sanitize) sanitize=1 ;;
    --tsan) tsan=1 ;;
    *) echo "usage: scripts/test.sh [--sanitize | --tsan]" >&2; exit 2 ;;
  esac
done

scripts/setup-deps.sh
if [ -d /usr/local/cuda/bin ] && ! command -v nvcc >/dev/null 2>&1; then
  export PATH="/usr/local/cuda/bin:$PATH"
fi

if [ "$tsan" = 1 ]; then
  build=${BUILD_DIR:-build-tsan}
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Debug \
    -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
    "-DCMAKE_CXX_FLAGS_DEBUG=-O1 -gline-tables-only" \
    -DINFRAPLAN_TSAN=ON -DINFRAPLAN_WERROR=OFF -DINFRAPLAN_WITH_GUI=OFF -DINFRAPLAN_WITH_CUDA=OFF \
    -DINFRAPLAN_WITH_MPI=OFF -DINFRAPLAN_BUILD_BENCH=OFF ${CMAKE_ARGS:-}
  cmake --build "$build" -j "$jobs" --target planner_tests infraplan
  export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1}
  "$build/bin/planner_tests"
  exit 0
fi
if [ "$sanitize" = 1 ]; then
  build=${BUILD_DIR:-build-sanitize}
  # -O1 keeps the sanitized tests fast enough; line tables give readable reports. Debug keeps
  # asserts and the serving engine's per-step invariant checks on.
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Debug \
    -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
    "-DCMAKE_CXX_FLAGS_DEBUG=-O1 -gline-tables-only" \
    -DINFRAPLAN_SANITIZE=ON -DINFRAPLAN_FUZZ=ON -DINFRAPLAN_WERROR=OFF \
    -DINFRAPLAN_WITH_GUI=OFF -DINFRAPLAN_WITH_CUDA=OFF -DINFRAPLAN_BUILD_BENCH=OFF ${CMAKE_ARGS:-}
  cmake --build "$build" -j "$jobs"
  export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:detect_stack_use_after_return=1}
  export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$here/scripts/lsan.supp:print_suppressions=0}
  export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
  ctest --test-dir "$build" --output-on-failure -j "$jobs" --timeout 900
  FUZZ_BUILD="$build" scripts/fuzz.sh "${FUZZ_SECONDS:-60}"
  exit 0
fi

build=${BUILD_DIR:-build}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo ${CMAKE_ARGS:-}
cmake --build "$build" -j "$jobs"
ctest --test-dir "$build" --output-on-failure -j "$jobs" --timeout 300
