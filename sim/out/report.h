/* report.h: what a run tells its user.
 *
 * report_text() prints the terminal summary; report_json() and report_csv()
 * write machine-readable reports atomically.  The JSON fields listed in
 * docs/report.md are a stable contract (add freely, rename nothing).
 */
#ifndef STRATA_REPORT_H
#define STRATA_REPORT_H

#include <stdio.h>

#include "cfg.h"
#include "diag.h"
#include "run.h"
#include "system.h"
#include "trace.h"
#include "version.h"
#include "whatif.h"


struct timeline;

struct report_ctx {
    const struct hw_config *cfg;
    const struct trace *t;
    const struct run_result *r;
    double tokens;              /* tokens produced per trace replay, 0 = not a token workload */
    unsigned top;               /* ops to list in the terminal table */
    const struct timeline *tl;  /* adds "timeseries" to the JSON when set */
    const struct whatif *whatif;/* adds "whatif" to the JSON when nwhatif > 0 */
    unsigned nwhatif;
    const struct hw_system *sys;/* the system file the run was on, or NULL (a chip config) */
};

void report_text(const struct report_ctx *c, FILE *out);
int report_json(const struct report_ctx *c, const char *path, struct diag *d);
/* The JSON report as a cJSON tree (void * keeps cJSON out of this header);
 * write it with report_json_tree_write, free it with report_tree_free. */
void *report_json_tree(const struct report_ctx *c);
/* The same tree without its ops ("ops" an empty array, last), and the
 * report written from it and c's ops one at a time: the same bytes as
 * report_json_tree's, in memory that does not grow with the ops
 * (report_json does this). */
void *report_json_head(const struct report_ctx *c);
int report_json_write(const struct report_ctx *c, const void *head, const char *path,
                      struct diag *d);
/* Any tree (fit's, compare's), formatted as cJSON formats it. */
int report_tree_write(const void *tree, const char *path, struct diag *d);
/* A run's report tree (report_json_tree) in report.json's layout: the head
 * formatted, the ops one a line (what report_json writes).  The tree is
 * left as it was. */
int report_json_tree_write(void *tree, const char *path, struct diag *d);
void report_tree_free(void *tree);
int report_csv(const struct report_ctx *c, const char *path, struct diag *d);

#endif
