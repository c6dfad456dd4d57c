#!/usr/bin/env python3
"""Puts the "power" section printed by `infraplan-calibrate --only power` into a profile (the
full calibration writes it itself), with a note of where it was measured.

  bench/calib/power_to_profile.py PROFILE.json POWER.json "SOURCE (device, date, command)"
"""
import json
import sys

from profile_io import read_profile, write_profile


def main(argv):
    if len(argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    profile_path, power_path, source = argv[1:]
    section = json.load(open(power_path))["power"]
    if not section.get("nvml") or not section.get("limit_w"):
        raise SystemExit(f"{power_path}: no power readings (NVML was not available where it ran)")
    section = {"source": source, **section}
    profile = read_profile(profile_path)
    # The clock ratio of normal over uniform GEMM operands is the chip's, measured apart
    # (bench/calib/fill_probe_device.sh): kept for a new uniform probe.
    kept = (profile.get("power") or {}).get("normal_operands")
    if kept and section.get("gemm_operands", "uniform") == "uniform" and "normal_operands" not in section:
        section["normal_operands"] = kept
    profile["power"] = section
    write_profile(profile_path, profile)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
