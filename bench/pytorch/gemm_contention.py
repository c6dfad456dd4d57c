#!/usr/bin/env python3
"""GEMM slowdown while communication-like kernels share the GPU (calibration data for the
training simulator's compute/communication overlap).

NCCL runs its collectives as a few thread blocks per channel that stream data through HBM (and
NVLink) while the compute stream keeps running GEMMs. On one GPU this measures what such a
neighbour costs the GEMM: a persistent Triton copy kernel on a second stream holds `blocks` SMs
(one program per SM, looping over a buffer several times the L2), and bf16 GEMMs of transformer
shapes run on the main stream meanwhile. Reported: median GEMM time alone, median GEMM time under
the neighbour, their ratio, and the neighbour's own copy bandwidth.

    python3 bench/pytorch/gemm_contention.py --out contention.json
    python3 bench/pytorch/gemm_contention.py --merge docs/data/h200_gemm_contention.json \
        hardware/profiles/h200-sxm-141gb.json

--merge writes the profile's "contention" section: the median slowdown over the measured shapes
with the neighbour on NCCL-like block counts (16 and 24: NCCL runs one block per channel, 16-32
channels on NVLink machines).
"""
import argparse
import datetime
import json
import statistics
import sys

try:  # --merge needs neither (it runs where the profile is edited)
    import torch
    import triton
    import triton.language as tl
except ImportError:
    torch = None

if torch is not None:
    @triton.jit
    def persistent_copy(src, dst, n, loops, BLOCK: tl.constexpr):
        pid = tl.program_id(0)
        nprog = tl.num_programs(0)
        for _ in range(loops):
            for start in range(pid * BLOCK, n, nprog * BLOCK):
                offs = start + tl.arange(0, BLOCK)
                m = offs < n
                tl.store(dst + offs, tl.load(src + offs, mask=m), mask=m)


SHAPES = [  # (m, n, k): GPT-3 175B layers at TP 8 (2048 tokens), LLaMA-70B at TP 8 (4096 tokens), square
    (2048, 4608, 12288), (2048, 12288, 1536), (2048, 6144, 12288), (2048, 12288, 6144),
    (4096, 1280, 8192), (4096, 8192, 1024), (4096, 7168, 8192), (4096, 8192, 3584),
    (8192, 8192, 8192),
]
BLOCKS = [0, 8, 16, 24, 32]


def time_gemms(a_list, b_list, reps):
    out = []
    for i in range(reps):
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        torch.matmul(a_list[i % len(a_list)], b_list[i % len(b_list)])
        e1.record()
        out.append((e0, e1))
    return out


NCCL_LIKE_BLOCKS = ("16", "24")


def merge(data_path, profile_path):
    data = json.load(open(data_path))
    prof = json.load(open(profile_path))
    if data["gpu"] != prof["device"]["name"]:
        sys.exit(f"{data_path}: measured on '{data['gpu']}', the profile is for '{prof['device']['name']}'")
    ratios = [r["by_blocks"][b]["slowdown"] for r in data["rows"] for b in NCCL_LIKE_BLOCKS
              if r["by_blocks"][b]["neighbour_outlasted_gemms"]]
    if not ratios:
        sys.exit(f"{data_path}: no usable row")
    prof["contention"] = {
        "gemm_slowdown_under_comm": statistics.median(ratios),
        "range": [min(ratios), max(ratios)],
        "blocks": [int(b) for b in NCCL_LIKE_BLOCKS],
        "source": data_path, "date": data["date"], "command": data["command"],
        "method": "median over GEMM shapes of bf16 GEMM time beside / alone, the neighbour a persistent copy "
                  "kernel on another stream holding as many SMs as NCCL's channels"}
    with open(profile_path, "w") as f:
        json.dump(prof, f, indent=1)
        f.write("\n")
    print(f"{profile_path}: contention.gemm_slowdown_under_comm = {statistics.median(ratios):.3f} "
          f"(range {min(ratios):.3f}-{max(ratios):.3f}, n={len(ratios)})")


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--merge":
        merge(sys.argv[2], sys.argv[3])
        return
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--reps", type=int, default=30)
    args = ap.parse_args()
    dev = torch.device("cuda")
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    buf_elems = 256 << 20  # 512 MiB of bf16 per buffer
    src = torch.randn(buf_elems, device=dev, dtype=torch.bfloat16)
    dst = torch.empty_like(src)
    side = torch.cuda.Stream()
    rows = []
    for (m, n, k) in SHAPES:
        g = torch.Generator(device=dev).manual_seed(m * 31 + n * 7 + k)
        copies = max(2, min(8, int(3 * 60e6 // ((m * k + k * n) * 2)) + 1))
        a_list = [torch.randn(m, k, device=dev, dtype=torch.bfloat16, generator=g) for _ in range(copies)]
        b_list = [torch.randn(k, n, device=dev, dtype=torch.bfloat16, generator=g) for _ in range(copies)]
        for _ in range(5):
            torch.matmul(a_list[0], b_list[0])
        torch.cuda.synchronize()
        row = {"m": m, "n": n, "k": k, "by_blocks": {}}
        for blocks in BLOCKS:
            copy_gbps = None
            if blocks:
                # Long enough to cover every timed GEMM: loops sized from an alone-time estimate.
                est = 2.0 * m * n * k / 600e12 * args.reps * 2 + 5e-3
                loops = max(2, int(est * 2.5e12 / (buf_elems * 4)) + 2)
                c0, c1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                with torch.cuda.stream(side):
                    c0.record(side)
                    persistent_copy[(blocks,)](src, dst, buf_elems, loops, BLOCK=4096)
                    c1.record(side)
                # Let the neighbour start before the GEMMs queue up.
                torch.cuda._sleep(2_000_000)
            evs = time_gemms(a_list, b_list, args.reps)
            torch.cuda.synchronize()
            t = [e0.elapsed_time(e1) / 1e3 for e0, e1 in evs]
            if blocks:
                copy_s = c0.elapsed_time(c1) / 1e3
                copy_gbps = loops * buf_elems * 4 / copy_s / 1e9
                overlap_ok = copy_s > sum(t)
            else:
                overlap_ok = True
            row["by_blocks"][str(blocks)] = {"median_s": statistics.median(t[3:]), "neighbour_copy_GBps": copy_gbps,
                                             "neighbour_outlasted_gemms": overlap_ok}
        alone = row["by_blocks"]["0"]["median_s"]
        for b in BLOCKS[1:]:
            row["by_blocks"][str(b)]["slowdown"] = row["by_blocks"][str(b)]["median_s"] / alone
        rows.append(row)
        print(f"{m:5d}x{n:5d}x{k:5d} alone {alone*1e6:8.1f} us " +
              " ".join(f"b{b}:{row['by_blocks'][str(b)]['slowdown']:.3f}" for b in BLOCKS[1:]), flush=True)
    out = {"what": "bf16 GEMM time alone and beside a persistent copy kernel holding N SMs on another stream",
           "command": "python3 bench/pytorch/gemm_contention.py " + " ".join(sys.argv[1:]),
           "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
           "gpu": torch.cuda.get_device_name(0), "sms": sms, "torch_version": torch.__version__, "rows": rows}
    with open(args.out, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
