/* trace_coll.h: a trace's collectives as sets of ops, one per rank, and
 * its mirror devices (trace.h).  trace_index_colls and trace_one_collective
 * are declared in trace.h; this header adds what the loader needs too. */
#ifndef STRATA_TRACE_COLL_H
#define STRATA_TRACE_COLL_H

#include "trace.h"

/* In a symmetric trace, every device with no ops of its own is a mirror:
 * the unsimulated members of the simulated ranks' groups, and the devices
 * of copies that no used group reaches (the other slices' ranks).  Sets
 * t->mirror (NULL: none) and t->nmirrors. */
void trace_coll_mark_mirrors(struct trace *t);

#endif
