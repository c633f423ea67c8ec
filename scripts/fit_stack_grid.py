#!/usr/bin/env python3
"""A grid fit of one number of a software stack, or of two at once, on
some rows of any validation CSV, the serving CSVs included (strata
calibrate --stack takes the single-step CSVs only).  For each value of the
grid (each pair, for two keys) it writes the stack with KEY = value into a
temporary copy of configs/, runs `strata validate --rows ROWS`, and scores
the mean |log(predicted / measured)| over the rows' compared figures; it
prints every value's score and the best.  The value goes into
configs/stacks/STACK.yaml by hand, its source naming this command.

    python3 scripts/fit_stack_grid.py STACK SECTION.KEY[+SECTION.KEY2] CSV ROWS V1,V2,...[/W1,W2,...]
    e.g.  python3 scripts/fit_stack_grid.py vllm-0.7-rocm host.launch_gap_us \\
              traces/validation/serving/rocm.csv ROCMVLLM-001,ROCMVLLM-004 2,3,4
          python3 scripts/fit_stack_grid.py sglang-0.3 host.step_us+serving.host_seq_us \\
              traces/validation/serving/serving.csv SERVE-157,SERVE-198 0,1000,2000/0,20,40

Each KEY must be a number the stack file gives at SECTION (add it with any
value and a source first).  Run from the repository root after building
(build/strata, or STRATA=path).
"""
import itertools, json, math, os, re, shutil, subprocess, sys, tempfile

if len(sys.argv) != 6:
    sys.exit(__doc__)
stack, keyarg, data, ids, gridarg = sys.argv[1:]
keys = keyarg.split("+")
grids = [g.split(",") for g in gridarg.split("/")]
if len(keys) > 2 or len(grids) != len(keys):
    sys.exit("one or two keys (KEY1+KEY2), and a grid for each (V1,V2/W1,W2)")
strata = os.environ.get("STRATA", "build/strata")
src = os.path.join("configs", "stacks", stack + ".yaml")
text = open(src).read()
pats = []
for key in keys:
    section, name = key.split(".", 1)
    pat = re.compile(r"(\n%s:[ \t]*(?:#[^\n]*)?\n(?:  [^\n]*\n)*?  %s: )([^\s#]+)" % (re.escape(section), re.escape(name)))
    if not pat.search(text):
        sys.exit(f"{src}: no {key} to fit (give it a value and a source first)")
    pats.append(pat)
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
    for vs in itertools.product(*grids):
        t = text
        for pat, v in zip(pats, vs):
            t = pat.sub(lambda m: m.group(1) + v, t, 1)
        open(os.path.join(root, "stacks", stack + ".yaml"), "w").write(t)
        v = "/".join(vs)
        out = os.path.join(tmp, "r.json")
        subprocess.run([strata, "validate", "--data", data, "--configs", root, "--rows", ids, "--quiet",
                        "--json", out], check=True, stdout=subprocess.DEVNULL)
        errs = [r["error"] for r in json.load(open(out))["rows"]]
        s = sum(abs(math.log1p(e)) for e in errs) / len(errs)
        print(f"{keyarg} = {v:>8}: mean |log(pred/meas)| {s:.4f} over {len(errs)} figures, errors " +
              " ".join(f"{100 * e:+.1f}%" for e in errs))
        if best is None or s < best[1]:
            best = (v, s)
finally:
    shutil.rmtree(tmp)
print(f"best: {keyarg} = {best[0]} ({best[1]:.4f})")
