#!/usr/bin/env bash
# Run from a folder holding probe_common.sh (bench/calib/), llama_exact.json
# (bench/calib/llama_gemm_shapes.py --tokens 256,512,1024,2048,4096,8192),
# bench/pytorch/gemm_layouts.py and bench/pytorch/gemm_hold.py. One machine start: the LLaMA-shape
# GEMMs through PyTorch in the listed order, then twelve of them held alone after rest, nvidia-smi
# every 100 ms beside both (docs/accuracy.md, "Heavy shapes held alone").
PROBE_SMI_MS=100 source "$(dirname "$0")/probe_common.sh"
PYTHONUNBUFFERED=1 timeout 90 python3 gemm_layouts.py --shapes llama_exact.json --out "$OUT/torch_listed.json" > /dev/null
SH=tn:1024x64128x4096,nn:1024x8192x28672,nt:64128x8192x256,nn:256x8192x128256,tn:8192x9472x3584,tn:256x128256x8192,nn:1024x3584x152064,tn:2048x9472x3584,nn:512x3584x9472,tn:8192x8192x8192,tn:4096x4096x4096,tn:256x12288x4096
PYTHONUNBUFFERED=1 timeout 150 python3 gemm_hold.py --shapes $SH --out "$OUT/hold.json" --rest-s 1 --hold-s 3
probe_end
