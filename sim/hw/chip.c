/* chip.c: what a chip's figures imply (chip.h): the names of its kinds of
 * level, its peak rates, and the chip at a lower clock. */
#include "chip.h"

#include <math.h>
#include <string.h>

#include "check.h"

static const char *const level_kind_names[LK_COUNT] = {
#define LEVEL_KIND_NAME_(e, n) [e] = n,
    LEVEL_KIND_MAP(LEVEL_KIND_NAME_)
#undef LEVEL_KIND_NAME_
};
static const char *const level_scope_names[LS_COUNT] = {
#define LEVEL_SCOPE_NAME_(e, n) [e] = n,
    LEVEL_SCOPE_MAP(LEVEL_SCOPE_NAME_)
#undef LEVEL_SCOPE_NAME_
};

double cfg_matrix_peak_flops(const struct hw_config *c, enum dtype t)
{
    if ((unsigned)t >= DT_COUNT)
        return 0;
    return (double)c->units * c->matrix_flops_per_cycle[t] * c->clock_hz;
}

double cfg_sparse_peak_flops(const struct hw_config *c, enum dtype t)
{
    if ((unsigned)t >= DT_COUNT)
        return 0;
    return (double)c->units * c->sparse_matrix_flops_per_cycle[t] * c->clock_hz;
}

double cfg_vector_peak_flops(const struct hw_config *c, enum dtype t)
{
    if ((unsigned)t >= DT_COUNT)
        return 0;
    return (double)c->units * c->vector_flops_per_cycle[t] * c->clock_hz;
}

double cfg_smem_bw(const struct hw_config *c)
{
    return cfg_smem(c)->bw_bytes_per_s;
}

const char *level_kind_name(enum level_kind k)
{
    return (unsigned)k < LK_COUNT ? level_kind_names[k] : "?";
}

const char *level_scope_name(enum level_scope sc)
{
    return (unsigned)sc < LS_COUNT ? level_scope_names[sc] : "?";
}

int cfg_level_index(const struct hw_config *c, const char *name)
{
    for (uint32_t i = 0; i < c->nlevels; i++)
        if (strcmp(c->level[i].name, name) == 0)
            return (int)i;
    return -1;
}

int cfg_level_core_clocked(const struct hw_level *L)
{
    return L->kind == LK_REGISTERS || L->kind == LK_SCRATCHPAD || L->kind == LK_CACHE;
}

void cfg_at_clock(struct hw_config *c, double s)
{
    SIM_CHECK(s > 0 && s <= 1);
    c->clock_hz *= s;
    c->matrix_pj_per_cycle *= s * s;
    c->vector_pj_per_cycle *= s * s;
    c->coll_channel_bw *= s;        /* a channel's copy rate is its SM's */
    c->coll_ll_bw *= s;
    for (uint32_t l = 0; l < c->nlevels; l++) {
        struct hw_level *L = &c->level[l];
        if (!cfg_level_core_clocked(L))
            continue;
        L->energy_pj_per_byte *= s * s;
        L->bw_bytes_per_s *= s;     /* (a what-if may have changed it from the per-cycle figure) */
        L->latency_ps = (uint64_t)llround((double)L->latency_ps / s);
    }
}
