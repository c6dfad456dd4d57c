#!/usr/bin/env bash
# Installs the Debian 12 packages infraplan builds against, only those missing. clang and its
# runtime libraries build the sanitizer and libFuzzer targets (scripts/test.sh --sanitize).
# Idempotent: a second run installs nothing. Set INFRAPLAN_NO_GUI=1 to skip Qt6,
# INFRAPLAN_NO_BROWSER=1 to skip chromium (report browser tests).
set -euo pipefail

pkgs=(
  build-essential cmake ninja-build pkg-config
  libsimgrid-dev libboost-graph-dev nlohmann-json3-dev zlib1g-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  clang libclang-rt-14-dev
  openmpi-bin libopenmpi-dev
)
if [ "${INFRAPLAN_NO_GUI:-0}" != "1" ]; then
  pkgs+=(qt6-base-dev qt6-charts-dev libqt6opengl6-dev libgl-dev xvfb xauth)
fi
# Headless browser for the report tests (report/browser_test.cpp renders every report kind).
# Set INFRAPLAN_NO_BROWSER=1 to skip it; those tests then skip with a message.
if [ "${INFRAPLAN_NO_BROWSER:-0}" != "1" ]; then
  pkgs+=(chromium)
fi

missing=()
for p in "${pkgs[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup-deps: all packages present"
  exit 0
fi

echo "setup-deps: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
