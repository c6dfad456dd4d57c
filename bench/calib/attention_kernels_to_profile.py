#!/usr/bin/env python3
"""Writes the FlashAttention-2 kernels' attention tables (bench/pytorch/attention_backends.py, the
`flash` backend) into a profile: tables.attention_prefill_flash2 (the schema of
tables.attention_prefill, seq_len rows whose first batch column was measured) and
holdout.attention_prefill_flash2 (its held-out shapes, never used by the model). The profile's
default tables (attention_prefill, the backend SDPA picks) are left as they are.

    bench/calib/attention_kernels_to_profile.py PROFILE.json KERNELS.json
"""
import json
import sys

from profile_io import read_profile, write_profile

KEEP = ("kernel", "causal", "head_dim", "heads", "kv_heads")


def measured_rows(table):
    keep = [i for i, row in enumerate(table["seconds"]) if row[0] is not None]
    if not keep:
        return None
    out = {k: table[k] for k in KEEP}
    out["seq_len"] = [table["seq_len"][i] for i in keep]
    out["batch"] = table["batch"]
    out["seconds"] = [table["seconds"][i] for i in keep]
    out["backward_seconds"] = [table["backward_seconds"][i] for i in keep]
    return out


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    profile_path, kernels_path = sys.argv[1:]
    run = json.load(open(kernels_path))
    flash = run.get("backends", {}).get("flash")
    if not flash or not flash.get("tables"):
        sys.exit(f"{kernels_path}: no flash backend tables")
    if set(flash.get("backend", {}).values()) != {"flash"}:
        sys.exit(f"{kernels_path}: the flash tables did not all run on SDPA's flash backend: {flash.get('backend')}")
    tables = sorted((t for t in map(measured_rows, flash["tables"]) if t), key=lambda t: t["head_dim"])
    profile = read_profile(profile_path)
    profile["tables"]["attention_prefill_flash2"] = tables
    profile.setdefault("holdout", {})["attention_prefill_flash2"] = flash.get("holdout", [])
    profile["attention_kernels_source"] = {
        "flash2": f"bench/pytorch/attention_backends.py --backends flash ({kernels_path}; "
                  + "; ".join(f"{r['date']} {r['device']['name']} {r['device']['uuid']}" for r in run.get("runs", [])) + ")"}
    write_profile(profile_path, profile)
    print(f"{profile_path}: attention_prefill_flash2 d{', d'.join(str(t['head_dim']) for t in tables)}, "
          f"{len(flash.get('holdout', []))} held-out shapes")


if __name__ == "__main__":
    main()
