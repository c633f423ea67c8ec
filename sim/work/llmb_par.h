/* llmb_par.h: the parallel layouts of the LLM trace builder (private to
 * the builder, see llmb.h): the devices' groups (tensor, data, expert,
 * expert-data and context parallel, and across slices) and each rank's
 * place in them.  Devices: TP ranks fastest, then replicas (data x context
 * parallel), then stages, then slices. */
#ifndef STRATA_LLMB_PAR_H
#define STRATA_LLMB_PAR_H

#include <stdint.h>

#include "llmb.h"

/* How many groups of each kind t->groups holds, in this order. */
struct llmb_groups {
    uint32_t ntpg;              /* TP groups: one per replica and stage */
    uint32_t ndpg;              /* DP groups: one per TP rank and stage */
    uint32_t nepg;              /* EP groups: per stage and TP rank, one per block of ep replicas */
    uint32_t nedpg;             /* expert-data-parallel groups (dp > ep): per stage and TP
                                 * rank, the replicas at one place in each block */
    uint32_t ncpg;              /* CP groups: per stage, block of cp replicas and TP rank */
    uint32_t ndcng;             /* across slices: one per device of the first slice */
};

/* The groups of tp x dp x pp devices in dcn slices (dp counting the
 * context-parallel ranks, in blocks of cp; ep 1: none) into t->groups and
 * t->group_dev, and how many of each into *g. */
void llmb_par_groups(struct trace *t, uint32_t tp, uint32_t dp, uint32_t ep, uint32_t cp,
                     uint32_t pp, uint32_t dcn, struct llmb_groups *g);
/* Rank (stage st, replica dr, TP rank tr)'s EP and expert-data-parallel
 * groups (b->ep_group, b->edp_group). */
void llmb_par_ep(struct llmb *b, uint32_t tp, uint32_t dp, uint32_t pp, uint32_t st,
                 uint32_t dr, uint32_t tr);
/* A rank's place in its context-parallel ring (b->cp_rank, cp_group,
 * cp_next, cp_prev); base is the device of the stage's first rank. */
void llmb_par_cp(struct llmb *b, uint32_t dr, uint32_t tr, uint32_t base, uint32_t tp, uint32_t dp);

#endif
