/* scalesim.c: `strata scalesim -c CONFIG.cfg -t TOPOLOGY.csv [-i conv|gemm]
 * [-p OUTDIR] [--quiet]`, SCALE-Sim's own options (sim/out/scalesim.h). */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "diag.h"
#include "scalesim.h"

const char cli_scalesim_usage[] =
    "  strata scalesim -c SCALESIM.cfg -t TOPOLOGY.csv [-i conv|gemm] [-p OUTDIR] [--quiet]\n";

int cli_scalesim(int argc, char **argv)
{
    const char *cfgp = NULL, *topo = NULL, *mode = NULL, *outdir = NULL;
    int quiet = 0;
    const struct cli_opt opts[] = {
        {NULL, 'c', &cfgp, NULL},   {NULL, 't', &topo, NULL},
        {NULL, 'i', &mode, NULL},   {NULL, 'p', &outdir, NULL},
        {"quiet", 0, NULL, &quiet}, {NULL, 0, NULL, NULL},
    };
    int rc = cli_parse("scalesim", cli_scalesim_usage, opts, argc, argv, NULL);
    if (rc >= 0)
        return rc;
    if (cfgp == NULL || topo == NULL) {
        fprintf(stderr, "strata scalesim: -c CONFIG.cfg and -t TOPOLOGY.csv are required\n");
        return 2;
    }
    if (mode != NULL && strcmp(mode, "conv") != 0 && strcmp(mode, "gemm") != 0) {
        fprintf(stderr, "strata scalesim: -i: expected conv or gemm, got '%s'\n", mode);
        return 2;
    }
    int gemm = mode != NULL && strcmp(mode, "gemm") == 0;
    struct diag d;
    memset(&d, 0, sizeof d);
    if (scalesim_run(cfgp, topo, gemm, outdir, quiet, &d) != 0) {
        diag_print(&d, stderr);
        return 1;
    }
    return 0;
}
