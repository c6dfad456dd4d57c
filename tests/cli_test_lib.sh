# Sourced by the CLI end-to-end checks (cli_test.sh, capacity_cli_test.sh): the binary (INFRAPLAN,
# default build/bin/infraplan), a temporary folder removed on exit, a failure count and the checks.
set -u
bin=${INFRAPLAN:-build/bin/infraplan}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0

# expect RC NEEDLE -- ARGS...: runs infraplan ARGS, checks the exit code and that stdout+stderr
# contains NEEDLE.
expect() {
  local rc=$1 needle=$2
  shift 3
  local out got
  out=$("$bin" "$@" 2>&1)
  got=$?
  if [ "$got" != "$rc" ]; then
    echo "FAIL: infraplan $* -> exit $got, expected $rc"; echo "$out" | head -5; fails=$((fails + 1)); return
  fi
  if ! grep -qF -- "$needle" <<<"$out"; then
    echo "FAIL: infraplan $* -> output lacks: $needle"; echo "$out" | head -5; fails=$((fails + 1)); return
  fi
  echo "ok: infraplan $*"
}

# json_check FILE PYTHON-EXPR: the expression over `d` (the parsed JSON) must be true.
json_check() {
  if ! python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert $2, 'false'" "$1" 2>"$tmp/err"; then
    echo "FAIL: $2"; head -3 "$tmp/err"; fails=$((fails + 1)); return
  fi
  echo "ok: $2"
}
