/* test_unit_stack.c: software stacks as data (sim/study/stack.c,
 * configs/stacks/, docs/stacks.md): every shipped stack loads; a bad stack
 * file is a clear error (unknown key, a value without a source, a source
 * for no value, an unknown attention or path); a stack a chip cannot run is
 * an error naming the stacks that can; and what a stack changes reaches
 * the run: its host loop (a kernel cannot begin before the CPU has issued
 * it), its GEMM rate and its decode attention's bytes.
 *
 * The host loop, worked: pytorch-2.4-eager issues a kernel every 8.91 us.
 * 200 tiny elementwise kernels (1024 fp32 elements: well under a
 * microsecond each on an H100) take at least 200 x 8.91 = 1782 us with it,
 * and about 200 x 2.5 us (the H100's launch overhead) without. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfg.h"
#include "check.h"
#include "run.h"
#include "stack.h"
#include "test.h"
#include "util.h"

#define H100 "configs/nvidia-h100-sxm.yaml"
#define V5E "configs/google-tpu-v5e.yaml"

static char dir[64];

static const char *path_in(const char *name)
{
    static char buf[4][160];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
    return buf[k];
}

static const char good[] =
    "name: t\n"
    "runs_on: [gpu]\n"
    "host:\n"
    "  kernel_dispatch_us: 5\n"
    "sources:\n"
    "  runs_on: \"a test: nothing to cite\"\n"
    "  host.kernel_dispatch_us: \"a test: nothing to cite\"\n";

/* good with from replaced by to; expects an error at line with field. */
static void expect_bad(const char *name, const char *from, const char *to, int line, const char *field,
                       const char *msg)
{
    char text[2048];
    const char *at = strstr(good, from);
    SIM_CHECK(at != NULL);
    snprintf(text, sizeof text, "%.*s%s%s", (int)(at - good), good, to, at + strlen(from));
    tu_write_file(path_in("bad.yaml"), text);
    struct stack s;
    struct diag d;
    memset(&d, 0, sizeof d);
    int rc = stack_load(path_in("bad.yaml"), &s, &d);
    if (rc == 0 || d.line != line || strcmp(d.field, field) != 0 || strstr(d.msg, msg) == NULL)
        fprintf(stderr, "  %s: rc %d, line %d field '%s' msg '%s'\n", name, rc, d.line, d.field, d.msg);
    CHECK(rc != 0);
    CHECK_EQ_INT(d.line, line);
    CHECK(strcmp(d.field, field) == 0);
    CHECK_STR_CONTAINS(d.msg, msg);
}

static void test_load(void)
{
    const char *shipped[] = {"pytorch-2.4-eager", "vllm-0.2", "trtllm-0.6", "trtllm-0.12", "llama.cpp-b2843"};
    struct stack s;
    struct diag d;
    memset(&d, 0, sizeof d);
    for (size_t i = 0; i < sizeof shipped / sizeof shipped[0]; i++) {
        int rc = stack_find("configs/stacks", shipped[i], &s, &d);
        if (rc != 0)
            diag_print(&d, stderr);
        CHECK_EQ_INT(rc, 0);
        CHECK(strcmp(s.name, shipped[i]) == 0);
    }
    CHECK(stack_find("configs/stacks", "vllm-0.1", &s, &d) != 0);
    CHECK_STR_CONTAINS(d.msg, "unknown stack 'vllm-0.1'");
    CHECK_STR_CONTAINS(d.msg, "vllm-0.2");      /* the ones there are */
    tu_write_file(path_in("good.yaml"), good);
    CHECK_EQ_INT(stack_load(path_in("good.yaml"), &s, &d), 0);
    CHECK_NEAR_REL(s.kernel_dispatch_s, 5e-6, 1e-12);
    CHECK(s.step_s < 0 && s.gemm_path < 0);
    expect_bad("unknown key", "host:\n", "hots: 1\nhost:\n", 3, "hots", "unknown key");
    expect_bad("no source", "  host.kernel_dispatch_us: \"a test: nothing to cite\"\n", "", 4,
               "host.kernel_dispatch_us", "no source");
    expect_bad("stale source", "sources:\n", "sources:\n  host.step_us: \"a test: nothing\"\n", 6, "sources",
               "names no value");
    expect_bad("unknown attention", "host:\n", "attention:\n  decode: mmhaa\nhost:\n", 4, "attention.decode",
               "unknown attention 'mmhaa'");
    expect_bad("unknown path", "host:\n", "gemm: {path: wmma, issue_efficiency: 0.5}\nhost:\n", 3,
               "gemm.path", "unknown matrix path 'wmma'");
    expect_bad("negative time", "kernel_dispatch_us: 5", "kernel_dispatch_us: -5", 4,
               "host.kernel_dispatch_us", ">= 0");
    expect_bad("no families", "runs_on: [gpu]", "runs_on: gpu", 2, "runs_on", "a list");
    expect_bad("unknown rings", "host:\n", "collectives: {rings: two}\nhost:\n", 3, "collectives.rings",
               "expected all_links or one, got 'two'");
    expect_bad("rings without a source", "host:\n", "collectives: {rings: one}\nhost:\n", 3,
               "collectives.rings", "no source");
    /* the shipped ROCm stack keeps one ring; the Optimum Habana one runs on Gaudi (npu) */
    CHECK_EQ_INT(stack_find("configs/stacks", "vllm-0.7-rocm", &s, &d), 0);
    CHECK_EQ_INT(s.coll_one_ring, 1);
    CHECK_EQ_INT(stack_find("configs/stacks", "optimum-habana-1.16", &s, &d), 0);
    CHECK_EQ_INT(s.coll_one_ring, -1);
    CHECK(s.serve_static == 1);
}

static void test_chip(void)
{
    struct hw_config h100, v5e;
    CHECK_EQ_INT(tu_load_cfg(H100, &h100), 0);
    CHECK_EQ_INT(tu_load_cfg(V5E, &v5e), 0);
    struct stack s;
    struct diag d;
    memset(&d, 0, sizeof d);
    CHECK_EQ_INT(stack_find("configs/stacks", "llama.cpp-b2843", &s, &d), 0);
    struct hw_config c = v5e;
    CHECK(stack_apply_chip(&s, &c, "configs/stacks", &d) != 0);
    CHECK_STR_CONTAINS(d.msg, "not on google-tpu-v5e");
    CHECK_STR_CONTAINS(d.msg, "stacks that run on google-tpu-v5e: none");
    c = h100;
    CHECK_EQ_INT(stack_apply_chip(&s, &c, "configs/stacks", &d), 0);
    /* its GEMMs: the mma.sync path's fraction (0.80 on an H100) times the
     * efficiency it gives for the chip's generation: Hopper (wgmma) 0.36,
     * Ampere and Ada (mma_sync) 0.675 */
    CHECK_EQ_INT(stack_native_path(&h100), MP_WGMMA);
    CHECK_NEAR_REL(c.gemm_rate_frac, h100.matrix_path_frac[MP_MMA_SYNC] * 0.36, 1e-12);
    CHECK_EQ_INT(c.gemm_deq_kernel_min_m, 33);      /* dequantised in a kernel of its own */
    CHECK_NEAR_REL(c.gemv_inflight_bytes_per_unit, 9728, 0);   /* its fp16 mat-vec kernel */
    struct hw_config g4 = {0};
    CHECK_EQ_INT(tu_load_cfg("configs/nvidia-rtx-4090.yaml", &g4), 0);
    CHECK_EQ_INT(stack_native_path(&g4), MP_MMA_SYNC);
    CHECK_EQ_INT(stack_apply_chip(&s, &g4, NULL, &d), 0);
    CHECK_NEAR_REL(g4.gemm_rate_frac, 0.675, 1e-12);
    /* a generation the stack gives no efficiency for: Blackwell (tcgen05) */
    struct hw_config b200;
    CHECK_EQ_INT(tu_load_cfg("configs/nvidia-b200.yaml", &b200), 0);
    CHECK(stack_apply_chip(&s, &b200, NULL, &d) != 0);
    CHECK(strcmp(d.field, "gemm.issue_efficiency") == 0);
    CHECK_STR_CONTAINS(d.msg, "no efficiency for nvidia-b200's generation (tcgen05");
    /* no gemm.path: the chip's own newest (TensorRT-LLM's kernels): wgmma on an
     * H100 at 0.516, mma.sync on an A100 at 0.772 */
    struct stack trt;
    CHECK_EQ_INT(stack_find("configs/stacks", "trtllm-0.6", &trt, &d), 0);
    c = h100;
    CHECK_EQ_INT(stack_apply_chip(&trt, &c, NULL, &d), 0);
    CHECK_NEAR_REL(c.gemm_rate_frac, h100.matrix_path_frac[MP_WGMMA] * 0.516, 1e-12);
    CHECK_EQ_INT(c.gemm_no_tma, 0);
    CHECK_EQ_INT(c.launch_overhead_ps, 8830000);
    CHECK_NEAR_REL(c.gemv_inflight_bytes_per_unit, 0, 0);      /* not given: the stream kernel's */
    struct hw_config a1;
    CHECK_EQ_INT(tu_load_cfg("configs/nvidia-a100-sxm-80gb.yaml", &a1), 0);
    CHECK_EQ_INT(stack_apply_chip(&trt, &a1, NULL, &d), 0);
    CHECK_NEAR_REL(a1.gemm_rate_frac, 0.772, 1e-12);
    CHECK_EQ_INT(a1.gemm_no_tma, 1);
    /* a path the chip lacks: wgmma on an A100 */
    struct hw_config a100;
    CHECK_EQ_INT(tu_load_cfg("configs/nvidia-a100-sxm-80gb.yaml", &a100), 0);
    s.gemm_path = MP_WGMMA;
    CHECK(stack_apply_chip(&s, &a100, NULL, &d) != 0);
    CHECK_STR_CONTAINS(d.msg, "issue wgmma");
    /* fp16 accumulation (cuBLAS CUBLAS_COMPUTE_16F): a GeForce card's fp16 rate doubles, a
     * datacenter card's (one rate for both) stays */
    CHECK_EQ_INT(stack_find("configs/stacks", "llama.cpp-b2843", &s, &d), 0);
    CHECK(s.gemm_acc16);
    struct hw_config g4090, g = h100;
    CHECK_EQ_INT(tu_load_cfg("configs/nvidia-rtx-4090.yaml", &g4090), 0);
    c = g4090;
    CHECK_EQ_INT(stack_apply_chip(&s, &c, NULL, &d), 0);
    CHECK_NEAR_REL(c.matrix_flops_per_cycle[DT_FP16], 2 * g4090.matrix_flops_per_cycle[DT_FP16], 1e-12);
    CHECK_NEAR_REL(c.matrix_flops_per_cycle[DT_BF16], g4090.matrix_flops_per_cycle[DT_BF16], 0);
    CHECK_EQ_INT(stack_apply_chip(&s, &g, NULL, &d), 0);
    CHECK_NEAR_REL(g.matrix_flops_per_cycle[DT_FP16], h100.matrix_flops_per_cycle[DT_FP16], 0);
    expect_bad("acc.yaml", "host:\n", "gemm:\n  path: mma_sync\n  issue_efficiency: 0.3\n  accumulate: fp8\nhost:\n",
               6, "gemm.accumulate", "expected fp16");
    expect_bad("generation", "host:\n", "gemm:\n  path: mma_sync\n  issue_efficiency: {ampere: 0.5}\nhost:\n", 5,
               "gemm.issue_efficiency", "'ampere' is no chip generation");
    expect_bad("share", "host:\n", "gemm:\n  path: mma_sync\n  issue_efficiency: {wgmma: 1.5}\nhost:\n", 5,
               "gemm.issue_efficiency.wgmma", "");
    expect_bad("dequant rows", "host:\n", "gemm:\n  path: mma_sync\n  issue_efficiency: 0.5\n  "
               "dequant_kernel_min_m: 0\nhost:\n", 6, "gemm.dequant_kernel_min_m", "");
    expect_bad("ubatch", "host:\n", "prefill:\n  ubatch: 0\nhost:\n", 4, "prefill.ubatch", "");
    expect_bad("ubatch key", "host:\n", "prefill:\n  ubatches: 512\nhost:\n", 4, "prefill.ubatches", "did you mean 'ubatch'");
    expect_bad("ubatch source", "host:\n", "prefill:\n  ubatch: 512\nhost:\n", 4, "prefill.ubatch", "no source");
}

/* n tiny elementwise kernels in a chain, on c; the run's total in s. */
static double chain_s(const struct hw_config *c, int n)
{
    char *text = malloc(200 * (size_t)n + 200);
    SIM_CHECK(text != NULL);
    size_t u = (size_t)sprintf(text, "{\"strata_trace\": 1, \"ops\": [");
    for (int i = 0; i < n; i++) {
        char deps[48] = "";
        if (i > 0)
            snprintf(deps, sizeof deps, ", \"deps\": [\"e%d\"]", i - 1);
        u += (size_t)sprintf(text + u, "%s{\"id\": \"e%d\", \"kind\": \"elementwise\", \"dtype\": \"fp32\", "
                                       "\"elements\": 1024, \"inputs\": 1, \"outputs\": 1%s}",
                             i ? ", " : "", i, deps);
    }
    sprintf(text + u, "]}");
    tu_write_file(path_in("chain.json"), text);
    free(text);
    struct trace t;
    SIM_CHECK(tu_load_trace(path_in("chain.json"), &t) == 0);
    struct run_result r;
    struct diag d;
    memset(&d, 0, sizeof d);
    int rc = run_trace(c, &t, &r, &d);
    if (rc != 0)
        diag_print(&d, stderr);
    SIM_CHECK(rc == 0);
    double s = (double)r.total_ps * 1e-12;
    run_result_free(&r);
    trace_free(&t);
    return s;
}

static void test_host_loop(void)
{
    struct hw_config h100;
    CHECK_EQ_INT(tu_load_cfg(H100, &h100), 0);
    struct stack s;
    struct diag d;
    memset(&d, 0, sizeof d);
    CHECK_EQ_INT(stack_find("configs/stacks", "pytorch-2.4-eager", &s, &d), 0);
    struct hw_config c = h100;
    CHECK_EQ_INT(stack_apply_chip(&s, &c, NULL, &d), 0);
    CHECK_EQ_INT(c.host_dispatch_ps, 8910000);
    double without = chain_s(&h100, 200), with = chain_s(&c, 200);
    printf("  200 tiny kernels on an H100: %.1f us bare, %.1f us from PyTorch eager\n", without * 1e6,
           with * 1e6);
    CHECK(without < 200 * 4e-6);            /* launch-bound: 2.5 us each and a little */
    CHECK(with >= 200 * 8.91e-6);           /* host-bound: the CPU issues one every 8.91 us */
    CHECK(with < 200 * 8.91e-6 + 10e-6);    /* and the GPU keeps up */
}

/* |error| of each row `strata validate` runs from csv (rows: a --rows
 * list, or NULL for all) into err[max]; the number of rows. */
static int row_errors(const char *csv, const char *rows, double *err, int max)
{
    char cmd[700], js[160];
    snprintf(js, sizeof js, "%s/rows.json", dir);
    snprintf(cmd, sizeof cmd, "'%s' validate --data %s --quiet --json '%s'%s%s >/dev/null", STRATA_BINARY, csv,
             js, rows ? " --rows " : "", rows ? rows : "");
    CHECK_EQ_INT(tu_sh(cmd), 0);
    char *text = tu_read_file(js, NULL);
    CHECK(text != NULL);
    int n = 0;
    for (const char *p = text; p != NULL && n < max && (p = strstr(p, "\"error\":")) != NULL; p++)
        err[n++] = fabs(strtod(p + strlen("\"error\":"), NULL));
    free(text);
    return n;
}

/* Issue 32's acceptance for the layer split: Llama-3-70B Q4_K_M decode with
 * llama.cpp on 2 to 8 consumer GPUs (llama-bench tg, public figures in
 * traces/validation/stacks/llamacpp.csv; no constant was fitted on them)
 * within 15% at the median and 20% at worst. */
static void test_layer_split_rows(void)
{
    double err[16];
    int n = row_errors("traces/validation/stacks/llamacpp.csv",
                       "GPUBENCH-068,GPUBENCH-071,GPUBENCH-074,GPUBENCH-077,GPUBENCH-080,GPUBENCH-083,"
                       "GPUBENCH-086,GPUBENCH-089,GPUBENCH-092,GPUBENCH-095", err, 16);
    CHECK_EQ_INT(n, 10);
    double worst = 0;
    int within15 = 0;
    for (int i = 0; i < n; i++) {
        worst = err[i] > worst ? err[i] : worst;
        within15 += err[i] <= 0.15;
    }
    printf("  70B Q4_K_M decode, layer split on 2-8 consumer GPUs: %d of %d within 15%%, worst %.1f%%\n",
           within15, n, 100 * worst);
    CHECK(2 * within15 > n);    /* the median within 15% */
    CHECK(worst < 0.20);
}

/* validate --leave-one-stack-out: each stack's rows with every other
 * stack's values.  TensorRT-LLM's first-token rows are predicted better by
 * its own values (its launch gap and GEMM efficiency) than by MLC's (none:
 * the chip's own), and a row the other stack cannot run is left out, said. */
static void test_leave_one_stack_out(void)
{
    char cmd[700], out[160];
    snprintf(out, sizeof out, "%s/loso.txt", dir);
    snprintf(cmd, sizeof cmd, "'%s' validate --data traces/validation/stacks/trtllm.csv,"
             "traces/validation/stacks/mlc.csv --leave-one-stack-out > '%s'", STRATA_BINARY, out);
    CHECK_EQ_INT(tu_sh(cmd), 0);
    char *text = tu_read_file(out, NULL);
    CHECK(text != NULL);
    if (text == NULL)
        return;
    double own = -1, other = -1;
    const char *p = strstr(text, "trtllm-0.6             its own");
    if (p != NULL)
        sscanf(p + strlen("trtllm-0.6             its own"), "%*u %lf", &own);
    p = p != NULL ? strstr(p, "mlc-llm") : NULL;
    if (p != NULL)
        sscanf(p + strlen("mlc-llm"), "%*u %lf", &other);
    printf("  TensorRT-LLM first-token rows: median %.1f%% with its own values, %.1f%% with MLC's\n", own,
           other);
    CHECK(own > 0 && own < 15);
    CHECK(other > 2 * own);
    free(text);
    /* several files only with it */
    snprintf(cmd, sizeof cmd, "'%s' validate --data traces/validation/stacks/trtllm.csv,"
             "traces/validation/stacks/mlc.csv > /dev/null 2>&1", STRATA_BINARY);
    CHECK_EQ_INT(tu_sh(cmd), 2);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of n errors (sorted in place). */
static double median_of(double *err, int n)
{
    qsort(err, (size_t)n, sizeof *err, cmp_double);
    return n % 2 ? err[n / 2] : 0.5 * (err[n / 2 - 1] + err[n / 2]);
}

/* ExLlamaV2's README table (traces/validation/stacks/exllamav2.csv, nothing
 * fitted): 22 decode rows on a 3090 Ti and a 4090, GPTQ and EXL2 at their
 * own bitrates (wfmt.h), TinyLlama-1.1B to Llama-2-70B.  Llama-2-70B at 2.5
 * bits fits one 24 GB card (as int4 it spilled to the host and came out 94%
 * slow): within 20% on both cards; the table's median within 12%. */
static void test_exl2_rows(void)
{
    double err[32], worst = 0;
    int n = row_errors("traces/validation/stacks/exllamav2.csv", NULL, err, 32);
    for (int i = 0; i < n; i++)
        worst = fmax(worst, err[i]);
    double med = n > 0 ? median_of(err, n) : 1;
    printf("  ExLlamaV2 decode rows: %d, median %.1f%%, worst %.1f%%\n", n, 100 * med, 100 * worst);
    CHECK_EQ_INT(n, 22);
    CHECK(med < 0.12);
    CHECK(worst < 0.45);
    n = row_errors("traces/validation/stacks/exllamav2.csv", "EXL2-009,EXL2-020", err, 32);
    CHECK_EQ_INT(n, 2);
    for (int i = 0; i < n; i++)
        CHECK(err[i] < 0.20);
}

/* llama.cpp's fp16 matrix-vector kernel on HBM cards
 * (gemm.float_matvec_inflight_bytes_per_unit, fitted on 7 of the 21 F16
 * decode rows): a warp a row keeps too few bytes in flight for an A100's
 * or H100's 18-19 GB/s of DRAM an SM, so the fp16 Llama-3 decode rows there
 * reach about half the rated bandwidth; with the streaming kernel's
 * in-flight bytes they came out 32-74% fast.  These four are held out. */
static void test_llamacpp_f16_decode(void)
{
    double err[8];
    int n = row_errors("traces/validation/stacks/llamacpp.csv",
                       "GPUBENCH-036,GPUBENCH-044,GPUBENCH-126,GPUBENCH-128", err, 8);
    CHECK_EQ_INT(n, 4);
    for (int i = 0; i < n; i++) {
        printf("  llama.cpp fp16 decode on HBM, held out: %.1f%%\n", 100 * err[i]);
        CHECK(err[i] < 0.20);
    }
}

/* `strata args` fails (with status rc; -1: any but 0) saying want. */
static void cli_refused(const char *args, int rc, const char *want)
{
    char *out = NULL, *err = NULL;
    int got = tu_run_strata(dir, args, &out, &err);
    if (rc < 0)
        CHECK(got != 0);
    else
        CHECK_EQ_INT(got, rc);
    CHECK_STR_CONTAINS(err, want);
    free(out);
    free(err);
}

/* `--set stack.KEY=V` on run: the value reaches the run (fewer bytes in
 * flight, a slower fp16 decode on an A100), and without --stack it is an
 * error rather than a set that changes nothing. */
static void test_run_stack_set(void)
{
    char *out = NULL, *err = NULL, args[1024];
    snprintf(args, sizeof args, "gen llm --model traces/models/llama-3-8b.json --phase decode --batch 1 "
             "--context 256 --dtype fp16 --stack llama.cpp-b2843 -o '%s'", path_in("d.json"));
    CHECK_EQ_INT(tu_run_strata(dir, args, &out, &err), 0);
    free(out);
    free(err);
    double ms[2] = {0, 0};
    for (int i = 0; i < 2; i++) {
        snprintf(args, sizeof args, "run --hw configs/nvidia-a100-pcie-80gb.yaml --trace '%s' --stack "
                 "llama.cpp-b2843%s", path_in("d.json"),
                 i ? " --set stack.gemm.float_matvec_inflight_bytes_per_unit=x0.5" : "");
        CHECK_EQ_INT(tu_run_strata(dir, args, &out, &err), 0);
        const char *t = out != NULL ? strstr(out, "total time") : NULL;
        CHECK(t != NULL && sscanf(t + strlen("total time"), "%lf", &ms[i]) == 1);
        free(out);
        free(err);
    }
    printf("  fp16 decode on an A100, llama.cpp: %.2f ms, half the bytes in flight %.2f ms\n", ms[0], ms[1]);
    CHECK(ms[1] > 1.5 * ms[0]);     /* latency-bound: about twice */
    snprintf(args, sizeof args, "run --hw configs/nvidia-a100-pcie-80gb.yaml --trace '%s' "
             "--set stack.gemm.float_matvec_inflight_bytes_per_unit=4096", path_in("d.json"));
    cli_refused(args, -1, "no --stack names one");
    /* a verb that takes no --stack at all refuses it too */
    cli_refused("info --hw configs/nvidia-h100-sxm.yaml --set stack.host.step_us=5", 2, "info takes no --stack");
    /* a value out of range is blamed on the --set that gave it */
    snprintf(args, sizeof args, "run --hw configs/nvidia-a100-pcie-80gb.yaml --trace '%s' --stack llama.cpp-b2843 "
             "--set stack.gemm.float_matvec_inflight_bytes_per_unit=0.5", path_in("d.json"));
    cli_refused(args, -1, "--set: stack.gemm.float_matvec_inflight_bytes_per_unit: 0.5 is out of range");
}

/* vLLM 0.2's host loop (configs/stacks/vllm-0.2.yaml): eager PyTorch from
 * Python, 19.19 us a kernel, and 30.3 ms a step fitted on 3 of the 11
 * batch-1 tensor-parallel rows (Llama-2-70B on A100 PCIe, A10G and 4090
 * servers).  Without them every row came out 1.5 to 5 times too fast (a
 * median of 160%); with them the median is within 15%. */
static void test_vllm02_rows(void)
{
    double err[16];
    int n = row_errors("traces/validation/stacks/vllm.csv", NULL, err, 16);
    CHECK_EQ_INT(n, 11);
    double med = n > 0 ? median_of(err, n) : 1;
    printf("  vLLM 0.2 tensor-parallel decode rows: %d, median %.1f%%, worst %.1f%%\n", n, 100 * med,
           100 * (n > 0 ? err[n - 1] : 0));
    CHECK(med < 0.15);
}

/* A stack's numbers set from outside (`stack.KEY=V`, as calibrate --stack
 * sets them): absolute, relative (xF), by generation; a key the stack does
 * not give that way, or a value out of range, is an error. */
static void test_stack_sets(void)
{
    struct stack s;
    struct diag d;
    memset(&d, 0, sizeof d);
    CHECK_EQ_INT(stack_find("configs/stacks", "trtllm-0.6", &s, &d), 0);
    struct cfg_sets sets;
    memset(&sets, 0, sizeof sets);
    CHECK_EQ_INT(cfg_sets_add(&sets, "stack.host.launch_gap_us=x2", "--set", &d), 0);
    CHECK_EQ_INT(cfg_sets_add(&sets, "stack.gemm.issue_efficiency.wgmma=0.6", "--set", &d), 0);
    CHECK_EQ_INT(cfg_sets_add(&sets, "dram.efficiency.bandwidth_fraction=0.9", "--set", &d), 0);  /* a chip's */
    CHECK_EQ_INT(stack_apply_sets(&s, &sets, &d), 0);
    CHECK_NEAR_REL(s.launch_gap_s, 2 * 8.83e-6, 1e-12);
    CHECK_NEAR_REL(s.gemm_issue_by[MP_WGMMA], 0.6, 0);
    double v;
    CHECK_EQ_INT(stack_get_value(&s, "host.launch_gap_us", &v, &d), 0);
    CHECK_NEAR_REL(v, 17.66, 1e-12);
    CHECK(stack_get_value(&s, "gemm.issue_efficiency", &v, &d) != 0);   /* given by generation */
    CHECK(stack_set_value(&s, "gemm.issue_efficiency.wgmma", 1.5, &d) != 0);
    CHECK_STR_CONTAINS(d.msg, "out of range");
    CHECK(stack_get_value(&s, "host.step_us", &v, &d) != 0);            /* not given */
    CHECK_STR_CONTAINS(d.msg, "gives no host.step_us");
    CHECK(stack_set_value(&s, "attention.decode", 1, &d) != 0);
    CHECK_STR_CONTAINS(d.msg, "not a number stack trtllm-0.6 gives");
    /* bytes in flight: a whole number, not a share or a time */
    CHECK_EQ_INT(stack_find("configs/stacks", "llama.cpp-b2843", &s, &d), 0);
    CHECK_EQ_INT(stack_get_value(&s, "gemm.float_matvec_inflight_bytes_per_unit", &v, &d), 0);
    CHECK_NEAR_REL(v, 9728, 0);
    CHECK_EQ_INT(stack_set_value(&s, "gemm.float_matvec_inflight_bytes_per_unit", 2 * v, &d), 0);
    CHECK_NEAR_REL(s.gemm_matvec_inflight, 19456, 0);
    CHECK(stack_set_value(&s, "gemm.float_matvec_inflight_bytes_per_unit", 0.5, &d) != 0);
    CHECK_STR_CONTAINS(d.msg, "1 to 16777216 bytes");
    expect_bad("inflight", "host:\n", "gemm:\n  path: mma_sync\n  issue_efficiency: 0.5\n  "
               "float_matvec_inflight_bytes_per_unit: 0\nhost:\n", 6,
               "gemm.float_matvec_inflight_bytes_per_unit", "");
}

int main(void)
{
    if (tu_mkdtemp(dir, sizeof dir, "strata-stack") != 0)
        return 1;
    test_load();
    test_chip();
    test_host_loop();
    test_layer_split_rows();
    test_leave_one_stack_out();
    test_exl2_rows();
    test_vllm02_rows();
    test_llamacpp_f16_decode();
    test_run_stack_set();
    test_stack_sets();
    tu_rmtree(dir);
    printf("%d passed, %d failed\n", test_passed_, test_failed_);
    return test_failed_ != 0;
}
