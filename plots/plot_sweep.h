/* plot_sweep.h: a sweep's plots and page (`strata sweep --out DIR`; the verb
 * is sim/cli/cmd_sweep.c, the sweep itself sim/study/sweep.c).
 *
 * From the CSV the sweep wrote: DIR/plots/KEY.dat/.gp per varied key (time
 * against the key, per trace: the median over the other keys' values, with
 * their range as error bars), rendered when gnuplot is there, and
 * DIR/sweep.html (what was varied, the plots, each trace's fastest points).
 */
#ifndef STRATA_PLOT_SWEEP_H
#define STRATA_PLOT_SWEEP_H

#include "diag.h"

struct sweep;
/* 0, or -1 with *d (the CSV cannot be read back or has the wrong number of
 * rows; a file cannot be written). */
int plot_sweep(const struct sweep *s, const char *csv_path, const char *dir, struct diag *d);

#endif
