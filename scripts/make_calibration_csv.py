#!/usr/bin/env python3
"""Builds traces/validation/calibration.csv from ../shared/data/measurements-calibration.csv.

Copies the rows strata can build a workload for (with their sources) and adds
three columns: config (configs/<config>.yaml), spec (the workload, see
docs/validation.md) and host_overhead_us (host time the measuring harness
includes per call; see docs/calibration.md for how each value was fitted).
Run from the repository root:  python3 scripts/make_calibration_csv.py
With --new-chips it writes only traces/validation/new-chips.csv: the rows of
chips whose configs new-chip made from data sheets (docs/new-chip.md).
Rows of calibration.csv this script does not build (the MLE collective
rows and the GPTFAST tensor-parallel rows, written by hand in the
many-chips work) are kept as they are, after the built ones, in their order.
"""
import csv, re, sys

SRC = "../shared/data/measurements-calibration.csv"
OUT = "traces/validation/calibration.csv"

# Host-side time per call of the LLMCompass harness (time.time() around the op
# plus torch.cuda.synchronize(), median of 50).  Each value is fitted on the
# smallest shape of its sweep only (where the kernel itself takes ~1-3 us), see
# docs/calibration.md; every other row of the sweep is a prediction.
HOST_US = {"gemm": 24.8, "softmax": 8.9, "layernorm": 48.7, "gelu": 44.0}

# gpu-stream kernels: (inputs, outputs) per element, fp64 scalar loads (8 bytes per thread per
# access, gpu-stream README kernel table), arrays of 2^27 elements (1 GiB)
STREAM = {"init": (0, 1), "read": (1, 0), "scale": (1, 1), "triad": (2, 1),
          "1pt": (1, 1), "3pt": (1, 1), "5pt": (1, 1)}
STREAM_ELEMS = 1 << 27

CONFIG = {"A100-SXM4-80GB": "nvidia-a100-sxm-80gb", "H200": "nvidia-h200-sxm",
          "A100-80GB": "nvidia-a100-sxm-80gb"}

# Chips whose configs `strata new-chip` made from a data sheet (configs/specs/):
# their rows go to a second file, new-chips.csv, a check of the spec-sheet path
# (docs/new-chip.md).  The gpu-benches "A100-40GB" is taken as the PCIe 40 GB
# card (same 1555 GB/s HBM2 as the SXM4 40 GB).
NEW_CONFIG = {"A100-40GB": "nvidia-a100-pcie-40gb", "H100-PCIe": "nvidia-h100-pcie",
              "L40": "nvidia-l40", "A40": "nvidia-a40"}
OUT_NEW = "traces/validation/new-chips.csv"

def spec_for(r):
    wid, hw, wl, shape, dt, metric = r["id"], r["hardware"], r["workload"], r["shape_or_model"], r["dtype"], r["metric"]
    if wid.startswith("LLMC"):
        cfg = "nvidia-a100-sxm-80gb"
        m = re.match(r"M=(\d+) N=(\d+) K=(\d+)", shape)
        if "GEMM" in wl and m and metric == "latency":
            # the harness runs torch.matmul on bfloat16 tensors (LLMCompass matmul.py)
            return cfg, f"gemm m={m[1]} n={m[2]} k={m[3]} dtype=bf16", HOST_US["gemm"]
        m = re.match(r"M=(\d+) N=(\d+)", shape)
        if "softmax" in wl and m:
            return cfg, f"softmax rows={m[1]} cols={m[2]} dtype=fp16", HOST_US["softmax"]
        if "layernorm" in wl and m:
            return cfg, f"norm rows={m[1]} cols={m[2]} dtype=fp16", HOST_US["layernorm"]
        m = re.match(r"elements=(\d+)", shape)
        if "GeLU" in wl and m:
            # tanh GeLU: x^3, 2 mul-add, tanh (~4), 0.5*x*(1+t): ~10 FLOP/element
            return cfg, f"elementwise elements={m[1]} inputs=1 outputs=1 flops=10 dtype=fp16", HOST_US["gelu"]
        return None
    if wid.startswith("UBENCH") and metric == "achieved_dram_bandwidth" and "gpu-stream" in wl:
        key = hw.split(" ")[0]
        cfg = CONFIG.get(key) or NEW_CONFIG.get(key)
        k = re.search(r"'(\w+)' kernel", wl)
        if cfg is None or k is None or k[1] not in STREAM:
            return None
        i, o = STREAM[k[1]]
        return cfg, f"elementwise elements={STREAM_ELEMS} inputs={i} outputs={o} flops=2 vector_bytes=8 dtype=fp64", 0.0
    if wid.startswith("FA") and metric == "fwd+bwd_TFLOPs":
        # flash-attention's benchmarks/benchmark_flash_attention.py: fp16 (the
        # README charts), batch x seqlen = 16k, nheads x headdim = 2048,
        # self-attention, fwd FLOPs 4 b h s^2 d (halved for causal), bwd 2.5x
        impls = {"FlashAttention-2": "fa2", "FlashAttention-1": "fa1", "FlashAttention Triton": "triton",
                 "xformers": "xformers", "PyTorch standard attention": "math"}
        m = re.match(r"attention fwd\+bwd \((.*)\)", wl)
        g = re.match(r"seqlen=(\d+) headdim=(\d+) causal=(\w+) batch=(\d+) nheads=(\d+)", shape)
        if m is None or g is None or m[1] not in impls or not hw.startswith("A100-SXM4-80GB"):
            return None
        causal = 1 if g[3] == "True" else 0
        return ("nvidia-a100-sxm-80gb",
                f"attention batch={g[4]} heads={g[5]} seqlen={g[1]} headdim={g[2]} causal={causal} "
                f"impl={impls[m[1]]} pass=fwd+bwd dtype=fp16", 0.0)
    weights = {"bf16": "", "int8 weight-only": " weights=int8", "int4 weight-only G=32": " weights=int4_g32"}
    if wid.startswith("GPTFAST") and metric == "decode_throughput" and dt in weights and hw.startswith("A100-SXM4-80GB (power"):
        models = {"Llama-2-7B": "llama-2-7b", "Llama-3.1-8B": "llama-3.1-8b"}
        if shape not in models:
            return None
        # gpt-fast: static KV cache of prompt (5) + max_new_tokens (200) = 205 slots, attention
        # over the whole cache with a mask, math SDPA (generate.py); CUDA graphs, so no host time
        return ("nvidia-a100-sxm-80gb-330w",
                f"llm model=traces/models/{models[shape]}.json phase=decode batch=1 context=204 dtype=bf16 attn=naive{weights[dt]}",
                0.0)
    if wid.startswith("GPTFAST") and metric == "decode_throughput" and dt in weights and hw == "MI250X (one GCD)":
        if shape != "Llama-2-7B":
            return None
        # the same gpt-fast decode (205-slot static cache, math SDPA) on one MI250X GCD
        return ("amd-mi250x-gcd",
                f"llm model=traces/models/llama-2-7b.json phase=decode batch=1 context=204 dtype=bf16 attn=naive{weights[dt]}",
                0.0)
    if wid.startswith("LCPP4167") and metric in ("decode_throughput", "prefill_throughput"):
        import re as _re
        m = _re.match(r"Apple (M[12])( Pro| Max| Ultra)? \((\d+)-core GPU\)", hw)
        if m is None or "newer build" in wl:
            return None  # the M1 Ultra row's core count is ambiguous; the newer build differs
        cfg = "apple-" + m[1].lower() + ("-" + m[2].strip().lower() if m[2] else "") + "-" + m[3] + "c"
        w = {"F16": "", "Q8_0": " weights=q8_0", "Q4_0": " weights=q4_0"}.get(dt)
        if w is None:
            return None
        # llama-bench: tg128 generates 128 tokens from an empty context (mean
        # KV length ~64); pp512 processes a 512-token prompt; F16 KV cache;
        # Metal backend of that build without flash attention
        if metric == "decode_throughput":
            spec = f"llm model=traces/models/llama-2-7b.json phase=decode batch=1 context=64 dtype=fp16 attn=naive framework=llama.cpp{w}"
        else:
            spec = f"llm model=traces/models/llama-2-7b.json phase=prefill batch=1 prompt=512 dtype=fp16 attn=naive framework=llama.cpp{w}"
        return cfg, spec, 0.0
    return None

def main():
    rows = list(csv.DictReader(open(SRC, newline="")))
    fields = list(rows[0].keys()) + ["config", "spec", "host_overhead_us"]
    out, new = [], []
    made = set(NEW_CONFIG.values()) | {"amd-mi250x-gcd"}
    for r in rows:
        s = spec_for(r)
        if s is None:
            continue
        r = dict(r)
        r["config"], r["spec"], r["host_overhead_us"] = s[0], s[1], f"{s[2]:g}"
        (new if s[0] in made else out).append(r)
    # keep the hand-written rows of the existing file (ids this script does not build)
    import os
    if os.path.exists(OUT):
        built = {r["id"] for r in out}
        kept = [r for r in csv.DictReader(open(OUT, newline="")) if r["id"] not in built]
        out += kept
    outs = ((OUT_NEW, new),) if "--new-chips" in sys.argv else ((OUT, out), (OUT_NEW, new))
    for path, rs in outs:
        with open(path, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=fields, lineterminator="\n")
            w.writeheader()
            w.writerows(rs)
        print(f"wrote {path}: {len(rs)} rows", file=sys.stderr)

main()
