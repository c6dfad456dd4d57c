#!/usr/bin/env python3
"""Writes the serving engine's attention measurements (`infraplan-bench attention --json-out F`, one
file per model shape) into a profile as its "serving_attention" section.

    bench/calib/attention_to_profile.py PROFILE.json ATTENTION.json [ATTENTION.json ...]
"""
import json
import sys


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    profile_path, runs = sys.argv[1], sys.argv[2:]
    prefill, decode, sources = [], [], []
    for path in runs:
        run = json.load(open(path))
        heads, kv_heads = run["heads"], run["kv_heads"]
        sources.append(f'{run["source"]} ({run["device"]}, {run["driver"]}; {path})')
        for p in run["paged_prefill"]:
            prefill.append({"heads": heads, "kv_heads": kv_heads, "chunks": p["chunks"], "seconds": p["seconds"]})
        for d in run["paged_decode"]:
            decode.append({"heads": heads, "kv_heads": kv_heads, **{k: d[k] for k in
                          ("batch", "context", "shared_prefix", "groups", "unique_blocks", "seconds")}})
    profile = json.loads(open(profile_path).read())
    profile["serving_attention"] = {
        "source": "; ".join(sources),
        "method": json.load(open(runs[0]))["method"],
        "prefill": prefill,
        "decode": decode,
    }
    tiles = {json.load(open(p)).get("decode_tile_tokens") for p in runs}
    if len(tiles) > 1:
        sys.exit(f"the runs disagree on decode_tile_tokens: {sorted(t for t in tiles if t)}")
    if None not in tiles:
        profile["serving_attention"]["decode_tile_tokens"] = tiles.pop()
    with open(profile_path, "w") as f:
        json.dump(profile, f, indent=1, ensure_ascii=False)
        f.write("\n")


if __name__ == "__main__":
    main()
