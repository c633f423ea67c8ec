/* cmd_plot.c: `strata plot`: the plots and the HTML page of a saved report
 * (plots/plot.h). */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "diag.h"
#include "plot.h"

const char cli_plot_usage[] = "  strata plot     --report REPORT.json --out DIR\n";

int cli_plot(int argc, char **argv)
{
    const char *rep = NULL, *out = NULL;
    const struct cli_opt opts[] = {
        {"report", 0, &rep, NULL},
        {"out", 0, &out, NULL},
        {NULL, 0, NULL, NULL},
    };
    int rc = cli_parse("plot", cli_plot_usage, opts, argc, argv, NULL);
    if (rc >= 0)
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
