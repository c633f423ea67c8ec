#!/usr/bin/env python3
"""Fits each attention library's issue efficiency (models/tiled/lower.c,
attn_libs[].issue) on a third of its rows of the FA group: the rows with
seqlen 2048 and 4096 (2 of the 6 lengths, every head dim and mask).  Run
with the table's factors at 1.0 to get the raw ratios:

    python3 scripts/fit_attention.py build/strata

prints, per library, the median measured / predicted over its training
rows (the factor to put in the table) and the rows held out."""
import csv, json, statistics, subprocess, sys, tempfile, os

def main(binary):
    rows = [r for r in csv.DictReader(open("traces/validation/calibration.csv")) if r["id"].startswith("FA-")]
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "v.json")
        subprocess.run([binary, "validate", "--data", "traces/validation/calibration.csv", "--json", out],
                       check=True, stdout=subprocess.DEVNULL)
        pred = {r["id"]: r for r in json.load(open(out))["rows"]}
    by = {}
    for r in rows:
        impl = [t[5:] for t in r["spec"].split() if t.startswith("impl=")][0]
        by.setdefault(impl, []).append(r)
    split = {}
    for impl, rs in by.items():
        cap = len(rs) // 3          # at most a third of the group
        train = [r for r in rs if any(f"seqlen={n} " in r["spec"] for n in (2048, 4096))][:cap]
        ids = {r["id"] for r in train}
        split[impl] = {"train": [], "test": []}
        for r in rs:
            p = pred[r["id"]]
            split[impl]["train" if r["id"] in ids else "test"].append((r["id"], p["measured"] / p["predicted"]))
    by = split
    for impl, g in by.items():
        held = sorted(abs(1 / x - 1) for _, x in g["test"])
        if held:
            print(f"{impl:9s} held out: median |error| {100 * statistics.median(held):.1f}%, worst {100 * held[-1]:.1f}% over {len(held)} rows")
        ratios = [x for _, x in g["train"]]
        print(f"{impl:9s} factor {statistics.median(ratios):.3f} from {len(ratios)} rows "
              f"({', '.join(i for i, _ in g['train'])}); {len(g['test'])} held out")

if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "build/strata")
