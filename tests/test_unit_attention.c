/* test_unit_attention.c: attention implementations (models/tiled/lower.c).
 *
 * No prediction may beat what the library's best published run on that
 * chip reached, nor run faster than the matrix path it issues on allows;
 * an impl a chip cannot run is an error at the op's line.  The bounds:
 *   A100: FlashAttention-2 "reaching 50-73% of the theoretical maximum
 *         FLOPs/s" (FA2 paper abstract, arXiv 2307.08691): 0.73 x 312 =
 *         228 TFLOP/s;
 *   H100: FlashAttention-3 "up to 740 TFLOPs/s" fp16 (FA3 paper abstract,
 *         arXiv 2407.08608); FA2 issues mma.sync, which reaches 0.62 of the
 *         H100's 989 TFLOP/s in its config;
 *   B200: FlashAttention-4 "reaching 1613 TFLOPs/s" BF16 at 71% utilization,
 *         up to 1.3x cuDNN 9.13 (the FA4 paper's abstract, Zadouri, Dao et
 *         al., 2026, as its authors announced it); no library strata models
 *         on Blackwell is FA4, so this is a loose bound. */
#include <dirent.h>
#include <stdio.h>
#include <string.h>

#include "run.h"
#include "test.h"
#include "util.h"

static char dir[64];
static uint32_t last_kernels;   /* kernels the last attn_tflops op was lowered to */
static char last_tile[48];      /* and its tile */
static const char *attn_dtype = "fp16";
static double attn_dropout;     /* the op's dropout (0: the key is left out) */

/* Runs one attention op; returns its TFLOP/s (or -1 and the diag). */
static double attn_tflops(const char *cfg, const char *impl, const char *pass, unsigned d,
                          unsigned n, int causal, struct diag *dg)
{
    char path[128], text[512], drop[40] = "";
    snprintf(path, sizeof path, "%s/a.json", dir);
    unsigned batch = 16384 / n, heads = 2048 / d;
    if (attn_dropout != 0)
        snprintf(drop, sizeof drop, ", \"dropout\": %g", attn_dropout);
    snprintf(text, sizeof text,
             "{\"strata_trace\": 1, \"ops\": [\n"
             "{\"id\": \"a\", \"kind\": \"attention\", \"dtype\": \"%s\", \"batch\": %u, "
             "\"heads\": %u, \"q_len\": %u, \"kv_len\": %u, \"head_dim\": %u, \"causal\": %s, "
             "\"impl\": \"%s\", \"pass\": \"%s\"%s}]}\n",
             attn_dtype, batch, heads, n, n, d, causal ? "true" : "false", impl, pass, drop);
    tu_write_file(path, text);
    struct hw_config c;
    struct trace t;
    if (tu_load_cfg(cfg, &c) != 0 || tu_load_trace(path, &t) != 0)
        return -2;
    struct run_result r;
    memset(dg, 0, sizeof *dg);
    int rc = run_trace(&c, &t, &r, dg);
    trace_free(&t);
    if (rc != 0)
        return -1;
    double tf = r.flops / ((double)r.total_ps * 1e-12) / 1e12;
    last_kernels = run_op_body(&r, 0)->kernels;
    snprintf(last_tile, sizeof last_tile, "%s", run_op_body(&r, 0)->tile);
    run_result_free(&r);
    return tf;
}

static void bound_all(const char *cfg, const char *const *impls, int nimpl, double bound,
                      const char *what)
{
    static const char *const passes[] = {"fwd", "bwd", "fwd+bwd"};
    double best = 0;
    for (int i = 0; i < nimpl; i++)
        for (int p = 0; p < 3; p++)
            for (unsigned d = 64; d <= 128; d *= 2)
                for (unsigned n = 512; n <= 16384; n *= 4)
                    for (int causal = 0; causal < 2; causal++) {
                        struct diag dg;
                        double tf = attn_tflops(cfg, impls[i], passes[p], d, n, causal, &dg);
                        CHECK(tf > 0);
                        if (tf > bound)
                            fprintf(stderr, "  %s %s %s d%u n%u causal%d: %.1f > %.1f TFLOP/s\n",
                                    cfg, impls[i], passes[p], d, n, causal, tf, bound);
                        CHECK(tf <= bound);
                        if (tf > best)
                            best = tf;
                    }
    printf("  %s: best %.1f TFLOP/s (bound %.0f, %s)\n", cfg, best, bound, what);
}

/* Every single-chip config in configs/, one per chip family and more (GPU
 * tensor cores on each issue path, AMD MFMA, TPU and NPU arrays, Apple):
 * no attention impl the chip runs, forward or forward+backward, beats the
 * chip's fastest matrix issue path (its bf16 matrix rate times the best
 * path's fraction; the vector pipe where bf16 has no matrix rate). */
static void bound_every_chip(void)
{
    static const char *const impls[] = {"flash", "fa1", "fa2", "fa3", "cudnn",
                                        "triton", "xformers", "math", "naive", "megatron"};
    DIR *dd = opendir("configs");
    CHECK(dd != NULL);
    if (dd == NULL)
        return;
    int chips = 0, runs = 0;
    struct dirent *e;
    attn_dtype = "bf16";
    while ((e = readdir(dd)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len < 6 || strcmp(e->d_name + len - 5, ".yaml") != 0)
            continue;
        char path[300];
        snprintf(path, sizeof path, "configs/%s", e->d_name);
        struct hw_config c;
        if (tu_load_cfg(path, &c) != 0) {
            CHECK(0);
            continue;
        }
        double frac = 0;
        for (int p = 0; p < MP_COUNT; p++)
            if (c.matrix_path_frac[p] > frac)
                frac = c.matrix_path_frac[p];
        double peak = cfg_matrix_peak_flops(&c, DT_BF16) * (frac > 0 ? frac : 1.0);
        if (peak <= 0)
            peak = cfg_vector_peak_flops(&c, DT_BF16);
        if (peak <= 0)
            peak = cfg_vector_peak_flops(&c, DT_FP32);
        chips++;
        for (size_t i = 0; i < sizeof impls / sizeof impls[0]; i++)
            for (int k = 0; k < 2; k++) {
                struct diag dg;
                double tf = attn_tflops(path, impls[i], k ? "fwd+bwd" : "fwd", k ? 128 : 64,
                                        k ? 4096 : 16384, k, &dg);
                if (tf == -1)
                    continue;       /* an impl this chip cannot run */
                runs++;
                if (!(tf > 0 && tf * 1e12 <= peak))
                    fprintf(stderr, "  %s %s: %.4g TFLOP/s against its path's %.4g\n", path,
                            impls[i], tf, peak / 1e12);
                CHECK(tf > 0 && tf * 1e12 <= peak);
            }
    }
    closedir(dd);
    attn_dtype = "fp16";
    printf("  %d chips, %d attention runs, none above its fastest issue path\n", chips, runs);
    CHECK(chips >= 20);
}

/* llama.cpp's attention without flash (ggml): two cuBLAS products into
 * fp16, the scores to fp32 and back, a softmax on fp32: six kernels, and
 * 24 bytes a score through DRAM where naive's three kernels move 8 (at
 * 4096 x 4096 the scores are most of the bytes).  Forward only. */
static void test_ggml(void)
{
    double by[2];
    static const char *const impls[] = {"naive", "ggml"};
    uint32_t nk[2];
    for (int i = 0; i < 2; i++) {
        char path[128], text[512];
        snprintf(path, sizeof path, "%s/g.json", dir);
        snprintf(text, sizeof text,
                 "{\"strata_trace\": 1, \"ops\": [{\"id\": \"a\", \"kind\": \"attention\", \"dtype\": "
                 "\"fp16\", \"batch\": 1, \"heads\": 32, \"kv_heads\": 8, \"q_len\": 4096, \"kv_len\": 4096, "
                 "\"head_dim\": 128, \"causal\": true, \"impl\": \"%s\"}]}\n", impls[i]);
        tu_write_file(path, text);
        struct hw_config c;
        struct trace t;
        CHECK_EQ_INT(tu_load_cfg("configs/nvidia-a100-sxm-80gb.yaml", &c), 0);
        CHECK_EQ_INT(tu_load_trace(path, &t), 0);
        struct run_result r;
        struct diag dg;
        memset(&dg, 0, sizeof dg);
        CHECK_EQ_INT(run_trace(&c, &t, &r, &dg), 0);
        by[i] = r.bytes[c.lv_dram];
        nk[i] = run_op_body(&r, 0)->kernels;
        run_result_free(&r);
        trace_free(&t);
    }
    double scores = 32.0 * 4096 * 4096;
    printf("  A100 4096^2 x 32 heads: naive %.2f GB (%u kernels), ggml %.2f GB (%u kernels) of DRAM\n",
           by[0] / 1e9, nk[0], by[1] / 1e9, nk[1]);
    CHECK_EQ_INT(nk[0], 3);
    CHECK_EQ_INT(nk[1], 6);
    CHECK(by[1] - by[0] > 0.9 * 16.0 * scores);     /* the 16 bytes a score more */
    CHECK(by[1] - by[0] < 1.1 * 16.0 * scores);
    struct diag dg;
    CHECK(attn_tflops("configs/nvidia-a100-sxm-80gb.yaml", "ggml", "fwd+bwd", 128, 4096, 1, &dg) < 0);
    CHECK_STR_CONTAINS(dg.msg, "forward only");
}

int main(void)
{
    CHECK(tu_mkdtemp(dir, sizeof dir, "strata-attn") == 0);
    test_ggml();
    static const char *const a100[] = {"flash", "fa1", "fa2", "triton", "xformers", "math", "naive"};
    bound_all("configs/nvidia-a100-sxm-80gb.yaml", a100, 7, 228.0, "FA2 paper: 73% of 312");
    static const char *const h100[] = {"fa3", "cudnn", "fa2", "triton", "math"};
    bound_all("configs/nvidia-h100-sxm.yaml", h100, 5, 740.0, "FA3 paper: up to 740");
    static const char *const b200[] = {"cudnn", "fa2", "triton", "math", "xformers", "fa1"};
    bound_all("configs/nvidia-b200.yaml", b200, 6, 1613.0, "FA4 paper: up to 1613");
    /* FA2 on Hopper issues mma.sync: never above that path's share of the peak */
    static const char *const fa2[] = {"fa2"};
    bound_all("configs/nvidia-h100-sxm.yaml", fa2, 1, 0.62 * 989.4, "mma.sync path, 0.62 x 989");
    /* FA3 is faster than FA2 on Hopper (wgmma, overlapped softmax) */
    struct diag dg;
    double f3 = attn_tflops("configs/nvidia-h100-sxm.yaml", "fa3", "fwd", 128, 16384, 0, &dg);
    double f2 = attn_tflops("configs/nvidia-h100-sxm.yaml", "fa2", "fwd", 128, 16384, 0, &dg);
    printf("  H100 d128 16k forward: fa3 %.0f, fa2 %.0f TFLOP/s (FA3 paper: 648, 370)\n", f3, f2);
    CHECK(f3 > 1.5 * f2);
    /* FA3's backward has no ping-pong (its two MMA warpgroups share each
     * tile): per FLOP it runs slower than its forward, as the paper's 561
     * against 648 TFLOP/s at 16k (with the forward's overlap it came out at
     * 0.95 of its forward) */
    double f3b = attn_tflops("configs/nvidia-h100-sxm.yaml", "fa3", "bwd", 128, 16384, 0, &dg);
    printf("  H100 d128 16k backward: fa3 %.0f TFLOP/s (FA3 paper: 561), %.2f of its forward\n", f3b,
           f3b / f3);
    CHECK(f3b < 0.90 * f3 && f3b > 0.80 * f3);
    /* sdpa and vllm run what those frameworks pick on the chip: the same
     * kernels as the impl they stand for, so the same time */
    static const struct {
        const char *cfg, *alias, *is;
    } picks[] = {
        {"configs/nvidia-a100-sxm-80gb.yaml", "sdpa", "fa2"},  /* flash backend (FA2) */
        {"configs/nvidia-a100-sxm-80gb.yaml", "vllm", "fa2"},  /* FLASH_ATTN: FA2 before Hopper */
        {"configs/nvidia-h100-sxm.yaml", "sdpa", "cudnn"},     /* cuDNN preferred on sm90 */
        {"configs/nvidia-h100-sxm.yaml", "vllm", "fa3"},       /* FLASH_ATTN: FA3 on Hopper */
        {"configs/nvidia-b200.yaml", "sdpa", "cudnn"},
        {"configs/nvidia-b200.yaml", "vllm", "cudnn"},         /* FlashInfer, taken as cuDNN's */
        {"configs/google-tpu-v5e.yaml", "sdpa", "flash"},      /* the array's fused kernel */
        {"configs/amd-mi300x.yaml", "vllm", "fa2"},
    };
    for (size_t i = 0; i < sizeof picks / sizeof picks[0]; i++)
        for (int causal = 0; causal < 2; causal++) {
            double a = attn_tflops(picks[i].cfg, picks[i].alias, "fwd+bwd", 128, 4096, causal, &dg);
            double b = attn_tflops(picks[i].cfg, picks[i].is, "fwd+bwd", 128, 4096, causal, &dg);
            if (a != b || a <= 0)
                fprintf(stderr, "  %s %s: %.2f, %s: %.2f TFLOP/s\n", picks[i].cfg, picks[i].alias, a,
                        picks[i].is, b);
            CHECK(a > 0 && a == b);
        }
    /* ... and the pick matters: on an A100 SDPA's FA2 beats FA1, on an H100
     * vLLM's FA3 beats FA2 */
    CHECK(attn_tflops("configs/nvidia-a100-sxm-80gb.yaml", "sdpa", "fwd", 64, 4096, 0, &dg) >
          attn_tflops("configs/nvidia-a100-sxm-80gb.yaml", "fa1", "fwd", 64, 4096, 0, &dg));
    CHECK(attn_tflops("configs/nvidia-h100-sxm.yaml", "vllm", "fwd", 128, 4096, 0, &dg) >
          attn_tflops("configs/nvidia-h100-sxm.yaml", "fa2", "fwd", 128, 4096, 0, &dg));
    /* FA1 walks key blocks of 256 at head dim 64 and 128 at head dim 128,
     * with an fp32 partial output through HBM and a four- (eight-) warp
     * exchange per block, so per FLOP it is faster at head dim 64 (the FA
     * benchmark on A100: 108 against 80 TFLOP/s at 4k tokens), while FA2,
     * with neither, is faster at 128 (171 against 196) */
    double fa1_64 = attn_tflops("configs/nvidia-a100-sxm-80gb.yaml", "fa1", "fwd+bwd", 64, 4096, 0, &dg);
    double fa1_128 = attn_tflops("configs/nvidia-a100-sxm-80gb.yaml", "fa1", "fwd+bwd", 128, 4096, 0, &dg);
    double fa2_64 = attn_tflops("configs/nvidia-a100-sxm-80gb.yaml", "fa2", "fwd+bwd", 64, 4096, 0, &dg);
    double fa2_128 = attn_tflops("configs/nvidia-a100-sxm-80gb.yaml", "fa2", "fwd+bwd", 128, 4096, 0, &dg);
    CHECK(fa1_64 > 1.03 * fa1_128);
    CHECK(fa2_128 > 1.03 * fa2_64);
    /* PyTorch's standard attention.  The causal mask is added to S by
     * ATen's legacy elementwise kernel (the mask broadcasts), one element
     * per thread in flight: causal costs 1.15-1.28x the non-causal time in
     * the FA benchmark on A100 (FLOPs halved, 15 against 36 TFLOP/s at 512
     * tokens, head dim 64); a vectorised add gave 1.10 */
    double m_nc = attn_tflops("configs/nvidia-a100-sxm-80gb.yaml", "math", "fwd+bwd", 64, 512, 0, &dg);
    double m_c = attn_tflops("configs/nvidia-a100-sxm-80gb.yaml", "math", "fwd+bwd", 64, 512, 1, &dg);
    printf("  A100 math d64 512: causal takes %.3fx the non-causal time (measured 1.200)\n",
           0.5 * m_nc / m_c);
    CHECK(0.5 * m_nc / m_c > 1.15 && 0.5 * m_nc / m_c < 1.30);
    /* its kernels: forward q/k/v copies, QK^T, softmax, PV, output copy
     * (dropout at p = 0 launches none); causal adds the mask's build and
     * add; the backward's output-gradient copy, dV, dP, grad * P (ATen's
     * softmax backward multiplies first), the row kernel, dQ, dK, and the
     * input-gradient copy */
    attn_tflops("configs/nvidia-a100-sxm-80gb.yaml", "math", "fwd", 64, 512, 0, &dg);
    CHECK_EQ_INT(last_kernels, 5);
    attn_tflops("configs/nvidia-a100-sxm-80gb.yaml", "math", "fwd", 64, 512, 1, &dg);
    CHECK_EQ_INT(last_kernels, 7);
    attn_tflops("configs/nvidia-a100-sxm-80gb.yaml", "math", "bwd", 64, 512, 0, &dg);
    CHECK_EQ_INT(last_kernels, 8);
    /* Megatron-LM's unfused attention: QK^T, the fused scale-mask-softmax,
     * PV and the output permuted back, causal or not (the mask is computed
     * in the softmax kernel); backward, the output-gradient copy, dV, dP,
     * the softmax's row kernel, dQ, dK and the input-gradient copy.
     * Dropout adds a kernel each way; it costs time, and PyTorch's math
     * path, which builds and adds the mask, is slower still */
    const char *ampere = "configs/nvidia-a100-sxm-80gb.yaml";
    attn_tflops(ampere, "megatron", "fwd", 64, 2048, 1, &dg);
    CHECK_EQ_INT(last_kernels, 4);
    attn_tflops(ampere, "megatron", "bwd", 64, 2048, 1, &dg);
    CHECK_EQ_INT(last_kernels, 7);
    double meg = attn_tflops(ampere, "megatron", "fwd+bwd", 128, 2048, 1, &dg);
    double mth = attn_tflops(ampere, "math", "fwd+bwd", 128, 2048, 1, &dg);
    attn_dropout = 0.1;
    attn_tflops(ampere, "megatron", "fwd+bwd", 64, 2048, 1, &dg);
    CHECK_EQ_INT(last_kernels, 4 + 7 + 2);
    attn_tflops(ampere, "math", "fwd", 64, 512, 1, &dg);
    CHECK_EQ_INT(last_kernels, 8);
    double meg_d = attn_tflops(ampere, "megatron", "fwd+bwd", 128, 2048, 1, &dg);
    double fa2_d = attn_tflops(ampere, "fa2", "fwd+bwd", 128, 2048, 1, &dg);
    attn_dropout = 0;
    double fa2_n = attn_tflops(ampere, "fa2", "fwd+bwd", 128, 2048, 1, &dg);
    printf("  A100 d128 2048 causal fwd+bwd TFLOP/s: math %.1f, megatron %.1f (dropout 0.1: %.1f), "
           "fa2 %.1f (%.1f)\n", mth, meg, meg_d, fa2_n, fa2_d);
    CHECK(mth < meg && meg_d < 0.95 * meg);
    CHECK(fa2_d < fa2_n && fa2_d > 0.5 * fa2_n);     /* the mask drawn in the fused kernel */
    /* a dropout probability of 1 (or more) is an error at its field */
    attn_dropout = 1;
    CHECK(attn_tflops(ampere, "fa2", "fwd", 64, 2048, 0, &dg) == -2);
    attn_dropout = 0;
    bound_every_chip();
    /* a tile shorter than FA3's 192 query rows at head dim 64 is a power
     * of two (100 rows: 64, not 96) */
    attn_tflops("configs/nvidia-h100-sxm.yaml", "fa3", "fwd", 64, 100, 0, &dg);
    CHECK(strncmp(last_tile, "Br64 ", 5) == 0);
    /* what a chip cannot run is an error naming the op's line and what it can run */
    CHECK(attn_tflops("configs/nvidia-a100-sxm-80gb.yaml", "fa3", "fwd", 64, 2048, 0, &dg) == -1);
    CHECK_EQ_INT(dg.line, 2);
    CHECK(strcmp(dg.field, "ops[0].impl") == 0);
    CHECK_STR_CONTAINS(dg.msg, "fa3 runs on none of nvidia-a100-sxm-80gb's matrix paths");
    CHECK_STR_CONTAINS(dg.msg, "fa2");
    CHECK(attn_tflops("configs/google-tpu-v5e.yaml", "fa2", "fwd", 64, 2048, 0, &dg) == -1);
    CHECK_STR_CONTAINS(dg.msg, "flash");
    /* the systolic chip's own fused attention still runs */
    CHECK(attn_tflops("configs/google-tpu-v5e.yaml", "flash", "fwd+bwd", 128, 2048, 1, &dg) > 0);
    tu_rmtree(dir);
    TEST_MAIN_END();
}
