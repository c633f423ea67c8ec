/* plot_gnuplot_run.h: finding gnuplot and rendering scripts with it, for a
 * report's plots (plot.c) and a sweep's (plot_sweep.c).
 *
 * gnuplot: looked up on PATH as "gnuplot", then "gnuplot-nox"; the
 * environment variable STRATA_GNUPLOT overrides the lookup: a path to the
 * binary, or "" / "none" to never run it.  A gnuplot that fails is not an
 * error here: the caller is told which scripts rendered.
 */
#ifndef STRATA_PLOT_GNUPLOT_RUN_H
#define STRATA_PLOT_GNUPLOT_RUN_H

#include <stddef.h>

#define GPRUN_TIMEOUT_S 60 /* a gnuplot still running after this is killed */

/* gnuplot binary ($STRATA_GNUPLOT, else PATH): 1 and out filled, or 0. */
int gprun_find(char *out, size_t n);
/* Renders dir/names[k].gp (have[k] set; k < 3) side by side; ok[k] = rendered. */
void gprun_scripts(const char *gnuplot, const char *dir, const char *const *names,
                   const int *have, int n, int *ok);

#endif
