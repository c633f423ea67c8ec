/* nameidx.c: a hash index of names stored in an array (see nameidx.h). */
#include "nameidx.h"

#include <stdlib.h>
#include <string.h>

#include "check.h"

uint64_t nameidx_hash(const char *s, size_t n)
{
    uint64_t h = UINT64_C(1469598103934665603); /* FNV-1a */
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= UINT64_C(1099511628211);
    }
    return h ^ (h >> 31);
}

static uint64_t name_hash(const char *s)
{
    return nameidx_hash(s, strlen(s));
}

void nameidx_init(struct nameidx *x, size_t n, const char *base, size_t stride)
{
    size_t cap = 16;
    while (cap < 2 * n)
        cap *= 2;
    x->slot = sim_xcalloc(cap, sizeof *x->slot);
    x->mask = cap - 1;
    x->base = base;
    x->stride = stride;
    x->arena = NULL;
}

void nameidx_init_at(struct nameidx *x, size_t n, char *const *arena, const uint32_t *at,
                     size_t stride)
{
    nameidx_init(x, n, (const char *)at, stride);
    x->arena = arena;
}

/* The name of entry k. */
static const char *entry(const struct nameidx *x, uint32_t k)
{
    const char *p = x->base + (size_t)k * x->stride;
    if (x->arena == NULL)
        return p;
    uint32_t at;
    memcpy(&at, p, sizeof at);
    return *x->arena != NULL ? *x->arena + at : "";
}

void nameidx_free(struct nameidx *x)
{
    free(x->slot);
    x->slot = NULL;
}

int64_t nameidx_find(const struct nameidx *x, const char *name)
{
    uint64_t h = name_hash(name);
    uint32_t tag = (uint32_t)(h >> 32);
    for (size_t i = (size_t)h & x->mask; x->slot[i].k1 != 0; i = (i + 1) & x->mask) {
        uint32_t k = x->slot[i].k1 - 1;
        if (x->slot[i].tag == tag && strcmp(entry(x, k), name) == 0)
            return k;
    }
    return -1;
}

int64_t nameidx_add(struct nameidx *x, uint32_t k)
{
    const char *name = entry(x, k);
    uint64_t h = name_hash(name);
    uint32_t tag = (uint32_t)(h >> 32);
    size_t i = (size_t)h & x->mask;
    for (; x->slot[i].k1 != 0; i = (i + 1) & x->mask) {
        uint32_t j = x->slot[i].k1 - 1;
        if (x->slot[i].tag == tag && strcmp(entry(x, j), name) == 0)
            return j;
    }
    x->slot[i].k1 = k + 1;
    x->slot[i].tag = tag;
    return -1;
}
