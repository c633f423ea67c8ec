/* plot_html.h: report.html from what plot_load read (docs/html.md lists
 * what the page holds). */
#ifndef STRATA_PLOT_HTML_H
#define STRATA_PLOT_HTML_H

#include "plot_load.h"
#include "strbuf.h"

/* Appends the whole page to h. */
void phtml_page(struct sb *h, const struct pdata *p);

#endif
