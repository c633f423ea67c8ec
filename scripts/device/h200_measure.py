#!/usr/bin/env python3
"""Measure an NVIDIA H200 (or any CUDA GPU) for strata's validation data.

Run on the lent device machine (PyTorch there); every measurement is one JSON
line appended to $OUT/rows.jsonl as soon as it is taken, so a run cut short
keeps what it measured.  scripts/device/h200_rows.py turns the lines into the
CSV files under traces/validation/h200/ (METHOD.md there says how each figure
was taken).

    python3 scripts/device/h200_measure.py [SECTION ...]

Sections: env copy stream host gemm attn decode_attn model model_fused power
(default: all).
Timing: CUDA graphs of R back-to-back calls over rotating buffers (so that
repeated calls do not find their inputs in the 60 MB L2), replayed 5 times,
median of the per-call time; where a graph cannot be captured, a loop timed
with CUDA events.  Inputs are random (never zeros).  Clocks and power are read
with NVML.  Nothing here changes the card's settings.
"""
import gzip
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import threading
import time
import traceback

import torch
import torch.nn.functional as F

OUT = os.environ.get("OUT") or "out_device"
os.makedirs(OUT, exist_ok=True)
ROWS = open(os.path.join(OUT, "rows.jsonl"), "a", buffering=1)
DEV = torch.device("cuda")
L2_BYTES = 60 * 2**20
ROT_BYTES = 4 * L2_BYTES  # rotate over copies until the inputs are 4x the L2
T0 = time.time()

try:
    import pynvml
    pynvml.nvmlInit()
    NVH = pynvml.nvmlDeviceGetHandleByIndex(0)
except Exception:  # pragma: no cover - depends on the machine
    pynvml = None
    NVH = None


def log(*a):
    print(f"[{time.time() - T0:7.1f}s]", *a, flush=True)


def emit(section, **kw):
    kw["section"] = section
    ROWS.write(json.dumps(kw, sort_keys=True) + "\n")


def nvml_now():
    if NVH is None:
        return {}
    try:
        return {
            "sm_mhz": pynvml.nvmlDeviceGetClockInfo(NVH, pynvml.NVML_CLOCK_SM),
            "mem_mhz": pynvml.nvmlDeviceGetClockInfo(NVH, pynvml.NVML_CLOCK_MEM),
            "power_w": pynvml.nvmlDeviceGetPowerUsage(NVH) / 1000.0,
            "temp_c": pynvml.nvmlDeviceGetTemperature(NVH, pynvml.NVML_TEMPERATURE_GPU),
        }
    except Exception:
        return {}


class Sampler:
    """NVML samples every 10 ms on a thread while a soak runs."""

    def __init__(self):
        self.samples = []
        self.stop = threading.Event()
        self.t = threading.Thread(target=self.run, daemon=True)

    def run(self):
        while not self.stop.is_set():
            s = nvml_now()
            if s:
                self.samples.append(s)
            time.sleep(0.01)

    def __enter__(self):
        self.t.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.t.join()

    def summary(self):
        if not self.samples:
            return {}
        out = {"samples": len(self.samples)}
        for k in ("sm_mhz", "mem_mhz", "power_w", "temp_c"):
            v = [s[k] for s in self.samples]
            # drop the first fifth: the clock and power settle after the start
            v = v[len(v) // 5:] or v
            out[k + "_median"] = statistics.median(v)
            out[k + "_min"] = min(v)
            out[k + "_max"] = max(v)
        return out


def rand(shape, dtype):
    if dtype in (torch.float8_e4m3fn, torch.float8_e5m2):
        return (torch.randn(shape, device=DEV, dtype=torch.bfloat16)).to(dtype)
    return torch.randn(shape, device=DEV, dtype=dtype)


def copies(nbytes):
    return max(1, min(64, math.ceil(ROT_BYTES / max(nbytes, 1))))


def bench(fn, est_s, min_graph_s=3e-3, replays=5, use_graph=True):
    """fn(i) runs call i.  Returns (seconds per call, method, calls timed)."""
    reps = int(max(4, min(400, math.ceil(min_graph_s / max(est_s, 1e-7)))))
    torch.cuda.synchronize()
    if use_graph:
        try:
            s = torch.cuda.Stream()
            s.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(s):
                for i in range(3):
                    fn(i)
            torch.cuda.current_stream().wait_stream(s)
            torch.cuda.synchronize()
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g):
                for i in range(reps):
                    fn(i)
            g.replay()
            torch.cuda.synchronize()
            ts = []
            for _ in range(replays):
                e0 = torch.cuda.Event(enable_timing=True)
                e1 = torch.cuda.Event(enable_timing=True)
                e0.record()
                g.replay()
                e1.record()
                e1.synchronize()
                ts.append(e0.elapsed_time(e1) / 1e3 / reps)
            del g
            return statistics.median(ts), "graph", reps
        except Exception as e:  # fall back to an event-timed loop
            log("graph capture failed, timing a loop:", repr(e)[:200])
            torch.cuda.synchronize()
    for i in range(3):
        fn(i)
    torch.cuda.synchronize()
    ts = []
    for _ in range(replays):
        e0 = torch.cuda.Event(enable_timing=True)
        e1 = torch.cuda.Event(enable_timing=True)
        e0.record()
        for i in range(reps):
            fn(i)
        e1.record()
        e1.synchronize()
        ts.append(e0.elapsed_time(e1) / 1e3 / reps)
    return statistics.median(ts), "events", reps


def kernel_census(calls):
    """calls: list of (tag, fn).  Runs each once under the profiler and
    returns {tag: [(kernel name, grid, block, us), ...]}."""
    from torch.profiler import profile, ProfilerActivity, record_function
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for tag, fn in calls:
            with record_function("census:" + tag):
                fn()
            torch.cuda.synchronize()
    path = os.path.join("/tmp", "census.json")
    prof.export_chrome_trace(path)
    with open(path) as f:
        tr = json.load(f)
    ev = tr.get("traceEvents", tr)
    ranges = sorted((e["ts"], e["ts"] + e.get("dur", 0), e["name"][7:])
                    for e in ev if e.get("ph") == "X" and e.get("cat") == "user_annotation"
                    and str(e.get("name", "")).startswith("census:"))
    corr_tag = {}
    for e in ev:
        if e.get("ph") != "X" or e.get("cat") not in ("cuda_runtime", "cuda_driver"):
            continue
        c = e.get("args", {}).get("correlation")
        if c is None:
            continue
        for a, b, tag in ranges:
            if a <= e["ts"] <= b:
                corr_tag[c] = tag
                break
    out = {tag: [] for tag, _ in calls}
    for e in ev:
        if e.get("ph") != "X" or e.get("cat") != "kernel":
            continue
        args = e.get("args", {})
        tag = corr_tag.get(args.get("correlation"))
        if tag is None:
            continue
        out[tag].append((e["name"], args.get("grid"), args.get("block"), e.get("dur")))
    return out


# ---------------------------------------------------------------- sections

def sec_env():
    p = torch.cuda.get_device_properties(0)
    info = {
        "name": p.name, "sms": p.multi_processor_count, "mem_bytes": p.total_memory,
        "l2_bytes": getattr(p, "L2_cache_size", None), "cc": f"{p.major}.{p.minor}",
        "torch": torch.__version__, "cuda": torch.version.cuda,
        "cudnn": torch.backends.cudnn.version(),
    }
    try:
        import importlib.metadata as md
        for pkg in ("nvidia-cublas", "nvidia-cudnn-cu13", "triton", "nvidia-nccl-cu13"):
            try:
                info["pkg_" + pkg] = md.version(pkg)
            except Exception:
                pass
    except Exception:
        pass
    if NVH is not None:
        try:
            info["power_limit_w"] = pynvml.nvmlDeviceGetPowerManagementLimit(NVH) / 1000.0
            info["max_sm_mhz"] = pynvml.nvmlDeviceGetMaxClockInfo(NVH, pynvml.NVML_CLOCK_SM)
            info["max_mem_mhz"] = pynvml.nvmlDeviceGetMaxClockInfo(NVH, pynvml.NVML_CLOCK_MEM)
            info["driver"] = pynvml.nvmlSystemGetDriverVersion()
        except Exception as e:
            info["nvml_error"] = repr(e)
    info.update(nvml_now())
    emit("env", **info)
    try:
        q = subprocess.run(["nvidia-smi", "-q", "-d", "CLOCK,POWER,PERFORMANCE,TEMPERATURE"],
                           capture_output=True, text=True, timeout=30).stdout
        with open(os.path.join(OUT, "nvidia-smi.txt"), "w") as f:
            f.write(q)
    except Exception as e:
        log("nvidia-smi:", e)
    log("env", info)


def sec_copy():
    # device to device, 4 KiB .. 4 GiB (bytes counted: read + written)
    for lg in range(12, 33, 2):
        n = 2 ** lg
        k = copies(2 * n) if n < 2**28 else 1
        src = [torch.randint(0, 255, (n,), dtype=torch.uint8, device=DEV) for _ in range(k)]
        dst = [torch.empty(n, dtype=torch.uint8, device=DEV) for _ in range(k)]
        t, how, reps = bench(lambda i: dst[i % k].copy_(src[i % k]), 2 * n / 3.5e12 + 3e-6)
        emit("copy", kind="d2d", bytes=n, s=t, GBps=2 * n / t / 1e9, method=how, reps=reps, copies=k)
        del src, dst
    torch.cuda.empty_cache()
    # host <-> device over PCIe, pinned and pageable host memory
    for lg in range(12, 31, 2):
        n = 2 ** lg
        for pinned in (True, False):
            h = torch.empty(n, dtype=torch.uint8, pin_memory=pinned)
            h.fill_(0x5A)
            d = torch.empty(n, dtype=torch.uint8, device=DEV)
            for kind in ("h2d", "d2h"):
                fn = (lambda i: d.copy_(h, non_blocking=pinned)) if kind == "h2d" else \
                     (lambda i: h.copy_(d, non_blocking=pinned))
                t, how, reps = bench(fn, n / 40e9 + 8e-6, min_graph_s=2e-2, use_graph=False)
                emit("copy", kind=kind, pinned=pinned, bytes=n, s=t, GBps=n / t / 1e9,
                     method=how, reps=reps)
            del h, d
    log("copy done")


def sec_stream():
    # streaming kernels on 1 GiB of bf16: read-only (sum), write-only (fill), copy, add, scale
    n = 2**29
    a = rand((n,), torch.bfloat16)
    b = rand((n,), torch.bfloat16)
    c = torch.empty_like(a)
    r = torch.empty((), dtype=torch.float32, device=DEV)
    cases = [
        ("read_sum", lambda i: torch.sum(a, dtype=torch.float32), 2 * n),
        ("write_fill", lambda i: c.fill_(1.5), 2 * n),
        ("copy", lambda i: c.copy_(a), 4 * n),
        ("scale", lambda i: torch.mul(a, 1.5, out=c), 4 * n),
        ("add", lambda i: torch.add(a, b, out=c), 6 * n),
        ("silu", lambda i: torch.nn.functional.silu(a, inplace=False), 4 * n),
    ]
    for name, fn, nb in cases:
        t, how, reps = bench(fn, nb / 3.5e12)
        emit("stream", kernel=name, elements=n, dtype="bf16", bytes=nb, s=t, GBps=nb / t / 1e9,
             method=how, reps=reps, **nvml_now())
    del a, b, c
    torch.cuda.empty_cache()
    log("stream done")


def sec_host():
    """What one tiny kernel costs: eager PyTorch on the host, and inside a graph."""
    x = torch.randn(16, device=DEV)
    y = torch.randn(16, device=DEV)
    for _ in range(100):
        torch.add(x, y)
    torch.cuda.synchronize()
    n = 20000
    t0 = time.perf_counter()
    for _ in range(n):
        torch.add(x, y)
    torch.cuda.synchronize()
    t = (time.perf_counter() - t0) / n
    emit("host", case="eager torch.add 16 elements (host wall per call)", s=t)
    w = torch.randn(4096, 4096, device=DEV, dtype=torch.bfloat16)
    xv = torch.randn(1, 4096, device=DEV, dtype=torch.bfloat16)
    for _ in range(50):
        F.linear(xv, w)
    torch.cuda.synchronize()
    n = 5000
    t0 = time.perf_counter()
    for _ in range(n):
        F.linear(xv, w)
    torch.cuda.synchronize()
    t = (time.perf_counter() - t0) / n
    emit("host", case="eager F.linear 1x4096x4096 bf16, same weight (wall per call)", s=t)
    t, how, reps = bench(lambda i: torch.add(x, y), 2e-6, min_graph_s=5e-3)
    emit("host", case="graph torch.add 16 elements (device time per kernel)", s=t, method=how, reps=reps)
    t, how, reps = bench(lambda i: x.add_(1e-9), 2e-6, min_graph_s=5e-3)
    emit("host", case="graph in-place add 16 elements (device time per kernel)", s=t, method=how, reps=reps)
    log("host done")


DT = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32,
      "tf32": torch.float32, "fp8": torch.float8_e4m3fn}
PEAK = {"bf16": 989e12, "fp16": 989e12, "tf32": 494e12, "fp32": 67e12, "fp8": 1979e12}


def gemm_case(dt, m, n, k, rotate=True):
    """y[m,n] = x[m,k] W[n,k]^T as nn.Linear runs it.  Returns (fn(i), bytes, flops, k copies)."""
    esz = 1 if dt == "fp8" else (4 if dt in ("fp32", "tf32") else 2)
    nbytes = (m * k + n * k) * esz + m * n * (2 if dt == "fp8" else esz)
    kc = copies(nbytes) if rotate else 1
    xs = [rand((m, k), DT[dt]) for _ in range(kc)]
    ws = [rand((n, k), DT[dt]) for _ in range(kc)]
    if dt == "fp8":
        one = torch.ones((), device=DEV, dtype=torch.float32)
        ys = [torch.empty((m, n), device=DEV, dtype=torch.bfloat16) for _ in range(kc)]

        def fn(i):
            j = i % kc
            return torch._scaled_mm(xs[j], ws[j].t(), scale_a=one, scale_b=one,
                                    out_dtype=torch.bfloat16, out=ys[j])
    else:
        ys = [torch.empty((m, n), device=DEV, dtype=DT[dt]) for _ in range(kc)]

        def fn(i):
            j = i % kc
            return torch.mm(xs[j], ws[j].t(), out=ys[j])
    return fn, nbytes, 2.0 * m * n * k, kc


def sec_gemm():
    shapes = []
    for s in (256, 512, 1024, 2048, 3072, 4096, 6144, 8192, 12288, 16384):
        shapes.append(("bf16", s, s, s))
    for s in (1024, 4096, 8192, 16384):
        shapes.append(("fp16", s, s, s))
    for s in (1024, 2048, 4096, 8192, 16384):
        shapes.append(("fp8", s, s, s))
    for s in (1024, 4096, 8192):
        shapes.append(("tf32", s, s, s))
        shapes.append(("fp32", s, s, s))
    nk = [(4096, 4096), (6144, 4096), (14336, 4096), (4096, 14336), (28672, 4096),
          (8192, 8192), (10240, 8192), (8192, 28672), (57344, 8192), (128256, 4096)]
    for m in (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192):
        for n, k in nk:
            shapes.append(("bf16", m, n, k))
    for m in (16, 64, 256, 1024, 4096):
        for n, k in ((4096, 4096), (14336, 4096), (4096, 14336), (8192, 8192)):
            shapes.append(("fp8", m, n, k))
    for dt, m, n, k in shapes:
        torch.set_float32_matmul_precision("high" if dt == "tf32" else "highest")
        try:
            fn, nbytes, flops, kc = gemm_case(dt, m, n, k)
            est = max(flops / (0.7 * PEAK[dt]), nbytes / 3.5e12) + 4e-6
            t, how, reps = bench(fn, est)
            emit("gemm", dtype=dt, m=m, n=n, k=k, s=t, TFLOPs=flops / t / 1e12,
                 GBps=nbytes / t / 1e9, bytes_min=nbytes, method=how, reps=reps, copies=kc,
                 **nvml_now())
            del fn
        except Exception as e:
            emit("gemm", dtype=dt, m=m, n=n, k=k, error=repr(e)[:300])
            log("gemm", dt, m, n, k, "failed:", repr(e)[:200])
        torch.cuda.empty_cache()
    log("gemm timed; kernel census")
    # which kernel cuBLAS(Lt) picks per shape: one call each under the profiler,
    # 20 shapes at a time with one copy of their buffers
    for c0 in range(0, len(shapes), 20):
        try:
            census = []
            for dt, m, n, k in shapes[c0:c0 + 20]:
                torch.set_float32_matmul_precision("high" if dt == "tf32" else "highest")
                fn, _, _, _ = gemm_case(dt, m, n, k, rotate=False)
                fn(0)
                census.append((f"{dt}:{m}:{n}:{k}", (lambda f=fn, d=dt: (
                    torch.set_float32_matmul_precision("high" if d == "tf32" else "highest"),
                    f(0)))))
            ks = kernel_census(census)
            for tag, kl in ks.items():
                dt, m, n, k = tag.split(":")
                emit("gemm_kernels", dtype=dt, m=int(m), n=int(n), k=int(k),
                     kernels=[{"name": a, "grid": b, "block": c, "us": d} for a, b, c, d in kl])
        except Exception as e:
            log("census failed:", repr(e)[:300])
            traceback.print_exc()
        census = None
        torch.cuda.empty_cache()
    torch.set_float32_matmul_precision("highest")
    log("gemm done")


def sec_attn():
    from torch.nn.attention import sdpa_kernel, SDPBackend
    backends = {"flash": SDPBackend.FLASH_ATTENTION, "efficient": SDPBackend.EFFICIENT_ATTENTION,
                "cudnn": SDPBackend.CUDNN_ATTENTION}
    tokens, hidden = 16384, 2048
    census = []
    for d in (64, 128):
        h = hidden // d
        for s in (512, 1024, 2048, 4096, 8192, 16384):
            b = tokens // s
            q = rand((b, h, s, d), torch.bfloat16).requires_grad_(True)
            k = rand((b, h, s, d), torch.bfloat16).requires_grad_(True)
            v = rand((b, h, s, d), torch.bfloat16).requires_grad_(True)
            do = rand((b, h, s, d), torch.bfloat16)
            for causal in (False, True):
                fl = 4.0 * b * h * s * s * d * (0.5 if causal else 1.0)
                for name, be in backends.items():
                    try:
                        with sdpa_kernel(be):
                            def fwd(i):
                                with torch.no_grad():
                                    return F.scaled_dot_product_attention(q, k, v, is_causal=causal)

                            t, how, reps = bench(fwd, fl / 4e14, min_graph_s=1e-2, use_graph=False)

                            def fb(i):
                                o = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
                                o.backward(do)
                                q.grad = k.grad = v.grad = None

                            t2, how2, reps2 = bench(fb, 3.5 * fl / 3e14, min_graph_s=2e-2, use_graph=False)
                        emit("attn", impl="sdpa-" + name, batch=b, heads=h, seqlen=s, headdim=d,
                             causal=causal, fwd_s=t, fwdbwd_s=t2, fwd_TFLOPs=fl / t / 1e12,
                             fwdbwd_TFLOPs=3.5 * fl / t2 / 1e12, reps=reps, **nvml_now())
                        if s == 4096:
                            census.append((f"{name}:{d}:{int(causal)}",
                                           (lambda be=be, causal=causal, q=q, k=k, v=v, do=do: _fb_once(be, q, k, v, do, causal))))
                    except Exception as e:
                        emit("attn", impl="sdpa-" + name, batch=b, heads=h, seqlen=s, headdim=d,
                             causal=causal, error=repr(e)[:300])
                        log("attn", name, d, s, causal, "failed:", repr(e)[:160])
            if s != 4096:
                del q, k, v, do
    try:
        ks = kernel_census(census)
        for tag, kl in ks.items():
            name, d, causal = tag.split(":")
            emit("attn_kernels", impl="sdpa-" + name, headdim=int(d), seqlen=4096, causal=int(causal),
                 kernels=[{"name": a, "grid": b, "block": c, "us": dd} for a, b, c, dd in kl])
    except Exception as e:
        log("attn census failed:", repr(e)[:300])
    census.clear()
    torch.cuda.empty_cache()
    log("attn done")


def _fb_once(be, q, k, v, do, causal):
    from torch.nn.attention import sdpa_kernel
    with sdpa_kernel(be):
        o = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        o.backward(do)
    q.grad = k.grad = v.grad = None


def sec_decode_attn():
    """One decode query per sequence against a KV cache: GQA 32 query heads over 8 KV
    heads (Llama-3-8B), head dim 128.  'gqa' shares each KV head among its 4 query
    heads; 'repeat' reads a cache already expanded to 32 heads (what a per-query-head
    kernel reads); 'math' is the unfused matmul-softmax-matmul that shares KV by a reshape."""
    hq, hkv, d = 32, 8, 128
    census = []
    for B, ctx in ((1, 4096), (1, 32768), (8, 4096), (8, 16384), (32, 4096), (32, 16384),
                   (128, 2048), (128, 8192)):
        kv_bytes = 2 * B * hkv * ctx * d * 2
        for variant in ("gqa", "repeat", "math"):
            heads_kv = hq if variant == "repeat" else hkv
            nb = 2 * B * heads_kv * ctx * d * 2
            kc = copies(nb)
            if nb * kc > 40 * 2**30:
                kc = 1
            try:
                qs = [rand((B, hq, 1, d), torch.bfloat16) for _ in range(kc)]
                ks_ = [rand((B, heads_kv, ctx, d), torch.bfloat16) for _ in range(kc)]
                vs = [rand((B, heads_kv, ctx, d), torch.bfloat16) for _ in range(kc)]
                # buffers bound as defaults: each closure keeps its own
                if variant == "gqa":
                    def fn(i, qs=qs, ks_=ks_, vs=vs, kc=kc):
                        j = i % kc
                        return F.scaled_dot_product_attention(qs[j], ks_[j], vs[j], enable_gqa=True)
                elif variant == "repeat":
                    def fn(i, qs=qs, ks_=ks_, vs=vs, kc=kc):
                        j = i % kc
                        return F.scaled_dot_product_attention(qs[j], ks_[j], vs[j])
                else:
                    def fn(i, qs=qs, ks_=ks_, vs=vs, kc=kc, B=B):
                        j = i % kc
                        qq = qs[j].view(B, hkv, hq // hkv, d)
                        sc = torch.matmul(qq, ks_[j].transpose(-1, -2)) * (d ** -0.5)
                        p = torch.softmax(sc.float(), dim=-1).to(torch.bfloat16)
                        return torch.matmul(p, vs[j])
                with torch.no_grad():
                    t, how, reps = bench(fn, nb / 3e12 + 5e-6)
                emit("decode_attn", variant=variant, batch=B, context=ctx, q_heads=hq,
                     kv_heads=hkv, headdim=d, kv_bytes_shared=kv_bytes, kv_bytes_read=nb, s=t,
                     GBps_read=nb / t / 1e9, method=how, reps=reps, copies=kc)
                if B in (8, 128) and ctx in (4096, 2048):
                    census.append((f"{variant}:{B}:{ctx}", (lambda f=fn: f(0))))
                del fn, qs, ks_, vs
            except Exception as e:
                emit("decode_attn", variant=variant, batch=B, context=ctx, error=repr(e)[:300])
                log("decode_attn", variant, B, ctx, "failed:", repr(e)[:160])
        torch.cuda.empty_cache()
    try:
        with torch.no_grad():
            ks = kernel_census(census)
        for tag, kl in ks.items():
            variant, B, ctx = tag.split(":")
            emit("decode_attn_kernels", variant=variant, batch=int(B), context=int(ctx),
                 kernels=[{"name": a, "grid": b, "block": c, "us": dd} for a, b, c, dd in kl])
    except Exception as e:
        log("decode census failed:", repr(e)[:300])
    census.clear()
    torch.cuda.empty_cache()
    log("decode_attn done")


# ------------------------------------------------------------- a Llama model

LLAMA3_8B = dict(name="llama-3-8b", hidden=4096, layers=32, heads=32, kv=8, ffn=14336,
                 vocab=128256, theta=500000.0)
LLAMA2_7B = dict(name="llama-2-7b", hidden=4096, layers=32, heads=32, kv=32, ffn=11008,
                 vocab=32000, theta=10000.0)


class Llama:
    """A Llama decoder as Hugging Face's eager LlamaForCausalLM runs it (separate q/k/v and
    gate/up projections, RMSNorm in fp32, rotary by rotate_half, SDPA attention), random
    bf16 weights; the KV cache is preallocated so that a step can be captured in a graph."""

    def __init__(self, cfg, fused=False):
        self.c = cfg
        self.fused = fused
        H, D = cfg["hidden"], cfg["hidden"] // cfg["heads"]
        self.D = D
        bf = torch.bfloat16
        sc = 0.02

        def w(*s):
            return torch.randn(*s, device=DEV, dtype=bf) * sc
        self.emb = w(cfg["vocab"], H)
        self.layers = []
        for _ in range(cfg["layers"]):
            self.layers.append(dict(
                ln1=torch.ones(H, device=DEV, dtype=bf), ln2=torch.ones(H, device=DEV, dtype=bf),
                q=w(cfg["heads"] * D, H), k=w(cfg["kv"] * D, H), v=w(cfg["kv"] * D, H),
                o=w(H, cfg["heads"] * D), gate=w(cfg["ffn"], H), up=w(cfg["ffn"], H),
                down=w(H, cfg["ffn"])))
        if fused:  # gpt-fast / vLLM layout: one qkv and one gate-up projection
            for L in self.layers:
                L["qkv"] = torch.cat((L.pop("q"), L.pop("k"), L.pop("v")), 0)
                L["gu"] = torch.cat((L.pop("gate"), L.pop("up")), 0)
        self.norm = torch.ones(H, device=DEV, dtype=bf)
        self.head = w(cfg["vocab"], H)
        inv = 1.0 / (cfg["theta"] ** (torch.arange(0, D, 2, device=DEV).float() / D))
        self.inv_freq = inv

    @staticmethod
    def rms(x, w):
        xf = x.float()
        xf = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-5)
        return w * xf.to(x.dtype)

    @staticmethod
    def rot_half(x):
        x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
        return torch.cat((-x2, x1), dim=-1)

    def alloc_cache(self, B, T):
        c = self.c
        self.kc = [torch.randn(B, c["kv"], T, self.D, device=DEV, dtype=torch.bfloat16)
                   for _ in range(c["layers"])]
        self.vc = [torch.randn(B, c["kv"], T, self.D, device=DEV, dtype=torch.bfloat16)
                   for _ in range(c["layers"])]

    def forward(self, ids, pos, ctx_len, causal):
        """ids [B,S]; pos: positions tensor [S]; writes K/V at pos and attends over the
        first ctx_len cache slots."""
        c = self.c
        B, S = ids.shape
        x = F.embedding(ids, self.emb)
        fr = pos.float()[:, None] * self.inv_freq[None, :]
        emb = torch.cat((fr, fr), dim=-1)
        cos, sin = emb.cos().to(x.dtype), emb.sin().to(x.dtype)
        for li, L in enumerate(self.layers):
            h = self.rms(x, L["ln1"])
            if self.fused:
                nq, nk = c["heads"] * self.D, c["kv"] * self.D
                q, k, v = F.linear(h, L["qkv"]).split((nq, nk, nk), dim=-1)
            else:
                q, k, v = F.linear(h, L["q"]), F.linear(h, L["k"]), F.linear(h, L["v"])
            q = q.view(B, S, c["heads"], self.D).transpose(1, 2)
            k = k.view(B, S, c["kv"], self.D).transpose(1, 2)
            v = v.view(B, S, c["kv"], self.D).transpose(1, 2)
            q = q * cos + self.rot_half(q) * sin
            k = k * cos + self.rot_half(k) * sin
            self.kc[li].index_copy_(2, pos, k)
            self.vc[li].index_copy_(2, pos, v)
            kk = self.kc[li][:, :, :ctx_len]
            vv = self.vc[li][:, :, :ctx_len]
            a = F.scaled_dot_product_attention(q, kk, vv, is_causal=causal,
                                               enable_gqa=c["kv"] != c["heads"])
            a = a.transpose(1, 2).reshape(B, S, c["heads"] * self.D)
            x = x + F.linear(a, L["o"])
            h = self.rms(x, L["ln2"])
            if self.fused:
                g, u = F.linear(h, L["gu"]).chunk(2, dim=-1)
            else:
                g, u = F.linear(h, L["gate"]), F.linear(h, L["up"])
            x = x + F.linear(F.silu(g) * u, L["down"])
        x = self.rms(x[:, -1:, :], self.norm)
        return F.linear(x, self.head)


def weight_bytes(c):
    H, D = c["hidden"], c["hidden"] // c["heads"]
    per = H * c["heads"] * D * 2 + 2 * H * c["kv"] * D + 3 * H * c["ffn"]
    return 2 * (c["layers"] * per + 2 * c["vocab"] * H)


def sec_model():
    for cfg in (LLAMA3_8B, LLAMA2_7B):
        m = Llama(cfg)
        wb = weight_bytes(cfg)
        torch.cuda.synchronize()
        with torch.no_grad():
            # decode: one new token per sequence, ctx tokens already in the cache
            cases = [(1, 2048), (16, 2048), (64, 2048), (1, 8192), (16, 8192)]
            if cfg is LLAMA2_7B:
                cases = [(1, 2048), (16, 2048)]
            for B, ctx in cases:
                m.alloc_cache(B, ctx + 1)
                ids = torch.randint(0, cfg["vocab"], (B, 1), device=DEV)
                pos = torch.tensor([ctx], device=DEV)

                def step(i):
                    return m.forward(ids, pos, ctx + 1, False)
                for _ in range(3):
                    step(0)
                torch.cuda.synchronize()
                # eager: host wall time per step, synchronised each step (as a token loop is)
                walls = []
                for _ in range(15):
                    t0 = time.perf_counter()
                    step(0)
                    torch.cuda.synchronize()
                    walls.append(time.perf_counter() - t0)
                # eager, device time per step
                te, _, _ = bench(step, 5e-3, min_graph_s=2e-2, use_graph=False)
                tg, how, reps = bench(step, 5e-3, min_graph_s=2e-2)
                emit("model", model=cfg["name"], phase="decode", batch=B, context=ctx,
                     eager_wall_s=statistics.median(walls), eager_events_s=te, graph_s=tg,
                     method=how, reps=reps, weight_bytes=wb,
                     kv_bytes=2 * cfg["layers"] * B * (ctx + 1) * cfg["kv"] * m.D * 2, **nvml_now())
                log("decode", cfg["name"], B, ctx, f"eager {statistics.median(walls)*1e3:.2f} ms",
                    f"graph {tg*1e3:.3f} ms")
                if cfg is LLAMA3_8B and B == 1 and ctx == 2048:
                    trace_step(lambda: step(0), "decode-llama3-8b-b1-ctx2048")
                m.kc = m.vc = None
                torch.cuda.empty_cache()
            if cfg is LLAMA2_7B:
                del m
                torch.cuda.empty_cache()
                continue
            for S in (512, 2048, 8192):
                m.alloc_cache(1, S)
                ids = torch.randint(0, cfg["vocab"], (1, S), device=DEV)
                pos = torch.arange(S, device=DEV)

                def pre(i):
                    return m.forward(ids, pos, S, True)
                for _ in range(2):
                    pre(0)
                torch.cuda.synchronize()
                walls = []
                for _ in range(5):
                    t0 = time.perf_counter()
                    pre(0)
                    torch.cuda.synchronize()
                    walls.append(time.perf_counter() - t0)
                te, _, reps = bench(pre, 0.05, min_graph_s=0.1, replays=3, use_graph=False)
                emit("model", model=cfg["name"], phase="prefill", batch=1, context=0, prompt=S,
                     eager_wall_s=statistics.median(walls), eager_events_s=te, reps=reps,
                     weight_bytes=wb, **nvml_now())
                log("prefill", S, f"{te*1e3:.2f} ms")
                if S == 2048:
                    trace_step(lambda: pre(0), "prefill-llama3-8b-b1-s2048")
                m.kc = m.vc = None
                torch.cuda.empty_cache()
        del m
        torch.cuda.empty_cache()
    log("model done")


def sec_model_fused():
    """Llama-3-8B decode with fused qkv and gate-up projections (gpt-fast's and vLLM's
    layout), graph-timed: against sec_model's unfused rows, what the layout costs."""
    m = Llama(LLAMA3_8B, fused=True)
    with torch.no_grad():
        for B, ctx in ((1, 2048), (16, 2048), (64, 2048), (1, 8192)):
            m.alloc_cache(B, ctx + 1)
            ids = torch.randint(0, LLAMA3_8B["vocab"], (B, 1), device=DEV)
            pos = torch.tensor([ctx], device=DEV)

            def step(i):
                return m.forward(ids, pos, ctx + 1, False)
            tg, how, reps = bench(step, 5e-3, min_graph_s=2e-2)
            emit("model", model="llama-3-8b", layout="fused-qkv-gateup", phase="decode", batch=B,
                 context=ctx, graph_s=tg, method=how, reps=reps,
                 weight_bytes=weight_bytes(LLAMA3_8B), **nvml_now())
            log("fused decode", B, ctx, f"graph {tg*1e3:.3f} ms")
            if B == 1 and ctx == 2048:
                trace_step(lambda: step(0), "decode-llama3-8b-fused-b1-ctx2048")
            m.kc = m.vc = None
            torch.cuda.empty_cache()
    del m
    torch.cuda.empty_cache()


def trace_step(fn, name):
    from torch.profiler import profile, ProfilerActivity
    try:
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                     record_shapes=True) as prof:
            fn()
            torch.cuda.synchronize()
        path = f"/tmp/{name}.json"
        prof.export_chrome_trace(path)
        with open(path, "rb") as f, gzip.open(os.path.join(OUT, name + ".json.gz"), "wb") as g:
            shutil.copyfileobj(f, g)
        log("trace", name, os.path.getsize(os.path.join(OUT, name + ".json.gz")), "bytes")
    except Exception as e:
        log("trace", name, "failed:", repr(e)[:200])


def sec_power():
    """Soaks of a few seconds each with NVML sampled every 10 ms: idle, a DRAM
    copy, an 8192^3 bf16 GEMM, and a Llama-3-8B batch-1 decode step (graph)."""
    def soak(name, fn, per_call_s, seconds=3.0, **extra):
        n = max(1, int(seconds / per_call_s))
        torch.cuda.synchronize()
        with Sampler() as smp:
            e0 = torch.cuda.Event(enable_timing=True)
            e1 = torch.cuda.Event(enable_timing=True)
            e0.record()
            for i in range(n):
                fn(i)
            e1.record()
            e1.synchronize()
        t = e0.elapsed_time(e1) / 1e3 / n
        emit("power", case=name, calls=n, s_per_call=t, **extra, **smp.summary())
        log("power", name, f"{t*1e3:.3f} ms/call", smp.summary().get("power_w_median"),
            "W", smp.summary().get("sm_mhz_median"), "MHz")
        return t

    torch.cuda.synchronize()
    with Sampler() as smp:
        time.sleep(1.5)
    emit("power", case="idle", **smp.summary())
    n = 2**31
    a = torch.randint(0, 255, (n,), dtype=torch.uint8, device=DEV)
    b = torch.empty_like(a)
    t = soak("d2d copy 2 GiB", lambda i: b.copy_(a), 2 * n / 4e12)
    emit("power", case="d2d copy 2 GiB rate", GBps=2 * n / t / 1e9)
    del a, b
    torch.cuda.empty_cache()
    s = 8192
    xs = [rand((s, s), torch.bfloat16) for _ in range(2)]
    ws = [rand((s, s), torch.bfloat16) for _ in range(2)]
    ys = [torch.empty((s, s), device=DEV, dtype=torch.bfloat16) for _ in range(2)]
    t = soak("gemm bf16 8192^3", lambda i: torch.mm(xs[i % 2], ws[i % 2].t(), out=ys[i % 2]),
             2 * s**3 / 7e14, seconds=5.0)
    emit("power", case="gemm bf16 8192^3 rate", TFLOPs=2 * s**3 / t / 1e12)
    del xs, ws, ys
    torch.cuda.empty_cache()
    m = Llama(LLAMA3_8B)
    with torch.no_grad():
        m.alloc_cache(1, 2049)
        ids = torch.randint(0, LLAMA3_8B["vocab"], (1, 1), device=DEV)
        pos = torch.tensor([2048], device=DEV)
        s_ = torch.cuda.Stream()
        s_.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s_):
            for _ in range(3):
                m.forward(ids, pos, 2049, False)
        torch.cuda.current_stream().wait_stream(s_)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            m.forward(ids, pos, 2049, False)
        soak("decode llama-3-8b b1 ctx2048 (graph)", lambda i: g.replay(), 4e-3, seconds=4.0)
    del m
    torch.cuda.empty_cache()


SECTIONS = {"env": sec_env, "copy": sec_copy, "stream": sec_stream, "host": sec_host, "gemm": sec_gemm,
            "attn": sec_attn, "decode_attn": sec_decode_attn, "model": sec_model,
            "model_fused": sec_model_fused, "power": sec_power}


def main():
    want = sys.argv[1:] or list(SECTIONS)
    torch.manual_seed(0)
    log("start", want)
    for name in want:
        t0 = time.time()
        try:
            SECTIONS[name]()
        except Exception as e:
            emit("error", where=name, error=repr(e)[:500])
            log("SECTION FAILED", name, repr(e)[:300])
            traceback.print_exc()
        emit("timing", where=name, wall_s=time.time() - t0)
        torch.cuda.empty_cache()
    log("all done")
    ROWS.flush()
    counts, errs = {}, 0
    with open(os.path.join(OUT, "rows.jsonl")) as f:
        for line in f:
            r = json.loads(line)
            counts[r["section"]] = counts.get(r["section"], 0) + 1
            errs += "error" in r
            if r["section"] in ("power", "model") or (r["section"] == "gemm" and r.get("m") == r.get("n") == r.get("k") == 8192):
                print({k: (round(v, 6) if isinstance(v, float) else v) for k, v in r.items()})
    print("rows per section:", counts, "rows with an error:", errs)


if __name__ == "__main__":
    main()
