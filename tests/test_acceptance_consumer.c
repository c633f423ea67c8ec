/* test_acceptance_consumer.c: a 128 GB Mac against a 24 GB GPU.  On a model
 * that fits both (Llama-2-7B), the M4 Max decodes at 0.45-0.6 of the RTX
 * 4090's rate (546 vs 1008 GB/s of memory bandwidth), in bf16 and in Q4_0
 * with llama.cpp's kernel structure. */
#include "cfg.h"
#include "llm.h"
#include "run.h"
#include <unistd.h>

#include "test.h"
#include "util.h"

static double tok_s(const char *hw, enum wfmt w, enum llm_framework fw)
{
    struct diag d;
    struct hw_config cfg;
    struct llm_config c;
    struct trace t;
    struct run_result r;
    struct llm_step s = {LLM_DECODE, 1, 1, 1024, DT_BF16, fw == LLM_FW_LLAMA_CPP ? ATTN_NAIVE : ATTN_FLASH,
                         DT_BF16, w, 0, fw, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    if (tu_load_chip(hw, NULL, &cfg, &d) != 0 || llm_config_load("traces/models/llama-2-7b.json", &c, &d) != 0 ||
        llm_build(&c, &s, &t, &d) != 0) {
        diag_print(&d, stderr);
        CHECK(0);
        return 0;
    }
    CHECK_EQ_INT(run_trace(&cfg, &t, &r, &d), 0);
    double v = t.tokens / ((double)r.total_ps * 1e-12);
    run_result_free(&r);
    trace_free(&t);
    return v;
}

/* Unified memory: two devices of one SoC streaming at once share one
 * LPDDR pool, so the pair takes twice as long as either alone would. */
static void check_unified(void)
{
    char path[96];
    snprintf(path, sizeof path, "/tmp/strata-uni-%d.json", (int)getpid());
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (f == NULL)
        return;
    fprintf(f, "{\"strata_trace\": 1, \"devices\": [\"gpu0\", \"cpu0\"], \"ops\": [\n"
               "{\"id\": \"a\", \"kind\": \"elementwise\", \"device\": \"gpu0\", \"dtype\": \"fp16\", \"elements\": 268435456},\n"
               "{\"id\": \"b\", \"kind\": \"elementwise\", \"device\": \"cpu0\", \"dtype\": \"fp16\", \"elements\": 268435456}]}\n");
    fclose(f);
    struct diag d;
    struct hw_config cfg;
    struct trace t;
    struct run_result r;
    CHECK_EQ_INT(tu_load_chip("configs/apple-m2-max-38c.yaml", NULL, &cfg, &d), 0);
    CHECK(cfg.level[cfg.lv_dram].unified);
    CHECK_EQ_INT(trace_load(path, &t, &d), 0);
    CHECK_EQ_INT(run_trace(&cfg, &t, &r, &d), 0);
    double shared = (double)r.total_ps;
    run_result_free(&r);
    cfg.level[cfg.lv_dram].unified = 0;
    CHECK_EQ_INT(run_trace(&cfg, &t, &r, &d), 0);
    double separate = (double)r.total_ps;
    run_result_free(&r);
    printf("  two streams on one SoC: %.3f ms with unified memory, %.3f ms with a pool each\n",
           shared * 1e-9, separate * 1e-9);
    CHECK(shared > 1.8 * separate);
    trace_free(&t);
    remove(path);
}

int main(void)
{
    check_unified();
    double mac = tok_s("configs/apple-m4-max-40c.yaml", WF_NONE, LLM_FW_FUSED);
    double gpu = tok_s("configs/nvidia-rtx-4090.yaml", WF_NONE, LLM_FW_FUSED);
    printf("  Llama-2-7B bf16 decode: M4 Max %.1f tok/s, RTX 4090 %.1f tok/s, ratio %.3f\n", mac, gpu,
           mac / gpu);
    CHECK(mac / gpu >= 0.45 && mac / gpu <= 0.6);
    mac = tok_s("configs/apple-m4-max-40c.yaml", WF_Q4_0, LLM_FW_LLAMA_CPP);
    gpu = tok_s("configs/nvidia-rtx-4090.yaml", WF_Q4_0, LLM_FW_LLAMA_CPP);
    printf("  Llama-2-7B Q4_0 (llama.cpp) decode: M4 Max %.1f tok/s, RTX 4090 %.1f tok/s, ratio %.3f\n",
           mac, gpu, mac / gpu);
    CHECK(mac / gpu >= 0.45 && mac / gpu <= 0.6);
    TEST_MAIN_END();
}
