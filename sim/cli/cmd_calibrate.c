/* cmd_calibrate.c: `strata calibrate`: fit named config values to measured rows
 * with GSL's nonlinear least squares (sim/study/calibrate.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "calibrate.h"
#include "cfg.h"
#include "cli.h"
#include "diag.h"

const char cli_calibrate_usage[] =
    "  strata calibrate --hw CONFIG.yaml --data ROWS.csv --fit KEY[,KEY...] [--rows ID,PREFIX*]\n"
    "                  [-o|--output FIT.yaml] [--max-iter N]\n"
    "                  " CLI_SET_USAGE "\n"
    "  strata calibrate --stack NAME --data ROWS.csv --fit stack.KEY[,stack.KEY...] [--rows ...]\n"
    "                  [--max-iter N] (a stack's numbers over the rows of every chip; docs/stacks.md)\n"
    "                  (defaults: --max-iter 50, every row; without -o the fit is only printed)\n";

/* The rows' table: each row's measured value, its prediction before and
 * after the fit. */
static void print_fit(const struct calib_opts *o, const struct calib_result *r, const char *what,
                      const char *data, const char *rows)
{
    printf("strata calibrate: %s, %u rows of %s%s%s\n\n", what, r->nrows, data, rows ? " matching " : "",
           rows ? rows : "");
    printf("  %-44s %12s %12s %12s\n", "value", "start", "fitted", "+- 1 sigma");
    for (unsigned i = 0; i < o->nparams; i++) {
        char sg[32] = "-";
        if (isfinite(o->p[i].sigma))
            snprintf(sg, sizeof sg, "%.3g", o->p[i].sigma);
        printf("  %-44s %12.6g %12.6g %12s\n", o->p[i].full_key, o->p[i].start, o->p[i].value, sg);
    }
    printf("\n  rms of log(predicted/measured): %.4f -> %.4f (%u simulations%s)\n\n",
           r->rms_start, r->rms_fit, r->evals, r->converged ? "" : "; did not converge");
    printf("  %-14s %12s %12s %9s %10s %10s\n", "row", "measured", "predicted", "+-", "err before",
           "err after");
    for (uint32_t i = 0; i < r->nrows; i++) {
        const struct val_row *a = &r->start.rows[i], *b = &r->fit.rows[i];
        char sg[32] = "-";
        if (isfinite(r->row_sigma[i]))
            snprintf(sg, sizeof sg, "%.1f%%", 100.0 * r->row_sigma[i]);
        printf("  %-14s %12.4g %12.4g %9s %+9.1f%% %+9.1f%%\n", a->id, a->measured, b->predicted, sg,
               100.0 * a->err, 100.0 * b->err);
    }
}

/* --fit's keys and --max-iter into *o: 0, or 2 after the message. */
static int parse_fit(struct calib_opts *o, const char *fit, const char *iters)
{
    o->max_iter = 50;
    if (iters != NULL && cli_count("calibrate", "--max-iter", iters, 10000, &o->max_iter) != 0)
        return 2;
    struct diag d;
    memset(&d, 0, sizeof d);
    if (calib_parse_keys(o, fit, &d) != 0) {
        diag_print(&d, stderr);
        return 2;
    }
    return 0;
}

/* calibrate --stack NAME: the stack's numbers (stack.KEY) over the rows of
 * every chip that name it, from configs/ and configs/stacks/. */
static int calibrate_stack(const char *name, const char *data, const char *fit, const char *rows,
                           const char *out, const char *iters, const struct cfg_sets *base)
{
    if (data == NULL || fit == NULL) {
        fprintf(stderr, "strata calibrate: --stack needs --data and --fit\n");
        return 2;
    }
    if (out != NULL) {
        fprintf(stderr, "strata calibrate: -o writes a chip's overlay; a stack's values go in its file "
                        "(configs/stacks/%s.yaml) with their source\n", name);
        return 2;
    }
    static struct calib_opts o;
    static struct stack stack;
    memset(&o, 0, sizeof o);
    if (parse_fit(&o, fit, iters) != 0)
        return 2;
    struct diag d;
    memset(&d, 0, sizeof d);
    static char data_path[1600], dir[1100];
    if (cli_load_stack("calibrate", name, &stack, dir, sizeof dir) != 0)
        return 1;
    cli_find_data(&data, data_path, sizeof data_path);
    o.vo.data = data;
    o.vo.configs = "configs";
    o.vo.root = ".";
    o.vo.ids = rows;
    o.vo.only_stack = stack.name;
    o.start_stack = &stack;
    o.base = base;
    struct calib_result r;
    if (calib_fit(&o, &r, &d) != 0)
        return cli_fail(&d);
    print_fit(&o, &r, name, data, rows);
    calib_result_free(&r);
    return 0;
}

int cli_calibrate(int argc, char **argv)
{
    static struct calib_opts o;
    memset(&o, 0, sizeof o);
    struct cfg_sets base;
    memset(&base, 0, sizeof base);
    {
        int src = cli_take_sets("calibrate", &argc, argv, &base);
        if (src >= 0)
            return src;
    }
    const char *hw = NULL, *data = NULL, *fit = NULL, *rows = NULL, *out = NULL, *iters = NULL;
    const char *stk = NULL;
    const struct cli_opt opts[] = {
        {"hw", 0, &hw, NULL},       {"data", 0, &data, NULL},  {"fit", 0, &fit, NULL},
        {"rows", 0, &rows, NULL},   {"output", 'o', &out, NULL}, {"max-iter", 0, &iters, NULL},
        {"stack", 0, &stk, NULL},
        {NULL, 0, NULL, NULL},
    };
    int rc = cli_parse("calibrate", cli_calibrate_usage, opts, argc, argv, NULL);
    if (rc >= 0)
        return rc;
    if (stk != NULL && hw == NULL)
        return calibrate_stack(stk, data, fit, rows, out, iters, &base);
    char hw_path[1600];
    if (cli_find("calibrate", "--hw", &hw, 0, hw_path, sizeof hw_path) != 0)
        return 1;
    if (hw == NULL || data == NULL || fit == NULL) {
        fprintf(stderr, "strata calibrate: --hw, --data and --fit are required\n");
        return 2;
    }
    if (parse_fit(&o, fit, iters) != 0)
        return 2;
    struct diag d;
    memset(&d, 0, sizeof d);
    /* the rows of this config: its file stem in the data's config column,
     * the configs looked up beside it */
    char dir[512], stem[128];
    const char *slash = strrchr(hw, '/');
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - hw) : 1, slash ? hw : ".");
    snprintf(stem, sizeof stem, "%s", slash ? slash + 1 : hw);
    size_t sl = strlen(stem);
    if (sl > 5 && strcmp(stem + sl - 5, ".yaml") == 0)
        stem[sl - 5] = '\0';
    static char data_path[1600], root[512];
    cli_find_data(&data, data_path, sizeof data_path);
    o.vo.data = data;
    o.vo.configs = dir;
    /* the rows' model paths are relative to the folder that holds configs/ */
    const char *cs = strstr(dir, "/configs");
    snprintf(root, sizeof root, "%.*s", cs != NULL && cs[8] == '\0' ? (int)(cs - dir) : 1,
             cs != NULL && cs[8] == '\0' ? dir : ".");
    o.vo.root = root;
    o.vo.only_config = stem;
    o.vo.ids = rows;
    o.start_config = hw;
    o.base = &base;
    struct calib_result r;
    if (calib_fit(&o, &r, &d) != 0)
        return cli_fail(&d);
    print_fit(&o, &r, stem, data, rows);
    if (out != NULL) {
        if (calib_write_overlay(&o, &r, stem, out, &d) != 0) {
            calib_result_free(&r);
            return cli_fail(&d);
        }
        printf("\nwrote %s (apply with --hw %s --hw-overlay %s)\n", out, hw, out);
    }
    calib_result_free(&r);
    return 0;
}
