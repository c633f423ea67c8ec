/* cmd_compare.c: `strata compare --trace T --hw H [--top N] [--json F]`: runs a
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

const char cli_compare_usage[] =
    "  strata compare  --trace TRACE.json --hw CONFIG.yaml [--top N (default 10)] [--json OUT.json]\n"
    "                  " CLI_SET_USAGE "\n";

int cli_compare(int argc, char **argv)
{
    const char *tr = NULL, *hw = NULL, *js = NULL, *top = NULL;
    const struct cli_opt opts[] = {
        {"trace", 0, &tr, NULL}, {"hw", 0, &hw, NULL},
        {"json", 0, &js, NULL},  {"top", 0, &top, NULL},
        {NULL, 0, NULL, NULL},
    };
    struct cfg_sets sets;
    memset(&sets, 0, sizeof sets);
    {
        int src = cli_take_sets("compare", &argc, argv, &sets);
        if (src >= 0)
            return src;
    }
    int rc = cli_parse("compare", cli_compare_usage, opts, argc, argv, NULL);
    if (rc >= 0)
        return rc;
    char hw_path[1600];
    if (cli_find("compare", "--hw", &hw, 0, hw_path, sizeof hw_path) != 0)
        return 1;
    rc = 0;
    if (tr == NULL || hw == NULL) {
        fprintf(stderr, "strata compare: --trace and --hw are required\n");
        return 2;
    }
    unsigned ntop = 10;
    if (top != NULL && cli_count("compare", "--top", top, 1000000, &ntop) != 0)
        return 2;
    struct diag d;
    memset(&d, 0, sizeof d);
    struct hw_system hs;            /* a chip config: only hs.chip */
    struct trace t;
    struct run_result r;
    if (hw_load(hw, &sets, &hs, NULL, &d) != 0 || trace_load(tr, &t, &d) != 0) {
        diag_print(&d, stderr);
        return 1;
    }
    struct hw_config cfg = hs.chip;
    if (run_trace(&cfg, &t, &r, &d) != 0) {
        diag_print(&d, stderr);
        trace_free(&t);
        return 1;
    }
    if (compare_report(&cfg, &t, &r, ntop, js, cli_is_stdout(js) ? stderr : stdout, &d) != 0) {
        rc = 1;
        diag_print(&d, stderr);
    }
    run_result_free(&r);
    trace_free(&t);
    return rc;
}
