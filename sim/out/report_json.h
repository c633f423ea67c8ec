/* report_json.h: report.json (`strata run --json`, --out), its fields
 * listed in docs/report.md.  Written atomically, in one layout: the head
 * as cJSON formats it, the "ops" array last with one op a line. */
#ifndef STRATA_REPORT_JSON_H
#define STRATA_REPORT_JSON_H

#include "report.h"

/* The report written (report_json_head, then report_json_write). */
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
/* A run's report tree (report_json_tree) in report.json's layout: the head
 * formatted, the ops one a line (what report_json writes).  The tree is
 * left as it was. */
int report_json_tree_write(void *tree, const char *path, struct diag *d);
void report_tree_free(void *tree);

#endif
