/* serve_opts.c: the options of a serving run (serve_opts.h), as
 * `strata serve` has always read them; `strata plan` reads its workload
 * and each candidate's scheduler and split through the same calls. */
#include "serve_opts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "diag.h"
#include "numfmt.h"

int serve_opts_err(const struct serve_args *a, const char *opt, const char *what, const char *got)
{
    fprintf(stderr, "strata %s: %s: %s, got '%s'\n", a->verb, opt, what, got);
    return 2;
}

int serve_opts_count(const struct serve_args *a, const char *opt, const char *v, unsigned min, unsigned max,
                     uint32_t *out)
{
    if (v == NULL)
        return 0;
    unsigned x;
    if (cli_count(a->verb, opt, v, max, &x) != 0)
        return 2;
    if (x < min) {
        fprintf(stderr, "strata %s: %s: at least %u, got %u%s\n", a->verb, opt, min, x,
                strcmp(opt, "--block-size") == 0 ? " (a KV block holds at least one token)" : "");
        return 2;
    }
    *out = x;
    return 0;
}

/* One of two words: 0 with *out (0 for no, 1 for yes; left alone when not given), or 2. */
static int choice_opt(const struct serve_args *a, const char *opt, const char *v, const char *no,
                      const char *yes, int *out)
{
    if (v == NULL)
        return 0;
    if (strcmp(v, no) != 0 && strcmp(v, yes) != 0) {
        char what[64];
        snprintf(what, sizeof what, "expected %s or %s", no, yes);
        return serve_opts_err(a, opt, what, v);
    }
    *out = strcmp(v, yes) == 0;
    return 0;
}

int serve_opts_workload(const struct serve_args *a, struct serve_workload *w, char *label, size_t n)
{
    memset(w, 0, sizeof *w);
    int given = (a->rate != NULL) + (a->conc != NULL) + (a->file != NULL);
    if (given != 1) {
        fprintf(stderr, "strata %s: give one of --rate (Poisson arrivals), --concurrency (a closed "
                        "loop) or --requests-file\n", a->verb);
        return 2;
    }
    if (a->rate != NULL) {
        if (num_parse(a->rate, &w->rate) != 0 || !(w->rate > 0) || w->rate > 1e9)
            return serve_opts_err(a, "--rate", "expected requests per second, above 0", a->rate);
        w->arrival = SERVE_POISSON;
        snprintf(label, n, "poisson %g req/s", w->rate);
    } else if (a->conc != NULL) {
        if (serve_opts_count(a, "--concurrency", a->conc, 1, 1u << 20, &w->concurrency) != 0)
            return 2;
        w->arrival = SERVE_CLOSED;
        snprintf(label, n, "closed loop of %u clients", w->concurrency);
    } else {
        w->arrival = SERVE_TRACE;
        snprintf(label, n, "requests file %s", a->file);
    }
    w->n = SERVE_DEF_REQUESTS;
    if (serve_opts_count(a, "--requests", a->nreq, 1, 10000000, &w->n) != 0)
        return 2;
    char why[160];
    if (serve_dist_parse(a->isl ? a->isl : SERVE_DEF_ISL, &w->isl, why, sizeof why) != 0) {
        fprintf(stderr, "strata %s: --isl: %s\n", a->verb, why);
        return 2;
    }
    if (serve_dist_parse(a->osl ? a->osl : SERVE_DEF_OSL, &w->osl, why, sizeof why) != 0) {
        fprintf(stderr, "strata %s: --osl: %s\n", a->verb, why);
        return 2;
    }
    if (a->file != NULL && (a->isl != NULL || a->osl != NULL)) {
        fprintf(stderr, "strata %s: --isl and --osl: the requests file gives each request's lengths\n",
                a->verb);
        return 2;
    }
    w->seed = 1;
    if (a->seed != NULL) {
        char *end;
        unsigned long long s = strtoull(a->seed, &end, 10);
        if (a->seed[0] < '0' || a->seed[0] > '9' || *end != '\0')
            return serve_opts_err(a, "--seed", "expected a whole number", a->seed);
        w->seed = s;
    }
    return 0;
}

int serve_opts_sched(const struct serve_args *a, const struct stack *stk, uint64_t max_pos,
                     struct serve_sched *s, double *util)
{
    int tokens_given;
    serve_sched_defaults(stk, max_pos, s, &tokens_given);
    if (choice_opt(a, "--scheduler", a->sched, "continuous", "static", &s->is_static) != 0 ||
        choice_opt(a, "--chunked-prefill", a->chunked, "off", "on", &s->chunked_prefill) != 0 ||
        choice_opt(a, "--capacity-policy", a->capacity, "max_utilization", "guaranteed_no_evict",
                   &s->no_evict) != 0 ||
        serve_opts_count(a, "--max-num-seqs", a->seqs, 1, 65536, &s->max_num_seqs) != 0 ||
        serve_opts_count(a, "--block-size", a->block, 1, 65535, &s->block_size) != 0 ||
        serve_opts_count(a, "--scheduler-steps", a->msteps, 1, 1024, &s->scheduler_steps) != 0 ||
        choice_opt(a, "--prefix-caching", a->pcache, "off", "on", &s->prefix_caching) != 0)
        return 2;
    if (s->is_static && a->capacity != NULL && !s->no_evict)
        return serve_opts_err(a, "--capacity-policy", "static batching reserves each request's whole output "
                              "at admission (guaranteed_no_evict); max_utilization is for continuous",
                              a->capacity);
    if (!tokens_given)
        s->max_batched_tokens = serve_sched_tokens(s->chunked_prefill, max_pos);
    if (serve_opts_count(a, "--max-batched-tokens", a->tokens, 1, 1u << 24, &s->max_batched_tokens) != 0)
        return 2;
    if (a->spec_draft == NULL && (a->spec_k != NULL || a->spec_accept != NULL))
        return serve_opts_err(a, a->spec_k != NULL ? "--spec-k" : "--spec-accept",
                              "only with --spec-draft MODEL.json (the draft model)",
                              a->spec_k != NULL ? a->spec_k : a->spec_accept);
    if (a->spec_draft != NULL) {
        if (a->spec_k == NULL)
            return serve_opts_err(a, "--spec-k", "with --spec-draft, the draft tokens a step (vLLM's "
                                  "num_speculative_tokens, 1 to 16)", "");
        if (serve_opts_count(a, "--spec-k", a->spec_k, 1, 16, &s->spec_k) != 0)
            return 2;
        if (a->spec_accept == NULL || num_parse(a->spec_accept, &s->spec_accept) != 0 ||
            !(s->spec_accept > 0 && s->spec_accept <= 1))
            return serve_opts_err(a, "--spec-accept", "with --spec-draft, the chance a draft token is "
                                  "accepted, above 0 and at most 1 (vLLM's draft acceptance rate)",
                                  a->spec_accept ? a->spec_accept : "");
        if (s->is_static)
            return serve_opts_err(a, "--spec-draft", "not with --scheduler static (speculative decoding "
                                  "runs in continuous batching)", a->spec_draft);
        if (a->msteps != NULL && s->scheduler_steps > 1)
            return serve_opts_err(a, "--scheduler-steps", "not above 1 with --spec-draft (strata runs "
                                  "speculative steps one at a time)", a->msteps);
        s->scheduler_steps = 1;     /* a stack's multi-step window, likewise */
    }
    *util = SERVE_DEF_UTIL;
    if (a->util != NULL && (num_parse(a->util, util) != 0 || !(*util > 0 && *util <= 1)))
        return serve_opts_err(a, "--gpu-memory-utilization", "expected the share of the device's memory the "
                              "engine may use, above 0 and at most 1", a->util);
    return 0;
}

int serve_opts_step(const struct serve_args *a, const struct stack *stk, struct llm_step *pre,
                    struct llm_step *dec)
{
    enum dtype dt = DT_BF16;
    uint32_t tp = 1;
    if (a->dtype != NULL && dtype_from_name(a->dtype, &dt) != 0)
        return serve_opts_err(a, "--dtype", "unknown dtype (fp32, fp16, bf16, fp8_e4m3, ...)", a->dtype);
    if (serve_opts_count(a, "--tp", a->tp, 1, 65536, &tp) != 0)
        return 2;
    serve_step_templates(stk, dt, tp, pre, dec);
    if (a->weights != NULL) {
        /* as gen llm --weights: both phases' linear layers, and fit's weights */
        if (llm_weights_from_name(a->weights, dec) != 0) {
            char why[512];
            llm_weights_why(a->weights, why, sizeof why);
            return serve_opts_err(a, "--weights", why, a->weights);
        }
        pre->weights = dec->weights;
        pre->q4_k_m = dec->q4_k_m;
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
                fprintf(stderr, "strata %s: --isl/--osl: request %u has %u in + %u out, beyond the "
                                "model's max_position_embeddings (%llu)\n", a->verb, i, q->r[i].input,
                        q->r[i].output, (unsigned long long)c->max_pos);
            return 1;
        }
    }
    return 0;
}

int serve_opts_reqs(const struct serve_args *a, const struct serve_workload *w, const struct llm_config *c,
                    struct serve_sched *sch, struct serve_reqs *q)
{
    if (a->file != NULL) {
        struct diag d;
        memset(&d, 0, sizeof d);
        if (serve_reqs_load(a->file, q, &d) != 0)
            return cli_fail(&d);
        if (a->nreq != NULL && w->n < q->n)
            q->n = w->n;        /* the first N */
    } else
        serve_reqs_make(w, q);
    sch->concurrency = w->arrival == SERVE_CLOSED ? w->concurrency : 0;
    if (a->prefix != NULL) {
        /* G groups of a P-token prefix, request i in group i mod G, before its own tokens */
        unsigned g, p;
        char tail;
        if (sscanf(a->prefix, "%u:%u%c", &g, &p, &tail) != 2 || g < 1 || g > 1000000 || p < 1 ||
            p > 1000000) {
            serve_reqs_free(q);
            serve_opts_err(a, "--shared-prefix", "expected G:P, G groups (1 to 1000000) of a P-token "
                           "prefix (1 to 1000000) before each request's own tokens", a->prefix);
            return 2;
        }
        sch->prefix_groups = g;
        sch->prefix_tokens = p;
        for (uint32_t i = 0; i < q->n; i++) {
            q->r[i].group = 1 + i % g;
            q->r[i].input += p;
        }
    }
    if (sch->prefix_caching && sch->prefix_groups == 0) {
        serve_reqs_free(q);
        serve_opts_err(a, "--prefix-caching", "on needs --shared-prefix G:P (the requests' shared "
                       "prefixes)", a->pcache);
        return 2;
    }
    if (check_lengths(a, q, c) != 0) {
        serve_reqs_free(q);
        return 1;
    }
    return 0;
}
