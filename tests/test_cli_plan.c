/* test_cli_plan.c: `strata plan` (issue 34, docs/plan.md), through the
 * command as a user runs it: a small search of Llama-3-8B on an H100 and an
 * A100 whose best meets the SLA and beats every other candidate that does,
 * a candidate that is the serve run with its options, a looser SLA never
 * giving a worse best nor a tighter one a better, the same bytes for -j1
 * and -j2, the verdict and the closest candidate when nothing can meet the
 * SLA (exit 3), the Pareto front's files, and bad input refused with a
 * clear message and no output written. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "util.h"

#define L8B "traces/models/llama-3-8b.json"
#define SMOL "traces/models/smollm-135m.json"   /* quick: the bad-input runs */
/* 2 chips x TP 1, 2 x 2 batch limits = 8 candidates of 200 requests (short ones: the
 * ASan build runs this search five times within a minute) */
#define SEARCH "plan --model " L8B " --hw configs/nvidia-h100-sxm.yaml,configs/nvidia-a100-sxm-80gb.yaml " \
               "--tp 1,2 --max-num-seqs 16,64 --rate 20 --requests 200 --isl 256 --osl 64"
#define SLA "ttft_p90=100ms,tpot_p90=8ms"       /* the H100s meet it, the A100s do not */

static char dir[64];

/* Runs strata args: the exit status; stdout and stderr in *out and *err (may be NULL). */
static int run(const char *args, char **out, char **err)
{
    char *o = NULL, *e = NULL;
    int rc = tu_run_strata(dir, args, &o, &e);
    if (out != NULL)
        *out = o;
    else
        free(o);
    if (err != NULL)
        *err = e;
    else
        free(e);
    return rc;
}

/* `strata SEARCH --sla sla extra --json DIR/name.json --csv DIR/name.csv`:
 * the exit status, the JSON parsed into *j (caller frees). */
static int plan(const char *sla, const char *extra, const char *name, cJSON **j, char **out)
{
    char cmd[2048], path[256];
    snprintf(cmd, sizeof cmd, SEARCH " --sla %s %s --json '%s/%s.json' --csv '%s/%s.csv'", sla, extra, dir, name,
             dir, name);
    char *err = NULL;
    int rc = run(cmd, out, &err);
    if (rc != 0 && rc != 3)
        fprintf(stderr, "strata %s: exit %d\n%s\n", cmd, rc, err ? err : "");
    free(err);
    snprintf(path, sizeof path, "%s/%s.json", dir, name);
    char *text = tu_read_file(path, NULL);
    *j = text ? cJSON_Parse(text) : NULL;
    free(text);
    return rc;
}

static double num(const cJSON *j, const char *a, const char *b)
{
    const cJSON *o = cJSON_GetObjectItemCaseSensitive(j, a);
    if (b != NULL)
        o = cJSON_GetObjectItemCaseSensitive(o, b);
    return cJSON_IsNumber(o) ? o->valuedouble : -1;
}

static double best_tok(const cJSON *j)
{
    return num(cJSON_GetObjectItemCaseSensitive(j, "best"), "output_tokens_per_s_per_device", NULL);
}

/* The search's best meets the SLA, no candidate that meets it does better,
 * and the best is exactly the serve run with its options. */
static void test_best(void)
{
    cJSON *j = NULL;
    char *out = NULL;
    CHECK_EQ_INT(plan(SLA, "-j1", "j1", &j, &out), 0);
    CHECK_STR_CONTAINS(out, "best: ");
    const cJSON *b = cJSON_GetObjectItemCaseSensitive(j, "best");
    CHECK(b != NULL);
    CHECK(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(b, "meets_sla")));
    CHECK(num(b, "ttft_s", "p90") <= 0.1 && num(b, "tpot_s", "p90") <= 0.008);
    const cJSON *cs = cJSON_GetObjectItemCaseSensitive(j, "candidates");
    CHECK_EQ_INT(cJSON_GetArraySize(cs), 8);
    int met = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, cs) {
        if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(c, "meets_sla")))
            continue;
        met++;
        CHECK(num(c, "ttft_s", "p90") <= 0.1 && num(c, "tpot_s", "p90") <= 0.008);
        CHECK(num(c, "output_tokens_per_s_per_device", NULL) <= best_tok(j));
    }
    printf("  %d of 8 meet %s; best %.1f output tokens/s per device\n", met, SLA, best_tok(j));
    CHECK(met >= 2 && met < 8);     /* the SLA separates the candidates */
    /* the best is the serve run with its options */
    const cJSON *hw = cJSON_GetObjectItemCaseSensitive(b, "hw");
    char cmd[1024], path[256];
    snprintf(path, sizeof path, "%s/serve.json", dir);
    snprintf(cmd, sizeof cmd, "serve --model " L8B " --hw %s --tp %g --max-num-seqs %g --rate 20 --requests 200 "
             "--isl 256 --osl 64 --json '%s'", cJSON_IsString(hw) ? hw->valuestring : "?", num(b, "tp", NULL),
             num(b, "max_num_seqs", NULL), path);
    CHECK_EQ_INT(run(cmd, NULL, NULL), 0);
    char *text = tu_read_file(path, NULL);
    cJSON *s = text ? cJSON_Parse(text) : NULL;
    CHECK_NEAR_REL(num(s, "output_tokens_per_s", NULL), num(b, "output_tokens_per_s", NULL), 0);
    CHECK_NEAR_REL(num(s, "ttft_s", "p90"), num(b, "ttft_s", "p90"), 0);
    CHECK_NEAR_REL(num(s, "tpot_s", "p99"), num(b, "tpot_s", "p99"), 0);
    cJSON_Delete(s);
    free(text);
    free(out);
    cJSON_Delete(j);
}

/* --rank energy: the best of those meeting the SLA spends the fewest
 * joules an output token (every candidate carries its figure) */
/* --weights, as serve's: int4 weights (a quarter of bf16's bytes) leave
 * each decode step less to read, so the best candidate's TPOT is shorter */
static void test_weights(void)
{
    cJSON *j = NULL, *w = NULL;
    CHECK_EQ_INT(plan("tpot_p90=1s", "", "bf16", &j, NULL), 0);
    CHECK_EQ_INT(plan("tpot_p90=1s", "--weights int4_g128", "int4", &w, NULL), 0);
    double tb = num(cJSON_GetObjectItemCaseSensitive(j, "best"), "tpot_s", "p50");
    double tw = num(cJSON_GetObjectItemCaseSensitive(w, "best"), "tpot_s", "p50");
    printf("  --weights int4_g128: best's TPOT p50 %.2f ms against %.2f ms in bf16\n", tw * 1e3, tb * 1e3);
    CHECK(tb > 0 && tw > 0);
    CHECK(tw < 0.8 * tb);
    cJSON_Delete(j);
    cJSON_Delete(w);
}

/* A Mamba-2 hybrid is planned like any decoder: its TP candidates split
 * the mixers' heads and groups (docs/ssm.md), so on an HGX H100 the search
 * runs TP 1 to 8, and a wider split gives each user a faster token. */
static void test_hybrid(void)
{
    char cmd[1024], path[256];
    snprintf(path, sizeof path, "%s/hybrid.json", dir);
    snprintf(cmd, sizeof cmd, "plan --model traces/models/nemotron-nano-9b-v2.json --hw "
             "configs/systems/nvidia-hgx-h100.yaml --rate 10 --requests 60 --isl 500 --osl 60 --sla "
             "tpot_p90=1s --max-num-seqs 64 --stack vllm-0.6 --no-progress --json '%s'", path);
    CHECK_EQ_INT(run(cmd, NULL, NULL), 0);
    char *text = tu_read_file(path, NULL);
    cJSON *j = text ? cJSON_Parse(text) : NULL;
    free(text);
    const cJSON *cands = cJSON_GetObjectItemCaseSensitive(j, "candidates");
    double tpu1 = -1, tpu8 = -1;
    int n = 0;
    for (const cJSON *c = cands ? cands->child : NULL; c != NULL; c = c->next, n++) {
        double tp = num(c, "tp", NULL), u = num(c, "tokens_per_s_per_user", NULL);
        if (tp == 1)
            tpu1 = u;
        if (tp == 8)
            tpu8 = u;
    }
    printf("  Nemotron Nano 9B v2 planned: %d candidates, %.1f tokens/s a user at TP 1, %.1f at TP 8\n", n,
           tpu1, tpu8);
    CHECK_EQ_INT(n, 4);
    CHECK(tpu1 > 0 && tpu8 > tpu1);
    cJSON_Delete(j);
}

static void test_rank_energy(void)
{
    cJSON *j = NULL;
    char *out = NULL;
    CHECK_EQ_INT(plan(SLA, "-j2 --rank energy", "energy", &j, &out), 0);
    CHECK_STR_CONTAINS(out, "J/token");
    const cJSON *b = cJSON_GetObjectItemCaseSensitive(j, "best");
    double best = num(b, "joules_per_output_token", NULL);
    CHECK(best > 0);
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(j, "candidates"))
        if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(c, "meets_sla")))
            CHECK(num(c, "joules_per_output_token", NULL) >= best);
    printf("  --rank energy: best %.4f J an output token\n", best);
    free(out);
    cJSON_Delete(j);
}

/* -j2 writes the same bytes as -j1 (the JSON and CSV of test_best), and
 * --out writes the front and its plot's files. */
static void test_threads(void)
{
    cJSON *j = NULL;
    char extra[256];
    snprintf(extra, sizeof extra, "-j2 --out '%s/out'", dir);
    CHECK_EQ_INT(plan(SLA, extra, "j2", &j, NULL), 0);
    cJSON_Delete(j);
    static const char *const ext[] = {"json", "csv"};
    for (int i = 0; i < 2; i++) {
        char p1[256], p2[256];
        snprintf(p1, sizeof p1, "%s/j1.%s", dir, ext[i]);
        snprintf(p2, sizeof p2, "%s/j2.%s", dir, ext[i]);
        char *a = tu_read_file(p1, NULL), *b = tu_read_file(p2, NULL);
        CHECK(a != NULL && b != NULL && strcmp(a, b) == 0);
        free(a);
        free(b);
    }
    char p[256];
    snprintf(p, sizeof p, "%s/out/front.csv", dir);
    char *front = tu_read_file(p, NULL);
    CHECK_STR_CONTAINS(front, "hw,tp,max_num_seqs,chunked_prefill,tokens_per_s_per_user,");
    CHECK_STR_CONTAINS(front, "\nnvidia-a100-sxm-80gb,");
    free(front);
    snprintf(p, sizeof p, "%s/out/front.gp", dir);
    CHECK(tu_exists(p));
    snprintf(p, sizeof p, "%s/out/plan.csv", dir);
    CHECK(tu_exists(p));
}

/* A looser SLA never gives a worse best, a tighter one never a better. */
static void test_monotone(void)
{
    cJSON *loose = NULL, *tight = NULL;
    char path[256];
    snprintf(path, sizeof path, "%s/j1.json", dir);     /* test_best's, under SLA */
    char *text = tu_read_file(path, NULL);
    cJSON *j = text ? cJSON_Parse(text) : NULL;
    free(text);
    CHECK_EQ_INT(plan("ttft_p90=2s,tpot_p90=25ms", "", "loose", &loose, NULL), 0);
    int rc = plan("ttft_p90=20ms,tpot_p90=6ms", "", "tight", &tight, NULL);
    printf("  best: loose %.1f, base %.1f, tight %.1f (exit %d)\n", best_tok(loose), best_tok(j), best_tok(tight),
           rc);
    CHECK(best_tok(loose) >= best_tok(j));
    CHECK_EQ_INT(rc, 0);
    CHECK(best_tok(tight) > 0 && best_tok(tight) < best_tok(j));  /* it takes TP 2 */
    cJSON_Delete(j);
    cJSON_Delete(loose);
    cJSON_Delete(tight);
}

/* An SLA nothing meets: the verdict names the closest, exit 3, and the
 * outputs are written. */
static void test_impossible(void)
{
    cJSON *j = NULL;
    char *out = NULL;
    CHECK_EQ_INT(plan("ttft_p50=1ms,tpot_p90=8ms", "", "none", &j, &out), 3);
    CHECK_STR_CONTAINS(out, "no configuration meets the SLA; closest: ");
    CHECK_STR_CONTAINS(out, "ttft_p50 ");
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, "verdict");
    CHECK(cJSON_IsString(v) && strcmp(v->valuestring, "no configuration meets the SLA") == 0);
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(j, "closest");
    CHECK(c != NULL && cJSON_GetObjectItemCaseSensitive(j, "best") == NULL);
    /* the closest has the smallest violation of all */
    double vmin = num(c, "sla_violation", NULL);
    const cJSON *x;
    cJSON_ArrayForEach(x, cJSON_GetObjectItemCaseSensitive(j, "candidates"))
        if (num(x, "sla_violation", NULL) != -1)
            CHECK(num(x, "sla_violation", NULL) >= vmin);
    CHECK(vmin > 0);
    free(out);
    cJSON_Delete(j);
}

/* A bad input: exit status rc, stderr holding want, no output file. */
static void refused_model(const char *model, const char *args, int rc, const char *want)
{
    char cmd[2048], out[256];
    snprintf(out, sizeof out, "%s/never.json", dir);
    snprintf(cmd, sizeof cmd, "plan --model %s --rate 5 --requests 20 --max-num-seqs 8 %s --json '%s'", model, args,
             out);
    char *err = NULL;
    CHECK_EQ_INT(run(cmd, NULL, &err), rc);
    CHECK_STR_CONTAINS(err, want);
    CHECK(!tu_exists(out));
    free(err);
}

static void refused(const char *args, int rc, const char *want)
{
    refused_model(SMOL, args, rc, want);
}

static void test_bad_input(void)
{
    const char *h = "--hw configs/nvidia-h100-sxm.yaml ";
    char a[512];
#define R(extra, rc, want) (snprintf(a, sizeof a, "%s%s", h, extra), refused(a, rc, want))
    R("--sla ttft_p95=500ms", 2, "strata plan: --sla: unknown key 'ttft_p95'");
    R("--sla latency_p90=500ms", 2, "strata plan: --sla: unknown key 'latency_p90'");
    R("--sla ttft_p90=-5ms", 2, "strata plan: --sla: ttft_p90: expected a time above 0");
    R("--sla tpot_p90=0ms", 2, "strata plan: --sla: tpot_p90: expected a time above 0");
    R("--sla tpot_p90=50", 2, "with its unit");
    R("--sla tpot_p90=50ms,tpot_p90=40ms", 2, "tpot_p90 given twice");
    R("--sla ttft_p90", 2, "expected KEY=TIME");
    R("--tp 1,,2", 2, "strata plan: --tp: an empty item");
    R("--tp 2 --max-tp 4", 2, "give --tp or --max-tp");
    R("--max-num-seqs 0", 2, "strata plan: --max-num-seqs: at least 1");
    R("--chunked-prefill maybe", 2, "strata plan: --chunked-prefill:");
    R("-j 0", 2, "-j: at least 1");
    R("--rate 0", 2, "strata plan: --rate:");
    R("--rank speed", 2, "strata plan: --rank: 'speed': throughput or energy");
#undef R
    refused("", 2, "--hw and --model are required");
    refused("--hw configs/no-such-chip.yaml", 1, "no-such-chip");
    /* a model that fits no candidate: an error, not a verdict */
    refused_model(L8B, "--hw configs/nvidia-h100-sxm.yaml --tp 1,2 --set dram.capacity=8GB", 1,
                  "the model fits no candidate on any --hw");
}

int main(void)
{
    if (tu_mkdtemp(dir, sizeof dir, "strata-plan") != 0)
        return 1;
    test_best();
    test_rank_energy();
    test_hybrid();
    test_weights();
    test_threads();
    test_monotone();
    test_impossible();
    test_bad_input();
    tu_rmtree(dir);
    TEST_MAIN_END();
}
