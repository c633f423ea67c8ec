/* coll.h: collectives (all-reduce, all-gather, reduce-scatter, all-to-all,
 * broadcast) as transfers scheduled on the system's links.
 *
 * A trace gives one `collective` op per rank; the k-th op a device issues on
 * a group is its part of the group's k-th collective (trace.h).  The run
 * driver hands each rank's op to coll_arrive() when it is ready; when every
 * rank has arrived, the collective runs as NCCL runs it (docs/collectives.md):
 * a protocol (LL, LL128, Simple) and an algorithm (ring, direct, nvls, tree), its data
 * cut into slices, each pipeline stage a set of flows on the links, switches
 * and memories of the ranks' routes, and a per-hop latency.  Every rank's
 * op ends when the collective does.
 *
 * Ownership: coll_create allocates everything the run needs (coll_arrive
 * does not allocate); coll_destroy frees it.
 */
#ifndef STRATA_COLL_H
#define STRATA_COLL_H

#include <stdint.h>

#include "cfg.h"
#include "diag.h"
#include "engine.h"
#include "model.h"
#include "trace.h"

struct coll_engine;

/* NULL with *d when a group's ranks have no path between them in the system. */
struct coll_engine *coll_create(struct engine *e, const struct hw_config *cfg,
                                const struct trace *t, struct run_env *env, struct diag *d);
void coll_destroy(struct coll_engine *c);
/* Rank op `op` (a collective) is ready now; done(e, ctx, op) when it ends. */
void coll_arrive(struct coll_engine *c, uint32_t op, struct op_result *res, model_done_fn done,
                 void *ctx);
/* After the run: 0, or -1 with *d naming a collective some ranks never
 * reached (their deps or stream order wait on the collective itself). */
int coll_check_done(const struct coll_engine *c, struct diag *d);

/* Bus bandwidth factor of nccl-tests (busbw = algbw * factor) for n ranks. */
double coll_busbw_factor(enum coll_kind k, uint32_t n);

#endif
