/* test_unit_backward.c: backward passes (the `pass` field) and the
 * training step of `gen llm --phase train`. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "llm.h"
#include "run.h"
#include "test.h"
#include "util.h"

static char dir[64];

static int run_text(const char *text, const char *cfg, struct run_result *r, struct diag *d)
{
    char path[128];
    snprintf(path, sizeof path, "%s/t.json", dir);
    tu_write_file(path, text);
    struct trace t;
    memset(d, 0, sizeof *d);
    if (trace_load(path, &t, d) != 0)
        return -1;
    struct hw_config c;
    int rc = tu_load_cfg(cfg, &c);
    if (rc == 0)
        rc = run_trace(&c, &t, r, d);
    trace_free(&t);
    return rc;
}

#define A100 "configs/nvidia-a100-sxm-80gb.yaml"

/* A GEMM's backward, whole and as its two products, with weights that
 * do not fit, and at an odd token count. */
static void test_gemm_backward(void)
{
    struct run_result f, b;
    struct diag d;
    /* a GEMM's backward is two GEMMs of its FLOPs (dgrad, wgrad) */
    CHECK_EQ_INT(run_text("{\"strata_trace\": 1, \"ops\": [{\"id\": \"g\", \"kind\": \"gemm\", "
                          "\"dtype\": \"bf16\", \"m\": 4096, \"n\": 4096, \"k\": 4096}]}", A100, &f, &d), 0);
    CHECK_EQ_INT(run_text("{\"strata_trace\": 1, \"ops\": [{\"id\": \"g\", \"kind\": \"gemm\", "
                          "\"dtype\": \"bf16\", \"m\": 4096, \"n\": 4096, \"k\": 4096, \"pass\": \"fwd+bwd\"}]}",
                          A100, &b, &d), 0);
    if (f.nops == 1 && b.nops == 1) {
        CHECK_NEAR_REL(b.flops, 3.0 * f.flops, 1e-12);
        CHECK_EQ_INT(run_op_body(&b, 0)->kernels, 3);
        CHECK((double)b.total_ps > 2.5 * (double)f.total_ps && (double)b.total_ps < 3.5 * (double)f.total_ps);
    }
    run_result_free(&f);
    run_result_free(&b);
    /* its two products apart (pass dgrad, wgrad): one kernel each, and
     * together the backward's FLOPs and time; neither is an attention's */
    struct run_result dg, wg;
#define GT "{\"strata_trace\": 1, \"ops\": [{\"id\": \"g\", \"kind\": \"gemm\", " \
           "\"dtype\": \"bf16\", \"m\": 8192, \"n\": 3072, \"k\": 4096, \"pass\": \"%s\"}]}"
    char txt[256];
    snprintf(txt, sizeof txt, GT, "bwd");
    CHECK_EQ_INT(run_text(txt, A100, &b, &d), 0);
    snprintf(txt, sizeof txt, GT, "dgrad");
    CHECK_EQ_INT(run_text(txt, A100, &dg, &d), 0);
    snprintf(txt, sizeof txt, GT, "wgrad");
#undef GT
    CHECK_EQ_INT(run_text(txt, A100, &wg, &d), 0);
    if (b.nops == 1 && dg.nops == 1 && wg.nops == 1) {
        CHECK_EQ_INT(run_op_body(&dg, 0)->kernels, 1);
        CHECK_EQ_INT(run_op_body(&wg, 0)->kernels, 1);
        CHECK_NEAR_REL(dg.flops + wg.flops, b.flops, 1e-12);
        CHECK_NEAR_REL((double)(dg.total_ps + wg.total_ps), (double)b.total_ps, 0.02);
    }
    run_result_free(&b);
    run_result_free(&dg);
    run_result_free(&wg);
    /* weights that do not fit come over PCIe for the dgrad, not again for
     * the wgrad (which reads none): a 34 GB GEMM on a 24 GB RTX 4090 */
#define SPILL "{\"strata_trace\": 1, \"ops\": [{\"id\": \"f\", \"kind\": \"gemm\", \"dtype\": \"bf16\", " \
              "\"m\": 64, \"n\": 131072, \"k\": 131072}, %s]}"
#define SG(id, pass, dep) "{\"id\": \"" id "\", \"kind\": \"gemm\", \"dtype\": \"bf16\", \"m\": 64, " \
              "\"n\": 131072, \"k\": 131072, \"pass\": \"" pass "\", \"deps\": [\"" dep "\"]}"
    char big[1024];
    snprintf(big, sizeof big, SPILL, SG("b", "bwd", "f"));
    CHECK_EQ_INT(run_text(big, "configs/nvidia-rtx-4090.yaml", &b, &d), 0);
    snprintf(big, sizeof big, SPILL, SG("d", "dgrad", "f") ", " SG("w", "wgrad", "d"));
    CHECK_EQ_INT(run_text(big, "configs/nvidia-rtx-4090.yaml", &dg, &d), 0);
#undef SG
#undef SPILL
    CHECK(b.total_ps > 0 && dg.total_ps > 0);
    CHECK_NEAR_REL((double)dg.total_ps, (double)b.total_ps, 0.02);
    run_result_free(&b);
    run_result_free(&dg);
    CHECK(run_text("{\"strata_trace\": 1, \"ops\": [{\"id\": \"n\", \"kind\": \"norm\", "
                   "\"dtype\": \"bf16\", \"rows\": 8, \"cols\": 64, \"pass\": \"dgrad\"}]}", A100, &b, &d) != 0);
    CHECK(strcmp(d.field, "ops[0].pass") == 0);
    /* an odd token count (the rows an expert gets under skewed routing) is
     * never a row length in the backward: wgrad reads A^T along the
     * forward's k, dgrad reads dC along n, so 9831 rows cost what 9832 do
     * (it took 3x as long when wgrad loaded them one element at a time) */
    CHECK_EQ_INT(run_text("{\"strata_trace\": 1, \"ops\": [{\"id\": \"g\", \"kind\": \"gemm\", "
                          "\"dtype\": \"bf16\", \"m\": 9831, \"n\": 28672, \"k\": 4096, \"pass\": \"bwd\"}]}",
                          A100, &f, &d), 0);
    CHECK_EQ_INT(run_text("{\"strata_trace\": 1, \"ops\": [{\"id\": \"g\", \"kind\": \"gemm\", "
                          "\"dtype\": \"bf16\", \"m\": 9832, \"n\": 28672, \"k\": 4096, \"pass\": \"bwd\"}]}",
                          A100, &b, &d), 0);
    printf("  backward of a 9831 x 28672 x 4096 GEMM: %.3f ms (9832 rows: %.3f ms)\n",
           (double)f.total_ps * 1e-9, (double)b.total_ps * 1e-9);
    CHECK((double)f.total_ps < 1.02 * (double)b.total_ps && (double)f.total_ps > 0.98 * (double)b.total_ps);
    run_result_free(&f);
    run_result_free(&b);
}

static void test_kinds_backward(void)
{
    struct run_result f, b;
    struct diag d;
    /* each kind's backward runs and moves DRAM bytes */
    struct hw_config a100;
    CHECK_EQ_INT(tu_load_cfg(A100, &a100), 0);
    static const char *const kinds[] = {
        "\"kind\": \"softmax\", \"rows\": 4096, \"cols\": 4096",
        "\"kind\": \"norm\", \"rows\": 8192, \"cols\": 4096",
        "\"kind\": \"elementwise\", \"elements\": 33554432, \"inputs\": 1, \"outputs\": 1",
        "\"kind\": \"embedding\", \"tokens\": 8192, \"dim\": 4096",
    };
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        char t1[256], t2[256];
        snprintf(t1, sizeof t1, "{\"strata_trace\": 1, \"ops\": [{\"id\": \"x\", \"dtype\": \"bf16\", %s}]}", kinds[i]);
        snprintf(t2, sizeof t2, "{\"strata_trace\": 1, \"ops\": [{\"id\": \"x\", \"dtype\": \"bf16\", %s, \"pass\": \"bwd\"}]}", kinds[i]);
        CHECK_EQ_INT(run_text(t1, A100, &f, &d), 0);
        CHECK_EQ_INT(run_text(t2, A100, &b, &d), 0);
        if (f.nops == 1 && b.nops == 1)
            CHECK(run_op_body(&b, 0)->bytes[a100.lv_dram] > 0 && b.total_ps > f.total_ps / 2);
        run_result_free(&f);
        run_result_free(&b);
    }
    /* a copy has no backward: an error at the op's line */
    CHECK_EQ_INT(run_text("{\"strata_trace\": 1, \"ops\": [\n{\"id\": \"c\", \"kind\": \"memcpy\", "
                          "\"bytes\": 100, \"direction\": \"h2d\", \"pass\": \"bwd\"}]}", A100, &f, &d), -1);
    CHECK_EQ_INT(d.line, 2);
    CHECK_STR_CONTAINS(d.msg, "no backward");
}

static void test_training_step(void)
{
    struct diag d;
    /* a training step: forward, every op's backward in reverse, AdamW */
    struct llm_config c;
    CHECK_EQ_INT(llm_config_load("traces/models/llama-2-7b.json", &c, &d), 0);
    struct llm_step s = {LLM_TRAIN, 1, 2048, 0, DT_BF16, ATTN_FA2, DT_BF16, WF_NONE, 0, LLM_FW_FUSED, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    struct trace t;
    CHECK_EQ_INT(llm_build(&c, &s, &t, &d), 0);
    uint32_t nfwd = (t.nops - 1) / 2;
    CHECK_EQ_INT(t.nops, 2 * nfwd + 1);
    CHECK(strcmp(op_id(&t, &t.ops[t.nops - 1]), "adamw") == 0);
    CHECK(strcmp(op_id(&t, &t.ops[nfwd]), "loss.bwd") == 0 && t.ops[nfwd].pass == PASS_BWD);
    CHECK(strcmp(op_id(&t, &t.ops[2 * nfwd - 1]), "embed.bwd") == 0);
    /* the resident working set of a training step: each weight once (the
     * backward's GEMMs reuse the forward's), no KV cache (a training step's
     * K and V are activations); it counted them once per pass before */
    double wbytes = 0, ws = trace_working_set(&t, 0, &wbytes);
    CHECK_NEAR_REL(wbytes, (double)llm_param_count(&c) * 2.0 - 32000.0 * 4096 * 2 - 2 * 32 * 4096 * 2.0 - 4096 * 2.0,
                   1e-9);   /* every GEMM's weights: all but the embedding table and the norms */
    CHECK_NEAR_REL(ws, wbytes, 1e-12);
    struct hw_config h;
    CHECK_EQ_INT(tu_load_cfg("configs/nvidia-h100-sxm.yaml", &h), 0);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    struct run_result r;
    CHECK_EQ_INT(run_trace(&h, &t, &r, &d), 0);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double wall = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    double step = (double)r.total_ps * 1e-12, mfu = r.flops / step / 989.4e12;
    printf("  Llama-2-7B training step, 2048 tokens, H100: %.3f s, MFU %.2f, simulated in %.3f s\n",
           step, mfu, wall);
    CHECK(wall < 2.0);                  /* the bound (an ASan build is slower still) */
    CHECK(mfu > 0.2 && mfu < 0.75);     /* below the best published (FA3-era trainers ~0.5-0.6) */
    /* full activation recomputation: each layer's forward again, from its
     * stored input, just before that layer's backward; more time, and the
     * FLOPs of one more forward of the layers */
    struct llm_step sr = s;
    sr.recompute = 1;
    struct trace tr;
    CHECK_EQ_INT(llm_build(&c, &sr, &tr, &d), 0);
    uint32_t nlayer_fwd = 0;
    for (uint32_t i = 0; i < nfwd; i++)
        nlayer_fwd += op_id(&t, &t.ops[i])[0] == 'L';
    CHECK_EQ_INT(tr.nops, t.nops + nlayer_fwd);
    int at_rc = -1, at_bwd = -1;
    for (uint32_t i = 0; i < tr.nops; i++) {
        if (at_rc < 0 && strcmp(op_id(&tr, &tr.ops[i]), "L31.attn_norm.recompute") == 0)
            at_rc = (int)i;
        if (at_bwd < 0 && strncmp(op_id(&tr, &tr.ops[i]), "L31.", 4) == 0 && tr.ops[i].pass == PASS_BWD)
            at_bwd = (int)i;
    }
    CHECK(at_rc > (int)nfwd && at_rc < at_bwd);   /* after the loss, before L31's backward */
    CHECK(tr.ops[at_rc].pass == PASS_FWD);
    struct run_result rr;
    CHECK_EQ_INT(run_trace(&h, &tr, &rr, &d), 0);
    double step_rc = (double)rr.total_ps * 1e-12;
    printf("  with full recomputation: %.3f s (x%.2f)\n", step_rc, step_rc / step);
    CHECK(step_rc > step * 1.1 && step_rc < step * 1.5);
    run_result_free(&rr);
    trace_free(&tr);
    run_result_free(&r);
    trace_free(&t);
}

int main(void)
{
    CHECK(tu_mkdtemp(dir, sizeof dir, "strata-bwd") == 0);
    test_gemm_backward();
    test_kinds_backward();
    test_training_step();
    tu_rmtree(dir);
    TEST_MAIN_END();
}
