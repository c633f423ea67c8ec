/* calibrate.c: see calibrate.h. */
#include "calibrate.h"

#include <gsl/gsl_blas.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_matrix.h>
#include <gsl/gsl_multifit_nlinear.h>
#include <gsl/gsl_vector.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "afile.h"
#include "check.h"

static const struct { const char *alias, *key; } aliases[] = {
    {"efficiency.dram", "dram.efficiency.bandwidth_fraction"},
    {"efficiency.dram_rw", "dram.efficiency.rw_turnaround_penalty"},
    {"efficiency.dram_latency", "dram.efficiency.loaded_latency_ns"},
    {"efficiency.matrix", "efficiency.matrix_pipe_fraction"},
    {"efficiency.vector", "efficiency.vector_pipe_fraction"},
    {"launch", "launch.kernel_overhead_ns"},
};

int calib_parse_keys(struct calib_opts *o, const char *list, struct diag *d)
{
    o->nparams = 0;
    for (const char *p = list; *p != '\0';) {
        size_t n = strcspn(p, ",");
        if (n == 0 || n >= sizeof o->p[0].key)
            return diag_set(d, DIAG_E_USAGE, "--fit", 0, "", "expected keys joined by ',', "
                            "like efficiency.dram,efficiency.matrix");
        if (o->nparams >= CALIB_MAX_PARAMS)
            return diag_set(d, DIAG_E_USAGE, "--fit", 0, "", "at most %d values", CALIB_MAX_PARAMS);
        struct calib_param *c = &o->p[o->nparams++];
        memset(c, 0, sizeof *c);
        snprintf(c->key, sizeof c->key, "%.*s", (int)n, p);
        for (size_t a = 0; a < sizeof aliases / sizeof aliases[0]; a++)
            if (strcmp(c->key, aliases[a].alias) == 0)
                snprintf(c->key, sizeof c->key, "%s", aliases[a].key);
        for (unsigned j = 0; j + 1 < o->nparams; j++)
            if (strcmp(o->p[j].key, c->key) == 0)
                return diag_set(d, DIAG_E_USAGE, "--fit", 0, c->key, "given twice");
        p += n;
        if (*p == ',')
            p++;
    }
    if (o->nparams == 0)
        return diag_set(d, DIAG_E_USAGE, "--fit", 0, "", "no key to fit");
    return 0;
}

/* The range a value may take, by what its key says it is. */
static double clamp_param(const char *key, double x)
{
    size_t n = strlen(key);
    if (strstr(key, "issue_efficiency") != NULL)   /* a stack's share of a path's rate */
        return fmin(1.0, fmax(1e-3, x));
    if (n > 3 && strcmp(key + n - 3, "_us") == 0)  /* a stack's host or launch time */
        return fmin(1e6, fmax(0.0, x));
    if (n > 9 && strcmp(key + n - 9, "_fraction") == 0)
        return fmin(1.0, fmax(1e-3, x));
    if (strstr(key, "penalty") != NULL)
        return fmin(0.999, fmax(0.0, x));
    return fmin(1e15, fmax(1e-3, x));
}

static int sets_at(const struct calib_opts *o, const double *x, struct cfg_sets *out,
                   struct diag *d)
{
    memset(out, 0, sizeof *out);
    if (o->base != NULL)
        *out = *o->base;
    for (unsigned i = 0; i < o->nparams; i++) {
        char kv[200];
        snprintf(kv, sizeof kv, "%s=%.12g", o->p[i].full_key, clamp_param(o->p[i].full_key, x[i]));
        if (cfg_sets_add(out, kv, "--fit", d) != 0)
            return -1;
    }
    return 0;
}

int calib_sets(const struct calib_opts *o, struct cfg_sets *out, struct diag *d)
{
    double x[CALIB_MAX_PARAMS];
    for (unsigned i = 0; i < o->nparams; i++)
        x[i] = o->p[i].value;
    return sets_at(o, x, out, d);
}

struct ctx {
    const struct calib_opts *o;
    size_t n;
    unsigned evals;
    struct diag *d;
    int failed;
};

/* Runs the rows at x; res gets them.  -1 with *d on error. */
static int predict(struct ctx *c, const double *x, struct validate_result *res)
{
    struct cfg_sets sets;
    if (sets_at(c->o, x, &sets, c->d) != 0)
        return -1;
    struct validate_opts vo = c->o->vo;
    vo.sets = &sets;
    c->evals++;
    return validate_run(&vo, res, c->d);
}

static int resid(const gsl_vector *xv, void *params, gsl_vector *f)
{
    struct ctx *c = params;
    double x[CALIB_MAX_PARAMS];
    for (unsigned i = 0; i < c->o->nparams; i++)
        x[i] = gsl_vector_get(xv, i);
    struct validate_result res;
    if (c->failed || predict(c, x, &res) != 0) {
        c->failed = 1;
        return GSL_EDOM;
    }
    if (res.nrows != c->n) {
        validate_free(&res);
        c->failed = 1;
        return GSL_EDOM;
    }
    for (size_t i = 0; i < c->n; i++)
        gsl_vector_set(f, i, log(res.rows[i].predicted / res.rows[i].measured));
    validate_free(&res);
    return GSL_SUCCESS;
}

static double rms_log(const struct validate_result *r)
{
    double s = 0;
    for (uint32_t i = 0; i < r->nrows; i++) {
        double e = log(r->rows[i].predicted / r->rows[i].measured);
        s += e * e;
    }
    return r->nrows ? sqrt(s / r->nrows) : 0;
}

int calib_fit(struct calib_opts *o, struct calib_result *r, struct diag *d)
{
    memset(r, 0, sizeof *r);
    for (unsigned i = 0; i < o->nparams; i++) {
        if (strncmp(o->p[i].key, "stack.", 6) == 0) {
            if (o->start_stack == NULL)
                return diag_set(d, DIAG_E_USAGE, "--fit", 0, o->p[i].key, "a stack's value needs --stack NAME");
            if (stack_get_value(o->start_stack, o->p[i].key + 6, &o->p[i].start, d) != 0)
                return -1;
            memcpy(o->p[i].full_key, o->p[i].key, sizeof o->p[i].key);  /* a stack's key is its own */
        } else if (o->start_config == NULL) {
            return diag_set(d, DIAG_E_USAGE, "--fit", 0, o->p[i].key, "a config key needs --hw CONFIG.yaml");
        } else if (cfg_read_value(o->start_config, o->p[i].key, &o->p[i].start, o->p[i].full_key,
                                  sizeof o->p[i].full_key, d) != 0) {
            return -1;
        }
        o->p[i].value = o->p[i].start;
        o->p[i].sigma = (double)NAN;
    }
    struct ctx c = {.o = o, .d = d};
    double x0[CALIB_MAX_PARAMS];
    for (unsigned i = 0; i < o->nparams; i++)
        x0[i] = o->p[i].start;
    if (predict(&c, x0, &r->start) != 0)
        return -1;
    c.n = r->start.nrows;
    r->nrows = r->start.nrows;
    r->rms_start = rms_log(&r->start);
    if (c.n < o->nparams) {
        validate_free(&r->start);
        return diag_set(d, DIAG_E_RANGE, o->vo.data, 0, "", "%zu rows selected for %u values: "
                        "a fit needs at least as many rows as values", c.n, o->nparams);
    }
    gsl_set_error_handler_off();
    const size_t n = c.n, p = o->nparams;
    gsl_multifit_nlinear_parameters fp = gsl_multifit_nlinear_default_parameters();
    /* simulated times are whole picoseconds: difference over 0.1% of a value,
     * not over sqrt(machine epsilon) of it */
    fp.h_df = 1e-3;
    gsl_multifit_nlinear_workspace *w = gsl_multifit_nlinear_alloc(gsl_multifit_nlinear_trust,
                                                                   &fp, n, p);
    if (w == NULL)
        sim_oom(n * p * sizeof(double));
    gsl_multifit_nlinear_fdf fdf = {.f = resid, .df = NULL, .fvv = NULL, .n = n, .p = p,
                                    .params = &c};
    gsl_vector_view xv = gsl_vector_view_array(x0, p);
    int info = 0, status = gsl_multifit_nlinear_init(&xv.vector, &fdf, w);
    if (status == GSL_SUCCESS)
        status = gsl_multifit_nlinear_driver(o->max_iter ? o->max_iter : 50, 1e-6, 1e-8, 1e-10,
                                             NULL, NULL, &info, w);
    if (c.failed) {
        gsl_multifit_nlinear_free(w);
        validate_free(&r->start);
        return -1;
    }
    r->converged = status == GSL_SUCCESS;
    gsl_vector *x = gsl_multifit_nlinear_position(w);
    gsl_vector *f = gsl_multifit_nlinear_residual(w);
    gsl_matrix *J = gsl_multifit_nlinear_jac(w);
    gsl_matrix *cov = gsl_matrix_alloc(p, p);
    gsl_multifit_nlinear_covar(J, 0.0, cov);
    double chisq;
    gsl_blas_ddot(f, f, &chisq);
    double s2 = n > p ? chisq / (double)(n - p) : (double)NAN;
    for (unsigned i = 0; i < p; i++) {
        o->p[i].value = clamp_param(o->p[i].full_key, gsl_vector_get(x, i));
        double v = gsl_matrix_get(cov, i, i) * s2;
        o->p[i].sigma = isfinite(v) && v >= 0 ? sqrt(v) : (double)NAN;
    }
    r->row_sigma = sim_xcalloc(n, sizeof *r->row_sigma);
    for (size_t i = 0; i < n; i++) {
        double v = 0;
        for (size_t a = 0; a < p; a++)
            for (size_t b = 0; b < p; b++)
                v += gsl_matrix_get(J, i, a) * gsl_matrix_get(cov, a, b) * gsl_matrix_get(J, i, b);
        r->row_sigma[i] = isfinite(v * s2) && v * s2 >= 0 ? sqrt(v * s2) : (double)NAN;
    }
    gsl_matrix_free(cov);
    gsl_multifit_nlinear_free(w);
    double xf[CALIB_MAX_PARAMS];
    for (unsigned i = 0; i < p; i++)
        xf[i] = o->p[i].value;
    if (predict(&c, xf, &r->fit) != 0) {
        validate_free(&r->start);
        free(r->row_sigma);
        r->row_sigma = NULL;
        return -1;
    }
    r->rms_fit = rms_log(&r->fit);
    r->evals = c.evals;
    return 0;
}

void calib_result_free(struct calib_result *r)
{
    validate_free(&r->start);
    validate_free(&r->fit);
    free(r->row_sigma);
    r->row_sigma = NULL;
}

int calib_write_overlay(const struct calib_opts *o, const struct calib_result *r,
                        const char *chip, const char *path, struct diag *d)
{
    struct afile a;
    if (afile_open(&a, path, d) != 0)
        return -1;
    fprintf(a.f, "# strata calibrate: %u values of %s fitted to %u rows of %s", o->nparams, chip,
            r->nrows, o->vo.data);
    if (o->vo.ids != NULL && o->vo.ids[0] != '\0')
        fprintf(a.f, " (%s)", o->vo.ids);
    fprintf(a.f, "\n# rms of log(predicted/measured): %.4f before, %.4f after (%u simulations%s)\n"
                 "# apply with: --hw %s --hw-overlay %s\n",
            r->rms_start, r->rms_fit, r->evals, r->converged ? "" : ", did not converge",
            o->start_config, path);
    fprintf(a.f, "base: %s\nset:\n", chip);
    for (unsigned i = 0; i < o->nparams; i++) {
        fprintf(a.f, "  %s: %.6g", o->p[i].full_key, o->p[i].value);
        if (isfinite(o->p[i].sigma))
            fprintf(a.f, "  # +- %.2g (1 sigma); was %.6g\n", o->p[i].sigma, o->p[i].start);
        else
            fprintf(a.f, "  # uncertainty not determined; was %.6g\n", o->p[i].start);
    }
    return afile_commit(&a, d);
}
