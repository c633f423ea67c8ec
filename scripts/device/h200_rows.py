#!/usr/bin/env python3
"""Turn the JSON lines of scripts/device/h200_measure.py into the CSV files of
traces/validation/h200/ (one file per section; METHOD.md there says how each
figure was taken).

    python3 scripts/device/h200_rows.py RUN1/rows.jsonl [RUN2/rows.jsonl ...] -o traces/validation/h200

Runs are numbered in the order given (column `run`).  Standard library only.
"""
import csv
import json
import os
import sys

COLUMNS = {
    "gemm": ["run", "dtype", "m", "n", "k", "s", "TFLOPs", "GBps", "bytes_min", "sm_mhz",
             "power_w", "kernel", "grid", "kernel_us", "method", "reps", "copies"],
    "copy": ["run", "kind", "pinned", "bytes", "s", "GBps", "method", "reps", "copies"],
    "stream": ["run", "kernel", "dtype", "elements", "bytes", "s", "GBps", "method", "reps"],
    "host": ["run", "case", "s"],
    "attn": ["run", "impl", "batch", "heads", "seqlen", "headdim", "causal", "fwd_s", "fwdbwd_s",
             "fwd_TFLOPs", "fwdbwd_TFLOPs", "sm_mhz", "power_w", "kernels"],
    "decode_attn": ["run", "variant", "batch", "context", "q_heads", "kv_heads", "headdim",
                    "kv_bytes_shared", "kv_bytes_read", "s", "GBps_read", "kernels", "method",
                    "reps", "copies"],
    "model": ["run", "model", "layout", "phase", "batch", "context", "prompt", "eager_wall_s",
              "eager_events_s", "graph_s", "weight_bytes", "kv_bytes", "sm_mhz", "power_w"],
    "power": ["run", "case", "calls", "s_per_call", "GBps", "TFLOPs", "samples", "power_w_median",
              "power_w_min", "power_w_max", "sm_mhz_median", "sm_mhz_min", "sm_mhz_max",
              "mem_mhz_median", "temp_c_median"],
}


def kernel_text(kl):
    return "; ".join(f"{k['name']} grid={'x'.join(map(str, k['grid'] or []))}" for k in kl)


def main():
    args = sys.argv[1:]
    if "-o" not in args:
        sys.exit(__doc__)
    i = args.index("-o")
    outdir, inputs = args[i + 1], args[:i] + args[i + 2:]
    rows = {s: [] for s in COLUMNS}
    env = []
    for run, path in enumerate(inputs, 1):
        kern = {}
        recs = [json.loads(line) for line in open(path)]
        for r in recs:
            sec = r["section"]
            if sec == "gemm_kernels":
                kern[("gemm", r["dtype"], r["m"], r["n"], r["k"])] = r["kernels"]
            elif sec == "attn_kernels":
                kern[("attn", r["impl"], r["headdim"], r["causal"])] = r["kernels"]
            elif sec == "decode_attn_kernels":
                kern[("dattn", r["variant"], r["batch"], r["context"])] = r["kernels"]
        for r in recs:
            sec = r["section"]
            r["run"] = run
            if sec == "env":
                env.append(r)
            if sec not in rows or "error" in r:
                continue
            if sec == "gemm":
                kl = kern.get(("gemm", r["dtype"], r["m"], r["n"], r["k"]), [])
                r["kernel"] = "+".join(k["name"] for k in kl)
                r["grid"] = "+".join("x".join(map(str, k["grid"] or [])) for k in kl)
                r["kernel_us"] = "+".join(f"{k['us']:g}" for k in kl if k["us"] is not None)
            elif sec == "attn":
                kl = kern.get(("attn", r["impl"], r["headdim"], int(r["causal"])))
                r["kernels"] = kernel_text(kl) if kl and r["seqlen"] == 4096 else ""
            elif sec == "decode_attn":
                kl = kern.get(("dattn", r["variant"], r["batch"], r["context"]))
                r["kernels"] = kernel_text(kl) if kl else ""
            elif sec == "model":
                r.setdefault("layout", "hf-unfused")
            rows[sec].append(r)
    os.makedirs(outdir, exist_ok=True)
    for sec, cols in COLUMNS.items():
        with open(os.path.join(outdir, sec + ".csv"), "w", newline="") as f:
            w = csv.writer(f, lineterminator="\n")
            w.writerow(cols)
            for r in rows[sec]:
                w.writerow([fmt(r.get(c, "")) for c in cols])
    with open(os.path.join(outdir, "env.json"), "w") as f:
        json.dump(env, f, indent=1, sort_keys=True)
        f.write("\n")


def fmt(v):
    if isinstance(v, float):
        return f"{v:.6g}"
    return v


if __name__ == "__main__":
    main()
