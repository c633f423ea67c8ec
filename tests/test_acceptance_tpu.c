/* test_acceptance_tpu.c: TPUs and an NPU through `strata run`.
 *
 *  - the shipped TPU v4/v5e/v5p/v6e and Ethos-U65 configs reproduce their
 *    published peaks (units x FLOP/cycle x clock) and array shapes;
 *  - Llama-2-7B prefill (2048 tokens) and decode (context 2048) run end to
 *    end on TPU v5e and v6e: the stall breakdown adds up to the run's time,
 *    decode waits mostly on HBM and stays under its bandwidth bound, the
 *    prefill GEMMs are compute-bound, and v6e's gains over v5e follow its
 *    ratios of bandwidth (decode) and of MXU throughput (prefill);
 *  - the systolic mechanism itself: with memory made free, a GEMM of 32
 *    rows costs as much as one of 128 on a 128x128 array (each fold holds
 *    the array for max(rows, 128) cycles), while on the same chip without
 *    compute.systolic it costs a quarter;
 *  - an int8 model on the NPU runs and is bound by its 3.75 GB/s DRAM;
 *  - the same tiled model's narrow-load rule on a GPU: a TF32 GEMM whose
 *    row length is odd (2048 x 38313 x 512, as in the A100 training trace,
 *    where cuBLAS ran an "align1" kernel) is much slower than one with a
 *    16-byte multiple (38312), while bf16 shapes that are multiples of 8
 *    are unaffected.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cfg.h"
#include "llm.h"
#include "run.h"
#include "test.h"
#include "../models/tiled/tiled.h"
#include "util.h"

static void check_peaks(void)
{
    static const struct {
        const char *path;
        enum dtype dt;
        double peak;          /* published, FLOP/s */
        double dram;          /* published, bytes/s */
        uint32_t rows;
    } c[] = {
        {"configs/google-tpu-v4.yaml", DT_BF16, 275e12, 1200e9, 128},
        {"configs/google-tpu-v5e.yaml", DT_BF16, 197e12, 819e9, 128},
        {"configs/google-tpu-v5p.yaml", DT_BF16, 459e12, 2765e9, 128},
        {"configs/google-tpu-v6e.yaml", DT_BF16, 918e12, 1638e9, 256},
        {"configs/google-tpu-v6e.yaml", DT_INT8, 1836e12, 1638e9, 256},
        {"configs/google-tpu-v5e.yaml", DT_INT8, 393e12, 819e9, 128},
        {"configs/arm-ethos-u65-256.yaml", DT_INT8, 512e9, 3.75e9, 16},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        struct diag d;
        struct hw_config h;
        CHECK_EQ_INT(tu_load_chip(c[i].path, NULL, &h, &d), 0);
        double peak = h.units * h.matrix_flops_per_cycle[c[i].dt] * h.clock_hz;
        CHECK_NEAR_REL(peak, c[i].peak, 0.005);
        CHECK_NEAR_REL(h.level[h.lv_dram].bw_bytes_per_s, c[i].dram, 1e-9);
        CHECK_EQ_INT(h.sa_rows, c[i].rows);
        CHECK_EQ_INT(h.sa_cols, c[i].rows);
        /* one array per unit: a unit's matrix rate is its array's 2 R C */
        CHECK_NEAR_REL(h.matrix_flops_per_cycle[c[i].dt],
                       (c[i].dt == DT_INT8 && strstr(c[i].path, "v4") == NULL &&
                                strstr(c[i].path, "ethos") == NULL
                            ? 4.0
                            : 2.0) *
                           h.sa_rows * h.sa_cols,
                       1e-9);
        printf("  %-32s %-4s peak %.4g (published %.4g), %ux%u array\n", c[i].path,
               dtype_name(c[i].dt), peak, c[i].peak, h.sa_rows, h.sa_cols);
    }
}

struct llm_run {
    double total_s, tok_s, dram_stall_share, compute_gemm_share;
    double bytes_dram;
};

static struct llm_run run_llm(const char *hw, enum llm_phase ph)
{
    struct llm_run out = {0, 0, 0, 0, 0};
    struct diag d;
    struct hw_config cfg;
    struct llm_config c;
    struct trace t;
    struct run_result r;
    struct llm_step s = {ph, 1, ph == LLM_PREFILL ? 2048 : 1, ph == LLM_PREFILL ? 0 : 2048,
                         DT_BF16, ATTN_FLASH, DT_BF16, WF_NONE, 0, LLM_FW_FUSED, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    if (tu_load_chip(hw, NULL, &cfg, &d) != 0 || llm_config_load("traces/models/llama-2-7b.json", &c, &d) != 0 ||
        llm_build(&c, &s, &t, &d) != 0) {
        diag_print(&d, stderr);
        CHECK(0);
        return out;
    }
    CHECK_EQ_INT(run_trace(&cfg, &t, &r, &d), 0);
    out.total_s = (double)r.total_ps * 1e-12;
    out.tok_s = t.tokens / out.total_s;
    out.bytes_dram = r.bytes[cfg.lv_dram];
    /* the breakdown adds up to the run */
    double sum = 0;
    for (unsigned k = 0; k <= CAT_COUNT; k++)
        sum += r.time_ps[k];
    CHECK_NEAR_REL(sum, (double)r.total_ps, 1e-9);
    out.dram_stall_share = r.time_ps[CAT_STALL + cfg.lv_dram] / (double)r.total_ps;
    /* share of GEMM time in ops whose largest part is busy (compute-bound) */
    double gemm = 0, busy = 0;
    for (uint32_t i = 0; i < t.nops; i++) {
        if (t.ops[i].kind != OP_GEMM)
            continue;
        const struct op_result *o = run_op_body(&r, i);
        double len = (double)(o->end_ps - o->start_ps);
        gemm += len;
        int bound_busy = 1;
        for (unsigned k = 1; k < CAT_COUNT; k++)
            if (o->time_ps[k] > o->time_ps[CAT_BUSY])
                bound_busy = 0;
        if (bound_busy)
            busy += len;
    }
    out.compute_gemm_share = gemm > 0 ? busy / gemm : 0;
    printf("  %-30s %-7s %9.3f ms  %8.1f tok/s  DRAM stall %4.1f%%  compute-bound GEMM time %5.1f%%\n",
           hw, ph == LLM_PREFILL ? "prefill" : "decode", out.total_s * 1e3, out.tok_s,
           100 * out.dram_stall_share, 100 * out.compute_gemm_share);
    run_result_free(&r);
    trace_free(&t);
    return out;
}

static void check_llm(void)
{
    struct llm_run pe = run_llm("configs/google-tpu-v5e.yaml", LLM_PREFILL);
    struct llm_run de = run_llm("configs/google-tpu-v5e.yaml", LLM_DECODE);
    struct llm_run p6 = run_llm("configs/google-tpu-v6e.yaml", LLM_PREFILL);
    struct llm_run d6 = run_llm("configs/google-tpu-v6e.yaml", LLM_DECODE);
    /* decode: HBM-bound, under the bandwidth bound */
    CHECK(de.dram_stall_share > 0.5 && d6.dram_stall_share > 0.3);
    CHECK(de.tok_s < 819e9 / de.bytes_dram);
    CHECK(d6.tok_s < 1638e9 / d6.bytes_dram);
    CHECK(de.tok_s > 0.6 * 819e9 / de.bytes_dram);
    /* prefill: the GEMMs are compute-bound and reach a sane share of peak */
    CHECK(pe.compute_gemm_share > 0.8 && p6.compute_gemm_share > 0.8);
    double flops = 2.0 * 6.74e9 * 2048; /* about 2 x params x tokens */
    CHECK(flops / pe.total_s > 0.3 * 197e12 && flops / pe.total_s < 197e12);
    CHECK(flops / p6.total_s < 918e12);
    /* v6e over v5e: decode follows HBM (2.0x), prefill less than the MXU
     * ratio (4.66x) because attention and elementwise work do not scale */
    double sd = de.total_s / d6.total_s, sp = pe.total_s / p6.total_s;
    printf("  v6e / v5e speed-up: decode %.2fx (HBM 2.00x), prefill %.2fx (MXU peak 4.66x)\n", sd, sp);
    CHECK(sd > 1.4 && sd < 2.1);
    CHECK(sp > 1.2 && sp < 4.66);
}

/* Time of one GEMM m x n x k of type dt on cfg. */
static double gemm_time_mnk(const struct hw_config *cfg, unsigned m, unsigned n, unsigned k,
                            const char *dt)
{
    char path[96];
    snprintf(path, sizeof path, "/tmp/strata-tpu-gemm-%d.json", (int)getpid());
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (f == NULL)
        return 0;
    fprintf(f, "{\"strata_trace\": 1, \"devices\": [\"dev0\"], \"ops\": [\n"
               "{\"id\": \"g\", \"kind\": \"gemm\", \"device\": \"dev0\", \"dtype\": \"%s\", "
               "\"m\": %u, \"n\": %u, \"k\": %u}]}\n", dt, m, n, k);
    fclose(f);
    struct diag d;
    struct trace t;
    struct run_result r;
    double s = 0;
    if (trace_load(path, &t, &d) == 0) {
        CHECK_EQ_INT(run_trace(cfg, &t, &r, &d), 0);
        s = (double)r.total_ps * 1e-12;
        run_result_free(&r);
        trace_free(&t);
    } else {
        diag_print(&d, stderr);
        CHECK(0);
    }
    unlink(path);
    return s;
}

/* Time of one bf16 GEMM m x 8192 x 8192 on cfg. */
static double gemm_time(const struct hw_config *cfg, unsigned m)
{
    return gemm_time_mnk(cfg, m, 8192, 8192, "bf16");
}

static void check_narrow_loads(void)
{
    struct diag d;
    struct hw_config h;
    CHECK_EQ_INT(tu_load_chip("configs/nvidia-a100-sxm-80gb.yaml", NULL, &h, &d), 0);
    double odd = gemm_time_mnk(&h, 2048, 38313, 512, "tf32");
    double even = gemm_time_mnk(&h, 2048, 38312, 512, "tf32");
    double b8 = gemm_time_mnk(&h, 4096, 4096, 4096, "bf16");
    double b9 = gemm_time_mnk(&h, 4096, 4096, 4096 + 8, "bf16");
    printf("  A100 tf32 2048 x n x 512: n=38313 %.1f us, n=38312 %.1f us (measured in the trace: "
           "1385 us, align1); bf16 4096^3 %.1f us, k=4104 %.1f us\n",
           odd * 1e6, even * 1e6, b8 * 1e6, b9 * 1e6);
    CHECK(odd > 1.25 * even); /* 1.33 with the 64 B/cycle port of the A100 config */
    CHECK(b9 < 1.05 * b8 * 4104.0 / 4096.0);
}

static void check_mechanism(void)
{
    struct diag d;
    struct hw_config h;
    CHECK_EQ_INT(tu_load_chip("configs/google-tpu-v5e.yaml", NULL, &h, &d), 0);
    /* make memory (nearly) free and instant so the matrix pipe decides */
    h.level[h.lv_dram].bw_bytes_per_s *= 1000;
    h.level[h.lv_cache[0]].bw_bytes_per_s *= 1000;
    h.level[h.lv_cache[0]].port_bytes_per_cycle_per_unit *= 1000;
    h.level[h.lv_smem].bw_bytes_per_cycle *= 1000;
    h.launch_overhead_ps = 0;
    h.level[h.lv_dram].latency_ps = h.level[h.lv_cache[0]].latency_ps = h.level[h.lv_dram].eff_loaded_latency_ps = 1000;
    double s32 = gemm_time(&h, 32), s128 = gemm_time(&h, 128), s1024 = gemm_time(&h, 1024);
    struct hw_config g = h;
    g.sa_rows = g.sa_cols = 0; /* the same chip with a GPU-like matrix pipe */
    double g32 = gemm_time(&g, 32), g128 = gemm_time(&g, 128);
    printf("  m x 8192 x 8192 on v5e, memory free: m=32 %.2f us, m=128 %.2f us, m=1024 %.2f us; "
           "without the array: m=32 %.2f us, m=128 %.2f us\n",
           s32 * 1e6, s128 * 1e6, s1024 * 1e6, g32 * 1e6, g128 * 1e6);
    CHECK(s32 > 0.8 * s128);           /* a fold holds the array for 128 cycles either way */
    CHECK(g32 < 0.5 * g128);           /* without the array, work scales with m */
    CHECK(s1024 > 6.0 * s128 && s1024 < 9.0 * s128); /* past 128 rows, work scales again */
}

static double gemm_time_mnk(const struct hw_config *cfg, unsigned m, unsigned n, unsigned k,
                            const char *dt);

static void check_npu(void)
{
    struct diag d;
    struct hw_config cfg;
    struct llm_config c;
    struct trace t;
    struct run_result r;
    struct llm_step s = {LLM_PREFILL, 1, 128, 0, DT_INT8, ATTN_FLASH, DT_INT8, WF_NONE, 0, LLM_FW_FUSED, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    if (tu_load_chip("configs/arm-ethos-u65-256.yaml", NULL, &cfg, &d) != 0 ||
        llm_config_load("traces/models/smollm-135m.json", &c, &d) != 0 || llm_build(&c, &s, &t, &d) != 0) {
        diag_print(&d, stderr);
        CHECK(0);
        return;
    }
    CHECK_EQ_INT(run_trace(&cfg, &t, &r, &d), 0);
    double stall = r.time_ps[CAT_STALL + cfg.lv_dram] / (double)r.total_ps;
    double bw = r.bytes[cfg.lv_dram] / ((double)r.total_ps * 1e-12);
    printf("  ethos-u65 SmolLM-135M int8 prefill 128: %.1f ms, DRAM stall %.0f%%, %.2f GB/s\n",
           (double)r.total_ps * 1e-9, 100 * stall, bw / 1e9);
    CHECK(stall > 0.5);
    CHECK(bw < 3.75e9);
    run_result_free(&r);
    trace_free(&t);
    /* a bf16 GEMM on the int8-only NPU runs on its vector unit (no matrix
     * pipe for bf16 at all), instead of failing */
    double gs = gemm_time_mnk(&cfg, 64, 256, 256, "bf16");
    double vec = 2.0 * 64 * 256 * 256 / (cfg.units * cfg.vector_flops_per_cycle[DT_FP32] * cfg.clock_hz);
    printf("  ethos-u65 bf16 64x256x256 GEMM: %.1f us (fp32 vector peak alone: %.1f us)\n", gs * 1e6, vec * 1e6);
    CHECK(gs > vec && gs < 3.0 * vec);
}

/* Intel Gaudi 2 (configs/intel-gaudi2.yaml, docs/gaudi.md): four MME cores,
 * each a 128 x 256 output-stationary array.  A short product costs its
 * idle rows but loads no weights: a 16-row product streams 256 weights a
 * cycle a core (3.4 TB/s of bf16 over the chip), above the HBM, so it runs
 * at the memory's rate; a large square GEMM reaches most of the 432.5
 * TFLOPS peak (no fill a tile: the accumulators are double-buffered); the
 * same chip with its array weight stationary pays a fill each tile and is
 * slower on it. */
static void check_gaudi(void)
{
    struct diag d;
    struct hw_config h;
    CHECK_EQ_INT(tu_load_chip("configs/intel-gaudi2.yaml", NULL, &h, &d), 0);
    CHECK(h.sa_os == 1 && h.sa_rows == 128 && h.sa_cols == 256 && h.units == 4);
    double peak = h.units * h.matrix_flops_per_cycle[DT_BF16] * h.clock_hz;
    CHECK(fabs(peak / 432.5e12 - 1) < 0.01);
    double sq = gemm_time_mnk(&h, 8192, 8192, 8192, "bf16");
    double gemv = gemm_time_mnk(&h, 16, 8192, 8192, "bf16");
    double hbm = level_rate(cfg_dram(&h));
    printf("  Gaudi 2: bf16 8192^3 %.0f TFLOP/s (%.0f%% of peak); 16 x 8192 x 8192 %.0f GB/s of weights "
           "(%.0f%% of the reachable HBM)\n",
           2.0 * 8192 * 8192 * 8192 / sq * 1e-12, 100 * 2.0 * 8192 * 8192 * 8192 / sq / peak,
           8192.0 * 8192 * 2 / gemv * 1e-9, 100 * 8192.0 * 8192 * 2 / gemv / hbm);
    CHECK(2.0 * 8192 * 8192 * 8192 / sq > 0.85 * peak);
    CHECK(8192.0 * 8192 * 2 / gemv > 0.85 * hbm);
    /* the unit's cost of a 200-row product: two blocks of 128 rows (os),
     * against one fold held 200 cycles (ws) */
    double os = unit_systolic_flops(&h, 200, 128, 256);
    CHECK(fabs(os - 2.0 * 128 * 256 * 2 * 128) < 1);
    CHECK(unit_systolic_fill_flops(&h) == 0);
    h.sa_os = 0;
    CHECK(fabs(unit_systolic_flops(&h, 200, 128, 256) - 2.0 * 128 * 256 * 200) < 1);
    CHECK(unit_systolic_fill_flops(&h) > 0);
    double sq_ws = gemm_time_mnk(&h, 8192, 8192, 8192, "bf16");
    printf("  the same chip weight stationary: 8192^3 %.0f TFLOP/s\n", 2.0 * 8192 * 8192 * 8192 / sq_ws * 1e-12);
    CHECK(sq_ws > sq);
}

int main(void)
{
    check_peaks();
    check_llm();
    check_mechanism();
    check_npu();
    check_narrow_loads();
    check_gaudi();
    TEST_MAIN_END();
}
