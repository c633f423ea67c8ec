/* timeline.h: writes a recorded run (sim/engine/record.h) for Perfetto /
 * chrome://tracing.
 *
 * Op slices, dependency arrows and names come from the trace and the run
 * result when the file is written.  tl_write() writes Chrome Trace Event
 * JSON atomically: one process per device, a thread per stream for ops and
 * one for their waves, counter tracks per level (bytes/s and % of peak).
 */
#ifndef STRATA_TIMELINE_H
#define STRATA_TIMELINE_H

#include <stdint.h>

#include "cfg.h"
#include "diag.h"
#include "model.h"
#include "record.h"
#include "run.h"
#include "trace.h"

/* Write the Chrome Trace Event JSON. */
int tl_write(const struct timeline *tl, const struct hw_config *cfg, const struct trace *t,
             const struct run_result *r, const char *path, struct diag *d);

#endif
