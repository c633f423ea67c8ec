/* opstore.h: where a run keeps its ops' results.
 *
 * A model fills an op's struct op_result while the op runs (model.h).  A
 * run of a million ops kept a million of them (328 bytes each) though
 * most ops of a trace did the same work the same way as another: the same
 * layer's GEMM every step, every op of a repeated kernel, a mirror's twin.
 * So a run keeps each op as when it was handed to its device and began
 * (struct run_op, 24 bytes) and its body: the rest of its op_result as if
 * it had begun at time 0, one copy of each distinct body (compared byte
 * for byte, so nothing is rounded or merged that differs).  A run whose
 * ops all differ keeps what it kept before and a table of them.
 *
 * While an op runs its result lives in a slot of the store's live pool:
 * slots come in chunks that never move (a model keeps the pointer), freed
 * slots are reused, so the pool is as large as the most ops in flight at
 * once, not the trace.
 */
#ifndef STRATA_OPSTORE_H
#define STRATA_OPSTORE_H

#include <stdint.h>

#include "model.h"

/* One op of a run: the body index is a live slot's while the op runs. */
struct run_op {
    uint64_t ready_ps;          /* dependencies done, handed to the device */
    uint64_t start_ps;          /* began */
    uint32_t body;              /* its body in the run's bodies */
};

/* The distinct bodies of a run, and while it runs the live slots. */
struct opstore {
    struct op_result *body;     /* distinct bodies: ready_ps and start_ps 0, end_ps the
                                   op's duration */
    uint64_t *hash;             /* each body's hash */
    uint32_t nbody, cap;
    uint32_t *tab;              /* open addressing: body index + 1, 0 empty */
    uint32_t tab_mask;
    struct op_result **chunk;   /* live slots, OPSTORE_CHUNK a chunk */
    uint32_t nchunk;
    uint32_t *free_slot;        /* free slots (a stack) */
    uint32_t nfree, free_cap, nslots;
};

/* A slot for an op that starts running, zeroed (model.h's op_result). */
uint32_t opstore_take(struct opstore *s);
struct op_result *opstore_slot(struct opstore *s, uint32_t slot);
/* The finished op in slot: its times into *op, its body interned; the
 * slot is free again. */
void opstore_finish(struct opstore *s, uint32_t slot, struct run_op *op);
/* The live pool and the table, once the run has ended: the bodies stay. */
void opstore_end_run(struct opstore *s);
void opstore_free(struct opstore *s);

#endif
