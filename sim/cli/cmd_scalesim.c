/* cmd_scalesim.c: `strata scalesim -c CONFIG.cfg -t TOPOLOGY.csv [-i conv|gemm]
 * [-p OUTDIR] [--quiet]`, SCALE-Sim's own options (sim/study/scalesim.h). */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "diag.h"
#include "numfmt.h"
#include "scalesim.h"

const char cli_scalesim_usage[] =
    "  strata scalesim -c SCALESIM.cfg -t TOPOLOGY.csv [-i conv|gemm (default conv)] [-p OUTDIR]\n"
    "                  [--quiet]   (without -p the reports are not written)\n"
    "                  [--max-walk UNITS]   (USER mode's work budget for the run, default 2e9,\n"
    "                                        about a minute)\n";

int cli_scalesim(int argc, char **argv)
{
    const char *cfgp = NULL, *topo = NULL, *mode = NULL, *outdir = NULL, *walk = NULL;
    int quiet = 0;
    const struct cli_opt opts[] = {
        {NULL, 'c', &cfgp, NULL},   {NULL, 't', &topo, NULL},
        {NULL, 'i', &mode, NULL},   {NULL, 'p', &outdir, NULL},
        {"quiet", 0, NULL, &quiet}, {"max-walk", 0, &walk, NULL},
        {NULL, 0, NULL, NULL},
    };
    int rc = cli_parse("scalesim", cli_scalesim_usage, opts, argc, argv, NULL);
    if (rc >= 0)
        return rc;
    if (cfgp == NULL || topo == NULL) {
        fprintf(stderr, "strata scalesim: -c CONFIG.cfg and -t TOPOLOGY.csv are required\n");
        return 2;
    }
    static char cfg_path[1600], topo_path[1600];   /* the shipped inputs from another folder */
    cli_find_data(&cfgp, cfg_path, sizeof cfg_path);
    cli_find_data(&topo, topo_path, sizeof topo_path);
    if (mode != NULL && strcmp(mode, "conv") != 0 && strcmp(mode, "gemm") != 0) {
        fprintf(stderr, "strata scalesim: -i: expected conv or gemm, got '%s'\n", mode);
        return 2;
    }
    double max_walk = 0;
    if (walk != NULL && (num_parse(walk, &max_walk) != 0 || !(max_walk >= 1) || max_walk > 1e18)) {
        fprintf(stderr, "strata scalesim: --max-walk: expected a number of units from 1 to 1e18, got '%s'\n",
                walk);
        return 2;
    }
    int gemm = mode != NULL && strcmp(mode, "gemm") == 0;
    struct diag d;
    memset(&d, 0, sizeof d);
    if (scalesim_run(cfgp, topo, gemm, outdir, quiet, max_walk, &d) != 0) {
        diag_print(&d, stderr);
        return 1;
    }
    return 0;
}
