#!/usr/bin/env bash
# Builds infraplan and runs every test (ctest). On a fresh Debian 12 machine it first installs
# the packages it needs (scripts/setup-deps.sh). GPU tests skip themselves when no GPU is present.
#   scripts/test.sh            # build in ./build and run all tests
#   BUILD_DIR=out scripts/test.sh
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
build=${BUILD_DIR:-build}
jobs=${JOBS:-$(nproc 2>/dev/null || echo 2)}

scripts/setup-deps.sh
if [ -d /usr/local/cuda/bin ] && ! command -v nvcc >/dev/null 2>&1; then
  export PATH="/usr/local/cuda/bin:$PATH"
fi
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo ${CMAKE_ARGS:-}
cmake --build "$build" -j "$jobs"
ctest --test-dir "$build" --output-on-failure -j "$jobs" --timeout 300
