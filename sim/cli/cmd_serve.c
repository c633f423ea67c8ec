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
#include "fit.h"
#include "llm.h"
#include "numfmt.h"
#include "serve.h"
#include "serve_report.h"
#include "stack.h"
#include "system.h"
#include "whatif.h"

/* Defaults where neither the command line nor the stack's `serving:` block
 * says (vLLM's, https://docs.vllm.ai/en/latest/configuration/engine_args.html
 * and vllm/engine/arg_utils.py EngineArgs):
 *   max_num_seqs 256, block_size 16, gpu_memory_utilization 0.9;
 *   chunked prefill on with 8192 tokens a step (V1's default for the
 *   OpenAI server: arg_utils.py default_max_num_batched_tokens);
 *   without chunked prefill, max(max_model_len, 2048) tokens (V0's
 *   SchedulerConfig), max_model_len being the model's
 *   max_position_embeddings as vLLM takes it.
 * The workload's: 1000 requests of 1024 in, 128 out (vLLM's
 * benchmarks/benchmark_serving.py --num-prompts and its random dataset's
 * --random-input-len / --random-output-len), seed 1. */
#define SERVE_DEF_SEQS 256
#define SERVE_DEF_BLOCK 16
#define SERVE_DEF_UTIL 0.9
#define SERVE_DEF_TOKENS_CHUNKED 8192
#define SERVE_DEF_TOKENS_V0_MIN 2048
#define SERVE_DEF_REQUESTS 1000
#define SERVE_DEF_ISL "1024"
#define SERVE_DEF_OSL "128"

const char cli_serve_usage[] =
    "  strata serve    --hw CONFIG.yaml --model CONFIG.json (--rate R | --concurrency C |\n"
    "                  --requests-file F.csv) [--requests N] [--isl L] [--osl L] [--seed S]\n"
    "                  [--stack NAME] [--tp N] [--dtype bf16] [--scheduler continuous|static]\n"
    "                  [--max-num-seqs N] [--max-batched-tokens N] [--block-size N]\n"
    "                  [--chunked-prefill on|off] [--gpu-memory-utilization F]\n"
    "                  [--json OUT.json] [--csv REQUESTS.csv] " CLI_SET_USAGE "\n"
    "                  (--rate: Poisson arrivals, requests/s; --concurrency: a closed loop of C\n"
    "                  clients; --requests-file: arrival_s,input_tokens,output_tokens lines;\n"
    "                  --isl/--osl: N, uniform:A..B or normal:MU,SIGMA tokens; --csv: a row a\n"
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
    const char *sched, *seqs, *tokens, *block, *chunked, *util;
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
    memset(s, 0, sizeof *s);
    s->max_num_seqs = SERVE_DEF_SEQS;
    s->block_size = SERVE_DEF_BLOCK;
    s->chunked_prefill = 1;
    long tokens = -1;
    if (stk != NULL) {
        if (stk->serve_static >= 0)
            s->is_static = stk->serve_static;
        if (stk->serve_max_num_seqs > 0)
            s->max_num_seqs = (uint32_t)stk->serve_max_num_seqs;
        if (stk->serve_block_size > 0)
            s->block_size = (uint32_t)stk->serve_block_size;
        if (stk->serve_chunked_prefill >= 0)
            s->chunked_prefill = stk->serve_chunked_prefill;
        tokens = stk->serve_max_batched_tokens;
    }
    if (choice_opt("--scheduler", a->sched, "continuous", "static", &s->is_static) != 0 ||
        choice_opt("--chunked-prefill", a->chunked, "off", "on", &s->chunked_prefill) != 0 ||
        count_opt("--max-num-seqs", a->seqs, 1, 65536, &s->max_num_seqs) != 0 ||
        count_opt("--block-size", a->block, 1, 65535, &s->block_size) != 0)
        return 2;
    if (tokens > 0)
        s->max_batched_tokens = (uint32_t)tokens;
    else if (s->chunked_prefill)
        s->max_batched_tokens = SERVE_DEF_TOKENS_CHUNKED;
    else
        s->max_batched_tokens = (uint32_t)(max_pos > SERVE_DEF_TOKENS_V0_MIN ? max_pos : SERVE_DEF_TOKENS_V0_MIN);
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
    struct llm_step s = {LLM_DECODE, 1, 1, 0, DT_BF16, ATTN_FLASH, DT_COUNT, WF_NONE, 0, LLM_FW_FUSED,
                         1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    if (a->dtype != NULL && dtype_from_name(a->dtype, &s.dtype) != 0)
        return usage_err("--dtype", "unknown dtype (fp32, fp16, bf16, fp8_e4m3, ...)", a->dtype);
    s.kv_dtype = s.dtype;
    if (count_opt("--tp", a->tp, 1, 65536, &s.tp) != 0)
        return 2;
    *pre = s;
    pre->phase = LLM_PREFILL;
    *dec = s;
    if (stk != NULL) {
        stack_apply_llm(stk, pre, 0, 0);
        stack_apply_llm(stk, dec, 0, 0);
    }
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

/* The hardware as `run` builds it for a step of tmpl (its devices), with
 * the stack applied.  0, or 1 after the message. */
static int load_hw(const struct serve_args *a, const struct cfg_sets *sets, const struct stack *stk,
                   const char *sdir, const struct llm_config *c, const struct llm_step *tmpl,
                   struct hw_system *sys)
{
    struct diag d;
    memset(&d, 0, sizeof d);
    enum hw_kind kind;
    if (hw_load(a->hw, sets, sys, &kind, &d) != 0)
        return cli_fail(&d);
    struct trace probe;
    if (llm_build(c, tmpl, &probe, &d) != 0) {
        sys_free(sys);
        return cli_fail(&d);
    }
    struct whatif_hw wh = {a->hw, sets, stk, sdir};
    int rc = whatif_build(&wh, kind, &probe, sys, &d);
    trace_free(&probe);
    return rc != 0 ? cli_fail(&d) : 0;
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
    struct hw_system sys;
    if (check_lengths(a, &q, &c) != 0 || load_hw(a, sets, sp, sdir, &c, &dec, &sys) != 0) {
        serve_reqs_free(&q);
        return 1;
    }
    const struct hw_config *cfg = &sys.chip;
    struct fit_result f;
    double per_tok;
    sch.kv_blocks = fit_kv_blocks(cfg, &c, &dec, util, sch.max_batched_tokens, sch.block_size, &f, &per_tok);
    rc = 0;
    if (sch.kv_blocks == 0) {
        fprintf(stderr, "strata serve: %s does not fit: %.3g GB of weights a device, %.3g GB of "
                        "activations for a step of %u tokens and %.3g GB of workspace leave no KV cache in "
                        "%.0f%% of %s's %.3g GB (strata fit; more --tp, --gpu-memory-utilization, or a "
                        "larger device)\n", a->model, f.weights / 1e9, f.activations / 1e9,
                sch.max_batched_tokens, f.workspace / 1e9, util * 100, cfg->name, f.capacity / 1e9);
        rc = 1;
    }
    struct serve_steps st;
    serve_steps_init(&st, &c, &pre, &dec, &sys, sch.kv_blocks * sch.block_size);
    struct serve_result res;
    if (rc == 0 && serve_run(&sch, &q, &st, &res, &d) != 0)
        rc = cli_fail(&d);
    if (rc == 0) {
        char dt[16];
        snprintf(dt, sizeof dt, "%s", dtype_name(dec.dtype));
        struct serve_ctx ctx = {sys.implied ? cfg_label(cfg) : sys.name, a->model, sp ? stk.name : "",
                                dec.tp, dt, label, w.seed, &sch, util, per_tok, f.weights, &q, &res, &st};
        rc = write_outputs(a, &ctx);
    }
    serve_steps_free(&st);
    serve_reqs_free(&q);
    sys_free(&sys);
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
