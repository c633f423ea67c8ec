/* test_acceptance_h100.c: the acceptance checks of the H100 model, run
 * through the command line and read back from the JSON reports.
 *
 *  - `strata info`: the bf16 DRAM ridge point is peak / bandwidth
 *    = 989.4e12 / 3.35e12 = 295.3 FLOP/B (within 1%).
 *  - Llama-2-7B bf16 decode, batch 1, 2048 tokens cached: tokens/s is at
 *    most the DRAM bandwidth bound and at least 70% of it.  The bound is
 *    3.35e12 B/s divided by the bytes one step must read: every weight once
 *    (bf16) except the embedding table, of which one row is read (left
 *    out), plus the whole KV cache (K and V, every layer, 2049 positions).
 *  - That decode step is DRAM-bound: the DRAM stall time is the largest
 *    stall and exceeds the busy time.
 *  - A 4096^3 bf16 GEMM is compute-bound.
 *  - Scaling sanity: a 1-row norm is faster than an 8192-row one, and a
 *    GEMM with m = 8192 is slower than with m = 4096.
 */
#include <cjson/cJSON.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "llm.h"
#include "test.h"
#include "util.h"

#define H100 "configs/nvidia-h100-sxm.yaml"
#define H100_DRAM_BPS 3.35e12
#define H100_BF16_PEAK 989.4e12

static char tmpdir[64];

/* Parses a JSON file; NULL (after a failed check) if it cannot. */
static cJSON *load_json(const char *path)
{
    char *text = tu_read_file(path, NULL);
    CHECK(text != NULL);
    if (text == NULL) {
        fprintf(stderr, "  ^ cannot read %s\n", path);
        return NULL;
    }
    cJSON *j = cJSON_Parse(text);
    free(text);
    CHECK(j != NULL);
    if (j == NULL)
        fprintf(stderr, "  ^ %s is not valid JSON\n", path);
    return j;
}

/* Number at a path of object keys ("stall_s", "dram", NULL); NAN if absent. */
static double num(const cJSON *j, const char *k1, const char *k2)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(j, k1);
    if (it != NULL && k2 != NULL)
        it = cJSON_GetObjectItemCaseSensitive(it, k2);
    if (!cJSON_IsNumber(it)) {
        fprintf(stderr, "missing number %s%s%s\n", k1, k2 ? "." : "", k2 ? k2 : "");
        return (double)NAN;
    }
    return it->valuedouble;
}

/* Runs a trace on the H100 config; returns the parsed report or NULL. */
static cJSON *run_trace_file(const char *trace, const char *label)
{
    char cmd[1024], out[256];
    snprintf(out, sizeof out, "%s/%s.out.json", tmpdir, label);
    snprintf(cmd, sizeof cmd, "'%s' run --hw " H100 " --trace '%s' --json '%s' --quiet",
             STRATA_BINARY, trace, out);
    int rc = tu_sh(cmd);
    CHECK_EQ_INT(rc, 0);
    return rc == 0 ? load_json(out) : NULL;
}

/* Writes a one-op trace and runs it; returns the op's time_s (NAN on failure). */
static double one_op_time(const char *label, const char *op_json, char *bound, size_t bound_n)
{
    char path[256], text[1024];
    snprintf(path, sizeof path, "%s/%s.json", tmpdir, label);
    snprintf(text, sizeof text, "{\"strata_trace\": 1, \"ops\": [%s]}\n", op_json);
    tu_write_file(path, text);
    cJSON *r = run_trace_file(path, label);
    double t = (double)NAN;
    if (r != NULL) {
        const cJSON *ops = cJSON_GetObjectItemCaseSensitive(r, "ops");
        const cJSON *op = cJSON_GetArrayItem(ops, 0);
        CHECK_EQ_INT(cJSON_GetArraySize(ops), 1);
        t = num(op, "time_s", NULL);
        const cJSON *b = cJSON_GetObjectItemCaseSensitive(op, "bound");
        if (bound != NULL)
            snprintf(bound, bound_n, "%s", cJSON_IsString(b) ? b->valuestring : "?");
        CHECK_NEAR_REL(num(r, "total_time_s", NULL), t, 1e-12);
        printf("  %-10s %.6g s, bound %s\n", label, t, cJSON_IsString(b) ? b->valuestring : "?");
        cJSON_Delete(r);
    }
    return t;
}

static void test_ridge(void)
{
    char cmd[1024], out[256];
    snprintf(out, sizeof out, "%s/i.json", tmpdir);
    snprintf(cmd, sizeof cmd, "'%s' info --hw " H100 " --json '%s' >/dev/null", STRATA_BINARY,
             out);
    CHECK_EQ_INT(tu_sh(cmd), 0);
    cJSON *j = load_json(out);
    if (j == NULL)
        return;
    const cJSON *rp = cJSON_GetObjectItemCaseSensitive(j, "ridge_flop_per_byte");
    double ridge = num(rp, "bf16", "dram");
    double expected = H100_BF16_PEAK / H100_DRAM_BPS;
    printf("ridge bf16/dram: %.2f FLOP/B (expected %.2f)\n", ridge, expected);
    CHECK_NEAR_REL(ridge, expected, 0.01);
    cJSON_Delete(j);
}

static void test_decode(void)
{
    struct llm_config c;
    struct diag d;
    memset(&d, 0, sizeof d);
    int rc = llm_config_load("traces/models/llama-2-7b.json", &c, &d);
    CHECK_EQ_INT(rc, 0);
    if (rc != 0) {
        diag_print(&d, stderr);
        return;
    }
    double kv_len = 2049; /* 2048 cached + the new token */
    double weights = 2.0 * (double)(llm_param_count(&c) - c.vocab * c.hidden);
    double kv = 2.0 * (double)c.layers * (double)c.kv_heads * (double)c.head_dim * kv_len * 2.0;
    double bound = H100_DRAM_BPS / (weights + kv);

    char cmd[1024], trace[256];
    snprintf(trace, sizeof trace, "%s/decode.json", tmpdir);
    snprintf(cmd, sizeof cmd,
             "'%s' gen llm --model traces/models/llama-2-7b.json --phase decode --batch 1 "
             "--context 2048 --dtype bf16 -o '%s' >/dev/null",
             STRATA_BINARY, trace);
    rc = tu_sh(cmd);
    CHECK_EQ_INT(rc, 0);
    if (rc != 0)
        return;
    cJSON *r = run_trace_file(trace, "decode");
    if (r == NULL)
        return;
    double tps = num(r, "tokens_per_s", NULL);
    printf("llama-2-7b decode on H100: weights %.4g B + KV cache %.4g B = %.4g B per step\n",
           weights, kv, weights + kv);
    printf("  bandwidth bound %.2f tokens/s, 70%% of it %.2f; simulated %.2f tokens/s "
           "(%.1f%% of the bound); DRAM bytes moved %.4g\n",
           bound, 0.70 * bound, tps, 100.0 * tps / bound, num(r, "bytes", "dram"));
    CHECK(tps <= bound);
    CHECK(tps >= 0.70 * bound);

    /* DRAM-bound: the DRAM stall is the largest stall and beats busy time */
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(r, "stall_s");
    double dram = num(st, "dram", NULL), busy = num(r, "busy_s", NULL);
    CHECK(cJSON_IsObject(st));
    const cJSON *it;
    cJSON_ArrayForEach(it, st)
    {
        CHECK(cJSON_IsNumber(it));
        if (strcmp(it->string, "dram") != 0 && cJSON_IsNumber(it) && !(it->valuedouble < dram)) {
            CHECK(it->valuedouble < dram);
            fprintf(stderr, "  ^ stall_s.%s = %g >= stall_s.dram = %g\n", it->string,
                    it->valuedouble, dram);
        }
    }
    printf("  stall_s.dram %.4g s, busy_s %.4g s, launch_s %.4g s, total %.4g s\n", dram, busy,
           num(r, "launch_s", NULL), num(r, "total_time_s", NULL));
    CHECK(dram > busy);
    cJSON_Delete(r);
}

static void test_gemm_compute_bound(void)
{
    char bound[32] = "";
    double t = one_op_time("gemm4096",
                           "{\"id\": \"g\", \"kind\": \"gemm\", \"dtype\": \"bf16\", "
                           "\"m\": 4096, \"n\": 4096, \"k\": 4096}",
                           bound, sizeof bound);
    CHECK(t > 0);
    CHECK(strcmp(bound, "compute") == 0);
    /* and no faster than the peak allows */
    CHECK(t >= 2.0 * 4096.0 * 4096.0 * 4096.0 / H100_BF16_PEAK);
}

static void test_scaling(void)
{
    double n1 = one_op_time("norm1", "{\"id\": \"n\", \"kind\": \"norm\", \"dtype\": \"bf16\", "
                                     "\"rows\": 1, \"cols\": 4096}",
                            NULL, 0);
    double n8k = one_op_time("norm8192", "{\"id\": \"n\", \"kind\": \"norm\", \"dtype\": "
                                         "\"bf16\", \"rows\": 8192, \"cols\": 4096}",
                             NULL, 0);
    CHECK(n1 > 0);
    CHECK(n1 < n8k);
    double g4 = one_op_time("gemm_m4k", "{\"id\": \"g\", \"kind\": \"gemm\", \"dtype\": \"bf16\", "
                                        "\"m\": 4096, \"n\": 4096, \"k\": 4096}",
                            NULL, 0);
    double g8 = one_op_time("gemm_m8k", "{\"id\": \"g\", \"kind\": \"gemm\", \"dtype\": \"bf16\", "
                                        "\"m\": 8192, \"n\": 4096, \"k\": 4096}",
                            NULL, 0);
    CHECK(g4 > 0);
    CHECK(g8 > g4);
}

int main(void)
{
    if (tu_mkdtemp(tmpdir, sizeof tmpdir, "strata-acc") != 0)
        return 1;
    test_ridge();
    test_decode();
    test_gemm_compute_bound();
    test_scaling();
    tu_rmtree(tmpdir);
    TEST_MAIN_END();
}
