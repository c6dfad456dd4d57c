#!/usr/bin/env python3
"""Merges a framework calibration (bench/pytorch/calibrate_framework.py output) into a measured
profile: the SDPA attention tables become the profile's tables.attention_prefill (the tables the
cost model uses, labelled "kernel": "torch-sdpa", with backward_seconds), their held-out shapes
become holdout.attention_prefill, its fit points tables.attention_prefill_fit_points, and the host costs become the "framework" section. The
project's own-kernel prefill tables and held-out shapes are kept, as measured, under
tables.attention_prefill_own_fa2 and holdout.attention_prefill_own_fa2 (their per-kernel results
stay in "kernels"). Idempotent: merging again replaces what an earlier merge wrote.

    python3 bench/pytorch/merge_framework.py docs/data/h200_pytorch_framework.json \\
        hardware/profiles/h200-sxm-141gb.json

Host costs per LLaMA block (--llama-blocks-only) vary between machine starts by tens of percent;
give every run and the profile keeps the median per entry:

    python3 bench/pytorch/merge_framework.py docs/data/h200_pytorch_llama_block_host.json \\
        docs/data/h200_pytorch_llama_block_host_run2.json hardware/profiles/h200-sxm-141gb.json

Blocks of one kind of checkpointing only (e.g. op-level selective checkpointing, measured later than
the rest), added to the profile's entries without touching the others; the runs may come from a
machine with another GPU (a block's host cost on tiny shapes is the host's):

    python3 bench/pytorch/merge_framework.py --block-kinds selective-op \
        docs/data/h100_pytorch_llama_block_host_sac.json docs/data/h100_pytorch_llama_block_host_sac_run2.json \
        hardware/profiles/h200-sxm-141gb.json

A full merge of block runs (above) rewrites the entries of every kind of block its runs measured and
keeps those of the other kinds (with their runs and sources): merging the full runs again leaves the
selective-op entries of the embedded H200 profile as they are.

A calibration made with --elementwise-only (some eager kernels measured on their own) adds or
replaces just those kernels' rows in the profile's framework.elementwise table (same element axis;
--ops A,B,... merges only those rows; several runs give the median per entry):

    python3 bench/pytorch/merge_framework.py docs/data/h200_pytorch_llama_kernels.json \\
        hardware/profiles/h200-sxm-141gb.json

Then regenerate the derived profiles (INFRAPLAN_REGENERATE_PROFILES=1, docs/calibration.md).
"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "calib"))
from profile_io import read_profile, write_profile  # noqa: E402

FRAMEWORK_KEYS = ["op_dispatch_us_forward", "op_dispatch_us_backward", "checkpoint_us_forward_per_block",
                  "checkpoint_us_backward_per_block", "optimizer_us_per_tensor", "optimizer_us_fixed",
                  "aten_op_us_nograd", "aten_op_us_autograd_forward", "aten_op_us_autograd_backward"]


def measured_rows(table):
    """Keeps the seq_len rows whose first batch column was measured (the profile's rule)."""
    keep = [i for i, row in enumerate(table["seconds"]) if row[0] is not None]
    out = {k: table[k] for k in ("kernel", "causal", "head_dim", "heads", "kv_heads")}
    out["seq_len"] = [table["seq_len"][i] for i in keep]
    out["batch"] = table["batch"]
    out["seconds"] = [table["seconds"][i] for i in keep]
    out["backward_seconds"] = [table["backward_seconds"][i] for i in keep]
    return out if keep else None


def median_rows(cals):
    """One --elementwise-only calibration whose rows are the per-entry median of several runs (the
    mean of the middle two for an even count); the first run's metadata, every run named in source."""
    base = json.loads(json.dumps(cals[0][0]))
    for c, p in cals[1:]:
        if c.get("partial") != "elementwise-only" or c["elementwise"]["elements"] != base["elementwise"]["elements"]:
            sys.exit(f"{p}: not an --elementwise-only run on the same element axis")
    for name, row in base["elementwise"]["ops"].items():
        runs = [c["elementwise"]["ops"].get(name, {}).get("seconds") for c, _ in cals]
        if any(r is None or None in r for r in runs):
            sys.exit(f"{name}: not measured at every point in every run")
        med = []
        for i in range(len(row["seconds"])):
            v = sorted(r[i] for r in runs)
            med.append(v[len(v) // 2] if len(v) % 2 else 0.5 * (v[len(v) // 2 - 1] + v[len(v) // 2]))
        row["seconds"] = med
    base["date"] = max(c["date"] for c, _ in cals)
    return base, " + ".join(p for _, p in cals) + f" (median of {len(cals)} runs)"


def merge_elementwise(cal, cal_path, prof, prof_path, only=None):
    """Adds or replaces the measured kernels' rows of framework.elementwise (same element axis);
    with `only`, just those kernels' rows."""
    if cal["gpu"] != prof["device"]["name"]:
        sys.exit(f"{cal_path}: measured on '{cal['gpu']}', the profile is for '{prof['device']['name']}'")
    fw = prof.get("framework")
    if not fw or "elementwise" not in fw:
        sys.exit(f"{prof_path}: no framework.elementwise table to add to; merge a full calibration first")
    table, new = fw["elementwise"], cal["elementwise"]
    if table["elements"] != new["elements"]:
        sys.exit(f"{cal_path}: element axis {new['elements']} differs from the profile's {table['elements']}")
    ops = {k: v for k, v in new["ops"].items() if only is None or k in only}
    if only is not None and set(only) - set(ops):
        sys.exit(f"{cal_path}: no rows for {', '.join(sorted(set(only) - set(ops)))}")
    for name, row in ops.items():
        if any(t is None for t in row["seconds"]):
            sys.exit(f"{cal_path}: {name} has unmeasured points; re-run with a larger --budget-s")
        table["ops"][name] = dict(row, source=cal_path, date=cal["date"])
    write_profile(prof_path, prof)
    print(f"{prof_path}: framework.elementwise += {', '.join(sorted(ops))}")


def median_of(v):
    v = sorted(v)
    n = len(v)
    return v[n // 2] if n % 2 else 0.5 * (v[n // 2 - 1] + v[n // 2])


def block_kind(key):
    """The checkpointing of a block_host_us key "framework/precision/kind"."""
    return key.rsplit("/", 1)[-1]


def merge_block_host(cals, prof, prof_path, kinds=None):
    """Writes framework.block_host_us: host µs per LLaMA block by framework/precision/checkpointing.
    Several calibrations (machine starts) give the median per entry (the mean of the middle two for
    an even count); every run's values are kept under block_host_runs, each run under
    block_host_source.

    kinds (--block-kinds K,...): only the entries whose checkpointing is one of these ("plain",
    "checkpointed", "selective-op") are taken from these runs and added to the profile's; its other
    entries, their runs and sources stay as they are. Such runs may come from a machine with
    another GPU: a block's host cost on tiny shapes is the host's (CPU and software), which is why
    derived profiles keep the framework section as measured."""
    for cal, cal_path in cals:
        if cal["gpu"] != prof["device"]["name"] and kinds is None:
            sys.exit(f"{cal_path}: measured on '{cal['gpu']}', the profile is for '{prof['device']['name']}' "
                     "(host costs of one kind of block from another machine: --block-kinds)")
        if not cal["llama_block_host_us"]:
            sys.exit(f"{cal_path}: no LLaMA block measured")
    fw = prof.get("framework")
    if not fw:
        sys.exit(f"{prof_path}: no framework section to add to; merge a full calibration first")
    if kinds is not None:
        merge_block_kinds(cals, fw, kinds, prof_path)
        write_profile(prof_path, prof)
        return
    # An entry takes the runs that measured it (a run may cover some frameworks only, e.g.
    # --llama-block-impls compile).
    keys = sorted(set.union(*(set(c["llama_block_host_us"]) for c, _ in cals)))
    # Entries of a kind of checkpointing that none of these runs measured (added earlier with
    # --block-kinds, e.g. from another machine) stay, with their runs and sources.
    measured_kinds = {block_kind(k) for k in keys}
    kept = {k: v for k, v in fw.get("block_host_us", {}).items() if block_kind(k) not in measured_kinds}
    kept_runs = {k: v for k, v in fw.get("block_host_runs", {}).items() if k in kept}
    old_src = fw.get("block_host_source", [])
    kept_src = [e for e in (old_src if isinstance(old_src, list) else [old_src])
                if "entries" in e and not set(e["entries"].split("/")) & measured_kinds]

    def runs_of(k, d):
        return [c["llama_block_host_us"][k][d] for c, _ in cals if k in c["llama_block_host_us"]]

    fw["block_host_us"] = {k: {d: median_of(runs_of(k, d)) for d in ("forward_us", "backward_us")} for k in keys}
    fw["block_host_us"].update(kept)
    # torch.compile: the chain's intercept is the compiled graph's fixed host cost per call (guards,
    # runtime wrappers, the embedding, LM head and loss inside the graph), which the model adds
    # once per pass; the median over runs, never below 0 (eager frameworks price those parts per op).
    def intercepts_of(k, d):
        return [c["llama_block_host_us"][k]["chain"][d]["intercept_us"] for c, _ in cals
                if k in c["llama_block_host_us"] and "chain" in c["llama_block_host_us"][k]]
    passes = {k: {f"{d}_us": max(0.0, median_of(intercepts_of(k, d))) for d in ("forward", "backward")}
              for k in keys if k.startswith("torch-compile/") and intercepts_of(k, "forward")}
    if passes:
        fw["block_host_pass_us"] = passes
    else:
        fw.pop("block_host_pass_us", None)
    sources = [{"file": p, "date": c["date"], "command": c["command"]} for c, p in cals] + kept_src
    fw["block_host_source"] = sources[0] if len(sources) == 1 else sources
    runs = {k: {d: runs_of(k, d) for d in ("forward_us", "backward_us")} for k in keys} if len(cals) > 1 else {}
    runs.update(kept_runs)
    if runs:
        fw["block_host_runs"] = runs
    else:
        fw.pop("block_host_runs", None)
    write_profile(prof_path, prof)
    print(f"{prof_path}: framework.block_host_us = {', '.join(keys)} (median of {len(cals)} run(s))"
          + (f"; kept {', '.join(sorted(kept))}" if kept else ""))


BLOCK_KINDS = ("plain", "checkpointed", "selective-op")


def merge_block_kinds(cals, fw, kinds, prof_path):
    """The entries of `kinds` from these runs (median per entry, every run kept) added to the
    profile's block_host_us; the runs are appended to block_host_source."""
    taken = sorted({k for c, _ in cals for k in c["llama_block_host_us"] if block_kind(k) in kinds})
    if not taken:
        sys.exit(f"no entry of {', '.join(kinds)} in {', '.join(p for _, p in cals)}")
    runs = fw.setdefault("block_host_runs", {})
    for k in taken:
        vals = {d: [c["llama_block_host_us"][k][d] for c, _ in cals if k in c["llama_block_host_us"]]
                for d in ("forward_us", "backward_us")}
        fw.setdefault("block_host_us", {})[k] = {d: median_of(v) for d, v in vals.items()}
        if len(vals["forward_us"]) > 1:
            runs[k] = vals
        else:
            runs.pop(k, None)
    src = fw.get("block_host_source", [])
    src = src if isinstance(src, list) else [src]
    for c, p in cals:
        entry = {"file": p, "date": c["date"], "command": c["command"], "gpu": c["gpu"], "entries": "/".join(kinds)}
        if entry not in src:
            src.append(entry)
    fw["block_host_source"] = src
    print(f"{prof_path}: framework.block_host_us += {', '.join(taken)} (median of {len(cals)} run(s))")


def main():
    argv, only, kinds = sys.argv[1:], None, None
    if argv[:1] == ["--ops"] and len(argv) > 1:
        only, argv = argv[1].split(","), argv[2:]
    if argv[:1] == ["--block-kinds"] and len(argv) > 1:
        kinds, argv = argv[1].split(","), argv[2:]
        bad = [k for k in kinds if k not in BLOCK_KINDS]
        if bad:
            sys.exit(f"--block-kinds: unknown {', '.join(bad)}; valid: {', '.join(BLOCK_KINDS)}")
    if len(argv) < 2:
        sys.exit("usage: merge_framework.py [--ops A,B | --block-kinds K,...] CALIBRATION.json [MORE.json ...] "
                 "PROFILE.json")
    cal_paths, prof_path = argv[:-1], argv[-1]
    cal_path = cal_paths[0]
    cal = json.load(open(cal_path))
    prof = read_profile(prof_path)
    if len(cal_paths) > 1 and cal.get("partial") not in ("llama-blocks-only", "elementwise-only"):
        sys.exit("several calibrations merge only for --llama-blocks-only and --elementwise-only runs "
                 "(runs of the same measurement; the profile keeps the median per entry)")
    if cal.get("quick"):
        sys.exit(f"{cal_path}: a --quick run; merge a full run")
    if cal.get("partial") == "elementwise-only":
        if len(cal_paths) > 1:
            cal, cal_path = median_rows([(json.load(open(p)), p) for p in cal_paths])
        merge_elementwise(cal, cal_path, prof, prof_path, only)
        return
    if only is not None:
        sys.exit("--ops picks rows of an --elementwise-only calibration")
    if cal.get("partial") == "llama-blocks-only":
        cals = [(json.load(open(p)), p) for p in cal_paths]
        for c, p in cals:
            if c.get("partial") != "llama-blocks-only" or c.get("quick"):
                sys.exit(f"{p}: not a full --llama-blocks-only run")
        merge_block_host(cals, prof, prof_path, kinds)
        return
    if kinds is not None:
        sys.exit("--block-kinds picks entries of --llama-blocks-only calibrations")
    if cal["gpu"] != prof["device"]["name"]:
        sys.exit(f"{cal_path}: measured on '{cal['gpu']}', the profile is for '{prof['device']['name']}'")
    tables, holdout = prof["tables"], prof.setdefault("holdout", {})
    own = [t for t in tables.get("attention_prefill", []) if t.get("kernel") != "torch-sdpa"]
    if own:
        tables["attention_prefill_own_fa2"] = own
        holdout["attention_prefill_own_fa2"] = holdout.get("attention_prefill", [])
    sdpa = [t for t in (measured_rows(t) for t in cal["attention_sdpa"]["tables"]) if t]
    if not sdpa:
        sys.exit(f"{cal_path}: no measured attention table")
    tables["attention_prefill"] = sorted(sdpa, key=lambda t: t["head_dim"])
    holdout["attention_prefill"] = cal["attention_sdpa"]["holdout"]
    # Off-axis shapes from which the cost model fits the attention block size (not held out).
    tables["attention_prefill_fit_points"] = cal["attention_sdpa"].get("fit_points", [])
    fw = cal["framework"]
    section = {"name": fw["name"], "torch_version": fw["torch_version"], "cuda_version": fw["cuda_version"],
               "cudnn_version": fw.get("cudnn_version"), "date": cal["date"], "command": cal["command"],
               "source": cal_path, "sdpa_backend": cal["attention_sdpa"].get("backend", {}),
               "method": fw.get("method", "")}
    # GPU time of the eager elementwise kernels by element count (absent in older calibrations).
    if "elementwise" in cal:
        section["elementwise"] = cal["elementwise"]
    # Host µs per module-level op kind (absent in older calibrations).
    per_module = fw.get("chains", {}).get("per_module")
    if per_module:
        section["per_module_us"] = {k: {"forward_us": max(0.0, v["forward_us"]),
                                        "backward_us": max(0.0, v["backward_us"])} for k, v in per_module.items()}
    for k in FRAMEWORK_KEYS:
        # A least-squares intercept can come out slightly negative: a cost is never below 0.
        section[k] = max(0.0, fw[k])
    prof["framework"] = section
    write_profile(prof_path, prof)
    print(f"{prof_path}: attention_prefill from torch-sdpa ({', '.join('d%d' % t['head_dim'] for t in sdpa)}), "
          f"{len(holdout['attention_prefill'])} held-out shapes, framework section")


if __name__ == "__main__":
    main()
