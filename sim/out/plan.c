/* plan.c: `strata plan`'s search (plan.h): the SLA, the candidates' serve
 * runs on threads, and their judgement (SLA, Pareto fronts, rank). */
#include "plan.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "progress.h"
#include "serve_setup.h"
#include "units.h"

static const char *const metric_names[] = {"ttft", "tpot", "e2e"};
static const char *const stat_names[] = {"mean", "p50", "p90", "p99"};

void plan_sla_key(const struct plan_sla_term *t, char *out, size_t n)
{
    snprintf(out, n, "%s_%s", metric_names[t->metric], stat_names[t->stat]);
}

/* Finds name in names[0..k-1]: its index, or -1. */
static int find_name(const char *const *names, int k, const char *name, size_t len)
{
    for (int i = 0; i < k; i++)
        if (strlen(names[i]) == len && strncmp(names[i], name, len) == 0)
            return i;
    return -1;
}

/* One term "KEY=VALUE" of len chars: 0 with *t, or -1 with why. */
static int term_parse(const char *s, size_t len, struct plan_sla_term *t, char *why, size_t n)
{
    const char *eq = memchr(s, '=', len);
    const char *us = memchr(s, '_', eq ? (size_t)(eq - s) : len);
    if (eq == NULL || eq == s) {
        snprintf(why, n, "'%.*s': expected KEY=TIME, e.g. ttft_p90=500ms", (int)(len > 80 ? 80 : len), s);
        return -1;
    }
    int m = us ? find_name(metric_names, 3, s, (size_t)(us - s)) : -1;
    int st = us ? find_name(stat_names, 4, us + 1, (size_t)(eq - us - 1)) : -1;
    if (m < 0 || st < 0) {
        snprintf(why, n, "unknown key '%.*s' (ttft, tpot or e2e, then _mean, _p50, _p90 or _p99: "
                 "ttft_p90, tpot_p50, e2e_p99, ...)", (int)(eq - s > 40 ? 40 : eq - s), s);
        return -1;
    }
    char v[64];
    size_t vl = len - (size_t)(eq + 1 - s);
    snprintf(v, sizeof v, "%.*s", (int)(vl > 60 ? 60 : vl), eq + 1);
    struct qty q;
    if (qty_parse(v, &q) != 0 || q.kind != QK_TIME || !(q.si > 0) || !isfinite(q.si)) {
        snprintf(why, n, "%.*s: expected a time above 0 with its unit (500ms, 0.5s, 800us), got '%s'",
                 (int)(eq - s), s, v);
        return -1;
    }
    t->metric = (enum plan_metric)m;
    t->stat = (enum plan_stat)st;
    t->target_s = q.si;
    return 0;
}

int plan_sla_parse(const char *text, struct plan_sla *sla, char *why, size_t n)
{
    memset(sla, 0, sizeof *sla);
    const char *s = text;
    for (;;) {
        size_t len = strcspn(s, ",");
        if (sla->n == PLAN_SLA_MAX) {
            snprintf(why, n, "at most %d terms", PLAN_SLA_MAX);
            return -1;
        }
        struct plan_sla_term *t = &sla->t[sla->n];
        if (term_parse(s, len, t, why, n) != 0)
            return -1;
        for (unsigned i = 0; i < sla->n; i++)
            if (sla->t[i].metric == t->metric && sla->t[i].stat == t->stat) {
                char k[16];
                plan_sla_key(t, k, sizeof k);
                snprintf(why, n, "%s given twice", k);
                return -1;
            }
        sla->n++;
        if (s[len] == '\0')
            return 0;
        s += len + 1;
    }
}

double plan_sla_value(const struct plan_sla_term *t, const struct serve_summary *s)
{
    const struct serve_lat *l = t->metric == PLAN_TTFT ? &s->ttft : t->metric == PLAN_TPOT ? &s->tpot : &s->e2e;
    switch (t->stat) {
    case PLAN_MEAN: return l->mean;
    case PLAN_P50: return l->p50;
    case PLAN_P90: return l->p90;
    case PLAN_P99: return l->p99;
    }
    return l->p99;
}

/* ---- the runs ---- */

struct job {
    struct plan *p;
    _Atomic unsigned next, done;
    pthread_mutex_t load;       /* the loaders note their inputs (afile.h): one at a time */
};

/* One candidate's serve run, as cmd_serve.c runs it. */
static void run_one(struct job *j, struct plan_cand *c)
{
    const struct plan *p = j->p;
    struct diag d;
    memset(&d, 0, sizeof d);
    struct serve_setup su;
    pthread_mutex_lock(&j->load);
    int rc = serve_setup_init(&su, p->hw[c->hw], p->sets, p->stack, p->stack_dir, p->model, &c->pre, &c->dec,
                              c->util, &c->sched, &d);
    pthread_mutex_unlock(&j->load);
    if (rc != 0) {
        /* serve_setup_init's one error without a file is the budget that leaves no cache */
        c->status = d.file[0] == '\0' && d.code == DIAG_E_RANGE ? PLAN_NOFIT : PLAN_FAILED;
        snprintf(c->why, sizeof c->why, "%.390s", d.msg);
        return;
    }
    struct serve_reqs q = {sim_xcalloc(p->reqs->n, sizeof *q.r), p->reqs->n};
    memcpy(q.r, p->reqs->r, p->reqs->n * sizeof *q.r);
    struct serve_result res;
    if (serve_run(&c->sched, &q, &su.steps, &res, &d) != 0) {
        c->status = PLAN_FAILED;
        if (d.field[0] != '\0')
            snprintf(c->why, sizeof c->why, "%.60s: %.330s", d.field, d.msg);
        else
            snprintf(c->why, sizeof c->why, "%.390s", d.msg);
    } else {
        struct serve_ctx ctx = {p->hw_name[c->hw], p->model_path, p->stack_name, c->tp, "", p->workload, p->seed,
                                &c->sched, c->util, su.kv_per_token, su.fit.weights, &q, &res, &su.steps, NULL, 0, 0, 0};
        serve_summarize(&ctx, &c->sm);
        c->status = PLAN_RAN;
        c->preemptions = res.preemptions;
    }
    serve_reqs_free(&q);
    serve_setup_free(&su);
}

static void *worker(void *arg)
{
    struct job *j = arg;
    for (;;) {
        unsigned i = atomic_fetch_add(&j->next, 1);
        if (i >= j->p->n)
            break;
        run_one(j, &j->p->c[i]);
        atomic_fetch_add(&j->done, 1);
    }
    return NULL;
}

/* The SLA and the figures of merit of a candidate that ran. */
static void judge(const struct plan *p, struct plan_cand *c)
{
    c->violation = -INFINITY;
    if (c->status != PLAN_RAN)
        return;
    c->tok_s_gpu = c->sm.out_tok_per_s / c->tp;
    c->tok_s_user = c->sm.tpot.mean > 0 ? 1 / c->sm.tpot.mean : 0;
    for (unsigned k = 0; k < p->sla.n; k++) {
        double v = plan_sla_value(&p->sla.t[k], &c->sm) / p->sla.t[k].target_s - 1;
        c->violation = fmax(c->violation, v);
    }
    c->meets = !(c->violation > 0);
}

/* Marks each hardware's Pareto front: a candidate that ran and that no
 * other of its hardware beats on both tok_s_gpu and tok_s_user (at least
 * as good on both, better on one).  O(n^2) over a few hundred. */
static void fronts(struct plan *p)
{
    for (unsigned i = 0; i < p->n; i++) {
        struct plan_cand *a = &p->c[i];
        a->on_front = a->status == PLAN_RAN;
        for (unsigned k = 0; k < p->n && a->on_front; k++) {
            const struct plan_cand *b = &p->c[k];
            if (k == i || b->status != PLAN_RAN || b->hw != a->hw)
                continue;
            if (b->tok_s_gpu >= a->tok_s_gpu && b->tok_s_user >= a->tok_s_user &&
                (b->tok_s_gpu > a->tok_s_gpu || b->tok_s_user > a->tok_s_user))
                a->on_front = 0;
        }
    }
}

void plan_run(struct plan *p, unsigned threads, struct prog *prog)
{
    struct job j;
    memset(&j, 0, sizeof j);
    j.p = p;
    pthread_mutex_init(&j.load, NULL);
    unsigned nth = threads < 1 ? 1 : threads > 256 ? 256 : threads;
    pthread_t th[256];
    unsigned started = 0;
    /* with a progress line every run is on a worker and this thread draws it (sweep.c) */
    unsigned nworkers = prog != NULL ? nth : nth - 1;
    prog_show(prog, 0, p->n, "runs", 1);
    for (unsigned i = 0; i < nworkers; i++)
        if (pthread_create(&th[started], NULL, worker, &j) == 0)
            started++;
    while (prog != NULL && started > 0 && atomic_load(&j.done) < p->n) {
        prog_show(prog, atomic_load(&j.done), p->n, "runs", 1);
        struct timespec ts = {0, 200000000};
        nanosleep(&ts, NULL);
    }
    worker(&j);
    for (unsigned i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    prog_clear(prog);
    pthread_mutex_destroy(&j.load);
    for (unsigned i = 0; i < p->n; i++)
        judge(p, &p->c[i]);
    fronts(p);
}

/* ---- the order ---- */

/* A candidate's sort key: its tier (0: met the SLA, 1: ran and missed
 * it, 2: did not run), then a number to sort by, smallest first. */
struct rank_key {
    int tier;
    double v;                   /* tier 0: -tok_s_gpu (or J a token); tier 1: the violation; tier 2: 0 */
    unsigned i;
};

static int rank_cmp(const void *x, const void *y)
{
    const struct rank_key *a = x, *b = y;
    if (a->tier != b->tier)
        return a->tier - b->tier;
    if (a->v != b->v)
        return a->v < b->v ? -1 : 1;
    return a->i < b->i ? -1 : a->i > b->i;
}

unsigned plan_rank(const struct plan *p, int hw, unsigned *idx)
{
    struct rank_key *k = sim_xcalloc(p->n ? p->n : 1, sizeof *k);
    unsigned m = 0;
    for (unsigned i = 0; i < p->n; i++) {
        const struct plan_cand *c = &p->c[i];
        if (hw >= 0 && c->hw != (unsigned)hw)
            continue;
        int t = c->status != PLAN_RAN ? 2 : c->meets ? 0 : 1;
        double best = !p->by_energy ? -c->tok_s_gpu : c->sm.has_energy ? c->sm.j_per_out_token : (double)INFINITY;
        k[m++] = (struct rank_key){t, t == 0 ? best : t == 1 ? c->violation : 0, i};
    }
    qsort(k, m, sizeof *k, rank_cmp);
    for (unsigned i = 0; i < m; i++)
        idx[i] = k[i].i;
    free(k);
    return m;
}
