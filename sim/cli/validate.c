/* validate.c: `strata validate`: predictions against measurements
 * (sim/out/validate.h, docs/validation.md). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "diag.h"
#include "validate.h"

const char cli_validate_usage[] =
    "  strata validate --data MEASUREMENTS.csv [--configs DIR] [--json OUT.json] [--quiet]\n";

int cli_validate(int argc, char **argv)
{
    struct validate_opts vo;
    memset(&vo, 0, sizeof vo);
    const char *configs = NULL, *js = NULL;
    int quiet = 0;
    const struct cli_opt opts[] = {
        {"data", 0, &vo.data, NULL}, {"configs", 0, &configs, NULL},
        {"json", 0, &js, NULL},      {"quiet", 0, NULL, &quiet},
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
    struct diag d;
    memset(&d, 0, sizeof d);
    struct validate_result res;
    if (validate_run(&vo, &res, &d) != 0) {
        diag_print(&d, stderr);
        return 1;
    }
    FILE *txt = cli_is_stdout(js) ? stderr : stdout; /* JSON on stdout: the tables move aside */
    if (!quiet) {
        fprintf(txt, "%-14s %-22s %-24s %12s %12s %8s\n", "id", "config", "metric", "predicted",
               "measured", "error");
        for (uint32_t i = 0; i < res.nrows; i++) {
            const struct val_row *w = &res.rows[i];
            fprintf(txt, "%-14s %-22.22s %-24.24s %12.4g %12.4g %+7.1f%%\n", w->id, w->config, w->metric,
                   w->predicted, w->measured, 100 * w->err);
        }
    }
    struct validate_group g[32];
    int ng = validate_groups(&res, g, 32);
    fprintf(txt, "\n%-20s %5s %14s %14s\n", "group", "rows", "median |err|", "worst |err|");
    for (int k = 0; k < ng; k++)
        fprintf(txt, "%-20s %5u %13.1f%% %13.1f%%\n", g[k].name, g[k].count, 100 * g[k].median_abs_err,
               100 * g[k].worst_abs_err);
    if (res.skipped)
        fprintf(txt, "(%u rows skipped: no config/spec columns; see docs/validation.md)\n", res.skipped);
    if (js != NULL && validate_json(&res, js, &d) != 0) {
        diag_print(&d, stderr);
        rc = 1;
    }
    validate_free(&res);
    return rc;
}
