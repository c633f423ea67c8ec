/* cmd_validate.c: `strata validate`: predictions against measurements
 * (sim/study/validate.h, docs/validation.md). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdlib.h>

#include "calibrate.h"
#include "cfg.h"
#include "check.h"
#include "cli.h"
#include "diag.h"
#include "serve_val.h"
#include "validate.h"

const char cli_validate_usage[] =
    "  strata validate --data MEASUREMENTS.csv [--configs DIR] [--json OUT.json] [--quiet]\n"
    "                  [--rows ID,PREFIX*] [--leave-one-chip-out --fit KEY[,KEY...]]\n"
    "  strata validate --data A.csv[,B.csv ...] --leave-one-stack-out [--configs DIR] [--rows ...]\n"
    "                  (each stack's rows predicted with every other stack's values)\n"
    "                  (defaults: --configs configs (a row's config is DIR/CONFIG.yaml), every row)\n";

/* median and worst |err| of the rows of r whose config is cfg (NULL: any),
 * group grp (NULL: any) and own stack stk (NULL: any); the number of them */
static unsigned stats(const struct validate_result *r, const char *cfg, const char *grp, const char *stk,
                      double *med, double *worst)
{
    double *e = sim_xcalloc(r->nrows + 1, sizeof *e);
    unsigned n = 0;
    for (uint32_t i = 0; i < r->nrows; i++)
        if ((cfg == NULL || strcmp(r->rows[i].config, cfg) == 0) &&
            (grp == NULL || strcmp(r->rows[i].group, grp) == 0) &&
            (stk == NULL || strcmp(r->rows[i].stack, stk) == 0))
            e[n++] = fabs(r->rows[i].err);
    *med = *worst = 0;
    if (n > 0) {
        gsl_sort(e, 1, n);
        *med = gsl_stats_median_from_sorted_data(e, 1, n);
        *worst = e[n - 1];
    }
    free(e);
    return n;
}

/* The configs (by_stack 0) or own stacks (1) of r's rows, each once, in
 * the order they first come; *n of them (free the array). */
static char (*distinct(const struct validate_result *r, int by_stack, unsigned *n))[64]
{
    char (*v)[64] = sim_xcalloc(r->nrows + 1, sizeof *v);
    *n = 0;
    for (uint32_t i = 0; i < r->nrows; i++) {
        const char *x = by_stack ? r->rows[i].stack : r->rows[i].config;
        unsigned k = 0;
        while (k < *n && strcmp(v[k], x) != 0)
            k++;
        if (k == *n)
            snprintf(v[(*n)++], sizeof v[0], "%s", x);
    }
    return v;
}

/* Fit the keys on every chip but one, predict that one; for each chip. */
static int leave_one_out(const struct validate_opts *vo, const char *fit, FILE *txt)
{
    struct diag d;
    memset(&d, 0, sizeof d);
    struct validate_result all;
    if (validate_run(vo, &all, &d) != 0)
        return cli_fail(&d);
    unsigned nchips;
    char (*chips)[64] = distinct(&all, 0, &nchips);
    fprintf(txt, "leave one chip out: %s fitted on the other chips' rows, then the chip's rows "
                 "predicted\n\n%-28s %-22s %5s %17s %17s  %s\n", fit, "chip (held out)", "group",
            "rows", "as shipped med/max", "held out med/max", "fitted on the others");
    int rc = 0;
    for (unsigned c = 0; c < nchips && rc == 0; c++) {
        static struct calib_opts o;
        memset(&o, 0, sizeof o);
        if (calib_parse_keys(&o, fit, &d) != 0) {
            rc = cli_fail(&d);
            break;
        }
        o.vo = *vo;
        o.vo.skip_config = chips[c];
        /* start values: the first other chip config (not a system file) */
        char start[1100] = "";
        for (uint32_t i = 0; i < all.nrows && start[0] == '\0'; i++)
            if (strcmp(all.rows[i].config, chips[c]) != 0 &&
                strncmp(all.rows[i].config, "systems/", 8) != 0)
                snprintf(start, sizeof start, "%s/%s.yaml", vo->configs, all.rows[i].config);
        if (start[0] == '\0') {
            fprintf(txt, "%-28.28s (no other chip config to fit on)\n", chips[c]);
            continue;
        }
        o.start_config = start;
        struct calib_result r;
        if (calib_fit(&o, &r, &d) != 0) {
            rc = cli_fail(&d);
            break;
        }
        struct cfg_sets sets;
        struct validate_opts one = *vo;
        one.only_config = chips[c];
        one.sets = &sets;
        struct validate_result held;
        if (calib_sets(&o, &sets, &d) != 0 || validate_run(&one, &held, &d) != 0) {
            calib_result_free(&r);
            rc = cli_fail(&d);
            break;
        }
        char vals[300] = "";
        size_t used = 0;
        for (unsigned i = 0; i < o.nparams && used < sizeof vals; i++)
            used += (size_t)snprintf(vals + used, sizeof vals - used, "%s%.4g", i ? ", " : "",
                                     o.p[i].value);
        /* per group of the chip, then the chip */
        for (uint32_t i = 0; i < held.nrows; i++) {
            int first = 1;
            for (uint32_t j = 0; j < i; j++)
                first &= strcmp(held.rows[j].group, held.rows[i].group) != 0;
            if (!first)
                continue;
            double m0, w0, m1, w1;
            unsigned n = stats(&all, chips[c], held.rows[i].group, NULL, &m0, &w0);
            stats(&held, chips[c], held.rows[i].group, NULL, &m1, &w1);
            fprintf(txt, "%-28.28s %-22.22s %5u %7.1f%% %7.1f%%  %7.1f%% %7.1f%%  %s\n", chips[c],
                    held.rows[i].group, n, 100 * m0, 100 * w0, 100 * m1, 100 * w1, vals);
        }
        calib_result_free(&r);
        validate_free(&held);
    }
    free(chips);
    validate_free(&all);
    return rc;
}

/* The rows of every file of vo->data (comma-separated) into *all, each run
 * with stack (NULL: its own). */
static int loso_run(const struct validate_opts *vo, const char *stack, struct validate_result *all,
                    struct diag *d)
{
    memset(all, 0, sizeof *all);
    char files[1600];
    snprintf(files, sizeof files, "%s", vo->data);
    for (char *f = strtok(files, ","); f != NULL; f = strtok(NULL, ",")) {
        struct validate_opts one = *vo;
        one.data = f;
        one.stack_override = stack;
        struct validate_result r;
        if (validate_run(&one, &r, d) != 0) {
            validate_free(all);
            return -1;
        }
        all->rows = sim_xrealloc(all->rows, (all->nrows + r.nrows + 1) * sizeof *all->rows);
        for (uint32_t i = 0; i < r.nrows; i++)
            if (r.rows[i].stack[0] != '\0')
                all->rows[all->nrows++] = r.rows[i];
        all->refused += r.refused;
        validate_free(&r);
    }
    return 0;
}

/* Each stack's rows (the rows whose spec names it) predicted with every
 * other stack's values instead: how much of the fit is the stack's own. */
static int leave_one_stack_out(const struct validate_opts *vo, FILE *txt)
{
    struct diag d;
    memset(&d, 0, sizeof d);
    struct validate_result own;
    if (loso_run(vo, NULL, &own, &d) != 0)
        return cli_fail(&d);
    unsigned ns;
    char (*stacks)[64] = distinct(&own, 1, &ns);
    struct validate_result *with = sim_xcalloc(ns + 1, sizeof *with);
    int rc = 0;
    for (unsigned k = 0; k < ns && rc == 0; k++)
        if (loso_run(vo, stacks[k], &with[k], &d) != 0)
            rc = cli_fail(&d);
    if (rc == 0) {
        fprintf(txt, "leave one stack out: each stack's rows (their spec's stack=) predicted with another "
                     "stack's values\n\n%-22s %-26s %5s %8s %8s\n", "rows of", "run with", "rows",
                "median", "worst");
        for (unsigned t = 0; t < ns; t++) {
            double m, w;
            unsigned n = stats(&own, NULL, NULL, stacks[t], &m, &w);
            fprintf(txt, "%-22.22s %-26s %5u %7.1f%% %7.1f%%\n", stacks[t], "its own", n, 100 * m, 100 * w);
            for (unsigned k = 0; k < ns; k++) {
                if (k == t)
                    continue;
                unsigned nk = stats(&with[k], NULL, NULL, stacks[t], &m, &w);
                if (nk == 0)
                    fprintf(txt, "%-22s %-26.26s %5u %8s %8s  (it runs none of them)\n", "", stacks[k], 0u, "-", "-");
                else
                    fprintf(txt, "%-22s %-26.26s %5u %7.1f%% %7.1f%%%s\n", "", stacks[k], nk, 100 * m, 100 * w,
                            nk < n ? "  (not all: the rest it cannot run)" : "");
            }
        }
    }
    for (unsigned k = 0; k < ns; k++)
        validate_free(&with[k]);
    free(with);
    free(stacks);
    validate_free(&own);
    return rc;
}

int cli_validate(int argc, char **argv)
{
    struct validate_opts vo;
    memset(&vo, 0, sizeof vo);
    const char *configs = NULL, *js = NULL, *fit = NULL;
    int quiet = 0, loo = 0, loso = 0;
    const struct cli_opt opts[] = {
        {"data", 0, &vo.data, NULL}, {"configs", 0, &configs, NULL},
        {"json", 0, &js, NULL},      {"quiet", 0, NULL, &quiet},
        {"rows", 0, &vo.ids, NULL},  {"leave-one-chip-out", 0, NULL, &loo},
        {"fit", 0, &fit, NULL},      {"leave-one-stack-out", 0, NULL, &loso},
        {NULL, 0, NULL, NULL},
    };
    int rc = cli_parse("validate", cli_validate_usage, opts, argc, argv, NULL);
    if (rc >= 0)
        return rc;
    rc = 0;
    if (vo.data == NULL) {
        fprintf(stderr, "strata validate: --data is required\n");
        return 2;
    }
    /* from another folder: the data and the configs of the installed (or source) tree */
    static char data_path[1600], cfg_dir[8][1100];
    if (strchr(vo.data, ',') != NULL && !loso) {
        fprintf(stderr, "strata validate: several --data files go with --leave-one-stack-out\n");
        return 2;
    }
    if (!loso)
        cli_find_data(&vo.data, data_path, sizeof data_path);
    struct stat cst;
    if (configs == NULL && stat("configs", &cst) != 0 && cli_data_dirs("configs", cfg_dir, 8) > 0)
        configs = cfg_dir[0];
    vo.configs = configs ? configs : "configs";
    /* model paths in specs are relative to the directory holding configs/ */
    char root[1024];
    snprintf(root, sizeof root, "%s", vo.configs);
    char *slash = strrchr(root, '/');
    if (slash != NULL)
        *slash = '\0';
    else
        snprintf(root, sizeof root, ".");
    vo.root = root;
    /* a serving CSV (serve_val.h): a row a deployment, run by strata serve */
    int serving = serve_val_is(vo.data);
    if (serving && (loo || fit != NULL)) {
        fprintf(stderr, "strata validate: --leave-one-chip-out fits chip keys on op-level rows; %s is a "
                        "serving CSV\n", vo.data);
        return 2;
    }
    if (loso && (loo || fit != NULL || serving || js != NULL)) {
        fprintf(stderr, "strata validate: --leave-one-stack-out takes op-level and llm CSVs, without "
                        "--leave-one-chip-out, --fit or --json\n");
        return 2;
    }
    if (loso)
        return leave_one_stack_out(&vo, stdout);
    if (loo || fit != NULL) {
        if (!loo || fit == NULL) {
            fprintf(stderr, "strata validate: --leave-one-chip-out needs --fit KEYS (and --fit "
                            "goes with it)\n");
            return 2;
        }
        return leave_one_out(&vo, fit, stdout);
    }
    struct diag d;
    memset(&d, 0, sizeof d);
    struct validate_result res;
    FILE *txt = cli_is_stdout(js) ? stderr : stdout; /* JSON on stdout: the tables move aside */
    if ((serving ? serve_val_run(&vo, &res, txt, &d) : validate_run(&vo, &res, &d)) != 0) {
        diag_print(&d, stderr);
        return 1;
    }
    if (!quiet) {
        /* columns as wide as their widest entry: nothing is cut */
        int wi = 2, wc = 6, wm = 6, wu = 4;
        for (uint32_t i = 0; i < res.nrows; i++) {
            const struct val_row *w = &res.rows[i];
            wi = (int)strlen(w->id) > wi ? (int)strlen(w->id) : wi;
            wc = (int)strlen(w->config) > wc ? (int)strlen(w->config) : wc;
            wm = (int)strlen(w->metric) > wm ? (int)strlen(w->metric) : wm;
            wu = (int)strlen(w->unit) > wu ? (int)strlen(w->unit) : wu;
        }
        fprintf(txt, "%-*s  %-*s  %-*s  %-*s %12s %12s %8s\n", wi, "id", wc, "config", wm, "metric",
                wu, "unit", "predicted", "measured", "error");
        for (uint32_t i = 0; i < res.nrows; i++) {
            const struct val_row *w = &res.rows[i];
            fprintf(txt, "%-*s  %-*s  %-*s  %-*s %12.4g %12.4g %+7.1f%%\n", wi, w->id, wc, w->config,
                    wm, w->metric, wu, w->unit, w->predicted, w->measured, 100 * w->err);
        }
    }
    int ng;
    struct validate_group *g = validate_groups(&res, &ng);
    int wg = 5;
    for (int k = 0; k < ng; k++)
        wg = (int)strlen(g[k].name) > wg ? (int)strlen(g[k].name) : wg;
    fprintf(txt, "\n%-*s %5s %14s %14s\n", wg, "group", "rows", "median |err|", "worst |err|");
    for (int k = 0; k < ng; k++)
        fprintf(txt, "%-*s %5u %13.1f%% %13.1f%%\n", wg, g[k].name, g[k].count,
                100 * g[k].median_abs_err, 100 * g[k].worst_abs_err);
    free(g);
    if (res.skipped && serving)
        fprintf(txt, "(%u rows skipped, each named above with its reason)\n", res.skipped);
    else if (res.skipped)
        fprintf(txt, "(%u rows skipped: no config/spec columns; see docs/validation.md)\n", res.skipped);
    if (js != NULL && validate_json(&res, js, &d) != 0) {
        diag_print(&d, stderr);
        rc = 1;
    }
    validate_free(&res);
    return rc;
}
