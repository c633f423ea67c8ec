/* plot_svg.h: the plots of report.html drawn as inline SVG, each a
 * <figure> with its caption (ids "plot-roofline", "plot-stalls",
 * "plot-bandwidth"): the same data as the gnuplot scripts with fewer
 * marks (plots/README.md says which). */
#ifndef STRATA_PLOT_SVG_H
#define STRATA_PLOT_SVG_H

#include "plot_load.h"
#include "strbuf.h"

/* needs p->have_hw */
void psvg_roofline(struct sb *h, const struct pdata *p);
void psvg_stalls(struct sb *h, const struct pdata *p);
/* needs p->ts_dev */
void psvg_bandwidth(struct sb *h, const struct pdata *p);

#endif
