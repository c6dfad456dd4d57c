#!/usr/bin/env bash
# Report size and write time on big inputs: a 100,000-request serving run and one iteration of a
# 16,384-GPU training job. Runs the simulations once (their time is not the report's), then
# writes each report (HTML and Markdown) REPEAT times from the saved --json and prints the median
# wall time of the whole `infraplan report --from` command and the file size.
#   bench/report/bench_report.sh [build/bin/infraplan] [REPEAT]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${1:-build/bin/infraplan}
repeat=${2:-5}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }

run_case() {
  local name=$1 cmd=$2
  local t0 t1
  t0=$(date +%s.%N)
  "$bin" $cmd --scenario "$here/$name.json" --json >"$out/$name.json"
  t1=$(date +%s.%N)
  printf '%-32s simulation %.1f s, result JSON %s bytes\n' "$name" "$(awk -v a="$t0" -v b="$t1" 'BEGIN {print b - a}')" "$(stat -c %s "$out/$name.json")"
  for fmt in html md; do
    local times=()
    for _ in $(seq "$repeat"); do
      t0=$(date +%s.%N)
      "$bin" report --from "$out/$name.json" --format "$fmt" --out "$out/$name.$fmt" >/dev/null
      t1=$(date +%s.%N)
      times+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN {print b - a}')")
    done
    printf '  report %-4s %9s bytes, median %.3f s over %d runs (max %.3f s)\n' "$fmt" "$(stat -c %s "$out/$name.$fmt")" \
      "$(printf '%s\n' "${times[@]}" | median)" "$repeat" "$(printf '%s\n' "${times[@]}" | sort -n | tail -1)"
  done
}

run_case serve_100k_requests "simulate serve"
run_case train_gpt3_175b_16384xa100 "simulate train"
