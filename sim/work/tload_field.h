/* tload_field.h: the trace loader's reading of one kind-specific field of
 * an op, by its row of the field table (trace_field.h); private to the
 * trace loader (see tload.h). */
#ifndef STRATA_TLOAD_FIELD_H
#define STRATA_TLOAD_FIELD_H

#include "tload.h"
#include "trace_field.h"

/* Checks field f (item it, NULL when absent) and stores it, or its
 * default, in op.  op_line: the op's line, for a missing field.  0 or -1. */
int tload_field_read(struct tload *L, const struct trace_field *f, const cJSON *it, int op_line,
                     struct op *op);

#endif
