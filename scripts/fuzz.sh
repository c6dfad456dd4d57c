#!/usr/bin/env bash
# Runs each libFuzzer target for SECONDS (default 60) on a seed corpus built from the repository
# (scenarios/, hardware/profiles/, scenarios/traces/, fuzz/seeds/). Needs a build with
# -DINFRAPLAN_FUZZ=ON (scripts/test.sh --sanitize makes one in build-sanitize).
#   scripts/fuzz.sh [SECONDS] [TARGET...]       FUZZ_BUILD=build-sanitize by default
# New findings are written to fuzz-findings/<target>/ and make the script fail; each one becomes
# a regression input in fuzz/regressions/<target>/ (run by ctest).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
seconds=${1:-60}
shift || true
build=${FUZZ_BUILD:-build-sanitize}
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(fuzz_scenario fuzz_hf_config fuzz_profile fuzz_trace fuzz_cli_args)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
seed() {  # seed TARGET FILES...
  local t=$1; shift
  mkdir -p "$work/$t"
  for f in "$@"; do [ -f "$f" ] && cp "$f" "$work/$t/$(basename "$f")"; done
  if [ -d "fuzz/seeds/$t" ]; then cp fuzz/seeds/$t/* "$work/$t/" 2>/dev/null || true; fi
  if [ -d "fuzz/regressions/$t" ]; then cp fuzz/regressions/$t/* "$work/$t/" 2>/dev/null || true; fi
}
seed fuzz_scenario scenarios/*.json
seed fuzz_hf_config
seed fuzz_profile hardware/profiles/*.json
seed fuzz_trace
for f in scenarios/traces/*; do  # the trace target takes a mode byte first: 0 CSV, 1 JSONL
  mkdir -p "$work/fuzz_trace"
  { printf '\0'; cat "$f"; } > "$work/fuzz_trace/$(basename "$f")"
done
seed fuzz_cli_args

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$here/scripts/lsan.supp:print_suppressions=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
status=0
for t in "${targets[@]}"; do
  bin="$build/bin/$t"
  [ -x "$bin" ] || { echo "fuzz.sh: $bin not built (configure with -DINFRAPLAN_FUZZ=ON)" >&2; exit 2; }
  max_len=16384
  [ "$t" = fuzz_profile ] && max_len=262144
  mkdir -p "fuzz-findings/$t"
  echo "== $t: ${seconds}s"
  # -rss_limit_mb and -timeout turn memory blow-ups and hangs into findings too.
  if ! "$bin" "$work/$t" -max_total_time="$seconds" -max_len=$max_len -timeout=10 -rss_limit_mb=2048 \
      -artifact_prefix="fuzz-findings/$t/" -print_final_stats=1 2>"$work/$t.log"; then
    echo "fuzz.sh: $t found a problem:" >&2
    tail -40 "$work/$t.log" >&2
    status=1
  else
    grep -E "^(stat::number_of_executed_units|stat::peak_rss_mb|#[0-9]+ *DONE)" "$work/$t.log" || true
  fi
done
exit $status
