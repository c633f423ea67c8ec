/* test_cli_serve.c: `strata serve` (issue 34, docs/serving.md), through the
 * command as a user runs it: queueing theory it must obey (Little's law),
 * a closed loop of one client whose latencies are the step simulations'
 * own, throughput that rises with the rate and then saturates, a KV cache
 * small enough to force preemptions, static against continuous batching,
 * the stack's serving: block, determinism, and bad input refused with
 * file:line or option messages and no output written. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "util.h"

#define H100 "configs/nvidia-h100-sxm.yaml"
#define L8B "traces/models/llama-3-8b.json"
#define L1B "traces/models/llama-3.2-1b.json"     /* Llama 3's vocabulary: a draft for L8B */
#define SMOL "traces/models/smollm-135m.json"  /* quick to simulate: the ASan build's budget */

static char dir[64];

/* Runs strata args; returns the exit status, stderr in *err (caller frees; may be NULL). */
static int run(const char *args, char **err)
{
    char *out = NULL, *e = NULL;
    int rc = tu_run_strata(dir, args, &out, &e);
    free(out);
    if (err != NULL)
        *err = e;
    else {
        if (rc != 0)
            fprintf(stderr, "strata %s: exit %d\n%s\n", args, rc, e ? e : "");
        free(e);
    }
    return rc;
}

/* `strata serve --model model args --json DIR/name`, parsed (caller frees), or NULL. */
static cJSON *serve_model(const char *model, const char *args, const char *name)
{
    char cmd[2048], path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    snprintf(cmd, sizeof cmd, "serve --hw " H100 " --model %s %s --json '%s'", model, args, path);
    if (run(cmd, NULL) != 0)
        return NULL;
    char *text = tu_read_file(path, NULL);
    cJSON *j = text ? cJSON_Parse(text) : NULL;
    free(text);
    return j;
}

static cJSON *serve(const char *args, const char *name)
{
    return serve_model(L8B, args, name);
}

static double num(const cJSON *j, const char *a, const char *b)
{
    const cJSON *o = cJSON_GetObjectItemCaseSensitive(j, a);
    if (b != NULL)
        o = cJSON_GetObjectItemCaseSensitive(o, b);
    return cJSON_IsNumber(o) ? o->valuedouble : -1;
}

/* The simulated time of one llm step (gen llm + run, as a user would), s. */
static double step_s(const char *gen_args)
{
    char cmd[1024], tr[256], js[256];
    snprintf(tr, sizeof tr, "%s/step.json", dir);
    snprintf(js, sizeof js, "%s/step-report.json", dir);
    snprintf(cmd, sizeof cmd, "gen llm --model " L8B " %s -o '%s'", gen_args, tr);
    if (run(cmd, NULL) != 0)
        return -1;
    snprintf(cmd, sizeof cmd, "run --hw " H100 " --trace '%s' --quiet --json '%s'", tr, js);
    if (run(cmd, NULL) != 0)
        return -1;
    char *text = tu_read_file(js, NULL);
    cJSON *j = text ? cJSON_Parse(text) : NULL;
    double t = num(j, "total_time_s", NULL);
    cJSON_Delete(j);
    free(text);
    return t;
}

/* Little's law: the time-averaged number of requests in the system (the
 * engine integrates it step by step) is the arrival rate times the mean
 * time a request spends there. */
static void test_little(void)
{
    cJSON *j = serve_model(SMOL, "--rate 150 --requests 2000 --isl uniform:128..1024 --osl uniform:16..256",
                           "little.json");
    CHECK(j != NULL);
    double l = num(j, "mean_in_system", NULL), w = num(j, "e2e_s", "mean");
    printf("  Little: L %.3f, rate x W %.3f\n", l, 150 * w);
    CHECK_NEAR_REL(l, 150 * w, 0.03);
    CHECK(l > 1);   /* loaded enough to mean something */
    cJSON_Delete(j);
}

/* One client at a time: no queue, TTFT is the prompt's prefill step and
 * TPOT the batch-1 decode step (contexts 512 and 513..575, which round up
 * to the 576 bucket in all but the first). */
static void test_closed_one(void)
{
    cJSON *j = serve("--concurrency 1 --requests 4 --isl 512 --osl 64", "one.json");
    CHECK(j != NULL);
    double pre = step_s("--phase prefill --batch 1 --prompt 512");
    double d512 = step_s("--phase decode --batch 1 --context 512");
    double d576 = step_s("--phase decode --batch 1 --context 576");
    printf("  concurrency 1: TTFT %.6f s (prefill %.6f), TPOT %.6f s (decode %.6f)\n", num(j, "ttft_s", "p50"),
           pre, num(j, "tpot_s", "mean"), d576);
    CHECK_NEAR_REL(num(j, "ttft_s", "p50"), pre, 1e-6);
    CHECK_NEAR_REL(num(j, "ttft_s", "p99"), pre, 1e-6);
    CHECK_NEAR_REL(num(j, "tpot_s", "mean"), (d512 + 62 * d576) / 63, 1e-6);
    CHECK_NEAR_REL(num(j, "queued_s", "p99"), 0, 0);
    CHECK_NEAR_REL(num(j, "requests_per_s", NULL), 1.0 / num(j, "e2e_s", "mean"), 1e-6);
    /* energy (the H100 has a power block): its idle 72 W over the run, the
     * steps' energy above it, per output token (4 x 64) */
    double e = num(j, "energy", "total_J"), idle = num(j, "energy", "idle_J");
    double end_s = 4 * num(j, "e2e_s", "mean");
    CHECK_NEAR_REL(idle, 72.0 * end_s, 1e-6);
    CHECK(e > idle * 1.5);
    CHECK_NEAR_REL(num(j, "energy", "J_per_output_token"), e / 256, 1e-9);
    CHECK_NEAR_REL(num(j, "energy", "power_W"), e / end_s, 1e-6);
    CHECK(num(j, "energy", "power_W") < 700);
    cJSON_Delete(j);
}

/* Throughput follows the offered rate while the engine keeps up, then
 * saturates (SmolLM-135M on an H100 at 512 in, 64 out: about 800
 * requests/s): a 4x higher rate past it gains less than 5%. */
static void test_saturation(void)
{
    static const double rates[] = {25, 100, 2000, 8000};
    double tput[4];
    for (int i = 0; i < 4; i++) {
        char args[256], name[32];
        snprintf(args, sizeof args, "--rate %g --requests 400 --isl 512 --osl 64", rates[i]);
        snprintf(name, sizeof name, "rate%d.json", i);
        cJSON *j = serve_model(SMOL, args, name);
        tput[i] = num(j, "requests_per_s", NULL);
        printf("  rate %g: %.2f requests/s\n", rates[i], tput[i]);
        cJSON_Delete(j);
    }
    CHECK_NEAR_REL(tput[0], 25, 0.1);
    CHECK_NEAR_REL(tput[1], 100, 0.1);
    for (int i = 1; i < 4; i++)
        CHECK(tput[i] >= tput[i - 1] * 0.98);
    CHECK(tput[2] < 0.5 * rates[2]);
    CHECK_NEAR_REL(tput[3], tput[2], 0.05);
}

/* A cache of about 15,000 tokens (90% of a 22 GB H100 less 16 GB of weights)
 * under 32 clients: sequences are preempted, recomputed, and all finish. */
static void test_preemption(void)
{
    char args[512], csv[256];
    snprintf(csv, sizeof csv, "%s/preempt.csv", dir);
    snprintf(args, sizeof args, "--set dram.capacity=22GB --concurrency 32 --requests 96 --isl 512 --osl 256 "
             "--csv '%s'", csv);
    cJSON *j = serve(args, "preempt.json");
    CHECK(j != NULL);
    double pre = num(j, "preemptions", NULL);
    printf("  22 GB: %.0f KV blocks, %.0f preemptions, max occupancy %.3f\n", num(j, "kv_cache", "blocks"), pre,
           num(j, "kv_cache", "max_occupancy"));
    CHECK(pre > 0);
    CHECK(num(j, "kv_cache", "max_occupancy") > 0.9);
    CHECK(num(j, "kv_cache", "max_occupancy") <= 1.0);
    CHECK_EQ_INT(num(j, "workload", "requests"), 96);
    /* the CSV's per-request preemptions add up to the total, every request finished */
    char *text = tu_read_file(csv, NULL);
    CHECK(text != NULL);
    long sum = 0, rows = 0;
    for (char *p = text ? strchr(text, '\n') : NULL; p != NULL && p[1] != '\0'; p = strchr(p + 1, '\n')) {
        const char *last = p + 1;
        for (const char *q = p + 1; *q != '\n' && *q != '\0'; q++)
            if (*q == ',')
                last = q + 1;
        sum += atol(last);
        rows++;
    }
    CHECK_EQ_INT(rows, 96);
    CHECK_EQ_INT(sum, (long)pre);
    free(text);
    /* TensorRT-LLM's default capacity policy: a request waits until the
     * blocks for its prompt and its whole output are free, and takes them
     * all at once, so the same cache preempts nobody */
    snprintf(args, sizeof args, "--set dram.capacity=22GB --concurrency 32 --requests 96 --isl 512 --osl 256 "
             "--capacity-policy guaranteed_no_evict");
    cJSON *g = serve(args, "noevict.json");
    CHECK(g != NULL);
    printf("  22 GB, no eviction: %.0f preemptions, max occupancy %.3f, %.2f requests/s (evicting %.2f)\n",
           num(g, "preemptions", NULL), num(g, "kv_cache", "max_occupancy"), num(g, "requests_per_s", NULL),
           num(j, "requests_per_s", NULL));
    CHECK_EQ_INT(num(g, "preemptions", NULL), 0);
    CHECK_EQ_INT(num(g, "workload", "requests"), 96);
    const cJSON *sc = cJSON_GetObjectItemCaseSensitive(g, "scheduler");
    const cJSON *cp = cJSON_GetObjectItemCaseSensitive(sc, "capacity_policy");
    CHECK(cJSON_IsString(cp) && strcmp(cp->valuestring, "guaranteed_no_evict") == 0);
    cJSON_Delete(g);
    /* with speculative decoding the draft tokens are checked up to the
     * output's end, one token more than a plain decode ever caches: the
     * reservation holds it too, so still nobody is preempted */
    g = serve("--set dram.capacity=24GB --concurrency 64 --requests 128 --isl 527 --osl 18 "
              "--capacity-policy guaranteed_no_evict --spec-draft traces/models/llama-3.2-1b.json --spec-k 3 "
              "--spec-accept 1", "noevict-spec.json");
    CHECK(g != NULL);
    CHECK_EQ_INT(num(g, "preemptions", NULL), 0);
    CHECK_EQ_INT(num(g, "workload", "requests"), 128);
    cJSON_Delete(g);
    cJSON_Delete(j);
}

/* Static batching waits for the batch's longest output: with mixed output
 * lengths continuous batching serves the same clients faster. */
static void test_static(void)
{
    cJSON *c = serve("--concurrency 16 --requests 64 --isl 256 --osl uniform:8..256 --max-num-seqs 16", "cont.json");
    cJSON *s = serve("--concurrency 16 --requests 64 --isl 256 --osl uniform:8..256 --max-num-seqs 16 "
                     "--scheduler static", "static.json");
    double tc = num(c, "requests_per_s", NULL), ts = num(s, "requests_per_s", NULL);
    printf("  16 clients: continuous %.2f, static %.2f requests/s\n", tc, ts);
    CHECK(ts > 0 && tc > 1.2 * ts);
    CHECK_EQ_INT(num(s, "preemptions", NULL), 0);
    cJSON_Delete(c);
    cJSON_Delete(s);
}

/* The stack's serving: block gives the defaults (vllm-0.2: no chunked
 * prefill, so a step's tokens are the model's 8192 positions); an option
 * overrides it. */
static void test_stack(void)
{
    cJSON *j = serve("--stack vllm-0.2 --rate 4 --requests 50", "stack.json");
    const cJSON *sc = cJSON_GetObjectItemCaseSensitive(j, "scheduler");
    CHECK(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(sc, "chunked_prefill")));
    CHECK_EQ_INT(num(j, "scheduler", "max_batched_tokens"), 8192);
    CHECK_EQ_INT(num(j, "kv_cache", "block_size"), 16);
    CHECK_EQ_INT(num(j, "steps", "mixed"), 0);
    cJSON_Delete(j);
    j = serve("--stack vllm-0.2 --rate 4 --requests 50 --chunked-prefill on --block-size 32", "stack2.json");
    sc = cJSON_GetObjectItemCaseSensitive(j, "scheduler");
    CHECK(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(sc, "chunked_prefill")));
    CHECK_EQ_INT(num(j, "kv_cache", "block_size"), 32);
    CHECK(strcmp(cJSON_GetObjectItemCaseSensitive(sc, "capacity_policy")->valuestring, "max_utilization") == 0);
    cJSON_Delete(j);
    /* TensorRT-LLM's stacks reserve a request's whole KV (its default policy); an option overrides */
    j = serve("--stack trtllm-0.17 --rate 4 --requests 20", "stack3.json");
    sc = cJSON_GetObjectItemCaseSensitive(j, "scheduler");
    CHECK(strcmp(cJSON_GetObjectItemCaseSensitive(sc, "capacity_policy")->valuestring, "guaranteed_no_evict") == 0);
    cJSON_Delete(j);
    j = serve("--stack trtllm-0.17 --rate 4 --requests 20 --capacity-policy max_utilization", "stack4.json");
    sc = cJSON_GetObjectItemCaseSensitive(j, "scheduler");
    CHECK(strcmp(cJSON_GetObjectItemCaseSensitive(sc, "capacity_policy")->valuestring, "max_utilization") == 0);
    cJSON_Delete(j);
}

/* The input lengths of a --csv file's rows into v[max]: how many. */
static int csv_inputs(const char *path, unsigned *v, int max)
{
    char *text = tu_read_file(path, NULL);
    CHECK(text != NULL);
    int n = 0;
    for (const char *l = text ? strchr(text, '\n') : NULL; l != NULL && l[1] != '\0'; l = strchr(l + 1, '\n')) {
        unsigned id, in;
        double at;
        if (n == max || sscanf(l + 1, "%u,%lf,%u,", &id, &at, &in) != 3)
            break;
        v[n++] = in;
    }
    free(text);
    return n;
}

/* The input lengths of 2000 requests drawn from --isl dist, into v[2000]:
 * how many (a quick model, outputs of 2 tokens). */
static int draw_inputs(const char *dist, const char *name, unsigned *v)
{
    char args[512], path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    snprintf(args, sizeof args, "serve --hw " H100 " --model " SMOL " --rate 4000 --requests 2000 "
             "--isl %s --osl 2 --csv '%s'", dist, path);
    CHECK_EQ_INT(run(args, NULL), 0);
    return csv_inputs(path, v, 2000);
}

/* lognormal:MEAN,CV,MAX: the kept lengths have mean MEAN (the log-normal
 * shifted for what the bound drops), none above MAX, and a long tail. */
static void test_lognormal(void)
{
    static unsigned v[2000];
    int n = draw_inputs("lognormal:200,1.5,600", "logn.csv", v), over = 0, tail = 0;
    double sum = 0;
    for (int i = 0; i < n; i++) {
        sum += v[i];
        over += v[i] > 600;
        tail += v[i] > 400;
    }
    printf("  lognormal:200,1.5,600: %d requests, mean %.1f, %d above 400, %d above 600\n", n, n ? sum / n : 0,
           tail, over);
    CHECK_EQ_INT(n, 2000);
    CHECK_NEAR_REL(sum / n, 200, 0.05);
    CHECK_EQ_INT(over, 0);
    CHECK(tail > 40);
}

/* gamma:MEAN,CV,MAX: the kept lengths have mean MEAN and that spread, none
 * above MAX; at CV 1 (an exponential) the median is ln 2 of the mean, and
 * the tail is lighter than a log-normal's of the same mean and CV: of
 * 2000 exponential lengths of mean 179 about 12 exceed 900 (e^-5.03),
 * where the log-normal gives about 29. */
static void test_gamma(void)
{
    static unsigned v[2000];
    int n = draw_inputs("gamma:179,1.0,2048", "gamma.csv", v), over = 0, tail = 0;
    double sum = 0, sq = 0;
    for (int i = 0; i < n; i++) {
        sum += v[i];
        sq += (double)v[i] * v[i];
        over += v[i] > 2048;
        tail += v[i] > 900;
    }
    double mean = n ? sum / n : 0, cv = n ? sqrt(sq / n - mean * mean) / mean : 0;
    int below = 0;
    for (int i = 0; i < n; i++)
        below += v[i] <= 0.693 * 179;
    printf("  gamma:179,1.0,2048: %d requests, mean %.1f, CV %.2f, %d at or below ln 2 x 179, %d above 900\n",
           n, mean, cv, below, tail);
    CHECK_EQ_INT(n, 2000);
    CHECK_NEAR_REL(mean, 179, 0.05);
    CHECK_NEAR_REL(cv, 1.0, 0.08);
    CHECK(below > 900 && below < 1100);     /* the median near ln 2 of the mean */
    CHECK_EQ_INT(over, 0);
    CHECK(tail >= 3 && tail <= 25);
}

/* The engine's CPU time: a stack's host_seq_us adds exactly that much to
 * each step of one sequence; multi-step scheduling makes a new prompt wait
 * for the window of decodes to end (a longer TTFT), the tokens the same. */
static void test_host_and_window(void)
{
    static const char base[] = "name: t\nruns_on: [gpu]\nserving:\n  scheduler: continuous\n%s"
                               "sources:\n  runs_on: \"a test of serve's host time\"\n"
                               "  serving.scheduler: \"a test of serve's host time\"\n%s";
    char text[512], p0[256], p1[256], args[768];
    snprintf(p0, sizeof p0, "%s/host0.yaml", dir);
    snprintf(p1, sizeof p1, "%s/host1.yaml", dir);
    snprintf(text, sizeof text, base, "", "");
    tu_write_file(p0, text);
    snprintf(text, sizeof text, base, "  host_seq_us: 1000\n", "  serving.host_seq_us: \"a test of serve's host time\"\n");
    tu_write_file(p1, text);
    snprintf(args, sizeof args, "--stack '%s' --concurrency 1 --requests 3 --isl 200 --osl 20", p0);
    cJSON *a = serve_model(SMOL, args, "host0.json");
    snprintf(args, sizeof args, "--stack '%s' --concurrency 1 --requests 3 --isl 200 --osl 20", p1);
    cJSON *b = serve_model(SMOL, args, "host1.json");
    CHECK(a != NULL && b != NULL);
    printf("  host_seq_us 1000: TPOT %.6f -> %.6f s, host %.1f%% of busy\n", num(a, "tpot_s", "mean"),
           num(b, "tpot_s", "mean"), num(b, "steps", "host_fraction") * 100);
    CHECK_NEAR_REL(num(b, "tpot_s", "mean") - num(a, "tpot_s", "mean"), 1e-3, 1e-6);
    CHECK_NEAR_REL(num(b, "ttft_s", "p50") - num(a, "ttft_s", "p50"), 1e-3, 1e-6);
    CHECK_EQ_INT(num(a, "steps", "host_fraction"), 0);
    CHECK(num(b, "steps", "host_fraction") > 0.1);
    cJSON_Delete(a);
    cJSON_Delete(b);
    a = serve_model(SMOL, "--rate 100 --requests 200 --isl 300 --osl 60 --chunked-prefill off", "ms1.json");
    b = serve_model(SMOL, "--rate 100 --requests 200 --isl 300 --osl 60 --chunked-prefill off "
                    "--scheduler-steps 10", "ms10.json");
    CHECK(a != NULL && b != NULL);
    printf("  scheduler steps 1 -> 10: TTFT p50 %.6f -> %.6f s\n", num(a, "ttft_s", "p50"), num(b, "ttft_s", "p50"));
    CHECK(num(b, "ttft_s", "p50") > 1.5 * num(a, "ttft_s", "p50"));
    CHECK_EQ_INT(num(b, "scheduler", "scheduler_steps"), 10);
    CHECK_EQ_INT(num(b, "workload", "output_tokens"), num(a, "workload", "output_tokens"));
    cJSON_Delete(a);
    cJSON_Delete(b);
}

/* Goodput: the requests that meet every bound, over the run's duration;
 * one client at a time, so each request's TTFT is the prefill step: a
 * bound just above it admits all, one just below none. */
static void test_goodput(void)
{
    double pre = step_s("--phase prefill --batch 1 --prompt 512");
    char args[256];
    snprintf(args, sizeof args, "--concurrency 1 --requests 4 --isl 512 --osl 8 --goodput ttft=%.9fs,tpot=1s",
             pre * 1.001);
    cJSON *a = serve(args, "good-all.json");
    snprintf(args, sizeof args, "--concurrency 1 --requests 4 --isl 512 --osl 8 --goodput ttft=%.9fs", pre * 0.999);
    cJSON *b = serve(args, "good-none.json");
    CHECK(a != NULL && b != NULL);
    CHECK_EQ_INT(num(a, "goodput", "requests"), 4);
    CHECK_NEAR_REL(num(a, "goodput", "requests_per_s"), num(a, "requests_per_s", NULL), 1e-9);
    CHECK_EQ_INT(num(b, "goodput", "requests"), 0);
    CHECK_EQ_INT(num(b, "goodput", "fraction"), 0);
    cJSON_Delete(a);
    cJSON_Delete(b);
}

/* A request that fills the model's positions exactly (2048 + 2048 on
 * Llama-2's 4096) runs: its last decode steps' context bucket is held to
 * the positions (it was refused as 4097 > 4096). */
static void test_full_context(void)
{
    cJSON *a = serve_model("traces/models/llama-2-7b.json", "--concurrency 2 --requests 2 --isl 2048 --osl 2048",
                           "full-context.json");
    CHECK(a != NULL);
    /* both requests' 2048 tokens in the run's time */
    CHECK_NEAR_REL(num(a, "output_tokens_per_s", NULL) * num(a, "duration_s", NULL), 4096.0, 1e-6);
    cJSON_Delete(a);
}

/* The timeline: a step slice for each engine step, and each request's
 * slices (queued, prefill, decode) adding up to its end-to-end time; the
 * KV counter's peak is the run's; a timeline that cannot be written
 * leaves none of the outputs. */
static void test_timeline(void)
{
    char args[512], path[256];
    snprintf(path, sizeof path, "%s/tl.json", dir);
    snprintf(args, sizeof args, "--rate 400 --requests 60 --isl 300 --osl 20 --timeline '%s'", path);
    cJSON *j = serve_model(SMOL, args, "tl-summary.json");
    char *text = tu_read_file(path, NULL);
    cJSON *t = text ? cJSON_Parse(text) : NULL;
    CHECK(j != NULL && t != NULL);
    double e2e[60] = {0}, kv_max = 0;
    int steps = 0;
    const cJSON *ev;
    cJSON_ArrayForEach(ev, cJSON_GetObjectItemCaseSensitive(t, "traceEvents")) {
        const char *ph = cJSON_GetObjectItemCaseSensitive(ev, "ph")->valuestring;
        int pid = cJSON_GetObjectItemCaseSensitive(ev, "pid")->valueint;
        if (strcmp(ph, "X") == 0 && pid == 1)
            steps++;
        else if (strcmp(ph, "X") == 0 && pid == 2) {
            int tid = cJSON_GetObjectItemCaseSensitive(ev, "tid")->valueint;
            if (tid >= 1 && tid <= 60)
                e2e[tid - 1] += cJSON_GetObjectItemCaseSensitive(ev, "dur")->valuedouble * 1e-6;
        } else if (strcmp(ph, "C") == 0 && strcmp(cJSON_GetObjectItemCaseSensitive(ev, "name")->valuestring,
                                                  "KV cache") == 0) {
            double v = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(ev, "args"),
                                                        "blocks")->valuedouble;
            kv_max = v > kv_max ? v : kv_max;
        }
    }
    double mean = 0;
    for (int i = 0; i < 60; i++)
        mean += e2e[i] / 60;
    printf("  timeline: %d steps, mean E2E %.6f s (summary %.6f), KV peak %.0f blocks\n", steps, mean,
           num(j, "e2e_s", "mean"), kv_max);
    CHECK_EQ_INT(steps, num(j, "steps", "total"));
    CHECK_NEAR_REL(mean, num(j, "e2e_s", "mean"), 1e-6);
    CHECK_NEAR_REL(kv_max, num(j, "kv_cache", "max_occupancy") * num(j, "kv_cache", "blocks"), 1e-9);
    cJSON_Delete(j);
    cJSON_Delete(t);
    free(text);
    snprintf(args, sizeof args, "serve --hw " H100 " --model " SMOL " --rate 400 --requests 10 --json '%s/tl2.json' "
             "--timeline '%s'", dir, dir);
    char *err = NULL;
    CHECK_EQ_INT(run(args, &err), 1);
    snprintf(path, sizeof path, "%s/tl2.json", dir);
    CHECK(!tu_exists(path));
    free(err);
}

/* Disaggregated: one request's end-to-end time is the aggregated engine's
 * plus its KV's move (prompt tokens x a device's KV bytes a token / the
 * bandwidth), its TTFT the same prefill step; a loaded pool of 2 + 2
 * serves every request and token. */
static void test_disagg(void)
{
    char path[256], args[512];
    snprintf(path, sizeof path, "%s/one.csv", dir);
    tu_write_file(path, "arrival_s,input_tokens,output_tokens\n0.001,512,8\n");
    snprintf(args, sizeof args, "--requests-file '%s'", path);
    cJSON *a = serve(args, "agg.json");
    snprintf(args, sizeof args, "--requests-file '%s' --disagg 1:1 --kv-bandwidth 10GB/s", path);
    cJSON *b = serve(args, "dis.json");
    CHECK(a != NULL && b != NULL);
    double move = 512 * num(a, "kv_cache", "bytes_per_token") / 10e9;
    printf("  disaggregated 1:1: E2E %.6f -> %.6f s (KV move %.6f s)\n", num(a, "e2e_s", "mean"),
           num(b, "e2e_s", "mean"), move);
    CHECK_NEAR_REL(num(b, "ttft_s", "mean"), num(a, "ttft_s", "mean"), 1e-9);
    CHECK_NEAR_REL(num(b, "e2e_s", "mean") - num(a, "e2e_s", "mean"), move, 1e-6);
    CHECK_EQ_INT(num(b, "disaggregated", "decode_instances"), 1);
    cJSON_Delete(a);
    cJSON_Delete(b);
    b = serve_model(SMOL, "--rate 400 --requests 300 --isl 300 --osl 30 --disagg 2:2 --kv-bandwidth 50GB/s",
                    "dis2.json");
    CHECK(b != NULL);
    CHECK_EQ_INT(num(b, "ttft_s", "requests"), 300);
    CHECK_EQ_INT(num(b, "workload", "output_tokens"), 9000);
    CHECK(num(b, "steps", "busy_fraction") <= 1.0);
    cJSON_Delete(b);
}

/* The same seed, the same bytes; another seed, other requests. */
/* Speculative decoding (--spec-draft): with every draft token accepted a
 * step gives k + 1 tokens, so 8 tokens after the first take 2 steps of
 * k = 3, each faster than 4 plain decodes; with almost none accepted a
 * step gives about one token and costs the draft's passes more; the
 * draft's weights and KV come out of the cache. */
static void test_speculative(void)
{
    static const char base[] = "--concurrency 1 --requests 2 --isl 512 --osl 9";
    char args[512];
    cJSON *plain = serve(base, "spec0.json");
    snprintf(args, sizeof args, "%s --spec-draft " L1B " --spec-k 3 --spec-accept 1", base);
    cJSON *all = serve(args, "spec1.json");
    snprintf(args, sizeof args, "%s --spec-draft " L1B " --spec-k 3 --spec-accept 0.05", base);
    cJSON *few = serve(args, "spec2.json");
    CHECK(plain != NULL && all != NULL && few != NULL);
    CHECK_NEAR_REL(num(all, "steps", "decode"), 4, 0);
    CHECK_NEAR_REL(num(all, "speculative", "tokens_per_step"), 4, 0);
    CHECK_NEAR_REL(num(plain, "steps", "decode"), 16, 0);
    CHECK(num(plain, "speculative", "tokens") < 0);     /* absent without a draft */
    printf("  speculative k 3: TPOT %.6f s (all accepted), %.6f (5%%), %.6f without\n", num(all, "tpot_s", "mean"),
           num(few, "tpot_s", "mean"), num(plain, "tpot_s", "mean"));
    CHECK(num(all, "tpot_s", "mean") < 0.6 * num(plain, "tpot_s", "mean"));
    CHECK(num(few, "tpot_s", "mean") > num(plain, "tpot_s", "mean"));
    CHECK(num(few, "speculative", "tokens_per_step") >= 1 && num(few, "speculative", "tokens_per_step") < 1.3);
    CHECK(num(all, "kv_cache", "blocks") < num(plain, "kv_cache", "blocks"));
    CHECK_NEAR_REL(num(all, "workload", "output_tokens"), 2 * 9, 0);
    CHECK_NEAR_REL(num(few, "workload", "output_tokens"), 2 * 9, 0);
    cJSON_Delete(plain);
    cJSON_Delete(all);
    cJSON_Delete(few);
}

/* Prefix caching (--shared-prefix, --prefix-caching): one client, every
 * request starting with the same 1024 tokens; from the second on, the
 * prompt is a prefill of its own 64 tokens after 1024 cached; without the
 * cache each computes all 1088.  With more prefixes than the cache holds,
 * the unused ones are evicted and every request still finishes. */
static void test_prefix(void)
{
    static const char base[] = "--concurrency 1 --requests 4 --isl 64 --osl 4 --shared-prefix 1:1024";
    char args[512];
    snprintf(args, sizeof args, "%s --prefix-caching on", base);
    cJSON *on = serve(args, "pc-on.json");
    cJSON *off = serve(base, "pc-off.json");
    CHECK(on != NULL && off != NULL);
    double hit = 64.0 * 1024 * 3 / (4.0 * 1088 * 64);
    CHECK_NEAR_REL(num(on, "prefix_cache", "hit_rate"), hit, 1e-9);
    CHECK_NEAR_REL(num(off, "prefix_cache", "hit_rate"), 0, 0);
    double own = step_s("--phase prefill --batch 1 --prompt 64 --context 1024");
    double all = step_s("--phase prefill --batch 1 --prompt 1152");    /* 1088's bucket */
    printf("  prefix cache: TTFT p50 %.6f s (prefill of 64 after 1024: %.6f), without %.6f (1152: %.6f)\n",
           num(on, "ttft_s", "p50"), own, num(off, "ttft_s", "p50"), all);
    CHECK_NEAR_REL(num(on, "ttft_s", "p50"), own, 1e-6);
    CHECK_NEAR_REL(num(off, "ttft_s", "p50"), all, 1e-6);
    cJSON_Delete(on);
    cJSON_Delete(off);
    /* 256 clients, one prefix of 2048 tokens: the decodes' contexts, each
     * counted whole (84 GB of weights and KV), pass the device's 80 GB,
     * but the cache holds the prefix once, so the step is resident: no
     * weights stream from the host as a lone run of that step does */
    cJSON *res = serve("--concurrency 256 --requests 256 --isl 8 --osl 4 --shared-prefix 1:2048 "
                       "--prefix-caching on", "pc-resident.json");
    double spilled = step_s("--phase decode --batch 256 --context 2056");
    CHECK(res != NULL);
    printf("  prefix cache, 256 x 2056 tokens: TPOT p50 %.6f s (a lone run of the step, spilling: %.6f)\n",
           num(res, "tpot_s", "p50"), spilled);
    CHECK(num(res, "tpot_s", "p50") > 0 && num(res, "tpot_s", "p50") < 0.5 * spilled);
    cJSON_Delete(res);
    /* 200 prefixes of 1500 tokens in a small cache: least recently used out */
    cJSON *ev = serve_model(SMOL, "--rate 50 --requests 300 --isl 64 --osl 8 --shared-prefix 200:1500 "
                                  "--prefix-caching on --gpu-memory-utilization 0.05", "pc-evict.json");
    CHECK(ev != NULL);
    CHECK(num(ev, "prefix_cache", "evictions") > 0);
    CHECK_NEAR_REL(num(ev, "workload", "output_tokens"), 300 * 8, 0);
    cJSON_Delete(ev);
}

static void test_determinism(void)
{
    char args[512];
    const char *names[3] = {"a", "b", "c"};
    char *js[3], *cs[3];
    for (int i = 0; i < 3; i++) {
        snprintf(args, sizeof args, "serve --hw " H100 " --model " SMOL " --rate 200 --requests 300 "
                 "--isl normal:300,100 --osl uniform:10..100 --seed %d --json '%s/%s.json' --csv '%s/%s.csv'",
                 i == 2 ? 7 : 3, dir, names[i], dir, names[i]);
        CHECK_EQ_INT(run(args, NULL), 0);
        char p[256];
        snprintf(p, sizeof p, "%s/%s.json", dir, names[i]);
        js[i] = tu_read_file(p, NULL);
        snprintf(p, sizeof p, "%s/%s.csv", dir, names[i]);
        cs[i] = tu_read_file(p, NULL);
        CHECK(js[i] != NULL && cs[i] != NULL);
    }
    CHECK(js[0] && js[1] && strcmp(js[0], js[1]) == 0);
    CHECK(cs[0] && cs[1] && strcmp(cs[0], cs[1]) == 0);
    CHECK(cs[0] && cs[2] && strcmp(cs[0], cs[2]) != 0);
    for (int i = 0; i < 3; i++) {
        free(js[i]);
        free(cs[i]);
    }
}

/* A bad input: exit status rc, a message holding want, and no output file. */
static void refused(const char *args, int rc, const char *want)
{
    char cmd[2048], out[256];
    snprintf(out, sizeof out, "%s/never.json", dir);
    snprintf(cmd, sizeof cmd, "serve --hw " H100 " --model " L8B " %s --json '%s' --csv '%s/never.csv'", args,
             out, dir);
    char *err = NULL;
    CHECK_EQ_INT(run(cmd, &err), rc);
    CHECK_STR_CONTAINS(err, want);
    CHECK(!tu_exists(out));
    free(err);
}

/* A file refused: text written to DIR/name (a requests file gets the
 * header first), given to opt; the message is the path and then want. */
static void refused_file(const char *name, const char *opt, const char *text, const char *want)
{
    char path[256], args[512], msg[400], body[1024];
    int csv = strcmp(opt, "--requests-file") == 0;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    snprintf(body, sizeof body, "%s%s", csv ? "arrival_s,input_tokens,output_tokens\n" : "", text);
    tu_write_file(path, body);
    snprintf(args, sizeof args, "%s%s '%s'", csv ? "" : "--rate 5 ", opt, path);
    snprintf(msg, sizeof msg, "%s%s", path, want);
    refused(args, 1, msg);
}

static void test_bad_input(void)
{
    char path[256], args[512];
    refused("--rate 5 --block-size 0", 2, "serve: --block-size: at least 1");
    refused("--rate 0", 2, "serve: --rate:");
    refused("--rate 5 --isl uniform:9..3", 2, "serve: --isl:");
    refused("--rate 5 --concurrency 4", 2, "give one of --rate");
    refused("--rate 5 --chunked-prefill maybe", 2, "serve: --chunked-prefill:");
    refused("--rate 5 --capacity-policy no_evict", 2, "serve: --capacity-policy: expected max_utilization or "
            "guaranteed_no_evict");
    refused("--rate 5 --scheduler static --capacity-policy max_utilization", 2,
            "serve: --capacity-policy: static batching reserves");
    refused("--rate 5 --scheduler-steps 0", 2, "serve: --scheduler-steps: at least 1");
    refused("--rate 5 --goodput ttft=0ms", 2, "serve: --goodput: ttft: expected a time above 0");
    refused("--rate 5 --disagg 0:1 --kv-bandwidth 1GB/s", 2, "serve: --disagg: expected P:D");
    refused("--rate 5 --disagg 2 --kv-bandwidth 1GB/s", 2, "serve: --disagg: expected P:D");
    refused("--rate 5 --disagg 1:1", 2, "serve: --kv-bandwidth: with --disagg");
    refused("--rate 5 --kv-bandwidth 1GB/s", 2, "serve: --kv-bandwidth: only with --disagg");
    refused("--concurrency 5 --disagg 1:1 --kv-bandwidth 1GB/s", 2, "a closed loop (--concurrency) is not");
    refused("--rate 5 --goodput ttft_p90=1s", 2, "serve: --goodput: 'ttft_p90=1s': expected ttft=TIME");
    refused("--rate 5 --goodput tpot=1s,tpot=2s", 2, "serve: --goodput: tpot: given twice");
    refused("--rate 5 --isl lognormal:200,0", 2, "serve: --isl: expected lognormal:MEAN,CV[,MAX]");
    refused("--rate 5 --isl gamma:200,0", 2, "serve: --isl: expected gamma:MEAN,CV[,MAX]");
    refused("--rate 5 --osl gamma:200,1,150", 2, "serve: --osl: expected gamma:MEAN,CV[,MAX]");
    refused("--rate 5 --spec-k 3", 2, "serve: --spec-k: only with --spec-draft");
    refused("--rate 5 --spec-draft " L1B " --spec-accept 0.7", 2, "serve: --spec-k: with --spec-draft");
    refused("--rate 5 --spec-draft " L1B " --spec-k 17 --spec-accept 0.7", 2, "serve: --spec-k: expected a count, got '17' (at most 16)");
    refused("--rate 5 --spec-draft " L1B " --spec-k 3 --spec-accept 0", 2, "serve: --spec-accept: with");
    refused("--rate 5 --spec-draft " L1B " --spec-k 3 --spec-accept 1.5", 2, "serve: --spec-accept: with");
    refused("--rate 5 --spec-draft " L1B " --spec-k 3", 2, "serve: --spec-accept: with");
    refused("--rate 5 --spec-draft " L1B " --spec-k 3 --spec-accept 0.7 --scheduler static", 2,
            "serve: --spec-draft: not with --scheduler static");
    refused("--rate 5 --spec-draft " L1B " --spec-k 3 --spec-accept 0.7 --scheduler-steps 4", 2,
            "serve: --scheduler-steps: not above 1 with --spec-draft");
    refused("--rate 5 --spec-draft " SMOL " --spec-k 3 --spec-accept 0.7", 2, "a vocabulary of 49152");
    refused("--rate 5 --shared-prefix 0:10", 2, "serve: --shared-prefix: expected G:P");
    refused("--rate 5 --shared-prefix 3", 2, "serve: --shared-prefix: expected G:P");
    refused("--rate 5 --shared-prefix 2:0", 2, "serve: --shared-prefix: expected G:P");
    refused("--rate 5 --prefix-caching on", 2, "serve: --prefix-caching: on needs --shared-prefix");
    refused("--rate 5 --shared-prefix 2:100 --prefix-caching maybe", 2, "serve: --prefix-caching:");
    refused("--rate 5 --osl lognormal:200,1,150", 2, "serve: --osl: expected lognormal:MEAN,CV[,MAX]");
    refused("--rate 5 --isl 9000", 1, "max_position_embeddings");
    /* without chunked prefill a prompt must fit one step */
    refused("--rate 5 --isl 4096 --chunked-prefill off --max-batched-tokens 2048", 1, "--max-batched-tokens: 2048");
    /* a model that leaves no room for a KV cache */
    refused("--rate 5 --set dram.capacity=16GB", 1, "does not fit");

    refused_file("unsorted.csv", "--requests-file", "0.5,100,10\n0.25,100,10\n",
                 ":3: arrival_s: times must not decrease");
    refused_file("negative.csv", "--requests-file", "0,100,10\n1,-5,10\n",
                 ":3: input_tokens: a length cannot be negative");
    refused_file("zero-out.csv", "--requests-file", "0,100,0\n", ":2: output_tokens:");
    /* a stack whose serving: block has a block of 0 tokens */
    refused_file("bad-stack.yaml", "--stack", "name: bad\nruns_on: [gpu]\nserving:\n  block_size: 0\nsources:\n"
                 "  runs_on: \"a test of the loader\"\n  serving.block_size: \"a test of the loader\"\n",
                 ":4: serving.block_size");
    /* a capacity policy TensorRT-LLM does not have */
    refused_file("bad-policy.yaml", "--stack", "name: bad\nruns_on: [gpu]\nserving:\n  capacity_policy: "
                 "no_evict\nsources:\n  runs_on: \"a test of the loader\"\n  serving.capacity_policy: \"a test "
                 "of the loader\"\n", ":4: serving.capacity_policy: expected max_utilization or guaranteed_no_evict");

    /* a good file runs, and its times are kept */
    snprintf(path, sizeof path, "%s/good.csv", dir);
    tu_write_file(path, "arrival_s,input_tokens,output_tokens\n0,100,10\n0.5,200,20\n0.5,50,1\n");
    snprintf(args, sizeof args, "--requests-file '%s'", path);
    cJSON *j = serve(args, "file.json");
    CHECK_EQ_INT(num(j, "workload", "requests"), 3);
    CHECK_EQ_INT(num(j, "workload", "output_tokens"), 31);
    cJSON_Delete(j);
}

int main(void)
{
    if (tu_mkdtemp(dir, sizeof dir, "strata-serve") != 0)
        return 1;
    test_little();
    test_closed_one();
    test_saturation();
    test_preemption();
    test_static();
    test_stack();
    test_lognormal();
    test_gamma();
    test_host_and_window();
    test_goodput();
    test_full_context();
    test_timeline();
    test_disagg();
    test_speculative();
    test_prefix();
    test_determinism();
    test_bad_input();
    tu_rmtree(dir);
    TEST_MAIN_END();
}
