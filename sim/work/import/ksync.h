/* ksync.h: the Kineto importer's dependencies between streams, from the
 * trace's "cuda_sync" events (private to sim/work/import; what they
 * become: ksync.c).  At most IMPORT_SYNC_DEPS_PER_OP (import.h) times the
 * ops in all; more are left out and counted. */
#ifndef STRATA_KSYNC_H
#define STRATA_KSYNC_H

#include <stdint.h>

#include "imp.h"
#include "kineto.h"

/* op waits for on, an op of stream group grp */
struct kdep {
    uint32_t op, grp, on;
};

/* The dependencies among the output's ops ent[0..nent) (in output order),
 * sorted by op, one per op and stream at most; *ndep of them.  by_corr:
 * runtime calls by correlation id.  The caller frees the array. */
struct kdep *ksync_deps(struct kstate *S, const struct kentry *ent, uint32_t nent,
                        const struct imp_map *by_corr, uint32_t *ndep);

#endif
