#!/usr/bin/env python3
"""Puts the validated error of the model, as the accuracy tests measure it, into a profile's
validation_error section (hardware/validation_error.hpp): for one kind of prediction
("training_step", "gemm"), the 10th / 50th / 90th percentiles of measured / predicted over the rows
named in the record, and the share of later rows inside [p10, p90] (and the same per band of
predicted time, "bands", where the record has them). The record of a kind replaces the
profile's earlier one; the other kinds are kept. The tests that write the records also fail when
the profile's record no longer matches the model:

  INFRAPLAN_WRITE_VALIDATION_ERROR=DIR build/bin/training_sim_tests --gtest_filter='*ValidationError*'
  INFRAPLAN_WRITE_VALIDATION_ERROR=DIR build/bin/hardware_tests --gtest_filter='*ValidationError*'
  INFRAPLAN_WRITE_VALIDATION_ERROR=DIR build/bin/simulator_tests --gtest_filter='*ValidationError*'
  bench/calib/validation_error_to_profile.py PROFILE.json DIR/*.json
"""
import json
import sys

from profile_io import read_profile, write_profile

KINDS = ("training_step", "gemm", "serving_ttft", "serving_tpot")


def rounded(v):
    """Ratios and shares to 4 decimals, band edges (seconds) to 4 significant digits, in nested bands too."""
    if isinstance(v, list):
        return [rounded(x) for x in v]
    if isinstance(v, dict):
        return {k: (float(f"{x:.4g}") if k.endswith("_s") and isinstance(x, float) else rounded(x))
                for k, x in v.items()}
    return round(v, 4) if isinstance(v, float) else v


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    profile_path, records = argv[1], argv[2:]
    profile = read_profile(profile_path)
    section = profile.setdefault("validation_error", {})
    section["method"] = ("10th / 50th / 90th percentile of measured / predicted over the rows named per kind, "
                         "the quantile f at rank f*(n+1) of the n sorted rows, interpolated (a band that holds "
                         "80% of later rows on average from 9 rows on) "
                         "(the model as it was when written; the tests named in 'command' fail when it moves); "
                         "held_out_coverage: share of later rows, never fitted, inside [p10, p90]")
    for path in records:
        r = json.load(open(path))
        kind = r.get("kind")
        if kind not in KINDS:
            raise SystemExit(f"{path}: kind '{kind}' is not one of {', '.join(KINDS)}")
        if not (0 < r["p10"] <= r["p50"] <= r["p90"]):
            raise SystemExit(f"{path}: expected 0 < p10 <= p50 <= p90")
        entry = {k: rounded(v) for k, v in r.items() if k != "kind"}
        section[kind] = entry
        print(f"{profile_path}: validation_error.{kind} = p10 {entry['p10']} p50 {entry['p50']} p90 {entry['p90']} "
              f"over {entry['rows']} rows; {entry.get('held_out_coverage')} of {entry.get('held_out_rows')} held out inside")
    write_profile(profile_path, profile)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
