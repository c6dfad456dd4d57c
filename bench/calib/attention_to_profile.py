#!/usr/bin/env python3
"""Writes the serving engine's attention measurements (`infraplan-bench attention --json-out F`, one
file per model shape) into a profile as its "serving_attention" section.

    bench/calib/attention_to_profile.py [--prefill-only] PROFILE.json ATTENTION.json [ATTENTION.json ...]

Runs of the same model shape (repeats) are combined point by point at the median of their times.
--prefill-only replaces the prefill launches and the prefill kernel's geometry only, and keeps the
profile's decode points (a new prefill kernel; the decode kernel unchanged). The section's `source`
then names both runs.
"""
import json
import statistics
import sys

from profile_io import read_profile, write_profile

# The paged prefill kernels' geometry (hardware/paged_attention_model.hpp): keys per tile a CTA walks
# at a time, CTAs resident per multiprocessor, groups of query rows that skip key tiles on their own.
# mma.sync (engine/paged_prefill_attention.cu) is the profile's default; wgmma
# (engine/paged_prefill_wgmma.cu): 128-key tiles, 224 KiB of shared memory, two consumer warpgroups
# of 64 rows that both walk every tile their CTA loads, taking turns, and a block of at most 64 rows
# that runs one of them alone: two row groups, the second priced as a fitted share of the first plus
# a fitted number of tiles for the turns.
DECODE_SEPARATOR = " | decode: "

GEOMETRY = {
    "mma": {"prefill_key_tile": 64, "prefill_ctas_per_sm": 2, "prefill_row_groups": 1},
    "wgmma": {"prefill_key_tile": 128, "prefill_ctas_per_sm": 1, "prefill_row_groups": 2},
}


def agreed(runs, key):
    """The runs' common value of `key` (None when they do not record it); exits when they disagree."""
    values = {json.dumps(json.load(open(p)).get(key)) for p in runs}
    if len(values) > 1:
        sys.exit(f"the runs disagree on {key}: {sorted(values)}")
    return json.loads(values.pop())


def median_of_repeats(points):
    """Points that several runs timed (the same head shape and every key but `seconds`) become one,
    at the median of their times; the order of first appearance is kept."""
    groups = {}
    for p in points:
        key = json.dumps({k: v for k, v in p.items() if k != "seconds"}, sort_keys=True)
        groups.setdefault(key, []).append(p)
    return [{**same[0], "seconds": statistics.median(p["seconds"] for p in same)} for same in groups.values()]


def main():
    args = sys.argv[1:]
    prefill_only = "--prefill-only" in args
    args = [a for a in args if a != "--prefill-only"]
    if len(args) < 2:
        sys.exit(__doc__)
    profile_path, runs = args[0], args[1:]
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
    prefill, decode = median_of_repeats(prefill), median_of_repeats(decode)
    profile = read_profile(profile_path)
    old = profile.get("serving_attention")
    if prefill_only:
        if not old or "decode" not in old:
            sys.exit("--prefill-only: the profile has no serving_attention decode points to keep")
        section = dict(old)
        # The decode points keep their own source: of a section already split this way, its decode part.
        decode_source = old.get("source", "").rsplit(DECODE_SEPARATOR, 1)[-1]
        section["source"] = "prefill: " + "; ".join(sources) + DECODE_SEPARATOR + decode_source
        section["prefill"] = prefill
    else:
        section = {"source": "; ".join(sources), "method": json.load(open(runs[0]))["method"],
                   "prefill": prefill, "decode": decode}
        tile = agreed(runs, "decode_tile_tokens")
        if tile is not None:
            section["decode_tile_tokens"] = tile
    # Runs that do not name their prefill kernel timed the mma.sync kernel.
    kernel = agreed(runs, "prefill_kernel") or "mma"
    if kernel not in GEOMETRY:
        sys.exit(f"unknown prefill_kernel {kernel!r}: expected one of {sorted(GEOMETRY)}")
    for key in GEOMETRY["mma"]:
        section.pop(key, None)
    if kernel != "mma":
        section.update({k: v for k, v in GEOMETRY[kernel].items() if v != GEOMETRY["mma"][k]})
    profile["serving_attention"] = section
    write_profile(profile_path, profile)


if __name__ == "__main__":
    main()
