#!/usr/bin/env python3
"""Fits the serving engines' scheduler CPU time and ShareGPT's length spread
(docs/validation.md, "Serving rows"; the values go into configs/stacks/*.yaml
and traces/validation/serving/serving.csv by hand, with this script named).

Stage 1, per engine: serving.host_step_us (CPU time a scheduler call) and
serving.host_seq_us (and a sequence in the step), by a grid, on that engine's
fixed-length Llama-3-8B rows of block F on the A100 (462 in, 256 or 16
out): 2 rows of its 6-row A100 group, none of its H100 group (the H100
rows' errors are mostly the chip's, docs/validation.md, and a host fit on
them would hide that).
Stage 2: the coefficient of variation of ShareGPT's input and output lengths
(lognormal:MEAN,CV,MAX in the specs), one value for both, on block E's two
offline A100 rows (SERVE-165 SGLang, SERVE-166 vLLM): 1 row of each 3-row
group.  Every other serving row is held out.
The score is the mean |log(predicted / measured)| over a fit's rows and
metrics.  Run from the repository root after building (about 20 minutes on
two cores): python3 scripts/fit_serving_host.py
"""
import csv, json, math, os, re, shutil, subprocess, sys, tempfile

DATA = "traces/validation/serving/serving.csv"
HOST_FIT = {
    "vllm-0.6": ["SERVE-197", "SERVE-201"],
    "sglang-0.3": ["SERVE-198", "SERVE-202"],
    "lmdeploy-0.6": ["SERVE-199", "SERVE-203"],
    "trtllm-0.12": ["SERVE-200", "SERVE-204"],
}
CV_FIT = ["SERVE-165", "SERVE-166"]
STEP_US = [0]
SEQ_US = [0, 5, 10, 15, 20, 30, 40, 60, 80, 120]
CVS = [0.5, 1.0, 1.5, 2.0, 2.5, 3.0]

rows = {r["id"]: r for r in csv.DictReader(open(DATA))}
tmp = tempfile.mkdtemp(prefix="strata-fit-serving-")
root = os.path.join(tmp, "root")
os.makedirs(os.path.join(root, "configs", "stacks"))
for name in os.listdir("configs"):
    if name != "stacks":
        os.symlink(os.path.abspath(os.path.join("configs", name)), os.path.join(root, "configs", name))
os.symlink(os.path.abspath("traces"), os.path.join(root, "traces"))
for name in os.listdir("configs/stacks"):
    shutil.copy(os.path.join("configs/stacks", name), os.path.join(root, "configs", "stacks", name))


def set_host(stack, step_us, seq_us):
    """Writes the stack with the two values (and their sources) into the temporary configs."""
    text = open(os.path.join("configs/stacks", stack + ".yaml")).read()
    text = re.sub(r"\n  host_(step|seq)_us:[^\n]*", "", text)
    text = re.sub(r'\n  serving\.host_(step|seq)_us:[^\n]*', "", text)
    text = text.replace("\nsources:\n", f"\n  host_step_us: {step_us}\n  host_seq_us: {seq_us}\nsources:\n"
                        '  serving.host_step_us: "a grid fit"\n  serving.host_seq_us: "a grid fit"\n', 1)
    open(os.path.join(root, "configs", "stacks", stack + ".yaml"), "w").write(text)


def score(ids, cv=None):
    """Mean |log(pred / measured)| of the rows' metrics, run as validate runs them."""
    sub = [dict(rows[i]) for i in ids]
    if cv is not None:
        for r in sub:
            r["spec"] = re.sub(r"isl=\S+", f"isl=lognormal:202,{cv},1024", r["spec"])
            r["spec"] = re.sub(r"osl=\S+", f"osl=lognormal:179,{cv},2048", r["spec"])
    path = os.path.join(tmp, "fit.csv")
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(sub[0].keys()), lineterminator="\n")
        w.writeheader()
        w.writerows(sub)
    out = os.path.join(tmp, "fit.json")
    if os.path.exists(out):
        os.remove(out)
    res = subprocess.run(["./build/strata", "validate", "--data", path, "--configs", os.path.join(root, "configs"),
                    "--json", out, "--quiet"], capture_output=True, text=True)
    if not os.path.exists(out): sys.exit(res.stdout[-2000:] + res.stderr[-2000:])
    errs = [abs(math.log(r["predicted"] / r["measured"])) for r in json.load(open(out))["rows"]]
    return sum(errs) / len(errs)


best = {}
for stack, ids in HOST_FIT.items():
    grid = []
    for step in STEP_US:
        for seq in SEQ_US:
            set_host(stack, step, seq)
            grid.append((score(ids), step, seq))
    grid.sort()
    best[stack] = grid[0]
    print(f"{stack}: host_step_us {grid[0][1]}, host_seq_us {grid[0][2]}: mean |log err| {grid[0][0]:.3f} "
          f"on {', '.join(ids)}", flush=True)
for stack, (_, step, seq) in best.items():
    set_host(stack, step, seq)
cvs = sorted((score(CV_FIT, cv), cv) for cv in CVS)
print(f"ShareGPT CV {cvs[0][1]}: mean |log err| {cvs[0][0]:.3f} on {', '.join(CV_FIT)}")
for s, cv in cvs:
    print(f"  CV {cv}: {s:.3f}")
shutil.rmtree(tmp)
