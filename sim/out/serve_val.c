/* serve_val.c: serving rows against `strata serve` (serve_val.h).
 *
 * A row's spec, "serve key=value ...":
 *   model=PATH        a Hugging Face config.json, relative to the data root
 *   dtype=NAME        weights, activations and KV cache
 *   weights=FMT       the linear layers' storage instead (as serve --weights:
 *                     sim/base/wfmt.h's formats, q4_k_m)
 *   tp=N              tensor-parallel ranks of one engine instance (1)
 *   stack=NAME        the engine's stack (configs/stacks/NAME.yaml): kernels,
 *                     attention, host loop and its serving: block
 *   isl=, osl=        lengths as `serve --isl/--osl` takes them
 *   rate=R | rate=inf | concurrency=C
 *                     Poisson arrivals at R req/s over all instances; inf:
 *                     every request at t = 0 (QPS inf, trtllm-bench, MLPerf
 *                     Offline); or a closed loop of C clients
 *   requests=N        requests over all instances
 *   instances=N       data-parallel engine instances (1): each is simulated
 *                     once with 1/N of the requests and of the rate, and the
 *                     throughput is N times one instance's (the instances
 *                     share nothing; a load balancer's spread is ignored)
 *   shared_prefix=G:P, prefix_caching=0|1
 *                     as serve --shared-prefix / --prefix-caching
 *   max_num_seqs=, max_batched_tokens=, chunked_prefill=0|1, gpu_mem_util=F,
 *   scheduler_steps=N the run's engine arguments, over the stack's
 *   seed=S            the requests' generator (1)
 * The measured columns and what they are compared with (serve_report.h):
 * output_tok_per_s (else req_per_s) with the run's throughput,
 * ttft_p50_ms / tpot_p50_ms / e2e_p50_ms with its medians, ttft_mean_ms / itl_mean_ms
 * with its means (TPOT's mean: ITL and TPOT are the same mean over a
 * request's gaps when each request is weighted by its output). */
#include "serve_val.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "csv.h"
#include "llm.h"
#include "numfmt.h"
#include "serve_report.h"
#include "serve_setup.h"
#include "stack.h"
#include "textline.h"
#include "workload.h"

#define SV_MAX_COLS 40
#define SV_MAX_LINE 8192

/* The measured columns a run predicts: the column, the metric it is
 * reported as, its unit and the short name its group takes. */
enum sv_metric { SV_OUT_TOK, SV_REQ, SV_TTFT50, SV_TPOT50, SV_E2E50, SV_TTFT_MEAN, SV_ITL_MEAN, SV_NMETRIC };
static const struct {
    const char *col, *metric, *unit, *tag;
} sv_metrics[SV_NMETRIC] = {
    {"output_tok_per_s", "output_throughput", "tokens/s", "tput"},
    {"req_per_s", "request_throughput", "req/s", "tput"},
    {"ttft_p50_ms", "ttft_p50", "ms", "ttft"},
    {"tpot_p50_ms", "tpot_p50", "ms", "tpot"},
    {"e2e_p50_ms", "e2e_p50", "ms", "e2e"},
    {"ttft_mean_ms", "ttft_mean", "ms", "ttft-mean"},
    {"itl_mean_ms", "itl_mean", "ms", "itl-mean"},
};

/* The CSV being read: its columns by name (-1: absent). */
struct sv_csv {
    const struct validate_opts *vo;
    int nh;
    int c_id, c_cfg, c_spec, c_group, c_skip;
    int c_metric[SV_NMETRIC];
};

static int sv_col(char **hdr, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(hdr[i], name) == 0)
            return i;
    return -1;
}

static void sv_columns(struct sv_csv *v, char **hdr, int nh)
{
    v->nh = nh;
    v->c_id = sv_col(hdr, nh, "id");
    v->c_cfg = sv_col(hdr, nh, "config");
    v->c_spec = sv_col(hdr, nh, "spec");
    v->c_group = sv_col(hdr, nh, "group");
    v->c_skip = sv_col(hdr, nh, "skip");
    for (int m = 0; m < SV_NMETRIC; m++)
        v->c_metric[m] = sv_col(hdr, nh, sv_metrics[m].col);
}

int serve_val_is(const char *path)
{
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return 0;
    char *line = sim_xcalloc(SV_MAX_LINE, 1);
    size_t len;
    int is = 0;
    if (textline_read(f, line, SV_MAX_LINE, &len) == TEXTLINE_OK) {
        char *hdr[SV_MAX_COLS];
        int nh = csv_split(line, hdr, SV_MAX_COLS);
        is = nh > 0 && sv_col(hdr, nh, "req_per_s") >= 0 && sv_col(hdr, nh, "spec") >= 0;
    }
    free(line);
    fclose(f);
    return is;
}

/* What a row's spec asks for. */
struct sv_run {
    char model[1024];
    struct stack stk;
    int has_stack;
    enum dtype dtype;
    struct llm_step wq;         /* weights= (its weights and q4_k_m; WF_NONE: dtype) */
    uint64_t tp, instances, requests, seed;
    struct serve_workload w;    /* one instance's */
    int all_at_once;            /* rate=inf */
    uint64_t seqs, tokens, chunked; /* 0 (chunked: 2): the stack's */
    uint64_t sched_steps;       /* scheduler_steps= (0: the stack's) */
    double util;
    uint32_t prefix_groups, prefix_tokens; /* shared_prefix=G:P (0: none) */
    uint64_t prefix_caching;    /* prefix_caching=0|1 */
};

/* The spec into *r.  0, or -1 with *d. */
static int sv_spec(const struct sv_csv *v, const char *spec, int lineno, struct sv_run *r, struct diag *d)
{
    const struct validate_opts *vo = v->vo;
    struct wl_spec s;
    char kind[32];
    memset(r, 0, sizeof *r);
    if (wl_spec_parse(&s, spec, kind, sizeof kind, vo->data, lineno, d) != 0)
        return -1;
    if (strcmp(kind, "serve") != 0)
        return diag_set(d, DIAG_E_UNSUPPORTED, vo->data, lineno, "spec",
                        "a serving CSV's spec is 'serve key=value ...', got '%s'", kind);
    const char *model = wl_spec_get(&s, "model"), *stk = wl_spec_get(&s, "stack");
    const char *isl = wl_spec_get(&s, "isl"), *osl = wl_spec_get(&s, "osl");
    const char *rate = wl_spec_get(&s, "rate"), *conc = wl_spec_get(&s, "concurrency");
    if (model == NULL || isl == NULL || osl == NULL || (rate == NULL) == (conc == NULL))
        return diag_set(d, DIAG_E_MISSING, vo->data, lineno, "spec",
                        "needs model=, isl=, osl= and one of rate= or concurrency=");
    snprintf(r->model, sizeof r->model, "%s/%s", vo->root, model);
    if (wl_spec_dtype(&s, &r->dtype) != 0 || wl_spec_u64(&s, "tp", 0, 1, 1, &r->tp) != 0 ||
        wl_spec_u64(&s, "instances", 0, 1, 1, &r->instances) != 0 ||
        wl_spec_u64(&s, "requests", 1, 0, 1, &r->requests) != 0 ||
        wl_spec_u64(&s, "seed", 0, 1, 0, &r->seed) != 0 ||
        wl_spec_u64(&s, "max_num_seqs", 0, 0, 1, &r->seqs) != 0 ||
        wl_spec_u64(&s, "max_batched_tokens", 0, 0, 1, &r->tokens) != 0 ||
        wl_spec_u64(&s, "chunked_prefill", 0, 2, 0, &r->chunked) != 0 ||
        wl_spec_u64(&s, "scheduler_steps", 0, 0, 1, &r->sched_steps) != 0 ||
        wl_spec_num(&s, "gpu_mem_util", 0.9, &r->util) != 0 ||
        wl_spec_u64(&s, "prefix_caching", 0, 0, 0, &r->prefix_caching) != 0)
        return -1;
    const char *wf = wl_spec_get(&s, "weights");
    if (wf != NULL && llm_weights_from_name(wf, &r->wq) != 0) {
        char why[512];
        llm_weights_why(wf, why, sizeof why);
        return diag_set(d, DIAG_E_RANGE, vo->data, lineno, "spec", "weights: '%s': %.400s", wf, why);
    }
    const char *sp = wl_spec_get(&s, "shared_prefix");
    if (sp != NULL) {
        unsigned g, p;
        char tail;
        if (sscanf(sp, "%u:%u%c", &g, &p, &tail) != 2 || g < 1 || g > 1000000 || p < 1 || p > 1000000)
            return diag_set(d, DIAG_E_RANGE, vo->data, lineno, "spec",
                            "shared_prefix: expected G:P, G groups of a P-token prefix, got '%s'", sp);
        r->prefix_groups = g;
        r->prefix_tokens = p;
    }
    if (r->prefix_caching > 1 || (r->prefix_caching && sp == NULL))
        return diag_set(d, DIAG_E_RANGE, vo->data, lineno, "spec",
                        "prefix_caching is 0 or 1, and 1 needs shared_prefix=G:P");
    if (!(r->util > 0 && r->util <= 1) || r->chunked > 2)
        return diag_set(d, DIAG_E_RANGE, vo->data, lineno, "spec",
                        "gpu_mem_util is a share above 0 and at most 1; chunked_prefill 0 or 1");
    if (r->sched_steps > 1024)      /* serve --scheduler-steps' and a stack's bound */
        return diag_set(d, DIAG_E_RANGE, vo->data, lineno, "spec",
                        "scheduler_steps: at most 1024 decode steps a scheduler call, got %llu",
                        (unsigned long long)r->sched_steps);
    struct serve_workload *w = &r->w;
    char why[160];
    if (serve_dist_parse(isl, &w->isl, why, sizeof why) != 0 ||
        serve_dist_parse(osl, &w->osl, why, sizeof why) != 0)
        return diag_set(d, DIAG_E_RANGE, vo->data, lineno, "spec", "isl/osl: %s", why);
    w->n = (uint32_t)((r->requests + r->instances - 1) / r->instances);
    w->seed = r->seed;
    if (conc != NULL) {
        uint64_t c;
        if (wl_spec_u64(&s, "concurrency", 1, 0, 1, &c) != 0)
            return -1;
        w->arrival = SERVE_CLOSED;
        w->concurrency = (uint32_t)((c + r->instances - 1) / r->instances);
    } else if (strcmp(rate, "inf") == 0) {
        w->arrival = SERVE_POISSON;
        w->rate = 1;            /* the times are set to 0 after */
        r->all_at_once = 1;
    } else {
        if (num_parse(rate, &w->rate) != 0 || !(w->rate > 0))
            return diag_set(d, DIAG_E_RANGE, vo->data, lineno, "spec",
                            "rate: expected requests/s above 0 or inf, got '%s'", rate);
        w->arrival = SERVE_POISSON;
        w->rate /= (double)r->instances;
    }
    if (stk != NULL) {
        char sdir[1100];
        snprintf(sdir, sizeof sdir, "%s/stacks", vo->configs);
        if (stack_find(sdir, stk, &r->stk, d) != 0) {
            char msg[sizeof d->msg];
            snprintf(msg, sizeof msg, "%s", d->msg);
            return diag_set(d, d->code, vo->data, lineno, "spec", "stack: %s", msg);
        }
        r->has_stack = 1;
    }
    return wl_spec_done(&s);
}

/* Runs r on config cfg: the summary of one instance.  0, or -1 with *d. */
static int sv_serve(const struct sv_csv *v, const char *cfg, int lineno, struct sv_run *r,
                    struct serve_summary *sm, struct diag *d)
{
    const struct validate_opts *vo = v->vo;
    struct llm_config c;
    if (llm_config_load(r->model, &c, d) != 0 || llm_config_decoder(&c, "a serving row", 1, d) != 0)
        return -1;
    const struct stack *sp = r->has_stack ? &r->stk : NULL;
    struct serve_sched sch;
    int tokens_given;
    serve_sched_defaults(sp, c.max_pos, &sch, &tokens_given);
    if (r->chunked < 2)
        sch.chunked_prefill = (int)r->chunked;
    sch.max_batched_tokens = r->tokens > 0 ? (uint32_t)r->tokens
                             : tokens_given ? sch.max_batched_tokens
                                            : serve_sched_tokens(sch.chunked_prefill, c.max_pos);
    if (r->seqs > 0)
        sch.max_num_seqs = (uint32_t)r->seqs;
    if (r->sched_steps > 0)
        sch.scheduler_steps = (uint32_t)r->sched_steps;
    sch.concurrency = r->w.arrival == SERVE_CLOSED ? r->w.concurrency : 0;
    struct llm_step pre, dec;
    serve_step_templates(sp, r->dtype, (uint32_t)r->tp, &pre, &dec);
    pre.weights = dec.weights = r->wq.weights;
    pre.q4_k_m = dec.q4_k_m = r->wq.q4_k_m;
    struct serve_reqs q;
    serve_reqs_make(&r->w, &q);
    sch.prefix_groups = r->prefix_groups;
    sch.prefix_tokens = r->prefix_tokens;
    sch.prefix_caching = (int)r->prefix_caching;
    for (uint32_t i = 0; i < q.n; i++) {
        if (r->all_at_once)
            q.r[i].arrival_ps = 0;
        if (r->prefix_groups > 0) {     /* as serve --shared-prefix */
            q.r[i].group = 1 + i % r->prefix_groups;
            q.r[i].input += r->prefix_tokens;
        }
        if (c.max_pos > 0 && (uint64_t)q.r[i].input + q.r[i].output > c.max_pos) {
            serve_reqs_free(&q);
            return diag_set(d, DIAG_E_RANGE, vo->data, lineno, "spec",
                            "a request of %u in + %u out exceeds the model's max_position_embeddings (%llu)",
                            q.r[i].input, q.r[i].output, (unsigned long long)c.max_pos);
        }
    }
    char hw[1100], sdir[1100];
    snprintf(hw, sizeof hw, "%s/%s.yaml", vo->configs, cfg);
    snprintf(sdir, sizeof sdir, "%s/stacks", vo->configs);
    struct serve_setup su;
    if (serve_setup_init(&su, hw, vo->sets, sp, sdir, &c, &pre, &dec, r->util, &sch, d) != 0) {
        char msg[sizeof d->msg + sizeof d->file + 2];
        snprintf(msg, sizeof msg, "%s%s%s", d->file, d->file[0] ? ": " : "", d->msg);
        serve_reqs_free(&q);
        return diag_set(d, d->code, vo->data, lineno, "config", "%s", msg);
    }
    struct serve_result res;
    int rc = serve_run(&sch, &q, &su.steps, &res, d);
    if (rc == 0) {
        struct serve_ctx ctx;
        memset(&ctx, 0, sizeof ctx);
        ctx.sched = &sch;
        ctx.q = &q;
        ctx.res = &res;
        ctx.steps = &su.steps;
        serve_summarize(&ctx, sm);
    }
    serve_setup_free(&su);
    serve_reqs_free(&q);
    return rc;
}

/* The run's figure for metric m (the throughputs over all instances). */
static double sv_predicted(enum sv_metric m, const struct serve_summary *sm, double instances)
{
    switch (m) {
    case SV_OUT_TOK:
        return sm->out_tok_per_s * instances;
    case SV_REQ:
        return sm->req_per_s * instances;
    case SV_TTFT50:
        return sm->ttft.p50 * 1e3;
    case SV_TPOT50:
        return sm->tpot.p50 * 1e3;
    case SV_E2E50:
        return sm->e2e.p50 * 1e3;
    case SV_TTFT_MEAN:
        return sm->ttft.mean * 1e3;
    case SV_ITL_MEAN:
    case SV_NMETRIC:
        break;
    }
    return sm->tpot.mean * 1e3;
}

static void sv_push(struct validate_result *res, size_t *cap, const struct val_row *row)
{
    if (res->nrows == *cap) {
        *cap *= 2;
        res->rows = sim_xrealloc(res->rows, *cap * sizeof *res->rows);
    }
    res->rows[res->nrows++] = *row;
}

/* One data line: its compared rows appended (or the line skipped).  0, or -1 with *d. */
static int sv_line(struct sv_csv *v, char *line, size_t len, int lineno, size_t *cap,
                   struct validate_result *res, FILE *skips, struct diag *d)
{
    const struct validate_opts *vo = v->vo;
    char *col[SV_MAX_COLS];
    if (strspn(line, " \t\r\n") == len)
        return 0;
    int n = csv_split(line, col, SV_MAX_COLS);
    if (n < 0)
        return diag_set(d, DIAG_E_PARSE, vo->data, lineno, "", "malformed CSV (quotes or too many columns)");
    if (n != v->nh)
        return diag_set(d, DIAG_E_PARSE, vo->data, lineno, "", "%d columns, the header has %d", n, v->nh);
    const char *id = col[v->c_id];
    if (!validate_id_match(vo->ids, id))
        return 0;
    const char *cfg = v->c_cfg >= 0 ? col[v->c_cfg] : "", *spec = v->c_spec >= 0 ? col[v->c_spec] : "";
    const char *why = v->c_skip >= 0 ? col[v->c_skip] : "";
    if (why[0] != '\0' || cfg[0] == '\0' || spec[0] == '\0') {
        res->skipped++;
        if (skips != NULL)
            fprintf(skips, "skipped %s: %s\n", id, why[0] ? why : "no config/spec");
        return 0;
    }
    struct sv_run *r = sim_xcalloc(1, sizeof *r);
    struct serve_summary sm;
    int rc = sv_spec(v, spec, lineno, r, d);
    if (rc == 0)
        rc = sv_serve(v, cfg, lineno, r, &sm, d);
    for (int m = 0; rc == 0 && m < SV_NMETRIC; m++) {
        int c = v->c_metric[m];
        if (c < 0 || col[c][0] == '\0' || (m == SV_REQ && v->c_metric[SV_OUT_TOK] >= 0 &&
                                           col[v->c_metric[SV_OUT_TOK]][0] != '\0'))
            continue;
        struct val_row row;
        memset(&row, 0, sizeof row);
        if (num_parse(col[c], &row.measured) != 0 || !(row.measured > 0)) {
            rc = diag_set(d, DIAG_E_RANGE, vo->data, lineno, sv_metrics[m].col,
                          "expected a positive number, got '%s'", col[c]);
            break;
        }
        snprintf(row.id, sizeof row.id, "%s", id);
        snprintf(row.group, sizeof row.group, "%.28s/%s", v->c_group >= 0 && col[v->c_group][0] ? col[v->c_group]
                                                                                              : "serve",
                 sv_metrics[m].tag);
        snprintf(row.metric, sizeof row.metric, "%s", sv_metrics[m].metric);
        snprintf(row.unit, sizeof row.unit, "%s", sv_metrics[m].unit);
        snprintf(row.config, sizeof row.config, "%s", cfg);
        snprintf(row.spec, sizeof row.spec, "%s", spec);
        row.predicted = sv_predicted((enum sv_metric)m, &sm, (double)r->instances);
        row.err = row.predicted / row.measured - 1.0;
        sv_push(res, cap, &row);
    }
    free(r);
    return rc;
}

int serve_val_run(const struct validate_opts *vo, struct validate_result *res, FILE *skips, struct diag *d)
{
    memset(res, 0, sizeof *res);
    FILE *f = fopen(vo->data, "r");
    if (f == NULL)
        return diag_set(d, DIAG_E_IO, vo->data, 0, "", "cannot read: %s", strerror(errno));
    char *line = sim_xcalloc(SV_MAX_LINE, 1), *hline = sim_xcalloc(SV_MAX_LINE, 1);
    struct sv_csv v;
    memset(&v, 0, sizeof v);
    v.vo = vo;
    size_t len, cap = 64;
    int rc = 0, lineno = 1;
    char *hdr[SV_MAX_COLS];
    if (textline_read(f, hline, SV_MAX_LINE, &len) != TEXTLINE_OK)
        rc = diag_set(d, DIAG_E_PARSE, vo->data, 1, "", "no header line");
    else {
        sv_columns(&v, hdr, csv_split(hline, hdr, SV_MAX_COLS));
        if (v.nh < 0 || v.c_id < 0)
            rc = diag_set(d, DIAG_E_MISSING, vo->data, 1, "header", "needs the column id");
    }
    res->rows = sim_xcalloc(cap, sizeof *res->rows);
    enum textline tl;
    while (rc == 0 && (tl = textline_read(f, line, SV_MAX_LINE, &len)) != TEXTLINE_EOF) {
        lineno++;
        if (tl != TEXTLINE_OK)
            rc = diag_set(d, DIAG_E_PARSE, vo->data, lineno, "", "%s", textline_what(tl));
        else
            rc = sv_line(&v, line, len, lineno, &cap, res, skips, d);
    }
    fclose(f);
    free(line);
    free(hline);
    if (rc != 0)
        validate_free(res);
    return rc;
}
