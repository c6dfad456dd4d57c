#!/usr/bin/env python3
"""Writes held decode steps (infraplan-bench step --hold ... --json-out F) into a profile's
power.engine_steps.

    python3 bench/engine/power_steps_to_profile.py PROFILE.json HOLD.json[=MODEL.json]... [--fit NAME,NAME]
        [--source TEXT]

Each decode batch of a run's first pass (cuBLASLt's first choices, as the serving engine runs its
GEMMs) that was held becomes one point: the model (its preset name, or after "=" the model file the
run was given, whose object is stored, for shapes that are not presets), batch, context, role ("fit" for the
models named by --fit, else "holdout") and what was held: GPU and wall seconds per step, the SM
clock and the mean board power. The profile is rewritten in place (points of the same model,
batch and context replaced).
"""
import argparse
import json
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("profile")
    ap.add_argument("holds", nargs="+")
    ap.add_argument("--fit", default="llama2-7b,llama3-8b")
    ap.add_argument("--source", default="")
    a = ap.parse_args()
    fit = set(x for x in a.fit.split(",") if x)
    with open(a.profile) as f:
        prof = json.load(f)
    if "power" not in prof:
        sys.exit(f"{a.profile}: no power section (run infraplan-calibrate --only power first)")
    pw = prof["power"]
    steps = {(json.dumps(p["model"], sort_keys=True), p["batch"], p["context"]): p for p in pw.get("engine_steps", [])}
    for arg in a.holds:
        h, _, model_file = arg.partition("=")
        with open(h) as f:
            run = json.load(f)
        if run.get("weights") != "bf16" or run.get("kv_dtype") != "bf16":
            sys.exit(f"{h}: bf16 weights and KV only (got {run.get('weights')}, {run.get('kv_dtype')})")
        name = run["model"]["name"]
        model = name
        if model_file:
            with open(model_file) as f:
                model = json.load(f)
        for d in run["runs"][0]["decode"]:
            held = d.get("held")
            if not held or held.get("power_w") is None or held.get("clock_mhz") is None:
                continue
            p = {
                "name": name if not model_file else model_file.split("/")[-1].removesuffix(".json").removeprefix("llama_"),
                "model": model,
                "batch": d["batch"],
                "context": run["context"],
                "role": "fit" if not model_file and name in fit else "holdout",
                "held": {
                    "gpu_seconds": held["gpu_ms_p50"] * 1e-3,
                    "wall_seconds": held["wall_ms_mean"] * 1e-3,
                    "clock_mhz": held["clock_mhz"],
                    "power_w": held["power_w"],
                    "hold_s": held["hold_s"],
                    "steps_measured": held["steps_measured"],
                },
                "source": h.split("/")[-1],
            }
            steps[(json.dumps(model, sort_keys=True), p["batch"], p["context"])] = p
    pw["engine_steps"] = sorted(steps.values(), key=lambda p: (p["role"] != "fit", json.dumps(p["model"])[:40], p["context"], p["batch"]))
    if a.source:
        pw["engine_steps_source"] = a.source
    with open(a.profile, "w") as f:
        json.dump(prof, f, indent=1)
        f.write("\n")
    print(f"{a.profile}: {len(pw['engine_steps'])} engine steps")


if __name__ == "__main__":
    main()
