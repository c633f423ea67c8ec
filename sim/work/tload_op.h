/* tload_op.h: the trace loader's pass 1 over one op: every field checked
 * and stored, its deps only counted (tload_graph.c resolves them once every
 * id is known); private to the trace loader (see tload.h). */
#ifndef STRATA_TLOAD_OP_H
#define STRATA_TLOAD_OP_H

#include <stdint.h>

#include "tload.h"

/* Pass 1 for ops[i] (tree o) into L->t->ops[i]; *total_deps counts the
 * trace's deps so far.  0 or -1. */
int tload_op_parse(struct tload *L, const cJSON *o, uint32_t i, uint64_t *total_deps);

#endif
