/* plot_gnuplot.h: the gnuplot data and script of each plot of a report
 * (plots/README.md describes them): plots/roofline.dat/.gp,
 * plots/stalls.dat/.gp and plots/bandwidth.dat/.gp.  The scripts render to
 * PNG and SVG next to themselves (plot_gnuplot_run.h runs them).
 *
 * Names from the report (levels, devices, the workload) go into scripts as
 * bare words and into data files as quoted strings with nothing inside
 * that could end them, so a report cannot make gnuplot run a command.
 * Each writer puts both files into the set w (plot_files.h): 0, or -1
 * with *d.
 */
#ifndef STRATA_PLOT_GNUPLOT_H
#define STRATA_PLOT_GNUPLOT_H

#include "diag.h"
#include "plot_files.h"
#include "plot_load.h"

/* needs p->have_hw */
int pgp_roofline(const struct pdata *p, const char *dir, struct pfiles *w, struct diag *d);
int pgp_stalls(const struct pdata *p, const char *dir, struct pfiles *w, struct diag *d);
/* needs p->ts_dev */
int pgp_bandwidth(const struct pdata *p, const char *dir, struct pfiles *w, struct diag *d);

#endif
