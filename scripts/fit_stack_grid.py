#!/usr/bin/env python3
"""A grid fit of one number of a software stack on some rows of any
validation CSV, the serving CSVs included (strata calibrate --stack takes
the single-step CSVs only).  For each value of the grid it writes the stack
with KEY = value into a temporary copy of configs/, runs `strata validate
--rows ROWS`, and scores the mean |log(predicted / measured)| over the rows'
compared figures; it prints every value's score and the best.  The value
goes into configs/stacks/STACK.yaml by hand, its source naming this command.

    python3 scripts/fit_stack_grid.py STACK SECTION.KEY CSV ROWS V1,V2,...
    e.g.  python3 scripts/fit_stack_grid.py vllm-0.7-rocm host.launch_gap_us \\
              traces/validation/serving/rocm.csv ROCMVLLM-001,ROCMVLLM-004 2,3,4

KEY must be a number the stack file gives at SECTION (add it with any value
and a source first).  Run from the repository root after building
(build/strata, or STRATA=path).
"""
import json, math, os, re, shutil, subprocess, sys, tempfile

if len(sys.argv) != 6:
    sys.exit(__doc__)
stack, key, data, ids, grid = sys.argv[1:]
section, name = key.split(".", 1)
strata = os.environ.get("STRATA", "build/strata")
src = os.path.join("configs", "stacks", stack + ".yaml")
text = open(src).read()
pat = re.compile(r"(\n%s:[ \t]*(?:#[^\n]*)?\n(?:  [^\n]*\n)*?  %s: )([^\s#]+)" % (re.escape(section), re.escape(name)))
if not pat.search(text):
    sys.exit(f"{src}: no {key} to fit (give it a value and a source first)")
tmp = tempfile.mkdtemp(prefix="strata-fit-stack-")
root = os.path.join(tmp, "configs")
os.makedirs(os.path.join(root, "stacks"))
os.symlink(os.path.abspath("traces"), os.path.join(tmp, "traces"))   # specs' model paths
for n in os.listdir("configs"):
    if n != "stacks":
        os.symlink(os.path.abspath(os.path.join("configs", n)), os.path.join(root, n))
for n in os.listdir("configs/stacks"):
    shutil.copy(os.path.join("configs/stacks", n), os.path.join(root, "stacks", n))
best = None
try:
    for v in grid.split(","):
        open(os.path.join(root, "stacks", stack + ".yaml"), "w").write(pat.sub(lambda m: m.group(1) + v, text, 1))
        out = os.path.join(tmp, "r.json")
        subprocess.run([strata, "validate", "--data", data, "--configs", root, "--rows", ids, "--quiet",
                        "--json", out], check=True, stdout=subprocess.DEVNULL)
        errs = [r["error"] for r in json.load(open(out))["rows"]]
        s = sum(abs(math.log1p(e)) for e in errs) / len(errs)
        print(f"{key} = {v:>8}: mean |log(pred/meas)| {s:.4f} over {len(errs)} figures, errors " +
              " ".join(f"{100 * e:+.1f}%" for e in errs))
        if best is None or s < best[1]:
            best = (v, s)
finally:
    shutil.rmtree(tmp)
print(f"best: {key} = {best[0]} ({best[1]:.4f})")
