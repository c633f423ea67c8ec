#!/usr/bin/env python3
"""Turn the project's own H200 measurements (traces/validation/h200/*.csv,
METHOD.md there says how each was taken) into rows `strata validate` runs:
traces/validation/h200-device.csv.

    python3 scripts/device/h200_validation.py > traces/validation/h200-device.csv

Nothing here is fitted; every row is held out unless docs/validation.md says
otherwise.  Groups (the id's prefix):

  H200G  cuBLASLt GEMMs (gemm.csv), achieved TFLOP/s at the clock read after
         the timing (clock_mhz=, where it was below the config's clock)
  H200S  PyTorch's streaming kernels on 2^29 bf16 elements (stream.csv)
  H200C  device-to-device copy_ (copy.csv), time per call
  H200A  SDPA attention forward and forward+backward per backend (attn.csv)
  H200D  decode attention, one query a sequence against a KV cache
         (decode_attn.csv): GQA sharing, the cache repeated per query head
         (both cuDNN's kernel), and the unfused matmul-softmax-matmul path
         (strata's naive: its math would add layout copies of K and V)
  H200M  a Llama decode step replayed as a CUDA graph (model.csv graph_s),
         written as Hugging Face's LlamaForCausalLM (framework=hf); the
         fused-projection rows are left out (gpt-fast's fused projections
         with HF's elementwise kernels: no framework builds that)
  H200E  the same steps run eagerly from Python (model.csv eager_wall_s), and
         eager prefill (eager_events_s)
  H200P  NVML power during soaks (power.csv)
"""
import csv
import os
import sys

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                    "traces", "validation", "h200")
CONFIG = "nvidia-h200-sxm"
CONFIG_MHZ = 1830.0     # configs/nvidia-h200-sxm.yaml clock_MHz
SRC = ("this project, one H200 SXM, PyTorch 2.11.0+cu130, cuBLAS 13.1, cuDNN 9.19 "
       "(traces/validation/h200/METHOD.md): %s run %s")
HDR = ["id", "hardware", "workload", "shape_or_model", "dtype", "batch", "metric", "value",
       "unit", "source", "notes", "config", "spec", "host_overhead_us"]
HW = "H200 SXM 141GB"


def rows(name):
    with open(os.path.join(HERE, name), newline="") as f:
        return list(csv.DictReader(f))


def g(x):
    return "%.6g" % float(x)


def clock_key(mhz):
    """clock_mhz= for a row read below the config's clock; at or above it
    the config's own clock (its per-cycle rates are given at 1830 MHz)."""
    return " clock_mhz=%d" % round(float(mhz)) if mhz and float(mhz) < CONFIG_MHZ else ""


def main():
    out = csv.writer(sys.stdout, lineterminator="\n")
    out.writerow(HDR)
    n = 0

    def emit(prefix, workload, shape, dtype, batch, metric, value, unit, fname, run, notes, spec):
        nonlocal n
        n += 1
        out.writerow(["%s-%03d" % (prefix, n), HW, workload, shape, dtype, batch, metric, value, unit,
                      SRC % (fname, run), notes, CONFIG, spec, 0])

    dmap = {"bf16": "bf16", "fp16": "fp16", "tf32": "tf32", "fp32": "fp32", "fp8": "fp8_e4m3"}
    for r in rows("gemm.csv"):
        m, nn, k, dt = r["m"], r["n"], r["k"], r["dtype"]
        kern = r["kernel"].split("+")[0].split(" ")[0]
        emit("H200G", "cuBLASLt GEMM (torch.mm / _scaled_mm), CUDA graph", "%sx%sx%s" % (m, nn, k), dt, "",
             "achieved_TFLOPs", g(r["TFLOPs"]), "TFLOP/s", "gemm.csv", r["run"],
             "SM clock read after the timing %s MHz; cuBLASLt's kernel %s%s" %
             (r["sm_mhz"], kern, " + split-K reduce" if "splitK" in r["kernel"] else ""),
             "gemm m=%s n=%s k=%s dtype=%s%s" % (m, nn, k, dmap[dt], clock_key(r["sm_mhz"])))

    ew = {  # kernel: inputs, outputs, flops an element
        "read_sum": (1, 0, 1), "write_fill": (0, 1, 0), "copy": (1, 1, 0),
        "scale": (1, 1, 1), "add": (2, 1, 1), "silu": (1, 1, 5)}
    for r in rows("stream.csv"):
        i, o, fl = ew[r["kernel"]]
        emit("H200S", "PyTorch elementwise kernel %s, CUDA graph" % r["kernel"], r["elements"] + " elements",
             r["dtype"], "", "latency", g(float(r["s"]) * 1e6), "us", "stream.csv", r["run"],
             "%s bytes moved at %s GB/s" % (r["bytes"], r["GBps"]),
             "elementwise elements=%s inputs=%d outputs=%d flops=%d dtype=bf16" % (r["elements"], i, o, fl))

    for r in rows("copy.csv"):
        if r["kind"] != "d2d":
            continue
        b = int(r["bytes"])
        emit("H200C", "device-to-device copy_ (uint8), CUDA graph", "%d bytes" % b, "uint8", "", "latency",
             g(float(r["s"]) * 1e6), "us", "copy.csv", r["run"],
             "%s GB/s counting bytes read plus written%s" %
             (r["GBps"], "; PyTorch hands a copy this large to cudaMemcpyAsync (METHOD.md)"
              if b >= 1 << 30 else ""),
             "elementwise elements=%d inputs=1 outputs=1 flops=0 dtype=bf16" % (b // 2))

    impl = {"sdpa-flash": "fa2", "sdpa-efficient": "xformers", "sdpa-cudnn": "cudnn"}
    for r in rows("attn.csv"):
        c = 1 if r["causal"] == "True" else 0
        base = "attention batch=%s heads=%s seqlen=%s headdim=%s causal=%d impl=%s dtype=bf16" % (
            r["batch"], r["heads"], r["seqlen"], r["headdim"], c, impl[r["impl"]])
        shape = "b%s h%s s%s d%s%s" % (r["batch"], r["heads"], r["seqlen"], r["headdim"], " causal" if c else "")
        for col, ps in (("fwd_s", "fwd"), ("fwdbwd_s", "fwd+bwd")):
            emit("H200A", "F.scaled_dot_product_attention, %s backend, %s" % (r["impl"], ps), shape, "bf16",
                 r["batch"], "latency", g(float(r[col]) * 1e6), "us", "attn.csv", r["run"],
                 "CUDA events after warm-up; SM clock read after %s MHz" % r["sm_mhz"],
                 base + ("" if ps == "fwd" else " pass=fwd+bwd") + clock_key(r["sm_mhz"]))

    for r in rows("decode_attn.csv"):
        v = r["variant"]
        kvh = r["q_heads"] if v == "repeat" else r["kv_heads"]
        # the math variant's kernels: matmul, scale, fp32 softmax (two casts), matmul, on the
        # cache's own layout: strata's naive (no layout copies of K and V, which its math has)
        im = "naive" if v == "math" else "cudnn"
        heads, ql = r["q_heads"], 1
        if v == "math":     # q reshaped to (batch, kv_heads, group, dim): group rows a KV head
            heads, ql = kvh, int(r["q_heads"]) // int(r["kv_heads"])
        emit("H200D", "decode attention (%s), CUDA graph" % v,
             "b%s ctx%s %sq/%skv d%s" % (r["batch"], r["context"], r["q_heads"], r["kv_heads"], r["headdim"]),
             "bf16", r["batch"], "latency", g(float(r["s"]) * 1e6), "us", "decode_attn.csv", r["run"],
             {"gqa": "SDPA enable_gqa: each KV head read once (cuDNN's kernel, run 2's census)",
              "repeat": "the cache expanded to one K/V a query head first, as a per-query-head kernel reads it",
              "math": "matmul, scale, fp32 softmax, matmul, KV shared by a reshape: each KV head's 4 "
                      "query heads as 4 query rows (the spec says so: heads=kv_heads, q_len=4)"}[v],
             "attention batch=%s heads=%s kv_heads=%s seqlen=%s q_len=%d headdim=%s impl=%s dtype=bf16" % (
                 r["batch"], heads, kvh, r["context"], ql, r["headdim"], im))

    for r in rows("model.csv"):
        if r["layout"] != "hf-unfused":
            continue    # gpt-fast's fused projections with HF's elementwise kernels: no framework builds it
        model = "traces/models/%s.json" % r["model"]
        if r["model"] == "llama-3-8b" and r["context"] and int(r["context"]) >= 8192:
            model = "traces/models/llama-3.1-8b.json"   # the same shapes; 3-8B's 8192 positions are full
        ph = r["phase"]
        if ph == "decode":
            spec = "llm model=%s phase=decode batch=%s context=%s dtype=bf16" % (model, r["batch"], r["context"])
            shape = "%s %s b%s ctx%s" % (r["model"], r["layout"], r["batch"], r["context"])
        else:
            spec = "llm model=%s phase=prefill batch=1 prompt=%s dtype=bf16" % (model, r["prompt"])
            shape = "%s %s prompt %s" % (r["model"], r["layout"], r["prompt"])
        lay = "Hugging Face LlamaForCausalLM's layout (separate q/k/v and gate/up, fp32 RMSNorm, " \
              "rotate-half RoPE, SDPA)" if r["layout"] == "hf-unfused" else \
              "fused qkv and gate-up projections (gpt-fast's, vLLM's layout)"
        if r["graph_s"]:
            emit("H200M", "Llama %s step as a CUDA graph" % ph, shape, "bf16", r["batch"], "latency",
                 g(float(r["graph_s"]) * 1e3), "ms", "model.csv", r["run"], lay + "; random weights",
                 spec + " framework=hf")
        if ph == "decode" and r["eager_wall_s"]:
            emit("H200E", "Llama decode step run eagerly from Python", shape, "bf16", r["batch"], "latency",
                 g(float(r["eager_wall_s"]) * 1e3), "ms", "model.csv", r["run"],
                 lay + "; host wall per step with a synchronise (a token loop); host-bound, about 1,000 "
                 "kernels a step (METHOD.md)", spec + " stack=transformers-eager")
        if ph == "prefill" and r["eager_events_s"]:
            emit("H200E", "Llama prefill run eagerly from Python", shape, "bf16", "1", "latency",
                 g(float(r["eager_events_s"]) * 1e3), "ms", "model.csv", r["run"],
                 lay + "; CUDA events; logits of the last token only; SM clock read after %s MHz"
                 % r["sm_mhz"], spec + " stack=transformers-eager" + clock_key(r["sm_mhz"]))

    soak = {  # power.csv case: spec, notes
        "d2d copy 2 GiB": ("elementwise elements=1073741824 inputs=1 outputs=1 flops=0 dtype=bf16 sustained=1",
                           "2793 back-to-back copies of 2 GiB; the board at its 700 W limit"),
        "gemm bf16 8192^3": ("gemm m=8192 n=8192 k=8192 dtype=bf16 sustained=1",
                             "5 s of 8192^3 bf16 GEMMs; the board at its 700 W limit, SM clock 1425-1485 MHz"),
        "decode llama-3-8b b1 ctx2048 (graph)":
            ("llm model=traces/models/llama-3-8b.json phase=decode batch=1 context=2048 dtype=bf16 "
             "framework=hf", "4 s of the Llama-3-8B batch-1 decode graph; SM clock 1980 MHz"),
    }
    for r in rows("power.csv"):
        if r["case"] not in soak or not r["power_w_median"]:
            continue
        spec, note = soak[r["case"]]
        emit("H200P", "NVML board power during a soak: " + r["case"], r["case"], "bf16", "", "power",
             g(r["power_w_median"]), "W", "power.csv", r["run"],
             note + "; median of %s samples every 10 ms, the first fifth dropped" % r["samples"], spec)


if __name__ == "__main__":
    main()
