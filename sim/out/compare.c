/* compare.c: measured against predicted kernel times (`strata compare`;
 * sim/cli/cmd_compare.c loads and runs the trace).
 *
 * compare runs the trace and, op class by op class, sets strata's kernel
 * time (the op's time minus its launch overhead: a profiler's kernel
 * durations do not include the launch) against the measured_s the trace
 * carries.  Ops with a fixed_s were not simulated (no shapes) and are
 * listed as their own class.
 */
#include "compare.h"

#include <cjson/cJSON.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "jsonout.h"

/* A measured time below a nanosecond (no profiler resolves one) has no
 * relative error to speak of: such ops count as not measured. */
#define COMPARE_MIN_MEASURED_S 1e-9

struct cls {
    char name[24];
    uint32_t n;                 /* ops with a measured time */
    double meas, pred;          /* totals, s */
    double *err;                /* per op |pred/meas - 1| */
    double median;
};

/* One op in the by-kernel table. */
struct kop {
    const char *kernel;
    enum op_kind kind;
    uint32_t i;                 /* op index: the order within a family */
    double meas, pred;
};

/* One family: the ops whose longest kernel has that family name. */
struct kfam {
    const char *kernel;
    enum op_kind kind;
    uint32_t n;
    double meas, pred, ratio, err;  /* totals; medians of pred/meas and |pred/meas - 1| */
};

static int kop_cmp(const void *a, const void *b)
{
    const struct kop *x = a, *y = b;
    if (x->kind != y->kind)
        return x->kind < y->kind ? -1 : 1;
    int c = strcmp(x->kernel, y->kernel);
    if (c != 0)
        return c;
    return x->i < y->i ? -1 : (x->i > y->i);
}

static int kfam_cmp(const void *a, const void *b)
{
    const struct kfam *x = a, *y = b;
    if (x->meas != y->meas)
        return x->meas > y->meas ? -1 : 1;
    if (x->kind != y->kind)
        return x->kind < y->kind ? -1 : 1;
    return strcmp(x->kernel, y->kernel);
}

/* Group the simulated, measured ops that name a kernel by (class, family);
 * returns the families, the most measured time first. */
static struct kfam *kernel_families(const struct trace *t, const double *pred, uint32_t *nfam)
{
    struct kop *ko = sim_xcalloc(t->nops + 1, sizeof *ko);
    uint32_t n = 0;
    for (uint32_t i = 0; i < t->nops; i++) {
        const struct op *op = &t->ops[i];
        if (op->measured_s >= COMPARE_MIN_MEASURED_S && op->fixed_s < 0 && op_kernel(t, op)[0] != '\0')
            ko[n++] = (struct kop){op_kernel(t, op), op->kind, i, op->measured_s, pred[i]};
    }
    if (n > 1)
        qsort(ko, n, sizeof *ko, kop_cmp);
    struct kfam *f = sim_xcalloc(n + 1, sizeof *f);
    double *ratio = sim_xcalloc(n + 1, sizeof *ratio), *err = sim_xcalloc(n + 1, sizeof *err);
    uint32_t nf = 0;
    for (uint32_t a = 0; a < n;) {
        uint32_t b = a;
        struct kfam *g = &f[nf++];
        g->kernel = ko[a].kernel;
        g->kind = ko[a].kind;
        for (; b < n && ko[b].kind == g->kind && strcmp(ko[b].kernel, g->kernel) == 0; b++) {
            g->meas += ko[b].meas;
            g->pred += ko[b].pred;
            ratio[b - a] = ko[b].pred / ko[b].meas;
            err[b - a] = fabs(ratio[b - a] - 1.0);
        }
        g->n = b - a;
        gsl_sort(ratio, 1, g->n);
        gsl_sort(err, 1, g->n);
        g->ratio = gsl_stats_median_from_sorted_data(ratio, 1, g->n);
        g->err = gsl_stats_median_from_sorted_data(err, 1, g->n);
        a = b;
    }
    if (nf > 1)
        qsort(f, nf, sizeof *f, kfam_cmp);
    free(ratio);
    free(err);
    free(ko);
    *nfam = nf;
    return f;
}

/* Each op's predicted kernel time into pred, and the measured ops summed
 * by class into cl (the ops with a fixed_s in the last).  How many ops
 * carry a measured time. */
static uint32_t tally(const struct trace *t, const struct run_result *r, struct cls *cl, double *pred)
{
    uint32_t nmeas = 0;
    for (uint32_t i = 0; i < t->nops; i++) {
        const struct op *op = &t->ops[i];
        const struct op_result *x = run_op_body(r, i);
        pred[i] = (double)(x->end_ps - x->start_ps - x->time_ps[CAT_LAUNCH]) * 1e-12;
        if (!(op->measured_s >= COMPARE_MIN_MEASURED_S))
            continue;
        nmeas++;
        struct cls *c = &cl[op->fixed_s >= 0 ? OP_KIND_COUNT : op->kind];
        c->meas += op->measured_s;
        c->pred += pred[i];
        c->err[c->n++] = fabs(pred[i] / op->measured_s - 1.0);
    }
    return nmeas;
}

/* The class table; fills each class's median error. */
static void print_classes(FILE *txt, struct cls *cl)
{
    fprintf(txt, "%-18s %5s %14s %14s %9s %14s\n", "class", "ops", "measured", "predicted", "total err",
           "median |err|");
    for (unsigned k = 0; k <= OP_KIND_COUNT; k++) {
        struct cls *c = &cl[k];
        if (c->n == 0)
            continue;
        gsl_sort(c->err, 1, c->n);
        c->median = gsl_stats_median_from_sorted_data(c->err, 1, c->n);
        fprintf(txt, "%-18s %5u %11.3f ms %11.3f ms %+8.1f%% %13.1f%%\n", c->name, c->n, c->meas * 1e3,
               c->pred * 1e3, c->meas > 0 ? 100 * (c->pred / c->meas - 1) : 0, 100 * c->median);
    }
}

/* by kernel family, where the trace names the kernels */
static void print_families(FILE *txt, const struct kfam *fam, uint32_t nfam, unsigned ntop)
{
    /* columns as wide as the names they show (kernel names are long) */
    int wk = 13;
    for (uint32_t a = 0; a < nfam && a < ntop; a++)
        wk = (int)strlen(fam[a].kernel) > wk ? (int)strlen(fam[a].kernel) : wk;
    if (nfam > 0) {
        fprintf(txt, "\nby kernel family (each op's longest kernel; the most measured time first):\n");
        fprintf(txt, "%-12s %-*s %5s %12s %12s %10s %13s\n", "class", wk, "kernel family", "ops",
                "measured", "predicted", "pred/meas", "median |err|");
    }
    for (uint32_t a = 0; a < nfam && a < ntop; a++) {
        const struct kfam *g = &fam[a];
        fprintf(txt, "%-12s %-*s %5u %9.3f ms %9.3f ms %10.2f %12.1f%%\n", op_kind_name(g->kind),
                wk, g->kernel, g->n, g->meas * 1e3, g->pred * 1e3, g->ratio, 100 * g->err);
    }
    if (nfam > ntop)
        fprintf(txt, "  ... %u more families (--top N, --json)\n", nfam - ntop);
}

/* the ops with the largest time error */
static void print_largest(FILE *txt, const struct trace *t, const double *pred, unsigned ntop)
{
    uint32_t *idx = sim_xcalloc(t->nops + 1, sizeof *idx);
    uint32_t m = 0;
    for (uint32_t i = 0; i < t->nops; i++)
        if (t->ops[i].measured_s >= COMPARE_MIN_MEASURED_S && t->ops[i].fixed_s < 0)
            idx[m++] = i;
    for (uint32_t a = 0; a < m && a < ntop; a++) { /* partial selection, deterministic */
        uint32_t best = a;
        for (uint32_t b = a + 1; b < m; b++) {
            double eb = fabs(pred[idx[b]] - t->ops[idx[b]].measured_s);
            double ea = fabs(pred[idx[best]] - t->ops[idx[best]].measured_s);
            if (eb > ea)
                best = b;
        }
        uint32_t tmp = idx[a];
        idx[a] = idx[best];
        idx[best] = tmp;
    }
    if (m > 0)
        fprintf(txt, "\nlargest errors (kernel time):\n");
    int wid = 2, wn = 4, ws = 5;
    for (int pass = 0; pass < 2; pass++)
        for (uint32_t a = 0; a < m && a < ntop; a++) {
            const struct op *op = &t->ops[idx[a]];
            char shape[96] = "";
            if (op->kind == OP_GEMM)
                snprintf(shape, sizeof shape, "%llux%llux%llu b%llu %s",
                         (unsigned long long)op->u.gemm.m, (unsigned long long)op->u.gemm.n,
                         (unsigned long long)op->u.gemm.k, (unsigned long long)op->u.gemm.batch,
                         dtype_name(op->dtype));
            if (pass == 0) {
                wid = (int)strlen(op_id(t, op)) > wid ? (int)strlen(op_id(t, op)) : wid;
                wn = (int)strlen(op_name(t, op)) > wn ? (int)strlen(op_name(t, op)) : wn;
                ws = (int)strlen(shape) > ws ? (int)strlen(shape) : ws;
                continue;
            }
            fprintf(txt, "  %-*s %-*s %-*s measured %9.3f us  predicted %9.3f us  %+7.1f%%\n", wid,
                    op_id(t, op), wn, op_name(t, op), ws, shape, op->measured_s * 1e6, pred[idx[a]] * 1e6,
                    100 * (pred[idx[a]] / op->measured_s - 1));
        }
    free(idx);
}

/* The classes and families as JSON ("strata_compare": 1) to js. */
static int write_json(const struct hw_config *cfg, const struct trace *t, const struct cls *cl,
                      const struct kfam *fam, uint32_t nfam, const char *js, struct diag *d)
{
    int rc = 0;
    cJSON *root = cJSON_CreateObject();
    cJSON_AddNumberToObject(root, "strata_compare", 1);
    cJSON_AddStringToObject(root, "trace", t->path);
    cJSON_AddStringToObject(root, "hardware", cfg_label(cfg));
    cJSON *cs = cJSON_AddObjectToObject(root, "classes");
    for (unsigned k = 0; k <= OP_KIND_COUNT; k++) {
        if (cl[k].n == 0)
            continue;
        cJSON *c = cJSON_AddObjectToObject(cs, k < OP_KIND_COUNT ? cl[k].name : "fixed");
        cJSON_AddNumberToObject(c, "ops", cl[k].n);
        cJSON_AddNumberToObject(c, "measured_s", cl[k].meas);
        cJSON_AddNumberToObject(c, "predicted_s", cl[k].pred);
        cJSON_AddNumberToObject(c, "median_abs_error", cl[k].median);
    }
    cJSON *ks = cJSON_AddArrayToObject(root, "kernel_families");
    for (uint32_t a = 0; a < nfam; a++) {
        cJSON *k = cJSON_CreateObject();
        cJSON_AddStringToObject(k, "class", op_kind_name(fam[a].kind));
        cJSON_AddStringToObject(k, "kernel", fam[a].kernel);
        cJSON_AddNumberToObject(k, "ops", fam[a].n);
        cJSON_AddNumberToObject(k, "measured_s", fam[a].meas);
        cJSON_AddNumberToObject(k, "predicted_s", fam[a].pred);
        cJSON_AddNumberToObject(k, "median_ratio", fam[a].ratio);
        cJSON_AddNumberToObject(k, "median_abs_error", fam[a].err);
        cJSON_AddItemToArray(ks, k);
    }
    if (jout_write(root, js, d) != 0)
        rc = -1;
    cJSON_Delete(root);
    return rc;
}

int compare_report(const struct hw_config *cfg, const struct trace *t, const struct run_result *r,
                   unsigned ntop, const char *js, FILE *txt, struct diag *d)
{
    int rc = 0;
    struct cls cl[OP_KIND_COUNT + 1];
    memset(cl, 0, sizeof cl);
    for (unsigned k = 0; k <= OP_KIND_COUNT; k++) {
        snprintf(cl[k].name, sizeof cl[k].name, "%s",
                 k < OP_KIND_COUNT ? op_kind_name((enum op_kind)k) : "fixed (no shapes)");
        cl[k].err = sim_xcalloc(t->nops + 1, sizeof *cl[k].err);
    }
    double *pred = sim_xcalloc(t->nops + 1, sizeof *pred);
    uint32_t nmeas = tally(t, r, cl, pred);
    fprintf(txt, "strata compare: %s on %s (%u ops with a measured kernel time)\n\n", t->path, cfg_label(cfg),
           nmeas);
    print_classes(txt, cl);
    uint32_t nfam;
    struct kfam *fam = kernel_families(t, pred, &nfam);
    print_families(txt, fam, nfam, ntop);
    print_largest(txt, t, pred, ntop);
    if (js != NULL)
        rc = write_json(cfg, t, cl, fam, nfam, js, d);
    for (unsigned k = 0; k <= OP_KIND_COUNT; k++)
        free(cl[k].err);
    free(pred);
    free(fam);
    return rc;
}
