/* plot.c: `strata plot`: the plots and the HTML page of a saved report
 * (plots/plot.h). */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "diag.h"
#include "plot.h"

int cli_plot(int argc, char **argv)
{
    struct cli_opts o;
    cli_opts_init(&o, argc, argv);
    const char *rep = cli_get(&o, "--report"), *out = cli_get(&o, "--out");
    int rc = cli_check(&o, "plot");
    if (rc)
        return rc;
    if (rep == NULL || out == NULL) {
        fprintf(stderr, "strata plot: --report and --out are required\n");
        return 2;
    }
    struct diag d;
    memset(&d, 0, sizeof d);
    struct plot_summary s;
    if (plot_render_ex(rep, out, &s, &d) != 0) {
        diag_print(&d, stderr);
        return 1;
    }
    printf("wrote %s/report.html and %d plots in %s/plots (%s)\n", out, s.plots, out,
           s.gnuplot_found ? "rendered with gnuplot" : "gnuplot not found: .dat and .gp only");
    return 0;
}
