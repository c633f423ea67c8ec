/* compare.c: `strata compare --trace T --hw H [--top N] [--json F]`: runs a
 * trace that carries measured times and sets the predictions against them
 * (sim/out/compare.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfg.h"
#include "cli.h"
#include "compare.h"
#include "diag.h"
#include "run.h"
#include "trace.h"

int cli_compare(int argc, char **argv)
{
    struct cli_opts o;
    cli_opts_init(&o, argc, argv);
    const char *tr = cli_get(&o, "--trace"), *hw = cli_get(&o, "--hw");
    const char *js = cli_get(&o, "--json"), *top = cli_get(&o, "--top");
    int rc = cli_check(&o, "compare");
    if (rc)
        return rc;
    if (tr == NULL || hw == NULL) {
        fprintf(stderr, "strata compare: --trace and --hw are required\n");
        return 2;
    }
    unsigned ntop = top ? (unsigned)strtoul(top, NULL, 10) : 10;
    struct diag d;
    memset(&d, 0, sizeof d);
    struct hw_config cfg;
    struct trace t;
    struct run_result r;
    if (cfg_load(hw, &cfg, &d) != 0 || trace_load(tr, &t, &d) != 0) {
        diag_print(&d, stderr);
        return 1;
    }
    if (run_trace(&cfg, &t, &r, &d) != 0) {
        diag_print(&d, stderr);
        trace_free(&t);
        return 1;
    }
    if (compare_report(&cfg, &t, &r, ntop, js, &d) != 0) {
        rc = 1;
        diag_print(&d, stderr);
    }
    run_result_free(&r);
    trace_free(&t);
    return rc;
}
