/* kstream.h: reading a Kineto JSON trace (plain or gzip) as a stream,
 * one event object at a time, so a trace is never held in memory whole
 * (private to sim/work/import). */
#ifndef STRATA_KSTREAM_H
#define STRATA_KSTREAM_H

#include "diag.h"
#include "kineto.h"

/* Read a Kineto trace event by event into S (kineto_event).  Returns 0, 1
 * if the file is not a Kineto trace (no top-level traceEvents), or -1 with
 * *d. */
int kstream_read(const char *path, struct kstate *S, struct diag *d);

#endif
