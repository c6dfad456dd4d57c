#!/usr/bin/env python3
"""Merges `infraplan-bench kernels --json-out` files (one per model shape) into a profile's
"serving_kernels" section: per kernel, one seconds-over-rows row per distinct width (the first
file's row where two models share a width), widths ascending.

  bench/engine/row_kernels_to_profile.py PROFILE.json KERNELS.json...
"""
import json
import sys


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    profile_path, inputs = argv[1], argv[2:]
    rows, kernels, sources, device = None, {}, [], None
    for path in inputs:
        t = json.load(open(path))["serving_kernels"]
        if rows is None:
            rows, device = t["rows"], t["device"]
        elif t["rows"] != rows:
            raise SystemExit(f"{path}: rows differ from the first file's")
        if t["device"] != device:
            raise SystemExit(f"{path}: measured on {t['device']}, the first file on {device}")
        sources.append(t["source"])
        for name, k in t["kernels"].items():
            widths = kernels.setdefault(name, {})
            widths.setdefault(k["width"], k["seconds"])
    section = {
        "source": "; ".join(sources),
        "device": device,
        "method": json.load(open(inputs[0]))["serving_kernels"]["method"],
        "rows": rows,
        "kernels": {name: [{"width": w, "seconds": s} for w, s in sorted(ws.items())]
                    for name, ws in sorted(kernels.items())},
    }
    text = open(profile_path).read()
    profile = json.loads(text)
    profile["serving_kernels"] = section
    with open(profile_path, "w") as f:
        json.dump(profile, f, indent=1, ensure_ascii=False)
        f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
