/* plot_plan.h: `strata plan`'s plot (the verb is sim/cli/cmd_plan.c, the
 * search sim/out/plan.c): DIR/front.dat and DIR/front.gp, output tokens a
 * second per device against tokens a second per user, every candidate
 * that ran as a point and each hardware's Pareto front as a line, rendered
 * to DIR/front.png and DIR/front.svg when gnuplot is there
 * (plot_gnuplot_run.h). */
#ifndef STRATA_PLOT_PLAN_H
#define STRATA_PLOT_PLAN_H

#include "diag.h"
#include "plan.h"

/* 0 with *rendered (gnuplot made the images), or -1 with *d (a file
 * cannot be written). */
int plot_plan(const struct plan *p, const char *dir, int *rendered, struct diag *d);

#endif
