/* test_unit_memo.c: remembered cache reuse (models/tiled/runner.c) changes
 * no result.  A kernel that ran alone keeps its wave groups' bytes per
 * cache; a later kernel of the same plan on the same units takes them
 * without walking its CTAs, and walks after all when another kernel is
 * about to use the device's reuse scratch.  Each trace below runs with the
 * memo and without it (STRATA_REUSE_MEMO=0), and every op's result must be
 * the same to the bit: kernels of one plan alone, then beside a kernel of
 * another stream (the walks done late), on a chip with one L2 and on one
 * with eight L2s and a cache behind them (MI300X), and on four replicas
 * that share one memo. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run.h"
#include "test.h"
#include "util.h"

static const char *trace_text =
    "{\"strata_trace\": 1, \"ops\": [\n"
    "{\"id\": \"a1\", \"kind\": \"gemm\", \"dtype\": \"bf16\", \"m\": 4096, \"n\": 4096, \"k\": 4096},\n"
    "{\"id\": \"a2\", \"kind\": \"gemm\", \"dtype\": \"bf16\", \"m\": 4096, \"n\": 4096, \"k\": 4096, \"deps\": [\"a1\"]},\n"
    "{\"id\": \"b1\", \"kind\": \"gemm\", \"stream\": 1, \"dtype\": \"bf16\", \"m\": 8192, \"n\": 1024, \"k\": 2048, \"deps\": [\"a2\"]},\n"
    "{\"id\": \"a3\", \"kind\": \"gemm\", \"dtype\": \"bf16\", \"m\": 4096, \"n\": 4096, \"k\": 4096, \"deps\": [\"a2\"]},\n"
    "{\"id\": \"b2\", \"kind\": \"gemm\", \"stream\": 1, \"dtype\": \"bf16\", \"m\": 8192, \"n\": 1024, \"k\": 2048, \"deps\": [\"b1\"]},\n"
    "{\"id\": \"a4\", \"kind\": \"gemm\", \"dtype\": \"bf16\", \"m\": 4096, \"n\": 4096, \"k\": 4096, \"deps\": [\"a3\"]},\n"
    "{\"id\": \"f1\", \"kind\": \"attention\", \"dtype\": \"bf16\", \"batch\": 2, \"heads\": 16, \"q_len\": 2048, "
    "\"kv_len\": 2048, \"head_dim\": 128, \"causal\": true, \"pass\": \"fwd+bwd\", \"deps\": [\"a4\", \"b2\"]},\n"
    "{\"id\": \"f2\", \"kind\": \"attention\", \"dtype\": \"bf16\", \"batch\": 2, \"heads\": 16, \"q_len\": 2048, "
    "\"kv_len\": 2048, \"head_dim\": 128, \"causal\": true, \"pass\": \"fwd+bwd\", \"deps\": [\"f1\"]},\n"
    "{\"id\": \"b3\", \"kind\": \"gemm\", \"stream\": 1, \"dtype\": \"bf16\", \"m\": 8192, \"n\": 1024, \"k\": 2048, \"deps\": [\"f1\"]},\n"
    "{\"id\": \"s1\", \"kind\": \"softmax\", \"dtype\": \"bf16\", \"rows\": 8192, \"cols\": 4096, \"deps\": [\"f2\", \"b3\"]},\n"
    "{\"id\": \"s2\", \"kind\": \"softmax\", \"dtype\": \"bf16\", \"rows\": 8192, \"cols\": 4096, \"deps\": [\"s1\"]}\n"
    "]}\n";

/* Replicas: four devices run the ops of one template ('@' the device),
 * device 1 and 3 after a softmax of their own, so the devices' kernels
 * start at different times.  The run keeps one memo for every device
 * (models/tiled/device.c), so a replica replays what another walked. */
static const char *replica_ops[] = {
    "{\"id\": \"x@\", \"device\": \"gpu@\", \"kind\": \"softmax\", \"dtype\": \"bf16\", \"rows\": 4096, \"cols\": 4096}",
    "{\"id\": \"a1.@\", \"device\": \"gpu@\", \"kind\": \"gemm\", \"dtype\": \"bf16\", \"m\": 4096, \"n\": 4096, \"k\": 4096}",
    "{\"id\": \"a2.@\", \"device\": \"gpu@\", \"kind\": \"gemm\", \"dtype\": \"bf16\", \"m\": 4096, \"n\": 4096, \"k\": 4096, \"deps\": [\"a1.@\"]}",
    "{\"id\": \"b1.@\", \"device\": \"gpu@\", \"kind\": \"gemm\", \"stream\": 1, \"dtype\": \"bf16\", \"m\": 8192, \"n\": 1024, \"k\": 2048, \"deps\": [\"a1.@\"]}",
    "{\"id\": \"a3.@\", \"device\": \"gpu@\", \"kind\": \"gemm\", \"dtype\": \"bf16\", \"m\": 4096, \"n\": 4096, \"k\": 4096, \"deps\": [\"a2.@\"]}",
    "{\"id\": \"b2.@\", \"device\": \"gpu@\", \"kind\": \"gemm\", \"stream\": 1, \"dtype\": \"bf16\", \"m\": 8192, \"n\": 1024, \"k\": 2048, \"deps\": [\"b1.@\"]}",
};

static void write_replicas(const char *path)
{
    char text[16384];
    size_t used = (size_t)snprintf(text, sizeof text,
                                   "{\"strata_trace\": 1, \"devices\": [\"gpu0\", \"gpu1\", \"gpu2\", \"gpu3\"], \"ops\": [\n");
    int first = 1;
    for (unsigned dv = 0; dv < 4; dv++)
        for (size_t k = (dv % 2 == 1) ? 0 : 1; k < sizeof replica_ops / sizeof replica_ops[0]; k++) {
            if (!first)
                used += (size_t)snprintf(text + used, sizeof text - used, ",\n");
            first = 0;
            for (const char *p = replica_ops[k]; *p != '\0'; p++) {
                if (*p == '@')
                    used += (size_t)snprintf(text + used, sizeof text - used, "%u", dv);
                else
                    text[used++] = *p;
            }
            text[used] = '\0';
        }
    snprintf(text + used, sizeof text - used, "\n]}\n");
    tu_write_file(path, text);
}

static int run_once(const char *cfg, const char *path, int memo, struct run_result *r)
{
    if (memo)
        unsetenv("STRATA_REUSE_MEMO");
    else
        setenv("STRATA_REUSE_MEMO", "0", 1);
    struct hw_config c;
    struct trace t;
    if (tu_load_cfg(cfg, &c) != 0 || tu_load_trace(path, &t) != 0)
        return -1;
    struct diag dg;
    memset(&dg, 0, sizeof dg);
    int rc = run_trace(&c, &t, r, &dg);
    trace_free(&t);
    unsetenv("STRATA_REUSE_MEMO");
    return rc;
}

static void same_results(const char *cfg, const char *path)
{
    struct run_result a, b;
    CHECK_EQ_INT(run_once(cfg, path, 1, &a), 0);
    CHECK_EQ_INT(run_once(cfg, path, 0, &b), 0);
    CHECK(a.nops == b.nops && a.total_ps == b.total_ps && a.events == b.events);
    unsigned differ = 0;
    for (uint32_t i = 0; i < a.nops && i < b.nops; i++) {
        struct op_result xa, ya;
        const struct op_result *x = run_op_result(&a, i, &xa), *y = run_op_result(&b, i, &ya);
        int same = x->start_ps == y->start_ps && x->end_ps == y->end_ps && x->waves == y->waves &&
                   x->ctas == y->ctas && x->pipe_pj == y->pipe_pj;
        for (int l = 0; l < HW_MAX_LEVELS; l++)
            same = same && x->bytes[l] == y->bytes[l] && x->lat_ps[l] == y->lat_ps[l];
        for (int k = 0; k < CAT_COUNT; k++)
            same = same && x->time_ps[k] == y->time_ps[k];
        if (!same) {
            fprintf(stderr, "  %s: op %u differs with the memo (end %llu against %llu ps)\n", cfg, i,
                    (unsigned long long)x->end_ps, (unsigned long long)y->end_ps);
            differ++;
        }
    }
    CHECK_EQ_INT(differ, 0);
    printf("  %s: %u ops, %.3f ms, %s with and without the memo\n", cfg, a.nops,
           (double)a.total_ps * 1e-9, differ ? "NOT the same" : "the same");
    run_result_free(&a);
    run_result_free(&b);
}

int main(void)
{
    char dir[64], path[128];
    CHECK(tu_mkdtemp(dir, sizeof dir, "strata-memo") == 0);
    snprintf(path, sizeof path, "%s/t.json", dir);
    tu_write_file(path, trace_text);
    same_results("configs/nvidia-h100-sxm.yaml", path);
    same_results("configs/amd-mi300x.yaml", path);
    same_results("configs/nvidia-a100-sxm-80gb.yaml", "traces/examples/llama-2-7b-prefill-2048.json");
    snprintf(path, sizeof path, "%s/replicas.json", dir);
    write_replicas(path);
    same_results("configs/nvidia-h100-sxm.yaml", path);
    tu_rmtree(dir);
    TEST_MAIN_END();
}
