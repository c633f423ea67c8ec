/* cmd_serve.c: `strata serve`: requests through a serving engine on the
 * hardware (sim/study/serve.h, docs/serving.md).  The hardware, the stack
 * and the model load as `run` and `gen llm` load them; the KV cache is what
 * `fit` leaves of the device's memory. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfg.h"
#include "cli.h"
#include "diag.h"
#include "llm.h"
#include "numfmt.h"
#include "serve.h"
#include "serve_report.h"
#include "serve_setup.h"
#include "stack.h"
#include "system.h"

/* Defaults where neither the command line nor the stack's `serving:` block
 * says: the scheduler's are vLLM's (serve_sched_defaults, serve.c), and so
 * is gpu_memory_utilization 0.9 (vllm/engine/arg_utils.py EngineArgs).
 * The workload's: 1000 requests of 1024 in, 128 out (vLLM's
 * benchmarks/benchmark_serving.py --num-prompts and its random dataset's
 * --random-input-len / --random-output-len), seed 1. */
#define SERVE_DEF_UTIL 0.9
#define SERVE_DEF_REQUESTS 1000
#define SERVE_DEF_ISL "1024"
#define SERVE_DEF_OSL "128"

const char cli_serve_usage[] =
    "  strata serve    --hw CONFIG.yaml --model CONFIG.json (--rate R | --concurrency C |\n"
    "                  --requests-file F.csv) [--requests N] [--isl L] [--osl L] [--seed S]\n"
    "                  [--stack NAME] [--tp N] [--dtype bf16] [--scheduler continuous|static]\n"
    "                  [--max-num-seqs N] [--max-batched-tokens N] [--block-size N]\n"
    "                  [--chunked-prefill on|off] [--scheduler-steps N] [--gpu-memory-utilization F]\n"
    "                  [--json OUT.json] [--csv REQUESTS.csv] " CLI_SET_USAGE "\n"
    "                  (--rate: Poisson arrivals, requests/s; --concurrency: a closed loop of C\n"
    "                  clients; --requests-file: arrival_s,input_tokens,output_tokens lines;\n"
    "                  --isl/--osl: N, uniform:A..B, normal:MU,SIGMA or lognormal:MEAN,CV[,MAX]\n"
    "                  tokens; --scheduler-steps: decode steps a scheduler call runs; --csv: a row a\n"
    "                  request. defaults: --requests 1000 (a file: all of it), --isl 1024,\n"
    "                  --osl 128, --seed 1, --tp 1, --dtype bf16, then the stack's serving: block,\n"
    "                  else vLLM's: --scheduler continuous, --max-num-seqs 256, --block-size 16,\n"
    "                  --chunked-prefill on with --max-batched-tokens 8192 (off: the model's\n"
    "                  max_position_embeddings, at least 2048), --gpu-memory-utilization 0.9;\n"
    "                  docs/serving.md)\n";

/* The options as given (NULL: not given). */
struct serve_args {
    const char *hw, *model, *stack, *tp, *dtype;
    const char *rate, *conc, *file, *nreq, *isl, *osl, *seed;
    const char *sched, *seqs, *tokens, *block, *chunked, *util, *msteps;
    const char *js, *csv;
};

static int usage_err(const char *opt, const char *what, const char *got)
{
    fprintf(stderr, "strata serve: %s: %s, got '%s'\n", opt, what, got);
    return 2;
}

/* A count option: 0 with *out (left alone when not given), or 2. */
static int count_opt(const char *opt, const char *v, unsigned min, unsigned max, uint32_t *out)
{
    if (v == NULL)
        return 0;
    unsigned x;
    if (cli_count("serve", opt, v, max, &x) != 0)
        return 2;
    if (x < min) {
        fprintf(stderr, "strata serve: %s: at least %u, got %u%s\n", opt, min, x,
                strcmp(opt, "--block-size") == 0 ? " (a KV block holds at least one token)" : "");
        return 2;
    }
    *out = x;
    return 0;
}

/* One of two words: 0 with *out (0 for no, 1 for yes; left alone when not given), or 2. */
static int choice_opt(const char *opt, const char *v, const char *no, const char *yes, int *out)
{
    if (v == NULL)
        return 0;
    if (strcmp(v, no) != 0 && strcmp(v, yes) != 0) {
        char what[64];
        snprintf(what, sizeof what, "expected %s or %s", no, yes);
        return usage_err(opt, what, v);
    }
    *out = strcmp(v, yes) == 0;
    return 0;
}

/* The workload options: arrivals, counts, lengths, seed.  0, or 2. */
static int parse_workload(const struct serve_args *a, struct serve_workload *w, char *label, size_t n)
{
    memset(w, 0, sizeof *w);
    int given = (a->rate != NULL) + (a->conc != NULL) + (a->file != NULL);
    if (given != 1) {
        fprintf(stderr, "strata serve: give one of --rate (Poisson arrivals), --concurrency (a closed "
                        "loop) or --requests-file\n");
        return 2;
    }
    if (a->rate != NULL) {
        if (num_parse(a->rate, &w->rate) != 0 || !(w->rate > 0) || w->rate > 1e9)
            return usage_err("--rate", "expected requests per second, above 0", a->rate);
        w->arrival = SERVE_POISSON;
        snprintf(label, n, "poisson %g req/s", w->rate);
    } else if (a->conc != NULL) {
        if (count_opt("--concurrency", a->conc, 1, 1u << 20, &w->concurrency) != 0)
            return 2;
        w->arrival = SERVE_CLOSED;
        snprintf(label, n, "closed loop of %u clients", w->concurrency);
    } else {
        w->arrival = SERVE_TRACE;
        snprintf(label, n, "requests file %s", a->file);
    }
    w->n = SERVE_DEF_REQUESTS;
    if (count_opt("--requests", a->nreq, 1, 10000000, &w->n) != 0)
        return 2;
    char why[160];
    if (serve_dist_parse(a->isl ? a->isl : SERVE_DEF_ISL, &w->isl, why, sizeof why) != 0) {
        fprintf(stderr, "strata serve: --isl: %s\n", why);
        return 2;
    }
    if (serve_dist_parse(a->osl ? a->osl : SERVE_DEF_OSL, &w->osl, why, sizeof why) != 0) {
        fprintf(stderr, "strata serve: --osl: %s\n", why);
        return 2;
    }
    if (a->file != NULL && (a->isl != NULL || a->osl != NULL)) {
        fprintf(stderr, "strata serve: --isl and --osl: the requests file gives each request's lengths\n");
        return 2;
    }
    w->seed = 1;
    if (a->seed != NULL) {
        char *end;
        unsigned long long s = strtoull(a->seed, &end, 10);
        if (a->seed[0] < '0' || a->seed[0] > '9' || *end != '\0')
            return usage_err("--seed", "expected a whole number", a->seed);
        w->seed = s;
    }
    return 0;
}

/* The scheduler: the defaults, then the stack's serving: block, then the
 * options.  max_pos: the model's max_position_embeddings.  0, or 2. */
static int parse_sched(const struct serve_args *a, const struct stack *stk, uint64_t max_pos,
                       struct serve_sched *s, double *util)
{
    int tokens_given;
    serve_sched_defaults(stk, max_pos, s, &tokens_given);
    if (choice_opt("--scheduler", a->sched, "continuous", "static", &s->is_static) != 0 ||
        choice_opt("--chunked-prefill", a->chunked, "off", "on", &s->chunked_prefill) != 0 ||
        count_opt("--max-num-seqs", a->seqs, 1, 65536, &s->max_num_seqs) != 0 ||
        count_opt("--block-size", a->block, 1, 65535, &s->block_size) != 0 ||
        count_opt("--scheduler-steps", a->msteps, 1, 1024, &s->scheduler_steps) != 0)
        return 2;
    if (!tokens_given)
        s->max_batched_tokens = serve_sched_tokens(s->chunked_prefill, max_pos);
    if (count_opt("--max-batched-tokens", a->tokens, 1, 1u << 24, &s->max_batched_tokens) != 0)
        return 2;
    *util = SERVE_DEF_UTIL;
    if (a->util != NULL && (num_parse(a->util, util) != 0 || !(*util > 0 && *util <= 1)))
        return usage_err("--gpu-memory-utilization", "expected the share of the device's memory the engine "
                         "may use, above 0 and at most 1", a->util);
    return 0;
}

/* The steps' templates: the dtype, the split and the stack's kernels and
 * attention for each phase.  0, or 2. */
static int parse_step(const struct serve_args *a, const struct stack *stk, struct llm_step *pre,
                      struct llm_step *dec)
{
    enum dtype dt = DT_BF16;
    uint32_t tp = 1;
    if (a->dtype != NULL && dtype_from_name(a->dtype, &dt) != 0)
        return usage_err("--dtype", "unknown dtype (fp32, fp16, bf16, fp8_e4m3, ...)", a->dtype);
    if (count_opt("--tp", a->tp, 1, 65536, &tp) != 0)
        return 2;
    serve_step_templates(stk, dt, tp, pre, dec);
    return 0;
}

/* Every request fits the model's positions (vLLM refuses longer ones).
 * 0, or 1 after the message. */
static int check_lengths(const struct serve_args *a, const struct serve_reqs *q, const struct llm_config *c)
{
    for (uint32_t i = 0; i < q->n; i++) {
        uint64_t len = (uint64_t)q->r[i].input + q->r[i].output;
        if (c->max_pos > 0 && len > c->max_pos) {
            if (a->file != NULL)
                fprintf(stderr, "%s:%u: input_tokens: %u in + %u out exceed the model's "
                                "max_position_embeddings (%llu)\n", a->file, i + 2, q->r[i].input,
                        q->r[i].output, (unsigned long long)c->max_pos);
            else
                fprintf(stderr, "strata serve: --isl/--osl: request %u has %u in + %u out, beyond the "
                                "model's max_position_embeddings (%llu)\n", i, q->r[i].input,
                        q->r[i].output, (unsigned long long)c->max_pos);
            return 1;
        }
    }
    return 0;
}

/* The outputs, after the run: 0, or 1. */
static int write_outputs(const struct serve_args *a, const struct serve_ctx *ctx)
{
    struct serve_summary sm;
    serve_summarize(ctx, &sm);
    struct diag d;
    memset(&d, 0, sizeof d);
    if (a->csv != NULL && serve_report_csv(ctx, a->csv, &d) != 0)
        return cli_fail(&d);
    if (a->js != NULL && serve_report_json(ctx, &sm, a->js, &d) != 0) {
        if (a->csv != NULL && !cli_is_stdout(a->csv))
            remove(a->csv);     /* all the outputs, or none */
        return cli_fail(&d);
    }
    serve_report_text(ctx, &sm, cli_is_stdout(a->js) || cli_is_stdout(a->csv) ? stderr : stdout);
    return 0;
}

/* After the options: load, size the cache, run, report.  0, 1 or 2. */
static int serve_main(const struct serve_args *a, const struct cfg_sets *sets)
{
    struct stack stk;
    char sdir[1600];
    if (a->stack != NULL && cli_load_stack("serve", a->stack, &stk, sdir, sizeof sdir) != 0)
        return 1;
    const struct stack *sp = a->stack != NULL ? &stk : NULL;
    struct serve_workload w;
    char label[1200];
    struct llm_step pre, dec;
    int rc = parse_workload(a, &w, label, sizeof label);
    if (rc == 0)
        rc = parse_step(a, sp, &pre, &dec);
    if (rc != 0)
        return rc;
    struct diag d;
    memset(&d, 0, sizeof d);
    struct llm_config c;
    if (llm_config_load(a->model, &c, &d) != 0)
        return cli_fail(&d);
    struct serve_sched sch;
    double util;
    if (parse_sched(a, sp, c.max_pos, &sch, &util) != 0)
        return 2;
    struct serve_reqs q;
    if (a->file != NULL) {
        if (serve_reqs_load(a->file, &q, &d) != 0)
            return cli_fail(&d);
        if (a->nreq != NULL && w.n < q.n)
            q.n = w.n;          /* the first N */
    } else
        serve_reqs_make(&w, &q);
    sch.concurrency = w.arrival == SERVE_CLOSED ? w.concurrency : 0;
    struct serve_setup su;
    if (check_lengths(a, &q, &c) != 0) {
        serve_reqs_free(&q);
        return 1;
    }
    if (serve_setup_init(&su, a->hw, sets, sp, sdir, &c, &pre, &dec, util, &sch, &d) != 0) {
        if (d.file[0] == '\0')         /* the budget: whose model */
            fprintf(stderr, "strata serve: %s: ", a->model);
        serve_reqs_free(&q);
        return cli_fail(&d);
    }
    struct serve_result res;
    rc = serve_run(&sch, &q, &su.steps, &res, &d) != 0 ? cli_fail(&d) : 0;
    if (rc == 0) {
        const struct hw_config *cfg = &su.sys.chip;
        char dt[16];
        snprintf(dt, sizeof dt, "%s", dtype_name(dec.dtype));
        struct serve_ctx ctx = {su.sys.implied ? cfg_label(cfg) : su.sys.name, a->model, sp ? stk.name : "",
                                dec.tp, dt, label, w.seed, &sch, util, su.kv_per_token, su.fit.weights, &q,
                                &res, &su.steps};
        rc = write_outputs(a, &ctx);
    }
    serve_setup_free(&su);
    serve_reqs_free(&q);
    return rc;
}

int cli_serve(int argc, char **argv)
{
    struct serve_args a;
    memset(&a, 0, sizeof a);
    const struct cli_opt opts[] = {
        {"hw", 0, &a.hw, NULL},         {"model", 0, &a.model, NULL},
        {"stack", 0, &a.stack, NULL},   {"tp", 0, &a.tp, NULL},
        {"dtype", 0, &a.dtype, NULL},   {"rate", 0, &a.rate, NULL},
        {"concurrency", 0, &a.conc, NULL}, {"requests-file", 0, &a.file, NULL},
        {"requests", 0, &a.nreq, NULL}, {"isl", 0, &a.isl, NULL},
        {"osl", 0, &a.osl, NULL},       {"seed", 0, &a.seed, NULL},
        {"scheduler", 0, &a.sched, NULL}, {"max-num-seqs", 0, &a.seqs, NULL},
        {"scheduler-steps", 0, &a.msteps, NULL},
        {"max-batched-tokens", 0, &a.tokens, NULL}, {"block-size", 0, &a.block, NULL},
        {"chunked-prefill", 0, &a.chunked, NULL},
        {"gpu-memory-utilization", 0, &a.util, NULL},
        {"json", 0, &a.js, NULL},       {"csv", 0, &a.csv, NULL},
        {NULL, 0, NULL, NULL},
    };
    struct cfg_sets sets;
    memset(&sets, 0, sizeof sets);
    int rc = cli_take_sets("serve", &argc, argv, &sets);
    if (rc >= 0)
        return rc;
    rc = cli_parse("serve", cli_serve_usage, opts, argc, argv, NULL);
    if (rc >= 0)
        return rc;
    char hw_path[1600], model_path[1600], file_path[1600];
    if (cli_find("serve", "--hw", &a.hw, 0, hw_path, sizeof hw_path) != 0 ||
        cli_find("serve", "--model", &a.model, 1, model_path, sizeof model_path) != 0)
        return 1;
    if (a.hw == NULL || a.model == NULL) {
        fprintf(stderr, "strata serve: --hw and --model are required\n");
        return 2;
    }
    if (a.file != NULL)
        cli_find_data(&a.file, file_path, sizeof file_path);
    if (a.js != NULL && a.csv != NULL && strcmp(a.js, a.csv) == 0) {
        fprintf(stderr, "strata serve: --json and --csv name the same file '%s'\n", a.js);
        return 2;
    }
    return serve_main(&a, &sets);
}
