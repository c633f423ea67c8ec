/* llmb_par.c: the parallel layouts of the LLM trace builder (see
 * llmb_par.h). */
#include "llmb_par.h"

#include "check.h"

void llmb_par_groups(struct trace *t, uint32_t tp, uint32_t dp, uint32_t ep, uint32_t cp,
                     uint32_t pp, uint32_t dcn, struct llmb_groups *gs)
{
    uint32_t ndev = tp * dp * pp * dcn;
    /* groups: TP groups (one per replica and stage), DP groups (one per
     * TP rank and stage), EP and expert-data-parallel groups, and across
     * slices one per rank of the first slice (the other slices mirror it) */
    /* EP groups: per stage and TP rank, one per block of ep consecutive
     * replicas; expert-data-parallel groups (dp > ep): per stage and TP
     * rank, the replicas at the same place in each block, holding the
     * same experts */
    uint32_t ntpg = tp > 1 ? dp * pp : 0, ndpg = dp > 1 ? tp * pp : 0;
    uint32_t nepg = ep > 1 ? pp * (dp / ep) * tp : 0, nedpg = ep > 1 && dp > ep ? pp * ep * tp : 0;
    uint32_t ndcng = dcn > 1 ? tp * dp * pp : 0;     /* one per device of the first slice */
    uint32_t ncpg = cp > 1 ? pp * (dp / cp) * tp : 0;  /* per stage, block of cp replicas, TP rank */
    t->ngroups = ntpg + ndpg + nepg + nedpg + ncpg + ndcng;
    t->groups = sim_xcalloc(t->ngroups + 1, sizeof *t->groups);
    t->group_dev = sim_xcalloc((size_t)(ntpg ? ndev : 0) + (ndpg ? ndev : 0) + (nepg ? ndev : 0) +
                                   (nedpg ? ndev : 0) + (ncpg ? ndev : 0) + (ndcng ? ndev : 0) + 1,
                               sizeof *t->group_dev);
    /* devices: TP ranks fastest, then replicas, then stages (then slices) */
#define LLM_DEV(st, dr, tr) (((st) * dp + (dr)) * tp + (tr))
    uint32_t goff = 0;
    for (uint32_t g = 0; g < ntpg; g++) {
        t->groups[g].off = goff;
        t->groups[g].n = tp;
        for (uint32_t k = 0; k < tp; k++)
            t->group_dev[goff++] = g * tp + k;
    }
    for (uint32_t g = 0; g < ndpg; g++) {
        uint32_t st = g / tp, tr = g % tp;
        t->groups[ntpg + g].off = goff;
        t->groups[ntpg + g].n = dp;
        for (uint32_t k = 0; k < dp; k++)
            t->group_dev[goff++] = LLM_DEV(st, k, tr);
    }
    for (uint32_t g = 0; g < nepg; g++) {   /* g = (stage x blocks + block) x tp + TP rank */
        uint32_t tr = g % tp, blk = g / tp % (dp / ep), st = g / tp / (dp / ep);
        t->groups[ntpg + ndpg + g].off = goff;
        t->groups[ntpg + ndpg + g].n = ep;
        for (uint32_t k = 0; k < ep; k++)
            t->group_dev[goff++] = LLM_DEV(st, blk * ep + k, tr);
    }
    for (uint32_t g = 0; g < nedpg; g++) {  /* g = (stage x ep + place) x tp + TP rank */
        uint32_t tr = g % tp, e = g / tp % ep, st = g / tp / ep;
        t->groups[ntpg + ndpg + nepg + g].off = goff;
        t->groups[ntpg + ndpg + nepg + g].n = dp / ep;
        for (uint32_t k = 0; k < dp / ep; k++)
            t->group_dev[goff++] = LLM_DEV(st, k * ep + e, tr);
    }
    for (uint32_t g = 0; g < ncpg; g++) {   /* g = (stage x blocks + block) x tp + TP rank */
        uint32_t tr = g % tp, blk = g / tp % (dp / cp), st = g / tp / (dp / cp);
        t->groups[ntpg + ndpg + nepg + nedpg + g].off = goff;
        t->groups[ntpg + ndpg + nepg + nedpg + g].n = cp;
        for (uint32_t k = 0; k < cp; k++)
            t->group_dev[goff++] = LLM_DEV(st, blk * cp + k, tr);
    }
#undef LLM_DEV
    for (uint32_t g = 0; g < ndcng; g++) {   /* one per rank of a slice: it in every slice */
        t->groups[ntpg + ndpg + nepg + nedpg + ncpg + g].off = goff;
        t->groups[ntpg + ndpg + nepg + nedpg + ncpg + g].n = dcn;
        for (uint32_t k = 0; k < dcn; k++)
            t->group_dev[goff++] = k * tp * dp * pp + g;
    }
    *gs = (struct llmb_groups){ntpg, ndpg, nepg, nedpg, ncpg, ndcng};
}

/* Rank (stage st, replica dr, TP rank tr)'s EP and expert-data-parallel
 * groups, as llm_build lays them out after the TP and DP groups. */
void llmb_par_ep(struct llmb *b, uint32_t tp, uint32_t dp, uint32_t pp, uint32_t st,
                 uint32_t dr, uint32_t tr)
{
    uint32_t ep = b->ep;
    b->ep_group = 0;
    b->edp_group = UINT32_MAX;
    if (ep <= 1)
        return;
    uint32_t g0 = (tp > 1 ? dp * pp : 0) + (dp > 1 ? tp * pp : 0), blocks = dp / ep;
    b->ep_group = g0 + (st * blocks + dr / ep) * tp + tr;
    if (dp > ep)
        b->edp_group = g0 + pp * blocks * tp + (st * ep + dr % ep) * tp + tr;
}

/* A rank's place in its context-parallel ring: replicas (data x context
 * parallel) r x cp .. r x cp + cp - 1 share one, CP after TP in Megatron's
 * rank order; base is the device of the stage's first rank. */
void llmb_par_cp(struct llmb *b, uint32_t dr, uint32_t tr, uint32_t base, uint32_t tp, uint32_t dp)
{
    uint32_t C = b->cp, cr = dr % C, r0 = dr - cr;
    b->cp_rank = cr;
    /* CP groups: per stage, block of C replicas and TP rank (llm_build) */
    b->cp_group = b->cp_g0 + (base / (dp * tp) * (dp / C) + dr / C) * tp + tr;
    b->cp_next = base + (r0 + (cr + 1) % C) * tp + tr;
    b->cp_prev = base + (r0 + (cr + C - 1) % C) * tp + tr;
}
