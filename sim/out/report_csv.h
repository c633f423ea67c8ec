/* report_csv.h: a run's ops as CSV (`strata run --csv`, ops.csv of --out):
 * a header row, then one row an op in trace order with its bytes and
 * time at each level. */
#ifndef STRATA_REPORT_CSV_H
#define STRATA_REPORT_CSV_H

#include "report.h"

/* Writes path atomically.  0, or -1 with *d. */
int report_csv(const struct report_ctx *c, const char *path, struct diag *d);

#endif
