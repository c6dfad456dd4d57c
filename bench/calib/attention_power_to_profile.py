#!/usr/bin/env python3
"""Puts the attention points of bench/pytorch/attention_power.py into a profile's power section
(power.points, kind "attention", their fit / holdout roles kept), replacing points an earlier merge of
the same kind of file wrote. The law fits its attention term on the fit points alone
(hardware/power_model.hpp). The run's GEMM reference point is not merged: it is there to compare the
machine start with the profile's own GEMM point.

  bench/calib/attention_power_to_profile.py PROFILE.json ATTENTION_POWER.json
"""
import json
import sys

from profile_io import read_profile, write_profile


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    profile_path, data_path = argv[1:]
    data = json.load(open(data_path))
    profile = read_profile(profile_path)
    if data.get("gpu", "").replace("NVIDIA ", "") not in profile["device"]["name"]:
        raise SystemExit(f"{data_path}: measured on '{data.get('gpu')}', the profile is for '{profile['device']['name']}'")
    power = profile.get("power")
    if not power:
        raise SystemExit(f"{profile_path}: no power section to add to")
    new = [dict(p, source=f"{data_path} ({data['date']}, {data['command']})") for p in data["points"]
           if p.get("kind") == "attention" and p.get("role") in ("fit", "holdout")]
    if not new:
        raise SystemExit(f"{data_path}: no attention points")
    kept = [p for p in power["points"] if not (p.get("kind") == "attention" and p.get("kernel") == "torch-sdpa")]
    power["points"] = kept + new
    write_profile(profile_path, profile)
    print(f"{profile_path}: power.points += {len(new)} attention points "
          f"({sum(p['role'] == 'fit' for p in new)} fit)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
