/* compare.h: a run's predicted kernel times against the measured_s its
 * trace carries, by op class, by kernel family and the largest errors
 * (`strata compare`; compare.c says how). */
#ifndef STRATA_COMPARE_H
#define STRATA_COMPARE_H

#include <stdio.h>

#include "cfg.h"
#include "diag.h"
#include "run.h"
#include "trace.h"

/* Prints the tables to txt for the top ntop families and ops; with js
 * also writes them as JSON to js ("-": stdout).  0, or -1 with *d (the JSON
 * could not be written; the tables were printed). */
int compare_report(const struct hw_config *cfg, const struct trace *t, const struct run_result *r,
                   unsigned ntop, const char *js, FILE *txt, struct diag *d);

#endif
