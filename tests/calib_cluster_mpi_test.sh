#!/usr/bin/env bash
# The multi-process calibration's launcher path with 2-4 MPI ranks on one machine: bootstrap,
# rank facts, phases (inter-node ones on emulated nodes), agreement, gathering and the profile,
# and the bad launches (missing ranks, mismatched GPU models, a rank failing or dying mid-sweep)
# that must end with a message naming the rank and no profile. Without a GPU the NCCL transport
# is skipped (said below) and the sweeps run with --transport host (MPI on host memory).
# Run by ctest with MPIRUN and CALIBRATE_MPI (and CALIBRATE, when the CUDA build made it).
set -u
: "${MPIRUN:?}" "${CALIBRATE_MPI:?}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Containers without a usable network interface or shared-memory naming: keep OpenMPI on loopback.
export OMPI_MCA_btl=self,vader,tcp OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
small=(--transport host --max-bytes 256KiB --size-factor 4)

mpi() { local n=$1; shift; "$MPIRUN" --oversubscribe -np "$n" "$@"; }

# check RC NEEDLE OUTFILE|- -- CMD...: runs CMD, checks the exit code, that the output contains
# NEEDLE, and that OUTFILE exists (rc 0) or does not (rc != 0), with no temporary left.
check() {
  local rc=$1 needle=$2 file=$3
  shift 4
  local out got
  out=$("$@" 2>&1)
  got=$?
  local what="$*"
  what=${what#"$MPIRUN --oversubscribe "}
  what=${what:0:160}
  if [ "$got" != "$rc" ]; then
    echo "FAIL: $what -> exit $got, expected $rc"; echo "$out" | tail -8; fails=$((fails + 1)); return
  fi
  if ! grep -qF -- "$needle" <<<"$out"; then
    echo "FAIL: $what -> output lacks: $needle"; echo "$out" | tail -8; fails=$((fails + 1)); return
  fi
  if [ "$file" != "-" ]; then
    if [ "$rc" = 0 ] && [ ! -s "$file" ]; then echo "FAIL: $what -> no $file"; fails=$((fails + 1)); return; fi
    if [ "$rc" != 0 ] && [ -e "$file" ]; then echo "FAIL: $what -> a profile was written"; fails=$((fails + 1)); return; fi
    if [ -e "$file.tmp" ]; then echo "FAIL: $what -> $file.tmp left behind"; fails=$((fails + 1)); return; fi
  fi
  echo "ok: $what"
}

# has FILE NEEDLE...: every NEEDLE occurs in FILE.
has() {
  local f=$1; shift
  for n in "$@"; do
    if ! grep -qF -- "$n" "$f"; then echo "FAIL: $f lacks $n"; fails=$((fails + 1)); return; fi
  done
  echo "ok: $(basename "$f") has $*"
}

if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
  gpu=1
else
  gpu=0
  echo "calib_cluster_mpi: no GPU here: the NCCL transport is skipped; the launcher path runs with --transport host"
fi

# Two ranks, one node.
check 0 "cluster profile written" "$tmp/p2.json" -- mpi 2 "$CALIBRATE_MPI" comm --out "$tmp/p2.json" "${small[@]}"
has "$tmp/p2.json" '"schema": "infraplan-cluster-profile/1"' '"transport": "host-mpi"' '"phase": "intra-2"' \
  '"op": "all_reduce"' '"op": "alltoall"' '"op": "sendrecv"' '"busbw_GBps"' '"launcher": "mpirun (OpenMPI)"'

# Four ranks as two emulated nodes of two: intra, one-per-node (rail), full-node and cross-rail phases.
check 0 "inter-2-cross-rail" "$tmp/p4.json" -- mpi 4 -x INFRAPLAN_CALIB_EMULATE_NODES=2 "$CALIBRATE_MPI" comm \
  --out "$tmp/p4.json" "${small[@]}"
has "$tmp/p4.json" '"phase": "intra-2"' '"phase": "inter-2-rail"' '"phase": "inter-2-full"' \
  '"phase": "inter-2-cross-rail"' '"emulated_nodes": true' '"groups": 2'

# Three ranks: groups of 2 and of all 3.
check 0 "intra-3" "$tmp/p3.json" -- mpi 3 "$CALIBRATE_MPI" comm --out "$tmp/p3.json" "${small[@]}" --ops all_reduce,all_gather
has "$tmp/p3.json" '"phase": "intra-2"' '"phase": "intra-3"'

# Mismatched GPU models across ranks: the message names the rank; no profile.
check 1 "rank 1 (" "$tmp/bad1.json" -- mpi 2 -x "INFRAPLAN_CALIB_FAULT=rank=1,device=NVIDIA H100 80GB HBM3" \
  "$CALIBRATE_MPI" comm --out "$tmp/bad1.json" "${small[@]}"
check 1 "GPU models differ across ranks" "$tmp/bad1.json" -- mpi 2 \
  -x "INFRAPLAN_CALIB_FAULT=rank=1,device=NVIDIA H100 80GB HBM3" "$CALIBRATE_MPI" comm --out "$tmp/bad1.json" "${small[@]}"

# A rank failing mid-sweep: every rank stops; rank 0 names the failed rank, its host and the call.
check 1 "rank 2 (host" "$tmp/bad2.json" -- mpi 4 -x INFRAPLAN_CALIB_FAULT=rank=2,fail=all_gather@1KiB \
  "$CALIBRATE_MPI" comm --out "$tmp/bad2.json" "${small[@]}"
check 1 "injected failure (INFRAPLAN_CALIB_FAULT) (all_gather of 2048 B)" "$tmp/bad2.json" -- mpi 4 \
  -x INFRAPLAN_CALIB_FAULT=rank=2,fail=all_gather@1KiB "$CALIBRATE_MPI" comm --out "$tmp/bad2.json" "${small[@]}"

# A rank's process killed mid-sweep (a node lost): mpirun ends the job naming the rank; no profile.
check_dies() {
  local out got
  out=$(mpi 3 -x INFRAPLAN_CALIB_FAULT=rank=1,exit=reduce_scatter "$CALIBRATE_MPI" comm --out "$tmp/bad3.json" \
    "${small[@]}" 2>&1)
  got=$?
  if [ "$got" = 0 ] || [ -e "$tmp/bad3.json" ] || [ -e "$tmp/bad3.json.tmp" ] || ! grep -qF "process rank 1 " <<<"$out"; then
    echo "FAIL: a dying rank -> exit $got"; echo "$out" | tail -8; fails=$((fails + 1))
  else
    echo "ok: a dying rank ends the job (exit $got), named by the launcher, no profile"
  fi
}
check_dies

# Missing ranks: srun started 4 tasks but the MPI library did not join them (each a world of one).
check 1 "ranks are missing" "$tmp/bad4.json" -- env SLURM_PROCID=0 SLURM_STEP_ID=7 SLURM_NTASKS=4 SLURM_LOCALID=0 \
  "$CALIBRATE_MPI" comm --out "$tmp/bad4.json" "${small[@]}"
check 1 "SLURM_NTASKS=4" "$tmp/bad4.json" -- env SLURM_PROCID=0 SLURM_STEP_ID=7 SLURM_NTASKS=4 SLURM_LOCALID=0 \
  "$CALIBRATE_MPI" comm --out "$tmp/bad4.json" "${small[@]}"

# Bad arguments: exit 2 naming the flag.
check 2 "--transport=tcp is invalid" - -- "$CALIBRATE_MPI" comm --out "$tmp/x.json" --transport tcp
check 2 "--out FILE.json is required" - -- "$CALIBRATE_MPI" comm --transport host
check 2 "unknown collective 'all_reduse'" - -- "$CALIBRATE_MPI" comm --out "$tmp/x.json" --transport host --ops all_reduse

# The login-node entry point end to end through mpirun (host transport: no single-GPU step).
if [ -n "${INFRAPLAN:-}" ] && [ -x "${INFRAPLAN:-}" ]; then
  check 0 "[calibrate cluster] step 2/2: merge" "$tmp/cc.json" -- "$INFRAPLAN" calibrate cluster --launcher mpirun \
    --gpus-per-node 2 --transport host --max-bytes 64KiB --launcher-args --oversubscribe --out "$tmp/cc.json"
  has "$tmp/cc.json" '"transport": "host-mpi"' '"phase": "intra-2"'
fi

# The CUDA build's infraplan-calibrate hands `comm` over under a launcher (and needs no MPI itself).
if [ -n "${CALIBRATE:-}" ] && [ -x "${CALIBRATE:-}" ]; then
  # Bad values of the layout run's options are refused before any GPU work.
  check 2 "--hold-ms abc: expected 0 … 1000" - -- "$CALIBRATE" layouts --out "$tmp/l.json" --hold-ms abc
  check 2 "--hold-ms 5000: expected 0 … 1000" - -- "$CALIBRATE" layouts --out "$tmp/l.json" --hold-ms 5000
  check 2 "--seed -3: expected a non-negative integer" - -- "$CALIBRATE" layouts --out "$tmp/l.json" --seed -3
  check 0 "cluster profile written" "$tmp/h2.json" -- mpi 2 "$CALIBRATE" comm --out "$tmp/h2.json" "${small[@]}"
  if [ "$gpu" = 1 ]; then
    check 0 "cluster profile written" "$tmp/n1.json" -- mpi 1 "$CALIBRATE" comm --out "$tmp/n1.json" --quick
  fi
fi

if [ "$fails" -gt 0 ]; then
  echo "$fails check(s) failed"
  exit 1
fi
echo "all multi-process calibration checks passed"
