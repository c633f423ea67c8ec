/* ktrace.h: the Kineto importer's entry for import_pytorch, which tells
 * Kineto traces from execution traces (private to sim/work/import;
 * import_kineto itself is in import.h). */
#ifndef STRATA_KTRACE_H
#define STRATA_KTRACE_H

#include "import.h"

/* Streams a Kineto trace into *out: 0, -1 with *d, or 1 (nothing
 * consumed) when the file has no traceEvents array. */
int ktrace_try(const char *path, struct trace *out, struct import_stats *st, struct diag *d);

#endif
