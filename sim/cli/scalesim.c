/* scalesim.c: `strata scalesim -c CONFIG.cfg -t TOPOLOGY.csv [-i conv|gemm]
 * [-p OUTDIR] [--quiet]`, SCALE-Sim's own options (sim/out/scalesim.h). */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "diag.h"
#include "scalesim.h"

int cli_scalesim(int argc, char **argv)
{
    struct cli_opts o;
    cli_opts_init(&o, argc, argv);
    const char *cfgp = cli_get(&o, "-c"), *topo = cli_get(&o, "-t");
    const char *mode = cli_get(&o, "-i"), *outdir = cli_get(&o, "-p");
    int quiet = cli_flag(&o, "--quiet");
    int rc = cli_check(&o, "scalesim");
    if (rc)
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
