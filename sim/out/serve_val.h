/* serve_val.h: `strata validate` on a serving measurements CSV
 * (traces/validation/serving/serving.csv, docs/validation.md "Serving").
 *
 * A serving CSV has a row per measured deployment and several measured
 * columns (req_per_s, output_tok_per_s, ttft_p50_ms, tpot_p50_ms, and
 * ttft_mean_ms / itl_mean_ms where a source gives means only) instead of
 * the metric/value pair of the other validation CSVs; its `config` and
 * `spec` columns say how to run the row (`serve key=value ...`), `group`
 * names its group, and `skip` says why a row is not run.  Each run is a
 * `strata serve` run, built as the verb builds it (serve_setup.h); every
 * measured column it can predict becomes one compared row. */
#ifndef STRATA_SERVE_VAL_H
#define STRATA_SERVE_VAL_H

#include <stdio.h>

#include "diag.h"
#include "validate.h"

/* 1 when the file's header names the serving columns (req_per_s and spec),
 * else 0 (not readable: 0, validate_run says why). */
int serve_val_is(const char *path);
/* Runs the rows of o->data (o->ids chooses, as validate_run) into *r; a
 * row with a `skip` reason, or neither spec nor reason, is counted in
 * r->skipped and named with its reason on skips (may be NULL).  0, or -1
 * with *d ("file:line: field: what is wrong"; *r empty). */
int serve_val_run(const struct validate_opts *o, struct validate_result *r, FILE *skips, struct diag *d);

#endif
