/* record.c: see record.h. */
#include "record.h"

#include <stdlib.h>
#include <string.h>

#include "check.h"

#define TL_FIRST_BUCKET_PS 1000000ull /* 1 us */

void tl_init(struct timeline *tl, uint32_t ndev, uint32_t nseries, uint64_t gran_ps)
{
    memset(tl, 0, sizeof *tl);
    tl->nseries = nseries;
    tl->gran_ps = gran_ps;
    /* counters are aggregated to the same granularity as wave slices: the
     * first power-of-two multiple of 1 us at or above it */
    tl->bucket_ps = TL_FIRST_BUCKET_PS;
    while (tl->bucket_ps < gran_ps && tl->bucket_ps < (UINT64_MAX >> 2))
        tl->bucket_ps *= 2;
    tl->ndev = ndev;
    tl->series = sim_xcalloc((size_t)ndev * tl->nseries, sizeof *tl->series);
    tl->cap = 1024;
    tl->slices = sim_xcalloc(tl->cap, sizeof *tl->slices);
}

void tl_free(struct timeline *tl)
{
    if (tl->series != NULL)
        for (uint32_t i = 0; i < tl->ndev * tl->nseries; i++)
            free(tl->series[i].amount);
    free(tl->series);
    free(tl->slices);
    memset(tl, 0, sizeof *tl);
}

struct tl_series *tl_series(struct timeline *tl, uint32_t dev, unsigned which)
{
    SIM_CHECK(dev < tl->ndev && which < tl->nseries);
    return &tl->series[(size_t)dev * tl->nseries + which];
}

/* Double the bucket width of every series (merging pairs of buckets). */
static void tl_coarsen(struct timeline *tl)
{
    for (uint32_t i = 0; i < tl->ndev * tl->nseries; i++) {
        struct tl_series *s = &tl->series[i];
        if (s->amount == NULL)
            continue;
        uint32_t m = (s->n + 1) / 2;
        for (uint32_t k = 0; k < m; k++)
            s->amount[k] = s->amount[2 * k] + (2 * k + 1 < s->n ? s->amount[2 * k + 1] : 0);
        memset(s->amount + m, 0, (s->cap - m) * sizeof *s->amount);
        s->n = m;
    }
    tl->bucket_ps *= 2;
}

static void tl_grow(struct tl_series *s, uint32_t need)
{
    if (need <= s->cap)
        return;
    uint32_t cap = s->cap ? s->cap : 256;
    while (cap < need)
        cap *= 2;
    double *a = sim_xrealloc(s->amount, (size_t)cap * sizeof *a);
    memset(a + s->cap, 0, (cap - s->cap) * sizeof *a);
    s->amount = a;
    s->cap = cap;
}

void tl_add(struct timeline *tl, struct tl_series *s, uint64_t t0, uint64_t t1, double amount)
{
    if (t1 <= t0 || amount <= 0)
        return;
    while (t1 / tl->bucket_ps >= TL_MAX_BUCKETS)
        tl_coarsen(tl);
    uint64_t b0 = t0 / tl->bucket_ps, b1 = (t1 - 1) / tl->bucket_ps;
    tl_grow(s, (uint32_t)b1 + 1);
    if (s->n < b1 + 1)
        s->n = (uint32_t)b1 + 1;
    double rate = amount / (double)(t1 - t0);
    for (uint64_t b = b0; b <= b1; b++) {
        uint64_t lo = b * tl->bucket_ps, hi = lo + tl->bucket_ps;
        if (lo < t0)
            lo = t0;
        if (hi > t1)
            hi = t1;
        s->amount[b] += rate * (double)(hi - lo);
    }
}

void tl_waves(struct timeline *tl, uint32_t dev, uint32_t op, uint32_t kern, uint64_t wave0,
              uint64_t wave1, uint32_t units, uint64_t start_ps, uint64_t end_ps)
{
    if (tl->nslices > 0) {
        struct tl_slice *p = &tl->slices[tl->nslices - 1];
        /* merge short consecutive wave groups of the same kernel */
        if (p->dev == dev && p->op == op && p->kern == kern && p->wave1 == wave0 &&
            p->end_ps == start_ps && p->end_ps - p->start_ps < tl->gran_ps) {
            p->end_ps = end_ps;
            p->wave1 = wave1;
            if (units > p->units)
                p->units = units;
            return;
        }
    }
    if (tl->nslices == tl->cap) {
        tl->cap *= 2;
        tl->slices = sim_xrealloc(tl->slices, (size_t)tl->cap * sizeof *tl->slices);
    }
    struct tl_slice *s = &tl->slices[tl->nslices++];
    s->dev = dev;
    s->op = op;
    s->kern = kern;
    s->wave0 = wave0;
    s->wave1 = wave1;
    s->units = units;
    s->start_ps = start_ps;
    s->end_ps = end_ps;
}
